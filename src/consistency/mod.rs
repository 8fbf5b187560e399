//! Making independent per-node estimates consistent across the hierarchy.
//!
//! Every function here is post-processing: it reads node estimates and public values
//! (the hierarchy, `G` per node, `K`), never the dataset.
//!
//! * [`topdown`]: the paper's Algorithm 1 (matching, merging, back-substitution).
//! * [`bottom_up`]: the baseline that spends the whole budget on the leaves and sums.

pub mod matching;
pub mod merge;
pub mod topdown;

use serde::Serialize;
use thiserror::Error;

pub use matching::{MatchError, MatchedPiece, match_groups};
pub use merge::MergeRule;
pub use topdown::top_down;

use crate::data::{Hierarchy, NodeId};
use crate::estimate::NodeEstimate;
use crate::histogram::CountOfCounts;

/// Which consistency step a release uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Consistency {
    /// Kuo et al. Algorithm 1.
    #[default]
    TopDown,
}

impl Consistency {
    pub fn name(self) -> &'static str {
        match self {
            Consistency::TopDown => "topdown",
        }
    }

    pub fn parse(s: &str) -> Option<Consistency> {
        match s {
            "topdown" => Some(Consistency::TopDown),
            _ => None,
        }
    }

    pub fn all() -> &'static [Consistency] {
        &[Consistency::TopDown]
    }
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

/// Runs the chosen consistency step on estimates of every node.
pub fn make_consistent(
    method: Consistency,
    hierarchy: &Hierarchy,
    estimates: &[NodeEstimate],
    max_size: crate::histogram::Size,
    rule: MergeRule,
) -> Result<Vec<CountOfCounts>, ConsistencyError> {
    match method {
        Consistency::TopDown => top_down(hierarchy, estimates, max_size, rule),
    }
}
