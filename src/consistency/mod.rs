//! Making independent per-node estimates consistent across the hierarchy.
//!
//! Every function here is post-processing: it reads node estimates and public values
//! (the hierarchy, `G` per node, `K`), never the dataset.
//!
//! * [`topdown`]: the paper's Algorithm 1 (matching, merging, back-substitution).
//! * [`wls`]: coco's own step: isotonic fits combined by tree-wide weighted least
//!   squares, then split top-down optimally.
//! * [`bottom_up`]: the baseline that spends the whole budget on the leaves and sums.

pub mod matching;
pub mod merge;
pub mod topdown;
pub mod wls;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use matching::{MatchError, MatchedPiece, match_groups};
pub use merge::MergeRule;
pub use topdown::top_down;

use crate::data::{Hierarchy, NodeId};
use crate::estimate::{CumulativeFit, IsotonicFit, NodeEstimate};
use crate::histogram::{Count, CountOfCounts, Size};

/// Which consistency step a release uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Consistency {
    /// Kuo et al. Algorithm 1.
    #[serde(rename = "topdown")]
    TopDown,
    /// Isotonic fits, tree-wide weighted least squares, optimal top-down splitting
    /// ([`wls`]); the default, as it beat `topdown` at every level on every dataset
    /// measured (see the README). Needs `hc` at every level; falls back to `topdown`
    /// otherwise.
    #[default]
    Wls,
}

impl Consistency {
    pub fn name(self) -> &'static str {
        match self {
            Consistency::TopDown => "topdown",
            Consistency::Wls => "wls",
        }
    }

    pub fn parse(s: &str) -> Option<Consistency> {
        match s {
            "topdown" => Some(Consistency::TopDown),
            "wls" => Some(Consistency::Wls),
            _ => None,
        }
    }

    pub fn all() -> &'static [Consistency] {
        &[Consistency::TopDown, Consistency::Wls]
    }

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
}

impl Default for ConsistencyOptions {
    fn default() -> Self {
        Self {
            merge: MergeRule::Weighted,
            projection_fit: IsotonicFit::L1,
        }
    }
}

/// A consistent set of histograms, and which step made it.
#[derive(Clone, Debug, PartialEq)]
pub struct Consistent {
    /// Indexed by [`NodeId`].
    pub histograms: Vec<CountOfCounts>,
    /// The step that ran (differs from the one asked for after a fallback).
    pub used: Consistency,
    /// Why the step asked for did not run, if it did not.
    pub fallback: Option<String>,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ConsistencyError {
    #[error("matching the groups of node {node:?} with its children failed: {source}")]
    Match { node: NodeId, source: MatchError },
    #[error("a histogram of node {node:?} holds more groups than fit in 64 bits")]
    Overflow { node: NodeId },
}

/// The bottom-up baseline: the leaves' estimates, summed up the hierarchy.
pub fn bottom_up(
    hierarchy: &Hierarchy,
    leaf_estimates: impl IntoIterator<Item = (NodeId, CountOfCounts)>,
) -> Vec<CountOfCounts> {
    let mut histograms = vec![CountOfCounts::new(); hierarchy.len()];
    for (leaf, h) in leaf_estimates {
        histograms[leaf.index()] = h;
    }
    hierarchy.aggregate(&mut histograms);
    histograms
}

/// Runs the chosen consistency step on estimates of every node (indexed by
/// [`NodeId`]). `wls` needs every node measured with `hc`; otherwise `topdown` runs and
/// the result says why.
pub fn make_consistent(
    method: Consistency,
    hierarchy: &Hierarchy,
    estimates: &[NodeEstimate],
    max_size: Size,
    options: &ConsistencyOptions,
) -> Result<Consistent, ConsistencyError> {
    match method {
        Consistency::TopDown => Ok(Consistent {
            histograms: top_down(hierarchy, estimates, max_size, options.merge)?,
            used: Consistency::TopDown,
            fallback: None,
        }),
        Consistency::Wls => {
            let fits: Option<Vec<&CumulativeFit>> = estimates
                .iter()
                .map(|e| e.cumulative_fit.as_ref())
                .collect();
            match fits {
                Some(fits) => {
                    let groups: Vec<Count> = estimates.iter().map(|e| e.histogram.groups()).collect();
                    Ok(Consistent {
                        histograms: wls::wls(hierarchy, &fits, &groups, max_size, options.projection_fit)?,
                        used: Consistency::Wls,
                        fallback: None,
                    })
                }
                None => Ok(Consistent {
                    histograms: top_down(hierarchy, estimates, max_size, options.merge)?,
                    used: Consistency::TopDown,
                    fallback: Some(
                        "consistency \"wls\" needs method \"hc\" at every level; used \"topdown\" instead".into(),
                    ),
                }),
            }
        }
    }
}
