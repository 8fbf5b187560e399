//! The privacy boundary in types: confidential data lives behind [`Confidential`], which
//! only two kinds of code can open.
//!
//! - The measurement step ([`crate::release::pipeline::draw`], through [`crate::estimate::measure`]):
//!   `Confidential::for_measurement` is crate-private, and what it reads leaves only
//!   with noise added.
//! - Operator diagnostics, each named by a [`Diagnostic`] at the call site so an audit can
//!   list them (`grep for_diagnostic`): `coco inspect`, the preview's errors against the
//!   truth, the TUI's confidential panels, the content digest kept in the agency's ledger,
//!   and test oracles. What they show is labelled confidential and never published.
//!
//! A release cannot be built from what a diagnostic reads: a
//! [`Draw`](crate::release::pipeline::draw::Draw) is constructible only by the measurement path
//! ([`crate::release::pipeline::draw::draw`]), and only a `Draw` is written or recorded.
//!
//! What the types allow, and what they refuse (these examples are compiled by
//! `cargo test`):
//!
//! ```
//! use coco::data::Dataset;
//! use coco::histogram::HistogramSet;
//! use coco::privacy::Diagnostic;
//! use coco::release::pipeline::draw::Draw;
//!
//! // A diagnostic names itself to read the truth.
//! fn root_groups(d: &Dataset) -> u64 {
//!     d.truth().for_diagnostic(Diagnostic::Inspect).all().get(0).groups()
//! }
//! // A release is read, never made or changed, outside the measurement path.
//! fn tables(d: &Draw) -> &HistogramSet {
//!     d.histograms()
//! }
//! ```
//!
//! The truth is not a released histogram's type:
//!
//! ```compile_fail
//! fn leak(d: &coco::data::Dataset) -> &coco::data::TrueHistograms {
//!     d.truth()
//! }
//! ```
//!
//! The measurement step's opening is not public:
//!
//! ```compile_fail
//! fn leak(d: &coco::data::Dataset) -> &coco::data::TrueHistograms {
//!     d.truth().for_measurement()
//! }
//! ```
//!
//! A release's tables cannot be replaced (say, by the truth):
//!
//! ```compile_fail
//! fn tamper(d: &mut coco::release::pipeline::draw::Draw, t: Vec<coco::histogram::CountOfCounts>) {
//!     d.histograms = t;
//! }
//! ```
//!
//! Nor can a release be built by hand:
//!
//! ```compile_fail
//! fn forge(d: &coco::release::pipeline::draw::Draw) -> coco::release::pipeline::draw::Draw {
//!     coco::release::pipeline::draw::Draw { ..d.clone() }
//! }
//! ```
//!
//! Nor a measurement's noisy vector changed after it was measured:
//!
//! ```compile_fail
//! fn tamper(m: &mut coco::estimate::NodeMeasurement, n: coco::estimate::Noisy) {
//!     m.noisy = n;
//! }
//! ```
//!
//! The public parameters a measurement is made with have types of their own too: a
//! tail's size `L` and number of groups `m` cannot be swapped ([`crate::estimate::tail`]).

/// Why confidential data is read outside the measurement step. Each use names one, so
/// the places that read the truth can be listed and reviewed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Diagnostic {
    /// `coco inspect`, the generators' summaries and the TUI's Dataset and Hierarchy
    /// screens: the truth itself, shown to the operator as confidential.
    Inspect,
    /// Preview and Trade-off: errors of trial releases against the truth (confidential).
    Preview,
    /// The TUI's confidential panels beside a release or a plan (labelled so).
    Panel,
    /// The content digest that keys spending in the agency's ledger (never published).
    Provenance,
    /// Tests and fuzzing: the truth as an oracle for post-processing.
    Oracle,
}

/// A value computed from the confidential data without noise. It has no `Display`,
/// `Serialize` or comparison, and its `Debug` shows nothing of it.
#[derive(Clone)]
pub struct Confidential<T>(T);

impl<T> Confidential<T> {
    pub(crate) fn new(value: T) -> Confidential<T> {
        Confidential(value)
    }

    /// For the measurement step only: what it reads leaves with noise added.
    pub(crate) fn for_measurement(&self) -> &T {
        &self.0
    }

    /// For an operator diagnostic named by `why` (see [`Diagnostic`]); what it shows is
    /// confidential.
    pub fn for_diagnostic(&self, why: Diagnostic) -> &T {
        let _ = why;
        &self.0
    }
}

impl<T> std::fmt::Debug for Confidential<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Confidential(…)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_nothing_of_the_value() {
        let c = Confidential::new(vec![1234567u64]);
        assert_eq!(format!("{c:?}"), "Confidential(…)");
        assert_eq!(c.for_diagnostic(Diagnostic::Oracle), &vec![1234567u64]);
    }
}
