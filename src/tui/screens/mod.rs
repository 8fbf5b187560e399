//! One module per screen: its state, its part of `update`, its render functions and the
//! pure data preparation beside them.

pub mod budget;
pub mod dataset;
pub mod hierarchy;
pub mod preview;
pub mod release;
pub mod tradeoff;
