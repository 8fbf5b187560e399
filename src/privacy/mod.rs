//! Privacy budgets as exact rationals ([`Epsilon`]) and the confidential data's boundary
//! in types ([`Confidential`]). How budgets compose over a hierarchy is the release
//! pipeline's accounting ([`crate::release::pipeline::accounting`]); this module depends
//! on nothing of the data model.

pub mod confidential;
pub mod epsilon;

pub use confidential::{Confidential, Diagnostic};
pub use epsilon::{Epsilon, EpsilonError, Rounding};
