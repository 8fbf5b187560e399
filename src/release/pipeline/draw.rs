//! Drawing a release: measure every node under the plan, post-process, make the
//! estimates consistent, check.
//!
//! Each node is measured with its own noise stream ([`StreamId::node`]) and estimated at
//! once, so only one noisy vector per worker thread is alive at a time; the nodes of all
//! levels are processed in parallel. The privacy guarantee of the draw is computed from
//! the measurements actually made ([`crate::release::pipeline::accounting::guarantee`]) and must equal the
//! plan's total ε, or nothing is returned. Before anything is measured, the memory the
//! plan needs is checked against the memory available ([`crate::release::pipeline::resources`]).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;
use thiserror::Error;

use crate::consistency::{self, Consistency, ConsistencyError};
use crate::data::{Dataset, NodeId};
use crate::estimate::{self, EstimateOptions, Estimates, Keep, Method, max_size};
use crate::histogram::{HistogramSet, Size};
use crate::noise::{DiscreteLaplace, NoiseError, NoiseSource, Randomness, StreamId};
use crate::privacy::Epsilon;
use crate::release::pipeline::accounting::{Charge, Charges};
use crate::release::pipeline::checks::{Checks, check_release};
use crate::release::pipeline::resources::{self, ResourceError};
use crate::release::plan::{MaxSize, ReleasePlan};
use crate::warning::Warning;

/// Stream purposes: the release's own measurements, the bottom-up baseline's, and `K`'s.
pub const PURPOSE_RELEASE: u8 = 0;
pub const PURPOSE_BOTTOM_UP: u8 = 1;
pub const PURPOSE_MAX_SIZE: u8 = 2;

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
    #[error("{refusal}; K was estimated privately first, so its ε = {epsilon} is spent")]
    ResourcesAfterMaxSize {
        refusal: Box<ResourceError>,
        epsilon: Epsilon,
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
    pub fn spent_before_failing(&self) -> Option<&Epsilon> {
        match self {
            RunError::ResourcesAfterMaxSize { epsilon, .. } => Some(epsilon),
            _ => None,
        }
    }
}

/// Reports work done: `(done, total)` nodes.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// The public bound `K` and, when it was estimated, what estimating it cost.
pub fn resolve_max_size(
    dataset: &Dataset,
    plan: &ReleasePlan,
    source: &NoiseSource,
) -> Result<(Size, Option<Charge>), RunError> {
    resolve_max_size_keeping(dataset, plan, source).map(|(k, c, _)| (k, c))
}

/// [`resolve_max_size`], with the private probe's noisy measurement when one was made.
pub fn resolve_max_size_keeping(
    dataset: &Dataset,
    plan: &ReleasePlan,
    source: &NoiseSource,
) -> Result<(Size, Option<Charge>, Option<max_size::MaxSizeMeasurement>), RunError> {
    match &plan.max_size() {
        MaxSize::Fixed(k) => Ok((*k, None, None)),
        MaxSize::Estimate { epsilon } => {
            let mut stream = source.stream(StreamId::node(PURPOSE_MAX_SIZE, 0));
            let root = dataset.truth().for_measurement().node(NodeId::ROOT);
            let (probe, k) = max_size::estimate_max_size(root, epsilon, &mut stream)
                .map_err(RunError::MaxSize)?;
            Ok((
                k,
                Some(Charge {
                    node: NodeId::ROOT,
                    epsilon: epsilon.clone(),
                }),
                Some(probe),
            ))
        }
    }
}

pub use super::LevelSetting;

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
    pub purpose: u8,
    pub cancel: Option<&'a AtomicBool>,
    pub progress: Option<Progress<'a>>,
    /// \[uncertainty\] Where to keep every noisy measurement made (`coco release
    /// --measurements`); `None`: they are dropped once estimated.
    pub measurements: Option<&'a std::sync::Mutex<Vec<estimate::NodeMeasurement>>>,
}

/// Nodes measured by one task.
const CHUNK: usize = 64;

/// Measures and estimates the given nodes, each with its level's setting, keeping what
/// `keep` says of each estimate. Returns the estimates (in the order of `nodes`) and
/// the charges made.
pub fn estimate_nodes(
    dataset: &Dataset,
    nodes: &[NodeId],
    settings: &Settings<'_>,
    draws: &Draws<'_>,
    keep: Keep,
) -> Result<(Estimates, Charges), RunError> {
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
    let h = &dataset.hierarchy;
    // Validate each level's noise once, before any measurement.
    for (level, setting) in h.levels().zip(settings) {
        if let Some(s) = setting {
            DiscreteLaplace::new(s.method.sensitivity(), &s.epsilon).map_err(|source| {
                RunError::Noise {
                    level: h.level_name(level).to_string(),
                    source,
                }
            })?;
        }
    }
    let done = AtomicUsize::new(0);
    let truth = dataset.truth().for_measurement();
    let parts: Vec<Estimates> = nodes
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut out = Estimates::new(keep);
            let mut kept = Vec::new();
            for &id in chunk {
                if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    return Err(RunError::Cancelled);
                }
                let level = h.node(id).level;
                let setting = settings[level.0]
                    .as_ref()
                    .expect("a setting for every measured level");
                let mut stream = source.stream(StreamId::node(purpose, id.0));
                let m = estimate::measure(
                    setting.method,
                    truth.node(id),
                    id,
                    dataset.groups(id),
                    max_size,
                    &setting.epsilon,
                    &mut stream,
                )
                .map_err(|source| RunError::Noise {
                    level: h.level_name(level).to_string(),
                    source,
                })?;
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
            Ok(out)
        })
        .collect::<Result<_, _>>()?;
    let estimates = Estimates::concat(keep, parts);
    let mut charges = Charges::new();
    for (level, setting) in h.levels().zip(settings) {
        if let Some(s) = setting {
            charges.extend(
                nodes
                    .iter()
                    .copied()
                    .filter(|&id| h.node(id).level == level),
                &s.epsilon,
            );
        }
    }
    Ok((estimates, charges))
}

/// The plan's per-level settings, in hierarchy order (the plan must be validated).
pub fn plan_settings(plan: &ReleasePlan) -> Vec<Option<LevelSetting>> {
    plan.levels()
        .iter()
        .map(|l| {
            Some(LevelSetting {
                method: l.method(),
                epsilon: l.epsilon().clone(),
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

/// The plan's consistency options for `dataset`, with `wls`'s memory budget sized from
/// the memory available now.
pub fn consistency_options(
    plan: &ReleasePlan,
    dataset: &Dataset,
) -> crate::consistency::ConsistencyOptions {
    crate::consistency::ConsistencyOptions {
        run_budget: crate::consistency::wls::RunBudget::from_available(
            resources::available_memory().bytes,
            dataset.hierarchy.depth(),
        ),
        ..plan.consistency_options()
    }
}

/// What the plan's consistency step needs of each estimate (and, for previews, the
/// independent histograms too).
pub fn keep_for(plan: &ReleasePlan, histograms: bool, all_steps: bool) -> Keep {
    let step = plan.consistency();
    Keep {
        histograms,
        runs: all_steps
            || step == Consistency::TopDown
            || plan.levels().iter().any(|l| l.method() == Method::Naive),
        fits: all_steps || step == Consistency::Wls,
    }
}

/// Measures and estimates every node under a validated plan, keeping what `keep`
/// says of each estimate.
pub fn estimate_plan(
    dataset: &Dataset,
    plan: &ReleasePlan,
    source: &NoiseSource,
    cancel: Option<&AtomicBool>,
    progress: Option<Progress<'_>>,
    keep: Keep,
) -> Result<PlanEstimates, RunError> {
    estimate_plan_keeping(dataset, plan, source, cancel, progress, keep, false)
}

/// [`estimate_plan`], keeping every noisy measurement when `keep_measurements`.
pub fn estimate_plan_keeping(
    dataset: &Dataset,
    plan: &ReleasePlan,
    source: &NoiseSource,
    cancel: Option<&AtomicBool>,
    progress: Option<Progress<'_>>,
    keep: Keep,
    keep_measurements: bool,
) -> Result<PlanEstimates, RunError> {
    if plan.levels().is_empty() {
        return Err(RunError::EmptyPlan);
    }
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
    let (max_size, k_charge, probe) = resolve_max_size_keeping(dataset, plan, source)?;
    let sink = keep_measurements.then(|| std::sync::Mutex::new(Vec::new()));
    if let Some(charge) = &k_charge {
        guard(max_size).map_err(|refusal| RunError::ResourcesAfterMaxSize {
            refusal: Box::new(refusal),
            epsilon: charge.epsilon.clone(),
        })?;
    }
    let all: Vec<NodeId> = (0..dataset.hierarchy.len() as u32).map(NodeId).collect();
    let (estimates, mut charges) = estimate_nodes(
        dataset,
        &all,
        &Settings {
            levels: &settings,
            max_size,
            options: &plan.estimate_options(),
        },
        &Draws {
            source,
            purpose: PURPOSE_RELEASE,
            cancel,
            progress,
            measurements: sink.as_ref(),
        },
        keep,
    )?;
    if let Some(c) = k_charge {
        charges.push(c.node, &c.epsilon);
    }
    Ok(PlanEstimates {
        measurements: sink.map(|s| {
            crate::release::pipeline::measurements::Measurements::new(
                s.into_inner().unwrap_or_else(|e| e.into_inner()),
                probe,
            )
        }),
        max_size,
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
    /// The ε-DP guarantee, from the measurements made.
    epsilon: Epsilon,
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

    /// The ε-DP guarantee, from the measurements made.
    pub fn epsilon(&self) -> &Epsilon {
        &self.epsilon
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
    /// draw was asked to keep them ([`draw_keeping`]): differentially private outputs
    /// themselves.
    pub fn measurements(&self) -> Option<&crate::release::pipeline::measurements::Measurements> {
        self.measurements.as_deref()
    }
}

/// Draws one release under a validated plan.
pub fn draw(
    dataset: &Dataset,
    plan: &ReleasePlan,
    source: &NoiseSource,
    cancel: Option<&AtomicBool>,
    progress: Option<Progress<'_>>,
) -> Result<Draw, RunError> {
    draw_keeping(dataset, plan, source, cancel, progress, false)
}

/// [`draw`], keeping the noisy measurements when `keep_measurements` ([`Draw::measurements`]).
pub fn draw_keeping(
    dataset: &Dataset,
    plan: &ReleasePlan,
    source: &NoiseSource,
    cancel: Option<&AtomicBool>,
    progress: Option<Progress<'_>>,
    keep_measurements: bool,
) -> Result<Draw, RunError> {
    let keep = keep_for(plan, false, false);
    let phase = crate::timing::phase("measure and estimate");
    let est = estimate_plan_keeping(
        dataset,
        plan,
        source,
        cancel,
        progress,
        keep,
        keep_measurements,
    )?;
    phase.done();
    let epsilon = verified_guarantee(dataset, plan, &est.charges)?;
    let phase = crate::timing::phase("consistency");
    let consistent = consistency::make_consistent(
        plan.consistency(),
        &dataset.hierarchy,
        &est.estimates,
        dataset.public().groups,
        est.max_size,
        &consistency_options(plan, dataset),
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
        epsilon,
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
) -> Result<Epsilon, RunError> {
    let measured = charges
        .guarantee(&dataset.hierarchy)
        .ok_or(RunError::EmptyPlan)?;
    let planned = plan.total_epsilon().ok_or(RunError::EmptyPlan)?;
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
    let total =
        Epsilon::sum(plan.levels().iter().map(|l| l.epsilon())).ok_or(RunError::EmptyPlan)?;
    let mut settings: Vec<Option<LevelSetting>> = vec![None; h.depth()];
    settings[leaf_level.0] = Some(LevelSetting {
        method: plan.level(leaf_level).method(),
        epsilon: total,
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
    let (estimates, _) = estimate_nodes(
        dataset,
        &leaves,
        &Settings {
            levels: &settings,
            max_size,
            options: &plan.estimate_options(),
        },
        &Draws {
            source,
            purpose: PURPOSE_BOTTOM_UP,
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
    Ok(consistency::bottom_up(h, estimates.histograms().iter()))
}
