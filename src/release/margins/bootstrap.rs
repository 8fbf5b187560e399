//! One bootstrap replicate: the plan's measurements drawn again with the released
//! histograms standing for the truth, estimated and made consistent as the release was.
//!
//! Everything a replicate reads is published or public: the released histograms (a
//! [`super::Released`]), the plan (methods, ε, tails, fits, consistency step), the hierarchy and
//! `G`. The released `K` is used as it was published; a private `K` is not probed
//! again (its probe measured the root's largest group, which the replicate's tables
//! do not depend on).

use rayon::prelude::*;

use crate::consistency::{self, ConsistencyOptions};
use crate::data::{NodeId, PublicData};
use crate::estimate::{self, EstimateOptions, Estimates};
use crate::histogram::HistogramSet;
use crate::noise::{NoiseSource, StreamId};
use crate::release::pipeline::draw::keep_for;
use crate::release::pipeline::resources;
use crate::release::plan::ReleasePlan;

use super::UncertaintyError;

/// The stream purpose of a replicate's measurements: distinct from the release's own
/// (0), the bottom-up baseline's (1) and `K`'s (2).
pub const PURPOSE_REPLICATE: u8 = 3;

/// Nodes measured by one task.
const CHUNK: usize = 64;

/// The consistency options of the plan, with `wls`'s memory budget sized from the
/// memory available now (as the release's own step was).
pub fn replicate_consistency_options(
    plan: &ReleasePlan,
    public: PublicData<'_>,
) -> ConsistencyOptions {
    ConsistencyOptions {
        run_budget: crate::consistency::wls::RunBudget::from_available(
            resources::available_memory().bytes,
            public.hierarchy.depth(),
        ),
        ..plan.consistency_options()
    }
}

/// The work of estimating one measurement of `n` values, in the units of
/// [`super::replicate_cost`]: the fits sort or heap their values, `n·(1 + log₂ n)`.
pub fn measurement_work(n: usize) -> u64 {
    let n = n as u64;
    n.saturating_mul(1 + u64::from(n.max(1).ilog2()))
}

/// One replicate's histograms, and the work of its measurements ([`measurement_work`],
/// summed over the regions).
pub struct Replicate {
    pub histograms: HistogramSet,
    pub work: u64,
}

/// Draws one replicate: every region of `release` measured again under `plan` with the
/// released histogram as its truth, estimated, and made consistent with the step the
/// release used. Reads no confidential data: its inputs are published or public.
pub fn replicate(
    release: super::Released<'_>,
    plan: &ReleasePlan,
    public: PublicData<'_>,
    source: &NoiseSource,
    consistency_options: &ConsistencyOptions,
) -> Result<Replicate, UncertaintyError> {
    let h = public.hierarchy;
    let released = release.histograms();
    let k = release.max_size();
    let keep = keep_for(plan, false, false);
    let base = plan.estimate_options();
    let nodes: Vec<NodeId> = (0..h.len() as u32).map(NodeId).collect();
    let parts: Vec<(Estimates, u64)> = nodes
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut out = Estimates::new(keep);
            let mut work = 0u64;
            for &id in chunk {
                let level = plan.level(h.node(id).level);
                let mut stream = source.stream(StreamId::node(PURPOSE_REPLICATE, id.0));
                let m = estimate::measure(
                    level.method(),
                    released.get(id.index()),
                    id,
                    public.groups(id),
                    k,
                    level.epsilon(),
                    &mut stream,
                )
                .map_err(|source| UncertaintyError::Noise {
                    level: level.name().to_string(),
                    source,
                })?;
                work = work.saturating_add(measurement_work(m.noisy().len()));
                let options = EstimateOptions {
                    keep_raw: !h.node(id).is_leaf(),
                    ..base
                };
                out.push(estimate::estimate(&m, &options));
            }
            Ok((out, work))
        })
        .collect::<Result<_, UncertaintyError>>()?;
    let work = parts.iter().fold(0u64, |a, (_, w)| a.saturating_add(*w));
    let estimates = Estimates::concat(keep, parts.into_iter().map(|(e, _)| e).collect());
    let consistent = consistency::make_consistent(
        release.consistency(),
        h,
        &estimates,
        public.groups,
        k,
        consistency_options,
    )?;
    Ok(Replicate {
        histograms: consistent.histograms,
        work,
    })
}
