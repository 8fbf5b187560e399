//! The margins-of-error files of a release directory, written after the tables:
//! `uncertainty.csv` and `summary.csv` (or their Parquet twins; [`tables`]),
//! `measurements.jsonl` ([`measurements`]), how they are described in the manifest
//! ([`files`]), and `coco verify`'s check of them ([`verify`]). What they hold is
//! computed in [`crate::release::margins`].

pub mod files;
pub mod measurements;
pub mod published;
pub mod tables;
pub mod verify;

pub use crate::release::outputs::manifest::ManifestUncertainty;
pub use files::Extras;
