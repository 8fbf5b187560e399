//! Statistical tests of the exact discrete Gaussian sampler.
//!
//! Every check is a hypothesis test with a false-failure probability of 1e-6 (under the
//! usual chi-square and normal approximations, with at least 5 expected counts per
//! cell; the critical values and their provenance are `noise_sampler`'s):
//!
//! * goodness of fit to the exact pmf (Pearson chi-square) at σ = 0.3, 1, √2, 3.5
//!   (σ² = 49/4), 3.7, 10, 1000 and 10⁴ (beyond the proposal's table), on the fast path
//!   and on the exact slow path forced by coarse bounds; each fit has a companion that
//!   draws at σ × 0.7 and σ × 1.3 and must be rejected by the same test (they are, by
//!   chi-square statistics in the hundreds at least: a companion that fails is a test
//!   without power, not bad luck);
//! * mean 0, `E[Z²]` against the exact variance, `E[Z⁴]` against the exact fourth
//!   moment (the kurtosis), and `P(|Z| ≥ kσ)` for k = 1, 2, 3 against the exact tails;
//! * two-sample homogeneity (chi-square) against OpenDP's exact sampler and between
//!   coarse and full acceptance bounds.
//!
//! The pmf is computed here in floating point by summing `e^{−z²/2σ²}` over every
//! integer where it does not underflow (the sampler never computes a pmf: it compares
//! uniform bits with integer bounds). The mean uses the two-sided normal quantile; the
//! moments and tails of `Z²` and `Z⁴`, whose means are skewed, use 6 standard errors,
//! as `noise_sampler` does for the variance.
//!
//! The generators are seeded, so a run is reproducible, except OpenDP's. With about 60
//! checks, a correct sampler fails a given seed with probability about 6e-5. At σ = 0.1
//! the law puts all but 4e-22 of its mass on 0, so σ × 0.7 and σ × 1.3 cannot be told
//! apart from it by any sample: there the test checks that every sample is 0. The
//! `#[ignore]`d tests repeat the checks with 20 times more samples
//! (`cargo test --test library gaussian_sampler -- --ignored`); the comparison with
//! OpenDP runs `crates/oracle` (`coco-oracle gaussian NUM DEN N`, OpenDP 0.16's
//! `sample_discrete_gaussian` at σ = NUM/DEN), as `noise_sampler` does:
//! `COCO_OPENDP_ORACLE=target/debug/coco-oracle cargo test --test library -- --ignored --exact gaussian_sampler::agrees_with_opendp_sampler`,
//! which `.ci/run` does.

use coco::noise::{DiscreteGaussian, NoiseSource, Purpose, Sigma2};

use crate::noise_sampler::{CHI2_CRITICAL_1E6, Z_1E6};

/// At most this many cells, so that the degrees of freedom stay within the table.
const MAX_CELLS: usize = 150;

fn gaussian(n: u64, d: u64) -> DiscreteGaussian {
    DiscreteGaussian::new(Sigma2::new(n, d).unwrap())
}

/// `n` samples from stream `stream` of a fixed seed.
fn draw(g: &DiscreteGaussian, stream: u32, n: usize) -> Vec<i64> {
    let mut rng = NoiseSource::seeded(20_261_128).stream(Purpose::Test.index(stream));
    let mut out = vec![0; n];
    g.fill(&mut rng, &mut out);
    out
}

/// The exact law `P(Z = z) ∝ e^{−z²/2σ²}` on `−reach..=reach`, beyond which every
/// term underflows.
struct Law {
    sigma2: f64,
    reach: i64,
    pmf: Vec<f64>,
}

impl Law {
    fn new(n: u64, d: u64) -> Law {
        let sigma2 = n as f64 / d as f64;
        // e^{−z²/2σ²} < 1e-320 once z > 38.4σ.
        let reach = (38.5 * sigma2.sqrt()).ceil() as i64 + 1;
        let weights: Vec<f64> = (-reach..=reach)
            .map(|z| (-((z * z) as f64) / (2.0 * sigma2)).exp())
            .collect();
        // Summed from the smallest terms up.
        let mut order: Vec<usize> = (0..weights.len()).collect();
        order.sort_by(|&a, &b| weights[a].total_cmp(&weights[b]));
        let total: f64 = order.iter().map(|&i| weights[i]).sum();
        Law {
            sigma2,
            reach,
            pmf: weights.iter().map(|w| w / total).collect(),
        }
    }

    fn zs(&self) -> impl Iterator<Item = (i64, f64)> + '_ {
        (-self.reach..).zip(self.pmf.iter().copied())
    }

    /// `E[Z^k]` for even `k`.
    fn moment(&self, k: i32) -> f64 {
        self.zs().map(|(z, p)| (z as f64).powi(k) * p).sum()
    }

    /// `P(|Z| ≥ m)`.
    fn tail(&self, m: i64) -> f64 {
        self.zs()
            .filter(|&(z, _)| z.abs() >= m)
            .map(|(_, p)| p)
            .sum()
    }

    /// Contiguous cells `[start_i, start_{i+1})` covering all integers, each of
    /// probability at least `5/n`, at most `MAX_CELLS` of them, with their probabilities.
    fn cells(&self, n: usize) -> (Vec<i64>, Vec<f64>) {
        let mut min_prob = 5.0 / n as f64;
        loop {
            let mut starts = vec![i64::MIN];
            let mut probs = Vec::new();
            let mut acc = 0.0;
            for (z, p) in self.zs() {
                acc += p;
                if acc >= min_prob {
                    probs.push(acc);
                    starts.push(z + 1);
                    acc = 0.0;
                }
            }
            // The right tail joins the last cell.
            starts.pop();
            let last = probs.pop().unwrap() + acc;
            probs.push(last);
            if probs.len() <= MAX_CELLS {
                assert!(probs.len() >= 2, "σ² = {}: one cell", self.sigma2);
                assert!(probs.iter().all(|&q| q * n as f64 >= 5.0));
                assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-9);
                return (starts, probs);
            }
            min_prob *= 1.25;
        }
    }
}

fn counts(starts: &[i64], samples: &[i64]) -> Vec<u64> {
    let mut c = vec![0u64; starts.len()];
    for &x in samples {
        c[starts.partition_point(|&s| s <= x) - 1] += 1;
    }
    c
}

fn critical(df: usize) -> f64 {
    CHI2_CRITICAL_1E6[df - 1]
}

/// Pearson's chi-square of `samples` against `law`, with its degrees of freedom.
fn fit_statistic(law: &Law, samples: &[i64]) -> (f64, usize) {
    let n = samples.len();
    let (starts, probs) = law.cells(n);
    let observed = counts(&starts, samples);
    let stat = observed
        .iter()
        .zip(&probs)
        .map(|(&o, &q)| {
            let e = q * n as f64;
            (o as f64 - e).powi(2) / e
        })
        .sum();
    (stat, probs.len() - 1)
}

fn assert_fits(law: &Law, samples: &[i64], label: &str) {
    let (stat, df) = fit_statistic(law, samples);
    assert!(
        stat < critical(df),
        "{label}: chi-square {stat:.2} ≥ {:.2} (df {df}, α = 1e-6)",
        critical(df)
    );
}

fn assert_rejected(law: &Law, samples: &[i64], label: &str) {
    let (stat, df) = fit_statistic(law, samples);
    assert!(
        stat >= critical(df),
        "{label}: chi-square {stat:.2} < {:.2} (df {df}): the test cannot tell this law apart",
        critical(df)
    );
}

/// Chi-square test that `a` and `b` come from one law, on cells of `law`.
fn assert_same_law(law: &Law, a: &[i64], b: &[i64], label: &str) {
    let (starts, _) = law.cells(a.len().min(b.len()));
    let (ca, cb) = (counts(&starts, a), counts(&starts, b));
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let mut stat = 0.0;
    let mut used = 0;
    for (&x, &y) in ca.iter().zip(&cb) {
        let total = (x + y) as f64;
        if total == 0.0 {
            continue;
        }
        used += 1;
        let (ea, eb) = (total * na / (na + nb), total * nb / (na + nb));
        stat += (x as f64 - ea).powi(2) / ea + (y as f64 - eb).powi(2) / eb;
    }
    let df = used - 1;
    assert!(
        stat < critical(df),
        "{label}: homogeneity chi-square {stat:.2} ≥ {:.2} (df {df}, α = 1e-6)",
        critical(df)
    );
}

/// σ² = n/d and a label; the last is beyond the discrete Laplace proposal's table.
const SIGMAS: [(u64, u64, &str); 8] = [
    (9, 100, "σ = 0.3"),
    (1, 1, "σ = 1"),
    (2, 1, "σ² = 2"),
    (49, 4, "σ² = 49/4"),
    (1369, 100, "σ = 3.7"),
    (100, 1, "σ = 10"),
    (1_000_000, 1, "σ = 1000"),
    (100_000_000, 1, "σ = 10^4"),
];

fn fits_and_rejects(n: usize) {
    for (i, &(num, den, label)) in SIGMAS.iter().enumerate() {
        let law = Law::new(num, den);
        let stream = 3 * i as u32;
        let g = gaussian(num, den);
        assert_fits(&law, &draw(&g, stream, n), label);
        // σ × 0.7 and σ × 1.3: σ² × 49/100 and × 169/100.
        for (k, scale) in [(1, 49), (2, 169)] {
            let wrong = gaussian(num * scale, den * 100);
            let label = format!("{label}, drawn at σ² × {scale}/100");
            assert_rejected(&law, &draw(&wrong, stream + k, n), &label);
        }
    }
}

#[test]
fn fits_the_exact_pmf_and_rejects_wrong_sigmas() {
    assert!(gaussian(100_000_000, 1).uses_reference_proposal());
    assert!(!gaussian(1_000_000, 1).uses_reference_proposal());
    fits_and_rejects(40_000);
}

#[test]
#[ignore = "large version: 20× the samples"]
fn fits_the_exact_pmf_and_rejects_wrong_sigmas_large() {
    fits_and_rejects(800_000);
}

#[test]
fn forced_slow_path_fits_the_exact_pmf() {
    // Four-bit acceptance bounds: a round's acceptance is open in about one draw in
    // eight (more near the mode), and decided exactly from γ.
    for (i, &(num, den, label)) in SIGMAS.iter().enumerate() {
        let g = gaussian(num, den).table_bits(4);
        let label = format!("4-bit acceptance bounds, {label}");
        assert_fits(
            &Law::new(num, den),
            &draw(&g, 100 + i as u32, 10_000),
            &label,
        );
    }
}

#[test]
fn one_bit_bounds_give_the_same_law_as_full_ones() {
    // With one bit, about half the acceptances take the slow path (W on the wrong side
    // of 1/2).
    for (i, (num, den)) in [(1369u64, 100u64), (9, 100)].into_iter().enumerate() {
        let coarse = gaussian(num, den).table_bits(1);
        let fine = gaussian(num, den);
        let a = draw(&coarse, 150 + 2 * i as u32, 4_000);
        let b = draw(&fine, 151 + 2 * i as u32, 40_000);
        let label = format!("1-bit vs 63-bit acceptance bounds, σ² = {num}/{den}");
        assert_same_law(&Law::new(num, den), &a, &b, &label);
    }
}

#[test]
fn a_tiny_sigma_gives_zeros() {
    // σ = 0.1: P(Z ≠ 0) = 3.9e-22, so 100 000 samples are all 0 but with probability
    // 4e-17.
    let g = gaussian(1, 100);
    assert!(draw(&g, 200, 100_000).iter().all(|&x| x == 0));
    // σ² = 10^−18: still exact, still quick.
    let g = DiscreteGaussian::new(Sigma2::new(1u8, 1_000_000_000_000_000_000u64).unwrap());
    assert!(draw(&g, 201, 10_000).iter().all(|&x| x == 0));
}

/// Mean, second and fourth moments, and tails at 1, 2 and 3 σ.
fn assert_moments(g: &DiscreteGaussian, law: &Law, samples: &[i64], label: &str) {
    let n = samples.len() as f64;
    let var = law.moment(2);
    let (m4, m8) = (law.moment(4), law.moment(8));
    // The sampler's own variance (for estimators) against this independent sum.
    assert!(
        (g.variance() - var).abs() <= 1e-12 * var,
        "{label}: variance() {} vs {var}",
        g.variance()
    );
    let mean = samples.iter().map(|&x| x as f64).sum::<f64>() / n;
    assert!(
        mean.abs() <= Z_1E6 * (var / n).sqrt(),
        "{label}: mean {mean} (sd of the mean {})",
        (var / n).sqrt()
    );
    let second = samples.iter().map(|&x| (x as f64).powi(2)).sum::<f64>() / n;
    let se = ((m4 - var * var) / n).sqrt();
    assert!(
        (second - var).abs() <= 6.0 * se,
        "{label}: mean square {second}, variance {var}, standard error {se}"
    );
    let fourth = samples.iter().map(|&x| (x as f64).powi(4)).sum::<f64>() / n;
    let se = ((m8 - m4 * m4) / n).sqrt();
    assert!(
        (fourth - m4).abs() <= 6.0 * se,
        "{label}: mean fourth power {fourth}, E[Z⁴] {m4} (kurtosis {:.4} vs {:.4}), standard error {se}",
        fourth / (second * second),
        m4 / (var * var)
    );
    let sigma = law.sigma2.sqrt();
    for k in 1..=3 {
        let m = (k as f64 * sigma).ceil() as i64;
        let p = law.tail(m);
        let seen = samples.iter().filter(|x| x.abs() >= m).count() as f64 / n;
        let se = (p * (1.0 - p) / n).sqrt();
        assert!(
            (seen - p).abs() <= 6.0 * se,
            "{label}: P(|Z| ≥ {m}) seen {seen}, exact {p}, standard error {se}"
        );
    }
}

fn moments(n: usize) {
    for (i, &(num, den, label)) in SIGMAS.iter().enumerate() {
        let g = gaussian(num, den);
        let law = Law::new(num, den);
        assert_moments(&g, &law, &draw(&g, 300 + i as u32, n), label);
    }
}

#[test]
fn moments_and_tails_match() {
    moments(100_000);
}

#[test]
#[ignore = "large version: 20× the samples"]
fn moments_and_tails_match_large() {
    moments(2_000_000);
}

#[test]
fn seeded_streams_reproduce_and_clones_share_the_law() {
    let g = gaussian(100, 1);
    let copy = g.clone();
    assert_eq!(draw(&g, 400, 1_000), draw(&copy, 400, 1_000));
    assert_ne!(draw(&g, 400, 1_000), draw(&g, 401, 1_000));
    // A fresh instance for the same σ² (written unreduced) samples identically.
    assert_eq!(draw(&g, 402, 1_000), draw(&gaussian(300, 3), 402, 1_000));
    let mut one = vec![0; 10];
    let mut rng = NoiseSource::seeded(20_261_128).stream(Purpose::Test.index(403));
    for x in &mut one {
        *x = g.sample(&mut rng);
    }
    assert_eq!(one, draw(&g, 403, 10));
}

/// OpenDP 0.16's exact sampler at σ = `num/den` (OpenDP takes the scale σ, not σ²):
/// `n` samples from the oracle program named by `COCO_OPENDP_ORACLE` (`crates/oracle`).
fn opendp_samples(num: u64, den: u64, n: usize) -> Vec<i64> {
    let program = std::env::var_os("COCO_OPENDP_ORACLE").expect(
        "COCO_OPENDP_ORACLE names the OpenDP oracle program: `cargo build -p coco-oracle`, \
         then COCO_OPENDP_ORACLE=target/debug/coco-oracle",
    );
    let out = std::process::Command::new(&program)
        .arg("gaussian")
        .args([num, den, n as u64].map(|x| x.to_string()))
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", std::path::Path::new(&program).display()));
    assert!(
        out.status.success(),
        "the oracle failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let samples: Vec<i64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(samples.len(), n);
    samples
}

fn agrees_with_opendp(n: usize) {
    // σ = num/den, so σ² = num²/den².
    for (i, &(num, den)) in [(1u64, 1u64), (37, 10), (10, 1), (7, 2), (3, 10)]
        .iter()
        .enumerate()
    {
        let g = gaussian(num * num, den * den);
        let ours = draw(&g, 500 + i as u32, n);
        let theirs = opendp_samples(num, den, n);
        let law = Law::new(num * num, den * den);
        assert_same_law(&law, &ours, &theirs, &format!("vs OpenDP, σ = {num}/{den}"));
    }
}

#[test]
#[ignore = "needs the OpenDP oracle program (COCO_OPENDP_ORACLE); .ci/run runs it"]
fn agrees_with_opendp_sampler() {
    agrees_with_opendp(10_000);
}

#[test]
#[ignore = "large version: 20× the samples (and the OpenDP oracle program)"]
fn agrees_with_opendp_sampler_large() {
    agrees_with_opendp(200_000);
}
