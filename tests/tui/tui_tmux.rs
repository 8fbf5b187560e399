//! The real `coco` binary in a real terminal: tmux at 100×30, keys sent as an operator
//! would type them, the screen read back with `capture-pane`. Goes through every screen,
//! runs a preview, draws and exports a release, quits with `q`, and checks the files,
//! the ledger and that the shell is back on a normal screen.
//!
//! Without tmux these tests fail, unless `COCO_SKIP_TMUX=1` asks to skip them (each
//! then says so on standard error); see docs/development.md. Every wait polls the pane
//! until the expected text appears, with a generous deadline: the machine may be slow.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(300);

/// A tmux server of our own (its own socket), killed on drop.
struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> Output {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "coco"];
        args.extend(keys);
        self.run(&args);
    }

    /// Types text literally (no key names).
    fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "coco", "-l", text]);
    }

    fn capture(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-t", "coco", "-p"]).stdout)
            .into_owned()
    }

    /// Polls the pane until it shows `text`; panics with the last capture after the deadline.
    fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture();
            if screen.contains(text) {
                return screen;
            }
            if start.elapsed() > DEADLINE {
                panic!("waited {DEADLINE:?} for {text:?}; the screen shows:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

/// Whether `test` is to be skipped for want of tmux: never when tmux runs. Without it the
/// test fails, naming the fix, unless the developer opts out explicitly with
/// `COCO_SKIP_TMUX=1`; then it says, on standard error, that it did not run. `.ci/run`
/// installs tmux and unsets the opt-out, so in CI these tests always run.
fn skip_without_tmux(test: &str) -> bool {
    let tmux = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if tmux {
        return false;
    }
    assert!(
        std::env::var_os("COCO_SKIP_TMUX").is_some_and(|v| v == "1"),
        "{test} needs tmux, which is not installed: install it (apt-get install tmux), or \
         set COCO_SKIP_TMUX=1 to skip the tests that drive the real terminal"
    );
    // Straight to the process's standard error: libtest would hide an eprintln! of a
    // passing test.
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("SKIPPED {test}: tmux is not installed and COCO_SKIP_TMUX=1\n").as_bytes(),
    );
    true
}

fn start(work: &Path) -> Tmux {
    start_sized(work, "100", "30")
}

fn start_sized(work: &Path, width: &str, height: &str) -> Tmux {
    let tmux = Tmux {
        socket: work.join("tmux.sock"),
    };
    let shell = format!(
        "env -i PATH={} HOME={} TERM=xterm-256color LANG=C.UTF-8 PS1='READY$ ' bash --norc --noprofile",
        std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
        work.display()
    );
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "coco",
        "-x",
        width,
        "-y",
        height,
        "-c",
        work.to_str().unwrap(),
        &shell,
    ]);
    tmux.wait_for("READY$");
    tmux
}

#[test]
fn an_operator_session_in_a_real_terminal() {
    if skip_without_tmux("an_operator_session_in_a_real_terminal") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let tmux = start(work.path());
    tmux.type_text(&format!(
        "COCO_HOME={} {}",
        home.display(),
        env!("CARGO_BIN_EXE_coco")
    ));
    tmux.keys(&["Enter"]);

    // 1 Dataset (the bundled sample opens without arguments).
    let s = tmux.wait_for("Dataset households");
    assert!(s.contains("district   60"), "{s}");
    assert!(s.contains("previews: OS randomness"), "{s}");

    // 2 Hierarchy: find a district by name.
    tmux.keys(&["2"]);
    tmux.wait_for("Regions · G (public)");
    tmux.keys(&["/"]);
    tmux.wait_for("Find a region");
    tmux.type_text("Vessaport");
    tmux.keys(&["Enter"]);
    let s = tmux.wait_for("ARV/03/0301 (Vessaport) · true histogram");
    assert!(s.contains("groups G 6,336 (public)"), "{s}");

    // 3 Budget: ε = 0.5 at the leaf level.
    tmux.keys(&["3"]);
    tmux.wait_for("Budget per level");
    tmux.keys(&["Down", "Down", "e"]);
    tmux.wait_for("ε for level district");
    tmux.keys(&["BSpace", "BSpace", "BSpace"]);
    tmux.type_text("0.5");
    tmux.keys(&["Enter"]);
    // ε reads as a short decimal; E shows it exactly, and again short.
    let s = tmux.wait_for("total ε = ≈1.167");
    assert!(s.contains("preset custom"), "{s}");
    tmux.keys(&["E"]);
    tmux.wait_for("total ε = 7/6");
    tmux.keys(&["E"]);
    tmux.wait_for("total ε = ≈1.167");

    // 4 Preview: run the trials, on the synthetic proxy by default (public data).
    tmux.keys(&["4"]);
    tmux.wait_for("No preview yet");
    tmux.keys(&["r"]);
    let s = tmux.wait_for("Mean per-region EMD to the truth");
    assert!(s.contains("PUBLIC PROXY"), "{s}");
    assert!(!s.contains("CONFIDENTIAL DIAGNOSTICS"), "{s}");
    assert!(s.contains("district   0.5"), "{s}");

    // 5 Trade-off: a sweep of the leaf level.
    tmux.keys(&["5"]);
    tmux.wait_for("No sweep yet");
    tmux.keys(&["r"]);
    tmux.wait_for("Sweep (bold: the current plan)");

    // 6 Release: draw, approve, export to the default directory.
    tmux.keys(&["6"]);
    tmux.wait_for("d draws one release with fresh OS randomness");
    tmux.keys(&["d"]);
    let s = tmux.wait_for("UNDECIDED");
    assert!(s.contains("✓ parents = Σ children"), "{s}");
    tmux.keys(&["a"]);
    tmux.wait_for("release-households-1");
    tmux.keys(&["Enter"]);
    let s = tmux.wait_for("EXPORTED");
    assert!(s.contains("manifest checks all passed"), "{s}");

    // Help, then quit with q (the draw is decided: no question).
    tmux.keys(&["?"]);
    tmux.wait_for("Keys · Release");
    tmux.keys(&["Escape"]);
    tmux.wait_for("a approve & export");
    tmux.keys(&["q"]);
    let start = Instant::now();
    let screen = loop {
        let s = tmux.capture();
        let prompts = s.lines().filter(|l| l.starts_with("READY$")).count();
        if prompts >= 2 {
            break s;
        }
        assert!(start.elapsed() < DEADLINE, "no prompt after quitting:\n{s}");
        std::thread::sleep(Duration::from_millis(200));
    };
    // The normal screen is back: the command line and the prompt, no UI left over.
    let last = screen.lines().rfind(|l| !l.trim().is_empty()).unwrap();
    assert_eq!(last.trim_end(), "READY$", "{screen}");
    assert!(!screen.contains("coco  1 Dataset"), "{screen}");
    let alternate = tmux.run(&["display-message", "-p", "-t", "coco", "#{alternate_on}"]);
    assert_eq!(String::from_utf8_lossy(&alternate.stdout).trim(), "0");
    // The terminal still echoes what is typed (raw mode is off).
    tmux.type_text("echo sane-$((40+2))");
    tmux.keys(&["Enter"]);
    tmux.wait_for("sane-42");

    // The files, through the manifest's own checks, and the draw in the ledger.
    let out = work.path().join("release-households-1");
    for f in ["counts.csv", "manifest.json", "tables/2-district.csv"] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    for check in [
        "integral",
        "nonnegative",
        "group_totals",
        "consistent",
        "within_max_size",
    ] {
        assert_eq!(manifest["checks"][check], true, "{check}");
    }
    assert_eq!(manifest["total_epsilon_exact"], "7/6");
    assert_eq!(manifest["for_publication"], true);
    // One draw: its pending line (written before it was shown), then the export.
    let ledger = std::fs::read_to_string(home.join("ledger.jsonl")).unwrap();
    assert_eq!(ledger.lines().count(), 2, "{ledger}");
    let lines: Vec<serde_json::Value> = ledger
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["status"], "pending");
    assert_eq!(lines[0]["id"], lines[1]["id"]);
    assert_eq!(lines[0]["id"], manifest["ledger_entry"]);
    let line = &lines[1];
    assert_eq!(line["status"], "written");
    assert_eq!(line["tool"], "tui");
    assert_eq!(line["randomness"]["source"], "os");
}

/// us-blocks at a hundredth (81,379 blocks) at 120×40: loading shows its progress,
/// the tree goes down to a block found by its code, a search by name runs in the
/// background and counts what it finds, and `q` quits.
#[test]
fn a_census_hierarchy_in_a_real_terminal() {
    if skip_without_tmux("a_census_hierarchy_in_a_real_terminal") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let blocks = work.path().join("blocks");
    common::cli::gen_us_blocks(&blocks, "0.01", "1");
    let tmux = start_sized(work.path(), "120", "40");
    tmux.type_text(&format!(
        "COCO_HOME={} {} tui {}",
        home.display(),
        env!("CARGO_BIN_EXE_coco"),
        blocks.display()
    ));
    tmux.keys(&["Enter"]);
    let s = tmux.wait_for("Dataset blocks");
    assert!(s.contains("block      81,379"), "{s}");

    tmux.keys(&["2"]);
    tmux.wait_for("▾ US United States");
    tmux.keys(&["/"]);
    tmux.wait_for("Find a region");
    tmux.type_text("010010001001001");
    tmux.keys(&["Enter"]);
    let s = tmux.wait_for("/010010001001001: 1 of 1");
    // The title names the block; its description gives way to the label.
    assert!(
        s.contains("US/01/01001/01001000100/010010001001001 · true histogr… CONFIDENTIAL"),
        "{s}"
    );
    assert!(s.contains("· 010010001001001"), "{s}");
    tmux.keys(&["/"]);
    tmux.wait_for("Find a region");
    tmux.type_text("autauga");
    tmux.keys(&["Enter"]);
    let s = tmux.wait_for("/autauga: 1 of 1");
    assert!(s.contains("US/01/01001 (Autauga County)"), "{s}");

    tmux.keys(&["q"]);
    let start = Instant::now();
    loop {
        let s = tmux.capture();
        if s.lines().filter(|l| l.starts_with("READY$")).count() >= 2 {
            break;
        }
        assert!(start.elapsed() < DEADLINE, "no prompt after quitting:\n{s}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn coco_without_a_terminal_prints_the_sample_summary() {
    let out = Command::new(env!("CARGO_BIN_EXE_coco"))
        .env("COCO_HOME", tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("Dataset households"), "{text}");
    assert!(text.contains("CONFIDENTIAL"));
    let out = Command::new(env!("CARGO_BIN_EXE_coco"))
        .args(["tui", "sample-data/households"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a terminal"));
}

#[test]
fn closing_the_terminal_records_an_undecided_draw() {
    if skip_without_tmux("closing_the_terminal_records_an_undecided_draw") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let tmux = draw_and_leave_undecided(work.path(), &home);
    // The terminal goes away (SIGHUP to the pane's processes).
    tmux.run(&["kill-server"]);
    let ledger = home.join("ledger.jsonl");
    let start = Instant::now();
    let text = loop {
        // Two whole lines (the pending one, then the decision): the write is complete.
        if let Some(t) = std::fs::read_to_string(&ledger)
            .ok()
            .filter(|t| t.ends_with('\n') && t.lines().count() >= 2)
        {
            break t;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "the draw was not recorded after the terminal closed"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(text.lines().count(), 2, "{text}");
    let line: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    assert_eq!(line["status"], "discarded");
    assert_eq!(
        line["note"],
        "discarded: coco was stopped before the operator decided"
    );
}

#[test]
fn ctrl_c_exits_130_restores_the_terminal_and_records_the_draw() {
    if skip_without_tmux("ctrl_c_exits_130_restores_the_terminal_and_records_the_draw") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let tmux = draw_and_leave_undecided(work.path(), &home);
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("EXIT=130");
    // Back on the shell's screen: the UI's frame is gone.
    assert!(!screen.contains("UNDECIDED"), "{screen}");
    let text = std::fs::read_to_string(home.join("ledger.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    let line: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    assert_eq!(line["status"], "discarded");
}

#[test]
fn a_killed_tui_leaves_its_shown_draw_in_the_ledger() {
    if skip_without_tmux("a_killed_tui_leaves_its_shown_draw_in_the_ledger") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let tmux = draw_and_leave_undecided(work.path(), &home);
    // SIGKILL: no handler runs, nothing is written after this point.
    let shell = tmux.run(&["display-message", "-p", "-t", "coco", "#{pane_pid}"]);
    let shell = String::from_utf8_lossy(&shell.stdout).trim().to_string();
    let pid = child_of(&shell).expect("coco runs under the pane's shell");
    let killed = Command::new("kill").args(["-KILL", &pid]).status().unwrap();
    assert!(killed.success());
    let start = Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists() && child_of(&shell).is_some() {
        assert!(start.elapsed() < DEADLINE, "coco survived SIGKILL");
        std::thread::sleep(Duration::from_millis(100));
    }
    // The draw the operator saw is in the ledger, pending, and counts as spent.
    let text = std::fs::read_to_string(home.join("ledger.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    let line: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(line["status"], "pending");
    assert_eq!(line["total_epsilon"]["num"], "1");
    assert_eq!(line["total_epsilon"]["den"], "1");
    let out = Command::new(env!("CARGO_BIN_EXE_coco"))
        .args(["ledger", "--json"])
        .env("COCO_HOME", &home)
        .output()
        .unwrap();
    assert!(out.status.success());
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["datasets"][0]["spent"], "1");
    assert_eq!(summary["datasets"][0]["draws"], 1);
}

/// A child process of `parent`, from /proc (no procps needed).
fn child_of(parent: &str) -> Option<String> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid = entry.file_name().to_string_lossy().into_owned();
            if !pid.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // pid (comm) state ppid …: the command name may hold spaces, so split after ')'.
            let ppid = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?;
            (ppid == parent).then_some(pid)
        })
}

/// Starts coco on the sample with its home at `home`, draws a release on the Release
/// screen and leaves it undecided on screen. The shell prints coco's exit status
/// (`EXIT=n`) when it ends.
fn draw_and_leave_undecided(work: &Path, home: &Path) -> Tmux {
    let tmux = start(work);
    tmux.type_text(&format!(
        "COCO_HOME={} {}; echo EXIT=$?",
        home.display(),
        env!("CARGO_BIN_EXE_coco")
    ));
    tmux.keys(&["Enter"]);
    tmux.wait_for("Dataset households");
    tmux.keys(&["6"]);
    tmux.wait_for("d draws one release");
    tmux.keys(&["d"]);
    tmux.wait_for("UNDECIDED");
    tmux
}

/// Issue 32, item 8: `COCO_TUI_TIMINGS` logs timings only, in a private file: no key
/// names and nothing typed (a dataset path, a region searched for), mode 0600.
#[test]
fn the_timings_file_is_private_and_holds_no_keys() {
    if skip_without_tmux("the_timings_file_is_private_and_holds_no_keys") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let timings = work.path().join("timings.tsv");
    let tmux = start(work.path());
    // The shell's umask lets others read what is created without a mode of its own.
    tmux.type_text(&format!(
        "umask 022; COCO_TUI_TIMINGS={} COCO_HOME={} {}; echo EXIT=$?",
        timings.display(),
        home.display(),
        env!("CARGO_BIN_EXE_coco")
    ));
    tmux.keys(&["Enter"]);
    tmux.wait_for("Dataset households");
    // A path typed into the dataset picker, then cancelled.
    tmux.keys(&["o"]);
    tmux.wait_for("Open a dataset");
    tmux.type_text("/srv/secret-census");
    tmux.wait_for("/srv/secret-census");
    tmux.keys(&["Escape"]);
    // A region searched for by name.
    tmux.keys(&["2"]);
    tmux.wait_for("Regions · G (public)");
    tmux.keys(&["/"]);
    tmux.wait_for("Find a region");
    tmux.type_text("Vessaport");
    tmux.keys(&["Enter"]);
    tmux.wait_for("ARV/03/0301 (Vessaport)");
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=0");

    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&timings).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    let text = std::fs::read_to_string(&timings).unwrap();
    let mut keys = 0;
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 2, "{line:?} in:\n{text}");
        assert!(
            ["start", "key", "worker", "frame"].contains(&fields[0]),
            "{line:?}"
        );
        assert!(fields[1].parse::<f64>().is_ok(), "{line:?}");
        keys += usize::from(fields[0] == "key");
    }
    // Every key was timed: the 18 characters of the path, o, Escape, 2, /, the 9 of
    // the name, Enter and q.
    assert!(keys >= 33, "{keys} keys in:\n{text}");
    for typed in ["secret", "Vessaport", "Escape", "Esc", "Enter"] {
        assert!(!text.contains(typed), "{typed} in:\n{text}");
    }
}

/// The plan lines of a plan file that say what is measured: each level's name, budget
/// and method, root first (comments and provenance left out).
fn measured_lines(plan: &str) -> Vec<String> {
    plan.lines()
        .map(str::trim)
        .filter(|l| {
            l.starts_with("name =") || l.starts_with("epsilon =") || l.starts_with("method =")
        })
        .map(|l| l.split('#').next().unwrap_or(l).trim().to_string())
        .collect()
}

/// Issue 36: the TUI's search with a seed recommends what `coco preview --sweep` with the
/// same seed and proxy recommends (one code path, one set of defaults), and applying it
/// records tuning = proxy with the proxy named, saved as the CLI's `--write-plan` writes.
#[test]
fn the_tui_applies_the_recommendation_the_cli_printed_for_a_seed() {
    if skip_without_tmux("the_tui_applies_the_recommendation_the_cli_printed_for_a_seed") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    // The CLI: the synthetic proxy, seed 1 (the TUI's fixed seed), every default.
    let cli_plan = work.path().join("cli.toml");
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households");
    let out = Command::new(env!("CARGO_BIN_EXE_coco"))
        .args([
            "preview",
            sample.to_str().unwrap(),
            "--sweep",
            "--proxy",
            "synthetic",
        ])
        .args(["--seed", "1", "--write-plan", cli_plan.to_str().unwrap()])
        .env("COCO_HOME", &home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli = std::fs::read_to_string(&cli_plan).unwrap();

    let tmux = start(work.path());
    tmux.type_text(&format!(
        "COCO_HOME={} {}",
        home.display(),
        env!("CARGO_BIN_EXE_coco")
    ));
    tmux.keys(&["Enter"]);
    tmux.wait_for("Dataset households");
    // 5 Trade-off: the fixed seed, the frontier view, run (on the synthetic proxy).
    tmux.keys(&["5"]);
    tmux.wait_for("sweep of level");
    tmux.keys(&["s", "v"]);
    let s = tmux.wait_for("seed 1");
    assert!(s.contains("trials 10"), "the CLI's default trials: {s}");
    tmux.keys(&["r"]);
    tmux.wait_for("★ Recommended");
    // Apply it, then save the plan beside the CLI's.
    tmux.keys(&["a"]);
    let s = tmux.wait_for("plan set to the recommendation");
    assert!(s.contains("tuning: proxy on synthetic"), "{s}");
    tmux.keys(&["3"]);
    let s = tmux.wait_for("applied: the plan is this recommendation");
    assert!(!s.contains("for an earlier plan"), "{s}");
    assert!(s.contains("proxy (synthetic)"), "{s}");
    let tui_plan = work.path().join("tui.toml");
    tmux.keys(&["s"]);
    tmux.wait_for("Save the plan");
    tmux.keys(&["C-u"]);
    tmux.type_text(tui_plan.to_str().unwrap());
    tmux.keys(&["Enter"]);
    tmux.wait_for("plan saved");
    let tui = std::fs::read_to_string(&tui_plan).unwrap();
    assert_eq!(
        measured_lines(&tui),
        measured_lines(&cli),
        "the TUI's plan:\n{tui}\nthe CLI's:\n{cli}"
    );
    for plan in [&tui, &cli] {
        assert!(plan.contains("tuning = \"proxy\""), "{plan}");
        assert!(plan.contains("tuning_source = \"synthetic\""), "{plan}");
    }
    tmux.keys(&["q"]);
}

/// Issue 36: a held level keeps its share while another level or the total changes,
/// is marked on screen, and survives a save and a reload of the plan.
#[test]
fn a_held_level_survives_a_save_and_reload() {
    if skip_without_tmux("a_held_level_survives_a_save_and_reload") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let tmux = start(work.path());
    let launch = format!(
        "COCO_HOME={} {}",
        home.display(),
        env!("CARGO_BIN_EXE_coco")
    );
    tmux.type_text(&launch);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Dataset households");
    tmux.keys(&["3"]);
    let s = tmux.wait_for("Budget per level");
    assert!(s.contains("h hold"), "the key is shown: {s}");
    // Hold the root (selected first), then raise the provinces' ε: the total stays 1.
    tmux.keys(&["h"]);
    let s = tmux.wait_for("country held at its share");
    assert!(s.contains("33.3% held"), "{s}");
    tmux.keys(&["Down", "Right"]);
    let s = tmux.wait_for("0.35");
    assert!(s.contains("total ε = 1 ·"), "the total stays: {s}");
    assert!(s.contains("33.3% held"), "the held share stays: {s}");
    // Save, quit, start again and load: the level is still held.
    let plan = work.path().join("held.toml");
    tmux.keys(&["s"]);
    tmux.wait_for("Save the plan");
    tmux.keys(&["C-u"]);
    tmux.type_text(plan.to_str().unwrap());
    tmux.keys(&["Enter"]);
    tmux.wait_for("plan saved");
    let text = std::fs::read_to_string(&plan).unwrap();
    let country = text.split("[[level]]").nth(1).unwrap();
    assert!(
        country.contains("name = \"country\"") && country.contains("held = true"),
        "{text}"
    );
    assert_eq!(text.matches("held = true").count(), 1, "{text}");
    tmux.keys(&["q"]);
    tmux.wait_for("READY$");
    tmux.type_text(&launch);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Dataset households");
    tmux.keys(&["3"]);
    let s = tmux.wait_for("Budget per level");
    assert!(!s.contains("held"), "a fresh plan holds nothing: {s}");
    tmux.keys(&["L"]);
    tmux.wait_for("Load a plan");
    tmux.keys(&["C-u"]);
    tmux.type_text(plan.to_str().unwrap());
    tmux.keys(&["Enter"]);
    let s = tmux.wait_for("plan loaded from");
    assert!(s.contains("33.3% held"), "{s}");
    // The total doubles: the held root keeps its third (2/3 of 2).
    tmux.keys(&["t"]);
    tmux.wait_for("Total ε over the levels");
    tmux.keys(&["C-u"]);
    tmux.type_text("2");
    tmux.keys(&["Enter"]);
    let s = tmux.wait_for("total ε = 2 ·");
    assert!(s.contains("33.3% held"), "{s}");
    tmux.keys(&["q"]);
}
