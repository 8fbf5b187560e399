//! The exact discrete Laplace sampler of Canonne, Kamath and Steinke, with 128-bit
//! integer arithmetic only.
//!
//! # Formula
//! `P(X = x) ∝ exp(−|x|·s/t)` for integers `x`, i.e. scale `t/s`.
//!
//! * Algorithm 1 samples `Bernoulli(exp(−γ))` for rational `γ = n/d ≥ 0` from
//!   `Bernoulli(γ/k)` coins (for `γ ≤ 1`: the first `k` with a failing coin is odd with
//!   probability `exp(−γ)`), and for `γ > 1` as `⌊γ⌋` coins of `exp(−1)` and one of
//!   `exp(−(γ − ⌊γ⌋))`.
//! * Algorithm 2 samples the discrete Laplace: `U` uniform in `[0, t)` kept with
//!   probability `exp(−U/t)`, `V` geometric with parameter `exp(−1)`, `X = U + tV` is
//!   geometric with parameter `exp(−1/t)`, `Y = ⌊X/s⌋` is geometric with parameter
//!   `exp(−s/t)`, and a random sign (rejecting `−0`) makes it two-sided.
//!
//! This is the reference: simple, exact for every scale, and not fast. The production
//! sampler ([`super::DiscreteLaplace`]) is tested against it.
//!
//! # Citations
//! Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy",
//! NeurIPS 2020, Algorithms 1 and 2.

use rand::Rng;

/// A uniform integer in `[0, n)`, exactly (rejection sampling). `n > 0`.
pub fn uniform_below<R: Rng + ?Sized>(n: u128, rng: &mut R) -> u128 {
    debug_assert!(n > 0);
    if n <= u128::from(u64::MAX) {
        let n64 = n as u64;
        // Lemire's multiply-and-reject: exact, one draw most of the time.
        let mut x = rng.next_u64();
        let mut m = u128::from(x) * u128::from(n64);
        let mut low = m as u64;
        if low < n64 {
            let threshold = n64.wrapping_neg() % n64;
            while low < threshold {
                x = rng.next_u64();
                m = u128::from(x) * u128::from(n64);
                low = m as u64;
            }
        }
        return m >> 64;
    }
    // Rejection on the smallest covering power of two.
    let bits = 128 - (n - 1).leading_zeros();
    loop {
        let x = (u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())) >> (128 - bits);
        if x < n {
            return x;
        }
    }
}

/// `Bernoulli(n/d)`, exactly. `n ≤ d`, `d > 0`.
#[inline]
fn bernoulli_ratio<R: Rng + ?Sized>(n: u128, d: u128, rng: &mut R) -> bool {
    uniform_below(d, rng) < n
}

/// `Bernoulli(exp(−n/d))`, exactly (Canonne et al. Algorithm 1). `d > 0`.
pub fn bernoulli_exp_neg<R: Rng + ?Sized>(n: u128, d: u128, rng: &mut R) -> bool {
    if n <= d {
        // γ ≤ 1: the index of the first failing Bernoulli(γ/k) coin is odd w.p. exp(−γ).
        let mut k: u128 = 1;
        loop {
            match d.checked_mul(k) {
                Some(dk) if bernoulli_ratio(n, dk, rng) => k += 1,
                Some(_) => break,
                // γ/k below 2^-128 · γ: the coin is as good as certain to fail; k is far
                // beyond anything reachable.
                None => break,
            }
        }
        return k % 2 == 1;
    }
    let whole = n / d;
    let mut i = 0;
    while i < whole {
        if !bernoulli_exp_neg(1, 1, rng) {
            return false;
        }
        i += 1;
    }
    bernoulli_exp_neg(n % d, d, rng)
}

/// A geometric sample `Y` with `P(Y = y) = (1 − p)·p^y`, `p = exp(−s/t)`, exactly (the
/// first half of Canonne et al. Algorithm 2). `s, t > 0`. Saturates at `u128::MAX`.
pub fn sample_geometric<R: Rng + ?Sized>(s: u128, t: u128, rng: &mut R) -> u128 {
    let u = loop {
        let u = uniform_below(t, rng);
        if bernoulli_exp_neg(u, t, rng) {
            break u;
        }
    };
    let mut v: u128 = 0;
    while bernoulli_exp_neg(1, 1, rng) {
        v += 1;
    }
    let x = u.saturating_add(t.saturating_mul(v));
    x / s
}

/// A discrete Laplace sample with scale `t/s`, exactly (Canonne et al. Algorithm 2).
/// `s, t > 0`. The result is clamped to the `i64` range, which a sample leaves with
/// probability below `exp(−2^63 · s/t)`.
pub fn sample_discrete_laplace<R: Rng + ?Sized>(s: u128, t: u128, rng: &mut R) -> i64 {
    loop {
        let y = sample_geometric(s, t, rng);
        let negative = rng.next_u32() & 1 == 1;
        if negative && y == 0 {
            continue;
        }
        let y = i64::try_from(y).unwrap_or(i64::MAX);
        return if negative { -y } else { y };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::ChaCha20Rng;

    #[test]
    fn uniform_below_covers_range() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            seen[uniform_below(7, &mut rng) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 800 && c < 1200), "{seen:?}");
        let big = u128::from(u64::MAX) * 3;
        for _ in 0..100 {
            assert!(uniform_below(big, &mut rng) < big);
        }
    }

    #[test]
    fn bernoulli_exp_frequencies() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        for (n, d) in [(0u128, 1u128), (1, 2), (1, 1), (5, 2), (7, 3)] {
            let p = (-(n as f64) / d as f64).exp();
            let trials = 40_000;
            let hits = (0..trials)
                .filter(|_| bernoulli_exp_neg(n, d, &mut rng))
                .count() as f64;
            let sd = (p * (1.0 - p) / trials as f64).sqrt();
            assert!(
                (hits / trials as f64 - p).abs() <= 5.0 * sd + 1e-12,
                "γ={n}/{d}"
            );
        }
    }

    #[test]
    fn geometric_frequencies() {
        let mut rng = ChaCha20Rng::seed_from_u64(4);
        // p = exp(−3/10): P(Y = 0) = 1 − p, P(Y ≥ 1) = p, E[Y] = p/(1 − p).
        let p: f64 = (-0.3f64).exp();
        let n = 40_000;
        let ys: Vec<u128> = (0..n).map(|_| sample_geometric(3, 10, &mut rng)).collect();
        let zeros = ys.iter().filter(|&&y| y == 0).count() as f64 / n as f64;
        assert!((zeros - (1.0 - p)).abs() < 5.0 * (p * (1.0 - p) / n as f64).sqrt());
        let mean = ys.iter().map(|&y| y as f64).sum::<f64>() / n as f64;
        let sd = p.sqrt() / (1.0 - p) / (n as f64).sqrt();
        assert!((mean - p / (1.0 - p)).abs() < 5.0 * sd, "{mean}");
    }

    #[test]
    fn discrete_laplace_moments() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        // scale 10/3: variance 2p/(1-p)^2 with p = exp(-3/10).
        let p: f64 = (-0.3f64).exp();
        let var = 2.0 * p / (1.0 - p).powi(2);
        let n = 100_000;
        let xs: Vec<f64> = (0..n)
            .map(|_| sample_discrete_laplace(3, 10, &mut rng) as f64)
            .collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let v = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        assert!(mean.abs() < 6.0 * (var / n as f64).sqrt());
        assert!((v / var - 1.0).abs() < 0.05);
    }
}
