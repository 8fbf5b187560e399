//! `hc` with a tail, end to end through the binary: `coco plan --tail` writes it,
//! `coco release` measures with it and records it in the manifest, a saturated tail is
//! reported (on standard error, in the manifest and in the preview's notes), and on the
//! bundled sample the tail beats plain `hc` at the upper levels.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const COCO: &str = env!("CARGO_BIN_EXE_coco");

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households")
}

fn coco(args: &[&str], home: &Path) -> Output {
    let out = Command::new(COCO)
        .args(args)
        .env("COCO_HOME", home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "coco {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn plan(dir: &Path, name: &str, extra: &[&str], home: &Path) -> String {
    let path = dir.join(name).display().to_string();
    let sample = sample().display().to_string();
    let mut args = vec!["plan", sample.as_str(), "--out", path.as_str()];
    args.extend_from_slice(extra);
    coco(&args, home);
    path
}

#[test]
fn plan_release_and_manifest_carry_the_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let p = plan(tmp.path(), "tail.toml", &["--tail", "20"], &home);
    let text = std::fs::read_to_string(&p).unwrap();
    assert_eq!(
        text.matches("tail = { above = 20, groups = 1000 }").count(),
        3,
        "{text}"
    );
    let out = tmp.path().join("out").display().to_string();
    let sample = sample().display().to_string();
    let release = coco(
        &[
            "release",
            &sample,
            "--config",
            &p,
            "--out",
            &out,
            "--seed",
            "7",
            "--not-private",
        ],
        &home,
    );
    assert!(!String::from_utf8_lossy(&release.stderr).contains("warning"));
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("out/manifest.json")).unwrap(),
    )
    .unwrap();
    for level in manifest["levels"].as_array().unwrap() {
        assert_eq!(level["method"], "hc");
        assert_eq!(level["tail"]["above"], 20);
        assert_eq!(level["tail"]["groups"], 1000);
    }
    // Noise samples: per region L + min(m, G); the root alone has 20 + 1,000.
    assert_eq!(manifest["levels"][0]["noise_samples"], 1020);
    assert!(manifest.get("warnings").is_none());
    let checks = &manifest["checks"];
    for key in [
        "integral",
        "nonnegative",
        "group_totals",
        "consistent",
        "within_max_size",
    ] {
        assert_eq!(checks[key], true, "{key}");
    }
    assert_eq!(manifest["consistency"], "wls");
}

#[test]
fn a_saturated_tail_is_reported() {
    // Sizes above 2 hold thousands of households: 5 listed groups are not enough.
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let p = plan(
        tmp.path(),
        "tiny.toml",
        &["--tail", "2", "--tail-groups", "5"],
        &home,
    );
    let sample = sample().display().to_string();
    let out = tmp.path().join("out").display().to_string();
    let release = coco(
        &[
            "release",
            &sample,
            "--config",
            &p,
            "--out",
            &out,
            "--seed",
            "7",
            "--not-private",
        ],
        &home,
    );
    let stderr = String::from_utf8_lossy(&release.stderr);
    assert!(
        stderr.contains("warning: country: the tail is saturated in 1 of 1 regions"),
        "{stderr}"
    );
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("out/manifest.json")).unwrap(),
    )
    .unwrap();
    let warnings = manifest["warnings"].as_array().unwrap();
    assert!(
        warnings[0]
            .as_str()
            .unwrap()
            .starts_with("country: the tail is saturated")
    );
    let preview = coco(
        &[
            "preview", &sample, "--config", &p, "--trials", "1", "--seed", "1", "--json",
        ],
        &home,
    );
    let report: serde_json::Value = serde_json::from_slice(&preview.stdout).unwrap();
    let notes = report["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("saturated")),
        "{notes:?}"
    );
}

#[test]
fn bad_tail_flags_fail_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let sample = sample().display().to_string();
    for (args, expected) in [
        (
            vec!["--tail", "10000"],
            "error: --tail 10000: expected a size below --max-size (10000)",
        ),
        (
            vec!["--tail", "20", "--method", "hg"],
            "error: --tail goes with --method hc",
        ),
        (
            vec!["--tail", "20", "--tail-groups", "0"],
            "error: --tail-groups 0: expected a whole number from 1 to 10000000",
        ),
    ] {
        let out = Command::new(COCO)
            .arg("plan")
            .arg(&sample)
            .args(&args)
            .env("COCO_HOME", tmp.path())
            .output()
            .unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with(expected), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    }
}
