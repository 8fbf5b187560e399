//! Facts about a dataset that the screens show on every frame or recompute on every
//! edit of the plan, computed once when the dataset is opened.
//!
//! At census scale a level has 8 million regions: a summary, a sort of their `G` or a
//! pass over their histograms takes seconds, so none of it may happen in a render
//! function or on a key press. The worker computes an [`Overview`] right after loading
//! (off the UI thread), and the screens read its small results: the spread of `G` per
//! level and its sparkline columns, what the omniscient reference needs for any `K`, and
//! the order of the Release screen's rows.

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::slice::ParallelSliceMut;

use crate::data::{Dataset, Hierarchy, LevelId, NodeId};
use crate::histogram::Size;
use crate::inspect::Summary;
use crate::privacy::{Diagnostic, Epsilon};
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
    pub default_ratio: Epsilon,
}

/// One level's facts.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelFacts {
    /// Its regions' `G` (public).
    pub groups: GroupSpread,
    /// What the omniscient reference needs (confidential).
    pub distinct: DistinctSizes,
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
                            distinct: DistinctSizes::of(dataset, level),
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
        };
        Some(Overview {
            summary,
            identity,
            levels,
            default_ratio: crate::release::defaults::geometric_ratio(h),
        })
    }

    /// [`Overview::compute`], not cancellable.
    pub fn of(dataset: &Dataset) -> Overview {
        Overview::compute(dataset, &AtomicBool::new(false)).expect("never cancelled")
    }

    /// The omniscient reference of a level at this ε and `K` (see [`DistinctSizes`]).
    pub fn omniscient(&self, level: LevelId, epsilon: &Epsilon, max_size: Size) -> f64 {
        self.levels[level.0].distinct.mean(max_size) * std::f64::consts::SQRT_2 / epsilon.to_f64()
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

/// What the paper's omniscient reference (§6.2) needs of one level, for any `K`: the
/// mean over the level's regions of their distinct sizes after top-coding at `K`.
///
/// Top-coding at `K` keeps the sizes below `K` and turns every size from `K` up into
/// `K`, so a region has (its sizes below `K`) + (1 if its largest size is at least `K`)
/// distinct sizes. Summed over the regions, that is the number of (region, size) pairs
/// with size below `K`, plus the number of regions whose largest size is at least `K`:
/// two running sums over the sizes present, which answer any `K` by binary search
/// instead of a pass over the regions for each edit of `K`. Tested against
/// [`crate::preview::omniscient`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DistinctSizes {
    regions: u64,
    /// The sizes present at the level, ascending, and how many regions hold each,
    /// summed over the sizes before: `holding_before[i]` regions-with-size pairs have a
    /// size below `sizes[i]`; the last entry is the total.
    sizes: Vec<Size>,
    holding_before: Vec<u64>,
    /// The regions' largest sizes, ascending, and how many regions have their largest
    /// size at or above each: `largest_from[i]` regions have a largest size of at least
    /// `largest[i]`.
    largest: Vec<Size>,
    largest_from: Vec<u64>,
}

impl DistinctSizes {
    pub fn of(dataset: &Dataset, level: LevelId) -> DistinctSizes {
        let h = &dataset.hierarchy;
        let truth = dataset.truth().for_diagnostic(Diagnostic::Panel);
        // Every level holds every group, so its sizes are the root's.
        let sizes: Vec<Size> = truth
            .node(NodeId::ROOT)
            .pairs()
            .iter()
            .map(|&(s, _)| s)
            .collect();
        let index = |s: Size| {
            sizes
                .binary_search(&s)
                .expect("a level's sizes are the root's")
        };
        let mut holding = vec![0u64; sizes.len()];
        let mut largest = vec![0u64; sizes.len()];
        for id in h.level_nodes(level) {
            let pairs = truth.node(id).pairs();
            for &(s, _) in pairs {
                holding[index(s)] += 1;
            }
            if let Some(&(s, _)) = pairs.last() {
                largest[index(s)] += 1;
            }
        }
        let mut holding_before = Vec::with_capacity(sizes.len() + 1);
        let mut total = 0;
        for &n in &holding {
            holding_before.push(total);
            total += n;
        }
        holding_before.push(total);
        let (mut largest_sizes, mut largest_from) = (Vec::new(), Vec::new());
        let mut from = 0;
        for (i, &n) in largest.iter().enumerate().rev() {
            from += n;
            if n > 0 {
                largest_sizes.push(sizes[i]);
                largest_from.push(from);
            }
        }
        largest_sizes.reverse();
        largest_from.reverse();
        DistinctSizes {
            regions: h.level_len(level) as u64,
            sizes,
            holding_before,
            largest: largest_sizes,
            largest_from,
        }
    }

    /// The mean over the regions of their distinct sizes after top-coding at `max_size`.
    pub fn mean(&self, max_size: Size) -> f64 {
        let below = self.holding_before[self.sizes.partition_point(|&s| s < max_size)];
        let i = self.largest.partition_point(|&s| s < max_size);
        let top_coded = self.largest_from.get(i).copied().unwrap_or(0);
        (below + top_coded) as f64 / self.regions.max(1) as f64
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
    fn the_omniscient_reference_matches_the_preview_for_every_k() {
        for d in [tiny(), sample()] {
            let o = Overview::of(&d);
            let eps = Epsilon::parse("1/3").unwrap();
            let root = d
                .truth()
                .for_diagnostic(Diagnostic::Oracle)
                .node(NodeId::ROOT);
            let mut ks: Vec<Size> = vec![1, 2, 3, 10, 10_000];
            ks.extend(root.pairs().iter().flat_map(|&(s, _)| [s, s + 1]));
            for level in d.hierarchy.levels() {
                for &k in &ks {
                    let want = crate::preview::omniscient(&d, level, &eps, k);
                    let got = o.omniscient(level, &eps, k);
                    assert!(
                        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                        "level {level:?}, K = {k}: {got} vs {want}"
                    );
                }
            }
        }
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
