//! A release, by job:
//!
//! * [`plan`]: the plan model (rules, TOML, coco's public default, how it was tuned, how
//!   ε is split);
//! * [`pipeline`]: drawing a release (measure every region, estimate, make consistent),
//!   what it needs of the machine, and the checks a release must pass;
//! * [`margins`]: the margins of error of every released cell and of the statistics
//!   data users derive, computed from the release and public data only;
//! * [`outputs`]: the release directory (tables in CSV and Parquet behind one writer
//!   interface, the margins' files, `manifest.json`, read-back) and `coco verify`;
//! * [`ledger`]: the privacy-loss ledger (records, legacy lines, the hash chain, the
//!   store and its anchor, caps);
//! * [`transaction`]: the transaction every draw goes through, which ties the other
//!   four together (reserve in the ledger, draw, write, record).
//!
//! The modules form layers without cycles, each using only those before it: `plan`,
//! `ledger`, `pipeline`, `margins`, `outputs`, `transaction`. Each item has one path
//! (`release::pipeline::draw::Draw`, `release::outputs::export::write_release_dir`).

pub mod ledger;
pub mod margins;
pub mod outputs;
pub mod pipeline;
pub mod plan;
pub mod transaction;
