//! Every screen of the TUI at 100×30 on the bundled sample, as text snapshots
//! (`tests/tui/snapshots/`), plus the styles that matter and that text cannot show.
//!
//! Deterministic: previews and sweeps use seed 1, the drawn release is made with a
//! seeded source and handed to the app as the worker would, `COCO_HOME` is a fresh
//! temporary directory passed explicitly, the time a preview took is set to a fixed
//! value before its frame is taken, and no frame shows a temporary path (fixture
//! datasets live in `/tmp`, named as `target/tui-test-fixtures` in the snapshots).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use coco::data::Dataset;
use coco::tui::action::Action;
use coco::tui::app::{LoadState, Overlay};
use coco::tui::runtime::Runtime;
use common::tui::{WAIT, as_in_snapshots, fixture_dir, inject_draw, open, wide_numbers_dataset};
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

const SAMPLE: &str = "sample-data/households";
const WIDTH: u16 = 100;
const HEIGHT: u16 = 30;

/// The one place insta is configured.
fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("snapshots");
    s.set_prepend_module_to_snapshot(false);
    s.set_omit_expression(true);
    s
}

fn assert_frame(name: &str, rt: &Runtime) {
    assert_frame_sized(name, rt, WIDTH, HEIGHT);
}

fn assert_frame_sized(name: &str, rt: &Runtime, width: u16, height: u16) {
    let text = as_in_snapshots(&rt.text(width, height));
    settings().bind(|| insta::assert_snapshot!(name, text));
}

/// The sample, loaded, with a temporary home and preview seed 1.
fn sample(home: &Path) -> Runtime {
    open(home, PathBuf::from(SAMPLE))
}

fn act(rt: &mut Runtime, actions: &[Action]) {
    for &a in actions {
        rt.act(a);
    }
    assert!(rt.settle(WAIT), "background work did not finish");
}

/// Previews and searches on the confidential data, chosen (they default to the
/// synthetic proxy): the captures of the README show the confidential diagnostics.
fn choose_confidential(rt: &mut Runtime) {
    rt.act(Action::ChooseProxy);
    rt.act(Action::CursorEnd);
    for _ in 0..20 {
        rt.act(Action::Backspace);
    }
    rt.type_text("none");
    act(rt, &[Action::Submit]);
}

fn search(rt: &mut Runtime, text: &str) {
    rt.act(Action::Search);
    rt.type_text(text);
    act(rt, &[Action::Submit]);
}

#[test]
fn dataset_screen() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = sample(home.path());
    act(&mut rt, &[Action::ScreenDataset, Action::Down]);
    assert_frame("dataset", &rt);
}

#[test]
fn hierarchy_screen_after_a_search() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = sample(home.path());
    act(&mut rt, &[Action::ScreenHierarchy]);
    search(&mut rt, "vessaport");
    assert_frame("hierarchy", &rt);
    act(&mut rt, &[Action::LogScale, Action::FewerSizes]);
    assert_frame("hierarchy_log_scale", &rt);
}

#[test]
fn budget_screen_with_a_custom_leaf_budget() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = sample(home.path());
    act(&mut rt, &[Action::ScreenBudget, Action::Down, Action::Down]);
    act(&mut rt, &[Action::EpsilonUp, Action::EpsilonUp]);
    assert_frame("budget", &rt);
}

/// Issue 33: the plan toggled to ρ-zCDP, with total ρ = 1/2: every budget is a ρ, the
/// total states its (ε, δ) at δ = 10⁻¹⁰, the noise column is the Gaussian's σ.
#[test]
fn budget_screen_of_a_rho_plan() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = sample(home.path());
    act(
        &mut rt,
        &[
            Action::ScreenBudget,
            Action::ToggleDefinition,
            Action::TypeTotal,
        ],
    );
    rt.act(Action::CursorEnd);
    rt.act(Action::Backspace);
    rt.type_text("1/2");
    act(&mut rt, &[Action::Submit]);
    assert_frame("budget_rho", &rt);
}

#[test]
fn budget_screen_explains_a_bad_epsilon() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = sample(home.path());
    act(&mut rt, &[Action::ScreenBudget, Action::TypeEpsilon]);
    for _ in 0..5 {
        rt.act(Action::Backspace);
    }
    rt.type_text("0,5");
    act(&mut rt, &[Action::Submit]);
    assert_frame("budget_bad_epsilon", &rt);
}

#[test]
fn preview_screen_with_bars_and_lines() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = sample(home.path());
    act(&mut rt, &[Action::ScreenPreview]);
    assert_frame("preview_empty", &rt);
    choose_confidential(&mut rt);
    search(&mut rt, "ARV/01");
    act(&mut rt, &[Action::Run]);
    // Measured by the worker; fixed here so that the frame is always the same.
    rt.app.preview.result.as_mut().unwrap().took = Some(Duration::from_millis(2_500));
    assert_frame("preview", &rt);
    act(&mut rt, &[Action::ToggleView]);
    assert_frame("preview_cumulative", &rt);
}

#[test]
fn tradeoff_sweep_and_frontier() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = sample(home.path());
    act(&mut rt, &[Action::ScreenTradeoff]);
    choose_confidential(&mut rt);
    act(&mut rt, &[Action::Run]);
    assert_frame("tradeoff_sweep", &rt);
    act(&mut rt, &[Action::ToggleView, Action::Run]);
    assert_frame("tradeoff_frontier", &rt);
}

/// Issue 14: the search run on the synthetic proxy, its recommendation on the Budget
/// screen beside the current plan, one key to apply it.
#[test]
fn a_recommendation_from_the_synthetic_proxy() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = sample(home.path());
    act(&mut rt, &[Action::ScreenTradeoff, Action::ChooseProxy]);
    // The field offers "synthetic" when previews run on the confidential data.
    act(&mut rt, &[Action::Submit]);
    act(&mut rt, &[Action::ToggleView, Action::Run]);
    assert_frame("tradeoff_frontier_proxy", &rt);
    act(&mut rt, &[Action::ScreenBudget]);
    assert_frame("budget_recommendation", &rt);
}

#[test]
fn release_screen_before_and_after_a_draw() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = sample(home.path());
    act(&mut rt, &[Action::ScreenRelease]);
    assert_frame("release_before_draw", &rt);
    inject_draw(&mut rt, home.path());
    act(&mut rt, &[Action::Right, Action::Right]);
    assert_frame("release_drawn", &rt);
    rt.act(Action::Quit);
    assert_frame("release_quit_question", &rt);
}

#[test]
fn help_overlay_lists_the_screens_keys() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = sample(home.path());
    act(&mut rt, &[Action::ScreenBudget, Action::Help]);
    assert_frame("help_budget", &rt);
}

/// The help's second page: the glossary (`g` in the help), its first screen and its last.
#[test]
fn help_overlay_shows_the_glossary() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = sample(home.path());
    act(
        &mut rt,
        &[Action::ScreenPreview, Action::Help, Action::Glossary],
    );
    assert_frame("help_glossary", &rt);
    act(&mut rt, &[Action::PageDown; 30]);
    assert_frame("help_glossary_end", &rt);
}

/// A dataset whose groups file has a bad size on line 3, in a fixture directory (see
/// [`fixture_dir`]) so the message (which names the file) is the same on every run.
fn broken_dataset() -> (tempfile::TempDir, PathBuf) {
    let (root, dir) = fixture_dir("broken-size");
    std::fs::write(dir.join("hierarchy.csv"), "country,district\nARV,0101\n").unwrap();
    std::fs::write(
        dir.join("groups.csv"),
        "group_id,region,size\nH1,0101,2\nH2,0101,two\n",
    )
    .unwrap();
    (root, dir)
}

#[test]
fn a_load_error_shows_the_loaders_message() {
    let home = tempfile::tempdir().unwrap();
    let (_fixture, dir) = broken_dataset();
    let rt = open(home.path(), dir.clone());
    let expected = Dataset::load(&dir).unwrap_err().to_string();
    assert!(expected.contains("groups.csv:3:3"), "{expected}");
    assert_eq!(
        rt.app.load,
        LoadState::Failed {
            dir,
            message: expected.clone()
        }
    );
    // Shown whole (wrapped to the width).
    let words = |t: &str| {
        t.split(|c: char| c.is_whitespace() || c == '│')
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let shown = words(&rt.text(WIDTH, HEIGHT));
    assert!(shown.contains(&words(&expected)), "{shown}");
    assert_frame("load_error", &rt);
}

/// Where `text` starts in the buffer.
fn find(buffer: &Buffer, text: &str) -> Option<(u16, u16)> {
    let area = buffer.area;
    for y in 0..area.height {
        let row: Vec<&str> = (0..area.width).map(|x| buffer[(x, y)].symbol()).collect();
        let joined: String = row.concat();
        if let Some(byte) = joined.find(text) {
            let chars_before = joined[..byte].chars().count();
            // Every symbol here is one character wide.
            return Some((chars_before as u16, y));
        }
    }
    None
}

fn style_at(buffer: &Buffer, text: &str) -> ratatui::style::Style {
    let (x, y) = find(buffer, text).unwrap_or_else(|| panic!("{text:?} not on screen"));
    buffer[(x, y)].style()
}

#[test]
fn styles_that_matter() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = sample(home.path());

    // The confidential label on the true histogram.
    act(&mut rt, &[Action::ScreenHierarchy]);
    let b = rt.buffer(WIDTH, HEIGHT);
    let s = style_at(&b, "CONFIDENTIAL");
    assert_eq!(s.fg, Some(Color::Magenta));
    assert!(s.add_modifier.contains(Modifier::BOLD));
    // The selected region is reversed, not coloured.
    let s = style_at(&b, "▾ ARV");
    assert!(s.add_modifier.contains(Modifier::REVERSED));

    // Stale results after the plan changes.
    act(&mut rt, &[Action::ScreenPreview]);
    choose_confidential(&mut rt);
    act(&mut rt, &[Action::Run]);
    assert!(find(&rt.buffer(WIDTH, HEIGHT), "STALE").is_none());
    act(
        &mut rt,
        &[
            Action::ScreenBudget,
            Action::EpsilonUp,
            Action::ScreenPreview,
        ],
    );
    let b = rt.buffer(WIDTH, HEIGHT);
    let s = style_at(&b, "STALE");
    assert_eq!(s.fg, Some(Color::Yellow));
    assert!(s.add_modifier.contains(Modifier::REVERSED));
    let s = style_at(&b, "CONFIDENTIAL DIAGNOSTICS");
    assert_eq!(s.fg, Some(Color::Magenta));

    // The checks on the Release screen: all green for a real draw. (A failing check is
    // tested in src/tui/screens/release.rs: a `Draw` cannot be altered from outside the
    // measurement path, which is the point.)
    act(&mut rt, &[Action::ScreenRelease]);
    inject_draw(&mut rt, home.path());
    let b = rt.buffer(WIDTH, HEIGHT);
    let s = style_at(&b, "✓ parents");
    assert_eq!(s.fg, Some(Color::Green));
    let s = style_at(&b, "✓ integral");
    assert_eq!(s.fg, Some(Color::Green));
}

/// Whole numbers or an ellipsis, never a number cut without a mark or run into the
/// next column: the review table of a region of millions of groups, and the Dataset,
/// Budget and Preview screens, at 120×40.
#[test]
fn wide_numbers_fit_their_columns() {
    let home = tempfile::tempdir().unwrap();
    let (_fixture, dir) = wide_numbers_dataset();
    let mut rt = open(home.path(), dir);
    act(&mut rt, &[Action::ScreenDataset]);
    let frame = rt.text(120, 40);
    for whole in ["9,140,120", "neighborhood"] {
        assert!(frame.contains(whole), "{whole}: {frame}");
    }
    assert_frame_sized("wide_dataset", &rt, 120, 40);
    // Narrower than the numbers: names give way with an ellipsis, numbers stay whole.
    assert_frame_sized("wide_dataset_80x24", &rt, 80, 24);
    act(&mut rt, &[Action::ScreenBudget]);
    assert!(rt.text(120, 40).contains("neighborhood"));
    assert_frame_sized("wide_budget", &rt, 120, 40);
    assert_frame_sized("wide_budget_80x24", &rt, 80, 24);
    act(&mut rt, &[Action::ScreenPreview]);
    choose_confidential(&mut rt);
    act(&mut rt, &[Action::TypeTrials]);
    for _ in 0..4 {
        rt.act(Action::Backspace);
    }
    rt.type_text("2");
    act(&mut rt, &[Action::Submit, Action::Run]);
    rt.app.preview.result.as_mut().unwrap().took = Some(Duration::from_millis(2_500));
    let frame = rt.text(120, 40);
    assert!(frame.contains("neighborhood"), "{frame}");
    assert_frame_sized("wide_preview", &rt, 120, 40);
    act(&mut rt, &[Action::ScreenRelease]);
    inject_draw(&mut rt, home.path());
    act(&mut rt, &[Action::Right, Action::Right]);
    let frame = rt.text(120, 40);
    // Every count of the table stands alone: separated from its neighbours.
    let row = frame
        .lines()
        .find(|l| l.contains("ARV/02/0201"))
        .unwrap_or_else(|| panic!("{frame}"));
    let numbers: Vec<&str> = row
        .trim_matches('│')
        .split_whitespace()
        .filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .collect();
    assert!(numbers.len() >= 9, "{row}");
    for n in &numbers {
        assert!(
            n.split(',').skip(1).all(|g| g.len() == 3) && n.split(',').next().unwrap().len() <= 3,
            "{n} in {row}"
        );
    }
    assert_frame_sized("wide_release_drawn", &rt, 120, 40);
    // At 80×24 the names give way (with an ellipsis) before any number does.
    assert_frame_sized("wide_release_drawn_80x24", &rt, 80, 24);
}

/// At 80×24 every screen shows the ε spent and `? help`, the keys of the screen wrap
/// onto a second hint line instead of running off, the Trade-off chart keeps most of
/// the height, and a long prompt (the tail's) wraps whole in its box.
#[test]
fn a_small_terminal_keeps_the_essentials() {
    let home = tempfile::tempdir().unwrap();
    let mut rt = sample(home.path());
    for screen in [
        Action::ScreenDataset,
        Action::ScreenHierarchy,
        Action::ScreenBudget,
        Action::ScreenPreview,
        Action::ScreenTradeoff,
        Action::ScreenRelease,
    ] {
        act(&mut rt, &[screen]);
        let frame = rt.text(80, 24);
        assert!(frame.contains("ε spent 0"), "{screen:?}: {frame}");
        assert!(frame.contains("? help"), "{screen:?}: {frame}");
    }
    act(&mut rt, &[Action::ScreenBudget]);
    let frame = rt.text(80, 24);
    for hint in ["T tail", "s save", "L load", "q quit"] {
        assert!(frame.contains(hint), "{hint}: {frame}");
    }
    assert_frame_sized("small_budget", &rt, 80, 24);
    act(&mut rt, &[Action::ScreenTradeoff]);
    choose_confidential(&mut rt);
    act(&mut rt, &[Action::Run]);
    let frame = rt.text(80, 24);
    let chart_rows = frame
        .lines()
        .skip_while(|l| !l.contains("EMD per level"))
        .take_while(|l| !l.contains("Sweep"))
        .count();
    assert!(chart_rows >= 10, "{chart_rows} rows: {frame}");
    assert_frame_sized("small_tradeoff_sweep", &rt, 80, 24);
    act(&mut rt, &[Action::ScreenBudget, Action::SetTail]);
    let Some(Overlay::Input(input)) = &rt.app.overlay else {
        panic!("the tail field is open")
    };
    let words: Vec<String> = input.prompt.split_whitespace().map(String::from).collect();
    for (width, height) in [(80u16, 24u16), (120, 40)] {
        let frame = rt.text(width, height);
        // The box's columns (78 wide, centred), row by row.
        let boxed = usize::from(width.min(80) - 2);
        let left = (usize::from(width) - boxed) / 2;
        let inside: Vec<String> = frame
            .lines()
            .map(|l| l.chars().skip(left + 1).take(boxed - 2).collect())
            .collect();
        let joined = inside
            .iter()
            .flat_map(|l| l.split_whitespace())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            joined.contains(&words.join(" ")),
            "{width}×{height}: {frame}"
        );
    }
    assert_frame_sized("small_tail_prompt", &rt, 80, 24);
}
