//! Top-down consistency (Kuo et al. §5, Algorithm 1).
//!
//! Starting from the root's estimate, each parent's current size estimates (with their
//! variances) are matched to its children's independent estimates ([`super::matching`]),
//! each matched pair is merged and rounded ([`super::merge`]), and the merged estimates
//! become the children's current estimates for the next level. The leaves' final
//! histograms are then summed back up to the root (back-substitution), so every parent
//! equals the sum of its children exactly.
//!
//! Post-processing only: reads the estimates and the public hierarchy and `K`.
//!
//! # Citations
//! Kuo et al., PVLDB 2018, §5, Algorithm 1.

use rayon::prelude::*;

use super::ConsistencyError;
use super::matching::match_groups;
use super::merge::{MergeRule, round_size};
use crate::data::{Hierarchy, NodeId};
use crate::estimate::{GroupRun, NodeEstimate};
use crate::histogram::{CountOfCounts, Size};

/// Runs Algorithm 1 on independent estimates of every node (indexed by [`NodeId`]).
pub fn top_down(
    hierarchy: &Hierarchy,
    estimates: &[NodeEstimate],
    max_size: Size,
    rule: MergeRule,
) -> Result<Vec<CountOfCounts>, ConsistencyError> {
    debug_assert_eq!(estimates.len(), hierarchy.len());
    let mut current: Vec<Vec<GroupRun>> = vec![Vec::new(); hierarchy.len()];
    current[NodeId::ROOT.index()] = estimates[NodeId::ROOT.index()].runs.clone();
    for level in hierarchy.levels().take(hierarchy.depth() - 1) {
        let parents: Vec<NodeId> = hierarchy.level_nodes(level).collect();
        let updates: Vec<Vec<(NodeId, Vec<GroupRun>)>> = parents
            .par_iter()
            .map(|&p| update_children(hierarchy, p, &current[p.index()], estimates, max_size, rule))
            .collect::<Result<_, _>>()?;
        for (child, runs) in updates.into_iter().flatten() {
            current[child.index()] = runs;
        }
        for p in parents {
            current[p.index()] = Vec::new();
        }
    }
    let mut histograms: Vec<CountOfCounts> = vec![CountOfCounts::new(); hierarchy.len()];
    for leaf in hierarchy.level_nodes(hierarchy.leaf_level()) {
        let runs = &current[leaf.index()];
        histograms[leaf.index()] =
            CountOfCounts::from_pairs_summing(runs.iter().map(|r| (r.size, r.count)))
                .map_err(|_| ConsistencyError::Overflow { node: leaf })?;
    }
    hierarchy.aggregate(&mut histograms);
    Ok(histograms)
}

/// Matches `parent`'s current estimates to its children's independent estimates and
/// returns each child's merged, rounded estimates.
fn update_children(
    hierarchy: &Hierarchy,
    parent: NodeId,
    current: &[GroupRun],
    estimates: &[NodeEstimate],
    max_size: Size,
    rule: MergeRule,
) -> Result<Vec<(NodeId, Vec<GroupRun>)>, ConsistencyError> {
    let node = hierarchy.node(parent);
    let children: Vec<NodeId> = node.children().collect();
    let child_runs: Vec<&[GroupRun]> = children
        .iter()
        .map(|c| estimates[c.index()].runs.as_slice())
        .collect();
    let pieces = match_groups(current, &child_runs).map_err(|source| ConsistencyError::Match {
        node: parent,
        source,
    })?;
    let mut merged: Vec<Vec<GroupRun>> = vec![Vec::new(); children.len()];
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
    Ok(children
        .into_iter()
        .zip(merged.into_iter().map(normalise_runs))
        .collect())
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
