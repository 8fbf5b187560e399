//! Coverage of the published intervals, measured against the truth (a confidential
//! diagnostic, here an oracle).

#[allow(dead_code)]
use coco::data::{Dataset, NodeId};
use coco::generate::shapes::Shape;
use coco::histogram::Size;
use coco::noise::NoiseSource;
use coco::privacy::{Definition, Diagnostic, Epsilon};
use coco::release::margins::{self as uncertainty, Replicates, Rule, UncertaintyOptions};
use coco::release::outputs::margins as files;
use coco::release::pipeline::draw as run;
use coco::release::plan::defaults;
use coco::release::plan::{MaxSize, ReleasePlan};
use coco::wire::Named;

/// Per level: cells counted, cells covered, total width, total absolute error.
#[derive(Clone, Debug, Default)]
struct LevelScore {
    cells: u64,
    covered: u64,
    width: f64,
    error: f64,
    /// `summary.csv`'s statistics: values defined for the truth, and those covered.
    stats: u64,
    stats_covered: u64,
    /// The cells whose true or released count is above 0, and those covered.
    occupied: u64,
    occupied_covered: u64,
    /// The occupied cells of the tail (sizes at or above the level's `L`, or 20 for a
    /// level without a tail), and those covered: the rest are the head's.
    tail: u64,
    tail_covered: u64,
}

impl LevelScore {
    fn add(&mut self, b: &LevelScore) {
        self.cells += b.cells;
        self.covered += b.covered;
        self.width += b.width;
        self.error += b.error;
        self.stats += b.stats;
        self.stats_covered += b.stats_covered;
        self.occupied += b.occupied;
        self.occupied_covered += b.occupied_covered;
        self.tail += b.tail;
        self.tail_covered += b.tail_covered;
    }

    /// The occupied cells' coverage: all, the head's, the tail's.
    fn occupied_shares(&self) -> (f64, f64, f64) {
        let share = |a: u64, n: u64| a as f64 / n.max(1) as f64;
        (
            share(self.occupied_covered, self.occupied),
            share(
                self.occupied_covered - self.tail_covered,
                self.occupied - self.tail,
            ),
            share(self.tail_covered, self.tail),
        )
    }
}

/// The plans measured: coco's default, or every level `hc`, `hg`, or `hg` at the
/// leaves below the default's tails (`PLAN=default|hc|hg|mixed` for the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Default,
    Hc,
    Hg,
    Mixed,
}

/// Where a level's tail begins: its `L`, or 20 for a level without a tail.
fn tail_start(plan: &ReleasePlan, level: usize) -> Size {
    match plan.level(coco::data::LevelId(level)).method() {
        coco::estimate::Method::HcTail(t) => t.above,
        _ => 20,
    }
}

/// coco's default plan at ε = 1, or under ρ-zCDP at the ρ of similar accuracy
/// ([`crate::robustness::budget`]).
fn plan(d: &Dataset, k: Size, definition: Definition) -> ReleasePlan {
    family_plan(d, k, definition, Family::Default)
}

fn family_plan(d: &Dataset, k: Size, definition: Definition, family: Family) -> ReleasePlan {
    use coco::estimate::Method;
    let h = &d.hierarchy;
    let total = crate::robustness::budget(d, definition);
    let mut p = defaults::public_default(h, |id| d.groups(id), total, MaxSize::Fixed(k))
        .unwrap()
        .plan;
    for l in h.levels() {
        let method = match family {
            Family::Default => continue,
            Family::Hc => Method::Hc,
            Family::Hg => Method::Hg,
            Family::Mixed if l == h.leaf_level() => Method::Hg,
            Family::Mixed => Method::HcTail(defaults::default_tail(Some(k))),
        };
        p.set_method(l, method).unwrap();
    }
    p
}

fn score(
    d: &Dataset,
    plan: &ReleasePlan,
    seed: u64,
    options: &UncertaintyOptions,
) -> Vec<LevelScore> {
    let h = &d.hierarchy;
    let draw = run::draw(d, plan, &NoiseSource::seeded(seed), &Default::default()).unwrap();
    let u = uncertainty::intervals(&draw, plan, d.public(), options).unwrap();
    let truth = d.truth().for_diagnostic(Diagnostic::Oracle);
    // The library's diagnostic agrees with this test's own count.
    let library = uncertainty::coverage::coverage(&draw, &u, d.public(), truth);
    let mut out = vec![LevelScore::default(); h.depth()];
    for i in 0..h.len() {
        let id = NodeId(i as u32);
        let level = h.node(id).level.0;
        let cells = u.region(level, draw.histograms().get(i), d.groups(id));
        // Released counts top-code sizes above K to K: so does the truth they are
        // compared with.
        let t = truth.node(id).top_coded(u.max_size());
        let t = t.as_ref();
        let mut sizes: Vec<Size> = cells.iter().map(|c| c.size).collect();
        sizes.extend(t.pairs().iter().map(|&(s, _)| s));
        sizes.sort_unstable();
        sizes.dedup();
        let s = &mut out[level];
        for size in sizes {
            let truth = t.count(size);
            let (count, lower, upper) = match cells.binary_search_by_key(&size, |c| c.size) {
                Ok(j) => (cells[j].count, cells[j].lower, cells[j].upper),
                Err(_) => (draw.histograms().get(i).count(size), 0, 0),
            };
            s.cells += 1;
            s.covered += u64::from(lower <= truth && truth <= upper);
            if truth > 0 || count > 0 {
                let hit = u64::from(lower <= truth && truth <= upper);
                s.occupied += 1;
                s.occupied_covered += hit;
                if hit == 0
                    && size < tail_start(plan, level)
                    && std::env::var_os("HEADMISS").is_some()
                {
                    println!(
                        "HMISS level {level} size {size} truth {truth} count {count} [{lower}, {upper}] G {}",
                        d.groups(id)
                    );
                }
                if size >= tail_start(plan, level) {
                    s.tail += 1;
                    s.tail_covered += hit;
                    if hit == 0 && std::env::var_os("MISSES").is_some() {
                        println!(
                            "MISS level {level} size {size} (L {}) truth {truth} count {count} [{lower}, {upper}] region G {}",
                            tail_start(plan, level),
                            d.groups(id)
                        );
                    }
                }
            }
            s.width += (upper - lower) as f64;
            s.error += (count as f64 - truth as f64).abs();
        }
        // The statistics of summary.csv against the same ones of the truth.
        let summary = u.summary(level, draw.histograms().get(i), d.groups(id));
        for (stat, interval) in uncertainty::summary::stats(u.max_size())
            .iter()
            .zip(summary)
        {
            let (Some(truth), Some(iv)) = (stat.of(t, d.groups(id)), interval) else {
                continue;
            };
            s.stats += 1;
            s.stats_covered += u64::from(iv.lower <= truth && truth <= iv.upper);
        }
    }
    for (a, b) in out.iter().zip(&library) {
        assert_eq!((a.occupied, a.occupied_covered), (b.cells, b.covered));
    }
    out
}

fn datasets() -> Vec<(String, Dataset, Size)> {
    let mut out = vec![(
        "sample".to_string(),
        Dataset::load(std::path::Path::new("sample-data/households")).unwrap(),
        10_000,
    )];
    for (shape, scale, k) in [
        (Shape::GroupQuarters, 0.25, 1_000),
        (Shape::Dense, 0.5, 10_000),
        (Shape::Skewed, 0.5, 1_000),
        (Shape::Chain, 1.0, 1_000),
        (Shape::Giant, 0.5, 10_000),
        (Shape::HeavyTail, 0.5, 10_000),
        (Shape::ManyTiny, 0.5, 100),
        (Shape::Sparse, 0.5, 100),
        (Shape::Deep, 0.5, 10_000),
        (Shape::Threshold, 0.5, 2_000),
    ] {
        let g = shape.build(7, scale).unwrap();
        out.push((shape.name().to_string(), g.to_dataset().unwrap(), k));
    }
    out
}

/// Datasets drawn from real figures, for the table only (`EXTRA=1`): `us-counties`
/// (the ACS 2019 county household counts), `taxi` and `us-blocks` at 1%.
fn real_datasets(keep: &tempfile::TempDir) -> Vec<(String, Dataset, Size)> {
    use coco::generate::{Preset, generate_into};
    let mut out = Vec::new();
    for (preset, name, scale, k) in [
        (Preset::UsCounties, "us-counties", None, 2_000),
        (Preset::Taxi, "taxi", None, 10_000),
        (Preset::UsBlocks, "us-blocks-1%", Some(0.01), 10_000),
    ] {
        let dir = keep.path().join(name);
        generate_into(preset, &dir, 7, scale, &mut |_, _| {}).unwrap();
        out.push((name.to_string(), Dataset::load(&dir).unwrap(), k));
    }
    out
}

/// Per level, the scores of `trials` seeded releases of `d` and their intervals.
/// The margins are computed with `options`, each trial's bootstrap keyed apart.
fn measure(
    d: &Dataset,
    k: Size,
    (definition, family): (Definition, Family),
    trials: u64,
    options: &UncertaintyOptions,
) -> Vec<LevelScore> {
    measure_plan(d, &family_plan(d, k, definition, family), trials, options)
}

/// [`measure`] of a given plan.
fn measure_plan(
    d: &Dataset,
    p: &ReleasePlan,
    trials: u64,
    options: &UncertaintyOptions,
) -> Vec<LevelScore> {
    let mut total = vec![LevelScore::default(); d.hierarchy.depth()];
    let first: u64 = std::env::var("FIRST")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    for t in first..first + trials {
        let o = UncertaintyOptions {
            key: Some(NoiseSource::seeded(100 + t)),
            ..options.clone()
        };
        for (a, b) in total.iter_mut().zip(score(d, p, 1 + t, &o)) {
            a.add(&b);
        }
    }
    total
}

/// Seeded releases per dataset in the coverage test.
const TRIALS: u64 = 2;
/// Seeded releases per dataset in the coverage test under ρ-zCDP.
const ZCDP_TRIALS: u64 = 6;
/// The least share of a level's cells whose truth an interval at 90% must cover.
const MIN_COVERAGE: f64 = 0.85;
/// The least share of a level's occupied cells (true or released count above 0) an
/// interval at 90% must cover: a stricter score than [`MIN_COVERAGE`]'s, below the
/// nominal at the top levels of small or sparse data (the figures and why are in
/// `docs/uncertainty.md`); this floor catches a method that stops covering them.
const MIN_OCCUPIED_COVERAGE: f64 = 0.75;
/// The least share of a level's occupied tail cells (sizes at or above its `L`) an
/// interval at 90% must cover, where the level holds at least [`MIN_TAIL_CELLS`] of
/// them per release: without the tail's zone ([`coco::release::margins::zone`]) the tails of
/// `deep`'s counties and tracts were covered at 0.71–0.74 (`docs/uncertainty.md`).
const MIN_TAIL_COVERAGE: f64 = 0.8;
/// Fewer occupied tail cells per seeded release than this measure a level's tail too
/// coarsely to test.
const MIN_TAIL_CELLS: u64 = 100;
/// The least share of a level's `summary.csv` statistics (region × statistic values
/// defined for the truth) an interval at 90% must cover.
const MIN_SUMMARY_COVERAGE: f64 = 0.8;
/// The most a level's mean width may be, in mean absolute errors of the released
/// counts. For an error that is Laplace distributed (the noise of one measured cell),
/// the 90% interval is ±2.30 scales and the mean absolute error one scale: a ratio of
/// 4.6; twice that is needlessly wide.
const MAX_WIDTH_RATIO: f64 = 9.2;

/// The levels of every dataset of [`datasets`] whose intervals, for coco's default plan
/// under `definition`, fall short of a bound below.
fn coverage_failures(definition: Definition, trials: u64) -> Vec<String> {
    let mut failures = Vec::new();
    for (name, d, k) in datasets() {
        let scores = measure(
            &d,
            k,
            (definition, Family::Default),
            trials,
            &UncertaintyOptions::default(),
        );
        failures.extend(score_failures(
            &format!("{name} ({definition})"),
            &scores,
            trials,
        ));
    }
    failures
}

/// The levels of `scores` that fall short of a bound below, described under `name`.
fn score_failures(name: &str, scores: &[LevelScore], trials: u64) -> Vec<String> {
    let mut failures = Vec::new();
    {
        for (level, s) in scores.iter().enumerate() {
            let coverage = s.covered as f64 / s.cells.max(1) as f64;
            let ratio = s.width / s.error.max(1.0);
            let (occupied, _, tail) = s.occupied_shares();
            let stats = s.stats_covered as f64 / s.stats.max(1) as f64;
            if s.cells == 0
                || coverage < MIN_COVERAGE
                || occupied < MIN_OCCUPIED_COVERAGE
                || (s.tail >= MIN_TAIL_CELLS * trials && tail < MIN_TAIL_COVERAGE)
                || s.stats == 0
                || stats < MIN_SUMMARY_COVERAGE
                || ratio > MAX_WIDTH_RATIO
            {
                failures.push(format!(
                    "{name} level {level}: coverage {coverage:.3} of {} cells ({occupied:.3} of {} occupied, {tail:.3} of their {} in the tail; {stats:.3} of {} statistics), mean width {:.2} = {ratio:.2} × the mean absolute error",
                    s.cells,
                    s.occupied,
                    s.tail,
                    s.stats,
                    s.width / s.cells.max(1) as f64
                ));
            }
        }
    }
    failures
}

/// At 90% nominal, every level of the sample and of every robustness shape has at
/// least [`MIN_COVERAGE`] of its cells (those listed in `uncertainty.csv` or with a
/// true count above 0) covered and at least [`MIN_OCCUPIED_COVERAGE`] of its occupied
/// cells and [`MIN_SUMMARY_COVERAGE`] of its summary statistics, with widths at most
/// [`MAX_WIDTH_RATIO`] mean absolute errors. Seeded: the outcome is deterministic.
#[test]
fn intervals_cover_the_truth_at_every_level_of_every_shape() {
    let failures = coverage_failures(Definition::Pure, TRIALS);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The companion of the test above: without the tail's zone (the bootstrap's truth
/// being the release itself), the occupied tail cells of a deep hierarchy whose sizes
/// cross the tail's `L` fall below [`MIN_TAIL_COVERAGE`] at some level, and the test
/// above would fail on it.
#[test]
fn without_the_tail_zone_the_tail_is_not_covered() {
    let (_, d, k) = datasets()
        .into_iter()
        .find(|(name, _, _)| name == "deep")
        .unwrap();
    let shares = |bias| -> Vec<(u64, f64)> {
        let options = UncertaintyOptions {
            bias,
            ..Default::default()
        };
        measure(&d, k, (Definition::Pure, Family::Default), TRIALS, &options)
            .iter()
            .map(|s| (s.tail, s.occupied_shares().2))
            .collect()
    };
    let short = |levels: &[(u64, f64)]| {
        levels
            .iter()
            .any(|&(n, share)| n >= MIN_TAIL_CELLS * TRIALS && share < MIN_TAIL_COVERAGE)
    };
    let without = shares(uncertainty::Bias::Ignored);
    assert!(short(&without), "{without:?}");
    let with = shares(uncertainty::Bias::Undone);
    assert!(!short(&with), "{with:?}");
}

/// With `hg` at every level of a deep hierarchy, the heads of the levels below the top
/// (its regions, states and counties: 4 to 200 regions of hundreds to thousands of
/// groups) are covered only when the bootstrap's truth fills the sizes `hg`'s rounding
/// skipped (`margins::skipped`): without it they fall below 0.85 (0.71–0.85 on these
/// seeds; 0.88–0.95 with it).
#[test]
fn hg_skipped_sizes_are_covered_below_the_top() {
    let (_, d, k) = datasets()
        .into_iter()
        .find(|(name, _, _)| name == "deep")
        .unwrap();
    let heads = |bias| -> Vec<f64> {
        let options = UncertaintyOptions {
            bias,
            ..Default::default()
        };
        measure(&d, k, (Definition::Pure, Family::Hg), TRIALS, &options)[1..=3]
            .iter()
            .map(|s| s.occupied_shares().1)
            .collect()
    };
    let without = heads(uncertainty::Bias::TailZone);
    assert!(without.iter().any(|&c| c < 0.85), "{without:?}");
    let with = heads(uncertainty::Bias::Undone);
    assert!(with.iter().all(|&c| c >= 0.85), "{with:?}");
}

/// With plain `hc` on the sample, the districts' few tail cells (a lone large household
/// released beside its size) are covered: the tail gets the reach its own true cells
/// ask for even where the level's many head cells, covered by their classes, would shut
/// it off (`margins::reach`). Gated with the level alone, that tail was covered 0.52
/// (3 seeded releases); with the tail's own gate, 0.90–0.93.
#[test]
fn plain_hc_tails_of_sparse_leaves_are_covered() {
    let (_, d, k) = datasets()
        .into_iter()
        .find(|(name, _, _)| name == "sample")
        .unwrap();
    let scores = measure(
        &d,
        k,
        (Definition::Pure, Family::Hc),
        TRIALS,
        &UncertaintyOptions::default(),
    );
    let tails: Vec<(u64, f64)> = scores
        .iter()
        .map(|s| (s.tail, s.occupied_shares().2))
        .collect();
    assert!(
        tails.iter().all(|&(n, share)| n == 0 || share >= 0.85),
        "{tails:?}"
    );
}

/// The same claims for ρ-zCDP plans, at the ρ of similar accuracy
/// ([`crate::robustness::budget`]). For a Gaussian error the width ratio is
/// 3.29σ / (σ·√(2/π)) = 4.1, below the Laplace's 4.6, so [`MAX_WIDTH_RATIO`] is no
/// looser for it. Over [`ZCDP_TRIALS`] releases, not [`TRIALS`]: a level of one region
/// (chain's first two, the nations) scores its 9 statistics once per release, and its
/// cells' errors are those of one draw, so two releases measure it too coarsely to
/// tell 0.9 from 0.8 (seeds 1–2 gave 0.61–0.78 where seeds 1–6 and 7–12 give 0.83–0.98,
/// `docs/uncertainty.md`). The tail bound is per release, as above.
#[test]
fn intervals_cover_the_truth_at_every_level_of_every_shape_under_zcdp() {
    let failures = coverage_failures(Definition::Zcdp, ZCDP_TRIALS);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The table of `docs/uncertainty.md`: `cargo test --release --test library
/// uncertainty::table -- --ignored --nocapture` (`TRIALS=n`, `REPS=n`,
/// `RULE=basic|percentile|symmetric`, `DATA=sample,dense` to change what is measured,
/// `EXTRA=1` to add datasets drawn from real figures, `NO_ZONE=1` with no bias undone
/// (neither the tail's zone nor `hg`'s skipped sizes), `ZONE_ONLY=1` with the tail's zone
/// alone, `DIRS=name=path,…` datasets on disk, `DEFINITION=zcdp` for ρ-zCDP plans, `TOP=0`
/// for no top replicates, `FIRST=n` to start at the `n`-th seed instead of the first;
/// `MISSES=1` and `HEADMISS=1` print the tail's and the head's missed cells).
#[test]
#[ignore]
fn table() {
    let rule = match std::env::var("RULE").as_deref() {
        Ok("basic") => Rule::Basic,
        Ok("symmetric") => Rule::Symmetric,
        _ => Rule::Percentile,
    };
    let reps = match std::env::var("REPS").ok().and_then(|s| s.parse().ok()) {
        Some(r) => Replicates::Fixed(r),
        None => Replicates::Auto,
    };
    let trials: u64 = std::env::var("TRIALS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let only = std::env::var("DATA").ok();
    let definition = match std::env::var("DEFINITION").as_deref() {
        Ok("zcdp") => Definition::Zcdp,
        _ => Definition::Pure,
    };
    let family = match std::env::var("PLAN").as_deref() {
        Ok("hc") => Family::Hc,
        Ok("hg") => Family::Hg,
        Ok("mixed") => Family::Mixed,
        _ => Family::Default,
    };
    println!(
        "| dataset | level | cells | coverage | mean width | mean abs. error | occupied cells | their coverage | head | tail cells | tail | statistics | their coverage |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let keep = tempfile::tempdir().unwrap();
    let mut all = datasets();
    if std::env::var_os("EXTRA").is_some() {
        all.extend(real_datasets(&keep));
    }
    // Datasets on disk, `DIRS=name=path,…` (e.g. `us-blocks` at full scale), with K 10,000.
    for pair in std::env::var("DIRS").iter().flat_map(|s| s.split(',')) {
        let (name, dir) = pair.split_once('=').expect("DIRS=name=path,…");
        let d = Dataset::load(std::path::Path::new(dir)).unwrap();
        all.push((name.to_string(), d, 10_000));
    }
    for (name, d, k) in all {
        if only
            .as_ref()
            .is_some_and(|o| !o.split(',').any(|x| x == name))
        {
            continue;
        }
        let options = UncertaintyOptions {
            replicates: reps,
            top_replicates: match std::env::var("TOP").as_deref() {
                Ok("0") => uncertainty::TopReplicates::Runs(Vec::new()),
                _ => uncertainty::TopReplicates::Auto,
            },
            rule,
            bias: if std::env::var_os("NO_ZONE").is_some() {
                uncertainty::Bias::Ignored
            } else if std::env::var_os("ZONE_ONLY").is_some() {
                uncertainty::Bias::TailZone
            } else {
                uncertainty::Bias::Undone
            },
            ..Default::default()
        };
        let scores = measure(&d, k, (definition, family), trials, &options);
        for (level, s) in scores.iter().enumerate() {
            let n = s.cells.max(1) as f64;
            let (occupied, head, tail) = s.occupied_shares();
            println!(
                "| {name} | {} | {} | {:.3} | {:.2} | {:.2} | {} | {occupied:.3} | {head:.3} | {} | {tail:.3} | {} | {:.3} |",
                d.hierarchy.level_name(coco::data::LevelId(level)),
                s.cells,
                s.covered as f64 / n,
                s.width / n,
                s.error / n,
                s.occupied,
                s.tail,
                s.stats,
                s.stats_covered as f64 / s.stats.max(1) as f64
            );
        }
    }
}

/// Plans that leave levels unmeasured (issue 36): coco's default plan's methods and
/// total, all of it on the leaves (bottom-up), or split evenly over the levels but one
/// middle level (its regions estimated from their children), whose margins come from
/// the bootstrap alone (no floor: there is no measurement to bound).
fn unmeasured_plans(d: &Dataset, k: Size) -> Vec<(String, ReleasePlan)> {
    use coco::release::plan::LevelBudget;
    let base = plan(d, k, Definition::Pure);
    let total = base.levels_total().unwrap().amount();
    coco::tradeoff::unmeasured_budgets(&total, d.hierarchy.level_names())
        .into_iter()
        .map(|(origin, budgets)| {
            let mut p = base.clone();
            p.set_budgets(
                budgets
                    .into_iter()
                    .map(|b| match b {
                        Some(b) => {
                            LevelBudget::Measured(coco::privacy::Loss::of(Definition::Pure, &b))
                        }
                        None => LevelBudget::Unmeasured(Definition::Pure),
                    })
                    .collect(),
            )
            .unwrap();
            (origin, p)
        })
        .collect()
}

/// The bounds of [`intervals_cover_the_truth_at_every_level_of_every_shape`] hold, not
/// loosened, at every level of a bottom-up plan and of plans that skip a middle level,
/// on the sample and `dense`, and of the plans that skip a middle level on `deep`: an
/// unmeasured level's margins (its regions' bootstrap replicates re-estimate them from
/// their children, as the release did) cover as a measured level's do. Not `deep`'s
/// bottom-up plan: the summary statistics of its root (the sum of every leaf's
/// estimate, four levels up) fall short of [`MIN_SUMMARY_COVERAGE`]; its cells pass.
/// That is open (issue 36's report), not hidden: [`deep_bottom_up_root_summaries`]
/// states it.
#[test]
fn intervals_cover_the_truth_at_unmeasured_levels() {
    let mut failures = Vec::new();
    let mut plans = 0;
    for (name, d, k) in datasets()
        .into_iter()
        .filter(|(n, _, _)| ["sample", "deep", "dense"].contains(&n.as_str()))
    {
        for (origin, p) in unmeasured_plans(&d, k) {
            if name == "deep" && origin.starts_with("bottom-up") {
                continue;
            }
            assert!(p.levels().iter().any(|l| !l.is_measured()));
            plans += 1;
            let scores = measure_plan(&d, &p, TRIALS, &UncertaintyOptions::default());
            failures.extend(score_failures(
                &format!("{name} ({origin})"),
                &scores,
                TRIALS,
            ));
        }
    }
    assert!(plans >= 6, "{plans} plans");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The case left out above, as it stands: on `deep`'s bottom-up plan every bound holds
/// but the root's summary statistics' coverage. When this fails, the shortfall is
/// fixed: move the case into the test above.
#[test]
fn deep_bottom_up_root_summaries() {
    let (_, d, k) = datasets()
        .into_iter()
        .find(|(n, _, _)| n == "deep")
        .unwrap();
    let (_, p) = unmeasured_plans(&d, k)
        .into_iter()
        .find(|(o, _)| o.starts_with("bottom-up"))
        .unwrap();
    let scores = measure_plan(&d, &p, TRIALS, &UncertaintyOptions::default());
    let failures = score_failures("deep (bottom-up)", &scores, TRIALS);
    assert_eq!(failures.len(), 1, "{failures:#?}");
    assert!(
        failures[0].starts_with("deep (bottom-up) level 0:"),
        "{failures:#?}"
    );
    let root = &scores[0];
    assert!(
        (root.stats_covered as f64) < MIN_SUMMARY_COVERAGE * root.stats as f64,
        "{failures:#?}"
    );
}

fn sample() -> Dataset {
    Dataset::load(std::path::Path::new("sample-data/households")).unwrap()
}

/// A seeded release of the sample with its margins and measurements, written in both
/// formats; the manifest lists every extra file, and `coco verify`'s check of
/// `uncertainty.csv` and `uncertainty.parquet` accepts them and refuses them edited.
#[test]
fn a_release_writes_its_margins_and_verify_checks_them() {
    use coco::release::outputs::export::{OutputFormat, WriteOptions, write_release_dir};
    let d = sample();
    let p = plan(&d, 10_000, Definition::Pure);
    let keep = run::DrawOptions {
        keep_measurements: true,
        ..Default::default()
    };
    let draw = run::draw(&d, &p, &NoiseSource::seeded(5), &keep).unwrap();
    let tmp = std::env::temp_dir().join(format!("coco-unc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    // A release goes into an existing directory (coco creates only the release's own).
    std::fs::create_dir_all(&tmp).unwrap();
    let out = tmp.join("release");
    let manifest = write_release_dir(
        &out,
        &d,
        &p,
        &draw,
        &WriteOptions {
            format: OutputFormat::Both,
            extras: files::Extras::default(),
        },
    )
    .unwrap();
    for f in [
        "uncertainty.csv",
        "uncertainty.parquet",
        "summary.csv",
        "measurements.jsonl",
    ] {
        assert!(manifest.outputs.iter().any(|o| o.path == f), "{f}");
        assert!(out.join(f).is_file(), "{f}");
    }
    let u = manifest.uncertainty.as_ref().unwrap();
    assert_eq!(u.confidence, 0.9);
    assert!(u.replicates >= 2);
    assert_eq!(
        files::verify::check(&out, &manifest, &|_| true),
        Vec::<String>::new()
    );
    // Every released cell is listed with its count, within its interval.
    let text = std::fs::read_to_string(out.join("uncertainty.csv")).unwrap();
    let counts = std::fs::read_to_string(out.join("counts.csv")).unwrap();
    let listed: Vec<&str> = text
        .lines()
        .skip(1)
        .filter(|l| !l.split(',').nth(3).unwrap().eq("0"))
        .collect();
    assert_eq!(listed.len(), counts.lines().count() - 1);
    // The file stays proportional to the informative cells: at most a few rows per
    // released cell.
    assert!(
        text.lines().count() < 40 * counts.lines().count(),
        "{}",
        text.lines().count()
    );
    // An edited count is found.
    let edited = text.replacen(",1,", ",2,", 1);
    assert_ne!(edited, text);
    std::fs::write(out.join("uncertainty.csv"), edited).unwrap();
    let problems = files::verify::check(&out, &manifest, &|_| true);
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("uncertainty.csv: line ")),
        "{problems:?}"
    );
    assert!(
        !problems
            .iter()
            .any(|p| p.starts_with("uncertainty.parquet"))
    );
    // So is another release's uncertainty.parquet: its counts are not counts.parquet's.
    let other_draw = run::draw(&d, &p, &NoiseSource::seeded(6), &Default::default()).unwrap();
    let other = tmp.join("other");
    write_release_dir(
        &other,
        &d,
        &p,
        &other_draw,
        &WriteOptions {
            format: OutputFormat::Parquet,
            extras: files::Extras::default(),
        },
    )
    .unwrap();
    std::fs::copy(
        other.join("uncertainty.parquet"),
        out.join("uncertainty.parquet"),
    )
    .unwrap();
    let problems = files::verify::check(&out, &manifest, &|_| true);
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("uncertainty.parquet: row ")),
        "{problems:?}"
    );
    // The summary has a row per region, and each estimate lies within its interval.
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), d.hierarchy.len() + 1);
    for line in summary.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        for t in f[3..].chunks(3) {
            if t[0].is_empty() {
                continue;
            }
            let v: Vec<f64> = t.iter().map(|x| x.parse().unwrap()).collect();
            assert!(v[1] <= v[0] && v[0] <= v[2], "{line}");
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// `measurements.jsonl` holds exactly the noisy vectors the release's streams drew:
/// each region measured again from the truth (the oracle) with the same seed and
/// stream gives the same values, and its stated scale is the mechanism's `Δ/ε`.
#[test]
fn the_measurements_file_is_the_noise_drawn() {
    use coco::estimate::{self, Noisy};
    use coco::noise::Purpose;
    let d = sample();
    let mut p = plan(&d, 10_000, Definition::Pure);
    // A private K too, so the probe is written.
    p.set_max_size(MaxSize::Estimate {
        budget: Epsilon::parse("0.01").unwrap().into(),
    })
    .unwrap();
    let source = NoiseSource::seeded(11);
    let keep = run::DrawOptions {
        keep_measurements: true,
        ..Default::default()
    };
    let draw = run::draw(&d, &p, &source, &keep).unwrap();
    let m = draw.measurements().unwrap();
    let levels: Vec<Vec<NodeId>> = d
        .hierarchy
        .levels()
        .map(|l| d.hierarchy.level_nodes(l).collect())
        .collect();
    let mut file = Vec::new();
    files::measurements::write(&mut file, d.public(), &levels, m).unwrap();
    let truth = d.truth().for_diagnostic(Diagnostic::Oracle);
    let mut regions = 0;
    for line in String::from_utf8(file).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["kind"] == "max_size_probe" {
            assert_eq!(v["max_size"], draw.max_size());
            continue;
        }
        regions += 1;
        let id = d
            .hierarchy
            .find_display_id(v["region"].as_str().unwrap())
            .unwrap();
        let level = p.level(d.hierarchy.node(id).level);
        let eps = level.loss().unwrap().as_pure().unwrap();
        assert_eq!(v["epsilon"], eps.to_string());
        let scale = f64::from(level.method().sensitivity()) / eps.to_f64();
        assert!((v["scale"].as_f64().unwrap() - scale).abs() < 1e-9);
        let again = estimate::measure(
            level.method(),
            truth.node(id),
            id,
            d.groups(id),
            draw.max_size(),
            level.loss().unwrap(),
            &mut source.stream(Purpose::Measure.node(id)),
        )
        .unwrap();
        let ints = |k: &str| -> Vec<i64> {
            v[k].as_array()
                .map(|a| a.iter().map(|x| x.as_i64().unwrap()).collect())
                .unwrap_or_default()
        };
        match again.noisy() {
            Noisy::Cumulative(c) => assert_eq!(&ints("head"), c),
            Noisy::CumulativeTail { head, top } => {
                assert_eq!(&ints("head"), head);
                assert_eq!(&ints("top"), top);
            }
            Noisy::Unattributed(g) => {
                assert_eq!(
                    ints("hg"),
                    g.iter().map(|&x| i64::from(x)).collect::<Vec<_>>()
                )
            }
            Noisy::Naive(n) => assert_eq!(&ints("naive"), n),
        }
    }
    assert_eq!(regions, d.hierarchy.len());
}

/// The TUI's Release review shows each cell's interval when the draw carries its
/// margins (as the draw job computes them), and says at what confidence.
#[cfg(feature = "tui")]
#[test]
fn the_release_review_shows_each_cells_interval() {
    use coco::release::ledger::{Ledger, Tool};
    use coco::release::transaction::{Reservation, ReserveOptions};
    use coco::tui::action::Action;
    use coco::tui::screens::release::Busy;
    use coco::tui::worker::{JobKind, Update, WorkerEvent};
    let home = tempfile::tempdir().unwrap();
    let mut rt = crate::common::tui::open(home.path(), "sample-data/households".into());
    rt.act(Action::ScreenRelease);
    let session = rt.app.session.as_ref().unwrap();
    let pending = Reservation::open(
        &Ledger::at(home.path()),
        session.dataset.clone(),
        session.plan.clone(),
        Tool::Tui,
        ReserveOptions {
            allow_seeded: true,
            ..Default::default()
        },
    )
    .unwrap()
    .draw(&NoiseSource::seeded(7), &Default::default())
    .unwrap()
    .with_margins(&UncertaintyOptions {
        key: Some(NoiseSource::seeded(7)),
        ..Default::default()
    });
    assert!(pending.margins().is_some());
    rt.app.release.busy = Some(Busy::Drawing {
        progress: None,
        waiting: None,
        cancelled: false,
    });
    rt.app.receive(WorkerEvent {
        kind: JobKind::Draw,
        update: Update::Drawn(Ok(Box::new(pending))),
    });
    rt.act(Action::Right);
    let text = rt.text(160, 40);
    assert!(text.contains("90% margins of error"), "{text}");
    // Cells shown as `count (lower–upper)`.
    assert!(text.contains(" (") && text.contains('–'), "{text}");
}

/// A top replicate (the hierarchy cut below its thin levels) draws the noise the full
/// replicate with the same key draws: cut below the leaves it is that replicate, region
/// for region, under both consistency steps; cut higher, its levels are consistent
/// among themselves (each region's groups its `G`, children adding up to parents) and
/// differ from the full replicate's, whose regions also merged what was measured below
/// the cut.
#[test]
fn a_top_replicate_draws_the_full_replicates_noise() {
    use coco::consistency::Consistency;
    use coco::histogram::CountOfCounts;
    use coco::release::margins::bootstrap::{Cut, replicate};
    let d = Shape::Deep.build(7, 0.2).unwrap().to_dataset().unwrap();
    let h = &d.hierarchy;
    let public = d.public();
    for step in [Consistency::TopDown, Consistency::Wls] {
        let mut p = plan(&d, 1_000, Definition::Pure);
        p.set_consistency(step);
        let draw = run::draw(&d, &p, &NoiseSource::seeded(3), &Default::default()).unwrap();
        let options = run::consistency_options(&p, h);
        let key = NoiseSource::seeded(11);
        let full = replicate((&draw).into(), &p, public, &key, &options).unwrap();
        for depth in 1..=h.depth() {
            let cut = h.truncated(depth);
            let top = Cut::new(&p, h, depth)
                .replicate((&draw).into(), public, &key)
                .unwrap();
            assert_eq!(top.histograms.len(), cut.len());
            let same = (0..cut.len()).all(|i| top.histograms.get(i) == full.histograms.get(i));
            if depth == h.depth() {
                assert!(same, "{step:?}: the whole hierarchy is the full replicate");
                continue;
            }
            for i in 0..cut.len() {
                let id = NodeId(i as u32);
                assert_eq!(top.histograms.get(i).groups(), d.groups(id), "{step:?}");
                let node = cut.node(id);
                if !node.is_leaf() {
                    let sum =
                        CountOfCounts::sum(node.children().map(|c| top.histograms.get(c.index())));
                    assert_eq!(sum.pairs(), top.histograms.get(i).pairs(), "{step:?}");
                }
            }
            if depth == h.depth() - 1 {
                assert!(
                    !same,
                    "{step:?}, cut to {depth} levels: expected a difference"
                );
            }
        }
    }
}

/// On a level of fewer than `FEW_REGIONS` regions, a released 0 in the tail's zone is
/// not pinned at 0. Chain's root holds two groups above `L` (of sizes 23 and 47) among
/// 450, fewer than the noise of the head's count of groups at or above `L`: the zCDP
/// release of seed 1 puts every group below `L`, so the bootstrap's world holds none
/// in the zone, and without the floor the root's zone cells were `[0, 0]`, both groups
/// missed. A level of many regions keeps its zone cells to what its classes and reach
/// learned: the blocks of group-quarters with nothing at `L` do not list their whole
/// zone.
#[test]
fn a_level_of_few_regions_does_not_pin_its_tail_zone_at_zero() {
    use coco::release::margins::zone;
    let seeded = UncertaintyOptions {
        key: Some(NoiseSource::seeded(100)),
        ..Default::default()
    };
    let d = Shape::Chain.build(7, 1.0).unwrap().to_dataset().unwrap();
    let p = plan(&d, 1_000, Definition::Zcdp);
    let draw = run::draw(&d, &p, &NoiseSource::seeded(1), &Default::default()).unwrap();
    let u = uncertainty::intervals(&draw, &p, d.public(), &seeded).unwrap();
    let root = NodeId(0);
    let released = draw.histograms().get(0);
    let z = zone::zones(&p, d.hierarchy.depth(), 1_000)[0].expect("the root has a tail");
    assert!(
        released.pairs().iter().all(|&(s, _)| s < z.above),
        "{released:?}"
    );
    let truth = d
        .truth()
        .for_diagnostic(Diagnostic::Oracle)
        .node(root)
        .to_owned();
    let tail: Vec<Size> = truth
        .pairs()
        .iter()
        .filter(|p| z.holds(p.0))
        .map(|p| p.0)
        .collect();
    assert_eq!(tail, [23, 47]);
    let cells = u.region(0, released, d.groups(root));
    for s in z.above + 1..=z.last {
        let c = cells.iter().find(|c| c.size == s);
        assert!(
            c.is_some_and(|c| (c.lower, c.upper) == (0, 1)),
            "size {s}: {c:?}"
        );
    }

    let d = Shape::GroupQuarters
        .build(7, 0.25)
        .unwrap()
        .to_dataset()
        .unwrap();
    let p = plan(&d, 1_000, Definition::Zcdp);
    let draw = run::draw(&d, &p, &NoiseSource::seeded(1), &Default::default()).unwrap();
    let u = uncertainty::intervals(&draw, &p, d.public(), &seeded).unwrap();
    let h = &d.hierarchy;
    let leaf = h.leaf_level().0;
    let z = zone::zones(&p, h.depth(), 1_000)[leaf].expect("the blocks have a tail");
    // Regions with nothing at `L`, and those of them whose whole zone is listed (the
    // floor would list it in every one).
    let (mut regions, mut whole) = (0, 0);
    for i in 0..h.len() {
        let id = NodeId(i as u32);
        let hist = draw.histograms().get(i);
        if h.node(id).level.0 != leaf || hist.count(z.above) > 0 || d.groups(id) == 0 {
            continue;
        }
        regions += 1;
        let cells = u.region(leaf, hist, d.groups(id));
        let listed = cells.iter().filter(|c| z.holds(c.size)).count();
        whole += usize::from(listed == (z.last - z.above) as usize);
    }
    assert!(regions > 1_000, "{regions}");
    assert!(whole * 10 < regions, "{whole} of {regions}");
}

/// One cell's interval ([`uncertainty::Uncertainty::cell`], which `summary.csv`'s single
/// share asks of every region) is the one the region's list gives it, or `[0, 0]`
/// around its count where the list has none: on the sample and on chain under zCDP
/// (whose top levels list their tail zones), at every listed size and the sizes
/// 0–80, 100, 1,000 and `K` of every region.
#[test]
fn one_cells_interval_is_the_one_its_region_lists() {
    for (d, k, definition) in [
        (sample(), 10_000, Definition::Pure),
        (
            Shape::Chain.build(7, 1.0).unwrap().to_dataset().unwrap(),
            1_000,
            Definition::Zcdp,
        ),
    ] {
        let p = plan(&d, k, definition);
        let draw = run::draw(&d, &p, &NoiseSource::seeded(2), &Default::default()).unwrap();
        let options = UncertaintyOptions {
            key: Some(NoiseSource::seeded(3)),
            ..Default::default()
        };
        let u = uncertainty::intervals(&draw, &p, d.public(), &options).unwrap();
        let h = &d.hierarchy;
        let mut listed = 0;
        for i in 0..h.len() {
            let id = NodeId(i as u32);
            let level = h.node(id).level.0;
            let hist = draw.histograms().get(i);
            let cells = u.region(level, hist, d.groups(id));
            listed += cells.len();
            let mut sizes: Vec<Size> = cells.iter().map(|c| c.size).collect();
            sizes.extend((0..=80).chain([100, 1_000, k]));
            for s in sizes {
                let expected = cells.iter().find(|c| c.size == s).copied().unwrap_or({
                    let c = hist.count(s);
                    uncertainty::CellInterval {
                        size: s,
                        count: c,
                        lower: c,
                        upper: c,
                    }
                });
                assert_eq!(u.cell(level, hist, d.groups(id), s), expected, "{id:?}");
            }
        }
        assert!(listed > 100, "{listed}");
    }
}
