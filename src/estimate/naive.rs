//! The naive estimator (Kuo et al. §4.1): noise on each cell of `H`.
//!
//! **Measurement.** Sizes above `K` are top-coded to `K` and `H` is extended with
//! zeros to `K + 1` cells `H'[0..=K]`. Each cell gets independent discrete Laplace
//! noise with scale `2/ε`: moving one entity moves one group from one cell to a
//! neighbouring one (two cells change by one) or, at the top-coding bound, changes
//! nothing, so the sensitivity is 2 (Lemma 3).
//!
//! **Under ρ-zCDP** each cell gets discrete Gaussian noise of `σ² = 2/(2ρ) = 1/ρ`: the
//! two cells that change, change by one each, so `Δ₂² = 1 + 1 = 2` (the L2 norm, not
//! the L1 norm's square, 4: calibrating to `Δ₁` would double `σ²` for nothing, and
//! calibrating to `Δ₂² = 1` would halve it and break the guarantee). By Canonne, Kamath
//! and Steinke 2020, Theorem 14, the vector is `Δ₂²/(2σ²) = ρ`-zCDP.
//!
//! **Post-processing.** The Euclidean projection of the noisy `H̃` onto
//! `{h ≥ 0, Σh = G}` and largest-remainder rounding to integers summing to `G`.
//! Both are exact in integer arithmetic: the projection is `h_i = max(H̃_i − θ, 0)`
//! with a rational threshold `θ = (S_ρ − G)/ρ`, so `ρ·h_i` is an integer.
//!
//! The paper keeps this method as the baseline it rules out: its error grows with `K`
//! because every empty cell picks up noise.
//!
//! # Formula
//! Projection onto the scaled simplex (Duchi et al. 2008, Figure 1): sort `H̃`
//! descending as `u_1 ≥ … ≥ u_n`, let `S_j = u_1 + … + u_j`,
//! `ρ = max{ j : u_j − (S_j − G)/j > 0 }` and `θ = (S_ρ − G)/ρ`; then
//! `ĥ_i = max(H̃_i − θ, 0)`. Rounding (§4.1): with `r = G − Σ⌊ĥ_i⌋`, round up the `r`
//! cells with the largest fractional parts (ties: the smaller size first) and round
//! the rest down.
//!
//! Variance: the paper gives no estimate for this method. A group of estimated size
//! `j` gets `(j + 1)·Var / Ĥ[j]`: the variance of the noisy cumulative count up to `j`
//! (a sum of `j + 1` cells with noise variance `Var` each, [`super::noise_variance`]
//! with sensitivity 2), divided among the `Ĥ[j]` groups of that size, by analogy with
//! the `Hc` method's `2·Var/Ĥ[j]` (§5.1.2). It grows with the size, as the error does.
//!
//! # Citations
//! * Kuo et al., PVLDB 2018, §4.1 (Lemma 3).
//! * Duchi, Shalev-Shwartz, Singer, Chandra, "Efficient Projections onto the
//!   ℓ1-Ball for Learning in High Dimensions", ICML 2008, §3 and Figure 1.

use super::{GroupRun, NodeEstimate, add_noise, all_at_size_zero, count_to_i64, noise_variance};
use crate::histogram::{Count, CountOfCounts, HistRef, Size};
use crate::noise::{Noise, NoiseError, NoiseStream, Sensitivity};
use crate::privacy::Loss;

/// The sensitivity of the top-coded histogram (Lemma 3).
pub const SENSITIVITY: Sensitivity = Sensitivity::TWO_CELLS;

/// The top-coded `H'[0..=K]`: the vector [`measure`] adds noise to. Confidential.
pub fn true_vector<'a>(truth: impl Into<HistRef<'a>>, k: Size) -> Vec<i64> {
    let truth = truth.into();
    let mut cells = vec![0i64; k as usize + 1];
    for &(size, count) in truth.pairs() {
        let cell = &mut cells[size.min(k) as usize];
        *cell = cell.saturating_add(count_to_i64(count));
    }
    cells
}

/// `H'[0..=K]` plus independent discrete Laplace noise with scale `2/ε`.
pub fn measure<'a>(
    truth: impl Into<HistRef<'a>>,
    k: Size,
    loss: &Loss,
    rng: &mut NoiseStream,
) -> Result<Vec<i64>, NoiseError> {
    let truth = truth.into();
    let noise = Noise::for_loss(loss, SENSITIVITY)?;
    let mut cells = true_vector(truth, k);
    add_noise(&mut cells, &noise, rng);
    Ok(cells)
}

/// `Ĥ` and `Ĥg` with variances from a noisy top-coded histogram of `G = groups`
/// groups; `K = noisy.len() − 1`. Post-processing only.
///
/// An empty `noisy` (which [`measure`] never returns) puts all groups at size 0.
pub fn estimate(noisy: &[i64], groups: Count, loss: &Loss) -> NodeEstimate {
    let var = noise_variance(SENSITIVITY, loss);
    if noisy.is_empty() || groups == 0 {
        return all_at_size_zero(groups, var);
    }
    let dense = project_and_round(noisy, count_to_i64(groups));
    let mut pairs = Vec::new();
    let mut runs = Vec::new();
    for (size, &count) in dense.iter().enumerate() {
        if count > 0 {
            pairs.push((size as Size, count));
            runs.push(GroupRun {
                size: size as Size,
                count,
                variance: (size as f64 + 1.0) * var / count as f64,
            });
        }
    }
    NodeEstimate {
        histogram: CountOfCounts::from_dense(&dense),
        runs,
        fit: None,
    }
}

/// The nonnegative integer vector summing to `total > 0` obtained from the Euclidean
/// projection of `noisy` onto `{h ≥ 0, Σh = total}` by largest-remainder rounding
/// (see the module documentation). Exact.
pub fn project_and_round(noisy: &[i64], total: i64) -> Vec<Count> {
    debug_assert!(total > 0 && !noisy.is_empty());
    let total = i128::from(total);
    let mut sorted: Vec<i64> = noisy.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    // ρ and S_ρ: the condition u_j·j > S_j − total holds for a prefix of j's.
    let (mut rho, mut s_rho, mut running) = (0i128, 0i128, 0i128);
    for (j, &u) in sorted.iter().enumerate() {
        let j = j as i128 + 1;
        running += i128::from(u);
        if i128::from(u) * j > running - total {
            rho = j;
            s_rho = running;
        }
    }
    // ρ ≥ 1 since j = 1 always qualifies when total > 0; θ = (S_ρ − total)/ρ.
    let theta_num = s_rho - total;
    // ρ·ĥ_i, exactly.
    let scaled: Vec<i128> = noisy
        .iter()
        .map(|&v| (i128::from(v) * rho - theta_num).max(0))
        .collect();
    let mut out: Vec<Count> = scaled.iter().map(|&x| (x / rho) as Count).collect();
    let floor_sum: i128 = out.iter().map(|&c| i128::from(c)).sum();
    // Σĥ = total exactly, so 0 ≤ r < the number of cells with a fractional part.
    let r = (total - floor_sum) as usize;
    if r > 0 {
        let mut fractional: Vec<(i128, usize)> = scaled
            .iter()
            .enumerate()
            .filter(|&(_, &x)| x % rho != 0)
            .map(|(i, &x)| (x % rho, i))
            .collect();
        fractional.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for &(_, i) in &fractional[..r] {
            out[i] += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn eps(s: &str) -> Loss {
        Loss::Pure(crate::privacy::Epsilon::parse(s).unwrap())
    }

    #[test]
    fn true_vector_top_codes() {
        let h = CountOfCounts::from_pairs([(0, 1), (2, 3), (9, 2)]).unwrap();
        assert_eq!(true_vector(&h, 4), [1, 0, 3, 0, 2]);
        assert_eq!(true_vector(&h, 0), [6]);
    }

    #[test]
    fn projection_worked_examples() {
        // Already on the simplex: unchanged.
        assert_eq!(project_and_round(&[1, 2, 0, 2], 5), [1, 2, 0, 2]);
        // [3, −1, 4] onto Σ = 5: θ = (7 − 5)/2 = 1 → [2, 0, 3].
        assert_eq!(project_and_round(&[3, -1, 4], 5), [2, 0, 3]);
        // [1, 1, 1] onto Σ = 2: θ = 1/3 → [2/3, 2/3, 2/3]; two cells round up, ties to
        // the smaller sizes.
        assert_eq!(project_and_round(&[1, 1, 1], 2), [1, 1, 0]);
        // [10, 0, 0, 9] onto Σ = 4: θ = (19 − 4)/2 = 7.5 → [2.5, 0, 0, 1.5] → [3, 0, 0, 1].
        assert_eq!(project_and_round(&[10, 0, 0, 9], 4), [3, 0, 0, 1]);
        // All negative: the mass goes to the largest cell.
        assert_eq!(project_and_round(&[-5, -2, -9], 3), [0, 3, 0]);
    }

    #[test]
    fn estimate_runs_and_variances() {
        let var = noise_variance(Sensitivity::TWO_CELLS, &eps("1"));
        let est = estimate(&[3, -1, 4], 5, &eps("1"));
        assert_eq!(est.histogram, CountOfCounts::from_dense(&[2, 0, 3]));
        assert_eq!(
            est.runs,
            vec![
                GroupRun {
                    size: 0,
                    count: 2,
                    variance: var / 2.0
                },
                GroupRun {
                    size: 2,
                    count: 3,
                    variance: 3.0 * var / 3.0
                },
            ]
        );
        assert!(estimate(&[3, -1, 4], 0, &eps("1")).runs.is_empty());
    }

    /// The projection's optimality conditions, exactly: with ĥ = max(v − θ, 0), the
    /// point minimises ‖h − v‖² on the simplex iff Σĥ = G (KKT with multiplier θ).
    /// Checked against a brute-force search over a fine grid on tiny inputs instead.
    fn brute_projection(v: &[i64], total: i64) -> f64 {
        // Minimises over all real points via the closed form for every support set.
        let n = v.len();
        let mut best = f64::INFINITY;
        for mask in 1u32..(1 << n) {
            let idx: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
            let s: f64 = idx.iter().map(|&i| v[i] as f64).sum();
            let theta = (s - total as f64) / idx.len() as f64;
            let h: Vec<f64> = (0..n)
                .map(|i| {
                    if mask & (1 << i) != 0 {
                        v[i] as f64 - theta
                    } else {
                        0.0
                    }
                })
                .collect();
            if h.iter().all(|&x| x >= -1e-12) {
                let d: f64 = h.iter().zip(v).map(|(a, &b)| (a - b as f64).powi(2)).sum();
                best = best.min(d);
            }
        }
        best
    }

    proptest! {
        #[test]
        fn projection_is_optimal_and_rounds_to_total(
            v in proptest::collection::vec(-20i64..20, 1..8),
            total in 1i64..30,
        ) {
            let out = project_and_round(&v, total);
            prop_assert_eq!(out.iter().sum::<u64>(), total as u64);
            // Recompute the real projection from the same θ and compare its distance
            // with the best over all supports.
            let mut sorted = v.clone();
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            let brute = brute_projection(&v, total);
            let (mut best_theta, mut run) = (f64::NAN, 0.0);
            for (j, &u) in sorted.iter().enumerate() {
                run += u as f64;
                let t = (run - total as f64) / (j + 1) as f64;
                if (u as f64) - t > 0.0 { best_theta = t; }
            }
            let proj: Vec<f64> = v.iter().map(|&x| (x as f64 - best_theta).max(0.0)).collect();
            let d: f64 = proj.iter().zip(&v).map(|(a, &b)| (a - b as f64).powi(2)).sum();
            prop_assert!((d - brute).abs() < 1e-6, "{} vs {}", d, brute);
            // Rounding moves every cell by less than one.
            for (o, p) in out.iter().zip(&proj) {
                prop_assert!((*o as f64 - p).abs() < 1.0);
            }
        }
    }
}
