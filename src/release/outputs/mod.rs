//! The release directory: the tables (`counts` and the wide tables, in CSV and Parquet),
//! written atomically and read back ([`export`]), `manifest.json` ([`manifest`]), and
//! `coco verify` ([`verify`]).

pub mod codebook;
pub(crate) mod csv;
pub mod export;
pub mod manifest;
pub mod margin_tables;
pub mod margins;
pub(crate) mod numeric;
pub(crate) mod parquet;
pub mod read_back;
mod read_rows;
pub mod replicates;
pub(crate) mod rows;
pub mod verify;
pub mod wide_margins;
pub(crate) mod writer;
