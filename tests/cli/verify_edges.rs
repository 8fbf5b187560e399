//! Edges of the data contract found by a third privacy audit (issue 32), through the
//! real binary as an adversarial operator would try them:
//!
//! - `coco release --out MISSING/x` is refused before anything is drawn or recorded;
//! - `coco preview --coverage` labels its figures as the confidential data's or as the
//!   public proxy's, in text and in JSON.

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

/// Problem 10a: `coco preview --proxy synthetic --coverage` called the proxy's coverage
/// CONFIDENTIAL. Every label says what the figures were measured on: the public proxy's
/// are labelled PUBLIC PROXY and never CONFIDENTIAL, the confidential data's
/// CONFIDENTIAL and never PUBLIC PROXY, in text and in JSON.
#[test]
fn preview_labels_say_what_the_figures_were_measured_on() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = s(&sample());
    let preview = |extra: &[&str]| {
        let mut args = vec![
            "preview",
            data.as_str(),
            "--coverage",
            "--trials",
            "2",
            "--seed",
            "1",
        ];
        args.extend_from_slice(extra);
        let o = coco(&args, &home);
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8(o.stdout).unwrap()
    };

    let proxy = preview(&["--proxy", "synthetic"]);
    assert!(proxy.starts_with("PUBLIC PROXY: "), "{proxy}");
    assert!(!proxy.contains("CONFIDENTIAL"), "{proxy}");
    assert!(
        proxy.contains("earth mover's distance to the proxy's true counts"),
        "{proxy}"
    );
    assert!(
        proxy.contains("covered the proxy's true counts (")
            && proxy.contains("per trial; PUBLIC PROXY, not the confidential data): "),
        "{proxy}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&preview(&["--proxy", "synthetic", "--json"])).unwrap();
    assert!(
        json["notice"]
            .as_str()
            .unwrap()
            .starts_with("PUBLIC PROXY: ")
    );
    assert_eq!(json["data"]["kind"], "proxy");
    assert!(json["levels"][0]["coverage"].is_object(), "{json}");
    assert!(!json.to_string().contains("CONFIDENTIAL"), "{json}");

    let confidential = preview(&[]);
    assert!(confidential.starts_with("CONFIDENTIAL"), "{confidential}");
    assert!(!confidential.contains("PUBLIC PROXY"), "{confidential}");
    assert!(
        confidential.contains("earth mover's distance to the truth")
            && confidential.contains("covered the truth (")
            && confidential.contains("per trial; CONFIDENTIAL): "),
        "{confidential}"
    );
    let json: serde_json::Value = serde_json::from_str(&preview(&["--json"])).unwrap();
    assert!(json["notice"].as_str().unwrap().starts_with("CONFIDENTIAL"));
    assert_eq!(json["data"]["kind"], "confidential");
    assert!(json["levels"][0]["coverage"].is_object(), "{json}");
    assert!(!json.to_string().contains("PUBLIC PROXY"), "{json}");
}
