//! Issue 14, a first preview that pays, tuned without leaking, through the real binary:
//! `coco preview DIR` without `--config` previews coco's public default, which on the
//! bundled sample is at or below bottom-up above the leaves; previews run on a public
//! proxy with the same hierarchy; the search never recommends a plan bottom-up
//! dominates and says how sure it is; and how a plan was tuned is recorded in the plan
//! file, the ledger and the manifest, without anything computed from the data.

use std::path::Path;

use serde_json::Value;

use crate::common;
use common::cli::{coco, s, sample, text};

fn json(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}", text(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

fn mean(v: &Value) -> f64 {
    v["mean"].as_f64().unwrap()
}

/// The done-when: 20 trials, no `--config`, the consistent release at or below
/// bottom-up at the country and the province (seeds 1 and 2).
#[test]
fn the_default_preview_is_at_or_below_bottom_up_above_the_leaves() {
    let home = tempfile::tempdir().unwrap();
    for seed in ["1", "2"] {
        let o = coco(
            &[
                "preview",
                &s(&sample()),
                "--trials",
                "20",
                "--compare",
                "--json",
                "--seed",
                seed,
            ],
            home.path(),
        );
        let r = json(&o);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            stderr.contains("plan: coco's public default (no --config"),
            "{stderr}"
        );
        assert!(
            r["plan"]
                .as_str()
                .unwrap()
                .starts_with("coco's public default")
        );
        assert_eq!(r["tuning"], "public-default");
        assert_eq!(r["data"]["kind"], "confidential");
        assert!(r["notice"].as_str().unwrap().starts_with("CONFIDENTIAL"));
        let levels = r["levels"].as_array().unwrap();
        for l in &levels[..2] {
            let consistent = mean(&l["consistent"][0]["emd"]);
            let bottom_up = mean(&l["bottom_up"]);
            assert!(
                consistent <= bottom_up,
                "seed {seed}, {}: consistent {consistent} above bottom-up {bottom_up}",
                l["level"]
            );
            assert_eq!(l["method"], "hc+tail≥20");
        }
    }
}

#[test]
fn previews_run_on_a_public_proxy_with_the_same_hierarchy() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let o = coco(
        &[
            "preview",
            &s(&sample()),
            "--proxy",
            "synthetic",
            "--trials",
            "3",
            "--seed",
            "1",
            "--json",
        ],
        &home,
    );
    let r = json(&o);
    assert_eq!(r["data"]["kind"], "proxy");
    assert!(r["notice"].as_str().unwrap().starts_with("PUBLIC PROXY"));
    assert_eq!(r["dataset"], "synthetic proxy");
    // A proxy directory: another copy of the sample is accepted, the taxi city refused
    // with the file named and exit code 3 (an input error).
    let taxi = tmp.path().join("taxi");
    assert!(
        coco(&["gen", "taxi", "--out", &s(&taxi)], &home)
            .status
            .success()
    );
    let o = coco(
        &[
            "preview",
            &s(&sample()),
            "--proxy",
            &s(&taxi),
            "--trials",
            "1",
        ],
        &home,
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!(
            "proxy {}: levels",
            taxi.join("hierarchy.csv").display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("a proxy needs the same hierarchy"),
        "{stderr}"
    );
    let copy = tmp.path().join("copy");
    assert!(
        coco(&["gen", "sample", "--out", &s(&copy), "--seed", "2"], &home)
            .status
            .success()
    );
    let o = coco(
        &[
            "preview",
            &s(&sample()),
            "--proxy",
            &s(&copy),
            "--trials",
            "1",
            "--json",
        ],
        &home,
    );
    assert_eq!(json(&o)["data"]["label"], "proxy copy");
}

/// Issue 14, item 6: with a plain-hc plan the frontier recommended allocations
/// bottom-up beat at every level. The search recommends none that bottom-up dominates,
/// gives each ratio with its standard error, and looks at methods as well as shares.
#[test]
fn the_search_recommends_no_dominated_plan_and_shows_its_uncertainty() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let plan = tmp.path().join("hc.toml");
    let o = coco(
        &["plan", &s(&sample()), "--method", "hc", "--out", &s(&plan)],
        &home,
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = coco(
        &[
            "preview",
            &s(&sample()),
            "--config",
            &s(&plan),
            "--sweep",
            "--trials",
            "3",
            "--seed",
            "1",
            "--json",
        ],
        &home,
    );
    let f = json(&o);
    let rec = &f["recommendation"];
    assert!(rec.is_object(), "{f:#}");
    let consistent: Vec<(f64, f64)> = rec["consistent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (mean(s), s["se"].as_f64().unwrap()))
        .collect();
    for variant in f["bottom_up_variants"].as_array().unwrap() {
        let bu: Vec<(f64, f64)> = variant[1]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (mean(s), s["se"].as_f64().unwrap()))
            .collect();
        assert!(
            consistent
                .iter()
                .zip(&bu)
                .any(|(c, b)| c.0 + 2.0 * (c.1 * c.1 + b.1 * b.1).sqrt() < b.0),
            "bottom-up with {} leaves beats the recommendation everywhere",
            variant[0]
        );
    }
    assert_eq!(
        rec["ratio_se"].as_array().unwrap().len(),
        rec["ratios"].as_array().unwrap().len()
    );
    // Methods were searched: the candidates hold more than plain hc.
    let methods: Vec<&str> = f["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["methods"].as_array().unwrap())
        .map(|m| m.as_str().unwrap())
        .collect();
    for m in ["hc", "hg", "hc+tail≥20/auto", "hc+tail≥10/auto"] {
        assert!(methods.contains(&m), "{m} not searched: {methods:?}");
    }
    // The text says it too.
    let o = coco(
        &[
            "preview",
            &s(&sample()),
            "--config",
            &s(&plan),
            "--sweep",
            "--trials",
            "3",
            "--seed",
            "1",
        ],
        &home,
    );
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.contains("×±"), "{t}");
    assert!(t.contains("recommended (*)"), "{t}");
}

fn manifest(out: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap()
}

fn last_ledger_tuning(home: &Path) -> Value {
    let o = coco(&["ledger", "--json"], home);
    let v = json(&o);
    v["entries"].as_array().unwrap().last().unwrap()["tuning"].clone()
}

#[test]
fn how_a_plan_was_tuned_is_recorded_in_the_plan_ledger_and_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = sample();
    let release = |config: &Path, out: &str, extra: &[&str]| {
        let out = tmp.path().join(out);
        let mut args = vec![
            "release".to_string(),
            s(&data),
            "--config".into(),
            s(config),
            "--out".into(),
            s(&out),
            "--replicates".into(),
            "2".into(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = coco(&args, &home);
        assert!(o.status.success(), "{}", text(&o));
        (out, String::from_utf8_lossy(&o.stderr).into_owned())
    };
    // `coco plan` without options: the public default, and the file says so.
    let default = tmp.path().join("default.toml");
    assert!(
        coco(&["plan", &s(&data), "--out", &s(&default)], &home)
            .status
            .success()
    );
    let plan_text = std::fs::read_to_string(&default).unwrap();
    assert!(
        plan_text.contains("tuning = \"public-default\""),
        "{plan_text}"
    );
    assert!(
        plan_text
            .replace("\n# ", " ")
            .contains("ε is split evenly over the 3 levels"),
        "{plan_text}"
    );
    let (out, _) = release(&default, "r1", &[]);
    assert_eq!(manifest(&out)["tuning"], "public-default");
    assert_eq!(last_ledger_tuning(&home), "public-default");
    // With options it is the operator's public choice.
    let hc = tmp.path().join("hc.toml");
    assert!(
        coco(
            &["plan", &s(&data), "--method", "hc", "--out", &s(&hc)],
            &home
        )
        .status
        .success()
    );
    assert!(
        std::fs::read_to_string(&hc)
            .unwrap()
            .contains("tuning = \"public\"")
    );
    // The operator says it was tuned on confidential previews.
    let (out, _) = release(&hc, "r2", &["--tuned", "confidential"]);
    assert_eq!(manifest(&out)["tuning"], "confidential-previews");
    assert_eq!(last_ledger_tuning(&home), "confidential-previews");
    // A "public-default" plan edited by hand is not the default: recorded as unknown.
    let edited = tmp.path().join("edited.toml");
    std::fs::write(
        &edited,
        plan_text.replacen("epsilon = \"1/3\"", "epsilon = 0.5", 1),
    )
    .unwrap();
    let (out, stderr) = release(&edited, "r3", &[]);
    assert_eq!(manifest(&out)["tuning"], "unknown");
    assert!(stderr.contains("is not coco's default plan"), "{stderr}");
    // A plan without the key (written by hand or an older coco): unknown, or what
    // --tuned says.
    let bare = tmp.path().join("bare.toml");
    std::fs::write(
        &bare,
        std::fs::read_to_string(&hc)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("tuning"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let (out, _) = release(&bare, "r4", &[]);
    assert_eq!(manifest(&out)["tuning"], "unknown");
    let (out, _) = release(&bare, "r5", &["--tuned", "proxy"]);
    assert_eq!(manifest(&out)["tuning"], "proxy");
    // Manifests without the field still read (coco verify).
    let m = out.join("manifest.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&m).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("tuning");
    let old: coco::release::outputs::manifest::Manifest = serde_json::from_value(v).unwrap();
    assert_eq!(old.tuning, None);
}

/// `coco preview --coverage`: each trial's margins of error, as a release would publish
/// them, compared with the truth: per level the share of cells covered (near the 90%
/// asked for on the sample), the mean width and error, in JSON and in the text; absent
/// without the flag.
#[test]
fn the_preview_measures_how_often_the_margins_cover_the_truth() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = s(&sample());
    let args = ["preview", &data, "--trials", "3", "--seed", "4"];
    let plain = json(&coco(&[&args[..], &["--json"]].concat(), &home));
    for l in plain["levels"].as_array().unwrap() {
        assert!(l.get("coverage").is_none(), "{l}");
    }
    let v = json(&coco(
        &[&args[..], &["--json", "--coverage"]].concat(),
        &home,
    ));
    for l in v["levels"].as_array().unwrap() {
        let c = &l["coverage"];
        assert_eq!(c["confidence"], 0.9, "{l}");
        let share = mean(&c["share"]);
        assert!(
            (0.8..=1.0).contains(&share),
            "{}: covered {share}",
            l["level"]
        );
        let (width, error) = (
            c["mean_width"].as_f64().unwrap(),
            c["mean_error"].as_f64().unwrap(),
        );
        assert!(width > error && error > 0.0, "{l}");
        assert!(c["replicates"].as_u64().unwrap() >= 1, "{l}");
    }
    let o = coco(&[&args[..], &["--coverage"]].concat(), &home);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("share of cells whose 90% margin of error covered the truth")
            && out.contains("CONFIDENTIAL"),
        "{out}"
    );
}
