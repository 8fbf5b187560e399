//! The margins-of-error files of a release directory, written after the tables:
//! `uncertainty.csv` and `summary.csv` (or their Parquet twins; [`tables`]),
//! `measurements.jsonl` ([`measurements`]), how they are described in the manifest
//! ([`files`]), and `coco verify`'s check of them ([`verify`]). What they hold is
//! computed in [`crate::release::margins`].

pub mod files;
pub mod measurements;
pub mod published;
pub mod verify;

/// The tables' writers sit beside the release writer, which writes them in every format
/// ([`crate::release::outputs::writer::TableFormat`]); they are named here too.
pub use super::margin_tables as tables;

pub use crate::release::outputs::manifest::ManifestUncertainty;
pub use files::Extras;
