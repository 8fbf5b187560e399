//! Margins of error for every released cell: intervals for the true number of groups,
//! computed from published and public information only.
//!
//! # Method
//! A parametric bootstrap with pooled quantiles. The released histograms stand for the
//! truth; `R` replicates draw the plan's measurements again on them (same methods, ε,
//! `K`, tails; [`bootstrap::replicate`]), estimate, and run the release's consistency
//! step. Each cell's errors `e = c − c*` (released minus replicate: the released count `c`
//! is the truth in the bootstrap world) are pooled with those of comparable cells of its
//! level ([`pool`]), and the interval is read from the pooled quantiles of `e`
//! ([`Rule`]), clipped to `[0, G]`. A class too thin to
//! trust (at census scale, one replicate's errors at a nation) borrows a coarser
//! class's quantiles, widened to what the level's own measurement alone gives
//! ([`floor`]). Where the replicates
//! move groups off their sizes (sparse large sizes, small regions), the released-0
//! cells within the measured displacement of a released group get an upper bound of at
//! least 1 ([`reach`]), so that the cells holding true groups are covered too.
//!
//! Everything here is post-processing: the entry point [`intervals`] takes the
//! published release ([`Draw`], which only the measurement path constructs) and public
//! data ([`PublicData`]: the hierarchy and `G`), never the dataset, and spends no ε.
//! Its noise comes from streams of its own ([`crate::noise::Purpose::Replicate`]) of a
//! key of its own ([`Subkey::Margins`], then [`Subkey::Replicate`] per replicate).
//!
//! The truth cannot be passed where the release is expected (these examples are
//! compiled by `cargo test`):
//!
//! ```compile_fail
//! fn leak(d: &coco::data::Dataset, p: &coco::release::plan::ReleasePlan) {
//!     let o = coco::release::margins::UncertaintyOptions::default();
//!     let _ = coco::release::margins::intervals(d, p, d.public(), &o);
//! }
//! ```
//!
//! ```compile_fail
//! fn leak(d: &coco::data::Dataset, p: &coco::release::plan::ReleasePlan) {
//!     let o = coco::release::margins::UncertaintyOptions::default();
//!     let truth = d.truth().for_diagnostic(coco::privacy::Diagnostic::Oracle);
//!     let _ = coco::release::margins::intervals(truth, p, d.public(), &o);
//! }
//! ```
//!
//! Nor the dataset where public data is expected:
//!
//! ```compile_fail
//! fn leak(r: &coco::release::pipeline::draw::Draw, d: &coco::data::Dataset, p: &coco::release::plan::ReleasePlan) {
//!     let o = coco::release::margins::UncertaintyOptions::default();
//!     let _ = coco::release::margins::intervals(r, p, d, &o);
//! }
//! ```
//!
//! What is allowed: a release and the public data.
//!
//! ```
//! fn margins(
//!     r: &coco::release::pipeline::draw::Draw,
//!     d: &coco::data::Dataset,
//!     p: &coco::release::plan::ReleasePlan,
//! ) -> Result<coco::release::margins::Uncertainty, coco::release::margins::UncertaintyError> {
//!     coco::release::margins::intervals(r, p, d.public(), &Default::default())
//! }
//! ```
//!
//! # Citations
//! Efron and Tibshirani, *An Introduction to the Bootstrap*, 1993, §6 (the parametric
//! bootstrap) and §13 (basic and percentile intervals); Kuo et al., PVLDB 11(11), 2018,
//! §4–5 (the estimators replayed); the Census Bureau's Monte Carlo intervals for
//! post-processed DP tables re-run the mechanism on the published output in the same
//! way (arXiv 2503.19714).

pub mod bootstrap;
pub mod converge;
pub mod coverage;
pub mod floor;
pub mod pool;
pub mod reach;
pub mod skipped;
pub mod summary;
pub mod sums;
pub mod zone;

use rustc_hash::FxHashMap as HashMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::consistency::ConsistencyError;
use crate::data::{NodeId, PublicData};
use crate::histogram::{Count, HistRef, HistogramSet, Size};
use crate::noise::{NoiseSource, OsRandomnessError, Subkey};
use crate::release::pipeline::draw::Draw;
use crate::release::plan::ReleasePlan;

use pool::{Class, CountKey, Pool, SizeKey};

#[derive(Debug, Error)]
pub enum UncertaintyError {
    #[error("a bootstrap replicate: {0}")]
    Replicate(#[from] crate::release::pipeline::draw::RunError),
    #[error("a bootstrap replicate: {0}")]
    Consistency(#[from] ConsistencyError),
    #[error(transparent)]
    Randomness(#[from] OsRandomnessError),
    #[error(
        "bootstrap key {found:?}: expected 64 hexadecimal digits (the manifest's uncertainty.seed)"
    )]
    BadKey { found: String },
    #[error("confidence {found}: expected a number strictly between 0 and 1, or \"none\"")]
    BadConfidence { found: String },
    #[error(
        "replicates {found}: expected \"auto\" or a whole number from 1 to {}",
        crate::units::thousands(u128::from(*max))
    )]
    BadReplicates { found: String, max: u32 },
}

/// The confidence of an interval, strictly between 0 and 1 (default 0.9, as the
/// American Community Survey's margins of error).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Confidence(f64);

impl Confidence {
    pub const DEFAULT: Confidence = Confidence(0.9);

    pub fn new(level: f64) -> Result<Confidence, UncertaintyError> {
        if level.is_finite() && level > 0.0 && level < 1.0 {
            Ok(Confidence(level))
        } else {
            Err(UncertaintyError::BadConfidence {
                found: level.to_string(),
            })
        }
    }

    /// `0.9`, `0.95`, …; `none` is `Ok(None)`.
    pub fn parse(text: &str) -> Result<Option<Confidence>, UncertaintyError> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        let bad = || UncertaintyError::BadConfidence {
            found: text.to_string(),
        };
        let level: f64 = text.parse().map_err(|_| bad())?;
        Confidence::new(level).map(Some).map_err(|_| bad())
    }

    pub fn level(self) -> f64 {
        self.0
    }
}

impl Default for Confidence {
    fn default() -> Self {
        Confidence::DEFAULT
    }
}

/// How many replicates to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Replicates {
    /// As many as fit a budget of work ([`auto_replicates`]).
    #[default]
    Auto,
    Fixed(u32),
    /// As many as fit this budget of work (a preview's trials share one).
    Within(u64),
}

impl Replicates {
    /// At most this many replicates may be asked for.
    pub const MAX_FIXED: u32 = 10_000;

    /// `auto` or a number from 1 to [`Replicates::MAX_FIXED`].
    pub fn parse(text: &str) -> Result<Replicates, UncertaintyError> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("auto") {
            return Ok(Replicates::Auto);
        }
        match text.parse::<u32>() {
            Ok(n) if (1..=Replicates::MAX_FIXED).contains(&n) => Ok(Replicates::Fixed(n)),
            _ => Err(UncertaintyError::BadReplicates {
                found: text.to_string(),
                max: Replicates::MAX_FIXED,
            }),
        }
    }
}

/// How the pooled errors `e = c − c*` of a class (the released count `c` standing for
/// the truth, the replicate's `c*` for the estimate) become an interval around a
/// released count `x` of that class, `q_lo` and `q_hi` being their `α/2` and `1 − α/2`
/// quantiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// `[x + q_lo, x + q_hi]`: the truth lies where the truths of the bootstrap world
    /// lay from estimates like `x` (the default: measured coverage in
    /// `docs/uncertainty.md`).
    #[default]
    Percentile,
    /// `[x − q_hi, x − q_lo]`: the errors mirrored (for comparison only).
    Basic,
    /// `[x − a, x + a]` with `a` the `confidence` quantile of `|e|`.
    Symmetric,
}

/// What to compute.
#[derive(Clone, Debug, Default)]
pub struct UncertaintyOptions {
    pub confidence: Confidence,
    pub replicates: Replicates,
    pub rule: Rule,
    /// The key of the run these margins belong to (a seeded release's, a preview
    /// trial's): the bootstrap's own key is derived from it ([`Subkey::Margins`]), so a
    /// seeded run gets reproducible margins that never replay its own noise. `None`: a
    /// fresh key from the operating system.
    pub key: Option<NoiseSource>,
    /// Keep every replicate's consistent histograms ([`Uncertainty::replicate_tables`]),
    /// for `coco release --replicate-tables`: `R` copies of the release in memory, so
    /// only when asked.
    pub keep_replicates: bool,
    /// Which known biases of the estimators the bootstrap's truth accounts for.
    pub bias: Bias,
    /// How many top replicates the levels with few regions get ([`top_runs`]).
    pub top_replicates: TopReplicates,
}

/// The biases of the estimators the bootstrap's truth undoes before the replicates are
/// drawn ([`zone`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Bias {
    /// The tails' groups put at `L` are spread over their zones ([`zone`]) and the sizes
    /// `hg`'s rounding skipped are filled ([`skipped`]): the default.
    #[default]
    Undone,
    /// The tails' zones only: for comparison (what `coco` did before [`skipped`]).
    TailZone,
    /// The release itself is the truth: for comparison only (the coverage test's
    /// companion shows what the zone is for).
    Ignored,
}

/// The work the automatic choice of `R` may spend on the full replicates beyond the
/// draws the levels ask for ([`min_replicates`]), in the units of [`replicate_cost`] (a
/// unit is 5–6 ns of one core of the 2-core build machine: `docs/uncertainty.md`):
/// about one second of one core. More replicates than the levels' draws ask for make
/// each class's pool hold its own errors, where with fewer a thin class borrows a
/// coarser one's: the intervals of a small release are narrower and its sparse tails
/// better covered for them (measured without it in `docs/uncertainty.md`, "How many
/// replicates"). A release whose replicate costs more gets what the levels ask for,
/// about the release's own measurement and consistency when that is one replicate.
pub const WORK_BUDGET: u64 = 180_000_000;
/// At most this many full replicates: the coverage measured with 100 is within sampling
/// error of that with more (`docs/uncertainty.md`). The levels with few regions are
/// drawn this many times in all, full and top replicates together.
pub const MAX_REPLICATES: u32 = 100;
/// At least one replicate.
pub const MIN_REPLICATES: u32 = 1;

/// Units of [`replicate_cost`] per released cell (the consistency step matches, merges
/// and rounds every cell), per region (its measurement's set-up, its fit, its matching
/// with its children) and per replicate (setting up the tasks and pools). Fitted by
/// least squares to the time of a replicate on the sample (two plans), `us-counties`,
/// `us-blocks` at 1% and three robustness shapes (`docs/uncertainty.md`).
pub const UNITS_PER_CELL: u64 = 125;
pub const UNITS_PER_REGION: u64 = 250;
pub const UNITS_PER_REPLICATE: u64 = 200_000;

/// The cost of one replicate in abstract units, from what the first replicate did
/// (post-processing: the noisy values it drew are not the dataset's): the work of its
/// measurements' fits ([`bootstrap::measurement_work`]), and [`UNITS_PER_CELL`],
/// [`UNITS_PER_REGION`] and [`UNITS_PER_REPLICATE`]. Only a preview's margins, which
/// share a budget of work among its trials ([`Replicates::Within`]), are sized by it.
pub fn replicate_cost(measurement_work: u64, released_cells: u64, regions: u64) -> u64 {
    measurement_work
        .saturating_add(released_cells.saturating_mul(UNITS_PER_CELL))
        .saturating_add(regions.saturating_mul(UNITS_PER_REGION))
        .saturating_add(UNITS_PER_REPLICATE)
}

/// The independent draws of a level's errors (its regions with groups, times the
/// replicates that draw it; a region's errors within one replicate move together) below
/// which the Monte Carlo error of its pooled quantiles is too large: with `n` draws the
/// coverage of a 90% interval read from them has a standard deviation of about
/// `√(0.9 · 0.1 / n)`, 0.017 at 300, so that two of them stay within the issue's
/// 0.85 (`docs/uncertainty.md`, "How many replicates").
pub const MIN_LEVEL_DRAWS: u64 = 300;

/// The draws a level of `regions` regions with groups asks for: enough for
/// [`MIN_LEVEL_DRAWS`] errors, at most [`MAX_REPLICATES`] (a nation: more draws of one
/// region's errors did not cover better, the bias of the estimator there being what
/// they miss: `docs/uncertainty.md`); none for a level without groups.
pub fn draws_wanted(regions: u64) -> u32 {
    if regions == 0 {
        return 0;
    }
    MIN_LEVEL_DRAWS
        .div_ceil(regions)
        .min(u64::from(MAX_REPLICATES)) as u32
}

/// Per level, its regions with groups (those the margins describe).
fn regions_per_level(public: PublicData<'_>) -> Vec<u64> {
    let h = public.hierarchy;
    h.levels()
        .map(|l| h.level_nodes(l).filter(|&id| public.groups(id) > 0).count() as u64)
        .collect()
}

/// The depth of the hierarchy a top replicate of the first `levels` levels is drawn on
/// ([`bootstrap::Cut`]): down to the first measured level at or below the last of them,
/// which stands for the leaves. `None` when that is the leaf level (the whole release)
/// or there is none. A function of the plan only (public), so that `coco margins` cuts
/// the release's hierarchy where the release did.
///
/// A top replicate draws the noise the full replicate with its key draws, region for
/// region. Both consistency steps merge a region's own estimate with what its children
/// add up to, so the cut's levels lose what the measurements below the cut add to them;
/// a region's own measurement dominates that sum when it has many children (with equal
/// budgets, a parent of `n` children loses about a share `1/(n + 1)` of its precision),
/// so their intervals lean wide.
pub fn cut_depth(plan: &ReleasePlan, levels: usize) -> Option<usize> {
    let depth = plan.levels().len();
    let last = levels.checked_sub(1)?;
    let leaf = (last..depth).find(|&l| plan.levels()[l].is_measured())?;
    (leaf + 1 < depth).then_some(leaf + 1)
}

/// How many of the first levels top replicates can draw ([`cut_depth`]): up to the
/// last measured level above the leaves.
fn servable_levels(plan: &ReleasePlan) -> usize {
    let depth = plan.levels().len();
    (0..depth.saturating_sub(1))
        .rev()
        .find(|&l| plan.levels()[l].is_measured())
        .map_or(0, |l| l + 1)
}

/// The fewest full replicates: as many as the levels that top replicates cannot draw
/// ask for ([`draws_wanted`]: the leaves and the levels between them and the last
/// measured level above them), at least one. The other levels get what they ask for
/// beyond `R` from top replicates ([`top_runs`]). A function of the plan, the
/// hierarchy and `G` only, never of time or of the machine.
pub fn min_replicates(plan: &ReleasePlan, public: PublicData<'_>) -> u32 {
    let regions = regions_per_level(public);
    let served = servable_levels(plan).min(regions.len());
    regions[served..]
        .iter()
        .map(|&n| draws_wanted(n))
        .max()
        .unwrap_or(0)
        .max(MIN_REPLICATES)
}

/// The work `auto` may spend to reach [`min_replicates`] (four times
/// [`WORK_BUDGET`]): a census-scale release whose leaves are too few for one replicate
/// (no such release is known) gets what fits it.
pub const STRETCH_BUDGET: u64 = 4 * WORK_BUDGET;

/// `R`, the full replicates `auto` draws for replicates that each cost `cost`
/// ([`replicate_cost`]): the levels' draws ([`min_replicates`], within
/// [`STRETCH_BUDGET`]), or as many as fit [`WORK_BUDGET`] if more, at most
/// [`MAX_REPLICATES`].
pub fn auto_replicates(cost: u64, plan: &ReleasePlan, public: PublicData<'_>) -> u32 {
    let least = min_replicates(plan, public).min(replicates_within(STRETCH_BUDGET, cost));
    replicates_within(WORK_BUDGET, cost).max(least)
}

/// A run of top replicates: `replicates` draws of the first `levels` levels, on the
/// hierarchy cut at [`cut_depth`]; their errors are pooled for those levels only (a
/// measured level below them that ends the cut has its full replicates). The manifest
/// records the runs (`uncertainty.top_runs`), so that `coco margins` draws them again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopRun {
    pub levels: usize,
    pub replicates: u32,
}

/// The top replicates beside `replicates` full ones: each level that asks for more
/// draws than `replicates` ([`draws_wanted`]) gets the rest, the deepest first, so
/// that a top replicate draws the levels that still ask for draws and no more (a
/// nation its 100, 52 states their 6). Levels top replicates cannot draw
/// ([`cut_depth`]) get none: `auto` gives them full replicates enough.
pub fn top_runs(plan: &ReleasePlan, public: PublicData<'_>, replicates: u32) -> Vec<TopRun> {
    let regions = regions_per_level(public);
    let served = servable_levels(plan).min(regions.len());
    let extra: Vec<u32> = regions[..served]
        .iter()
        .map(|&n| draws_wanted(n).saturating_sub(replicates))
        .collect();
    let most = extra.iter().copied().max().unwrap_or(0);
    let mut runs: Vec<TopRun> = Vec::new();
    for t in 1..=most {
        // The levels that still ask for a draw: a prefix, the levels with fewer regions
        // asking for more (a level between two that ask is drawn too).
        let levels = extra.iter().rposition(|&e| e >= t).map_or(0, |l| l + 1);
        match runs.last_mut() {
            Some(run) if run.levels == levels => run.replicates += 1,
            _ => runs.push(TopRun {
                levels,
                replicates: 1,
            }),
        }
    }
    runs
}

/// How many top replicates to draw.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum TopReplicates {
    /// [`top_runs`].
    #[default]
    Auto,
    /// These (`coco margins`: the runs the release's manifest records).
    Runs(Vec<TopRun>),
}

/// `R` for replicates that each cost `cost` within `budget`.
pub fn replicates_within(budget: u64, cost: u64) -> u32 {
    let r = budget / cost.max(1);
    (r.min(u64::from(MAX_REPLICATES)) as u32).max(MIN_REPLICATES)
}

/// The offsets of a class's intervals: `[c + low, c + high]`, `low ≤ 0 ≤ high`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offsets {
    pub low: i64,
    pub high: i64,
}

impl Offsets {
    /// The interval around a released count `c` of a region of `G` groups: within
    /// `[0, G]`, and holding `c`.
    fn around(self, c: Count, groups: Count) -> (Count, Count) {
        let lower = c.saturating_sub(self.low.unsigned_abs()).min(c);
        let upper = c.saturating_add(self.high as u64).min(groups).max(c);
        (lower, upper)
    }
}

/// The intervals of a release: a table of offsets per class of cells, applied to the
/// released histograms on demand ([`Uncertainty::region`]).
#[derive(Clone, Debug)]
pub struct Uncertainty {
    pub confidence: Confidence,
    pub rule: Rule,
    pub replicates: u32,
    /// The runs of top replicates drawn besides ([`top_runs`]); none when none.
    pub top_runs: Vec<TopRun>,
    /// The bootstrap's key, published in the manifest (`uncertainty.seed`) so that
    /// anyone re-running the bootstrap on the published tables (`coco margins`) draws
    /// the same replicates and gets the same intervals.
    pub key: BootstrapKey,
    max_size: Size,
    /// The pooled classes' offsets.
    offsets: DenseOffsets,
    summary: summary::SummaryOffsets,
    /// Where a released 0 may hide a group ([`reach`]).
    reach: reach::Reach,
    /// Per level: whether it has fewer than [`FEW_REGIONS`] regions, whose summary
    /// statistics also take the interval their cells imply ([`Uncertainty::summary`]).
    few_regions: Vec<bool>,
    /// Per level: its tail's unresolved zone ([`zone`]).
    zones: Vec<Option<zone::Zone>>,
    /// The replicates' consistent histograms, in the order drawn, when
    /// [`UncertaintyOptions::keep_replicates`] asked for them (post-processing of the
    /// published tables, like everything here); empty otherwise.
    pub replicate_tables: Vec<HistogramSet>,
}

/// A level of fewer regions than this pools each summary statistic's errors over too
/// few regions to average out the estimator's bias there (`docs/uncertainty.md`): its
/// statistics' intervals also cover what the cells' intervals imply.
pub const FEW_REGIONS: usize = 30;

/// One cell's interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellInterval {
    pub size: Size,
    pub count: Count,
    pub lower: Count,
    pub upper: Count,
}

/// How the margins of error were computed: the manifest's `uncertainty.method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MarginsMethod {
    /// A parametric bootstrap with pooled, observed-class quantiles (this module).
    #[serde(rename = "parametric-bootstrap-pooled")]
    ParametricBootstrapPooled,
}

impl Uncertainty {
    /// The top replicates drawn besides the full ones, in all.
    pub fn top_replicates(&self) -> u32 {
        self.top_runs.iter().map(|run| run.replicates).sum()
    }

    /// The method, as the manifest names it.
    pub fn method(&self) -> MarginsMethod {
        MarginsMethod::ParametricBootstrapPooled
    }

    /// The intervals of region `level` with released histogram `hist` and public `G`:
    /// every cell whose interval is not `[0, 0]`, by size.
    pub fn region(&self, level: usize, hist: HistRef<'_>, groups: Count) -> Vec<CellInterval> {
        let mut out = Vec::new();
        if groups == 0 {
            return out;
        }
        let zone = self.zones.get(level).copied().flatten();
        let level = level as u16;
        let pairs = hist.pairs();
        let mut push = |s: Size, c: Count, o: Offsets| {
            let (lower, upper) = o.around(c, groups);
            if upper > 0 {
                out.push(CellInterval {
                    size: s,
                    count: c,
                    lower,
                    upper,
                });
            }
        };
        let far = self.offsets_of(Class::far(level));
        if far.high > 0 {
            // Every far cell is listed too (a release whose replicates moved groups
            // far from where it put them).
            let mut near = HashMap::default();
            pool::for_each_near_cell(hist, self.max_size, zone, |s, c| {
                near.insert(s, c);
            });
            for s in 0..=self.max_size {
                let o = match near.get(&s) {
                    Some(&c) => self.offsets_of(pool::class_of(level, pairs, s, c, zone)),
                    None => far,
                };
                push(s, near.get(&s).copied().unwrap_or(0), o);
            }
        } else {
            pool::for_each_near_cell(hist, self.max_size, zone, |s, c| {
                push(
                    s,
                    c,
                    self.offsets_of(pool::class_of(level, pairs, s, c, zone)),
                )
            });
        }
        let within = self.unpinned_zeros(level, pairs, zone);
        if within.is_empty() {
            return out;
        }
        let mut added = Vec::new();
        for z in within {
            match out.binary_search_by_key(&z, |c| c.size) {
                Ok(j) => out[j].upper = out[j].upper.max(1),
                Err(_) => added.push(CellInterval {
                    size: z,
                    count: 0,
                    lower: 0,
                    upper: 1,
                }),
            }
        }
        if !added.is_empty() {
            out.extend(added);
            out.sort_unstable_by_key(|c| c.size);
        }
        out
    }

    /// The released-0 cells of a region of `level` (released sizes `pairs`, tail zone
    /// `zone`) whose upper bound is at least 1, ascending: those a released group's true
    /// position may be in ([`reach`]); and on a level of fewer than [`FEW_REGIONS`]
    /// regions, the tail's whole zone: a group there may be released at `L` or taken
    /// into the head's top (the head's count of groups at or above `L` has the noise of
    /// one measured value), which a bootstrap whose world has nothing there cannot
    /// show, and such a level has too few regions for the classes to average the miss
    /// out ([`zone`]).
    fn unpinned_zeros(
        &self,
        level: u16,
        pairs: &[(Size, Count)],
        zone: Option<zone::Zone>,
    ) -> Vec<Size> {
        let mut within = self.reach.cells(level, pairs, self.max_size);
        if let Some(z) = zone.filter(|_| self.few_regions.get(usize::from(level)) == Some(&true)) {
            within.extend(z.above + 1..=z.last);
            within.sort_unstable();
            within.dedup();
        }
        within
    }

    /// The interval of the cell of size `s` of a region (released `hist`, public `G`):
    /// the one [`Uncertainty::region`] lists for it, or `[0, 0]` where it lists none,
    /// without the region's other cells. `summary.csv`'s single share asks this of
    /// every region of a release.
    pub fn cell(&self, level: usize, hist: HistRef<'_>, groups: Count, s: Size) -> CellInterval {
        let c = hist.count(s);
        let none = CellInterval {
            size: s,
            count: c,
            lower: c,
            upper: c,
        };
        if groups == 0 || s > self.max_size {
            return none;
        }
        let zone = self.zones.get(level).copied().flatten();
        let level = level as u16;
        let pairs = hist.pairs();
        // A cell `region` does not visit is far, and `class_of` says so.
        let (lower, mut upper) = self
            .offsets_of(pool::class_of(level, pairs, s, c, zone))
            .around(c, groups);
        if c == 0
            && self
                .unpinned_zeros(level, pairs, zone)
                .binary_search(&s)
                .is_ok()
        {
            upper = upper.max(1);
        }
        CellInterval {
            size: s,
            count: c,
            lower,
            upper,
        }
    }

    /// The summary statistics of a region ([`summary::stats`]) with their intervals.
    pub fn summary(
        &self,
        level: usize,
        hist: HistRef<'_>,
        groups: Count,
    ) -> Vec<Option<summary::StatInterval>> {
        // The region's cell intervals, computed once for all its statistics.
        let cells = std::cell::OnceCell::new();
        summary::stats(self.max_size)
            .into_iter()
            .map(|stat| self.statistic_with(level, stat, hist, groups, &cells))
            .collect()
    }

    /// A statistic of a region of `level` with released `hist` and public `G`, with its
    /// interval (`None` where a share or mean of no groups is undefined). One rule for
    /// every file and for `coco margins`: the groups of one size are a cell (its
    /// interval is the cell's, as in `uncertainty.csv`); a share over `G` is its count's
    /// interval over `G`; every other statistic reads its pooled errors, and on a level
    /// of fewer than [`FEW_REGIONS`] regions a range's count also covers what its
    /// cells' intervals imply ([`summary::from_cells`]).
    pub fn statistic(
        &self,
        level: usize,
        stat: summary::Stat,
        hist: HistRef<'_>,
        groups: Count,
    ) -> Option<summary::StatInterval> {
        self.statistic_with(level, stat, hist, groups, &std::cell::OnceCell::new())
    }

    /// [`Uncertainty::statistic`], with the region's cell intervals ([`Uncertainty::region`])
    /// computed at most once into `cells` (a caller that holds them already passes them).
    pub(crate) fn statistic_with(
        &self,
        level: usize,
        stat: summary::Stat,
        hist: HistRef<'_>,
        groups: Count,
        cells: &std::cell::OnceCell<Vec<CellInterval>>,
    ) -> Option<summary::StatInterval> {
        use summary::{Denominator, Stat, StatInterval};
        let region_cells = || cells.get_or_init(|| self.region(level, hist, groups));
        let count = |range: summary::SizeRange| -> StatInterval {
            let x = range_count(hist, range);
            match Stat::Groups(range).pooled(summary::Scope::Region) {
                None => {
                    let c = self.cell(level, hist, groups, range.lower());
                    let (lower, upper) = (c.lower as i64, c.upper as i64);
                    StatInterval {
                        estimate: x,
                        lower,
                        upper,
                    }
                }
                Some(pooled) => {
                    let mut iv = self
                        .summary
                        .region(level, pooled, hist, groups, self.max_size)
                        .expect("a count is always defined");
                    if self.few_regions.get(level).copied().unwrap_or(false) {
                        let (lower, upper) = summary::from_cells(range, region_cells(), groups, x);
                        iv.lower = iv.lower.min(lower);
                        iv.upper = iv.upper.max(upper);
                    }
                    iv
                }
            }
        };
        match stat {
            Stat::Groups(range) => Some(count(range)),
            Stat::Share(range, Denominator::All) => count(range).over(groups),
            Stat::Share(_, Denominator::Occupied) | Stat::MeanSize(_) => {
                self.summary
                    .region(level, stat, hist, groups, self.max_size)
            }
        }
    }

    /// A statistic of region set `set` (the `set`-th of the [`summary::Request`] the
    /// margins were computed for), whose released histograms summed are `hist` and
    /// whose `G` summed is `groups`: read from the set's own errors over the
    /// replicates; a share over `G`, its count's interval over `G`.
    pub fn set_statistic(
        &self,
        set: usize,
        stat: summary::Stat,
        hist: HistRef<'_>,
        groups: Count,
    ) -> Option<summary::StatInterval> {
        use summary::{Denominator, Stat};
        match stat {
            Stat::Share(range, Denominator::All) => self
                .summary
                .set(set, Stat::Groups(range), hist, groups, self.max_size)?
                .over(groups),
            _ => self.summary.set(set, stat, hist, groups, self.max_size),
        }
    }

    /// The bound `K` of the release.
    pub fn max_size(&self) -> Size {
        self.max_size
    }

    fn offsets_of(&self, class: Class) -> Offsets {
        self.offsets.lookup(class)
    }
}

/// The offsets of the classes cells are pooled in ([`pool::class_of`]), in arrays a
/// cell's class indexes directly: every cell of `uncertainty.csv`, `summary.csv` and the
/// wide tables' margins looks one up, millions of times at census scale, where a hash
/// lookup of the class cost more than the rest of the cell's work. The same values as
/// the map they are built from (a class the map lacks is `[0, 0]` in both).
#[derive(Clone, Debug, Default)]
struct DenseOffsets {
    /// Per level, `SIZE_KEYS × COUNT_KEYS` offsets, by [`DenseOffsets::index`].
    levels: Vec<Vec<Offsets>>,
    /// Per level, the far class's ([`Class::far`]).
    far: Vec<Offsets>,
    /// The classes the arrays do not index (the coarser ones).
    others: HashMap<Class, Offsets>,
}

impl DenseOffsets {
    /// Size buckets: [`pool::size_bucket`] of any `Size` is at most 128.
    const SIZE_KEYS: usize = 129;
    /// Count keys: [`pool::count_bucket`] of any `Count` (at most 127), then the gaps.
    const COUNT_KEYS: usize = 128 + 7;

    fn new(map: &HashMap<Class, Offsets>) -> DenseOffsets {
        let depth = map
            .keys()
            .map(|c| usize::from(c.level) + 1)
            .max()
            .unwrap_or(0);
        let zero = Offsets { low: 0, high: 0 };
        let mut out = DenseOffsets {
            levels: vec![vec![zero; Self::SIZE_KEYS * Self::COUNT_KEYS]; depth],
            far: vec![zero; depth],
            others: HashMap::default(),
        };
        for (&class, &o) in map {
            if class == Class::far(class.level) {
                out.far[usize::from(class.level)] = o;
            } else if let Some((level, i)) = Self::index(class) {
                out.levels[level][i] = o;
            } else {
                out.others.insert(class, o);
            }
        }
        out
    }

    /// A fine class's level and index; `None` for the coarser classes a fine one
    /// borrows from (never looked up per cell).
    fn index(class: Class) -> Option<(usize, usize)> {
        let SizeKey::Bucket(size) = class.size else {
            return None;
        };
        let count = match class.count {
            CountKey::Released(b) => usize::from(b),
            // The gaps in their order of declaration, 0 to 6.
            CountKey::Zero(gap) => 128 + gap as usize,
            CountKey::Merged(_) | CountKey::AnyReleased | CountKey::AnyZero => return None,
        };
        let size = usize::from(size);
        (size < Self::SIZE_KEYS && count < Self::COUNT_KEYS)
            .then_some((usize::from(class.level), size * Self::COUNT_KEYS + count))
    }

    /// The class's offsets (`[0, 0]` for a class without a pool).
    fn lookup(&self, class: Class) -> Offsets {
        self.get(class).unwrap_or_else(|| {
            self.others
                .get(&class)
                .copied()
                .unwrap_or(Offsets { low: 0, high: 0 })
        })
    }

    /// The class's offsets in the arrays, `None` where they do not hold the class (a
    /// coarse class, a level beyond them).
    fn get(&self, class: Class) -> Option<Offsets> {
        if class == Class::far(class.level) {
            return self.far.get(usize::from(class.level)).copied();
        }
        let (level, i) = Self::index(class)?;
        self.levels.get(level).map(|l| l[i])
    }
}

/// What margins are computed from: released histograms, their `K` and the consistency
/// step that made them. Outside coco it is made only from a [`Draw`] (the measurement
/// path's output); inside, a preview trial's consistent histograms (post-processed
/// noisy measurements as well) make one too, for the preview's coverage diagnostic.
#[derive(Clone, Copy)]
pub struct Released<'a> {
    histograms: &'a HistogramSet,
    max_size: Size,
    consistency: crate::consistency::Consistency,
}

impl<'a> From<&'a Draw> for Released<'a> {
    fn from(draw: &'a Draw) -> Released<'a> {
        Released {
            histograms: draw.histograms(),
            max_size: draw.max_size(),
            consistency: draw.consistency(),
        }
    }
}

impl<'a> Released<'a> {
    /// Released tables that are not a [`Draw`]: a preview trial's consistent histograms
    /// (the caller holds them from [`crate::consistency::make_consistent`]), or a
    /// release read back from its published files for `coco margins` (the caller holds
    /// them from [`crate::release::outputs::margins::published::read`], which reads
    /// published files only), with their `K` and the consistency step that made them.
    /// Never the truth: both are post-processed noisy measurements.
    pub(crate) fn new(
        histograms: &'a HistogramSet,
        max_size: Size,
        consistency: crate::consistency::Consistency,
    ) -> Released<'a> {
        Released {
            histograms,
            max_size,
            consistency,
        }
    }

    pub fn histograms(&self) -> &'a HistogramSet {
        self.histograms
    }

    pub fn max_size(&self) -> Size {
        self.max_size
    }

    pub fn consistency(&self) -> crate::consistency::Consistency {
        self.consistency
    }
}

/// The key of a release's bootstrap, published in its manifest (`uncertainty.seed`, 64
/// hexadecimal digits). It keys only the replicates' noise, which post-processes the
/// published tables: it is a key of its own (derived from the run's through a one-way
/// step, or fresh from the operating system), never the run's own key, and it reveals
/// nothing about the confidential data (`docs/privacy.md`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BootstrapKey([u8; 32]);

impl std::fmt::Debug for BootstrapKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BootstrapKey({})", self.to_hex())
    }
}

impl BootstrapKey {
    /// 64 lowercase hexadecimal digits.
    pub fn to_hex(self) -> String {
        crate::data::hex(&self.0)
    }

    /// The manifest's `uncertainty.seed`.
    pub fn parse(text: &str) -> Result<BootstrapKey, UncertaintyError> {
        let bad = || UncertaintyError::BadKey {
            found: text.to_string(),
        };
        let text = text.trim();
        if text.len() != 64 || !text.is_ascii() {
            return Err(bad());
        }
        let mut key = [0u8; 32];
        for (i, b) in key.iter_mut().enumerate() {
            *b = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(BootstrapKey(key))
    }

    /// The bootstrap key of a run keyed by `run` (a seeded release, a preview trial):
    /// derived through a one-way step ([`Subkey::Margins`]), so that publishing it
    /// reveals nothing of the run's own key.
    pub fn of_run(run: &NoiseSource) -> BootstrapKey {
        BootstrapKey(run.derive(Subkey::Margins).key_bytes())
    }

    /// A fresh key from the operating system (a release keyed from it).
    pub fn fresh() -> Result<BootstrapKey, UncertaintyError> {
        Ok(BootstrapKey::of_run(&NoiseSource::from_os()?))
    }

    fn source(self) -> NoiseSource {
        NoiseSource::from_key(self.0, crate::noise::Randomness::Os)
    }
}

/// The key of the bootstrap: derived from its run's, or fresh from the operating
/// system's.
fn source_of(options: &UncertaintyOptions) -> Result<BootstrapKey, UncertaintyError> {
    match &options.key {
        Some(key) => Ok(BootstrapKey::of_run(key)),
        None => BootstrapKey::fresh(),
    }
}

/// The groups of `hist` whose size is in `range`.
fn range_count(hist: HistRef<'_>, range: summary::SizeRange) -> i64 {
    summary::Stat::Groups(range)
        .of(hist, 0)
        .expect("a count is always defined")
}

/// Pools of one replicate's (or the released histograms') cells.
type Pools = HashMap<Class, Pool>;

fn merge_pools(mut a: Pools, b: Pools) -> Pools {
    if a.len() < b.len() {
        return merge_pools(b, a);
    }
    for (k, v) in b {
        a.entry(k).or_default().merge(&v);
    }
    a
}

/// Regions per task when pooling.
const CHUNK: usize = 1024;

/// Draws the replicates `range` a batch at a time, one per core, and hands each to
/// `pool` in order: a small release's replicate does not keep both cores busy on its
/// own, and each draws from its own key, so the results are those drawn one by one. (A
/// large release gets few replicates, and a batch holds at most one replicate's tables
/// per core.)
fn in_batches(
    range: std::ops::Range<u32>,
    draw: impl Fn(u32) -> Result<bootstrap::Replicate, UncertaintyError> + Sync,
    mut pool: impl FnMut(u32, bootstrap::Replicate),
) -> Result<(), UncertaintyError> {
    let batch = rayon::current_num_threads().max(1) as u32;
    let mut r = range.start;
    while r < range.end {
        let drawn: Vec<bootstrap::Replicate> = (r..range.end.min(r.saturating_add(batch)))
            .into_par_iter()
            .map(&draw)
            .collect::<Result<_, _>>()?;
        for replicate in drawn {
            pool(r, replicate);
            r += 1;
        }
    }
    Ok(())
}

/// Adds one replicate to `pools`: each of its cells, classed by the replicate's own
/// histogram (the observed value in the bootstrap world), with the error `e = c − c*`
/// of the replicate's count `c*` from the bootstrap world's truth `c` (`truth`: the
/// released counts, with the tails' zones spread, [`zone::world`]).
///
/// With `register`, every class of the released histograms' own cells (those
/// [`Uncertainty::region`] looks up) gets a pool, empty if no replicate cell falls in it,
/// so that it borrows a coarser class's quantiles ([`offsets_table`]) instead of having
/// none.
///
/// Region `i` of replicate `r` goes to half `(i + r) mod 2` of `pools` when the
/// Monte Carlo diagnostic is asked for ([`converge`], under `COCO_TIMING=1`), else to
/// the first; the intervals are read from both halves together, so they are the same
/// either way.
#[allow(clippy::too_many_arguments)]
fn add_replicate(
    pools: &mut [Pools; 2],
    r: u32,
    reach: &mut reach::ReachPools,
    (released, truth): (&HistogramSet, &HistogramSet),
    replicate: &HistogramSet,
    public: PublicData<'_>,
    k: Size,
    zones: &[Option<zone::Zone>],
    register: bool,
) {
    let h = public.hierarchy;
    let split = crate::timing::enabled();
    // The reach's tally needs shares, not every region: a level of many regions is
    // sampled, every `stride`-th region by index.
    let strides: Vec<usize> = (0..h.depth())
        .map(|l| (h.level_nodes(crate::data::LevelId(l)).len() / reach::SAMPLE_REGIONS).max(1))
        .collect();
    let found = (0..h.len())
        .into_par_iter()
        .chunks(CHUNK)
        .map(|ids| {
            let mut halves = [Pools::default(), Pools::default()];
            let mut moved = reach::ReachPools::default();
            for i in ids {
                let id = NodeId(i as u32);
                if public.groups(id) == 0 {
                    continue;
                }
                let out = &mut halves[if split { (i + r as usize) % 2 } else { 0 }];
                let level = h.node(id).level.0 as u16;
                let zone = zones.get(usize::from(level)).copied().flatten();
                if register {
                    let p = released.get(i).pairs();
                    pool::for_each_near_cell(released.get(i), k, zone, |s, c| {
                        out.entry(pool::class_of(level, p, s, c, zone)).or_default();
                    });
                }
                let p = truth.get(i).pairs();
                let observed = replicate.get(i);
                let q = observed.pairs();
                if i % strides[usize::from(level)] == 0 {
                    moved.add_region(level, p, q, k, zone);
                }
                let far = pool::for_each_near_cell(observed, k, zone, |s, r| {
                    out.entry(pool::class_of(level, q, s, r, zone))
                        .or_default()
                        .cells += 1;
                });
                out.entry(Class::far(level)).or_default().cells += far;
                let mut record = |s: Size, c: Count, r: Count| {
                    if c != r {
                        let e = c as i64 - r as i64;
                        *out.entry(pool::class_of(level, q, s, r, zone))
                            .or_default()
                            .nonzero
                            .entry(e)
                            .or_default() += 1;
                    }
                };
                let (mut a, mut b) = (0, 0);
                while a < p.len() || b < q.len() {
                    match (p.get(a), q.get(b)) {
                        (Some(&(s, c)), Some(&(t, r))) if s == t => {
                            record(s, c, r);
                            a += 1;
                            b += 1;
                        }
                        (Some(&(s, c)), Some(&(t, _))) if s < t => {
                            record(s, c, 0);
                            a += 1;
                        }
                        (Some(&(s, c)), None) => {
                            record(s, c, 0);
                            a += 1;
                        }
                        (_, Some(&(t, r))) => {
                            record(t, 0, r);
                            b += 1;
                        }
                        (None, None) => unreachable!(),
                    }
                }
            }
            (halves, moved)
        })
        .reduce(
            || {
                (
                    [Pools::default(), Pools::default()],
                    reach::ReachPools::default(),
                )
            },
            |([a0, a1], mut x), ([b0, b1], y)| {
                x.merge(y);
                ([merge_pools(a0, b0), merge_pools(a1, b1)], x)
            },
        );
    let [f0, f1] = found.0;
    let [h0, h1] = std::mem::take(pools);
    *pools = [merge_pools(h0, f0), merge_pools(h1, f1)];
    reach.merge(found.1);
}

/// A class's offsets under `rule` from its pooled distribution.
fn offsets(dist: &[(i64, u64)], rule: Rule, confidence: Confidence) -> Offsets {
    let alpha = 1.0 - confidence.level();
    let lo = pool::quantile(dist, alpha / 2.0);
    let hi = pool::quantile(dist, 1.0 - alpha / 2.0);
    let (low, high) = match rule {
        Rule::Basic => (-hi, -lo),
        Rule::Percentile => (lo, hi),
        Rule::Symmetric => {
            let abs: Vec<(i64, u64)> = {
                let mut m: HashMap<i64, u64> = HashMap::default();
                for &(d, n) in dist {
                    *m.entry(d.abs()).or_default() += n;
                }
                let mut v: Vec<_> = m.into_iter().collect();
                v.sort_unstable();
                v
            };
            let a = pool::quantile(&abs, confidence.level());
            (-a, a)
        }
    };
    Offsets {
        low: low.min(0),
        high: high.max(0),
    }
}

/// The offsets of every class: from its own errors if it holds at least
/// [`pool::MIN_SAMPLES`], else from its finest coarser class ([`Class::coarser`]) that does (else from
/// all the level's errors of its kind, however few), widened to its level's measurement
/// floor where that applies ([`floor`]).
fn offsets_table(
    pools: &Pools,
    rule: Rule,
    confidence: Confidence,
    floors: &[Option<floor::Floor>],
) -> HashMap<Class, Offsets> {
    let coarse = pool::coarse_pools(pools, Class::coarser);
    pools
        .iter()
        .map(|(c, p)| {
            let chosen = pool::choose(*c, Some(p), &c.coarser(), &coarse).map_or(p, |(_, q)| q);
            let mut o = offsets(&chosen.distribution(), rule, confidence);
            if p.cells < pool::MIN_SAMPLES {
                let floor = floors.get(usize::from(c.level)).copied().flatten();
                if let Some(f) = floor.filter(|f| floor::applies(f, *c)) {
                    o.low = o.low.min(-f.q);
                    o.high = o.high.max(f.q);
                }
            }
            (*c, o)
        })
        .collect()
}

/// The intervals of `release` (a [`Draw`], or a preview trial's [`Released`] tables),
/// from the release, the plan and public data only.
pub fn intervals<'a>(
    release: impl Into<Released<'a>>,
    plan: &ReleasePlan,
    public: PublicData<'_>,
    options: &UncertaintyOptions,
) -> Result<Uncertainty, UncertaintyError> {
    let key = source_of(options)?;
    bootstrap(
        release.into(),
        plan,
        public,
        options,
        key,
        &summary::Request::default(),
    )
}

/// The bootstrap of [`intervals`] with key `key`, pooling also the statistics
/// `request` asks for ([`sums`]).
pub(crate) fn bootstrap(
    release: Released<'_>,
    plan: &ReleasePlan,
    public: PublicData<'_>,
    options: &UncertaintyOptions,
    key: BootstrapKey,
    request: &summary::Request,
) -> Result<Uncertainty, UncertaintyError> {
    let k = release.max_size();
    let source = key.source();
    let released = release.histograms();
    // The bootstrap's truth: the release with its tails' zones spread ([`zone`]).
    let depth = public.hierarchy.depth();
    let zones = match options.bias {
        Bias::Undone | Bias::TailZone => zone::zones(plan, depth, k),
        Bias::Ignored => vec![None; depth],
    };
    let skipped = match options.bias {
        Bias::Undone => zone::skipped_levels(plan, depth),
        Bias::TailZone | Bias::Ignored => vec![None; depth],
    };
    let spread = zone::world(released, public, &zones, &skipped, plan);
    let world = Released {
        histograms: spread.as_ref().unwrap_or(released),
        ..release
    };
    let consistency = crate::release::pipeline::draw::consistency_options(plan, public.hierarchy);
    // Two halves ([`converge`]), read together.
    let mut pools = [Pools::default(), Pools::default()];
    let mut moved = reach::ReachPools::default();
    let mut summary = summary::SummaryPools::new(k, request);
    // The first replicate says what one costs (the noisy values it drew and fitted);
    // `auto` sizes `R` from that and the levels' draws.
    let mut replicates = match options.replicates {
        Replicates::Fixed(n) => n.max(1),
        Replicates::Auto | Replicates::Within(_) => 1,
    };
    let mut kept = Vec::new();
    let draw = |r: u32| {
        let phase = crate::timing::phase("    replicate: measure, estimate, consistency");
        let replicate = bootstrap::replicate(
            world,
            plan,
            public,
            &source.derive(Subkey::Replicate(r)),
            &consistency,
        );
        phase.done();
        replicate
    };
    let mut pool = |r: u32, replicate: bootstrap::Replicate| {
        let phase = crate::timing::phase("    replicate: pooling its errors");
        add_replicate(
            &mut pools,
            r,
            &mut moved,
            (released, world.histograms),
            &replicate.histograms,
            public,
            k,
            &zones,
            r == 0,
        );
        summary.add(world.histograms, &replicate.histograms, public);
        if options.keep_replicates {
            kept.push(replicate.histograms);
        }
        phase.done();
    };
    let first = draw(0)?;
    let cost = replicate_cost(
        first.work,
        released.cells() as u64,
        public.hierarchy.len() as u64,
    );
    match options.replicates {
        Replicates::Auto => replicates = auto_replicates(cost, plan, public),
        Replicates::Within(budget) => replicates = replicates_within(budget, cost),
        Replicates::Fixed(_) => {}
    }
    let work = first.work;
    pool(0, first);
    in_batches(1..replicates, draw, &mut pool)?;
    crate::timing::note(&format!(
        "margins of error: a replicate costs {} units ({} of measurements, {} cells, {} regions): {replicates} replicates",
        crate::units::thousands(u128::from(cost)),
        crate::units::thousands(u128::from(work)),
        crate::units::thousands(released.cells() as u128),
        crate::units::thousands(public.hierarchy.len() as u128),
    ));
    // The levels with few regions, drawn again on the hierarchy cut below them, each
    // until it has the draws it asks for.
    // Only runs a cut can draw are drawn and recorded.
    let runs: Vec<(TopRun, usize)> = match &options.top_replicates {
        TopReplicates::Auto => top_runs(plan, public, replicates),
        TopReplicates::Runs(runs) => runs.clone(),
    }
    .into_iter()
    .filter(|run| run.replicates > 0)
    .filter_map(|run| Some((run, cut_depth(plan, run.levels)?)))
    .collect();
    let mut next = replicates;
    for &(run, depth) in &runs {
        let top = bootstrap::Cut::new(plan, public.hierarchy, depth);
        // Their errors are pooled for the levels the run draws only (a measured level
        // below them that ends the cut has its full replicates).
        let thin = public.hierarchy.truncated(run.levels);
        let pooled = PublicData {
            hierarchy: &thin,
            groups: public.groups,
        };
        let draw_top = |r: u32| {
            let phase = crate::timing::phase("    top replicate: measure, estimate, consistency");
            let replicate = top.replicate(world, public, &source.derive(Subkey::Replicate(r)));
            phase.done();
            replicate
        };
        let end = next.saturating_add(run.replicates);
        in_batches(next..end, draw_top, |r, replicate| {
            add_replicate(
                &mut pools,
                r,
                &mut moved,
                (released, world.histograms),
                &replicate.histograms,
                pooled,
                k,
                &zones,
                false,
            );
            summary.add(world.histograms, &replicate.histograms, pooled);
        })?;
        crate::timing::note(&format!(
            "margins of error: {} top replicates of the first {} level(s), cut below level {}",
            run.replicates,
            run.levels,
            depth - 1
        ));
        next = end;
    }
    let phase = crate::timing::phase("    quantiles of the pools");
    let floors = floor::floors(plan, public, k, options.confidence);
    if crate::timing::enabled() {
        // How far the intervals could still move with more replicates ([`converge`]).
        let phase = crate::timing::phase("    Monte Carlo diagnostic (COCO_TIMING only)");
        let a = converge::assess(
            &pools,
            replicates,
            &converge::Weights::of(released, public, &zones),
            public.hierarchy.depth(),
            options.rule,
            options.confidence,
        );
        crate::timing::note(&format!(
            "margins of error: per level, head | tail: Monte Carlo error, share of cells borrowing a coarser class: {}",
            a.levels
                .iter()
                .map(|[h, t]| format!(
                    "{:.3} {:.2} | {:.3} {:.2}",
                    h.mc_error, h.borrowed, t.mc_error, t.borrowed
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ));
        phase.done();
    }
    let [h0, h1] = pools;
    let pools = merge_pools(h0, h1);
    let offsets = offsets_table(&pools, options.rule, options.confidence, &floors);
    let u = Uncertainty {
        confidence: options.confidence,
        rule: options.rule,
        replicates,
        top_runs: runs.into_iter().map(|(run, _)| run).collect(),
        key,
        max_size: k,
        reach: moved.table(
            &offsets,
            options.confidence,
            &zones
                .iter()
                .map(|z| z.map_or(reach::DEFAULT_TAIL_FROM, |z| z.above))
                .collect::<Vec<_>>(),
        ),
        offsets: DenseOffsets::new(&offsets),
        summary: summary.offsets(options.confidence),
        few_regions: {
            let h = public.hierarchy;
            let mut regions = vec![0usize; h.depth()];
            for i in 0..h.len() {
                let id = NodeId(i as u32);
                if public.groups(id) > 0 {
                    regions[h.node(id).level.0] += 1;
                }
            }
            regions.into_iter().map(|n| n < FEW_REGIONS).collect()
        },
        zones,
        replicate_tables: kept,
    };
    phase.done();
    Ok(u)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arrays give every fine class the map's offsets (a class each for every size
    /// and count bucket, up to the largest, and every gap, at several levels), and a
    /// class the map lacks is `[0, 0]` as in the map.
    #[test]
    fn dense_offsets_are_the_maps() {
        use pool::{Gap, Merged};
        let mut map = HashMap::default();
        let mut n = 0i64;
        let sizes = [0, 1, 7, 16, 17, 40, 1_000, 70_000, Size::MAX];
        let counts = [1, 3, 4, 100, 1 << 40, Count::MAX];
        let gaps = [
            Gap::One,
            Gap::Two,
            Gap::UpTo4,
            Gap::UpTo8,
            Gap::UpToNear,
            Gap::Far,
            Gap::Zone,
        ];
        for level in [0u16, 2, 5] {
            for &s in &sizes {
                let size = SizeKey::Bucket(pool::size_bucket(s));
                let keys = counts
                    .iter()
                    .map(|&c| CountKey::Released(pool::count_bucket(c)))
                    .chain(gaps.iter().map(|&g| CountKey::Zero(g)));
                for count in keys {
                    n += 1;
                    map.insert(Class { level, size, count }, Offsets { low: -n, high: n });
                }
            }
            n += 1;
            map.insert(Class::far(level), Offsets { low: -n, high: n });
        }
        // A coarse class, which the arrays leave to the map.
        let coarse = Class {
            level: 0,
            size: SizeKey::Merged(Merged {
                halvings: 1,
                prefix: 3,
            }),
            count: CountKey::AnyReleased,
        };
        map.insert(coarse, Offsets { low: -1, high: 99 });
        let dense = DenseOffsets::new(&map);
        for (&class, &o) in &map {
            if class == coarse {
                assert_eq!(dense.get(class), None);
            } else {
                assert_eq!(dense.get(class), Some(o), "{class:?}");
            }
        }
        let absent = Class {
            level: 1,
            size: SizeKey::Bucket(3),
            count: CountKey::Released(2),
        };
        assert_eq!(dense.get(absent), Some(Offsets { low: 0, high: 0 }));
        // Beyond the arrays' levels: the map answers.
        assert_eq!(dense.get(Class { level: 9, ..absent }), None);
    }

    #[test]
    fn auto_replicates_follow_the_cost_above_the_levels_draws() {
        let (h, groups) = four_levels();
        let public = PublicData {
            hierarchy: &h,
            groups: &groups,
        };
        let even = four_level_plan(&h, &["1/4", "1/4", "1/4", "1/4"]);
        let auto = |cost| auto_replicates(cost, &even, public);
        // Cheap replicates: the most.
        assert_eq!(auto(1), MAX_REPLICATES);
        assert_eq!(auto(WORK_BUDGET / 100), MAX_REPLICATES);
        // Between: as many as fit the budget.
        assert_eq!(auto(WORK_BUDGET / 50), 50);
        assert_eq!(auto(WORK_BUDGET / 13), 13);
        // Dear: what the levels ask for (the tracts, 2)...
        assert_eq!(auto(WORK_BUDGET), 2);
        assert_eq!(auto(STRETCH_BUDGET / 2), 2);
        // ...within the stretched budget.
        assert_eq!(auto(STRETCH_BUDGET), 1);
        assert_eq!(auto(u64::MAX), 1);
        // A bottom-up plan: 100 asked for, within the stretched budget.
        let bottom_up = four_level_plan(&h, &["0", "0", "0", "1"]);
        assert_eq!(auto_replicates(WORK_BUDGET, &bottom_up, public), 4);
        assert_eq!(auto_replicates(WORK_BUDGET / 30, &bottom_up, public), 100);
    }

    #[test]
    fn each_level_asks_for_300_draws_at_most_100_of_a_region() {
        assert_eq!(MIN_LEVEL_DRAWS, 300);
        assert_eq!(draws_wanted(0), 0);
        assert_eq!(draws_wanted(1), MAX_REPLICATES);
        assert_eq!(draws_wanted(3), MAX_REPLICATES);
        assert_eq!(draws_wanted(4), 75);
        assert_eq!(draws_wanted(52), 6);
        assert_eq!(draws_wanted(300), 1);
        assert_eq!(draws_wanted(8_000_000), 1);
    }

    /// nation → 2 states → 20 counties → 200 tracts, 5 groups in each region.
    fn four_levels() -> (crate::data::Hierarchy, Vec<Count>) {
        let mut paths = Vec::new();
        for s in 0..2 {
            for c in 0..10 {
                for t in 0..10 {
                    paths.push(vec![
                        "US".to_string(),
                        format!("s{s}"),
                        format!("c{s}{c}"),
                        format!("t{s}{c}{t}"),
                    ]);
                }
            }
        }
        let names = ["nation", "state", "county", "tract"]
            .map(String::from)
            .to_vec();
        let h = crate::data::Hierarchy::from_leaf_paths(names, &paths).unwrap();
        let groups = vec![5; h.len()];
        (h, groups)
    }

    fn four_level_plan(h: &crate::data::Hierarchy, budgets: &[&str]) -> ReleasePlan {
        use crate::privacy::Definition;
        use crate::release::plan::LevelBudget;
        let mut plan = ReleasePlan::uniform(
            h,
            crate::privacy::Epsilon::parse("1").unwrap(),
            crate::estimate::Method::Hc,
            crate::release::plan::MaxSize::Fixed(100),
        )
        .unwrap();
        let budgets: Vec<LevelBudget> = budgets
            .iter()
            .map(|b| LevelBudget::parse(Definition::Pure, b).unwrap())
            .collect();
        plan.set_budgets(budgets).unwrap();
        plan
    }

    #[test]
    fn a_cut_ends_at_a_measured_level_above_the_leaves() {
        let (h, _) = four_levels();
        let even = four_level_plan(&h, &["1/4", "1/4", "1/4", "1/4"]);
        assert_eq!(cut_depth(&even, 0), None);
        assert_eq!(cut_depth(&even, 1), Some(1));
        assert_eq!(cut_depth(&even, 3), Some(3));
        // The leaves: the whole release.
        assert_eq!(cut_depth(&even, 4), None);
        assert_eq!(servable_levels(&even), 3);
        // An unmeasured level: the cut goes down to the next measured one...
        let skip = four_level_plan(&h, &["1/4", "0", "1/4", "1/2"]);
        assert_eq!(cut_depth(&skip, 2), Some(3));
        assert_eq!(servable_levels(&skip), 3);
        // ...unless that is the leaf level.
        let above = four_level_plan(&h, &["1/2", "0", "0", "1/2"]);
        assert_eq!(cut_depth(&above, 1), Some(1));
        assert_eq!(cut_depth(&above, 2), None);
        assert_eq!(servable_levels(&above), 1);
        let bottom_up = four_level_plan(&h, &["0", "0", "0", "1"]);
        assert_eq!(cut_depth(&bottom_up, 1), None);
        assert_eq!(servable_levels(&bottom_up), 0);
    }

    #[test]
    fn full_replicates_serve_the_levels_no_cut_can_and_top_runs_the_rest() {
        // 1 nation, 2 states, 20 counties, 200 tracts: 100, 100, 15 and 2 draws wanted.
        let (h, groups) = four_levels();
        let public = PublicData {
            hierarchy: &h,
            groups: &groups,
        };
        let run = |levels, replicates| TopRun { levels, replicates };
        let even = four_level_plan(&h, &["1/4", "1/4", "1/4", "1/4"]);
        // Only the tracts (the leaves) need full replicates: 2.
        assert_eq!(min_replicates(&even, public), 2);
        // Then the counties 13 more (with the states and nation), the states and the
        // nation 85 more: every level gets what it asks for, and no more is drawn of
        // the deeper levels than they ask.
        assert_eq!(top_runs(&even, public, 2), vec![run(3, 13), run(2, 85)]);
        // With as many full replicates as the most asked for, none.
        assert_eq!(top_runs(&even, public, 100), vec![]);
        // Levels nothing can cut below (unmeasured down to the leaves) get their draws
        // from full replicates: the states and counties here, 100.
        let above = four_level_plan(&h, &["1/2", "0", "0", "1/2"]);
        assert_eq!(min_replicates(&above, public), 100);
        assert_eq!(top_runs(&above, public, 100), vec![]);
        // Given fewer, the nation alone is drawn again.
        assert_eq!(top_runs(&above, public, 15), vec![run(1, 85)]);
        let bottom_up = four_level_plan(&h, &["0", "0", "0", "1"]);
        assert_eq!(min_replicates(&bottom_up, public), 100);
        // A region without groups is no draw: a hierarchy of one occupied region per
        // level asks 100 of each.
        let mut sparse = vec![0; h.len()];
        for id in [0, 1, 3, 23] {
            sparse[id] = 5;
        }
        let one = PublicData {
            hierarchy: &h,
            groups: &sparse,
        };
        assert_eq!(regions_per_level(one), vec![1, 1, 1, 1]);
        assert_eq!(min_replicates(&even, one), 100);
    }

    #[test]
    fn replicates_parse_auto_or_a_number_in_range() {
        assert_eq!(Replicates::parse("auto").unwrap(), Replicates::Auto);
        assert_eq!(Replicates::parse(" 7 ").unwrap(), Replicates::Fixed(7));
        assert_eq!(
            Replicates::parse("10000").unwrap(),
            Replicates::Fixed(Replicates::MAX_FIXED)
        );
        for bad in ["0", "-1", "10001", "1.5", "", "many"] {
            let e = Replicates::parse(bad).unwrap_err().to_string();
            assert!(
                e.contains("expected \"auto\" or a whole number from 1 to 10,000"),
                "{e}"
            );
        }
    }
}
