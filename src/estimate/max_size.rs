//! Estimating the public bound `K` privately (Kuo et al. §4.3, footnote 6).
//!
//! **Measurement.** `X` is the largest group size in the whole dataset (the root's
//! true histogram; 0 when there are no groups). Adding or removing one entity changes
//! `X` by at most one, so discrete Laplace noise with scale `1/ε` makes `X̃ = X + Z`
//! ε-differentially private. The release charges this ε to the root like any other
//! measurement.
//!
//! Under ρ-zCDP the noise is the discrete Gaussian of `σ² = 1/(2ρ)` (`Δ₂ = 1`), and the
//! charge is that ρ.
//!
//! **Post-processing.** `K = X̃ + ⌈5σ⌉`, clamped to `[1, 10^8]`, where `σ` is the
//! standard deviation of the noise. `K` then exceeds `X` except with probability
//! `P(Z < −5σ) = p^(⌈5σ⌉+1)/(1 + p)`, which is about `exp(−5√2)/2 ≈ 4·10⁻⁴` (the
//! paper's `P(K ≥ X) > 0.9995`). Groups above `K` are top-coded, so an estimate below
//! `X` costs accuracy, never privacy.
//!
//! # Formula
//! `K = clamp(X̃ + ⌈5·√Var⌉, 1, 10^8)` with `Var = 2p/(1 − p)²`, `p = exp(−ε)` (the
//! paper uses the continuous Laplace's `σ = √2/ε`).
//!
//! # Citations
//! Kuo et al., PVLDB 2018, §4.3, footnote 6.

use super::noise_variance;
use crate::histogram::{HistRef, Size};
use crate::noise::{Noise, NoiseError, NoiseStream, Sensitivity};
use crate::privacy::Loss;

/// The sensitivity of the largest group size.
pub const SENSITIVITY: Sensitivity = Sensitivity::ONE;
/// The smallest `K` returned.
pub const MIN_K: Size = 1;
/// The largest `K` returned: a dense `Hc` of this length already takes 800 MB.
pub const MAX_K: Size = 100_000_000;
/// How many standard deviations of noise are added to the noisy maximum.
pub const MARGIN_SDS: f64 = 5.0;

/// The noisy largest group size, with the budget it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaxSizeMeasurement {
    pub budget: Loss,
    /// `X + noise`.
    pub noisy: i64,
}

impl MaxSizeMeasurement {
    /// The public bound `K` derived from this measurement (post-processing).
    pub fn k(&self) -> Size {
        estimate(self.noisy, &self.budget)
    }
}

/// `X`: the largest group size, 0 without groups. Confidential.
pub fn true_value<'a>(root: impl Into<HistRef<'a>>) -> i64 {
    let root = root.into();
    root.max_size().map_or(0, i64::from)
}

/// `X` plus noise for sensitivity 1: discrete Laplace of scale `1/ε`, or discrete
/// Gaussian of `σ² = 1/(2ρ)` (`Δ₁ = Δ₂ = 1`: one entity moves the largest size by at
/// most one).
pub fn measure<'a>(
    root: impl Into<HistRef<'a>>,
    loss: &Loss,
    rng: &mut NoiseStream,
) -> Result<MaxSizeMeasurement, NoiseError> {
    let root = root.into();
    let noise = Noise::for_loss(loss, SENSITIVITY)?;
    Ok(MaxSizeMeasurement {
        budget: loss.clone(),
        noisy: true_value(root).saturating_add(noise.sample(rng)),
    })
}

/// `K` from the noisy maximum: add `⌈5σ⌉` and clamp to `[1, 10^8]`.
pub fn estimate(noisy: i64, loss: &Loss) -> Size {
    let margin = (MARGIN_SDS * noise_variance(SENSITIVITY, loss).sqrt()).ceil();
    // Saturating float-to-int conversion: huge margins clamp to MAX_K below.
    let margin = margin as i64;
    noisy
        .saturating_add(margin)
        .clamp(i64::from(MIN_K), i64::from(MAX_K)) as Size
}

/// Measures `X` and derives `K` in one call.
pub fn estimate_max_size<'a>(
    root: impl Into<HistRef<'a>>,
    loss: &Loss,
    rng: &mut NoiseStream,
) -> Result<(MaxSizeMeasurement, Size), NoiseError> {
    let root = root.into();
    let m = measure(root, loss, rng)?;
    let k = m.k();
    Ok((m, k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::CountOfCounts;
    use crate::noise::{NoiseSource, Purpose};

    fn eps(s: &str) -> Loss {
        Loss::Pure(crate::privacy::Epsilon::parse(s).unwrap())
    }

    #[test]
    fn margin_is_five_standard_deviations() {
        // ε = 1: p = e^−1, Var = 2p/(1−p)² ≈ 1.8413, σ ≈ 1.3570, 5σ ≈ 6.78 → 7.
        assert_eq!(estimate(100, &eps("1")), 107);
        // ε = 10^-4: σ ≈ √2·10^4 = 14142.1, 5σ ≈ 70710.7 → 70711 (discrete variance
        // 2p/(1−p)² is below 2/ε² by about 1/6: margin 70711 either way).
        assert_eq!(estimate(0, &eps("0.0001")), 70711);
    }

    #[test]
    fn clamped() {
        assert_eq!(estimate(-1000, &eps("1")), MIN_K);
        assert_eq!(estimate(i64::MAX, &eps("1")), MAX_K);
        assert_eq!(estimate(200_000_000, &eps("1")), MAX_K);
    }

    #[test]
    fn measurement_and_k() {
        let root = CountOfCounts::from_pairs([(1, 10), (4000, 1)]).unwrap();
        assert_eq!(true_value(&root), 4000);
        assert_eq!(true_value(&CountOfCounts::new()), 0);
        let source = NoiseSource::seeded(11);
        let mut hits = 0;
        for i in 0..200 {
            let mut rng = source.stream(Purpose::Test.index(i));
            let (m, k) = estimate_max_size(&root, &eps("1"), &mut rng).unwrap();
            assert_eq!(k, m.k());
            assert_eq!(m.budget, eps("1"));
            // Noise beyond 30 at ε = 1 has probability below e^−30.
            assert!((m.noisy - 4000).abs() < 30);
            hits += usize::from(k >= 4000);
        }
        // P(K < X) ≈ 4·10⁻⁴ per trial.
        assert!(hits >= 198, "{hits}");
    }
}
