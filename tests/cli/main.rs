//! The real `coco` binary, run as an operator runs it: its commands, their text and
//! exit codes, the ledger, crash safety and the published files.
//!
//! One test executable (see docs/development.md): a new file here is one `mod` line.

#[path = "../common/mod.rs"]
mod common;

mod accounting;
mod bad_inputs;
mod cli_conventions;
mod codebook;
mod crash_safety;
mod decision;
mod exit_codes;
mod first_plan;
mod generate;
mod input_edges;
mod inspect;
mod ledger_edges;
mod margins;
mod operator_text;
mod parquet_release;
mod published;
mod report;
mod report_browser;
mod tail_release;
mod trust;
mod unmeasured;
mod verify_edges;
mod zcdp;
mod zcdp_ledger;
