//! What budget buys: sweeps over allocations, the accuracy frontier, and a
//! recommendation. CONFIDENTIAL, like every preview.
//!
//! * [`sweep_level`]: the mean error of every level as one level's ε is scaled up and
//!   down with the others fixed (the TUI's Trade-off screen).
//! * [`frontier`]: for a fixed total ε, the per-level error of the consistent release
//!   as the leaves' share of the total grows (the rest split evenly over the upper
//!   levels), beside the bottom-up baseline that spends everything on the leaves.
//!   No allocation beats bottom-up at every level (leaves measured with less than all
//!   of ε are noisier), so the operator's real choice is a point on this frontier.
//! * [`recommend`]: the point that best meets the operator's priorities: weights per
//!   level on the error relative to bottom-up, or "no level worse than X× bottom-up".

use std::sync::atomic::AtomicBool;

use serde::Serialize;

use crate::data::{Dataset, LevelId};
use crate::preview::{self, PreviewError, PreviewOptions, PreviewProgress, Stat};
use crate::privacy::Epsilon;
use crate::release::plan::ReleasePlan;

/// One point of a sweep or frontier.
#[derive(Clone, Debug, Serialize)]
pub struct AllocationPoint {
    /// The budget of each level, root first.
    pub budgets: Vec<String>,
    /// What is varied: the swept level's ε, or the leaves' share of the total.
    pub x: f64,
    /// Mean per-node EMD of the consistent release, per level.
    pub consistent: Vec<Stat>,
}

/// Progress of a sweep: which point, and the preview's own progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepProgress {
    pub point: usize,
    pub points: usize,
    pub trial: PreviewProgress,
}

/// How many trials each point gets, their seed, and a flag that cancels the run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Trials<'a> {
    pub trials: usize,
    /// A seed makes the points reproducible and directly comparable (same noise keys).
    pub seed: Option<u64>,
    pub cancel: Option<&'a AtomicBool>,
}

fn run_point(
    dataset: &Dataset,
    plan: &ReleasePlan,
    run: &Trials<'_>,
    progress: &(dyn Fn(PreviewProgress) + Sync),
) -> Result<Vec<Stat>, PreviewError> {
    let Trials {
        trials,
        seed,
        cancel,
    } = *run;
    let options = PreviewOptions {
        trials,
        seed,
        compare: false,
        keep_last_trial: false,
        bottom_up: false,
    };
    let report = preview::preview(dataset, plan, &options, cancel, progress)?;
    Ok(report.levels.iter().map(|l| l.consistent[0].emd).collect())
}

/// The default multipliers of a level sweep: ¼× to 4× the current budget.
pub const SWEEP_FACTORS: [(u64, u64); 8] = [
    (1, 4),
    (1, 2),
    (3, 4),
    (1, 1),
    (3, 2),
    (2, 1),
    (3, 1),
    (4, 1),
];

/// Scales `level`'s ε by each factor (others fixed) and measures every level's error.
pub fn sweep_level(
    dataset: &Dataset,
    plan: &ReleasePlan,
    level: LevelId,
    factors: &[(u64, u64)],
    run: &Trials<'_>,
    progress: &(dyn Fn(SweepProgress) + Sync),
) -> Result<Vec<AllocationPoint>, PreviewError> {
    let mut points = Vec::with_capacity(factors.len());
    for (i, &(n, d)) in factors.iter().enumerate() {
        let mut p = plan.clone();
        let eps = p.levels()[level.0]
            .epsilon()
            .mul_ratio(n, d)
            .expect("positive factor");
        p.set_epsilon(level, eps.clone())?;
        let consistent = run_point(dataset, &p, run, &|t| {
            progress(SweepProgress {
                point: i,
                points: factors.len(),
                trial: t,
            })
        })?;
        points.push(AllocationPoint {
            budgets: p.levels().iter().map(|l| l.epsilon().to_string()).collect(),
            x: eps.to_f64(),
            consistent,
        });
    }
    Ok(points)
}

/// The leaves' default shares of the total in a frontier.
pub fn default_shares(levels: usize) -> Vec<Epsilon> {
    let uniform = Epsilon::from_ratio(1, levels as u64).expect("levels > 0");
    let mut out = vec![uniform.clone()];
    for (n, d) in [(1u64, 2u64), (2, 3), (4, 5), (9, 10)] {
        let s = Epsilon::from_ratio(n, d).expect("positive");
        if s > uniform {
            out.push(s);
        }
    }
    out
}

/// Budgets with the leaves' share `share` of `total` and the rest split evenly over
/// the upper levels (all of it on the single level of a one-level hierarchy).
pub fn budgets_with_leaf_share(total: &Epsilon, levels: usize, share: &Epsilon) -> Vec<Epsilon> {
    if levels == 1 {
        return vec![total.clone()];
    }
    let split = |leaves: Epsilon| {
        let rest = total
            .checked_sub(&leaves)
            .expect("a share below 1 leaves a positive rest");
        let mut budgets = crate::release::plan::allocate(
            &rest,
            levels - 1,
            crate::release::plan::Allocation::Uniform,
        );
        budgets.push(leaves);
        budgets
    };
    // Exact when the fractions stay small enough for noise; else readable decimals.
    let exact = split(total.mul_big(share));
    if exact.iter().all(Epsilon::within_text_bounds) {
        return exact;
    }
    split(total.mul_big(share).round_down_significant(6))
}

/// The frontier at a fixed total, and the bottom-up baseline.
#[derive(Clone, Debug, Serialize)]
pub struct Frontier {
    pub notice: &'static str,
    pub total_epsilon: String,
    pub levels: Vec<String>,
    pub points: Vec<AllocationPoint>,
    /// Mean per-node EMD of bottom-up (everything on the leaves), per level.
    pub bottom_up: Vec<Stat>,
    pub trials: usize,
    pub recommendation: Option<Recommendation>,
}

/// Computes the frontier for the plan's methods, `K` and consistency step.
pub fn frontier(
    dataset: &Dataset,
    plan: &ReleasePlan,
    total: &Epsilon,
    shares: &[Epsilon],
    run: &Trials<'_>,
    progress: &(dyn Fn(SweepProgress) + Sync),
) -> Result<Frontier, PreviewError> {
    let Trials {
        trials,
        seed,
        cancel,
    } = *run;
    let h = &dataset.hierarchy;
    let points_total = shares.len() + 1;
    let mut points = Vec::with_capacity(shares.len());
    for (i, share) in shares.iter().enumerate() {
        let mut p = plan.clone();
        p.set_budgets(budgets_with_leaf_share(total, h.depth(), share))?;
        let consistent = run_point(dataset, &p, run, &|t| {
            progress(SweepProgress {
                point: i,
                points: points_total,
                trial: t,
            })
        })?;
        points.push(AllocationPoint {
            budgets: p.levels().iter().map(|l| l.epsilon().to_string()).collect(),
            x: share.to_f64(),
            consistent,
        });
    }
    // Bottom-up at the same total: the plan with these budgets draws it alongside.
    let mut p = plan.clone();
    p.set_budgets(budgets_with_leaf_share(total, h.depth(), &shares[0]))?;
    let options = PreviewOptions {
        trials,
        seed,
        compare: false,
        keep_last_trial: false,
        bottom_up: true,
    };
    let report = preview::preview(dataset, &p, &options, cancel, &|t| {
        progress(SweepProgress {
            point: points_total - 1,
            points: points_total,
            trial: t,
        })
    })?;
    Ok(Frontier {
        notice: preview::CONFIDENTIAL_NOTICE,
        total_epsilon: total.to_string(),
        levels: h.level_names().to_vec(),
        points,
        bottom_up: report.levels.iter().map(|l| l.bottom_up).collect(),
        trials,
        recommendation: None,
    })
}

/// What the operator cares about.
#[derive(Clone, Debug, PartialEq)]
pub enum Priority {
    /// Minimise Σ w_l × (error_l / bottom-up error_l): weights per level, root first.
    Weights(Vec<f64>),
    /// Among points where every level's error is at most `x` × bottom-up's, the one
    /// with the smallest mean ratio.
    MaxRatio(f64),
}

#[derive(Clone, Debug, Serialize)]
pub struct Recommendation {
    /// Index into [`Frontier::points`].
    pub point: usize,
    pub budgets: Vec<String>,
    /// Error relative to bottom-up, per level.
    pub ratios: Vec<f64>,
    pub reason: String,
}

/// Error / bottom-up error per level (1 where bottom-up is exact).
fn ratios(point: &AllocationPoint, bottom_up: &[Stat]) -> Vec<f64> {
    point
        .consistent
        .iter()
        .zip(bottom_up)
        .map(|(c, b)| {
            if b.mean > 0.0 {
                c.mean / b.mean
            } else if c.mean > 0.0 {
                f64::INFINITY
            } else {
                1.0
            }
        })
        .collect()
}

/// Picks the frontier point that best meets `priority`.
pub fn recommend(frontier: &Frontier, priority: &Priority) -> Option<Recommendation> {
    let scored: Vec<(usize, Vec<f64>)> = frontier
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| (i, ratios(p, &frontier.bottom_up)))
        .collect();
    let mean = |r: &[f64]| r.iter().sum::<f64>() / r.len().max(1) as f64;
    let (best, reason) = match priority {
        Priority::Weights(w) => {
            let score = |r: &[f64]| {
                r.iter()
                    .zip(w.iter().chain(std::iter::repeat(&1.0)))
                    .map(|(x, w)| x * w)
                    .sum::<f64>()
            };
            let best = scored
                .iter()
                .min_by(|a, b| score(&a.1).total_cmp(&score(&b.1)))?;
            (
                best,
                format!("smallest weighted error relative to bottom-up (weights {w:?})"),
            )
        }
        Priority::MaxRatio(x) => {
            let ok: Vec<&(usize, Vec<f64>)> = scored
                .iter()
                .filter(|(_, r)| r.iter().all(|v| *v <= *x))
                .collect();
            match ok
                .into_iter()
                .min_by(|a, b| mean(&a.1).total_cmp(&mean(&b.1)))
            {
                Some(best) => (
                    best,
                    format!("every level within {x}× bottom-up, smallest mean ratio"),
                ),
                None => {
                    let best = scored.iter().min_by(|a, b| {
                        let worst = |r: &[f64]| r.iter().copied().fold(0.0, f64::max);
                        worst(&a.1).total_cmp(&worst(&b.1))
                    })?;
                    (
                        best,
                        format!(
                            "no allocation keeps every level within {x}× bottom-up; this one has the smallest worst ratio"
                        ),
                    )
                }
            }
        }
    };
    let point = &frontier.points[best.0];
    Some(Recommendation {
        point: best.0,
        budgets: point.budgets.clone(),
        ratios: best.1.clone(),
        reason,
    })
}

/// The frontier as a terminal table.
pub fn render_text(f: &Frontier) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "{}\n", f.notice);
    let _ = writeln!(
        s,
        "frontier at total ε = {} ({} trial(s) per point): mean per-node EMD per level\n",
        preview::short_epsilon(&f.total_epsilon),
        f.trials
    );
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header = vec!["leaf share".to_string(), "budgets (root first)".into()];
    header.extend(f.levels.iter().cloned());
    rows.push(header);
    for (i, p) in f.points.iter().enumerate() {
        let marker = if f.recommendation.as_ref().is_some_and(|r| r.point == i) {
            " *"
        } else {
            ""
        };
        let mut row = vec![
            format!("{:.0}%{marker}", p.x * 100.0),
            p.budgets
                .iter()
                .map(|b| preview::short_epsilon(b))
                .collect::<Vec<_>>()
                .join(" / "),
        ];
        row.extend(
            p.consistent
                .iter()
                .map(|c| format!("{} ± {}", preview::fmt_num(c.mean), preview::fmt_num(c.se))),
        );
        rows.push(row);
    }
    let mut bu = vec![
        "bottom-up".to_string(),
        format!("0 / … / {}", preview::short_epsilon(&f.total_epsilon)),
    ];
    bu.extend(
        f.bottom_up
            .iter()
            .map(|c| format!("{} ± {}", preview::fmt_num(c.mean), preview::fmt_num(c.se))),
    );
    rows.push(bu);
    s.push_str(&preview::text_table(&rows, |c| c < 2));
    if let Some(r) = &f.recommendation {
        let ratios: Vec<String> = r.ratios.iter().map(|x| format!("{x:.2}×")).collect();
        let _ = writeln!(
            s,
            "\nrecommended (*): budgets {} — {}; error vs bottom-up per level: {}",
            r.budgets.join(" / "),
            r.reason,
            ratios.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(s: &str) -> Epsilon {
        Epsilon::parse(s).unwrap()
    }

    #[test]
    fn leaf_shares_sum_to_total() {
        let b = budgets_with_leaf_share(&e("1"), 3, &e("0.8"));
        assert_eq!(
            b.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
            ["0.1", "0.1", "0.8"]
        );
        assert_eq!(Epsilon::sum(&b).unwrap(), e("1"));
        let b = budgets_with_leaf_share(&e("1/3"), 3, &e("1/3"));
        assert_eq!(Epsilon::sum(&b).unwrap(), e("1/3"));
        assert_eq!(b, vec![e("1/9"); 3]);
        let b = budgets_with_leaf_share(&e("0.7"), 4, &e("1/3"));
        assert_eq!(b, vec![e("7/45"), e("7/45"), e("7/45"), e("7/30")]);
        assert_eq!(budgets_with_leaf_share(&e("2"), 1, &e("1/2")), vec![e("2")]);
        assert_eq!(default_shares(3).len(), 5);
    }

    fn point(x: f64, means: &[f64]) -> AllocationPoint {
        AllocationPoint {
            budgets: vec![],
            x,
            consistent: means.iter().map(|&m| Stat { mean: m, se: 0.0 }).collect(),
        }
    }

    #[test]
    fn recommendations() {
        let f = Frontier {
            notice: "",
            total_epsilon: "1".into(),
            levels: vec!["a".into(), "b".into()],
            points: vec![
                point(0.5, &[50.0, 30.0]),
                point(0.8, &[80.0, 12.0]),
                point(0.9, &[96.0, 10.5]),
            ],
            bottom_up: vec![
                Stat {
                    mean: 100.0,
                    se: 0.0,
                },
                Stat {
                    mean: 10.0,
                    se: 0.0,
                },
            ],
            trials: 1,
            recommendation: None,
        };
        assert_eq!(
            recommend(&f, &Priority::Weights(vec![1.0, 1.0]))
                .unwrap()
                .point,
            1
        );
        assert_eq!(
            recommend(&f, &Priority::Weights(vec![10.0, 1.0]))
                .unwrap()
                .point,
            0
        );
        assert_eq!(recommend(&f, &Priority::MaxRatio(1.25)).unwrap().point, 1);
        let none = recommend(&f, &Priority::MaxRatio(1.01)).unwrap();
        assert_eq!(none.point, 2);
        assert!(none.reason.starts_with("no allocation"));
    }
}
