//! coco: differentially private hierarchical count-of-counts tables.
//!
//! Data flows one way: files → [`data::Dataset`] → per-node true histograms →
//! measurements ([`estimate`], the only place confidential data meets noise) →
//! post-processing ([`consistency`]) → [`release`] → checks → files.
//!
//! The core never imports a terminal UI crate; `tui` (behind the default cargo feature
//! `tui`) is a sibling of the batch commands over the same core.

#![forbid(unsafe_code)]

pub mod cell_error;
pub mod consistency;
pub mod convert;
pub mod data;
#[cfg(test)]
mod docs;
pub mod emd;
pub mod estimate;
pub mod generate;
pub mod glossary;
pub mod histogram;
pub mod inspect;
pub mod noise;
pub mod preview;
pub mod privacy;
pub mod proxy;
pub mod release;
pub mod report;
pub mod timing;
pub mod tradeoff;
#[cfg(feature = "tui")]
pub mod tui;
pub mod units;
pub mod warning;
pub mod wire;
