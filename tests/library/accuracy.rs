//! Accuracy against the truth: the released counts of the default plan are as close to
//! the truth as the mechanism's variance says, on the bundled sample and two shapes unlike
//! it, at a small and a large budget.
//!
//! The robustness test compares the consistent release with the independent estimates
//! made from the same measurements, so a bug both share (a wrong noise scale, a biased
//! cell) passes it. These bounds compare with the truth, and take their figures from
//! the mechanism alone, computed here and not by coco:
//!
//! * the noise of one cell of `Hc` is discrete Laplace with `p = e^{−ε/Δ}` (Δ = 1), of
//!   variance `2p/(1 − p)²` (Inusah and Kozubowski 2006, eq. 2.4); a released count in
//!   the head is a difference of two such cells, of variance `v = 2·Var`;
//! * the consistency step merges a region's own measurement with the sum of its
//!   children's, each weighted by the inverse of its variance, so a region's count has
//!   variance at most `v_merged = 1/(1/v + 1/Σ v_merged(child))` (from the leaves up;
//!   the information from above only lowers it further), and rounding to an integer
//!   adds at most ½ to the error: `E[(ĉ − c)²] ≤ (√v_merged + ½)²`.
//!
//! # The checks
//! For each level and each size `j` of the head (sizes below the tail's boundary,
//! at most [`SIZES`] of them), pooled over the regions with groups and [`TRIALS`] seeded
//! draws (`N` errors `e = ĉ − c`):
//!
//! 1. **Scale**: the mean squared error is at most the mean bound `B` above, times
//!    `1 + z·√((κ − 1)/N_eff)` — the upper end of the mean of `N_eff` squared errors of
//!    kurtosis at most `κ` ([`KURTOSIS`]) by the normal approximation. `N_eff = N / 3`
//!    allows for the correlation of the cells of one region (adjacent counts share a
//!    cumulative cell) and of sibling regions (consistency ties them to their parent).
//! 2. **Bias**: the mean error is within `z·√(B / N_eff)` of 0.
//!
//! `z` is the standard normal quantile at `FALSE_FAILURE_RATE / comparisons`
//! (Bonferroni over every dataset, budget, level, size and check), so a correct
//! release fails this file with probability about `FALSE_FAILURE_RATE` over the choice
//! of the seeds (fixed: the outcome is deterministic).
//!
//! The companions show the checks have power: a release drawn at half the stated ε (the
//! noise of a wrong scale) fails the scale check, and a release whose count of one size
//! is one too high in every region (a biased cell) fails the bias check.
//!
//! # Citations
//! Inusah and Kozubowski, "A discrete analogue of the Laplace distribution", J. Stat.
//! Planning and Inference 136, 2006; Kuo et al., PVLDB 11(11), 2018, §5 (the estimators
//! and the variance-weighted merge).

use coco::data::{Dataset, NodeId};
use coco::estimate::Method;
use coco::generate::shapes::Shape;
use coco::histogram::{CountOfCounts, HistogramSet, Histograms, Size};
use coco::noise::NoiseSource;
use coco::privacy::{Diagnostic, Epsilon};
use coco::release::pipeline::draw as run;
use coco::release::plan::defaults;
use coco::release::plan::{MaxSize, ReleasePlan};

/// Seeded draws per dataset and budget.
const TRIALS: u64 = 6;
/// At most this many head sizes (0, 1, …) are checked per level.
const SIZES: Size = 12;
/// The chance that a correct release fails this file.
const FALSE_FAILURE_RATE: f64 = 1e-3;
/// A bound on the kurtosis of a released count's error: the difference of two discrete
/// Laplace variables has kurtosis at most 4.5 (two Laplace variables: 3 + 3/2);
/// merging with other measurements and rounding bring it towards 3.
const KURTOSIS: f64 = 4.5;

/// The public `K` of every plan here.
const K: Size = 1_000;

/// The datasets: the bundled sample and two shapes unlike it.
fn datasets() -> Vec<(&'static str, Dataset)> {
    let sample = Dataset::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households"),
    )
    .unwrap();
    let shape = |s: Shape, scale: f64| s.build(7, scale).unwrap().to_dataset().unwrap();
    vec![
        ("sample", sample),
        ("chain", shape(Shape::Chain, 1.0)),
        ("group-quarters", shape(Shape::GroupQuarters, 0.25)),
    ]
}

/// The budgets: coco's default total and a large one, where a bias of one group stands
/// out of the noise.
const BUDGETS: [&str; 2] = ["1", "9"];

/// coco's default plan for `d` at total ε `total`, `K` fixed.
fn default_plan(d: &Dataset, total: &str) -> ReleasePlan {
    let total = Epsilon::parse(total).unwrap();
    defaults::public_default(&d.hierarchy, |id| d.groups(id), &total, MaxSize::Fixed(K))
        .unwrap()
        .plan
}

/// The variance of discrete Laplace noise of sensitivity 1 at `epsilon`.
fn laplace_variance(epsilon: &Epsilon) -> f64 {
    let p = (-epsilon.to_f64()).exp();
    2.0 * p / ((1.0 - p) * (1.0 - p))
}

/// Per level (root first): the head sizes checked, and per region the bound on a head
/// count's mean squared error, `(√v_merged + ½)²` (`None` for a level whose counts are
/// not measured cell by cell, or a region without groups).
struct Bounds {
    head_end: Vec<Size>,
    region: Vec<Option<f64>>,
}

fn bounds(d: &Dataset, plan: &ReleasePlan) -> Bounds {
    let h = &d.hierarchy;
    let own: Vec<Option<f64>> = h
        .levels()
        .map(|l| {
            let level = plan.level(l);
            match level.method() {
                Method::Hc | Method::HcTail(_) => {
                    Some(2.0 * laplace_variance(level.loss().unwrap().as_pure().unwrap()))
                }
                Method::Naive => {
                    // Sensitivity 2: the scale of ε/2.
                    let half = level.loss().unwrap().as_pure().unwrap().to_f64() / 2.0;
                    let p = (-half).exp();
                    Some(2.0 * p / ((1.0 - p) * (1.0 - p)))
                }
                Method::Hg => None,
            }
        })
        .collect();
    let head_end = h
        .levels()
        .map(|l| match plan.level(l).method() {
            Method::HcTail(t) => t.above.min(SIZES),
            _ => SIZES,
        })
        .collect();
    let mut merged = vec![f64::INFINITY; h.len()];
    for id in h.bottom_up() {
        let node = h.node(id);
        let children: f64 = node
            .children()
            .filter(|c| d.groups(*c) > 0)
            .map(|c| merged[c.index()])
            .sum();
        merged[id.index()] = match own[node.level.0] {
            Some(v) if node.is_leaf() || children == 0.0 => v,
            Some(v) => 1.0 / (1.0 / v + 1.0 / children),
            None => f64::INFINITY,
        };
    }
    let region = (0..h.len())
        .map(|i| {
            let id = NodeId(i as u32);
            (d.groups(id) > 0 && merged[i].is_finite()).then(|| (merged[i].sqrt() + 0.5).powi(2))
        })
        .collect();
    Bounds { head_end, region }
}

/// The errors of one (level, size) cell class, pooled over regions and trials.
#[derive(Default, Clone)]
struct Errors {
    n: u64,
    sum: f64,
    squares: f64,
    bound: f64,
}

/// A release's errors against the truth, added to `errors[level][size]`.
fn add_errors(d: &Dataset, bounds: &Bounds, released: &HistogramSet, errors: &mut [Vec<Errors>]) {
    let h = &d.hierarchy;
    let truth = d.truth().for_diagnostic(Diagnostic::Oracle);
    for l in h.levels() {
        for i in h.level_range(l) {
            let Some(bound) = bounds.region[i as usize] else {
                continue;
            };
            let (est, tr) = (released.hist(i as usize), truth.node(NodeId(i)));
            for j in 0..bounds.head_end[l.0] {
                let e = est.count(j) as f64 - tr.count(j) as f64;
                let c = &mut errors[l.0][j as usize];
                c.n += 1;
                c.sum += e;
                c.squares += e * e;
                c.bound += bound;
            }
        }
    }
}

/// The standard normal upper quantile at `alpha`, by bisection on the complementary
/// error function.
fn normal_upper_quantile(alpha: f64) -> f64 {
    let tail = |z: f64| 0.5 * libm::erfc(z / std::f64::consts::SQRT_2);
    let (mut lo, mut hi) = (0.0, 40.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if tail(mid) > alpha {
            lo = mid
        } else {
            hi = mid
        }
    }
    hi
}

/// How a release is broken, for the companions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Broken {
    /// As coco draws it.
    No,
    /// Drawn at half the plan's ε: noise of twice the scale the bounds assume.
    HalfEpsilon,
    /// The count of size 2 one too high in every region (one group of size 3 moved
    /// down; the consistency of the tables is kept).
    BiasedCell,
}

/// The failed checks of the default plan on every dataset and budget, released as
/// `broken` says.
fn failures(broken: Broken) -> Vec<String> {
    let sets = datasets();
    let mut classes = 0usize;
    let mut results = Vec::new();
    for (name, d) in &sets {
        for total in BUDGETS {
            let plan = default_plan(d, total);
            let drawn_at = match broken {
                Broken::HalfEpsilon => {
                    let half = Epsilon::parse(total).unwrap().to_f64() / 2.0;
                    default_plan(d, &format!("{half}"))
                }
                _ => plan.clone(),
            };
            let b = bounds(d, &plan);
            let h = &d.hierarchy;
            let mut errors = vec![vec![Errors::default(); SIZES as usize]; h.depth()];
            for t in 0..TRIALS {
                let source = NoiseSource::seeded(31_000 + t);
                let draw = run::draw(d, &drawn_at, &source, &Default::default()).unwrap();
                assert!(
                    draw.checks().passed(),
                    "{name} ε={total}: {:?}",
                    draw.checks()
                );
                let mut released = draw.histograms().clone();
                if broken == Broken::BiasedCell {
                    bias_size_two(d, &mut released);
                }
                add_errors(d, &b, &released, &mut errors);
            }
            for (l, sizes) in errors.iter().enumerate() {
                for (j, c) in sizes.iter().enumerate() {
                    if c.n > 0 {
                        classes += 1;
                        results.push((format!("{name} ε={total} level {l} size {j}"), c.clone()));
                    }
                }
            }
        }
    }
    let z = normal_upper_quantile(FALSE_FAILURE_RATE / (2 * classes) as f64 / 2.0);
    let mut failed = Vec::new();
    for (what, c) in results {
        let n = c.n as f64;
        let n_eff = (n / 3.0).max(1.0);
        let bound = c.bound / n;
        let mse = c.squares / n;
        let mean = c.sum / n;
        let mse_limit = bound * (1.0 + z * ((KURTOSIS - 1.0) / n_eff).sqrt());
        if mse > mse_limit {
            failed.push(format!("{what}: mean squared error {mse:.3} > {mse_limit:.3} (bound {bound:.3}, {n} errors)"));
        }
        let bias_limit = z * (bound / n_eff).sqrt();
        if mean.abs() > bias_limit {
            failed.push(format!("{what}: mean error {mean:.3} beyond ±{bias_limit:.3} (bound {bound:.3}, {n} errors)"));
        }
    }
    failed
}

/// Moves one group from size 3 to size 2 in every leaf that has one, and sums the
/// parents again, so the tables stay consistent and keep their `G`: a count of size 2
/// biased by +1 at the leaves (and by the number of such leaves above them).
fn bias_size_two(d: &Dataset, released: &mut HistogramSet) {
    let h = &d.hierarchy;
    let mut tables = released.to_vec();
    for id in h.bottom_up() {
        let node = h.node(id);
        let i = id.index();
        tables[i] = if node.is_leaf() {
            let t = &tables[i];
            if t.count(3) == 0 {
                continue;
            }
            let moved = t.pairs().iter().map(|&(s, c)| match s {
                2 => (2, c + 1),
                3 => (3, c - 1),
                _ => (s, c),
            });
            let mut pairs: Vec<(Size, u64)> = moved.filter(|&(_, c)| c > 0).collect();
            if t.count(2) == 0 {
                pairs.push((2, 1));
                pairs.sort_unstable();
            }
            CountOfCounts::from_pairs(pairs).unwrap()
        } else {
            CountOfCounts::sum(node.children().map(|c| &tables[c.index()]))
        };
    }
    *released = tables.into_iter().collect();
}

#[test]
fn the_default_plan_is_as_accurate_as_its_noise_allows() {
    let failed = failures(Broken::No);
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn the_bounds_catch_noise_of_the_wrong_scale() {
    let failed = failures(Broken::HalfEpsilon);
    assert!(
        failed.iter().any(|f| f.contains("squared")),
        "nothing caught: {failed:?}"
    );
}

#[test]
fn the_bounds_catch_a_biased_cell() {
    let failed = failures(Broken::BiasedCell);
    assert!(
        failed.iter().any(|f| f.contains("mean error")),
        "nothing caught: {failed:?}"
    );
}

/// The preview's omniscient reference (Kuo et al. §6.2: distinct sizes × the noise's
/// standard deviation per cell, per region) takes its scale from the plan's noise: the
/// continuous Laplace's `√2/ε` for a pure level (the paper's definition, kept), and for
/// a zCDP level the discrete Gaussian's `σ = √(1/(2ρ))`, computed here from ρ alone.
#[test]
fn the_omniscient_reference_takes_the_noises_standard_deviation() {
    use coco::privacy::{Loss, Rho};
    let (_, d) = datasets().swap_remove(0);
    let h = &d.hierarchy;
    let truth = d.truth().for_diagnostic(Diagnostic::Preview);
    let third = Epsilon::parse("1/3").unwrap();
    let eighth = Rho::from_ratio(1, 8).unwrap();
    for l in h.levels() {
        let distinct = h
            .level_nodes(l)
            .map(|id| truth.node(id).top_coded(K).distinct_sizes() as f64)
            .sum::<f64>()
            / h.level_len(l) as f64;
        let pure = coco::preview::omniscient(&d, l, &Loss::Pure(third.clone()), K);
        let zcdp = coco::preview::omniscient(&d, l, &Loss::Zcdp(eighth.clone()), K);
        // √2/ε = 3√2 at ε = 1/3; σ = √(1/(2/8)) = 2 at ρ = 1/8.
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b;
        assert!(
            close(pure, distinct * 3.0 * std::f64::consts::SQRT_2),
            "{pure}"
        );
        assert!(
            close(zcdp, distinct * 2.0),
            "{zcdp} against {}",
            distinct * 2.0
        );
    }
}
