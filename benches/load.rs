//! Loading large datasets: `Dataset::load` on a 10,000,000-row `groups.csv` (the group
//! sizes form) and on a 2,000,000-group entities form, with the peak resident memory of
//! each (VmHWM from /proc/self/status, reset before each benchmark through
//! /proc/self/clear_refs).
//!
//! The files are generated once, outside the measurement, in a temporary directory:
//! nation → 50 states → 3,000 counties; groups spread over counties with a Zipf-like
//! skew, in random order (so the loader's "same region as the last row" shortcut rarely
//! helps); household-like sizes, mostly 1–7 with a thin tail to 20.
//!
//! Run: `cargo bench --bench load -- --warm-up-time 1 --measurement-time 5`

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use coco::data::{Dataset, NodeId};
use criterion::{Criterion, criterion_group};

const STATES: usize = 50;
const COUNTIES_PER_STATE: usize = 60;

/// SplitMix64: a small deterministic generator, enough for synthetic files.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn county(i: usize) -> String {
    format!(
        "{:02}{:03}",
        i / COUNTIES_PER_STATE + 1,
        i % COUNTIES_PER_STATE + 1
    )
}

/// Writes hierarchy.csv and returns a sampler of county indices (Zipf-like weights).
fn write_hierarchy(dir: &Path) -> impl FnMut(&mut SplitMix) -> usize {
    let mut h = BufWriter::new(File::create(dir.join("hierarchy.csv")).unwrap());
    writeln!(h, "nation,state,county").unwrap();
    let leaves = STATES * COUNTIES_PER_STATE;
    for i in 0..leaves {
        writeln!(h, "US,{:02},{}", i / COUNTIES_PER_STATE + 1, county(i)).unwrap();
    }
    h.flush().unwrap();
    // Weight of the county of rank r: 1/(r+20); shuffled ranks so big counties are spread.
    let mut cumulative = Vec::with_capacity(leaves);
    let mut total = 0.0;
    for i in 0..leaves {
        let rank = (i * 7919) % leaves;
        total += 1.0 / (rank as f64 + 20.0);
        cumulative.push(total);
    }
    move |rng: &mut SplitMix| {
        let u = rng.unit() * total;
        cumulative.partition_point(|&c| c <= u).min(leaves - 1)
    }
}

/// A household-like size: mostly 1–7, rarely up to 20.
fn size(rng: &mut SplitMix) -> u32 {
    const CDF: [(f64, u32); 7] = [
        (0.28, 1),
        (0.63, 2),
        (0.78, 3),
        (0.91, 4),
        (0.97, 5),
        (0.99, 6),
        (0.996, 7),
    ];
    let u = rng.unit();
    CDF.iter()
        .find(|&&(p, _)| u < p)
        .map_or_else(|| 8 + (rng.next() % 13) as u32, |&(_, s)| s)
}

fn write_group_sizes(dir: &Path, groups: usize) {
    let mut leaf = write_hierarchy(dir);
    let mut rng = SplitMix(7);
    let mut g = BufWriter::with_capacity(1 << 20, File::create(dir.join("groups.csv")).unwrap());
    writeln!(g, "group_id,region,size").unwrap();
    for id in 0..groups {
        let c = county(leaf(&mut rng));
        writeln!(g, "{},{c},{}", 100_000_000 + id, size(&mut rng)).unwrap();
    }
    g.flush().unwrap();
}

fn write_entities(dir: &Path, groups: usize) -> u64 {
    let mut leaf = write_hierarchy(dir);
    let mut rng = SplitMix(11);
    let mut g = BufWriter::with_capacity(1 << 20, File::create(dir.join("groups.csv")).unwrap());
    let mut e = BufWriter::with_capacity(1 << 20, File::create(dir.join("entities.csv")).unwrap());
    writeln!(g, "group_id,region").unwrap();
    writeln!(e, "entity_id,group_id").unwrap();
    let mut person: u64 = 0;
    for id in 0..groups {
        let c = county(leaf(&mut rng));
        writeln!(g, "H{id:08},{c}").unwrap();
        for _ in 0..size(&mut rng) {
            writeln!(e, "P{person:09},H{id:08}").unwrap();
            person += 1;
        }
    }
    g.flush().unwrap();
    e.flush().unwrap();
    person
}

/// Peak resident memory since the last reset, from /proc/self/status.
fn peak_rss() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(format!("{:.0} MiB", kb as f64 / 1024.0))
}

/// Resets VmHWM to the current resident size (Linux ≥ 4.0).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn load_group_sizes(c: &mut Criterion) {
    const GROUPS: usize = 10_000_000;
    let dir = tempfile::tempdir().unwrap();
    write_group_sizes(dir.path(), GROUPS);
    let bytes = std::fs::metadata(dir.path().join("groups.csv"))
        .unwrap()
        .len();
    eprintln!("groups.csv: {GROUPS} rows, {} MB", bytes / 1_000_000);
    reset_peak();
    let mut group = c.benchmark_group("load");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(30));
    group.bench_function("group_sizes_10M", |b| {
        b.iter(|| {
            let d = Dataset::load(dir.path()).unwrap();
            assert_eq!(d.groups(NodeId::ROOT), GROUPS as u64);
            d
        })
    });
    group.finish();
    eprintln!(
        "peak resident memory (VmHWM) while loading the 10M-row groups.csv: {}",
        peak_rss().unwrap_or_else(|| "unavailable".into())
    );
}

fn load_entities(c: &mut Criterion) {
    const GROUPS: usize = 2_000_000;
    let dir = tempfile::tempdir().unwrap();
    let entities = write_entities(dir.path(), GROUPS);
    eprintln!("entities form: {GROUPS} groups, {entities} entities");
    reset_peak();
    let mut group = c.benchmark_group("load");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(15));
    group.bench_function("entities_2M_groups", |b| {
        b.iter(|| {
            let d = Dataset::load(dir.path()).unwrap();
            assert_eq!(d.groups(NodeId::ROOT), GROUPS as u64);
            d
        })
    });
    group.finish();
    eprintln!(
        "peak resident memory (VmHWM) while loading the entities form: {}",
        peak_rss().unwrap_or_else(|| "unavailable".into())
    );
}

criterion_group!(benches, load_group_sizes, load_entities);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
