//! Facts about a dataset that the screens show on every frame or recompute on every
//! edit of the plan, computed once when the dataset is opened.
//!
//! At census scale a level has 8 million regions: a summary, a sort of their `G` or a
//! pass over their histograms takes seconds, so none of it may happen in a render
//! function or on a key press. The worker computes an [`Overview`] right after loading
//! (off the UI thread), and the screens read its small results: the spread of `G` per
//! level and its sparkline columns, and the order of the Release screen's rows.

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::slice::ParallelSliceMut;

use crate::data::{Dataset, Hierarchy, LevelId, NodeId};
use crate::inspect::Summary;
use crate::release::ledger::{DatasetIdentity, canonical_dir};

/// The columns of the Dataset screen's "G by region" sparkline.
pub const SPARKLINE_WIDTH: usize = 12;

/// Facts about the dataset computed once, when it is opened.
#[derive(Clone, Debug)]
pub struct Overview {
    /// `coco inspect`'s summary (confidential parts included).
    pub summary: Summary,
    /// How the ledger recognises the dataset.
    pub identity: DatasetIdentity,
    /// Per level, root first.
    pub levels: Vec<LevelFacts>,
    /// The mean branching factor's cube root, rounded: the default geometric ratio.
    pub default_ratio: crate::privacy::Ratio,
}

/// One level's facts.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelFacts {
    /// Its regions' `G` (public).
    pub groups: GroupSpread,
    /// Its regions sorted by display id, when that differs from node order (codes with
    /// characters that sort before `/`); `None` when node order is display order, the
    /// usual case, which costs no memory.
    pub display_order: Option<Vec<NodeId>>,
}

impl Overview {
    /// Computes the overview; `None` if `cancel` was raised meanwhile.
    pub fn compute(dataset: &Dataset, cancel: &AtomicBool) -> Option<Overview> {
        let h = &dataset.hierarchy;
        let (summary, levels) = rayon::join(
            || Summary::of(dataset),
            || {
                let bad = first_level_out_of_display_order(h);
                h.levels()
                    .map(|level| {
                        if cancel.load(Ordering::Relaxed) {
                            return None;
                        }
                        Some(LevelFacts {
                            groups: GroupSpread::of(
                                h.level_nodes(level).map(|id| dataset.groups(id)).collect(),
                            ),
                            display_order: bad
                                .is_some_and(|b| level >= b)
                                .then(|| display_order(h, level)),
                        })
                    })
                    .collect::<Option<Vec<_>>>()
            },
        );
        let levels = levels?;
        // Summary::of computed the content digest and the fingerprint already: the
        // identity reuses them instead of reading every leaf again.
        let identity = DatasetIdentity {
            content: summary.content_digest.clone(),
            fingerprint: summary.fingerprint.clone(),
            dir: canonical_dir(&dataset.dir),
            population: Some(dataset.population_keys()),
        };
        Some(Overview {
            summary,
            identity,
            levels,
            default_ratio: crate::release::plan::defaults::geometric_ratio(h),
        })
    }

    /// [`Overview::compute`], not cancellable.
    pub fn of(dataset: &Dataset) -> Overview {
        Overview::compute(dataset, &AtomicBool::new(false)).expect("never cancelled")
    }
}

/// The spread of a level's `G`: what the Dataset screen shows of 8 million numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupSpread {
    pub min: u64,
    /// The middle value of the `G`s sorted largest first.
    pub median: u64,
    pub max: u64,
    /// The sparkline's columns: the largest `G` of each of [`SPARKLINE_WIDTH`] equal
    /// shares of the regions sorted largest first (fewer columns for fewer regions).
    pub columns: Vec<u64>,
}

impl GroupSpread {
    pub fn of(mut groups: Vec<u64>) -> GroupSpread {
        if groups.is_empty() {
            return GroupSpread::default();
        }
        groups.par_sort_unstable_by(|a, b| b.cmp(a));
        let n = groups.len();
        let columns = SPARKLINE_WIDTH.min(n);
        GroupSpread {
            min: groups[n - 1],
            median: groups[n / 2],
            max: groups[0],
            // Sorted largest first, a share's largest value is its first.
            columns: (0..columns).map(|c| groups[c * n / columns]).collect(),
        }
    }
}

/// The first level whose node order is not the order of display ids, if any.
///
/// Nodes are ordered level by level, by parent, then by code, so a level's order is
/// the order of its code paths compared code by code. Display ids join the codes with
/// `/`, and the two orders differ only where a code is a prefix of a sibling's code
/// whose next byte sorts before `/` (siblings `A` and `A-1`: `X/A-1/…` < `X/A/…`), and
/// then on every level below theirs. Siblings are sorted by code, so any such pair
/// shows up between neighbours.
pub fn first_level_out_of_display_order(h: &Hierarchy) -> Option<LevelId> {
    let before_slash = |a: NodeId, b: NodeId| {
        let (ca, cb) = (h.code(a), h.code(b));
        h.node(a).parent == h.node(b).parent
            && cb.len() > ca.len()
            && cb.starts_with(ca)
            && cb.as_bytes()[ca.len()] < b'/'
    };
    h.levels()
        .find(|&level| {
            let r = h.level_range(level);
            (r.start..r.end.saturating_sub(1)).any(|i| before_slash(NodeId(i), NodeId(i + 1)))
        })
        .map(|level| LevelId(level.0 + 1))
        .filter(|level| level.0 < h.depth())
}

/// A level's nodes sorted by display id.
pub fn display_order(h: &Hierarchy, level: LevelId) -> Vec<NodeId> {
    let mut ids: Vec<NodeId> = h.level_nodes(level).collect();
    ids.sort_by(|&a, &b| h.cmp_display_ids(a, b));
    ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tests::tiny;
    use crate::tui::widgets::sparkline;

    fn sample() -> Dataset {
        Dataset::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households"),
        )
        .unwrap()
    }

    #[test]
    fn the_spread_and_sparkline_are_those_of_every_g() {
        let mut g: Vec<u64> = (0..1000).map(|i| (i * 7919) % 1013).collect();
        let spread = GroupSpread::of(g.clone());
        g.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(
            (spread.min, spread.median, spread.max),
            (g[999], g[500], g[0])
        );
        assert_eq!(
            sparkline(&spread.columns, SPARKLINE_WIDTH),
            sparkline(&g, SPARKLINE_WIDTH)
        );
        let few = GroupSpread::of(vec![3, 9]);
        assert_eq!(few.columns, vec![9, 3]);
        assert_eq!(GroupSpread::of(Vec::new()), GroupSpread::default());
    }

    #[test]
    fn the_identity_is_the_ledgers() {
        let d = sample();
        let o = Overview::of(&d);
        let id = DatasetIdentity::of(&d);
        assert_eq!(
            (o.identity.content, o.identity.fingerprint, o.identity.dir),
            (id.content, id.fingerprint, id.dir)
        );
    }

    #[test]
    fn node_order_is_display_order_unless_a_code_sorts_before_the_slash() {
        for d in [tiny(), sample()] {
            let h = &d.hierarchy;
            assert_eq!(first_level_out_of_display_order(h), None);
            for level in h.levels() {
                let nodes: Vec<NodeId> = h.level_nodes(level).collect();
                assert_eq!(display_order(h, level), nodes);
            }
        }
        // `A` and `A-1` are siblings: below them, `X/A-1/…` sorts before `X/A/…`.
        let rows: Vec<Vec<String>> = ["X,A,a", "X,A-1,b", "X,B,c"]
            .iter()
            .map(|r| r.split(',').map(String::from).collect())
            .collect();
        let names = vec!["top".into(), "mid".into(), "leaf".into()];
        let h = Hierarchy::from_leaf_paths(names, &rows).unwrap();
        assert_eq!(first_level_out_of_display_order(&h), Some(LevelId(2)));
        let leaves: Vec<String> = display_order(&h, LevelId(2))
            .into_iter()
            .map(|id| h.display_id(id))
            .collect();
        assert_eq!(leaves, ["X/A-1/b", "X/A/a", "X/B/c"]);
        let mut sorted = leaves.clone();
        sorted.sort();
        assert_eq!(leaves, sorted);
    }
}
