//! The discrete Gaussian distribution with a rational variance parameter `σ²`, exactly.
//!
//! # Formula
//! `P(Z = z) = exp(−z²/(2σ²)) / Σ_k exp(−k²/(2σ²))` for integers `z` (Canonne, Kamath and
//! Steinke's `N_Z(0, σ²)`). Its variance is below `σ²`: by Poisson summation the
//! deficit is about `8π²σ⁴·exp(−2π²σ²)` (`2·10⁻⁷` at `σ = 1`), below `f64` resolution
//! from `σ ≈ 1.5` on ([`DiscreteGaussian::variance`]).
//!
//! # How it is sampled
//! Canonne, Kamath and Steinke's Algorithm 3: with `t = ⌊σ⌋ + 1` and `μ = σ²/t`,
//! 1. draw `Y` from the discrete Laplace law of scale `t`, `P(Y = y) ∝ exp(−|y|/t)`
//!    ([`DiscreteLaplace`]: exact table inversion, or the reference sampler for `t >
//!    4096`);
//! 2. keep it with probability `exp(−(|Y| − μ)²/(2σ²))`, else go back to 1.
//!
//! A kept `Y = y` has probability proportional to
//! `exp(−|y|/t − (|y| − μ)²/(2σ²)) = exp(−y²/(2σ²) + |y|·(μ/σ² − 1/t) − μ²/(2σ²))`, and
//! `μ/σ² = 1/t`: the middle term vanishes and what is left is `exp(−y²/(2σ²))` times a
//! constant, the discrete Gaussian. The rounds are independent (each takes fresh
//! random bits) and each keeps its draw with a positive probability, so the loop stops
//! with probability 1 after a geometric number of rounds: on average at most 2.25 for
//! `σ < 1`, at most 1.85 for `1 ≤ σ < 3`, and between 1.32 and 1.42 from `σ = 3` on
//! (the inverse of `Σ_y P(Y = y)·exp(−(|y| − μ)²/(2σ²))`, summed numerically).
//!
//! Step 2 is exact: `(|Y| − μ)²/(2σ²)` is a ratio of integers, and the coin is decided by
//! comparing a uniform variate's lazily drawn digits with rigorous integer bounds on
//! `exp(−γ)`, from a table for the common magnitudes and from
//! [`exact_exp`](super::exact_exp) at growing precision for the rest
//! ([`super::gaussian_acceptance`], where the argument is written out). Step 1 is exact
//! ([`super::inversion`], [`super::cks`]). No floating point is involved between the
//! uniform bits and a sample.
//!
//! # Range
//! `σ²` is a positive fraction with numerator and denominator below `2^128` and a value
//! of at most [`MAX_SIGMA2`] = `10^18` (`σ ≤ 10^9`, far beyond any useful noise).
//! Samples then stay within `±2^62` except with probability below `exp(−10^19)`, and
//! the proposal leaves the `i64` range (where the discrete Laplace sampler clamps it)
//! with probability below `exp(−2^63/t) < exp(−10^9)`.
//!
//! Tables are built on the first sample, once per `σ²` in the process (a small cache
//! shared by all instances and threads), and a [`DiscreteGaussian`] is an `Arc`: cheap
//! to clone and to share between threads.
//!
//! # Citations
//! Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS
//! 2020 (Algorithm 3, and the variance below `σ²`); Bun and Steinke, "Concentrated
//! Differential Privacy: Simplifications, Extensions, and Lower Bounds", TCC 2016
//! (ρ-zCDP); Mironov, "On significance of the least significant bits for differential
//! privacy", CCS 2012 (why floating-point sampling is excluded).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};
use rand::Rng;

use super::gaussian_acceptance::AcceptanceTable;
use super::{DiscreteLaplace, NoiseError};
use crate::privacy::Epsilon;

/// The largest `σ²` accepted.
pub const MAX_SIGMA2: u64 = 1_000_000_000_000_000_000;

/// The bits a term of `σ²` may have.
const MAX_TERM_BITS: u64 = 128;

/// The variance parameter `σ²` of a discrete Gaussian: an exact positive fraction,
/// reduced, within the range of the module documentation.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Sigma2 {
    num: BigUint,
    den: BigUint,
}

impl Sigma2 {
    /// `num/den`, reduced; refused unless positive, at most [`MAX_SIGMA2`], with both
    /// reduced terms below `2^128`.
    pub fn new(num: impl Into<BigUint>, den: impl Into<BigUint>) -> Result<Sigma2, NoiseError> {
        let (num, den) = (num.into(), den.into());
        if num.is_zero() || den.is_zero() {
            return Err(NoiseError::Sigma2NotPositive {
                sigma2: format!("{num}/{den}"),
            });
        }
        let g = num.gcd(&den);
        let sigma2 = Sigma2 {
            num: num / &g,
            den: den / &g,
        };
        let terms_fit = sigma2.num.bits() <= MAX_TERM_BITS && sigma2.den.bits() <= MAX_TERM_BITS;
        if !terms_fit || sigma2.num > &sigma2.den * MAX_SIGMA2 {
            return Err(NoiseError::Sigma2OutOfRange {
                sigma2: sigma2.to_string(),
            });
        }
        Ok(sigma2)
    }

    pub fn numer(&self) -> &BigUint {
        &self.num
    }

    pub fn denom(&self) -> &BigUint {
        &self.den
    }

    /// `⌊σ⌋ = ⌊√⌊σ²⌋⌋` (at most 10^9).
    pub fn floor_sigma(&self) -> u64 {
        (&self.num / &self.den)
            .sqrt()
            .to_u64()
            .expect("σ² ≤ 10^18 bounds ⌊σ⌋ by 10^9")
    }

    /// An approximation for post-processing (variances, display); never used to draw.
    pub fn to_f64(&self) -> f64 {
        let shift = self.num.bits().max(self.den.bits()).saturating_sub(1000);
        let n = (&self.num >> shift).to_f64().unwrap_or(f64::INFINITY);
        let d = (&self.den >> shift).to_f64().unwrap_or(f64::INFINITY);
        n / d
    }
}

impl std::fmt::Display for Sigma2 {
    /// `n/d`, or `n` when the denominator is 1.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.den == BigUint::from(1u8) {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

impl std::fmt::Debug for Sigma2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sigma2({self})")
    }
}

/// Exact discrete Gaussian noise `N_Z(0, σ²)`.
#[derive(Clone)]
pub struct DiscreteGaussian(Arc<Inner>);

struct Inner {
    sigma2: Sigma2,
    /// The proposal's scale `⌊σ⌋ + 1`.
    t: u64,
    table_bits: u32,
    proposal: DiscreteLaplace,
    acceptance: OnceLock<Arc<AcceptanceTable>>,
    variance: OnceLock<f64>,
}

impl std::fmt::Debug for DiscreteGaussian {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscreteGaussian")
            .field("sigma2", &self.0.sigma2)
            .field("t", &self.0.t)
            .field("table_bits", &self.0.table_bits)
            .finish_non_exhaustive()
    }
}

impl DiscreteGaussian {
    pub fn new(sigma2: Sigma2) -> Self {
        Self::build(sigma2, 63)
    }

    /// The same distribution with its acceptance bounds rounded to `bits` bits, clamped
    /// to `1..=63`. Coarser bounds leave more draws to the exact slow path, which makes
    /// sampling slower and nothing else: this exists so that tests can run the slow
    /// path often. The discrete Laplace proposal keeps its full table: its slow path is
    /// tested through `DiscreteLaplace::with_table_bits`.
    pub fn table_bits(self, bits: u32) -> Self {
        Self::build(self.0.sigma2.clone(), bits)
    }

    fn build(sigma2: Sigma2, table_bits: u32) -> Self {
        let t = sigma2.floor_sigma() + 1;
        let scale = u32::try_from(t).expect("t ≤ 10^9 + 1 fits in u32");
        let one = Epsilon::from_ratio(1, 1).expect("1 is a valid ε");
        let proposal = DiscreteLaplace::new(scale, &one)
            .expect("a scale up to 10^9 + 1 is within the discrete Laplace's range");
        Self(Arc::new(Inner {
            sigma2,
            t,
            table_bits: table_bits.clamp(1, 63),
            proposal,
            acceptance: OnceLock::new(),
            variance: OnceLock::new(),
        }))
    }

    /// One sample: a discrete Laplace proposal and one `u64` for its acceptance per
    /// round, and more only on the rare draws that need an exact slow path.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> i64 {
        let acceptance = self.acceptance();
        loop {
            let y = self.0.proposal.sample(rng);
            if acceptance.accepts(y.unsigned_abs(), rng) {
                return y;
            }
        }
    }

    /// Fills `out` with independent samples.
    pub fn fill<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [i64]) {
        out.iter_mut().for_each(|x| *x = self.sample(rng));
    }

    /// Builds (or fetches) the tables now rather than on the first sample.
    pub fn prepare(&self) {
        self.acceptance();
        self.0.proposal.prepare();
    }

    /// Whether the discrete Laplace proposals come from the reference sampler (`t >
    /// 4096`, that is σ ≥ 4096) rather than an inversion table.
    pub fn uses_reference_proposal(&self) -> bool {
        self.0.proposal.uses_reference_sampler()
    }

    /// How many magnitudes share one bound of the acceptance table: 1 up to `σ` of about
    /// 4 600, a power of two beyond ([`super::gaussian_acceptance`]).
    pub fn acceptance_bucket_width(&self) -> u64 {
        self.acceptance().bucket_width()
    }

    pub fn sigma2(&self) -> &Sigma2 {
        &self.0.sigma2
    }

    /// The variance `Σ z²·P(Z = z)`, below `σ²` for small `σ`, in floating point: for
    /// estimators' weights (post-processing), never for drawing.
    pub fn variance(&self) -> f64 {
        *self
            .0
            .variance
            .get_or_init(|| discrete_variance(self.0.sigma2.to_f64()))
    }

    #[inline]
    fn acceptance(&self) -> &AcceptanceTable {
        self.0
            .acceptance
            .get_or_init(|| cached_table(&self.0.sigma2, self.0.t, self.0.table_bits))
    }
}

/// `Σ z² e^{−z²/2σ²} / Σ e^{−z²/2σ²}`. For `σ > 64` the deficit `σ² − variance` (about
/// `8π²σ⁴e^{−2π²σ²}`, module documentation) is far below `f64` resolution and `σ²` is
/// returned; below, the sums run until their terms underflow (under `39σ + 1` terms).
fn discrete_variance(sigma2: f64) -> f64 {
    if sigma2 > 64.0 * 64.0 {
        return sigma2;
    }
    let (mut mass, mut second) = (1.0f64, 0.0f64);
    for k in 1u32.. {
        let k2 = f64::from(k) * f64::from(k);
        let term = (-k2 / (2.0 * sigma2)).exp();
        if term == 0.0 {
            break;
        }
        mass += 2.0 * term;
        second += 2.0 * k2 * term;
    }
    second / mass
}

/// Acceptance tables kept for reuse: a release measures thousands of regions with a
/// handful of `σ²`.
const CACHE_CAPACITY: usize = 32;

fn cached_table(sigma2: &Sigma2, t: u64, table_bits: u32) -> Arc<AcceptanceTable> {
    type Cache = HashMap<(Sigma2, u32), Arc<AcceptanceTable>>;
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (sigma2.clone(), table_bits);
    // A poisoned lock only means another thread panicked mid-insert of a complete
    // table; the map is still consistent.
    if let Some(table) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Arc::clone(table);
    }
    // Built outside the lock: two threads may both build, and both tables are right.
    let table = Arc::new(AcceptanceTable::build(
        sigma2.numer(),
        sigma2.denom(),
        t,
        table_bits,
    ));
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    if map.len() >= CACHE_CAPACITY {
        map.clear();
    }
    map.insert(key, Arc::clone(&table));
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sigma2(n: u64, d: u64) -> Sigma2 {
        Sigma2::new(n, d).unwrap()
    }

    #[test]
    fn sigma2_is_reduced_and_validated() {
        let s = sigma2(98, 8);
        assert_eq!(
            (s.numer(), s.denom()),
            (&BigUint::from(49u8), &BigUint::from(4u8))
        );
        assert_eq!(s.to_string(), "49/4");
        assert_eq!(sigma2(6, 3).to_string(), "2");
        assert_eq!(s.floor_sigma(), 3);
        assert_eq!(sigma2(1, 100).floor_sigma(), 0);
        assert_eq!(sigma2(1_000_000, 1).floor_sigma(), 1000);
        // ⌊√(n/d)⌋ exactly where floating point would round: σ² = (10^9)² − 1.
        assert_eq!(sigma2(MAX_SIGMA2 - 1, 1).floor_sigma(), 999_999_999);
        assert_eq!(sigma2(MAX_SIGMA2, 1).floor_sigma(), 1_000_000_000);
        assert!(matches!(
            Sigma2::new(0u8, 1u8),
            Err(NoiseError::Sigma2NotPositive { .. })
        ));
        assert!(matches!(
            Sigma2::new(1u8, 0u8),
            Err(NoiseError::Sigma2NotPositive { .. })
        ));
        let too_wide = Sigma2::new(MAX_SIGMA2 + 1, 1u8).unwrap_err();
        assert_eq!(
            too_wide.to_string(),
            "σ² = 1000000000000000001 is out of range: expected at most 10^18 (σ at most \
             10^9), with numerator and denominator below 2^128"
        );
        // Terms beyond 128 bits are refused even when the value is modest...
        let big = BigUint::from(1u8) << 130u32;
        assert!(matches!(
            Sigma2::new(&big + 1u8, big.clone()),
            Err(NoiseError::Sigma2OutOfRange { .. })
        ));
        // ...but not when they reduce below it.
        assert_eq!(
            Sigma2::new(&big * 3u8, big.clone()).unwrap().to_string(),
            "3"
        );
        // Tiny values are fine.
        assert!(Sigma2::new(1u8, BigUint::from(u128::MAX)).is_ok());
    }

    #[test]
    fn sharing_and_caching() {
        fn shareable<T: Send + Sync + Clone>() {}
        shareable::<DiscreteGaussian>();
        let d = DiscreteGaussian::new(sigma2(100, 1));
        let again = DiscreteGaussian::new(sigma2(200, 2));
        assert!(
            std::ptr::eq(d.acceptance(), again.acceptance()),
            "cache missed"
        );
        let copy = d.clone();
        assert!(Arc::ptr_eq(&d.0, &copy.0));
        assert!(!d.uses_reference_proposal());
        assert_eq!(d.acceptance_bucket_width(), 1);
        let wide = DiscreteGaussian::new(sigma2(100_000_000, 1));
        assert!(wide.uses_reference_proposal());
        assert!(wide.acceptance_bucket_width() > 1);
        assert!(format!("{wide:?}").contains("Sigma2(100000000)"));
    }

    #[test]
    fn variance_is_below_sigma2_for_small_sigma() {
        // Reference values: mpmath 1.3.0 at 50 digits, nsum of z²e^{−z²/2σ²} over the
        // nsum of e^{−z²/2σ²}.
        for (n, d, reference) in [
            (1u64, 1u64, 0.999_999_788_767_728_1),
            (1, 4, 0.215_012_675_088_138_5),
            (1, 100, 3.857_499_695_927_835e-22),
        ] {
            let v = DiscreteGaussian::new(sigma2(n, d)).variance();
            assert!(
                ((v - reference) / reference).abs() < 1e-12,
                "σ² = {n}/{d}: {v} vs {reference}"
            );
        }
        assert_eq!(
            DiscreteGaussian::new(sigma2(10_000, 1)).variance(),
            10_000.0
        );
    }
}
