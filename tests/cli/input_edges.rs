//! Issue 32 (a third privacy audit, part 1) through the real binary: invisible
//! characters and look-alike labels, the plan file's header, proxies near the data,
//! first-level parts and their neighbours. Each test failed on the code before the
//! fix. (The TUI's timings file is tested in `tests/tui/tui_tmux.rs`.)

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common;
use common::cli::{coco, copy_sample, s, sample, text};

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", text(o));
}

fn refused(o: &Output, code: i32, says: &str) {
    assert_eq!(o.status.code(), Some(code), "{}", text(o));
    assert!(text(o).contains(says), "expected {says:?} in: {}", text(o));
}

fn fixture(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bad")
        .join(case)
}

/// Item 5: each of the six invisible code points the audit found passing is refused
/// at load, naming file:line:column and the code point.
#[test]
fn invisible_characters_are_refused_at_load() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    for (case, at, code_point) in [
        ("invisible-hangul-filler", "names.csv:3:2", "U+3164"),
        ("invisible-choseong-filler", "hierarchy.csv:3:3", "U+115F"),
        (
            "invisible-variation-selector",
            "hierarchy.csv:4:2",
            "U+FE0F",
        ),
        ("invisible-grapheme-joiner", "hierarchy.csv:1:2", "U+034F"),
        ("invisible-khmer-vowel", "names.csv:2:2", "U+17B4"),
        ("invisible-braille-blank", "names.csv:3:2", "U+2800"),
    ] {
        let o = coco(&["inspect", &s(&fixture(case))], &home);
        refused(&o, 3, &format!("{case}/{at}: "));
        refused(
            &o,
            3,
            &format!("holds an invisible character ({code_point} "),
        );
        assert!(o.stdout.is_empty(), "{case}: {}", text(&o));
    }
    // The issue's own case: "Ostwick" + U+3164 beside "Ostwick".
    let data = copy_sample(&tmp.path().join("filler"));
    let names = std::fs::read_to_string(data.join("names.csv")).unwrap();
    std::fs::write(
        data.join("names.csv"),
        names.replacen("ARV/01/0102,Harl", "ARV/01/0102,Ostwick\u{3164}", 1),
    )
    .unwrap();
    let o = coco(&["inspect", &s(&data)], &home);
    refused(&o, 3, "filler/names.csv:5:2: name \"Ostwick\\u{3164}\"");
    assert!(!text(&o).contains('\u{3164}'), "{}", text(&o));
}

/// Item 5: two names of one parent that look the same once normalised are warned of
/// by `coco inspect` and `coco release` (the load goes on).
#[test]
fn look_alike_names_are_warned_of() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = copy_sample(&tmp.path().join("alike"));
    let names = std::fs::read_to_string(data.join("names.csv")).unwrap();
    // Upper case, and full-width letters: both read as "Ostwick".
    std::fs::write(
        data.join("names.csv"),
        names
            .replacen("ARV/01/0102,Harl", "ARV/01/0102,OSTWICK", 1)
            .replacen(
                "ARV/01/0103,Kettlemoor",
                "ARV/01/0103,\u{ff2f}\u{ff53}\u{ff54}\u{ff57}\u{ff49}\u{ff43}\u{ff4b}",
                1,
            ),
    )
    .unwrap();
    let o = coco(&["inspect", &s(&data)], &home);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.contains(
            "names \"Ostwick\" (ARV/01/0101, names.csv:4) and \"OSTWICK\" (ARV/01/0102, names.csv:5) under ARV/01 (they differ at character 2: U+0073 against U+0053)"
        ),
        "{err}"
    );
    assert!(
        err.contains("and \"\u{ff2f}\u{ff53}\u{ff54}\u{ff57}\u{ff49}\u{ff43}\u{ff4b}\" (ARV/01/0103, names.csv:6)"),
        "{err}"
    );
    assert_eq!(err.matches("warning: ").count(), 1, "{err}");
    // Codes too: a district code differing by case from its sibling's.
    let codes = copy_sample(&tmp.path().join("codes"));
    for (f, pattern) in [
        ("hierarchy.csv", "ARV,01,{}"),
        ("groups.csv", ",{},"),
        ("names.csv", "ARV/01/{},"),
    ] {
        let mut t = std::fs::read_to_string(codes.join(f)).unwrap();
        for (from, to) in [("0102", "01O2"), ("0103", "01o2")] {
            t = t.replace(&pattern.replace("{}", from), &pattern.replace("{}", to));
        }
        std::fs::write(codes.join(f), t).unwrap();
    }
    let o = coco(&["inspect", &s(&codes)], &home);
    ok(&o);
    assert!(
        text(&o).contains("codes \"01O2\" (ARV/01/01O2) and \"01o2\" (ARV/01/01o2) under ARV/01"),
        "{}",
        text(&o)
    );
    // The release says it too, and is written.
    let plan = tmp.path().join("plan.toml");
    ok(&coco(&["plan", &s(&data), "--out", &s(&plan)], &home));
    let out = tmp.path().join("r");
    let o = coco(
        &[
            "release",
            &s(&data),
            "--config",
            &s(&plan),
            "--out",
            &s(&out),
            "--replicates",
            "2",
        ],
        &home,
    );
    ok(&o);
    assert!(
        text(&o).contains("warning: labels of one parent's regions read alike"),
        "{}",
        text(&o)
    );
    // The sample itself reads clearly.
    let o = coco(&["inspect", &s(&sample())], &home);
    ok(&o);
    assert!(o.stderr.is_empty(), "{}", text(&o));
}
