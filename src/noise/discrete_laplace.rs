//! The two-sided geometric (discrete Laplace) distribution with scale `Δ/ε`, exactly.
//!
//! # Formula
//! `P(Z = z) = (1 − p)/(1 + p) · p^|z|` with `p = exp(−ε/Δ)` (Kuo et al. Definition 3);
//! variance `2p/(1 − p)²`.

use num_bigint::BigUint;
use num_traits::ToPrimitive;
use rand::Rng;
use thiserror::Error;

use super::cks;
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
}

/// Exact discrete Laplace noise with scale `sensitivity/ε`.
#[derive(Clone, Debug)]
pub struct DiscreteLaplace {
    /// Scale = t/s with s = ε's numerator and t = Δ × ε's denominator.
    s: u128,
    t: u128,
    sensitivity: u32,
    epsilon: Epsilon,
}

impl DiscreteLaplace {
    pub fn new(sensitivity: u32, epsilon: &Epsilon) -> Result<Self, NoiseError> {
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
        Ok(Self {
            s,
            t,
            sensitivity,
            epsilon: epsilon.clone(),
        })
    }

    /// One sample.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> i64 {
        cks::sample_discrete_laplace(self.s, self.t, rng)
    }

    pub fn sensitivity(&self) -> u32 {
        self.sensitivity
    }

    pub fn epsilon(&self) -> &Epsilon {
        &self.epsilon
    }

    /// `p = exp(−ε/Δ)`, approximately (post-processing only).
    pub fn p(&self) -> f64 {
        (-(self.s as f64) / self.t as f64).exp()
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

#[cfg(test)]
mod tests {
    use super::*;

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
