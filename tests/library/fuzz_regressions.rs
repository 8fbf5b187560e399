//! Replays each target's corpus (`tests/fixtures/fuzz/<target>/`: seed inputs and the
//! inputs the fuzzers found; a missing or nearly empty corpus fails)
//! through the very code the fuzz targets run (`fuzz/src/targets.rs`, included here),
//! so that `cargo test` guards against every bug they found without nightly or
//! cargo-fuzz. Each file must pass its target's checks without a panic.
//!
//! To fuzz (see `fuzz/README.md`):
//! `cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run <target> --sanitizer none -- -max_total_time=60`

#[path = "../../fuzz/src/targets.rs"]
mod targets;

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fuzz")
        .join(target);
    // A missing or empty corpus would make this test pass without testing anything.
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (every target has a corpus)", dir.display()));
    let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(
        files.len() >= 10,
        "{}: {} files; every target's corpus holds at least ten",
        dir.display(),
        files.len()
    );
    for file in files {
        let data = std::fs::read(&file).unwrap();
        let result = std::panic::catch_unwind(|| run(&data));
        assert!(result.is_ok(), "{} fails again", file.display());
    }
    targets::cleanup();
}

#[test]
fn hierarchy() {
    replay("hierarchy", targets::hierarchy);
}

#[test]
fn group_sizes() {
    replay("group_sizes", targets::group_sizes);
}

#[test]
fn entities() {
    replay("entities", targets::entities);
}

#[test]
fn histograms() {
    replay("histograms", targets::histograms);
}

#[test]
fn names() {
    replay("names", targets::names);
}

#[test]
fn plan() {
    replay("plan", targets::plan);
}

#[test]
fn ledger() {
    replay("ledger", targets::ledger);
}

#[test]
fn consistency() {
    replay("consistency", targets::consistency);
}

/// The bad-input corpus's files, each through the target that reads its kind, so the
/// targets' checks (one-line errors naming the file, consistent datasets, plans that
/// round-trip) run on every class of bad input too.
#[test]
fn bad_corpus_through_the_targets() {
    let bad = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bad");
    let mut seen = 0;
    for case in std::fs::read_dir(&bad).unwrap() {
        let case = case.unwrap().path();
        if !case.is_dir() {
            continue;
        }
        for (file, run) in [
            ("hierarchy.csv", targets::hierarchy as fn(&[u8])),
            ("groups.csv", targets::group_sizes),
            ("histograms.csv", targets::histograms),
            ("names.csv", targets::names),
            ("plan.toml", targets::plan),
        ] {
            if let Ok(data) = std::fs::read(case.join(file)) {
                let result = std::panic::catch_unwind(|| run(&data));
                assert!(result.is_ok(), "{}/{file}", case.display());
                seen += 1;
            }
        }
    }
    targets::cleanup();
    assert!(seen > 50, "{seen} files replayed");
}
