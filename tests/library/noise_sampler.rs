//! Statistical tests of the exact discrete Laplace sampler.
//!
//! Every check is a hypothesis test with a false-failure probability of 1e-6 (under the
//! usual chi-square and normal approximations, with at least 5 expected counts per
//! cell):
//!
//! * goodness of fit to the exact pmf (Pearson chi-square), for the fast path, for the
//!   exact slow path forced by coarse tables, and for the reference engine of very large
//!   scales;
//! * two-sample homogeneity (chi-square) against OpenDP's exact sampler and against the
//!   reference CKS sampler of this crate;
//! * mean 0 and variance `2p/(1 − p)²`.
//!
//! The generators are seeded, so a run is reproducible, except OpenDP's, which draws from
//! its own `thread_rng`. With 32 checks, a correct sampler fails a given seed with
//! probability about 3e-5. Sample sizes keep the suite at a few seconds in a debug build;
//! the `#[ignore]`d tests repeat the checks with 20 times more samples
//! (`cargo test --test library noise_sampler -- --ignored`). The comparison with OpenDP
//! runs OpenDP's sampler as a program of its own (`crates/oracle`, so that coco is never
//! built with OpenDP): `cargo build -p coco-oracle`, then
//! `COCO_OPENDP_ORACLE=target/debug/coco-oracle cargo test --test library -- --ignored --exact noise_sampler::agrees_with_opendp_sampler`,
//! which `.ci/run` does.

use coco::noise::{DiscreteLaplace, NoiseSource, Purpose, cks};
use coco::privacy::Epsilon;

/// Upper 1e-6 quantiles of the chi-square distribution with `df = 1..=200` degrees of
/// freedom, rounded up at the fourth decimal. Provenance: SciPy 1.17.1,
/// `[math.ceil(scipy.stats.chi2.isf(1e-6, df) * 1e4) / 1e4 for df in range(1, 201)]`.
pub(crate) const CHI2_CRITICAL_1E6: [f64; 200] = [
    23.9282, 27.6311, 30.6649, 33.3769, 35.8882, 38.2584, 40.5219, 42.7010, 44.8110, 46.8631,
    48.8657, 50.8253, 52.7471, 54.6354, 56.4935, 58.3244, 60.1307, 61.9143, 63.6771, 65.4207,
    67.1466, 68.8558, 70.5496, 72.2289, 73.8946, 75.5475, 77.1882, 78.8175, 80.4360, 82.0442,
    83.6426, 85.2316, 86.8117, 88.3833, 89.9468, 91.5024, 93.0506, 94.5916, 96.1256, 97.6530,
    99.1740, 100.6888, 102.1976, 103.7007, 105.1982, 106.6903, 108.1772, 109.6590, 111.1360,
    112.6081, 114.0757, 115.5388, 116.9976, 118.4521, 119.9025, 121.3489, 122.7914, 124.2300,
    125.6650, 127.0964, 128.5243, 129.9487, 131.3698, 132.7875, 134.2021, 135.6136, 137.0220,
    138.4274, 139.8299, 141.2295, 142.6263, 144.0204, 145.4118, 146.8005, 148.1867, 149.5704,
    150.9515, 152.3302, 153.7066, 155.0806, 156.4523, 157.8217, 159.1889, 160.5540, 161.9169,
    163.2777, 164.6364, 165.9931, 167.3478, 168.7006, 170.0514, 171.4003, 172.7474, 174.0926,
    175.4360, 176.7776, 178.1175, 179.4556, 180.7921, 182.1268, 183.4599, 184.7914, 186.1213,
    187.4496, 188.7763, 190.1016, 191.4252, 192.7474, 194.0682, 195.3875, 196.7053, 198.0217,
    199.3368, 200.6504, 201.9627, 203.2737, 204.5833, 205.8916, 207.1987, 208.5044, 209.8089,
    211.1122, 212.4142, 213.7150, 215.0146, 216.3131, 217.6103, 218.9064, 220.2014, 221.4952,
    222.7879, 224.0795, 225.3700, 226.6595, 227.9478, 229.2351, 230.5214, 231.8066, 233.0908,
    234.3740, 235.6562, 236.9374, 238.2177, 239.4969, 240.7752, 242.0525, 243.3289, 244.6044,
    245.8790, 247.1526, 248.4253, 249.6972, 250.9681, 252.2382, 253.5074, 254.7758, 256.0433,
    257.3099, 258.5757, 259.8407, 261.1049, 262.3682, 263.6308, 264.8925, 266.1535, 267.4137,
    268.6731, 269.9317, 271.1896, 272.4467, 273.7031, 274.9587, 276.2136, 277.4677, 278.7211,
    279.9739, 281.2259, 282.4771, 283.7277, 284.9776, 286.2268, 287.4754, 288.7232, 289.9704,
    291.2169, 292.4628, 293.7080, 294.9525, 296.1964, 297.4397, 298.6823, 299.9243, 301.1657,
    302.4064, 303.6465, 304.8861, 306.1250, 307.3633, 308.6010, 309.8381,
];

/// Two-sided 1e-6 quantile of the standard normal: `scipy.stats.norm.isf(0.5e-6)`
/// = 4.891638475698591 (SciPy 1.17.1).
pub(crate) const Z_1E6: f64 = 4.891_638_5;

/// At most this many cells, so that the degrees of freedom stay within the table.
const MAX_CELLS: usize = 150;

fn eps(text: &str) -> Epsilon {
    Epsilon::parse(text).unwrap()
}

fn laplace(epsilon: &str, sensitivity: u32) -> DiscreteLaplace {
    DiscreteLaplace::new(sensitivity, &eps(epsilon)).unwrap()
}

/// `n` samples from stream `stream` of a fixed seed.
fn draw(d: &DiscreteLaplace, stream: u32, n: usize) -> Vec<i64> {
    let mut rng = NoiseSource::seeded(20_240_601).stream(Purpose::Test.index(stream));
    let mut out = vec![0; n];
    d.fill(&mut rng, &mut out);
    out
}

/// `P(Z ≤ z)` from `p`: `p^−z/(1 + p)` below zero, `1 − p^(z+1)/(1 + p)` from zero on.
fn cdf(p: f64, z: i64) -> f64 {
    if z < 0 {
        p.powf(-z as f64) / (1.0 + p)
    } else {
        1.0 - p.powf(z as f64 + 1.0) / (1.0 + p)
    }
}

/// Contiguous cells `[start_i, start_{i+1})` covering all integers, each of probability
/// at least `max(5/n, 1/MAX_CELLS)`, with their probabilities.
fn cells(p: f64, n: usize) -> (Vec<i64>, Vec<f64>) {
    let min_prob = (5.0 / n as f64).max(1.0 / MAX_CELLS as f64);
    // Far enough out that the left tail is below min_prob.
    let reach = ((min_prob * (1.0 + p)).ln() / p.ln()).ceil() as i64 + 2;
    let mut starts = vec![i64::MIN];
    let mut probs = Vec::new();
    let mut below = 0.0; // P(Z < current start)
    for z in -reach..=reach {
        let upto = cdf(p, z);
        if upto - below >= min_prob {
            probs.push(upto - below);
            starts.push(z + 1);
            below = upto;
        }
    }
    // The right tail joins the last cell.
    starts.pop();
    let last = probs.pop().unwrap() + (1.0 - below);
    probs.push(last);
    assert!(probs.iter().all(|&q| q * n as f64 >= 5.0));
    assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    (starts, probs)
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

/// Pearson's goodness of fit of `samples` to the discrete Laplace law of `d`.
fn assert_fits(d: &DiscreteLaplace, samples: &[i64], label: &str) {
    let n = samples.len();
    let (starts, probs) = cells(d.p(), n);
    let observed = counts(&starts, samples);
    let stat: f64 = observed
        .iter()
        .zip(&probs)
        .map(|(&o, &q)| {
            let e = q * n as f64;
            (o as f64 - e).powi(2) / e
        })
        .sum();
    let df = probs.len() - 1;
    assert!(
        stat < critical(df),
        "{label}: chi-square {stat:.2} ≥ {:.2} (df {df}, α = 1e-6)",
        critical(df)
    );
}

/// Chi-square test that `a` and `b` come from one law, on cells of the law of `d`.
fn assert_same_law(d: &DiscreteLaplace, a: &[i64], b: &[i64], label: &str) {
    let (starts, _) = cells(d.p(), a.len().min(b.len()));
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

/// Mean 0 (normal approximation, two-sided 1e-6) and variance `2p/(1 − p)²` (the mean
/// of `Z²` against its standard error; z = 6 rather than 4.89 leaves room for the
/// skewness of `Z²`, as OpenDP's sampler tests do).
fn assert_moments(d: &DiscreteLaplace, samples: &[i64], label: &str) {
    let n = samples.len() as f64;
    let p = d.p();
    let var = d.variance();
    // E[Z⁴] by summing the pmf far into the tail.
    let mut fourth = 0.0;
    let mut k = 1i64;
    loop {
        let term = 2.0 * d.pmf(k) * (k as f64).powi(4);
        fourth += term;
        if term < 1e-18 * fourth && p.powf(k as f64) < 1e-18 {
            break;
        }
        k += 1;
    }
    let mean = samples.iter().map(|&x| x as f64).sum::<f64>() / n;
    assert!(
        mean.abs() <= Z_1E6 * (var / n).sqrt(),
        "{label}: mean {mean} (sd of the mean {})",
        (var / n).sqrt()
    );
    let second = samples.iter().map(|&x| (x as f64).powi(2)).sum::<f64>() / n;
    let se = ((fourth - var * var) / n).sqrt();
    assert!(
        (second - var).abs() <= 6.0 * se,
        "{label}: mean square {second}, variance {var}, standard error {se}"
    );
}

/// OpenDP 0.16's exact sampler at scale `sensitivity/ε` = `scale_num/scale_den`: `n`
/// samples from the oracle program named by `COCO_OPENDP_ORACLE` (`crates/oracle`).
fn opendp_samples(scale_num: u64, scale_den: u64, n: usize) -> Vec<i64> {
    let program = std::env::var_os("COCO_OPENDP_ORACLE").expect(
        "COCO_OPENDP_ORACLE names the OpenDP oracle program: `cargo build -p coco-oracle`, \
         then COCO_OPENDP_ORACLE=target/debug/coco-oracle",
    );
    let out = std::process::Command::new(&program)
        .args([scale_num, scale_den, n as u64].map(|x| x.to_string()))
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

/// The budgets of the issue: (ε, Δ).
const BUDGETS: [(&str, u32); 6] = [
    ("1/3", 1),
    ("0.1", 1),
    ("0.01", 1),
    ("1", 1),
    ("2.5", 1),
    ("0.1", 2),
];

fn fits_exact_pmf(n: usize) {
    for (i, &(e, sensitivity)) in BUDGETS.iter().enumerate() {
        let d = laplace(e, sensitivity);
        assert!(!d.uses_reference_sampler());
        let xs = draw(&d, i as u32, n);
        assert_fits(&d, &xs, &format!("ε = {e}, Δ = {sensitivity}"));
    }
}

#[test]
fn fast_sampler_fits_the_exact_pmf() {
    fits_exact_pmf(40_000);
}

#[test]
#[ignore = "large version: 20× the samples"]
fn fast_sampler_fits_the_exact_pmf_large() {
    fits_exact_pmf(800_000);
}

fn slow_path_fits(n: usize) {
    // Four-bit tables leave a large share of the draws (a third to most of them) to the
    // exact slow path; see the unit tests of `noise::inversion`.
    for (i, &(e, sensitivity)) in [("0.1", 1), ("1/3", 1), ("2.5", 1), ("0.1", 2)]
        .iter()
        .enumerate()
    {
        let d = DiscreteLaplace::with_table_bits(sensitivity, &eps(e), 4).unwrap();
        let xs = draw(&d, 100 + i as u32, n);
        assert_fits(&d, &xs, &format!("4-bit table, ε = {e}, Δ = {sensitivity}"));
    }
}

#[test]
fn forced_slow_path_fits_the_exact_pmf() {
    slow_path_fits(10_000);
}

#[test]
#[ignore = "large version: 20× the samples"]
fn forced_slow_path_fits_the_exact_pmf_large() {
    slow_path_fits(200_000);
}

#[test]
fn one_bit_tables_still_give_the_same_law_as_full_ones() {
    // With one bit, nearly every draw takes the slow path; its samples must be
    // indistinguishable from the fast path's.
    let coarse = DiscreteLaplace::with_table_bits(1, &eps("1/3"), 1).unwrap();
    let fine = laplace("1/3", 1);
    let a = draw(&coarse, 150, 4_000);
    let b = draw(&fine, 151, 40_000);
    assert_same_law(&fine, &a, &b, "1-bit vs 63-bit tables, ε = 1/3");
}

#[test]
fn very_large_scales_use_the_reference_and_fit() {
    let d = laplace("0.0001", 1);
    assert!(d.uses_reference_sampler());
    let xs = draw(&d, 200, 10_000);
    assert_fits(&d, &xs, "ε = 0.0001 (reference engine)");
    // The boundary: scale 4096 is tabulated, just above is not.
    assert!(!laplace("1/4096", 1).uses_reference_sampler());
    assert!(!laplace("2/4096", 2).uses_reference_sampler());
    assert!(laplace("1/4097", 1).uses_reference_sampler());
    assert!(laplace("1/2048", 3).uses_reference_sampler());
}

fn agrees_with_opendp(n: usize) {
    // (ε, Δ, scale Δ/ε as a fraction)
    for (i, &(e, sensitivity, num, den)) in [
        ("1/3", 1, 3, 1),
        ("0.1", 1, 10, 1),
        ("2.5", 1, 2, 5),
        ("0.1", 2, 20, 1),
    ]
    .iter()
    .enumerate()
    {
        let d = laplace(e, sensitivity);
        let ours = draw(&d, 300 + i as u32, n);
        let theirs = opendp_samples(num, den, n);
        assert_same_law(
            &d,
            &ours,
            &theirs,
            &format!("vs OpenDP, ε = {e}, Δ = {sensitivity}"),
        );
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

fn agrees_with_reference(n: usize) {
    for (i, &(e, sensitivity)) in BUDGETS.iter().enumerate() {
        let d = laplace(e, sensitivity);
        let ours = draw(&d, 400 + i as u32, n);
        let e_exact = eps(e);
        let s: u128 = e_exact.numer().try_into().unwrap();
        let t: u128 = u128::try_from(e_exact.denom()).unwrap() * u128::from(sensitivity);
        let mut rng = NoiseSource::seeded(7).stream(Purpose::Test.index(500 + i as u32));
        let reference: Vec<i64> = (0..n)
            .map(|_| cks::sample_discrete_laplace(s, t, &mut rng))
            .collect();
        assert_same_law(
            &d,
            &ours,
            &reference,
            &format!("vs CKS reference, ε = {e}, Δ = {sensitivity}"),
        );
    }
}

#[test]
fn agrees_with_reference_sampler() {
    agrees_with_reference(20_000);
}

#[test]
#[ignore = "large version: 20× the samples"]
fn agrees_with_reference_sampler_large() {
    agrees_with_reference(400_000);
}

fn moments(n: usize) {
    for (i, &(e, sensitivity)) in [("1/3", 1), ("0.01", 1), ("0.1", 1), ("2.5", 1), ("0.1", 2)]
        .iter()
        .enumerate()
    {
        let d = laplace(e, sensitivity);
        let xs = draw(&d, 600 + i as u32, n);
        assert_moments(&d, &xs, &format!("ε = {e}, Δ = {sensitivity}"));
    }
}

#[test]
fn mean_is_zero_and_variance_matches() {
    moments(50_000);
}

#[test]
#[ignore = "large version: 20× the samples"]
fn mean_is_zero_and_variance_matches_large() {
    moments(1_000_000);
}

#[test]
fn seeded_streams_reproduce_and_clones_share_the_law() {
    let d = laplace("0.1", 1);
    let copy = d.clone();
    assert_eq!(draw(&d, 700, 1_000), draw(&copy, 700, 1_000));
    assert_ne!(draw(&d, 700, 1_000), draw(&d, 701, 1_000));
    // A fresh instance for the same budget samples identically (same table).
    assert_eq!(draw(&d, 702, 1_000), draw(&laplace("1/10", 1), 702, 1_000));
    // One u64 per sample on the fast path: the stream stays aligned.
    let mut rng = NoiseSource::seeded(1).stream(Purpose::Test.index(3));
    let mut twin = NoiseSource::seeded(1).stream(Purpose::Test.index(3));
    for _ in 0..1_000 {
        d.sample(&mut rng);
    }
    for _ in 0..1_000 {
        rand::Rng::next_u64(&mut twin);
    }
    assert_eq!(
        rand::Rng::next_u64(&mut rng),
        rand::Rng::next_u64(&mut twin)
    );
}

#[test]
fn extreme_budgets_are_fast_and_sane() {
    // ε = 10^18: p is astronomically small, every sample is 0.
    let d = laplace("1000000000000000000", 1);
    assert!(draw(&d, 800, 10_000).iter().all(|&x| x == 0));
    // ε = 1/10^6 and Δ = 1000: far beyond the table, still exact, still quick.
    let d = laplace("0.000001", 1000);
    assert!(d.uses_reference_sampler());
    let xs = draw(&d, 801, 100);
    assert!(xs.iter().any(|&x| x.unsigned_abs() > 1_000_000));
}
