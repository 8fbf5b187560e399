//! ρ-zCDP plans through the binary (issue 33): `coco plan --rho` writes one, the
//! preview measures it with the discrete Gaussian in ρ, and a release of it is recorded
//! in ρ (the ledger's side: tests/cli/zcdp_ledger.rs).

use crate::common::cli::{coco, ledger_lines, ok, s, sample, text};

#[test]
fn plan_rho_writes_a_zcdp_plan_that_reads_back_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let plan = tmp.path().join("plan.toml");
    let o = coco(
        &["plan", &s(&sample()), "--rho", "1/2", "--out", &s(&plan)],
        &home,
    );
    ok(&o);
    let said = text(&o);
    assert!(said.contains("total ρ = 0.5 (zCDP"), "{said}");
    assert!(said.contains("ε = 6.84 at δ = 10⁻¹⁰"), "{said}");
    let written = std::fs::read_to_string(&plan).unwrap();
    assert_eq!(written.matches("rho = \"1/6\"").count(), 3, "{written}");
    assert!(!written.contains("epsilon ="), "{written}");
    assert!(written.contains("ρ is split evenly"), "{written}");
    let back = coco::release::plan::ReleasePlan::load(&plan).unwrap();
    assert_eq!(back.definition(), coco::privacy::Definition::Zcdp);
    assert_eq!(back.total().unwrap().exact(), "0.5");
    // A geometric split and a private K stay in ρ.
    let o = coco(
        &[
            "plan",
            &s(&sample()),
            "--rho",
            "1/2",
            "--allocation",
            "geometric",
            "--estimate-max-size",
            "1/100",
        ],
        &home,
    );
    ok(&o);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("max_size = { rho = 0.01 }"), "{stdout}");
    assert!(!stdout.contains("epsilon"), "{stdout}");
}

/// `coco preview` of the sample under `plan`, one trial.
fn preview_once(plan: &std::path::Path, home: &std::path::Path) -> std::process::Output {
    coco(
        &[
            "preview",
            &s(&sample()),
            "--config",
            &s(plan),
            "--trials",
            "1",
        ],
        home,
    )
}

#[test]
fn a_plan_mixing_epsilon_and_rho_is_refused_with_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("mixed.toml");
    std::fs::write(
        &plan,
        "max_size = 100\n[[level]]\nname = \"country\"\nepsilon = 0.5\nmethod = \"hc\"\n\
         [[level]]\nname = \"province\"\nrho = \"1/8\"\nmethod = \"hc\"\n\
         [[level]]\nname = \"district\"\nrho = \"1/8\"\nmethod = \"hc\"\n",
    )
    .unwrap();
    let o = preview_once(&plan, &tmp.path().join("home"));
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("mixed.toml"), "{}", text(&o));
    assert!(text(&o).contains("mixed.toml:6"), "{}", text(&o));
    assert!(text(&o).contains("ρ = 0.125"), "{}", text(&o));
    assert!(text(&o).contains("one definition"), "{}", text(&o));
    // Both keys on one level.
    std::fs::write(
        &plan,
        "max_size = 100\n[[level]]\nname = \"country\"\nepsilon = 0.5\nrho = 0.5\nmethod = \"hc\"\n",
    )
    .unwrap();
    let o = preview_once(&plan, &tmp.path().join("home"));
    assert!(!o.status.success());
    assert!(text(&o).contains("mixed.toml:5"), "{}", text(&o));
    assert!(text(&o).contains("not both"), "{}", text(&o));
}

#[test]
fn a_zcdp_preview_speaks_rho_and_a_zcdp_release_is_recorded_in_rho() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let plan = tmp.path().join("plan.toml");
    ok(&coco(
        &["plan", &s(&sample()), "--rho", "1/2", "--out", &s(&plan)],
        &home,
    ));
    let o = coco(
        &[
            "preview",
            &s(&sample()),
            "--config",
            &s(&plan),
            "--trials",
            "1",
            "--seed",
            "5",
        ],
        &home,
    );
    ok(&o);
    let said = text(&o);
    assert!(said.contains("total ρ = 0.5"), "{said}");
    let out = tmp.path().join("release");
    let o = coco(
        &[
            "release",
            &s(&sample()),
            "--config",
            &s(&plan),
            "--out",
            &s(&out),
        ],
        &home,
    );
    // The ledger records ρ now (tests/cli/zcdp_ledger.rs): drawn, pending then written.
    ok(&o);
    assert!(out.join("manifest.json").exists());
    assert_eq!(ledger_lines(&home), 2);
}
