//! `hc` with a tail, end to end through the binary: `coco plan --tail` writes it,
//! `coco release` measures with it and records it in the manifest, a saturated tail is
//! reported (on standard error, in the manifest and in the preview's notes), and on the
//! bundled sample the tail beats plain `hc` at the upper levels.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::cli::{COCO, ok, sample};

/// `coco ARGS` with `COCO_HOME=home`, which must succeed.
fn coco(args: &[&str], home: &Path) -> Output {
    let out = crate::common::cli::coco(args, home);
    ok(&out);
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
    let p = plan(
        tmp.path(),
        "tail.toml",
        &["--tail", "20", "--tail-groups", "1000"],
        &home,
    );
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
            "error: --tail 20: goes with --method hc",
        ),
        (
            vec!["--tail", "20", "--tail-groups", "0"],
            "error: invalid value '0' for '--tail-groups <M|auto>': expected a whole number from 1 to 10000000",
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

#[test]
fn an_auto_tail_is_planned_released_and_reported() {
    // `--tail 20` alone sizes each region's list from its noisy head.
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let p = plan(tmp.path(), "auto.toml", &["--tail", "20"], &home);
    let text = std::fs::read_to_string(&p).unwrap();
    assert_eq!(
        text.matches("tail = { above = 20, groups = \"auto\" }")
            .count(),
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
    let levels = manifest["levels"].as_array().unwrap();
    for level in levels {
        assert_eq!(level["tail"]["groups"], "auto");
        assert!(level.get("runs_joined").is_none());
    }
    // The most an auto tail may cost: L + min(G, K + 1 − L) per region.
    assert_eq!(levels[0]["noise_samples"], 20 + 9_981);
    // The levels above the leaves say how much they leaned on their own measurements.
    for level in &levels[..2] {
        let own = level["leaning"]["own_weight"].as_f64().unwrap();
        let model = level["leaning"]["model_own_weight"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&own) && own >= model - 1e-9, "{level}");
    }
    assert!(levels[2].get("leaning").is_none());
}

#[test]
fn joined_runs_are_reported_when_memory_is_short() {
    // A dense city measured with plain hc: its boroughs' functions hold thousands of
    // runs. With 2 MB (enough for the plan, not for every run) wls joins some and says
    // so; with the machine's memory it joins none.
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = tmp.path().join("dense");
    coco(
        &["gen", "dense", "--out", &data.display().to_string()],
        &home,
    );
    let p = tmp.path().join("hc.toml").display().to_string();
    coco(
        &[
            "plan",
            &data.display().to_string(),
            "--method",
            "hc",
            "--out",
            &p,
        ],
        &home,
    );
    let release = |out: &str, limit: Option<&str>| {
        let mut cmd = Command::new(COCO);
        cmd.args([
            "release",
            &data.display().to_string(),
            "--config",
            &p,
            "--out",
            out,
            "--seed",
            "3",
            "--not-private",
            "--replicates",
            "2",
        ])
        .env("COCO_HOME", &home);
        if let Some(l) = limit {
            cmd.env("COCO_MEMORY_LIMIT", l);
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let manifest: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(Path::new(out).join("manifest.json")).unwrap(),
        )
        .unwrap();
        (String::from_utf8_lossy(&o.stderr).to_string(), manifest)
    };
    let short = tmp.path().join("short").display().to_string();
    let (stderr, manifest) = release(&short, Some("2M"));
    assert!(
        stderr.contains("wls joined the most alike runs of")
            && stderr.contains("to stay within the memory available"),
        "{stderr}"
    );
    let joined: u64 = manifest["levels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["runs_joined"].as_u64())
        .sum();
    assert!(joined > 0, "{manifest}");
    assert!(
        manifest["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("wls joined"))
    );
    // Still a valid release: every check holds.
    for key in ["integral", "nonnegative", "group_totals", "consistent"] {
        assert_eq!(manifest["checks"][key], true, "{key}");
    }
    let roomy = tmp.path().join("roomy").display().to_string();
    let (stderr, manifest) = release(&roomy, None);
    assert!(!stderr.contains("wls joined"), "{stderr}");
    assert!(
        manifest["levels"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l.get("runs_joined").is_none())
    );
}
