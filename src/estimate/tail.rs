//! The cumulative histogram with an unattributed tail, `hc` + `tail` (coco's extension
//! of Kuo et al. §4.2–4.3).
//!
//! `Hc` is the right measurement where many groups share each size, but it is a poor
//! one for a few large groups spread over a long range of sizes (group quarters among
//! households): locating one group's step of height 1 in noise of variance `σ²` has an
//! error that grows like `σ²`, i.e. like `1/ε²`. The sorted sizes `Hg` locate each such
//! group with an error that grows like `1/ε`. This measurement takes each where it is
//! good, **at the same ε**: with a public threshold `L` (`above`) and a public number of
//! positions `m` (`groups`),
//!
//! * the head `Hc[0..L)` (cells `0..=L−1`: groups of size `≤ j` for `j < L`), and
//! * the tail: the `n = min(m, G)` largest of the sizes clamped below at `L`,
//!   `c(s) = max(min(s, K), L)`, in ascending order,
//!
//! each value with independent discrete Laplace noise of scale `1/ε`.
//!
//! **Sensitivity 1.** Moving one entity moves one group from size `s` to `s + 1` (or
//! back). That changes `Hc[s]` and nothing else of `Hc`, which is in the head exactly
//! when `s < L`. It changes the clamped size `c` exactly when `s + 1 > L` and `s < K`,
//! i.e. when `s ≥ L`, and then by one, which changes the sorted clamped sizes in one
//! position by one (Hay et al. Proposition 3), and their `n` largest by at most one
//! in total. The two cases are disjoint, so every move changes the whole vector by at
//! most one in L1 norm, and the head and the tail together cost one ε, not two.
//!
//! **Under ρ-zCDP** every cell gets discrete Gaussian noise of `σ² = 1/(2ρ)`. The two
//! cases above change the whole vector by one in one cell, so its L2 sensitivity is 1
//! too and the head and the tail together are ρ-zCDP (Canonne, Kamath and Steinke
//! 2020, Theorem 14), not 2ρ.
//!
//! **Post-processing.** The tail is fitted by bounded isotonic regression within
//! `[L, K]` (the `hg_fit`) and rounded: the estimated sizes of the listed groups. Those
//! above `L` give `Hc[j] = G − #{ŝ > j}` for every `j ≥ L`. The head is fitted like the
//! `hc` estimator, with its last cell fixed at that `Hc[L]`. If all `n < G` listed
//! sizes lie above `L` the tail is *saturated*: more groups may lie above `L` than were
//! listed, and the unlisted ones are put at `L` (raise `groups` to avoid it; the
//! estimate says so).
//!
//! # Formula
//! Head groups get the `hc` variance `2·Var/Ĥ[j]` (Kuo et al. §5.1.2); a tail block of
//! `S` pooled values gets `Var/S` (§5.1.1), `Var` the exact noise variance of one cell.
//! For the consistency step each listed group's step in `Hc` is modelled as located
//! with a Laplace error of that variance (scale `b = √(Var/2S)`), so cell `j` at
//! distance `d` from the step has variance `p(1 − p)` with `p = e^{−d/b}/2`.
//!
//! # Types
//! `L` is a size ([`Size`]) and `m` a number of groups ([`TailGroups`], from 1 to
//! [`MAX_GROUPS`]); a region's `G` is a [`Count`]. The two tail parameters cannot be
//! swapped (these examples are compiled by `cargo test`):
//!
//! ```
//! use coco::estimate::{Tail, TailGroups};
//!
//! let tail = Tail { above: 20, groups: TailGroups::new(1_000)?.into() };
//! assert_eq!(tail.max_positions(400, 10_000), 400); // min(m, G)
//! assert!(TailGroups::new(0).is_err());
//! # Ok::<(), coco::estimate::TailGroupsError>(())
//! ```
//!
//! A bare number is not a group count:
//!
//! ```compile_fail,E0308
//! let tail = coco::estimate::Tail { above: 20, groups: 1_000 };
//! ```
//!
//! nor is a group count a size, so `L` and `m` written the wrong way round are refused:
//!
//! ```compile_fail,E0308
//! use coco::estimate::{Tail, TailGroups};
//! use coco::histogram::Size;
//!
//! fn tail(above: Size, groups: TailGroups) -> Tail {
//!     Tail { above: groups, groups: above }
//! }
//! ```
//!
//! and a region's `G` and `K` have different types too, so a method's cost cannot be
//! asked with them swapped:
//!
//! ```compile_fail,E0308
//! use coco::estimate::Method;
//! use coco::histogram::{Count, Size};
//!
//! fn samples(method: Method, groups: Count, k: Size) -> u64 {
//!     method.noise_samples(k, groups)
//! }
//! ```
//!
//! # Citations
//! Kuo et al., PVLDB 2018, §4.2, §4.3, §5.1; Hay et al., PVLDB 2010, §3.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};
use thiserror::Error;

use super::{
    GroupRun, NodeEstimate, NodeFit, StepRun, add_noise, count_to_i64, cumulative, isotonic,
    noise_variance, unattributed,
};
use crate::histogram::{Count, CountOfCounts, HistRef, Size};
use crate::noise::{Noise, NoiseError, NoiseStream, Sensitivity};
use crate::privacy::Loss;

/// The sensitivity of the head and tail together (see the module documentation).
pub const SENSITIVITY: Sensitivity = Sensitivity::ONE;

/// A fitted tail block counts as groups above `L` only if it lies this many of its
/// standard deviations above `L`; otherwise it is taken as noise on groups at or below
/// `L` (most listed positions of a node with few large groups), whose isotonic fit
/// rises above `L` by chance.
pub const SIGNIFICANT: f64 = 5.0;

/// The most tail positions a level may ask for.
pub const MAX_GROUPS: u32 = 10_000_000;

/// `m`: how many of a region's largest groups a tail lists, a whole number from 1 to
/// [`MAX_GROUPS`]. A number of groups, not a size, so it cannot stand for `L` (or `L`
/// for it); made only by [`TailGroups::new`] (and the constants), and read back from a
/// plan, ledger line or manifest through the same check. It is written as the bare
/// number (`groups = 1000` in a plan, `"groups":1000` in JSON).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct TailGroups(u32);

/// A number of tail positions outside `1..=MAX_GROUPS`.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
#[error("a tail of {groups} groups: expected a whole number from 1 to {MAX_GROUPS}")]
pub struct TailGroupsError {
    /// The number refused.
    pub groups: u32,
}

impl TailGroups {
    /// The fewest: one group listed.
    pub const MIN: TailGroups = TailGroups(1);
    /// The most: [`MAX_GROUPS`].
    pub const MAX: TailGroups = TailGroups(MAX_GROUPS);
    /// [`Tail::DEFAULT`]'s: the 1,000 largest groups.
    pub const DEFAULT: TailGroups = TailGroups(1_000);

    /// `m` if it is from 1 to [`MAX_GROUPS`].
    pub const fn new(groups: u32) -> Result<TailGroups, TailGroupsError> {
        if groups >= 1 && groups <= MAX_GROUPS {
            Ok(TailGroups(groups))
        } else {
            Err(TailGroupsError { groups })
        }
    }

    /// A number of groups computed from public figures, raised to 1 or lowered to
    /// [`MAX_GROUPS`] if it lies outside the range.
    pub fn saturating(groups: u64) -> TailGroups {
        TailGroups(groups.clamp(1, u64::from(MAX_GROUPS)) as u32)
    }

    /// `m` as a number.
    pub const fn get(self) -> u32 {
        self.0
    }
}

impl TryFrom<u32> for TailGroups {
    type Error = TailGroupsError;

    fn try_from(groups: u32) -> Result<TailGroups, TailGroupsError> {
        TailGroups::new(groups)
    }
}

impl From<TailGroups> for u64 {
    fn from(groups: TailGroups) -> u64 {
        u64::from(groups.0)
    }
}

impl fmt::Display for TailGroups {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// The bare number, checked like [`TailGroups::new`]: every plan, ledger line and
/// manifest coco wrote holds one in range.
impl<'de> Deserialize<'de> for TailGroups {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TailGroups, D::Error> {
        TailGroups::new(u32::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

/// How many groups a tail lists: a number fixed in the plan, or `auto`, each region's
/// own number chosen from its measured head (see [`auto_rest`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TailLength {
    /// `m`: the `min(m, G)` largest groups of every region.
    Fixed(TailGroups),
    /// Sized from the region's noisy head, at no extra ε; where listing would cost
    /// more noise samples than measuring the rest of `Hc` does, the rest of `Hc`.
    Auto,
}

impl TailLength {
    /// The fixed `m`, if it is one.
    pub fn fixed(self) -> Option<TailGroups> {
        match self {
            TailLength::Fixed(m) => Some(m),
            TailLength::Auto => None,
        }
    }
}

impl From<TailGroups> for TailLength {
    fn from(m: TailGroups) -> TailLength {
        TailLength::Fixed(m)
    }
}

impl fmt::Display for TailLength {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TailLength::Fixed(m) => fmt::Display::fmt(m, f),
            TailLength::Auto => f.write_str("auto"),
        }
    }
}

/// `auto`, or a whole number from 1 to [`MAX_GROUPS`] (what `--tail-groups` and the TUI
/// take).
impl std::str::FromStr for TailLength {
    type Err = String;

    fn from_str(text: &str) -> Result<TailLength, String> {
        if text.trim() == "auto" {
            return Ok(TailLength::Auto);
        }
        text.trim()
            .parse::<u32>()
            .ok()
            .and_then(|n| TailGroups::new(n).ok())
            .map(TailLength::Fixed)
            .ok_or_else(|| format!("expected a whole number from 1 to {MAX_GROUPS} or \"auto\""))
    }
}

/// The bare number, or the string `"auto"`.
impl Serialize for TailLength {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            TailLength::Fixed(m) => m.serialize(serializer),
            TailLength::Auto => serializer.serialize_str("auto"),
        }
    }
}

impl<'de> Deserialize<'de> for TailLength {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TailLength, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Number(u32),
            Text(String),
        }
        match Wire::deserialize(deserializer)? {
            Wire::Number(n) => TailGroups::new(n)
                .map(TailLength::Fixed)
                .map_err(serde::de::Error::custom),
            Wire::Text(t) if t == "auto" => Ok(TailLength::Auto),
            Wire::Text(t) => Err(serde::de::Error::custom(format!(
                "tail groups {t:?}: expected a whole number from 1 to {MAX_GROUPS} or \"auto\""
            ))),
        }
    }
}

/// The public parameters of the tail: sizes below `above` are measured as `Hc`, groups
/// of size `above` or more as the sorted sizes of the `groups` largest groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Tail {
    /// `L`: the head covers sizes `0..L`, the tail sizes `≥ L` (clamped at `L`).
    pub above: Size,
    /// `m`: how many of the largest groups are listed.
    pub groups: TailLength,
}

impl Tail {
    /// What the TUI offers first: groups of size 20 or more listed (no household is larger; group
    /// quarters are), the 1,000 largest groups listed.
    pub const DEFAULT: Tail = Tail {
        above: 20,
        groups: TailLength::Fixed(TailGroups::DEFAULT),
    };

    /// coco's default: groups of size 20 or more listed, each region's tail sized from its own head.
    pub const AUTO: Tail = Tail {
        above: 20,
        groups: TailLength::Auto,
    };

    /// This tail with `above` lowered below `K` when `K` is known and not above it.
    pub fn below(self, k: Option<Size>) -> Tail {
        match k {
            Some(k) if self.above >= k => Tail {
                above: k.saturating_sub(1),
                ..self
            },
            _ => self,
        }
    }

    /// The most noise samples after the head a region with `groups` groups may cost
    /// under `K`: `min(m, G)` for a fixed `m`; for `auto`, `min(G, K + 1 − L)` (beyond
    /// that, the rest of `Hc` is measured instead, which costs `K + 1 − L`).
    pub fn max_positions(&self, groups: Count, k: Size) -> u64 {
        match self.groups {
            TailLength::Fixed(m) => groups.min(Count::from(m)),
            TailLength::Auto => groups.min(u64::from(k) + 1 - u64::from(self.above.min(k))),
        }
    }
}

/// What a tail measures after the head: the `n` largest clamped sizes, or (an `auto`
/// tail whose listing would cost more) the rest of the cumulative histogram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rest {
    /// The `n` largest sizes clamped at `L`, ascending.
    Top(usize),
    /// `Hc[L..=K]`.
    Cumulative,
}

/// The smallest `t ≥ 1` with `P[e ≥ t] ≤ 10⁻⁶` for the head's noise `e` at this loss,
/// so that an `auto` tail of `N̂ + t` positions runs out (saturates) with probability at
/// most `10⁻⁶` (see [`auto_rest`]).
///
/// # Formula
/// For a pure ε, the two-sided geometric with `p = e^{−ε}` has `P[e ≥ t] = p^t/(1 + p)`
/// for `t ≥ 1`, so `t = ⌈ln(1/(10⁻⁶ (1 + p)))/ε⌉`; for a ρ, the discrete Gaussian of
/// `σ² = 1/(2ρ)` has `P[e ≥ t] ≤ exp(−t²/(2σ²))`, so `t = ⌈σ·√(2 ln 10⁶)⌉`
/// ([`crate::noise::mechanism::upper_tail_margin`]).
pub fn auto_margin(loss: &Loss) -> u64 {
    const SATURATION: f64 = 1e-6;
    crate::noise::mechanism::upper_tail_margin(loss, SENSITIVITY, SATURATION)
}

/// What an `auto` tail measures after its noisy head (`head`, `L` cells) for a region
/// of `G` groups under `K`: a function of the noisy head and public values only.
///
/// The head's last cell estimates `Hc[L − 1]`, the groups of size below `L`, so
/// `N̂ = G − head[L − 1]` estimates the groups of size `L` or more (`G` when `L = 0`),
/// and `n = min(G, max(1, N̂ + t))` positions with the margin `t` of [`auto_margin`] list
/// them all except with probability `10⁻⁶`. If `n ≥ K + 1 − L` the rest of the
/// cumulative histogram, `K + 1 − L` cells, costs no more noise samples than the
/// listing, and is measured instead (dense large groups, such as taxis' trips).
///
/// # Privacy: no extra ε
/// Moving one entity moves one group from `s` to `s + 1`. If `s < L`, the head changes
/// in one cell by one, and neither possible rest changes: the sizes clamped at `L` do
/// not (both `s` and `s + 1 ≤ L` clamp to `L`), nor do `Hc[j]` for `j ≥ L` (the group
/// is `≤ j` before and after). If `s ≥ L`, the head does not change, and every possible
/// rest changes by at most one in L1 (one sorted clamped size by one, Hay et al.
/// Proposition 3; or the one cell `Hc[s]`, none at `s ≥ K`). So for neighbours `D`,
/// `D'` either the head's distribution is the same and, *for every choice the head may
/// lead to*, the rest's noisy vector has sensitivity 1; or every rest's distribution is
/// the same and the head has sensitivity 1. With independent noise of scale `1/ε` on
/// every cell, `P[M(D) = (h, r)] = P[H(D) = h] · P[R_{c(h)}(D) = r]`, and in either case
/// one factor is equal under `D` and `D'` and the other within `e^ε`: the whole output
/// is ε-differentially private, exactly as the head and a fixed tail together. The
/// choice `c(h)` reads only the noisy head and public `G`, `L`, `K`, ε (post-processing).
/// `tests/audit/main.rs` audits it, and catches a tail sized from the true head.
///
/// # Privacy under ρ-zCDP: no extra ρ
/// With discrete Gaussian noise of `σ² = 1/(2ρ)` on every cell the same two cases give
/// the bound in Rényi divergence, for every order `α > 1`. Write `P`, `Q` for the
/// output's distributions under `D`, `D′`; the output is `(h, r)` with `r` drawn from
/// `R_{c(h)}` after `h`. If `s < L`, the rest's conditional distribution given `h` is
/// the same under `D` and `D′`, so `D_α(P‖Q) = D_α(P_H‖Q_H) ≤ αρ` (the head's shift of
/// one cell by one has `Δ₂ = 1`). If `s ≥ L`, the head's distribution is the same and,
/// for every `h`, the rest's conditional shift has `Δ₂ ≤ 1`, so
/// `exp((α−1)·D_α(P‖Q)) = E_{h∼P_H}[exp((α−1)·D_α(P_{R|h}‖Q_{R|h}))] ≤ exp((α−1)αρ)`.
/// Either way `D_α(P‖Q) ≤ αρ` for every `α`: the whole output is ρ-zCDP, the adaptive
/// choice included (the adaptive composition of zCDP, Bun and Steinke 2016, Lemma 2.3,
/// in the special case where one of the two parts does not move). The margin `t` comes
/// from the Gaussian's tail ([`auto_margin`]).
pub fn auto_rest(head: &[i64], groups: Count, above: Size, k: Size, loss: &Loss) -> Rest {
    let g = i128::from(groups);
    let estimated = match head.last() {
        Some(&last) if above > 0 => g - i128::from(last),
        _ => g,
    };
    let margin = i128::from(auto_margin(loss));
    let n = (estimated.saturating_add(margin)).clamp(1, g.max(1)).min(g) as u64;
    let rest_cells = u64::from(k) + 1 - u64::from(above.min(k));
    if n >= rest_cells {
        Rest::Cumulative
    } else {
        Rest::Top(n as usize)
    }
}

/// The head `Hc[0..L)` (`L` cells). Confidential.
pub fn true_head<'a>(truth: impl Into<HistRef<'a>>, k: Size, tail: &Tail) -> Vec<i64> {
    let above = tail.above.min(k);
    cumulative::head_vector(truth.into(), k, above as usize)
}

/// The vector measured after the head for `rest`: the `n` largest sizes clamped at `L`
/// (ascending), or `Hc[L..=K]`. Confidential.
pub fn true_rest<'a>(
    truth: impl Into<HistRef<'a>>,
    groups: Count,
    k: Size,
    tail: &Tail,
    rest: Rest,
) -> Vec<i64> {
    let truth = truth.into();
    let above = tail.above.min(k);
    let n = match rest {
        Rest::Cumulative => {
            let all = cumulative::true_vector(truth, k);
            return all[above as usize..].to_vec();
        }
        Rest::Top(n) => n,
    };
    let runs: Vec<(Size, Count)> = unattributed::true_runs(truth, groups, k).collect();
    let mut top = Vec::with_capacity(n);
    'runs: for &(size, count) in runs.iter().rev() {
        let clamped = i64::from(size.max(above));
        for _ in 0..count {
            if top.len() == n {
                break 'runs;
            }
            top.push(clamped);
        }
    }
    // Fewer groups than positions only if the truth disagrees with the public G: pad
    // at `L` so that the shape depends on public values only.
    top.resize(n, i64::from(above));
    top.reverse();
    top
}

/// The head `Hc[0..L)` and the tail `n` largest clamped sizes (ascending) of a tail with
/// a fixed `m` (`n = min(m, G)`), the vectors [`measure`] adds noise to. Confidential.
///
/// # Panics
/// For an `auto` tail, whose second vector depends on the noisy head: use
/// [`true_head`] and [`true_rest`].
pub fn true_vectors<'a>(
    truth: impl Into<HistRef<'a>>,
    groups: Count,
    k: Size,
    tail: &Tail,
) -> (Vec<i64>, Vec<i64>) {
    let truth = truth.into();
    let m = tail
        .groups
        .fixed()
        .expect("an auto tail's second vector depends on its noisy head");
    let n = groups.min(Count::from(m)) as usize;
    (
        true_head(truth, k, tail),
        true_rest(truth, groups, k, tail, Rest::Top(n)),
    )
}

/// A tail's noisy measurement: the head, and what followed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoisyTail {
    pub head: Vec<i64>,
    pub rest: Vec<i64>,
    pub kind: Rest,
}

/// The head, then (chosen from the noisy head for an `auto` tail) the rest, each cell
/// with independent discrete Laplace noise of scale `1/ε`.
pub fn measure<'a>(
    truth: impl Into<HistRef<'a>>,
    groups: Count,
    k: Size,
    tail: &Tail,
    loss: &Loss,
    rng: &mut NoiseStream,
) -> Result<NoisyTail, NoiseError> {
    let truth = truth.into();
    let noise = Noise::for_loss(loss, SENSITIVITY)?;
    let mut head = true_head(truth, k, tail);
    add_noise(&mut head, &noise, rng);
    let kind = match tail.groups {
        TailLength::Fixed(m) => Rest::Top(groups.min(Count::from(m)) as usize),
        TailLength::Auto => auto_rest(&head, groups, tail.above.min(k), k, loss),
    };
    let mut rest = true_rest(truth, groups, k, tail, kind);
    add_noise(&mut rest, &noise, rng);
    Ok(NoisyTail { head, rest, kind })
}

/// `Ĥ`, `Ĥg` with variances, and the fit for the consistency step. Post-processing only.
pub fn estimate(
    head: &[i64],
    top: &[i64],
    groups: Count,
    k: Size,
    tail: &Tail,
    loss: &Loss,
    options: &super::EstimateOptions,
) -> NodeEstimate {
    let var = noise_variance(SENSITIVITY, loss);
    let above = tail.above.min(k);
    let g = count_to_i64(groups);
    // The tail: sizes within [L, K], rounded.
    let blocks = isotonic::fit(
        options.unattributed_fit,
        top,
        i64::from(above),
        i64::from(k),
    );
    let mut tail_runs: Vec<GroupRun> = Vec::new();
    let mut steps: Vec<StepRun> = Vec::new();
    for b in &blocks {
        // Within [L, K] after clipping and rounding.
        let size = b.rounded() as Size;
        let variance = var / b.len as f64;
        if size <= above || b.value() - f64::from(above) <= SIGNIFICANT * variance.sqrt() {
            continue;
        }
        tail_runs.push(GroupRun {
            size,
            count: b.len as Count,
            variance,
        });
        steps.push(StepRun {
            size,
            count: b.len as u32,
            spread: super::pooled_spread(&top[b.start..b.end()], var) as f32,
        });
    }
    let listed_above: Count = tail_runs.iter().map(|r| r.count).sum();
    let saturated = (top.len() as Count) < groups && listed_above == top.len() as Count;
    let at_l = g - count_to_i64(listed_above);
    // The head: Hc[0..L) fitted within [0, Hc[L]] with Hc[L] fixed (unclipped at 0
    // for the consistency step).
    let mut y = head.to_vec();
    y.push(at_l);
    let head_blocks = isotonic::fit_free_with_last(options.cumulative_fit, &y, at_l);
    let (mut pairs, mut runs) = cumulative::groups_of_fit(&head_blocks, at_l, var);
    for run in tail_runs {
        match pairs.last_mut() {
            Some(last) if last.0 == run.size => last.1 += run.count,
            _ => pairs.push((run.size, run.count)),
        }
        runs.push(run);
    }
    let histogram = CountOfCounts::from_pairs(pairs).expect("head sizes ≤ L < tail sizes");
    NodeEstimate {
        histogram,
        runs,
        fit: Some(NodeFit {
            head: NodeFit::head_from(&head_blocks, above as usize),
            from: above,
            steps,
            saturated,
            noise_variance: var,
            raw: if !options.keep_raw {
                Vec::new()
            } else {
                let mut raw = head.to_vec();
                let start = raw.len();
                raw.extend_from_slice(top);
                raw[start..].sort_unstable();
                raw
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::{EstimateOptions, IsotonicFit};

    fn eps(s: &str) -> Loss {
        Loss::Pure(crate::privacy::Epsilon::parse(s).unwrap())
    }

    fn m(groups: u32) -> TailLength {
        TailLength::Fixed(TailGroups::new(groups).unwrap())
    }

    #[test]
    fn tail_groups_are_checked_and_written_as_numbers() {
        assert_eq!(TailGroups::new(1), Ok(TailGroups::MIN));
        assert_eq!(TailGroups::new(MAX_GROUPS), Ok(TailGroups::MAX));
        for bad in [0, MAX_GROUPS + 1, u32::MAX] {
            assert_eq!(TailGroups::new(bad), Err(TailGroupsError { groups: bad }));
        }
        assert_eq!(
            TailGroups::new(0).unwrap_err().to_string(),
            "a tail of 0 groups: expected a whole number from 1 to 10000000"
        );
        assert_eq!(TailGroups::saturating(0), TailGroups::MIN);
        assert_eq!(TailGroups::saturating(1_220_000).get(), 1_220_000);
        assert_eq!(TailGroups::saturating(u64::MAX), TailGroups::MAX);
        assert_eq!(TailGroups::DEFAULT.to_string(), "1000");
        // The bare number in JSON, both ways; out of range is refused on reading.
        let json = serde_json::to_string(&Tail::DEFAULT).unwrap();
        assert_eq!(json, r#"{"above":20,"groups":1000}"#);
        assert_eq!(
            serde_json::from_str::<TailLength>("1000").unwrap(),
            m(1_000)
        );
        for bad in ["0", "10000001", "-1", "\"5\""] {
            assert!(serde_json::from_str::<TailGroups>(bad).is_err(), "{bad}");
            assert!(serde_json::from_str::<TailLength>(bad).is_err(), "{bad}");
        }
        // `auto` both ways.
        assert_eq!(
            serde_json::to_string(&Tail::AUTO).unwrap(),
            r#"{"above":20,"groups":"auto"}"#
        );
        assert_eq!(
            serde_json::from_str::<TailLength>("\"auto\"").unwrap(),
            TailLength::Auto
        );
        assert!(serde_json::from_str::<TailLength>("\"Auto\"").is_err());
    }

    #[test]
    fn true_vectors_split_at_l() {
        // Sizes: 1×0, 3×2, 1×7, 1×30, 1×12; K = 20, L = 5, m = 4.
        let h = CountOfCounts::from_pairs([(0, 1), (2, 3), (7, 1), (12, 1), (30, 1)]).unwrap();
        let tail = Tail {
            above: 5,
            groups: m(4),
        };
        let (head, top) = true_vectors(&h, 7, 20, &tail);
        assert_eq!(head, [1, 1, 4, 4, 4]);
        assert_eq!(top, [5, 7, 12, 20]);
        // More positions than groups: n = G.
        let (_, top) = true_vectors(
            &h,
            7,
            20,
            &Tail {
                above: 5,
                groups: m(100),
            },
        );
        assert_eq!(top, [5, 5, 5, 5, 7, 12, 20]);
    }

    #[test]
    fn noiseless_measurement_is_recovered() {
        let h = CountOfCounts::from_pairs([(0, 1), (2, 3), (7, 1), (12, 1), (20, 1)]).unwrap();
        for groups in [3, 4, 100] {
            let tail = Tail {
                above: 5,
                groups: m(groups),
            };
            let (head, top) = true_vectors(&h, 7, 20, &tail);
            for fit in [IsotonicFit::L1, IsotonicFit::L2] {
                let options = EstimateOptions {
                    cumulative_fit: fit,
                    unattributed_fit: fit,
                    ..EstimateOptions::default()
                };
                // ε = 40: a group 2 above L is far outside the significance margin.
                let est = estimate(&head, &top, 7, 20, &tail, &eps("40"), &options);
                assert_eq!(est.histogram, h, "m = {groups}");
                let f = est.fit.unwrap();
                assert_eq!(f.saturated, groups == 3);
                assert_eq!(f.tail_value(7, 5), 4.0);
                assert_eq!(f.tail_value(7, 12), 6.0);
                assert_eq!(f.tail_value(7, 20), 7.0);
            }
        }
    }

    #[test]
    fn saturated_tail_puts_unlisted_groups_at_l() {
        // Two groups above L = 5 but one position: the other is put at L.
        let h = CountOfCounts::from_pairs([(1, 2), (9, 1), (14, 1)]).unwrap();
        let tail = Tail {
            above: 5,
            groups: m(1),
        };
        let (head, top) = true_vectors(&h, 4, 20, &tail);
        assert_eq!(top, [14]);
        let est = estimate(
            &head,
            &top,
            4,
            20,
            &tail,
            &eps("40"),
            &EstimateOptions::default(),
        );
        assert_eq!(
            est.histogram,
            CountOfCounts::from_pairs([(1, 2), (5, 1), (14, 1)]).unwrap()
        );
        assert!(est.fit.unwrap().saturated);
    }

    #[test]
    fn groups_within_the_margin_are_put_at_l() {
        // ε = 1: Var ≈ 1.84, margin 5·√1.84 ≈ 6.8. A lone value 6 above L = 10 is
        // taken as noise on a group at or below L; one 40 above is a group.
        let est = estimate(
            &[0; 10],
            &[16, 50],
            2,
            100,
            &Tail {
                above: 10,
                groups: m(2),
            },
            &eps("1"),
            &EstimateOptions::default(),
        );
        assert_eq!(
            est.histogram,
            CountOfCounts::from_pairs([(10, 1), (50, 1)]).unwrap()
        );
    }

    #[test]
    fn every_group_is_estimated_within_bounds() {
        // Wild noise: still G groups, sizes within [0, K].
        let head = [-40, 90, -3, 17, 2];
        let top = [-100, 3, 400, 2];
        let est = estimate(
            &head,
            &top,
            6,
            50,
            &Tail {
                above: 5,
                groups: m(4),
            },
            &eps("1"),
            &EstimateOptions::default(),
        );
        assert_eq!(est.histogram.groups(), 6);
        assert!(est.histogram.max_size().unwrap_or(0) <= 50);
        assert_eq!(est.runs.iter().map(|r| r.count).sum::<Count>(), 6);
    }
}
