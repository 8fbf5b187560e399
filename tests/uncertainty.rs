//! Coverage of the published intervals, measured against the truth (a confidential
//! diagnostic, here an oracle).

use coco::data::{Dataset, NodeId};
use coco::generate::shapes::Shape;
use coco::histogram::Size;
use coco::noise::NoiseSource;
use coco::privacy::{Diagnostic, Epsilon};
use coco::release::defaults;
use coco::release::plan::{MaxSize, ReleasePlan};
use coco::release::run;
use coco::uncertainty::{self, Replicates, Rule, UncertaintyOptions};

/// Per level: cells counted, cells covered, total width, total absolute error.
#[derive(Clone, Debug, Default)]
struct LevelScore {
    cells: u64,
    covered: u64,
    width: f64,
    error: f64,
}

fn plan(d: &Dataset, k: Size) -> ReleasePlan {
    let one = Epsilon::parse("1").unwrap();
    defaults::public_default(&d.hierarchy, |id| d.groups(id), &one, MaxSize::Fixed(k))
        .unwrap()
        .plan
}

fn score(
    d: &Dataset,
    plan: &ReleasePlan,
    seed: u64,
    options: &UncertaintyOptions,
) -> Vec<LevelScore> {
    let h = &d.hierarchy;
    let draw = run::draw(d, plan, &NoiseSource::seeded(seed), None, None).unwrap();
    let u = uncertainty::intervals(&draw, plan, d.public(), options).unwrap();
    let truth = d.truth().for_diagnostic(Diagnostic::Oracle);
    let mut out = vec![LevelScore::default(); h.depth()];
    for i in 0..h.len() {
        let id = NodeId(i as u32);
        let level = h.node(id).level.0;
        let cells = u.region(level, draw.histograms().get(i), d.groups(id));
        let t = truth.node(id);
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
            s.width += (upper - lower) as f64;
            s.error += (count as f64 - truth as f64).abs();
        }
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
    ] {
        let g = shape.build(7, scale).unwrap();
        out.push((shape.name().to_string(), g.to_dataset().unwrap(), k));
    }
    out
}

/// Per level, the scores of `trials` seeded releases of `d` and their intervals.
fn measure(
    d: &Dataset,
    k: Size,
    trials: u64,
    replicates: Replicates,
    rule: Rule,
) -> Vec<LevelScore> {
    let p = plan(d, k);
    let mut total = vec![LevelScore::default(); d.hierarchy.depth()];
    for t in 0..trials {
        let o = UncertaintyOptions {
            replicates,
            rule,
            seed: Some(100 + t),
            ..Default::default()
        };
        for (a, b) in total.iter_mut().zip(score(d, &p, 1 + t, &o)) {
            a.cells += b.cells;
            a.covered += b.covered;
            a.width += b.width;
            a.error += b.error;
        }
    }
    total
}

/// Seeded releases per dataset in the coverage test.
const TRIALS: u64 = 2;
/// The least share of a level's cells whose truth an interval at 90% must cover.
const MIN_COVERAGE: f64 = 0.85;
/// The most a level's mean width may be, in mean absolute errors of the released
/// counts. For an error that is Laplace distributed (the noise of one measured cell),
/// the 90% interval is ±2.30 scales and the mean absolute error one scale: a ratio of
/// 4.6; twice that is needlessly wide.
const MAX_WIDTH_RATIO: f64 = 9.2;

/// At 90% nominal, every level of the sample and of every robustness shape has at
/// least [`MIN_COVERAGE`] of its cells (those listed in `uncertainty.csv` or with a
/// true count above 0) covered, with widths at most [`MAX_WIDTH_RATIO`] mean absolute
/// errors. Seeded: the outcome is deterministic.
#[test]
fn intervals_cover_the_truth_at_every_level_of_every_shape() {
    let mut failures = Vec::new();
    for (name, d, k) in datasets() {
        let scores = measure(&d, k, TRIALS, Replicates::Auto, Rule::default());
        for (level, s) in scores.iter().enumerate() {
            let coverage = s.covered as f64 / s.cells.max(1) as f64;
            let ratio = s.width / s.error.max(1.0);
            if s.cells == 0 || coverage < MIN_COVERAGE || ratio > MAX_WIDTH_RATIO {
                failures.push(format!(
                    "{name} level {level}: coverage {coverage:.3} of {} cells, mean width {:.2} = {ratio:.2} × the mean absolute error",
                    s.cells,
                    s.width / s.cells.max(1) as f64
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The table of `docs/uncertainty.md`: `cargo test --release --test uncertainty table
/// -- --ignored --nocapture` (`TRIALS=n`, `REPS=n`, `RULE=basic|percentile|symmetric`,
/// `DATA=sample,dense` to change what is measured).
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
    println!("| dataset | level | cells | coverage | mean width | mean abs. error |");
    println!("|---|---|---|---|---|---|");
    for (name, d, k) in datasets() {
        if only
            .as_ref()
            .is_some_and(|o| !o.split(',').any(|x| x == name))
        {
            continue;
        }
        let scores = measure(&d, k, trials, reps, rule);
        for (level, s) in scores.iter().enumerate() {
            let n = s.cells.max(1) as f64;
            println!(
                "| {name} | {} | {} | {:.3} | {:.2} | {:.2} |",
                d.hierarchy.level_name(coco::data::LevelId(level)),
                s.cells,
                s.covered as f64 / n,
                s.width / n,
                s.error / n
            );
        }
    }
}
