//! Crash safety of `coco release`: killed with SIGKILL at many points, it leaves either a
//! complete, verified release at OUT or nothing there (a stray `.OUT.coco-tmp-*`
//! directory at most, which a later release is not confused by), and the ledger stays
//! intact (every line readable, the hash chain whole) and knows every release that
//! exists. A torn last line stops draws until `coco ledger repair` sets it aside. Two concurrent releases of one
//! dataset both land in the ledger intact.
//!
//! The kills come from this process on events seen on disk, never on timing: as soon as
//! the ledger's lock is taken (the draw under way), the ledger grows (the draw recorded
//! as pending), the temporary directory appears, each file of the release appears in
//! it, and OUT appears (renamed, not yet recorded as written). The dataset is
//! the generated `us-counties` preset (3,220 counties), with `K = 2000` to keep each
//! release short in the test profile.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::cli::{ledger_bytes, sha256_hex};
use coco::data::Dataset;
use coco::release::ledger::{Ledger, LedgerEntry, Status};
use coco::release::outputs::manifest::Manifest;
use coco::release::outputs::read_back::check_counts;

const COCO: &str = env!("CARGO_BIN_EXE_coco");

struct Setup {
    _root: tempfile::TempDir,
    root: PathBuf,
    data: PathBuf,
    plan: PathBuf,
    dataset: Dataset,
}

/// The tests of this file run one at a time: one of them times releases.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn setup() -> Setup {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().to_path_buf();
    let data = path.join("us");
    let generated = Command::new(COCO)
        .args(["gen", "us-counties", "--out"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(generated.status.success(), "{generated:?}");
    let plan = path.join("plan.toml");
    let made = Command::new(COCO)
        .arg("plan")
        .arg(&data)
        .args(["--total", "1", "--max-size", "2000", "--out"])
        .arg(&plan)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let dataset = Dataset::load(&data).unwrap();
    Setup {
        _root: root,
        root: path,
        data,
        plan,
        dataset,
    }
}

fn start_release(s: &Setup, home: &Path, out: &Path) -> Child {
    Command::new(COCO)
        .arg("release")
        .arg(&s.data)
        .arg("--config")
        .arg(&s.plan)
        .arg("--out")
        .arg(out)
        // The margins of error are written (their files are among the kill points),
        // from two replicates: what is tested here is the write, not the intervals.
        .args(["--replicates", "2"])
        .env("COCO_HOME", home)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The ledger's draws (latest line per id); fails on any defect but a torn last line.
fn ledger_entries(home: &Path) -> Vec<LedgerEntry> {
    let read = Ledger::at(home).read().unwrap();
    assert!(read.problems.is_empty(), "{:?}", read.problems);
    read.draws().into_iter().cloned().collect()
}

/// Checks a release directory completely: manifest checks, output digests, the counts
/// read back against the public data, and its line in the ledger.
fn verify_release(s: &Setup, out: &Path, home: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(out.join("manifest.json"))
        .map_err(|e| format!("manifest.json: {e}"))?;
    let manifest: Manifest =
        serde_json::from_str(&text).map_err(|e| format!("manifest.json: {e}"))?;
    let c = &manifest.checks;
    if !(c.integral && c.nonnegative && c.group_totals && c.consistent && c.within_max_size) {
        return Err(format!("manifest checks {c:?}"));
    }
    for output in &manifest.outputs {
        let bytes =
            std::fs::read(out.join(&output.path)).map_err(|e| format!("{}: {e}", output.path))?;
        if sha256_hex(&bytes) != output.sha256 {
            return Err(format!("{}: digest differs from the manifest", output.path));
        }
    }
    if !manifest.outputs.iter().any(|o| o.path == "counts.csv") {
        return Err("counts.csv is not in the manifest".into());
    }
    let mut reader =
        csv::Reader::from_path(out.join("counts.csv")).map_err(|e| format!("counts.csv: {e}"))?;
    let rows: Vec<[String; 4]> = reader
        .records()
        .map(|r| {
            let r = r.map_err(|e| format!("counts.csv: {e}"))?;
            Ok([0, 1, 2, 3].map(|i| r.get(i).unwrap_or("").to_string()))
        })
        .collect::<Result<_, String>>()?;
    let checks = check_counts(
        s.dataset.public(),
        rows.iter()
            .map(|r| [r[0].as_str(), r[1].as_str(), r[2].as_str(), r[3].as_str()]),
        manifest.max_size,
    );
    if !checks.passed() {
        return Err(format!(
            "counts.csv fails its checks: {:?}",
            checks.problems
        ));
    }
    // Recorded as pending before it was written, then as written: a release killed
    // between the rename and the last line is still counted by its pending line.
    let known = ledger_entries(home)
        .iter()
        .any(|e| e.id == manifest.ledger_entry && e.status != Status::Discarded);
    if !known {
        return Err("the ledger does not know this release".into());
    }
    Ok(())
}

/// Names in `dir` that start with `.{base}.coco-tmp-`.
fn temporaries(dir: &Path, base: &str) -> Vec<String> {
    let prefix = format!(".{base}.coco-tmp-");
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

/// When to kill a release: as soon as this is seen on disk (events, not timing).
#[derive(Clone, Debug)]
enum Kill {
    /// The ledger's lock is taken (its file names the release's pid): the reservation is
    /// made and the draw under way.
    Reserved,
    /// The ledger has grown: the draw is recorded as pending, nothing written yet.
    Pending,
    /// The temporary directory appears: the write phase has begun.
    Temporary,
    /// This file appears in the temporary directory (a file of the finished release).
    Writing(String),
    /// OUT exists: renamed into place, the "written" line not yet appended.
    Renamed,
}

/// What a killed release left.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone, Copy)]
enum Left {
    Nothing,
    Temporary,
    Release,
}

/// Whether `kill`'s event has happened.
fn seen(
    kill: &Kill,
    s: &Setup,
    home: &Path,
    out: &Path,
    child: &Child,
    ledger_before: u64,
) -> bool {
    let base = out.file_name().unwrap().to_string_lossy();
    match kill {
        Kill::Reserved => std::fs::read_to_string(home.join("ledger.lock"))
            .is_ok_and(|t| t.starts_with(&format!("pid {},", child.id()))),
        Kill::Pending => ledger_bytes(home) > ledger_before,
        Kill::Temporary => !temporaries(&s.root, &base).is_empty(),
        Kill::Writing(file) => temporaries(&s.root, &base)
            .iter()
            .any(|t| s.root.join(t).join(file).exists()),
        Kill::Renamed => out.exists(),
    }
}

/// Runs a release and SIGKILLs it as soon as `kill`'s event is seen (polled without
/// pause; a release that ends first is not killed). Whether the event was seen, and
/// what the release left.
fn run_and_kill(s: &Setup, home: &Path, out: &Path, kill: &Kill) -> (bool, Left) {
    let base = out.file_name().unwrap().to_string_lossy().into_owned();
    let ledger_before = ledger_bytes(home);
    let mut child = start_release(s, home, out);
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut killed = false;
    while child.try_wait().unwrap().is_none() {
        if seen(kill, s, home, out, &child, ledger_before) {
            let _ = child.kill();
            killed = true;
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{kill:?}: the release never ended"
        );
        std::thread::yield_now();
    }
    let _ = child.wait();
    let left = if out.exists() {
        Left::Release
    } else if temporaries(&s.root, &base).is_empty() {
        Left::Nothing
    } else {
        Left::Temporary
    };
    (killed, left)
}

#[test]
fn killed_releases_leave_a_verified_release_or_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = setup();
    let home = s.root.join("home");
    // An uninterrupted release must verify; its files name the kills in the write phase.
    let full = s.root.join("out-full");
    let status = start_release(&s, &home, &full).wait().unwrap();
    assert!(status.success());
    verify_release(&s, &full, &home).unwrap();
    let mut files: Vec<String> = std::fs::read_dir(&full)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();

    let mut plan = vec![Kill::Reserved, Kill::Pending, Kill::Temporary];
    plan.extend(files.into_iter().map(Kill::Writing));
    plan.push(Kill::Renamed);

    let mut outcomes = Vec::new();
    for (i, kill) in plan.iter().enumerate() {
        let out = s.root.join(format!("out-{i}"));
        let (killed, left) = run_and_kill(&s, &home, &out, kill);
        match left {
            Left::Release => verify_release(&s, &out, &home).unwrap_or_else(|e| {
                panic!("{kill:?}: {} is not a valid release: {e}", out.display())
            }),
            Left::Nothing | Left::Temporary => {
                assert!(!out.exists());
            }
        }
        // Every complete ledger line parses, whatever the kill hit.
        ledger_entries(&home);
        outcomes.push((kill.clone(), killed, left, out));
    }
    eprintln!("kills and what they left:");
    for (kill, killed, left, _) in &outcomes {
        eprintln!("  {kill:?} (killed: {killed}): {left:?}");
    }
    // Every event before the manifest was seen and the release killed there (the polling
    // is far faster than a release's phases). The manifest is the last file written:
    // after it come only its fsync and the rename, so a kill when it appears may land
    // after the rename (a release, verified above) as the rename's own kill may. The
    // codebook (`README.txt`) is rendered from the manifest and written just before it,
    // with no phase between them: on a loaded machine the release may be done before
    // the poll sees it (it was, once, in CI while other builds ran).
    assert!(
        outcomes.iter().all(|(kill, killed, _, _)| *killed
            || matches!(kill, Kill::Renamed)
            || matches!(kill, Kill::Writing(f) if f == "manifest.json" || f == "README.txt")),
        "a release ended before its kill: {outcomes:?}"
    );
    // The write phase was hit: a temporary directory was left at least once.
    assert!(
        outcomes
            .iter()
            .any(|(_, _, left, _)| *left == Left::Temporary),
        "no kill landed in the write phase: {outcomes:?}"
    );
    // A stray temporary directory is never taken for a release: a later release to the
    // same OUT works and verifies.
    for (kill, _, left, out) in outcomes.iter().filter(|o| o.2 != Left::Release).take(3) {
        let status = start_release(&s, &home, out).wait().unwrap();
        assert!(
            status.success(),
            "{kill:?} / {left:?}: a later release failed"
        );
        verify_release(&s, out, &home).unwrap();
    }
}

#[test]
fn a_torn_last_ledger_line_stops_draws_until_it_is_repaired() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = setup();
    let home = s.root.join("home");
    let out = s.root.join("out-first");
    assert!(start_release(&s, &home, &out).wait().unwrap().success());
    // A crash of the machine mid-append leaves a line without its end.
    let mut ledger = std::fs::OpenOptions::new()
        .append(true)
        .open(home.join("ledger.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut ledger, b"{\"v\":2,\"id\":\"torn").unwrap();
    drop(ledger);
    let before = std::fs::read(home.join("ledger.jsonl")).unwrap();
    let out = s.root.join("out");
    let refused = start_release(&s, &home, &out).wait_with_output().unwrap();
    assert_eq!(refused.status.code(), Some(4), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("ledger.jsonl:3: the last line is torn")
            && stderr.contains("coco ledger repair"),
        "{stderr}"
    );
    assert!(!out.exists());
    assert_eq!(
        std::fs::read(home.join("ledger.jsonl")).unwrap(),
        before,
        "nothing drawn"
    );
    let coco = |args: &[&str]| {
        Command::new(COCO)
            .args(args)
            .env("COCO_HOME", &home)
            .output()
            .unwrap()
    };
    let verify = coco(&["ledger", "verify"]);
    assert_eq!(verify.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&verify.stdout).contains("line 3: torn"));
    let repair = coco(&["ledger", "repair"]);
    assert!(repair.status.success(), "{repair:?}");
    assert_eq!(
        std::fs::read_to_string(home.join("ledger.jsonl.torn")).unwrap(),
        "{\"v\":2,\"id\":\"torn\n"
    );
    assert!(coco(&["ledger", "verify"]).status.success());
    assert!(start_release(&s, &home, &out).wait().unwrap().success());
    verify_release(&s, &out, &home).unwrap();
    assert_eq!(ledger_entries(&home).len(), 2);
}

#[test]
fn concurrent_releases_both_land_in_the_ledger() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = setup();
    let home = s.root.join("home");
    let outs = [s.root.join("out-a"), s.root.join("out-b")];
    let children: Vec<Child> = outs.iter().map(|o| start_release(&s, &home, o)).collect();
    for (child, out) in children.into_iter().zip(&outs) {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}: {}",
            out.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let entries = ledger_entries(&home);
    assert_eq!(entries.len(), 2);
    assert!(entries.iter().all(|e| e.status == Status::Written));
    for out in &outs {
        verify_release(&s, out, &home).unwrap();
        let absolute = std::path::absolute(out).unwrap().display().to_string();
        assert!(
            entries
                .iter()
                .any(|e| e.output.as_deref() == Some(absolute.as_str())),
            "no ledger line for {absolute}"
        );
    }
    assert_eq!(
        entries[0].dataset.content.as_deref(),
        Some(s.dataset.content_digest().as_str())
    );
    assert_ne!(entries[0].id, entries[1].id);
}
