//! Isotonic regression. (Being written.)
