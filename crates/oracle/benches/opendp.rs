//! OpenDP 0.16's exact arbitrary-precision samplers, per sample, in the same groups as
//! coco's own in `benches/noise.rs` (same group and benchmark names, so the figures sit
//! side by side in criterion's report):
//!
//! * `sample_discrete_laplace` at scale 10 (ε = 0.1, Δ = 1);
//! * `sample_discrete_gaussian` at σ = 1, 10, 1000 and 10⁴ (OpenDP takes the scale σ).
//!
//! Run: `cargo bench -p coco-oracle -- --warm-up-time 1 --measurement-time 5`.

use std::ops::Div;

use criterion::{Criterion, criterion_group, criterion_main};
use opendp::traits::samplers::{sample_discrete_gaussian, sample_discrete_laplace};

/// `n/d` in whatever rational type OpenDP asks for (dashu's `RBig`), without naming it.
fn ratio<T: From<u64> + Div<Output = T>>(n: u64, d: u64) -> T {
    T::from(n) / T::from(d)
}

fn at_epsilon_0_1(c: &mut Criterion) {
    let mut g = c.benchmark_group("discrete_laplace_eps_0.1");
    g.bench_function("opendp_cks", |b| {
        b.iter(|| sample_discrete_laplace(ratio(10, 1)).unwrap())
    });
    g.finish();
}

fn gaussian(c: &mut Criterion) {
    let mut g = c.benchmark_group("discrete_gaussian");
    for sigma in [1u64, 10, 1000, 10_000] {
        g.bench_function(format!("opendp_cks_sigma_{sigma}"), |b| {
            b.iter(|| sample_discrete_gaussian(ratio(sigma, 1)).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, at_epsilon_0_1, gaussian);
criterion_main!(benches);
