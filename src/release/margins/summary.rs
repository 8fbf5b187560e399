//! `summary.csv`: per region, the statistics data users derive from a count-of-counts
//! histogram, each with an interval from the same bootstrap replicates as the cells'.
//!
//! The statistics: the number of groups of size at least `s` for `s` in
//! [`THRESHOLDS`] (those `≤ K`), the mean group size (entities / `G`; `G` is public),
//! and the share of single-member groups. Each interval is read as the cells' are: the
//! errors `f(released) − f(replicate)` of a statistic are pooled over the regions of a
//! level whose replicate value is alike (`bucket`), and the interval around a
//! released value `x` is `[x + q_lo, x + q_hi]`, clipped to the statistic's range.
//! Means and shares are kept as fixed-point integers (units of [`SCALE`]⁻¹) and written
//! with four decimals.

use rustc_hash::FxHashMap as HashMap;

use rayon::prelude::*;

use crate::data::{NodeId, PublicData};
use crate::histogram::{Count, HistRef, HistogramSet, Size};

use super::pool::{Pool, count_bucket, quantile};
use super::{Confidence, MIN_SAMPLES_SUMMARY, Offsets};

/// The thresholds `s` of "groups of size at least `s`".
pub const THRESHOLDS: [Size; 4] = [2, 5, 7, 20];
/// Fixed-point scale of means and shares.
pub const SCALE: f64 = 10_000.0;

/// A statistic of a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stat {
    /// Groups of size at least `THRESHOLDS[i]`.
    AtLeast(u8),
    MeanSize,
    SingleShare,
}

/// The statistics written for a release with bound `k`, in column order.
pub fn stats(k: Size) -> Vec<Stat> {
    let mut out: Vec<Stat> = THRESHOLDS
        .iter()
        .enumerate()
        .filter(|&(_, &s)| s <= k)
        .map(|(i, _)| Stat::AtLeast(i as u8))
        .collect();
    out.extend([Stat::MeanSize, Stat::SingleShare]);
    out
}

impl Stat {
    /// The column name.
    pub fn name(self) -> String {
        match self {
            Stat::AtLeast(i) => format!("groups_size_{}_or_more", THRESHOLDS[i as usize]),
            Stat::MeanSize => "mean_size".into(),
            Stat::SingleShare => "single_share".into(),
        }
    }

    /// The statistic of `hist` (of `G` groups), fixed point for means and shares;
    /// `None` for a mean or share of no groups.
    pub fn of(self, hist: HistRef<'_>, groups: Count) -> Option<i64> {
        let pairs = hist.pairs();
        match self {
            Stat::AtLeast(i) => {
                let s = THRESHOLDS[i as usize];
                Some(
                    pairs
                        .iter()
                        .filter(|&&(t, _)| t >= s)
                        .map(|&(_, c)| c as i64)
                        .sum(),
                )
            }
            Stat::MeanSize => (groups > 0).then(|| {
                let entities: f64 = pairs.iter().map(|&(s, c)| f64::from(s) * c as f64).sum();
                (entities / groups as f64 * SCALE).round() as i64
            }),
            Stat::SingleShare => {
                (groups > 0).then(|| (hist.count(1) as f64 / groups as f64 * SCALE).round() as i64)
            }
        }
    }

    /// The range of the statistic for a region of `G` groups and bound `K` (its
    /// intervals are clipped to it; `coco verify` checks them against it).
    pub fn range(self, groups: Count, k: Size) -> (i64, i64) {
        match self {
            Stat::AtLeast(_) => (0, groups as i64),
            Stat::MeanSize => (0, (f64::from(k) * SCALE) as i64),
            Stat::SingleShare => (0, SCALE as i64),
        }
    }
}

/// The pool of a statistic's value: counts as the cells' counts are bucketed, means by
/// [`count_bucket`] of their value in tenths, shares by twentieths.
fn bucket(stat: Stat, value: i64) -> u16 {
    let v = value.max(0) as u64;
    match stat {
        Stat::AtLeast(_) => count_bucket(v),
        Stat::MeanSize => count_bucket(v / 1000),
        Stat::SingleShare => (v / 500) as u16,
    }
}

type Key = (u16, Stat, u16);

/// The pooled errors of every statistic.
#[derive(Clone, Debug, Default)]
pub struct SummaryPools(HashMap<Key, Pool>);

impl SummaryPools {
    /// Adds one replicate's errors `f(released) − f(replicate)`.
    pub fn add(
        &mut self,
        released: &HistogramSet,
        replicate: &HistogramSet,
        public: PublicData<'_>,
        k: Size,
    ) {
        let h = public.hierarchy;
        let stats = stats(k);
        let found = (0..h.len())
            .into_par_iter()
            .chunks(1024)
            .map(|ids| {
                let mut out: HashMap<Key, Pool> = HashMap::default();
                for i in ids {
                    let id = NodeId(i as u32);
                    let g = public.groups(id);
                    if g == 0 {
                        continue;
                    }
                    let level = h.node(id).level.0 as u16;
                    for &stat in &stats {
                        let (Some(x), Some(y)) =
                            (stat.of(released.get(i), g), stat.of(replicate.get(i), g))
                        else {
                            continue;
                        };
                        let p = out.entry((level, stat, bucket(stat, y))).or_default();
                        p.cells += 1;
                        if x != y {
                            *p.nonzero.entry(x - y).or_default() += 1;
                        }
                    }
                }
                out
            })
            .reduce(HashMap::default, |mut a, b| {
                for (k, v) in b {
                    a.entry(k).or_default().merge(&v);
                }
                a
            });
        for (k, v) in found {
            self.0.entry(k).or_default().merge(&v);
        }
    }

    /// The offsets of every pool at `confidence`: its own if it holds enough errors,
    /// else its level and statistic's.
    pub fn offsets(&self, confidence: Confidence) -> SummaryOffsets {
        let mut whole: HashMap<(u16, Stat), Pool> = HashMap::default();
        for (&(l, s, _), p) in &self.0 {
            whole.entry((l, s)).or_default().merge(p);
        }
        let alpha = 1.0 - confidence.level();
        let read = |p: &Pool| {
            let d = p.distribution();
            Offsets {
                low: quantile(&d, alpha / 2.0).min(0),
                high: quantile(&d, 1.0 - alpha / 2.0).max(0),
            }
        };
        SummaryOffsets(
            self.0
                .iter()
                .map(|(&key, p)| {
                    let chosen = if p.cells >= MIN_SAMPLES_SUMMARY {
                        p
                    } else {
                        &whole[&(key.0, key.1)]
                    };
                    (key, read(chosen))
                })
                .collect(),
        )
    }
}

/// The interval of `stat` that a region's cell intervals imply (`cells`: the listed
/// cells, by size; an unlisted cell is `[0, 0]`), for a region of `G` groups, around
/// the released value `x`: for the groups of size at least `s`, `x` minus and plus the
/// root sum of squares of the cells' distances to their bounds over the sizes `≥ s`
/// (or below `s`, for `G` minus those, whichever is narrower) — the cells' errors
/// taken as independent; for the share of single-member groups, the size-1 cell's
/// bounds over `G`. `None` for the mean size, whose sum over sizes weighs the largest
/// cells' bounds by their sizes.
pub fn from_cells(
    stat: Stat,
    cells: &[super::CellInterval],
    groups: Count,
    x: i64,
) -> Option<(i64, i64)> {
    let g = groups as i64;
    match stat {
        Stat::AtLeast(i) => {
            let s = THRESHOLDS[i as usize];
            // Sums of squared distances below and above: sizes ≥ s, then sizes < s.
            let mut sq = [[0f64; 2]; 2];
            for c in cells {
                let side = usize::from(c.size < s);
                let down = (c.count - c.lower) as f64;
                let up = (c.upper - c.count) as f64;
                sq[side][0] += down * down;
                sq[side][1] += up * up;
            }
            // Direct: x − √(Σ down²), x + √(Σ up²). Complement (G − the rest): a rest
            // lower by `down` is a statistic higher by as much.
            let direct = (sq[0][0].sqrt(), sq[0][1].sqrt());
            let complement = (sq[1][1].sqrt(), sq[1][0].sqrt());
            let (down, up) = if direct.0 + direct.1 <= complement.0 + complement.1 {
                direct
            } else {
                complement
            };
            Some((
                (x - down.ceil() as i64).max(0),
                (x + up.ceil() as i64).min(g),
            ))
        }
        Stat::SingleShare => {
            if g == 0 {
                return None;
            }
            let (lo, up) = cells
                .iter()
                .find(|c| c.size == 1)
                .map_or((0, 0), |c| (c.lower as i64, c.upper as i64));
            Some((
                (lo as f64 / g as f64 * SCALE).floor() as i64,
                (up as f64 / g as f64 * SCALE).ceil() as i64,
            ))
        }
        Stat::MeanSize => None,
    }
}

/// The offsets of the statistics' intervals.
#[derive(Clone, Debug, Default)]
pub struct SummaryOffsets(HashMap<Key, Offsets>);

/// A statistic with its interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatInterval {
    pub estimate: i64,
    pub lower: i64,
    pub upper: i64,
}

impl SummaryOffsets {
    /// The statistics of a region of `level` with released `hist` and `G` groups
    /// (`None` where a mean or share of no groups is undefined).
    pub fn region(
        &self,
        level: usize,
        hist: HistRef<'_>,
        groups: Count,
        k: Size,
    ) -> Vec<Option<StatInterval>> {
        stats(k)
            .into_iter()
            .map(|stat| {
                let x = stat.of(hist, groups)?;
                let o = self
                    .0
                    .get(&(level as u16, stat, bucket(stat, x)))
                    .or_else(|| {
                        // A value no replicate reached: the nearest pool of its level.
                        self.0
                            .iter()
                            .filter(|(k, _)| k.0 == level as u16 && k.1 == stat)
                            .min_by_key(|(k, _)| k.2.abs_diff(bucket(stat, x)))
                            .map(|(_, o)| o)
                    })
                    .copied()
                    .unwrap_or(Offsets { low: 0, high: 0 });
                let (min, max) = stat.range(groups, k);
                Some(StatInterval {
                    estimate: x,
                    lower: (x + o.low).clamp(min, x),
                    upper: (x + o.high).clamp(x, max.max(x)),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::release::margins::CellInterval;

    fn cell(size: Size, count: Count, lower: Count, upper: Count) -> CellInterval {
        CellInterval {
            size,
            count,
            lower,
            upper,
        }
    }

    #[test]
    fn the_cells_imply_an_interval_for_sums_and_the_single_share() {
        let cells = [
            cell(1, 50, 46, 53),
            cell(2, 30, 27, 34),
            cell(20, 3, 1, 6),
            cell(21, 0, 0, 1),
            cell(22, 0, 0, 1),
            cell(23, 0, 0, 1),
        ];
        let g = 83;
        // Size 20 or more: 3 released; down √(2²) = 2, up √(3² + 1 + 1 + 1) = √12 → 4.
        assert_eq!(from_cells(Stat::AtLeast(3), &cells, g, 3), Some((1, 7)));
        // Size 2 or more: 33 released. Directly: down √(3² + 2²) → 4, up √(4² + 3² + 3) →
        // 6 (width 10); from G minus the size-1 cell: down 3, up 4 (width 7, narrower).
        assert_eq!(from_cells(Stat::AtLeast(0), &cells, g, 33), Some((30, 37)));
        // The single share: the size-1 cell's bounds over G, outward.
        assert_eq!(
            from_cells(Stat::SingleShare, &cells, g, 6024),
            Some((5542, 6386))
        );
        assert_eq!(from_cells(Stat::MeanSize, &cells, g, 20_000), None);
    }
}
