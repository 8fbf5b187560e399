//! What the batch commands print for an operator, through the real binary: ε as short
//! decimals in text (exact in `--json` and in the files), the consistency step that
//! actually ran in the preview and the manifest, a saturated tail in the preview's
//! text, a pending draw in `coco ledger` described as it stands, and Ctrl-C's status.

use crate::common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use coco::data::Dataset;
use coco::noise::NoiseSource;
use coco::release::ledger::{Ledger, Tool};
use coco::release::plan::ReleasePlan;
use coco::release::transaction::{Reservation, ReserveOptions};
use common::cli::{COCO, coco, s, sample, text};

/// `coco ARGS`, which must succeed; its standard output.
fn ok(args: &[&str], home: &Path) -> String {
    let o = coco(args, home);
    assert!(o.status.success(), "coco {args:?}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json(args: &[&str], home: &Path) -> serde_json::Value {
    serde_json::from_str(&ok(args, home)).unwrap()
}

/// A plan of the sample with every level's method set to `methods` (root first).
fn plan_with(dir: &Path, name: &str, methods: [&str; 3], home: &Path) -> String {
    let path = dir.join(name);
    ok(
        &["plan", &s(&sample()), "--method", "hg", "--out", &s(&path)],
        home,
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let mut out = String::new();
    let mut level = 0;
    for line in text.lines() {
        if line.starts_with("method = ") {
            out.push_str(&format!("method = \"{}\"\n", methods[level]));
            level += 1;
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert_eq!(level, 3, "{text}");
    std::fs::write(&path, out).unwrap();
    s(&path)
}

#[test]
fn previews_and_manifests_name_the_consistency_step_that_ran() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = s(&sample());
    // hg at every level runs under wls; naive on one level makes wls fall back to
    // topdown, and everything that names the step says topdown.
    for (name, methods, ran, planned) in [
        ("hg.toml", ["hg", "hg", "hg"], "wls", None),
        ("naive.toml", ["hc", "naive", "hc"], "topdown", Some("wls")),
    ] {
        let plan = plan_with(tmp.path(), name, methods, &home);
        let preview = ok(
            &[
                "preview", &data, "--config", &plan, "--trials", "1", "--seed", "1",
            ],
            &home,
        );
        let header = preview
            .lines()
            .find(|l| l.starts_with("level"))
            .unwrap_or_else(|| panic!("{preview}"));
        assert!(
            header.contains(&format!("consistent: {ran}")),
            "{name}: {header}"
        );
        let report = json(
            &[
                "preview", &data, "--config", &plan, "--trials", "1", "--seed", "1", "--json",
            ],
            &home,
        );
        let variant = report["levels"][0]["consistent"][0]["variant"]
            .as_str()
            .unwrap();
        assert!(variant.starts_with(ran), "{name}: {variant}");
        let out = tmp.path().join(format!("out-{name}"));
        ok(
            &[
                "release",
                &data,
                "--config",
                &plan,
                "--out",
                &s(&out),
                "--seed",
                "7",
                "--not-private",
                "--replicates",
                "2",
            ],
            &home,
        );
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap())
                .unwrap();
        assert_eq!(manifest["consistency"], ran, "{name}");
        assert_eq!(
            manifest.get("consistency_planned").and_then(|c| c.as_str()),
            planned,
            "{name}"
        );
        if planned.is_some() {
            assert!(
                preview.contains("warning: consistency \"wls\" needs method"),
                "{preview}"
            );
            assert!(
                manifest["warnings"][0]
                    .as_str()
                    .unwrap()
                    .contains("used \"topdown\" instead"),
                "{manifest}"
            );
        }
    }
}

#[test]
fn a_preview_says_in_text_that_a_tail_saturated() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let plan = s(&tmp.path().join("tiny.toml"));
    ok(
        &[
            "plan",
            &s(&sample()),
            "--tail",
            "2",
            "--tail-groups",
            "5",
            "--out",
            &plan,
        ],
        &home,
    );
    let preview = ok(
        &[
            "preview",
            &s(&sample()),
            "--config",
            &plan,
            "--trials",
            "1",
            "--seed",
            "1",
        ],
        &home,
    );
    assert!(
        preview.contains("warning: country: the tail is saturated in 1 of 1 regions"),
        "{preview}"
    );
}

#[test]
fn epsilon_reads_as_a_short_decimal_in_text_and_exactly_in_json_and_files() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = s(&sample());
    let plan = s(&tmp.path().join("sevenths.toml"));
    let made = coco(
        &["plan", &data, "--budgets", "1/7,1/3,1/3", "--out", &plan],
        &home,
    );
    assert!(made.status.success(), "{}", text(&made));
    let said = String::from_utf8_lossy(&made.stderr);
    assert!(said.contains("≈0.1429"), "{said}");
    assert!(said.contains("total ε = ≈0.8095 (exactly 17/21)"), "{said}");
    assert!(std::fs::read_to_string(&plan).unwrap().contains("\"1/7\""));
    let preview = ok(
        &[
            "preview", &data, "--config", &plan, "--trials", "1", "--seed", "1",
        ],
        &home,
    );
    assert!(preview.contains("total ε = ≈0.8095"), "{preview}");
    assert!(preview.contains("≈0.1429"), "{preview}");
    assert!(!preview.contains("1/7"), "{preview}");
    let report = json(
        &[
            "preview", &data, "--config", &plan, "--trials", "1", "--seed", "1", "--json",
        ],
        &home,
    );
    assert_eq!(report["total_epsilon"], "17/21");
    assert_eq!(report["levels"][0]["epsilon"], "1/7");
    let out = s(&tmp.path().join("out"));
    let released = ok(
        &[
            "release",
            &data,
            "--config",
            &plan,
            "--out",
            &out,
            "--seed",
            "7",
            "--not-private",
        ],
        &home,
    );
    assert!(
        released.contains("total ε = ≈0.8095 (exactly 17/21)"),
        "{released}"
    );
    // Spent rounds up: never shown as less than it is.
    assert!(released.contains("ε spent ≈0.8096"), "{released}");
    let ledger = ok(&["ledger"], &home);
    assert!(ledger.contains("ε ≈0.8096"), "{ledger}");
    assert!(ledger.contains("country ≈0.1429 "), "{ledger}");
    let exact = json(&["ledger", "--json"], &home);
    assert!(exact.to_string().contains("17/21") || exact.to_string().contains("\"17\""));
}

#[test]
fn coco_ledger_says_whether_a_pending_draw_awaits_its_decision() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dataset = Arc::new(Dataset::load(&sample()).unwrap());
    let plan = ReleasePlan::load(Path::new(&{
        let p = s(&tmp.path().join("plan.toml"));
        ok(&["plan", &s(&sample()), "--out", &p], &home);
        p
    }))
    .unwrap();
    let ledger = Ledger::at(&home);
    // A session's draw, shown and undecided: the session holds the ledger lock.
    let seeded = ReserveOptions {
        allow_seeded: true,
        ..Default::default()
    };
    let pending = Reservation::open(&ledger, dataset, plan, Tool::Tui, seeded)
        .unwrap()
        .draw(&NoiseSource::seeded(1), &Default::default())
        .unwrap();
    let shown = ok(&["ledger"], &home);
    assert!(
        shown.contains("pending: drawn, awaiting the operator's decision in a running session"),
        "{shown}"
    );
    // The same line where no session holds the lock: the session stopped.
    let elsewhere = tmp.path().join("copy");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::copy(home.join("ledger.jsonl"), elsewhere.join("ledger.jsonl")).unwrap();
    // A ledger without its anchor is read only once adopted (issue 32).
    ok(&["ledger", "adopt"], &elsewhere);
    let copied = ok(&["ledger"], &elsewhere);
    assert!(
        copied
            .contains("pending: drawn, no decision recorded (the session stopped before deciding"),
        "{copied}"
    );
    drop(pending);
    let decided = ok(&["ledger"], &home);
    assert!(decided.contains("discarded"), "{decided}");
    assert!(!decided.contains("pending:"), "{decided}");
}

#[test]
#[cfg(unix)]
fn ctrl_c_stops_a_release_with_status_130_and_leaves_no_release() {
    use std::os::unix::process::ExitStatusExt;
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = tmp.path().join("us");
    ok(&["gen", "us-counties", "--out", &s(&data)], &home);
    // Plain hc up to K = 100,000 at every level: 3,276 regions of 100,001 noise samples,
    // seconds of drawing, so the signal arrives while the release is under way.
    let plan = s(&tmp.path().join("plan.toml"));
    ok(
        &[
            "plan",
            &s(&data),
            "--method",
            "hc",
            "--max-size",
            "100000",
            "--out",
            &plan,
        ],
        &home,
    );
    let out = tmp.path().join("out");
    let mut release = Command::new(COCO);
    release
        .args(["release", &s(&data), "--config", &plan, "--out", &s(&out)])
        .env("COCO_HOME", &home)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SIGINT as a terminal's coco gets it: a test run from a background job (`cargo
    // test &`) inherits SIGINT ignored, which the child would inherit in turn.
    // SAFETY: `signal` is async-signal-safe, as `pre_exec` requires.
    unsafe {
        release.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = release.spawn().unwrap();
    // The release holds the ledger's lock from its reservation to its decision: wait
    // for it (an event, not a guess at the timing), then Ctrl-C, which in a terminal is
    // SIGINT to the process.
    let lock = home.join("ledger.lock");
    let started = std::time::Instant::now();
    while !lock.exists() && started.elapsed() < std::time::Duration::from_secs(30) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(lock.exists(), "the release never reserved the ledger");
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    assert!(
        status.code() == Some(130) || status.signal() == Some(2),
        "{status:?}"
    );
    // Never a half-written release: nothing at OUT (the write is a rename of a
    // complete directory, which a release stopped while drawing has not reached).
    assert!(!out.exists());
    let verified = coco(&["ledger", "verify"], &home);
    assert!(verified.status.success(), "{}", text(&verified));
}

/// Long work whose standard error is not a terminal (a log, a pipe, a scheduler) prints
/// plain progress lines, because a bar would never show there; work shorter than the
/// interval prints none, so quick commands keep their logs clean.
#[test]
fn progress_is_plain_lines_off_a_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let plan = tmp.path().join("plan.toml");
    ok(&["plan", &s(&sample()), "--out", &s(&plan)], &home);
    let args = [
        "preview",
        &s(&sample()),
        "--config",
        &s(&plan),
        "--proxy",
        "synthetic",
        "--trials",
        "2",
    ];
    let every_step = Command::new(COCO)
        .args(args)
        .env("COCO_HOME", &home)
        .env("COCO_PROGRESS_EVERY", "0")
        .output()
        .unwrap();
    assert!(every_step.status.success(), "{}", text(&every_step));
    let err = String::from_utf8_lossy(&every_step.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("preview: ")).collect();
    assert!(lines.len() >= 2, "{err}");
    assert!(
        lines.iter().any(|l| l.contains("regions (trial 2 of 2)")),
        "{err}"
    );
    assert!(lines[0].contains(" elapsed"), "{err}");
    let last = lines.last().unwrap();
    assert!(last.ends_with("(done)"), "{err}");
    assert!(!err.contains('\r') && !err.contains('\u{1b}'), "{err:?}");

    let quiet = coco(&args, &home);
    assert!(quiet.status.success(), "{}", text(&quiet));
    let err = String::from_utf8_lossy(&quiet.stderr);
    assert!(!err.lines().any(|l| l.starts_with("preview: ")), "{err}");
}
