//! The household-size model both presets use: a shifted Poisson on 1..=7 continued by
//! a geometric tail, fitted to a region's average household size, and drawn for a
//! whole region at once as one multinomial.
//!
//! # Formula
//! For a parameter `λ ∈ [0, 6)`, the weight of size `k ≥ 1` is
//!
//! ```text
//! w_k = λ^(k−1) / (k−1)!          for 1 ≤ k ≤ 7   (1 + Poisson(λ), cut at 7)
//! w_k = w_7 · r^(k−7),  r = λ/6   for k ≥ 8
//! ```
//!
//! and `π_k = w_k / Σ w`. The tail continues the ratio of size 7 to size 6 (`w_7/w_6 =
//! λ/6 = r`) geometrically, which is Kuo et al.'s recipe for the sizes the 2010 Census
//! truncated at 7: the expected number of households of size `k ≥ 8` is
//! `E[count(7)]·r^(k−7)` with `r = E[count(7)]/E[count(6)]`. Sums in closed form
//! (`T = w_7`, `ρ = r/(1−r)`):
//!
//! ```text
//! Σ_k w_k   = Σ_{k≤7} w_k + T·ρ
//! Σ_k k·w_k = Σ_{k≤7} k·w_k + T·(7ρ + r/(1−r)²)
//! ```
//!
//! Every `w_k` is `λ^(k−1)` times a fixed base measure, so this is an exponential family
//! and the mean grows strictly with `λ`, from 1 at `λ = 0` to infinity as `λ → 6`: a
//! target mean `μ ≥ 1` is met by exactly one `λ`, found by bisection.
//!
//! Drawing `n` households is one multinomial over the infinite support, done exactly
//! with sequential binomials: `count(k) ~ Binomial(remaining, π_k / Σ_{j≥k} π_j)`.
//! Beyond 7 the conditional probability is the constant `1 − r` (the geometric tail
//! is memoryless), so the draw stops exactly when no household is left, with no
//! truncation of the tail.
//!
//! # Citations
//! Kuo, Chiu, Kifer, Hay, Machanavajjhala, "Differentially Private Hierarchical
//! Count-of-Counts Histograms", PVLDB 11(11), 2018, §6.1 ("Partially synthetic
//! housing"). The shifted Poisson as a one-parameter model of household size, fitted
//! from the average size alone: V. Jennings, B. Lloyd-Smith and D. Ironmonger,
//! "Household size and the Poisson distribution", Journal of the Australian Population
//! Association 16:65–84, 1999; B. Jarosz, "Poisson Distribution: A Model for
//! Estimating Households by Household Size", Population Research and Policy Review
//! 40(2):149–162, 2021 (tested on US counties and tracts; it under-predicts size 1 and
//! over-predicts size 3, which this synthetic data inherits).

use crate::histogram::{Count, Size};

use super::binomial::binomial;
use super::random::GenRng;

/// The largest size drawn from the Poisson part; beyond it, the geometric tail.
pub const POISSON_MAX: Size = 7;

/// Largest `λ` considered: the mean there is about 95, far above any region's.
const LAMBDA_MAX: f64 = 5.9;

/// The fitted size distribution of one region's households.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizeModel {
    lambda: f64,
}

/// A target mean the model cannot meet.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("average household size {mean} is out of range: expected a number between 1 and {max:.1}")]
pub struct MeanOutOfRange {
    pub mean: f64,
    pub max: f64,
}

impl SizeModel {
    pub fn with_lambda(lambda: f64) -> Self {
        Self {
            lambda: lambda.clamp(0.0, LAMBDA_MAX),
        }
    }

    /// The model whose mean size is `mean`, by bisection on `λ` (the mean is
    /// increasing in `λ`; see the module docs).
    pub fn fit_mean(mean: f64) -> Result<Self, MeanOutOfRange> {
        let max = Self::with_lambda(LAMBDA_MAX).mean();
        if !(1.0..=max).contains(&mean) {
            return Err(MeanOutOfRange { mean, max });
        }
        if mean == 1.0 {
            return Ok(Self::with_lambda(0.0));
        }
        let (mut lo, mut hi) = (0.0f64, LAMBDA_MAX);
        // Until the interval stops shrinking (about 60 steps unless λ is tiny).
        loop {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if Self::with_lambda(mid).mean() < mean {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(Self::with_lambda(0.5 * (lo + hi)))
    }

    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// `r = λ/6`: the expected ratio of each size's count to the previous one beyond 6.
    pub fn tail_ratio(&self) -> f64 {
        self.lambda / 6.0
    }

    /// Unnormalised weights `w_1..=w_7`.
    fn head_weights(&self) -> [f64; POISSON_MAX as usize] {
        let mut w = [0.0; POISSON_MAX as usize];
        let mut term = 1.0;
        for (i, slot) in w.iter_mut().enumerate() {
            *slot = term;
            term *= self.lambda / (i + 1) as f64;
        }
        w
    }

    /// Σ over the tail `k ≥ 8` of `w_k`, `k·w_k` and `k²·w_k`.
    fn tail_sums(&self) -> (f64, f64, f64) {
        let w7 = self.head_weights()[POISSON_MAX as usize - 1];
        let r = self.tail_ratio();
        let g = r / (1.0 - r); // Σ_{j≥1} r^j
        let g1 = r / ((1.0 - r) * (1.0 - r)); // Σ j·r^j
        let g2 = r * (1.0 + r) / ((1.0 - r) * (1.0 - r) * (1.0 - r)); // Σ j²·r^j
        let k0 = f64::from(POISSON_MAX);
        (
            w7 * g,
            w7 * (k0 * g + g1),
            w7 * (k0 * k0 * g + 2.0 * k0 * g1 + g2),
        )
    }

    /// Total weight, and the first and second moments' unnormalised sums.
    fn sums(&self) -> (f64, f64, f64) {
        let (mut s0, mut s1, mut s2) = self.tail_sums();
        for (i, w) in self.head_weights().iter().enumerate() {
            let k = (i + 1) as f64;
            s0 += w;
            s1 += k * w;
            s2 += k * k * w;
        }
        (s0, s1, s2)
    }

    /// Expected household size.
    pub fn mean(&self) -> f64 {
        let (s0, s1, _) = self.sums();
        s1 / s0
    }

    /// Variance of the household size.
    pub fn variance(&self) -> f64 {
        let (s0, s1, s2) = self.sums();
        let m = s1 / s0;
        s2 / s0 - m * m
    }

    /// `π_k`, the probability that a household has size `k`.
    pub fn probability(&self, k: Size) -> f64 {
        if k == 0 {
            return 0.0;
        }
        let head = self.head_weights();
        let (s0, _, _) = self.sums();
        let w = if k <= POISSON_MAX {
            head[k as usize - 1]
        } else {
            let mut w = head[POISSON_MAX as usize - 1];
            for _ in POISSON_MAX..k {
                w *= self.tail_ratio();
                if w == 0.0 {
                    break;
                }
            }
            w
        };
        w / s0
    }

    /// Sizes of `n` households, as `(size, count)` with sizes increasing and zero
    /// counts left out: one exact multinomial draw (see the module docs).
    pub fn draw(&self, n: Count, rng: &mut GenRng) -> Vec<(Size, Count)> {
        let head = self.head_weights();
        let (tail, _, _) = self.tail_sums();
        let mut out = Vec::new();
        let mut remaining = n;
        // Weight of sizes ≥ k, kept as a sum of what is left rather than a difference
        // so that it never goes negative through rounding.
        let mut rest: f64 = head.iter().sum::<f64>() + tail;
        for (i, &w) in head.iter().enumerate() {
            if remaining == 0 {
                return out;
            }
            let c = binomial(rng, remaining, w / rest);
            if c > 0 {
                out.push((i as Size + 1, c));
            }
            remaining -= c;
            rest = head[i + 1..].iter().sum::<f64>() + tail;
        }
        let stop = 1.0 - self.tail_ratio();
        let mut size = POISSON_MAX;
        while remaining > 0 {
            size += 1;
            let c = binomial(rng, remaining, stop);
            if c > 0 {
                out.push((size, c));
            }
            remaining -= c;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_meets_the_target_mean() {
        for target in [1.0, 1.2, 1.69, 2.0, 2.53, 3.0, 4.0, 5.25, 9.0] {
            let m = SizeModel::fit_mean(target).unwrap();
            assert!((m.mean() - target).abs() < 1e-12, "{target}: {}", m.mean());
        }
        assert_eq!(SizeModel::fit_mean(1.0).unwrap().lambda(), 0.0);
        assert!(SizeModel::fit_mean(0.9).is_err());
        assert!(SizeModel::fit_mean(f64::NAN).is_err());
        assert!(SizeModel::fit_mean(1e6).is_err());
    }

    #[test]
    fn mean_increases_with_lambda() {
        let means: Vec<f64> = (0..=59)
            .map(|i| SizeModel::with_lambda(i as f64 / 10.0).mean())
            .collect();
        assert_eq!(means[0], 1.0);
        assert!(means.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn closed_forms_match_direct_sums() {
        let m = SizeModel::fit_mean(2.6).unwrap();
        let (mut s0, mut s1, mut s2) = (0.0, 0.0, 0.0);
        for k in 1..400u32 {
            let p = m.probability(k);
            s0 += p;
            s1 += f64::from(k) * p;
            s2 += f64::from(k * k) * p;
        }
        assert!((s0 - 1.0).abs() < 1e-12);
        assert!((s1 - m.mean()).abs() < 1e-12);
        assert!((s2 - s1 * s1 - m.variance()).abs() < 1e-10);
        // The tail continues the 7/6 ratio.
        let r = m.probability(7) / m.probability(6);
        assert!((r - m.tail_ratio()).abs() < 1e-12);
        for k in 8..20 {
            assert!((m.probability(k) / m.probability(k - 1) - r).abs() < 1e-12);
        }
        // Peak at 2 for typical means, like real household sizes.
        assert!(m.probability(2) > m.probability(1) && m.probability(2) > m.probability(3));
    }

    #[test]
    fn draw_counts_every_household_and_follows_the_model() {
        let m = SizeModel::fit_mean(2.8).unwrap();
        let mut rng = GenRng::new(4, 0);
        let n = 2_000_000;
        let drawn = m.draw(n, &mut rng);
        assert_eq!(drawn.iter().map(|&(_, c)| c).sum::<u64>(), n);
        assert!(drawn.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(drawn.iter().all(|&(s, c)| s >= 1 && c > 0));
        let people: u64 = drawn.iter().map(|&(s, c)| u64::from(s) * c).sum();
        let mean = people as f64 / n as f64;
        let se = (m.variance() / n as f64).sqrt();
        assert!((mean - 2.8).abs() < 5.0 * se, "mean {mean}");
        // Each count within 5 standard deviations of its expectation.
        for &(s, c) in &drawn {
            let p = m.probability(s);
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (c as f64 - n as f64 * p).abs() < 5.0 * sd + 1.0,
                "size {s}: {c}"
            );
        }
        // The tail reaches beyond 7 and ends where its expectation is negligible.
        let max = drawn.last().unwrap().0;
        assert!(max > 9 && max < 30, "max size {max}");
    }

    #[test]
    fn degenerate_regions() {
        let mut rng = GenRng::new(4, 0);
        assert!(
            SizeModel::fit_mean(3.0)
                .unwrap()
                .draw(0, &mut rng)
                .is_empty()
        );
        assert_eq!(
            SizeModel::fit_mean(1.0).unwrap().draw(500, &mut rng),
            vec![(1, 500)]
        );
    }
}
