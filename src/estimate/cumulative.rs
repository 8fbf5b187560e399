//! The cumulative-histogram estimator `Hc` (Kuo et al. §4.3).
//!
//! **Measurement.** Sizes above `K` are top-coded to `K`, so `Hc[j]` (the number of
//! groups of size `≤ j`) has `K + 1` cells with `Hc[K] = G`. Each cell gets independent
//! discrete Laplace noise with scale `1/ε`: moving one entity moves one group from size
//! `s` to `s ± 1`, which changes exactly one cell by one (`Hc[s]` when a group of size
//! `s < K` grows, `Hc[s − 1]` when a group of size `s ≤ K` shrinks) and none when the
//! group stays at or above `K` after top-coding, so the sensitivity is 1 (Lemma 4.2).
//! The last cell is public (`G`) and is measured anyway, so the vector's shape is that
//! of the paper; its noisy value is ignored.
//!
//! **Under ρ-zCDP** each cell gets independent discrete Gaussian noise of
//! `σ² = 1/(2ρ)` instead. The same move changes one cell by one, so the L2 sensitivity
//! is `Δ₂ = 1` too, and a vector with independent discrete Gaussian noise of `σ²` per
//! cell is `Δ₂²/(2σ²)`-zCDP (Canonne, Kamath and Steinke 2020, Theorem 14): ρ-zCDP.
//!
//! **Post-processing.** Isotonic regression (L1 by default, L2 on request) with bounds
//! `[0, G]` and the last cell fixed to `G` (computed as [`isotonic::fit_free_with_last`]
//! clipped at 0; the consistency step uses the unclipped fit), rounding to
//! the nearest integer (monotone, so `Ĥc` stays nondecreasing and ends at `G`), and
//! differencing back to `Ĥ`. `Ĥc` is constant on each isotonic block, so `Ĥ` is
//! nonzero only at block starts and is built in `O(blocks)` after the fit.
//!
//! # Formula
//! Variance of each group of estimated size `j` (Kuo et al. §5.1.2):
//! `2·Var / Ĥ[j]`, with `Var` the exact variance of one cell's noise
//! ([`super::noise_variance`]); the paper's `4/(ε²·Ĥ[j])` is this with `Var ≈ 2/ε²`.
//!
//! # Citations
//! Kuo et al., PVLDB 2018, §4.3 (Lemma 4.2) and §5.1.2.

use super::{
    GroupRun, IsotonicFit, NodeEstimate, NodeFit, add_noise, all_at_size_zero, count_to_i64,
    isotonic, noise_variance,
};
use crate::histogram::{Count, CountOfCounts, HistRef, Size};
use crate::noise::{Noise, NoiseError, NoiseStream, Sensitivity};
use crate::privacy::Loss;

/// The sensitivity of the top-coded cumulative histogram (Lemma 4.2).
pub const SENSITIVITY: Sensitivity = Sensitivity::ONE;

/// The top-coded `Hc[0..=K]`: the vector [`measure`] adds noise to. Confidential.
pub fn true_vector<'a>(truth: impl Into<HistRef<'a>>, k: Size) -> Vec<i64> {
    head_vector(truth.into(), k, k as usize + 1)
}

/// The first `len` cells of the top-coded `Hc[0..=K]` (`len ≤ K + 1`), computed without
/// the others: a tail's head needs `L` cells, not `K + 1`.
pub(super) fn head_vector(truth: HistRef<'_>, k: Size, len: usize) -> Vec<i64> {
    let mut cells = vec![0i64; len];
    for &(size, count) in truth.pairs() {
        if let Some(cell) = cells.get_mut(size.min(k) as usize) {
            *cell = cell.saturating_add(count_to_i64(count));
        }
    }
    let mut running = 0i64;
    for cell in &mut cells {
        running = running.saturating_add(*cell);
        *cell = running;
    }
    cells
}

/// `Hc[0..=K]` plus independent discrete Laplace noise with scale `1/ε`.
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

/// `Ĥ` and `Ĥg` with variances from a noisy cumulative histogram of `G = groups`
/// groups; `K = noisy.len() − 1`. Post-processing only.
///
/// An empty `noisy` (which [`measure`] never returns) puts all groups at size 0.
pub fn estimate(noisy: &[i64], groups: Count, loss: &Loss, fit: IsotonicFit) -> NodeEstimate {
    estimate_keeping(noisy, groups, loss, fit, true)
}

/// [`estimate`], keeping the noisy cells in the fit only if `keep_raw`.
pub(super) fn estimate_keeping(
    noisy: &[i64],
    groups: Count,
    loss: &Loss,
    fit: IsotonicFit,
    keep_raw: bool,
) -> NodeEstimate {
    let var = noise_variance(SENSITIVITY, loss);
    if noisy.is_empty() {
        return all_at_size_zero(groups, 2.0 * var);
    }
    let g = count_to_i64(groups);
    // Without the lower bound, for the consistency step; clipped at 0 here.
    let blocks = isotonic::fit_free_with_last(fit, noisy, g);
    let (pairs, runs) = groups_of_fit(&blocks, g, var);
    let histogram = CountOfCounts::from_pairs(pairs).expect("block starts are distinct sizes");
    NodeEstimate {
        histogram,
        runs,
        fit: Some(NodeFit {
            head: NodeFit::head_from(&blocks, noisy.len()),
            from: noisy.len() as u32,
            steps: Vec::new(),
            saturated: false,
            noise_variance: var,
            raw: if keep_raw { noisy.to_vec() } else { Vec::new() },
        }),
    }
}

/// The groups of a cumulative fit whose last value is `top`: each block's rounded value,
/// clipped to `[0, top]`, less the previous one, at the block's first size, as `Ĥ`'s
/// pairs and as runs with the variance `2·Var/Ĥ[j]` (Kuo et al. §5.1.2).
pub(super) fn groups_of_fit(
    blocks: &[isotonic::Block],
    top: i64,
    var: f64,
) -> (Vec<(Size, Count)>, Vec<GroupRun>) {
    let mut pairs: Vec<(Size, Count)> = Vec::new();
    let mut previous = 0i128;
    for block in blocks {
        let value = block.rounded().clamp(0, i128::from(top));
        if value > previous {
            // In [0, top] after clipping, so the difference fits a Count.
            pairs.push((block.start as Size, (value - previous) as Count));
        }
        previous = value;
    }
    let runs = pairs
        .iter()
        .map(|&(size, count)| GroupRun {
            size,
            count,
            variance: 2.0 * var / count as f64,
        })
        .collect();
    (pairs, runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eps(s: &str) -> Loss {
        Loss::Pure(crate::privacy::Epsilon::parse(s).unwrap())
    }

    #[test]
    fn true_vector_top_codes() {
        let h = CountOfCounts::from_pairs([(0, 1), (2, 3), (9, 2)]).unwrap();
        assert_eq!(true_vector(&h, 4), [1, 1, 4, 4, 6]);
        assert_eq!(true_vector(&h, 0), [6]);
        assert_eq!(true_vector(&CountOfCounts::new(), 2), [0, 0, 0]);
    }

    #[test]
    fn noiseless_measurement_is_recovered() {
        // Noisy values equal to the truth are already monotone: the fit returns them.
        let h = CountOfCounts::from_pairs([(1, 2), (3, 1), (4, 2)]).unwrap();
        for fit in [IsotonicFit::L1, IsotonicFit::L2] {
            let est = estimate(&true_vector(&h, 6), 5, &eps("1"), fit);
            assert_eq!(est.histogram, h);
        }
    }

    #[test]
    fn worked_example() {
        // K = 4, G = 5, noisy Hc = [1, 3, 2, 4, 9]. L1: cells 0..3 have the optimal fits
        // [1, 2, 2, 4] and [1, 3, 3, 4] (cost 1 each); the centered fit is their
        // midpoint [1, 2.5, 2.5, 4], which rounds (halves up) to [1, 3, 3, 4]; last = 5.
        let var = noise_variance(Sensitivity::ONE, &eps("1"));
        let est = estimate(&[1, 3, 2, 4, 9], 5, &eps("1"), IsotonicFit::L1);
        assert_eq!(est.histogram, CountOfCounts::from_dense(&[1, 2, 0, 1, 1]));
        assert_eq!(
            est.runs,
            vec![
                GroupRun {
                    size: 0,
                    count: 1,
                    variance: 2.0 * var
                },
                GroupRun {
                    size: 1,
                    count: 2,
                    variance: var
                },
                GroupRun {
                    size: 3,
                    count: 1,
                    variance: 2.0 * var
                },
                GroupRun {
                    size: 4,
                    count: 1,
                    variance: 2.0 * var
                },
            ]
        );
    }

    #[test]
    fn clipped_to_zero_and_g() {
        // Very negative noise at small sizes and values above G elsewhere.
        let est = estimate(&[-7, -3, 12, 40], 10, &eps("1"), IsotonicFit::L1);
        assert_eq!(est.histogram, CountOfCounts::from_dense(&[0, 0, 10]));
        let est = estimate(&[-7, -3, -1, -4], 3, &eps("1"), IsotonicFit::L2);
        assert_eq!(est.histogram, CountOfCounts::from_dense(&[0, 0, 0, 3]));
    }

    #[test]
    fn empty_node() {
        let est = estimate(&[2, -1, 1], 0, &eps("1"), IsotonicFit::L1);
        assert!(est.histogram.is_empty() && est.runs.is_empty());
        let est = estimate(&[], 3, &eps("1"), IsotonicFit::L1);
        assert_eq!(est.histogram, CountOfCounts::from_dense(&[3]));
    }
}
