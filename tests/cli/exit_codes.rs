//! Every subcommand honours the documented exit-code table (`coco --help`, the data
//! contract): one case per code a subcommand can give, through the real binary. Every
//! bad flag value exits 2, whichever subcommand takes it
//! (`every_bad_flag_value_exits_2`); a bad file exits 3.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::cli::{COCO, coco, s, sample, text};

/// `coco ARGS` with `COCO_HOME=home` and one more environment variable.
fn coco_env(args: &[&str], home: &Path, var: (&str, &str)) -> Output {
    Command::new(COCO)
        .args(args)
        .env("COCO_HOME", home)
        .env(var.0, var.1)
        .output()
        .unwrap()
}

/// Asserts `o` exited with `code`, showing what it said otherwise.
fn exits(what: &str, o: &Output, code: i32) {
    assert_eq!(o.status.code(), Some(code), "{what}: {}", text(o));
}

/// The bundled sample's default plan, written into `dir`.
fn default_plan(dir: &Path, home: &Path) -> String {
    let plan = s(&dir.join("plan.toml"));
    let o = coco(&["plan", &s(&sample()), "--out", &plan], home);
    exits("coco plan", &o, 0);
    plan
}

#[test]
fn plan_exit_codes() {
    let home = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let data = s(&sample());
    exits("a plan", &coco(&["plan", &data], home.path()), 0);
    // 2: flags that do not go together, or a value the command line refuses.
    let o = coco(&["plan", &data, "--ratio", "2"], home.path());
    exits("--ratio without --allocation geometric", &o, 2);
    assert!(
        text(&o).contains("--ratio 2: goes with --allocation geometric"),
        "{}",
        text(&o)
    );
    exits("no directory", &coco(&["plan"], home.path()), 2);
    // 2 too: a value that cannot be used, named once and not called an ε when it is not.
    let o = coco(&["plan", &data, "--total", "-1"], home.path());
    exits("--total -1", &o, 2);
    assert!(
        text(&o).contains("--total"),
        "the flag is named: {}",
        text(&o)
    );
    let o = coco(
        &["plan", &data, "--allocation", "geometric", "--ratio", "0"],
        home.path(),
    );
    exits("--ratio 0", &o, 2);
    assert!(
        text(&o).contains("--ratio")
            && text(&o).contains("ratio \"0\" is not positive")
            && !text(&o).contains("ε \"0\""),
        "{}",
        text(&o)
    );
    let missing = s(&tmp.path().join("missing"));
    exits(
        "a missing dataset",
        &coco(&["plan", &missing], home.path()),
        3,
    );
    // 1: writing fails.
    let o = coco(
        &[
            "plan",
            &data,
            "--out",
            &s(&tmp.path().join("no/such/dir/plan.toml")),
        ],
        home.path(),
    );
    exits("an unwritable --out", &o, 1);
    // A plan that draws too many noise samples: written with a warning; previews and
    // releases refuse it (below).
    let o = coco_env(
        &["plan", &data, "--out", &s(&tmp.path().join("big.toml"))],
        home.path(),
        ("COCO_NOISE_SAMPLE_LIMIT", "1000"),
    );
    exits("a plan over the sample limit", &o, 0);
    assert!(
        text(&o).contains("noise samples, more than the 1,000 a run may draw"),
        "{}",
        text(&o)
    );
}

#[test]
fn preview_exit_codes() {
    let home = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let data = s(&sample());
    let o = coco(
        &["preview", &data, "--trials", "1", "--seed", "1"],
        home.path(),
    );
    exits("one trial", &o, 0);
    // One trial: a mean, never `± 0.00`.
    assert!(!text(&o).contains("± 0.00"), "{}", text(&o));
    let o = coco(
        &["preview", &data, "--trials", "2", "--seed", "1"],
        home.path(),
    );
    exits("two trials", &o, 0);
    assert!(text(&o).contains(" ± "), "{}", text(&o));
    let o = coco(&["preview", &data, "--trials", "0"], home.path());
    exits("--trials 0", &o, 2);
    assert!(
        text(&o).contains("expected at least 1 trial"),
        "{}",
        text(&o)
    );
    let missing = s(&tmp.path().join("missing"));
    exits(
        "a missing dataset",
        &coco(&["preview", &missing], home.path()),
        3,
    );
    // A missing proxy is named once.
    let o = coco(&["preview", &data, "--proxy", &missing], home.path());
    exits("a missing proxy", &o, 3);
    assert_eq!(
        text(&o).matches("directory not found").count(),
        1,
        "{}",
        text(&o)
    );
    let o = coco_env(
        &["preview", &data, "--trials", "1"],
        home.path(),
        ("COCO_NOISE_SAMPLE_LIMIT", "1000"),
    );
    exits("over the sample limit", &o, 5);
    assert!(text(&o).contains("too many noise samples"), "{}", text(&o));
}

#[test]
fn release_and_verify_exit_codes() {
    let home = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let data = s(&sample());
    let plan = default_plan(tmp.path(), home.path());
    let out = |name: &str| s(&tmp.path().join(name));
    let release = |name: &str, extra: &[&str]| {
        let out = out(name);
        let mut args = vec!["release", &data, "--config", &plan, "--out", &out];
        args.extend_from_slice(extra);
        coco(&args, home.path())
    };
    exits("a release", &release("r0", &[]), 0);
    exits(
        "no --out",
        &coco(&["release", &data, "--config", &plan], home.path()),
        2,
    );
    exits("an output that exists", &release("r0", &[]), 3);
    let o = release("r4", &["--replicates", "0"]);
    exits("no replicates", &o, 2);
    assert!(
        text(&o).contains("expected \"auto\" or a whole number from 1 to 10,000"),
        "{}",
        text(&o)
    );
    let o = release("r4", &["--uncertainty", "none", "--replicates", "5"]);
    exits("replicates without margins", &o, 2);
    assert!(text(&o).contains("--replicates"), "{}", text(&o));
    assert!(!tmp.path().join("r4").exists(), "nothing is written");
    exits(
        "seven replicates",
        &release("r5", &["--replicates", "7"]),
        0,
    );
    let manifest = std::fs::read_to_string(tmp.path().join("r5/manifest.json")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(manifest["uncertainty"]["replicates"], 7, "{manifest}");
    let bad_plan = tmp.path().join("bad.toml");
    std::fs::write(&bad_plan, "max_size = 0\n").unwrap();
    let o = coco(
        &[
            "release",
            &data,
            "--config",
            &s(&bad_plan),
            "--out",
            &out("r1"),
        ],
        home.path(),
    );
    exits("a bad plan", &o, 3);
    exits(
        "a seed without --not-private",
        &release("r2", &["--seed", "1"]),
        4,
    );
    let o = coco_env(
        &["release", &data, "--config", &plan, "--out", &out("r3")],
        home.path(),
        ("COCO_NOISE_SAMPLE_LIMIT", "1000"),
    );
    exits("over the sample limit", &o, 5);
    assert!(!tmp.path().join("r3").exists(), "nothing is written");
    // verify: 0 for what coco wrote, 6 for a changed table, 3 for no release at all.
    let o = coco(&["verify", &out("r0")], home.path());
    exits("verify", &o, 0);
    exits(
        "verify nothing",
        &coco(&["verify", &out("none")], home.path()),
        3,
    );
    let counts = tmp.path().join("r0/counts.csv");
    let mut text_of = std::fs::read_to_string(&counts).unwrap();
    text_of.push_str("country,X,1,1\n");
    std::fs::write(&counts, text_of).unwrap();
    exits(
        "verify a changed release",
        &coco(&["verify", &out("r0")], home.path()),
        6,
    );
    // Both formats written: verify says what it read back of each.
    let o = release("both", &["--format", "both"]);
    exits("a release in both formats", &o, 0);
    let o = coco(&["verify", &out("both"), "--dataset", &data], home.path());
    exits("verify both formats", &o, 0);
    for file in ["counts.csv against", "counts.parquet against"] {
        assert!(text(&o).contains(file), "verify names {file}: {}", text(&o));
    }
}

#[test]
fn inspect_gen_convert_and_ledger_exit_codes() {
    let home = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let data = s(&sample());
    let missing = s(&tmp.path().join("missing"));
    exits("inspect", &coco(&["inspect", &data], home.path()), 0);
    exits(
        "inspect nothing",
        &coco(&["inspect", &missing], home.path()),
        3,
    );
    exits(
        "inspect a bad flag",
        &coco(&["inspect", &data, "--nope"], home.path()),
        2,
    );
    // gen and convert refuse an existing directory alike: the path is input.
    let taken = tmp.path().join("taken");
    std::fs::create_dir_all(taken.join("something")).unwrap();
    let o = coco(&["gen", "sample", "--out", &s(&taken)], home.path());
    exits("gen into a full directory", &o, 3);
    let o = coco(&["convert", &data, "--out", &s(&taken)], home.path());
    exits("convert into a full directory", &o, 3);
    exits(
        "gen an unknown preset",
        &coco(&["gen", "nope", "--out", &missing], home.path()),
        2,
    );
    let o = coco(
        &["gen", "sample", "--out", &s(&tmp.path().join("g"))],
        home.path(),
    );
    exits("gen", &o, 0);
    let o = coco(
        &["convert", &data, "--out", &s(&tmp.path().join("c"))],
        home.path(),
    );
    exits("convert", &o, 0);
    exits("ledger", &coco(&["ledger"], home.path()), 0);
    let o = coco(&["ledger", "set-cap", "abc", "1"], home.path());
    exits("a cap on a key that can never bind", &o, 3);
    exits(
        "a ledger subcommand that does not exist",
        &coco(&["ledger", "nope"], home.path()),
        2,
    );
}

/// Every subcommand's flags that take a value refuse a bad one with exit code 2 and a
/// message naming the flag, before anything is read or drawn.
#[test]
fn every_bad_flag_value_exits_2() {
    let home = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let data = s(&sample());
    let plan = default_plan(tmp.path(), home.path());
    let out = s(&tmp.path().join("out"));
    let cases: &[(&[&str], &str)] = &[
        (&["plan", &data, "--total", "0"], "--total"),
        (&["plan", &data, "--total", "x"], "--total"),
        (
            &["plan", &data, "--allocation", "geometric", "--ratio", "-2"],
            "--ratio",
        ),
        (&["plan", &data, "--budgets", "0.5,0.5,0"], "--budgets"),
        (&["plan", &data, "--budgets", "0.5,0.5"], "--budgets"),
        (
            &["plan", &data, "--tail", "20", "--tail-groups", "0"],
            "--tail-groups",
        ),
        (&["plan", &data, "--tail", "20000"], "--tail"),
        (&["plan", &data, "--method", "hg", "--tail", "20"], "--tail"),
        (&["plan", &data, "--max-size", "0"], "--max-size"),
        (
            &["plan", &data, "--estimate-max-size", "0"],
            "--estimate-max-size",
        ),
        (&["preview", &data, "--trials", "0"], "--trials"),
        (&["preview", &data, "--seed", "x"], "--seed"),
        (&["preview", &data, "--sweep", "--shares", "1"], "--shares"),
        (&["preview", &data, "--sweep", "--shares", "0"], "--shares"),
        (
            &["preview", &data, "--sweep", "--weights", "1,-1,1"],
            "--weights",
        ),
        (
            &["preview", &data, "--sweep", "--weights", "1,1"],
            "--weights",
        ),
        (
            &["preview", &data, "--sweep", "--max-ratio", "0.5"],
            "--max-ratio",
        ),
        (
            &[
                "release",
                &data,
                "--config",
                &plan,
                "--out",
                &out,
                "--replicates",
                "0",
            ],
            "--replicates",
        ),
        (
            &[
                "release",
                &data,
                "--config",
                &plan,
                "--out",
                &out,
                "--uncertainty",
                "2",
            ],
            "--uncertainty",
        ),
        (
            &[
                "release", &data, "--config", &plan, "--out", &out, "--format", "xml",
            ],
            "--format",
        ),
        (
            &[
                "release", &data, "--config", &plan, "--out", &out, "--tuned", "maybe",
            ],
            "--tuned",
        ),
        (
            &["gen", "us-blocks", "--out", &out, "--scale", "0"],
            "--scale",
        ),
        (
            &["gen", "us-blocks", "--out", &out, "--scale", "2"],
            "--scale",
        ),
        (
            &["gen", "sample", "--out", &out, "--scale", "0.5"],
            "--scale",
        ),
        (&["ledger", "set-cap", &data, "0"], "EPSILON"),
        (&["ledger", "set-cap", &data, "-1"], "EPSILON"),
        (&["completions", "tcsh"], "tcsh"),
    ];
    for (args, flag) in cases {
        let o = coco(args, home.path());
        exits(&args.join(" "), &o, 2);
        assert!(text(&o).contains(flag), "{}: {}", args.join(" "), text(&o));
    }
    assert!(!tmp.path().join("out").exists(), "nothing was written");
    let ledger = std::fs::read_to_string(home.path().join("ledger.jsonl")).unwrap_or_default();
    assert!(ledger.is_empty(), "nothing was drawn: {ledger}");
}
