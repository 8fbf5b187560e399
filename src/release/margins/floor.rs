//! The measurement floor: where a class of cells holds too few bootstrap errors to trust
//! its own quantiles, its interval is at least what the level's own measurement alone
//! would give.
//!
//! A class with fewer than [`super::pool::MIN_SAMPLES`] errors borrows a coarser class's
//! quantiles. Where the coarser classes are made of other cells than its own (a nation's
//! head, millions of groups per size, borrowing from its tail of 0s and 1s when a
//! census-scale release affords one replicate), the borrowed quantiles say `± 1` for a
//! count whose noise alone is `± 17`. The level's measurement is public (the plan's
//! method and ε) and its error distribution is known exactly: in the head of `hc` a
//! released count is the difference of two noisy cumulative counts, whose error is the
//! difference of two independent discrete Laplace variables; with `naive` one. coco's
//! estimate is never worse than its own measurement (isotonic regression and the
//! consistency step only merge it with more information), so that quantile bounds the
//! error of a cell whose count is far enough from 0 that the monotone fit does not pool
//! it with its neighbours.
//!
//! Where a region's children measure the same cells, the consistency step merges their
//! sum with the region's own measurement, weighted by their variances: a nation of 52
//! states gains little (its own noise is 52 times smaller than their sum's), a chain of
//! regions with one child each gains up to the number of levels below. The floor is
//! scaled by that merge, `√(v_merged / v_own)`, with `v_merged` the variance of the
//! region's own measurement merged with its children's sum, recursively from the leaves
//! (the median over the level's regions). Post-processing: only the plan, the hierarchy,
//! `G` and the confidence are read.

use crate::data::{LevelId, PublicData};
use crate::estimate::{Method, noise_variance};
use crate::histogram::{Count, Size};
use crate::privacy::Loss;
use crate::release::plan::ReleasePlan;

use super::Confidence;
use super::pool::{self, Class, CountKey, Gap};

/// One level's floor: cells of sizes below `head_end` whose class borrowed, and whose
/// released count is at least `min_count`, get `± q` at least.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Floor {
    /// The first size not measured as a head cell.
    pub head_end: Size,
    /// The confidence quantile of the absolute error of one head cell's raw measurement.
    pub q: i64,
    /// The least released count the floor applies to: 0 for the head of `hc` with a tail
    /// (sizes below the tail's boundary, where the groups are; a released 0 only next to
    /// a released size, [`applies`]); `q` for plain `hc` and
    /// `naive`, whose sizes run to `K`: far from the groups the monotone fit flattens
    /// the noise, and a released 0 or 1 there is far more certain than the raw cells.
    pub min_count: Count,
}

/// Per level of `plan` (root first), its floor; `None` for a level measured with `hg`,
/// whose cells' errors have no simple form, and for a level left unmeasured, which has
/// no raw measurement to bound (its regions are their children's sums; the bootstrap
/// alone gives their margins).
pub fn floors(
    plan: &ReleasePlan,
    public: PublicData<'_>,
    k: Size,
    confidence: Confidence,
) -> Vec<Option<Floor>> {
    let h = public.hierarchy;
    let merged = merged_share(plan, public);
    h.levels()
        .map(|l| {
            let level = plan.level(l);
            let (head_end, differences, whole) = match level.method() {
                Method::Hc => (k.saturating_add(1), true, true),
                Method::HcTail(t) => (t.above.min(k.saturating_add(1)), true, false),
                Method::Naive => (k.saturating_add(1), false, true),
                Method::Hg => return None,
            };
            let p = confidence.level();
            let loss = level.loss()?;
            let raw = match loss {
                Loss::Pure(epsilon) => {
                    let rate = epsilon.to_f64() / f64::from(level.method().sensitivity());
                    if differences {
                        difference_quantile(rate, p)
                    } else {
                        laplace_quantile(rate, p)
                    }
                }
                Loss::Zcdp(_) => {
                    let var = noise_variance(level.method().sensitivity_norms(), loss);
                    gaussian_quantile(if differences { 2.0 * var } else { var }, p)
                }
            };
            let q = (raw as f64 * merged[l.0].sqrt()).ceil() as i64;
            let min_count = if whole { q.max(1) as Count } else { 0 };
            Some(Floor {
                head_end,
                q,
                min_count,
            })
        })
        .collect()
}

/// The variance of one head cell's raw measurement at a level, or `None` if the level's
/// cells are not measured one by one (`hg`) or not measured at all.
fn own_variance(plan: &ReleasePlan, level: LevelId) -> Option<f64> {
    let level = plan.level(level);
    let var = noise_variance(level.method().sensitivity_norms(), level.loss()?);
    match level.method() {
        Method::Hc | Method::HcTail(_) => Some(2.0 * var),
        Method::Naive => Some(var),
        Method::Hg => None,
    }
}

/// Per level, the median over its regions (with groups) of `v_merged / v_own`: a head
/// cell's variance after the region's own measurement is merged with its children's
/// sum (each merged likewise, recursively), over its own measurement's (1 where the
/// level has none).
fn merged_share(plan: &ReleasePlan, public: PublicData<'_>) -> Vec<f64> {
    let h = public.hierarchy;
    let own: Vec<Option<f64>> = h.levels().map(|l| own_variance(plan, l)).collect();
    let mut merged = vec![0f32; h.len()];
    for id in h.bottom_up() {
        let node = h.node(id);
        if public.groups(id) == 0 {
            continue;
        }
        let children: f64 = node.children().map(|c| f64::from(merged[c.index()])).sum();
        // A level measured with `hg` tells nothing cell by cell: infinite variance.
        let v = match (own[node.level.0], node.is_leaf()) {
            (Some(v), true) => v,
            (None, true) => f64::INFINITY,
            (Some(v), false) if children > 0.0 => 1.0 / (1.0 / v + 1.0 / children),
            (Some(v), false) => v.min(children),
            (None, false) => children,
        };
        merged[id.index()] = v as f32;
    }
    h.levels()
        .map(|l| {
            let Some(v) = own[l.0].filter(|v| *v > 0.0) else {
                return 1.0;
            };
            let mut shares: Vec<f32> = h
                .level_nodes(l)
                .filter(|&id| public.groups(id) > 0)
                .map(|id| merged[id.index()] / v as f32)
                .collect();
            if shares.is_empty() {
                return 1.0;
            }
            let mid = shares.len() / 2;
            let (_, m, _) = shares.select_nth_unstable_by(mid, f32::total_cmp);
            f64::from(*m).clamp(0.0, 1.0)
        })
        .collect()
}

/// The smallest `q` with `P(|X| ≤ q) ≥ p` for `X` discrete Laplace with parameter
/// `a = e^(−rate)`: `P(X = d) = c · a^|d|` with `c = (1 − a)/(1 + a)`, so
/// `P(|X| > q) = 2c · a^(q+1) / (1 − a)`.
pub fn laplace_quantile(rate: f64, p: f64) -> i64 {
    let (a, one_minus_a) = ((-rate).exp(), -(-rate).exp_m1());
    let c = one_minus_a / (1.0 + a);
    smallest_q(p, |q| 2.0 * c * (-rate * (q + 1.0)).exp() / one_minus_a)
}

/// The smallest `q` with `P(|X − Y| ≤ q) ≥ p` for `X`, `Y` independent discrete Laplace
/// with parameter `a = e^(−rate)`. Summing over the pairs,
/// `P(X − Y = d) = c² · a^|d| · (|d| + 1 + e)` with `e = 2a²/(1 − a²)`, so
/// `P(|X − Y| > q) = 2c² · a^(q+1) · [((q+1)(1 − a) + a)/(1 − a)² + (1 + e)/(1 − a)]`.
pub fn difference_quantile(rate: f64, p: f64) -> i64 {
    let (a, one_minus_a) = ((-rate).exp(), -(-rate).exp_m1());
    let c = one_minus_a / (1.0 + a);
    let e = 2.0 * a * a / (one_minus_a * (1.0 + a));
    smallest_q(p, |q| {
        let tail =
            ((q + 1.0) * one_minus_a + a) / (one_minus_a * one_minus_a) + (1.0 + e) / one_minus_a;
        2.0 * c * c * (-rate * (q + 1.0)).exp() * tail
    })
}

/// The smallest `q` with `P(|X| ≤ q) ≥ p` for `X` a discrete Gaussian (or a difference of
/// two) of variance `variance`, by the normal approximation with a continuity
/// correction: `P(|X| > q) ≈ erfc((q + ½)/√(2·variance))`, the variance being the
/// discrete Gaussian's own (below `σ²` for small `σ`). The discrete Gaussian's tails are
/// sub-Gaussian with parameter `σ` (Canonne, Kamath and Steinke 2020, Proposition 19),
/// so the approximation does not err narrow by more than its continuity correction.
pub fn gaussian_quantile(variance: f64, p: f64) -> i64 {
    let scale = (2.0 * variance.max(f64::MIN_POSITIVE)).sqrt();
    smallest_q(p, |q| libm::erfc((q + 0.5) / scale))
}

/// The smallest `q ≥ 0` whose tail `P(|·| > q)` (decreasing in `q`) is at most `1 − p`,
/// by bisection (up to 2⁵²: a rate that small has no use).
fn smallest_q(p: f64, tail: impl Fn(f64) -> f64) -> i64 {
    let target = 1.0 - p;
    if tail(0.0) <= target {
        return 0;
    }
    let (mut lo, mut hi) = (0u64, 1u64);
    while tail(hi as f64) > target && hi < 1 << 52 {
        lo = hi;
        hi *= 2;
    }
    // tail(lo) > target ≥ tail(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if tail(mid as f64) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi as i64
}

/// Whether the cells of class `c` get `floor`'s width (once they borrow): in the head,
/// a released count of at least the floor's `min_count`, or, where that is 0, a released
/// 0 next to a released size (where the monotone fit pools a count into its
/// neighbours'; farther 0s are the flat ends of the distribution, and displaced groups
/// are the reach's, [`super::reach`]).
pub fn applies(floor: &Floor, c: Class) -> bool {
    if pool::size_key_max(c.size) >= floor.head_end {
        return false;
    }
    match c.count {
        CountKey::Zero(gap) => floor.min_count == 0 && gap == Gap::One,
        CountKey::Released(b) => pool::count_bucket_min(b) >= floor.min_count.max(1),
        // Coarser classes have no floor of their own.
        CountKey::Merged(_) | CountKey::AnyReleased | CountKey::AnyZero => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::{DiscreteLaplace, NoiseSource, Purpose};
    use crate::privacy::Epsilon;

    /// The merge follows the hierarchy: a chain of one child each gains the number of
    /// levels below; a region of two leaves, a third; a level with `hg` is no help.
    #[test]
    fn the_floor_shrinks_with_what_the_children_add() {
        use crate::data::Hierarchy;
        use crate::release::plan::MaxSize;
        let chain = Hierarchy::from_leaf_paths(
            vec!["a".into(), "b".into(), "c".into()],
            &[vec!["A".into(), "B".into(), "C".into()]],
        )
        .unwrap();
        let one = Epsilon::parse("1").unwrap();
        let plan = ReleasePlan::uniform(&chain, &one, Method::Hc, MaxSize::Fixed(10)).unwrap();
        let groups = vec![5, 5, 5];
        let public = PublicData {
            hierarchy: &chain,
            groups: &groups,
        };
        let share = merged_share(&plan, public);
        for (got, want) in share.iter().zip([1.0 / 3.0, 0.5, 1.0]) {
            assert!((got - want).abs() < 1e-6, "{share:?}");
        }
        let by_level = floors(&plan, public, 10, Confidence::default());
        let raw = difference_quantile(1.0 / 3.0, 0.9);
        assert_eq!(by_level[2].unwrap().q, raw);
        assert!(by_level[0].unwrap().q < by_level[1].unwrap().q);
        assert_eq!(
            by_level[0].unwrap().q,
            (raw as f64 / 3f64.sqrt()).ceil() as i64
        );

        let two = Hierarchy::from_leaf_paths(
            vec!["a".into(), "b".into()],
            &[vec!["A".into(), "x".into()], vec!["A".into(), "y".into()]],
        )
        .unwrap();
        let groups = vec![4, 2, 2];
        let public = PublicData {
            hierarchy: &two,
            groups: &groups,
        };
        let mut plan = ReleasePlan::uniform(&two, &one, Method::Hc, MaxSize::Fixed(10)).unwrap();
        assert!((merged_share(&plan, public)[0] - 2.0 / 3.0).abs() < 1e-6);
        plan.set_method(crate::data::LevelId(1), Method::Hg)
            .unwrap();
        assert_eq!(merged_share(&plan, public)[0], 1.0);
        assert!(floors(&plan, public, 10, Confidence::default())[1].is_none());
    }

    /// The closed-form tails give the quantiles a brute-force sum of the pmfs gives.
    #[test]
    fn quantiles_agree_with_summing_the_pmfs() {
        for rate in [0.005, 0.05, 0.2, 1.0, 3.0] {
            let a: f64 = (-rate as f64).exp();
            let c = (1.0 - a) / (1.0 + a);
            let extra = 2.0 * a * a / (1.0 - a * a);
            for p in [0.5, 0.8, 0.9, 0.95, 0.99] {
                let (mut one, mut q1) = (c, 0i64);
                while one < p {
                    q1 += 1;
                    one += 2.0 * c * a.powi(q1 as i32);
                }
                let (mut two, mut q2) = (c * c * (1.0 + extra), 0i64);
                while two < p {
                    q2 += 1;
                    two += 2.0 * c * c * a.powi(q2 as i32) * (q2 as f64 + 1.0 + extra);
                }
                assert_eq!(laplace_quantile(rate, p), q1, "{rate} {p}");
                assert_eq!(difference_quantile(rate, p), q2, "{rate} {p}");
            }
        }
        // A tiny ε ends quickly.
        assert!(difference_quantile(1e-12, 0.9) > 1_000_000_000_000);
    }

    #[test]
    fn the_pmfs_sum_to_one() {
        for rate in [0.01, 0.2, 1.0, 3.0] {
            let a: f64 = (-rate as f64).exp();
            let c = (1.0 - a) / (1.0 + a);
            let extra = 2.0 * a * a / (1.0 - a * a);
            let (mut one, mut two) = (c, c * c * (1.0 + extra));
            for d in 1..200_000i64 {
                one += 2.0 * c * a.powi(d as i32);
                two += 2.0 * c * c * a.powi(d as i32) * (d as f64 + 1.0 + extra);
            }
            assert!((one - 1.0).abs() < 1e-9, "{rate}: {one}");
            assert!((two - 1.0).abs() < 1e-9, "{rate}: {two}");
        }
    }

    /// The quantiles agree with coco's exact sampler's draws.
    /// `n` draws' `|x|` and `n` pairs' `|x − y|` of one noise, each sorted: a raw cell's
    /// error and the error of a difference of two cells.
    fn sorted_errors(n: usize, mut sample: impl FnMut() -> i64) -> (Vec<i64>, Vec<i64>) {
        let (mut single, mut diff) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            let (x, y) = (sample(), sample());
            single.push(x.abs());
            diff.push((x - y).abs());
        }
        single.sort_unstable();
        diff.sort_unstable();
        (single, diff)
    }

    #[test]
    fn gaussian_quantiles_match_the_sampler() {
        use crate::noise::{DiscreteGaussian, Sigma2};
        // σ² = 3/2 (small: the discrete Gaussian's variance is below σ² there) and 40.
        for (num, den) in [(3u32, 2u32), (40, 1)] {
            let noise = DiscreteGaussian::new(Sigma2::new(num, den).unwrap());
            let var = noise.variance();
            let mut rng = NoiseSource::seeded(9).stream(Purpose::Measure.index(0));
            let n = 200_000;
            let (single, diff) = sorted_errors(n, || noise.sample(&mut rng));
            let at = |v: &[i64], p: f64| v[(p * n as f64) as usize];
            for p in [0.5, 0.9, 0.95] {
                let (s, d) = (gaussian_quantile(var, p), gaussian_quantile(2.0 * var, p));
                assert!(
                    (s - at(&single, p)).abs() <= 1,
                    "σ² {num}/{den}, {p}: {s} vs {}",
                    at(&single, p)
                );
                assert!(
                    (d - at(&diff, p)).abs() <= 1,
                    "σ² {num}/{den}, {p}: {d} vs {}",
                    at(&diff, p)
                );
                // Never narrow: the sampled coverage at q is at least p (less the
                // sampling error, about 0.002 at n = 200,000).
                let covered = |v: &[i64], q: i64| v.partition_point(|&e| e <= q) as f64 / n as f64;
                assert!(
                    covered(&single, s) >= p - 0.005,
                    "{p}: {}",
                    covered(&single, s)
                );
                assert!(covered(&diff, d) >= p - 0.005, "{p}: {}", covered(&diff, d));
            }
        }
    }

    #[test]
    fn quantiles_match_the_sampler() {
        let eps = Epsilon::parse("1/5").unwrap();
        let noise = DiscreteLaplace::new(1, &eps).unwrap();
        let mut rng = NoiseSource::seeded(7).stream(Purpose::Measure.index(0));
        let n = 200_000;
        let (single, diff) = sorted_errors(n, || noise.sample(&mut rng));
        let at = |v: &[i64], p: f64| v[(p * n as f64) as usize];
        for p in [0.5, 0.9, 0.95] {
            let (s, d) = (laplace_quantile(0.2, p), difference_quantile(0.2, p));
            assert!(
                (s - at(&single, p)).abs() <= 1,
                "{p}: {s} vs {}",
                at(&single, p)
            );
            assert!(
                (d - at(&diff, p)).abs() <= 1,
                "{p}: {d} vs {}",
                at(&diff, p)
            );
        }
        // The single pmf is the sampler's.
        let (a, c) = (
            (-0.2f64).exp(),
            (1.0 - (-0.2f64).exp()) / (1.0 + (-0.2f64).exp()),
        );
        for d in [0i64, 1, 5, 30] {
            assert!((c * a.powi(d as i32) - noise.pmf(d)).abs() < 1e-12, "{d}");
        }
    }
}
