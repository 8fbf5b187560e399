//! The Preview screen: the plan's error over trials, against the true data.
//! CONFIDENTIAL DIAGNOSTICS, labelled as such everywhere they appear — or against a
//! public proxy with the same hierarchy (`p`, [`super::super::proxy`]), which keeps a
//! plan tuned on it public.
//!
//! Trials run in the background ([`crate::preview::preview`]); the screen stays usable
//! and results from a plan that has changed since the run started are marked stale.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Paragraph, Row, Table};

use crate::data::{Dataset as Data, NodeId};
use crate::histogram::HistRef;
use crate::preview::{PreviewOptions, PreviewProgress, PreviewReport, fmt_num};
use crate::privacy::Diagnostic;
use crate::tradeoff::PreviewData;

use super::super::action::{Action, Context};
use super::super::app::{App, Command, DEFAULT_PREVIEW_SEED, InputPurpose, retire};
use super::super::session::Session;
use super::super::theme;
use super::super::widgets::{self, Col, Columns, stat};
use super::super::worker::{Job, JobKind, TrialClock, Update};
use super::hierarchy;

/// The banner over every preview figure.
pub use super::super::proxy::CONFIDENTIAL_BANNER as BANNER;

/// A run in progress.
#[derive(Clone, Debug)]
pub struct Running {
    /// The plan revision it runs.
    pub revision: u64,
    pub progress: Option<(PreviewProgress, TrialClock)>,
    /// What it runs on: the confidential dataset or a proxy.
    pub data: PreviewData,
    pub dataset: Arc<Data>,
}

/// A finished run.
#[derive(Clone, Debug)]
pub struct PreviewResult {
    pub report: Box<PreviewReport>,
    pub revision: u64,
    pub seed: Option<u64>,
    /// How long its trials took, all together.
    pub took: Option<Duration>,
    /// What it ran on (the overlay's truth is this dataset's).
    pub data: PreviewData,
    pub dataset: Arc<Data>,
}

#[derive(Clone, Debug)]
pub struct PreviewState {
    pub trials: usize,
    pub running: Option<Running>,
    pub result: Option<PreviewResult>,
    pub error: Option<String>,
    /// The level whose bars are shown when not all fit.
    pub level: usize,
    /// Overlay as cumulative lines instead of bars.
    pub cumulative: bool,
}

impl Default for PreviewState {
    fn default() -> Self {
        PreviewState {
            trials: 10,
            running: None,
            result: None,
            error: None,
            level: 0,
            cumulative: false,
        }
    }
}

impl PreviewState {
    /// Whether the result comes from an older plan.
    pub fn stale(&self, session: &Session) -> bool {
        self.result
            .as_ref()
            .is_some_and(|r| r.revision != session.revision)
    }
}

/// The key of a Preview action, for the screen's sentences.
fn key(app: &App, action: Action) -> String {
    app.keymap.key(Context::Preview, action)
}

/// Switches previews between a fixed seed and fresh OS randomness.
pub fn toggle_seed(app: &mut App) {
    app.preview_seed = match app.preview_seed {
        Some(_) => None,
        None => Some(DEFAULT_PREVIEW_SEED),
    };
}

/// Starts a preview of the current plan (a running one is cancelled: latest wins).
pub fn start(app: &mut App) {
    // On the proxy (the synthetic one by default), or the confidential data when
    // chosen; while a proxy opens, the run waits for it.
    if !super::super::proxy::ready_or_queue(app, super::super::app::Screen::Preview) {
        return;
    }
    let Some(session) = &app.session else { return };
    let (dataset, data) = session.preview_target();
    let job = Job::Preview {
        dataset: dataset.clone(),
        plan: session.plan.clone(),
        options: PreviewOptions {
            trials: app.preview.trials,
            seed: app.preview_seed,
            compare: false,
            keep_last_trial: true,
            bottom_up: true,
            coverage: Some(crate::release::margins::Confidence::DEFAULT),
        },
    };
    app.preview.running = Some(Running {
        revision: session.revision,
        progress: None,
        data,
        dataset,
    });
    app.preview.error = None;
    app.outbox.push(Command::Start(job));
}

pub fn update(app: &mut App, action: Action) {
    let Some(session) = &app.session else { return };
    let depth = session.depth();
    let nodes = session.dataset.hierarchy.len() as u32;
    let selected = app.hierarchy.selected.0;
    match action {
        Action::Run => start(app),
        Action::Cancel if app.preview.running.is_some() => {
            app.outbox.push(Command::Cancel(JobKind::Preview));
        }
        Action::TypeTrials => {
            let current = app.preview.trials.to_string();
            app.ask(
                InputPurpose::PreviewTrials,
                "Trials per preview (1 to 1000):",
                &current,
            );
        }
        Action::ToggleSeed => toggle_seed(app),
        Action::Up => app.preview.level = app.preview.level.saturating_sub(1),
        Action::Down => app.preview.level = (app.preview.level + 1).min(depth - 1),
        Action::PrevNode => hierarchy::select(app, NodeId(selected.saturating_sub(1))),
        Action::NextNode => hierarchy::select(app, NodeId((selected + 1).min(nodes - 1))),
        Action::Search => app.ask(
            InputPurpose::Search,
            "Overlay a region (id like ARV/01, code, or part of a name):",
            "",
        ),
        Action::ToggleView => app.preview.cumulative = !app.preview.cumulative,
        Action::ChooseProxy => super::super::proxy::ask(app),
        Action::LogScale => app.hierarchy.log_scale = !app.hierarchy.log_scale,
        Action::FewerSizes => {
            app.hierarchy.window = hierarchy::step_window(app.hierarchy.window, false)
        }
        Action::MoreSizes => {
            app.hierarchy.window = hierarchy::step_window(app.hierarchy.window, true)
        }
        _ => {}
    }
}

pub fn receive(app: &mut App, update: Update) {
    let state = &mut app.preview;
    match update {
        Update::PreviewProgress(p, clock) => {
            if let Some(r) = &mut state.running {
                r.progress = Some((p, clock));
            }
        }
        Update::Previewed(result) => {
            // Not asked for (a run for a dataset since replaced): ignored.
            let Some(run) = state.running.take() else {
                return;
            };
            match result {
                Ok(report) => {
                    if let Some(s) = &mut app.session {
                        s.saw_results(&run.data);
                    }
                    let took = run.progress.map(|(_, clock)| clock.finished_time());
                    // The last trial's histograms of every region: freed off the UI thread.
                    retire(state.result.replace(PreviewResult {
                        report,
                        revision: run.revision,
                        seed: app.preview_seed,
                        took,
                        data: run.data,
                        dataset: run.dataset,
                    }));
                }
                Err(e) if e == "cancelled" => app.info("preview cancelled"),
                Err(e) => {
                    state.error = Some(e.clone());
                    app.error(format!("preview failed: {e}"));
                }
            }
        }
        _ => {}
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, session: &Session) {
    let depth = session.depth() as u16;
    // What the trials said of themselves (a saturated tail, a consistency step that
    // fell back), each wrapped, never cut.
    // First what a reader of the released tables sees cell by cell, beside the EMD.
    let notes: Vec<Line> = app
        .preview
        .result
        .as_ref()
        .map(|r| {
            cell_errors_line(&r.report)
                .into_iter()
                .chain(
                    r.report
                        .notes
                        .iter()
                        .map(|n| Line::styled(format!("⚠ {n}"), theme::warning())),
                )
                .collect()
        })
        .unwrap_or_default();
    let notes_height = notes
        .iter()
        .map(|l| widgets::wrapped_rows(&l.to_string(), area.width as usize) as u16)
        .sum::<u16>()
        .min(area.height / 4);
    let [banner, status, table, notes_area, lower] = Layout::vertical([
        Constraint::Length(if area.width >= 150 { 1 } else { 2 }),
        Constraint::Length(if app.preview.result.is_some() && area.width < 150 {
            2
        } else {
            1
        }),
        Constraint::Length(depth + 3),
        Constraint::Length(notes_height),
        Constraint::Min(0),
    ])
    .areas(area);
    widgets::wrapped(frame, notes_area, notes);
    let shown = app.preview.result.as_ref().map(|r| r.data.clone());
    let (text, style) =
        super::super::proxy::banner(&shown.unwrap_or_else(|| session.target_data()));
    widgets::wrapped(frame, banner, vec![Line::styled(text, style)]);
    render_status(frame, status, app, session);
    let Some(result) = &app.preview.result else {
        let text = match &app.preview.error {
            Some(e) => Line::styled(format!("the last preview failed: {e}"), theme::error()),
            None => Line::raw(format!(
                "No preview yet: press {} to run the plan's trials ({} cancels).",
                key(app, Action::Run),
                key(app, Action::Cancel)
            )),
        };
        frame.render_widget(Paragraph::new(text), table);
        return;
    };
    render_table(
        frame,
        table,
        app,
        &result.report,
        app.preview.stale(session),
        &result.data,
    );
    let [bars, overlay] =
        Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(lower);
    render_bars(frame, bars, app, &result.report);
    render_overlay(frame, overlay, app, session, &result.report);
}

fn render_status(frame: &mut Frame, area: Rect, app: &App, session: &Session) {
    let state = &app.preview;
    if let Some(run) = &state.running {
        let (ratio, label) = match run.progress {
            Some((p, clock)) => {
                let done = (p.trial as f64 + p.nodes_done as f64 / p.nodes.max(1) as f64)
                    / p.trials.max(1) as f64;
                (
                    done.clamp(0.0, 1.0),
                    format!(
                        "trial {}/{} · {} · {} · {} cancels",
                        (p.trial + 1).min(p.trials),
                        p.trials,
                        widgets::trial_regions(p.nodes_done, p.nodes, p.step.text()),
                        widgets::trial_timing(&clock, done, Instant::now()),
                        key(app, Action::Cancel)
                    ),
                )
            }
            None => (
                0.0,
                format!("starting… · {} cancels", key(app, Action::Cancel)),
            ),
        };
        frame.render_widget(widgets::progress(ratio, label), Rect { height: 1, ..area });
        return;
    }
    let mut spans = widgets::field("next run:", format!("{} trials", state.trials));
    spans.extend(widgets::field(
        ",",
        match app.preview_seed {
            Some(s) => format!("seed {s}"),
            None => "OS randomness".into(),
        },
    ));
    let (target, style) = super::super::proxy::target_text(app, Context::Preview);
    spans.push(Span::raw(" · "));
    spans.push(Span::styled(target, style));
    if let Some(r) = &state.result {
        spans.extend(widgets::field(
            " · shown:",
            format!(
                "{} trial(s){}, {}, K = {}, consistent = {}",
                r.report.trials,
                r.took.map_or(String::new(), |t| format!(
                    " in {} ({} each)",
                    widgets::duration(t),
                    widgets::duration(t / r.report.trials.max(1) as u32)
                )),
                r.seed
                    .map_or("OS randomness".into(), |s| format!("seed {s}")),
                widgets::int(u64::from(r.report.max_size)),
                r.report
                    .levels
                    .first()
                    .and_then(|l| l.consistent.first())
                    .map_or("", |v| v.variant.as_str())
            ),
        ));
        if state.stale(session) {
            spans.push(Span::raw(" "));
            spans.push(Span::styled(
                format!(
                    " STALE: the plan changed since this run; {} runs it again ",
                    key(app, Action::Run)
                ),
                theme::stale(),
            ));
        }
    }
    widgets::wrapped(frame, area, vec![Line::from(spans)]);
}

/// The label of figures measured on `data`, for titles.
fn data_label(data: &PreviewData) -> Span<'static> {
    match data {
        PreviewData::Confidential => Span::styled(" CONFIDENTIAL ", theme::confidential()),
        PreviewData::Proxy { .. } => Span::styled(" PUBLIC PROXY ", theme::ok()),
    }
}

/// Per level, the consistent release's mean absolute error per cell and the share of
/// its groups in the wrong size cell ([`crate::cell_error`]); `None` when the preview
/// did not measure them.
pub fn cell_errors_line(report: &PreviewReport) -> Option<Line<'static>> {
    let levels: Vec<String> = report
        .levels
        .iter()
        .filter_map(|l| {
            let (m, r) = (l.mae_per_cell?, l.relative_error?);
            Some(format!(
                "{} {}/cell, {:.1}% of groups",
                l.level,
                fmt_num(m.mean),
                r.mean * 100.0
            ))
        })
        .collect();
    (!levels.is_empty()).then(|| {
        Line::from(vec![
            Span::styled("Cell by cell ", theme::heading()),
            Span::styled(
                "(consistent: abs. error per cell, groups in the wrong size cell) ",
                theme::dim(),
            ),
            Span::raw(levels.join(" · ")),
        ])
    })
}

fn render_table(
    frame: &mut Frame,
    area: Rect,
    app: &App,
    report: &PreviewReport,
    stale: bool,
    data: &PreviewData,
) {
    // The method column goes first when the screen is narrow.
    let method_width = report
        .levels
        .iter()
        .map(|l| widgets::text_width(&l.method))
        .max()
        .unwrap_or(0)
        .max(6) as u16;
    let covers = report.levels.iter().any(|l| l.coverage.is_some());
    let wide = area.width >= 84 + method_width + if covers { 4 } else { 0 };
    // The four errors' columns, narrower when the coverage column is shown.
    let stat_width = if covers { 13 } else { 15 };
    let symbol = report
        .levels
        .first()
        .map_or("ε", |l| l.budget.definition().symbol());
    let mut headers = vec![
        "level",
        symbol,
        "method",
        "independent",
        "consistent",
        "bottom-up",
        "omniscient ref.",
    ];
    let mut cols = vec![
        Col::name(6).at_least(10),
        Col::left().at_least(9),
        Col::name(6).at_least(method_width),
        Col::left().at_least(stat_width),
        Col::left().at_least(stat_width),
        Col::left().at_least(stat_width),
        Col::left().at_least(stat_width),
    ];
    if !wide {
        headers.remove(2);
        cols = vec![
            Col::name(6).at_least(10),
            Col::left().at_least(9),
            Col::left().at_least(14),
            Col::left().at_least(14),
            Col::left().at_least(14),
            Col::left().at_least(10),
        ];
    }
    if covers {
        // How often the trials' margins of error held the truth (confidential, as
        // every figure here).
        headers.push("covered");
        cols.push(Col::left().at_least(7));
    }
    let texts: Vec<Vec<String>> = report
        .levels
        .iter()
        .map(|l| {
            let mut cells = vec![
                l.level.clone(),
                widgets::level_amount_as(
                    app.exact_epsilon,
                    l.budget.loss().map(|b| b.amount()).as_ref(),
                ),
                l.method.clone(),
                // A level left unmeasured has no independent estimate, and no
                // reference for the measurement it did not get.
                l.independent
                    .map_or_else(|| "not measured".to_string(), stat),
                stat(l.consistent[0].emd),
                stat(l.bottom_up),
                l.omniscient
                    .map_or_else(|| "not measured".to_string(), fmt_num),
            ];
            if !wide {
                cells.remove(2);
            }
            if covers {
                cells.push(
                    l.coverage
                        .map_or_else(String::new, |c| format!("{:.0}%", c.share.mean * 100.0)),
                );
            }
            cells
        })
        .collect();
    let mut title = vec![Span::raw(
        " Mean per-region EMD to the truth ± s.e. (smaller is better) ",
    )];
    if stale {
        title.push(Span::styled(" STALE ", theme::stale()));
    }
    title.push(data_label(data));
    let block = widgets::block(Line::from(title), area.width);
    let fitted = Columns::fit(
        &cols,
        std::iter::once(headers.clone())
            .chain(texts.iter().map(|t| t.iter().map(String::as_str).collect())),
        block.inner(area).width,
        1,
    );
    let rows: Vec<Row> = texts.iter().map(|t| fitted.row(t)).collect();
    let table = Table::new(rows, fitted.constraints())
        .column_spacing(fitted.spacing())
        .header(fitted.row(&headers).style(theme::heading()))
        .block(block);
    frame.render_widget(table, area);
}

/// The four errors of one level, for the bar chart: (label, mean); a level left
/// unmeasured has no independent or omniscient bar.
pub fn level_bars(report: &PreviewReport, level: usize) -> Vec<(&'static str, f64)> {
    let l = &report.levels[level];
    [
        l.independent.map(|s| ("independent", s.mean)),
        Some(("consistent", l.consistent[0].emd.mean)),
        Some(("bottom-up", l.bottom_up.mean)),
        l.omniscient.map(|o| ("omniscient", o)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn render_bars(frame: &mut Frame, area: Rect, app: &App, report: &PreviewReport) {
    let selected = app.preview.level;
    let block = widgets::block(" Mean EMD, bars per level ", area.width);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let per_level = 5;
    let levels: Vec<usize> = if inner.height as usize >= per_level * report.levels.len() {
        (0..report.levels.len()).collect()
    } else {
        vec![selected.min(report.levels.len() - 1)]
    };
    let width = inner.width as usize;
    // The values as wide as the widest (a level's error may run to millions).
    let value_width = levels
        .iter()
        .flat_map(|&l| level_bars(report, l))
        .map(|(_, v)| fmt_num(v).chars().count())
        .max()
        .unwrap_or(0)
        .max(7);
    let bar_width = width.saturating_sub(13 + value_width + 1);
    let mut lines = Vec::new();
    for l in levels {
        let bars = level_bars(report, l);
        let max = bars.iter().map(|b| b.1).fold(0.0, f64::max);
        let mut head = vec![Span::styled(
            report.levels[l].level.clone(),
            theme::heading(),
        )];
        if report.levels.len() > 1 && inner.height as usize / per_level < report.levels.len() {
            head.push(Span::styled(
                format!(
                    " ({}{} another level)",
                    key(app, Action::Up),
                    key(app, Action::Down)
                ),
                theme::dim(),
            ));
        }
        lines.push(Line::from(head));
        for (i, (label, value)) in bars.into_iter().enumerate() {
            lines.push(Line::from(vec![
                Span::raw(format!(" {label:<12}")),
                Span::styled(
                    format!("{:<bar_width$}", widgets::bar(value, max, bar_width)),
                    theme::series(i + 1),
                ),
                Span::raw(format!(" {:>value_width$}", fmt_num(value))),
            ]));
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn render_overlay(
    frame: &mut Frame,
    area: Rect,
    app: &App,
    session: &Session,
    report: &PreviewReport,
) {
    let id = app.hierarchy.selected;
    let title = format!(
        "{} · last trial ({} {} region, {} view)",
        session.dataset.hierarchy.display_id(id),
        key(app, Action::PrevNode),
        key(app, Action::NextNode),
        key(app, Action::ToggleView)
    );
    let block = widgets::block(
        match app.preview.result.as_ref().map(|r| &r.data) {
            Some(data @ PreviewData::Proxy { .. }) => {
                Line::from(vec![Span::raw(format!(" {title} ")), data_label(data)])
            }
            _ => widgets::confidential_title(&title),
        },
        area.width,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(last) = &report.last_trial else {
        return;
    };
    let on = app
        .preview
        .result
        .as_ref()
        .map_or(&session.dataset, |r| &r.dataset);
    let truth = on.truth().for_diagnostic(Diagnostic::Panel).node(id);
    let noisy = last.independent.get(id.index());
    let consistent = last.consistent.get(id.index());
    let [legend, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(inner);
    let names = ["true", "noisy", "consistent"];
    let mut spans = vec![Span::styled("  size ", theme::dim())];
    for (i, n) in names.iter().enumerate() {
        spans.push(Span::styled(format!("■ {n}  "), theme::series(i)));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), legend);
    let hists = [truth, noisy, consistent];
    let window = widgets::window_for(&hists, app.hierarchy.window, body.height as usize);
    if app.preview.cumulative {
        render_cumulative(frame, body, &hists, window);
    } else {
        let styled: Vec<(HistRef<'_>, _)> = hists
            .iter()
            .enumerate()
            .map(|(i, h)| (*h, theme::series(i)))
            .collect();
        let lines = widgets::histogram_lines(
            &styled,
            window,
            app.hierarchy.log_scale,
            body.width as usize,
        );
        frame.render_widget(Paragraph::new(lines), body);
    }
}

/// Cumulative counts `Hc[0..=window]` as points for a line chart.
pub fn cumulative_points(h: HistRef<'_>, window: u32) -> Vec<(f64, f64)> {
    let mut total = 0u64;
    let b = widgets::buckets(h, window);
    (0..=window as usize)
        .map(|s| {
            total += b[s];
            (s as f64, total as f64)
        })
        .collect()
}

fn render_cumulative(frame: &mut Frame, area: Rect, hists: &[HistRef<'_>; 3], window: u32) {
    let points: Vec<Vec<(f64, f64)>> = hists
        .iter()
        .map(|&h| cumulative_points(h, window))
        .collect();
    let top = points.iter().flatten().map(|p| p.1).fold(1.0, f64::max);
    let names = ["true", "noisy", "consistent"];
    let datasets: Vec<Dataset> = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            Dataset::default()
                .name(names[i])
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(theme::series(i))
                .data(p)
        })
        .collect();
    let chart = Chart::new(datasets)
        .legend_position(None)
        .x_axis(
            Axis::default()
                .title("size")
                .bounds([0.0, f64::from(window.max(1))])
                .labels(vec!["0".to_string(), window.to_string()]),
        )
        .y_axis(
            Axis::default()
                .title("groups ≤ size")
                .bounds([0.0, top])
                .labels(vec!["0".to_string(), fmt_num(top)]),
        );
    frame.render_widget(chart, area);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::CountOfCounts;

    #[test]
    fn cumulative_points_count_groups_up_to_each_size() {
        let h = CountOfCounts::from_pairs(vec![(0, 2), (1, 5), (3, 1), (9, 4)]).unwrap();
        assert_eq!(
            cumulative_points(h.as_ref(), 3),
            vec![(0.0, 2.0), (1.0, 7.0), (2.0, 7.0), (3.0, 8.0)]
        );
    }

    #[test]
    fn the_overlay_histograms_share_one_scale() {
        let small = CountOfCounts::from_pairs(vec![(1, 1)]).unwrap();
        let large = CountOfCounts::from_pairs(vec![(1, 8)]).unwrap();
        let style = ratatui::style::Style::new();
        let lines = widgets::histogram_lines(
            &[(small.as_ref(), style), (large.as_ref(), style)],
            1,
            false,
            47,
        );
        let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        // Bars of (47 − 7) / 2 − 11 = 9 cells: 1/8 of them, then all of them.
        assert_eq!(text[1], "     1         1 █▏                8 █████████ ");
    }
}
