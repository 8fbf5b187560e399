//! Discrete Laplace samplers, per sample, at ε = 0.1 and Δ = 1 (scale 10):
//!
//! * `coco_inversion`: [`DiscreteLaplace`] (exact, table inversion);
//! * `coco_cks_reference`: [`coco::noise::cks`] (exact, Canonne–Kamath–Steinke);
//! * `float_inverse_cdf`: the inexact floating-point sampler exactness is measured
//!   against (sign bit and `⌊ln u / ln p⌋`, rejecting `−0`), here only.
//!
//! The coco and float samplers draw from the same ChaCha20 [`NoiseStream`];
//! `chacha20_next_u64_alone` is the cost of the one `u64` they need per sample. Also: the other
//! budgets of the tests, and the cost of building a table (cold, bypassing the cache).
//!
//! The discrete Gaussian ([`DiscreteGaussian`], exact, rejection from the discrete
//! Laplace), per sample, at σ = 1, 10, 1000 and 10⁴ (beyond the proposal's table), and
//! the cost of building its acceptance table (cold) at σ = 10 and 1000.
//!
//! Run: `cargo bench --bench noise -- --warm-up-time 1 --measurement-time 5`. OpenDP
//! 0.16's `sample_discrete_laplace` and `sample_discrete_gaussian` (exact, arbitrary
//! precision) are benchmarked in the same groups by `crates/oracle` (`cargo bench -p
//! coco-oracle`), so that coco is never built with OpenDP.

use std::hint::black_box;

use coco::noise::gaussian_acceptance::AcceptanceTable;
use coco::noise::inversion::InversionTable;
use coco::noise::{
    DiscreteGaussian, DiscreteLaplace, NoiseSource, NoiseStream, Purpose, Sigma2, cks,
};
use coco::privacy::Epsilon;
use criterion::{Criterion, criterion_group, criterion_main};
use num_bigint::BigUint;
use rand::Rng;

fn stream() -> NoiseStream {
    NoiseSource::seeded(2024).stream(Purpose::Test.index(1))
}

/// Floating-point two-sided geometric: the speed reference, not exact (Mironov 2012).
#[inline]
fn float_inverse_cdf(ln_p: f64, rng: &mut NoiseStream) -> i64 {
    loop {
        let v = rng.next_u64();
        let negative = v & 1 == 1;
        // u ∈ (0, 1] from the top 53 bits.
        let u = ((v >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64);
        let g = (u.ln() / ln_p).floor() as i64;
        if negative && g == 0 {
            continue;
        }
        return if negative { -g } else { g };
    }
}

fn at_epsilon_0_1(c: &mut Criterion) {
    let eps = Epsilon::parse("0.1").unwrap();
    let d = DiscreteLaplace::new(1, &eps).unwrap();
    d.prepare();
    let ln_p = -0.1f64;
    let mut g = c.benchmark_group("discrete_laplace_eps_0.1");
    let mut rng = stream();
    g.bench_function("chacha20_next_u64_alone", |b| b.iter(|| rng.next_u64()));
    let mut rng = stream();
    g.bench_function("coco_inversion", |b| b.iter(|| d.sample(&mut rng)));
    let mut rng = stream();
    g.bench_function("coco_cks_reference", |b| {
        b.iter(|| cks::sample_discrete_laplace(black_box(1), black_box(10), &mut rng))
    });
    let mut rng = stream();
    g.bench_function("float_inverse_cdf", |b| {
        b.iter(|| float_inverse_cdf(black_box(ln_p), &mut rng))
    });
    g.finish();
}

fn other_budgets(c: &mut Criterion) {
    let mut g = c.benchmark_group("coco_inversion");
    for (eps, sensitivity) in [("1/3", 1), ("1", 1), ("2.5", 1), ("0.01", 1), ("0.1", 2)] {
        let d = DiscreteLaplace::new(sensitivity, &Epsilon::parse(eps).unwrap()).unwrap();
        d.prepare();
        let mut rng = stream();
        g.bench_function(format!("eps_{eps}_sens_{sensitivity}"), |b| {
            b.iter(|| d.sample(&mut rng))
        });
    }
    // Beyond the table: the reference sampler.
    let d = DiscreteLaplace::new(1, &Epsilon::parse("0.0001").unwrap()).unwrap();
    let mut rng = stream();
    g.bench_function("eps_0.0001_reference", |b| b.iter(|| d.sample(&mut rng)));
    g.finish();
}

fn table_build(c: &mut Criterion) {
    let mut g = c.benchmark_group("table_build");
    g.bench_function("eps_0.1", |b| {
        b.iter(|| InversionTable::build(black_box(1), black_box(10), 63))
    });
    g.bench_function("eps_1/3", |b| {
        b.iter(|| InversionTable::build(black_box(1), black_box(3), 63))
    });
    g.sample_size(10);
    g.bench_function("scale_4096", |b| {
        b.iter(|| InversionTable::build(black_box(1), black_box(4096), 63))
    });
    g.finish();
}

fn gaussian(c: &mut Criterion) {
    let mut g = c.benchmark_group("discrete_gaussian");
    for sigma in [1u64, 10, 1000, 10_000] {
        let d = DiscreteGaussian::new(Sigma2::new(sigma * sigma, 1u8).unwrap());
        d.prepare();
        let mut rng = stream();
        g.bench_function(format!("coco_sigma_{sigma}"), |b| {
            b.iter(|| d.sample(&mut rng))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("gaussian_table_build");
    g.sample_size(10);
    for sigma in [10u64, 1000] {
        let (n, d) = (BigUint::from(sigma * sigma), BigUint::from(1u8));
        g.bench_function(format!("sigma_{sigma}"), |b| {
            b.iter(|| AcceptanceTable::build(black_box(&n), &d, sigma + 1, 63))
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    at_epsilon_0_1,
    other_budgets,
    table_build,
    gaussian
);
criterion_main!(benches);
