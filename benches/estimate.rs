//! Single-node estimators at production sizes, and their parts.
//!
//! * `hc/k=100000/*`: a realistic node (≈45,000 households, a few group quarters)
//!   with K = 100,000 at ε = 1: measure + estimate, measurement alone, estimation
//!   alone, and the noise sampling alone (100,001 samples). Target ≤ 20 ms per node.
//! * `hg/g=10^7/*`: ten million groups, K = 100,000, ε = 1: the same four parts.
//!   Target ≤ 2 s.
//! * `isotonic/*`: the regressions alone on the noisy vectors above.
//!
//! Run with `cargo bench --bench estimate -- --warm-up-time 1 --measurement-time 5`.

use std::hint::black_box;

use coco::estimate::{
    self, EstimateOptions, IsotonicFit, Method, cumulative, isotonic, unattributed,
};
use coco::histogram::{Count, CountOfCounts, Size};
use coco::noise::{DiscreteLaplace, NoiseSource, Purpose};
use coco::privacy::Epsilon;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

/// Households scaled to `occupied` occupied groups: ~10% vacant, sizes 1–7 in census
/// proportions, a geometric tail, and group quarters in the thousands.
fn realistic(occupied: u64) -> CountOfCounts {
    let mut pairs = vec![(0, occupied / 9)];
    for (size, per_mille) in [
        (1, 280),
        (2, 340),
        (3, 150),
        (4, 120),
        (5, 60),
        (6, 25),
        (7, 10),
    ] {
        pairs.push((size, occupied * per_mille / 1000));
    }
    let mut tail = occupied / 200;
    for size in 8..=20 {
        pairs.push((size, tail.max(1)));
        tail /= 2;
    }
    for size in [350, 1_200, 2_500, 4_800, 9_000] {
        pairs.push((size, 1 + occupied / 1_000_000));
    }
    CountOfCounts::from_pairs(pairs).unwrap()
}

fn hc(c: &mut Criterion) {
    let eps = coco::privacy::Loss::Pure(Epsilon::parse("1").unwrap());
    let k: Size = 100_000;
    let truth = realistic(40_000);
    let groups = truth.groups();
    let source = NoiseSource::seeded(1);
    let options = EstimateOptions::default();
    let noisy =
        cumulative::measure(&truth, k, &eps, &mut source.stream(Purpose::Test.index(0))).unwrap();
    let noise = DiscreteLaplace::new(1, eps.as_pure().unwrap()).unwrap();

    let mut g = c.benchmark_group("hc/k=100000");
    g.bench_function("measure+estimate", |b| {
        let mut rng = source.stream(Purpose::Test.index(1));
        b.iter(|| {
            estimate::estimate_node(Method::Hc, &truth, groups, k, &eps, &mut rng, &options)
                .unwrap()
        })
    });
    g.bench_function("measure", |b| {
        let mut rng = source.stream(Purpose::Test.index(2));
        b.iter(|| cumulative::measure(&truth, k, &eps, &mut rng).unwrap())
    });
    g.bench_function("noise only", |b| {
        let mut rng = source.stream(Purpose::Test.index(3));
        b.iter(|| {
            let mut acc = 0i64;
            for _ in 0..=k {
                acc = acc.wrapping_add(noise.sample(&mut rng));
            }
            acc
        })
    });
    for fit in [IsotonicFit::L1, IsotonicFit::L2] {
        g.bench_with_input(
            BenchmarkId::new("estimate", format!("{fit:?}")),
            &fit,
            |b, &fit| b.iter(|| cumulative::estimate(black_box(&noisy), groups, &eps, fit)),
        );
        g.bench_with_input(
            BenchmarkId::new("isotonic", format!("{fit:?}")),
            &fit,
            |b, &fit| b.iter(|| isotonic::fit_with_last(fit, black_box(&noisy), 0, groups as i64)),
        );
    }
    g.finish();
}

fn hg(c: &mut Criterion) {
    let eps = coco::privacy::Loss::Pure(Epsilon::parse("1").unwrap());
    let k: Size = 100_000;
    let truth = realistic(9_100_000);
    let groups: Count = truth.groups();
    assert!(groups >= 10_000_000, "{groups}");
    let source = NoiseSource::seeded(2);
    let options = EstimateOptions::default();
    let noisy = unattributed::measure(
        &truth,
        groups,
        k,
        &eps,
        &mut source.stream(Purpose::Test.index(0)),
    )
    .unwrap();
    let noise = DiscreteLaplace::new(1, eps.as_pure().unwrap()).unwrap();

    let mut g = c.benchmark_group("hg/g=10^7");
    g.sample_size(10);
    g.bench_function("measure+estimate", |b| {
        let mut rng = source.stream(Purpose::Test.index(1));
        b.iter(|| {
            estimate::estimate_node(Method::Hg, &truth, groups, k, &eps, &mut rng, &options)
                .unwrap()
        })
    });
    g.bench_function("measure", |b| {
        let mut rng = source.stream(Purpose::Test.index(2));
        b.iter(|| unattributed::measure(&truth, groups, k, &eps, &mut rng).unwrap())
    });
    g.bench_function("noise only", |b| {
        let mut rng = source.stream(Purpose::Test.index(3));
        b.iter(|| {
            let mut acc = 0i64;
            for _ in 0..groups {
                acc = acc.wrapping_add(noise.sample(&mut rng));
            }
            acc
        })
    });
    for fit in [IsotonicFit::L2, IsotonicFit::L1] {
        g.bench_with_input(
            BenchmarkId::new("estimate", format!("{fit:?}")),
            &fit,
            |b, &fit| b.iter(|| unattributed::estimate(black_box(&noisy), groups, k, &eps, fit)),
        );
        g.bench_with_input(
            BenchmarkId::new("isotonic", format!("{fit:?}")),
            &fit,
            |b, &fit| b.iter(|| isotonic::fit(fit, black_box(&noisy), 0, i64::from(k))),
        );
    }
    g.finish();
}

criterion_group!(benches, hc, hg);
criterion_main!(benches);
