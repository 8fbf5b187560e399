//! What budget buys: sweeps over allocations, a search over plans, and a
//! recommendation. CONFIDENTIAL when run on the confidential data, like every preview;
//! public when run on a proxy ([`crate::proxy`]).
//!
//! * [`sweep_level`]: the mean error of every level as one level's ε is scaled up and
//!   down with the others fixed (the TUI's Trade-off screen).
//! * [`frontier`]: for a fixed total ε, the per-level error of the consistent release
//!   as the leaves' share of the total grows (the rest split evenly over the upper
//!   levels), beside the bottom-up baseline that spends everything on the leaves; and
//!   a search over each level's method ([`FAMILIES`]: `hc`, tails, `hg`, and each
//!   level's best by its independent error) at every share. No allocation beats
//!   bottom-up at every level (leaves measured with less than all of ε are noisier),
//!   so the operator's real choice is among the plans bottom-up does not dominate.
//! * [`recommend`]: among the plans no other plan tried dominates and that beat every
//!   bottom-up variant at some level by more than [`MARGIN_SE`] standard errors, the
//!   one that best meets the operator's priorities: weights per level on the error
//!   relative to bottom-up, or "no level worse than X× bottom-up". Ratios come with
//!   their standard errors.

use std::sync::atomic::AtomicBool;

use serde::Serialize;

use crate::data::{Dataset, LevelId};
use crate::estimate::{Method, Tail};
use crate::histogram::Size;
use crate::preview::{self, PreviewError, PreviewOptions, PreviewProgress, Stat};
use crate::privacy::{Loss, Share};

/// A budget's value in the plan's own measure: an ε for a pure plan, a ρ for a zCDP
/// plan. The search splits and scales values; the plan gives them their measure
/// ([`Loss::of`]), so a search never mixes the two.
pub type Amount = crate::privacy::Ratio;
use crate::release::plan::tuning::{Tuning, TuningSource};
use crate::release::plan::{LevelBudget, ReleasePlan};

/// One point of a sweep or frontier.
#[derive(Clone, Debug, Serialize)]
pub struct AllocationPoint {
    /// The budget of each level, root first (`None`, `null` in JSON: the level is left
    /// unmeasured, see [`crate::release::plan::LevelBudget`]).
    pub budgets: Vec<Option<Amount>>,
    /// What is varied: the swept level's ε, or the leaves' share of the total.
    pub x: f64,
    /// Mean per-node EMD of the consistent release, per level.
    pub consistent: Vec<Stat>,
}

/// Progress of a sweep or a search: which point (plan) of its round, the preview's own
/// progress, and the trials done of all the run will take as far as known (a search
/// learns after its first round how many plans need the rest of their trials:
/// [`FIRST_ROUND`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepProgress {
    pub point: usize,
    pub points: usize,
    pub trial: PreviewProgress,
    pub trials_done: usize,
    pub trials_total: usize,
    /// 1, or 2 for a search's second round.
    pub round: usize,
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
        coverage: None,
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
    let Some(current) = plan.levels()[level.0].loss().map(Loss::amount) else {
        return Err(PreviewError::SweepUnmeasured {
            level: plan.levels()[level.0].name().to_string(),
        });
    };
    for (i, &(n, d)) in factors.iter().enumerate() {
        let mut p = plan.clone();
        let eps = current.mul_ratio(n, d).expect("positive factor");
        p.set_budget(level, Loss::of(p.definition(), &eps))?;
        let consistent = run_point(dataset, &p, run, &|t| {
            progress(SweepProgress {
                point: i,
                points: factors.len(),
                trial: t,
                trials_done: i * t.trials + t.trial,
                trials_total: factors.len() * t.trials,
                round: 1,
            })
        })?;
        points.push(AllocationPoint {
            budgets: level_amounts(&p),
            x: eps.to_f64(),
            consistent,
        });
    }
    Ok(points)
}

/// Each level's budget as a search shows it: its amount, `None` when unmeasured.
pub fn level_amounts(plan: &ReleasePlan) -> Vec<Option<Amount>> {
    plan.levels()
        .iter()
        .map(|l| l.loss().map(Loss::amount))
        .collect()
}

/// The plans that leave levels unmeasured, which the search tries beside the shares:
/// bottom-up (all of `total` on the leaves, every level above unmeasured), and for each
/// level strictly between the root and the leaves, `total` split evenly over the other
/// levels with that one unmeasured (its regions estimated from their children). Each
/// with its name; none for a hierarchy of one level (its only level is the leaves), and
/// no skipped level for one of two.
pub fn unmeasured_budgets(
    total: &Amount,
    level_names: &[String],
) -> Vec<(String, Vec<Option<Amount>>)> {
    let depth = level_names.len();
    if depth < 2 {
        return Vec::new();
    }
    let mut bottom_up = vec![None; depth];
    bottom_up[depth - 1] = Some(total.clone());
    let mut out = vec![(
        "bottom-up (levels above the leaves unmeasured)".to_string(),
        bottom_up,
    )];
    for (skip, name) in level_names.iter().enumerate().take(depth - 1).skip(1) {
        let mut shares = crate::release::plan::allocate(
            total,
            depth - 1,
            crate::release::plan::Allocation::Uniform,
        )
        .into_iter();
        let budgets = (0..depth)
            .map(|l| if l == skip { None } else { shares.next() })
            .collect();
        out.push((format!("{name} unmeasured"), budgets));
    }
    out
}

/// The leaves' default shares of the total in a frontier.
pub fn default_shares(levels: usize) -> Vec<Share> {
    let uniform = Share::from_ratio(1, levels as u64).expect("levels > 0");
    let mut out = vec![uniform.clone()];
    for (n, d) in [(1u64, 2u64), (2, 3), (4, 5), (9, 10)] {
        let s = Share::from_ratio(n, d).expect("positive");
        if s > uniform {
            out.push(s);
        }
    }
    out
}

/// Budgets with the leaves' share `share` of `total` and the rest split evenly over
/// the upper levels (all of it on the single level of a one-level hierarchy).
pub fn budgets_with_leaf_share(total: &Amount, levels: usize, share: &Share) -> Vec<Amount> {
    if levels == 1 {
        return vec![total.clone()];
    }
    let split = |leaves: Amount| {
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
    let exact = split(total.scaled(share));
    if exact.iter().all(Amount::within_text_bounds) {
        return exact;
    }
    split(total.scaled(share).round_down_significant(6))
}

/// The budgets of a search's plan at the leaves' `share`: [`budgets_with_leaf_share`]
/// of `total`, or, where levels are `held` (the operator's, [`ReleasePlan::set_held`]),
/// each held level's `current` budget kept and the levels not held sharing the rest as
/// [`budgets_with_leaf_share`] shares a total (evenly, when the leaves are held).
/// Fails when the held budgets leave nothing for the others.
pub fn budgets_keeping_held(
    total: &Amount,
    share: &Share,
    held: &[bool],
    current: &[Option<Amount>],
) -> Result<Vec<Option<Amount>>, PreviewError> {
    let depth = held.len();
    if !held.iter().any(|&h| h) {
        return Ok(budgets_with_leaf_share(total, depth, share)
            .into_iter()
            .map(Some)
            .collect());
    }
    let kept = Amount::sum(
        held.iter()
            .zip(current)
            .filter(|(h, _)| **h)
            .filter_map(|(_, b)| b.as_ref()),
    );
    let free = held.iter().filter(|&&h| !h).count();
    let rest = match &kept {
        Some(k) => total.checked_sub(k),
        None => Some(total.clone()),
    }
    .filter(|_| free > 0)
    .ok_or_else(|| PreviewError::HeldTooMuch {
        held: kept.as_ref().map_or(0.0, Amount::to_f64),
        total: total.to_f64(),
    })?;
    let mut shared = if held[depth - 1] {
        crate::release::plan::allocate(&rest, free, crate::release::plan::Allocation::Uniform)
    } else {
        budgets_with_leaf_share(&rest, free, share)
    }
    .into_iter();
    Ok(held
        .iter()
        .zip(current)
        .map(|(&h, b)| if h { b.clone() } else { shared.next() })
        .collect())
}

/// A way to measure every level, instantiated per level from public figures (the
/// level's regions, their `G` and `K`) by [`Family::methods`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// The plan's own methods.
    Current,
    Hc,
    /// `hg` at the levels where it draws no more noise values than `hc` would
    /// ([`LevelGroups::hg_pays`]), `hc` at the others.
    Hg,
    /// `hc` with a tail from `above` (groups of size `above` or more listed), each region's list sized from its own noisy head
    /// (as [`crate::release::plan::defaults::default_tail`]).
    Tail {
        above: Size,
    },
}

/// The families the search tries besides the plan's own: plain `hc`, `hg`, and two
/// tails sized from each region's head (L = 20 and 10).
pub const FAMILIES: [Family; 4] = [
    Family::Tail { above: 20 },
    Family::Tail { above: 10 },
    Family::Hc,
    Family::Hg,
];

/// A level's public group counts, as the search reads them: how many regions, and
/// the sum of their `G`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LevelGroups {
    pub regions: u64,
    pub groups: u64,
}

impl LevelGroups {
    /// Each level's regions and groups, root first.
    pub fn of(dataset: &Dataset) -> Vec<LevelGroups> {
        let h = &dataset.hierarchy;
        h.levels()
            .map(|l| {
                h.level_nodes(l)
                    .fold(LevelGroups::default(), |a, id| LevelGroups {
                        regions: a.regions + 1,
                        groups: a.groups.saturating_add(dataset.groups(id)),
                    })
            })
            .collect()
    }

    /// Whether `hg` draws no more noise values at this level than `hc` under the bound
    /// `k`: one per group against `K + 1` per region. Where it would draw more, its
    /// error is larger too (each group's noisy size against `hc`'s `K + 1` cumulative
    /// counts), and it would make the search as slow as the level is large: `hg` on
    /// `us-counties`' 122 million households per level took 23 s a trial where the
    /// other families take about 1 s (`docs/performance.md`, "The search"). An
    /// unbounded `K` leaves `hg` everywhere.
    pub fn hg_pays(self, k: Option<Size>) -> bool {
        match k {
            Some(k) => self.groups <= self.regions.saturating_mul(u64::from(k) + 1),
            None => true,
        }
    }
}

impl Family {
    /// Each level's method under `plan`'s `K`, from the levels' public group counts.
    pub fn methods(self, plan: &ReleasePlan, levels: &[LevelGroups]) -> Vec<Method> {
        let k = plan.max_size().bound();
        levels
            .iter()
            .zip(plan.levels())
            .map(|(&level, lp)| match self {
                Family::Current => lp.method(),
                Family::Hc => Method::Hc,
                Family::Hg if level.hg_pays(k) => Method::Hg,
                Family::Hg => Method::Hc,
                Family::Tail { above } => Method::HcTail(
                    Tail {
                        above,
                        ..crate::release::plan::defaults::default_tail(k)
                    }
                    .below(k),
                ),
            })
            .collect()
    }

    /// What the search calls this family's plan with `methods` ("hg everywhere", or
    /// "hg where it pays, hc above" when [`LevelGroups::hg_pays`] replaced some).
    fn name(self, methods: &[Method]) -> String {
        let first = methods
            .first()
            .map_or_else(String::new, |&m| method_text(m));
        if methods.windows(2).all(|w| w[0] == w[1]) {
            format!("{first} everywhere")
        } else if self == Family::Hg {
            "hg where it draws fewer values than hc, hc elsewhere".to_string()
        } else {
            methods
                .iter()
                .map(|&m| method_text(m))
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}

/// How a method is shown in a search's tables: the label, and a tail's `m`.
pub fn method_text(method: Method) -> String {
    match method {
        Method::HcTail(t) => format!("{}/{}", method.label(), t.groups),
        m => m.label(),
    }
}

/// One plan the search measured.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    /// The leaves' share of the total.
    pub x: f64,
    /// Per level, root first; `None` for a level left unmeasured.
    pub budgets: Vec<Option<Amount>>,
    /// Each level's method ([`method_text`]).
    pub methods: Vec<String>,
    /// Mean per-node EMD of the consistent release, per level.
    pub consistent: Vec<Stat>,
    /// Mean per-node EMD of the independent estimates, per level (what picks each
    /// level's method in a combination); `None` for a level left unmeasured.
    pub independent: Vec<Option<Stat>>,
    /// The consistent release cell by cell, per level ([`crate::cell_error`]): the mean
    /// absolute error per listed cell, and the share of a region's groups in the wrong
    /// size cell (`None` where a level had nothing to measure).
    pub mae_per_cell: Vec<Option<Stat>>,
    pub relative_error: Vec<Option<Stat>>,
    /// The trials it ran: all of the search's, or [`FIRST_ROUND`] for a plan another
    /// clearly beat at every level after them.
    pub trials: usize,
    /// Where it came from: `current plan`, a family at a share, or `best per level`.
    pub origin: String,
    #[serde(skip)]
    pub plan: ReleasePlan,
}

impl Candidate {
    /// `plan`'s candidate from its preview's figures.
    fn of(report: &preview::PreviewReport, plan: ReleasePlan, x: f64, origin: String) -> Candidate {
        Candidate {
            x,
            budgets: level_amounts(&plan),
            methods: plan
                .levels()
                .iter()
                .map(|l| method_text(l.method()))
                .collect(),
            consistent: report.levels.iter().map(|l| l.consistent[0].emd).collect(),
            independent: report.levels.iter().map(|l| l.independent).collect(),
            mae_per_cell: report.levels.iter().map(|l| l.mae_per_cell).collect(),
            relative_error: report.levels.iter().map(|l| l.relative_error).collect(),
            trials: report.trials,
            origin,
            plan,
        }
    }
}

/// Trials every plan of a search gets first. A plan that another beats at every level
/// by more than [`DROP_SE`] standard errors after them can never be recommended (the
/// recommendation is among the plans no other plan tried dominates), and runs no more;
/// the others run all their trials. On `us-counties` 7 of 22 plans remained after 3
/// trials, the same 7 at 0 to 3 standard errors (`docs/performance.md`, "The search").
pub const FIRST_ROUND: usize = 3;

/// How many standard errors of the difference, at every level, make a plan clearly
/// worse than another after the first round: with 3 trials a standard error is itself
/// uncertain (its relative error about 50%), so the bar is high.
pub const DROP_SE: f64 = 3.0;

/// Whether another candidate beats `candidates[i]` at every level by more than
/// [`DROP_SE`] standard errors of the difference.
fn clearly_dominated(candidates: &[Candidate], i: usize) -> bool {
    let p = &candidates[i];
    candidates.iter().enumerate().any(|(j, q)| {
        j != i
            && q.consistent.len() == p.consistent.len()
            && q.consistent.iter().zip(&p.consistent).all(|(a, b)| {
                let se = (a.se * a.se + b.se * b.se).sqrt();
                b.mean - a.mean > DROP_SE * se
            })
    })
}

/// What the previews of a search ran on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PreviewData {
    /// The confidential dataset: the figures are CONFIDENTIAL, and a plan tuned on
    /// them is recorded as `confidential-previews`.
    Confidential,
    /// A public proxy with the same hierarchy: a plan tuned on it stays public.
    /// `source` names it in a plan tuned on it (`tuning_source`): `synthetic` or the
    /// proxy dataset's name.
    Proxy { label: String, source: String },
}

impl PreviewData {
    /// The notice printed with the figures.
    pub fn notice(&self) -> String {
        match self {
            PreviewData::Confidential => preview::CONFIDENTIAL_NOTICE.to_string(),
            PreviewData::Proxy { label, .. } => format!(
                "PUBLIC PROXY: these errors are measured against the {label}, not the confidential data. A plan tuned on them depends on public information only."
            ),
        }
    }

    /// How a plan tuned on these figures is recorded.
    pub fn tuning(&self) -> Tuning {
        match self {
            PreviewData::Confidential => Tuning::ConfidentialPreviews,
            PreviewData::Proxy { .. } => Tuning::Proxy,
        }
    }

    /// The proxy a plan tuned on these figures records (`None` for the confidential
    /// data, or a name the plan file cannot hold).
    pub fn tuning_source(&self) -> Option<TuningSource> {
        match self {
            PreviewData::Confidential => None,
            PreviewData::Proxy { source, .. } => TuningSource::new(source),
        }
    }

    /// `plan` labelled as tuned on these figures: its tuning made no better than they
    /// allow, and the proxy named.
    pub fn label(&self, plan: &mut ReleasePlan) {
        plan.set_tuning(plan.tuning().worse(self.tuning()));
        if let Some(source) = self.tuning_source() {
            plan.set_tuning_source(Some(source));
        }
    }
}

/// The search at a fixed total: the frontier of the plan's own methods, every other
/// plan tried, the bottom-up baseline and the recommendation.
#[derive(Clone, Debug, Serialize)]
pub struct Frontier {
    pub notice: String,
    pub data: PreviewData,
    pub total_epsilon: Amount,
    pub levels: Vec<String>,
    /// Per level, whether the operator holds its budget: every plan searched keeps it.
    pub held: Vec<bool>,
    /// The plan's own methods at each leaf share (the frontier drawn).
    pub points: Vec<AllocationPoint>,
    /// Index into `candidates` of each point.
    pub point_candidates: Vec<usize>,
    /// Every plan measured (the points among them), the current plan included.
    pub candidates: Vec<Candidate>,
    /// Index into `candidates` of the current plan.
    pub current: Option<usize>,
    /// Mean per-node EMD of bottom-up (everything on the leaves), per level, with the
    /// leaf method that does best there.
    pub bottom_up: Vec<Stat>,
    pub bottom_up_method: String,
    /// Bottom-up with each leaf method tried (a recommendation beats every one of them
    /// somewhere).
    pub bottom_up_variants: Vec<(String, Vec<Stat>)>,
    pub trials: usize,
    pub recommendation: Option<Recommendation>,
    /// Why there is no recommendation, when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
}

impl Frontier {
    /// The names of the levels the operator held (every plan searched kept their
    /// budgets), root first.
    pub fn held_levels(&self) -> Vec<&str> {
        self.levels
            .iter()
            .zip(&self.held)
            .filter(|(_, h)| **h)
            .map(|(l, _)| l.as_str())
            .collect()
    }

    /// The measure the search was made in (its plans'): `ε` or `ρ`.
    pub fn symbol(&self) -> &'static str {
        self.candidates
            .first()
            .map_or("ε", |c| c.plan.definition().symbol())
    }
}

/// Searches, at the plan's `K` and consistency step and at a fixed `total`, over the
/// leaves' `shares` of it and over each level's method: every [`FAMILIES`] member and
/// the plan's own methods at every share, then per share the combination of each
/// level's best method (by its independent error), and the current plan itself.
/// Bottom-up is drawn with every leaf method tried. `data` says what `dataset` is.
pub fn frontier(
    dataset: &Dataset,
    data: PreviewData,
    plan: &ReleasePlan,
    total: &Amount,
    shares: &[Share],
    run: &Trials<'_>,
    progress: &(dyn Fn(SweepProgress) + Sync),
) -> Result<Frontier, PreviewError> {
    let h = &dataset.hierarchy;
    let depth = h.depth();
    let level_groups = LevelGroups::of(dataset);
    let mut ways: Vec<(String, Vec<Method>)> = vec![(
        "current methods".to_string(),
        Family::Current.methods(plan, &level_groups),
    )];
    for f in FAMILIES {
        let m = f.methods(plan, &level_groups);
        if !ways.iter().any(|(_, w)| *w == m) {
            ways.push((f.name(&m), m));
        }
    }
    // Levels the operator holds keep their budgets in every plan; the others share the
    // rest ([`budgets_keeping_held`]). Leaving levels unmeasured would move a held
    // budget (bottom-up takes everything), so those plans are not tried then; with the
    // leaves held, the leaves' share is the operator's, and one share is tried.
    let held: Vec<bool> = plan.levels().iter().map(|l| l.held()).collect();
    let any_held = held.iter().any(|&h| h);
    let current_budgets = level_amounts(plan);
    let shares = if any_held && held[depth - 1] {
        &shares[..shares.len().min(1)]
    } else {
        shares
    };
    // Plans that leave levels unmeasured, with the plan's own methods.
    let unmeasured = if any_held {
        Vec::new()
    } else {
        unmeasured_budgets(total, h.level_names())
    };
    // Every way at every share, a combination per share, the unmeasured ones, the
    // current plan.
    let points_total = shares.len() * (ways.len() + 1) + unmeasured.len() + 1;
    let trials = run.trials.max(1);
    let first_round = trials.min(FIRST_ROUND);
    // Trials finished, and the trials the search will run as far as known: every plan's
    // first round, and all of its trials for as many plans as may still need them.
    let tally = std::sync::Mutex::new((0usize, points_total * trials));
    let report_progress = |point: usize, points: usize, round: usize, t: PreviewProgress| {
        let (done, total) = *tally.lock().unwrap_or_else(|e| e.into_inner());
        progress(SweepProgress {
            point,
            points,
            trial: t,
            trials_done: done + t.trial,
            trials_total: total,
            round,
        })
    };
    let mut done = 0usize;
    let mut candidates: Vec<Candidate> = Vec::new();
    // Each candidate's preview, to run more trials of; and whether it draws bottom-up.
    let mut previews: Vec<(preview::PreviewRun<'_>, bool)> = Vec::new();
    let mut variants: Vec<(String, Vec<Stat>)> = Vec::new();
    let measure =
        |p: ReleasePlan,
         x: f64,
         origin: String,
         bottom_up: bool,
         done: &mut usize|
         -> Result<(Candidate, Option<Vec<Stat>>, preview::PreviewRun), PreviewError> {
            let point = *done;
            let mut preview = preview::PreviewRun::new(
                dataset,
                &p,
                &PreviewOptions {
                    trials,
                    seed: run.seed,
                    compare: false,
                    keep_last_trial: false,
                    bottom_up,
                    coverage: None,
                },
            )?;
            preview.run(first_round, run.cancel, &|t| {
                report_progress(point, points_total, 1, t)
            })?;
            tally.lock().unwrap_or_else(|e| e.into_inner()).0 += first_round;
            *done += 1;
            let report = preview.report();
            let bu = bottom_up.then(|| report.levels.iter().map(|l| l.bottom_up).collect());
            Ok((Candidate::of(&report, p, x, origin), bu, preview))
        };
    let with =
        |budgets: &[Option<Amount>], methods: &[Method]| -> Result<ReleasePlan, PreviewError> {
            let mut p = plan.clone();
            let definition = p.definition();
            p.set_budgets(
                budgets
                    .iter()
                    .map(|b| match b {
                        Some(b) => LevelBudget::Measured(Loss::of(definition, b)),
                        None => LevelBudget::Unmeasured(definition),
                    })
                    .collect(),
            )?;
            for (i, &m) in methods.iter().enumerate() {
                p.set_method(LevelId(i), m)?;
            }
            Ok(p)
        };
    let mut point_candidates = Vec::with_capacity(shares.len());
    for (s, share) in shares.iter().enumerate() {
        let budgets = budgets_keeping_held(total, share, &held, &current_budgets)?;
        let x = match (&budgets[depth - 1], any_held) {
            (Some(leaves), true) => leaves.to_f64() / total.to_f64(),
            _ => share.to_f64(),
        };
        let first = candidates.len();
        for (name, methods) in &ways {
            // Bottom-up once per leaf method, drawn beside the first share's plans.
            let leaf = methods[depth - 1];
            let bottom_up = s == 0 && !variants.iter().any(|(m, _)| *m == method_text(leaf));
            let (c, bu, preview) = measure(
                with(&budgets, methods)?,
                x,
                name.clone(),
                bottom_up,
                &mut done,
            )?;
            if let Some(bu) = bu {
                variants.push((method_text(leaf), bu));
            }
            candidates.push(c);
            previews.push((preview, bottom_up));
        }
        point_candidates.push(first);
        // Each level's best method at this share, by its independent error.
        let best: Vec<Method> = (0..depth)
            .map(|l| {
                let c = candidates[first..]
                    .iter()
                    .min_by(|a, b| {
                        let mean =
                            |c: &Candidate| c.independent[l].map_or(f64::INFINITY, |s| s.mean);
                        mean(a).total_cmp(&mean(b))
                    })
                    .expect("at least one way");
                c.plan.levels()[l].method()
            })
            .collect();
        if ways.iter().any(|(_, w)| *w == best) {
            done += 1;
        } else {
            let (c, _, preview) = measure(
                with(&budgets, &best)?,
                x,
                "best per level".into(),
                false,
                &mut done,
            )?;
            candidates.push(c);
            previews.push((preview, false));
        }
    }
    for (origin, budgets) in &unmeasured {
        // The leaves' share: all of the total for bottom-up, an even share otherwise.
        let leaf_share = 1.0 / budgets.iter().flatten().count() as f64;
        let (c, _, preview) = measure(
            with(budgets, &ways[0].1)?,
            leaf_share,
            origin.clone(),
            false,
            &mut done,
        )?;
        candidates.push(c);
        previews.push((preview, false));
    }
    let current = match candidates.iter().position(|c| c.plan == *plan) {
        Some(i) => Some(i),
        None => {
            let x = match (plan.levels().last(), plan.total()) {
                (Some(l), Some(t)) => l.budget().to_f64() / t.to_f64(),
                _ => 0.0,
            };
            let (c, _, preview) =
                measure(plan.clone(), x, "current plan".into(), false, &mut done)?;
            candidates.push(c);
            previews.push((preview, false));
            Some(candidates.len() - 1)
        }
    };
    if let Some(i) = current {
        candidates[i].origin = "current plan".into();
    }
    // The second round: the rest of the trials for every plan still in question (and
    // for those that draw bottom-up, the baseline every recommendation must beat).
    if first_round < trials {
        let rest: Vec<usize> = (0..candidates.len())
            .filter(|&i| previews[i].1 || !clearly_dominated(&candidates, i))
            .collect();
        {
            let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
            t.1 = candidates.len() * first_round + rest.len() * (trials - first_round);
        }
        for (n, &i) in rest.iter().enumerate() {
            let (preview, bottom_up) = &mut previews[i];
            let before = preview.trials_done();
            preview.run(trials, run.cancel, &|t| {
                report_progress(
                    n,
                    rest.len(),
                    2,
                    PreviewProgress {
                        trial: t.trial - before,
                        trials: t.trials - before,
                        ..t
                    },
                )
            })?;
            tally.lock().unwrap_or_else(|e| e.into_inner()).0 += trials - before;
            let report = preview.report();
            let c = &mut candidates[i];
            *c = Candidate::of(&report, c.plan.clone(), c.x, c.origin.clone());
            if *bottom_up {
                let leaf = method_text(c.plan.levels()[depth - 1].method());
                if let Some(v) = variants.iter_mut().find(|(m, _)| *m == leaf) {
                    v.1 = report.levels.iter().map(|l| l.bottom_up).collect();
                }
            }
        }
    }
    drop(previews);
    let points: Vec<AllocationPoint> = point_candidates
        .iter()
        .map(|&i| AllocationPoint {
            budgets: candidates[i].budgets.clone(),
            x: candidates[i].x,
            consistent: candidates[i].consistent.clone(),
        })
        .collect();
    // The baseline shown: the bottom-up with the best leaves.
    let (bottom_up_method, bottom_up) = variants
        .iter()
        .min_by(|a, b| a.1[depth - 1].mean.total_cmp(&b.1[depth - 1].mean))
        .cloned()
        .unwrap_or_default();
    Ok(Frontier {
        notice: data.notice(),
        data,
        total_epsilon: total.clone(),
        levels: h.level_names().to_vec(),
        held,
        points,
        point_candidates,
        candidates,
        current,
        bottom_up,
        bottom_up_method,
        bottom_up_variants: variants,
        trials: run.trials.max(1),
        recommendation: None,
        verdict: None,
    })
}

/// Trials per plan of a search when the operator does not say: one value for the CLI
/// (`coco preview --sweep`) and the TUI's Trade-off screen, so that the same seed gives
/// both the same recommendation.
pub const DEFAULT_TRIALS: usize = 10;

/// How a search runs: the one set of settings behind every front end. The defaults are
/// the CLI's and the TUI's alike ([`DEFAULT_TRIALS`], [`default_shares`], equal weights).
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOptions {
    pub trials: usize,
    /// Same seed, same plans measured on the same noise, same recommendation, byte for
    /// byte; `None` draws fresh randomness from the operating system.
    pub seed: Option<u64>,
    /// The leaves' shares of the total to try (`None`: [`default_shares`]).
    pub shares: Option<Vec<Share>>,
    /// What the recommendation optimises (`None`: weight 1 on every level).
    pub priority: Option<Priority>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            trials: DEFAULT_TRIALS,
            seed: None,
            shares: None,
            priority: None,
        }
    }
}

/// The search at `plan`'s own total, with its recommendation (or the verdict why there
/// is none): [`frontier`] then [`decide`], as `coco preview --sweep` and the TUI run it.
///
/// Reproducible for a seed: each trial's noise is keyed by the seed and the trial's
/// number, never by time or thread; the work split over threads writes each region's
/// result to its own slot and every sum over regions is an integer sum or runs in node
/// order; no hash map's order is read; and the synthetic proxy is drawn from a fixed
/// public seed. So the same seed, plan and proxy give the same figures on any machine
/// and any number of threads.
pub fn search(
    dataset: &Dataset,
    data: PreviewData,
    plan: &ReleasePlan,
    options: &SearchOptions,
    cancel: Option<&AtomicBool>,
    progress: &(dyn Fn(SweepProgress) + Sync),
) -> Result<Frontier, PreviewError> {
    // The levels' budgets only: a private K's budget is not the levels' to split.
    let total = plan
        .levels_total()
        .ok_or(PreviewError::Plan(
            crate::release::plan::PlanRuleError::LevelCount {
                given: 0,
                levels: dataset.hierarchy.depth(),
                names: dataset.hierarchy.level_names().join(", "),
            },
        ))?
        .amount();
    let depth = dataset.hierarchy.depth();
    let shares = options
        .shares
        .clone()
        .unwrap_or_else(|| default_shares(depth));
    let mut f = frontier(
        dataset,
        data,
        plan,
        &total,
        &shares,
        &Trials {
            trials: options.trials,
            seed: options.seed,
            cancel,
        },
        progress,
    )?;
    let priority = options
        .priority
        .clone()
        .unwrap_or_else(|| Priority::Weights(vec![1.0; depth]));
    decide(&mut f, &priority);
    Ok(f)
}

impl Frontier {
    /// The recommendation as a plan to save: its budgets and methods on the searched
    /// plan's K, consistency step and fits, labelled with what it was tuned on
    /// ([`PreviewData::label`]). `None` when nothing is recommended.
    pub fn recommended_plan(&self) -> Option<ReleasePlan> {
        let mut plan = self.recommendation.as_ref()?.plan.clone();
        self.data.label(&mut plan);
        Some(plan)
    }
}

/// What the operator cares about.
#[derive(Clone, Debug, PartialEq)]
pub enum Priority {
    /// Minimise Σ w_l × (error_l / bottom-up error_l): weights per level, root first.
    Weights(Vec<f64>),
    /// Among plans where every level's error is at most `x` × bottom-up's, the one
    /// with the smallest mean ratio.
    MaxRatio(f64),
}

/// How many standard errors of the difference a plan must beat bottom-up by, at one
/// level at least, to count as better there.
pub const MARGIN_SE: f64 = 2.0;

#[derive(Clone, Debug, Serialize)]
pub struct Recommendation {
    /// Index into [`Frontier::candidates`].
    pub candidate: usize,
    /// The leaves' share of the total.
    pub x: f64,
    /// Per level, root first; `None` for a level left unmeasured.
    pub budgets: Vec<Option<Amount>>,
    pub methods: Vec<String>,
    pub consistent: Vec<Stat>,
    /// The consistent release cell by cell, per level (as [`Candidate`]'s).
    pub mae_per_cell: Vec<Option<Stat>>,
    pub relative_error: Vec<Option<Stat>>,
    /// Error relative to bottom-up, per level, and its standard error (delta method).
    pub ratios: Vec<f64>,
    pub ratio_se: Vec<f64>,
    /// Whether it is the current plan (nothing tried does better).
    pub is_current: bool,
    pub reason: String,
    #[serde(skip)]
    pub plan: ReleasePlan,
}

impl Recommendation {
    /// Each level's error relative to bottom-up with its standard error, root first
    /// (`0.75×±0.08`).
    pub fn ratio_texts(&self) -> Vec<String> {
        self.ratios
            .iter()
            .zip(&self.ratio_se)
            .map(|(x, se)| ratio_text(*x, *se))
            .collect()
    }
}

/// Error / bottom-up error per level (1 where both are exact, ∞ where only bottom-up
/// is), with the standard error of each ratio.
pub fn ratios(errors: &[Stat], bottom_up: &[Stat]) -> (Vec<f64>, Vec<f64>) {
    errors
        .iter()
        .zip(bottom_up)
        .map(|(c, b)| {
            if b.mean > 0.0 {
                let r = c.mean / b.mean;
                let rel = |s: &Stat| if s.mean > 0.0 { s.se / s.mean } else { 0.0 };
                (r, r * (rel(c).powi(2) + rel(b).powi(2)).sqrt())
            } else if c.mean > 0.0 {
                (f64::INFINITY, 0.0)
            } else {
                (1.0, 0.0)
            }
        })
        .unzip()
}

/// Whether `a` beats `b` at some level by more than [`MARGIN_SE`] standard errors of
/// the difference.
pub fn beats_somewhere(a: &[Stat], b: &[Stat]) -> bool {
    a.iter()
        .zip(b)
        .any(|(a, b)| a.mean + MARGIN_SE * (a.se.powi(2) + b.se.powi(2)).sqrt() < b.mean)
}

/// Whether `b` is at or below `a` at every level and below it at one (point estimates).
pub fn dominated_by(a: &[Stat], b: &[Stat]) -> bool {
    a.iter().zip(b).all(|(a, b)| b.mean <= a.mean) && a.iter().zip(b).any(|(a, b)| b.mean < a.mean)
}

/// Picks the plan that best meets `priority` among those that are dominated by
/// nothing: each must beat every bottom-up variant at some level beyond the noise
/// ([`beats_somewhere`]), and no other eligible plan, the current one included, may
/// be at or below it everywhere. `Err` says why nothing qualifies.
pub fn recommend(frontier: &Frontier, priority: &Priority) -> Result<Recommendation, String> {
    let variants: Vec<&Vec<Stat>> = if frontier.bottom_up_variants.is_empty() {
        vec![&frontier.bottom_up]
    } else {
        frontier.bottom_up_variants.iter().map(|(_, v)| v).collect()
    };
    let eligible: Vec<usize> = (0..frontier.candidates.len())
        .filter(|&i| {
            variants
                .iter()
                .all(|v| beats_somewhere(&frontier.candidates[i].consistent, v))
        })
        .collect();
    let front: Vec<usize> = eligible
        .iter()
        .copied()
        .filter(|&i| {
            !eligible.iter().any(|&j| {
                dominated_by(
                    &frontier.candidates[i].consistent,
                    &frontier.candidates[j].consistent,
                )
            })
        })
        .collect();
    if front.is_empty() {
        return Err(format!(
            "bottom-up (all of {} = {} on the leaves) is at or below every plan tried at every level, within {MARGIN_SE} standard errors over {} trial(s): no plan is recommended (more trials narrow the noise)",
            frontier.symbol(),
            frontier.total_epsilon,
            frontier.trials
        ));
    }
    let scored: Vec<(usize, Vec<f64>)> = front
        .iter()
        .map(|&i| {
            (
                i,
                ratios(&frontier.candidates[i].consistent, &frontier.bottom_up).0,
            )
        })
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
                .min_by(|a, b| score(&a.1).total_cmp(&score(&b.1)))
                .expect("not empty");
            (
                best.0,
                format!("smallest weighted error relative to bottom-up (weights {w:?})"),
            )
        }
        Priority::MaxRatio(x) => {
            let within = scored
                .iter()
                .filter(|(_, r)| r.iter().all(|v| *v <= *x))
                .min_by(|a, b| mean(&a.1).total_cmp(&mean(&b.1)));
            match within {
                Some(best) => (
                    best.0,
                    format!("every level within {x}× bottom-up, smallest mean ratio"),
                ),
                None => {
                    let worst = |r: &[f64]| r.iter().copied().fold(0.0, f64::max);
                    let best = scored
                        .iter()
                        .min_by(|a, b| worst(&a.1).total_cmp(&worst(&b.1)))
                        .expect("not empty");
                    (
                        best.0,
                        format!(
                            "no plan tried keeps every level within {x}× bottom-up; this one has the smallest worst ratio"
                        ),
                    )
                }
            }
        }
    };
    let c = &frontier.candidates[best];
    let (ratios, ratio_se) = ratios(&c.consistent, &frontier.bottom_up);
    let is_current = frontier.current == Some(best);
    Ok(Recommendation {
        candidate: best,
        x: c.x,
        budgets: c.budgets.clone(),
        methods: c.methods.clone(),
        consistent: c.consistent.clone(),
        mae_per_cell: c.mae_per_cell.clone(),
        relative_error: c.relative_error.clone(),
        ratios,
        ratio_se,
        is_current,
        reason: if is_current {
            format!("the current plan: {reason}")
        } else {
            reason
        },
        plan: c.plan.clone(),
    })
}

/// Sets `frontier`'s recommendation (or its verdict) for `priority`.
pub fn decide(frontier: &mut Frontier, priority: &Priority) {
    match recommend(frontier, priority) {
        Ok(r) => {
            frontier.recommendation = Some(r);
            frontier.verdict = None;
        }
        Err(why) => {
            frontier.recommendation = None;
            frontier.verdict = Some(why);
        }
    }
}

/// A ratio and its standard error, e.g. `0.41×±0.03`.
pub fn ratio_text(r: f64, se: f64) -> String {
    format!("{r:.2}×±{se:.2}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(s: &str) -> Amount {
        Amount::parse(s).unwrap()
    }

    #[test]
    fn leaf_shares_sum_to_total() {
        let b = budgets_with_leaf_share(&e("1"), 3, &Share::parse("0.8").unwrap());
        assert_eq!(
            b.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
            ["0.1", "0.1", "0.8"]
        );
        assert_eq!(Amount::sum(&b).unwrap(), e("1"));
        let b = budgets_with_leaf_share(&e("1/3"), 3, &Share::parse("1/3").unwrap());
        assert_eq!(Amount::sum(&b).unwrap(), e("1/3"));
        assert_eq!(b, vec![e("1/9"); 3]);
        let b = budgets_with_leaf_share(&e("0.7"), 4, &Share::parse("1/3").unwrap());
        assert_eq!(b, vec![e("7/45"), e("7/45"), e("7/45"), e("7/30")]);
        assert_eq!(
            budgets_with_leaf_share(&e("2"), 1, &Share::parse("1/2").unwrap()),
            vec![e("2")]
        );
        assert_eq!(default_shares(3).len(), 5);
    }

    #[test]
    fn the_search_tries_bottom_up_and_each_middle_level_left_unmeasured() {
        let names: Vec<String> = ["nation", "state", "county", "block"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let plans = unmeasured_budgets(&e("1"), &names);
        let origins: Vec<&str> = plans.iter().map(|(o, _)| o.as_str()).collect();
        assert_eq!(
            origins,
            [
                "bottom-up (levels above the leaves unmeasured)",
                "state unmeasured",
                "county unmeasured"
            ]
        );
        assert_eq!(plans[0].1, vec![None, None, None, Some(e("1"))]);
        assert_eq!(
            plans[1].1,
            vec![Some(e("1/3")), None, Some(e("1/3")), Some(e("1/3"))]
        );
        assert_eq!(
            plans[2].1,
            vec![Some(e("1/3")), Some(e("1/3")), None, Some(e("1/3"))]
        );
        // Every one spends the whole total on the levels it measures.
        for (_, b) in &plans {
            assert_eq!(Amount::sum(b.iter().flatten()).unwrap(), e("1"));
        }
        // Two levels: bottom-up only; one level: nothing to leave out.
        assert_eq!(unmeasured_budgets(&e("1"), &names[..2]).len(), 1);
        assert!(unmeasured_budgets(&e("1"), &names[..1]).is_empty());
    }

    fn stat(mean: f64, se: f64) -> Stat {
        Stat {
            mean,
            se,
            trials: 10,
        }
    }

    fn candidate(x: f64, means: &[f64]) -> Candidate {
        Candidate {
            x,
            budgets: vec![],
            methods: vec![],
            consistent: means.iter().map(|&m| stat(m, 1.0)).collect(),
            independent: vec![],
            mae_per_cell: vec![],
            relative_error: vec![],
            trials: 10,
            origin: String::new(),
            plan: crate::release::plan::ReleasePlan::parse(
                "max_size = 10\n",
                std::path::Path::new("p.toml"),
            )
            .unwrap(),
        }
    }

    fn search(candidates: Vec<Candidate>, bottom_up: &[f64]) -> Frontier {
        let bottom_up: Vec<Stat> = bottom_up.iter().map(|&m| stat(m, 1.0)).collect();
        Frontier {
            notice: String::new(),
            data: PreviewData::Confidential,
            total_epsilon: e("1"),
            levels: vec!["a".into(), "b".into()],
            held: vec![false, false],
            points: vec![],
            point_candidates: vec![],
            current: Some(0),
            candidates,
            bottom_up_method: "hc".into(),
            bottom_up_variants: vec![("hc".into(), bottom_up.clone())],
            bottom_up,
            trials: 4,
            recommendation: None,
            verdict: None,
        }
    }

    #[test]
    fn recommendations() {
        let f = search(
            vec![
                candidate(0.5, &[50.0, 30.0]),
                candidate(0.8, &[80.0, 12.0]),
                candidate(0.9, &[96.0, 10.5]),
            ],
            &[100.0, 10.0],
        );
        let rec = |p| recommend(&f, &p).unwrap().candidate;
        assert_eq!(rec(Priority::Weights(vec![1.0, 1.0])), 1);
        assert_eq!(rec(Priority::Weights(vec![10.0, 1.0])), 0);
        assert_eq!(rec(Priority::MaxRatio(1.25)), 1);
        let none = recommend(&f, &Priority::MaxRatio(1.01)).unwrap();
        assert_eq!(none.candidate, 2);
        assert!(none.reason.starts_with("no plan tried"));
        // Ratios come with their standard errors: 80 ± 1 over 100 ± 1.
        let r = recommend(&f, &Priority::Weights(vec![1.0, 1.0])).unwrap();
        assert!((r.ratios[0] - 0.8).abs() < 1e-12);
        let se = 0.8 * ((1.0f64 / 80.0).powi(2) + (1.0f64 / 100.0).powi(2)).sqrt();
        assert!((r.ratio_se[0] - se).abs() < 1e-12);
        assert!(!r.is_current);
    }

    /// Issue 14: with 3 trials the frontier recommended plans that bottom-up beat at
    /// every level. A plan bottom-up dominates, or beats by less than the noise
    /// everywhere, is never recommended; nor one another plan tried dominates.
    #[test]
    fn dominated_plans_are_never_recommended() {
        // Worse than bottom-up everywhere: no recommendation, and the verdict says why.
        let mut f = search(
            vec![
                candidate(0.5, &[120.0, 12.0]),
                candidate(0.9, &[101.0, 10.5]),
            ],
            &[100.0, 10.0],
        );
        decide(&mut f, &Priority::Weights(vec![1.0, 1.0]));
        assert!(f.recommendation.is_none());
        assert!(
            f.verdict.as_ref().unwrap().starts_with("bottom-up"),
            "{:?}",
            f.verdict
        );
        // Better by less than two standard errors of the difference (√2 ≈ 1.41 × 2): noise.
        let f = search(vec![candidate(0.5, &[97.5, 12.0])], &[100.0, 10.0]);
        assert!(recommend(&f, &Priority::Weights(vec![1.0, 1.0])).is_err());
        let f = search(vec![candidate(0.5, &[97.0, 12.0])], &[100.0, 10.0]);
        assert!(recommend(&f, &Priority::Weights(vec![1.0, 1.0])).is_ok());
        // A plan another dominates is not recommended, even if its score were best:
        // with weight 0 on the first level, 1 and 2 tie on score; 1 dominates 2.
        let f = search(
            vec![
                candidate(0.5, &[50.0, 30.0]),
                candidate(0.8, &[80.0, 12.0]),
                candidate(0.85, &[90.0, 12.0]),
            ],
            &[100.0, 10.0],
        );
        for w in [vec![0.0, 1.0], vec![1.0, 1.0], vec![0.01, 1.0]] {
            assert_ne!(recommend(&f, &Priority::Weights(w)).unwrap().candidate, 2);
        }
        // Every bottom-up variant counts: one with hg leaves is beaten, hc's is not.
        let mut f = search(vec![candidate(0.5, &[120.0, 12.0])], &[100.0, 10.0]);
        f.bottom_up_variants
            .push(("hg".into(), vec![stat(500.0, 1.0), stat(50.0, 1.0)]));
        assert!(recommend(&f, &Priority::Weights(vec![1.0, 1.0])).is_err());
    }

    #[test]
    fn a_plan_is_dropped_after_the_first_round_only_when_clearly_beaten_everywhere() {
        // Differences against √2 · 1 ≈ 1.41 standard errors, three of them ≈ 4.24.
        let c = vec![
            candidate(0.5, &[10.0, 10.0]),
            candidate(0.6, &[20.0, 20.0]),
            candidate(0.7, &[13.0, 20.0]),
            candidate(0.8, &[9.0, 30.0]),
        ];
        assert!(!clearly_dominated(&c, 0));
        // Beaten by 10 at both levels.
        assert!(clearly_dominated(&c, 1));
        // Beaten by 3 at one level: within the noise there, so it runs on.
        assert!(!clearly_dominated(&c, 2));
        // Best at one level: never dropped.
        assert!(!clearly_dominated(&c, 3));
        // Alone, nothing beats it.
        assert!(!clearly_dominated(&c[1..2], 0));
    }

    #[test]
    fn hg_is_searched_only_where_it_draws_no_more_noise_than_hc() {
        let level = |regions, groups| LevelGroups { regions, groups };
        // `us-counties`' nation: 122 million groups against K + 1 = 10,001 values.
        assert!(!level(1, 121_948_752).hg_pays(Some(10_000)));
        // Its counties: 3,142 regions hold 39,000 groups each on average.
        assert!(!level(3_142, 121_948_752).hg_pays(Some(10_000)));
        // Small regions, and the boundary: G = regions · (K + 1).
        assert!(level(1_000, 50_000).hg_pays(Some(100)));
        assert!(level(1_000, 101_000).hg_pays(Some(100)));
        assert!(!level(1_000, 101_001).hg_pays(Some(100)));
        // Without a public bound there is nothing to compare with.
        assert!(level(1, u64::MAX).hg_pays(None));
    }

    #[test]
    fn more_trials_of_a_preview_give_the_figures_of_running_them_at_once() {
        let d = crate::data::Dataset::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households"),
        )
        .unwrap();
        let plan = crate::release::plan::defaults::public_default(
            &d.hierarchy,
            |id| d.groups(id),
            crate::privacy::Loss::Pure(crate::privacy::Epsilon::from_ratio(1, 1).unwrap()),
            crate::release::plan::MaxSize::Fixed(1_000),
        )
        .unwrap()
        .plan;
        let options = PreviewOptions {
            trials: 5,
            seed: Some(7),
            compare: false,
            keep_last_trial: false,
            bottom_up: true,
            coverage: None,
        };
        let at_once = preview::preview(&d, &plan, &options, None, &|_| {}).unwrap();
        let mut run = preview::PreviewRun::new(&d, &plan, &options).unwrap();
        run.run(2, None, &|_| {}).unwrap();
        assert_eq!(run.report().trials, 2);
        run.run(5, None, &|_| {}).unwrap();
        let in_two = run.into_report();
        assert_eq!(in_two.trials, 5);
        assert_eq!(
            serde_json::to_string(&at_once).unwrap(),
            serde_json::to_string(&in_two).unwrap()
        );
    }

    #[test]
    fn a_held_level_keeps_its_budget_at_every_share() {
        let total = e("1");
        let share = |t: &str| Share::parse(t).unwrap();
        // Nothing held: the leaves' share of the total, the rest even.
        let free =
            budgets_keeping_held(&total, &share("0.5"), &[false; 3], &[None, None, None]).unwrap();
        assert_eq!(free, vec![Some(e("0.25")), Some(e("0.25")), Some(e("0.5"))]);
        // The middle level held at 0.4: the leaves get their share of the 0.6 left.
        let current = [Some(e("0.3")), Some(e("0.4")), Some(e("0.3"))];
        for s in ["0.5", "0.8"] {
            let b =
                budgets_keeping_held(&total, &share(s), &[false, true, false], &current).unwrap();
            assert_eq!(b[1], Some(e("0.4")));
            assert_eq!(
                Amount::sum(b.iter().flatten()).unwrap(),
                total,
                "share {s}: {b:?}"
            );
        }
        let b =
            budgets_keeping_held(&total, &share("0.5"), &[false, true, false], &current).unwrap();
        assert_eq!(b, vec![Some(e("0.3")), Some(e("0.4")), Some(e("0.3"))]);
        // The leaves held: the others split the rest evenly, whatever the share.
        let b =
            budgets_keeping_held(&total, &share("0.9"), &[false, false, true], &current).unwrap();
        assert_eq!(b, vec![Some(e("0.35")), Some(e("0.35")), Some(e("0.3"))]);
        // Held budgets that leave nothing: an error that says what to do.
        let all = [Some(e("0.5")), Some(e("0.5")), Some(e("0.3"))];
        let err = budgets_keeping_held(&total, &share("0.5"), &[true, true, false], &all)
            .unwrap_err()
            .to_string();
        assert!(err.contains("release a held level"), "{err}");
    }
}
