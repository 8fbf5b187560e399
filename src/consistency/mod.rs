//! Making independent per-node estimates consistent across the hierarchy.
//!
//! Every function here is post-processing: it reads node estimates and public values
//! (the hierarchy, `G` per node, `K`), never the dataset.
//!
//! * [`topdown`]: the paper's Algorithm 1 (matching, merging, back-substitution).
//! * [`wls`]: coco's own step: isotonic fits combined by tree-wide weighted least
//!   squares, then split top-down optimally.
//! * [`bottom_up`]: the baseline that spends the whole budget on the leaves and sums.

pub mod guard;
pub mod matching;
pub mod merge;
pub mod pieces;
pub mod topdown;
pub mod wls;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use matching::{MatchError, MatchedPiece, match_groups};
pub use merge::MergeRule;
pub use topdown::top_down;

use crate::data::{Hierarchy, NodeId};
use crate::estimate::{Estimates, IsotonicFit};
use crate::histogram::{Count, HistRef, HistogramSet, Size};

/// How many parents (or regions) one parallel task of a consistency pass takes, for a
/// level of `n`: 256 on large levels, fewer on small ones, so that a level of a few
/// dozen regions (the states of a nation) is shared among the cores instead of being
/// one task; at least 64 tasks per level. A function of `n` alone, never of the number
/// of threads, and every sum over a level's regions is taken in region order, so the
/// results are the same on any machine.
pub(crate) fn chunk_for(n: usize) -> usize {
    (n / 64).clamp(1, 256)
}

/// Which consistency step a release uses.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum Consistency {
    /// Kuo et al. Algorithm 1.
    #[serde(rename = "topdown")]
    #[value(name = "topdown")]
    TopDown,
    /// Isotonic fits, tree-wide weighted least squares, optimal top-down splitting
    /// ([`wls`]); the default, as it beat `topdown` at every level on every dataset
    /// measured (see the README). Needs `hc`, `hc` with a tail or `hg` at every level;
    /// falls back to `topdown` where a level is measured with `naive`.
    #[default]
    Wls,
}

impl Consistency {
    /// Whether the merge rule matters to this step.
    pub fn uses_merge(self) -> bool {
        matches!(self, Consistency::TopDown)
    }
}

/// Post-processing options for the consistency step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConsistencyOptions {
    /// How `topdown` merges a parent's and a child's estimate of a group.
    pub merge: MergeRule,
    /// How `wls` makes a real target monotone before rounding it.
    pub projection_fit: IsotonicFit,
    /// The memory `wls`'s runs may take ([`wls::RunBudget::from_available`] in a
    /// release; unbounded by default).
    pub run_budget: wls::RunBudget,
    /// Whether `wls` checks its combination against the measurements ([`guard`]); off
    /// only to show what the check buys (tests, comparisons).
    pub checked: bool,
}

impl Default for ConsistencyOptions {
    fn default() -> Self {
        Self {
            merge: MergeRule::Weighted,
            projection_fit: IsotonicFit::L1,
            run_budget: wls::RunBudget::UNBOUNDED,
            checked: true,
        }
    }
}

/// A consistent set of histograms, and which step made it.
#[derive(Clone, Debug, PartialEq)]
pub struct Consistent {
    /// Indexed by [`NodeId`].
    pub histograms: HistogramSet,
    /// The step that ran (differs from the one asked for after a fallback).
    pub used: Consistency,
    /// Why the step asked for did not run, if it did not.
    pub fallback: Option<crate::warning::Warning>,
    /// Per level (root first), how much `wls` leaned on the regions' own measurements
    /// (empty for `topdown`; the leaves' entry is empty).
    pub leaning: Vec<guard::Leaning>,
    /// Per level, the regions whose runs `wls` joined to stay within its memory budget
    /// (all 0 unless memory ran short).
    pub capped: Vec<u64>,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ConsistencyError {
    #[error("matching the groups of node {node:?} with its children failed: {source}")]
    Match { node: NodeId, source: MatchError },
    #[error("a histogram of node {node:?} holds more groups than fit in 64 bits")]
    Overflow { node: NodeId },
}

/// The bottom-up baseline: the leaves' estimates, summed up the hierarchy. `leaves`
/// holds one histogram per leaf, in leaf order.
pub fn bottom_up<'a>(
    hierarchy: &Hierarchy,
    leaves: impl IntoIterator<Item = HistRef<'a>>,
) -> HistogramSet {
    let leaves: HistogramSet = leaves.into_iter().collect();
    crate::data::aggregate_levels(hierarchy, leaves)
}

/// Which consistency step can run on these estimates: `wls` needs a fit at every node.
pub fn step_for(
    asked: Consistency,
    estimates: &Estimates,
) -> (Consistency, Option<crate::warning::Warning>) {
    match asked {
        Consistency::Wls if !estimates.all_fits() => (
            Consistency::TopDown,
            Some(crate::warning::Warning::WlsNeedsFits),
        ),
        other => (other, None),
    }
}

/// Runs the chosen consistency step on estimates of every node (indexed by
/// [`NodeId`]; `groups` is the public `G` per node). `wls` needs every node's fit;
/// without one, `topdown` runs and the result says why.
pub fn make_consistent(
    method: Consistency,
    hierarchy: &Hierarchy,
    estimates: &Estimates,
    groups: &[Count],
    max_size: Size,
    options: &ConsistencyOptions,
) -> Result<Consistent, ConsistencyError> {
    let (used, fallback) = step_for(method, estimates);
    let (histograms, leaning, capped) = match used {
        Consistency::TopDown => (
            top_down(hierarchy, estimates, max_size, options.merge)?,
            Vec::new(),
            vec![0; hierarchy.depth()],
        ),
        Consistency::Wls => {
            let out = wls::wls(
                hierarchy,
                estimates,
                groups,
                max_size,
                options.projection_fit,
                options.run_budget,
                options.checked,
            )?;
            (out.histograms, out.leaning, out.capped)
        }
    };
    Ok(Consistent {
        histograms,
        used,
        fallback,
        leaning,
        capped,
    })
}
