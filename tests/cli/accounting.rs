//! Privacy accounting that fails closed, through the real binary: each of the problems
//! an auditor reproduced against coco 0.1 (exact totals, a corrupted ledger, spending
//! keyed by bytes, the first cap winning, "written" for releases that do not exist, a
//! panic on non-ASCII text, one exit code for everything, world-readable files) has a
//! test here that failed before and passes now.

use std::path::{Path, PathBuf};

use coco::release::ledger::{Ledger, Status};

use crate::common;
use common::cli::{coco, copy_sample, plan_hc as plan, release_quick as release, s, sample, text};

fn set_cap(key: &str, eps: &str, home: &Path) {
    let o = coco(&["ledger", "set-cap", key, eps], home);
    assert!(o.status.success(), "{}", text(&o));
}

/// The flag of older versions still works, with a note pointing to the subcommand.
#[test]
fn the_old_set_cap_flag_still_works_with_a_note() {
    let home = tempfile::tempdir().unwrap();
    let digest = "ab".repeat(32);
    let o = coco(&["ledger", "--set-cap", &digest, "1/2"], home.path());
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("deprecated") && err.contains("coco ledger set-cap"),
        "{err}"
    );
    let config = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
    assert!(config.contains(&format!("{digest} = \"0.5\"")), "{config}");
    // A value that is not an ε is a bad command line (exit code 2), named.
    let o = coco(&["ledger", "set-cap", &digest, "x"], home.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("ε \"x\" is not a number"), "{}", text(&o));
    let o = coco(&["ledger", "--set-cap", &digest, "x"], home.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("--set-cap {digest} x")),
        "{}",
        text(&o)
    );
}

/// Problem 1: totals beyond what an operator may type (18 significant digits, or
/// fractions of large terms) were dropped by the cap check and `coco ledger` (ε = 0).
#[test]
fn long_exact_totals_are_counted_against_the_cap() {
    // Each total is just under the cap: one release fits, a second does not.
    for (budgets, cap) in [
        ("0.30000000000000004,0.5,0.2", "1.5"),
        ("1/3,1/7,0.12345678901234567", "1"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let data = sample();
        let p = plan(tmp.path(), &data, budgets, &home);
        set_cap(&s(&data), cap, &home);
        let first = release(&data, &p, &tmp.path().join("r1"), &home);
        assert!(first.status.success(), "{}", text(&first));
        let second = release(&data, &p, &tmp.path().join("r2"), &home);
        assert_eq!(second.status.code(), Some(4), "{}", text(&second));
        assert!(text(&second).contains("cap for this dataset would be exceeded"));
        assert!(!tmp.path().join("r2").exists());
        let ledger = coco(&["ledger", "--json"], &home);
        assert!(ledger.status.success());
        let v: serde_json::Value = serde_json::from_slice(&ledger.stdout).unwrap();
        let spent = v["datasets"][0]["spent"].as_str().unwrap();
        assert_ne!(spent, "0", "{v}");
        let expected = budgets
            .split(',')
            .map(|b| coco::privacy::Epsilon::parse(b).unwrap())
            .reduce(|a, b| a.add(&b))
            .unwrap();
        assert_eq!(spent, expected.to_string());
    }
}

/// Problem 2: a corrupted ledger (an unreadable line, a stray byte, an edited ε) stops
/// every draw, naming the line; `coco ledger verify` lists it.
#[test]
fn a_corrupted_ledger_stops_every_draw() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = sample();
    let p = plan(tmp.path(), &data, "1/3,1/3,1/3", &home);
    for i in 0..2 {
        let o = release(&data, &p, &tmp.path().join(format!("r{i}")), &home);
        assert!(o.status.success(), "{}", text(&o));
    }
    let ledger_path = home.join("ledger.jsonl");
    let good = std::fs::read_to_string(&ledger_path).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    assert_eq!(lines.len(), 4, "pending and written for each draw");
    let edited_total = good.replacen(
        r#""total_epsilon":{"num":"1","den":"1"}"#,
        r#""total_epsilon":{"num":"1","den":"1000"}"#,
        1,
    );
    assert_ne!(edited_total, good);
    let mut not_utf8 = good.clone().into_bytes();
    not_utf8.extend_from_slice(b"{\"v\":2,\xff}\n");
    let cases: [(&str, Vec<u8>, usize); 4] = [
        (
            "a stray byte",
            format!("{}\nx\n{}\n", lines[0], lines[1..].join("\n")).into_bytes(),
            2,
        ),
        ("an edited ε", edited_total.into_bytes(), 2),
        (
            "a line removed",
            format!("{}\n{}\n", lines[0], lines[2..].join("\n")).into_bytes(),
            2,
        ),
        ("a line that is not UTF-8", not_utf8, 5),
    ];
    for (what, content, line) in cases {
        std::fs::write(&ledger_path, &content).unwrap();
        let out = tmp.path().join("refused");
        let o = release(&data, &p, &out, &home);
        assert_eq!(o.status.code(), Some(4), "{what}: {}", text(&o));
        let t = text(&o);
        assert!(
            t.contains(&format!("ledger.jsonl:{line}:")) && t.contains("no draw is allowed"),
            "{what}: {t}"
        );
        assert!(!out.exists());
        assert_eq!(std::fs::read(&ledger_path).unwrap(), content);
        let v = coco(&["ledger", "verify"], &home);
        assert_eq!(v.status.code(), Some(4), "{what}");
        assert!(
            text(&v).contains(&format!("line {line}:")),
            "{what}: {}",
            text(&v)
        );
        // Only a torn tail is repaired.
        let r = coco(&["ledger", "repair"], &home);
        assert_eq!(r.status.code(), Some(4), "{what}: {}", text(&r));
        assert!(text(&r).contains("not repaired"));
    }
    std::fs::write(&ledger_path, &good).unwrap();
    assert!(coco(&["ledger", "verify"], &home).status.success());
}

/// Problem 3: spending was keyed by the bytes of the input files: renaming a region,
/// a blank line, reordered rows or another groups form gave a fresh dataset.
#[test]
fn spending_is_keyed_by_content_not_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let original = copy_sample(&tmp.path().join("original"));
    let p = plan(tmp.path(), &original, "1/3,1/3,1/3", &home);
    // A default cap of 1.5: one release of ε = 1 fits, two do not, whatever the bytes.
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), "default_cap = 1.5\n").unwrap();
    let o = release(&original, &p, &tmp.path().join("r0"), &home);
    assert!(o.status.success(), "{}", text(&o));

    let renamed = copy_sample(&tmp.path().join("renamed"));
    let names = std::fs::read_to_string(renamed.join("names.csv")).unwrap();
    std::fs::write(
        renamed.join("names.csv"),
        names.replace("Northmere", "Nordmark"),
    )
    .unwrap();
    let blank = copy_sample(&tmp.path().join("blank"));
    let mut groups = std::fs::read_to_string(blank.join("groups.csv")).unwrap();
    groups.push('\n');
    std::fs::write(blank.join("groups.csv"), &groups).unwrap();
    let reordered = copy_sample(&tmp.path().join("reordered"));
    let groups = std::fs::read_to_string(reordered.join("groups.csv")).unwrap();
    let mut rows: Vec<&str> = groups.lines().collect();
    rows[1..].reverse();
    std::fs::write(reordered.join("groups.csv"), rows.join("\n") + "\n").unwrap();
    // The same data as histograms.
    let converted = copy_sample(&tmp.path().join("converted"));
    let mut counts = std::collections::BTreeMap::<(String, String), u64>::new();
    for row in groups.lines().skip(1) {
        let f: Vec<&str> = row.split(',').collect();
        *counts
            .entry((f[1].to_string(), f[2].to_string()))
            .or_default() += 1;
    }
    std::fs::remove_file(converted.join("groups.csv")).unwrap();
    let mut hist = String::from("region,size,count\n");
    for ((region, size), count) in counts {
        hist.push_str(&format!("{region},{size},{count}\n"));
    }
    std::fs::write(converted.join("histograms.csv"), hist).unwrap();

    for (name, dir) in [
        ("renamed", &renamed),
        ("blank line", &blank),
        ("reordered", &reordered),
        ("converted", &converted),
    ] {
        let out = tmp.path().join(format!("out-{}", name.replace(' ', "-")));
        let o = release(dir, &p, &out, &home);
        assert_eq!(o.status.code(), Some(4), "{name}: {}", text(&o));
        assert!(
            text(&o).contains("1 already spent in 1 draw(s)"),
            "{name}: {}",
            text(&o)
        );
        assert!(!out.exists());
    }
    // Other data is another dataset: three entities more in one household (one more
    // would be a neighbour, which the population key charges; see tests/trust.rs).
    let other = copy_sample(&tmp.path().join("other"));
    let groups = std::fs::read_to_string(other.join("groups.csv")).unwrap();
    std::fs::write(
        other.join("groups.csv"),
        groups.replacen("H000001,0101,4", "H000001,0101,7", 1),
    )
    .unwrap();
    let o = release(&other, &p, &tmp.path().join("out-other"), &home);
    assert!(o.status.success(), "{}", text(&o));
}

/// Problem 4: the first matching cap won; now every matching cap applies and the
/// strictest binds, and `coco ledger` says which.
#[test]
fn the_strictest_matching_cap_binds() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = copy_sample(&tmp.path().join("data"));
    let p = plan(tmp.path(), &data, "1/3,1/3,1/3", &home);
    let o = release(&data, &p, &tmp.path().join("r0"), &home);
    assert!(o.status.success());
    let ledger = coco(&["ledger", "--json"], &home);
    let v: serde_json::Value = serde_json::from_slice(&ledger.stdout).unwrap();
    let content = v["datasets"][0]["dataset"].as_str().unwrap().to_string();
    assert_eq!(content.len(), 64);
    // A content cap of 4 set first, a directory cap of 1.5 later.
    set_cap(&content, "4", &home);
    set_cap(&s(&data), "1.5", &home);
    let o = release(&data, &p, &tmp.path().join("r1"), &home);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(
        text(&o).contains("> cap 1.5 (the cap on directory"),
        "{}",
        text(&o)
    );
    let shown = coco(&["ledger"], &home);
    assert!(
        text(&shown).contains("of cap 1.5 (the cap on directory"),
        "{}",
        text(&shown)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&coco(&["ledger", "--json"], &home).stdout).unwrap();
    assert_eq!(v["datasets"][0]["caps"].as_array().unwrap().len(), 2);
    assert_eq!(v["datasets"][0]["cap"]["source"]["kind"], "directory");
}

/// Problem 5: "written" was recorded before the rename, which failed for a symbolic
/// link, a dangling one or `.`; now such paths are refused before anything is drawn.
#[test]
fn output_paths_are_checked_before_drawing() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = sample();
    let p = plan(tmp.path(), &data, "1/3,1/3,1/3", &home);
    let target = tmp.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let dangling = tmp.path().join("dangling");
    std::os::unix::fs::symlink(tmp.path().join("nowhere"), &dangling).unwrap();
    let long = tmp.path().join("x".repeat(240));
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    for (out, expected) in [
        (link.clone(), "is a symbolic link"),
        (dangling.clone(), "is a symbolic link"),
        (PathBuf::from("."), "names no directory of its own"),
        (tmp.path().join(".."), "names no directory of its own"),
        (long.clone(), "bytes long"),
        (file.join("out"), "not a directory"),
        (file.clone(), "already exists"),
    ] {
        let o = release(&data, &p, &out, &home);
        assert_eq!(o.status.code(), Some(3), "{out:?}: {}", text(&o));
        assert!(text(&o).contains(expected), "{out:?}: {}", text(&o));
    }
    assert!(
        !home.join("ledger.jsonl").exists(),
        "nothing was drawn or recorded"
    );
    assert!(std::fs::read_dir(&target).unwrap().next().is_none());
    // A good path: "written" only once the release exists.
    let out = tmp.path().join("good");
    let o = release(&data, &p, &out, &home);
    assert!(o.status.success(), "{}", text(&o));
    let read = Ledger::at(&home).read_strict().unwrap();
    let statuses: Vec<Status> = read.lines.iter().map(|e| e.status).collect();
    assert_eq!(statuses, vec![Status::Pending, Status::Written]);
    assert!(out.join("manifest.json").exists());
}

/// Problem 6: `coco ledger` sliced the dataset key by bytes and panicked on non-ASCII
/// text. Now an old-format line with such a key is a defect, reported, not a panic.
#[test]
fn non_ascii_text_in_the_ledger_is_reported_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let line = r#"{"id":"0123456789abcdef","time":"2026-11-22T01:02:03Z","dataset":"éééééééééééé","dataset_dir":"/d/ö","levels":[],"total_epsilon":"1","output":null,"written":true,"randomness":"os","tool":"release"}"#;
    std::fs::write(home.join("ledger.jsonl"), format!("{line}\n")).unwrap();
    let o = coco(&["ledger"], &home);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(
        text(&o).contains("ledger.jsonl:1: not a ledger entry")
            || text(&o).contains("ledger.jsonl:1: dataset"),
        "{}",
        text(&o)
    );
    // Non-ASCII directories in good lines are shown.
    let data = copy_sample(&tmp.path().join("données-é"));
    std::fs::remove_file(home.join("ledger.jsonl")).unwrap();
    let p = plan(tmp.path(), &data, "1/3,1/3,1/3", &home);
    assert!(
        release(&data, &p, &tmp.path().join("sortie"), &home)
            .status
            .success()
    );
    let o = coco(&["ledger"], &home);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("données-é"));
}

/// Problem 9: distinct exit codes, `coco release --json`, private files.
#[test]
fn exit_codes_json_and_private_files() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = sample();
    let p = plan(tmp.path(), &data, "1/3,1/3,1/3", &home);
    // Usage.
    assert_eq!(coco(&["release"], &home).status.code(), Some(2));
    // Input: a missing dataset, a bad plan.
    let o = release(
        &tmp.path().join("missing"),
        &p,
        &tmp.path().join("o"),
        &home,
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let bad = tmp.path().join("bad.toml");
    std::fs::write(&bad, "max_size = 0\n").unwrap();
    assert_eq!(
        release(&data, &bad, &tmp.path().join("o"), &home)
            .status
            .code(),
        Some(3)
    );
    // A seeded release without --not-private: refused by policy.
    let o = coco(
        &[
            "release",
            &s(&data),
            "--config",
            &s(&p),
            "--out",
            &s(&tmp.path().join("seeded")),
            "--seed",
            "1",
        ],
        &home,
    );
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(text(&o).contains("not be private"));
    // Success, as JSON.
    let out = tmp.path().join("r");
    let o = coco(
        &[
            "release",
            &s(&data),
            "--config",
            &s(&p),
            "--out",
            &s(&out),
            "--json",
            "--replicates",
            "2",
        ],
        &home,
    );
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["total_epsilon"]["exact"], "1");
    assert_eq!(v["total_epsilon"]["decimal"], 1.0);
    assert_eq!(v["ledger_status"], "written");
    assert_eq!(v["checks"]["consistent"], true);
    assert_eq!(v["ledger_id"].as_str().unwrap().len(), 16);
    assert_eq!(
        v["output"].as_str().unwrap(),
        std::path::absolute(&out).unwrap().display().to_string()
    );
    // Policy: over the cap, as JSON too.
    set_cap(&s(&data), "1.5", &home);
    let o = coco(
        &[
            "release",
            &s(&data),
            "--config",
            &s(&p),
            "--out",
            &s(&tmp.path().join("r2")),
            "--json",
        ],
        &home,
    );
    assert_eq!(o.status.code(), Some(4));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["exit_code"], 4);
    assert!(v["error"].as_str().unwrap().contains("cap"));
    // Resources: a plan that cannot fit in the memory coco may use (each region measured
    // at once holds 10^8 + 1 noisy cells, 3.2 GB with the fit's scratch; 1 GB allowed).
    let huge = tmp.path().join("huge.toml");
    std::fs::write(
        &huge,
        std::fs::read_to_string(&p)
            .unwrap()
            .replace("max_size = 10000", "max_size = 100000000"),
    )
    .unwrap();
    let home2 = tmp.path().join("home2");
    let o = std::process::Command::new(common::cli::COCO)
        .args(["release", &s(&data), "--config", &s(&huge), "--out"])
        .arg(tmp.path().join("r3"))
        .env("COCO_HOME", &home2)
        .env("COCO_MEMORY_LIMIT", "1G")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", text(&o));
    assert!(text(&o).contains("(COCO_MEMORY_LIMIT)"), "{}", text(&o));
    // Files readable by their owner only.
    use std::os::unix::fs::PermissionsExt;
    for name in ["ledger.jsonl", "ledger.lock", "config.toml"] {
        let mode = std::fs::metadata(home.join(name))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{name}");
    }
    // The exit codes are documented in --help.
    let help = coco(&["--help"], &home);
    assert!(text(&help).contains("4  refused by policy"));
}
