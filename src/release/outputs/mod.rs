//! The release directory: the tables (`counts` and the wide tables, in CSV and Parquet),
//! written atomically and read back ([`export`]), `manifest.json` ([`manifest`]), and
//! `coco verify` ([`verify`]).

pub(crate) mod csv;
pub mod export;
pub mod manifest;
pub mod margins;
pub(crate) mod parquet;
pub mod read_back;
mod read_rows;
pub(crate) mod rows;
pub mod verify;
pub(crate) mod writer;
