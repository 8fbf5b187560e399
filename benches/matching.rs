//! Matching a parent's groups to its children's (Kuo et al. Algorithm 2), as the
//! consistency step does at every parent: 100 children of 4 to 6 runs each.
//!
//! * `sizes_1_to_12`: household-like, every size shared by many children, so each step
//!   matches dozens of children at once and proportional splits are wide.
//! * `sizes_1_to_10000`: sizes spread out, so children rarely tie and there is about one
//!   step per child run and per parent run (about 500 parent runs).
//!
//! Run: `cargo bench --bench matching -- --warm-up-time 1 --measurement-time 5`

use std::hint::black_box;

use coco::consistency::match_groups;
use coco::estimate::GroupRun;
use coco::histogram::{Count, Size};
use criterion::{Criterion, criterion_group, criterion_main};

/// SplitMix64, for reproducible synthetic runs.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn size(&mut self, max: Size) -> Size {
        1 + self.below(u64::from(max)) as Size
    }
}

/// 4 to 6 runs at distinct sizes in `1..=max`, 1 to 200 groups each.
fn child(rng: &mut SplitMix, max: Size) -> Vec<GroupRun> {
    let runs = 4 + rng.below(3) as usize;
    let mut sizes: Vec<Size> = Vec::with_capacity(runs);
    while sizes.len() < runs {
        let size = rng.size(max);
        if !sizes.contains(&size) {
            sizes.push(size);
        }
    }
    sizes.sort_unstable();
    sizes
        .into_iter()
        .map(|size| GroupRun {
            size,
            count: 1 + rng.below(200),
            variance: 1.0 + rng.below(100) as f64 / 10.0,
        })
        .collect()
}

/// `total` groups over distinct sizes in `1..=max` (12 of them, or one per 20 possible
/// sizes, before duplicates are dropped) in random proportions.
fn parent(total: Count, rng: &mut SplitMix, max: Size) -> Vec<GroupRun> {
    let mut sizes: Vec<Size> = (0..12.max(max / 20)).map(|_| rng.size(max)).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let weights: Vec<u64> = sizes.iter().map(|_| 1 + rng.below(100)).collect();
    let sum: u64 = weights.iter().sum();
    let mut given = 0;
    let mut runs: Vec<GroupRun> = sizes
        .iter()
        .zip(&weights)
        .map(|(&size, &w)| {
            let count = total * w / sum;
            given += count;
            GroupRun {
                size,
                count,
                variance: 4.0,
            }
        })
        .collect();
    runs.last_mut().expect("sizes").count += total - given;
    runs
}

fn bench_matching(c: &mut Criterion) {
    let mut group = c.benchmark_group("match_groups/100_children_5_runs");
    for max in [12, 10_000] {
        let mut rng = SplitMix(7);
        let children: Vec<Vec<GroupRun>> = (0..100).map(|_| child(&mut rng, max)).collect();
        let total: Count = children.iter().flatten().map(|r| r.count).sum();
        let parent = parent(total, &mut rng, max);
        let refs: Vec<&[GroupRun]> = children.iter().map(Vec::as_slice).collect();
        match_groups(&parent, &refs).expect("totals agree");
        group.bench_function(format!("sizes_1_to_{max}"), |b| {
            b.iter(|| match_groups(black_box(&parent), black_box(&refs)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_matching);
criterion_main!(benches);
