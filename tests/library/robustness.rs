//! Robustness: on shapes unlike coco's own generators, the consistent release is never
//! worse than a level's own measurement beyond noise, for the default plan and for
//! `hc`, `hg` and mixed plans under pure ε, and for the default plan under ρ-zCDP.
//!
//! # Method
//! For each shape of [`coco::generate::shapes`] (at a small scale) and each plan (a
//! family and a privacy definition: [`PURE_RUNS`], and [`ZCDP_RUNS`] in a test of its own),
//! `TRIALS` seeded trials draw the plan's measurements and compute, per level, the mean
//! per-region earth mover's distance of the independent estimates and of the consistent
//! release (`wls`) to the truth. The paired differences `d_t = consistent_t −
//! independent_t` (same measurements) are tested one-sided: the level fails if the mean
//! difference exceeds its standard error times the critical value of Student's t with
//! `TRIALS − 1` degrees of freedom at level `FALSE_FAILURE_RATE / comparisons`
//! (Bonferroni over every shape, plan and level of the test), so a correct step fails
//! each of the two tests with probability at most `FALSE_FAILURE_RATE` over the choice
//! of the seeds (the seeds are fixed: the outcome is deterministic). The zCDP plans are
//! a test of their own, not more comparisons in the pure one, so that the pure test
//! keeps its power. The companion `the_test_catches_the_unchecked_combination` turns
//! the check off and must fail the pure test on the group-quarters shape, where the
//! unchecked combination made the nation several times worse: the test has power
//! where it matters.
//!
//! # Citations
//! Student, "The probable error of a mean", Biometrika 6(1), 1908; the regularized
//! incomplete beta by Lentz's continued fraction (Press et al., Numerical Recipes, §6.4).

use coco::consistency::{self, ConsistencyOptions};
use coco::data::{Dataset, LevelId, NodeId};
use coco::emd::emd;
use coco::estimate::{Keep, Method};
use coco::generate::shapes::Shape;
use coco::histogram::{Histograms, Size};
use coco::noise::NoiseSource;
use coco::privacy::{Definition, Diagnostic, Epsilon, Loss, Rho};
use coco::release::pipeline::draw as run;
use coco::release::plan::defaults;
use coco::release::plan::{MaxSize, ReleasePlan};
use coco::wire::Named;

/// Trials per shape and plan.
const TRIALS: usize = 12;
/// The chance that a correct step fails this file.
const FALSE_FAILURE_RATE: f64 = 1e-3;

/// The plan families.
#[derive(Clone, Copy, Debug)]
enum Family {
    /// coco's public default (`coco plan DIR`).
    Default,
    Hc,
    Hg,
    /// `hg` at the leaves, the default's tails above.
    Mixed,
}

/// The plans each shape runs under pure ε: every family.
const PURE_RUNS: [(Family, Definition); 4] = [
    (Family::Default, Definition::Pure),
    (Family::Hc, Definition::Pure),
    (Family::Hg, Definition::Pure),
    (Family::Mixed, Definition::Pure),
];

/// The plans each shape runs under ρ-zCDP (the discrete Gaussian's noise, its L2
/// sensitivities and its variance in the consistency weights and the check): coco's
/// default, the plan agencies draw. One family keeps the file's runtime within a fifth
/// more than pure ε's alone; the estimators are the same, only the noise differs.
const ZCDP_RUNS: [(Family, Definition); 1] = [(Family::Default, Definition::Zcdp)];

/// The total budget of a plan: ε = 1, or for ρ-zCDP the ρ of similar accuracy, `ρ =
/// 1/(4·levels)`: split evenly, a level's discrete Gaussian has `σ² = 1/(2ρ_l) =
/// 2·levels²`, the variance `2/ε_l²` of the continuous Laplace at `ε_l = 1/levels`
/// (the discrete Laplace's is slightly less).
pub(crate) fn budget(d: &Dataset, definition: Definition) -> Loss {
    match definition {
        Definition::Pure => Loss::Pure(Epsilon::parse("1").unwrap()),
        Definition::Zcdp => Loss::Zcdp(Rho::from_ratio(1, 4 * d.hierarchy.depth() as u64).unwrap()),
    }
}

/// A shape at the scale the test runs it, and the public `K` of its plans.
fn shapes() -> Vec<(Shape, f64, Size)> {
    vec![
        (Shape::GroupQuarters, 0.25, 1_000),
        (Shape::Dense, 0.5, 10_000),
        (Shape::Skewed, 0.5, 1_000),
        (Shape::Chain, 1.0, 1_000),
        (Shape::Giant, 0.5, 10_000),
        (Shape::HeavyTail, 0.5, 10_000),
        (Shape::ManyTiny, 0.5, 100),
        (Shape::Sparse, 0.5, 100),
    ]
}

fn plan(d: &Dataset, (family, definition): (Family, Definition), k: Size) -> ReleasePlan {
    let h = &d.hierarchy;
    let total = budget(d, definition);
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

/// Per level, the mean independent error and the paired differences (consistent −
/// independent) over the trials.
fn differences(
    d: &Dataset,
    plan: &ReleasePlan,
    seed: u64,
    checked: bool,
) -> (Vec<f64>, Vec<Vec<f64>>) {
    let h = &d.hierarchy;
    let truth = d.truth().for_diagnostic(Diagnostic::Preview);
    let mut out = vec![Vec::with_capacity(TRIALS); h.depth()];
    let mut independent = vec![0.0; h.depth()];
    for t in 0..TRIALS {
        let source = NoiseSource::seeded(seed * 1000 + t as u64);
        let options = run::RunOptions {
            keep: Keep {
                histograms: true,
                ..Keep::NONE
            },
            ..Default::default()
        };
        let est = run::estimate_plan(d, plan, &source, &options).unwrap();
        let options = ConsistencyOptions {
            checked,
            ..plan.consistency_options()
        };
        let result = consistency::make_consistent(
            plan.consistency(),
            h,
            &est.estimates,
            d.public().groups,
            est.max_size,
            &options,
        )
        .unwrap();
        for l in h.levels() {
            let (mut a, mut b) = (0u128, 0u128);
            for i in h.level_range(l) {
                let tr = truth.node(NodeId(i));
                a += u128::from(emd(est.estimates.histogram(i as usize), tr));
                b += u128::from(emd(result.histograms.hist(i as usize), tr));
            }
            let n = h.level_len(l) as f64;
            independent[l.0] += a as f64 / n / TRIALS as f64;
            out[l.0].push((b as f64 - a as f64) / n);
        }
    }
    (independent, out)
}

/// The one-sided t statistic of the mean of `d` (0 when every difference is 0).
fn t_statistic(d: &[f64]) -> f64 {
    let n = d.len() as f64;
    let mean = d.iter().sum::<f64>() / n;
    let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    if var == 0.0 {
        return if mean > 0.0 { f64::INFINITY } else { 0.0 };
    }
    mean / (var / n).sqrt()
}

/// Student's t: the regularized incomplete beta `I_x(a, b)` by Lentz's continued
/// fraction, the upper tail `P[T > t]`, and its inverse by bisection.
mod student {
    fn ln_gamma(x: f64) -> f64 {
        // Lanczos (g = 7, n = 9): relative error below 1e-15 for x > 0.
        const C: [f64; 9] = [
            0.999_999_999_999_809_9,
            676.520_368_121_885_1,
            -1_259.139_216_722_402_8,
            771.323_428_777_653_1,
            -176.615_029_162_140_6,
            12.507_343_278_686_905,
            -0.138_571_095_265_720_12,
            9.984_369_578_019_572e-6,
            1.505_632_735_149_311_6e-7,
        ];
        let x = x - 1.0;
        let mut a = C[0];
        let t = x + 7.5;
        for (i, c) in C.iter().enumerate().skip(1) {
            a += c / (x + i as f64);
        }
        0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
    }

    fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
        let tiny = 1e-300;
        let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
        let mut c = 1.0;
        let mut d = 1.0 - qab * x / qap;
        if d.abs() < tiny {
            d = tiny;
        }
        d = 1.0 / d;
        let mut h = d;
        for m in 1..300 {
            let m = m as f64;
            let m2 = 2.0 * m;
            let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
            d = 1.0 + aa * d;
            if d.abs() < tiny {
                d = tiny;
            }
            c = 1.0 + aa / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            h *= d * c;
            let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
            d = 1.0 + aa * d;
            if d.abs() < tiny {
                d = tiny;
            }
            c = 1.0 + aa / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-15 {
                break;
            }
        }
        h
    }

    /// `I_x(a, b)`.
    fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
        if x <= 0.0 {
            return 0.0;
        }
        if x >= 1.0 {
            return 1.0;
        }
        let front =
            (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
        if x < (a + 1.0) / (a + b + 2.0) {
            front * beta_cf(a, b, x) / a
        } else {
            1.0 - front * beta_cf(b, a, 1.0 - x) / b
        }
    }

    /// `P[T > t]` for Student's t with `df` degrees of freedom, `t ≥ 0`.
    pub fn upper_tail(t: f64, df: f64) -> f64 {
        0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    }

    /// The `t` with `P[T > t] = p`.
    pub fn critical(p: f64, df: f64) -> f64 {
        let (mut lo, mut hi) = (0.0, 1e6);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if upper_tail(mid, df) > p {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }

    #[test]
    fn critical_values_match_the_tables() {
        // Reference values (scipy 1.x, scipy.stats.t.isf): t_{0.025, 11} = 2.200985,
        // t_{0.001, 15} = 3.732834, t_{1e-5, 11} = 7.097356.
        assert!((critical(0.025, 11.0) - 2.200_985).abs() < 1e-5);
        assert!((critical(0.001, 15.0) - 3.732_834).abs() < 1e-5);
        assert!((critical(1e-5, 11.0) - 7.097_356).abs() < 1e-5);
    }
}

/// Every (shape, family, level) comparison: the mean errors and the t statistic.
struct Outcome {
    label: String,
    independent: f64,
    consistent: f64,
    t: f64,
}

fn run_all(checked: bool, only: Option<Shape>, runs: &[(Family, Definition)]) -> Vec<Outcome> {
    let mut out = Vec::new();
    for (shape, scale, k) in shapes() {
        if only.is_some_and(|s| s != shape) {
            continue;
        }
        let d = shape.build(11, scale).unwrap().to_dataset().unwrap();
        for &run in runs {
            let p = plan(&d, run, k);
            let (independent, diffs) = differences(&d, &p, 1 + shape as u64, checked);
            for (l, d_l) in diffs.iter().enumerate() {
                let name = d.hierarchy.level_name(LevelId(l)).to_string();
                let mean = d_l.iter().sum::<f64>() / d_l.len() as f64;
                out.push(Outcome {
                    label: format!("{} {:?} {} {}", shape.name(), run.0, run.1, name),
                    independent: independent[l],
                    consistent: independent[l] + mean,
                    t: t_statistic(d_l),
                });
            }
        }
    }
    out
}

/// The critical t of a test over `runs` on every shape: Bonferroni over its
/// comparisons, at [`FALSE_FAILURE_RATE`] per test.
fn critical(runs: &[(Family, Definition)]) -> f64 {
    let comparisons = shapes()
        .iter()
        .map(|&(s, scale, _)| s.build(11, scale).unwrap().level_names.len())
        .sum::<usize>()
        * runs.len();
    student::critical(FALSE_FAILURE_RATE / comparisons as f64, (TRIALS - 1) as f64)
}

/// Runs every shape with `runs` and fails on any level beyond the critical t.
fn no_level_is_worse(runs: &[(Family, Definition)]) {
    let critical = critical(runs);
    let outcomes = run_all(true, None, runs);
    let failed: Vec<String> = outcomes
        .iter()
        .filter(|o| o.t > critical)
        .map(|o| format!("{} (t = {:.1})", o.label, o.t))
        .collect();
    let mut sorted: Vec<&Outcome> = outcomes.iter().collect();
    sorted.sort_by(|a, b| b.t.total_cmp(&a.t));
    eprintln!(
        "{} comparisons, critical t {critical:.2}; the five closest to failing:",
        outcomes.len()
    );
    for o in sorted.iter().take(5) {
        eprintln!(
            "  {}: independent {:.2}, consistent {:.2} (t = {:.2})",
            o.label, o.independent, o.consistent, o.t
        );
    }
    assert!(
        failed.is_empty(),
        "worse than their own measurement beyond noise (critical t = {critical:.2}): {failed:?}"
    );
}

#[test]
fn no_level_is_worse_than_its_own_measurement() {
    no_level_is_worse(&PURE_RUNS);
}

#[test]
fn no_level_is_worse_than_its_own_measurement_under_zcdp() {
    no_level_is_worse(&ZCDP_RUNS);
}

/// The unchecked combination fails the pure test on the group-quarters shape. (Under
/// zCDP the same case reaches t = 6.2 at the nation against the zCDP test's critical
/// 6.23: borderline at 12 trials, so it is not asserted here.)
#[test]
fn the_test_catches_the_unchecked_combination() {
    let critical = critical(&PURE_RUNS);
    let outcomes = run_all(false, Some(Shape::GroupQuarters), &PURE_RUNS[..1]);
    assert!(
        outcomes.iter().any(|o| o.t > critical),
        "the unchecked combination should fail somewhere (critical t = {critical:.2}): {:?}",
        outcomes
            .iter()
            .map(|o| format!("{} t = {:.1}", o.label, o.t))
            .collect::<Vec<_>>()
    );
}

/// Where most groups are large (the dense shape, taxi-like): the default plan's tails
/// never run out (no saturation in any trial), and its consistent release is within 2×
/// of plain `hc`'s at every level.
#[test]
fn the_default_plan_never_saturates_on_dense_sizes_and_keeps_up_with_plain_hc() {
    let d = Shape::Dense.build(11, 0.5).unwrap().to_dataset().unwrap();
    let h = &d.hierarchy;
    let truth = d.truth().for_diagnostic(Diagnostic::Preview);
    let mean_errors = |p: &ReleasePlan| {
        let mut out = vec![0.0; h.depth()];
        for t in 0..TRIALS {
            let source = NoiseSource::seeded(900 + t as u64);
            let est = run::estimate_plan(&d, p, &source, &Default::default()).unwrap();
            assert!(
                run::saturated_tails(h, p, &est.estimates).is_empty(),
                "a saturated tail in trial {t}"
            );
            let r = consistency::make_consistent(
                p.consistency(),
                h,
                &est.estimates,
                d.public().groups,
                est.max_size,
                &p.consistency_options(),
            )
            .unwrap();
            for l in h.levels() {
                let total: u128 = h
                    .level_range(l)
                    .map(|i| u128::from(emd(r.histograms.hist(i as usize), truth.node(NodeId(i)))))
                    .sum();
                out[l.0] += total as f64 / h.level_len(l) as f64 / TRIALS as f64;
            }
        }
        out
    };
    let default = mean_errors(&plan(&d, (Family::Default, Definition::Pure), 10_000));
    let hc = mean_errors(&plan(&d, (Family::Hc, Definition::Pure), 10_000));
    for (l, (a, b)) in default.iter().zip(&hc).enumerate() {
        assert!(
            a <= &(2.0 * b),
            "level {l}: default {a:.1} against plain hc {b:.1}"
        );
    }
}
