//! `summary.csv`, and `coco margins`: statistics of a region's count-of-counts
//! histogram (or of a set of regions' summed histograms) with intervals from the same
//! bootstrap replicates as the cells'.
//!
//! Every statistic is one of three kinds over a [`SizeRange`] ([`Stat`]): the number
//! of groups whose size is in the range, their share of a denominator, or the mean size
//! over a denominator, the denominator being all `G` groups (public) or the occupied
//! groups (size ≥ 1, released). `summary.csv` publishes a fixed list of them
//! ([`stats`]); `coco margins` answers any ([`crate::release::margins::sums`]). A
//! statistic has one interval wherever it is published, by one rule
//! ([`crate::release::margins::Uncertainty::statistic`]):
//!
//! - the groups of one size are a cell: its interval is the cell's (`uncertainty.csv`);
//! - the groups of a range of sizes, a share over occupied groups and a mean: the
//!   errors `f(released) − f(replicate)` of the statistic are pooled over the regions
//!   of a level whose replicate value is alike ([`bucket`]), and the interval around a
//!   released value `x` is `[x + q_lo, x + q_hi]`, clipped to the statistic's range;
//! - a share over the public `G`: its count's interval divided by `G`, rounded outward.
//!
//! Means and shares are kept as fixed-point integers (units of [`SCALE`]⁻¹) and written
//! with four decimals.

use rustc_hash::FxHashMap as HashMap;

use rayon::prelude::*;
use thiserror::Error;

use crate::data::{NodeId, PublicData};
use crate::histogram::{Count, CountOfCounts, HistRef, HistogramSet, Size};

use super::pool::{self, Pool, count_bucket, quantile};
use super::{Confidence, Offsets};

/// The thresholds `s` of `summary.csv`'s "groups of size at least `s`".
pub const THRESHOLDS: [Size; 4] = [2, 5, 7, 20];
/// Fixed-point scale of means and shares.
pub const SCALE: f64 = 10_000.0;

/// A size range `A..=B` that is not a range of sizes.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RangeError {
    #[error("sizes {text:?}: expected A..B (A ≤ B), A.. (A up to K) or A, whole numbers")]
    Syntax { text: String },
    #[error("sizes {lower}..{upper}: the lower end is above the upper end: expected A ≤ B")]
    Reversed { lower: Size, upper: Size },
    #[error("sizes from {lower}: above the release's largest size K = {k}: expected A ≤ {k}")]
    AboveK { lower: Size, k: Size },
}

/// Group sizes from `lower` to `upper`, both included (`upper ≤ K`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SizeRange {
    lower: Size,
    upper: Size,
}

impl SizeRange {
    /// `lower..=upper`, its upper end cut at `K` (no group is larger).
    pub fn new(lower: Size, upper: Size, k: Size) -> Result<SizeRange, RangeError> {
        if lower > k {
            return Err(RangeError::AboveK { lower, k });
        }
        if lower > upper {
            return Err(RangeError::Reversed { lower, upper });
        }
        Ok(SizeRange {
            lower,
            upper: upper.min(k),
        })
    }

    /// `A..B`, `A..` (up to `K`) or `A` (one size).
    pub fn parse(text: &str, k: Size) -> Result<SizeRange, RangeError> {
        let syntax = || RangeError::Syntax {
            text: text.to_string(),
        };
        let number = |t: &str| t.trim().parse::<Size>().map_err(|_| syntax());
        match text.trim().split_once("..") {
            Some((a, b)) if b.trim().is_empty() => SizeRange::new(number(a)?, k, k),
            Some((a, b)) => SizeRange::new(number(a)?, number(b)?, k),
            None => {
                let a = number(text)?;
                SizeRange::new(a, a, k)
            }
        }
    }

    pub fn lower(self) -> Size {
        self.lower
    }

    pub fn upper(self) -> Size {
        self.upper
    }

    fn contains(self, s: Size) -> bool {
        self.lower <= s && s <= self.upper
    }

    /// The groups of `hist` in the range.
    fn count(self, hist: HistRef<'_>) -> Count {
        hist.pairs()
            .iter()
            .filter(|&&(s, _)| self.contains(s))
            .map(|&(_, c)| c)
            .sum()
    }

    /// `3`, `3_to_5`, `3_or_more` (up to `K`).
    fn name(self, k: Size) -> String {
        if self.lower == self.upper {
            self.lower.to_string()
        } else if self.upper == k {
            format!("{}_or_more", self.lower)
        } else {
            format!("{}_to_{}", self.lower, self.upper)
        }
    }
}

/// What a share or a mean divides by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Denominator {
    /// Every group of the region, `G` (public): size-0 groups included.
    All,
    /// The groups of size 1 or more (released, so noisy itself).
    Occupied,
}

/// What a statistic is asked of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// One region.
    Region,
    /// A set of regions taken together.
    Set,
}

/// A statistic of a region, or of a set of regions taken together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stat {
    /// The number of groups whose size is in the range.
    Groups(SizeRange),
    /// The share of groups whose size is in the range.
    Share(SizeRange, Denominator),
    /// The mean size.
    MeanSize(Denominator),
}

/// The statistics `summary.csv` writes for a release with bound `k`, in column order.
pub fn stats(k: Size) -> Vec<Stat> {
    Columns::WithOccupied.stats(k)
}

/// Which statistics a `summary.csv` holds: the columns are only ever appended to, so a
/// release's file is read with the columns of the coco that wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Columns {
    /// The first releases' (before issue 34): the groups of size at least `S`, the mean
    /// size and the share of one-member groups.
    First,
    /// Those, then the statistics over occupied groups (written since issue 34, by the
    /// releases whose manifest holds `uncertainty.seed`).
    WithOccupied,
}

impl Columns {
    /// The statistics, in column order, for a release with bound `k`.
    pub fn stats(self, k: Size) -> Vec<Stat> {
        let range = |lower, upper| SizeRange::new(lower, upper, k).expect("a size range up to K");
        let mut out: Vec<Stat> = THRESHOLDS
            .iter()
            .filter(|&&s| s <= k)
            .map(|&s| Stat::Groups(range(s, k)))
            .collect();
        out.extend([
            Stat::MeanSize(Denominator::All),
            Stat::Share(range(1, 1), Denominator::All),
        ]);
        if self == Columns::WithOccupied && k >= 1 {
            out.extend([
                Stat::Groups(range(1, k)),
                Stat::MeanSize(Denominator::Occupied),
                Stat::Share(range(1, 1), Denominator::Occupied),
            ]);
        }
        out
    }
}

impl Stat {
    /// The statistic's name (a column of `summary.csv`, a `statistic` of `coco
    /// margins`), for a release with bound `k`.
    pub fn name(self, k: Size) -> String {
        let single = |r: SizeRange| r.lower == 1 && r.upper == 1;
        match self {
            Stat::Groups(r) if r.lower == 1 && r.upper == k => "occupied_groups".into(),
            Stat::Groups(r) => format!("groups_size_{}", r.name(k)),
            Stat::Share(r, Denominator::All) if single(r) => "single_share".into(),
            Stat::Share(r, Denominator::Occupied) if single(r) => "single_share_of_occupied".into(),
            Stat::Share(r, Denominator::All) => format!("share_size_{}", r.name(k)),
            Stat::Share(r, Denominator::Occupied) => {
                format!("share_size_{}_of_occupied", r.name(k))
            }
            Stat::MeanSize(Denominator::All) => "mean_size".into(),
            Stat::MeanSize(Denominator::Occupied) => "mean_size_of_occupied".into(),
        }
    }

    /// Whether the statistic is a count of groups (else a fixed-point decimal).
    pub fn is_count(self) -> bool {
        matches!(self, Stat::Groups(_))
    }

    /// The statistic of `hist` (of `G` groups), fixed point for means and shares;
    /// `None` for a mean or share of no groups.
    pub fn of(self, hist: HistRef<'_>, groups: Count) -> Option<i64> {
        let over = |d: Denominator| match d {
            Denominator::All => groups,
            Denominator::Occupied => hist
                .pairs()
                .iter()
                .filter(|&&(s, _)| s >= 1)
                .map(|&(_, c)| c)
                .sum(),
        };
        match self {
            Stat::Groups(r) => Some(r.count(hist) as i64),
            Stat::Share(r, d) => {
                let n = over(d);
                (n > 0).then(|| (r.count(hist) as f64 / n as f64 * SCALE).round() as i64)
            }
            Stat::MeanSize(d) => {
                let n = over(d);
                (n > 0).then(|| {
                    let entities: f64 = hist
                        .pairs()
                        .iter()
                        .map(|&(s, c)| f64::from(s) * c as f64)
                        .sum();
                    (entities / n as f64 * SCALE).round() as i64
                })
            }
        }
    }

    /// The range of the statistic for a region of `G` groups and bound `K` (its
    /// intervals are clipped to it; `coco verify` checks them against it).
    pub fn range(self, groups: Count, k: Size) -> (i64, i64) {
        match self {
            Stat::Groups(_) => (0, groups as i64),
            Stat::MeanSize(_) => (0, (f64::from(k) * SCALE) as i64),
            Stat::Share(..) => (0, SCALE as i64),
        }
    }

    /// The statistic whose errors are pooled for this one's interval, asked of `of`: a
    /// share over `G` takes its count's; the groups of one size in one region are a
    /// cell (`None`: the cell's interval); every other statistic its own.
    pub fn pooled(self, of: Scope) -> Option<Stat> {
        match self {
            Stat::Share(r, Denominator::All) => Stat::Groups(r).pooled(of),
            Stat::Groups(r) if of == Scope::Region && r.lower == r.upper => None,
            s => Some(s),
        }
    }
}

/// The pool of a statistic's value: counts as the cells' counts are bucketed, means by
/// [`count_bucket`] of their value in tenths, shares by twentieths.
fn bucket(stat: Stat, value: i64) -> u16 {
    let v = value.max(0) as u64;
    match stat {
        Stat::Groups(_) => count_bucket(v),
        Stat::MeanSize(_) => count_bucket(v / 1000),
        Stat::Share(..) => (v / 500) as u16,
    }
}

/// The pool a region's statistic's error is recorded in, on the cells' model
/// ([`super::pool::Class`]): its level, the statistic, and the bucket of the
/// replicate's value ([`bucket`]); the coarser class a pool of too few errors borrows
/// from is the level's every value of the statistic ([`SummaryClass::coarser`]), chosen
/// as the cells' are ([`super::pool::choose`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct SummaryClass {
    level: u16,
    stat: Stat,
    value: ValueKey,
}

/// What a [`SummaryClass`] knows of its statistic's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum ValueKey {
    /// One [`bucket`].
    Bucket(u16),
    /// Every value of the level.
    Any,
}

impl SummaryClass {
    fn of(level: u16, stat: Stat, value: i64) -> SummaryClass {
        SummaryClass {
            level,
            stat,
            value: ValueKey::Bucket(bucket(stat, value)),
        }
    }

    /// The class this one borrows from when it holds too few errors.
    fn coarser(self) -> Option<SummaryClass> {
        match self.value {
            ValueKey::Bucket(_) => Some(SummaryClass {
                value: ValueKey::Any,
                ..self
            }),
            ValueKey::Any => None,
        }
    }
}

/// A set of regions of one level whose statistics are asked for together (`coco
/// margins --regions`): their histograms and their `G` summed.
#[derive(Clone, Debug)]
pub struct RegionSet {
    pub regions: Vec<NodeId>,
    /// The statistics asked for (each a [`Stat::pooled`] one, or a share over `G`).
    pub stats: Vec<Stat>,
}

impl RegionSet {
    /// The set's histogram in `hists` and its `G`.
    pub fn histogram(
        &self,
        hists: &HistogramSet,
        public: PublicData<'_>,
    ) -> (CountOfCounts, Count) {
        let hist = CountOfCounts::sum(self.regions.iter().map(|id| hists.get(id.index())));
        let groups = self.regions.iter().map(|&id| public.groups(id)).sum();
        (hist, groups)
    }

    fn pooled(&self) -> impl Iterator<Item = Stat> + '_ {
        self.stats.iter().filter_map(|s| s.pooled(Scope::Set))
    }
}

/// What the bootstrap pools besides `summary.csv`'s statistics (what `coco margins`
/// asks for).
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// Statistics of every region.
    pub stats: Vec<Stat>,
    /// Statistics of sets of regions.
    pub sets: Vec<RegionSet>,
}

/// The pooled errors of every statistic.
#[derive(Clone, Debug, Default)]
pub struct SummaryPools {
    /// The statistics pooled per region: `summary.csv`'s and those asked for.
    stats: Vec<Stat>,
    pools: HashMap<SummaryClass, Pool>,
    sets: Vec<RegionSet>,
    /// Per set, per statistic ([`Stat::pooled`]): its errors over the replicates.
    set_pools: Vec<HashMap<Stat, Pool>>,
}

impl SummaryPools {
    /// Pools for `summary.csv`'s statistics of a release with bound `k`, and those of
    /// `request`.
    pub fn new(k: Size, request: &Request) -> SummaryPools {
        let mut stats: Vec<Stat> = stats(k)
            .into_iter()
            .chain(request.stats.iter().copied())
            .filter_map(|s| s.pooled(Scope::Region))
            .collect();
        stats.sort_unstable();
        stats.dedup();
        SummaryPools {
            stats,
            pools: HashMap::default(),
            set_pools: vec![HashMap::default(); request.sets.len()],
            sets: request.sets.clone(),
        }
    }

    /// Adds one replicate's errors `f(released) − f(replicate)`.
    pub fn add(
        &mut self,
        released: &HistogramSet,
        replicate: &HistogramSet,
        public: PublicData<'_>,
    ) {
        let h = public.hierarchy;
        let stats = &self.stats;
        let found = (0..h.len())
            .into_par_iter()
            .chunks(1024)
            .map(|ids| {
                let mut out: HashMap<SummaryClass, Pool> = HashMap::default();
                for i in ids {
                    let id = NodeId(i as u32);
                    let g = public.groups(id);
                    if g == 0 {
                        continue;
                    }
                    let level = h.node(id).level.0 as u16;
                    for &stat in stats {
                        let (Some(x), Some(y)) =
                            (stat.of(released.get(i), g), stat.of(replicate.get(i), g))
                        else {
                            continue;
                        };
                        record(
                            out.entry(SummaryClass::of(level, stat, y)).or_default(),
                            x,
                            y,
                        );
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
            self.pools.entry(k).or_default().merge(&v);
        }
        for (set, pools) in self.sets.iter().zip(&mut self.set_pools) {
            // A top replicate's hierarchy is cut above some sets' regions: they are not
            // in it.
            if set.regions.iter().any(|id| id.index() >= h.len()) {
                continue;
            }
            let (x_hist, g) = set.histogram(released, public);
            let (y_hist, _) = set.histogram(replicate, public);
            for stat in set.pooled() {
                if let (Some(x), Some(y)) =
                    (stat.of(x_hist.as_ref(), g), stat.of(y_hist.as_ref(), g))
                {
                    record(pools.entry(stat).or_default(), x, y);
                }
            }
        }
    }

    /// The offsets of every pool at `confidence`: its own if it holds
    /// [`super::pool::MIN_SAMPLES`] errors, else its level and statistic's
    /// ([`SummaryClass::coarser`]); a set's from its own errors, however few (one per
    /// replicate).
    pub fn offsets(&self, confidence: Confidence) -> SummaryOffsets {
        let coarse = pool::coarse_pools(&self.pools, SummaryClass::coarser);
        let read = |p: &Pool| read_offsets(p, confidence);
        SummaryOffsets::new(
            self.pools
                .iter()
                .map(|(&class, p)| {
                    let chain: Vec<SummaryClass> = class.coarser().into_iter().collect();
                    let chosen =
                        pool::choose(class, Some(p), &chain, &coarse).map_or(p, |(_, q)| q);
                    (class, read(chosen))
                })
                .collect(),
            self.set_pools
                .iter()
                .map(|pools| pools.iter().map(|(&s, p)| (s, read(p))).collect())
                .collect(),
        )
    }
}

fn record(pool: &mut Pool, x: i64, y: i64) {
    pool.cells += 1;
    if x != y {
        *pool.nonzero.entry(x - y).or_default() += 1;
    }
}

/// The `α/2` and `1 − α/2` quantiles of a pool's errors, as offsets around a value.
fn read_offsets(p: &Pool, confidence: Confidence) -> Offsets {
    let alpha = 1.0 - confidence.level();
    let d = p.distribution();
    Offsets {
        low: quantile(&d, alpha / 2.0).min(0),
        high: quantile(&d, 1.0 - alpha / 2.0).max(0),
    }
}

/// The interval of the groups of `range` that a region's cell intervals imply
/// (`cells`: the listed cells, by size; an unlisted cell is `[0, 0]`), for a region of
/// `G` groups, around the released value `x`: `x` minus and plus the root sum of
/// squares of the cells' distances to their bounds over the sizes in the range (or
/// outside it, for `G` minus those, whichever is narrower) — the cells' errors taken
/// as independent.
pub fn from_cells(
    range: SizeRange,
    cells: &[super::CellInterval],
    groups: Count,
    x: i64,
) -> (i64, i64) {
    let g = groups as i64;
    // Sums of squared distances below and above: sizes in the range, then outside.
    let mut sq = [[0f64; 2]; 2];
    for c in cells {
        let side = usize::from(!range.contains(c.size));
        let down = (c.count - c.lower) as f64;
        let up = (c.upper - c.count) as f64;
        sq[side][0] += down * down;
        sq[side][1] += up * up;
    }
    // Direct: x − √(Σ down²), x + √(Σ up²). Complement (G − the rest): a rest lower by
    // `down` is a statistic higher by as much.
    let direct = (sq[0][0].sqrt(), sq[0][1].sqrt());
    let complement = (sq[1][1].sqrt(), sq[1][0].sqrt());
    let (down, up) = if direct.0 + direct.1 <= complement.0 + complement.1 {
        direct
    } else {
        complement
    };
    (
        (x - down.ceil() as i64).max(0),
        (x + up.ceil() as i64).min(g),
    )
}

/// The offsets of the statistics' intervals: per level's pool, and per region set.
#[derive(Clone, Debug, Default)]
pub struct SummaryOffsets {
    regions: HashMap<SummaryClass, Offsets>,
    /// Per level and statistic, its pools' buckets in increasing order with their
    /// offsets: where a value's own bucket has no pool, the nearest one's (the lower on
    /// a tie) is found by bisection.
    by_bucket: HashMap<(u16, Stat), Vec<(u16, Offsets)>>,
    sets: Vec<HashMap<Stat, Offsets>>,
}

impl SummaryOffsets {
    fn new(regions: HashMap<SummaryClass, Offsets>, sets: Vec<HashMap<Stat, Offsets>>) -> Self {
        let mut by_bucket: HashMap<(u16, Stat), Vec<(u16, Offsets)>> = HashMap::default();
        for (c, &o) in &regions {
            if let ValueKey::Bucket(b) = c.value {
                by_bucket.entry((c.level, c.stat)).or_default().push((b, o));
            }
        }
        for v in by_bucket.values_mut() {
            v.sort_unstable_by_key(|&(b, _)| b);
        }
        SummaryOffsets {
            regions,
            by_bucket,
            sets,
        }
    }

    /// The offsets of the pool of `level` and `stat` whose bucket is nearest `b`.
    fn nearest(&self, level: u16, stat: Stat, b: u16) -> Option<Offsets> {
        let pools = self.by_bucket.get(&(level, stat))?;
        let at = pools.partition_point(|&(x, _)| x < b);
        let below = at.checked_sub(1).map(|i| pools[i]);
        let above = pools.get(at).copied();
        match (below, above) {
            (Some((x, lo)), Some((y, hi))) => Some(if b - x <= y - b { lo } else { hi }),
            (Some((_, o)), None) | (None, Some((_, o))) => Some(o),
            (None, None) => None,
        }
    }
}

/// A statistic with its interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatInterval {
    pub estimate: i64,
    pub lower: i64,
    pub upper: i64,
}

impl StatInterval {
    /// `[x + low, x + high]` clipped to `[min, max]`, and around `x`.
    pub fn around(x: i64, o: Offsets, (min, max): (i64, i64)) -> StatInterval {
        StatInterval {
            estimate: x,
            lower: (x + o.low).clamp(min, x),
            upper: (x + o.high).clamp(x, max.max(x)),
        }
    }

    /// A count's interval as a share of `G` groups (fixed point), rounded outward;
    /// `None` for no groups.
    pub fn over(self, groups: Count) -> Option<StatInterval> {
        if groups == 0 {
            return None;
        }
        let g = groups as f64;
        let share = |v: i64| v as f64 / g * SCALE;
        Some(StatInterval {
            estimate: share(self.estimate).round() as i64,
            lower: share(self.lower).floor() as i64,
            upper: (share(self.upper).ceil() as i64).min(SCALE as i64),
        })
    }
}

impl SummaryOffsets {
    /// The interval of a pooled statistic `stat` ([`Stat::pooled`]) of a region of
    /// `level` with released `hist` and `G` groups (`None` where a mean or share of no
    /// groups is undefined).
    pub fn region(
        &self,
        level: usize,
        stat: Stat,
        hist: HistRef<'_>,
        groups: Count,
        k: Size,
    ) -> Option<StatInterval> {
        let x = stat.of(hist, groups)?;
        let o = self
            .regions
            .get(&SummaryClass::of(level as u16, stat, x))
            .copied()
            // A value no replicate reached: the nearest pool of its level.
            .or_else(|| self.nearest(level as u16, stat, bucket(stat, x)))
            .unwrap_or(Offsets { low: 0, high: 0 });
        Some(StatInterval::around(x, o, stat.range(groups, k)))
    }

    /// The interval of a pooled statistic of region set `set` (of [`Request::sets`]),
    /// whose summed histogram is `hist` and `G` is `groups`.
    pub fn set(
        &self,
        set: usize,
        stat: Stat,
        hist: HistRef<'_>,
        groups: Count,
        k: Size,
    ) -> Option<StatInterval> {
        let x = stat.of(hist, groups)?;
        let o = self
            .sets
            .get(set)
            .and_then(|s| s.get(&stat))
            .copied()
            .unwrap_or(Offsets { low: 0, high: 0 });
        Some(StatInterval::around(x, o, stat.range(groups, k)))
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
    fn a_value_without_a_pool_takes_the_nearest_buckets_the_lower_on_a_tie() {
        let stat = Stat::MeanSize(Denominator::All);
        let o = |low: i64| Offsets { low, high: 1 };
        let class = |level, stat, b| SummaryClass {
            level,
            stat,
            value: ValueKey::Bucket(b),
        };
        let mut regions: HashMap<SummaryClass, Offsets> = HashMap::default();
        for (b, low) in [(2u16, -2), (6, -6), (9, -9)] {
            regions.insert(class(0, stat, b), o(low));
        }
        // Another level's and another statistic's pools are not candidates.
        regions.insert(class(1, stat, 4), o(-100));
        regions.insert(
            class(
                0,
                Stat::Share(SizeRange::new(1, 1, 10).unwrap(), Denominator::All),
                4,
            ),
            o(-200),
        );
        let offsets = SummaryOffsets::new(regions, Vec::new());
        let near = |b| offsets.nearest(0, stat, b).map(|o| o.low);
        assert_eq!(near(0), Some(-2));
        assert_eq!(near(3), Some(-2));
        assert_eq!(near(4), Some(-2), "a tie: the lower");
        assert_eq!(near(5), Some(-6));
        assert_eq!(near(8), Some(-9));
        assert_eq!(near(40), Some(-9));
        assert_eq!(offsets.nearest(2, stat, 3), None);
    }

    #[test]
    fn the_cells_imply_an_interval_for_sums() {
        let cells = [
            cell(1, 50, 46, 53),
            cell(2, 30, 27, 34),
            cell(20, 3, 1, 6),
            cell(21, 0, 0, 1),
            cell(22, 0, 0, 1),
            cell(23, 0, 0, 1),
        ];
        let g = 83;
        let k = 30;
        let range = |a, b| SizeRange::new(a, b, k).unwrap();
        // Size 20 or more: 3 released; down √(2²) = 2, up √(3² + 1 + 1 + 1) = √12 → 4.
        assert_eq!(from_cells(range(20, k), &cells, g, 3), (1, 7));
        // Size 2 or more: 33 released. Directly: down √(3² + 2²) → 4, up √(4² + 3² + 3) →
        // 6 (width 10); from G minus the size-1 cell: down 3, up 4 (width 7, narrower).
        assert_eq!(from_cells(range(2, k), &cells, g, 33), (30, 37));
        // The single share: the size-1 cell's bounds over G, outward.
        let single = StatInterval {
            estimate: 50,
            lower: 46,
            upper: 53,
        };
        assert_eq!(
            single.over(g),
            Some(StatInterval {
                estimate: 6024,
                lower: 5542,
                upper: 6386
            })
        );
    }

    #[test]
    fn size_ranges_parse_and_name_themselves() {
        let k = 50;
        let r = SizeRange::parse("3..5", k).unwrap();
        assert_eq!((r.lower(), r.upper()), (3, 5));
        assert_eq!(Stat::Groups(r).name(k), "groups_size_3_to_5");
        let r = SizeRange::parse("3..", k).unwrap();
        assert_eq!(Stat::Groups(r).name(k), "groups_size_3_or_more");
        assert_eq!(
            Stat::Share(r, Denominator::Occupied).name(k),
            "share_size_3_or_more_of_occupied"
        );
        let r = SizeRange::parse("4", k).unwrap();
        assert_eq!(Stat::Groups(r).name(k), "groups_size_4");
        assert_eq!(
            Stat::Groups(SizeRange::parse("1..", k).unwrap()).name(k),
            "occupied_groups"
        );
        // Beyond K: cut at K.
        assert_eq!(SizeRange::parse("3..99", k).unwrap().upper(), k);
        assert_eq!(
            SizeRange::parse("5..2", k),
            Err(RangeError::Reversed { lower: 5, upper: 2 })
        );
        assert_eq!(
            SizeRange::parse("51..", k),
            Err(RangeError::AboveK { lower: 51, k })
        );
        for bad in ["", "..", "a..3", "-1..2", "1..2..3", "1.5"] {
            assert!(
                matches!(SizeRange::parse(bad, k), Err(RangeError::Syntax { .. })),
                "{bad}"
            );
        }
        // summary.csv's names are those of the first releases, then the occupied ones.
        let names: Vec<String> = stats(k).iter().map(|s| s.name(k)).collect();
        assert_eq!(
            names,
            [
                "groups_size_2_or_more",
                "groups_size_5_or_more",
                "groups_size_7_or_more",
                "groups_size_20_or_more",
                "mean_size",
                "single_share",
                "occupied_groups",
                "mean_size_of_occupied",
                "single_share_of_occupied",
            ]
        );
    }
}
