//! The ledger and caps in ρ through the binary (issue 33, item 5): a zCDP release is
//! recorded as a version 3 line in ρ, `coco ledger` speaks ρ and the (ε, δ) it implies,
//! `coco verify` checks the ρ, and caps in ρ, in ε and in (ε, δ) bind as
//! docs/privacy.md says, failing closed.

use std::path::Path;

use crate::common::cli::{coco, json_of, ledger_lines, ok, refused, s, sample, text};

/// A plan of total ρ = `rho`, written in `tmp`.
fn rho_plan(tmp: &Path, rho: &str, home: &Path) -> std::path::PathBuf {
    let plan = tmp.join(format!("plan-rho-{}.toml", rho.replace('/', "_")));
    ok(&coco(
        &["plan", &s(&sample()), "--rho", rho, "--out", &s(&plan)],
        home,
    ));
    plan
}

/// A pure plan of total ε = `epsilon`, written in `tmp`.
fn epsilon_plan(tmp: &Path, epsilon: &str, home: &Path) -> std::path::PathBuf {
    let plan = tmp.join(format!("plan-eps-{}.toml", epsilon.replace('/', "_")));
    ok(&coco(
        &[
            "plan",
            &s(&sample()),
            "--total",
            epsilon,
            "--out",
            &s(&plan),
        ],
        home,
    ));
    plan
}

fn release(plan: &Path, out: &Path, home: &Path) -> std::process::Output {
    coco(
        &[
            "release",
            &s(&sample()),
            "--config",
            &s(plan),
            "--out",
            &s(out),
        ],
        home,
    )
}

fn ledger_json_lines(home: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(home.join("ledger.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_rho_plan_is_released_recorded_in_rho_shown_and_verified() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let plan = rho_plan(tmp.path(), "1/2", &home);
    let out = tmp.path().join("release");
    let o = release(&plan, &out, &home);
    ok(&o);
    let said = text(&o);
    assert!(said.contains("total ρ = 0.5"), "{said}");
    assert!(said.contains("δ = 1e-10)-DP"), "{said}");
    // Pending, then written: both version 3 lines in ρ, no ε anywhere.
    let lines = ledger_json_lines(&home);
    assert_eq!(lines.len(), 2);
    for l in &lines {
        assert_eq!(l["v"], 3, "{l}");
        assert_eq!(l["definition"], "zcdp", "{l}");
        assert_eq!(l["total_rho"]["num"], "1", "{l}");
        assert_eq!(l["total_rho"]["den"], "2", "{l}");
        assert!(l.get("total_epsilon").is_none(), "{l}");
        for level in l["levels"].as_array().unwrap() {
            assert!(level.get("rho").is_some() && level.get("epsilon").is_none());
        }
    }
    assert_eq!(lines[1]["status"], "written");
    // `coco ledger` speaks ρ and states the (ε, δ).
    let o = coco(&["ledger"], &home);
    ok(&o);
    let said = text(&o);
    assert!(said.contains("ρ spent 0.5"), "{said}");
    assert!(said.contains("δ = 1e-10)-DP"), "{said}");
    let o = coco(&["ledger", "--json"], &home);
    ok(&o);
    let d = &json_of(&o)["datasets"][0];
    assert_eq!(d["unit"], "rho", "{d}");
    assert_eq!(d["spent_rho"], "0.5", "{d}");
    assert_eq!(d["spent_rho_exact"]["den"], "2", "{d}");
    assert_eq!(d["zcdp_draws"], 1, "{d}");
    assert!(d["epsilon_at_delta"].as_f64().unwrap() > 5.0, "{d}");
    assert!(d["spent_exact"].is_null(), "{d}");
    // `coco verify` compares the manifest's ρ with the line's.
    let o = coco(&["verify", &s(&out), "--dataset", &s(&sample())], &home);
    ok(&o);
    assert!(text(&o).contains("total ρ = 0.5"), "{}", text(&o));
    // The JSON of a release: its ρ and definition, no total_epsilon.
    let out2 = tmp.path().join("release2");
    let o = coco(
        &[
            "release",
            &s(&sample()),
            "--config",
            &s(&plan),
            "--out",
            &s(&out2),
            "--json",
        ],
        &home,
    );
    ok(&o);
    let v = json_of(&o);
    assert_eq!(v["definition"], "zcdp");
    assert_eq!(v["total_rho"]["exact"], "0.5");
    assert!(v.get("total_epsilon").is_none(), "{v}");
    assert_eq!(v["spent_on_dataset"]["rho_exact"], "1");
}

#[test]
fn a_rho_cap_refuses_the_draw_that_would_exceed_it_with_nothing_drawn() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    ok(&coco(
        &["ledger", "set-cap", &s(&sample()), "--rho", "3/4"],
        &home,
    ));
    let plan = rho_plan(tmp.path(), "1/2", &home);
    ok(&release(&plan, &tmp.path().join("r1"), &home));
    let before = ledger_lines(&home);
    let out = tmp.path().join("r2");
    let o = release(&plan, &out, &home);
    refused(&o, 4, "ρ cap 0.75");
    assert!(!out.exists());
    assert_eq!(ledger_lines(&home), before);
}

#[test]
fn a_rho_cap_counts_an_earlier_pure_draw_as_epsilon_squared_over_two() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    ok(&coco(
        &["ledger", "set-cap", &s(&sample()), "--rho", "3/4"],
        &home,
    ));
    // ε = 1 is ρ = 1/2 under the cap: it fits.
    let pure = epsilon_plan(tmp.path(), "1", &home);
    let o = release(&pure, &tmp.path().join("r1"), &home);
    ok(&o);
    // Said in the cap's unit.
    assert!(text(&o).contains("ρ spent 0.5"), "{}", text(&o));
    let before = ledger_lines(&home);
    // Another ρ = 1/2 would make 1 > 3/4.
    let plan = rho_plan(tmp.path(), "1/2", &home);
    let out = tmp.path().join("r2");
    let o = release(&plan, &out, &home);
    refused(&o, 4, "ρ 0.5 already spent in 1 draw(s)");
    assert!(!out.exists());
    assert_eq!(ledger_lines(&home), before);
    // A pure line is still version 2, with no ρ.
    let lines = ledger_json_lines(&home);
    assert!(
        lines
            .iter()
            .all(|l| l["v"] == 2 && l.get("total_rho").is_none())
    );
}

#[test]
fn an_epsilon_cap_refuses_a_zcdp_draw_saying_why() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    ok(&coco(&["ledger", "set-cap", &s(&sample()), "100"], &home));
    let plan = rho_plan(tmp.path(), "1/100", &home);
    let out = tmp.path().join("r");
    let o = release(&plan, &out, &home);
    refused(
        &o,
        4,
        "a pure-ε cap cannot account a ρ-zCDP draw: the discrete Gaussian is not ε-DP for any ε",
    );
    assert!(text(&o).contains("--rho R"), "{}", text(&o));
    assert!(!out.exists());
    assert_eq!(ledger_lines(&home), 0);
}

#[test]
fn an_epsilon_delta_cap_accounts_rho_through_the_conversion() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let o = coco(
        &[
            "ledger",
            "set-cap",
            &s(&sample()),
            "--epsilon",
            "7",
            "--delta",
            "1e-10",
        ],
        &home,
    );
    ok(&o);
    // ρ = 1/2 is (ε = 6.84, δ = 10⁻¹⁰): it fits under ε = 7.
    let plan = rho_plan(tmp.path(), "1/2", &home);
    ok(&release(&plan, &tmp.path().join("r1"), &home));
    let o = coco(&["ledger", "--json"], &home);
    let d = &json_of(&o)["datasets"][0];
    assert_eq!(d["cap"]["unit"], "epsilon_delta", "{d}");
    assert_eq!(d["cap"]["delta"], 1e-10, "{d}");
    // A second makes ρ = 1, (ε = 10.6, δ = 10⁻¹⁰): refused.
    let before = ledger_lines(&home);
    let out = tmp.path().join("r2");
    refused(&release(&plan, &out, &home), 4, "δ = 1e-10)-DP");
    assert!(!out.exists());
    assert_eq!(ledger_lines(&home), before);
}

#[test]
fn set_cap_takes_exactly_one_form() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    for args in [
        vec!["ledger", "set-cap", "DIR", "1", "--rho", "1/2"],
        vec!["ledger", "set-cap", "DIR", "--epsilon", "1"],
        vec!["ledger", "set-cap", "DIR", "--delta", "1e-10"],
        vec!["ledger", "set-cap", "DIR"],
        vec!["ledger", "set-cap", "DIR", "--epsilon", "1", "--delta", "2"],
    ] {
        let sample = s(&sample());
        let args: Vec<&str> = args
            .iter()
            .map(|a| if *a == "DIR" { sample.as_str() } else { a })
            .collect();
        let o = coco(&args, &home);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    }
    assert!(!home.join("config.toml").exists());
}

#[test]
fn a_hand_edited_line_with_both_epsilon_and_rho_is_refused_with_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let plan = rho_plan(tmp.path(), "1/2", &home);
    ok(&release(&plan, &tmp.path().join("r1"), &home));
    let path = home.join("ledger.jsonl");
    let ledger = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = ledger.lines().map(str::to_string).collect();
    lines[1] = lines[1].replace(
        "\"total_rho\":",
        "\"total_epsilon\":{\"num\":\"1\",\"den\":\"2\"},\"total_rho\":",
    );
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let out = tmp.path().join("r2");
    let o = release(&plan, &out, &home);
    refused(&o, 4, "ledger.jsonl:2:");
    assert!(text(&o).contains("both an ε and a ρ"), "{}", text(&o));
    assert!(!out.exists());
    let o = coco(&["ledger", "verify"], &home);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
}
