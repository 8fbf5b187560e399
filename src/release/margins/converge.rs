//! How far the intervals could still move with more replicates: a split-half estimate
//! of the Monte Carlo error of the pooled quantiles (a diagnostic, under
//! `COCO_TIMING=1`; the figures it gave, and why `auto` does not draw until they are
//! small, are in `docs/uncertainty.md`, "How many replicates").
//!
//! Each full replicate's regions are pooled into two halves, region `i` of replicate
//! `r` into half `(i + r) mod 2`, so that a region's errors within one replicate, which
//! move together, stay in one half (only when the diagnostic is asked for: two halves
//! cost a census-scale release's pooling several seconds). Each half reads every class's interval from its
//! own pools ([`super::offsets_table`]'s choice of a class or a coarser one, without
//! the floor); the interval of one half is then scored on the other half's errors.
//! Where the two halves' intervals cover each other's errors as they cover their own,
//! the quantiles no longer move with more replicates: the difference estimates twice
//! the Monte Carlo error of the whole pools' coverage (each half holds half the
//! errors, and the other half's errors add their own sampling error).
//!
//! Two figures per level, each weighted by the released occupied cells of each class
//! (those a data user reads), head and tail apart (the tail being the sizes at or
//! above the level's `L`, or 20):
//! - the **Monte Carlo error**: the mean, over those cells, of how far the coverage of
//!   one half's interval on the other half's errors lies from that of the other half's
//!   own interval;
//! - the **borrowed share**: the share of those cells whose class holds fewer than
//!   [`pool::MIN_SAMPLES`] errors and borrows a coarser class's quantiles, but would
//!   hold them by [`super::MAX_REPLICATES`] replicates at the rate it grew so far (a
//!   class that gains a cell every few replicates borrows however many are drawn).
//!
//! Everything here reads the replicates' errors only (post-processing of the published
//! tables).

use rustc_hash::FxHashMap as HashMap;

use super::pool::{self, Class};
use super::{Confidence, Pools, Rule, offsets};
use crate::data::{NodeId, PublicData};
use crate::histogram::{HistogramSet, Size};

/// The tail of a level without a tail zone starts at this size, as in the coverage
/// tables (`docs/uncertainty.md`).
const TAIL_FROM: Size = 20;

/// The released occupied cells of each class, head (0) and tail (1) apart.
pub struct Weights {
    by_class: HashMap<Class, [u64; 2]>,
}

impl Weights {
    /// The released histograms' occupied cells, by the class they are read from.
    pub fn of(
        released: &HistogramSet,
        public: PublicData<'_>,
        zones: &[Option<super::zone::Zone>],
    ) -> Weights {
        let h = public.hierarchy;
        let mut by_class: HashMap<Class, [u64; 2]> = HashMap::default();
        for i in 0..h.len() {
            if public.groups(NodeId(i as u32)) == 0 {
                continue;
            }
            let level = h.node(NodeId(i as u32)).level.0;
            let zone = zones.get(level).copied().flatten();
            let tail_from = zone.map_or(TAIL_FROM, |z| z.above);
            let pairs = released.get(i).pairs();
            for &(s, c) in pairs {
                if c == 0 {
                    continue;
                }
                let class = pool::class_of(level as u16, pairs, s, c, zone);
                by_class.entry(class).or_default()[usize::from(s >= tail_from)] += 1;
            }
        }
        Weights { by_class }
    }
}

/// A level's part (head or tail): its figures and the cells they weigh.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Part {
    pub cells: u64,
    pub mc_error: f64,
    pub borrowed: f64,
}

/// Per level, its head and tail.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Assessment {
    pub levels: Vec<[Part; 2]>,
}

/// One half's reading of a class: its interval's offsets and the errors it read them
/// from (its own, or a coarser class's).
struct Reading {
    low: i64,
    high: i64,
    dist: Vec<(i64, u64)>,
}

fn read(
    class: Class,
    pools: &Pools,
    coarse: &Pools,
    rule: Rule,
    confidence: Confidence,
) -> Reading {
    let own = pools.get(&class);
    match pool::choose(class, own, &class.coarser(), coarse) {
        Some((_, chosen)) => {
            let dist = chosen.distribution();
            let o = offsets(&dist, rule, confidence);
            Reading {
                low: o.low,
                high: o.high,
                dist,
            }
        }
        None => Reading {
            low: 0,
            high: 0,
            dist: Vec::new(),
        },
    }
}

/// The share of the errors of `dist` within `[low, high]` (what the interval of the
/// offsets covers of them); 1 for no errors.
fn covered(dist: &[(i64, u64)], low: i64, high: i64) -> f64 {
    let total: u64 = dist.iter().map(|&(_, n)| n).sum();
    if total == 0 {
        return 1.0;
    }
    let within: u64 = dist
        .iter()
        .filter(|&&(e, _)| e >= low && e <= high)
        .map(|&(_, n)| n)
        .sum();
    within as f64 / total as f64
}

/// The two halves' figures per level ([`Part`]).
pub fn assess(
    halves: &[Pools; 2],
    replicates: u32,
    weights: &Weights,
    depth: usize,
    rule: Rule,
    confidence: Confidence,
) -> Assessment {
    let coarse = [
        pool::coarse_pools(&halves[0], Class::coarser),
        pool::coarse_pools(&halves[1], Class::coarser),
    ];
    let mut sums = vec![[(0u64, 0.0f64, 0.0f64); 2]; depth];
    for (&class, w) in &weights.by_class {
        let level = usize::from(class.level);
        if level >= depth {
            continue;
        }
        let a = read(class, &halves[0], &coarse[0], rule, confidence);
        let b = read(class, &halves[1], &coarse[1], rule, confidence);
        let on_b = (covered(&b.dist, a.low, a.high) - covered(&b.dist, b.low, b.high)).abs();
        let on_a = (covered(&a.dist, b.low, b.high) - covered(&a.dist, a.low, a.high)).abs();
        let error = (on_a + on_b) / 2.0;
        let cells = halves[0].get(&class).map_or(0, |p| p.cells)
            + halves[1].get(&class).map_or(0, |p| p.cells);
        let borrows = cells < pool::MIN_SAMPLES
            && cells.saturating_mul(u64::from(super::MAX_REPLICATES))
                >= pool::MIN_SAMPLES.saturating_mul(u64::from(replicates));
        for (part, &n) in w.iter().enumerate() {
            let s = &mut sums[level][part];
            s.0 += n;
            s.1 += error * n as f64;
            if borrows {
                s.2 += n as f64;
            }
        }
    }
    Assessment {
        levels: sums
            .into_iter()
            .map(|parts| {
                parts.map(|(cells, error, borrowed)| Part {
                    cells,
                    mc_error: if cells == 0 {
                        0.0
                    } else {
                        error / cells as f64
                    },
                    borrowed: if cells == 0 {
                        0.0
                    } else {
                        borrowed / cells as f64
                    },
                })
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_counts_the_errors_within_the_offsets() {
        let dist = [(-2, 1), (0, 8), (3, 1)];
        assert_eq!(covered(&dist, 0, 0), 0.8);
        assert_eq!(covered(&dist, -2, 3), 1.0);
        assert_eq!(covered(&dist, -1, 3), 0.9);
        assert_eq!(covered(&[], 0, 0), 1.0);
    }
}
