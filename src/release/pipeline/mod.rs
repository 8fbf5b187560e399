//! Drawing a release: every region measured and estimated, the estimates made
//! consistent ([`draw`]), what that needs of the machine ([`resources`]), and the checks
//! a release must pass before anything is written ([`checks`]).

pub mod checks;
pub mod draw;
pub mod resources;
