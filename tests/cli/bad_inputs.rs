//! The bad-input corpus (`tests/fixtures/bad/`, described in its README) through the
//! real binary: every bad case makes `coco inspect`, `coco preview` and `coco release`
//! fail as its class requires, with exactly one `error: …` line on standard error that
//! names the file (and line, where one applies), creates no output directory and adds
//! no ledger line; every valid case loads, previews and releases.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::cli::ledger_draws;

const COCO: &str = env!("CARGO_BIN_EXE_coco");

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bad")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmd {
    Inspect,
    Preview,
    Release,
}

const ALL: &[Cmd] = &[Cmd::Inspect, Cmd::Preview, Cmd::Release];
/// A bad plan: `inspect` does not read it.
const PLAN: &[Cmd] = &[Cmd::Preview, Cmd::Release];
/// Only a release reads the ledger's configuration.
const RELEASE: &[Cmd] = &[Cmd::Release];

/// One bad case: which commands fail, and what their one error line must hold.
struct Bad {
    /// The directory under `tests/fixtures/bad/`.
    case: &'static str,
    fails: &'static [Cmd],
    /// The file the message names ("" when the message is about no file).
    file: &'static str,
    /// The line it names, where a line applies.
    line: Option<u32>,
    /// Part of the message.
    says: &'static str,
}

const fn bad(
    case: &'static str,
    fails: &'static [Cmd],
    file: &'static str,
    line: Option<u32>,
    says: &'static str,
) -> Bad {
    Bad {
        case,
        fails,
        file,
        line,
        says,
    }
}

/// The table of bad cases (see the README beside the fixtures).
#[rustfmt::skip]
const BAD: &[Bad] = &[
    // Dataset files.
    bad("truncated-mid-row", ALL, "groups.csv", Some(4), "row has 2 fields: expected 3"),
    bad("truncated-in-quotes", ALL, "groups.csv", Some(3), "is a quote (\") left open?"),
    bad("non-utf8", ALL, "groups.csv", Some(3), "invalid UTF-8 (byte 0xe9"),
    bad("size-above-u32", ALL, "groups.csv", Some(3), "size \"4294967296\" is too large"),
    bad("negative-size", ALL, "groups.csv", Some(3), "size \"-3\" is not a whole number"),
    bad("count-not-a-number", ALL, "histograms.csv", Some(3), "count \"1.5\" is not a whole number"),
    bad("duplicate-level-hierarchy", ALL, "hierarchy.csv", Some(1), "level name \"state\" is already column 2"),
    bad("missing-groups-file", ALL, "missing-groups-file", None, "no groups file: expected groups.csv"),
    bad("missing-hierarchy", ALL, "hierarchy.csv", None, "file not found: every dataset needs hierarchy.csv"),
    bad("missing-dataset-directory", ALL, "missing-dataset-directory", None, "directory not found"),
    bad("empty-hierarchy", ALL, "hierarchy.csv", None, "file is empty (0 bytes)"),
    bad("two-groups-forms", ALL, "two-groups-forms", None, "found groups.csv and histograms.csv"),
    bad("entities-without-groups", ALL, "groups.csv", None, "entities.csv needs groups.csv"),
    bad("unknown-region", ALL, "groups.csv", Some(3), "region \"c9\" is not in hierarchy.csv"),
    bad("region-not-a-leaf", ALL, "groups.csv", Some(3), "region \"A\" is a state in hierarchy.csv, not a leaf"),
    bad("unknown-group-of-entity", ALL, "entities.csv", Some(4), "group_id \"g7\" is not in groups.csv"),
    bad("duplicate-group", ALL, "groups.csv", Some(4), "group_id \"g1\" is already on line 2"),
    bad("duplicate-cell", ALL, "histograms.csv", Some(4), "region \"a1\" with size 1 is already on line 2"),
    bad("duplicate-leaf", ALL, "hierarchy.csv", Some(3), "leaf code \"a1\" is already on line 2"),
    bad("second-root", ALL, "hierarchy.csv", Some(3), "root code \"CA\" differs from \"US\""),
    bad("slash-in-code", ALL, "hierarchy.csv", Some(2), "contains '/'"),
    bad("empty-code", ALL, "hierarchy.csv", Some(2), "empty state code"),
    bad("wrong-groups-header", ALL, "groups.csv", Some(1), "missing column \"group_id\""),
    bad("unknown-named-region", ALL, "names.csv", Some(3), "region \"US/Z\" is not in hierarchy.csv"),
    // Text a spreadsheet would run, or that breaks lines (issue: what is published is private).
    bad("formula-in-code", ALL, "hierarchy.csv", Some(4), "code \"=1+1\" begins with '=', which a spreadsheet runs as a formula"),
    bad("formula-in-name", ALL, "names.csv", Some(3), "name \"@SUM(A1)\" begins with '@', which a spreadsheet runs as a formula"),
    bad("nul-in-code", ALL, "hierarchy.csv", Some(3), "holds a control character (U+0000 NUL at character 2)"),
    bad("line-break-in-level-name", ALL, "hierarchy.csv", Some(1), "level name \"sta\\nte\" holds a control character (U+000A line feed"),
    // Invisible characters that are not format characters (issue 32).
    bad("invisible-hangul-filler", ALL, "names.csv", Some(3), "name \"Alpha\\u{3164}\" holds an invisible character (U+3164 HANGUL FILLER at character 6"),
    bad("invisible-choseong-filler", ALL, "hierarchy.csv", Some(3), "code \"a2\\u{115f}\" holds an invisible character (U+115F HANGUL CHOSEONG FILLER at character 3"),
    bad("invisible-variation-selector", ALL, "hierarchy.csv", Some(4), "code \"B\\u{fe0f}\" holds an invisible character (U+FE0F VARIATION SELECTOR-16 at character 2"),
    bad("invisible-grapheme-joiner", ALL, "hierarchy.csv", Some(1), "level name \"sta\\u{34f}te\" holds an invisible character (U+034F COMBINING GRAPHEME JOINER at character 4"),
    bad("invisible-khmer-vowel", ALL, "names.csv", Some(2), "name \"Al\\u{17b4}pha\" holds an invisible character (U+17B4 KHMER VOWEL INHERENT AQ at character 3"),
    bad("invisible-braille-blank", ALL, "names.csv", Some(3), "name \"\\u{2800}\" holds an invisible character (U+2800 BRAILLE PATTERN BLANK at character 1"),
    // Counts past what the arithmetic holds: refused at load, not a panic after the noise.
    bad("count-2-pow-63", ALL, "histograms.csv", Some(2), "the counts add up to more than 1000000000000 groups"),
    // Plans.
    bad("k-zero", PLAN, "plan.toml", Some(1), "max_size = 0: expected a whole number from 1 to 100000000"),
    bad("k-above-1e8", PLAN, "plan.toml", Some(1), "max_size = 100000001: expected a whole number from 1"),
    bad("epsilon-1e-300", PLAN, "plan.toml", Some(5), "ε \"1e-300\" is out of range"),
    bad("epsilon-zero-denominator", PLAN, "plan.toml", Some(5), "has a zero denominator: expected a fraction"),
    bad("epsilon-nan", PLAN, "plan.toml", Some(5), "ε \"nan\" is not a number"),
    bad("epsilon-inf", PLAN, "plan.toml", Some(5), "ε \"inf\" is not a number"),
    bad("epsilon-negative", PLAN, "plan.toml", Some(5), "ε \"-0.5\" is not positive"),
    bad("duplicate-level-plan", PLAN, "plan.toml", Some(8), "level \"nation\" appears twice"),
    bad("missing-level-plan", PLAN, "plan.toml", None, "level \"county\" is missing"),
    bad("other-datasets-levels", PLAN, "plan.toml", Some(3), "level \"country\" is not in the hierarchy: expected one of nation, state, county"),
    bad("levels-out-of-order", PLAN, "plan.toml", Some(3), "is out of order: list levels root first"),
    bad("plan-not-toml", PLAN, "plan.toml", Some(2), "not valid TOML"),
    bad("plan-unknown-key", PLAN, "plan.toml", Some(7), "unknown key \"epsilom\""),
    bad("plan-bad-method", PLAN, "plan.toml", Some(6), "method = \"laplace\": expected \"hc\""),
    bad("plan-non-utf8", PLAN, "plan.toml", Some(4), "invalid UTF-8 (byte 0xef)"),
    bad("plan-empty", PLAN, "plan.toml", None, "missing key \"max_size\""),
    bad("missing-plan-file", PLAN, "plan.toml", None, "file not found: expected a release plan"),
    // A valid dataset whose root holds 10^12 groups (the most a dataset may hold), with hg at every level.
    bad("huge-region", PLAN, "", None, "not enough memory: this plan needs about"),
    // The ledger's configuration.
    bad("bad-ledger-config", RELEASE, "config.toml", Some(3), "ε \"one half\" is not a number"),
    bad("cap-exceeded", RELEASE, "config.toml", None, "cap for this dataset would be exceeded"),
];

/// A case's dataset: its own directory when it holds dataset files (or is a missing
/// directory on purpose), else the shared valid dataset.
fn dataset_of(case: &str) -> PathBuf {
    let dir = fixtures().join(case);
    let has_data = [
        "hierarchy.csv",
        "groups.csv",
        "entities.csv",
        "histograms.csv",
    ]
    .iter()
    .any(|f| dir.join(f).exists());
    if has_data || case == "missing-dataset-directory" {
        dir
    } else {
        fixtures().join("valid-dataset")
    }
}

/// A case's plan: its own `plan.toml` when it has one (or it is missing on purpose),
/// else the shared valid plan.
fn plan_of(case: &str) -> PathBuf {
    let own = fixtures().join(case).join("plan.toml");
    if own.exists() || case == "missing-plan-file" {
        own
    } else {
        fixtures().join("valid-plan.toml")
    }
}

/// A fresh `COCO_HOME`, with the case's `home/` files copied in.
/// A case's coco home, private as coco makes it (a looser one is tightened with a note
/// on standard error, which `tests/trust.rs` checks).
fn home_for(case: &str, root: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
    let own = fixtures().join(case).join("home");
    if own.is_dir() {
        for entry in std::fs::read_dir(own).unwrap() {
            let entry = entry.unwrap();
            let to = home.join(entry.file_name());
            std::fs::copy(entry.path(), &to).unwrap();
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
    }
    home
}

fn run(cmd: Cmd, dataset: &Path, plan: &Path, home: &Path, out: &Path) -> Output {
    let mut c = Command::new(COCO);
    match cmd {
        Cmd::Inspect => c.arg("inspect").arg(dataset),
        Cmd::Preview => c
            .arg("preview")
            .arg(dataset)
            .arg("--config")
            .arg(plan)
            .args(["--trials", "2", "--seed", "1"]),
        Cmd::Release => c
            .arg("release")
            .arg(dataset)
            .arg("--config")
            .arg(plan)
            .arg("--out")
            .arg(out)
            .args(["--seed", "1", "--not-private"]),
    };
    // The fixtures are small; a fixed memory budget makes the memory refusal of
    // `estimated-k-too-large` the same on every machine.
    c.env("COCO_HOME", home)
        .env("COCO_MEMORY_LIMIT", "2G")
        .output()
        .unwrap()
}

/// Anything in `dir` whose name starts with `.out.coco-tmp-` (a temporary release).
fn stray_temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".out.coco-tmp-"))
        .collect()
}

/// Checks one failing command; returns what is wrong, if anything.
fn check_failure(case: &Bad, cmd: Cmd, output: &Output, root: &Path, home: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    if output.status.success() {
        problems.push("exited with success".into());
    }
    if lines.len() != 1 || !lines[0].starts_with("error: ") {
        problems.push(format!(
            "expected one `error: ` line on stderr, got {lines:?}"
        ));
    }
    let message = lines.first().copied().unwrap_or("");
    if !message.contains(case.file) {
        problems.push(format!("does not name {:?}", case.file));
    }
    if let Some(line) = case.line {
        let at = format!("{}:{line}", case.file);
        if !message.contains(&at) {
            problems.push(format!("does not name the line ({at})"));
        }
    }
    if !message.contains(case.says) {
        problems.push(format!("does not say {:?}", case.says));
    }
    if message.chars().count() > 600 {
        problems.push("is too long to read".into());
    }
    if root.join("out").exists() {
        problems.push("created the output directory".into());
    }
    let stray = stray_temporaries(root);
    if !stray.is_empty() {
        problems.push(format!("left temporary directories {stray:?}"));
    }
    if ledger_draws(home) != 0 {
        problems.push("added a ledger line".into());
    }
    problems
        .into_iter()
        .map(|p| {
            format!(
                "{} / {cmd:?}: {p}\n    stderr: {}",
                case.case,
                stderr.trim()
            )
        })
        .collect()
}

#[test]
fn every_bad_case_fails_with_one_clear_line() {
    let mut failures = Vec::new();
    for case in BAD {
        for &cmd in ALL {
            let root = tempfile::tempdir().unwrap();
            let home = home_for(case.case, root.path());
            let out = root.path().join("out");
            let output = run(
                cmd,
                &dataset_of(case.case),
                &plan_of(case.case),
                &home,
                &out,
            );
            if case.fails.contains(&cmd) {
                failures.extend(check_failure(case, cmd, &output, root.path(), &home));
            } else if !output.status.success() {
                failures.push(format!(
                    "{} / {cmd:?}: should succeed, failed with {}",
                    case.case,
                    String::from_utf8_lossy(&output.stderr).trim()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn the_table_covers_every_bad_fixture() {
    let valid: Vec<&str> = VALID.iter().map(|v| v.case).collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let entry = entry.unwrap();
        if !entry.path().is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if !["valid-dataset", "estimated-k-too-large"].contains(&name.as_str())
            && !valid.contains(&name.as_str())
            && !BAD.iter().any(|b| b.case == name)
        {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "fixtures without a table entry: {missing:?}"
    );
}

/// Writes `files` into a fresh directory under `root`.
fn generated(root: &Path, name: &str, files: &[(&str, Vec<u8>)]) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, bytes) in files {
        std::fs::write(dir.join(file), bytes).unwrap();
    }
    dir
}

#[test]
fn million_column_lines_and_long_fields_fail_quickly_with_one_short_line() {
    // Generated here rather than committed: each file is several megabytes.
    let root = tempfile::tempdir().unwrap();
    let hierarchy = b"nation,state,county\nUS,A,a1\nUS,A,a2\nUS,B,b1\n".to_vec();
    let mut wide_row = b"group_id,region,size\ng1,a1,1\ng2".to_vec();
    wide_row.extend(std::iter::repeat_n(b",7".as_slice(), 1_000_000).flatten());
    wide_row.push(b'\n');
    let mut wide_header: Vec<u8> = (0..1_000_000)
        .map(|i| format!("l{i}"))
        .collect::<Vec<_>>()
        .join(",")
        .into_bytes();
    wide_header.push(b'\n');
    wide_header.extend(
        (0..1_000_000)
            .map(|i| format!("c{i}"))
            .collect::<Vec<_>>()
            .join(",")
            .into_bytes(),
    );
    wide_header.push(b'\n');
    let mut stray_columns = b"group_id,region,size".to_vec();
    for i in 0..1_000_000 {
        stray_columns.extend(format!(",x{i}").bytes());
    }
    stray_columns.extend(b"\ng1,a1,1\n");
    let mut long_field = b"group_id,region,size\ng1,".to_vec();
    long_field.extend(std::iter::repeat_n(b'a', 5000));
    long_field.extend(b",1\n");
    let cases = [
        (
            generated(
                root.path(),
                "stray-columns",
                &[
                    ("hierarchy.csv", hierarchy.clone()),
                    ("groups.csv", stray_columns),
                ],
            ),
            Bad {
                case: "stray-columns",
                fails: ALL,
                file: "groups.csv",
                line: Some(1),
                says: "and 999996 more problem(s) (1000003 columns in all)",
            },
        ),
        (
            generated(
                root.path(),
                "long-field",
                &[
                    ("hierarchy.csv", hierarchy.clone()),
                    ("groups.csv", long_field),
                ],
            ),
            Bad {
                case: "long-field",
                fails: ALL,
                file: "groups.csv",
                line: Some(2),
                says: "a field of 5000 bytes: expected at most 1024 bytes",
            },
        ),
        (
            generated(
                root.path(),
                "wide-row",
                &[("hierarchy.csv", hierarchy), ("groups.csv", wide_row)],
            ),
            Bad {
                case: "wide-row",
                fails: ALL,
                file: "groups.csv",
                line: Some(3),
                says: "row has 1000001 fields: expected 3 (group_id,region,size)",
            },
        ),
        (
            generated(
                root.path(),
                "wide-header",
                &[
                    ("hierarchy.csv", wide_header),
                    ("groups.csv", b"group_id,region,size\n".to_vec()),
                ],
            ),
            Bad {
                case: "wide-header",
                fails: ALL,
                file: "hierarchy.csv",
                line: Some(1),
                says: "the header names 1000000 levels: expected at most 100",
            },
        ),
    ];
    let mut failures = Vec::new();
    for (dir, case) in &cases {
        for &cmd in ALL {
            let run_root = tempfile::tempdir().unwrap();
            let home = home_for(case.case, run_root.path());
            let out = run_root.path().join("out");
            let output = run(cmd, dir, &fixtures().join("valid-plan.toml"), &home, &out);
            // One readable line, not the whole header (it was 29 MB).
            if output.stderr.len() > 600 {
                failures.push(format!(
                    "{} {cmd:?}: {} bytes on standard error",
                    case.case,
                    output.stderr.len()
                ));
            }
            failures.extend(check_failure(case, cmd, &output, run_root.path(), &home));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn an_existing_output_directory_is_left_alone() {
    let root = tempfile::tempdir().unwrap();
    let home = home_for("none", root.path());
    let out = root.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep.txt"), "an earlier release").unwrap();
    let output = run(
        Cmd::Release,
        &fixtures().join("valid-dataset"),
        &fixtures().join("valid-plan.toml"),
        &home,
        &out,
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with("error: ")
            && lines[0].contains(
                "already exists and is not an empty directory: choose a new output directory"
            ),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("keep.txt")).unwrap(),
        "an earlier release"
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
    assert_eq!(ledger_draws(&home), 0);
    assert!(stray_temporaries(root.path()).is_empty());
}

#[test]
fn a_refusal_after_a_private_k_is_recorded() {
    // K is estimated privately (about 10^8), then the plan cannot fit in memory: the
    // refusal depends on K, so K's budget is spent and the release records it.
    let case = "estimated-k-too-large";
    let root = tempfile::tempdir().unwrap();
    let home = home_for(case, root.path());
    let out = root.path().join("out");
    for cmd in [Cmd::Preview, Cmd::Release] {
        let output = run(cmd, &dataset_of(case), &plan_of(case), &home, &out);
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{cmd:?}: {stderr}");
        assert!(
            lines[0].starts_with("error: not enough memory: this plan needs about")
                && lines[0].contains("(COCO_MEMORY_LIMIT); no region was measured. To fit, set max_size to a fixed bound (K), ")
                && lines[0].contains(" or free memory")
                && lines[0].contains("; K was estimated privately first, so its ε = 1 is spent"),
            "{cmd:?}: {stderr}"
        );
        assert!(!out.exists() && stray_temporaries(root.path()).is_empty());
    }
    // Only the release is accounted (previews are confidential diagnostics, not releases).
    let read = coco::release::ledger::Ledger::at(&home)
        .read_strict()
        .unwrap();
    assert_eq!(read.lines.len(), 1, "{:?}", read.lines);
    let e = &read.lines[0];
    let one = coco::privacy::Epsilon::from_ratio(1, 1).unwrap();
    assert_eq!(e.total.as_pure(), Some(&one));
    assert_eq!(e.max_size.as_ref().and_then(|m| m.as_pure()), Some(&one));
    assert_eq!(e.status, coco::release::ledger::Status::NotWritten);
    assert!(e.levels.is_empty());
    assert!(
        e.note
            .as_deref()
            .unwrap()
            .starts_with("refused after K was estimated: not enough memory"),
        "{:?}",
        e.note
    );
}

/// One valid case and what `inspect --json` must report for it.
struct Valid {
    case: &'static str,
    levels: usize,
    leaves: u64,
    groups: u64,
    max_size: u64,
}

/// Inputs the loader accepts (see the README beside the fixtures).
#[rustfmt::skip]
const VALID: &[Valid] = &[
    Valid { case: "bom", levels: 3, leaves: 3, groups: 5, max_size: 4 },
    Valid { case: "crlf", levels: 3, leaves: 3, groups: 5, max_size: 4 },
    Valid { case: "quoted-fields", levels: 3, leaves: 3, groups: 5, max_size: 4 },
    Valid { case: "trailing-empty-lines", levels: 3, leaves: 3, groups: 5, max_size: 4 },
    Valid { case: "sizes-near-u32-max", levels: 3, leaves: 3, groups: 3, max_size: 4_294_967_295 },
    Valid { case: "twenty-levels", levels: 20, leaves: 2, groups: 2, max_size: 2 },
    Valid { case: "case-differing-codes", levels: 3, leaves: 2, groups: 3, max_size: 3 },
    // A 1,000-byte level name: the table's file name is cut to fit the file system.
    Valid { case: "long-level-name", levels: 3, leaves: 3, groups: 5, max_size: 4 },
];

#[test]
fn valid_cases_load_preview_and_release() {
    let mut failures = Vec::new();
    for v in VALID {
        let dir = fixtures().join(v.case);
        let root = tempfile::tempdir().unwrap();
        let home = home_for(v.case, root.path());
        let inspect = Command::new(COCO)
            .args(["inspect", "--json"])
            .arg(&dir)
            .output()
            .unwrap();
        if !inspect.status.success() {
            failures.push(format!(
                "{}: inspect failed: {}",
                v.case,
                String::from_utf8_lossy(&inspect.stderr)
            ));
            continue;
        }
        let summary: serde_json::Value = serde_json::from_slice(&inspect.stdout).unwrap();
        let levels = summary["levels"].as_array().unwrap();
        let got = (
            levels.len(),
            levels.last().unwrap()["nodes"].as_u64().unwrap(),
            levels[0]["groups"].as_u64().unwrap(),
            levels[0]["max_size"].as_u64().unwrap(),
        );
        if got != (v.levels, v.leaves, v.groups, v.max_size) {
            failures.push(format!("{}: inspect reports {got:?}", v.case));
        }
        // A plan for the case's own levels, written by the binary.
        let plan = root.path().join("plan.toml");
        let made = Command::new(COCO)
            .arg("plan")
            .arg(&dir)
            .args(["--total", "1", "--max-size", "20", "--out"])
            .arg(&plan)
            .output()
            .unwrap();
        assert!(made.status.success(), "{}: {made:?}", v.case);
        let out = root.path().join("out");
        for cmd in [Cmd::Preview, Cmd::Release] {
            let output = run(cmd, &dir, &plan, &home, &out);
            if !output.status.success() {
                failures.push(format!(
                    "{} / {cmd:?}: failed: {}",
                    v.case,
                    String::from_utf8_lossy(&output.stderr)
                ));
            }
        }
        if !out.join("manifest.json").exists() || ledger_draws(&home) != 1 {
            failures.push(format!("{}: no release or no ledger line", v.case));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// A message that lists what a file holds (here a plan error naming the hierarchy's
/// 100 levels of 1,000 bytes each) is cut to one readable line.
#[test]
fn an_error_listing_long_names_is_cut() {
    let root = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..100)
        .map(|i| format!("{i:03}{}", "l".repeat(997)))
        .collect();
    let mut hierarchy = names.join(",").into_bytes();
    hierarchy.push(b'\n');
    hierarchy.extend(
        (0..100)
            .map(|i| format!("c{i}"))
            .collect::<Vec<_>>()
            .join(",")
            .bytes(),
    );
    hierarchy.push(b'\n');
    let dir = generated(
        root.path(),
        "long-levels",
        &[
            ("hierarchy.csv", hierarchy),
            ("groups.csv", b"group_id,region,size\ng1,c99,1\n".to_vec()),
            (
                "plan.toml",
                b"max_size = 10\n[[level]]\nname = \"nation\"\nepsilon = 1.0\nmethod = \"hc\"\n"
                    .to_vec(),
            ),
        ],
    );
    for cmd in [Cmd::Preview, Cmd::Release] {
        let home = root.path().join("home");
        let output = run(
            cmd,
            &dir,
            &dir.join("plan.toml"),
            &home,
            &root.path().join("out"),
        );
        assert_eq!(output.status.code(), Some(3), "{cmd:?}");
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(err.len() < 1_100, "{cmd:?}: {} bytes", err.len());
        assert!(
            err.contains("is not in the hierarchy") && err.contains("bytes cut)"),
            "{err}"
        );
    }
}
