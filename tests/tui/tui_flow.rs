//! The TUI driven by actions, without a terminal: the operator's whole job (edit a
//! budget, preview, draw, approve, export) and what must hold along the way — the
//! ledger records each draw once (pending before it is shown, then its decision), a discard or a quit records the draw,
//! stale results say so, the latest request wins, errors are shown, not crashed on.

use std::path::{Path, PathBuf};
use std::time::Duration;

use coco::data::Dataset;
use coco::privacy::Epsilon;
use coco::release::ledger::{Ledger, LedgerEntry, Status, Tool};
use coco::release::outputs::manifest::Manifest;
use coco::release::outputs::read_back::check_counts;
use coco::release::plan::ReleasePlan;
use coco::release::plan::tuning::Tuning;
use coco::release::transaction::Reservation;
use coco::tui::AppOptions;
use coco::tui::action::Action;
use coco::tui::app::{Confirm, HelpPage, InputPurpose, LoadState, Overlay, Screen, Tone};
use coco::tui::keymap::Key;
use coco::tui::runtime::Runtime;
use coco::tui::screens::release::Decision;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};

const SAMPLE: &str = "sample-data/households";
const WAIT: Duration = Duration::from_secs(600);

fn runtime(home: &Path, dataset: &str) -> Runtime {
    let mut rt = Runtime::new(AppOptions {
        dataset: Some(PathBuf::from(dataset)),
        home: Some(home.to_path_buf()),
        preview_seed: Some(1),
    });
    settle(&mut rt);
    rt
}

fn settle(rt: &mut Runtime) {
    assert!(rt.settle(WAIT), "background work did not finish");
}

fn act(rt: &mut Runtime, actions: &[Action]) {
    for &a in actions {
        rt.act(a);
    }
    settle(rt);
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

/// Every line of the ledger, read fail-closed (any defect fails the test).
fn ledger_lines(home: &Path) -> Vec<LedgerEntry> {
    Ledger::at(home)
        .read_strict()
        .expect("an intact ledger")
        .lines
}

/// One line per draw: the latest line of each id (a TUI draw is recorded as pending
/// before it is shown, then again with the decision).
fn draws(home: &Path) -> Vec<LedgerEntry> {
    let read = Ledger::at(home).read_strict().expect("an intact ledger");
    read.draws().into_iter().cloned().collect()
}

/// The ledger holds exactly one draw, recorded as pending (shown, not decided).
fn assert_one_pending_draw(home: &Path) {
    let lines = ledger_lines(home);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0].status, Status::Pending);
}

fn e(s: &str) -> Epsilon {
    Epsilon::parse(s).unwrap()
}

#[test]
fn edit_preview_draw_approve_and_export() {
    let home = tempfile::tempdir().unwrap();
    let out_parent = tempfile::tempdir().unwrap();
    let out = out_parent.path().join("release-households");
    let mut rt = runtime(home.path(), SAMPLE);
    assert!(rt.app.session.is_some());

    // ε = 0.5 at the leaf level, typed.
    act(
        &mut rt,
        &[
            Action::ScreenBudget,
            Action::Down,
            Action::Down,
            Action::TypeEpsilon,
        ],
    );
    assert!(matches!(
        &rt.app.overlay,
        Some(Overlay::Input(i)) if i.purpose == InputPurpose::LevelEpsilon(2) && i.field.text() == "1/3"
    ));
    answer(&mut rt, "0.5");
    assert!(rt.app.overlay.is_none(), "{:?}", rt.app.overlay);
    let session = rt.app.session.as_ref().unwrap();
    assert_eq!(
        session.plan.levels()[2].loss().unwrap().as_pure().unwrap(),
        &e("0.5")
    );
    assert_eq!(
        session.loss(),
        e("1/3").add(&e("1/3")).add(&e("0.5")).into()
    );

    // A preview of that plan.
    act(&mut rt, &[Action::ScreenPreview, Action::Run]);
    let session = rt.app.session.as_ref().unwrap();
    let result = rt.app.preview.result.as_ref().expect("a preview result");
    assert!(!rt.app.preview.stale(session));
    assert_eq!(result.report.trials, 10);
    assert_eq!(result.report.levels[2].budget, e("0.5").into());
    assert!(result.report.last_trial.is_some());
    assert!(
        result
            .report
            .levels
            .iter()
            .all(|l| l.consistent[0].emd.mean > 0.0)
    );
    assert!(
        ledger_lines(home.path()).is_empty(),
        "previews never touch the ledger"
    );

    // Draw, approve, export.
    act(&mut rt, &[Action::ScreenRelease, Action::Draw]);
    assert!(rt.app.undecided_draw());
    let drawn = rt.app.release.drawn.as_ref().unwrap();
    assert!(drawn.draw.checks().passed());
    assert_eq!(drawn.draw.randomness(), coco::noise::Randomness::Os);
    // Recorded as pending before it was shown, under the id the decision will carry.
    assert_one_pending_draw(home.path());
    let pending_id = ledger_lines(home.path())[0].id.clone();
    act(&mut rt, &[Action::Approve]);
    assert!(matches!(
        &rt.app.overlay,
        Some(Overlay::Input(i)) if i.purpose == InputPurpose::ExportDir
            && i.field.text().starts_with("release-households-")
    ));
    answer(&mut rt, out.to_str().unwrap());
    let drawn = rt.app.release.drawn.as_ref().unwrap();
    assert!(
        matches!(&drawn.decision, Decision::Exported { out: o, .. } if *o == out),
        "{:?} / {:?}",
        drawn.decision,
        rt.app.message
    );
    assert!(
        drawn.pending.is_none(),
        "the pending draw (and the ledger lock) is released once decided"
    );
    assert!(!rt.app.undecided_draw());

    // The export: counts.csv passes the checks read back, the manifest says so.
    let dataset = Dataset::load(Path::new(SAMPLE)).unwrap();
    let manifest: Manifest =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let c = &manifest.checks;
    assert!(c.integral && c.nonnegative && c.group_totals && c.consistent && c.within_max_size);
    assert_eq!(manifest.total_epsilon_exact, "7/6");
    assert!(manifest.for_publication && !manifest.reproducible);
    let mut reader = csv::Reader::from_path(out.join("counts.csv")).unwrap();
    let rows: Vec<[String; 4]> = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            [0, 1, 2, 3].map(|i| r[i].to_string())
        })
        .collect();
    let checks = check_counts(
        dataset.public(),
        rows.iter()
            .map(|r| [r[0].as_str(), r[1].as_str(), r[2].as_str(), r[3].as_str()]),
        manifest.max_size,
    );
    assert!(checks.passed(), "{:?}", checks.problems);
    assert!(out.join("tables/2-district.csv").exists());

    // Exactly one draw in the ledger: its pending line, then the export, one id.
    assert_eq!(ledger_lines(home.path()).len(), 2);
    let lines = draws(home.path());
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].id, pending_id);
    assert_eq!(lines[0].tool, Tool::Tui);
    assert_eq!(lines[0].status, Status::Written);
    assert_eq!(lines[0].randomness, coco::noise::Randomness::Os);
    assert_eq!(lines[0].total, coco::privacy::Loss::Pure(e("7/6")));
    assert_eq!(lines[0].id, manifest.ledger_entry);
    let session = rt.app.session.as_ref().unwrap();
    assert_eq!(session.ledger.spent, Some(e("7/6")));
    assert_eq!(session.ledger.releases, 1);
    assert!(rt.text(100, 30).contains("EXPORTED"));

    // The lock is free: another release could take it now.
    let (tx, rx) = std::sync::mpsc::channel();
    let ledger = Ledger::at(home.path());
    std::thread::spawn(move || {
        let _lock = ledger.lock().unwrap();
        tx.send(()).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the ledger lock was released");

    // Quitting now needs no question.
    act(&mut rt, &[Action::Quit]);
    assert!(rt.app.quit);
}

#[test]
fn a_draw_waiting_for_another_sessions_ledger_says_so_and_goes_on_when_released() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    // Another coco holds the ledger (as a release under way would).
    let ledger = Ledger::at(home.path());
    let held = ledger.lock().unwrap();
    act(&mut rt, &[Action::ScreenRelease]);
    rt.act(Action::Draw);
    // Event-driven: pump until the worker has said it waits (no sleeping on a guess).
    let deadline = std::time::Instant::now() + WAIT;
    let mut frame = String::new();
    while std::time::Instant::now() < deadline {
        rt.pump();
        frame = rt.text(140, 30);
        if frame.contains("waiting for the ledger") {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        frame.contains("waiting for the ledger: another coco session holds it (pid "),
        "{frame}"
    );
    assert!(rt.busy(), "the draw waits");
    drop(held);
    settle(&mut rt);
    assert!(
        rt.app.undecided_draw(),
        "the draw went on once the ledger was released"
    );
    assert_one_pending_draw(home.path());
}

#[test]
fn a_directory_named_with_format_characters_is_shown_escaped() {
    let home = tempfile::tempdir().unwrap();
    let parent = tempfile::tempdir().unwrap();
    // A right-to-left override in the name would reorder what the screen says.
    let dir = parent.path().join("sample\u{202e}txt.exe");
    std::fs::create_dir(&dir).unwrap();
    for entry in std::fs::read_dir(SAMPLE).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    let mut rt = runtime(home.path(), dir.to_str().unwrap());
    act(&mut rt, &[Action::ScreenDataset]);
    let frame = rt.text(200, 40);
    assert!(frame.contains("sample\\u{202e}txt.exe"), "{frame}");
    assert!(!frame.contains('\u{202e}'), "{frame}");
}

#[test]
fn a_discard_is_confirmed_recorded_and_said_to_spend_epsilon() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    act(&mut rt, &[Action::ScreenRelease, Action::Draw]);
    act(&mut rt, &[Action::Discard]);
    assert_eq!(rt.app.overlay, Some(Overlay::Confirm(Confirm::Discard)));
    assert!(rt.text(100, 30).contains("stays"));
    act(&mut rt, &[Action::No]);
    assert!(rt.app.undecided_draw());
    assert_one_pending_draw(home.path());
    act(&mut rt, &[Action::Discard, Action::Yes]);
    assert!(matches!(
        rt.app.release.drawn.as_ref().unwrap().decision,
        Decision::Discarded
    ));
    let lines = draws(home.path());
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].status, Status::Discarded);
    assert_eq!(lines[0].note.as_deref(), Some("discarded by the operator"));
    let text = rt.text(100, 30);
    assert!(text.contains("DISCARDED"), "{text}");
    assert!(text.contains("stays spent"), "{text}");
    // A second draw is possible and is a second charge.
    act(&mut rt, &[Action::Draw]);
    act(&mut rt, &[Action::Discard, Action::Yes]);
    assert_eq!(draws(home.path()).len(), 2);
    assert_eq!(rt.app.session.as_ref().unwrap().ledger.spent, Some(e("2")));
}

#[test]
fn quitting_with_an_undecided_draw_asks_and_records_a_discard() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    act(&mut rt, &[Action::ScreenRelease, Action::Draw]);
    // Opening another dataset is refused meanwhile.
    act(&mut rt, &[Action::OpenDataset]);
    assert!(rt.app.overlay.is_none());
    assert!(matches!(rt.app.message, Some((Tone::Warning, _))));
    act(&mut rt, &[Action::Quit]);
    assert_eq!(
        rt.app.overlay,
        Some(Overlay::Confirm(Confirm::QuitWithDraw))
    );
    assert!(!rt.app.quit);
    let text = rt.text(100, 30);
    assert!(text.contains("records it in the"), "{text}");
    act(&mut rt, &[Action::No]);
    assert!(!rt.app.quit);
    assert_one_pending_draw(home.path());
    act(&mut rt, &[Action::Quit, Action::Yes]);
    assert!(rt.app.quit);
    let lines = draws(home.path());
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].status, Status::Discarded);
    assert_eq!(
        lines[0].note.as_deref(),
        Some("discarded when quitting the TUI")
    );
}

#[test]
fn results_of_an_older_plan_are_stale_and_the_latest_run_wins() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    rt.act(Action::ScreenPreview);
    // A long run, then a short one: the first is cancelled and its result never shown.
    rt.app.preview.trials = 1000;
    rt.act(Action::Run);
    rt.app.preview.trials = 2;
    act(&mut rt, &[Action::Run]);
    let result = rt.app.preview.result.as_ref().unwrap();
    assert_eq!(result.report.trials, 2);
    assert!(!rt.app.preview.stale(rt.app.session.as_ref().unwrap()));
    assert!(!rt.text(100, 30).contains("STALE"));
    // Any plan change makes it stale; running again clears it.
    act(
        &mut rt,
        &[
            Action::ScreenBudget,
            Action::ToggleMethod,
            Action::ScreenPreview,
        ],
    );
    assert!(rt.app.preview.stale(rt.app.session.as_ref().unwrap()));
    assert!(rt.text(100, 30).contains("STALE"));
    act(&mut rt, &[Action::Run]);
    assert!(!rt.app.preview.stale(rt.app.session.as_ref().unwrap()));
    // Cancelling keeps the last result.
    rt.app.preview.trials = 1000;
    rt.act(Action::Run);
    act(&mut rt, &[Action::Cancel]);
    assert!(rt.app.preview.running.is_none());
    assert_eq!(rt.app.preview.result.as_ref().unwrap().report.trials, 2);
    assert_eq!(
        rt.app.message,
        Some((Tone::Info, "preview cancelled".into()))
    );
}

#[test]
fn the_tradeoff_recommendation_can_be_applied_to_the_plan() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    // The screen defaults to the public proxy: the confidential data is chosen.
    act(&mut rt, &[Action::ScreenTradeoff, Action::ChooseProxy]);
    answer(&mut rt, "none");
    act(&mut rt, &[Action::ToggleView, Action::Run]);
    let f = &rt.app.tradeoff.frontier.as_ref().unwrap().frontier;
    let rec = f.recommendation.as_ref().unwrap();
    let budgets = rec.budgets.clone();
    let methods: Vec<coco::estimate::Method> =
        rec.plan.levels().iter().map(|l| l.method()).collect();
    // Computed on the confidential data: applying it asks first; "no" changes nothing.
    let before = rt.app.session.as_ref().unwrap().plan.clone();
    act(&mut rt, &[Action::ApplyRecommendation]);
    assert_eq!(
        rt.app.overlay,
        Some(Overlay::Confirm(Confirm::ApplyConfidentialRecommendation))
    );
    assert!(rt.text(100, 30).contains("CONFIDENTIAL data"));
    act(&mut rt, &[Action::No]);
    assert_eq!(rt.app.session.as_ref().unwrap().plan, before);
    act(&mut rt, &[Action::ApplyRecommendation, Action::Yes]);
    let plan = &rt.app.session.as_ref().unwrap().plan;
    let now: Vec<Option<coco::tradeoff::Amount>> = plan
        .levels()
        .iter()
        .map(|l| l.loss().map(|b| b.amount()))
        .collect();
    assert_eq!(now, budgets);
    assert_eq!(
        plan.levels().iter().map(|l| l.method()).collect::<Vec<_>>(),
        methods
    );
    assert_eq!(plan.tuning(), Tuning::ConfidentialPreviews);
    assert_eq!(rt.app.session.as_ref().unwrap().loss(), e("1").into());
    // The sweep of the leaf level marks the current plan's point.
    act(&mut rt, &[Action::ToggleView, Action::Run]);
    let sweep = rt.app.tradeoff.sweep.as_ref().unwrap();
    assert_eq!(sweep.level, 2);
    assert_eq!(sweep.points.len(), coco::tradeoff::SWEEP_FACTORS.len());
    assert_eq!(
        sweep.points[coco::tui::screens::tradeoff::current_point()].budgets,
        budgets
    );
}

/// Issue 14: the honest path is the easy one. The TUI opens with coco's public default
/// (tuning public-default); a search on the synthetic proxy applies with one key from
/// the Budget screen and keeps the tuning public (proxy); a confidential preview makes
/// the plan's tuning confidential-previews; the ledger and the manifest record it.
#[test]
fn tuning_on_a_proxy_stays_public_and_confidential_previews_are_recorded() {
    let home = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    let session = |rt: &Runtime| rt.app.session.as_ref().unwrap().plan.clone();
    let dataset = Dataset::load(Path::new(SAMPLE)).unwrap();
    let one = e("1");
    let default = coco::release::plan::defaults::public_default(
        &dataset.hierarchy,
        |id| dataset.groups(id),
        &one,
        coco::release::plan::MaxSize::Fixed(10_000),
    )
    .unwrap();
    assert_eq!(session(&rt), default.plan);
    assert_eq!(session(&rt).tuning(), Tuning::PublicDefault);
    // A proxy with another hierarchy is refused by name; the synthetic one opens.
    let taxi = out.path().join("taxi");
    coco::generate::generate_into(coco::generate::Preset::Taxi, &taxi, 1, None, &mut |_, _| {})
        .unwrap();
    act(&mut rt, &[Action::ScreenTradeoff, Action::ChooseProxy]);
    answer(&mut rt, taxi.to_str().unwrap());
    settle(&mut rt);
    let (tone, message) = rt.app.message.clone().unwrap();
    assert_eq!(tone, Tone::Error);
    assert!(message.contains("hierarchy.csv: levels"), "{message}");
    assert!(rt.app.session.as_ref().unwrap().proxy.is_none());
    act(&mut rt, &[Action::ChooseProxy]);
    answer(&mut rt, "synthetic");
    settle(&mut rt);
    assert!(rt.app.session.as_ref().unwrap().proxy.is_some());
    act(&mut rt, &[Action::ToggleView, Action::Run]);
    let text = rt.text(100, 30);
    assert!(text.contains("PUBLIC PROXY"), "{text}");
    assert!(!text.contains("CONFIDENTIAL DIAGNOSTICS"), "{text}");
    // Seen on a proxy only: still the public default.
    assert_eq!(session(&rt).tuning(), Tuning::PublicDefault);
    let rec = rt
        .app
        .tradeoff
        .frontier
        .as_ref()
        .unwrap()
        .frontier
        .recommendation
        .clone();
    let rec = rec.expect("a recommendation on the proxy");
    // The Budget screen shows it beside the plan; one key applies it, no question.
    act(&mut rt, &[Action::ScreenBudget]);
    let text = rt.text(120, 40);
    assert!(text.contains("computed on the synthetic proxy"), "{text}");
    act(&mut rt, &[Action::ApplyRecommendation]);
    assert!(rt.app.overlay.is_none());
    assert_eq!(session(&rt), rec.plan);
    assert_eq!(session(&rt).tuning(), Tuning::Proxy);
    // Drawn now, the ledger and manifest say proxy.
    act(&mut rt, &[Action::ScreenRelease, Action::Draw]);
    act(&mut rt, &[Action::Approve]);
    let dir = out.path().join("r-proxy");
    answer(&mut rt, dir.to_str().unwrap());
    let manifest: Manifest =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest.tuning, Some(Tuning::Proxy));
    assert_eq!(draws(home.path())[0].tuning, Some(Tuning::Proxy));
    // A preview on the confidential data: the plan is tuned on confidential previews
    // from then on, whatever is changed or loaded.
    act(&mut rt, &[Action::ScreenPreview, Action::ChooseProxy]);
    answer(&mut rt, "none");
    act(&mut rt, &[Action::Run]);
    assert!(rt.text(100, 30).contains("CONFIDENTIAL DIAGNOSTICS"));
    assert_eq!(session(&rt).tuning(), Tuning::ConfidentialPreviews);
    act(&mut rt, &[Action::ScreenBudget, Action::MethodsDefault]);
    assert_eq!(session(&rt).tuning(), Tuning::ConfidentialPreviews);
    act(&mut rt, &[Action::ScreenRelease, Action::Draw]);
    act(&mut rt, &[Action::Approve]);
    let dir = out.path().join("r-confidential");
    answer(&mut rt, dir.to_str().unwrap());
    let manifest: Manifest =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest.tuning, Some(Tuning::ConfidentialPreviews));
}

#[test]
fn a_draw_over_the_cap_is_refused_and_spends_nothing() {
    let home = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(home.path());
    let dataset = Dataset::load(Path::new(SAMPLE)).unwrap();
    ledger
        .set_cap(
            &coco::release::ledger::CapKey::Digest(dataset.fingerprint()),
            &coco::release::ledger::CapLimit::Epsilon(e("0.5")),
            None,
        )
        .unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    act(&mut rt, &[Action::ScreenBudget]);
    assert!(rt.text(100, 30).contains("over the cap"));
    act(&mut rt, &[Action::ScreenRelease, Action::Draw]);
    assert!(rt.app.release.drawn.is_none());
    let error = rt.app.release.error.clone().unwrap();
    assert!(
        error.contains("cap for this dataset would be exceeded"),
        "{error}"
    );
    assert!(ledger_lines(home.path()).is_empty());
    // Within the cap it draws.
    act(&mut rt, &[Action::ScreenBudget, Action::TypeTotal]);
    answer(&mut rt, "0.5");
    act(&mut rt, &[Action::ScreenRelease, Action::Draw]);
    assert!(rt.app.undecided_draw());
}

#[test]
fn an_export_into_a_full_directory_is_refused_and_the_draw_stays_undecided() {
    let home = tempfile::tempdir().unwrap();
    let full = tempfile::tempdir().unwrap();
    std::fs::write(full.path().join("keep.txt"), "x").unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    act(&mut rt, &[Action::ScreenRelease, Action::Draw]);
    act(&mut rt, &[Action::Approve]);
    answer(&mut rt, full.path().to_str().unwrap());
    let Some(Overlay::Input(input)) = &rt.app.overlay else {
        panic!("the field stays open: {:?}", rt.app.overlay)
    };
    assert!(
        input
            .error
            .as_ref()
            .unwrap()
            .contains("already exists and is not an empty directory")
    );
    assert!(rt.app.undecided_draw());
    assert_one_pending_draw(home.path());
}

#[test]
fn a_load_error_is_shown_and_another_dataset_can_be_opened() {
    let home = tempfile::tempdir().unwrap();
    let bad = tempfile::tempdir().unwrap();
    std::fs::write(
        bad.path().join("hierarchy.csv"),
        "country,district\nARV,0101\n",
    )
    .unwrap();
    std::fs::write(bad.path().join("groups.csv"), "group_id,region\nH1,0101\n").unwrap();
    let expected = Dataset::load(bad.path()).unwrap_err().to_string();
    let mut rt = runtime(home.path(), bad.path().to_str().unwrap());
    assert!(matches!(&rt.app.load, LoadState::Failed { message, .. } if *message == expected));
    assert!(rt.app.session.is_none());
    // Screen keys explain; the picker opens the sample.
    act(&mut rt, &[Action::ScreenBudget, Action::EpsilonUp]);
    assert!(matches!(rt.app.message, Some((Tone::Warning, _))));
    act(&mut rt, &[Action::OpenDataset]);
    rt.type_text(SAMPLE);
    act(&mut rt, &[Action::Submit]);
    assert!(rt.app.session.is_some());
    assert_eq!(rt.app.load, LoadState::Idle);
    // Remembered as a recent dataset, first.
    let recent = std::fs::read_to_string(home.path().join("recent-datasets.txt")).unwrap();
    let first = recent.lines().next().unwrap();
    assert_eq!(
        Path::new(first),
        std::path::absolute(SAMPLE).unwrap().as_path()
    );
    // A later session offers it in the picker.
    let mut again = runtime(home.path(), SAMPLE);
    act(&mut again, &[Action::OpenDataset, Action::Down]);
    let Some(Overlay::Picker(p)) = &again.app.overlay else {
        panic!("picker")
    };
    assert_eq!(p.field.text(), first);
}

#[test]
fn a_bad_keymap_override_is_reported_and_the_defaults_apply() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("keymap.toml"),
        "[global]\nquit = [\"q\"]\nscreen-budget = [\"hyper-3\"]\n",
    )
    .unwrap();
    let rt = runtime(home.path(), SAMPLE);
    let (tone, text) = rt.app.message.clone().unwrap();
    assert_eq!(tone, Tone::Warning);
    assert!(
        text.starts_with(&format!(
            "{}:3: screen-budget: unknown key \"hyper-3\"",
            home.path().join("keymap.toml").display()
        )),
        "{text}"
    );
    assert!(text.ends_with("using the default keys"));
    assert!(rt.text(100, 30).contains("unknown key"));
    assert_eq!(rt.app.keymap, coco::tui::keymap::Keymap::default());
    // A good override is used, and the screens name the keys it sets.
    std::fs::write(
        home.path().join("keymap.toml"),
        "[global]\nscreen-budget = [\"b\"]\n[release]\ndraw = [\"D\"]\n",
    )
    .unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    assert!(rt.app.message.is_none() || rt.app.message.as_ref().unwrap().0 != Tone::Warning);
    let b = coco::tui::keymap::Key::parse("b").unwrap();
    assert!(rt.key(b));
    assert_eq!(rt.app.screen, Screen::Budget);
    act(&mut rt, &[Action::ScreenRelease]);
    let text = rt.text(100, 30);
    assert!(text.contains("D draws one release"), "{text}");
    assert!(text.contains("D draw "), "the hint bar: {text}");
    assert!(!rt.key(coco::tui::keymap::Key::parse("d").unwrap()));
}

#[test]
fn plans_save_and_load_as_release_toml() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plan.toml");
    let mut rt = runtime(home.path(), SAMPLE);
    act(
        &mut rt,
        &[
            Action::ScreenBudget,
            Action::PresetGeometric,
            Action::ToggleConsistency,
            Action::SavePlan,
        ],
    );
    answer(&mut rt, file.to_str().unwrap());
    let saved = rt.app.session.as_ref().unwrap().plan.clone();
    let read = ReleasePlan::load(&file).unwrap();
    assert_eq!(
        read.levels()
            .iter()
            .map(|l| l.loss().unwrap().as_pure().unwrap())
            .collect::<Vec<_>>(),
        saved
            .levels()
            .iter()
            .map(|l| l.loss().unwrap().as_pure().unwrap())
            .collect::<Vec<_>>()
    );
    assert_eq!(read.consistency(), saved.consistency());
    // Change the plan, load the file back.
    act(&mut rt, &[Action::PresetUniform, Action::LoadPlan]);
    answer(&mut rt, file.to_str().unwrap());
    let loaded = &rt.app.session.as_ref().unwrap().plan;
    assert_eq!(
        loaded
            .levels()
            .iter()
            .map(|l| l.loss().unwrap().as_pure().unwrap())
            .collect::<Vec<_>>(),
        saved
            .levels()
            .iter()
            .map(|l| l.loss().unwrap().as_pure().unwrap())
            .collect::<Vec<_>>()
    );
    // A plan for another hierarchy is refused with the file and line.
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "max_size = 100\n\n[[level]]\nname = \"nation\"\nepsilon = 1.0\nmethod = \"hc\"\n",
    )
    .unwrap();
    act(&mut rt, &[Action::LoadPlan]);
    answer(&mut rt, bad.to_str().unwrap());
    let Some(Overlay::Input(input)) = &rt.app.overlay else {
        panic!("the field stays open")
    };
    let error = input.error.clone().unwrap();
    assert!(
        error.starts_with(&format!(
            "{}:3: level \"nation\" is not in the hierarchy",
            bad.display()
        )),
        "{error}"
    );
}

#[test]
fn budget_keys_step_toggle_and_estimate_k() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    act(
        &mut rt,
        &[
            Action::ScreenBudget,
            Action::Down,
            Action::Down,
            Action::EpsilonUp,
        ],
    );
    let s = rt.app.session.as_ref().unwrap();
    assert_eq!(
        s.plan.levels()[2].loss().unwrap().as_pure().unwrap(),
        &e("0.35")
    );
    // The public default's tail, then hg, hc, and a tail again.
    let method = |rt: &Runtime| rt.app.session.as_ref().unwrap().plan.levels()[2].method();
    let default_tail = coco::estimate::Method::HcTail(coco::estimate::Tail::AUTO);
    assert_eq!(method(&rt), default_tail);
    act(&mut rt, &[Action::ToggleMethod]);
    assert_eq!(method(&rt), coco::estimate::Method::Hg);
    act(&mut rt, &[Action::ToggleMethod]);
    assert_eq!(method(&rt), coco::estimate::Method::Hc);
    act(&mut rt, &[Action::ToggleMethod]);
    assert_eq!(method(&rt), default_tail);
    // The tail's parameters are typed: L, or L,m; a bad value keeps the field open.
    act(&mut rt, &[Action::SetTail]);
    answer(&mut rt, "10000");
    assert!(
        matches!(&rt.app.overlay, Some(Overlay::Input(i)) if i.error.as_ref().unwrap().contains("with K = 10000: expected L below K"))
    );
    // m out of range: the plan model's message, naming the level.
    answer(&mut rt, "50,0");
    assert!(
        matches!(&rt.app.overlay, Some(Overlay::Input(i)) if i.error.as_deref() == Some("level \"district\": a tail of 0 groups: expected a whole number from 1 to 10000000")),
        "{:?}",
        rt.app.overlay
    );
    answer(&mut rt, "50,200");
    let tail = |above, groups| {
        coco::estimate::Method::HcTail(coco::estimate::Tail {
            above,
            groups: coco::estimate::TailLength::Fixed(
                coco::estimate::TailGroups::new(groups).unwrap(),
            ),
        })
    };
    assert_eq!(
        rt.app.session.as_ref().unwrap().plan.levels()[2].method(),
        tail(50, 200)
    );
    act(&mut rt, &[Action::SetTail]);
    // L alone: each region's list sized from its own head, as the default's.
    answer(&mut rt, "30");
    assert_eq!(
        rt.app.session.as_ref().unwrap().plan.levels()[2].method(),
        coco::estimate::Method::HcTail(coco::estimate::Tail {
            above: 30,
            groups: coco::estimate::TailLength::Auto
        })
    );
    act(&mut rt, &[Action::SetTail]);
    answer(&mut rt, "30,auto");
    assert_eq!(
        rt.app.session.as_ref().unwrap().plan.levels()[2].method(),
        coco::estimate::Method::HcTail(coco::estimate::Tail {
            above: 30,
            groups: coco::estimate::TailLength::Auto
        })
    );
    act(&mut rt, &[Action::SetTail]);
    answer(&mut rt, "none");
    assert_eq!(
        rt.app.session.as_ref().unwrap().plan.levels()[2].method(),
        coco::estimate::Method::Hc
    );
    act(&mut rt, &[Action::ToggleMethod]);
    act(
        &mut rt,
        &[
            Action::ToggleMethod,
            Action::ToggleMerge,
            Action::EstimateMaxSize,
        ],
    );
    answer(&mut rt, "0.01");
    let s = rt.app.session.as_ref().unwrap();
    assert_eq!(s.plan.levels()[2].method(), coco::estimate::Method::Hg);
    assert_eq!(s.plan.merge(), coco::consistency::MergeRule::Average);
    assert_eq!(
        s.loss(),
        e("1/3")
            .add(&e("1/3"))
            .add(&e("0.35"))
            .add(&e("0.01"))
            .into()
    );
    act(&mut rt, &[Action::SetMaxSize]);
    answer(&mut rt, "0");
    assert!(
        matches!(&rt.app.overlay, Some(Overlay::Input(i)) if i.error.as_ref().unwrap().contains("expected a whole number from 1"))
    );
    answer(&mut rt, "5,000");
    assert_eq!(
        rt.app.session.as_ref().unwrap().plan.max_size(),
        &coco::release::plan::MaxSize::Fixed(5000)
    );
}

/// Problem 7 of the accounting issue: a tail above 20 set on the Budget screen, then K
/// lowered to 10, was accepted, drawn, and saved as a plan that failed to load. Now the
/// plan model refuses the edit that would break the rule, whichever comes first, with
/// the rule's message, and what the editor holds always saves and loads back.
#[test]
fn k_below_a_tail_is_refused_whichever_comes_first() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    let plan = |rt: &Runtime| rt.app.session.as_ref().unwrap().plan.clone();
    let error = |rt: &Runtime| match &rt.app.overlay {
        Some(Overlay::Input(i)) => i.error.clone().unwrap_or_default(),
        _ => String::new(),
    };
    let fixed = coco::release::plan::MaxSize::Fixed;
    // Tail first, then K.
    act(
        &mut rt,
        &[
            Action::ScreenBudget,
            Action::Down,
            Action::Down,
            Action::SetTail,
        ],
    );
    answer(&mut rt, "20");
    let before = plan(&rt);
    act(&mut rt, &[Action::SetMaxSize]);
    answer(&mut rt, "10");
    assert!(
        error(&rt).contains("a tail from L = 20 with K = 10: expected L below K"),
        "{}",
        error(&rt)
    );
    act(&mut rt, &[Action::Cancel]);
    assert_eq!(
        plan(&rt),
        before,
        "a refused edit leaves the plan as it was"
    );
    assert_eq!(plan(&rt).max_size(), &fixed(10_000));
    // K first, then the tail (every level's default tail taken away first).
    act(&mut rt, &[Action::SetTail]);
    answer(&mut rt, "none");
    for _ in 0..2 {
        act(&mut rt, &[Action::Up, Action::SetTail]);
        answer(&mut rt, "none");
    }
    act(&mut rt, &[Action::Down, Action::Down]);
    act(&mut rt, &[Action::SetMaxSize]);
    answer(&mut rt, "10");
    assert_eq!(plan(&rt).max_size(), &fixed(10));
    act(&mut rt, &[Action::SetTail]);
    answer(&mut rt, "20");
    assert!(
        error(&rt).contains("a tail from L = 20 with K = 10: expected L below K"),
        "{}",
        error(&rt)
    );
    act(&mut rt, &[Action::Cancel]);
    assert_eq!(plan(&rt).levels()[2].method(), coco::estimate::Method::Hc);
    // A tail below K is fine; the plan saves and loads back as it is.
    act(&mut rt, &[Action::SetTail]);
    answer(&mut rt, "5");
    let file = dir.path().join("plan.toml");
    act(&mut rt, &[Action::SavePlan]);
    answer(&mut rt, file.to_str().unwrap());
    let loaded = ReleasePlan::load(&file).unwrap();
    let dataset = Dataset::load(Path::new(SAMPLE)).unwrap();
    loaded.validate(&dataset.hierarchy, &file).unwrap();
    assert_eq!(loaded, plan(&rt));
}

#[test]
fn a_stop_signal_records_an_undecided_draw() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    act(&mut rt, &[Action::ScreenRelease, Action::Draw]);
    assert!(rt.app.undecided_draw());
    rt.stop();
    assert!(rt.app.quit);
    // What the terminal loop does next: wait for the ledger write.
    rt.shutdown();
    let lines = draws(home.path());
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].status, Status::Discarded);
    assert_eq!(
        lines[0].note.as_deref(),
        Some("discarded: coco was stopped before the operator decided")
    );
}

#[test]
fn results_for_a_replaced_dataset_are_never_shown() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    // A long preview, then the same dataset opened again: the old run is dropped.
    rt.act(Action::ScreenPreview);
    rt.app.preview.trials = 1000;
    rt.act(Action::Run);
    rt.act(Action::OpenDataset);
    rt.type_text(SAMPLE);
    act(&mut rt, &[Action::Submit]);
    assert!(rt.app.session.is_some());
    assert!(rt.app.preview.result.is_none());
    assert!(rt.app.preview.running.is_none());
}

#[test]
fn the_ledger_is_read_again_when_its_screens_are_shown() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    assert_eq!(rt.app.session.as_ref().unwrap().ledger.releases, 0);
    // Another coco draws and discards meanwhile.
    let dataset = std::sync::Arc::new(Dataset::load(Path::new(SAMPLE)).unwrap());
    let plan = rt.app.session.as_ref().unwrap().plan.clone();
    let ledger = Ledger::at(home.path());
    Reservation::open(&ledger, dataset, plan, Tool::Release, Default::default())
        .unwrap()
        .draw(
            &coco::noise::NoiseSource::from_os().unwrap(),
            &Default::default(),
        )
        .unwrap()
        .discard("test")
        .unwrap();
    act(&mut rt, &[Action::ScreenRelease]);
    let status = &rt.app.session.as_ref().unwrap().ledger;
    assert_eq!(status.releases, 1);
    assert_eq!(status.spent, Some(e("1")));
    assert!(
        rt.text(100, 30)
            .contains("ε spent on this dataset 1 in 1 draw(s)")
    );
}

#[test]
fn a_draw_cancelled_after_it_was_recorded_is_recorded_as_discarded() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    rt.act(Action::ScreenRelease);
    rt.act(Action::Draw);
    // The draw job records the pending line before it reports; cancel only then.
    let deadline = std::time::Instant::now() + WAIT;
    while Ledger::at(home.path())
        .read()
        .map_or(true, |r| r.lines.is_empty())
    {
        assert!(std::time::Instant::now() < deadline, "no pending line");
        std::thread::sleep(Duration::from_millis(5));
    }
    act(&mut rt, &[Action::Cancel]);
    assert!(
        rt.app.release.drawn.is_none(),
        "a cancelled draw is never shown"
    );
    let message = rt
        .app
        .message
        .as_ref()
        .map(|(_, m)| m.clone())
        .unwrap_or_default();
    assert!(
        message.contains("recorded as discarded") && message.contains("stays spent"),
        "{message}"
    );
    assert!(!message.contains("nothing was shown or recorded"));
    let lines = draws(home.path());
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].status, Status::Discarded);
    assert!(
        lines[0]
            .note
            .as_deref()
            .unwrap()
            .contains("cancelled by the operator"),
        "{:?}",
        lines[0].note
    );
    assert_eq!(rt.app.session.as_ref().unwrap().ledger.spent, Some(e("1")));
    // The lock is free again: a new draw can be made.
    act(&mut rt, &[Action::Draw]);
    assert!(rt.app.undecided_draw());
}

/// Issue 14 (item 6): the frontier of a plain-hc plan on the sample, 3 trials per point,
/// recommended allocations that bottom-up beat at every level (1.66×, 1.53×, 1.54× with
/// seed 1). A recommendation must beat bottom-up somewhere, by more than its noise.
#[test]
fn the_frontier_never_recommends_a_plan_bottom_up_beats_everywhere() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hc.toml");
    let mut text = String::from("max_size = 10000\n");
    for level in ["country", "province", "district"] {
        text.push_str(&format!(
            "\n[[level]]\nname = \"{level}\"\nepsilon = \"1/3\"\nmethod = \"hc\"\n"
        ));
    }
    std::fs::write(&file, text).unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    act(&mut rt, &[Action::ScreenBudget, Action::LoadPlan]);
    answer(&mut rt, file.to_str().unwrap());
    act(
        &mut rt,
        &[Action::ScreenTradeoff, Action::ToggleView, Action::Run],
    );
    let f = &rt.app.tradeoff.frontier.as_ref().unwrap().frontier;
    let rec = f.recommendation.as_ref().expect("a recommendation");
    assert!(
        rec.ratios.iter().any(|r| *r < 1.0),
        "bottom-up beats the recommendation at every level: {:?}",
        rec.ratios
    );
    // Beyond the noise, against every bottom-up variant drawn, and shown with it.
    for (method, bu) in &f.bottom_up_variants {
        assert!(
            coco::tradeoff::beats_somewhere(&rec.consistent, bu),
            "bottom-up with {method} leaves: {bu:?} against {:?}",
            rec.consistent
        );
    }
    assert!(rec.ratio_se.iter().all(|se| *se > 0.0));
    let text = rt.text(120, 40);
    assert!(text.contains("×±"), "{text}");
}

/// A key as the terminal reports it.
fn key(code: KeyCode, modifiers: KeyModifiers) -> Key {
    Key::new(code, modifiers)
}

fn ctrl(c: char) -> Key {
    key(KeyCode::Char(c), KeyModifiers::CONTROL)
}

#[test]
fn ctrl_c_interrupts_records_an_undecided_draw_and_cancels_a_field() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    // In a text field Ctrl-C cancels the field, as in a shell.
    act(&mut rt, &[Action::ScreenBudget, Action::TypeEpsilon]);
    assert!(rt.key(ctrl('c')));
    assert!(rt.app.overlay.is_none());
    assert!(!rt.app.quit);
    // Elsewhere it stops coco at once, as SIGINT does: an undecided draw is recorded
    // as discarded (no question), and the exit status will be 130.
    act(&mut rt, &[Action::ScreenRelease, Action::Draw]);
    assert!(rt.app.undecided_draw());
    assert!(rt.key(ctrl('c')));
    assert!(rt.app.quit && rt.app.interrupted);
    assert!(rt.app.overlay.is_none());
    rt.shutdown();
    let lines = draws(home.path());
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].status, Status::Discarded);
    assert_eq!(
        coco::tui::Exit::Interrupted {
            signal: signal_hook::consts::SIGINT
        }
        .code(),
        130
    );
    // From a question too.
    let mut rt = runtime(home.path(), SAMPLE);
    act(&mut rt, &[Action::Help]);
    assert!(rt.key(ctrl('c')));
    assert!(rt.app.interrupted);
}

#[test]
fn esc_stops_loading_a_dataset() {
    let home = tempfile::tempdir().unwrap();
    // Not settled: the load is under way until the worker's answer is received.
    let mut rt = Runtime::new(AppOptions {
        dataset: Some(PathBuf::from(SAMPLE)),
        home: Some(home.path().to_path_buf()),
        preview_seed: Some(1),
    });
    assert!(rt.app.loading());
    assert!(rt.text(100, 30).contains("esc stops loading"));
    assert!(rt.key(key(KeyCode::Esc, KeyModifiers::NONE)));
    assert!(!rt.app.loading());
    settle(&mut rt);
    assert!(rt.app.session.is_none(), "a stopped load is never opened");
}

#[test]
fn a_drawn_or_drawing_release_counts_as_spent_in_the_status_bar() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    rt.act(Action::ScreenRelease);
    rt.act(Action::Draw);
    // Reserved, not yet recorded: said beside what is spent.
    let frame = rt.text(100, 30);
    assert!(frame.contains("ε spent 0 + 1 being drawn"), "{frame}");
    settle(&mut rt);
    assert!(rt.app.undecided_draw());
    let frame = rt.text(100, 30);
    assert!(frame.contains("ε spent 1 (1 pending)"), "{frame}");
    act(&mut rt, &[Action::Discard, Action::Yes]);
    let frame = rt.text(100, 30);
    assert!(
        frame.contains("ε spent 1 │") || frame.contains("ε spent 1\n"),
        "{frame}"
    );
    assert!(!frame.contains("pending)"), "{frame}");
}

#[test]
fn a_draw_in_progress_says_how_long_it_has_left() {
    use coco::tui::screens::release::Busy;
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    rt.act(Action::ScreenRelease);
    rt.app.release.busy = Some(Busy::Drawing {
        progress: Some((250, 1_000)),
        waiting: None,
        cancelled: false,
    });
    rt.app.release.drawing_since = Some(std::time::Instant::now() - Duration::from_secs(10));
    let frame = rt.text(160, 30);
    assert!(
        frame.contains("250 of 1,000 regions · 10 s · about 30 s left at this pace"),
        "{frame}"
    );
    rt.app.release.busy = None;
}

#[test]
fn epsilon_reads_as_a_short_decimal_and_exactly_on_demand() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    act(&mut rt, &[Action::ScreenBudget, Action::TypeTotal]);
    answer(&mut rt, "8503/3000");
    let frame = rt.text(100, 30);
    assert!(frame.contains("total ε = ≈2.834"), "{frame}");
    assert!(!frame.contains("8503/3000"), "{frame}");
    // The exact value on demand, everywhere at once.
    act(&mut rt, &[Action::ToggleExact]);
    let frame = rt.text(100, 30);
    assert!(frame.contains("total ε = 8503/3000"), "{frame}");
    // Typing starts from the exact value.
    act(&mut rt, &[Action::ToggleExact, Action::TypeEpsilon]);
    let Some(Overlay::Input(input)) = &rt.app.overlay else {
        panic!("the ε field is open")
    };
    assert_eq!(input.field.text(), "8503/9000");
}

#[test]
fn typed_paths_resolve_complete_and_saving_over_a_file_asks() {
    let home = tempfile::tempdir().unwrap();
    let start = tempfile::tempdir().unwrap();
    std::fs::create_dir(start.path().join("plans")).unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    rt.app.start_dir = start.path().to_path_buf();
    act(&mut rt, &[Action::ScreenBudget, Action::SavePlan]);
    rt.act(Action::DeleteToStart);
    // Tab completes the directory; the field shows the path it will use.
    rt.type_text("pl");
    rt.act(Action::Complete);
    rt.type_text("a.toml");
    let resolved = start.path().join("plans/a.toml");
    let frame = rt.text(100, 30);
    assert!(frame.contains("> plans/a.toml"), "{frame}");
    assert!(
        frame.contains(&format!("→ {}", resolved.display())),
        "{frame}"
    );
    act(&mut rt, &[Action::Submit]);
    assert!(resolved.is_file());
    assert!(
        matches!(&rt.app.message, Some((Tone::Info, m)) if *m == format!("plan saved to {}", resolved.display()))
    );
    // Saving over it asks; no goes back to the name, yes writes.
    std::fs::write(&resolved, "kept").unwrap();
    act(&mut rt, &[Action::SavePlan, Action::Submit]);
    assert_eq!(
        rt.app.overlay,
        Some(Overlay::Confirm(Confirm::OverwritePlan(resolved.clone())))
    );
    act(&mut rt, &[Action::No]);
    assert!(
        matches!(&rt.app.overlay, Some(Overlay::Input(i)) if i.purpose == InputPurpose::SavePlan)
    );
    assert_eq!(std::fs::read_to_string(&resolved).unwrap(), "kept");
    act(&mut rt, &[Action::Submit, Action::Yes]);
    assert!(ReleasePlan::load(&resolved).is_ok());
    // `~` is the home directory; loading resolves the same way.
    act(&mut rt, &[Action::LoadPlan]);
    rt.act(Action::DeleteToStart);
    rt.type_text("plans/a.toml");
    act(&mut rt, &[Action::Submit]);
    assert!(
        matches!(&rt.app.message, Some((Tone::Info, m)) if m.starts_with("plan loaded from /"))
    );
}

#[test]
fn text_fields_edit_by_word_and_place_the_cursor_after_wide_characters() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    act(&mut rt, &[Action::ScreenHierarchy, Action::Search]);
    rt.type_text("Vessa North");
    assert!(rt.key(ctrl('w')));
    let text = |rt: &Runtime| match &rt.app.overlay {
        Some(Overlay::Input(i)) => i.field.text().to_string(),
        _ => panic!("the search field is open"),
    };
    assert_eq!(text(&rt), "Vessa ");
    assert!(rt.key(ctrl('u')));
    assert_eq!(text(&rt), "");
    // Two cells per character: the cursor is drawn after both.
    rt.type_text("東京");
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 30)).unwrap();
    terminal.draw(|f| rt.render(f)).unwrap();
    let cursor = terminal.get_cursor_position().unwrap();
    let buffer = terminal.backend().buffer();
    let area = buffer.area;
    let at = (0..area.height)
        .flat_map(|y| (0..area.width).map(move |x| (x, y)))
        .find(|&(x, y)| buffer[(x, y)].symbol() == "東")
        .expect("the typed text is shown");
    assert_eq!((cursor.x, cursor.y), (at.0 + 4, at.1));
}

#[test]
fn a_preview_says_what_ran_and_that_a_tail_saturated() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    // A tail of 5 groups above size 2: saturated at the root.
    act(&mut rt, &[Action::ScreenBudget, Action::SetTail]);
    answer(&mut rt, "2,5");
    act(&mut rt, &[Action::ScreenPreview, Action::Run]);
    let frame = rt.text(120, 40);
    assert!(frame.contains("country: the tail is saturated"), "{frame}");
    assert!(frame.contains("consistent = wls"), "{frame}");
    // `naive` on a level: wls cannot run, topdown does, and the screen says so.
    let plan = dir.path().join("naive.toml");
    std::fs::write(
        &plan,
        "max_size = 10000\nconsistency = \"wls\"\n\n\
         [[level]]\nname = \"country\"\nepsilon = \"1/3\"\nmethod = \"hc\"\n\n\
         [[level]]\nname = \"province\"\nepsilon = \"1/3\"\nmethod = \"naive\"\n\n\
         [[level]]\nname = \"district\"\nepsilon = \"1/3\"\nmethod = \"hc\"\n",
    )
    .unwrap();
    act(&mut rt, &[Action::ScreenBudget, Action::LoadPlan]);
    answer(&mut rt, plan.to_str().unwrap());
    act(&mut rt, &[Action::ScreenPreview, Action::Run]);
    let frame = rt.text(120, 40);
    let words = frame.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("consistent = topdown (weighted)"), "{frame}");
    assert!(words.contains("used \"topdown\" instead"), "{frame}");
}

/// The Release screen exports in the format chosen with `f`, as `coco release --format`
/// does: Parquet alone, then both, each listed in the manifest and said on screen.
#[test]
fn the_export_format_is_chosen_on_the_release_screen() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    act(&mut rt, &[Action::ScreenRelease, Action::Draw]);
    assert!(
        rt.text(120, 40)
            .contains("exports it in CSV (f changes the format)")
    );
    act(&mut rt, &[Action::ToggleFormat]);
    assert!(rt.text(120, 40).contains("exports it in Parquet"));
    act(&mut rt, &[Action::Approve]);
    let Some(Overlay::Input(input)) = &rt.app.overlay else {
        panic!("the export field is open")
    };
    assert!(input.prompt.contains("in Parquet"), "{}", input.prompt);
    let out = home.path().join("pq");
    answer(&mut rt, out.to_str().unwrap());
    let drawn = rt.app.release.drawn.as_ref().unwrap();
    assert!(
        matches!(&drawn.decision, Decision::Exported { .. }),
        "{:?}",
        rt.app.message
    );
    let files = |dir: &Path| {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        files(&out),
        [
            "README.txt",
            "counts.parquet",
            "manifest.json",
            "summary.parquet",
            "tables",
            "uncertainty.parquet"
        ]
    );
    assert_eq!(
        files(&out.join("tables")),
        [
            "0-country-margins.parquet",
            "0-country.parquet",
            "1-province-margins.parquet",
            "1-province.parquet",
            "2-district-margins.parquet",
            "2-district.parquet"
        ]
    );
    let manifest: Manifest =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert!(manifest.outputs.iter().any(|f| f.path == "counts.parquet"));
    // The export writes the codebook too: the one `coco verify` expects for its manifest.
    assert!(manifest.outputs.iter().any(|f| f.path == "README.txt"));
    assert_eq!(
        std::fs::read_to_string(out.join("README.txt")).unwrap(),
        coco::release::outputs::codebook::render(&manifest)
    );
    assert!(
        rt.text(120, 40)
            .contains("in Parquet · manifest checks all passed")
    );

    // Both formats: every CSV file beside its Parquet twin.
    act(&mut rt, &[Action::ToggleFormat, Action::Draw]);
    act(&mut rt, &[Action::Approve]);
    let out = home.path().join("both");
    answer(&mut rt, out.to_str().unwrap());
    let names = files(&out);
    assert!(
        names.contains(&"counts.csv".to_string()) && names.contains(&"counts.parquet".to_string()),
        "{names:?}"
    );
    // Each level's table and its margins, in both formats.
    assert_eq!(files(&out.join("tables")).len(), 12);
    assert!(rt.text(120, 40).contains("in CSV and Parquet"));
    // And round to CSV again.
    act(&mut rt, &[Action::ToggleFormat]);
    assert_eq!(
        rt.app.release.format,
        coco::release::outputs::export::OutputFormat::Csv
    );
}

/// Issue 23, problem 6: `r` pressed while the proxy is still opening never runs the
/// preview on the confidential data: it waits for the proxy and runs on it. Before, it
/// ran on the confidential data while the status line named the proxy.
#[test]
fn a_run_asked_for_while_the_proxy_opens_waits_for_it() {
    use coco::tradeoff::PreviewData;
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    rt.act(Action::ScreenPreview);
    rt.act(Action::ChooseProxy);
    rt.act(Action::CursorEnd);
    for _ in 0..20 {
        rt.act(Action::Backspace);
    }
    rt.type_text("synthetic");
    // Submitted, not settled: the proxy is being built in the background.
    rt.act(Action::Submit);
    assert!(rt.app.proxy.opening.is_some());
    rt.act(Action::Run);
    assert!(
        rt.app
            .preview
            .running
            .as_ref()
            .is_none_or(|r| r.data != PreviewData::Confidential),
        "a preview started on the confidential data while the proxy opened"
    );
    // The same on the Trade-off screen.
    rt.act(Action::ScreenTradeoff);
    rt.act(Action::Run);
    assert!(
        rt.app
            .tradeoff
            .sweep_run
            .as_ref()
            .is_none_or(|r| r.data != PreviewData::Confidential)
    );
    settle(&mut rt);
    let result = rt
        .app
        .preview
        .result
        .as_ref()
        .expect("run once the proxy opened");
    assert!(
        matches!(result.data, PreviewData::Proxy { .. }),
        "{:?}",
        result.data
    );
    assert!(rt.app.tradeoff.sweep.is_some(), "the queued sweep ran too");
    let session = rt.app.session.as_ref().unwrap();
    assert!(!session.confidential_previews);
    assert_eq!(session.plan.tuning(), Tuning::PublicDefault);
}

/// Issue 23, problem 6: the Preview and Trade-off screens default to the public proxy;
/// their own hint ("press r") no longer makes the plan `confidential-previews`.
#[test]
fn previews_default_to_the_public_proxy() {
    use coco::tradeoff::PreviewData;
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    act(&mut rt, &[Action::ScreenPreview]);
    let text = rt.text(100, 30);
    assert!(text.contains("data: synthetic proxy, public"), "{text}");
    assert!(!text.contains("CONFIDENTIAL DIAGNOSTICS"), "{text}");
    act(&mut rt, &[Action::Run]);
    let result = rt.app.preview.result.as_ref().expect("a preview");
    assert!(matches!(result.data, PreviewData::Proxy { .. }));
    assert!(rt.text(100, 30).contains("PUBLIC PROXY"));
    act(&mut rt, &[Action::ScreenTradeoff, Action::Run]);
    assert!(matches!(
        rt.app.tradeoff.sweep.as_ref().unwrap().data,
        PreviewData::Proxy { .. }
    ));
    assert_eq!(
        rt.app.session.as_ref().unwrap().plan.tuning(),
        Tuning::PublicDefault
    );
    // The confidential data only when chosen, and then the plan says so.
    act(&mut rt, &[Action::ScreenPreview, Action::ChooseProxy]);
    answer(&mut rt, "none");
    act(&mut rt, &[Action::Run]);
    assert_eq!(
        rt.app.session.as_ref().unwrap().plan.tuning(),
        Tuning::ConfidentialPreviews
    );
}

/// Issue 23, problem 6: a K typed after the Dataset screen showed the largest true size
/// marks the plan; K estimated privately does not.
#[test]
fn a_k_typed_after_confidential_figures_taints_the_tuning() {
    let home = tempfile::tempdir().unwrap();
    // The app opens on the Dataset screen, which shows the largest true size.
    let mut rt = runtime(home.path(), SAMPLE);
    assert!(rt.text(100, 30).contains("largest*"));
    act(&mut rt, &[Action::ScreenBudget, Action::EstimateMaxSize]);
    answer(&mut rt, "0.01");
    let plan = |rt: &Runtime| rt.app.session.as_ref().unwrap().plan.clone();
    assert_eq!(plan(&rt).tuning(), Tuning::Public);
    act(&mut rt, &[Action::SetMaxSize]);
    answer(&mut rt, "2852");
    assert_eq!(plan(&rt).tuning(), Tuning::ConfidentialPreviews);
    let (tone, message) = rt.app.message.clone().unwrap();
    assert_eq!(tone, Tone::Warning);
    assert!(message.contains("confidential-previews"), "{message}");
    assert!(rt.text(100, 30).contains("tuning confidential-previews"));
}

/// Issue 23, problem 6: after applying a recommendation computed on a proxy, the
/// screens show the plan's real tuning, not "public tuning", when confidential results
/// were shown before.
#[test]
fn an_applied_recommendation_shows_the_plans_real_tuning() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    act(&mut rt, &[Action::ScreenPreview, Action::ChooseProxy]);
    answer(&mut rt, "none");
    act(&mut rt, &[Action::Run]);
    act(&mut rt, &[Action::ChooseProxy]);
    answer(&mut rt, "synthetic");
    act(
        &mut rt,
        &[Action::ScreenTradeoff, Action::ToggleView, Action::Run],
    );
    assert!(
        rt.app
            .tradeoff
            .frontier
            .as_ref()
            .unwrap()
            .frontier
            .recommendation
            .is_some()
    );
    act(
        &mut rt,
        &[Action::ScreenBudget, Action::ApplyRecommendation],
    );
    assert_eq!(
        rt.app.session.as_ref().unwrap().plan.tuning(),
        Tuning::ConfidentialPreviews
    );
    let text = rt.text(120, 40).replace('\n', " ");
    assert!(!text.contains("public tuning"), "{text}");
    assert!(
        text.contains("the plan's tuning: confidential-previews"),
        "{text}"
    );
    assert!(text.contains("tuning confidential-previews"), "{text}");
}

/// Issue 23, problem 9: the TUI tightens a home left readable by others, says so, and
/// writes its list of recent datasets readable by its owner only.
#[test]
fn the_tui_keeps_its_home_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
    let rt = runtime(&home, SAMPLE);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&home), 0o700);
    assert_eq!(mode(&home.join("recent-datasets.txt")), 0o600);
    let (tone, message) = rt.app.message.clone().unwrap();
    assert_eq!(tone, Tone::Warning);
    assert!(
        message.contains("mode 0755") && message.contains("now 0700"),
        "{message}"
    );
    // A fresh home the TUI creates is private too.
    let fresh = dir.path().join("fresh");
    drop(rt);
    let _rt = runtime(&fresh, SAMPLE);
    assert_eq!(mode(&fresh), 0o700);
    assert_eq!(mode(&fresh.join("recent-datasets.txt")), 0o600);
}

/// `?` then `g` shows the glossary, every entry of it within reach of the scroll keys;
/// `g` again shows the keys, each page from its top; the help says where the glossary is.
#[test]
fn the_help_leads_to_the_glossary_and_back() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = runtime(home.path(), SAMPLE);
    rt.act(Action::ScreenPreview);
    assert!(rt.key(Key::parse("?").unwrap()));
    let keys = rt.text(100, 30);
    assert!(keys.contains("g glossary"), "{keys}");
    assert!(rt.key(Key::parse("down").unwrap()));
    assert!(rt.key(Key::parse("g").unwrap()));
    assert_eq!(
        rt.app.overlay,
        Some(Overlay::Help {
            page: HelpPage::Glossary,
            scroll: 0
        })
    );
    let mut seen = String::new();
    for _ in 0..30 {
        seen.push_str(&rt.text(100, 30));
        rt.act(Action::PageDown);
    }
    for t in coco::glossary::GLOSSARY {
        assert!(seen.contains(t.term), "{} not shown", t.term);
    }
    // The glossary's own line of the hint bar: g brings the keys back.
    assert!(rt.text(100, 30).contains("g keys"));
    assert!(rt.key(Key::parse("g").unwrap()));
    assert_eq!(
        rt.app.overlay,
        Some(Overlay::Help {
            page: HelpPage::Keys,
            scroll: 0
        })
    );
    // The keys' page ends by naming the glossary's key.
    let mut keys = String::new();
    for _ in 0..40 {
        keys.push_str(&rt.text(100, 30));
        rt.act(Action::Down);
    }
    assert!(keys.contains("press g for the glossary"), "{keys}");
    assert!(rt.key(key(KeyCode::Esc, KeyModifiers::NONE)));
    assert_eq!(rt.app.overlay, None);
}
