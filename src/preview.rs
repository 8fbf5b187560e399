//! `coco preview`: what a plan buys, measured against the truth. CONFIDENTIAL.
//!
//! Each trial draws the plan's measurements afresh (its own key, derived from the seed
//! or from the operating system) and reports, per level, the mean per-node earth
//! mover's distance to the true histograms of:
//!
//! * the independent noisy estimates (before consistency),
//! * the consistent release (the plan's consistency step; with `compare`, every
//!   available consistency step and merge rule on the same measurements),
//! * the bottom-up baseline at the same total ε (all of it on the leaves, parents summed),
//! * the paper's "omniscient" reference (§6.2): distinct sizes × √2/ε per node, the error
//!   of an estimator that knew which sizes occur.
//!
//! Means over trials come with their standard errors (sample standard deviation / √n).
//! These figures compare noisy output with confidential data: they are for the
//! operator's decision only and are not covered by the privacy guarantee.

use crate::wire::Named;
use std::sync::atomic::AtomicBool;

use serde::Serialize;

use crate::consistency::{self, Consistency, ConsistencyOptions, MergeRule};
use crate::data::{Dataset, NodeId};
use crate::emd::emd;
use rayon::prelude::*;

use crate::estimate::Keep;
use crate::histogram::{HistogramSet, Histograms, Size};
use crate::noise::{NoiseSource, OsRandomnessError, Subkey};
use crate::privacy::{Diagnostic, Epsilon, Loss};
use crate::release::pipeline::draw::{self as run, RunError};
use crate::release::plan::{LevelBudget, MaxSize, ReleasePlan};

/// The notice printed with every preview.
pub const CONFIDENTIAL_NOTICE: &str = "CONFIDENTIAL DIAGNOSTICS: these errors are measured against the true data. They are for the operator's decision only, are not differentially private, and must not be published.";

#[derive(Clone, Debug)]
pub struct PreviewOptions {
    pub trials: usize,
    /// A seed makes the trials reproducible; without one each run is fresh.
    pub seed: Option<u64>,
    /// Also run every other consistency step and merge rule on the same measurements.
    pub compare: bool,
    /// Keep the histograms of the last trial (for plots).
    pub keep_last_trial: bool,
    /// Also draw the bottom-up baseline each trial (doubles the leaves' measurements).
    pub bottom_up: bool,
    /// Also compute each trial's margins of error at this confidence, as a release
    /// would publish them, and how often they covered the truth (a CONFIDENTIAL
    /// diagnostic; the trials share a tenth of a release's replicate budget).
    pub coverage: Option<crate::release::margins::Confidence>,
}

impl Default for PreviewOptions {
    fn default() -> Self {
        Self {
            trials: 10,
            seed: None,
            compare: false,
            keep_last_trial: false,
            bottom_up: true,
            coverage: None,
        }
    }
}

/// A mean over trials and its standard error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Stat {
    pub mean: f64,
    pub se: f64,
    /// How many values the mean is of (a standard error needs two).
    #[serde(skip)]
    pub trials: usize,
}

impl Stat {
    pub fn of(values: &[f64]) -> Stat {
        let n = values.len() as f64;
        if values.is_empty() {
            return Stat::default();
        }
        let mean = values.iter().sum::<f64>() / n;
        let se = if values.len() < 2 {
            0.0
        } else {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() / n.sqrt()
        };
        Stat {
            mean,
            se,
            trials: values.len(),
        }
    }

    /// `mean ± se` as read in a table; the mean alone from one trial, whose spread is
    /// unknown (never `± 0.00`).
    pub fn text(&self) -> String {
        if self.trials < 2 {
            fmt_num(self.mean)
        } else {
            format!("{} ± {}", fmt_num(self.mean), fmt_num(self.se))
        }
    }
}

/// One consistency variant: a consistency step and a merge rule (and, for `wls`, with
/// or without its check against the measurements).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Variant {
    pub consistency: Consistency,
    pub merge: MergeRule,
    /// `wls` checked against the measurements (always, but in comparisons).
    pub checked: bool,
}

impl Variant {
    pub fn name(&self) -> String {
        if self.consistency.uses_merge() {
            format!("{} ({})", self.consistency.name(), self.merge.name())
        } else if !self.checked {
            format!("{} (unchecked)", self.consistency.name())
        } else {
            self.consistency.name().to_string()
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct VariantStat {
    pub variant: String,
    pub emd: Stat,
}

/// One level's diagnostics.
#[derive(Clone, Debug, Serialize)]
pub struct LevelDiagnostics {
    pub level: String,
    pub nodes: usize,
    /// The level's budget: `"epsilon"` or `"rho"` in JSON (`"0"` with `"measured":
    /// false` for a level left unmeasured).
    #[serde(flatten)]
    pub budget: LevelBudget,
    pub method: String,
    /// The independent estimates' error; `None` (`null`) for a level left unmeasured,
    /// which has no independent estimate: its regions are estimated from their children.
    pub independent: Option<Stat>,
    /// The plan's own consistency first, then the alternatives when compared.
    pub consistent: Vec<VariantStat>,
    pub bottom_up: Stat,
    /// `None` (`null`) for a level left unmeasured: the reference is the error of a
    /// measurement that was not made.
    pub omniscient: Option<f64>,
    /// The plan's consistent release, cell by cell ([`crate::cell_error`]): the mean
    /// absolute error per listed cell, a mean over trials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mae_per_cell: Option<Stat>,
    /// The share of a region's groups in the wrong size cell (`Σ_j |r_j − t_j| / 2G`),
    /// averaged over the level's regions, a mean over trials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative_error: Option<Stat>,
    /// For the levels above the leaves with `wls` (the plan's own step): the mean weight
    /// of the regions' own measurements in their consistent estimates, over the trials,
    /// and what the variance model alone would have given (public: computed from the
    /// noisy measurements; see [`crate::consistency::guard`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub own_weight: Option<OwnWeight>,
    /// How often the trials' margins of error covered the truth (with
    /// [`PreviewOptions::coverage`]). CONFIDENTIAL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
}

/// How often a level's margins of error covered the truth over the trials: of the cells
/// a release would list in `uncertainty.csv` or whose true count is above 0, the share
/// whose interval held the true count (a mean over trials), and the cells' mean interval
/// width and mean absolute error. CONFIDENTIAL: compared with the truth.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Coverage {
    pub confidence: f64,
    pub share: Stat,
    pub mean_width: f64,
    pub mean_error: f64,
    /// Bootstrap replicates per trial (the last trial's).
    pub replicates: u32,
}

/// How much a level leaned on its own measurements, over the trials.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct OwnWeight {
    pub own: f64,
    pub model: f64,
}

/// Histograms of one trial, per node (for the TUI's overlays).
#[derive(Clone, Debug, Default)]
pub struct TrialHistograms {
    pub independent: HistogramSet,
    pub consistent: HistogramSet,
    pub bottom_up: HistogramSet,
}

#[derive(Clone, Debug, Serialize)]
pub struct PreviewReport {
    /// CONFIDENTIAL, or what the proxy previewed is (set by the caller).
    pub notice: String,
    pub dataset: String,
    /// `None` for an empty plan or a zCDP plan (see `total`).
    pub total_epsilon: Option<Epsilon>,
    /// The plan's total budget in its own measure; `None` for an empty plan.
    #[serde(skip)]
    pub total: Option<Loss>,
    /// `K` (the last trial's, when it is estimated).
    pub max_size: Size,
    pub max_size_estimated: bool,
    pub trials: usize,
    pub randomness: String,
    pub levels: Vec<LevelDiagnostics>,
    /// Fallbacks and other remarks about how the trials ran.
    pub notes: Vec<crate::warning::Warning>,
    #[serde(skip)]
    pub last_trial: Option<TrialHistograms>,
}

/// Progress of a preview: `trial` trials done, and in the next one `nodes_done` of its
/// `nodes` regions measured (all of them once its consistency step, margins or
/// bottom-up baseline run: `step` says which); a trial's end is reported as the next
/// trial's start, so the share done, `(trial + nodes_done / nodes) / trials`, never runs
/// ahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreviewProgress {
    pub trial: usize,
    pub trials: usize,
    pub nodes_done: usize,
    pub nodes: usize,
    pub step: TrialStep,
}

/// What a trial is doing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TrialStep {
    /// Measuring and estimating its regions, `nodes_done` of `nodes`.
    #[default]
    Measuring,
    /// The consistency step (each variant's, with `--compare`), and the errors.
    Consistency,
    /// The margins of error a release would publish ([`PreviewOptions::coverage`]).
    Margins,
    /// The bottom-up baseline: the leaves measured again with the whole budget.
    BottomUp,
}

impl TrialStep {
    /// What the step does, as progress lines say it.
    pub fn text(self) -> &'static str {
        match self {
            TrialStep::Measuring => "measuring the regions",
            TrialStep::Consistency => "the consistency step",
            TrialStep::Margins => "the margins of error",
            TrialStep::BottomUp => "the bottom-up baseline",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Randomness(#[from] OsRandomnessError),
    /// The margins of error of a trial (the coverage diagnostic).
    #[error("the margins of error of a trial: {0}")]
    Margins(crate::release::margins::UncertaintyError),
    /// A point of a sweep breaks a plan rule (an ε its noise cannot use).
    #[error(transparent)]
    Plan(#[from] crate::release::plan::PlanRuleError),
    /// A sweep scales a level's budget: a level left unmeasured has none to scale.
    #[error(
        "level {level:?} is not measured (budget 0): a sweep scales a level's budget, so give it one first"
    )]
    SweepUnmeasured { level: String },
    /// The levels held keep budgets that leave nothing for the others to share.
    #[error(
        "the held levels keep {held} of the total {total}: nothing is left for the levels not held to share, so there is nothing to search; release a held level (h on the Budget screen, or held = false in the plan file)"
    )]
    HeldTooMuch { held: f64, total: f64 },
}

/// The variants a preview reports: the plan's, then (with `compare`) the others.
pub fn variants(plan: &ReleasePlan, compare: bool) -> Vec<Variant> {
    let own = Variant {
        consistency: plan.consistency(),
        merge: plan.merge(),
        checked: true,
    };
    let mut out = vec![own];
    if compare {
        for c in <Consistency as Named>::all() {
            let merges: &[MergeRule] = if c.uses_merge() {
                &[MergeRule::Weighted, MergeRule::Average]
            } else {
                &[MergeRule::Weighted]
            };
            for &m in merges {
                let v = Variant {
                    consistency: c,
                    merge: m,
                    checked: true,
                };
                if !out.iter().any(|o| o.name() == v.name()) {
                    out.push(v);
                }
                // What the check buys: wls on the variance model alone.
                if c == Consistency::Wls {
                    out.push(Variant {
                        checked: false,
                        ..v
                    });
                }
            }
        }
    }
    out
}

/// Per-level mean of per-node distances to the truth.
fn level_means<H: Histograms + ?Sized>(dataset: &Dataset, histograms: &H) -> Vec<f64> {
    let h = &dataset.hierarchy;
    let truth = dataset.truth().for_diagnostic(Diagnostic::Preview);
    h.levels()
        .map(|l| {
            let total: u128 = h
                .level_range(l)
                .into_par_iter()
                .with_min_len(4096)
                .map(|i| u128::from(emd(histograms.hist(i as usize), truth.node(NodeId(i)))))
                .sum();
            total as f64 / h.level_len(l).max(1) as f64
        })
        .collect()
}

/// One trial's cell errors of one level ([`crate::cell_error`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct LevelCellErrors {
    /// `Σ D / Σ C` over the level's regions (`None` when no cell is listed).
    mae_per_cell: Option<f64>,
    /// The mean of `D / 2G` over the regions with groups (`None` when none has).
    relative_error: Option<f64>,
}

/// Per level, the cell errors of `histograms` against the truth top-coded at `k`. The
/// regions are taken in chunks of fixed bounds, each chunk's sums made in node order and
/// the chunks' added in order, so the figures do not depend on how the work was split
/// over threads, and memory stays one small sum per chunk at any scale.
fn level_cell_errors<H: Histograms + ?Sized>(
    dataset: &Dataset,
    histograms: &H,
    k: Size,
) -> Vec<LevelCellErrors> {
    /// Regions per chunk.
    const CHUNK: u32 = 4096;
    /// A chunk's `Σ D`, `Σ C`, and the sum and number of its regions' shares.
    #[derive(Clone, Copy, Default)]
    struct Sums {
        absolute: u128,
        cells: u128,
        shares: f64,
        regions: u64,
    }
    let h = &dataset.hierarchy;
    let truth = dataset.truth().for_diagnostic(Diagnostic::Preview);
    h.levels()
        .map(|l| {
            let range = h.level_range(l);
            let chunks: Vec<Sums> = (range.start..range.end)
                .step_by(CHUNK as usize)
                .collect::<Vec<u32>>()
                .into_par_iter()
                .map(|from| {
                    let mut sums = Sums::default();
                    for i in from..(from + CHUNK).min(range.end) {
                        let id = NodeId(i);
                        let d = crate::cell_error::difference(
                            histograms.hist(i as usize),
                            truth.node(id),
                            k,
                        );
                        sums.absolute += u128::from(d.absolute);
                        sums.cells += u128::from(d.cells);
                        if let Some(share) = d.share_of_groups(dataset.groups(id)) {
                            sums.shares += share;
                            sums.regions += 1;
                        }
                    }
                    sums
                })
                .collect();
            let total = chunks.iter().fold(Sums::default(), |t, c| Sums {
                absolute: t.absolute + c.absolute,
                cells: t.cells + c.cells,
                shares: t.shares + c.shares,
                regions: t.regions + c.regions,
            });
            LevelCellErrors {
                mae_per_cell: (total.cells > 0).then(|| total.absolute as f64 / total.cells as f64),
                relative_error: (total.regions > 0).then(|| total.shares / total.regions as f64),
            }
        })
        .collect()
}

/// Runs the preview of a validated plan: [`PreviewRun`] over `options.trials` trials.
pub fn preview(
    dataset: &Dataset,
    plan: &ReleasePlan,
    options: &PreviewOptions,
    cancel: Option<&AtomicBool>,
    progress: &(dyn Fn(PreviewProgress) + Sync),
) -> Result<PreviewReport, PreviewError> {
    let mut run = PreviewRun::new(dataset, plan, options)?;
    run.run(options.trials.max(1), cancel, progress)?;
    Ok(run.into_report())
}

/// A preview under way: the trials run so far and what they measured, so that more can
/// be run later. Trial `t` draws its noise from the run's key and `t` alone, and every
/// figure keeps its trials in order, so running trials `0..3` and then `3..10` gives the
/// figures of running `0..10` at once, byte for byte (the search runs a few trials of
/// every plan first, and more only of the plans still in question:
/// [`crate::tradeoff::frontier`]).
pub struct PreviewRun<'a> {
    dataset: &'a Dataset,
    plan: ReleasePlan,
    options: PreviewOptions,
    base: NoiseSource,
    variants: Vec<Variant>,
    /// The step each variant ran (differs from the one asked for after a fallback).
    ran: Vec<Variant>,
    /// Trials run.
    done: usize,
    independent: Vec<Vec<f64>>,
    consistent: Vec<Vec<Vec<f64>>>,
    bottom_up: Vec<Vec<f64>>,
    /// The plan's consistent release, cell by cell, per level and trial.
    mae: Vec<Vec<f64>>,
    relative: Vec<Vec<f64>>,
    leaning: Vec<crate::consistency::guard::Leaning>,
    max_size: Size,
    last: Option<TrialHistograms>,
    /// Per level: each trial's covered share, and the sums of cells, widths and errors.
    covered: Vec<Vec<f64>>,
    cover_sums: Vec<crate::release::margins::coverage::LevelCoverage>,
    cover_replicates: u32,
    fallbacks: Vec<crate::warning::Warning>,
}

impl<'a> PreviewRun<'a> {
    /// A run of no trials yet, with its noise key (the seed's, or fresh randomness).
    pub fn new(
        dataset: &'a Dataset,
        plan: &ReleasePlan,
        options: &PreviewOptions,
    ) -> Result<PreviewRun<'a>, PreviewError> {
        let base = match options.seed {
            Some(seed) => NoiseSource::seeded(seed),
            None => NoiseSource::from_os()?,
        };
        let depth = dataset.hierarchy.depth();
        let variants = variants(plan, options.compare);
        Ok(PreviewRun {
            dataset,
            plan: plan.clone(),
            options: options.clone(),
            base,
            ran: variants.clone(),
            consistent: vec![vec![Vec::new(); depth]; variants.len()],
            variants,
            done: 0,
            independent: vec![Vec::new(); depth],
            bottom_up: vec![Vec::new(); depth],
            mae: vec![Vec::new(); depth],
            relative: vec![Vec::new(); depth],
            leaning: vec![crate::consistency::guard::Leaning::default(); depth],
            max_size: 0,
            last: None,
            covered: vec![Vec::new(); depth],
            cover_sums: vec![crate::release::margins::coverage::LevelCoverage::default(); depth],
            cover_replicates: 0,
            fallbacks: Vec::new(),
        })
    }

    /// Trials run so far.
    pub fn trials_done(&self) -> usize {
        self.done
    }

    fn note(&mut self, w: crate::warning::Warning) {
        if !self.fallbacks.contains(&w) {
            self.fallbacks.push(w);
        }
    }

    /// Runs the trials from the next one up to `upto` (exclusive; none when `upto` trials
    /// have run). Progress counts them out of `upto`.
    pub fn run(
        &mut self,
        upto: usize,
        cancel: Option<&AtomicBool>,
        progress: &(dyn Fn(PreviewProgress) + Sync),
    ) -> Result<(), PreviewError> {
        let nodes = self.dataset.hierarchy.len();
        while self.done < upto {
            let t = self.done;
            self.trial(t, upto, cancel, progress)?;
            self.done += 1;
            progress(PreviewProgress {
                trial: t + 1,
                trials: upto,
                nodes_done: 0,
                nodes,
                step: TrialStep::Measuring,
            });
        }
        Ok(())
    }

    /// Trial `t` (of `trials` in this run).
    fn trial(
        &mut self,
        t: usize,
        trials: usize,
        cancel: Option<&AtomicBool>,
        progress: &(dyn Fn(PreviewProgress) + Sync),
    ) -> Result<(), PreviewError> {
        let (dataset, plan) = (self.dataset, &self.plan.clone());
        let h = &dataset.hierarchy;
        let options = self.options.clone();
        let source = self.base.derive(Subkey::Trial(t as u32));
        let node_progress = |done: usize, total: usize| {
            progress(PreviewProgress {
                trial: t,
                trials,
                nodes_done: done,
                nodes: total,
                step: TrialStep::Measuring,
            });
        };
        let nodes = h.len();
        let step = |step: TrialStep| {
            progress(PreviewProgress {
                trial: t,
                trials,
                nodes_done: nodes,
                nodes,
                step,
            })
        };
        let measure_phase = crate::timing::phase("preview: measure and estimate");
        let est = run::estimate_plan(
            dataset,
            plan,
            &source,
            &run::RunOptions {
                cancel,
                progress: Some(&node_progress),
                // The independent histograms always; with `compare`, every step's inputs.
                keep: Keep {
                    histograms: true,
                    runs: options.compare,
                    fits: options.compare,
                },
                keep_measurements: false,
            },
        )?;
        measure_phase.done();
        self.max_size = est.max_size;
        for w in run::saturated_tails(h, plan, &est.estimates) {
            self.note(w);
        }
        let errors_phase = crate::timing::phase("preview: independent errors");
        for (l, v) in level_means(dataset, est.estimates.histograms())
            .into_iter()
            .enumerate()
        {
            self.independent[l].push(v);
        }
        errors_phase.done();
        let mut kept_consistent = HistogramSet::new();
        step(TrialStep::Consistency);
        for (i, variant) in self.variants.clone().iter().enumerate() {
            let consistency_phase = crate::timing::phase("preview: consistency");
            let consistency_options = ConsistencyOptions {
                merge: variant.merge,
                checked: variant.checked,
                ..run::consistency_options(plan, h)
            };
            let result = consistency::make_consistent(
                variant.consistency,
                h,
                &est.estimates,
                dataset.public().groups,
                est.max_size,
                &consistency_options,
            )
            .map_err(RunError::from)?;
            if let Some(f) = result.fallback {
                self.note(f);
            }
            self.ran[i].consistency = result.used;
            consistency_phase.done();
            let _errors_phase = crate::timing::phase("preview: consistent errors");
            let hists = result.histograms;
            for (l, v) in level_means(dataset, &hists).into_iter().enumerate() {
                self.consistent[i][l].push(v);
            }
            if i == 0 {
                for (l, e) in level_cell_errors(dataset, &hists, est.max_size)
                    .into_iter()
                    .enumerate()
                {
                    self.mae[l].extend(e.mae_per_cell);
                    self.relative[l].extend(e.relative_error);
                }
                kept_consistent = hists;
                for (total, l) in self.leaning.iter_mut().zip(&result.leaning) {
                    total.add(l);
                }
                for w in run::joined_runs(h, &result.capped) {
                    self.note(w);
                }
            }
        }
        if let Some(confidence) = options.coverage {
            step(TrialStep::Margins);
            let released = crate::release::margins::Released::new(
                &kept_consistent,
                est.max_size,
                self.ran[0].consistency,
            );
            let u = crate::release::margins::intervals(
                released,
                plan,
                dataset.public(),
                &crate::release::margins::UncertaintyOptions {
                    confidence,
                    replicates: crate::release::margins::Replicates::Within(
                        crate::release::margins::WORK_BUDGET / 10 / options.trials.max(1) as u64,
                    ),
                    key: Some(source),
                    ..Default::default()
                },
            )
            .map_err(PreviewError::Margins)?;
            self.cover_replicates = u.replicates;
            let truth = dataset.truth().for_diagnostic(Diagnostic::Preview);
            let levels = crate::release::margins::coverage::coverage_of(
                &kept_consistent,
                &u,
                dataset.public(),
                truth,
            );
            for (l, c) in levels.iter().enumerate() {
                if let Some(share) = c.share() {
                    self.covered[l].push(share);
                }
                let s = &mut self.cover_sums[l];
                s.cells += c.cells;
                s.covered += c.covered;
                s.width += c.width;
                s.error += c.error;
            }
        }
        let bu = if options.bottom_up {
            step(TrialStep::BottomUp);
            let bottom_up_phase = crate::timing::phase("preview: bottom-up baseline");
            let bu = run::bottom_up(dataset, plan, est.max_size, &source, cancel)?;
            bottom_up_phase.done();
            let errors_phase = crate::timing::phase("preview: bottom-up errors");
            for (l, v) in level_means(dataset, &bu).into_iter().enumerate() {
                self.bottom_up[l].push(v);
            }
            errors_phase.done();
            bu
        } else {
            HistogramSet::new()
        };
        if options.keep_last_trial && t + 1 == trials {
            self.last = Some(TrialHistograms {
                independent: est.estimates.histograms().clone(),
                consistent: kept_consistent,
                bottom_up: bu,
            });
        }
        Ok(())
    }

    /// The figures of the trials run so far, with the last trial's histograms when
    /// [`PreviewOptions::keep_last_trial`] asked for them.
    pub fn into_report(mut self) -> PreviewReport {
        let last = self.last.take();
        PreviewReport {
            last_trial: last,
            ..self.report()
        }
    }

    /// The figures of the trials run so far (without the last trial's histograms:
    /// [`PreviewRun::into_report`]).
    pub fn report(&self) -> PreviewReport {
        let (dataset, plan) = (self.dataset, &self.plan);
        let h = &dataset.hierarchy;
        let levels = h
            .levels()
            .map(|l| {
                let lp = plan.level(l);
                LevelDiagnostics {
                    level: lp.name().to_string(),
                    nodes: h.level_len(l),
                    budget: lp.budget().clone(),
                    method: lp.method().label(),
                    independent: lp.is_measured().then(|| Stat::of(&self.independent[l.0])),
                    consistent: self
                        .ran
                        .iter()
                        .enumerate()
                        .map(|(i, v)| VariantStat {
                            variant: v.name(),
                            emd: Stat::of(&self.consistent[i][l.0]),
                        })
                        .collect(),
                    bottom_up: Stat::of(&self.bottom_up[l.0]),
                    omniscient: lp.loss().map(|b| omniscient(dataset, l, b, self.max_size)),
                    mae_per_cell: (!self.mae[l.0].is_empty()).then(|| Stat::of(&self.mae[l.0])),
                    relative_error: (!self.relative[l.0].is_empty())
                        .then(|| Stat::of(&self.relative[l.0])),
                    own_weight: self.leaning[l.0]
                        .means()
                        .map(|(own, model)| OwnWeight { own, model }),
                    coverage: self
                        .options
                        .coverage
                        .filter(|_| !self.covered[l.0].is_empty())
                        .map(|c| {
                            let s = &self.cover_sums[l.0];
                            let n = s.cells.max(1) as f64;
                            Coverage {
                                confidence: c.level(),
                                share: Stat::of(&self.covered[l.0]),
                                mean_width: s.width as f64 / n,
                                mean_error: s.error as f64 / n,
                                replicates: self.cover_replicates,
                            }
                        }),
                }
            })
            .collect();
        PreviewReport {
            notice: CONFIDENTIAL_NOTICE.to_string(),
            dataset: dataset.name(),
            total_epsilon: plan.total_epsilon(),
            total: plan.total(),
            max_size: self.max_size,
            max_size_estimated: matches!(plan.max_size(), MaxSize::Estimate { .. }),
            trials: self.done,
            randomness: self.base.randomness().describe(),
            levels,
            notes: self.fallbacks.clone(),
            last_trial: None,
        }
    }
}

/// The paper's omniscient reference for one level: the mean over its nodes of
/// (distinct sizes after top-coding) × the noise's standard deviation per cell: `√2/ε`
/// for a pure plan, the discrete Gaussian's `σ = √(1/(2ρ))` (from the noise's variance)
/// for a zCDP plan.
pub fn omniscient(
    dataset: &Dataset,
    level: crate::data::LevelId,
    budget: &Loss,
    max_size: Size,
) -> f64 {
    let h = &dataset.hierarchy;
    // The noise's standard deviation per cell. A pure plan keeps the continuous
    // Laplace's `√2/ε`, Kuo et al.'s §6.2 definition of the reference, rather than the
    // discrete Laplace's `√(2p)/(1 − p)` (`p = e^{−ε}`, a few percent less at the
    // budgets previews use): the pure figures stay the paper's, comparable with its
    // tables and with previews, snapshots and docs made before zCDP. A zCDP plan has no
    // such precedent and takes the discrete Gaussian's `σ`, from the variance the
    // estimators use.
    let scale = match budget {
        Loss::Pure(epsilon) => std::f64::consts::SQRT_2 / epsilon.to_f64(),
        Loss::Zcdp(_) => {
            crate::estimate::noise_variance(crate::noise::Sensitivity::ONE, budget).sqrt()
        }
    };
    let total: f64 = h
        .level_nodes(level)
        .map(|id| {
            dataset
                .truth()
                .for_diagnostic(Diagnostic::Preview)
                .node(id)
                .top_coded(max_size)
                .distinct_sizes() as f64
                * scale
        })
        .sum();
    total / h.level_len(level).max(1) as f64
}

/// A number with thousands separators and sensible precision.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    if x.abs() < 10.0 {
        return format!("{x:.2}");
    }
    if x.abs() < 1000.0 {
        return format!("{x:.1}");
    }
    let n = x.round() as i128;
    let digits = n.abs().to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 { format!("-{out}") } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_and_numbers() {
        let s = Stat::of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.mean, 2.5);
        assert!((s.se - (5.0f64 / 3.0).sqrt() / 2.0).abs() < 1e-12);
        assert_eq!(Stat::of(&[7.0]).se, 0.0);
        assert_eq!(fmt_num(1234567.4), "1,234,567");
        assert_eq!(fmt_num(999.94), "999.9");
        assert_eq!(fmt_num(4.567), "4.57");
        assert_eq!(fmt_num(-12345.0), "-12,345");
    }
}
