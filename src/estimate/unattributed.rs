//! The unattributed-histogram estimator `Hg` (Kuo et al. §4.2, after Hay et al. §3).
//!
//! **Measurement.** `Hg` is the list of the `G` group sizes in ascending order, with
//! sizes above `K` top-coded to `K`. Each of the `G` values gets independent discrete
//! Laplace noise with scale `1/ε`: moving one entity changes one group's size by one,
//! which changes the sorted list in exactly one position by one (the last position
//! holding the old size when it grows, the first when it shrinks), or not at all at
//! the top-coding bound, so the sensitivity is 1 (Hay et al. Proposition 3). The noisy
//! values are stored as `i32` (clamped after the noise, which is post-processing):
//! `K ≤ 10^8` fits comfortably and memory is 4 bytes per group. The true list is
//! streamed from `H`'s runs and never materialised.
//!
//! **Under ρ-zCDP** each value gets discrete Gaussian noise of `σ² = 1/(2ρ)`: one
//! position changes by one, so `Δ₂ = 1` and the vector is ρ-zCDP (Canonne, Kamath and
//! Steinke 2020, Theorem 14).
//!
//! **Post-processing.** Isotonic regression (L2 by default, as in the paper, whose `G`
//! reaches hundreds of millions; L1 on request) with bounds `[0, K]`, rounding to the
//! nearest integer (monotone), and counting back to `Ĥ`. `O(G)` for L2,
//! `O(G log G)` for L1.
//!
//! # Formula
//! Variance of each group in an isotonic block of `S` values (Kuo et al. §5.1.1):
//! `Var / S`, with `Var` the exact variance of one value's noise
//! ([`super::noise_variance`]); the paper's `2/(S·ε²)` is this with `Var ≈ 2/ε²`, and
//! it uses the same estimate for L1 blocks (footnote 9). Blocks are the maximal runs
//! of equal fitted value before rounding, so two blocks can round to the same size:
//! `runs` then holds that size twice, with each block's own variance.
//!
//! # Citations
//! Kuo et al., PVLDB 2018, §4.2 and §5.1.1; Hay et al., PVLDB 2010, §3.

use super::{GroupRun, IsotonicFit, NodeEstimate, NodeFit, StepRun, isotonic, noise_variance};
use crate::histogram::{Count, CountOfCounts, HistRef, Size};
use crate::noise::{Noise, NoiseError, NoiseStream, Sensitivity};
use crate::privacy::Loss;

/// The sensitivity of the sorted group sizes (Hay et al. Proposition 3).
pub const SENSITIVITY: Sensitivity = Sensitivity::ONE;

/// The `G` sorted group sizes, top-coded to `K`: the vector [`measure`] adds noise to.
/// Confidential. It is the expansion of [`true_runs`].
pub fn true_vector<'a>(
    truth: impl Into<HistRef<'a>>,
    groups: Count,
    k: Size,
) -> impl Iterator<Item = Size> + 'a {
    let truth = truth.into();
    true_runs(truth, groups, k).flat_map(|(size, count)| std::iter::repeat_n(size, count as usize))
}

/// The `G` sorted top-coded group sizes as `(size, multiplicity)` runs (sizes
/// nondecreasing; top-coding can repeat the size `K`). Confidential.
///
/// Their total multiplicity is the public `groups`. `truth` always holds exactly that
/// many groups in a loaded dataset; should it not, the list is cut (dropping the
/// largest sizes) or padded with zeros at the front, so that the shape of the
/// measurement depends on public values only.
pub fn true_runs<'a>(
    truth: impl Into<HistRef<'a>>,
    groups: Count,
    k: Size,
) -> impl Iterator<Item = (Size, Count)> + 'a {
    let truth = truth.into();
    let padding = groups.saturating_sub(truth.groups());
    let mut left = groups;
    std::iter::once((0, padding))
        .chain(
            truth
                .pairs()
                .iter()
                .map(move |&(size, count)| (size.min(k), count)),
        )
        .map(move |(size, count)| {
            let take = count.min(left);
            left -= take;
            (size, take)
        })
        .filter(|&(_, count)| count > 0)
}

/// `Hg` plus independent discrete Laplace noise with scale `1/ε`, each value clamped to
/// the `i32` range.
pub fn measure<'a>(
    truth: impl Into<HistRef<'a>>,
    groups: Count,
    k: Size,
    loss: &Loss,
    rng: &mut NoiseStream,
) -> Result<Vec<i32>, NoiseError> {
    let truth = truth.into();
    let noise = Noise::for_loss(loss, SENSITIVITY)?;
    let mut noisy = Vec::with_capacity(groups as usize);
    for (size, count) in true_runs(truth, groups, k) {
        let size = i64::from(size);
        noisy.extend((0..count).map(|_| {
            let value = size.saturating_add(noise.sample(rng));
            value.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
        }));
    }
    Ok(noisy)
}

/// `Ĥ` and `Ĥg` with variances from the noisy sorted sizes. Post-processing only.
///
/// The estimate has `noisy.len()` groups, which is `groups` for every measurement made
/// by [`measure`].
pub fn estimate(
    noisy: &[i32],
    groups: Count,
    k: Size,
    loss: &Loss,
    fit: IsotonicFit,
) -> NodeEstimate {
    estimate_keeping(noisy, groups, k, loss, fit, true)
}

/// [`estimate`], keeping the noisy sizes in the fit only if `keep_raw`.
pub(super) fn estimate_keeping(
    noisy: &[i32],
    groups: Count,
    k: Size,
    loss: &Loss,
    fit: IsotonicFit,
    keep_raw: bool,
) -> NodeEstimate {
    debug_assert_eq!(noisy.len() as Count, groups, "one noisy value per group");
    let var = noise_variance(SENSITIVITY, loss);
    let blocks = isotonic::fit(fit, noisy, 0, i64::from(k));
    let runs: Vec<GroupRun> = blocks
        .iter()
        .map(|b| GroupRun {
            // Within [0, K] after clipping and rounding.
            size: b.rounded() as Size,
            count: b.len as Count,
            variance: var / b.len as f64,
        })
        .collect();
    let spreads: Vec<f32> = blocks
        .iter()
        .map(|b| super::pooled_spread(&noisy[b.start..b.end()], var) as f32)
        .collect();
    let mut pairs: Vec<(Size, Count)> = Vec::new();
    for run in &runs {
        match pairs.last_mut() {
            Some(last) if last.0 == run.size => last.1 += run.count,
            _ => pairs.push((run.size, run.count)),
        }
    }
    let histogram = CountOfCounts::from_pairs(pairs).expect("rounded block values are sorted");
    // For the consistency step: every group is listed, located by its block.
    let mut steps: Vec<StepRun> = Vec::with_capacity(runs.len());
    for (r, &spread) in runs.iter().zip(&spreads) {
        let mut left = r.count;
        while left > 0 {
            let count = left.min(Count::from(u32::MAX)) as u32;
            steps.push(StepRun {
                size: r.size,
                count,
                spread,
            });
            left -= Count::from(count);
        }
    }
    NodeEstimate {
        histogram,
        runs,
        fit: Some(NodeFit {
            head: Vec::new(),
            from: 0,
            steps,
            saturated: false,
            noise_variance: var,
            raw: if keep_raw {
                let mut raw: Vec<i64> = noisy.iter().map(|&v| i64::from(v)).collect();
                raw.sort_unstable();
                raw
            } else {
                Vec::new()
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eps(s: &str) -> Loss {
        Loss::Pure(crate::privacy::Epsilon::parse(s).unwrap())
    }

    #[test]
    fn true_vector_is_sorted_and_top_coded() {
        let h = CountOfCounts::from_pairs([(0, 1), (2, 3), (9, 2)]).unwrap();
        let v: Vec<Size> = true_vector(&h, 6, 4).collect();
        assert_eq!(v, [0, 2, 2, 2, 4, 4]);
        assert_eq!(
            true_runs(&h, 6, 4).collect::<Vec<_>>(),
            [(0, 1), (2, 3), (4, 2)]
        );
        assert_eq!(
            true_runs(&h, 6, 2).collect::<Vec<_>>(),
            [(0, 1), (2, 3), (2, 2)]
        );
        // A mismatched G keeps the public length.
        assert_eq!(
            true_vector(&h, 8, 4).collect::<Vec<_>>(),
            [0, 0, 0, 2, 2, 2, 4, 4]
        );
        assert_eq!(true_vector(&h, 3, 4).collect::<Vec<_>>(), [0, 2, 2]);
        assert_eq!(true_vector(&CountOfCounts::new(), 0, 4).count(), 0);
    }

    #[test]
    fn worked_example() {
        // Noisy sorted sizes [2, 0, 1, 5, 3, 4, 30] with K = 10. L2 PAV: [2, 0, 1] pool
        // to 1, [5, 3, 4] to 4, 30 clips to 10.
        let var = noise_variance(Sensitivity::ONE, &eps("1"));
        let est = estimate(&[2, 0, 1, 5, 3, 4, 30], 7, 10, &eps("1"), IsotonicFit::L2);
        assert_eq!(
            est.histogram,
            CountOfCounts::from_pairs([(1, 3), (4, 3), (10, 1)]).unwrap()
        );
        assert_eq!(
            est.runs,
            vec![
                GroupRun {
                    size: 1,
                    count: 3,
                    variance: var / 3.0
                },
                GroupRun {
                    size: 4,
                    count: 3,
                    variance: var / 3.0
                },
                GroupRun {
                    size: 10,
                    count: 1,
                    variance: var
                },
            ]
        );
        // L1: [2, 0, 1] costs 2 at [0, 0, 1] as at [1, 1, 1], and [5, 3, 4] costs 2 at
        // [3, 3, 4] as at [4, 4, 4]; the centered fit takes the midpoints [0.5, 0.5, 1]
        // and [3.5, 3.5, 4], which round (halves up) to [1, 1, 1] and [4, 4, 4].
        let est = estimate(&[2, 0, 1, 5, 3, 4, 30], 7, 10, &eps("1"), IsotonicFit::L1);
        assert_eq!(
            est.histogram,
            CountOfCounts::from_pairs([(1, 3), (4, 3), (10, 1)]).unwrap()
        );
        assert_eq!(
            est.runs[0],
            GroupRun {
                size: 1,
                count: 2,
                variance: var / 2.0
            }
        );
    }

    #[test]
    fn blocks_rounding_to_one_size_keep_their_variances() {
        // L2 blocks 1.5 (two values) and 2 (one value) both round to 2.
        let var = noise_variance(Sensitivity::ONE, &eps("1"));
        let est = estimate(&[2, 1, 2], 3, 5, &eps("1"), IsotonicFit::L2);
        assert_eq!(est.histogram, CountOfCounts::from_pairs([(2, 3)]).unwrap());
        assert_eq!(est.runs.len(), 2);
        assert_eq!(
            est.runs[0],
            GroupRun {
                size: 2,
                count: 2,
                variance: var / 2.0
            }
        );
        assert_eq!(
            est.runs[1],
            GroupRun {
                size: 2,
                count: 1,
                variance: var
            }
        );
    }

    #[test]
    fn negative_values_clip_to_zero() {
        let est = estimate(&[-5, -9, -1], 3, 5, &eps("1"), IsotonicFit::L2);
        assert_eq!(est.histogram, CountOfCounts::from_pairs([(0, 3)]).unwrap());
        assert_eq!(est.runs.len(), 1);
        let est = estimate(&[], 0, 5, &eps("1"), IsotonicFit::L2);
        assert!(est.histogram.is_empty() && est.runs.is_empty());
    }
}
