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
use super::super::widgets::{self, int};

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
        MaxSize::Estimate { epsilon } => widgets::field(
            "K in force",
            format!("estimated privately at each draw with ε = {epsilon}"),
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
                widgets::field("  directory", session.dataset.dir.display().to_string()),
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
    frame.render_widget(Paragraph::new(head_lines), head);
    render_levels(frame, table, app, session);
    if let Some(level) = summary.levels.get(app.dataset.level) {
        render_largest(frame, largest, level);
    }
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled("* CONFIDENTIAL", theme::confidential()),
            Span::raw(": from the true data, do not publish. The hierarchy and G are public."),
        ])),
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

fn render_levels(frame: &mut Frame, area: Rect, app: &App, session: &Session) {
    let summary = &session.overview.summary;
    let wide = area.width >= 100;
    let roomy = area.width >= 88;
    let mut header = vec![
        Cell::from("level"),
        Cell::from("nodes"),
        Cell::from("empty"),
        Cell::from("groups G"),
        Cell::from("G min / median / max"),
    ];
    if wide {
        header.push(Cell::from("G by region"));
    }
    for h in ["entities*", "largest*", "sizes*"] {
        header.push(Cell::from(Span::styled(h, theme::confidential())));
    }
    // Regions without groups are the first thing to go on a narrow screen.
    if !roomy {
        header.remove(2);
    }
    let texts: Vec<[String; 8]> = summary
        .levels
        .iter()
        .zip(&session.overview.levels)
        .map(|(l, facts)| level_texts(l, &facts.groups))
        .collect();
    let rows: Vec<Row> = texts
        .iter()
        .zip(&session.overview.levels)
        .enumerate()
        .map(|(i, (t, facts))| {
            let mut cells: Vec<Cell> = t[..5].iter().map(|s| Cell::from(s.clone())).collect();
            if wide {
                cells.push(Cell::from(widgets::sparkline(
                    &facts.groups.columns,
                    SPARKLINE_WIDTH,
                )));
            }
            if !roomy {
                cells.remove(2);
            }
            cells.extend(t[5..].iter().map(|s| Cell::from(s.clone())));
            let row = Row::new(cells);
            if i == app.dataset.level {
                row.style(theme::selected())
            } else {
                row
            }
        })
        .collect();
    // As wide as the numbers: 8 million regions need more room than 60.
    let col = |i: usize, min: u16| widgets::column(min, texts.iter().map(|t| t[i].as_str()));
    let mut widths = vec![col(0, 10), col(1, 5), col(2, 5), col(3, 8), col(4, 25)];
    if wide {
        widths.push(Constraint::Length(SPARKLINE_WIDTH as u16));
    }
    widths.extend([col(5, 10), col(6, 8), col(7, 6)]);
    if !roomy {
        widths.remove(2);
    }
    let table = Table::new(rows, widths)
        .header(Row::new(header).style(theme::heading()))
        .block(widgets::block(format!(
            " Levels ({}{} selects a level) ",
            app.keymap.key(Context::Dataset, Action::Up),
            app.keymap.key(Context::Dataset, Action::Down)
        )));
    frame.render_widget(table, area);
}

fn render_largest(frame: &mut Frame, area: Rect, level: &LevelSummary) {
    let header = Row::new(vec![
        Cell::from("region"),
        Cell::from("name"),
        Cell::from("groups G"),
        Cell::from(Span::styled("entities*", theme::confidential())),
        Cell::from(Span::styled("largest*", theme::confidential())),
    ])
    .style(theme::heading());
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
    let rows: Vec<Row> = texts
        .iter()
        .map(|t| Row::new(t.iter().map(|s| Cell::from(s.clone()))))
        .collect();
    let col = |i: usize, min: u16| widgets::column(min, texts.iter().map(|t| t[i].as_str()));
    let table = Table::new(
        rows,
        [col(0, 16), col(1, 22), col(2, 9), col(3, 10), col(4, 9)],
    )
    .header(header)
    .block(widgets::block(format!(
        " Largest regions of level {} by G ",
        level.name
    )));
    frame.render_widget(table, area);
}
