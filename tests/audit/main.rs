//! Empirical privacy audit: lower bounds on the privacy loss of every mechanism, from
//! output frequencies, which must not exceed the ε the mechanism claims.
//!
//! # Method
//! A mechanism `M` is ε-differentially private when, for neighbouring datasets `D`,
//! `D'` and every event `E`, `P[M(D) ∈ E] ≤ e^ε · P[M(D') ∈ E]` (Kuo et al.
//! Definition 1; here `D'` is `D` with one entity added to one of its groups). The audit
//! runs `M` `n` times on each of `D` and `D'` with independent noise, counts how often
//! `E` happens (`k` and `k'`), and bounds both probabilities with exact binomial
//! (Clopper–Pearson) intervals at one-sided level `β`: `p ≥ p_lower(k)` and
//! `p' ≤ p'_upper(k')`, each except with probability at most `β`. Then
//! `ε_lower = ln(p_lower / p'_upper)` is below the true privacy loss of `E`, hence below
//! ε for a correct mechanism, except with probability at most `2β`. Each such
//! comparison (an event and a direction, `D` over `D'` or `D'` over `D`) is a *claim*.
//!
//! Events are fixed before the sample that tests them is drawn:
//! * single-node measurements (`Hc`, `Hg`, naive, and the noisy maximum that sets `K`):
//!   from the exact vectors before noise ([`estimate::true_vector`]), the conjunction,
//!   over the cells where `D` and `D'` differ, of "the noisy cell is at least (at most)
//!   the value under `D'`". For a correct mechanism its privacy loss is exactly
//!   `ε·‖v − v'‖₁/Δ = ε`, so the audit is tight: `ε_lower` comes within a few hundredths
//!   of ε. A sensitivity larger than claimed, or noise of too small a scale, shows as
//!   `ε_lower > ε`.
//! * a tail sized from its own noisy head (`groups = "auto"`), whose second part (the
//!   listed sizes or the rest of `Hc`) is chosen from the noisy head: the output is read
//!   as the noisy head and one statistic that moves towards `D'` by one in either kind,
//!   on datasets where both kinds occur often (tight, like the single-node claims); a
//!   companion that sizes the tail from the *true* head must be caught.
//! * whole releases ([`run::draw`] with `topdown`, `wls`, `wls` with a tail, and `wls`
//!   with a privately estimated `K`): chosen on a separate pilot sample among thresholds
//!   on every released count and cumulative count of every region, on *joint* features
//!   over two regions (the difference and the sum of the same count in two regions: a
//!   noise stream shared across regions cancels in a difference) and on the released
//!   `K`, so the choice does not bias the test sample. A companion gives every region
//!   the same stream (the bug in the paper's own code) and must be caught; another test
//!   checks that every node of a real release draws its own stream. Changing the one
//!   line in `src/release/run.rs` that names each node's stream to share one stream
//!   fails `whole_releases_stay_within_epsilon` (ε_lower ≈ 4 against ε = 1), the
//!   own-stream test and `the_spelled_out_release_is_run_draw`.
//!
//! The zCDP path (discrete Gaussian noise, whose claim is a curve of (ε, δ) rather than
//! one ε) is audited in [`zcdp`], against the exact hockey-stick curve of its noise.
//!
//! # False-failure rate
//! Every claim uses `β = ALPHA_PER_CLAIM / 2` per bound, and the tests that run by
//! default (here and in [`zcdp`]) make at most [`MAX_CLAIMS`] claims (checked by
//! `claims_fit_the_budget`), so by the union bound a correct implementation fails this
//! file with probability at most `MAX_CLAIMS · ALPHA_PER_CLAIM = 10⁻⁶`. The probability
//! is over the choice of the seeds: the seeds are fixed, so the outcome is
//! deterministic, and the statement is that a seed chosen at random would fail with at
//! most that probability (ChaCha20 streams stand in for independent randomness). The
//! companion tests (`*_catches_*`) show the audit is not vacuous: deliberately broken
//! mechanisms give `ε_lower > ε`. Their sample sizes put the expected `ε_lower` more
//! than 10 standard deviations above ε, so they miss with negligible probability too.
//!
//! The long version (`long_audit`, ignored by default) repeats every claim with 20
//! times the samples, at the same rate:
//! `cargo test --release --test audit -- --ignored --nocapture` (about 100 s once built).
//!
//! # Citations
//! * Kuo et al., "Differentially Private Hierarchical Count-of-Counts Histograms",
//!   PVLDB 11(11), 2018, Definition 1 (neighbours: one entity).
//! * Clopper, Pearson, "The use of confidence or fiducial limits illustrated in the
//!   case of the binomial", Biometrika 26(4), 1934.
//! * Jagielski, Ullman, Oprea, "Auditing Differentially Private Machine Learning: How
//!   Private is Private SGD?", NeurIPS 2020 (ε lower bounds from Clopper–Pearson).
//! * Ding, Wang, Wang, Zhang, Kifer, "Detecting Violations of Differential Privacy",
//!   CCS 2018 (events chosen on a separate sample).

use coco::wire::Named;
use std::path::{Path, PathBuf};

use coco::consistency::Consistency;
use coco::data::{Dataset, GroupsForm, Hierarchy, NodeId};
use coco::estimate::{self, Method, Noisy, Tail, TailGroups, TailLength, max_size};
use coco::histogram::{CountOfCounts, Histograms, Size};
use coco::noise::{DiscreteLaplace, NoiseSource, Purpose, Subkey};
use coco::privacy::{Diagnostic, Epsilon};
use coco::release::pipeline::draw as run;
use coco::release::plan::MaxSize;
use coco::release::plan::ReleasePlan;
use rayon::prelude::*;

/// The false-failure rate of this file, over the seeds.
const FALSE_FAILURE_RATE: f64 = 1e-6;
/// The most claims the default tests may make.
const MAX_CLAIMS: usize = 100;
/// The probability that one claim fails for a correct mechanism.
const ALPHA_PER_CLAIM: f64 = FALSE_FAILURE_RATE / MAX_CLAIMS as f64;

/// Samples per dataset for single-node claims.
const NODE_SAMPLES: u64 = 200_000;
/// Samples per dataset for whole-release claims, and for choosing their events.
const RELEASE_SAMPLES: u64 = 40_000;
const PILOT_SAMPLES: u64 = 10_000;
/// Events tested per release scenario.
const RELEASE_CLAIMS: usize = 3;
/// The long version multiplies every sample size by this.
const LONG_FACTOR: u64 = 20;

/// Exact binomial tails and Clopper–Pearson bounds, in log space.
mod measurements;

/// The zCDP audit: the discrete Gaussian path against its exact privacy profile.
mod zcdp;

mod stats {
    /// `ln n!`: summed for small `n`, else Stirling's series (error below `1/(1680 n⁷)`).
    pub fn ln_factorial(n: u64) -> f64 {
        if n < 256 {
            return (2..=n).map(|i| (i as f64).ln()).sum();
        }
        let x = n as f64;
        x * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI * x).ln() + 1.0 / (12.0 * x)
            - 1.0 / (360.0 * x.powi(3))
            + 1.0 / (1260.0 * x.powi(5))
    }

    fn ln_pmf(n: u64, i: u64, ln_p: f64, ln_q: f64) -> f64 {
        let mut t = ln_factorial(n) - ln_factorial(i) - ln_factorial(n - i);
        // 0 · ln 0 = 0: the boundary terms of p = 0 or p = 1.
        if i > 0 {
            t += i as f64 * ln_p;
        }
        if i < n {
            t += (n - i) as f64 * ln_q;
        }
        t
    }

    /// `Σ exp(ln_pmf(i))` over `range`, stopping once the terms have fallen `e^60` below
    /// the largest (the pmf is unimodal, so the rest is negligible).
    fn sum_terms(n: u64, p: f64, range: impl Iterator<Item = u64>) -> f64 {
        let (ln_p, ln_q) = (p.ln(), (-p).ln_1p());
        let mut max = f64::NEG_INFINITY;
        let mut sum = 0.0;
        for i in range {
            let t = ln_pmf(n, i, ln_p, ln_q);
            if t > max {
                sum = sum * (max - t).exp() + 1.0;
                max = t;
            } else {
                sum += (t - max).exp();
                if t < max - 60.0 {
                    break;
                }
            }
        }
        if max == f64::NEG_INFINITY {
            0.0
        } else {
            sum * max.exp()
        }
    }

    /// `P(X ≥ k)` for `X ~ Bin(n, p)`.
    pub fn upper_tail(n: u64, k: u64, p: f64) -> f64 {
        sum_terms(n, p, k..=n)
    }

    /// `P(X ≤ k)` for `X ~ Bin(n, p)`.
    pub fn lower_tail(n: u64, k: u64, p: f64) -> f64 {
        sum_terms(n, p, (0..=k).rev())
    }

    /// The exact one-sided Clopper–Pearson bounds at level `beta` each: `lower` is the
    /// largest `p` with `P(X ≥ k) ≤ beta`, `upper` the smallest with `P(X ≤ k) ≤ beta`.
    /// Bisection returns the conservative end of its last interval.
    ///
    /// # Formula
    /// `lower = B⁻¹(β; k, n − k + 1)`, `upper = B⁻¹(1 − β; k + 1, n − k)` (quantiles of
    /// Beta distributions), with `lower = 0` at `k = 0` and `upper = 1` at `k = n`.
    pub fn clopper_pearson(k: u64, n: u64, beta: f64) -> (f64, f64) {
        // `above(p)`: `p` is at or above the bound sought.
        let bisect = |above: &dyn Fn(f64) -> bool| {
            let (mut lo, mut hi) = (0.0f64, 1.0f64);
            for _ in 0..200 {
                let mid = 0.5 * (lo + hi);
                if above(mid) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            (lo, hi)
        };
        let lower = if k == 0 {
            0.0
        } else {
            bisect(&|p| upper_tail(n, k, p) > beta).0
        };
        let upper = if k == n {
            1.0
        } else {
            bisect(&|p| lower_tail(n, k, p) <= beta).1
        };
        (lower, upper)
    }
}

/// A condition on one output coordinate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cond {
    AtLeast(i64),
    AtMost(i64),
}

/// A conjunction of conditions on output coordinates.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Event(Vec<(usize, Cond)>);

impl Event {
    fn holds(&self, out: &[i64]) -> bool {
        self.0.iter().all(|&(i, c)| match c {
            Cond::AtLeast(t) => out[i] >= t,
            Cond::AtMost(t) => out[i] <= t,
        })
    }
}

/// Which dataset's probability is the numerator of a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Over {
    /// `ln(P[M(D') ∈ E] / P[M(D) ∈ E]) ≤ ε`.
    Neighbour,
    /// `ln(P[M(D) ∈ E] / P[M(D') ∈ E]) ≤ ε`.
    Original,
}

#[derive(Clone, Debug)]
struct Claim {
    event: Event,
    over: Over,
    /// For messages.
    label: String,
}

/// A mechanism: one run with the noise of `source`, its output as integers.
type Mechanism<'a> = dyn Fn(&NoiseSource) -> Vec<i64> + Sync + 'a;

/// The noise of trial `i` under `seed`: independent across trials and seeds.
fn trial_source(seed: u64, i: u64) -> NoiseSource {
    NoiseSource::seeded(seed).derive(Subkey::Test(i as u32))
}

/// How often each event happens in `n` runs.
fn counts(mech: &Mechanism<'_>, n: u64, seed: u64, events: &[&Event]) -> Vec<u64> {
    (0..n)
        .into_par_iter()
        .map(|i| {
            let out = mech(&trial_source(seed, i));
            events.iter().map(|e| u64::from(e.holds(&out))).collect()
        })
        .reduce(
            || vec![0; events.len()],
            |a: Vec<u64>, b| a.iter().zip(&b).map(|(x, y)| x + y).collect(),
        )
}

/// The outputs of `n` runs (pilot samples).
fn outputs(mech: &Mechanism<'_>, n: u64, seed: u64) -> Vec<Vec<i64>> {
    (0..n)
        .into_par_iter()
        .map(|i| mech(&trial_source(seed, i)))
        .collect()
}

/// `ln(p_lower(k_num) / p_upper(k_den))` at `β` per bound; `−∞` when `k_num = 0`.
fn epsilon_lower(k_num: u64, k_den: u64, n: u64, beta: f64) -> f64 {
    let (lower, _) = stats::clopper_pearson(k_num, n, beta);
    let (_, upper) = stats::clopper_pearson(k_den, n, beta);
    (lower / upper).ln()
}

/// One claim's outcome.
#[derive(Debug)]
struct Outcome {
    label: String,
    k_num: u64,
    k_den: u64,
    n: u64,
    epsilon_lower: f64,
}

/// Runs the mechanism `n` times on each dataset and bounds every claim's privacy loss.
/// Seeds: `seed` for `D`, `seed + 1` for `D'`.
fn audit(
    on_d: &Mechanism<'_>,
    on_d_prime: &Mechanism<'_>,
    claims: &[Claim],
    n: u64,
    seed: u64,
) -> Vec<Outcome> {
    let events: Vec<&Event> = claims.iter().map(|c| &c.event).collect();
    let k = counts(on_d, n, seed, &events);
    let k_prime = counts(on_d_prime, n, seed + 1, &events);
    let beta = ALPHA_PER_CLAIM / 2.0;
    claims
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (k_num, k_den) = match c.over {
                Over::Neighbour => (k_prime[i], k[i]),
                Over::Original => (k[i], k_prime[i]),
            };
            Outcome {
                label: c.label.clone(),
                k_num,
                k_den,
                n,
                epsilon_lower: epsilon_lower(k_num, k_den, n, beta),
            }
        })
        .collect()
}

fn report(title: &str, epsilon: f64, outcomes: &[Outcome]) {
    eprintln!("{title} (ε = {epsilon}):");
    for o in outcomes {
        eprintln!(
            "  {:<48} {:>7}/{} vs {:>7}/{}  ε_lower = {:.4}",
            o.label, o.k_num, o.n, o.k_den, o.n, o.epsilon_lower
        );
    }
}

fn assert_private(title: &str, epsilon: &Epsilon, outcomes: &[Outcome]) {
    let eps = epsilon.to_f64();
    report(title, eps, outcomes);
    for o in outcomes {
        assert!(
            o.epsilon_lower <= eps,
            "{title}: {} gives ε_lower = {} > ε = {eps} ({}/{} vs {}/{})",
            o.label,
            o.epsilon_lower,
            o.k_num,
            o.n,
            o.k_den,
            o.n
        );
    }
}

fn assert_caught(title: &str, epsilon: &Epsilon, outcomes: &[Outcome]) {
    let eps = epsilon.to_f64();
    report(title, eps, outcomes);
    let best = outcomes
        .iter()
        .map(|o| o.epsilon_lower)
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(
        best > eps,
        "{title}: the broken mechanism was not caught (best ε_lower = {best} ≤ ε = {eps})"
    );
}

fn eps(s: &str) -> Epsilon {
    Epsilon::parse(s).unwrap()
}

// ---------------------------------------------------------------------------------
// Single-node measurements.

/// One single-node scenario: a node's group sizes under `D`, and the group that gains
/// an entity in `D'`.
#[derive(Clone, Debug)]
struct NodeCase {
    name: &'static str,
    method: Method,
    epsilon: &'static str,
    k: Size,
    sizes: &'static [Size],
    /// Index into `sizes` of the group that gains an entity.
    grows: usize,
}

impl NodeCase {
    fn truths(&self) -> (CountOfCounts, CountOfCounts) {
        let mut grown = self.sizes.to_vec();
        grown[self.grows] += 1;
        (
            CountOfCounts::from_sizes(self.sizes.iter().copied()),
            CountOfCounts::from_sizes(grown),
        )
    }
}

/// The single-node scenarios: a group growing inside the range, a group growing onto
/// the top-coding bound `K`, and an empty group gaining its first entity, for each
/// method (with an ε that is not a whole number for `Hg`).
fn node_cases() -> Vec<NodeCase> {
    let mut cases = Vec::new();
    // The tail (sizes above 2, the 2 largest groups listed): the first case grows a
    // group in the head, the second one in the tail, the third at the head's first cell.
    let tail = Method::HcTail(Tail {
        above: 2,
        groups: TailLength::Fixed(TailGroups::new(2).unwrap()),
    });
    for (method, epsilon) in [
        (Method::Hc, "1"),
        (Method::Hg, "1/2"),
        (Method::Naive, "1"),
        (tail, "1"),
    ] {
        cases.push(NodeCase {
            name: "a group of size 1 grows to 2",
            method,
            epsilon,
            k: 4,
            sizes: &[0, 1, 1, 2, 3],
            grows: 2,
        });
        cases.push(NodeCase {
            name: "a group of size 3 grows to K = 4",
            method,
            epsilon,
            k: 4,
            sizes: &[1, 3, 3, 6],
            grows: 1,
        });
        cases.push(NodeCase {
            name: "an empty group gains an entity",
            method,
            epsilon,
            k: 4,
            sizes: &[0, 0, 2],
            grows: 1,
        });
    }
    // At the boundary: a group of size L grows to L + 1 (the tail changes, the head
    // does not), and one of size L − 1 grows to L (the head changes, the tail does not).
    cases.push(NodeCase {
        name: "a group of size L = 2 grows to 3",
        method: tail,
        epsilon: "1",
        k: 4,
        sizes: &[1, 2, 2, 3],
        grows: 1,
    });
    cases.push(NodeCase {
        name: "a group of size L − 1 = 1 grows to L",
        method: tail,
        epsilon: "1",
        k: 4,
        sizes: &[1, 1, 3, 4],
        grows: 0,
    });
    cases
}

/// The measured vector as integers.
fn noisy_vector(noisy: Noisy) -> Vec<i64> {
    match noisy {
        Noisy::Cumulative(v) | Noisy::Naive(v) => v,
        Noisy::Unattributed(v) => v.into_iter().map(i64::from).collect(),
        Noisy::CumulativeTail { mut head, top } => {
            head.extend(top);
            head
        }
    }
}

/// The two claims for a pair of exact vectors: over the cells that differ, "the noisy
/// cell is on `D'`'s side of the shift" and "on `D`'s side".
fn shift_claims(v: &[i64], v_prime: &[i64], name: &str) -> Vec<Claim> {
    assert_eq!(
        v.len(),
        v_prime.len(),
        "{name}: the vector's length is public"
    );
    let differ: Vec<usize> = (0..v.len()).filter(|&i| v[i] != v_prime[i]).collect();
    assert!(!differ.is_empty(), "{name}: the neighbours must differ");
    let towards = |target: &[i64], other: &[i64]| {
        Event(
            differ
                .iter()
                .map(|&i| {
                    let c = if target[i] > other[i] {
                        Cond::AtLeast(target[i])
                    } else {
                        Cond::AtMost(target[i])
                    };
                    (i, c)
                })
                .collect(),
        )
    };
    vec![
        Claim {
            event: towards(v_prime, v),
            over: Over::Neighbour,
            label: format!("{name}: cells {differ:?} towards D'"),
        },
        Claim {
            event: towards(v, v_prime),
            over: Over::Original,
            label: format!("{name}: cells {differ:?} towards D"),
        },
    ]
}

/// Audits one scenario's real measurement (`estimate::measure`) with `n` samples.
fn audit_node_case(case: &NodeCase, n: u64, seed: u64) -> Vec<Outcome> {
    let (d, d_prime) = case.truths();
    let g = d.groups();
    assert_eq!(g, d_prime.groups(), "adding an entity keeps G");
    let epsilon = eps(case.epsilon);
    let v = estimate::true_vector(case.method, &d, g, case.k);
    let v_prime = estimate::true_vector(case.method, &d_prime, g, case.k);
    let name = format!("{} {}", case.method.label(), case.name);
    let claims = shift_claims(&v, &v_prime, &name);
    let mech = |truth: &CountOfCounts| {
        let epsilon = epsilon.clone();
        let truth = truth.clone();
        move |source: &NoiseSource| {
            let mut rng = source.stream(Purpose::Test.index(0));
            let m = estimate::measure(
                case.method,
                &truth,
                NodeId::ROOT,
                g,
                case.k,
                &coco::privacy::Loss::from(&epsilon),
                &mut rng,
            )
            .unwrap();
            noisy_vector(m.into_noisy())
        }
    };
    audit(&mech(&d), &mech(&d_prime), &claims, n, seed)
}

#[test]
fn single_node_measurements_stay_within_epsilon() {
    for (i, case) in node_cases().iter().enumerate() {
        let outcomes = audit_node_case(case, NODE_SAMPLES, 1000 + 10 * i as u64);
        assert_private(
            &format!("{} {}", case.method.name(), case.name),
            &eps(case.epsilon),
            &outcomes,
        );
    }
}

/// The noisy maximum that sets `K` privately ([`max_size::measure`]).
fn audit_max_size(n: u64, seed: u64) -> (Epsilon, Vec<Outcome>) {
    let epsilon = eps("1/4");
    let d = CountOfCounts::from_sizes([1, 2, 3]);
    let d_prime = CountOfCounts::from_sizes([1, 2, 4]);
    let v = [max_size::true_value(&d)];
    let v_prime = [max_size::true_value(&d_prime)];
    let claims = shift_claims(&v, &v_prime, "the largest group grows");
    let mech = |truth: CountOfCounts| {
        let epsilon = epsilon.clone();
        move |source: &NoiseSource| {
            let mut rng = source.stream(Purpose::Test.index(0));
            vec![
                max_size::measure(&truth, &coco::privacy::Loss::from(&epsilon), &mut rng)
                    .unwrap()
                    .noisy,
            ]
        }
    };
    let outcomes = audit(&mech(d), &mech(d_prime), &claims, n, seed);
    (epsilon, outcomes)
}

#[test]
fn noisy_maximum_stays_within_epsilon() {
    let (epsilon, outcomes) = audit_max_size(NODE_SAMPLES, 2000);
    assert_private("max_size", &epsilon, &outcomes);
}

/// A broken single-node mechanism: the method's exact vector plus noise of the given
/// sensitivity and ε, while the scenario claims its own.
fn audit_broken(case: &NodeCase, sensitivity: u32, noise_epsilon: &Epsilon) -> Vec<Outcome> {
    let (d, d_prime) = case.truths();
    let g = d.groups();
    let v = estimate::true_vector(case.method, &d, g, case.k);
    let v_prime = estimate::true_vector(case.method, &d_prime, g, case.k);
    let claims = shift_claims(&v, &v_prime, case.name);
    let noise = DiscreteLaplace::new(sensitivity, noise_epsilon).unwrap();
    let mech = |v: Vec<i64>| {
        let noise = noise.clone();
        move |source: &NoiseSource| {
            let mut rng = source.stream(Purpose::Test.index(0));
            v.iter().map(|x| x + noise.sample(&mut rng)).collect()
        }
    };
    audit(&mech(v), &mech(v_prime), &claims, 20_000, 3000)
}

#[test]
fn audit_catches_noise_of_half_the_scale() {
    for case in node_cases().iter().filter(|c| c.grows == 2) {
        let claimed = eps(case.epsilon);
        let doubled = claimed.mul_ratio(2, 1).unwrap();
        let outcomes = audit_broken(case, case.method.sensitivity(), &doubled);
        assert_caught(
            &format!("{} with noise of half the scale", case.method.name()),
            &claimed,
            &outcomes,
        );
    }
}

#[test]
fn audit_catches_a_tail_that_overlaps_the_head() {
    // Measuring all of Hc *and* the tail at ε each would cost 2ε: a group of size L
    // growing to L + 1 changes Hc[L] and the tail. The real measurement stops the head
    // at L − 1; this broken one does not.
    let case = node_cases()
        .into_iter()
        .find(|c| c.name == "a group of size L = 2 grows to 3")
        .unwrap();
    let Method::HcTail(tail) = case.method else {
        unreachable!()
    };
    let (d, d_prime) = case.truths();
    let g = d.groups();
    let vector = |truth: &CountOfCounts| {
        let mut v = estimate::cumulative::true_vector(truth, case.k);
        v.extend(estimate::tail::true_vectors(truth, g, case.k, &tail).1);
        v
    };
    let (v, v_prime) = (vector(&d), vector(&d_prime));
    let claims = shift_claims(&v, &v_prime, "overlapping head and tail");
    let epsilon = eps(case.epsilon);
    let noise = DiscreteLaplace::new(1, &epsilon).unwrap();
    let mech = |v: Vec<i64>| {
        let noise = noise.clone();
        move |source: &NoiseSource| {
            let mut rng = source.stream(Purpose::Test.index(0));
            v.iter().map(|x| x + noise.sample(&mut rng)).collect()
        }
    };
    let outcomes = audit(&mech(v), &mech(v_prime), &claims, 20_000, 3100);
    assert_caught("a tail that overlaps the head", &epsilon, &outcomes);
}

// ---------------------------------------------------------------------------------
// A tail sized from its own noisy head (`groups = "auto"`).
//
// The second part of the measurement (how many groups are listed, or the rest of `Hc`)
// is chosen from the noisy head, so the output's shape is random. Each run is read as
// `[head₀, head₁, kind, q]`: the noisy head, the kind of the second part (0: listed
// sizes, 1: the rest of `Hc`) and, for a group growing from 10 to 11, the statistic
// that moves towards `D'` by one in either kind (`last listed size − 11`, or
// `11 − noisy Hc[10]`). The datasets put the noisy head's count of groups at or above
// `L` right at the boundary between the two kinds, so both kinds occur often and the
// audit sees the adaptive choice at work.

/// ε, `K` and `L` of the auto-tail scenarios: `K + 1 − L = 11` cells follow the head,
/// and at ε = 2 the margin is 7 positions, so a region of 12 groups lists them when its
/// noisy `Hc[1]` is above 8 and measures the rest of `Hc` otherwise.
const AUTO_EPSILON: &str = "2";
const AUTO_K: Size = 12;
const AUTO_TAIL: Tail = Tail {
    above: 2,
    groups: TailLength::Auto,
};

/// `[head₀, head₁, kind, q]` of one measurement (see above).
fn auto_output(noisy: Noisy) -> Vec<i64> {
    match noisy {
        Noisy::CumulativeTail { head, top } => {
            vec![head[0], head[1], 0, top.last().copied().unwrap_or(0) - 11]
        }
        Noisy::Cumulative(all) => vec![all[0], all[1], 1, 11 - all[10]],
        other => panic!("an auto tail measures a head and a second part, not {other:?}"),
    }
}

/// The real measurement of an auto tail on `truth`, read as [`auto_output`].
fn auto_mechanism(truth: CountOfCounts) -> impl Fn(&NoiseSource) -> Vec<i64> + Sync {
    move |source: &NoiseSource| {
        let mut rng = source.stream(Purpose::Test.index(0));
        let m = estimate::measure(
            Method::HcTail(AUTO_TAIL),
            &truth,
            NodeId::ROOT,
            truth.groups(),
            AUTO_K,
            &coco::privacy::Loss::from(&eps(AUTO_EPSILON)),
            &mut rng,
        )
        .unwrap();
        auto_output(m.into_noisy())
    }
}

/// The two auto-tail scenarios: a group growing in the head (0 → 1) and one growing in
/// the listed sizes (10 → 11), each `D` and `D'` with 12 groups, 8 of them at most 1.
fn auto_cases() -> [(&'static str, Vec<Size>, Vec<Size>, Vec<Claim>); 2] {
    let d: Vec<Size> = vec![0, 1, 1, 1, 1, 1, 1, 1, 3, 5, 7, 10];
    let mut head = d.clone();
    head[0] = 1;
    let mut tail = d.clone();
    tail[11] = 11;
    let towards = |target: Cond, over: Over, label: &str| Claim {
        event: Event(vec![(3, target)]),
        over,
        label: label.into(),
    };
    [
        (
            "auto tail: a group of size 0 grows to 1 (the head)",
            d.clone(),
            head,
            shift_claims(&[1, 8], &[0, 8], "auto tail, head cell 0"),
        ),
        (
            "auto tail: a group of size 10 grows to 11 (listed or the rest of Hc)",
            d,
            tail,
            vec![
                towards(Cond::AtLeast(0), Over::Neighbour, "auto tail, towards D'"),
                towards(Cond::AtMost(-1), Over::Original, "auto tail, towards D"),
            ],
        ),
    ]
}

#[test]
fn a_tail_sized_from_its_noisy_head_stays_within_epsilon() {
    for (i, (title, d, d_prime, claims)) in auto_cases().into_iter().enumerate() {
        let on_d = auto_mechanism(CountOfCounts::from_sizes(d));
        let on_d_prime = auto_mechanism(CountOfCounts::from_sizes(d_prime));
        // Both kinds of second part occur: the audit sees the choice at work.
        let kinds = counts(
            &on_d,
            2_000,
            3400 + i as u64,
            &[&Event(vec![(2, Cond::AtLeast(1))])],
        );
        assert!(
            (200..1_800).contains(&kinds[0]),
            "{title}: the rest of Hc in {} of 2,000 runs",
            kinds[0]
        );
        let outcomes = audit(
            &on_d,
            &on_d_prime,
            &claims,
            NODE_SAMPLES,
            3300 + 10 * i as u64,
        );
        assert_private(title, &eps(AUTO_EPSILON), &outcomes);
    }
}

#[test]
fn audit_catches_a_tail_sized_from_the_true_head() {
    // The broken mechanism chooses the second part from the true head: one group
    // crossing from size 1 to 2 moves the true count at or above L = 2 across the
    // boundary, and the kind of the output gives it away.
    let broken = |truth: CountOfCounts| {
        move |source: &NoiseSource| {
            let mut rng = source.stream(Purpose::Test.index(0));
            let epsilon = eps(AUTO_EPSILON);
            let noise = DiscreteLaplace::new(1, &epsilon).unwrap();
            let head = estimate::tail::true_head(&truth, AUTO_K, &AUTO_TAIL);
            let kind = estimate::tail::auto_rest(
                &head,
                truth.groups(),
                2,
                AUTO_K,
                &coco::privacy::Loss::from(&epsilon),
            );
            // Only the head and the kind: the kind alone gives the true head away.
            let mut out: Vec<i64> = head.iter().map(|v| v + noise.sample(&mut rng)).collect();
            out.push(i64::from(kind == estimate::tail::Rest::Cumulative));
            out
        }
    };
    let d: Vec<Size> = vec![0, 1, 1, 1, 1, 1, 1, 1, 1, 5, 7, 10];
    let mut d_prime = d.clone();
    d_prime[8] = 2;
    let claims = [
        Claim {
            event: Event(vec![(2, Cond::AtMost(0))]),
            over: Over::Original,
            label: "listed sizes".into(),
        },
        Claim {
            event: Event(vec![(2, Cond::AtLeast(1))]),
            over: Over::Neighbour,
            label: "the rest of Hc".into(),
        },
    ];
    let outcomes = audit(
        &broken(CountOfCounts::from_sizes(d)),
        &broken(CountOfCounts::from_sizes(d_prime)),
        &claims,
        20_000,
        3500,
    );
    assert_caught(
        "a tail sized from the true head",
        &eps(AUTO_EPSILON),
        &outcomes,
    );
}

#[test]
fn audit_catches_naive_with_sensitivity_one() {
    let case = node_cases()
        .into_iter()
        .find(|c| c.method == Method::Naive)
        .unwrap();
    let claimed = eps(case.epsilon);
    let outcomes = audit_broken(&case, 1, &claimed);
    assert_caught("naive with sensitivity 1", &claimed, &outcomes);
}

// ---------------------------------------------------------------------------------
// Whole releases.

/// The bound `K` of the release scenarios.
const RELEASE_K: Size = 3;

/// A two-level dataset (`R` with leaves `a` and `b`), and its neighbour where a group of
/// size 1 in `a` gains an entity.
fn release_datasets() -> (Dataset, Dataset) {
    release_pair([&[1, 2, 2], &[0, 3]], [&[2, 2, 2], &[0, 3]])
}

/// For the scenario with a private `K`: the neighbour's largest group (in `b`) gains an
/// entity, so the noisy maximum that sets `K` sees the change too.
fn release_datasets_growing_max() -> (Dataset, Dataset) {
    release_pair([&[1, 2, 2], &[0, 3]], [&[1, 2, 2], &[0, 4]])
}

/// Leaves `a` and `b` of `R` with the given group sizes, for `D` and `D'`.
fn release_pair(d: [&[Size]; 2], d_prime: [&[Size]; 2]) -> (Dataset, Dataset) {
    let names = vec!["region".to_string(), "district".to_string()];
    let rows: Vec<Vec<String>> = [["R", "a"], ["R", "b"]]
        .iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect();
    let h = Hierarchy::from_leaf_paths(names, &rows).unwrap();
    let build = |[a, b]: [&[Size]; 2]| {
        Dataset::from_leaf_histograms(
            PathBuf::new(),
            h.clone(),
            GroupsForm::Histograms,
            vec![],
            vec![
                CountOfCounts::from_sizes(a.iter().copied()),
                CountOfCounts::from_sizes(b.iter().copied()),
            ],
        )
    };
    (build(d), build(d_prime))
}

/// Features per node: the released count at each size `0..=k` (sizes above `k` counted
/// at `k`) and the cumulative count up to each size `0..k`.
const PER_NODE: usize = 2 * RELEASE_K as usize + 1;
/// The nodes of the release scenarios, in [`NodeId`] order.
const RELEASE_NODES: [&str; 3] = ["R", "R/a", "R/b"];
/// The pairs of nodes whose features are combined into joint features.
const NODE_PAIRS: [(usize, usize); 3] = [(0, 1), (0, 2), (1, 2)];

/// A release's output as features: every node's own ([`PER_NODE`] each), then *joint*
/// features over two regions — for each pair of nodes and each position, the difference
/// and the sum of their features — then the released `K`. Joint features see noise that
/// is correlated across regions (a shared stream cancels in a difference), which no
/// single-region event can.
fn features<H: Histograms + ?Sized>(max_size: Size, hists: &H, k: Size) -> Vec<i64> {
    let mut own = Vec::with_capacity(hists.regions() * PER_NODE);
    for h in (0..hists.regions()).map(|i| hists.hist(i)) {
        let h = h.top_coded(k);
        let mut cumulative = 0i64;
        for j in 0..=k {
            let c = h.count(j) as i64;
            own.push(c);
            cumulative += c;
            if j < k {
                own.push(cumulative);
            }
        }
    }
    let mut out = own.clone();
    for (p, q) in NODE_PAIRS {
        for j in 0..PER_NODE {
            let (x, y) = (own[p * PER_NODE + j], own[q * PER_NODE + j]);
            out.push(x - y);
            out.push(x + y);
        }
    }
    out.push(i64::from(max_size));
    out
}

fn feature_name(i: usize, k: Size) -> String {
    let own = |i: usize| {
        let j = i % PER_NODE;
        if j.is_multiple_of(2) {
            format!("count at size {}", j / 2)
        } else {
            format!("count at sizes ≤ {}", j / 2)
        }
    };
    let singles = RELEASE_NODES.len() * PER_NODE;
    if i < singles {
        return format!("{} {}", RELEASE_NODES[i / PER_NODE], own(i));
    }
    let joint = i - singles;
    if joint >= NODE_PAIRS.len() * PER_NODE * 2 {
        return "released K".to_string();
    }
    let (p, q) = NODE_PAIRS[joint / (2 * PER_NODE)];
    let j = (joint / 2) % PER_NODE;
    let op = if joint.is_multiple_of(2) { "−" } else { "+" };
    debug_assert!(k == RELEASE_K);
    format!("{} {op} {} {}", RELEASE_NODES[p], RELEASE_NODES[q], own(j))
}

/// A release scenario: the consistency step and the root's and the leaves' methods.
type ReleaseCase = (Consistency, Method, Method);

/// How a scenario reads in a message: "wls and hc" or "wls and hg, then hc+tail≥2".
fn case_label((consistency, root, leaves): ReleaseCase) -> String {
    if root == leaves {
        format!("{} and {}", consistency.name(), root.label())
    } else {
        format!(
            "{} and {}, then {}",
            consistency.name(),
            root.label(),
            leaves.label()
        )
    }
}

/// A two-level plan with `K` fixed, the given budgets, methods and consistency step.
fn release_plan(
    dataset: &Dataset,
    budgets: [&str; 2],
    (consistency, method, leaves): ReleaseCase,
) -> ReleasePlan {
    let mut plan = ReleasePlan::with_budgets(
        &dataset.hierarchy,
        budgets.iter().map(|b| eps(b)).collect(),
        method,
        MaxSize::Fixed(RELEASE_K),
    )
    .unwrap();
    plan.set_method(coco::data::LevelId(1), leaves).unwrap();
    plan.set_consistency(consistency);
    plan.validate(&dataset.hierarchy, Path::new("audit plan"))
        .unwrap();
    plan
}

fn release_mechanism<'a>(
    dataset: &'a Dataset,
    plan: &'a ReleasePlan,
) -> impl Fn(&NoiseSource) -> Vec<i64> + Sync + 'a {
    move |source: &NoiseSource| {
        let draw = run::draw(dataset, plan, source, &Default::default()).unwrap();
        assert!(draw.checks().passed(), "{:?}", draw.checks());
        features(draw.max_size(), draw.histograms(), RELEASE_K)
    }
}

/// Chooses `count` claims on pilot samples: every threshold on every feature, in both
/// directions, scored by the log ratio of the frequencies less three delta-method
/// standard errors; duplicates (equal pilot counts) are skipped.
fn choose_claims(pilot: &[Vec<i64>], pilot_prime: &[Vec<i64>], count: usize) -> Vec<Claim> {
    let features = pilot[0].len();
    let mut candidates: Vec<(f64, (u64, u64), Claim)> = Vec::new();
    for f in 0..features {
        let values = pilot.iter().chain(pilot_prime).map(|o| o[f]);
        let (lo, hi) = values.fold((i64::MAX, i64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
        for t in lo..=hi {
            for cond in [Cond::AtLeast(t), Cond::AtMost(t)] {
                let event = Event(vec![(f, cond)]);
                let k = pilot.iter().filter(|o| event.holds(o)).count() as u64;
                let k_prime = pilot_prime.iter().filter(|o| event.holds(o)).count() as u64;
                for (over, num, den) in
                    [(Over::Neighbour, k_prime, k), (Over::Original, k, k_prime)]
                {
                    let (a, b) = ((num + 1) as f64, (den + 1) as f64);
                    let score = (a / b).ln() - 3.0 * (1.0 / a + 1.0 / b).sqrt();
                    let side = match cond {
                        Cond::AtLeast(t) => format!("≥ {t}"),
                        Cond::AtMost(t) => format!("≤ {t}"),
                    };
                    let towards = match over {
                        Over::Neighbour => "D'",
                        Over::Original => "D",
                    };
                    candidates.push((
                        score,
                        (num, den),
                        Claim {
                            event: event.clone(),
                            over,
                            label: format!(
                                "{} {side} (towards {towards})",
                                feature_name(f, RELEASE_K)
                            ),
                        },
                    ));
                }
            }
        }
    }
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut chosen: Vec<(u64, u64)> = Vec::new();
    let mut claims = Vec::new();
    for (_, key, claim) in candidates {
        if claims.len() == count {
            break;
        }
        if !chosen.contains(&key) {
            chosen.push(key);
            claims.push(claim);
        }
    }
    claims
}

/// Audits whole releases under a plan, with events chosen on a pilot sample (seeds
/// `seed + 2`, `seed + 3`) and tested on a fresh one (seeds `seed`, `seed + 1`).
fn audit_release(plan_d: &ReleasePlan, scale: u64, seed: u64) -> Vec<Outcome> {
    let (d, d_prime) = release_datasets();
    let on_d = release_mechanism(&d, plan_d);
    let on_d_prime = release_mechanism(&d_prime, plan_d);
    audit_mechanisms(&on_d, &on_d_prime, scale, seed)
}

/// Audits a release mechanism on `D` and `D'`: events chosen on a pilot sample (seeds
/// `seed + 2`, `seed + 3`), tested on a fresh one (seeds `seed`, `seed + 1`).
fn audit_mechanisms(
    on_d: &Mechanism<'_>,
    on_d_prime: &Mechanism<'_>,
    scale: u64,
    seed: u64,
) -> Vec<Outcome> {
    let pilot = outputs(on_d, PILOT_SAMPLES, seed + 2);
    let pilot_prime = outputs(on_d_prime, PILOT_SAMPLES, seed + 3);
    let claims = choose_claims(&pilot, &pilot_prime, RELEASE_CLAIMS);
    audit(on_d, on_d_prime, &claims, RELEASE_SAMPLES * scale, seed)
}

/// The release scenarios: both consistency steps, with most of the budget on the
/// leaves so that one released region carries most of the privacy loss (which gives
/// the audit power).
const RELEASE_BUDGETS: [&str; 2] = ["1/10", "9/10"];
/// The tail case measures sizes above 2 as a tail. With `K = 3` every tail value lies
/// within the estimator's significance margin of `L`, so the release is driven by the
/// head, where the growing group is; the tail's own sensitivity is audited per node.
/// The mixed case runs `wls` over a tail at the root and `hg` at the leaves (the block
/// scale's kind of plan).
const RELEASE_TAIL: Method = Method::HcTail(Tail {
    above: 2,
    groups: match TailGroups::new(3) {
        Ok(m) => TailLength::Fixed(m),
        Err(_) => panic!("3 groups is a tail's m"),
    },
});
const RELEASE_CASES: [ReleaseCase; 4] = [
    (Consistency::TopDown, Method::Hc, Method::Hc),
    (Consistency::Wls, Method::Hc, Method::Hc),
    (Consistency::Wls, RELEASE_TAIL, RELEASE_TAIL),
    (Consistency::Wls, RELEASE_TAIL, Method::Hg),
];

#[test]
fn whole_releases_stay_within_epsilon() {
    let (d, _) = release_datasets();
    for (i, &case) in RELEASE_CASES.iter().enumerate() {
        let plan = release_plan(&d, RELEASE_BUDGETS, case);
        let outcomes = audit_release(&plan, 1, 4000 + 10 * i as u64);
        assert_private(
            &format!("release with {}", case_label(case)),
            &plan.total_epsilon().unwrap(),
            &outcomes,
        );
    }
}

#[test]
fn audit_catches_a_release_with_noise_of_half_the_scale() {
    // Every level measured with twice its planned ε, audited against the plan's total.
    let (d, _) = release_datasets();
    for (i, &case) in RELEASE_CASES.iter().enumerate() {
        let claimed = release_plan(&d, RELEASE_BUDGETS, case);
        let broken = release_plan(&d, ["1/5", "9/5"], case);
        let outcomes = audit_release(&broken, 1, 5000 + 10 * i as u64);
        assert_caught(
            &format!(
                "release with {} and noise of half the scale",
                case_label(case)
            ),
            &claimed.total_epsilon().unwrap(),
            &outcomes,
        );
    }
}

/// The budget of the scenario with a private `K`: the noisy maximum's ε, added to the
/// levels' (the manifest publishes the `K` it drew, so it is a feature too).
const RELEASE_K_EPSILON: &str = "1/2";

/// A plan whose `K` is estimated privately, the levels as in [`RELEASE_BUDGETS`].
fn release_plan_private_k(dataset: &Dataset) -> ReleasePlan {
    let mut plan = release_plan(
        dataset,
        RELEASE_BUDGETS,
        (Consistency::Wls, Method::Hc, Method::Hc),
    );
    plan.set_max_size(MaxSize::Estimate {
        budget: eps(RELEASE_K_EPSILON).into(),
    })
    .unwrap();
    plan
}

#[test]
fn a_release_with_a_private_k_stays_within_epsilon() {
    let (d, d_prime) = release_datasets_growing_max();
    let plan = release_plan_private_k(&d);
    let on_d = release_mechanism(&d, &plan);
    let on_d_prime = release_mechanism(&d_prime, &plan);
    let outcomes = audit_mechanisms(&on_d, &on_d_prime, 1, 4500);
    assert_private(
        "release with wls, hc and a private K",
        &plan.total_epsilon().unwrap(),
        &outcomes,
    );
}

/// The release path spelled out from its public steps (measure each node, estimate,
/// make consistent), so that a test can choose the noise streams: with `shared =
/// false` it is exactly [`run::draw`] (`the_spelled_out_release_is_run_draw`); with
/// `shared = true` every node draws the same stream — the bug in the paper's own code
/// that the README describes, which a single-region event cannot see.
fn release_with_streams<'a>(
    dataset: &'a Dataset,
    plan: &'a ReleasePlan,
    shared: bool,
) -> impl Fn(&NoiseSource) -> Vec<i64> + Sync + 'a {
    move |source: &NoiseSource| {
        let h = &dataset.hierarchy;
        let k = plan.max_size().bound().expect("a fixed K");
        let truth = dataset.truth().for_diagnostic(Diagnostic::Oracle);
        let estimates: Vec<estimate::NodeEstimate> = (0..h.len() as u32)
            .map(NodeId)
            .map(|id| {
                let level = plan.level(h.node(id).level);
                let stream = if shared { 0 } else { id.0 };
                let mut rng = source.stream(Purpose::Measure.index(stream));
                let m = estimate::measure(
                    level.method(),
                    truth.node(id),
                    id,
                    dataset.groups(id),
                    k,
                    level.loss().unwrap(),
                    &mut rng,
                )
                .unwrap();
                estimate::estimate(&m, &plan.estimate_options())
            })
            .collect();
        let consistent = coco::consistency::make_consistent(
            plan.consistency(),
            h,
            &estimate::Estimates::from_vec(estimates),
            dataset.public().groups,
            k,
            &plan.consistency_options(),
        )
        .unwrap();
        features(k, &consistent.histograms, RELEASE_K)
    }
}

#[test]
fn the_spelled_out_release_is_run_draw() {
    let (d, _) = release_datasets();
    for (i, &case) in RELEASE_CASES.iter().enumerate() {
        let plan = release_plan(&d, RELEASE_BUDGETS, case);
        let real = release_mechanism(&d, &plan);
        let spelled = release_with_streams(&d, &plan, false);
        for t in 0..200 {
            let source = trial_source(6000 + i as u64, t);
            assert_eq!(real(&source), spelled(&source), "{case:?}, trial {t}");
        }
    }
}

#[test]
fn audit_catches_a_release_whose_regions_share_a_noise_stream() {
    // The budgets as claimed; only the streams are wrong. Single-region events alone
    // pass this mechanism; the joint ones (differences and sums over two regions) do not.
    let (d, d_prime) = release_datasets();
    let case = (Consistency::Wls, Method::Hc, Method::Hc);
    let plan = release_plan(&d, RELEASE_BUDGETS, case);
    let on_d = release_with_streams(&d, &plan, true);
    let on_d_prime = release_with_streams(&d_prime, &plan, true);
    let outcomes = audit_mechanisms(&on_d, &on_d_prime, 1, 6500);
    assert_caught(
        "release with wls and hc whose regions share one noise stream",
        &plan.total_epsilon().unwrap(),
        &outcomes,
    );
}

/// Every node of a real release draws its own stream. Two leaves with the same truth
/// measured with one shared stream would get the same estimate in every draw; with
/// their own streams they differ in most.
#[test]
fn every_node_of_a_release_uses_its_own_noise_stream() {
    let (d, _) = release_pair([&[1, 2, 2], &[1, 2, 2]], [&[1, 2, 2], &[1, 2, 2]]);
    let plan = release_plan(
        &d,
        RELEASE_BUDGETS,
        (Consistency::Wls, Method::Hc, Method::Hc),
    );
    let (a, b) = (1, 2);
    let draws = 200;
    let same = (0..draws)
        .filter(|&t| {
            let e = run::estimate_plan(
                &d,
                &plan,
                &trial_source(6600, t),
                &run::RunOptions {
                    keep: estimate::Keep::ALL,
                    ..Default::default()
                },
            )
            .unwrap();
            e.estimates.histogram(a) == e.estimates.histogram(b)
                && e.estimates.runs(a) == e.estimates.runs(b)
        })
        .count();
    assert!(
        same < draws as usize / 2,
        "{same} of {draws} draws gave the two identical leaves the same estimate"
    );
    // And the streams themselves: the first draws of every node's stream differ.
    let source = NoiseSource::seeded(6601);
    let firsts: Vec<Vec<u64>> = (0..64u32)
        .map(|node| {
            let mut rng = source.stream(Purpose::Measure.index(node));
            (0..4)
                .map(|_| rand::RngExt::random::<u64>(&mut rng))
                .collect()
        })
        .collect();
    for i in 0..firsts.len() {
        for j in 0..i {
            assert_ne!(firsts[i], firsts[j], "nodes {i} and {j} share a stream");
        }
    }
}

// ---------------------------------------------------------------------------------
// The budget, the statistics, and the long version.

#[test]
fn claims_fit_the_budget() {
    let node_claims = 2 * node_cases().len();
    let auto_claims: usize = auto_cases().iter().map(|c| c.3.len()).sum();
    let max_size_claims = 2;
    // The release cases, and the one with a private K.
    let release_claims = RELEASE_CLAIMS * (RELEASE_CASES.len() + 1);
    let total = node_claims + auto_claims + max_size_claims + release_claims + zcdp::zcdp_claims();
    assert!(total <= MAX_CLAIMS, "{total} claims > {MAX_CLAIMS}");
    assert!(MAX_CLAIMS as f64 * ALPHA_PER_CLAIM <= FALSE_FAILURE_RATE * (1.0 + 1e-12));
}

#[test]
fn clopper_pearson_matches_reference_values() {
    // scipy 1.17.1: beta.ppf(β, k, n−k+1) and beta.isf(β, k+1, n−k).
    let cases: [(u64, u64, f64, f64, f64); 5] = [
        (1000, 300, 1e-8, 0.22304418536058923, 0.38547683181429515),
        (
            200_000,
            53_800,
            1.25e-8,
            0.26349576808518665,
            0.2745528663615508,
        ),
        (50, 0, 1e-3, 0.0, 0.12903641004391936),
        (
            100_000,
            7,
            1e-9,
            1.7902902361954302e-06,
            0.00037821262257241414,
        ),
        (12, 5, 0.025, 0.15165222980843013, 0.7233303143178942),
    ];
    for (n, k, beta, lower, upper) in cases {
        let (lo, hi) = stats::clopper_pearson(k, n, beta);
        assert!(
            (lo - lower).abs() <= 1e-9 * lower.max(1e-12),
            "{n} {k}: {lo} vs {lower}"
        );
        assert!(
            (hi - upper).abs() <= 1e-9 * upper,
            "{n} {k}: {hi} vs {upper}"
        );
        // Conservative: the bounds themselves have tail probability at most β.
        if k > 0 {
            assert!(stats::upper_tail(n, k, lo) <= beta * (1.0 + 1e-9));
        }
        assert!(stats::lower_tail(n, k, hi) <= beta * (1.0 + 1e-9));
    }
    // Closed forms at the ends: k = 0 gives upper = 1 − β^(1/n), k = n gives
    // lower = β^(1/n).
    let (n, beta) = (5000u64, 1e-8f64);
    let (_, hi) = stats::clopper_pearson(0, n, beta);
    assert!((hi - (1.0 - beta.powf(1.0 / n as f64))).abs() < 1e-12);
    let (lo, _) = stats::clopper_pearson(n, n, beta);
    assert!((lo - beta.powf(1.0 / n as f64)).abs() < 1e-12);
    // math.lgamma(301) in Python 3.
    assert!((stats::ln_factorial(300) - 1_414.905_849_945_068).abs() < 1e-9);
}

#[test]
#[ignore = "long version: cargo test --release --test audit -- --ignored --nocapture"]
fn long_audit() {
    for (i, case) in node_cases().iter().enumerate() {
        let outcomes = audit_node_case(case, NODE_SAMPLES * LONG_FACTOR, 7000 + 10 * i as u64);
        assert_private(
            &format!("long: {} {}", case.method.name(), case.name),
            &eps(case.epsilon),
            &outcomes,
        );
    }
    let (epsilon, outcomes) = audit_max_size(NODE_SAMPLES * LONG_FACTOR, 8000);
    assert_private("long: max_size", &epsilon, &outcomes);
    let (d, _) = release_datasets();
    for (i, &case) in RELEASE_CASES.iter().enumerate() {
        let plan = release_plan(&d, RELEASE_BUDGETS, case);
        let outcomes = audit_release(&plan, LONG_FACTOR, 9000 + 10 * i as u64);
        assert_private(
            &format!("long: release with {}", case_label(case)),
            &plan.total_epsilon().unwrap(),
            &outcomes,
        );
    }
    let (d, d_prime) = release_datasets_growing_max();
    let plan = release_plan_private_k(&d);
    let on_d = release_mechanism(&d, &plan);
    let on_d_prime = release_mechanism(&d_prime, &plan);
    let outcomes = audit_mechanisms(&on_d, &on_d_prime, LONG_FACTOR, 9500);
    assert_private(
        "long: release with a private K",
        &plan.total_epsilon().unwrap(),
        &outcomes,
    );
}
