//! The acceptance step of the discrete Gaussian's rejection sampler, decided exactly from
//! a table of rigorous integer bounds.
//!
//! # Formula
//! Canonne, Kamath and Steinke's Algorithm 3 draws `Y` from the discrete Laplace law of
//! scale `t = ⌊σ⌋ + 1` and keeps it with probability
//!
//! `a(y) = exp(−γ(y))`,  `γ(y) = (y − μ)²/(2σ²)`,  `μ = σ²/t`,  `y = |Y|`.
//!
//! With `σ² = n/d` (integers, [`super::Sigma2`]) `γ(y) = (y·d·t − n)² / (2·n·d·t²)`, a
//! ratio of integers: every `a(y)` is `exp` of an exact rational, which
//! [`super::exact_exp::exp_neg`] encloses at any precision.
//!
//! **Lazy comparison.** The step accepts when `W < a(y)` for a fresh uniform `W` in
//! `[0, 1)`, so `P(accept | Y = y) = a(y)` exactly. As in [`super::inversion`], `W` is
//! never rounded: one `u64` gives its first 63 binary digits `w` (`w ≤ 2^63·W < w + 1`),
//! and further digits are drawn only when needed. The table holds, for the bucket of
//! magnitudes containing `y`, integers `lo ≤ 2^63·a(y) ≤ hi`. Then
//! * `w < lo` proves `W < a(y)` (as `2^63·W < w + 1 ≤ lo`): accept;
//! * `w ≥ hi` proves `W ≥ a(y)`: reject;
//!
//! and only `w ∈ [lo, hi)` is left open. An open comparison is decided exactly: `a(y)` is
//! enclosed at `63 + 64j` bits from `γ(y)` itself, and `W`'s digits are drawn 64 at a
//! time, until the enclosure lies on one side of the known prefix of `W`. The enclosure's
//! width is at most two units at every precision ([`super::exact_exp`]), so each further
//! round happens with probability at most `2·2^−64`, and the comparison stops with
//! probability 1 (`P(W = a(y)) = 0`).
//!
//! **The table.** `a` is unimodal in `y` (a Gaussian bump at `μ`, increasing below `μ`,
//! decreasing above). Magnitudes are grouped in buckets of `b = 2^k` (`b = 1` while the
//! table has at most [`MAX_BUCKETS`] entries, that is for `σ` up to about 4 600);
//! `a` is computed at the grid points `y_j = j·b`, `j = 0..=J`:
//! * two anchors, `a(y_{j₀})` and `a(y_{j₀+1})` with `j₀ = ⌊μ/b⌋` (so `y_{j₀} ≤ μ <
//!   y_{j₀+1}`), from `exact_exp::exp_neg` at 128 bits;
//! * outwards from the anchors by the exact recurrence
//!   `a(y + b) = a(y)·ρ(y)`, `ρ(y) = exp(−b·((2y + b)·d·t − 2n)/(2·n·t))`, with
//!   `ρ(y + b) = ρ(y)·c`, `c = exp(−b²·d/n)` (and the mirror image downwards): every
//!   factor is below 1 on the side it is used, every product is rounded outwards at 128
//!   bits (lower bound down, upper bound up), so the enclosures stay rigorous. Their
//!   width grows by a few units per step, at most about `2^33` units of `2^−128` over
//!   the `2^16` steps a table can take: below one unit at 63 bits.
//!
//! The grid stops at the first `J > j₀` with `a(y_J) ≤ 2^−24` (about `μ + 5.8σ`).
//! A bucket of one magnitude (`b = 1`) holds that magnitude's enclosure. A wider bucket
//! `[y_j, y_{j+1})` lies within `[y_j, y_{j+1}]`, where the unimodal `a` has its minimum
//! at an end and its maximum at an end too, except in the bucket `j₀` that holds the
//! mode, whose upper bound is 1: so `lo = min(lo_j, lo_{j+1})` and `hi = max(hi_j,
//! hi_{j+1})` (or `2^63`) bound `a` on the whole bucket. Beyond the grid (`y ≥ y_J >
//! μ`) `a` decreases, so `a(y) ≤ a(y_J)`: its upper bound rejects all but about `2^−24`
//! of those draws at once, and the rest are decided exactly as above.
//!
//! A round's comparison is open with probability below `10^−9` when `b = 1` (mostly
//! proposals beyond the grid), and about `0.4·b/σ < 2·10^−4` with wider buckets
//! (`b/σ < 14/2^15`); either way the law is exactly `a(y)`, only the time changes.
//! Everything between the uniform bits and the decision is integer arithmetic: no
//! floating point.
//!
//! # Citations
//! Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS
//! 2020, Algorithm 3; Devroye, *Non-Uniform Random Variate Generation*, Springer 1986,
//! §II.3 (rejection); Karney, "Sampling exactly from the normal distribution", ACM TOMS
//! 42(1), 2016 (comparing lazily generated digits of a uniform variate).

use num_bigint::BigUint;
use num_traits::{One, ToPrimitive, Zero};
use rand::Rng;

use super::exact_exp::{self, Enclosure};

/// Working precision of the table's recurrence, in bits.
const WORK_BITS: u32 = 128;
/// Buckets are made wide enough that a table holds at most about this many (16 bytes
/// each).
pub const MAX_BUCKETS: usize = 1 << 15;
/// The grid stops once `a(y) ≤ 2^−CUT_BITS` past the mode.
const CUT_BITS: u32 = 24;

/// Bounds `lo ≤ 2^63·a(y) ≤ hi` for every magnitude `y` of one bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bounds {
    lo: u64,
    hi: u64,
}

/// The acceptance probabilities `a(y)` of one discrete Gaussian, as rigorous bounds.
///
/// Built once per `(σ², table bits)` and shared; see the module documentation.
pub struct AcceptanceTable {
    /// `σ² = n/d`, reduced.
    n: BigUint,
    d: BigUint,
    /// The proposal's scale `⌊σ⌋ + 1`.
    t: u64,
    /// Buckets of `2^shift` magnitudes.
    shift: u32,
    buckets: Box<[Bounds]>,
    /// `2^63·a(y) ≤ beyond` for every `y` past the last bucket.
    beyond: u64,
}

impl std::fmt::Debug for AcceptanceTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcceptanceTable")
            .field("sigma2", &format_args!("{}/{}", self.n, self.d))
            .field("t", &self.t)
            .field("bucket_width", &(1u64 << self.shift))
            .field("buckets", &self.buckets.len())
            .finish()
    }
}

impl AcceptanceTable {
    /// The table for `σ² = n/d` (positive, reduced) and the proposal scale `t = ⌊σ⌋ + 1`.
    ///
    /// `table_bits < 63` coarsens the bounds to that many bits, which leaves more draws
    /// to the exact slow path: the law is unchanged, only the speed. Tests use it to
    /// exercise the slow path.
    pub fn build(n: &BigUint, d: &BigUint, t: u64, table_bits: u32) -> AcceptanceTable {
        debug_assert!(!n.is_zero() && !d.is_zero() && t >= 1);
        let dt: BigUint = d * t;
        // μ = σ²/t < t (as t > σ): the grid reaches about μ + 5.8σ < 7t, and the bucket
        // width is the smallest power of two that fits that in MAX_BUCKETS.
        let reach = 7 * u128::from(t) + 1;
        let mut shift = 0;
        while reach >> shift > MAX_BUCKETS as u128 {
            shift += 1;
        }
        let b = 1u64 << shift;
        let bb = BigUint::from(b);
        let mode = (n / (&dt * &bb)).to_u64().expect("μ/b < t fits in u64");

        let two_n_t: BigUint = n * t * 2u32;
        let c = exact_exp::exp_neg(&(&bb * &bb * d), n, WORK_BITS);

        // Upwards from y = (mode + 1)·b > μ.
        let cut = BigUint::one() << (WORK_BITS - CUT_BITS);
        let y1 = (mode + 1) * b;
        let mut upper = vec![acceptance_at(n, d, t, y1)];
        let mut ratio = exact_exp::exp_neg(
            &(&bb * (BigUint::from(2 * u128::from(y1) + u128::from(b)) * &dt - 2u32 * n)),
            &two_n_t,
            WORK_BITS,
        );
        while upper.last().is_some_and(|a| a.hi > cut) && upper.len() < 2 * MAX_BUCKETS {
            let next = mul(upper.last().expect("non-empty"), &ratio);
            ratio = mul(&ratio, &c);
            upper.push(next);
        }

        // Downwards from y = mode·b ≤ μ to 0.
        let y0 = mode * b;
        let mut lower = vec![acceptance_at(n, d, t, y0)];
        if mode > 0 {
            let mut ratio = exact_exp::exp_neg(
                &(&bb * (2u32 * n - BigUint::from(2 * u128::from(y0) - u128::from(b)) * &dt)),
                &two_n_t,
                WORK_BITS,
            );
            for _ in 0..mode {
                let next = mul(lower.last().expect("non-empty"), &ratio);
                ratio = mul(&ratio, &c);
                lower.push(next);
            }
        }
        lower.reverse();

        // The grid a(j·b), j = 0..=J, at 63 bits.
        let grid: Vec<Bounds> = lower.iter().chain(&upper).map(to_63_bits).collect();
        let last = grid.len() - 1;
        let buckets: Vec<Bounds> = if b == 1 {
            grid[..last].to_vec()
        } else {
            (0..last)
                .map(|j| Bounds {
                    lo: grid[j].lo.min(grid[j + 1].lo),
                    hi: if j as u64 == mode {
                        1 << 63
                    } else {
                        grid[j].hi.max(grid[j + 1].hi)
                    },
                })
                .collect()
        };

        let mut table = AcceptanceTable {
            n: n.clone(),
            d: d.clone(),
            t,
            shift,
            buckets: buckets.into_boxed_slice(),
            beyond: grid[last].hi,
        };
        table.coarsen(table_bits.clamp(1, 63));
        table
    }

    /// Rounds every bound outwards to `bits` bits.
    fn coarsen(&mut self, bits: u32) {
        if bits >= 63 {
            return;
        }
        let grain = 1u64 << (63 - bits);
        let up = |x: u64| x.div_ceil(grain).saturating_mul(grain).min(1 << 63);
        for bounds in self.buckets.iter_mut() {
            bounds.lo -= bounds.lo % grain;
            bounds.hi = up(bounds.hi);
        }
        self.beyond = up(self.beyond);
    }

    /// Number of buckets.
    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    /// Always false: the grid has at least the two anchors.
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Magnitudes per bucket (a power of two).
    pub fn bucket_width(&self) -> u64 {
        1 << self.shift
    }

    /// Whether to keep the proposal of magnitude `y`: true with probability `a(y)`
    /// exactly. Reads one `u64` from `rng`, and more only on the rare open comparisons.
    #[inline]
    pub fn accepts<R: Rng + ?Sized>(&self, y: u64, rng: &mut R) -> bool {
        let w = rng.next_u64() >> 1;
        let bounds = usize::try_from(y >> self.shift)
            .ok()
            .and_then(|j| self.buckets.get(j))
            .copied()
            .unwrap_or(Bounds {
                lo: 0,
                hi: self.beyond,
            });
        if w < bounds.lo {
            return true;
        }
        if w >= bounds.hi {
            return false;
        }
        self.decide(y, w, rng)
    }

    /// The exact slow path: whether `a(y) > W`, with `W`'s first 63 digits `w`.
    #[cold]
    fn decide<R: Rng + ?Sized>(&self, y: u64, w: u64, rng: &mut R) -> bool {
        let (num, den) = gamma(&self.n, &self.d, self.t, y);
        exp_neg_exceeds(&num, &den, w, rng)
    }
}

/// `γ(y) = (y·d·t − n)²/(2·n·d·t²)` as a numerator and a denominator.
fn gamma(n: &BigUint, d: &BigUint, t: u64, y: u64) -> (BigUint, BigUint) {
    let ydt = BigUint::from(y) * d * t;
    let gap = if &ydt >= n { ydt - n } else { n - ydt };
    (&gap * &gap, n * d * t * t * 2u32)
}

/// `a(y) = exp(−γ(y))` at the working precision.
fn acceptance_at(n: &BigUint, d: &BigUint, t: u64, y: u64) -> Enclosure {
    let (num, den) = gamma(n, d, t, y);
    exact_exp::exp_neg(&num, &den, WORK_BITS)
}

/// The product of two enclosures of values in `[0, 1]` at the working precision,
/// rounded outwards.
fn mul(a: &Enclosure, b: &Enclosure) -> Enclosure {
    Enclosure {
        lo: (&a.lo * &b.lo) >> WORK_BITS,
        hi: ceil_shr(&(&a.hi * &b.hi), WORK_BITS),
    }
}

/// An enclosure at the working precision rounded outwards to 63 bits.
fn to_63_bits(a: &Enclosure) -> Bounds {
    let shift = WORK_BITS - 63;
    let fits = "a value in [0, 1] at 63 bits fits in u64";
    Bounds {
        lo: (&a.lo >> shift).to_u64().expect(fits),
        hi: ceil_shr(&a.hi, shift).to_u64().expect(fits),
    }
}

fn ceil_shr(v: &BigUint, shift: u32) -> BigUint {
    let floor = v >> shift;
    if &floor << shift == *v {
        floor
    } else {
        floor + 1u32
    }
}

/// Whether `exp(−num/den) > W`, exactly, for the uniform `W` whose first 63 digits are
/// `first`, drawing more digits from `rng` as needed.
pub(super) fn exp_neg_exceeds<R: Rng + ?Sized>(
    num: &BigUint,
    den: &BigUint,
    first: u64,
    rng: &mut R,
) -> bool {
    let mut uniform = LazyUniform::new(first);
    let mut words = 0usize;
    loop {
        let prec = 63 + 64 * words as u32;
        let bound = exact_exp::exp_neg(num, den, prec);
        let prefix = uniform.prefix(words, rng);
        // prefix ≤ 2^prec·W < prefix + 1.
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
        let mut value = BigUint::from(self.first);
        for &word in &self.more[..words] {
            value = (value << 64u32) + word;
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::ChaCha20Rng;

    fn big(v: u128) -> BigUint {
        BigUint::from(v)
    }

    /// `a(y)` in floating point, for comparison only.
    fn a_f64(n: u128, d: u128, t: u64, y: u64) -> f64 {
        let sigma2 = n as f64 / d as f64;
        let mu = sigma2 / t as f64;
        (-(y as f64 - mu).powi(2) / (2.0 * sigma2)).exp()
    }

    /// Independent 63-bit enclosure of `a(y)` straight from `exp_neg`.
    fn point(n: u128, d: u128, t: u64, y: u64) -> (u64, u64) {
        let (num, den) = gamma(&big(n), &big(d), t, y);
        let e = exact_exp::exp_neg(&num, &den, 63);
        (e.lo.to_u64().unwrap(), e.hi.to_u64().unwrap())
    }

    /// (n, d, t) for σ² = n/d.
    const CASES: [(u128, u128, u64); 7] = [
        (1, 1, 2),
        (1, 100, 1),
        (9, 100, 1),
        (49, 4, 4),
        (1369, 100, 4),
        (100, 1, 11),
        (1_000_000, 1, 1001),
    ];

    #[test]
    fn bounds_are_rigorous_and_tight() {
        for (n, d, t) in CASES {
            let table = AcceptanceTable::build(&big(n), &big(d), t, 63);
            assert_eq!(table.bucket_width(), 1);
            for (y, bounds) in table.buckets.iter().enumerate() {
                let (lo, hi) = point(n, d, t, y as u64);
                // The independent enclosure must meet [lo, hi], and the recurrence loses
                // at most a unit or two.
                assert!(bounds.lo <= hi && lo <= bounds.hi, "{n}/{d} y={y}");
                assert!(bounds.hi - bounds.lo <= 3, "{n}/{d} y={y}: {bounds:?}");
            }
            // Past the grid: the bound holds at the first magnitude and far out.
            let end = table.len() as u64;
            for y in [end, end + 1, 3 * end] {
                assert!(point(n, d, t, y).0 <= table.beyond, "{n}/{d} y={y}");
            }
            assert!(table.beyond <= 1 << (63 - CUT_BITS));
            // The grid reaches past μ + 5σ.
            let sigma = (n as f64 / d as f64).sqrt();
            assert!(
                end as f64 > sigma * sigma / t as f64 + 5.0 * sigma,
                "{n}/{d}"
            );
        }
    }

    #[test]
    fn wide_tables_use_buckets_that_bound_every_magnitude() {
        // σ = 10^4: t = 10 001, buckets of 4; σ² = 10^9/7 (σ ≈ 11 952): buckets of 4.
        for (n, d, t) in [
            (100_000_000u128, 1u128, 10_001u64),
            (1_000_000_000, 7, 11_953),
        ] {
            let table = AcceptanceTable::build(&big(n), &big(d), t, 63);
            assert!(table.len() <= MAX_BUCKETS);
            let b = table.bucket_width();
            assert!(b > 1, "{n}/{d}");
            let mut rng = ChaCha20Rng::seed_from_u64(5);
            for _ in 0..300 {
                let y = rng.next_u64() % (table.len() as u64 * b);
                let bounds = table.buckets[(y / b) as usize];
                let (lo, hi) = point(n, d, t, y);
                assert!(bounds.lo <= lo && hi <= bounds.hi, "{n}/{d} y={y}");
            }
            // Every magnitude of the bucket around the mode, and its neighbours.
            let mode = (n / d) as f64 / t as f64;
            let around = (mode as u64 / b).saturating_sub(1) * b;
            for y in around..around + 3 * b {
                let bounds = table.buckets[(y / b) as usize];
                let (lo, hi) = point(n, d, t, y);
                assert!(bounds.lo <= lo && hi <= bounds.hi, "{n}/{d} y={y}");
            }
            // Buckets are narrow: open comparisons are rare.
            let widest = table.buckets.iter().map(|b| b.hi - b.lo).max().unwrap();
            assert!((widest as f64) < 2f64.powi(63) * 1e-3, "{widest}");
        }
    }

    /// `P(open)` for one round: the proposal's law of `|Y|` against each bucket's gap.
    fn open_probability(table: &AcceptanceTable) -> f64 {
        let p = (-1.0 / table.t as f64).exp();
        let b = table.bucket_width();
        let gap = |y: u64| {
            let bounds = table
                .buckets
                .get((y / b) as usize)
                .copied()
                .unwrap_or(Bounds {
                    lo: 0,
                    hi: table.beyond,
                });
            (bounds.hi - bounds.lo) as f64 / 2f64.powi(63)
        };
        let mut total = (1.0 - p) / (1.0 + p) * gap(0);
        let mut y = 1;
        loop {
            let mass = 2.0 * (1.0 - p) / (1.0 + p) * p.powf(y as f64);
            if mass < 1e-30 {
                return total;
            }
            total += mass * gap(y);
            y += 1;
        }
    }

    #[test]
    fn open_comparisons_are_rare() {
        for (n, d, t) in [(1u128, 1u128, 2u64), (100, 1, 11), (1_000_000, 1, 1001)] {
            let table = AcceptanceTable::build(&big(n), &big(d), t, 63);
            // Mostly proposals beyond the grid, whose bound is 2^−24.
            let open = open_probability(&table);
            assert!(open < 1e-9, "{n}/{d}: {open:e}");
        }
        // Buckets of b magnitudes: about 0.4·b/σ, and b/σ < 2·7/2^15.
        for (n, d, t) in [
            (100_000_000u128, 1u128, 10_001u64),
            (1_000_000_000, 7, 11_953),
        ] {
            let table = AcceptanceTable::build(&big(n), &big(d), t, 63);
            let open = open_probability(&table);
            assert!(open < 2e-4, "{n}/{d}: {open:e}");
        }
    }

    #[test]
    fn table_sizes_stay_bounded() {
        // σ² = 10^18: the largest accepted; t = 10^9 + 1.
        let table = AcceptanceTable::build(&big(10u128.pow(18)), &big(1), 1_000_000_001, 63);
        assert!(table.len() <= MAX_BUCKETS, "{}", table.len());
        // Tiny σ: the grid is the anchors and a few steps.
        let table = AcceptanceTable::build(&big(1), &big(10u128.pow(18)), 1, 63);
        assert!(table.len() <= 3, "{}", table.len());
        // a(0) = exp(−σ²/2): 2^63·a(0) ≈ 2^63 − 4.6.
        assert!(
            table.buckets[0].lo >= (1 << 63) - 8,
            "{:?}",
            table.buckets[0]
        );
    }

    #[test]
    fn acceptance_frequencies_match_a_including_the_slow_path() {
        // Coarse tables send most draws to the exact comparison; the frequencies must not
        // move. Tolerance: 5 standard errors (false failure about 6e-7 per check).
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        for bits in [63, 3] {
            let (n, d, t) = (1369u128, 100u128, 4u64);
            let table = AcceptanceTable::build(&big(n), &big(d), t, bits);
            for y in [0u64, 2, 3, 5, 9] {
                let p = a_f64(n, d, t, y);
                let trials = 10_000;
                let hits = (0..trials).filter(|_| table.accepts(y, &mut rng)).count();
                let sd = (p * (1.0 - p) / trials as f64).sqrt();
                let freq = hits as f64 / trials as f64;
                assert!(
                    (freq - p).abs() <= 5.0 * sd + 1e-12,
                    "bits {bits} y={y}: {freq} vs {p}"
                );
            }
        }
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
    fn lazy_comparison_draws_digits_until_decided() {
        // W agrees with a(3) for σ² = 13.69 on its first 63 + 64·3 digits.
        let (num, den) = gamma(&big(1369), &big(100), 4, 3);
        let words = 3;
        let prec = 63 + 64 * words as u32;
        let truncated = exact_exp::exp_neg(&num, &den, prec + 64).lo >> 64u32;
        let digits = truncated.to_u64_digits();
        let first = digits[words];
        let mut script: Vec<u64> = digits[..words].iter().rev().copied().collect();
        let mut rng = Scripted(script.clone());
        assert!(exp_neg_exceeds(&num, &den, first, &mut rng));
        assert!(
            rng.0.is_empty(),
            "decided before reading the scripted digits"
        );
        // One unit more at the last scripted digit: W > a(3) (a(3) is not dyadic).
        *script.last_mut().unwrap() += 1;
        let mut rng = Scripted(script);
        assert!(!exp_neg_exceeds(&num, &den, first, &mut rng));
    }

    #[test]
    fn lazy_prefix_is_the_digits_in_order() {
        let mut rng = Scripted(vec![0xAAAA, 0xBBBB]);
        let mut u = LazyUniform::new(5);
        assert_eq!(u.prefix(0, &mut rng), big(5));
        assert_eq!(u.prefix(1, &mut rng), (big(5) << 64u32) + 0xAAAAu32);
        assert_eq!(
            u.prefix(2, &mut rng),
            (big(5) << 128u32) + (big(0xAAAA) << 64u32) + 0xBBBBu32
        );
    }
}
