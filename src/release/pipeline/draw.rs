//! Drawing a release: measure every node under the plan, post-process, make the
//! estimates consistent, check.
//!
//! One loop measures and estimates regions ([`estimate_nodes`]), for a release, a
//! preview trial, the bottom-up baseline and the margins' bootstrap replicates alike: it
//! reads a region's counts through [`Counts`], the confidential dataset or released
//! histograms standing for it. Each region is measured with its own noise stream
//! ([`Purpose::node`]) and estimated at once, so only one noisy vector per worker thread
//! is alive at a time; the regions of all levels are processed in parallel. The privacy guarantee of the draw is computed from
//! the measurements actually made ([`crate::release::pipeline::accounting::guarantee`]) and must equal the
//! plan's total ε, or nothing is returned. Before anything is measured, the memory the
//! plan needs is checked against the memory available ([`crate::release::pipeline::resources`]).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;
use thiserror::Error;

use crate::consistency::{self, Consistency, ConsistencyError};
use crate::data::{Dataset, NodeId, PublicData};
use crate::estimate::{self, EstimateOptions, Estimates, Keep, Method, max_size};
use crate::histogram::{HistRef, HistogramSet, Size};
use crate::noise::{Noise, NoiseError, NoiseSource, Purpose, Randomness};
use crate::privacy::Loss;
use crate::release::pipeline::accounting::{Charge, Charges};
use crate::release::pipeline::checks::{Checks, check_release};
use crate::release::pipeline::resources::{self, ResourceError};
use crate::release::plan::{MaxSize, ReleasePlan};
use crate::warning::Warning;

#[derive(Debug, Error)]
pub enum RunError {
    #[error("level {level}: {source}")]
    Noise { level: String, source: NoiseError },
    #[error("estimating the bound K: {0}")]
    MaxSize(NoiseError),
    #[error(transparent)]
    Consistency(#[from] ConsistencyError),
    #[error(
        "internal error: the measurements spend ε = {measured}, the plan states {planned}; nothing was released"
    )]
    BudgetMismatch { measured: String, planned: String },
    #[error(transparent)]
    Resources(Box<ResourceError>),
    /// Refused for lack of memory once `K` had been estimated: the estimate's budget is
    /// spent (the refusal depends on `K`), and a release must record it in the ledger.
    #[error("{refusal}; K was estimated privately first, so its {budget} is spent")]
    ResourcesAfterMaxSize {
        refusal: Box<ResourceError>,
        budget: Loss,
    },
    #[error("the plan has no levels")]
    EmptyPlan,
    #[error("cancelled")]
    Cancelled,
}

impl From<ResourceError> for RunError {
    fn from(e: ResourceError) -> Self {
        RunError::Resources(Box::new(e))
    }
}

impl RunError {
    /// The budget spent by measurements made before the failure, which the ledger must
    /// record: only a private `K` followed by a refusal that depends on it. Every other
    /// failure happens before any measurement, or after measurements whose results no
    /// one sees.
    pub fn spent_before_failing(&self) -> Option<&Loss> {
        match self {
            RunError::ResourcesAfterMaxSize { budget, .. } => Some(budget),
            _ => None,
        }
    }
}

/// Reports work done: `(done, total)` nodes.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// The bound `K` a release is measured with: fixed by the plan, or estimated privately.
pub struct ResolvedMaxSize {
    pub max_size: Size,
    /// What estimating it cost, when it was estimated.
    pub charge: Option<Charge>,
    /// \[uncertainty\] The private probe's noisy measurement, when one was made.
    pub probe: Option<max_size::MaxSizeMeasurement>,
}

/// The public bound `K`: the plan's, or estimated privately from the root (its own
/// stream, [`Purpose::MaxSize`]).
pub fn resolve_max_size(
    dataset: &Dataset,
    plan: &ReleasePlan,
    source: &NoiseSource,
) -> Result<ResolvedMaxSize, RunError> {
    match &plan.max_size() {
        MaxSize::Fixed(k) => Ok(ResolvedMaxSize {
            max_size: *k,
            charge: None,
            probe: None,
        }),
        MaxSize::Estimate { budget } => {
            let mut stream = source.stream(Purpose::MaxSize.node(NodeId::ROOT));
            let root = dataset.truth().for_measurement().node(NodeId::ROOT);
            let (probe, k) = max_size::estimate_max_size(root, budget, &mut stream)
                .map_err(RunError::MaxSize)?;
            Ok(ResolvedMaxSize {
                max_size: k,
                charge: Some(Charge {
                    node: NodeId::ROOT,
                    budget: budget.clone(),
                }),
                probe: Some(probe),
            })
        }
    }
}

pub use super::LevelSetting;

/// What a batch of measurements reads: each region's counts and its public `G`.
///
/// For a release or a preview trial the counts are the confidential dataset's, opened
/// for measurement only ([`Counts::of_dataset`], crate-private: what it reads leaves
/// with noise added). For a bootstrap replicate of the margins of error they are the
/// released histograms standing for the truth ([`Counts::released`]): the margins hold
/// no dataset, so they cannot measure one.
#[derive(Clone, Copy)]
pub struct Counts<'a> {
    histograms: &'a HistogramSet,
    public: PublicData<'a>,
}

impl<'a> Counts<'a> {
    /// The confidential dataset's counts, for measurement.
    pub(crate) fn of_dataset(dataset: &'a Dataset) -> Counts<'a> {
        Counts {
            histograms: dataset.truth().for_measurement().all(),
            public: dataset.public(),
        }
    }

    /// Released histograms (one per region of `public.hierarchy`) standing for the
    /// truth: a bootstrap replicate measures them as the release measured the dataset.
    pub fn released(histograms: &'a HistogramSet, public: PublicData<'a>) -> Counts<'a> {
        Counts { histograms, public }
    }

    fn node(&self, id: NodeId) -> HistRef<'a> {
        self.histograms.get(id.index())
    }
}

/// What a batch of measurements measures: each level's setting (`None` for a level not
/// measured), the public bound `K`, and the post-processing options.
#[derive(Clone, Copy)]
pub struct Settings<'a> {
    pub levels: &'a [Option<LevelSetting>],
    pub max_size: Size,
    pub options: &'a EstimateOptions,
}

/// Where a batch's noise comes from (the key and the streams' purpose), and how to stop
/// it and report on it.
#[derive(Clone, Copy)]
pub struct Draws<'a> {
    pub source: &'a NoiseSource,
    pub purpose: Purpose,
    pub cancel: Option<&'a AtomicBool>,
    pub progress: Option<Progress<'a>>,
    /// \[uncertainty\] Where to keep every noisy measurement made (`coco release
    /// --measurements`); `None`: they are dropped once estimated.
    pub measurements: Option<&'a std::sync::Mutex<Vec<estimate::NodeMeasurement>>>,
}

/// Nodes measured by one task.
const CHUNK: usize = 64;

/// The work of estimating one measurement of `n` values: the fits sort or heap their
/// values, `n·(1 + log₂ n)` (what the margins size their replicates by).
pub fn measurement_work(n: usize) -> u64 {
    let n = n as u64;
    n.saturating_mul(1 + u64::from(n.max(1).ilog2()))
}

/// A batch measured and estimated.
pub struct Batch {
    /// In the order of the nodes asked for.
    pub estimates: Estimates,
    /// What the batch's measurements spent.
    pub charges: Charges,
    /// The work of its measurements ([`measurement_work`], summed).
    pub work: u64,
}

/// Measures and estimates the given nodes, each with its level's setting, keeping what
/// `keep` says of each estimate: the one measurement loop of every release, preview
/// trial, baseline and bootstrap replicate.
pub fn estimate_nodes(
    counts: &Counts<'_>,
    nodes: &[NodeId],
    settings: &Settings<'_>,
    draws: &Draws<'_>,
    keep: Keep,
) -> Result<Batch, RunError> {
    let Settings {
        levels: settings,
        max_size,
        options,
    } = *settings;
    let Draws {
        source,
        purpose,
        cancel,
        progress,
        measurements,
    } = *draws;
    let h = counts.public.hierarchy;
    // Validate each level's noise once, before any measurement.
    for (level, setting) in h.levels().zip(settings) {
        if let Some(s) = setting {
            Noise::for_loss(&s.budget, s.method.sensitivity_norms()).map_err(|source| {
                RunError::Noise {
                    level: h.level_name(level).to_string(),
                    source,
                }
            })?;
        }
    }
    let done = AtomicUsize::new(0);
    let parts: Vec<(Estimates, u64)> = nodes
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut out = Estimates::new(keep);
            let mut work = 0u64;
            let mut kept = Vec::new();
            for &id in chunk {
                if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    return Err(RunError::Cancelled);
                }
                let level = h.node(id).level;
                let Some(setting) = settings[level.0].as_ref() else {
                    // A level left unmeasured: no noise is drawn for its regions, and the
                    // consistency step estimates them from their children.
                    out.push_unmeasured();
                    continue;
                };
                let mut stream = source.stream(purpose.node(id));
                let m = estimate::measure(
                    setting.method,
                    counts.node(id),
                    id,
                    counts.public.groups(id),
                    max_size,
                    &setting.budget,
                    &mut stream,
                )
                .map_err(|source| RunError::Noise {
                    level: h.level_name(level).to_string(),
                    source,
                })?;
                work = work.saturating_add(measurement_work(m.noisy().len()));
                // The noisy measurement is kept for the regions with children only.
                let options = EstimateOptions {
                    keep_raw: !h.node(id).is_leaf(),
                    ..*options
                };
                out.push(estimate::estimate(&m, &options));
                if measurements.is_some() {
                    kept.push(m);
                }
            }
            if let Some(sink) = measurements {
                sink.lock().unwrap_or_else(|e| e.into_inner()).extend(kept);
            }
            if let Some(p) = progress {
                p(
                    done.fetch_add(chunk.len(), Ordering::Relaxed) + chunk.len(),
                    nodes.len(),
                );
            }
            Ok((out, work))
        })
        .collect::<Result<_, _>>()?;
    let work = parts.iter().fold(0u64, |a, (_, w)| a.saturating_add(*w));
    let estimates = Estimates::concat(keep, parts.into_iter().map(|(e, _)| e).collect());
    let mut charges = Charges::new();
    for (level, setting) in h.levels().zip(settings) {
        if let Some(s) = setting {
            charges.extend(
                nodes
                    .iter()
                    .copied()
                    .filter(|&id| h.node(id).level == level),
                &s.budget,
            );
        }
    }
    Ok(Batch {
        estimates,
        charges,
        work,
    })
}

/// The plan's per-level settings, in hierarchy order (the plan must be validated):
/// `None` for a level left unmeasured, whose regions are estimated from their children.
pub fn plan_settings(plan: &ReleasePlan) -> Vec<Option<LevelSetting>> {
    plan.levels()
        .iter()
        .map(|l| {
            l.loss().map(|budget| LevelSetting {
                method: l.method(),
                budget: budget.clone(),
            })
        })
        .collect()
}

/// Independent estimates of every node under the plan, with `K` and the charges.
pub struct PlanEstimates {
    pub max_size: Size,
    /// \[uncertainty\] The noisy measurements, when they were asked to be kept.
    pub measurements: Option<crate::release::pipeline::measurements::Measurements>,
    /// Indexed by [`NodeId`].
    pub estimates: Estimates,
    pub charges: Charges,
}

/// The plan's consistency options for a hierarchy, with `wls`'s memory budget sized
/// from the memory available now (a release's step and its replicates' alike).
pub fn consistency_options(
    plan: &ReleasePlan,
    hierarchy: &crate::data::Hierarchy,
) -> crate::consistency::ConsistencyOptions {
    crate::consistency::ConsistencyOptions {
        run_budget: crate::consistency::wls::RunBudget::from_available(
            resources::available_memory().bytes,
            hierarchy.depth(),
        ),
        ..plan.consistency_options()
    }
}

/// What the plan's consistency step needs of each estimate, and whatever of `also` the
/// caller needs besides (a preview's independent histograms, or every step's inputs to
/// compare steps).
pub fn keep_for(plan: &ReleasePlan, also: Keep) -> Keep {
    let step = plan.consistency();
    Keep {
        histograms: also.histograms,
        runs: also.runs
            || step == Consistency::TopDown
            || plan.levels().iter().any(|l| l.method() == Method::Naive),
        fits: also.fits || step == Consistency::Wls,
    }
}

/// How to run a plan's measurements: what to keep of them, and how to stop the run and
/// report on it. The default keeps what the plan's consistency step needs and no noisy
/// measurement.
#[derive(Clone, Copy, Default)]
pub struct RunOptions<'a> {
    /// Raised to stop the run ([`RunError::Cancelled`]).
    pub cancel: Option<&'a AtomicBool>,
    /// Told `(done, total)` regions as they are measured.
    pub progress: Option<Progress<'a>>,
    /// What to keep of each estimate beyond what the plan's consistency step needs
    /// ([`keep_for`]).
    pub keep: Keep,
    /// \[uncertainty\] Keep every noisy measurement (`coco release --measurements`).
    pub keep_measurements: bool,
}

/// Measures and estimates every node under a validated plan, keeping what `options`
/// says.
pub fn estimate_plan(
    dataset: &Dataset,
    plan: &ReleasePlan,
    source: &NoiseSource,
    options: &RunOptions<'_>,
) -> Result<PlanEstimates, RunError> {
    if plan.levels().is_empty() {
        return Err(RunError::EmptyPlan);
    }
    let keep = keep_for(plan, options.keep);
    let settings = plan_settings(plan);
    let guard = |k: Size| {
        resources::check(
            "this plan",
            resources::plan_needs(
                dataset,
                &settings,
                k,
                &plan.estimate_options(),
                plan.consistency(),
                resources::Kept {
                    histograms: keep.histograms,
                    runs: keep.runs,
                    fits: keep.fits,
                },
            ),
            resources::available_memory(),
            resources::advice(
                &settings,
                matches!(plan.max_size(), MaxSize::Estimate { .. }),
            ),
        )
    };
    // Before any measurement: with a fixed K the check is exact; with a private K, what
    // does not fit even at the smallest K is refused before K is drawn.
    guard(match plan.max_size() {
        MaxSize::Fixed(k) => *k,
        MaxSize::Estimate { .. } => max_size::MIN_K,
    })?;
    let k = resolve_max_size(dataset, plan, source)?;
    let sink = options
        .keep_measurements
        .then(|| std::sync::Mutex::new(Vec::new()));
    if let Some(charge) = &k.charge {
        guard(k.max_size).map_err(|refusal| RunError::ResourcesAfterMaxSize {
            refusal: Box::new(refusal),
            budget: charge.budget.clone(),
        })?;
    }
    let all: Vec<NodeId> = (0..dataset.hierarchy.len() as u32).map(NodeId).collect();
    let Batch {
        estimates,
        mut charges,
        work: _,
    } = estimate_nodes(
        &Counts::of_dataset(dataset),
        &all,
        &Settings {
            levels: &settings,
            max_size: k.max_size,
            options: &plan.estimate_options(),
        },
        &Draws {
            source,
            purpose: Purpose::Measure,
            cancel: options.cancel,
            progress: options.progress,
            measurements: sink.as_ref(),
        },
        keep,
    )?;
    if let Some(c) = k.charge {
        charges.push(c.node, &c.budget);
    }
    Ok(PlanEstimates {
        measurements: sink.map(|s| {
            crate::release::pipeline::measurements::Measurements::new(
                s.into_inner().unwrap_or_else(|e| e.into_inner()),
                k.probe,
            )
        }),
        max_size: k.max_size,
        estimates,
        charges,
    })
}

/// A drawn release, checked, not yet written.
///
/// Constructible only by [`draw`], the measurement path: its histograms are the
/// consistent post-processing of noisy measurements, never of the truth. Only a `Draw`
/// is written ([`crate::release::outputs::export::write_release_dir`]) or recorded in the ledger.
#[derive(Clone, Debug)]
pub struct Draw {
    max_size: Size,
    /// The released histogram of every node, indexed by [`NodeId`].
    histograms: HistogramSet,
    checks: Checks,
    /// The guarantee (an ε of pure DP or a ρ of zCDP), from the measurements made.
    guarantee: Loss,
    randomness: Randomness,
    /// The consistency step that ran.
    consistency: Consistency,
    /// Why the plan's consistency step was replaced, if it was.
    fallback: Option<Warning>,
    /// What the operator should know about the estimates (saturated tails, runs joined).
    warnings: Vec<Warning>,
    /// Per level, how much `wls` leaned on the regions' own measurements.
    leaning: Vec<crate::consistency::guard::Leaning>,
    /// Per level, regions whose `wls` runs were joined to stay within memory.
    runs_joined: Vec<u64>,
    /// The draw's ledger id: every ledger line about this draw carries it.
    id: String,
    /// \[uncertainty\] The noisy measurements, when asked for (`--measurements`).
    measurements: Option<std::sync::Arc<crate::release::pipeline::measurements::Measurements>>,
}

impl Draw {
    /// The public bound `K` the release was measured with.
    pub fn max_size(&self) -> Size {
        self.max_size
    }

    /// The released histogram of every node, indexed by [`NodeId`].
    pub fn histograms(&self) -> &HistogramSet {
        &self.histograms
    }

    pub fn checks(&self) -> &Checks {
        &self.checks
    }

    /// The guarantee (an ε of pure DP or a ρ of zCDP), from the measurements made.
    pub fn guarantee(&self) -> &Loss {
        &self.guarantee
    }

    pub fn randomness(&self) -> Randomness {
        self.randomness
    }

    /// The consistency step that ran.
    pub fn consistency(&self) -> Consistency {
        self.consistency
    }

    /// Why the plan's consistency step was replaced, if it was.
    pub fn fallback(&self) -> Option<&Warning> {
        self.fallback.as_ref()
    }

    /// What the operator should know about the estimates (saturated tails).
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Per level (root first), how much `wls` leaned on the regions' own measurements.
    pub fn leaning(&self) -> &[crate::consistency::guard::Leaning] {
        &self.leaning
    }

    /// Per level, regions whose `wls` runs were joined to stay within memory.
    pub fn runs_joined(&self) -> &[u64] {
        &self.runs_joined
    }

    /// The draw's ledger id: every ledger line about this draw carries it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// \[uncertainty\] The noisy measurements the release was computed from, when the
    /// draw was asked to keep them ([`DrawOptions::keep_measurements`]): differentially
    /// private outputs themselves.
    pub fn measurements(&self) -> Option<&crate::release::pipeline::measurements::Measurements> {
        self.measurements.as_deref()
    }
}

/// How to draw a release: how to stop it and report on it, and whether to keep its
/// noisy measurements ([`Draw::measurements`]).
#[derive(Clone, Copy, Default)]
pub struct DrawOptions<'a> {
    /// Raised to stop the draw ([`RunError::Cancelled`]).
    pub cancel: Option<&'a AtomicBool>,
    /// Told `(done, total)` regions as they are measured.
    pub progress: Option<Progress<'a>>,
    /// \[uncertainty\] Keep every noisy measurement (`coco release --measurements`).
    pub keep_measurements: bool,
}

/// Draws one release under a validated plan.
pub fn draw(
    dataset: &Dataset,
    plan: &ReleasePlan,
    source: &NoiseSource,
    options: &DrawOptions<'_>,
) -> Result<Draw, RunError> {
    let phase = crate::timing::phase("measure and estimate");
    let est = estimate_plan(
        dataset,
        plan,
        source,
        &RunOptions {
            cancel: options.cancel,
            progress: options.progress,
            keep: Keep::NONE,
            keep_measurements: options.keep_measurements,
        },
    )?;
    phase.done();
    let guarantee = verified_guarantee(dataset, plan, &est.charges)?;
    let phase = crate::timing::phase("consistency");
    let consistent = consistency::make_consistent(
        plan.consistency(),
        &dataset.hierarchy,
        &est.estimates,
        dataset.public().groups,
        est.max_size,
        &consistency_options(plan, &dataset.hierarchy),
    )?;
    phase.done();
    let phase = crate::timing::phase("checks");
    let checks = check_release(dataset.public(), &consistent.histograms, est.max_size);
    phase.done();
    let mut warnings = saturated_tails(&dataset.hierarchy, plan, &est.estimates);
    warnings.extend(joined_runs(&dataset.hierarchy, &consistent.capped));
    Ok(Draw {
        max_size: est.max_size,
        histograms: consistent.histograms,
        checks,
        guarantee,
        randomness: source.randomness(),
        consistency: consistent.used,
        fallback: consistent.fallback,
        warnings,
        leaning: consistent.leaning,
        runs_joined: consistent.capped,
        id: crate::release::ledger::new_id(),
        measurements: est.measurements.map(std::sync::Arc::new),
    })
}

/// One warning per level where some region's tail was saturated: it listed `m` groups,
/// all above `L`, so more may lie above `L` and the unlisted ones were put at `L`.
/// Reads the estimates only (post-processing).
pub fn saturated_tails(
    hierarchy: &crate::data::Hierarchy,
    plan: &ReleasePlan,
    estimates: &Estimates,
) -> Vec<Warning> {
    let mut out = Vec::new();
    for level in hierarchy.levels() {
        let Some(tail) = plan.level(level).method().tail() else {
            continue;
        };
        let saturated = hierarchy
            .level_nodes(level)
            .filter(|id| estimates.saturated(id.index()))
            .count();
        if saturated > 0 {
            out.push(Warning::SaturatedTail {
                level: plan.level(level).name().to_string(),
                saturated: saturated as u64,
                regions: hierarchy.level_len(level) as u64,
                listed: tail.groups,
                above: tail.above,
            });
        }
    }
    out
}

/// One warning per level where `wls` joined some region's runs to stay within the
/// memory it had ([`crate::consistency::wls::RunBudget`]).
pub fn joined_runs(hierarchy: &crate::data::Hierarchy, capped: &[u64]) -> Vec<Warning> {
    hierarchy
        .levels()
        .zip(capped)
        .filter(|&(_, &n)| n > 0)
        .map(|(level, &n)| Warning::JoinedRuns {
            level: hierarchy.level_name(level).to_string(),
            joined: n,
            regions: hierarchy.level_len(level) as u64,
        })
        .collect()
}

/// The guarantee of the charges, which must equal the plan's stated total.
pub fn verified_guarantee(
    dataset: &Dataset,
    plan: &ReleasePlan,
    charges: &Charges,
) -> Result<Loss, RunError> {
    let measured = charges
        .guarantee(&dataset.hierarchy)
        .ok_or(RunError::EmptyPlan)?;
    let planned = plan.total().ok_or(RunError::EmptyPlan)?;
    if measured != planned {
        return Err(RunError::BudgetMismatch {
            measured: measured.to_string(),
            planned: planned.to_string(),
        });
    }
    Ok(measured)
}

/// The bottom-up baseline at the same total ε as the plan's levels: every level's budget
/// spent on the leaves with the leaf level's method, parents summed.
pub fn bottom_up(
    dataset: &Dataset,
    plan: &ReleasePlan,
    max_size: Size,
    source: &NoiseSource,
    cancel: Option<&AtomicBool>,
) -> Result<HistogramSet, RunError> {
    let h = &dataset.hierarchy;
    let leaf_level = h.leaf_level();
    let total = plan.levels_total().ok_or(RunError::EmptyPlan)?;
    let mut settings: Vec<Option<LevelSetting>> = vec![None; h.depth()];
    settings[leaf_level.0] = Some(LevelSetting {
        method: plan.level(leaf_level).method(),
        budget: total,
    });
    let leaves: Vec<NodeId> = h.level_nodes(leaf_level).collect();
    resources::check(
        "the bottom-up baseline",
        resources::needs(
            dataset,
            &leaves,
            &settings,
            max_size,
            &plan.estimate_options(),
            None,
            resources::Kept {
                histograms: true,
                runs: false,
                fits: false,
            },
            rayon::current_num_threads(),
        ),
        resources::available_memory(),
        resources::advice(&settings, false),
    )?;
    let batch = estimate_nodes(
        &Counts::of_dataset(dataset),
        &leaves,
        &Settings {
            levels: &settings,
            max_size,
            options: &plan.estimate_options(),
        },
        &Draws {
            source,
            purpose: Purpose::BottomUp,
            cancel,
            progress: None,
            measurements: None,
        },
        Keep {
            histograms: true,
            runs: false,
            fits: false,
        },
    )?;
    Ok(consistency::bottom_up(
        h,
        batch.estimates.histograms().iter(),
    ))
}
