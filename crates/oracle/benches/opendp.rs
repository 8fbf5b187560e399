//! OpenDP 0.16's `sample_discrete_laplace` per sample at scale 10 (ε = 0.1, Δ = 1): the
//! exact arbitrary-precision sampler coco's `benches/noise.rs` compares its own with
//! (same group name, so the figures sit side by side in criterion's report).
//!
//! Run: `cargo bench -p coco-oracle -- --warm-up-time 1 --measurement-time 5`.

use std::ops::Div;

use criterion::{Criterion, criterion_group, criterion_main};

/// `n/d` in whatever rational type OpenDP asks for (dashu's `RBig`), without naming it.
fn ratio<T: From<u64> + Div<Output = T>>(n: u64, d: u64) -> T {
    T::from(n) / T::from(d)
}

fn at_epsilon_0_1(c: &mut Criterion) {
    let mut g = c.benchmark_group("discrete_laplace_eps_0.1");
    g.bench_function("opendp_cks", |b| {
        b.iter(|| opendp::traits::samplers::sample_discrete_laplace(ratio(10, 1)).unwrap())
    });
    g.finish();
}

criterion_group!(benches, at_epsilon_0_1);
criterion_main!(benches);
