//! Estimating the public bound K privately. (Being written.)
