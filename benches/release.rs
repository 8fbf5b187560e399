//! The whole release on the `us-counties` preset (nation → 52 states → 3,220 counties,
//! ~122 million groups, K = 10,000, `hc` at every level (and `hc` with the default tail),
//! uniform ε = 1): load the dataset, measure every node, estimate, make consistent (`wls`
//! and `topdown`), check,
//! and write the release directory atomically with its ledger line — the same path as
//! `coco release`. Also the release directory's writers alone (CSV, Parquet, both) and
//! one preview trial. The peak resident memory (VmHWM) is printed
//! after each group.
//!
//! Run: `cargo bench --bench release -- --warm-up-time 1 --measurement-time 10`

use coco::wire::Named;
use std::path::Path;
use std::time::Duration;

use coco::consistency::Consistency;
use coco::data::Dataset;
use coco::estimate::{Method, Tail};
use coco::generate::{self, Preset};
use coco::noise::NoiseSource;
use coco::preview::{self, PreviewOptions};
use coco::privacy::Epsilon;
use coco::release::ledger::{Ledger, Tool};
use coco::release::outputs::export::{OutputFormat, WriteOptions, write_release_dir};
use coco::release::plan::{MaxSize, ReleasePlan};
use coco::release::transaction::{Reservation, ReserveOptions};
use criterion::{Criterion, criterion_group};

fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(str::to_string)
        })
        .and_then(|l| {
            l.split_whitespace()
                .nth(1)
                .and_then(|k| k.parse::<u64>().ok())
        })
        .map_or_else(
            || "unavailable".into(),
            |kb| format!("{:.0} MiB", kb as f64 / 1024.0),
        )
}

fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn plan(dataset: &Dataset, consistency: Consistency, method: Method) -> ReleasePlan {
    let mut p = ReleasePlan::uniform(
        &dataset.hierarchy,
        &Epsilon::parse("1").unwrap(),
        method,
        MaxSize::Fixed(10_000),
    )
    .unwrap();
    p.set_consistency(consistency);
    p
}

fn release_once(
    dir: &Path,
    (consistency, method): (Consistency, Method),
    out: &Path,
    ledger: &Ledger,
) {
    // The whole path of `coco release`: load, reserve (ledger read fail-closed, caps),
    // draw, pending line, export, written line.
    let dataset = std::sync::Arc::new(Dataset::load(dir).unwrap());
    let plan = plan(&dataset, consistency, method);
    let reserve = ReserveOptions {
        output: Some(out),
        ..Default::default()
    };
    let approved = Reservation::open(ledger, dataset, plan, Tool::Release, reserve)
        .unwrap()
        .draw(&NoiseSource::from_os().unwrap(), &Default::default())
        .unwrap()
        .approve(out, &Default::default())
        .unwrap();
    let checks = &approved.manifest.checks;
    assert!(checks.consistent && checks.group_totals);
}

fn us_counties_release(c: &mut Criterion) {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().join("us");
    generate::generate(Preset::UsCounties, &dir, 1).unwrap();
    let outs = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(outs.path().join("home"));
    let mut n = 0;
    let tail = Method::HcTail(Tail::DEFAULT);
    for case in [
        (Consistency::Wls, Method::Hc),
        (Consistency::TopDown, Method::Hc),
        (Consistency::Wls, tail),
    ] {
        let name = match case.1 {
            Method::HcTail(_) => format!("us_counties_{}_tail", case.0.name()),
            _ => format!("us_counties_{}", case.0.name()),
        };
        reset_peak();
        let mut group = c.benchmark_group("release");
        group
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(10));
        group.bench_function(&name, |b| {
            b.iter(|| {
                n += 1;
                release_once(&dir, case, &outs.path().join(format!("r{n}")), &ledger);
            })
        });
        group.finish();
        eprintln!("peak resident memory (VmHWM), {name}: {}", peak_rss());
    }
    // The writers alone, on one draw: the directory in CSV, in Parquet, in both (each
    // with its read-back and `fsync`).
    let dataset = std::sync::Arc::new(Dataset::load(&dir).unwrap());
    let plan = plan(&dataset, Consistency::Wls, Method::Hc);
    let first = outs.path().join("drawn");
    let reserve = ReserveOptions {
        output: Some(&first),
        ..Default::default()
    };
    let approved = Reservation::open(
        &ledger,
        dataset.clone(),
        plan.clone(),
        Tool::Release,
        reserve,
    )
    .unwrap()
    .draw(&NoiseSource::from_os().unwrap(), &Default::default())
    .unwrap()
    .approve(&first, &Default::default())
    .unwrap();
    for format in [OutputFormat::Csv, OutputFormat::Parquet, OutputFormat::Both] {
        reset_peak();
        let mut group = c.benchmark_group("write");
        group
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(10));
        let name = format!("us_counties_{}", format.name());
        group.bench_function(&name, |b| {
            b.iter(|| {
                n += 1;
                let out = outs.path().join(format!("w{n}"));
                write_release_dir(
                    &out,
                    &dataset,
                    &plan,
                    &approved.draw,
                    &WriteOptions {
                        format,
                        ..Default::default()
                    },
                )
                .unwrap();
            })
        });
        group.finish();
        eprintln!("peak resident memory (VmHWM), write {name}: {}", peak_rss());
    }
    reset_peak();
    let mut group = c.benchmark_group("preview");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));
    group.bench_function("us_counties_one_trial", |b| {
        b.iter(|| {
            let options = PreviewOptions {
                trials: 1,
                seed: Some(1),
                compare: false,
                keep_last_trial: false,
                bottom_up: true,
                coverage: None,
            };
            preview::preview(&dataset, &plan, &options, None, &|_| {}).unwrap()
        })
    });
    group.finish();
    eprintln!(
        "peak resident memory (VmHWM), one us-counties preview trial: {}",
        peak_rss()
    );
}

criterion_group!(benches, us_counties_release);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
