//! A noise mechanism: the distribution a measurement's cells get, chosen by the level's
//! privacy loss and the measured vector's sensitivity.
//!
//! * A pure ε ([`Loss::Pure`]) gets the discrete Laplace of scale `Δ₁/ε`, `Δ₁` the L1
//!   sensitivity: ε-DP (Ghosh, Roughgarden and Sundararajan 2009; Kuo et al.
//!   Definition 3).
//! * A ρ ([`Loss::Zcdp`]) gets the discrete Gaussian with `σ² = Δ₂²/(2ρ)`, `Δ₂` the L2
//!   sensitivity: ρ-zCDP (Canonne, Kamath and Steinke 2020, Theorem 14, for a vector
//!   with independent noise per cell and `‖q(D) − q(D′)‖₂ ≤ Δ₂`). `σ²` is an exact
//!   rational: `Δ₂²·den / (2·num)` for `ρ = num/den`.
//!
//! Every estimator measures through [`Noise::for_loss`] with its [`Sensitivity`], and
//! weighs its cells by [`variance_of`]: the variance of the noise actually drawn, not a
//! formula for one definition.
//!
//! # Citations
//! Canonne, Kamath and Steinke, "The discrete Gaussian for differential privacy",
//! NeurIPS 2020, Theorem 14; Bun and Steinke, TCC 2016, Proposition 1.6.

use num_bigint::BigUint;
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{DiscreteGaussian, DiscreteLaplace, NoiseError, Sigma2};
use crate::privacy::{Loss, Rho};

/// A measured vector's sensitivity: the most one entity's move changes it, in L1 and in
/// L2 (squared, so that it stays an integer). For the count-of-counts vectors a move
/// changes each cell by at most one, so `l2_squared ≤ l1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sensitivity {
    /// `Δ₁ = max ‖q(D) − q(D′)‖₁`: the discrete Laplace's.
    pub l1: u32,
    /// `Δ₂² = max ‖q(D) − q(D′)‖₂²`: the discrete Gaussian's.
    pub l2_squared: u32,
}

impl Sensitivity {
    /// One cell by one: `Δ₁ = Δ₂² = 1`.
    pub const ONE: Sensitivity = Sensitivity {
        l1: 1,
        l2_squared: 1,
    };

    /// Two cells by one each (`naive`'s `H`): `Δ₁ = 2`, `Δ₂² = 2`.
    pub const TWO_CELLS: Sensitivity = Sensitivity {
        l1: 2,
        l2_squared: 2,
    };

    /// The norm the loss's mechanism is calibrated to, as a number (for records).
    pub fn for_definition(self, loss: &Loss) -> u32 {
        match loss {
            Loss::Pure(_) => self.l1,
            Loss::Zcdp(_) => self.l2_squared,
        }
    }
}

/// Which distribution a vector's noise came from (as written in `measurements.jsonl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MechanismKind {
    DiscreteLaplace,
    DiscreteGaussian,
}

impl MechanismKind {
    /// The mechanism a loss's definition uses.
    pub fn of(loss: &Loss) -> MechanismKind {
        match loss {
            Loss::Pure(_) => MechanismKind::DiscreteLaplace,
            Loss::Zcdp(_) => MechanismKind::DiscreteGaussian,
        }
    }

    /// `"discrete_laplace"` / `"discrete_gaussian"`.
    pub fn name(self) -> &'static str {
        match self {
            MechanismKind::DiscreteLaplace => "discrete_laplace",
            MechanismKind::DiscreteGaussian => "discrete_gaussian",
        }
    }
}

/// The noise of one measured vector.
#[derive(Clone, Debug)]
pub enum Noise {
    Laplace(DiscreteLaplace),
    Gaussian(DiscreteGaussian),
}

impl Noise {
    /// The mechanism that makes a vector of this sensitivity private at this loss.
    pub fn for_loss(loss: &Loss, sensitivity: Sensitivity) -> Result<Noise, NoiseError> {
        match loss {
            Loss::Pure(epsilon) => Ok(Noise::Laplace(DiscreteLaplace::new(
                sensitivity.l1,
                epsilon,
            )?)),
            Loss::Zcdp(rho) => Ok(Noise::Gaussian(DiscreteGaussian::new(sigma2_for(
                rho,
                sensitivity.l2_squared,
            )?))),
        }
    }

    /// One sample.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> i64 {
        match self {
            Noise::Laplace(d) => d.sample(rng),
            Noise::Gaussian(d) => d.sample(rng),
        }
    }

    /// Builds the sampling tables now rather than on the first sample.
    pub fn prepare(&self) {
        match self {
            Noise::Laplace(d) => d.prepare(),
            Noise::Gaussian(d) => d.prepare(),
        }
    }

    /// The variance of one sample (post-processing only).
    pub fn variance(&self) -> f64 {
        match self {
            Noise::Laplace(d) => d.variance(),
            Noise::Gaussian(d) => d.variance(),
        }
    }

    pub fn kind(&self) -> MechanismKind {
        match self {
            Noise::Laplace(_) => MechanismKind::DiscreteLaplace,
            Noise::Gaussian(_) => MechanismKind::DiscreteGaussian,
        }
    }
}

/// `σ² = Δ₂²/(2ρ)`, exactly.
pub fn sigma2_for(rho: &Rho, l2_squared: u32) -> Result<Sigma2, NoiseError> {
    if l2_squared == 0 {
        return Err(NoiseError::ZeroSensitivity);
    }
    let num: BigUint = rho.denom() * l2_squared;
    let den: BigUint = rho.numer() * 2u32;
    Sigma2::new(num, den)
}

/// The variance of one cell's noise for a vector of this sensitivity at this loss: the
/// mechanism's ([`Noise::variance`]), or, for a loss outside the samplers' range (a
/// hand-made measurement), the same formula in floating point: `2p/(1 − p)²` with
/// `p = exp(−ε/Δ₁)`, or `Δ₂²/(2ρ)`.
pub fn variance_of(loss: &Loss, sensitivity: Sensitivity) -> f64 {
    match Noise::for_loss(loss, sensitivity) {
        Ok(noise) => noise.variance(),
        Err(_) => match loss {
            Loss::Pure(epsilon) => {
                let rate = epsilon.to_f64() / f64::from(sensitivity.l1.max(1));
                let one_minus_p = -(-rate).exp_m1();
                2.0 * (1.0 - one_minus_p) / (one_minus_p * one_minus_p)
            }
            Loss::Zcdp(rho) => f64::from(sensitivity.l2_squared.max(1)) / (2.0 * rho.to_f64()),
        },
    }
}

/// The smallest `t ≥ 1` with `P[e ≥ t] ≤ p` for one cell's noise `e` (a margin for
/// sizing a measurement from a noisy one, [`crate::estimate::tail::auto_margin`]).
///
/// # Formula
/// The two-sided geometric with `q = e^{−ε/Δ₁}` has `P[e ≥ t] = q^t/(1 + q)` for
/// `t ≥ 1`, so `t = ⌈ln(1/(p(1 + q)))·Δ₁/ε⌉`. The discrete Gaussian is sub-Gaussian
/// with parameter `σ` (Canonne, Kamath and Steinke 2020, Proposition 19):
/// `P[e ≥ t] ≤ exp(−t²/(2σ²))`, so `t = ⌈σ·√(2 ln(1/p))⌉`.
pub fn upper_tail_margin(loss: &Loss, sensitivity: Sensitivity, p: f64) -> u64 {
    let t = match loss {
        Loss::Pure(epsilon) => {
            let rate = epsilon.to_f64() / f64::from(sensitivity.l1.max(1));
            let q = (-rate).exp();
            ((1.0 / (p * (1.0 + q))).ln() / rate).ceil()
        }
        Loss::Zcdp(rho) => {
            let sigma2 = f64::from(sensitivity.l2_squared.max(1)) / (2.0 * rho.to_f64());
            (sigma2.sqrt() * (2.0 * (1.0 / p).ln()).sqrt()).ceil()
        }
    };
    if t.is_finite() && t >= 1.0 {
        t.min(u64::MAX as f64 / 2.0) as u64
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::NoiseSource;
    use crate::noise::Purpose;
    use crate::privacy::{Epsilon, Rho};

    #[test]
    fn a_rho_gets_the_gaussian_of_sigma2_l2_over_two_rho() {
        let rho = Rho::parse("1/8").unwrap();
        let s = sigma2_for(&rho, 1).unwrap();
        assert_eq!(s.to_string(), Sigma2::new(4u32, 1u32).unwrap().to_string());
        let s = sigma2_for(&rho, 2).unwrap();
        assert_eq!(s.to_string(), Sigma2::new(8u32, 1u32).unwrap().to_string());
        let noise = Noise::for_loss(&Loss::Zcdp(rho.clone()), Sensitivity::ONE).unwrap();
        assert_eq!(noise.kind(), MechanismKind::DiscreteGaussian);
        // σ² = 4: the discrete Gaussian's variance is within 1e-6 of it at σ = 2.
        assert!(
            (noise.variance() - 4.0).abs() < 1e-6,
            "{}",
            noise.variance()
        );
        assert!((variance_of(&Loss::Zcdp(rho), Sensitivity::ONE) - 4.0).abs() < 1e-6);
    }

    #[test]
    fn a_pure_epsilon_gets_the_discrete_laplace_of_its_l1() {
        let e = Epsilon::parse("1").unwrap();
        let one = Noise::for_loss(&Loss::Pure(e.clone()), Sensitivity::ONE).unwrap();
        let two = Noise::for_loss(&Loss::Pure(e), Sensitivity::TWO_CELLS).unwrap();
        assert_eq!(one.kind(), MechanismKind::DiscreteLaplace);
        assert!((one.variance() - 1.841_347_188_415_584_8).abs() < 1e-12);
        let p = (-0.5f64).exp();
        assert!((two.variance() - 2.0 * p / (1.0 - p).powi(2)).abs() < 1e-12);
    }

    #[test]
    fn samples_have_the_stated_variance() {
        let rho = Rho::parse("1/2").unwrap();
        let noise = Noise::for_loss(&Loss::Zcdp(rho), Sensitivity::TWO_CELLS).unwrap();
        let mut rng = NoiseSource::seeded(3).stream(Purpose::Test.index(0));
        let n = 200_000;
        let sum2: f64 = (0..n)
            .map(|_| (noise.sample(&mut rng) as f64).powi(2))
            .sum();
        // σ² = 2; the sample variance's standard error is about σ²·√(2/n) ≈ 0.0063.
        assert!((sum2 / f64::from(n) - noise.variance()).abs() < 0.04);
    }

    #[test]
    fn the_tail_margin_bounds_the_tail() {
        let rho = Loss::Zcdp(Rho::parse("1/2").unwrap());
        // σ = 1: ⌈√(2 ln 10⁶)⌉ = ⌈5.257⌉ = 6.
        assert_eq!(upper_tail_margin(&rho, Sensitivity::ONE, 1e-6), 6);
        let e = Loss::Pure(Epsilon::parse("1").unwrap());
        assert_eq!(upper_tail_margin(&e, Sensitivity::ONE, 1e-6), 14);
    }
}
