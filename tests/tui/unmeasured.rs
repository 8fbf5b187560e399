//! Issue 36, item 3: on the Budget screen a level's budget may be typed as 0, which
//! leaves it unmeasured (its regions estimated from their children); the screens show
//! it as "not measured", the total is the measured levels' sum, and the leaf level
//! cannot be left unmeasured. On main, 0 is refused (`ε "0" is not positive`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use coco::release::plan::LevelBudget;
use coco::tui::AppOptions;
use coco::tui::action::Action;
use coco::tui::app::Overlay;
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

#[test]
fn the_budget_screen_leaves_a_level_unmeasured_when_typed_0() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path());
    act(&mut rt, &[Action::ScreenBudget, Action::TypeTotal]);
    answer(&mut rt, "1");
    let before = rt.app.session.as_ref().unwrap().levels_total();
    // The middle level (province) typed as 0.
    act(&mut rt, &[Action::Down, Action::TypeEpsilon]);
    answer(&mut rt, "0");
    assert!(rt.app.overlay.is_none(), "{:?}", rt.app.overlay);
    let session = rt.app.session.as_ref().unwrap();
    assert!(matches!(
        session.plan.levels()[1].budget(),
        LevelBudget::Unmeasured(_)
    ));
    assert!(session.levels_total() < before);
    assert_eq!(session.figures[1].noise_samples, Some(0));
    assert_eq!(session.figures[1].noise_sd, None);
    let screen = rt.text(120, 30);
    assert!(screen.contains("0 (not measured)"), "{screen}");
    // Stepping it up measures it again, at the smallest step.
    act(&mut rt, &[Action::EpsilonUp]);
    assert!(rt.app.session.as_ref().unwrap().plan.levels()[1].is_measured());
    // The leaf level cannot be left unmeasured: refused, naming why.
    act(&mut rt, &[Action::Down, Action::TypeEpsilon]);
    answer(&mut rt, "0");
    assert!(
        matches!(
            &rt.app.overlay,
            Some(Overlay::Input(i)) if i.error.as_deref().is_some_and(|e| e.contains("the leaf level must be measured"))
        ),
        "{:?}",
        rt.app.overlay
    );
    act(&mut rt, &[Action::Cancel]);
    assert!(rt.app.session.as_ref().unwrap().plan.levels()[2].is_measured());
}
