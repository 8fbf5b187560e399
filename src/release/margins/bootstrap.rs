//! One bootstrap replicate: the plan's measurements drawn again with the released
//! histograms standing for the truth, estimated and made consistent as the release was.
//!
//! Everything a replicate reads is published or public: the released histograms (a
//! [`super::Released`]), the plan (methods, ε, tails, fits, consistency step), the hierarchy and
//! `G`. The released `K` is used as it was published; a private `K` is not probed
//! again (its probe measured the root's largest group, which the replicate's tables
//! do not depend on).

use crate::consistency::{self, ConsistencyOptions};
use crate::data::{Hierarchy, NodeId, PublicData};
use crate::estimate::Keep;
use crate::histogram::HistogramSet;
use crate::noise::{NoiseSource, Purpose};
use crate::release::pipeline::draw::{
    Batch, Counts, Draws, Settings, estimate_nodes, keep_for, plan_settings,
};
use crate::release::plan::ReleasePlan;

use super::UncertaintyError;

/// One replicate's histograms, and the work of its measurements
/// ([`crate::release::pipeline::draw::measurement_work`], summed over the regions).
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
    draw(release, plan, public, source, consistency_options)
}

/// The top levels of a release, cut below the levels with few regions
/// ([`super::cut_depth`]): the hierarchy of the first `depth` levels, the plan of those
/// levels and its consistency options, built once for all the top replicates.
pub struct Cut {
    hierarchy: Hierarchy,
    plan: ReleasePlan,
    consistency: ConsistencyOptions,
}

impl Cut {
    pub fn new(plan: &ReleasePlan, hierarchy: &Hierarchy, depth: usize) -> Cut {
        let hierarchy = hierarchy.truncated(depth);
        let plan = plan.truncated(depth);
        let consistency = crate::release::pipeline::draw::consistency_options(&plan, &hierarchy);
        Cut {
            hierarchy,
            plan,
            consistency,
        }
    }

    /// One top replicate: [`replicate`] on the cut hierarchy, whose last level stands
    /// for the leaves (measured and estimated as the release's were, without their
    /// children's measurements). With the same `source`, its regions draw the noise a
    /// full replicate's draw; the cut's levels lose what the measurements below the cut
    /// would have merged into them, a little of their precision (the intervals lean
    /// wide: [`super::cut_depth`]).
    pub fn replicate(
        &self,
        release: super::Released<'_>,
        public: PublicData<'_>,
        source: &NoiseSource,
    ) -> Result<Replicate, UncertaintyError> {
        let public = PublicData {
            hierarchy: &self.hierarchy,
            groups: &public.groups[..self.hierarchy.len()],
        };
        draw(release, &self.plan, public, source, &self.consistency)
    }

    /// The regions of the cut hierarchy.
    pub fn regions(&self) -> usize {
        self.hierarchy.len()
    }
}

/// A replicate of the regions of `public.hierarchy` (the release's, or a cut of it).
fn draw(
    release: super::Released<'_>,
    plan: &ReleasePlan,
    public: PublicData<'_>,
    source: &NoiseSource,
    consistency_options: &ConsistencyOptions,
) -> Result<Replicate, UncertaintyError> {
    let h = public.hierarchy;
    let released = release.histograms();
    let k = release.max_size();
    let nodes: Vec<NodeId> = (0..h.len() as u32).map(NodeId).collect();
    // The release's own measurement loop, on the released tables.
    let Batch {
        estimates, work, ..
    } = estimate_nodes(
        &Counts::released(released, public),
        &nodes,
        &Settings {
            levels: &plan_settings(plan),
            max_size: k,
            options: &plan.estimate_options(),
        },
        &Draws {
            source,
            purpose: Purpose::Replicate,
            cancel: None,
            progress: None,
            measurements: None,
        },
        // What the release's step needs: a cut's plan may have lost the level that
        // made the release fall back to `topdown` (a `naive` one below the cut).
        keep_for(
            plan,
            Keep {
                runs: release.consistency() == consistency::Consistency::TopDown,
                fits: release.consistency() == consistency::Consistency::Wls,
                ..Keep::NONE
            },
        ),
    )?;
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
