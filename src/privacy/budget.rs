//! Privacy-loss budgets held as exact rationals: a pure-DP ε ([`Epsilon`](super::Epsilon)) or a
//! zero-concentrated-DP ρ ([`Rho`](super::Rho)), one type generic over its measure
//! ([`super::measure`]), so the two can never be added up or compared by mistake.
//!
//! A budget is written as a decimal (`0.25`, `1e-3`) or a fraction (`"1/3"`) and kept
//! as a reduced fraction of arbitrary-precision integers, so sums of level budgets and
//! the noise scale `Δ/ε` (or the variance `Δ²/2ρ`) are exact. Nothing about privacy
//! goes through floating point; [`Budget::to_f64`] exists for display and for
//! post-processing only.
//!
//! Accepted: decimals with at most 17 significant digits (what programs print for
//! 1/3: `0.3333333333333333`) and fractions whose numerator and denominator are at
//! most 10^18, in both cases with the reduced numerator and denominator at most 10^18.

use std::cmp::Ordering;
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};
use thiserror::Error;

/// The largest numerator or denominator accepted from text.
pub const MAX_TERM: u64 = 1_000_000_000_000_000_000;
/// The most significant digits accepted in a decimal.
pub const MAX_SIGNIFICANT_DIGITS: usize = 17;

/// What is wrong with a text that is not an acceptable budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetProblem {
    NotANumber,
    NotPositive,
    ZeroDenominator,
    TooManyDigits,
    OutOfRange,
}

/// Why a text is not an acceptable budget. Messages say what was found and what is
/// expected, with the measure's symbol (`ε "0" is not positive`).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{}", self.message())]
pub struct BudgetError {
    /// `ε` or `ρ`.
    pub symbol: &'static str,
    /// The text as given.
    pub text: String,
    pub problem: BudgetProblem,
}

impl BudgetError {
    fn message(&self) -> String {
        let BudgetError { symbol, text, .. } = self;
        match self.problem {
            BudgetProblem::NotANumber => format!(
                "{symbol} {text:?} is not a number: expected a decimal like 0.25 or a fraction like \"1/3\""
            ),
            BudgetProblem::NotPositive => {
                format!("{symbol} {text:?} is not positive: {symbol} must be greater than 0")
            }
            BudgetProblem::ZeroDenominator => format!(
                "{symbol} {text:?} has a zero denominator: expected a fraction like \"1/3\" with a positive denominator"
            ),
            BudgetProblem::TooManyDigits => format!(
                "{symbol} {text:?} has more than {MAX_SIGNIFICANT_DIGITS} significant digits: expected a shorter decimal, or a fraction like \"1/3\""
            ),
            BudgetProblem::OutOfRange => format!(
                "{symbol} {text:?} is out of range: numerator and denominator must be at most 10^18 ({symbol} between 1e-18 and 1e18)"
            ),
        }
    }
}

/// What an exact positive rational ([`Budget`]) counts: a privacy measure's loss, or a
/// plain factor (a ratio of budgets, a share of one), so that none can stand for another.
pub trait Unit: Clone + Copy + fmt::Debug + PartialEq + Eq + std::hash::Hash + 'static {
    /// Its symbol in text: `ε`, `ρ`, `ratio`, `share`.
    const SYMBOL: &'static str;
    /// Its name in files and flags: `epsilon`, `rho`, …
    const NAME: &'static str;
    /// The type's name in debug output.
    const TYPE_NAME: &'static str;
}

/// A ratio of one budget to another (the geometric allocation's ratio of a level's
/// budget to its parent's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RatioUnit;

/// A share of a total budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ShareUnit;

impl Unit for RatioUnit {
    const SYMBOL: &'static str = "ratio";
    const NAME: &'static str = "ratio";
    const TYPE_NAME: &'static str = "Ratio";
}

impl Unit for ShareUnit {
    const SYMBOL: &'static str = "share";
    const NAME: &'static str = "share";
    const TYPE_NAME: &'static str = "Share";
}

/// Why a text is not an acceptable ε (or ρ).
pub type EpsilonError = BudgetError;
/// A positive ratio of one budget to another, exact.
pub type Ratio = Budget<RatioUnit>;
/// A positive share of a total budget, exact.
pub type Share = Budget<ShareUnit>;

/// An exact positive rational counting `M`: a privacy-loss budget in a measure, or a
/// ratio or share of budgets.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Budget<M: Unit> {
    num: BigUint,
    den: BigUint,
    measure: PhantomData<M>,
}

impl<M: Unit> Budget<M> {
    /// `num/den`, reduced. `None` if either is zero.
    pub fn from_ratio(num: u64, den: u64) -> Option<Self> {
        Self::from_big(BigUint::from(num), BigUint::from(den))
    }

    /// `num/den` of any size, reduced. `None` if either is zero. For exact records (the
    /// ledger), which are not bounded like text typed by an operator.
    pub fn from_parts(num: BigUint, den: BigUint) -> Option<Self> {
        Self::from_big(num, den)
    }

    /// Parses a decimal or a fraction exactly, without the bounds on digits and terms
    /// that [`Epsilon::parse`] puts on what an operator types: for reading back exact
    /// texts written by coco itself (ledgers written before ε was recorded as a
    /// fraction), where a sum of bounded budgets may exceed those bounds.
    pub fn parse_unbounded(text: &str) -> Result<Self, BudgetError> {
        let err = |problem| Self::error(text, problem);
        let t = text.trim();
        let nan = || err(BudgetProblem::NotANumber);
        let (num, den) = match t.split_once('/') {
            Some((a, b)) => {
                let digits = |s: &str| {
                    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                        .then(|| BigUint::parse_bytes(s.as_bytes(), 10))
                        .flatten()
                };
                (
                    digits(a.trim()).ok_or_else(nan)?,
                    digits(b.trim()).ok_or_else(nan)?,
                )
            }
            None => {
                let (int, frac) = t.split_once('.').unwrap_or((t, ""));
                if (int.is_empty() && frac.is_empty())
                    || !int.bytes().all(|b| b.is_ascii_digit())
                    || !frac.bytes().all(|b| b.is_ascii_digit())
                    || frac.len() > 100_000
                {
                    return Err(nan());
                }
                let m =
                    BigUint::parse_bytes(format!("{int}{frac}").as_bytes(), 10).ok_or_else(nan)?;
                (m, BigUint::from(10u32).pow(frac.len() as u32))
            }
        };
        if den.is_zero() {
            return Err(err(BudgetProblem::ZeroDenominator));
        }
        Self::from_big(num, den).ok_or_else(|| err(BudgetProblem::NotPositive))
    }

    /// The error for `text`, in this measure's words.
    fn error(text: &str, problem: BudgetProblem) -> BudgetError {
        BudgetError {
            symbol: M::SYMBOL,
            text: text.to_string(),
            problem,
        }
    }

    fn from_big(num: BigUint, den: BigUint) -> Option<Self> {
        if num.is_zero() || den.is_zero() {
            return None;
        }
        let g = num.gcd(&den);
        Some(Budget {
            num: num / &g,
            den: den / g,
            measure: PhantomData,
        })
    }

    /// Numerator of the reduced fraction.
    pub fn numer(&self) -> &BigUint {
        &self.num
    }

    /// Denominator of the reduced fraction.
    pub fn denom(&self) -> &BigUint {
        &self.den
    }

    /// Exact sum (sequential composition adds budgets).
    pub fn add(&self, other: &Self) -> Self {
        Self::from_big(
            &self.num * &other.den + &other.num * &self.den,
            &self.den * &other.den,
        )
        .expect("a sum of positive budgets is positive")
    }

    /// Exact difference `self − other`, `None` unless it is positive.
    pub fn checked_sub(&self, other: &Self) -> Option<Self> {
        let a = &self.num * &other.den;
        let b = &other.num * &self.den;
        if a <= b {
            return None;
        }
        Self::from_big(a - b, &self.den * &other.den)
    }

    /// Exact product with a positive fraction `n/d`.
    pub fn mul_ratio(&self, n: u64, d: u64) -> Option<Self> {
        Self::from_big(&self.num * n, &self.den * d)
    }

    /// Exact product with a factor of another unit (a budget times a ratio or a
    /// share): a budget of this one.
    pub fn scaled<V: Unit>(&self, by: &Budget<V>) -> Self {
        Self::from_big(&self.num * &by.num, &self.den * &by.den)
            .expect("a product of positives is positive")
    }

    /// This value as a quantity of another unit (the share a part is of a whole).
    pub fn as_unit<V: Unit>(&self) -> Budget<V> {
        Budget {
            num: self.num.clone(),
            den: self.den.clone(),
            measure: PhantomData,
        }
    }

    /// Exact product.
    pub fn mul_big(&self, other: &Self) -> Self {
        Self::from_big(&self.num * &other.num, &self.den * &other.den)
            .expect("a product of positives is positive")
    }

    /// Exact quotient.
    pub fn div_big(&self, other: &Self) -> Self {
        Self::from_big(&self.num * &other.den, &self.den * &other.num)
            .expect("a quotient of positives is positive")
    }

    /// The largest decimal with at most `digits` significant digits that is ≤ `self`
    /// (`digits ≥ 1`); `None` only if that would be zero, which cannot happen.
    pub fn round_down_significant(&self, digits: u32) -> Self {
        let digits = digits.max(1);
        let ten = BigUint::from(10u32);
        // e = ⌊log10(self)⌋.
        let mut e: i64 = 0;
        if self.num >= self.den {
            let q = &self.num / &self.den;
            e = q.to_str_radix(10).len() as i64 - 1;
        } else {
            let mut scaled = self.num.clone();
            while scaled < self.den {
                scaled *= &ten;
                e -= 1;
            }
        }
        let shift = i64::from(digits) - 1 - e;
        let (num, den) = if shift >= 0 {
            let p = ten.pow(shift as u32);
            ((&self.num * &p) / &self.den, p)
        } else {
            let p = ten.pow((-shift) as u32);
            ((&self.num / (&self.den * &p)) * &p, BigUint::one())
        };
        Self::from_big(num, den).expect("rounding down keeps the leading digit")
    }

    /// ε for reading: its exact text when that has at most [`SHORT_DIGITS`]
    /// significant digits (`0.25`, `2`), else `≈` and [`SHORT_DIGITS`] significant
    /// digits rounded as `rounding` says (`≈2.834` for 8503/3000, `≈0.25` for
    /// 0.249999999999999975). The exact value stays in [`fmt::Display`].
    pub fn short(&self, rounding: Rounding) -> String {
        if let Some(exact) = self.exact_decimal() {
            // From the first nonzero digit to the last.
            let digits: String = exact.chars().filter(char::is_ascii_digit).collect();
            let significant = digits.trim_start_matches('0').trim_end_matches('0').len();
            let whole = !exact.contains('.') && exact.len() <= 2 * SHORT_DIGITS as usize;
            if significant <= SHORT_DIGITS as usize || whole {
                return exact;
            }
        }
        let ten = BigUint::from(10u32);
        // e = ⌊log10(self)⌋, as in `round_down_significant`.
        let mut e: i64 = 0;
        if self.num >= self.den {
            e = (&self.num / &self.den).to_str_radix(10).len() as i64 - 1;
        } else {
            let mut scaled = self.num.clone();
            while scaled < self.den {
                scaled *= &ten;
                e -= 1;
            }
        }
        // self × 10^shift has SHORT_DIGITS digits before the point.
        let shift = i64::from(SHORT_DIGITS) - 1 - e;
        let (num, den) = if shift >= 0 {
            (&self.num * ten.pow(shift as u32), self.den.clone())
        } else {
            (self.num.clone(), &self.den * ten.pow((-shift) as u32))
        };
        let (floor, rest) = num.div_rem(&den);
        let up = match rounding {
            Rounding::Down => false,
            Rounding::Up => !rest.is_zero(),
            Rounding::Nearest => &rest * 2u32 >= den,
        };
        let digits = if up { floor + 1u32 } else { floor };
        format!("≈{}", scaled_decimal(&digits, shift))
    }

    /// Whether both terms are at most 10^18 (what text may express and noise accepts).
    pub fn within_text_bounds(&self) -> bool {
        self.num <= BigUint::from(MAX_TERM) && self.den <= BigUint::from(MAX_TERM)
    }

    /// An approximation for display and post-processing (variance estimates). Never
    /// used between confidential data and a noisy measurement.
    pub fn to_f64(&self) -> f64 {
        // Scale so both fit comfortably in f64's exponent range.
        let shift = self.num.bits().max(self.den.bits()).saturating_sub(1000);
        let n = (&self.num >> shift).to_f64().unwrap_or(f64::INFINITY);
        let d = (&self.den >> shift).to_f64().unwrap_or(f64::INFINITY);
        n / d
    }

    /// The sum of several budgets; `None` for an empty list.
    pub fn sum<'a>(parts: impl IntoIterator<Item = &'a Self>) -> Option<Self>
    where
        M: 'a,
    {
        parts.into_iter().fold(None, |acc: Option<Self>, e| {
            Some(match acc {
                None => e.clone(),
                Some(a) => a.add(e),
            })
        })
    }

    /// Parses a decimal or a fraction; see the module documentation for the bounds.
    pub fn parse(text: &str) -> Result<Self, BudgetError> {
        let err = |problem| Self::error(text, problem);
        let t = text.trim();
        let err_nan = || err(BudgetProblem::NotANumber);
        let (num, den) = if let Some((a, b)) = t.split_once('/') {
            let (a, b) = (a.trim(), b.trim());
            let a = parse_term(a).map_err(err)?;
            let b = parse_term(b).map_err(err)?;
            if b.is_zero() {
                return Err(err(BudgetProblem::ZeroDenominator));
            }
            (a, b)
        } else {
            parse_decimal(t).map_err(err)?
        };
        if num.is_zero() {
            return Err(err(BudgetProblem::NotPositive));
        }
        let eps = Self::from_big(num, den).ok_or_else(err_nan)?;
        if !eps.within_text_bounds() {
            return Err(err(BudgetProblem::OutOfRange));
        }
        Ok(eps)
    }

    /// The shortest exact text: a decimal when the fraction terminates, else `a/b`.
    fn exact_decimal(&self) -> Option<String> {
        // den = 2^a 5^b terminates after max(a, b) digits.
        let two = BigUint::from(2u32);
        let five = BigUint::from(5u32);
        let mut d = self.den.clone();
        let (mut a, mut b) = (0u32, 0u32);
        while (&d % &two).is_zero() {
            d /= &two;
            a += 1;
        }
        while (&d % &five).is_zero() {
            d /= &five;
            b += 1;
        }
        if !d.is_one() {
            return None;
        }
        let digits = a.max(b);
        let scaled = &self.num * BigUint::from(10u32).pow(digits) / &self.den;
        let s = scaled.to_str_radix(10);
        if digits == 0 {
            return Some(s);
        }
        let digits = digits as usize;
        let padded = if s.len() <= digits {
            format!("{}{}", "0".repeat(digits + 1 - s.len()), s)
        } else {
            s
        };
        let (int, frac) = padded.split_at(padded.len() - digits);
        Some(format!("{int}.{frac}"))
    }
}

/// The most significant digits [`Budget::short`] shows.
pub const SHORT_DIGITS: u32 = 4;

/// Which way [`Budget::short`] may round a value it cannot show exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// To the nearest (a budget being planned).
    Nearest,
    /// Never below the value (ε spent: never shown as less than it is).
    Up,
    /// Never above the value (a cap, what is left: never shown as more than it is).
    Down,
}

/// `digits × 10^(−shift)` as a decimal without trailing zeros.
fn scaled_decimal(digits: &BigUint, shift: i64) -> String {
    let s = digits.to_str_radix(10);
    if shift <= 0 {
        return format!("{s}{}", "0".repeat((-shift) as usize));
    }
    let shift = shift as usize;
    let padded = if s.len() <= shift {
        format!("{}{s}", "0".repeat(shift + 1 - s.len()))
    } else {
        s
    };
    let (int, frac) = padded.split_at(padded.len() - shift);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    }
}

fn parse_term(s: &str) -> Result<BigUint, BudgetProblem> {
    if s.starts_with('-') {
        return Err(BudgetProblem::NotPositive);
    }
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(BudgetProblem::NotANumber);
    }
    let v = BigUint::parse_bytes(s.as_bytes(), 10).ok_or(BudgetProblem::NotANumber)?;
    if v > BigUint::from(MAX_TERM) {
        return Err(BudgetProblem::OutOfRange);
    }
    Ok(v)
}

/// `[digits][.digits][e[+-]digits]` → exact fraction.
fn parse_decimal(s: &str) -> Result<(BigUint, BigUint), BudgetProblem> {
    let nan = || BudgetProblem::NotANumber;
    let s = s.strip_prefix('+').unwrap_or(s);
    if let Some(magnitude) = s.strip_prefix('-') {
        // A negative number is still a number: say what is wrong with it.
        return match parse_decimal(magnitude) {
            Ok(_) => Err(BudgetProblem::NotPositive),
            Err(e) => Err(e),
        };
    }
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => {
            let e = &s[i + 1..];
            let e_digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if e_digits.is_empty()
                || e_digits.len() > 6
                || !e_digits.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(nan());
            }
            let v: i64 = e.parse().map_err(|_| nan())?;
            (&s[..i], v)
        }
        None => (s, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(nan());
    }
    let digits = format!("{int}{frac}");
    let significant = digits.trim_start_matches('0').trim_end_matches('0');
    if significant.len() > MAX_SIGNIFICANT_DIGITS {
        return Err(BudgetProblem::TooManyDigits);
    }
    let scale = exponent - frac.len() as i64;
    if scale.abs() > 400 {
        // Far outside 1e-18..1e18 whatever the digits: say so without building 10^huge.
        let value_is_zero = significant.is_empty();
        return Err(if value_is_zero {
            BudgetProblem::NotPositive
        } else {
            BudgetProblem::OutOfRange
        });
    }
    let m = BigUint::parse_bytes(digits.as_bytes(), 10).unwrap_or_default();
    let ten = BigUint::from(10u32);
    Ok(if scale >= 0 {
        (m * ten.pow(scale as u32), BigUint::one())
    } else {
        (m, ten.pow((-scale) as u32))
    })
}

impl<M: Unit> FromStr for Budget<M> {
    type Err = BudgetError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl<M: Unit> fmt::Display for Budget<M> {
    /// Exact: a decimal when the fraction terminates, else `a/b`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.exact_decimal() {
            Some(d) if d.len() <= 24 => f.write_str(&d),
            _ => write!(f, "{}/{}", self.num, self.den),
        }
    }
}

impl<M: Unit> fmt::Debug for Budget<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({}/{})", M::TYPE_NAME, self.num, self.den)
    }
}

impl<M: Unit> Ord for Budget<M> {
    fn cmp(&self, other: &Self) -> Ordering {
        (&self.num * &other.den).cmp(&(&other.num * &self.den))
    }
}

impl<M: Unit> PartialOrd for Budget<M> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<M: Unit> serde::Serialize for Budget<M> {
    /// As its exact text (`"0.25"`, `"1/3"`), so that manifests round-trip.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::privacy::Epsilon;

    fn e(s: &str) -> Epsilon {
        Epsilon::parse(s).unwrap()
    }

    #[test]
    fn short_decimals_read_at_a_glance_and_say_when_they_are_not_exact() {
        let short = |t: &str, r| Epsilon::parse_unbounded(t).unwrap().short(r);
        use Rounding::*;
        // Exact when short: as typed.
        assert_eq!(short("0.25", Nearest), "0.25");
        assert_eq!(short("1", Up), "1");
        assert_eq!(short("2000", Down), "2000");
        assert_eq!(short("0.001", Nearest), "0.001");
        assert_eq!(short("12.5", Nearest), "12.5");
        // Otherwise four significant digits, marked.
        assert_eq!(short("8503/3000", Nearest), "≈2.834");
        assert_eq!(short("0.249999999999999975", Nearest), "≈0.25");
        assert_eq!(short("1/3", Nearest), "≈0.3333");
        assert_eq!(short("2/3", Nearest), "≈0.6667");
        assert_eq!(short("12345.678", Nearest), "≈12350");
        assert_eq!(short("1/30000", Nearest), "≈0.00003333");
        // Spent rounds up and what is left rounds down: never less spent, never more
        // left, than there is.
        assert_eq!(short("0.249999999999999975", Up), "≈0.25");
        assert_eq!(short("0.249999999999999975", Down), "≈0.2499");
        assert_eq!(short("2/3", Down), "≈0.6666");
        assert_eq!(short("1/3", Up), "≈0.3334");
        assert_eq!(short("0.25000000001", Up), "≈0.2501");
        assert_eq!(short("0.25000000001", Down), "≈0.25");
        assert_eq!(short("9.99999", Up), "≈10");
        for t in ["1/7", "22/7", "8503/3000", "1e-5/3", "123456789/1000"] {
            let Ok(x) = Epsilon::parse_unbounded(t) else {
                continue;
            };
            let value = |s: String| Epsilon::parse_unbounded(s.trim_start_matches('≈')).unwrap();
            assert!(value(x.short(Up)) >= x, "{t}");
            assert!(value(x.short(Down)) <= x, "{t}");
        }
    }

    #[test]
    fn decimals_and_fractions_are_exact() {
        assert_eq!(e("0.25"), Epsilon::from_ratio(1, 4).unwrap());
        assert_eq!(e("1/3"), Epsilon::from_ratio(1, 3).unwrap());
        assert_eq!(e(" 2/6 "), e("1/3"));
        assert_eq!(e("1e-3"), Epsilon::from_ratio(1, 1000).unwrap());
        assert_eq!(e("2.5E2"), Epsilon::from_ratio(250, 1).unwrap());
        assert_eq!(e(".5"), e("0.5"));
        assert_eq!(e("5."), e("5"));
        assert_eq!(e("+0.5"), e("0.5"));
        assert_eq!(e("0.100000000000000000000000"), e("0.1"));
        let third = e("0.3333333333333333");
        assert_eq!(
            third,
            Epsilon::from_ratio(3333333333333333, 10_000_000_000_000_000).unwrap()
        );
        assert_ne!(third, e("1/3"));
        // 17 significant digits.
        assert_eq!(e("0.12345678901234567").to_string(), "0.12345678901234567");
        assert_eq!(
            e("1000000000000000000/999999999999999999").to_string(),
            "1000000000000000000/999999999999999999"
        );
    }

    #[test]
    fn sums_are_exact() {
        let total = Epsilon::sum([&e("0.1"), &e("0.2"), &e("0.7")]).unwrap();
        assert_eq!(total, e("1"));
        assert_eq!(e("1/3").add(&e("1/6")), e("0.5"));
        let big = Epsilon::sum([
            &e("1/999999999999999989"),
            &e("1/999999999999999967"),
            &e("1/999999999999999877"),
        ]);
        let big = big.unwrap();
        assert!(!big.within_text_bounds());
        assert!(big > Epsilon::from_ratio(29, 10_000_000_000_000_000_000).unwrap());
        assert!(big < Epsilon::from_ratio(31, 10_000_000_000_000_000_000).unwrap());
        assert_eq!(e("1").checked_sub(&e("0.25")), Some(e("0.75")));
        assert_eq!(e("0.25").checked_sub(&e("0.25")), None);
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "0.25",
            "1/3",
            "1",
            "0.000001",
            "12.5",
            "2/7",
            "1000000000000000000",
            "0.000000000000000001",
        ] {
            assert_eq!(e(s).to_string(), s);
            assert_eq!(e(&e(s).to_string()), e(s));
        }
        assert_eq!(e("1/8").to_string(), "0.125");
    }

    #[test]
    fn rejects_bad_text() {
        use BudgetProblem::*;
        let err = |s: &str| Epsilon::parse(s).unwrap_err().problem;
        assert!(err("0") == NotPositive);
        assert!(err("0.0") == NotPositive);
        assert!(err("-0.5") == NotPositive);
        assert!(err("-1/2") == NotPositive);
        assert!(err("0/5") == NotPositive);
        assert!(err("1/0") == ZeroDenominator);
        for s in [
            "inf", "NaN", "nan", "-inf", "", "abc", "1/x", "1.2.3", "1e", "e5", "0x10", "1/2/3",
            "1 2",
        ] {
            assert!(err(s) == NotANumber, "{s}");
        }
        assert!(err("1e-300") == OutOfRange);
        assert!(err("1e300") == OutOfRange);
        assert!(err("1e-19") == OutOfRange);
        assert!(err("1/1000000000000000001") == OutOfRange);
        assert!(err("0.123456789012345678") == TooManyDigits);
        assert!(err("0e999999999") == NotANumber);
    }

    #[test]
    fn rounding_down() {
        assert_eq!(e("1/7").round_down_significant(3).to_string(), "0.142");
        assert_eq!(e("22/7").round_down_significant(2).to_string(), "3.1");
        assert_eq!(e("123456").round_down_significant(2).to_string(), "120000");
        assert_eq!(e("0.5").round_down_significant(6), e("0.5"));
        assert_eq!(e("1/3").mul_big(&e("3")), e("1"));
        assert_eq!(e("1/3").div_big(&e("2/3")), e("0.5"));
    }

    #[test]
    fn ordering() {
        assert!(e("1/3") > e("0.3333333333333333"));
        assert!(e("0.1") < e("1/9"));
        assert!((e("1/3").to_f64() - 1.0 / 3.0).abs() < 1e-15);
    }
}
