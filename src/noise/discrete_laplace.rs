//! The two-sided geometric (discrete Laplace) distribution with scale `Δ/ε`, exactly.
//!
//! # Formula
//! `P(Z = z) = (1 − p)/(1 + p) · p^|z|` with `p = exp(−ε/Δ)` (Kuo et al. Definition 3;
//! Ghosh et al.'s geometric mechanism); variance `2p/(1 − p)²`. With `ε = s/d` exact,
//! `p = exp(−s/t)` for the integers `s` and `t = Δ·d`.
//!
//! # How it is sampled
//! * Scales `Δ/ε ≤ 4096` ([`MAX_TABLE_SCALE`](super::inversion::MAX_TABLE_SCALE)): exact inversion with a table
//!   of rigorous integer bounds on `P(|Z| ≥ m)` and a lazy comparison that draws more
//!   random digits on the rare draws (probability about `2^−62`) the table cannot decide
//!   ([`super::inversion`], where the argument for exactness is written out). One `u64`
//!   from the generator per sample, a table lookup, no floating point.
//! * Larger scales (`ε/Δ < 1/4096`, noise with standard deviation above 5 800): the
//!   reference sampler of Canonne, Kamath and Steinke ([`super::cks`]), exact for every
//!   scale and several times slower.
//!
//! Tables are built on the first sample, once per `(Δ, ε)` in the process (a small
//! cache shared by all instances and threads), and a [`DiscreteLaplace`] is an `Arc`:
//! cheap to clone and to share between threads.
//!
//! # Citations
//! Ghosh, Roughgarden, Sundararajan, "Universally utility-maximizing privacy
//! mechanisms", STOC 2009 (the geometric mechanism); Kuo et al., PVLDB 2018,
//! Definition 3; Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential
//! Privacy", NeurIPS 2020 (the reference sampler); Mironov, "On significance of the
//! least significant bits for differential privacy", CCS 2012 (why floating-point
//! sampling is excluded).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use num_bigint::BigUint;
use num_traits::ToPrimitive;
use rand::Rng;
use thiserror::Error;

use super::cks;
use super::inversion::InversionTable;
use crate::privacy::Epsilon;

/// The largest noise scale `Δ/ε` accepted: far beyond any useful budget, and small
/// enough that noise never leaves the 64-bit range.
pub const MAX_SCALE: u64 = 1 << 48;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum NoiseError {
    #[error("sensitivity must be at least 1")]
    ZeroSensitivity,
    #[error(
        "ε = {epsilon} with sensitivity {sensitivity} gives noise scale above 2^48; use a larger ε"
    )]
    ScaleTooLarge { epsilon: String, sensitivity: u32 },
    #[error("ε = {epsilon} has a numerator or denominator above 10^18")]
    OutOfRange { epsilon: String },
    /// A discrete Gaussian's σ² ([`super::Sigma2`]) that is zero or has a zero
    /// denominator.
    #[error("σ² = {sigma2} is not positive: expected a fraction with positive terms")]
    Sigma2NotPositive { sigma2: String },
    /// A σ² outside [`super::discrete_gaussian::MAX_SIGMA2`] or with terms beyond 128 bits.
    #[error(
        "σ² = {sigma2} is out of range: expected at most 10^18 (σ at most 10^9), \
         with numerator and denominator below 2^128"
    )]
    Sigma2OutOfRange { sigma2: String },
}

/// Exact discrete Laplace noise with scale `sensitivity/ε`.
#[derive(Clone)]
pub struct DiscreteLaplace(Arc<Inner>);

struct Inner {
    /// Scale = t/s with s = ε's numerator and t = Δ × ε's denominator.
    s: u128,
    t: u128,
    sensitivity: u32,
    epsilon: Epsilon,
    table_bits: u32,
    engine: OnceLock<Engine>,
}

#[derive(Clone)]
enum Engine {
    Table(Arc<InversionTable>),
    Reference,
}

impl std::fmt::Debug for DiscreteLaplace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscreteLaplace")
            .field("sensitivity", &self.0.sensitivity)
            .field("epsilon", &self.0.epsilon)
            .field("table_bits", &self.0.table_bits)
            .finish_non_exhaustive()
    }
}

impl DiscreteLaplace {
    pub fn new(sensitivity: u32, epsilon: &Epsilon) -> Result<Self, NoiseError> {
        Self::with_table_bits(sensitivity, epsilon, 63)
    }

    /// The same distribution with the inversion table rounded to `table_bits` bits
    /// (clamped to `1..=63`; [`DiscreteLaplace::new`] uses 63). Coarser tables leave
    /// more draws to the exact slow path, which makes sampling slower and nothing else:
    /// this exists so that tests can run the slow path often.
    pub fn with_table_bits(
        sensitivity: u32,
        epsilon: &Epsilon,
        table_bits: u32,
    ) -> Result<Self, NoiseError> {
        if sensitivity == 0 {
            return Err(NoiseError::ZeroSensitivity);
        }
        let out_of_range = || NoiseError::OutOfRange {
            epsilon: epsilon.to_string(),
        };
        let s = epsilon.numer().to_u128().ok_or_else(out_of_range)?;
        let den = epsilon.denom().to_u128().ok_or_else(out_of_range)?;
        if !epsilon.within_text_bounds() {
            return Err(out_of_range());
        }
        let t = den * u128::from(sensitivity);
        if BigUint::from(t) > BigUint::from(s) * BigUint::from(MAX_SCALE) {
            return Err(NoiseError::ScaleTooLarge {
                epsilon: epsilon.to_string(),
                sensitivity,
            });
        }
        Ok(Self(Arc::new(Inner {
            s,
            t,
            sensitivity,
            epsilon: epsilon.clone(),
            table_bits: table_bits.clamp(1, 63),
            engine: OnceLock::new(),
        })))
    }

    /// One sample. On the table path this reads one `u64` from `rng`, and more only on
    /// the rare draws that need the exact slow path or the tail beyond the table.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> i64 {
        match self.engine() {
            Engine::Table(table) => table.sample(rng),
            Engine::Reference => cks::sample_discrete_laplace(self.0.s, self.0.t, rng),
        }
    }

    /// Fills `out` with independent samples.
    pub fn fill<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [i64]) {
        match self.engine() {
            Engine::Table(table) => out.iter_mut().for_each(|x| *x = table.sample(rng)),
            Engine::Reference => out
                .iter_mut()
                .for_each(|x| *x = cks::sample_discrete_laplace(self.0.s, self.0.t, rng)),
        }
    }

    /// Builds (or fetches) the sampling table now rather than on the first sample.
    pub fn prepare(&self) {
        self.engine();
    }

    /// Whether samples come from the reference sampler (scale above
    /// [`super::inversion::MAX_TABLE_SCALE`]) rather than the inversion table.
    pub fn uses_reference_sampler(&self) -> bool {
        matches!(self.engine(), Engine::Reference)
    }

    #[inline]
    fn engine(&self) -> &Engine {
        self.0
            .engine
            .get_or_init(|| cached_engine(self.0.s, self.0.t, self.0.table_bits))
    }

    pub fn sensitivity(&self) -> u32 {
        self.0.sensitivity
    }

    pub fn epsilon(&self) -> &Epsilon {
        &self.0.epsilon
    }

    /// `p = exp(−ε/Δ)`, approximately (post-processing only).
    pub fn p(&self) -> f64 {
        (-(self.0.s as f64) / self.0.t as f64).exp()
    }

    /// The variance `2p/(1 − p)²`, approximately (post-processing only).
    pub fn variance(&self) -> f64 {
        let p = self.p();
        2.0 * p / ((1.0 - p) * (1.0 - p))
    }

    /// The exact probability mass `(1 − p)/(1 + p) · p^|z|`, in floating point (tests
    /// and diagnostics only).
    pub fn pmf(&self, z: i64) -> f64 {
        let p = self.p();
        (1.0 - p) / (1.0 + p) * p.powf(z.unsigned_abs() as f64)
    }
}

/// Tables kept for reuse: a release measures thousands of nodes with a handful of
/// `(Δ, ε)` pairs, and each measurement may build its own [`DiscreteLaplace`].
const CACHE_CAPACITY: usize = 32;

type CacheKey = (u128, u128, u32);

fn cached_engine(s: u128, t: u128, table_bits: u32) -> Engine {
    static CACHE: OnceLock<Mutex<HashMap<CacheKey, Arc<InversionTable>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (s, t, table_bits);
    // A poisoned lock only means another thread panicked mid-insert of a complete
    // table; the map is still consistent.
    if let Some(table) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Engine::Table(Arc::clone(table));
    }
    // Built outside the lock: two threads may both build, and both tables are right.
    let Some(table) = InversionTable::build(s, t, table_bits) else {
        return Engine::Reference;
    };
    let table = Arc::new(table);
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    if map.len() >= CACHE_CAPACITY {
        map.clear();
    }
    map.insert(key, Arc::clone(&table));
    Engine::Table(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_and_sharing() {
        fn shareable<T: Send + Sync + Clone>() {}
        shareable::<DiscreteLaplace>();

        let d = DiscreteLaplace::new(1, &Epsilon::parse("0.1").unwrap()).unwrap();
        let again = DiscreteLaplace::new(1, &Epsilon::parse("1/10").unwrap()).unwrap();
        match (d.engine(), again.engine()) {
            (Engine::Table(a), Engine::Table(b)) => assert!(Arc::ptr_eq(a, b), "cache missed"),
            _ => panic!("scale 10 must use a table"),
        }
        let copy = d.clone();
        assert!(Arc::ptr_eq(&d.0, &copy.0));

        let wide = DiscreteLaplace::new(3, &Epsilon::parse("1/2000").unwrap()).unwrap();
        assert!(wide.uses_reference_sampler());
        assert!(format!("{wide:?}").contains("sensitivity: 3"));
    }

    #[test]
    fn parameters() {
        let eps = Epsilon::parse("0.1").unwrap();
        let d = DiscreteLaplace::new(2, &eps).unwrap();
        assert!((d.p() - (-0.05f64).exp()).abs() < 1e-15);
        assert_eq!(
            DiscreteLaplace::new(0, &eps).unwrap_err(),
            NoiseError::ZeroSensitivity
        );
        let tiny = Epsilon::parse("1e-15").unwrap();
        assert!(matches!(
            DiscreteLaplace::new(1, &tiny),
            Err(NoiseError::ScaleTooLarge { .. })
        ));
        let big = Epsilon::parse("1e-3")
            .unwrap()
            .add(&Epsilon::parse("1/999999999999999989").unwrap());
        assert!(matches!(
            DiscreteLaplace::new(1, &big),
            Err(NoiseError::OutOfRange { .. })
        ));
    }
}
