//! Release plans, drawing a release, checks, export, manifest and the privacy ledger.

pub mod checks;
mod counts_in;
mod csv_out;
pub mod defaults;
pub mod export;
pub mod ledger;
pub mod manifest;
mod parquet_out;
pub mod plan;
pub mod resources;
pub mod run;
pub mod transaction;
pub mod tuning;
pub mod verify;

pub use parquet_out::properties as parquet_properties;

pub use checks::{Checks, check_counts, check_release};
pub use plan::{Allocation, LevelPlan, MaxSize, PlanError, PlanErrorKind, ReleasePlan, allocate};
