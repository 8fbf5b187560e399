//! Privacy budgets as exact rationals in their measure ([`Epsilon`] for pure DP, [`Rho`]
//! for zero-concentrated DP; [`measure`]) and the confidential data's boundary in types
//! ([`Confidential`]). How budgets compose over a hierarchy is the release pipeline's
//! accounting ([`crate::release::pipeline::accounting`]); this module depends on nothing
//! of the data model.

pub mod budget;
pub mod confidential;
pub mod measure;

pub use budget::{
    Budget, BudgetError, BudgetProblem, EpsilonError, Ratio, RatioUnit, Rounding, Share, ShareUnit,
    Unit,
};
pub use confidential::{Confidential, Diagnostic};
pub use measure::{
    DEFAULT_DELTA, Definition, Epsilon, Loss, Measure, Pure, Rho, Zcdp, epsilon_at_delta,
};
