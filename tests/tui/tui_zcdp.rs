//! Issue 33, item 7: the Budget screen toggles a plan between pure ε and ρ-zCDP, and
//! every screen then speaks ρ; a ρ plan previews, and its draw goes as far as the
//! ledger allows.

use std::path::{Path, PathBuf};
use std::time::Duration;

use coco::privacy::{Definition, Loss, Rho};
use coco::release::ledger::Ledger;
use coco::tradeoff::Amount;
use coco::tui::AppOptions;
use coco::tui::action::Action;
use coco::tui::app::{InputPurpose, Overlay};
use coco::tui::runtime::Runtime;

const SAMPLE: &str = "sample-data/households";
const WAIT: Duration = Duration::from_secs(600);

fn runtime(home: &Path) -> Runtime {
    let mut rt = Runtime::new(AppOptions {
        dataset: Some(PathBuf::from(SAMPLE)),
        home: Some(home.to_path_buf()),
        preview_seed: Some(1),
    });
    assert!(rt.settle(WAIT), "background work did not finish");
    rt
}

fn act(rt: &mut Runtime, actions: &[Action]) {
    for &a in actions {
        rt.act(a);
    }
    assert!(rt.settle(WAIT), "background work did not finish");
}

/// Replaces the text of the open field and submits it.
fn answer(rt: &mut Runtime, text: &str) {
    rt.act(Action::CursorEnd);
    for _ in 0..200 {
        rt.act(Action::Backspace);
    }
    rt.type_text(text);
    act(rt, &[Action::Submit]);
}

fn rho(s: &str) -> Loss {
    Loss::Zcdp(Rho::parse(s).unwrap())
}

/// The sample's plan as ρ-zCDP (toggled if it is pure) with total ρ = 1/2, typed on
/// the Budget screen.
fn rho_plan(rt: &mut Runtime) {
    act(rt, &[Action::ScreenBudget]);
    if rt.app.session.as_ref().unwrap().definition() == Definition::Pure {
        act(rt, &[Action::ToggleDefinition]);
    }
    act(rt, &[Action::TypeTotal]);
    assert!(
        matches!(
            &rt.app.overlay,
            Some(Overlay::Input(i)) if i.purpose == InputPurpose::TotalEpsilon && i.prompt.starts_with("Total ρ over the levels")
        ),
        "{:?}",
        rt.app.overlay
    );
    answer(rt, "1/2");
    assert!(rt.app.overlay.is_none(), "{:?}", rt.app.overlay);
}

#[test]
fn the_budget_screen_toggles_the_plan_between_epsilon_and_rho() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path());
    act(&mut rt, &[Action::ScreenBudget]);
    let pure_plan = rt.app.session.as_ref().unwrap().plan.clone();
    let pure_text = rt.text(100, 30);
    assert!(pure_text.contains("total ε = 1") && pure_text.contains("s.d./cell"));
    assert!(!pure_text.contains("ρ"), "{pure_text}");

    act(&mut rt, &[Action::ToggleDefinition]);
    let session = rt.app.session.as_ref().unwrap();
    assert_eq!(session.definition(), Definition::Zcdp);
    assert_eq!(session.loss(), rho("1"));
    let text = rt.text(100, 30);
    for expected in [
        "total ρ = 1 (as (ε, δ)-DP: ε = ",
        "at δ = 10⁻¹⁰)",
        "step ρ",
        "σ/cell",
        "discrete Gaussian",
        "total ρ 1",
        "ρ+",
        "type ρ",
        "the plan is now in ρ-zCDP",
    ] {
        assert!(text.contains(expected), "{expected:?} in\n{text}");
    }
    assert!(!text.contains("total ε"), "{text}");
    act(&mut rt, &[Action::Help]);
    let help = rt.text(100, 40);
    assert!(
        help.contains("Raise the selected level's ρ one step"),
        "{help}"
    );
    act(&mut rt, &[Action::Close]);
    assert!(rt.app.overlay.is_none(), "{:?}", rt.app.overlay);

    // The typed budgets are ρ, and a refusal names ρ.
    rho_plan(&mut rt);
    let session = rt.app.session.as_ref().unwrap();
    assert_eq!(session.loss(), rho("1/2"));
    assert!(
        session
            .plan
            .levels()
            .iter()
            .all(|l| l.loss() == Some(&rho("1/6")))
    );
    // (0 is accepted: it leaves the level unmeasured; a negative ρ is refused.)
    act(&mut rt, &[Action::TypeEpsilon]);
    answer(&mut rt, "-1");
    assert!(
        matches!(
            &rt.app.overlay,
            Some(Overlay::Input(i)) if i.prompt.starts_with("ρ for level country")
                && i.error.as_deref().is_some_and(|e| e.contains("ρ \"-1\" is not positive"))
        ),
        "{:?}",
        rt.app.overlay
    );
    act(&mut rt, &[Action::Cancel]);
    assert!(rt.app.overlay.is_none(), "{:?}", rt.app.overlay);

    // Back to pure ε: the values stay, the labels and the noise are pure ε's again.
    act(&mut rt, &[Action::ScreenBudget, Action::TypeTotal]);
    answer(&mut rt, "1");
    act(&mut rt, &[Action::ToggleDefinition]);
    let session = rt.app.session.as_ref().unwrap();
    assert_eq!(session.definition(), Definition::Pure);
    assert_eq!(session.plan.levels(), pure_plan.levels());
    let text = rt.text(100, 30);
    assert!(
        text.contains("total ε = 1 ·") && text.contains("s.d./cell"),
        "{text}"
    );
}

#[test]
fn a_rho_plan_previews_and_its_release_speaks_rho() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path());
    rho_plan(&mut rt);
    act(&mut rt, &[Action::ScreenPreview, Action::Run]);
    let result = rt.app.preview.result.as_ref().expect("a preview result");
    assert!(
        result
            .report
            .levels
            .iter()
            .all(|l| l.budget.loss() == Some(&rho("1/6")))
    );
    let text = rt.text(100, 30);
    assert!(text.contains("level      ρ"), "{text}");

    act(&mut rt, &[Action::ScreenTradeoff]);
    let text = rt.text(100, 30);
    assert!(text.contains("sweeps its ρ from ¼× to 4×"), "{text}");
    act(&mut rt, &[Action::Run]);
    let sweep = rt.app.tradeoff.sweep.as_ref().expect("a sweep");
    assert!(!sweep.points.is_empty());
    let text = rt.text(100, 40);
    assert!(
        text.contains("as ρ(") && text.contains("ρ district"),
        "{text}"
    );
    // The one ε left is the ledger's, which records ε only (see the test below).
    assert!(!text.replace("ε spent", "").contains("ε"), "{text}");
    act(&mut rt, &[Action::ToggleView, Action::Run]);
    let frontier = rt.app.tradeoff.frontier.as_ref().expect("a frontier");
    assert_eq!(
        frontier.frontier.total_epsilon,
        Amount::parse("1/2").unwrap()
    );
    let text = rt.text(100, 40);
    assert!(text.contains("Frontier at ρ = 0.5"), "{text}");

    act(&mut rt, &[Action::ScreenRelease]);
    let text = rt.text(100, 30);
    assert!(text.contains("total ρ = 0.5 (as (ε, δ)-DP: ε = "), "{text}");
    assert!(text.contains("Drawing spends the plan's ρ"), "{text}");
}

/// The end of issue 33's "done when" through the TUI: a ρ plan drawn, approved and
/// exported, with the manifest's privacy block in ρ and one ledger draw.
#[test]
fn a_rho_plan_is_drawn_approved_and_exported() {
    let home = tempfile::tempdir().unwrap();
    let out_parent = tempfile::tempdir().unwrap();
    let out = out_parent.path().join("release-households-rho");
    let mut rt = runtime(home.path());
    rho_plan(&mut rt);
    act(&mut rt, &[Action::ScreenRelease, Action::Draw]);
    assert!(rt.app.undecided_draw(), "{:?}", rt.app.release.error);
    let drawn = rt.app.release.drawn.as_ref().unwrap();
    assert_eq!(drawn.draw.guarantee(), &rho("1/2"));
    assert!(drawn.draw.checks().passed());
    let text = rt.text(100, 30);
    assert!(text.contains("draw of ρ = 0.5"), "{text}");
    act(&mut rt, &[Action::Approve]);
    answer(&mut rt, out.to_str().unwrap());
    let drawn = rt.app.release.drawn.as_ref().unwrap();
    assert!(
        matches!(
            &drawn.decision,
            coco::tui::screens::release::Decision::Exported { .. }
        ),
        "{:?} / {:?}",
        drawn.decision,
        rt.app.message
    );
    let manifest: coco::release::outputs::manifest::Manifest =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest.privacy.definition, Definition::Zcdp);
    assert_eq!(manifest.privacy.rho.as_deref(), Some("0.5"));
    assert!(manifest.checks.consistent && manifest.checks.integral);
    let read = Ledger::at(home.path())
        .read_strict()
        .expect("an intact ledger");
    assert_eq!(read.draws().len(), 1);
    // The status line states the dataset's spending in ρ, with its (ε, δ).
    let status = &rt.app.session.as_ref().unwrap().ledger;
    assert!(status.in_rho());
    assert_eq!(
        status.spent_text(true),
        "0.5 (as (ε, δ)-DP: ε = 6.84 at δ = 1e-10)"
    );
    let text = rt.text(120, 30);
    assert!(text.contains("ρ spent"), "{text}");
}

/// A ρ plan saved from the Budget screen is a `rho = …` plan file, and loading it back
/// (as one `coco plan --rho` writes) gives a ρ plan whatever the session had.
#[test]
fn a_rho_plan_saves_and_loads_as_a_rho_plan_file() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rho-plan.toml");
    let mut rt = runtime(home.path());
    rho_plan(&mut rt);
    act(&mut rt, &[Action::SavePlan]);
    answer(&mut rt, file.to_str().unwrap());
    let toml = std::fs::read_to_string(&file).unwrap();
    assert!(toml.contains("rho = \"1/6\""), "{toml}");
    assert!(!toml.contains("epsilon"), "{toml}");
    act(&mut rt, &[Action::ToggleDefinition]);
    assert_eq!(
        rt.app.session.as_ref().unwrap().definition(),
        Definition::Pure
    );
    act(&mut rt, &[Action::LoadPlan]);
    answer(&mut rt, file.to_str().unwrap());
    let session = rt.app.session.as_ref().unwrap();
    assert_eq!(session.loss(), rho("1/2"));
    assert!(rt.text(100, 30).contains("total ρ = 0.5"));
}
