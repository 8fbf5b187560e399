//! Exact inversion sampling of the discrete Laplace law from a table of integer bounds.
//!
//! # Formula
//! For `Z` two-sided geometric with `p = exp(−s/t)`, the tail is
//! `T_m = P(|Z| ≥ m) = 2p^m/(1 + p)` for `m ≥ 1` (and `T_0 = 1`). With `W` uniform on
//! `[0, 1)`, the magnitude `M = #{m ≥ 1 : T_m > W}` has exactly the law of `|Z|`,
//! because `T_m` decreases: `P(M = k) = P(T_{k+1} ≤ W < T_k) = T_k − T_{k+1}`. An
//! independent fair bit gives the sign; `M = 0` ignores it. This is inversion of the
//! distribution function, done exactly.
//!
//! **Lazy comparison.** `W` is never rounded: its binary digits are drawn on demand. One
//! `u64` supplies the sign (bit 0) and the first 63 digits `w` of `W` (bits 1–63), so
//! `w ≤ 2^63·W < w + 1`. The table holds integers `lo_m` and one slack `D` with
//! `lo_m ≤ 2^63·T_m ≤ lo_m + D` (rigorous, from [`super::exact_exp`]), both
//! non-increasing in `m`. Then
//! * `lo_m > w` proves `T_m > W` (as `2^63·W < w + 1 ≤ lo_m`),
//! * `lo_m + D ≤ w` proves `T_m ≤ W`,
//!
//! and only `w ∈ [lo_m, lo_m + D)` leaves the comparison open, which happens with
//! probability `D·2^−63` per entry (`D ≤ 2` at full precision). An open comparison is
//! decided exactly by drawing 64 more digits of `W` at a time and enclosing `T_m` at
//! `63 + 64j` bits, until the enclosure lies on one side of the known prefix of `W`.
//! `T_m` is transcendental (Lindemann–Weierstrass: `p` is, so `2p^m = T_m(1 + p)` has
//! no rational solution), so `T_m ≠ W` almost surely and this stops with probability 1;
//! each round continues with probability about `8·2^−64`.
//!
//! **Search.** The count of entries whose upper bound exceeds `w` is non-increasing in
//! `w`; a guide table indexed by the top bits of `w` stores its value at the top of each
//! bucket, a lower bound for the whole bucket, and a short linear scan finishes. With
//! `2^g ≥ 8N` buckets (at most `2^16`) the scan averages under one step in eight, and
//! under one in two for the largest tables.
//!
//! **Tail.** The table stops at the first `N ≥ 2` with `T_N ≤ 2^−12`. When `W < T_N`
//! (decided as above), `|Z| ≥ N`, and by memorylessness `|Z| − N` given `|Z| ≥ N` is
//! geometric with `P(j) = (1 − p)p^j`, drawn with fresh randomness from the reference
//! sampler ([`super::cks::sample_geometric`]): exact, and rare enough (`≤ 2^−12`) that
//! its cost does not show.
//!
//! Every step is integer arithmetic on uniform bits from the generator; no floating
//! point is involved.
//!
//! # Citations
//! Devroye, *Non-Uniform Random Variate Generation*, Springer 1986, §II.2 (inversion)
//! and §III.2.4 (guide tables, after Chen and Asau 1974); Knuth and Yao, "The complexity
//! of nonuniform random number generation", 1976, and Karney, "Sampling exactly from the
//! normal distribution", ACM TOMS 42(1), 2016 (comparing lazily generated digits of a
//! uniform variate); Mironov, "On significance of the least significant bits for
//! differential privacy", CCS 2012 (why floating-point inversion is not acceptable).

use num_bigint::BigUint;
use num_traits::ToPrimitive;
use rand::Rng;

use super::{cks, exact_exp};

/// Precision of the table before it is rounded to 63 bits.
const BUILD_PREC: u32 = 128;
/// The table stops once `T_N ≤ 2^−TAIL_BITS`.
const TAIL_BITS: u32 = 12;
/// The largest scale `t/s` served by a table (about 35 000 entries, 280 kB); larger
/// scales are left to the reference sampler.
pub const MAX_TABLE_SCALE: u128 = 4096;
/// Hard cap on the table length, above what `MAX_TABLE_SCALE` needs.
const MAX_ENTRIES: usize = 1 << 16;
/// Guide-table bits are clamped to this range.
const GUIDE_BITS: (u32, u32) = (4, 16);

/// The table of one discrete Laplace law, `p = exp(−s/t)`.
///
/// Built once per `(s, t, table_bits)` and shared; see the module documentation.
pub struct InversionTable {
    s: u128,
    t: u128,
    /// `lo[m − 1] ≤ 2^63·T_m`, non-increasing, for `m = 1..=N`.
    lo: Box<[u64]>,
    /// `2^63·T_m ≤ lo[m − 1] + slack` for every `m`.
    slack: u64,
    /// `guide[b]` = number of entries with `lo + slack > w` at the largest `w` of bucket `b`.
    guide: Box<[u32]>,
    guide_shift: u32,
}

impl std::fmt::Debug for InversionTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InversionTable")
            .field("s", &self.s)
            .field("t", &self.t)
            .field("entries", &self.lo.len())
            .field("slack", &self.slack)
            .field("guide_entries", &self.guide.len())
            .finish()
    }
}

/// What the fast path found for one draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FastOutcome {
    /// The table alone decides `M = k` (`k = N` means `|Z| ≥ N`).
    Decided(usize),
    /// `M ≤ k`, and `T_k > W` is still open.
    Open(usize),
}

impl InversionTable {
    /// Builds the table for `p = exp(−s/t)`; `None` unless `s, t > 0` and the scale
    /// `t/s` is at most [`MAX_TABLE_SCALE`] (the table grows linearly with the scale).
    ///
    /// `table_bits < 63` coarsens the bounds to that many bits, which leaves more draws
    /// to the exact slow path: the law is unchanged, only the speed. Tests use it to
    /// exercise the slow path.
    pub fn build(s: u128, t: u128, table_bits: u32) -> Option<InversionTable> {
        let within_scale = s
            .checked_mul(MAX_TABLE_SCALE)
            .is_none_or(|limit| t <= limit);
        if s == 0 || t == 0 || !within_scale {
            return None;
        }
        let (bs, bt) = (BigUint::from(s), BigUint::from(t));
        // With s/t ≥ 1/4096, p and T_1 are below 1 − 2^−13: both fit below 2^128.
        let p = exact_exp::exp_neg(&bs, &bt, BUILD_PREC);
        let t1 = exact_exp::tail(1, &bs, &bt, BUILD_PREC);
        let (p_lo, p_hi) = (to_u128(&p.lo), to_u128(&p.hi));
        let (mut t_lo, mut t_hi) = (to_u128(&t1.lo), to_u128(&t1.hi));

        let tail_limit = 1u128 << (BUILD_PREC - TAIL_BITS);
        let mut lo = Vec::new();
        let mut slack = 0u64;
        loop {
            // 2^63·T_m from the 128-bit enclosure: drop 65 bits, outwards.
            let l = (t_lo >> 65) as u64;
            let h = (t_hi >> 65) as u64 + u64::from(t_hi & ((1 << 65) - 1) != 0);
            lo.push(l);
            slack = slack.max(h - l);
            if (lo.len() >= 2 && t_hi <= tail_limit) || lo.len() >= MAX_ENTRIES {
                break;
            }
            // T_{m+1} = T_m·p, rounded outwards; both bounds stay non-increasing.
            t_lo = mul_hi(t_lo, p_lo).0;
            let (h, rest) = mul_hi(t_hi, p_hi);
            t_hi = h + u128::from(rest);
        }

        let table_bits = table_bits.clamp(1, 63);
        if table_bits < 63 {
            let grain = 1u64 << (63 - table_bits);
            for l in &mut lo {
                *l &= !(grain - 1);
            }
            slack += grain;
        }

        let n = lo.len();
        let bits = (usize::BITS - (n - 1).leading_zeros() + 4).clamp(GUIDE_BITS.0, GUIDE_BITS.1);
        let guide_shift = 63 - bits;
        let mut guide = vec![0u32; 1 << bits];
        let mut k = n;
        for (b, g) in guide.iter_mut().enumerate() {
            let top = (((b as u64) + 1) << guide_shift) - 1;
            while k > 0 && lo[k - 1] + slack <= top {
                k -= 1;
            }
            *g = k as u32;
        }

        Some(InversionTable {
            s,
            t,
            lo: lo.into_boxed_slice(),
            slack,
            guide: guide.into_boxed_slice(),
            guide_shift,
        })
    }

    /// Number of table entries `N`.
    pub fn len(&self) -> usize {
        self.lo.len()
    }

    /// Always false: a table has at least two entries.
    pub fn is_empty(&self) -> bool {
        self.lo.is_empty()
    }

    /// One discrete Laplace sample, clamped to the `i64` range (left with probability
    /// below `exp(−2^63·s/t)`).
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> i64 {
        let v = rng.next_u64();
        let negative = v & 1 == 1;
        let w = v >> 1;
        let k = match self.fast(w) {
            FastOutcome::Decided(k) => k,
            FastOutcome::Open(k) => self.resolve(k, w, rng),
        };
        let magnitude = if k < self.lo.len() {
            k as u64
        } else {
            let extra = cks::sample_geometric(self.s, self.t, rng);
            (k as u64).saturating_add(u64::try_from(extra).unwrap_or(u64::MAX))
        };
        let magnitude = i64::try_from(magnitude).unwrap_or(i64::MAX);
        if negative { -magnitude } else { magnitude }
    }

    /// The table's verdict on `W` from its first 63 digits `w`.
    #[inline]
    fn fast(&self, w: u64) -> FastOutcome {
        let mut k = self.guide[(w >> self.guide_shift) as usize] as usize;
        // Invariant: every m ≤ k has an upper bound above w (T_m > W is possible).
        while let Some(&l) = self.lo.get(k) {
            if l + self.slack > w {
                k += 1;
            } else {
                break;
            }
        }
        // Now T_{k+1} ≤ W is proven; M = k if T_k > W is proven too.
        if k == 0 || self.lo[k - 1] > w {
            FastOutcome::Decided(k)
        } else {
            FastOutcome::Open(k)
        }
    }

    /// The exact slow path: the largest `m ≤ k` with `T_m > W`, scanning down from `k`
    /// (the `T_m > W` form a prefix `1..=M`).
    #[cold]
    fn resolve<R: Rng + ?Sized>(&self, mut k: usize, w: u64, rng: &mut R) -> usize {
        let mut uniform = LazyUniform::new(w);
        let (s, t) = (BigUint::from(self.s), BigUint::from(self.t));
        while k > 0 {
            if self.lo[k - 1] > w || tail_exceeds(k as u64, &s, &t, &mut uniform, rng) {
                break;
            }
            k -= 1;
        }
        k
    }
}

/// Whether `T_m > W`, exactly, drawing more digits of `W` as needed.
fn tail_exceeds<R: Rng + ?Sized>(
    m: u64,
    s: &BigUint,
    t: &BigUint,
    uniform: &mut LazyUniform,
    rng: &mut R,
) -> bool {
    let mut words = 1usize;
    loop {
        let prec = 63 + 64 * words as u32;
        let bound = exact_exp::tail(m, s, t, prec);
        let prefix = uniform.prefix(words, rng);
        // prefix ≤ 2^prec·W < prefix + 1, so prefix + 1 ≤ lo proves W < T_m.
        if prefix < bound.lo {
            return true;
        }
        if prefix >= bound.hi {
            return false;
        }
        words += 1;
    }
}

/// A uniform `W ∈ [0, 1)` whose binary digits are drawn only when needed: 63 from the
/// first `u64`, then 64 per further `u64`.
struct LazyUniform {
    first: u64,
    more: Vec<u64>,
}

impl LazyUniform {
    fn new(first: u64) -> Self {
        debug_assert!(first < 1 << 63);
        Self {
            first,
            more: Vec::new(),
        }
    }

    /// `⌊2^(63 + 64·words)·W⌋`.
    fn prefix<R: Rng + ?Sized>(&mut self, words: usize, rng: &mut R) -> BigUint {
        while self.more.len() < words {
            self.more.push(rng.next_u64());
        }
        let mut digits: Vec<u64> = self.more[..words].iter().rev().copied().collect();
        digits.push(self.first);
        // Little-endian u32 digits for BigUint::new.
        BigUint::new(
            digits
                .iter()
                .flat_map(|d| [*d as u32, (*d >> 32) as u32])
                .collect(),
        )
    }
}

/// The high 128 bits of `a·b` and whether the discarded low half is non-zero.
#[inline]
fn mul_hi(a: u128, b: u128) -> (u128, bool) {
    const MASK: u128 = u64::MAX as u128;
    let (a0, a1) = (a & MASK, a >> 64);
    let (b0, b1) = (b & MASK, b >> 64);
    let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    let mid = (p00 >> 64) + (p01 & MASK) + (p10 & MASK);
    let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    let low_nonzero = (mid & MASK) != 0 || (p00 & MASK) != 0;
    (hi, low_nonzero)
}

fn to_u128(v: &BigUint) -> u128 {
    v.to_u128()
        .expect("a probability below 1 − 2^−13 at 128 bits fits in u128")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand::rngs::ChaCha20Rng;

    proptest! {
        #[test]
        fn mul_hi_matches_bigint(a: u128, b: u128) {
            let full = BigUint::from(a) * BigUint::from(b);
            let (hi, rest) = mul_hi(a, b);
            prop_assert_eq!(BigUint::from(hi), &full >> 128u32);
            prop_assert_eq!(rest, (&full % (BigUint::from(1u8) << 128u32)) != BigUint::from(0u8));
        }
    }

    /// An independent enclosure `lo ≤ 2^63·T_m ≤ hi`.
    fn tail_ref(m: u64, s: u128, t: u128) -> (u64, u64) {
        let e = exact_exp::tail(m, &BigUint::from(s), &BigUint::from(t), 63);
        (e.lo.to_u64().unwrap(), e.hi.to_u64().unwrap())
    }

    #[test]
    fn table_bounds_are_rigorous_and_tight() {
        for (s, t) in [(1u128, 10u128), (1, 3), (5, 2), (1, 100), (1, 4096), (3, 1)] {
            let table = InversionTable::build(s, t, 63).unwrap();
            assert!(table.len() >= 2);
            assert!(table.slack <= 2, "{s}/{t}: slack {}", table.slack);
            for (i, &l) in table.lo.iter().enumerate() {
                let (lo, hi) = tail_ref(i as u64 + 1, s, t);
                // The independent 63-bit enclosure must meet [l, l + slack].
                assert!(l <= hi && lo <= l + table.slack, "{s}/{t} m={}", i + 1);
            }
            assert!(table.lo.windows(2).all(|w| w[0] >= w[1]));
            // The last entry is past the 2^−12 tail cut, the one before is not.
            let n = table.len();
            assert!(table.lo[n - 1] <= (1 << (63 - TAIL_BITS)) + 2);
            if n > 2 {
                assert!(table.lo[n - 2] + table.slack > 1 << (63 - TAIL_BITS));
            }
        }
    }

    #[test]
    fn table_sizes_stay_bounded() {
        // Huge ε: p underflows every precision; the table is the minimal two entries.
        let huge = InversionTable::build(1_000_000_000_000_000_000, 1, 63).unwrap();
        assert_eq!(huge.len(), 2);
        assert_eq!(huge.lo[0], 0);
        // The largest scale served by tables: ~12·ln 2·4096 entries.
        let wide = InversionTable::build(1, 4096, 63).unwrap();
        assert!(InversionTable::build(1, 4097, 63).is_none());
        assert!(InversionTable::build(1000, 4_096_001, 63).is_none());
        assert!(InversionTable::build(1000, 4_096_000, 63).is_some());
        assert!((34_000..36_000).contains(&wide.len()), "{}", wide.len());
        assert!(wide.guide.len() <= 1 << GUIDE_BITS.1);
    }

    #[test]
    fn guide_never_overshoots() {
        for bits in [63, 5] {
            let table = InversionTable::build(1, 10, bits).unwrap();
            for b in 0..table.guide.len() {
                let top = (((b as u64) + 1) << table.guide_shift) - 1;
                let k = table.guide[b] as usize;
                // Every entry up to the guide is possibly above any w of the bucket.
                assert!(k == 0 || table.lo[k - 1] + table.slack > top);
                assert!(k == table.len() || table.lo[k] + table.slack <= top);
            }
        }
    }

    #[test]
    fn fast_path_matches_a_linear_count() {
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        for bits in [63, 6] {
            let table = InversionTable::build(1, 10, bits).unwrap();
            for _ in 0..20_000 {
                let w = rng.next_u64() >> 1;
                let possible = table.lo.iter().filter(|&&l| l + table.slack > w).count();
                let proven = table.lo.iter().filter(|&&l| l > w).count();
                let expected = if possible == proven {
                    FastOutcome::Decided(possible)
                } else {
                    FastOutcome::Open(possible)
                };
                assert_eq!(table.fast(w), expected);
            }
        }
    }

    #[test]
    fn coarse_tables_send_many_draws_to_the_slow_path() {
        let table = InversionTable::build(1, 10, 4).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(12);
        let open = (0..10_000)
            .filter(|_| matches!(table.fast(rng.next_u64() >> 1), FastOutcome::Open(_)))
            .count();
        assert!(open > 2_000, "{open}");
        let fine = InversionTable::build(1, 10, 63).unwrap();
        assert!(
            (0..10_000).all(|_| matches!(fine.fast(rng.next_u64() >> 1), FastOutcome::Decided(_)))
        );
    }

    /// Replays fixed words, then zeros.
    struct Scripted(Vec<u64>);

    impl rand::TryRng for Scripted {
        type Error = std::convert::Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
            Ok(self.try_next_u64()? as u32)
        }
        fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
            Ok(if self.0.is_empty() {
                0
            } else {
                self.0.remove(0)
            })
        }
        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
            dst.fill(0);
            Ok(())
        }
    }

    #[test]
    fn lazy_comparison_needs_many_digits_when_w_is_close() {
        // W agrees with T_3 on its first 63 + 64·4 digits; the comparison must draw
        // further words and decide by the fifth.
        let (s, t) = (BigUint::from(1u8), BigUint::from(10u8));
        let words = 4;
        let prec = 63 + 64 * words as u32;
        let truncated = exact_exp::tail(3, &s, &t, prec + 64).lo >> 64u32;
        let digits = truncated.to_u64_digits();
        let first = digits[words];
        let mut script: Vec<u64> = digits[..words].iter().rev().copied().collect();

        // W = truncation, then zeros: W < T_3.
        let mut rng = Scripted(script.clone());
        let mut uniform = LazyUniform::new(first);
        assert!(tail_exceeds(3, &s, &t, &mut uniform, &mut rng));
        assert!(uniform.more.len() > words, "decided too early");

        // W = truncation + 2^−prec, then zeros: W > T_3 (T_3 is not dyadic).
        *script.last_mut().unwrap() += 1;
        let mut rng = Scripted(script);
        let mut uniform = LazyUniform::new(first);
        assert!(!tail_exceeds(3, &s, &t, &mut uniform, &mut rng));
    }

    #[test]
    fn lazy_prefix_is_the_digits_in_order() {
        let mut rng = Scripted(vec![0xAAAA, 0xBBBB]);
        let mut u = LazyUniform::new(5);
        assert_eq!(
            u.prefix(1, &mut rng),
            (BigUint::from(5u8) << 64u32) + 0xAAAAu32
        );
        assert_eq!(
            u.prefix(2, &mut rng),
            (BigUint::from(5u8) << 128u32) + (BigUint::from(0xAAAAu32) << 64u32) + 0xBBBBu32
        );
        assert_eq!(
            u.prefix(1, &mut rng),
            (BigUint::from(5u8) << 64u32) + 0xAAAAu32
        );
    }
}
