//! Rigorous integer bounds on `exp(−a/b)` and on the discrete Laplace tail.
//!
//! Everything here is exact integer arithmetic: a result is a pair `lo ≤ 2^prec · v ≤
//! hi` that is *guaranteed* to enclose the real value `v`, with `hi − lo` a few units
//! whatever the precision, so that asking for more precision always tightens the
//! enclosure. The inversion sampler ([`super::inversion`]) builds its table from these
//! bounds and uses them again, at growing precision, in its exact slow path.
//!
//! # Formula
//! For a rational `y = a/b ≥ 0`:
//!
//! 1. If `y ≥ prec`, then `exp(−y) < 2^−y ≤ 2^−prec` and the enclosure is `[0, 1]`
//!    at once: a huge `y` (ε large, `p` astronomically small) never costs more than a
//!    comparison.
//! 2. Otherwise reduce the range: `z = y/2^r` with `r` the smallest integer making
//!    `z ≤ 1/16`, so `exp(−y) = exp(−z)^(2^r)` with `r ≤ log2(prec) + 6`.
//! 3. `exp(−z) = Σ (−z)^n/n!` is alternating with decreasing terms (`z < 1`), so by
//!    Leibniz the value lies between any two consecutive partial sums `S_K` and
//!    `S_{K+1}`. Both are computed *exactly* as fractions over the common denominator
//!    `d^(K+1)·(K+1)!` (`z = a/d`), then rounded outwards to `wp` bits. With
//!    `z ≤ 1/16`, `K + 1 > wp/4` makes their gap below `2^−wp`.
//! 4. Square `r` times, rounding the lower bound down and the upper bound up. For values
//!    in `[0, 1]` one squaring at most doubles the width and adds one unit, so
//!    `wp = prec + r + 8` leaves a final width of at most two units at `prec` bits.
//!
//! The tail of the discrete Laplace law, `T_m = P(|Z| ≥ m) = 2p^m/(1 + p)` for
//! `m ≥ 1`, `p = exp(−s/t)`, is then enclosed by dividing the bounds of `exp(−m·s/t)`
//! by those of `1 + p`, each division rounded outwards.
//!
//! # Citations
//! Brent and Zimmermann, *Modern Computer Arithmetic*, Cambridge University Press 2010,
//! §4.3–4.4 (argument reduction and series for `exp`, directed rounding); Karney,
//! "Sampling exactly from the normal distribution", ACM TOMS 42(1), 2016 (deciding a
//! comparison with a uniform variate from enclosures of growing precision).

use num_bigint::BigUint;
use num_traits::{One, Zero};

/// Guaranteed bounds `lo ≤ 2^prec · v ≤ hi` on a real value `v`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enclosure {
    pub lo: BigUint,
    pub hi: BigUint,
}

/// Bounds on `2^prec · exp(−a/b)`. `b` must be positive.
///
/// The width `hi − lo` is at most 2, and 0 when `a = 0`. See the module documentation
/// for the method.
pub fn exp_neg(a: &BigUint, b: &BigUint, prec: u32) -> Enclosure {
    assert!(!b.is_zero(), "exp_neg: zero denominator");
    if a.is_zero() {
        let one = BigUint::one() << prec;
        return Enclosure {
            lo: one.clone(),
            hi: one,
        };
    }
    if a >= &(b * prec) {
        return Enclosure {
            lo: BigUint::zero(),
            hi: BigUint::one(),
        };
    }
    // y = a/b < 2^(bits(a) − bits(b) + 1); z = y/2^r ≤ 1/16 needs r ≥ bits(a) − bits(b) + 5.
    let r = (a.bits() + 5).saturating_sub(b.bits());
    let r = u32::try_from(r).expect("y < prec bounds the reduction");
    let wp = prec + r + 8;
    let d: BigUint = b << r;

    let (lo, hi) = alternating_series_bounds(a, &d, wp);
    let (mut lo, mut hi) = (lo, hi);
    for _ in 0..r {
        lo = (&lo * &lo) >> wp;
        hi = ceil_shr(&(&hi * &hi), wp);
    }
    let shift = wp - prec;
    Enclosure {
        lo: lo >> shift,
        hi: ceil_shr(&hi, shift),
    }
}

/// Bounds on `2^wp · exp(−a/d)` for `0 < a/d ≤ 1/16` from two consecutive partial sums of
/// the Taylor series, both exact fractions.
fn alternating_series_bounds(a: &BigUint, d: &BigUint, wp: u32) -> (BigUint, BigUint) {
    // Terms 0..=last with z ≤ 1/16: term(last) ≤ 16^−last < 2^−wp.
    let last = wp / 4 + 1;
    // Common denominator d^last · last!; term n is a^n d^(last−n) last!/n!.
    let mut denominator = BigUint::one();
    for n in 1..=last {
        denominator *= d;
        denominator *= n;
    }
    let mut term = denominator.clone();
    let mut positive = term.clone();
    let mut negative = BigUint::zero();
    for n in 1..=last {
        // Exact: term(n−1) holds the factors d and n that are divided out.
        term = &term * a / (d * n);
        if n % 2 == 0 {
            positive += &term;
        } else {
            negative += &term;
        }
    }
    // S_last = (positive − negative)/denominator; S_{last−1} differs by the last term.
    let s_last = positive - negative;
    let (lower, upper) = if last.is_multiple_of(2) {
        (&s_last - &term, s_last)
    } else {
        (s_last.clone(), s_last + &term)
    };
    let lo = (lower << wp) / &denominator;
    let hi = ceil_div(&(upper << wp), &denominator);
    (lo, hi)
}

/// Bounds on `2^prec · T_m` with `T_m = P(|Z| ≥ m) = 2p^m/(1 + p)`, `p = exp(−s/t)`,
/// `m ≥ 1`. `t` must be positive. The width is at most 8.
pub fn tail(m: u64, s: &BigUint, t: &BigUint, prec: u32) -> Enclosure {
    let p = exp_neg(s, t, prec);
    let q = exp_neg(&(s * m), t, prec);
    let one = BigUint::one() << prec;
    // T = 2q/(1 + p): smallest numerator over largest denominator and vice versa.
    let lo = (q.lo << (prec + 1)) / (&one + &p.hi);
    let hi = ceil_div(&(q.hi << (prec + 1)), &(&one + &p.lo));
    Enclosure { lo, hi }
}

fn ceil_div(n: &BigUint, d: &BigUint) -> BigUint {
    (n + d - 1u32) / d
}

fn ceil_shr(n: &BigUint, shift: u32) -> BigUint {
    let floor = n >> shift;
    if (&floor << shift) == *n {
        floor
    } else {
        floor + 1u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_traits::ToPrimitive;

    fn big(v: u128) -> BigUint {
        BigUint::from(v)
    }

    /// The enclosure at `prec` bits as reals.
    fn as_f64(e: &Enclosure, prec: u32) -> (f64, f64) {
        let scale = 2f64.powi(-(prec as i32));
        (
            e.lo.to_f64().unwrap() * scale,
            e.hi.to_f64().unwrap() * scale,
        )
    }

    #[test]
    fn exp_bounds_enclose_f64_exp() {
        for (a, b) in [
            (1u128, 10u128),
            (1, 3),
            (1, 1),
            (5, 2),
            (1, 100),
            (1, 4096),
            (37, 1),
            (3, 1_000_000_000_000_000_000),
            (999_999_999_999_999_999, 1_000_000_000_000_000_000),
        ] {
            let e = exp_neg(&big(a), &big(b), 80);
            let (lo, hi) = as_f64(&e, 80);
            let v = (-(a as f64) / b as f64).exp();
            // f64 exp is within an ulp or two; the enclosure is far tighter.
            assert!(lo <= v * (1.0 + 1e-15), "{a}/{b}: {lo} > {v}");
            assert!(hi >= v * (1.0 - 1e-15), "{a}/{b}: {hi} < {v}");
            assert!(&e.hi - &e.lo <= big(2), "{a}/{b}: width {}", &e.hi - &e.lo);
        }
    }

    #[test]
    fn exp_bounds_tighten_with_precision() {
        for (a, b) in [(1u128, 10u128), (7, 3), (1, 4096)] {
            let (a, b) = (big(a), big(b));
            let mut previous: Option<Enclosure> = None;
            for prec in [64u32, 128, 256, 512, 1024] {
                let e = exp_neg(&a, &b, prec);
                // Two units at `prec` bits: the absolute width halves with every bit.
                assert!(&e.hi - &e.lo <= big(2));
                if let Some(p) = previous {
                    // Both enclose the same value, so rescaled they must overlap.
                    let shift = prec / 2;
                    assert!(
                        p.lo << shift <= e.hi && e.lo <= p.hi << shift,
                        "prec {prec}"
                    );
                }
                previous = Some(e);
            }
        }
    }

    #[test]
    fn exp_bounds_match_reference_digits() {
        // exp(−1/10) truncated to 40 digits (mpmath 1.3, mp.dps = 60:
        // 0.904837418035959573164249059446436621194705360980...).
        let e = exp_neg(&big(1), &big(10), 200);
        let reference =
            BigUint::parse_bytes(b"9048374180359595731642490594464366211947", 10).unwrap();
        let ten40 = BigUint::from(10u32).pow(40);
        // lo/2^200 ≤ v and v is within 10^−40 of the reference.
        assert!(&e.lo * &ten40 <= (&reference + 1u32) << 200u32);
        assert!(&e.hi * &ten40 >= &reference << 200u32);
    }

    #[test]
    fn extreme_arguments_are_cheap() {
        // Huge y: immediately [0, 1].
        let e = exp_neg(&big(10u128.pow(30)), &big(1), 1_000);
        assert_eq!(
            e,
            Enclosure {
                lo: big(0),
                hi: big(1)
            }
        );
        // Zero: exactly one.
        let e = exp_neg(&big(0), &big(7), 10);
        assert_eq!(e.lo, big(1024));
        assert_eq!(e.hi, big(1024));
        // Tiny y: just below one.
        let e = exp_neg(&big(1), &big(10u128.pow(30)), 128);
        assert!(e.hi <= BigUint::one() << 128u32);
        assert!(e.lo >= (BigUint::one() << 128u32) - big(1u128 << 30));
        // y just below prec: a genuine, small result.
        let e = exp_neg(&big(63), &big(1), 64);
        let (lo, hi) = as_f64(&e, 64);
        let v = (-63f64).exp();
        assert!(lo <= v && v <= hi + 2f64.powi(-64));
    }

    #[test]
    fn tail_bounds_enclose_the_tail() {
        for (s, t) in [(1u128, 10u128), (1, 3), (5, 2), (1, 200)] {
            let p = (-(s as f64) / t as f64).exp();
            for m in [1u64, 2, 7, 40] {
                let e = tail(m, &big(s), &big(t), 100);
                let (lo, hi) = as_f64(&e, 100);
                let v = 2.0 * p.powi(m as i32) / (1.0 + p);
                assert!(
                    lo <= v * (1.0 + 1e-13) && hi >= v * (1.0 - 1e-13),
                    "{s}/{t} m={m}"
                );
                assert!(&e.hi - &e.lo <= big(8));
            }
        }
    }
}
