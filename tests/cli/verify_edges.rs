//! Edges of the data contract found by a third privacy audit (issue 32), through the
//! real binary as an adversarial operator would try them:
//!
//! - `coco release --out MISSING/x` is refused before anything is drawn or recorded.

use std::path::{Path, PathBuf};

use crate::common;
use common::cli::{coco, s, sample, text};

/// coco's default plan for the sample: `hc` with `auto` tails at every level.
fn default_plan(tmp: &Path, home: &Path) -> PathBuf {
    let path = tmp.join("plan.toml");
    let o = coco(&["plan", &s(&sample()), "--out", &s(&path)], home);
    assert!(o.status.success(), "{}", text(&o));
    path
}

/// Problem 9: `coco release --out MISSING/x` created the missing directories, wrote the
/// release and spent ε, while the data contract refuses a parent that is not a writable
/// directory. It is refused now (exit 3, naming the path and what was expected) before
/// anything is drawn or recorded, and nothing is created; so is a parent that is a file.
#[test]
fn a_release_under_a_missing_parent_is_refused_before_any_draw() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let plan = default_plan(tmp.path(), &home);
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    for (out, says) in [
        (tmp.path().join("missing/deeper/x"), "does not exist"),
        (file.join("x"), "not a directory"),
    ] {
        let o = coco(
            &[
                "release",
                &s(&sample()),
                "--config",
                &s(&plan),
                "--out",
                &s(&out),
                "--replicates",
                "2",
            ],
            &home,
        );
        assert_eq!(o.status.code(), Some(3), "{}", text(&o));
        let t = text(&o);
        assert!(t.contains(&s(&out)), "{t}");
        assert!(t.contains(says), "{t}");
        assert!(!out.exists());
    }
    assert!(!tmp.path().join("missing").exists());
    // No draw was recorded: the ledger holds no line.
    let ledger = home.join("ledger.jsonl");
    let lines = std::fs::read_to_string(&ledger).unwrap_or_default();
    assert_eq!(lines.lines().count(), 0, "{lines}");
    // An existing parent still takes a new release directory.
    let o = coco(
        &[
            "release",
            &s(&sample()),
            "--config",
            &s(&plan),
            "--out",
            &s(&tmp.path().join("fine")),
            "--replicates",
            "2",
        ],
        &home,
    );
    assert!(o.status.success(), "{}", text(&o));
}
