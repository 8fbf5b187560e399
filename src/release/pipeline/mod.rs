//! Drawing a release: every region measured and estimated, the estimates made
//! consistent ([`draw`]), what that needs of the machine ([`resources`]), and the checks
//! a release must pass before anything is written ([`checks`]), and the privacy
//! accounting of the measurements made ([`accounting`]).

pub mod accounting;
pub mod checks;
pub mod draw;
pub mod measurements;
pub mod resources;

use crate::estimate::Method;
use crate::privacy::Loss;

/// One level's measurement settings.
#[derive(Clone, Debug)]
pub struct LevelSetting {
    pub method: Method,
    /// The level's budget: an ε or a ρ.
    pub budget: Loss,
}
