//! The Release screen's `write-report` key: the public report of the release just
//! exported, written beside its directory (as `coco report RELEASE --out
//! RELEASE-report.html`), and nothing before a release is exported.

use std::path::{Path, PathBuf};
use std::time::Duration;

use coco::tui::AppOptions;
use coco::tui::action::Action;
use coco::tui::runtime::Runtime;

const WAIT: Duration = Duration::from_secs(600);

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
fn the_release_screen_writes_the_public_report_of_the_exported_release() {
    let home = tempfile::tempdir().unwrap();
    let parent = tempfile::tempdir().unwrap();
    let out = parent.path().join("r");
    let report = parent.path().join("r-report.html");
    let mut rt = Runtime::new(AppOptions {
        dataset: Some(PathBuf::from("sample-data/households")),
        home: Some(home.path().to_path_buf()),
        preview_seed: Some(1),
    });
    act(&mut rt, &[]);
    act(&mut rt, &[Action::ScreenRelease, Action::WriteReport]);
    let message = rt.app.message.as_ref().map(|(_, m)| m.clone());
    assert!(
        message
            .as_deref()
            .is_some_and(|m| m.contains("no exported release to report on")),
        "{message:?}"
    );
    act(&mut rt, &[Action::Draw, Action::WriteReport]);
    assert!(!report.exists(), "no report of an undecided draw");
    act(&mut rt, &[Action::Approve]);
    answer(&mut rt, out.to_str().unwrap());
    assert!(out.join("manifest.json").exists());
    act(&mut rt, &[Action::WriteReport]);
    let html = std::fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("{}: {e}; coco says {:?}", report.display(), rt.app.message));
    assert!(html.contains("<meta name=\"coco-report\" content=\"public\">"));
    assert!(html.contains("<section class=\"level\" id=\"level-2\">"));
    assert!(!html.contains("CONFIDENTIAL"));
    // Beside the release, not in it: the release still verifies as written.
    assert!(!Path::new(&out).join("r-report.html").exists());
}
