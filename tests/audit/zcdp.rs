//! The zCDP audit: the discrete Gaussian release path against its exact privacy profile.
//!
//! # What is claimed
//! A ρ-zCDP level measures a vector of L2 sensitivity `Δ₂` with discrete Gaussian noise of
//! `σ² = Δ₂²/(2ρ)` per cell. ρ-zCDP is not a bound on one event's probability ratio: it
//! implies (ε, δ)-DP at every δ, i.e. for every event `E`
//! `P[M(D′) ∈ E] ≤ e^ε · P[M(D) ∈ E] + δ(ε)`, with `ε(δ)` published by
//! [`coco::privacy::epsilon_at_delta`] (Canonne, Kamath and Steinke 2020, Corollary 13).
//! For a fixed pair of neighbours the measured cells that differ move by integers `s`,
//! and the tightest curve `δ(ε)` of the noise as claimed is the hockey-stick divergence
//! `Σ_x max(0, p′(x) − e^ε p(x))` of the two product distributions, computed here in
//! closed form (a sum over the differing cells' grid; the noise of the other cells is the
//! same on both sides and cancels). [`Profile`] holds it as the privacy-loss
//! distribution under `D′`. Each scenario first checks that this curve lies below coco's
//! published conversion at the audit's δs (the published ε is valid for the pair).
//!
//! # The test
//! An event `E` is fixed in advance (from the claimed distribution, never from the
//! sample): a threshold on the cell that differs, or, when several cells differ, on the
//! linear statistic `s · x` of the whole vector, at the optimal event of the claimed
//! curve at each δ in [`DELTAS`]. The mechanism runs `n` times on each side and the
//! exact Clopper–Pearson bounds at level `β` each give `p′ ≥ p′_lower`, `p ≤ p_upper`,
//! jointly except with probability `2β`. The claim fails when some `ε` of a grid has
//! `p′_lower − e^ε p_upper > δ(ε)`: one claim checks the whole curve at once, with no
//! multiplicity over δ, since only the two bounds are random. A grid that misses the
//! worst `ε` loses power, never validity. Claims share the file's false-failure budget
//! (`MAX_CLAIMS` in `main.rs`).
//!
//! # Companions
//! * the noise's σ 30% too small (`σ² × 0.49`), on `hc`, the tail and `naive`;
//! * `naive` calibrated to a sensitivity of 1 (`σ² = 1/(2ρ)`) where its L2 sensitivity
//!   is `√2` (`Δ₂² = 2`): a sensitivity counted per cell instead of over the vector. (A
//!   Gaussian calibrated to the L1 sensitivity, `σ² = Δ₁²/(2ρ)`, over-noises, since
//!   `Δ₂ ≤ Δ₁` always: no audit can catch it as a privacy failure.)
//!
//! Each must break the claimed curve with the events above.

use super::*;
use coco::noise::{DiscreteGaussian, Noise, Sigma2};
use coco::privacy::{Loss, Rho, epsilon_at_delta};

/// The δs whose optimal events are tested, and at which the claimed curve is checked
/// against coco's published conversion. Large enough that the events happen often: the
/// events' probabilities are estimated from samples.
const DELTAS: [f64; 3] = [0.1, 0.03, 0.01];
/// Samples per dataset for single-node claims.
const ZCDP_NODE_SAMPLES: u64 = 100_000;
/// Samples per dataset for the companions.
const ZCDP_COMPANION_SAMPLES: u64 = 20_000;
/// The ε grid of a claim: this many steps from 0 to the curve's ε at 10⁻¹².
const EPSILON_GRID: usize = 600;

fn rho(s: &str) -> Rho {
    Rho::parse(s).unwrap()
}

/// The pmf of the discrete Gaussian of variance parameter `sigma2` on `[−r, r]`,
/// `r = ⌈14σ⌉ + 2`: the mass outside is below `e^{−98}`, far below any bound here.
fn dg_pmf(sigma2: f64) -> (i64, Vec<f64>) {
    let r = (14.0 * sigma2.sqrt()).ceil() as i64 + 2;
    let w: Vec<f64> = (-r..=r)
        .map(|z| (-((z * z) as f64) / (2.0 * sigma2)).exp())
        .collect();
    let total: f64 = w.iter().sum();
    (r, w.into_iter().map(|x| x / total).collect())
}

/// The exact privacy profile of independent discrete Gaussians shifted by integers: the
/// privacy-loss distribution `L = ln(p′(x)/p(x))` under `D′`, as (loss, probability)
/// pairs. For a cell of `σ²` shifted by `s`, `x = v + s + w` under `D′` gives
/// `L = ((w + s)² − w²)/(2σ²) = (2sw + s²)/(2σ²)`, summed over the cells.
struct Profile {
    losses: Vec<(f64, f64)>,
}

impl Profile {
    fn of_shifts(cells: &[(f64, i64)]) -> Profile {
        let mut losses = vec![(0.0, 1.0)];
        for &(sigma2, s) in cells {
            let (r, pmf) = dg_pmf(sigma2);
            let mut next = Vec::with_capacity(losses.len() * pmf.len());
            for &(l, q) in &losses {
                for (i, &p) in pmf.iter().enumerate() {
                    let w = i as i64 - r;
                    let dl = (2 * s * w + s * s) as f64 / (2.0 * sigma2);
                    if q * p > 0.0 {
                        next.push((l + dl, q * p));
                    }
                }
            }
            losses = next;
        }
        Profile { losses }
    }

    /// `δ(ε) = E_{D′}[max(0, 1 − e^{ε − L})]`, the hockey-stick divergence.
    fn delta(&self, epsilon: f64) -> f64 {
        self.losses
            .iter()
            .filter(|&&(l, _)| l > epsilon)
            .map(|&(l, q)| q * -(epsilon - l).exp_m1())
            .sum()
    }

    /// The least ε with `δ(ε) ≤ delta`, by bisection (the upper end).
    fn epsilon(&self, delta: f64) -> f64 {
        let (mut lo, mut hi) = (0.0f64, 64.0f64);
        if self.delta(0.0) <= delta {
            return 0.0;
        }
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if self.delta(mid) > delta {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi
    }
}

/// The pmf of `Σ cᵢ wᵢ` for independent discrete Gaussians `wᵢ` (coefficients ±1), as
/// the offset of index 0 and the probabilities.
fn statistic_pmf(sigma2s: &[f64]) -> (i64, Vec<f64>) {
    let mut acc: (i64, Vec<f64>) = (0, vec![1.0]);
    for &sigma2 in sigma2s {
        // The discrete Gaussian is symmetric: a coefficient −1 leaves it unchanged.
        let (r, pmf) = dg_pmf(sigma2);
        let mut out = vec![0.0; acc.1.len() + pmf.len() - 1];
        for (i, &a) in acc.1.iter().enumerate() {
            for (j, &b) in pmf.iter().enumerate() {
                out[i + j] += a * b;
            }
        }
        acc = (acc.0 + r, out);
    }
    acc
}

/// The thresholds `c` of the optimal events `{u ≥ c}` of the claimed curve at each of
/// [`DELTAS`], for a statistic `u` with noise pmf `pmf` that moves by `shift > 0` from
/// `D` to `D′` (each `c` once).
fn thresholds(profile: &Profile, pmf: &(i64, Vec<f64>), shift: i64) -> Vec<i64> {
    let (r, p) = pmf;
    let at_least = |c: i64| -> f64 {
        let from = (c + r).clamp(0, p.len() as i64) as usize;
        p[from..].iter().sum()
    };
    let mut out = Vec::new();
    for delta in DELTAS {
        let epsilon = profile.epsilon(delta);
        let best = (-r..=*r + shift)
            .max_by(|&a, &b| {
                let gain = |c: i64| at_least(c - shift) - epsilon.exp() * at_least(c);
                gain(a).total_cmp(&gain(b))
            })
            .unwrap();
        if !out.contains(&best) {
            out.push(best);
        }
    }
    out
}

/// The claims on output coordinate `index`, whose value is `y` under `D` and `y + shift`
/// under `D′` before noise: `{towards D′ by at least c}` over `D`, and its mirror.
fn statistic_claims(index: usize, y: i64, shift: i64, cs: &[i64], name: &str) -> Vec<Claim> {
    assert_ne!(shift, 0, "{name}: the statistic must move");
    let sign = shift.signum();
    let y_prime = y + shift;
    let mut claims = Vec::new();
    for &c in cs {
        let (towards_d_prime, towards_d) = if sign > 0 {
            (Cond::AtLeast(y + c), Cond::AtMost(y_prime - c))
        } else {
            (Cond::AtMost(y - c), Cond::AtLeast(y_prime + c))
        };
        claims.push(Claim {
            event: Event(vec![(index, towards_d_prime)]),
            over: Over::Neighbour,
            label: format!("{name} {towards_d_prime:?} (towards D')"),
        });
        claims.push(Claim {
            event: Event(vec![(index, towards_d)]),
            over: Over::Original,
            label: format!("{name} {towards_d:?} (towards D)"),
        });
    }
    claims
}

/// One claim's verdict against a curve: the largest `p′_lower − e^ε p_upper − δ(ε)` over
/// the grid (positive: the claim fails), where it is reached, and `ε_lower` at that δ.
#[derive(Debug)]
struct Verdict {
    label: String,
    counts: (u64, u64, u64),
    excess: f64,
    epsilon: f64,
    delta: f64,
    epsilon_lower: f64,
}

fn verdicts(profile: &Profile, outcomes: &[Outcome]) -> Vec<Verdict> {
    let beta = ALPHA_PER_CLAIM / 2.0;
    let top = profile.epsilon(1e-12);
    let grid: Vec<(f64, f64)> = (0..=EPSILON_GRID)
        .map(|i| {
            let e = top * i as f64 / EPSILON_GRID as f64;
            (e, profile.delta(e))
        })
        .collect();
    outcomes
        .iter()
        .map(|o| {
            let (lower, _) = stats::clopper_pearson(o.k_num, o.n, beta);
            let (_, upper) = stats::clopper_pearson(o.k_den, o.n, beta);
            let (excess, epsilon, delta) = grid
                .iter()
                .map(|&(e, d)| (lower - e.exp() * upper - d, e, d))
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .unwrap();
            Verdict {
                label: o.label.clone(),
                counts: (o.k_num, o.k_den, o.n),
                excess,
                epsilon,
                delta,
                // No ε makes `p′_lower ≤ δ` a violation at this δ.
                epsilon_lower: if lower > delta {
                    ((lower - delta) / upper).ln()
                } else {
                    f64::NEG_INFINITY
                },
            }
        })
        .collect()
}

fn report_verdicts(title: &str, vs: &[Verdict]) {
    eprintln!("{title}:");
    for v in vs {
        eprintln!(
            "  {:<46} {:>7}/{n} vs {:>7}/{n}  at δ = {:.3e}: ε_lower = {:.4} vs ε = {:.4} (excess {:+.2e})",
            v.label,
            v.counts.0,
            v.counts.1,
            v.delta,
            v.epsilon_lower,
            v.epsilon,
            v.excess,
            n = v.counts.2
        );
    }
}

fn assert_on_curve(title: &str, vs: &[Verdict]) {
    report_verdicts(title, vs);
    for v in vs {
        assert!(
            v.excess <= 0.0,
            "{title}: {} breaks the claimed curve at ε = {}, δ = {}: ε_lower = {} ({:?})",
            v.label,
            v.epsilon,
            v.delta,
            v.epsilon_lower,
            v.counts
        );
    }
}

fn assert_off_curve(title: &str, vs: &[Verdict]) {
    report_verdicts(title, vs);
    assert!(
        vs.iter().any(|v| v.excess > 0.0),
        "{title}: the broken mechanism was not caught"
    );
}

/// coco's published conversion is valid for the pair: the exact curve's ε lies below
/// `epsilon_at_delta(ρ, δ)` at every δ of the audit and at the DAS's 10⁻¹⁰.
fn assert_below_published(title: &str, profile: &Profile, rho: &Rho) {
    for delta in DELTAS.into_iter().chain([1e-6, 1e-10]) {
        let exact = profile.epsilon(delta);
        let published = epsilon_at_delta(rho, delta);
        assert!(
            exact <= published,
            "{title}: at δ = {delta} the exact ε {exact} is above the published {published}"
        );
    }
}

// ---------------------------------------------------------------------------------
// Single-node measurements.

/// A zCDP single-node scenario: a node's group sizes under `D`, and the group that gains
/// an entity in `D'`.
struct ZcdpCase {
    name: &'static str,
    method: Method,
    rho: &'static str,
    k: Size,
    sizes: &'static [Size],
    grows: usize,
}

const FIXED_TAIL: Method = Method::HcTail(Tail {
    above: 2,
    groups: match TailGroups::new(2) {
        Ok(m) => TailLength::Fixed(m),
        Err(_) => panic!("2 groups is a tail's m"),
    },
});

fn zcdp_cases() -> [ZcdpCase; 4] {
    [
        ZcdpCase {
            name: "hc: a group of size 1 grows to 2",
            method: Method::Hc,
            rho: "1/2",
            k: 4,
            sizes: &[0, 1, 1, 2, 3],
            grows: 2,
        },
        ZcdpCase {
            name: "hg: a group of size 1 grows to 2",
            method: Method::Hg,
            rho: "1/2",
            k: 4,
            sizes: &[0, 1, 1, 2, 3],
            grows: 2,
        },
        ZcdpCase {
            name: "tail: a group of size L = 2 grows to 3",
            method: FIXED_TAIL,
            rho: "1/2",
            k: 4,
            sizes: &[1, 2, 2, 3],
            grows: 1,
        },
        ZcdpCase {
            name: "naive: a group of size 1 grows to 2",
            method: Method::Naive,
            rho: "1/2",
            k: 4,
            sizes: &[0, 1, 1, 2, 3],
            grows: 2,
        },
    ]
}

/// A scenario's exact vectors, the σ² its level claims, the claimed profile, and the
/// claims: on the first cell that differs and, when several differ, on the linear
/// statistic `s · x` appended to the output (see [`with_statistic`]).
struct Prepared {
    v: Vec<i64>,
    v_prime: Vec<i64>,
    shift: Vec<i64>,
    sigma2: Sigma2,
    profile: Profile,
    claims: Vec<Claim>,
}

fn prepare(case: &ZcdpCase) -> Prepared {
    let mut grown = case.sizes.to_vec();
    grown[case.grows] += 1;
    let d = CountOfCounts::from_sizes(case.sizes.iter().copied());
    let d_prime = CountOfCounts::from_sizes(grown);
    let g = d.groups();
    let v = estimate::true_vector(case.method, &d, g, case.k);
    let v_prime = estimate::true_vector(case.method, &d_prime, g, case.k);
    let shift: Vec<i64> = v.iter().zip(&v_prime).map(|(a, b)| b - a).collect();
    let norms = case.method.sensitivity_norms();
    let l2_squared: i64 = shift.iter().map(|s| s * s).sum();
    assert!(
        l2_squared <= i64::from(norms.l2_squared),
        "{}: ‖v′ − v‖₂² = {l2_squared} above the claimed Δ₂²",
        case.name
    );
    let loss = Loss::Zcdp(rho(case.rho));
    let Noise::Gaussian(noise) = Noise::for_loss(&loss, norms).unwrap() else {
        panic!("a ρ measures with the discrete Gaussian")
    };
    let sigma2 = noise.sigma2().clone();
    let s2 = sigma2.to_f64();
    let differ: Vec<usize> = (0..v.len()).filter(|&i| shift[i] != 0).collect();
    let profile = Profile::of_shifts(&differ.iter().map(|&i| (s2, shift[i])).collect::<Vec<_>>());
    assert_below_published(case.name, &profile, &rho(case.rho));
    let cell = differ[0];
    let cell_cs = thresholds(&profile, &dg_pmf(s2), shift[cell].abs());
    let mut claims = statistic_claims(
        cell,
        v[cell],
        shift[cell],
        &cell_cs,
        &format!("{}: cell {cell}", case.method.label()),
    );
    if differ.len() > 1 {
        let stat_cs = thresholds(
            &profile,
            &statistic_pmf(&vec![s2; differ.len()]),
            l2_squared,
        );
        claims.extend(statistic_claims(
            v.len(),
            dot(&shift, &v),
            l2_squared,
            &stat_cs,
            &format!("{}: s·x over cells {differ:?}", case.method.label()),
        ));
    }
    Prepared {
        v,
        v_prime,
        shift,
        sigma2,
        profile,
        claims,
    }
}

fn dot(a: &[i64], b: &[i64]) -> i64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The output with the linear statistic `s · x` appended (post-processing).
fn with_statistic(mut out: Vec<i64>, shift: &[i64]) -> Vec<i64> {
    out.push(dot(shift, &out));
    out
}

/// Audits the real measurement (`estimate::measure` at the case's ρ).
fn audit_zcdp_case(case: &ZcdpCase, p: &Prepared, n: u64, seed: u64) -> Vec<Verdict> {
    let d = CountOfCounts::from_sizes(case.sizes.iter().copied());
    let mut grown = case.sizes.to_vec();
    grown[case.grows] += 1;
    let d_prime = CountOfCounts::from_sizes(grown);
    let g = d.groups();
    let loss = Loss::Zcdp(rho(case.rho));
    let mech = |truth: CountOfCounts| {
        let loss = loss.clone();
        let shift = p.shift.clone();
        move |source: &NoiseSource| {
            let mut rng = source.stream(Purpose::Test.index(0));
            let m = estimate::measure(
                case.method,
                &truth,
                NodeId::ROOT,
                g,
                case.k,
                &loss,
                &mut rng,
            )
            .unwrap();
            with_statistic(noisy_vector(m.into_noisy()), &shift)
        }
    };
    let outcomes = audit(&mech(d), &mech(d_prime), &p.claims, n, seed);
    verdicts(&p.profile, &outcomes)
}

/// A broken mechanism: the exact vectors plus discrete Gaussian noise of `sigma2`,
/// audited against the case's claimed curve.
fn audit_zcdp_broken(p: &Prepared, sigma2: Sigma2, seed: u64) -> Vec<Verdict> {
    let noise = DiscreteGaussian::new(sigma2);
    let mech = |v: Vec<i64>| {
        let noise = noise.clone();
        let shift = p.shift.clone();
        move |source: &NoiseSource| {
            let mut rng = source.stream(Purpose::Test.index(0));
            let out = v.iter().map(|x| x + noise.sample(&mut rng)).collect();
            with_statistic(out, &shift)
        }
    };
    let outcomes = audit(
        &mech(p.v.clone()),
        &mech(p.v_prime.clone()),
        &p.claims,
        ZCDP_COMPANION_SAMPLES,
        seed,
    );
    verdicts(&p.profile, &outcomes)
}

/// The claims the zCDP tests that run by default make (for `claims_fit_the_budget`).
pub(super) fn zcdp_claims() -> usize {
    let nodes: usize = zcdp_cases().iter().map(|c| prepare(c).claims.len()).sum();
    nodes + RELEASE_CLAIMS
}

#[test]
fn zcdp_measurements_stay_on_their_curve() {
    for (i, case) in zcdp_cases().iter().enumerate() {
        let p = prepare(case);
        let vs = audit_zcdp_case(case, &p, ZCDP_NODE_SAMPLES, 11_000 + 10 * i as u64);
        assert_on_curve(&format!("zCDP {} (ρ = {})", case.name, case.rho), &vs);
    }
}

#[test]
fn zcdp_audit_catches_a_sigma_too_small_by_30_percent() {
    for (i, case) in zcdp_cases()
        .iter()
        .filter(|c| c.method != Method::Hg)
        .enumerate()
    {
        let p = prepare(case);
        let small = Sigma2::new(p.sigma2.numer() * 49u32, p.sigma2.denom() * 100u32).unwrap();
        let vs = audit_zcdp_broken(&p, small, 12_000 + 10 * i as u64);
        assert_off_curve(&format!("zCDP {} with σ × 0.7", case.name), &vs);
    }
}

#[test]
fn zcdp_audit_catches_naive_calibrated_to_sensitivity_one() {
    let case = zcdp_cases()
        .into_iter()
        .find(|c| c.method == Method::Naive)
        .unwrap();
    let p = prepare(&case);
    let wrong = coco::noise::mechanism::sigma2_for(&rho(case.rho), 1).unwrap();
    let vs = audit_zcdp_broken(&p, wrong, 12_500);
    assert_off_curve(
        "zCDP naive calibrated to Δ₂² = 1 where Δ₂² = 2 applies",
        &vs,
    );
}

// ---------------------------------------------------------------------------------
// Whole releases.

/// The zCDP release scenario's per-level ρ (root, leaves): most on the leaves, as the
/// pure release audit does, so that the region that changes carries most of the loss.
const ZCDP_RELEASE_RHOS: [&str; 2] = ["1/10", "2/5"];

/// The two-level release of `main.rs` (`wls`, `hc`, `K` fixed) under a zCDP plan.
fn zcdp_release_plan(dataset: &Dataset) -> ReleasePlan {
    let mut plan = ReleasePlan::with_budgets(
        &dataset.hierarchy,
        ZCDP_RELEASE_RHOS
            .iter()
            .map(|r| Loss::Zcdp(rho(r)))
            .collect(),
        Method::Hc,
        MaxSize::Fixed(RELEASE_K),
    )
    .unwrap();
    plan.set_consistency(Consistency::Wls);
    plan.validate(&dataset.hierarchy, Path::new("zCDP audit plan"))
        .unwrap();
    plan
}

/// The claimed profile of a release: every node's measured vector moves by the
/// difference of its exact vectors, with its level's σ²; the release post-processes
/// the measurements.
fn release_profile(d: &Dataset, d_prime: &Dataset, plan: &ReleasePlan) -> Profile {
    let h = &d.hierarchy;
    let k = plan.max_size().bound().expect("a fixed K");
    let mut cells = Vec::new();
    for id in (0..h.len() as u32).map(NodeId) {
        let level = plan.level(h.node(id).level);
        let truth = |ds: &Dataset| {
            let t = ds.truth().for_diagnostic(Diagnostic::Oracle).node(id);
            estimate::true_vector(level.method(), t, ds.groups(id), k)
        };
        let (v, v_prime) = (truth(d), truth(d_prime));
        let norms = level.method().sensitivity_norms();
        let Noise::Gaussian(noise) = Noise::for_loss(level.loss().unwrap(), norms).unwrap() else {
            panic!("a ρ measures with the discrete Gaussian")
        };
        let s2 = noise.sigma2().to_f64();
        cells.extend(
            v.iter()
                .zip(&v_prime)
                .filter(|(a, b)| a != b)
                .map(|(a, b)| (s2, b - a)),
        );
    }
    Profile::of_shifts(&cells)
}

#[test]
fn a_zcdp_release_stays_on_its_curve() {
    let (d, d_prime) = release_datasets();
    let plan = zcdp_release_plan(&d);
    let total = match plan.total() {
        Some(Loss::Zcdp(r)) => r,
        other => panic!("a zCDP plan totals a ρ, not {other:?}"),
    };
    let profile = release_profile(&d, &d_prime, &plan);
    assert_below_published("zCDP release", &profile, &total);
    let on_d = release_mechanism(&d, &plan);
    let on_d_prime = release_mechanism(&d_prime, &plan);
    let outcomes = audit_mechanisms(&on_d, &on_d_prime, 1, 13_000);
    assert_on_curve(
        &format!(
            "zCDP release with wls and hc (ρ = {})",
            Loss::Zcdp(total.clone()).exact()
        ),
        &verdicts(&profile, &outcomes),
    );
}
