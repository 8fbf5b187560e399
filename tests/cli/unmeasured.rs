//! Levels left unmeasured (issue 36, item 3): a level may get no budget (`--budgets
//! 0,0,1`, `epsilon = "0"`, `rho = "0"`), its regions estimated from their children.
//! Bottom-up and a plan that skips the middle level release end to end, pass `coco
//! verify`, and say in the manifest and `measurements.jsonl` which levels were
//! measured; the ledger charges only the measured levels; preview and the search
//! handle them. On main every one of these plans is refused (`ε "0" is not positive`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::cli::{coco, json_of, ledger_lines, ok, s, sample, text};
use crate::verify_edges::{edit_measurements, edited, refused_for, release, verify};

/// `coco plan --budgets BUDGETS` of the sample (coco's methods), written in `tmp`.
fn plan(tmp: &Path, budgets: &str, home: &Path) -> PathBuf {
    let path = tmp.join(format!("plan-{}.toml", budgets.replace(',', "_")));
    let o = coco(
        &[
            "plan",
            &s(&sample()),
            "--budgets",
            budgets,
            "--out",
            &s(&path),
        ],
        home,
    );
    ok(&o);
    path
}

fn manifest(out: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap()
}

/// The regions of each level that `measurements.jsonl` has a line for.
fn measured_lines(out: &Path, level: &str) -> usize {
    std::fs::read_to_string(out.join("measurements.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["kind"] == "region" && l["level"] == level)
        .count()
}

/// The last ledger line of `home` that records levels (the draw's).
fn ledger_levels(home: &Path) -> Value {
    std::fs::read_to_string(home.join("ledger.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .rfind(|l| l["levels"].as_array().is_some_and(|a| !a.is_empty()))
        .expect("a line with the draw's levels")
}

/// A release of `budgets` (and `consistency`) is written, verifies, and says which
/// levels were measured: the manifest marks the unmeasured ones `"measured": false`
/// with a budget of `"0"` and no noise samples, `measurements.jsonl` has no line for
/// their regions and one for every region of the others, the ledger charges only the
/// measured levels and the guarantee is their sum.
fn releases_and_verifies(budgets: &str, consistency: &str, total: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let path = plan(tmp.path(), budgets, &home);
    let mut written = std::fs::read_to_string(&path).unwrap();
    let zeros = budgets.split(',').filter(|b| *b == "0").count();
    assert_eq!(
        written.matches("epsilon = \"0\"").count(),
        zeros,
        "{written}"
    );
    written = written.replace(
        "consistency = \"wls\"",
        &format!("consistency = \"{consistency}\""),
    );
    std::fs::write(&path, &written).unwrap();
    let out = release(&home, &path, &tmp.path().join("release"));
    let (o, problems) = verify(&out, &home);
    assert!(o.status.success(), "{budgets} {consistency}: {problems:?}");
    let o = coco(&["verify", &s(&out), "--dataset", &s(&sample())], &home);
    ok(&o);
    let m = manifest(&out);
    assert_eq!(m["consistency"], consistency, "{m}");
    assert_eq!(m["total_epsilon_exact"], total, "{budgets}");
    for (i, (level, b)) in ["country", "province", "district"]
        .iter()
        .zip(budgets.split(','))
        .enumerate()
    {
        let l = &m["levels"][i];
        let p = &m["privacy"]["levels"][i];
        assert_eq!(l["name"], *level);
        if b == "0" {
            assert_eq!(l["measured"], false, "{l}");
            assert_eq!(l["epsilon_exact"], "0", "{l}");
            assert_eq!(l["epsilon"], 0.0, "{l}");
            assert_eq!(l["noise_samples"], 0, "{l}");
            assert_eq!(p["measured"], false, "{p}");
            assert_eq!(p["epsilon"], "0", "{p}");
            assert_eq!(measured_lines(&out, level), 0, "{level}");
        } else {
            // Measured levels read as before: no `measured` field.
            assert!(l.get("measured").is_none(), "{l}");
            assert!(p.get("measured").is_none(), "{p}");
            assert_eq!(l["epsilon_exact"], b, "{l}");
            assert_eq!(
                measured_lines(&out, level),
                l["nodes"].as_u64().unwrap() as usize,
                "{level}"
            );
        }
    }
    // The ledger charged the measured levels only, and the guarantee is their sum.
    let line = ledger_levels(&home);
    let names: Vec<&str> = line["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    let measured: Vec<&str> = ["country", "province", "district"]
        .into_iter()
        .zip(budgets.split(','))
        .filter(|(_, b)| *b != "0")
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, measured, "{line}");
    assert_eq!(
        line["total_epsilon"],
        serde_json::json!({"num": total, "den": "1"}),
        "{line}"
    );
}

#[test]
fn a_bottom_up_plan_releases_and_verifies_and_charges_the_leaves_only() {
    releases_and_verifies("0,0,1", "wls", "1");
}

#[test]
fn a_plan_that_skips_the_middle_level_releases_and_verifies() {
    releases_and_verifies("1,0,1", "wls", "2");
    releases_and_verifies("1,0,1", "topdown", "2");
}

#[test]
fn a_zcdp_plan_with_rho_zero_at_a_level_releases_and_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let path = tmp.path().join("plan.toml");
    ok(&coco(
        &["plan", &s(&sample()), "--rho", "1/2", "--out", &s(&path)],
        &home,
    ));
    // The province level's ρ set to 0.
    let written = std::fs::read_to_string(&path).unwrap();
    let at = written.find("name = \"province\"").unwrap();
    let rho = at + written[at..].find("rho = \"1/6\"").unwrap();
    let edited_plan = format!(
        "{}rho = \"0\"{}",
        &written[..rho],
        &written[rho + "rho = \"1/6\"".len()..]
    );
    std::fs::write(&path, edited_plan).unwrap();
    let out = release(&home, &path, &tmp.path().join("release"));
    let (o, problems) = verify(&out, &home);
    assert!(o.status.success(), "{problems:?}");
    let m = manifest(&out);
    assert_eq!(m["total_rho"], "1/3", "{m}");
    assert_eq!(m["levels"][1]["measured"], false);
    assert_eq!(m["levels"][1]["rho"], "0");
    assert_eq!(m["privacy"]["levels"][1]["rho"], "0");
    assert_eq!(m["privacy"]["levels"][1]["measured"], false);
    assert_eq!(measured_lines(&out, "province"), 0);
    assert_eq!(measured_lines(&out, "district"), 60);
    // Saved back by the plan model, the zero stays a ρ.
    let back = coco::release::plan::ReleasePlan::load(&path).unwrap();
    assert!(back.to_toml().contains("rho = \"0\""));
}

/// `verify` accepts no lines for a level only where the manifest says it was not
/// measured: with the manifest claiming the province level was measured, its missing
/// lines are found; with lines added for it, they are found out of place.
#[test]
fn verify_holds_measurements_to_what_the_manifest_says_was_measured() {
    let tmp = tempfile::tempdir().unwrap();
    let (home, other) = (tmp.path().join("home"), tmp.path().join("other-home"));
    let path = plan(tmp.path(), "1,0,1", &home);
    let r = release(&home, &path, &tmp.path().join("r"));
    let (o, problems) = verify(&r, &home);
    assert!(o.status.success(), "{problems:?}");
    // The manifest says the provinces were measured at ε = 1.
    let e = edited(&r, &tmp.path().join("claims-measured"), |out| {
        let p = out.join("manifest.json");
        let mut m: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let l = m["levels"][1].as_object_mut().unwrap();
        l.remove("measured");
        l.insert("epsilon_exact".into(), "1".into());
        l.insert("epsilon".into(), 1.0.into());
        std::fs::write(&p, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    });
    refused_for(
        &e,
        &other,
        &[
            "measurements.jsonl: no line for region",
            "of level province",
        ],
    );
    // Marked unmeasured while stating a budget: contradictory.
    let e = edited(&r, &tmp.path().join("contradicts"), |out| {
        let p = out.join("manifest.json");
        let mut m: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        m["levels"][1]["epsilon_exact"] = "1".into();
        std::fs::write(&p, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    });
    refused_for(
        &e,
        &other,
        &["level \"province\" is marked \"measured\": false but states a budget"],
    );
    // A line for a province added after the country's.
    let e = edited(&r, &tmp.path().join("extra-line"), |out| {
        edit_measurements(out, |lines| {
            let mut extra = lines[0].clone();
            assert_eq!(extra["level"], "country");
            extra["level"] = "province".into();
            extra["region"] = "P1".into();
            lines.insert(1, extra);
        })
    });
    refused_for(&e, &other, &["measurements.jsonl: line 2", "province"]);
}

/// A plan file whose leaf level is unmeasured, or with no level measured, is refused
/// before anything is drawn, naming the file, the line and why.
#[test]
fn an_unmeasured_leaf_level_is_refused_with_the_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let path = plan(tmp.path(), "1,1,1", &home);
    let written = std::fs::read_to_string(&path).unwrap();
    let at = written.find("name = \"district\"").unwrap();
    let header = written[..at].lines().count();
    let bad = format!(
        "{}{}",
        &written[..at],
        written[at..].replacen("epsilon = 1.0", "epsilon = \"0\"", 1)
    );
    std::fs::write(&path, bad).unwrap();
    let before = ledger_lines(&home);
    let o = coco(
        &[
            "release",
            &s(&sample()),
            "--config",
            &s(&path),
            "--out",
            &s(&tmp.path().join("r")),
        ],
        &home,
    );
    assert!(!o.status.success(), "{}", text(&o));
    let said = text(&o);
    assert!(
        said.contains(&format!("{}:{header}:", path.display()))
            && said.contains("level \"district\"")
            && said.contains("the leaf level must be measured"),
        "{said}"
    );
    assert_eq!(ledger_lines(&home), before);
    // On the command line, the flag is named.
    let o = coco(&["plan", &s(&sample()), "--budgets", "1,1,0"], &home);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--budgets 1,1,0"), "{}", text(&o));
    let o = coco(&["plan", &s(&sample()), "--budgets", "0,0,0"], &home);
    assert!(
        text(&o).contains("every level has budget 0"),
        "{}",
        text(&o)
    );
}

/// The preview shows an unmeasured level's independent estimate and omniscient
/// reference as "not measured" (`null` in JSON), and its consistent error as for any
/// level; the search tries bottom-up and the plan with the middle level skipped.
#[test]
fn preview_and_search_handle_unmeasured_levels() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let path = plan(tmp.path(), "0,0,1", &home);
    let even = plan(tmp.path(), "1,1,1", &home);
    let args = |path: &Path, more: &[&str]| -> Vec<String> {
        [
            "preview",
            &s(&sample()),
            "--config",
            &s(path),
            "--proxy",
            "synthetic",
            "--trials",
            "1",
            "--seed",
            "1",
        ]
        .iter()
        .map(|a| a.to_string())
        .chain(more.iter().map(|a| a.to_string()))
        .collect()
    };
    let run = |path: &Path, more: &[&str]| {
        let a = args(path, more);
        coco(&a.iter().map(String::as_str).collect::<Vec<_>>(), &home)
    };
    let o = run(&path, &[]);
    ok(&o);
    let said = String::from_utf8_lossy(&o.stdout).to_string();
    let country = said.lines().find(|l| l.starts_with("country")).unwrap();
    assert_eq!(country.matches("not measured").count(), 2, "{said}");
    let v = json_of(&run(&path, &["--json"]));
    for (i, measured) in [false, false, true].into_iter().enumerate() {
        let l = &v["levels"][i];
        assert_eq!(l["independent"].is_null(), !measured, "{l}");
        assert_eq!(l["omniscient"].is_null(), !measured, "{l}");
        assert_eq!(l["measured"] == false, !measured, "{l}");
        assert!(l["consistent"][0]["emd"]["mean"].as_f64().unwrap() >= 0.0);
    }
    // The search from an even plan: its candidates include bottom-up and the middle
    // level skipped, at the plan's total.
    let v = json_of(&run(&even, &["--sweep", "--json"]));
    let candidates = v["candidates"].as_array().unwrap();
    let find = |origin: &str| {
        candidates
            .iter()
            .find(|c| c["origin"] == origin)
            .unwrap_or_else(|| panic!("no candidate {origin:?} in {candidates:#?}"))
    };
    let bottom_up = find("bottom-up (levels above the leaves unmeasured)");
    assert_eq!(
        bottom_up["budgets"],
        serde_json::json!([null, null, "3"]),
        "{bottom_up}"
    );
    assert!(bottom_up["independent"][0].is_null(), "{bottom_up}");
    let skip = find("province unmeasured");
    assert!(skip["budgets"][1].is_null(), "{skip}");
    assert!(!skip["budgets"][0].is_null() && !skip["budgets"][2].is_null());
}
