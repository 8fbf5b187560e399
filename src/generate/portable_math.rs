//! `ln` and `exp` from correctly rounded operations only, so generated files are the
//! same bytes on every platform.
//!
//! `f64::ln` and `f64::exp` call the platform's libm, whose last-bit results differ
//! between C libraries. A generator that feeds them into rounding decisions could then
//! write a different sample dataset on macOS than on Linux, and the committed
//! `sample-data/` would stop matching its recipe. Addition, multiplication, division and
//! square root are correctly rounded by IEEE 754 everywhere, so functions built from
//! them alone give identical bits on every platform. The accuracy here (a few ulps) is
//! far beyond what a synthetic data generator needs.

use std::f64::consts::{LN_2, SQRT_2};

/// Natural logarithm: `ln(0) = -inf`, negative or NaN input gives NaN.
///
/// # Formula
/// `x = m·2^e` with `m ∈ [√½, √2)`; `ln x = e·ln 2 + 2·atanh(s)`, `s = (m−1)/(m+1)`,
/// `|s| ≤ 0.172`, and `atanh(s) = Σ s^(2i+1)/(2i+1)` summed until the terms vanish
/// (at most 12 terms for 1e-17 relative accuracy).
pub fn ln(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.is_infinite() {
        return f64::INFINITY;
    }
    let (mut m, mut e) = frexp(x);
    if m > SQRT_2 {
        m /= 2.0;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    // Horner form of s·(1 + s²/3 + s⁴/5 + … + s²⁴/25).
    let mut poly = 0.0;
    for i in (0..=12).rev() {
        poly = poly * s2 + 1.0 / f64::from(2 * i + 1);
    }
    f64::from(e) * LN_2 + 2.0 * s * poly
}

/// Exponential function; underflows to 0 below about −745 and overflows to +inf above
/// about 709.8.
///
/// # Formula
/// `x = k·ln 2 + t` with integer `k` and `|t| ≤ ln 2 / 2`; `e^x = 2^k · Σ t^i/i!`,
/// summed to `i = 17` (truncation below 1e-19 relative).
pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x > 709.8 {
        return f64::INFINITY;
    }
    if x < -745.2 {
        return 0.0;
    }
    let k = (x / LN_2).round();
    // Two-part ln 2 (Cody–Waite) so that `t` keeps its low bits when `k` is large.
    // fdlibm's split: LN2_HI has 32 significant bits, so k·LN2_HI is exact.
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    let t = (x - k * LN2_HI) - k * LN2_LO;
    let mut sum = 1.0;
    for i in (1..=17).rev() {
        sum = 1.0 + sum * t / f64::from(i);
    }
    scale_by_power_of_two(sum, k as i32)
}

/// `x = m·2^e` with `m ∈ [1, 2)` for positive finite normal or subnormal `x`.
fn frexp(x: f64) -> (f64, i32) {
    let mut x = x;
    let mut bias = 0;
    if x < f64::MIN_POSITIVE {
        // Subnormal: scale into the normal range first (exact).
        x *= 2f64.powi(64);
        bias = -64;
    }
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32 - 1023;
    let m = f64::from_bits((bits & !(0x7ff << 52)) | (1023 << 52));
    (m, e + bias)
}

/// `x·2^k`, exact unless the result is subnormal.
fn scale_by_power_of_two(x: f64, k: i32) -> f64 {
    let mut x = x;
    let mut k = k;
    while k > 1023 {
        x *= pow2(1023);
        k -= 1023;
    }
    while k < -1022 {
        x *= pow2(-1022);
        k += 1022;
    }
    x * pow2(k)
}

/// `2^k` for `k ∈ [−1022, 1023]`, built from its bits.
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative error against the platform libm, which is itself within 1 ulp.
    fn rel(a: f64, b: f64) -> f64 {
        if a == b { 0.0 } else { ((a - b) / b).abs() }
    }

    #[test]
    fn ln_matches_libm_to_a_few_ulps() {
        let mut x = 1e-300;
        while x < 1e300 {
            for y in [x, x * 1.37, x * 1.4143, x * 1.999_999] {
                assert!(
                    rel(ln(y), y.ln()) < 4e-16 || (ln(y) - y.ln()).abs() < 4e-16,
                    "{y}"
                );
            }
            x *= 3.1;
        }
        for y in [1.0, 0.5, 2.0, 1.0 + 1e-12, 1.0 - 1e-12, 0.999, 5e-324] {
            assert!(
                (ln(y) - y.ln()).abs() <= 4e-16 * y.ln().abs().max(1.0),
                "{y}"
            );
        }
        assert_eq!(ln(1.0), 0.0);
        assert_eq!(ln(0.0), f64::NEG_INFINITY);
        assert!(ln(-1.0).is_nan());
        assert_eq!(ln(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn exp_matches_libm_to_a_few_ulps() {
        let mut x = -745.0;
        while x < 709.0 {
            assert!(rel(exp(x), x.exp()) < 4e-16 || x < -708.0, "{x}");
            x += 0.731;
        }
        for y in [0.0, 1e-20, -1e-20, 0.5, -0.5, 1.0, 10.0, -10.0] {
            assert!(rel(exp(y), y.exp()) < 4e-16, "{y}");
        }
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-1000.0), 0.0);
        assert_eq!(exp(1000.0), f64::INFINITY);
        assert!((exp(ln(123.456)) - 123.456).abs() < 1e-12);
    }
}
