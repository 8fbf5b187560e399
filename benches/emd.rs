//! Earth mover's distance between a true histogram and an estimate-like perturbation of
//! it, as the accuracy reports compute it for every node: household-like histograms with
//! 10 distinct sizes, and taxi-like ones with 2,000 distinct sizes spread over 1..=6,000.
//!
//! Run: `cargo bench --bench emd -- --warm-up-time 1 --measurement-time 5`

use std::hint::black_box;

use coco::emd::emd;
use coco::histogram::{Count, CountOfCounts, Size};
use criterion::{Criterion, criterion_group, criterion_main};

/// SplitMix64, for reproducible synthetic histograms.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// `pairs` with each count moved by up to ±`spread` and, with probability 1/4, each
/// size moved by one: what a noisy estimate of the histogram looks like.
fn perturbed(h: &CountOfCounts, spread: u64, rng: &mut SplitMix) -> CountOfCounts {
    let pairs = h.pairs().iter().map(|&(s, c)| {
        let delta = rng.next() % (2 * spread + 1);
        let c = (c + delta).saturating_sub(spread);
        let s = if rng.next().is_multiple_of(4) {
            s + 1
        } else {
            s
        };
        (s, c)
    });
    CountOfCounts::from_pairs_summing(pairs).unwrap()
}

/// Household-like: sizes 1..=10 with counts falling from 30,000.
fn households() -> CountOfCounts {
    let counts: [Count; 10] = [
        28_000, 35_000, 15_000, 13_000, 6_000, 2_000, 700, 250, 80, 30,
    ];
    CountOfCounts::from_pairs((1..).zip(counts)).unwrap()
}

/// Taxi-like: 2,000 distinct sizes between 1 and 6,000, counts 1..=50.
fn taxis(rng: &mut SplitMix) -> CountOfCounts {
    let mut sizes: Vec<Size> = (1..=6_000).collect();
    // A partial Fisher–Yates shuffle picks 2,000 distinct sizes.
    for i in 0..2_000 {
        let j = i + (rng.next() % (sizes.len() - i) as u64) as usize;
        sizes.swap(i, j);
    }
    let pairs = sizes[..2_000].iter().map(|&s| (s, 1 + rng.next() % 50));
    CountOfCounts::from_pairs(pairs).unwrap()
}

fn bench_emd(c: &mut Criterion) {
    let mut rng = SplitMix(3);
    let small = households();
    let small_est = perturbed(&small, 50, &mut rng);
    let large = taxis(&mut rng);
    let large_est = perturbed(&large, 5, &mut rng);
    assert_eq!(small.distinct_sizes(), 10);
    assert_eq!(large.distinct_sizes(), 2_000);

    let mut group = c.benchmark_group("emd");
    group.bench_function("10_sizes", |b| {
        b.iter(|| emd(black_box(&small), black_box(&small_est)))
    });
    group.bench_function("2000_sizes", |b| {
        b.iter(|| emd(black_box(&large), black_box(&large_est)))
    });
    group.finish();
}

criterion_group!(benches, bench_emd);
criterion_main!(benches);
