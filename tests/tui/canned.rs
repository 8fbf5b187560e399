//! Canned results for the layout scan (`tui_fit`): what a preview, a sweep and a
//! frontier search return, built from the job the screen started (its dataset, plan
//! and trials) without running it. The scan checks how the screens show results, not
//! the results; the real runs are in `tui_flow` and `tui_snapshots`. The figures are
//! sized from the data (an error of a few hundredths of a region's groups, with a
//! spread), so a dataset of millions of groups shows numbers as wide as a real run's.

use coco::data::{Dataset, LevelId, NodeId};
use coco::preview::{
    CONFIDENTIAL_NOTICE, Coverage, LevelDiagnostics, OwnWeight, PreviewReport, Stat,
    TrialHistograms, VariantStat,
};
use coco::privacy::Diagnostic;
use coco::release::plan::{MaxSize, ReleasePlan};
use coco::tradeoff::Amount as Epsilon;
use coco::tradeoff::{
    AllocationPoint, Candidate, Frontier, PreviewData, Recommendation, SWEEP_FACTORS,
};
use coco::tui::worker::{Job, JobKind, Update, WorkerEvent};
use coco::wire::Named;

/// The event a preview, sweep or frontier job would send, made from the job's inputs
/// ([`coco::tui::runtime::Runtime::answer_with`]); other jobs run.
pub fn answer(job: &Job) -> Option<WorkerEvent> {
    result(job).map(|(kind, update)| WorkerEvent { kind, update })
}

fn result(job: &Job) -> Option<(JobKind, Update)> {
    Some(match job {
        Job::Preview {
            dataset,
            plan,
            options,
        } => (
            JobKind::Preview,
            Update::Previewed(Ok(Box::new(preview(dataset, plan, options.trials)))),
        ),
        Job::Sweep {
            dataset,
            plan,
            level,
            trials,
            ..
        } => (
            JobKind::Sweep,
            Update::Swept(Ok(sweep(dataset, plan, *level, *trials))),
        ),
        Job::Frontier {
            dataset,
            data,
            plan,
            trials,
            ..
        } => (
            JobKind::Frontier,
            Update::Frontier(Ok(Box::new(frontier(dataset, data, plan, *trials)))),
        ),
        _ => return None,
    })
}

/// The mean number of groups of a level's regions.
fn groups_per_region(d: &Dataset, level: usize) -> f64 {
    let h = &d.hierarchy;
    let (mut sum, mut n) = (0f64, 0f64);
    for i in 0..h.len() {
        let id = NodeId(i as u32);
        if h.node(id).level.0 == level {
            sum += d.groups(id) as f64;
            n += 1.0;
        }
    }
    sum / n.max(1.0)
}

/// An error figure for a level: `share` of its regions' groups, with a spread.
fn stat(d: &Dataset, level: usize, share: f64, trials: usize) -> Stat {
    let mean = 1.0 + share * groups_per_region(d, level);
    Stat {
        mean,
        se: mean / 17.0,
        trials,
    }
}

fn preview(d: &Dataset, plan: &ReleasePlan, trials: usize) -> PreviewReport {
    let h = &d.hierarchy;
    let leaf = h.depth() - 1;
    let levels = plan
        .levels()
        .iter()
        .enumerate()
        .map(|(l, lp)| LevelDiagnostics {
            level: lp.name().to_string(),
            nodes: h.level_nodes(LevelId(l)).len(),
            budget: lp.budget().clone(),
            method: lp.method().label(),
            independent: Some(stat(d, l, 0.031, trials)),
            consistent: vec![VariantStat {
                variant: plan.consistency().name().to_string(),
                emd: stat(d, l, 0.024, trials),
            }],
            bottom_up: stat(d, l, 0.047, trials),
            omniscient: Some(1.0 + 0.012 * groups_per_region(d, l)),
            mae_per_cell: Some(Stat {
                mean: 1.25 + 0.5 * l as f64,
                se: 0.0625,
                trials,
            }),
            relative_error: Some(Stat {
                mean: 0.0125 * (l + 1) as f64,
                se: 0.00125,
                trials,
            }),
            own_weight: (l < leaf).then_some(OwnWeight {
                own: 0.8912,
                model: 0.7634,
            }),
            coverage: Some(Coverage {
                confidence: 0.9,
                share: Stat {
                    mean: 0.9312,
                    se: 0.0123,
                    trials,
                },
                mean_width: 8.25,
                mean_error: 2.125,
                replicates: 32,
            }),
        })
        .collect();
    let truth = d.truth().for_diagnostic(Diagnostic::Oracle).all().clone();
    PreviewReport {
        notice: CONFIDENTIAL_NOTICE.to_string(),
        dataset: d.name(),
        total_epsilon: plan.total_epsilon(),
        total: plan.total(),
        max_size: match *plan.max_size() {
            MaxSize::Fixed(k) => k,
            _ => 10_000,
        },
        max_size_estimated: !matches!(plan.max_size(), MaxSize::Fixed(_)),
        trials,
        randomness: "seeded (canned)".to_string(),
        levels,
        notes: Vec::new(),
        last_trial: Some(TrialHistograms {
            independent: truth.clone(),
            consistent: truth.clone(),
            bottom_up: truth,
        }),
    }
}

/// Every level's error at a budget, worse as the level's ε shrinks.
fn errors(d: &Dataset, depth: usize, scale: f64, trials: usize) -> Vec<Stat> {
    (0..depth)
        .map(|l| stat(d, l, 0.024 * scale, trials))
        .collect()
}

fn sweep(d: &Dataset, plan: &ReleasePlan, level: LevelId, trials: usize) -> Vec<AllocationPoint> {
    let budgets: Vec<Epsilon> = plan
        .levels()
        .iter()
        .map(|l| l.loss().unwrap().amount())
        .collect();
    SWEEP_FACTORS
        .iter()
        .map(|&(n, den)| {
            let mut b = budgets.clone();
            b[level.0] = b[level.0].mul_ratio(n, den).expect("a factor of a budget");
            AllocationPoint {
                x: b[level.0].to_f64(),
                budgets: b.into_iter().map(Some).collect(),
                consistent: errors(d, budgets.len(), den as f64 / n as f64, trials),
            }
        })
        .collect()
}

/// Budgets with the leaves' share `k`/10 of `total`, the rest split evenly above.
fn split(total: &Epsilon, depth: usize, k: u64) -> Vec<Epsilon> {
    let above = (depth as u64 - 1).max(1);
    let mut b = vec![total.mul_ratio(10 - k, 10 * above).expect("a share"); depth];
    b[depth - 1] = total.mul_ratio(k, 10).expect("a share");
    b
}

fn frontier(d: &Dataset, data: &PreviewData, plan: &ReleasePlan, trials: usize) -> Frontier {
    let depth = plan.levels().len();
    let total = plan.total().expect("a plan with a budget").amount();
    let methods: Vec<String> = plan
        .levels()
        .iter()
        .map(|l| coco::tradeoff::method_text(l.method()))
        .collect();
    let mut candidates: Vec<Candidate> = (1..=9u64)
        .step_by(2)
        .map(|k| {
            let budgets = split(&total, depth, k);
            let mut p = plan.clone();
            for (l, e) in budgets.iter().enumerate() {
                p.set_budget(LevelId(l), coco::privacy::Loss::of(p.definition(), e))
                    .expect("a budget");
            }
            Candidate {
                x: k as f64 / 10.0,
                budgets: budgets.into_iter().map(Some).collect(),
                methods: methods.clone(),
                consistent: errors(d, depth, 1.0 + (k as f64 - 5.0).abs() / 4.0, trials),
                independent: errors(d, depth, 1.3, trials)
                    .into_iter()
                    .map(Some)
                    .collect(),
                mae_per_cell: vec![None; depth],
                relative_error: vec![None; depth],
                trials,
                origin: format!("the plan's methods at {}% on the leaves", k * 10),
                plan: p,
            }
        })
        .collect();
    candidates.push(Candidate {
        x: 0.5,
        budgets: plan
            .levels()
            .iter()
            .map(|l| l.loss().map(|b| b.amount()))
            .collect(),
        methods: methods.clone(),
        consistent: errors(d, depth, 1.1, trials),
        independent: errors(d, depth, 1.3, trials)
            .into_iter()
            .map(Some)
            .collect(),
        mae_per_cell: vec![None; depth],
        relative_error: vec![None; depth],
        trials,
        origin: "current plan".to_string(),
        plan: plan.clone(),
    });
    let points: Vec<AllocationPoint> = candidates[..5]
        .iter()
        .map(|c| AllocationPoint {
            budgets: c.budgets.clone(),
            x: c.x,
            consistent: c.consistent.clone(),
        })
        .collect();
    let best = &candidates[2];
    let recommendation = Recommendation {
        candidate: 2,
        x: best.x,
        budgets: best.budgets.clone(),
        methods: best.methods.clone(),
        consistent: best.consistent.clone(),
        mae_per_cell: vec![None; depth],
        relative_error: vec![None; depth],
        ratios: vec![0.4123; depth],
        ratio_se: vec![0.0312; depth],
        is_current: false,
        reason: "better than bottom-up at every level above the leaves, by more than two standard errors".to_string(),
        plan: best.plan.clone(),
    };
    Frontier {
        notice: data.notice(),
        data: data.clone(),
        total_epsilon: total,
        levels: plan.levels().iter().map(|l| l.name().to_string()).collect(),
        held: plan.levels().iter().map(|l| l.held()).collect(),
        points,
        point_candidates: (0..5).collect(),
        candidates,
        current: Some(5),
        bottom_up: errors(d, depth, 2.4, trials),
        bottom_up_method: methods[depth - 1].clone(),
        bottom_up_variants: vec![
            (methods[depth - 1].clone(), errors(d, depth, 2.4, trials)),
            ("hg".to_string(), errors(d, depth, 2.9, trials)),
        ],
        trials,
        recommendation: Some(recommendation),
        verdict: None,
    }
}
