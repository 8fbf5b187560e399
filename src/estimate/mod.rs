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
//! top-coded to `K` before any noise (§4.1). Each method's module exposes the exact
//! vector it adds noise to (`true_vector`, gathered by [`true_vector`]), and its
//! `measure` goes through that same function, so the sensitivity tests check the real
//! path. [`estimate_node`] does both steps in one call.
//!
//! [`isotonic`] holds the exact bounded isotonic regressions the `Hc` and `Hg` methods
//! post-process with, and [`max_size`] estimates the public bound `K` itself privately.
//!
//! # Citations
//! Kuo, Chiu, Kifer, Hay, Machanavajjhala, "Differentially Private Hierarchical
//! Count-of-Counts Histograms", PVLDB 11(11), 2018, §4 and §5.1.

pub mod cumulative;
pub mod isotonic;
pub mod max_size;
pub mod naive;
pub mod store;
pub mod tail;
pub mod unattributed;

pub use store::{Estimates, FitRef, Keep};
pub use tail::{Tail, TailGroups, TailGroupsError, TailLength};

use serde::{Deserialize, Serialize};

use crate::data::NodeId;
use crate::histogram::{Count, CountOfCounts, HistRef, Size};
use crate::noise::{Noise, NoiseError, NoiseStream, Sensitivity};
use crate::privacy::Loss;

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
    /// Noise on the head `Hc[0..L)` and on the sorted sizes of the `m` largest groups
    /// clamped at `L` (L + min(m, G) cells, sensitivity 1; [`tail`]).
    HcTail(Tail),
}

/// A level's method, one spelling (in the ledger and the manifest; a tail is recorded
/// beside it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum MethodKind {
    Hc,
    Hg,
    /// Not offered on the command line (`coco plan --method`); plans may name it.
    #[value(skip)]
    Naive,
}

impl MethodKind {
    pub fn of(method: Method) -> MethodKind {
        match method {
            Method::Hc | Method::HcTail(_) => MethodKind::Hc,
            Method::Hg => MethodKind::Hg,
            Method::Naive => MethodKind::Naive,
        }
    }
}

impl Method {
    /// The method's name in plans and on the command line (`hc` with a tail is `hc`: the
    /// plan writes `method = "hc"` with a `tail` table).
    pub fn name(self) -> &'static str {
        crate::wire::Named::name(MethodKind::of(self))
    }

    /// A short description for screens and reports, e.g. `hc+tail≥20` (sizes below 20 as `Hc`,
    /// groups of size 20 or more listed).
    pub fn label(self) -> String {
        match self {
            Method::HcTail(t) => format!("hc+tail≥{}", t.above),
            m => m.name().to_string(),
        }
    }

    /// The tail parameters, if any.
    pub fn tail(self) -> Option<Tail> {
        match self {
            Method::HcTail(t) => Some(t),
            _ => None,
        }
    }

    pub fn parse(s: &str) -> Option<Method> {
        Some(match <MethodKind as crate::wire::Named>::parse(s)? {
            MethodKind::Hc => Method::Hc,
            MethodKind::Hg => Method::Hg,
            MethodKind::Naive => Method::Naive,
        })
    }

    /// The L1 sensitivity of the measured vector (Lemma 3, Lemma 4.2, Hay et al.).
    pub fn sensitivity(self) -> u32 {
        self.sensitivity_norms().l1
    }

    /// The measured vector's sensitivity in L1 and L2 (each estimator's module proves
    /// its own).
    pub fn sensitivity_norms(self) -> Sensitivity {
        match self {
            Method::Hc => cumulative::SENSITIVITY,
            Method::Hg => unattributed::SENSITIVITY,
            Method::HcTail(_) => tail::SENSITIVITY,
            Method::Naive => naive::SENSITIVITY,
        }
    }

    /// Whether [`Method::noise_samples`] is the most measuring may cost rather than what
    /// it costs: an `auto` tail chooses its second part from its noisy head.
    pub fn samples_are_a_bound(self) -> bool {
        matches!(self, Method::HcTail(t) if t.groups == TailLength::Auto)
    }

    /// How many noise samples measuring one node costs (for an `auto` tail, the most it
    /// may cost).
    pub fn noise_samples(self, groups: Count, k: Size) -> u64 {
        match self {
            Method::Hc | Method::Naive => u64::from(k) + 1,
            Method::Hg => groups,
            Method::HcTail(t) => u64::from(t.above.min(k)) + t.max_positions(groups, k),
        }
    }
}

/// Which isotonic regression post-processes a monotone measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
    /// Keep the noisy measurement in the fit ([`NodeFit::raw`]): the consistency step
    /// checks a region's combination against it, so it is needed for every region with
    /// children, and for no leaf.
    pub keep_raw: bool,
}

impl Default for EstimateOptions {
    fn default() -> Self {
        Self {
            cumulative_fit: IsotonicFit::L1,
            unattributed_fit: IsotonicFit::L2,
            keep_raw: true,
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
    /// `Hc[0..L) + noise` and the `min(m, G)` largest clamped sizes `+ noise`.
    CumulativeTail { head: Vec<i64>, top: Vec<i64> },
}

impl Noisy {
    /// How many noisy values were drawn.
    pub fn len(&self) -> usize {
        match self {
            Noisy::Cumulative(v) | Noisy::Naive(v) => v.len(),
            Noisy::Unattributed(v) => v.len(),
            Noisy::CumulativeTail { head, top } => head.len() + top.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One node's measurement, with the public values it was made under. Made by
/// [`measure`] (or, for tests of the estimators, [`NodeMeasurement::assumed`]); its
/// fields cannot be changed afterwards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeMeasurement {
    node: NodeId,
    method: Method,
    loss: Loss,
    /// `G`, public.
    groups: Count,
    /// `K`, public.
    max_size: Size,
    noisy: Noisy,
}

impl NodeMeasurement {
    /// A measurement whose noise coco did not draw: chosen noisy values, for testing the
    /// estimators (the fuzzer does). Nothing made from it can be released: a release
    /// ([`crate::release::pipeline::draw::Draw`]) is built only by the measurement path from the
    /// measurements it makes itself.
    pub fn assumed(
        node: NodeId,
        method: Method,
        loss: Loss,
        groups: Count,
        max_size: Size,
        noisy: Noisy,
    ) -> NodeMeasurement {
        NodeMeasurement {
            node,
            method,
            loss,
            groups,
            max_size,
            noisy,
        }
    }

    pub fn node(&self) -> NodeId {
        self.node
    }

    pub fn method(&self) -> Method {
        self.method
    }

    pub fn loss(&self) -> &Loss {
        &self.loss
    }

    /// `G`, public.
    pub fn groups(&self) -> Count {
        self.groups
    }

    /// `K`, public.
    pub fn max_size(&self) -> Size {
        self.max_size
    }

    /// The noisy vector.
    pub fn noisy(&self) -> &Noisy {
        &self.noisy
    }

    /// The noisy vector, by value.
    pub fn into_noisy(self) -> Noisy {
        self.noisy
    }
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
    /// The estimate as a cumulative histogram before rounding, which coco's own
    /// consistency step combines across the hierarchy: for `hc`, `hc` with a tail and
    /// `hg`. `None` for `naive`.
    pub fit: Option<NodeFit>,
}

/// One block of an isotonic fit of cumulative cells: cells `start..start + len` share
/// the fitted value `value` (the exact fraction, as a float). A head's last block may
/// reach past the head (a tail's head is fitted with `Hc[L]`); its length is the whole
/// block's, which its variance depends on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeadBlock {
    pub start: u32,
    pub len: u32,
    pub value: f64,
}

/// `count` listed groups estimated at `size` by one isotonic block of `count` noisy
/// sizes, whose variance is `Var/count` (Kuo et al. §5.1.1): each group's location has
/// a Laplace error of scale `√(Var/(2·count))`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepRun {
    pub size: Size,
    pub count: u32,
    /// The spread of the true sizes the block pooled, as a variance ([`pooled_spread`]).
    pub spread: f32,
}

/// The spread of the true values pooled in one isotonic block of noisy values
/// `values`, each with noise variance `var`, as a variance: `max(0, RSS − (S − 1)·var)/S`
/// over the block's `S` values.
///
/// # Formula
/// With `y_i = θ_i + e_i`, `E[Σ (y_i − ȳ)²] = (S − 1)·var + Σ (θ_i − θ̄)²`, so the excess of
/// the residual sum of squares over what the noise alone leaves estimates the spread of
/// the truth within the block (method of moments; the positive part keeps it a variance).
/// A block that pools values of different true sizes places each of them with this
/// error besides its noise.
pub fn pooled_spread<T: Copy + Into<i64>>(values: &[T], var: f64) -> f64 {
    let n = values.len();
    if n < 2 {
        return 0.0;
    }
    let mean = values.iter().map(|&v| v.into() as f64).sum::<f64>() / n as f64;
    let rss: f64 = values
        .iter()
        .map(|&v| {
            let d = v.into() as f64 - mean;
            d * d
        })
        .sum();
    ((rss - (n - 1) as f64 * var) / n as f64).max(0.0)
}

/// A node's estimate of its cumulative histogram `Hc` over sizes `0..=K`, before
/// rounding, in the form every method shares:
///
/// * cells `0..from` are an isotonic fit of noisy cumulative cells ([`HeadBlock`]s; for
///   `hc` all of `0..=K`, so `from = K + 1`; for `hc` with a tail the head `0..L`; for
///   `hg` none, `from = 0`), unclipped at 0;
/// * cells `from..=K` are `Hc[j] = G − #{listed groups above j}` ([`StepRun`]s: the tail's
///   groups above `L`, or for `hg` every group).
///
/// The consistency step needs nothing else from the measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeFit {
    pub head: Vec<HeadBlock>,
    /// The first cell described by the steps.
    pub from: u32,
    pub steps: Vec<StepRun>,
    /// All `n < G` listed groups lie above `L`: unlisted ones were put at `L`.
    pub saturated: bool,
    /// The variance of one noisy cell.
    pub noise_variance: f64,
    /// The noisy measurement itself, for the consistency step's check: the noisy head
    /// cells `Hc[0..from)` as measured (for `hc`, all `K + 1`), then the noisy values
    /// listed (a tail's, or every group's for `hg`), ascending.
    pub raw: Vec<i64>,
}

impl NodeFit {
    /// The head's blocks from isotonic blocks: those starting before `from`.
    pub fn head_from(blocks: &[isotonic::Block], from: usize) -> Vec<HeadBlock> {
        blocks
            .iter()
            .filter(|b| b.start < from)
            .map(|b| HeadBlock {
                start: b.start as u32,
                len: u32::try_from(b.len).unwrap_or(u32::MAX),
                value: b.value(),
            })
            .collect()
    }

    /// The Laplace scale of a step run's location.
    pub fn step_scale(&self, run: &StepRun) -> f64 {
        step_scale(self.noise_variance, run)
    }

    /// The listed groups above size `j`.
    pub fn listed_above(&self, j: usize) -> u64 {
        listed_above(&self.steps, j)
    }

    /// `Hc[j]` for `j ≥ from`, given `G`: the groups not listed above `j`.
    pub fn tail_value(&self, groups: Count, j: usize) -> f64 {
        groups.saturating_sub(self.listed_above(j)) as f64
    }
}

/// The Laplace scale `b` of a listed group's location: `√(Var_loc/2)` with the location
/// variance `Var/count + spread` (the block's averaged noise, and the spread of the true
/// sizes it pooled).
pub fn step_scale(noise_variance: f64, run: &StepRun) -> f64 {
    let var = noise_variance / f64::from(run.count.max(1)) + f64::from(run.spread);
    (var / 2.0).sqrt()
}

/// The groups of `steps` above size `j`.
fn listed_above(steps: &[StepRun], j: usize) -> u64 {
    steps
        .iter()
        .filter(|r| r.size as usize > j)
        .map(|r| u64::from(r.count))
        .sum()
}

/// Measures one node: the only place a true histogram meets noise.
///
/// `groups` and `max_size` are the public `G` and `K`; the measured vector's length
/// depends on them only. See [`true_vector`] for what is measured.
pub fn measure<'a>(
    method: Method,
    truth: impl Into<HistRef<'a>>,
    node: NodeId,
    groups: Count,
    max_size: Size,
    loss: &Loss,
    rng: &mut NoiseStream,
) -> Result<NodeMeasurement, NoiseError> {
    let truth = truth.into();
    let noisy = measure_noisy(method, truth, groups, max_size, loss, rng)?;
    Ok(NodeMeasurement {
        node,
        method,
        loss: loss.clone(),
        groups,
        max_size,
        noisy,
    })
}

/// Post-processes one measurement into an estimate. Reads no confidential data.
pub fn estimate(m: &NodeMeasurement, options: &EstimateOptions) -> NodeEstimate {
    estimate_noisy(m.method, &m.noisy, m.groups, m.max_size, &m.loss, options)
}

/// Measures and post-processes one node in one call (previews, tests, benchmarks).
pub fn estimate_node<'a>(
    method: Method,
    truth: impl Into<HistRef<'a>>,
    groups: Count,
    max_size: Size,
    loss: &Loss,
    rng: &mut NoiseStream,
    options: &EstimateOptions,
) -> Result<NodeEstimate, NoiseError> {
    let truth = truth.into();
    let noisy = measure_noisy(method, truth, groups, max_size, loss, rng)?;
    Ok(estimate_noisy(
        method, &noisy, groups, max_size, loss, options,
    ))
}

fn measure_noisy<'a>(
    method: Method,
    truth: impl Into<HistRef<'a>>,
    groups: Count,
    max_size: Size,
    loss: &Loss,
    rng: &mut NoiseStream,
) -> Result<Noisy, NoiseError> {
    let truth = truth.into();
    Ok(match method {
        Method::Hc => Noisy::Cumulative(cumulative::measure(truth, max_size, loss, rng)?),
        Method::Hg => {
            Noisy::Unattributed(unattributed::measure(truth, groups, max_size, loss, rng)?)
        }
        Method::Naive => Noisy::Naive(naive::measure(truth, max_size, loss, rng)?),
        Method::HcTail(t) => {
            let m = tail::measure(truth, groups, max_size, &t, loss, rng)?;
            match m.kind {
                tail::Rest::Top(_) => Noisy::CumulativeTail {
                    head: m.head,
                    top: m.rest,
                },
                // An `auto` tail that measured the rest of `Hc`: all of `Hc`, as `hc`.
                tail::Rest::Cumulative => {
                    let mut cells = m.head;
                    cells.extend(m.rest);
                    Noisy::Cumulative(cells)
                }
            }
        }
    })
}

fn estimate_noisy(
    method: Method,
    noisy: &Noisy,
    groups: Count,
    max_size: Size,
    loss: &Loss,
    options: &EstimateOptions,
) -> NodeEstimate {
    match noisy {
        Noisy::Cumulative(v) => {
            cumulative::estimate_keeping(v, groups, loss, options.cumulative_fit, options.keep_raw)
        }
        Noisy::Unattributed(v) => unattributed::estimate_keeping(
            v,
            groups,
            max_size,
            loss,
            options.unattributed_fit,
            options.keep_raw,
        ),
        Noisy::Naive(v) => naive::estimate(v, groups, loss),
        Noisy::CumulativeTail { head, top } => {
            // The tail parameters travel with the method; a hand-made measurement
            // without them reads as a tail above K (only the head; the estimate reads
            // the listed sizes from `top`, never `m`).
            let t = method.tail().unwrap_or(Tail {
                above: max_size,
                groups: TailLength::Fixed(TailGroups::MIN),
            });
            tail::estimate(head, top, groups, max_size, &t, loss, options)
        }
    }
}

/// The exact vector a method adds noise to (the query `q(D)` of Kuo et al.
/// Definition 2), as `i64`s: the top-coded `Hc[0..=K]`, the `G` sorted top-coded group
/// sizes, the top-coded `H[0..=K]`, or a tail's head and listed sizes. **Confidential**:
/// for sensitivity tests and audits. [`measure`] computes the same vector through the
/// same per-method functions. An `auto` tail's second part depends on its noisy head:
/// see [`tail::true_head`] and [`tail::true_rest`] (this panics on one).
pub fn true_vector<'a>(
    method: Method,
    truth: impl Into<HistRef<'a>>,
    groups: Count,
    max_size: Size,
) -> Vec<i64> {
    let truth = truth.into();
    match method {
        Method::Hc => cumulative::true_vector(truth, max_size),
        Method::Hg => unattributed::true_vector(truth, groups, max_size)
            .map(i64::from)
            .collect(),
        Method::Naive => naive::true_vector(truth, max_size),
        Method::HcTail(t) => {
            let (mut head, top) = tail::true_vectors(truth, groups, max_size, &t);
            head.extend(top);
            head
        }
    }
}

/// The variance of the noise on one measured cell of a vector with this sensitivity at
/// this loss ([`crate::noise::mechanism::variance_of`]).
///
/// # Formula
/// For a pure ε, the two-sided geometric with `p = exp(−ε/Δ₁)` has variance
/// `2p/(1 − p)²` ([`crate::noise::DiscreteLaplace::variance`]); Kuo et al. §5.1
/// approximate it by the variance `2Δ²/ε²` of the continuous Laplace, which is larger.
/// For a ρ, the discrete Gaussian of `σ² = Δ₂²/(2ρ)` has variance `Σ z²·P(z)`, which is
/// `σ²` to within `10⁻⁹` from `σ ≈ 1.5` on ([`crate::noise::DiscreteGaussian::variance`]).
pub fn noise_variance(sensitivity: Sensitivity, loss: &Loss) -> f64 {
    crate::noise::mechanism::variance_of(loss, sensitivity)
}

/// Adds independent noise to each value of a true vector.
fn add_noise(values: &mut [i64], noise: &Noise, rng: &mut NoiseStream) {
    for v in values {
        // Saturation only matters beyond 2^63, unreachable for counts and noise scales
        // coco accepts; clamping a noisy value is post-processing anyway.
        *v = v.saturating_add(noise.sample(rng));
    }
}

/// A count as `i64`, saturating (no node holds 2^63 groups).
fn count_to_i64(c: Count) -> i64 {
    i64::try_from(c).unwrap_or(i64::MAX)
}

/// `Ĥ` and `Ĥg` for a degenerate measurement with no cells: every group at size 0.
fn all_at_size_zero(groups: Count, variance: f64) -> NodeEstimate {
    if groups == 0 {
        return NodeEstimate {
            histogram: CountOfCounts::new(),
            runs: Vec::new(),
            fit: None,
        };
    }
    NodeEstimate {
        histogram: CountOfCounts::from_dense(&[groups]),
        runs: vec![GroupRun {
            size: 0,
            count: groups,
            variance,
        }],
        fit: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::DiscreteLaplace;
    use crate::privacy::{Epsilon, Rho};

    #[test]
    fn noise_variance_is_the_two_sided_geometric_variance() {
        // ε = 1, Δ = 1: p = e^−1, 2p/(1 − p)² = 1.8413471884155848 (Python, float64).
        let one = Loss::Pure(Epsilon::parse("1").unwrap());
        let (s1, s2) = (Sensitivity::ONE, Sensitivity::TWO_CELLS);
        assert!((noise_variance(s1, &one) - 1.841_347_188_415_584_8).abs() < 1e-12);
        // Δ = 2 is scale 2/ε: p = e^−1/2, 2p/(1 − p)² = 7.8333...
        let p = (-0.5f64).exp();
        assert!((noise_variance(s2, &one) - 2.0 * p / (1.0 - p).powi(2)).abs() < 1e-12);
        // Below the sampler's range the same formula still answers: ≈ 2/ε² − 1/6.
        let tiny_e = Epsilon::parse("1e-15").unwrap();
        assert!(DiscreteLaplace::new(1, &tiny_e).is_err());
        let tiny = Loss::Pure(tiny_e);
        let v = noise_variance(s1, &tiny);
        assert!((v / 2e30 - 1.0).abs() < 1e-6, "{v}");
    }

    #[test]
    fn a_rho_gives_the_discrete_gaussians_variance_of_its_l2_sensitivity() {
        // ρ = 1/8: σ² = Δ₂²/(2ρ) = 4 for one cell, 8 for naive's two.
        let rho = Loss::Zcdp(Rho::parse("1/8").unwrap());
        assert!((noise_variance(Sensitivity::ONE, &rho) - 4.0).abs() < 1e-6);
        assert!((noise_variance(Sensitivity::TWO_CELLS, &rho) - 8.0).abs() < 1e-6);
        // Out of the sampler's range (σ² > 10¹⁸): the formula.
        let tiny = Loss::Zcdp(Rho::parse("1e-18").unwrap());
        assert!((noise_variance(Sensitivity::ONE, &tiny) / 5e17 - 1.0).abs() < 1e-9);
    }
}
