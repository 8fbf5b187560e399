//! The TUI on a census-shaped hierarchy: `coco gen us-blocks --scale 0.01` (nation →
//! 52 states → 3,220 counties → 3,468 tracts → 81,379 blocks), driven through the
//! headless runtime as an operator would: open it (and stop opening it), browse the
//! tree down to a block, jump with page and end keys, search by an exact block code
//! and by a piece of a name, and show every screen.
//!
//! These tests check behaviour (what is selected, which rows the tree shows, what the
//! search found), never wall time: how fast this is at full scale is measured with the
//! release binary and `COCO_TUI_TIMINGS` (see the README).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common;

use coco::data::{Hierarchy, LevelId, NodeId};
use coco::tui::AppOptions;
use coco::tui::action::Action;
use coco::tui::app::{LoadState, Tone};
use coco::tui::runtime::Runtime;

const WAIT: Duration = Duration::from_secs(600);
const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;

/// us-blocks at a hundredth, seed 1, in a fresh directory.
fn us_blocks(tmp: &Path) -> PathBuf {
    let dir = tmp.join("blocks");
    common::cli::gen_us_blocks(&dir, "0.01", "1");
    dir
}

fn start(home: &Path, dir: &Path) -> Runtime {
    Runtime::new(AppOptions {
        dataset: Some(dir.to_path_buf()),
        home: Some(home.to_path_buf()),
        preview_seed: Some(1),
    })
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

fn search(rt: &mut Runtime, text: &str) {
    rt.act(Action::Search);
    rt.type_text(text);
    rt.act(Action::Submit);
}

fn hierarchy(rt: &Runtime) -> &Hierarchy {
    &rt.app.session.as_ref().expect("open").dataset.hierarchy
}

/// The rows of the tree panel in a frame: the text between its borders.
fn tree_rows(frame: &str) -> Vec<String> {
    frame
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('│'))
        .map(|l| {
            let inner = l.trim_start_matches('│');
            inner[..inner.find('│').unwrap()].trim_end().to_string()
        })
        .collect()
}

#[test]
fn a_census_hierarchy_opens_browses_and_searches_down_to_the_block() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = us_blocks(tmp.path());
    let mut rt = start(&tmp.path().join("home"), &dir);
    // Loading runs in the worker: the frame says so, screen keys wait.
    assert!(matches!(rt.app.load, LoadState::Loading { .. }));
    assert!(rt.text(WIDTH, HEIGHT).contains("Loading"));
    rt.act(Action::ScreenBudget);
    rt.act(Action::EpsilonUp);
    assert!(matches!(&rt.app.message, Some((Tone::Warning, m)) if m.contains("esc")));
    settle(&mut rt);
    assert_eq!(rt.app.load, LoadState::Idle);
    let h = hierarchy(&rt).clone();
    let blocks = h.leaf_level();
    assert_eq!(h.level_len(blocks), 81_379);

    // The Dataset screen: every level, with numbers as wide as they need.
    act(&mut rt, &[Action::ScreenDataset]);
    let frame = rt.text(WIDTH, HEIGHT);
    assert!(frame.contains("block      81,379"), "{frame}");

    // The Hierarchy screen: the root open, its 52 states below it.
    act(&mut rt, &[Action::ScreenHierarchy]);
    let rows = tree_rows(&rt.text(WIDTH, HEIGHT));
    assert_eq!(rows.len(), 53.min(HEIGHT as usize - 5), "{rows:?}");
    assert!(rows[0].starts_with("▾ US United States"), "{rows:?}");
    // Down to the first block: state, county, tract, block, each opened with →.
    act(&mut rt, &[Action::Down]);
    for _ in 0..3 {
        act(&mut rt, &[Action::Expand, Action::Expand]);
    }
    let first_block = NodeId(h.level_range(blocks).start);
    assert_eq!(rt.app.hierarchy.selected, first_block);
    let frame = rt.text(WIDTH, HEIGHT);
    // The panel's title names the block (its description gives way, the label stays).
    let title = frame
        .lines()
        .find(|l| l.contains(&format!("{} · true hist", h.display_id(first_block))))
        .unwrap_or_else(|| panic!("{frame}"));
    assert!(title.contains("CONFIDENTIAL"), "{title}");
    // The tract's blocks follow it, one row each, until the frame is full.
    let tract = h.node(first_block).parent.unwrap();
    let rows = tree_rows(&frame);
    assert_eq!(rows.len(), HEIGHT as usize - 5);
    let tract_row = rows
        .iter()
        .position(|r| r.contains(&format!("▾ {}", h.code(tract))))
        .unwrap();
    for (row, block) in rows[tract_row + 1..].iter().zip(h.node(tract).children()) {
        assert!(row.contains(&format!("· {}", h.code(block))), "{row}");
    }

    // Page down moves ten rows, end goes to the last state (the only open one is the
    // first), home back to the root.
    act(&mut rt, &[Action::PageDown]);
    assert_eq!(rt.app.hierarchy.selected, NodeId(first_block.0 + 10));
    act(&mut rt, &[Action::Last]);
    let states = h.node(NodeId::ROOT).children.clone();
    assert_eq!(rt.app.hierarchy.selected, NodeId(states.end - 1));
    act(&mut rt, &[Action::First]);
    assert_eq!(rt.app.hierarchy.selected, NodeId::ROOT);

    // The county with the most tracts, found by its id and opened: its tracts are the
    // rows below it, and page down goes through them ten at a time.
    let county = h
        .level_nodes(LevelId(2))
        .max_by_key(|&c| h.node(c).children.len())
        .unwrap();
    let tracts = h.node(county).children.clone();
    assert!(tracts.len() > 20, "{}", tracts.len());
    search(&mut rt, &h.display_id(county));
    assert_eq!(rt.app.hierarchy.selected, county, "an exact id at once");
    settle(&mut rt);
    act(&mut rt, &[Action::ToggleNode]);
    let rows = tree_rows(&rt.text(WIDTH, HEIGHT));
    let at = rows
        .iter()
        .position(|r| r.contains(&format!("▾ {}", h.code(county))))
        .unwrap();
    for (row, tract) in rows[at + 1..].iter().zip(tracts.clone()) {
        assert!(
            row.contains(&format!("▸ {}", h.code(NodeId(tract)))),
            "{row}"
        );
    }
    act(&mut rt, &[Action::PageDown, Action::PageDown]);
    assert_eq!(rt.app.hierarchy.selected, NodeId(tracts.start + 19));

    // An exact block code is selected at once, before the scan for other matches.
    let block = NodeId(h.level_range(blocks).end - 7);
    search(&mut rt, h.code(block));
    assert_eq!(rt.app.hierarchy.selected, block);
    assert!(rt.text(WIDTH, HEIGHT).contains(&h.display_id(block)));
    settle(&mut rt);
    let s = rt.app.hierarchy.search.as_ref().unwrap();
    assert!(s.done && s.matches[0] == block, "{s:?}");
    let frame = rt.text(WIDTH, HEIGHT);
    let rows = tree_rows(&frame);
    assert!(
        rows.iter()
            .any(|r| r.contains(&format!("· {}", h.code(block))))
    );

    // A piece of a name: the scan runs in the background and finds, in node order,
    // every region whose id or name holds it.
    search(&mut rt, "county");
    settle(&mut rt);
    let want: Vec<NodeId> = (0..h.len() as u32)
        .map(NodeId)
        .filter(|&id| {
            h.display_id(id).to_lowercase().contains("county")
                || h.name(id)
                    .is_some_and(|n| n.to_lowercase().contains("county"))
        })
        .collect();
    assert!(want.len() > 1000, "{}", want.len());
    let s = rt.app.hierarchy.search.as_ref().unwrap();
    assert!(s.done);
    assert_eq!(s.matches, want);
    assert_eq!(rt.app.hierarchy.selected, want[0]);
    act(&mut rt, &[Action::NextMatch]);
    assert_eq!(rt.app.hierarchy.selected, want[1]);
    let frame = rt.text(WIDTH, HEIGHT);
    assert!(
        frame.contains(&format!("/county: 2 of {}", thousands(want.len()))),
        "{frame}"
    );
    // Nothing found: said, and the selection stays.
    search(&mut rt, "no such place");
    settle(&mut rt);
    assert_eq!(rt.app.hierarchy.selected, want[1]);
    assert!(matches!(&rt.app.message, Some((Tone::Warning, m)) if m.contains("no region")));

    // Every screen draws.
    for (screen, text) in [
        (Action::ScreenBudget, "81,379"),
        (Action::ScreenPreview, "No preview yet"),
        (Action::ScreenTradeoff, "No sweep yet"),
        (Action::ScreenRelease, "d draws one release"),
    ] {
        act(&mut rt, &[screen]);
        let frame = rt.text(WIDTH, HEIGHT);
        assert!(frame.contains(text), "{screen:?}: {frame}");
    }
}

#[test]
fn loading_can_be_stopped_and_quitting_does_not_wait_for_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = us_blocks(tmp.path());
    let mut rt = start(&tmp.path().join("home"), &dir);
    assert!(rt.app.loading());
    rt.act(Action::CancelLoad);
    assert_eq!(rt.app.load, LoadState::Idle);
    assert!(matches!(&rt.app.message, Some((Tone::Info, m)) if m.starts_with("stopped loading")));
    settle(&mut rt);
    // What the stopped load read is never opened.
    assert!(rt.app.session.is_none());
    assert_eq!(rt.app.load, LoadState::Idle);
    // Opened again; quit while it loads: the app quits, and the runtime's end cancels
    // the load without waiting for it.
    let mut rt = start(&tmp.path().join("home"), &dir);
    rt.act(Action::Quit);
    assert!(rt.app.quit);
    rt.shutdown();
    assert!(!rt.busy());
}

#[test]
fn a_preview_at_scale_says_how_long_its_trials_took() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = us_blocks(tmp.path());
    let mut rt = start(&tmp.path().join("home"), &dir);
    settle(&mut rt);
    // The default plan's tails keep the trials short (L + min(m, G) cells per region,
    // not K + 1); two of them.
    act(&mut rt, &[Action::ScreenPreview, Action::TypeTrials]);
    answer(&mut rt, "2");
    act(&mut rt, &[Action::Run]);
    let result = rt.app.preview.result.as_ref().expect("a preview");
    assert_eq!(result.report.trials, 2);
    assert!(result.took.is_some());
    let frame = rt.text(WIDTH, HEIGHT);
    assert!(frame.contains("2 trial(s) in "), "{frame}");
    assert!(frame.contains(" each)"), "{frame}");
    assert!(frame.contains("block"), "{frame}");
}

/// Replaces the text of the open field and submits it.
fn answer(rt: &mut Runtime, text: &str) {
    rt.act(Action::CursorEnd);
    for _ in 0..40 {
        rt.act(Action::Backspace);
    }
    rt.type_text(text);
    act(rt, &[Action::Submit]);
}

fn thousands(n: usize) -> String {
    coco::inspect::thousands(n as u128)
}
