//! The nation down to its blocks: `coco gen us-blocks` (8.1 million blocks, 122 million
//! households at scale 1), released with the plan `coco plan` writes from public figures
//! (hc + tail at every level, uniform ε = 1, K = 10,000, `wls`), through the same path
//! as `coco release`: load, reserve (ledger read fail-closed), measure every region,
//! estimate, `wls`, checks, atomic write with read-back, ledger lines.
//!
//! A release at this scale takes about a minute, so this is not a criterion benchmark:
//! each figure is one run, printed with the peak resident memory of the phase (VmHWM,
//! reset before it through /proc/self/clear_refs). The dataset is generated first,
//! outside the measurement (about 10 s), in a temporary directory, or read from
//! `COCO_BENCH_BLOCKS` when that names an existing us-blocks directory.
//!
//! Run: `cargo bench --bench blocks` (full scale; `COCO_BENCH_SCALE=0.1` for a tenth).
//! `COCO_TIMING=1` adds the release's phases. Then the release directory is written
//! again from the same draw, once in CSV and once in Parquet, each timed alone.

use coco::wire::Named;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use coco::data::Dataset;
use coco::generate::{self, Preset};
use coco::noise::NoiseSource;
use coco::privacy::Epsilon;
use coco::release::ledger::{Ledger, Tool};
use coco::release::outputs::export::{OutputFormat, WriteOptions, write_release_dir};
use coco::release::plan::MaxSize;
use coco::release::plan::defaults::public_default;
use coco::release::transaction::{Reservation, ReserveOptions};

fn peak() -> String {
    coco::timing::peak_memory().map_or_else(
        || "unavailable".into(),
        |b| format!("{:.2} GiB", b as f64 / f64::from(1u32 << 30)),
    )
}

fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` would pass nothing: skip
    // the minute-long run then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    if std::env::var_os("COCO_TIMING").is_some() {
        coco::timing::report_to_stderr();
    }
    let scale: f64 = std::env::var("COCO_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let tmp = tempfile::tempdir().unwrap();
    let dir = match std::env::var_os("COCO_BENCH_BLOCKS").map(PathBuf::from) {
        Some(d) if d.join("hierarchy.csv").exists() => d,
        _ => {
            let d = tmp.path().join("us-blocks");
            let t = Instant::now();
            let scale = (scale < 1.0).then_some(scale);
            generate::generate_into(Preset::UsBlocks, &d, 1, scale, &mut |_, _| {}).unwrap();
            eprintln!(
                "generated {} in {:.1} s",
                d.display(),
                t.elapsed().as_secs_f64()
            );
            d
        }
    };

    reset_peak();
    let t = Instant::now();
    let dataset = Dataset::load(&dir).unwrap();
    println!(
        "us-blocks load: {} regions, {:.1} s, peak {}",
        dataset.hierarchy.len(),
        t.elapsed().as_secs_f64(),
        peak()
    );
    drop(dataset);

    let out = tmp.path().join("release");
    let ledger = Ledger::at(tmp.path().join("home"));
    reset_peak();
    let t = Instant::now();
    let dataset = Arc::new(Dataset::load(&dir).unwrap());
    let kept = dataset.clone();
    let one = Epsilon::from_ratio(1, 1).unwrap();
    let plan = public_default(
        &dataset.hierarchy,
        |id| dataset.groups(id),
        &one,
        MaxSize::Fixed(10_000),
    )
    .unwrap()
    .plan;
    let reserve = ReserveOptions {
        output: Some(&out),
        ..Default::default()
    };
    let approved = Reservation::open(&ledger, dataset, plan.clone(), Tool::Release, reserve)
        .unwrap()
        .draw(&NoiseSource::from_os().unwrap(), &Default::default())
        .unwrap()
        .approve(&out, &Default::default())
        .unwrap();
    let checks = &approved.manifest.checks;
    assert!(checks.consistent && checks.group_totals && checks.integral);
    println!(
        "us-blocks release, default plan (load, measure, wls, checks, write, read back): {:.1} s, peak {}",
        t.elapsed().as_secs_f64(),
        peak()
    );

    // The release directory's writers alone, on the same draw: each writes, `fsync`s
    // and reads back its files.
    for format in [OutputFormat::Csv, OutputFormat::Parquet] {
        let out = tmp.path().join(format!("write-{}", format.name()));
        reset_peak();
        let t = Instant::now();
        write_release_dir(
            &out,
            &kept,
            &plan,
            &approved.draw,
            &WriteOptions {
                format,
                ..Default::default()
            },
        )
        .unwrap();
        let seconds = t.elapsed().as_secs_f64();
        let bytes = |name: &str| std::fs::metadata(out.join(name)).map_or(0, |m| m.len());
        let tables: u64 = std::fs::read_dir(out.join("tables"))
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        println!(
            "us-blocks write {} (counts {:.0} MB, tables {:.0} MB, read back): {seconds:.1} s, peak {}",
            format.name(),
            (bytes("counts.csv") + bytes("counts.parquet")) as f64 / 1e6,
            tables as f64 / 1e6,
            peak()
        );
    }
}
