//! Nothing on screen is cut without a mark: every screen, in the states an operator
//! meets (before and after each run, a draw, an export, the help, the prompts), at
//! 80×24 (the smallest size the UI supports), 100×30 and 120×40, on the sample and on a
//! dataset of long names and wide numbers.
//!
//! A word cut by the edge of its area shows as a letter in the last cell before a
//! border or the frame's edge: text that fits ends in a space (a title: " … ─"),
//! wraps at a word (the row below carries on), or ends in "…" where it was cut on
//! purpose. A few texts are laid out flush against an edge by design (chart axis
//! titles, legends); they are listed. A line cut just above prose in the same column
//! would pass for a wrap: the check is a net, the helpers that fit and wrap every text
//! (`widgets::fit_line`, `fit_title`, `wrapped`) are the guarantee.

use crate::canned;
use crate::common;

use std::path::{Path, PathBuf};

use coco::tui::action::Action;
use coco::tui::runtime::Runtime;
use common::tui::{WAIT, inject_draw, open, wide_numbers_dataset};
use ratatui::buffer::Buffer;

const SIZES: [(u16, u16); 3] = [(80, 24), (100, 30), (120, 40)];

/// Texts a chart places flush against its right edge: axis titles.
const FLUSH_BY_DESIGN: [&str; 4] = ["EMD", "ε ", "size", "leaf share"];

/// A chart's legend: a box sized to its entries, the datasets' level names.
const LEGENDS: [&str; 6] = [
    "nation",
    "state",
    "neighborhood",
    "country",
    "province",
    "district",
];

fn is_border(s: &str) -> bool {
    matches!(
        s,
        "│" | "┐" | "┘" | "┤" | "─" | "┌" | "└" | "├" | "┬" | "┴" | "┼"
    )
}

/// The places where a letter stands in the last cell before a border or the frame's
/// right edge: `(row, column, the row's text)`.
fn cuts(buffer: &Buffer) -> Vec<(u16, u16, String)> {
    let area = buffer.area;
    let mut found = Vec::new();
    for y in 0..area.height {
        let row: Vec<&str> = (0..area.width).map(|x| buffer[(x, y)].symbol()).collect();
        let text: String = row.concat();
        for x in 0..area.width as usize {
            let here = row[x];
            let letter = here.chars().next().is_some_and(char::is_alphabetic);
            if !letter {
                continue;
            }
            let at_edge = x + 1 == row.len() || is_border(row[x + 1]);
            if !at_edge {
                continue;
            }
            // The text run ending here, back to the previous border.
            let start = row[..x]
                .iter()
                .rposition(|s| is_border(s))
                .map_or(0, |b| b + 1);
            let run: String = row[start..=x].concat();
            let last = run
                .trim_end()
                .rsplit("  ")
                .next()
                .unwrap_or("")
                .trim_start()
                // A chart's line may run up to its axis title (braille dots, marks).
                .trim_start_matches(|c: char| {
                    ('\u{2800}'..='\u{28FF}').contains(&c) || matches!(c, '•' | '·')
                });
            if FLUSH_BY_DESIGN.iter().any(|t| last.starts_with(t))
                || LEGENDS.contains(&run.as_str())
            {
                continue;
            }
            // Prose that fills the row exactly and wraps on: the next row carries on
            // below the same run (never a title: a title sits on a border line).
            let on_border_line = start > 0 && row[start - 1] != "│";
            if y + 1 < area.height && !on_border_line {
                let below: String = (start as u16..=x as u16)
                    .map(|bx| buffer[(bx, y + 1)].symbol())
                    .collect();
                let first = below.trim_start().chars().next();
                if first.is_some_and(|c| !is_border(&c.to_string())) {
                    continue;
                }
            }
            found.push((y, x as u16, text.clone()));
        }
    }
    found
}

/// Every cut in the frame at every size, named by what was on screen.
fn check(rt: &Runtime, what: &str, failures: &mut Vec<String>) {
    check_within(rt, what, None, failures);
}

/// Every cut inside the box drawn over the screen whose top border holds `title`
/// (what the screen shows beside an overlay is hidden by it on purpose).
fn check_overlay(rt: &Runtime, what: &str, title: &str, failures: &mut Vec<String>) {
    check_within(rt, what, Some(title), failures);
}

fn check_within(rt: &Runtime, what: &str, overlay: Option<&str>, failures: &mut Vec<String>) {
    for (w, h) in SIZES {
        let buffer = rt.buffer(w, h);
        let inside = overlay.map(|title| {
            popup(&buffer, title).unwrap_or_else(|| {
                panic!(
                    "{what} at {w}×{h}: no box titled {title:?}:\n{}",
                    text_of(&buffer)
                )
            })
        });
        for (y, x, text) in cuts(&buffer) {
            if inside.is_some_and(|(left, top, right, bottom)| {
                x < left || x >= right || y < top || y > bottom
            }) {
                continue;
            }
            failures.push(format!(
                "{what} at {w}×{h}, row {y} col {x}: {}",
                text.trim_end()
            ));
        }
    }
}

fn text_of(buffer: &Buffer) -> String {
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The box whose top border holds `title`: (left border, top, right border, bottom).
fn popup(buffer: &Buffer, title: &str) -> Option<(u16, u16, u16, u16)> {
    let area = buffer.area;
    let symbol = |x: u16, y: u16| buffer[(x, y)].symbol().to_string();
    for y in 0..area.height {
        let row: String = (0..area.width).map(|x| symbol(x, y)).collect();
        let Some(at) = row.find(title) else { continue };
        let column = row[..at].chars().count() as u16;
        let left = (0..column).rev().find(|&x| symbol(x, y) == "┌")?;
        let right = (column..area.width).find(|&x| symbol(x, y) == "┐")?;
        let bottom = (y..area.height).find(|&b| symbol(left, b) == "└")?;
        return Some((left, y, right, bottom));
    }
    None
}

fn act(rt: &mut Runtime, actions: &[Action]) {
    for &a in actions {
        rt.act(a);
    }
    assert!(rt.settle(WAIT), "background work did not finish");
}

/// The states an operator meets on a dataset, each checked at every size.
fn walk(rt: &mut Runtime, home: &Path, failures: &mut Vec<String>) {
    // The preview, sweep and frontier answer with canned results ([`canned`]): this
    // scan checks how the screens show results, not the results (the real runs at
    // their defaults are in tui_flow and tui_snapshots).
    rt.answer_with(Box::new(canned::answer));
    let screens = [
        ("Dataset", Action::ScreenDataset),
        ("Hierarchy", Action::ScreenHierarchy),
        ("Budget", Action::ScreenBudget),
        ("Preview", Action::ScreenPreview),
        ("Trade-off", Action::ScreenTradeoff),
        ("Release", Action::ScreenRelease),
    ];
    for (name, screen) in screens {
        act(rt, &[screen]);
        check(rt, name, failures);
    }
    act(
        rt,
        &[
            Action::ScreenHierarchy,
            Action::Down,
            Action::Expand,
            Action::Down,
        ],
    );
    check(rt, "Hierarchy, a region opened", failures);
    act(rt, &[Action::ScreenPreview, Action::Run]);
    check(rt, "Preview after a run", failures);
    act(rt, &[Action::ToggleView]);
    check(rt, "Preview, cumulative lines", failures);
    act(rt, &[Action::ScreenTradeoff, Action::Run]);
    check(rt, "Trade-off sweep", failures);
    act(rt, &[Action::ToggleView]);
    check(rt, "Trade-off frontier before a run", failures);
    act(rt, &[Action::Run]);
    check(rt, "Trade-off frontier", failures);
    act(rt, &[Action::ScreenBudget]);
    check(rt, "Budget with a recommendation", failures);
    act(rt, &[Action::SetTail]);
    check_overlay(rt, "the tail prompt", "accepts", failures);
    act(rt, &[Action::Cancel, Action::Help]);
    check_overlay(rt, "help", "Keys", failures);
    act(rt, &[Action::Close, Action::OpenDataset]);
    check_overlay(rt, "the dataset picker", "Open a dataset", failures);
    act(rt, &[Action::Cancel, Action::ScreenRelease, Action::Help]);
    check_overlay(rt, "help on the Release screen", "Keys", failures);
    act(rt, &[Action::Close]);
    inject_draw(rt, home);
    check(rt, "Release, a draw undecided", failures);
    act(rt, &[Action::Right, Action::Right]);
    check(rt, "Release, the leaves' table", failures);
    act(rt, &[Action::Approve]);
    check_overlay(rt, "the export prompt", "accepts", failures);
    act(rt, &[Action::Cancel]);
}

#[test]
fn nothing_is_cut_without_a_mark() {
    let mut failures = Vec::new();
    let home = tempfile::tempdir().unwrap();
    let mut rt = open(home.path(), PathBuf::from("sample-data/households"));
    walk(&mut rt, home.path(), &mut failures);
    let home = tempfile::tempdir().unwrap();
    let (_fixture, dir) = wide_numbers_dataset();
    let mut rt = open(home.path(), dir);
    walk(&mut rt, home.path(), &mut failures);
    assert!(
        failures.is_empty(),
        "{} cut(s) without a mark:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_scanner_sees_a_cut_and_passes_a_fit() {
    use ratatui::layout::Rect;
    use ratatui::widgets::{Block, Borders, Paragraph, Widget};
    let mut buffer = Buffer::empty(Rect::new(0, 0, 12, 3));
    Paragraph::new("a long sentence")
        .block(Block::default().borders(Borders::ALL))
        .render(buffer.area, &mut buffer);
    assert_eq!(cuts(&buffer).len(), 1);
    let mut buffer = Buffer::empty(Rect::new(0, 0, 12, 3));
    Paragraph::new("a long…")
        .block(Block::default().borders(Borders::ALL).title(" title "))
        .render(buffer.area, &mut buffer);
    assert!(cuts(&buffer).is_empty());
    let mut buffer = Buffer::empty(Rect::new(0, 0, 8, 1));
    Paragraph::new("overflow text").render(buffer.area, &mut buffer);
    assert_eq!(cuts(&buffer).len(), 1);
}
