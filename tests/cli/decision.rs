//! A decision that can be explained (issue 36, item 4): the errors a reader weighs beside
//! the EMD, a search that holds still for a seed, and its recommendation written as a
//! plan file that says where it came from.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::cli::{COCO, coco, json_of, ok, release_quick, s, sample, text};

/// `coco preview SAMPLE --sweep` on the synthetic proxy with a seed, a few shares and
/// trials (quick), with `threads` worker threads and these extra arguments.
fn sweep(home: &Path, seed: &str, threads: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "preview".to_string(),
        s(&sample()),
        "--sweep".into(),
        "--proxy".into(),
        "synthetic".into(),
        "--seed".into(),
        seed.into(),
        "--trials".into(),
        "2".into(),
        "--shares".into(),
        "1/3,0.5".into(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    Command::new(COCO)
        .args(&args)
        .env("COCO_HOME", home)
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .unwrap()
}

#[test]
fn the_same_seed_gives_the_same_search_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    // Twice, and with one thread against two: scheduling must not move a figure.
    let a = sweep(&home, "7", "2", &["--json"]);
    let b = sweep(&home, "7", "1", &["--json"]);
    ok(&a);
    ok(&b);
    assert_eq!(a.stdout, b.stdout, "the same seed gave two searches");
    let text_a = sweep(&home, "7", "2", &[]);
    let text_b = sweep(&home, "7", "2", &[]);
    ok(&text_a);
    assert_eq!(text_a.stdout, text_b.stdout);
    // And the seed matters: another one measures other noise.
    let c = sweep(&home, "8", "2", &["--json"]);
    ok(&c);
    assert_ne!(a.stdout, c.stdout, "the seed is not used");
    // The search's text shows the plans cell by cell beside the EMD.
    assert!(
        text(&text_a).contains("mean absolute error per cell / share of a region's groups"),
        "{}",
        text(&text_a)
    );
}

#[test]
fn the_recommendation_lands_in_a_plan_file_labelled_with_its_proxy() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let plan = tmp.path().join("recommended.toml");
    let o = sweep(&home, "7", "2", &["--json", "--write-plan", &s(&plan)]);
    ok(&o);
    let search = json_of(&o);
    let rec = &search["recommendation"];
    assert!(rec.is_object(), "no recommendation: {search}");
    let written = std::fs::read_to_string(&plan).unwrap();
    assert!(written.contains("tuning = \"proxy\""), "{written}");
    assert!(
        written.contains("tuning_source = \"synthetic\""),
        "{written}"
    );
    // The plan holds the recommended budgets, root first.
    for b in rec["budgets"].as_array().unwrap() {
        let b = b.as_str().unwrap();
        assert!(
            written.contains(&format!("epsilon = {b}"))
                || written.contains(&format!("epsilon = \"{b}\"")),
            "{b} not in {written}"
        );
    }
    // coco release accepts it and the manifest says where it came from.
    let out = tmp.path().join("release");
    let r = release_quick(&sample(), &plan, &out, &home);
    ok(&r);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["tuning"], "proxy", "{manifest}");
    assert_eq!(manifest["tuning_source"], "synthetic", "{manifest}");
}

#[test]
fn a_plan_file_that_cannot_be_written_fails_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let plan = tmp.path().join("no-such-dir/plan.toml");
    let o = sweep(&home, "7", "2", &["--write-plan", &s(&plan)]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("no-such-dir/plan.toml"), "{}", text(&o));
    assert!(!plan.exists());
}

#[test]
fn the_preview_shows_cell_errors_beside_the_emd() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let o = coco(
        &[
            "preview",
            &s(&sample()),
            "--proxy",
            "synthetic",
            "--seed",
            "3",
            "--trials",
            "2",
            "--json",
        ],
        &home,
    );
    ok(&o);
    let v = json_of(&o);
    for level in v["levels"].as_array().unwrap() {
        for key in ["mae_per_cell", "relative_error"] {
            let stat = &level[key];
            let mean = stat["mean"]
                .as_f64()
                .unwrap_or_else(|| panic!("{key}: {level}"));
            assert!(stat["se"].as_f64().is_some(), "{key}: {level}");
            assert!(mean >= 0.0, "{key}: {level}");
            if key == "relative_error" {
                assert!(mean <= 1.0, "a share of groups: {level}");
            }
        }
        // Existing fields are kept.
        assert!(level["consistent"][0]["emd"]["mean"].is_number(), "{level}");
    }
    let table = coco(
        &[
            "preview",
            &s(&sample()),
            "--proxy",
            "synthetic",
            "--seed",
            "3",
            "--trials",
            "2",
        ],
        &home,
    );
    ok(&table);
    assert!(
        text(&table).contains("groups in the wrong size cell"),
        "{}",
        text(&table)
    );
}

#[test]
fn the_search_keeps_a_held_levels_budget_in_every_plan() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let plan = tmp.path().join("held.toml");
    // coco's default plan with the provinces held at 0.4.
    let out = Command::new(COCO)
        .args(["plan", &s(&sample())])
        .env("COCO_HOME", &home)
        .output()
        .unwrap();
    ok(&out);
    let text_plan = String::from_utf8(out.stdout).unwrap();
    let at = text_plan.find("name = \"province\"").unwrap();
    let eps = at + text_plan[at..].find("epsilon = ").unwrap();
    let end = eps + text_plan[eps..].find('\n').unwrap();
    let edited = format!(
        "{}epsilon = \"0.4\"\nheld = true{}",
        &text_plan[..eps],
        &text_plan[end..]
    );
    std::fs::write(&plan, edited).unwrap();
    let out = sweep(&home, "3", "2", &["--config", &s(&plan), "--json"]);
    ok(&out);
    let v = json_of(&out);
    assert_eq!(v["held"], serde_json::json!([false, true, false]));
    let candidates = v["candidates"].as_array().unwrap();
    assert!(candidates.len() > 3);
    for c in candidates {
        assert_eq!(c["budgets"][1], "0.4", "{c}");
        assert!(
            c["budgets"]
                .as_array()
                .unwrap()
                .iter()
                .all(|b| !b.is_null()),
            "a plan left a level unmeasured: {c}"
        );
    }
    let text_out = sweep(&home, "3", "2", &["--config", &s(&plan)]);
    ok(&text_out);
    assert!(
        text(&text_out)
            .contains("held levels keep the plan's budget in every plan searched (province)"),
        "{}",
        text(&text_out)
    );
}
