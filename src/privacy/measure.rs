//! Privacy measures: what a budget is a budget of.
//!
//! coco speaks two privacy definitions, chosen per plan:
//!
//! * **pure ε-differential privacy** ([`Pure`]; Dwork et al. 2006), with discrete
//!   Laplace noise: a budget is an ε, and budgets add up under composition;
//! * **ρ-zero-concentrated differential privacy** ([`Zcdp`]; Bun and Steinke 2016), with
//!   discrete Gaussian noise, the definition of the 2020 US Census's releases, Tumult
//!   Analytics and OpenDP's measures: a budget is a ρ, and budgets add up too.
//!
//! Both are [`Budget`](super::budget::Budget)s, exact rationals of one type generic over
//! the measure, so an ε and a ρ can be neither added nor compared. A [`Loss`] is one of
//! them; composing losses stays within a measure, and a pure ε joins a ρ account through
//! the exact conversion ε-DP ⇒ (ε²/2)-zCDP (Bun and Steinke 2016, Proposition 1.4).
//! For publication, a ρ is stated as (ε, δ)-DP at a given δ by the conversion of
//! Canonne, Kamath and Steinke 2020, Corollary 13 ([`epsilon_at_delta`]), for display
//! only: no decision of coco's accounting goes through it but an (ε, δ) cap, which
//! compares the conversion of an exact ρ with a margin that never lets a smaller ε
//! through.
//!
//! # Citations
//! Bun and Steinke, "Concentrated differential privacy: simplifications, extensions, and
//! lower bounds", TCC 2016; Canonne, Kamath and Steinke, "The discrete Gaussian for
//! differential privacy", NeurIPS 2020, Corollary 13; Abowd et al., "The 2020 Census
//! Disclosure Avoidance System TopDown Algorithm", HDSR 2022 (ρ per geographic level,
//! stated at δ = 10⁻¹⁰).

use std::fmt;

use num_bigint::BigUint;
use serde::{Deserialize, Serialize};

use super::budget::{Budget, BudgetError, Ratio, Unit};

/// An ε of pure differential privacy.
pub type Epsilon = Budget<Pure>;
/// A ρ of zero-concentrated differential privacy.
pub type Rho = Budget<Zcdp>;

/// A privacy measure: what a [`Budget`] of it means, and how it is written.
pub trait Measure: Unit {
    /// The definition this measure is.
    const DEFINITION: Definition;
}

/// Pure ε-differential privacy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pure;

/// ρ-zero-concentrated differential privacy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Zcdp;

impl Unit for Pure {
    const SYMBOL: &'static str = "ε";
    const NAME: &'static str = "epsilon";
    const TYPE_NAME: &'static str = "Epsilon";
}

impl Measure for Pure {
    const DEFINITION: Definition = Definition::Pure;
}

impl Unit for Zcdp {
    const SYMBOL: &'static str = "ρ";
    const NAME: &'static str = "rho";
    const TYPE_NAME: &'static str = "Rho";
}

impl Measure for Zcdp {
    const DEFINITION: Definition = Definition::Zcdp;
}

/// The privacy definition a plan, a release or a cap is stated in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Definition {
    /// Pure ε-DP with discrete Laplace noise (coco's default).
    #[default]
    Pure,
    /// ρ-zCDP with discrete Gaussian noise.
    Zcdp,
}

impl Definition {
    /// `ε` or `ρ`.
    pub fn symbol(self) -> &'static str {
        match self {
            Definition::Pure => Pure::SYMBOL,
            Definition::Zcdp => Zcdp::SYMBOL,
        }
    }

    /// `epsilon` or `rho`: the key of a budget in files.
    pub fn budget_name(self) -> &'static str {
        match self {
            Definition::Pure => Pure::NAME,
            Definition::Zcdp => Zcdp::NAME,
        }
    }

    /// `pure ε-DP` or `ρ-zCDP`, for people.
    pub fn describe(self) -> &'static str {
        match self {
            Definition::Pure => "pure ε-differential privacy",
            Definition::Zcdp => "ρ-zero-concentrated differential privacy",
        }
    }
}

impl fmt::Display for Definition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Definition::Pure => "pure",
            Definition::Zcdp => "zcdp",
        })
    }
}

/// A privacy loss: a pure ε or a ρ, exact.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Loss {
    Pure(Epsilon),
    Zcdp(Rho),
}

impl Loss {
    pub fn definition(&self) -> Definition {
        match self {
            Loss::Pure(_) => Definition::Pure,
            Loss::Zcdp(_) => Definition::Zcdp,
        }
    }

    /// The ρ of this loss: itself, or `ε²/2` for a pure ε (every ε-DP mechanism is
    /// (ε²/2)-zCDP, Bun and Steinke 2016, Proposition 1.4).
    pub fn to_rho(&self) -> Rho {
        match self {
            Loss::Pure(e) => rho_of_epsilon(e),
            Loss::Zcdp(r) => r.clone(),
        }
    }

    /// Composes two losses. Within a measure they add up exactly; a pure ε and a ρ
    /// compose as ρ, the ε converted exactly.
    pub fn compose(&self, other: &Loss) -> Loss {
        match (self, other) {
            (Loss::Pure(a), Loss::Pure(b)) => Loss::Pure(a.add(b)),
            (a, b) => Loss::Zcdp(a.to_rho().add(&b.to_rho())),
        }
    }

    /// A budget of `definition` with the value of `amount` (the plan's arithmetic: a
    /// total times a share is a budget of the total's measure).
    pub fn of<V: Unit>(definition: Definition, amount: &Budget<V>) -> Loss {
        match definition {
            Definition::Pure => Loss::Pure(amount.as_unit()),
            Definition::Zcdp => Loss::Zcdp(amount.as_unit()),
        }
    }

    /// Parses a budget of `definition` (`"1/2"`, `0.25`).
    pub fn parse(definition: Definition, text: &str) -> Result<Loss, BudgetError> {
        Ok(match definition {
            Definition::Pure => Loss::Pure(Epsilon::parse(text)?),
            Definition::Zcdp => Loss::Zcdp(Rho::parse(text)?),
        })
    }

    /// The value as a ratio, whatever the measure (for arithmetic that the caller puts
    /// back into the same measure with [`Loss::of`]).
    pub fn amount(&self) -> Ratio {
        match self {
            Loss::Pure(e) => e.as_unit(),
            Loss::Zcdp(r) => r.as_unit(),
        }
    }

    /// The ε of a pure loss.
    pub fn as_pure(&self) -> Option<&Epsilon> {
        match self {
            Loss::Pure(e) => Some(e),
            Loss::Zcdp(_) => None,
        }
    }

    /// The ρ of a zCDP loss (not a pure ε's conversion: see [`Loss::to_rho`]).
    pub fn as_zcdp(&self) -> Option<&Rho> {
        match self {
            Loss::Zcdp(r) => Some(r),
            Loss::Pure(_) => None,
        }
    }

    /// This loss times a positive factor, in the same measure.
    pub fn scaled<V: Unit>(&self, by: &Budget<V>) -> Loss {
        match self {
            Loss::Pure(e) => Loss::Pure(e.scaled(by)),
            Loss::Zcdp(r) => Loss::Zcdp(r.scaled(by)),
        }
    }

    /// The sum of two losses of one measure; `None` across measures (use
    /// [`Loss::compose`] to account them together).
    pub fn checked_add(&self, other: &Loss) -> Option<Loss> {
        match (self, other) {
            (Loss::Pure(a), Loss::Pure(b)) => Some(Loss::Pure(a.add(b))),
            (Loss::Zcdp(a), Loss::Zcdp(b)) => Some(Loss::Zcdp(a.add(b))),
            _ => None,
        }
    }

    /// The sum of losses of one measure; `None` if empty or if the measures differ.
    pub fn sum<'a>(parts: impl IntoIterator<Item = &'a Loss>) -> Option<Loss> {
        let mut parts = parts.into_iter();
        let first = parts.next()?.clone();
        parts.try_fold(first, |acc, l| acc.checked_add(l))
    }

    /// The exact text of the budget (`"1/2"`).
    pub fn exact(&self) -> String {
        match self {
            Loss::Pure(e) => e.to_string(),
            Loss::Zcdp(r) => r.to_string(),
        }
    }

    /// `ε = 1/2` or `ρ = 1/8`.
    pub fn labelled(&self) -> String {
        format!("{} = {}", self.definition().symbol(), self.exact())
    }

    /// An approximation, for display and post-processing only.
    pub fn to_f64(&self) -> f64 {
        match self {
            Loss::Pure(e) => e.to_f64(),
            Loss::Zcdp(r) => r.to_f64(),
        }
    }

    /// The ε of an (ε, δ)-DP statement of this loss at `delta` ([`epsilon_at_delta`];
    /// for a pure ε, the ε itself: it holds at δ = 0). Never smaller than the truth.
    pub fn epsilon_at(&self, delta: f64) -> f64 {
        match self {
            Loss::Pure(e) => e.to_f64(),
            Loss::Zcdp(r) => epsilon_at_delta(r, delta),
        }
    }
}

impl From<Epsilon> for Loss {
    fn from(e: Epsilon) -> Loss {
        Loss::Pure(e)
    }
}

impl From<&Epsilon> for Loss {
    fn from(e: &Epsilon) -> Loss {
        Loss::Pure(e.clone())
    }
}

impl From<Rho> for Loss {
    fn from(r: Rho) -> Loss {
        Loss::Zcdp(r)
    }
}

impl From<&Rho> for Loss {
    fn from(r: &Rho) -> Loss {
        Loss::Zcdp(r.clone())
    }
}

impl From<&Loss> for Loss {
    fn from(l: &Loss) -> Loss {
        l.clone()
    }
}

/// A loss is written as one key named by its measure: `{"epsilon": "1/2"}` or
/// `{"rho": "1/8"}`. Flattened into a record (`#[serde(flatten)]`), a pure loss writes
/// the `"epsilon"` field that record always had.
impl Serialize for Loss {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(1))?;
        match self {
            Loss::Pure(e) => map.serialize_entry(Pure::NAME, e)?,
            Loss::Zcdp(r) => map.serialize_entry(Zcdp::NAME, r)?,
        }
        map.end()
    }
}

impl fmt::Display for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.labelled())
    }
}

/// `ε²/2`, exactly: the ρ of an ε-DP mechanism.
pub fn rho_of_epsilon(epsilon: &Epsilon) -> Rho {
    let num: &BigUint = epsilon.numer();
    let den: &BigUint = epsilon.denom();
    Budget::from_parts(num * num, den * den * 2u32).expect("the square of a positive is positive")
}

/// The δ that the 2020 Census stated its ρ at, and coco's default: 10⁻¹⁰.
pub const DEFAULT_DELTA: f64 = 1e-10;

/// The least ε such that ρ-zCDP implies (ε, δ)-DP, by Canonne, Kamath and Steinke 2020,
/// Corollary 13: (ε, δ)-DP holds for every `α > 1` with
///
/// ```text
/// ε(α) = αρ + (ln(1/δ) + (α − 1)·ln(1 − 1/α) − ln α) / (α − 1),
/// ```
///
/// and the statement is the infimum over α. For display: computed in floating point,
/// the minimum searched by golden section on `ln(α − 1)`; every `α` gives a valid ε,
/// so a search that stops short of the minimum errs on the safe side, and the result is
/// raised by a relative `10⁻⁹` (far above the rounding of the few operations that
/// compute it) so that rounding never states an ε smaller than the truth. For
/// `δ ≥ 1` every ε holds: 0.
///
/// # Examples
/// The 2020 Census's production settings, ρ = 2.556 for persons at δ = 10⁻¹⁰, are
/// stated as ε = 17.14 (the DAS's published figure; `tests` checks two decimals).
pub fn epsilon_at_delta(rho: &Rho, delta: f64) -> f64 {
    let rho = rho.to_f64();
    if !(delta > 0.0) || delta >= 1.0 || rho <= 0.0 {
        return if delta >= 1.0 { 0.0 } else { f64::INFINITY };
    }
    let log_inv_delta = -delta.ln();
    // ε(α) with α = 1 + e^u, u = ln(α − 1): smooth and unimodal in u on the range that
    // matters.
    let eps = |u: f64| {
        let am1 = u.exp();
        let alpha = 1.0 + am1;
        alpha * rho + (log_inv_delta + am1 * (-1.0 / alpha).ln_1p() - alpha.ln()) / am1
    };
    // The minimiser lies near α ≈ 1 + √(ln(1/δ)/ρ); search widely around it.
    let (mut lo, mut hi) = (-30.0f64, 30.0f64);
    let phi = (5f64.sqrt() - 1.0) / 2.0;
    let mut a = hi - phi * (hi - lo);
    let mut b = lo + phi * (hi - lo);
    let (mut fa, mut fb) = (eps(a), eps(b));
    for _ in 0..200 {
        if fa <= fb {
            hi = b;
            b = a;
            fb = fa;
            a = hi - phi * (hi - lo);
            fa = eps(a);
        } else {
            lo = a;
            a = b;
            fa = fb;
            b = lo + phi * (hi - lo);
            fb = eps(b);
        }
    }
    // Any α gives a valid ε; the least of those evaluated, raised for rounding.
    let best = fa.min(fb);
    // The plain conversion ρ + 2√(ρ ln(1/δ)) (Bun and Steinke 2016, Proposition 1.3)
    // is valid too, and never better; the smaller of the two valid figures.
    let plain = rho + 2.0 * (rho * log_inv_delta).sqrt();
    best.min(plain) * (1.0 + 1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rho(s: &str) -> Rho {
        Rho::parse(s).unwrap()
    }

    fn eps(s: &str) -> Epsilon {
        Epsilon::parse(s).unwrap()
    }

    #[test]
    fn pure_epsilon_converts_to_rho_exactly() {
        assert_eq!(rho_of_epsilon(&eps("1")), rho("1/2"));
        assert_eq!(rho_of_epsilon(&eps("1/3")), rho("1/18"));
        assert_eq!(rho_of_epsilon(&eps("0.2")), rho("0.02"));
        assert_eq!(Loss::Pure(eps("2")).to_rho(), rho("2"));
    }

    #[test]
    fn composition_stays_within_a_measure_or_goes_through_rho() {
        let a = Loss::Pure(eps("1/4"));
        let b = Loss::Pure(eps("1/4"));
        assert_eq!(a.compose(&b), Loss::Pure(eps("1/2")));
        let r = Loss::Zcdp(rho("1/10"));
        // (1/4)²/2 = 1/32; + 1/10 = 21/160.
        assert_eq!(a.compose(&r), Loss::Zcdp(rho("21/160")));
        assert_eq!(r.compose(&a), Loss::Zcdp(rho("21/160")));
        assert_eq!(r.compose(&r), Loss::Zcdp(rho("1/5")));
    }

    #[test]
    fn the_census_figure_is_reproduced() {
        // The DAS's production persons budget: ρ = 2.556 → ε = 17.14 at δ = 10⁻¹⁰.
        let e = epsilon_at_delta(&rho("2.556"), 1e-10);
        assert!((e - 17.14).abs() < 0.005, "{e}");
        assert_eq!(format!("{e:.2}"), "17.14");
    }

    /// The conversion at α, for checking the search against a brute-force grid.
    fn at_alpha(rho: f64, delta: f64, alpha: f64) -> f64 {
        alpha * rho
            + ((1.0 / delta).ln() + (alpha - 1.0) * (1.0 - 1.0 / alpha).ln() - alpha.ln())
                / (alpha - 1.0)
    }

    /// The infimum over α of the conversion, by brute force: a coarse grid of α over
    /// (1, 10⁷], then a grid 10⁴ times finer around its best point (the function is
    /// smooth there, so the fine grid's minimum is within 10⁻¹³ of the infimum).
    fn brute_force_infimum(rho: f64, delta: f64) -> f64 {
        let u_of = |i: i32, step: f64, from: f64| from + f64::from(i) * step;
        let at_u = |u: f64| at_alpha(rho, delta, 1.0 + u.exp());
        let (step, from) = (1e-3, -25.0);
        let best = (0..41_000)
            .min_by(|&i, &j| at_u(u_of(i, step, from)).total_cmp(&at_u(u_of(j, step, from))))
            .unwrap();
        let centre = u_of(best, step, from);
        (-10_000..=10_000)
            .map(|i| at_u(centre + f64::from(i) * step * 1e-4))
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn the_conversion_is_just_above_its_infimum() {
        for r in ["0.001", "0.01", "1/8", "0.5", "1", "2.556", "10", "100"] {
            for delta in [1e-5, 1e-10, 1e-15] {
                let e = epsilon_at_delta(&rho(r), delta);
                let inf = brute_force_infimum(rho(r).to_f64(), delta);
                // Raised by 10⁻⁹ above the infimum: never below the truth, barely above.
                assert!(e >= inf * (1.0 + 5e-10), "ρ {r} δ {delta}: {e} vs {inf}");
                assert!(e <= inf * (1.0 + 2e-9), "ρ {r} δ {delta}: {e} vs {inf}");
            }
        }
    }

    #[test]
    fn larger_rho_or_smaller_delta_never_gives_a_smaller_epsilon() {
        let mut last = 0.0;
        for r in ["0.01", "0.1", "0.5", "1", "2", "5"] {
            let e = epsilon_at_delta(&rho(r), 1e-10);
            assert!(e > last);
            last = e;
            assert!(epsilon_at_delta(&rho(r), 1e-12) > e);
        }
    }

    #[test]
    fn budgets_of_two_measures_speak_their_own_symbol() {
        let e = Rho::parse("0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "ρ \"0\" is not positive: ρ must be greater than 0"
        );
        let e = Epsilon::parse("-1").unwrap_err();
        assert_eq!(
            e.to_string(),
            "ε \"-1\" is not positive: ε must be greater than 0"
        );
        assert_eq!(format!("{:?}", rho("1/2")), "Rho(1/2)");
        assert_eq!(Loss::Zcdp(rho("1/2")).labelled(), "ρ = 0.5");
    }
}
