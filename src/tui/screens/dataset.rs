//! The Dataset screen: what was loaded, level by level.
//!
//! The hierarchy and each region's number of groups `G` are public (Kuo et al. §3);
//! entities, group sizes and their spread are computed from the true data and are
//! marked confidential.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use crate::inspect::LevelSummary;
use crate::release::plan::MaxSize;

use super::super::action::{Action, Context};
use super::super::app::App;
use super::super::overview::{GroupSpread, SPARKLINE_WIDTH};
use super::super::session::Session;
use super::super::theme;
use super::super::widgets::{self, Col, Columns, int};

/// Which level's largest regions are listed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DatasetState {
    pub level: usize,
}

pub fn update(app: &mut App, action: Action) {
    let depth = app.session.as_ref().map_or(1, Session::depth);
    match action {
        Action::Up => app.dataset.level = app.dataset.level.saturating_sub(1),
        Action::Down => app.dataset.level = (app.dataset.level + 1).min(depth - 1),
        _ => {}
    }
}

/// The plan's K, a published parameter. Nothing computed from the true sizes stands
/// beside it: a K chosen by looking at the largest true group would publish that size
/// outside the guarantee (the table's confidential "largest" column is description,
/// not advice).
fn max_size_text(app: &App, session: &Session) -> Vec<Span<'static>> {
    let estimate = app.keymap.key(Context::Budget, Action::EstimateMaxSize);
    match &session.plan.max_size() {
        MaxSize::Fixed(k) => {
            let mut spans = widgets::field(
                "K in force",
                format!("{} (fixed, public)", int(u64::from(*k))),
            );
            spans.push(Span::styled(
                format!(" · published: choose it without the true sizes, or {estimate} (Budget)"),
                theme::dim(),
            ));
            spans
        }
        MaxSize::Estimate { budget } => widgets::field(
            "K in force",
            format!("estimated privately at each draw with {budget}"),
        ),
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, session: &Session) {
    let summary = &session.overview.summary;
    let depth = session.depth();
    let [head, table, largest, foot] = Layout::vertical([
        Constraint::Length(4),
        Constraint::Length(depth as u16 + 3),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    let files: Vec<String> = summary
        .inputs
        .iter()
        .map(|f| format!("{} ({} bytes)", f.path, int(f.bytes)))
        .collect();
    let head_lines = vec![
        Line::from(
            [
                vec![Span::styled(
                    format!("Dataset {}", summary.dataset),
                    theme::heading(),
                )],
                widgets::field(
                    "  directory",
                    crate::tui::widgets::path_text(&session.dataset.dir),
                ),
            ]
            .concat(),
        ),
        Line::from(
            [
                widgets::field("Groups form", summary.form_description.clone()),
                widgets::field(
                    " · ledger key",
                    format!("{}… (content)", &summary.content_digest[..12]),
                ),
            ]
            .concat(),
        ),
        Line::from(widgets::field("Files", files.join(", "))),
        Line::from(max_size_text(app, session)),
    ];
    let head_lines: Vec<Line> = head_lines
        .into_iter()
        .map(|l| widgets::fit_line(l, head.width as usize))
        .collect();
    frame.render_widget(Paragraph::new(head_lines), head);
    render_levels(frame, table, app, session);
    if let Some(level) = summary.levels.get(app.dataset.level) {
        render_largest(frame, largest, level);
    }
    frame.render_widget(
        Paragraph::new(widgets::fit_line(
            Line::from(vec![
                Span::styled("* CONFIDENTIAL", theme::confidential()),
                Span::raw(": from the true data, do not publish. The hierarchy and G are public."),
            ]),
            foot.width as usize,
        )),
        foot,
    );
}

/// One row of the levels table as text: level, nodes, empty, G, its spread, entities,
/// largest, sizes (the sparkline aside).
fn level_texts(l: &LevelSummary, g: &GroupSpread) -> [String; 8] {
    [
        l.name.clone(),
        int(l.nodes as u64),
        int(l.empty_nodes as u64),
        int(l.groups),
        if g.min == g.max {
            int(g.max)
        } else {
            format!("{} / {} / {}", int(g.min), int(g.median), int(g.max))
        },
        crate::inspect::thousands(l.entities),
        l.max_size.map_or("-".into(), |m| int(u64::from(m))),
        int(l.distinct_sizes as u64),
    ]
}

/// The levels table's columns: header, how it is sized, whether it is confidential.
const LEVEL_COLUMNS: [(&str, Col, bool); 9] = [
    ("level", Col::name(6).at_least(10), false),
    ("nodes", Col::left().at_least(5), false),
    ("empty", Col::left().at_least(5), false),
    ("groups G", Col::left().at_least(8), false),
    // Three numbers in one: it gives way (marked) before a column of one number does.
    ("G min / median / max", Col::name(12).at_least(25), false),
    ("G by region", Col::fixed(SPARKLINE_WIDTH as u16), false),
    ("entities*", Col::left().at_least(10), true),
    ("largest*", Col::left().at_least(8), true),
    ("sizes*", Col::left().at_least(6), true),
];

fn render_levels(frame: &mut Frame, area: Rect, app: &App, session: &Session) {
    let summary = &session.overview.summary;
    // Regions without groups are the first thing to go on a narrow screen, then the
    // sparkline.
    let shown: Vec<usize> = (0..LEVEL_COLUMNS.len())
        .filter(|&i| (i != 2 || area.width >= 88) && (i != 5 || area.width >= 100))
        .collect();
    let texts: Vec<Vec<String>> = summary
        .levels
        .iter()
        .zip(&session.overview.levels)
        .map(|(l, facts)| {
            let [
                level,
                nodes,
                empty,
                groups,
                spread,
                entities,
                largest,
                sizes,
            ] = level_texts(l, &facts.groups);
            let sparkline = widgets::sparkline(&facts.groups.columns, SPARKLINE_WIDTH);
            let all = [
                level, nodes, empty, groups, spread, sparkline, entities, largest, sizes,
            ];
            shown.iter().map(|&i| all[i].clone()).collect()
        })
        .collect();
    let block = widgets::block(
        format!(
            " Levels ({}{} selects a level) ",
            app.keymap.key(Context::Dataset, Action::Up),
            app.keymap.key(Context::Dataset, Action::Down)
        ),
        area.width,
    );
    let columns: Vec<(&str, Col, bool)> = shown.iter().map(|&i| LEVEL_COLUMNS[i]).collect();
    let specs: Vec<Col> = columns.iter().map(|c| c.1).collect();
    let headers: Vec<&str> = columns.iter().map(|c| c.0).collect();
    let fitted = Columns::fit(
        &specs,
        std::iter::once(headers.clone())
            .chain(texts.iter().map(|r| r.iter().map(String::as_str).collect())),
        block.inner(area).width,
        1,
    );
    let header: Vec<Cell> = columns
        .iter()
        .enumerate()
        .map(|(i, (h, _, confidential))| {
            let text = fitted.cell(i, h);
            if *confidential {
                Cell::from(Span::styled(text, theme::confidential()))
            } else {
                Cell::from(text)
            }
        })
        .collect();
    let rows: Vec<Row> = texts
        .iter()
        .enumerate()
        .map(|(r, row)| {
            let row = fitted.row(row);
            if r == app.dataset.level {
                row.style(theme::selected())
            } else {
                row
            }
        })
        .collect();
    let table = Table::new(rows, fitted.constraints())
        .column_spacing(fitted.spacing())
        .header(Row::new(header).style(theme::heading()))
        .block(block);
    frame.render_widget(table, area);
}

fn render_largest(frame: &mut Frame, area: Rect, level: &LevelSummary) {
    let headers = ["region", "name", "groups G", "entities*", "largest*"];
    let texts: Vec<[String; 5]> = level
        .largest
        .iter()
        .map(|n| {
            [
                n.id.clone(),
                n.name.clone().unwrap_or_default(),
                int(n.groups),
                crate::inspect::thousands(n.entities),
                n.max_size.map_or("-".into(), |m| int(u64::from(m))),
            ]
        })
        .collect();
    let block = widgets::block(
        format!(" Largest regions of level {} by G ", level.name),
        area.width,
    );
    let fitted = Columns::fit(
        &[
            Col::name(8).at_least(16),
            Col::name(8).at_least(22),
            Col::left().at_least(9),
            Col::left().at_least(10),
            Col::left().at_least(9),
        ],
        std::iter::once(headers).chain(texts.iter().map(|t| t.each_ref().map(String::as_str))),
        block.inner(area).width,
        1,
    );
    let header = Row::new(headers.iter().enumerate().map(|(i, h)| {
        let text = fitted.cell(i, h);
        if i >= 3 {
            Cell::from(Span::styled(text, theme::confidential()))
        } else {
            Cell::from(text)
        }
    }))
    .style(theme::heading());
    let rows: Vec<Row> = texts.iter().map(|t| fitted.row(t)).collect();
    let table = Table::new(rows, fitted.constraints())
        .column_spacing(fitted.spacing())
        .header(header)
        .block(block);
    frame.render_widget(table, area);
}
