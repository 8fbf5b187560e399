//! Exact binomial sampling for large `n`, so that counts are drawn per (region, size)
//! and never per group.
//!
//! `rand` 0.10 ships no distributions. This is the classic pair used by numpy and
//! others: sequential inversion when the mean is small and Kachitvichyanukul and
//! Schmeiser's BTPE acceptance–rejection otherwise. Both are exact up to
//! floating-point rounding (no normal approximation), in O(1) expected time for BTPE
//! and O(mean) ≤ O(30) for inversion. Logarithms come from the `libm` crate (not the
//! platform's), so the draws are identical on every platform.

use super::random::GenRng;
use libm::{exp, log as ln};

/// Below this mean `n·min(p, 1−p)`, inversion; above, BTPE (the threshold BTPE's
/// authors and numpy use).
const INVERSION_MAX_MEAN: f64 = 30.0;

/// One draw from Binomial(`n`, `p`). `p` is clamped to `[0, 1]`; NaN counts as 0.
///
/// # Citations
/// V. Kachitvichyanukul and B. W. Schmeiser, "Binomial random variate generation",
/// Communications of the ACM 31(2):216–222, 1988 (algorithm BTPE). Inversion: L.
/// Devroye, *Non-Uniform Random Variate Generation*, Springer 1986, §X.4.
pub fn binomial(rng: &mut GenRng, n: u64, p: f64) -> u64 {
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
    if n == 0 || p == 0.0 {
        return 0;
    }
    if p == 1.0 {
        return n;
    }
    // Draw the rarer outcome so that the small-mean branch is used whenever it can be.
    let (r, flip) = if p <= 0.5 {
        (p, false)
    } else {
        (1.0 - p, true)
    };
    let y = if n as f64 * r <= INVERSION_MAX_MEAN {
        inversion(rng, n, r)
    } else {
        btpe(rng, n, r)
    };
    if flip { n - y } else { y }
}

/// Sequential search of the CDF from 0 (`p ≤ 0.5`, `n·p ≤ 30`).
///
/// # Formula
/// `P(0) = qⁿ`, `P(x) = P(x−1)·(n−x+1)/x·p/q`. A uniform `u` is compared against the
/// running CDF; if rounding leaves `u` above the computed total, the search restarts
/// with a fresh `u` after a bound far in the tail (`np + 10·√(npq + 1)`), as in numpy.
fn inversion(rng: &mut GenRng, n: u64, p: f64) -> u64 {
    let q = 1.0 - p;
    let nf = n as f64;
    let q_n = exp(nf * ln(q));
    let mean = nf * p;
    let bound = (mean + 10.0 * (mean * q + 1.0).sqrt()).min(nf) as u64;
    'restart: loop {
        let mut u = rng.unit();
        let mut x = 0u64;
        let mut px = q_n;
        while u > px {
            x += 1;
            if x > bound {
                continue 'restart;
            }
            u -= px;
            px *= ((n - x + 1) as f64 * p) / (x as f64 * q);
        }
        return x;
    }
}

/// BTPE ("Binomial, Triangle, Parallelogram, Exponential") for `p ≤ 0.5`, `n·p > 30`:
/// a hat of a triangle, two parallelograms and two exponential tails around the mode,
/// with a squeeze and, when needed, the exact ratio `f(y)/f(M)` (recursively for
/// `|y − M| ≤ 20`, otherwise by Stirling's series).
///
/// # Formula
/// Kachitvichyanukul & Schmeiser (1988), steps 0–6, with the Stirling correction terms
/// `1/(12x) − 1/(360x³) + 1/(1260x⁵) − 1/(1680x⁷) + 1/(1188x⁹)` written over the common
/// denominator 166320.
fn btpe(rng: &mut GenRng, n: u64, p: f64) -> u64 {
    let nf = n as f64;
    let q = 1.0 - p;
    let npq = nf * p * q;
    // Step 0: set-up.
    let fm = nf * p + p;
    let m = fm.floor();
    let p1 = (2.195 * npq.sqrt() - 4.6 * q).floor() + 0.5;
    let xm = m + 0.5;
    let xl = xm - p1;
    let xr = xm + p1;
    let c = 0.134 + 20.5 / (15.3 + m);
    let a = (fm - xl) / (fm - xl * p);
    let lambda_l = a * (1.0 + 0.5 * a);
    let a = (xr - fm) / (xr * q);
    let lambda_r = a * (1.0 + 0.5 * a);
    let p2 = p1 * (1.0 + 2.0 * c);
    let p3 = p2 + c / lambda_l;
    let p4 = p3 + c / lambda_r;

    loop {
        // Step 1: the triangle, accepted at once.
        let u = rng.unit() * p4;
        let mut v = rng.unit();
        if u <= p1 {
            return (xm - p1 * v + u).floor() as u64;
        }
        let y: f64;
        if u <= p2 {
            // Step 2: the parallelograms.
            let x = xl + (u - p1) / c;
            v = v * c + 1.0 - (m - x + 0.5).abs() / p1;
            if v > 1.0 {
                continue;
            }
            y = x.floor();
        } else if u <= p3 {
            // Step 3: left exponential tail.
            if v == 0.0 {
                continue;
            }
            y = (xl + ln(v) / lambda_l).floor();
            if y < 0.0 {
                continue;
            }
            v *= (u - p2) * lambda_l;
        } else {
            // Step 4: right exponential tail.
            if v == 0.0 {
                continue;
            }
            y = (xr - ln(v) / lambda_r).floor();
            if y > nf {
                continue;
            }
            v *= (u - p3) * lambda_r;
        }

        // Step 5: accept y with probability f(y)/f(M) relative to the hat.
        let k = (y - m).abs();
        if k <= 20.0 || k >= npq / 2.0 - 1.0 {
            // Step 5.1: the ratio by its recursion.
            let s = p / q;
            let a = s * (nf + 1.0);
            let mut f = 1.0;
            if m < y {
                let mut i = m + 1.0;
                while i <= y {
                    f *= a / i - s;
                    i += 1.0;
                }
            } else if m > y {
                let mut i = y + 1.0;
                while i <= m {
                    f /= a / i - s;
                    i += 1.0;
                }
            }
            if v <= f {
                return y as u64;
            }
            continue;
        }
        // Step 5.2: squeeze on ln v.
        let rho = (k / npq) * ((k * (k / 3.0 + 0.625) + 1.0 / 6.0) / npq + 0.5);
        let t = -k * k / (2.0 * npq);
        let big_a = ln(v);
        if big_a < t - rho {
            return y as u64;
        }
        if big_a > t + rho {
            continue;
        }
        // Step 5.3: the exact bound with Stirling's series.
        let x1 = y + 1.0;
        let f1 = m + 1.0;
        let z = nf + 1.0 - m;
        let w = nf - y + 1.0;
        let bound = xm * ln(f1 / x1)
            + (nf - m + 0.5) * ln(z / w)
            + (y - m) * ln(w * p / (x1 * q))
            + stirling_tail(f1)
            + stirling_tail(z)
            + stirling_tail(x1)
            + stirling_tail(w);
        if big_a <= bound {
            return y as u64;
        }
    }
}

/// `1/(12x) − 1/(360x³) + 1/(1260x⁵) − 1/(1680x⁷) + 1/(1188x⁹)`: the error of
/// Stirling's approximation to `ln x!`.
fn stirling_tail(x: f64) -> f64 {
    let x2 = x * x;
    (13860.0 - (462.0 - (132.0 - (99.0 - 140.0 / x2) / x2) / x2) / x2) / x / 166_320.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact Binomial(n, p) probabilities over `lo..=hi` (covering all but a
    /// negligible mass), by the ratio recursion from the mode.
    fn pmf(n: u64, p: f64, lo: u64, hi: u64) -> Vec<f64> {
        let mode = ((n as f64 + 1.0) * p).floor().min(n as f64) as u64;
        let ratio = |x: u64| (n - x) as f64 / (x + 1) as f64 * p / (1.0 - p); // f(x+1)/f(x)
        let mut f = vec![0.0; (hi - lo + 1) as usize];
        f[(mode - lo) as usize] = 1.0;
        for x in mode..hi {
            f[(x + 1 - lo) as usize] = f[(x - lo) as usize] * ratio(x);
        }
        for x in (lo..mode).rev() {
            f[(x - lo) as usize] = f[(x + 1 - lo) as usize] / ratio(x);
        }
        let total: f64 = f.iter().sum();
        f.iter().map(|v| v / total).collect()
    }

    /// Pearson's chi-square of `draws` samples against the exact pmf, cells merged
    /// until each expects at least 20. Returns (statistic, degrees of freedom).
    fn chi_square(n: u64, p: f64, draws: usize, seed: u64) -> (f64, usize) {
        let mean = n as f64 * p;
        let sd = (mean * (1.0 - p)).sqrt();
        let lo = (mean - 12.0 * sd - 5.0).max(0.0) as u64;
        let hi = ((mean + 12.0 * sd + 5.0) as u64).min(n);
        let f = pmf(n, p, lo, hi);
        let mut observed = vec![0u64; f.len()];
        let mut rng = GenRng::new(seed, 0);
        for _ in 0..draws {
            let x = binomial(&mut rng, n, p);
            assert!(x <= n);
            assert!((lo..=hi).contains(&x), "draw {x} outside ±12 sd of {mean}");
            observed[(x - lo) as usize] += 1;
        }
        let mut cells: Vec<(f64, f64)> = Vec::new();
        let (mut e, mut o) = (0.0, 0.0);
        for (fi, &oi) in f.iter().zip(&observed) {
            e += fi * draws as f64;
            o += oi as f64;
            if e >= 20.0 {
                cells.push((e, o));
                (e, o) = (0.0, 0.0);
            }
        }
        // The remainder (expecting < 20) joins the last cell.
        if let Some(last) = cells.last_mut() {
            last.0 += e;
            last.1 += o;
        }
        let chi2 = cells.iter().map(|&(e, o)| (o - e) * (o - e) / e).sum();
        (chi2, cells.len().saturating_sub(1))
    }

    /// The 0.9999 quantile of chi-square with `df` degrees of freedom (Wilson–Hilferty,
    /// accurate to a fraction of a percent for df ≥ 10): a correct sampler fails a
    /// check for one seed in 10,000. Seeds are fixed, so the tests are deterministic.
    fn critical(df: usize) -> f64 {
        let k = df as f64;
        let z = 3.719; // standard normal 0.9999 quantile
        k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
    }

    #[test]
    fn matches_the_exact_distribution() {
        // Inversion, BTPE with the recursion, BTPE with the Stirling bound, p > 1/2.
        for (i, &(n, p)) in [
            (10u64, 0.3),
            (200, 0.1),
            (1_000, 0.05),
            (100, 0.4),
            (5_000, 0.02),
            (1_000_000, 0.3),
            (3_000_000, 0.001),
            (500, 0.93),
            (40, 0.5),
        ]
        .iter()
        .enumerate()
        {
            let (chi2, df) = chi_square(n, p, 40_000, 11 + i as u64);
            assert!(df >= 3, "n={n} p={p}: only {df} degrees of freedom");
            let crit = if df >= 10 { critical(df) } else { 30.0 };
            assert!(
                chi2 < crit,
                "n={n} p={p}: chi2 {chi2:.1} ≥ {crit:.1} (df {df})"
            );
        }
    }

    #[test]
    fn mean_and_variance_for_a_huge_n() {
        let (n, p) = (3_000_000u64, 0.37);
        let mut rng = GenRng::new(2, 0);
        let draws: Vec<f64> = (0..20_000)
            .map(|_| binomial(&mut rng, n, p) as f64)
            .collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / draws.len() as f64;
        let (m0, v0) = (n as f64 * p, n as f64 * p * (1.0 - p));
        // Standard error of the mean is sqrt(v0/20000) ≈ 5.9; of the variance ≈ 1% of v0.
        assert!(
            (mean - m0).abs() < 5.0 * (v0 / 20_000.0).sqrt(),
            "{mean} vs {m0}"
        );
        assert!((var / v0 - 1.0).abs() < 0.05, "{var} vs {v0}");
    }

    #[test]
    fn edge_cases() {
        let mut rng = GenRng::new(1, 0);
        assert_eq!(binomial(&mut rng, 0, 0.5), 0);
        assert_eq!(binomial(&mut rng, 10, 0.0), 0);
        assert_eq!(binomial(&mut rng, 10, 1.0), 10);
        assert_eq!(binomial(&mut rng, 10, -3.0), 0);
        assert_eq!(binomial(&mut rng, 10, 7.0), 10);
        assert_eq!(binomial(&mut rng, 10, f64::NAN), 0);
        assert_eq!(binomial(&mut rng, u64::MAX / 4, 1e-300), 0);
        for _ in 0..1000 {
            assert!(binomial(&mut rng, 3, 0.999_999) <= 3);
            assert!(binomial(&mut rng, 100_000, 0.5) <= 100_000);
        }
    }
}
