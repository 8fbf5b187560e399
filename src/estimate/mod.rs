//! The private single-node estimators of Kuo et al. §4, split at the privacy boundary.
//!
//! * **Measurement** ([`measure`]) is the only code in coco that reads a confidential
//!   histogram: it adds exact discrete Laplace noise to a vector whose sensitivity is
//!   known and returns a [`NodeMeasurement`]. No floating point is involved.
//! * **Post-processing** ([`estimate`]) reads only the measurement and public values
//!   (`G`, `K`, ε) and returns a [`NodeEstimate`]: an integral, nonnegative `Ĥ` with
//!   `ΣĤ = G`, and the per-group variance estimates of Kuo et al. §5.1 that the
//!   consistency step needs.
//!
//! Methods: [`Method::Hc`] (cumulative, §4.3), [`Method::Hg`] (unattributed, §4.2) and
//! [`Method::Naive`] (§4.1, the baseline the paper rules out). Sizes above `K` are
//! top-coded to `K` before any noise (§4.1).

pub mod cumulative;
pub mod isotonic;
pub mod max_size;
pub mod naive;
pub mod unattributed;

use serde::Serialize;

use crate::data::NodeId;
use crate::histogram::{Count, CountOfCounts, Size};
use crate::noise::{NoiseError, NoiseStream};
use crate::privacy::Epsilon;

/// How a node's histogram is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Noise on the cumulative histogram `Hc` (K+1 cells, sensitivity 1).
    Hc,
    /// Noise on the sorted group sizes `Hg` (G cells, sensitivity 1).
    Hg,
    /// Noise on each cell of the top-coded `H` (K+1 cells, sensitivity 2).
    Naive,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Hc => "hc",
            Method::Hg => "hg",
            Method::Naive => "naive",
        }
    }

    pub fn parse(s: &str) -> Option<Method> {
        match s {
            "hc" => Some(Method::Hc),
            "hg" => Some(Method::Hg),
            "naive" => Some(Method::Naive),
            _ => None,
        }
    }

    /// The L1 sensitivity of the measured vector (Lemma 3, Lemma 4.2, Hay et al.).
    pub fn sensitivity(self) -> u32 {
        match self {
            Method::Hc | Method::Hg => 1,
            Method::Naive => 2,
        }
    }

    /// How many noise samples measuring one node costs.
    pub fn noise_samples(self, groups: Count, k: Size) -> u64 {
        match self {
            Method::Hc | Method::Naive => u64::from(k) + 1,
            Method::Hg => groups,
        }
    }
}

/// Which isotonic regression post-processes a monotone measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IsotonicFit {
    /// Least absolute deviations (weighted median per block).
    L1,
    /// Least squares (pool-adjacent-violators).
    L2,
}

/// Post-processing options for one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EstimateOptions {
    /// The fit for `Hc` measurements (the paper found L1 better).
    pub cumulative_fit: IsotonicFit,
    /// The fit for `Hg` measurements (the paper used L2).
    pub unattributed_fit: IsotonicFit,
}

impl Default for EstimateOptions {
    fn default() -> Self {
        Self {
            cumulative_fit: IsotonicFit::L1,
            unattributed_fit: IsotonicFit::L2,
        }
    }
}

/// The noisy vector of one node: the differentially private output of [`measure`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Noisy {
    /// `Hc[0..=K] + noise`, length `K + 1`.
    Cumulative(Vec<i64>),
    /// `Hg + noise`, length `G`, each value clamped to the `i32` range after the noise
    /// was added (post-processing).
    Unattributed(Vec<i32>),
    /// Top-coded `H[0..=K] + noise`, length `K + 1`.
    Naive(Vec<i64>),
}

/// One node's measurement, with the public values it was made under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeMeasurement {
    pub node: NodeId,
    pub method: Method,
    pub epsilon: Epsilon,
    /// `G`, public.
    pub groups: Count,
    /// `K`, public.
    pub max_size: Size,
    pub noisy: Noisy,
}

/// A run of groups of one estimated size with one variance estimate: `Ĥg` with the
/// variances of Kuo et al. §5.1, run-length encoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupRun {
    pub size: Size,
    pub count: Count,
    /// Estimated variance of each of these groups' size estimates.
    pub variance: f64,
}

/// A node's private estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeEstimate {
    /// `Ĥ`: integral, nonnegative, `ΣĤ = G`, no size above `K`.
    pub histogram: CountOfCounts,
    /// `Ĥg` with variances, sorted by size; counts sum to `G`. Runs of equal size may
    /// repeat with different variances.
    pub runs: Vec<GroupRun>,
}

/// Measures one node: the only place a true histogram meets noise.
pub fn measure(
    method: Method,
    truth: &CountOfCounts,
    node: NodeId,
    groups: Count,
    max_size: Size,
    epsilon: &Epsilon,
    rng: &mut NoiseStream,
) -> Result<NodeMeasurement, NoiseError> {
    let noisy = match method {
        Method::Hc => Noisy::Cumulative(cumulative::measure(truth, max_size, epsilon, rng)?),
        Method::Hg => Noisy::Unattributed(unattributed::measure(
            truth, groups, max_size, epsilon, rng,
        )?),
        Method::Naive => Noisy::Naive(naive::measure(truth, max_size, epsilon, rng)?),
    };
    Ok(NodeMeasurement {
        node,
        method,
        epsilon: epsilon.clone(),
        groups,
        max_size,
        noisy,
    })
}

/// Post-processes one measurement into an estimate. Reads no confidential data.
pub fn estimate(m: &NodeMeasurement, options: &EstimateOptions) -> NodeEstimate {
    match &m.noisy {
        Noisy::Cumulative(v) => {
            cumulative::estimate(v, m.groups, &m.epsilon, options.cumulative_fit)
        }
        Noisy::Unattributed(v) => unattributed::estimate(
            v,
            m.groups,
            m.max_size,
            &m.epsilon,
            options.unattributed_fit,
        ),
        Noisy::Naive(v) => naive::estimate(v, m.groups, &m.epsilon),
    }
}
