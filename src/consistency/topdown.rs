//! Top-down consistency (Kuo et al. §5, Algorithm 1).
//!
//! Starting from the root's estimate, each parent's current size estimates (with their
//! variances) are matched to its children's independent estimates ([`super::matching`]),
//! each matched pair is merged and rounded ([`super::merge`]), and the merged estimates
//! become the children's current estimates for the next level. The leaves' final
//! histograms are then summed back up to the root (back-substitution), so every parent
//! equals the sum of its children exactly.
//!
//! A region of a level the plan left unmeasured has no estimate of its own: it is
//! estimated bottom-up within its subtree, its groups being the union of its children's
//! current estimates (each with its child's variance), and is matched from there
//! ([`Filled`]).
//!
//! Post-processing only: reads the estimates and the public hierarchy and `K`.
//!
//! # Citations
//! Kuo et al., PVLDB 2018, §5, Algorithm 1.

use rayon::prelude::*;

use super::ConsistencyError;
use super::matching::match_groups;
use super::merge::{MergeRule, round_size};
use crate::data::{Hierarchy, LevelId, NodeId};
use crate::estimate::{Estimates, GroupRun};
use crate::histogram::{HistogramSet, Size};

/// Runs Algorithm 1 on independent estimates of every node (indexed by [`NodeId`];
/// their runs must be kept). Memory: one level's current estimates at a time.
pub fn top_down(
    hierarchy: &Hierarchy,
    estimates: &Estimates,
    max_size: Size,
    rule: MergeRule,
) -> Result<HistogramSet, ConsistencyError> {
    debug_assert_eq!(estimates.len(), hierarchy.len());
    let filled = Filled::new(hierarchy, estimates);
    // The current estimates of one level's nodes, in one arena.
    let mut current: Vec<Vec<GroupRun>> = vec![filled.runs(NodeId::ROOT).to_vec()];
    for l in 0..hierarchy.depth() - 1 {
        let parents: Vec<u32> = hierarchy.level_range(LevelId(l)).collect();
        let first = parents.first().copied().unwrap_or(0);
        let parts: Vec<Vec<Vec<GroupRun>>> = parents
            .par_chunks(super::chunk_for(parents.len()))
            .map(|chunk| {
                let mut out = Vec::new();
                for &p in chunk {
                    let runs = &current[(p - first) as usize];
                    out.extend(update_children(
                        hierarchy,
                        NodeId(p),
                        runs,
                        &filled,
                        max_size,
                        rule,
                    )?);
                }
                Ok(out)
            })
            .collect::<Result<_, ConsistencyError>>()?;
        current = parts.into_iter().flatten().collect();
    }
    let leaf_first = hierarchy.level_range(hierarchy.leaf_level()).start;
    let mut leaves = HistogramSet::with_capacity(current.len(), 0);
    for (i, runs) in current.iter().enumerate() {
        let h = crate::histogram::CountOfCounts::from_pairs_summing(
            runs.iter().map(|r| (r.size, r.count)),
        )
        .map_err(|_| ConsistencyError::Overflow {
            node: NodeId(leaf_first + i as u32),
        })?;
        leaves.push(h.as_ref());
    }
    drop(current);
    Ok(crate::data::aggregate_levels(hierarchy, leaves))
}

/// Matches `parent`'s current estimates to its children's independent estimates and
/// returns each child's merged, rounded estimates, in child order.
fn update_children(
    hierarchy: &Hierarchy,
    parent: NodeId,
    current: &[GroupRun],
    estimates: &Filled<'_>,
    max_size: Size,
    rule: MergeRule,
) -> Result<Vec<Vec<GroupRun>>, ConsistencyError> {
    let node = hierarchy.node(parent);
    let child_runs: Vec<&[GroupRun]> = node.children().map(|c| estimates.runs(c)).collect();
    let pieces = match_groups(current, &child_runs).map_err(|source| ConsistencyError::Match {
        node: parent,
        source,
    })?;
    let mut merged: Vec<Vec<GroupRun>> = vec![Vec::new(); child_runs.len()];
    for p in pieces {
        let (x, v) = rule.merge(
            f64::from(p.parent_size),
            p.parent_variance,
            f64::from(p.child_size),
            p.child_variance,
        );
        merged[p.child].push(GroupRun {
            size: round_size(x, max_size),
            count: p.count,
            variance: v,
        });
    }
    Ok(merged.into_iter().map(normalise_runs).collect())
}

/// Every node's independent runs, with those of the regions left unmeasured filled in
/// bottom-up: the union of their children's (a child itself unmeasured counts with its
/// own filled runs). The union keeps every group with its child's size estimate and
/// variance, so its counts sum to the children's `G`, which is the region's public `G`.
struct Filled<'a> {
    estimates: &'a Estimates,
    /// Indexed by [`NodeId`]: the filled runs of an unmeasured node, `None` otherwise.
    filled: Vec<Option<Vec<GroupRun>>>,
}

impl<'a> Filled<'a> {
    fn new(hierarchy: &Hierarchy, estimates: &'a Estimates) -> Filled<'a> {
        let mut filled: Vec<Option<Vec<GroupRun>>> = vec![None; hierarchy.len()];
        for level in (0..hierarchy.depth()).rev() {
            for id in hierarchy.level_nodes(LevelId(level)) {
                if estimates.is_measured(id.index()) {
                    continue;
                }
                let mut runs = Vec::new();
                for c in hierarchy.node(id).children() {
                    match &filled[c.index()] {
                        Some(r) => runs.extend_from_slice(r),
                        None => runs.extend_from_slice(estimates.runs(c.index())),
                    }
                }
                filled[id.index()] = Some(normalise_runs(runs));
            }
        }
        Filled { estimates, filled }
    }

    fn runs(&self, id: NodeId) -> &[GroupRun] {
        match &self.filled[id.index()] {
            Some(r) => r,
            None => self.estimates.runs(id.index()),
        }
    }
}

/// Sorts runs by size (merging can reorder them) and joins neighbours with the same size
/// and variance.
pub(crate) fn normalise_runs(mut runs: Vec<GroupRun>) -> Vec<GroupRun> {
    runs.sort_by(|a, b| a.size.cmp(&b.size).then(a.variance.total_cmp(&b.variance)));
    let mut out: Vec<GroupRun> = Vec::with_capacity(runs.len());
    for r in runs {
        match out.last_mut() {
            Some(last)
                if last.size == r.size && last.variance.to_bits() == r.variance.to_bits() =>
            {
                last.count += r.count
            }
            _ => out.push(r),
        }
    }
    out
}
