//! The Trade-off screen: what more or less ε buys. CONFIDENTIAL DIAGNOSTICS.
//!
//! * Sweep: one level's ε scaled by [`SWEEP_FACTORS`] (¼× to 4×) with the others fixed,
//!   and every level's mean error of the consistent release, on log axes, the current
//!   choice marked ([`crate::tradeoff::sweep_level`]).
//! * Frontier: at the plan's total, per-level error as the leaves' share grows, beside
//!   the bottom-up baseline, and the plan recommended by a search over each level's
//!   method and the split of ε, never one bottom-up or another plan dominates
//!   ([`crate::tradeoff::frontier`], [`crate::tradeoff::recommend`] with equal weights).
//!
//! Both run on the confidential data or on a public proxy (`p`, [`super::super::proxy`]);
//! the banner says which, and applying a recommendation computed on the confidential
//! data asks first and records the plan as tuned on confidential previews.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Paragraph, Row, Table};

use crate::data::LevelId;
use crate::preview::fmt_num;
use crate::tradeoff::{AllocationPoint, Frontier, PreviewData, SWEEP_FACTORS, SweepProgress};

use super::super::action::{Action, Context};
use super::super::app::{App, Command, Confirm, InputPurpose, Overlay};
use super::super::session::Session;
use super::super::theme;
use super::super::widgets::{self, Col, Columns, stat};
use super::super::worker::{Job, JobKind, TrialClock, Update};
use super::preview::toggle_seed;

/// Which chart is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    Sweep,
    Frontier,
}

/// A run in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Running {
    pub revision: u64,
    /// The level swept (for a sweep).
    pub level: usize,
    pub progress: Option<(SweepProgress, TrialClock)>,
    /// What it runs on.
    pub data: PreviewData,
}

#[derive(Clone, Debug)]
pub struct SweepResult {
    pub level: usize,
    pub points: Vec<AllocationPoint>,
    pub revision: u64,
    pub data: PreviewData,
}

#[derive(Clone, Debug)]
pub struct FrontierResult {
    pub frontier: Box<Frontier>,
    pub revision: u64,
}

#[derive(Clone, Debug)]
pub struct TradeoffState {
    /// The level swept.
    pub level: usize,
    pub view: View,
    pub trials: usize,
    pub sweep: Option<SweepResult>,
    pub frontier: Option<FrontierResult>,
    pub sweep_run: Option<Running>,
    pub frontier_run: Option<Running>,
}

impl Default for TradeoffState {
    fn default() -> Self {
        TradeoffState::for_depth(1)
    }
}

impl TradeoffState {
    /// The leaf level selected (where most of the budget usually goes).
    pub fn for_depth(depth: usize) -> TradeoffState {
        TradeoffState {
            level: depth.saturating_sub(1),
            view: View::Sweep,
            // The CLI's default, so a seed gives the same recommendation in both.
            trials: crate::tradeoff::DEFAULT_TRIALS,
            sweep: None,
            frontier: None,
            sweep_run: None,
            frontier_run: None,
        }
    }
}

/// The index of the factor 1 (the current choice) in [`SWEEP_FACTORS`].
pub fn current_point() -> usize {
    SWEEP_FACTORS
        .iter()
        .position(|&(n, d)| n == d)
        .expect("1× is swept")
}

pub fn update(app: &mut App, action: Action) {
    let Some(session) = &app.session else { return };
    let depth = session.depth();
    let state = &mut app.tradeoff;
    match action {
        Action::Left => state.level = state.level.saturating_sub(1),
        Action::Right => state.level = (state.level + 1).min(depth - 1),
        Action::ToggleView => {
            state.view = match state.view {
                View::Sweep => View::Frontier,
                View::Frontier => View::Sweep,
            }
        }
        Action::Run => start(app),
        Action::Cancel => {
            let kind = match state.view {
                View::Sweep if state.sweep_run.is_some() => Some(JobKind::Sweep),
                View::Frontier if state.frontier_run.is_some() => Some(JobKind::Frontier),
                _ => None,
            };
            if let Some(k) = kind {
                app.outbox.push(Command::Cancel(k));
            }
        }
        Action::TypeTrials => {
            let current = state.trials.to_string();
            app.ask(
                InputPurpose::TradeoffTrials,
                "Trials per point of a sweep or frontier (1 to 1000):",
                &current,
            );
        }
        Action::ToggleSeed => toggle_seed(app),
        Action::ApplyRecommendation => apply_recommendation(app),
        Action::ChooseProxy => super::super::proxy::ask(app),
        _ => {}
    }
}

/// Starts the shown view's run (latest request wins): on the proxy (the synthetic one
/// by default), or the confidential data when chosen; while a proxy opens, the run
/// waits for it.
pub fn start(app: &mut App) {
    if !super::super::proxy::ready_or_queue(app, super::super::app::Screen::Tradeoff) {
        return;
    }
    let Some(session) = &app.session else { return };
    let state = &mut app.tradeoff;
    let (dataset, data) = session.preview_target();
    let running = Some(Running {
        revision: session.revision,
        level: state.level,
        progress: None,
        data: data.clone(),
    });
    let job = match state.view {
        View::Sweep => {
            state.sweep_run = running;
            Job::Sweep {
                dataset,
                plan: session.plan.clone(),
                level: LevelId(state.level),
                trials: state.trials,
                seed: app.preview_seed,
            }
        }
        View::Frontier => {
            state.frontier_run = running;
            Job::Frontier {
                dataset,
                data,
                plan: session.plan.clone(),
                trials: state.trials,
                seed: app.preview_seed,
            }
        }
    };
    app.outbox.push(Command::Start(job));
}

/// Puts the search's recommendation into the plan: at once when it was computed on a
/// proxy, after a question when on the confidential data (the Trade-off and Budget
/// screens' key).
pub fn apply_recommendation(app: &mut App) {
    let Some(f) = app.tradeoff.frontier.as_ref() else {
        let v = app.keymap.key(Context::Tradeoff, Action::ToggleView);
        let r = app.keymap.key(Context::Tradeoff, Action::Run);
        app.warn(format!(
            "no recommendation yet: on the Trade-off screen, show the frontier ({v}) and run it ({r})"
        ));
        return;
    };
    if f.frontier.recommendation.is_none() {
        let why = f
            .frontier
            .verdict
            .clone()
            .unwrap_or_else(|| "the search recommends no plan".into());
        app.warn(why);
        return;
    }
    match f.frontier.data {
        PreviewData::Confidential => {
            app.overlay = Some(Overlay::Confirm(Confirm::ApplyConfidentialRecommendation));
        }
        PreviewData::Proxy { .. } => apply_recommendation_now(app),
    }
}

/// Puts the recommended budgets and methods into the plan.
pub fn apply_recommendation_now(app: &mut App) {
    let exact = app.exact_epsilon;
    let Some(session) = &mut app.session else {
        return;
    };
    let Some((rec, data)) = app.tradeoff.frontier.as_ref().and_then(|f| {
        f.frontier
            .recommendation
            .as_ref()
            .map(|r| (r, &f.frontier.data))
    }) else {
        return;
    };
    match session.apply_recommended(&rec.plan, data) {
        Ok(()) => {
            let levels: Vec<String> = rec
                .budgets
                .iter()
                .zip(&rec.methods)
                .map(|(b, m)| format!("{} {m}", widgets::level_amount_as(exact, b.as_ref())))
                .collect();
            let tuning = match session.plan.tuning_source() {
                Some(source) => format!("{} on {source}", session.plan.tuning()),
                None => session.plan.tuning().to_string(),
            };
            app.info(format!(
                "plan set to the recommendation: {} (tuning: {tuning})",
                levels.join(" / ")
            ));
        }
        Err(e) => app.error(e),
    }
}

pub fn receive(app: &mut App, update: Update) {
    let state = &mut app.tradeoff;
    let failed = |e: String| {
        if e == "cancelled" {
            (super::super::app::Tone::Info, "cancelled".to_string())
        } else {
            (super::super::app::Tone::Error, format!("failed: {e}"))
        }
    };
    match update {
        Update::SweepProgress(p, clock) => {
            if let Some(r) = &mut state.sweep_run {
                r.progress = Some((p, clock));
            }
        }
        Update::FrontierProgress(p, clock) => {
            if let Some(r) = &mut state.frontier_run {
                r.progress = Some((p, clock));
            }
        }
        Update::Swept(result) => {
            let Some(run) = state.sweep_run.take() else {
                return;
            };
            match result {
                Ok(points) => {
                    if let Some(s) = &mut app.session {
                        s.saw_results(&run.data);
                    }
                    state.sweep = Some(SweepResult {
                        level: run.level,
                        points,
                        revision: run.revision,
                        data: run.data,
                    })
                }
                Err(e) => {
                    let (tone, text) = failed(e);
                    app.message = Some((tone, format!("sweep {text}")));
                }
            }
        }
        Update::Frontier(result) => {
            let Some(run) = state.frontier_run.take() else {
                return;
            };
            match result {
                Ok(frontier) => {
                    if let Some(s) = &mut app.session {
                        s.saw_results(&frontier.data);
                    }
                    state.frontier = Some(FrontierResult {
                        frontier,
                        revision: run.revision,
                    })
                }
                Err(e) => {
                    let (tone, text) = failed(e);
                    app.message = Some((tone, format!("frontier {text}")));
                }
            }
        }
        _ => {}
    }
}

/// The key of a Trade-off action, for the screen's sentences.
fn key(app: &App, action: Action) -> String {
    app.keymap.key(Context::Tradeoff, action)
}

/// A level's colour in the charts.
pub fn level_style(level: usize) -> Style {
    const COLORS: [Color; 6] = [
        Color::Yellow,
        Color::Cyan,
        Color::Green,
        Color::Magenta,
        Color::Blue,
        Color::Red,
    ];
    Style::new().fg(COLORS[level % COLORS.len()])
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, session: &Session) {
    let [banner, status, body] = Layout::vertical([
        Constraint::Length(if area.width >= 150 { 1 } else { 2 }),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(area);
    let shown = match app.tradeoff.view {
        View::Sweep => app.tradeoff.sweep.as_ref().map(|s| s.data.clone()),
        View::Frontier => app
            .tradeoff
            .frontier
            .as_ref()
            .map(|f| f.frontier.data.clone()),
    };
    let (text, style) =
        super::super::proxy::banner(&shown.unwrap_or_else(|| session.target_data()));
    widgets::wrapped(frame, banner, vec![Line::styled(text, style)]);
    render_status(frame, status, app, session);
    let names = session.dataset.hierarchy.level_names();
    match app.tradeoff.view {
        View::Sweep => match &app.tradeoff.sweep {
            Some(s) => render_sweep(frame, body, app, s, names),
            None => empty(
                frame,
                body,
                &format!(
                    "No sweep yet: {}{} picks the level, {} sweeps its {} from ¼× to 4× ({}: frontier view).",
                    key(app, Action::Left),
                    key(app, Action::Right),
                    key(app, Action::Run),
                    session.symbol(),
                    key(app, Action::ToggleView)
                ),
            ),
        },
        View::Frontier => match &app.tradeoff.frontier {
            Some(f) => render_frontier(
                frame,
                body,
                app,
                &f.frontier,
                &key(app, Action::ApplyRecommendation),
            ),
            None => empty(
                frame,
                body,
                &format!(
                    "No frontier yet: {} runs it at the plan's total {} ({}: sweep view).",
                    key(app, Action::Run),
                    session.symbol(),
                    key(app, Action::ToggleView)
                ),
            ),
        },
    }
}

fn empty(frame: &mut Frame, area: Rect, text: &str) {
    widgets::wrapped(frame, area, vec![Line::raw(text.to_string())]);
}

fn render_status(frame: &mut Frame, area: Rect, app: &App, session: &Session) {
    let state = &app.tradeoff;
    let (run, what) = match state.view {
        View::Sweep => (&state.sweep_run, "sweep"),
        View::Frontier => (&state.frontier_run, "frontier"),
    };
    if let Some(run) = run {
        let (ratio, label) = match run.progress {
            Some((p, clock)) => {
                let t = p.trial;
                let done = (p.trials_done as f64 + t.nodes_done as f64 / t.nodes.max(1) as f64)
                    / p.trials_total.max(1) as f64;
                (
                    done.clamp(0.0, 1.0),
                    format!(
                        "{what}: {} {}/{}, trial {}/{} · {} · {} · {} cancels",
                        if p.round > 1 {
                            "second round, plan"
                        } else {
                            "point"
                        },
                        p.point + 1,
                        p.points,
                        (t.trial + 1).min(t.trials),
                        t.trials,
                        widgets::trial_regions(t.nodes_done, t.nodes, t.step.text()),
                        widgets::trial_timing(&clock, done, Instant::now()),
                        key(app, Action::Cancel)
                    ),
                )
            }
            None => (
                0.0,
                format!("{what}: starting… · {} cancels", key(app, Action::Cancel)),
            ),
        };
        frame.render_widget(widgets::progress(ratio, label), area);
        return;
    }
    let level_name = session
        .dataset
        .hierarchy
        .level_name(LevelId(state.level))
        .to_string();
    let mut spans = match state.view {
        View::Sweep => widgets::field(
            "sweep of level",
            format!(
                "{level_name} ({}{})",
                key(app, Action::Left),
                key(app, Action::Right)
            ),
        ),
        View::Frontier => widgets::field(
            &format!("frontier at total {} =", session.symbol()),
            app.epsilon_text(&session.levels_total()),
        ),
    };
    spans.extend(widgets::field(" · trials", state.trials.to_string()));
    spans.extend(widgets::field(
        " · seed",
        app.preview_seed.map_or("OS".into(), |s| s.to_string()),
    ));
    let (target, style) = super::super::proxy::target_text(app, Context::Tradeoff);
    spans.push(Span::raw(" · "));
    spans.push(Span::styled(target, style));
    let revision = match state.view {
        View::Sweep => state.sweep.as_ref().map(|s| s.revision),
        View::Frontier => state.frontier.as_ref().map(|f| f.revision),
    };
    if revision.is_some_and(|r| r != session.revision) {
        spans.push(Span::raw(" "));
        spans.push(Span::styled(
            format!(
                " STALE: the plan changed; {} runs it again ",
                key(app, Action::Run)
            ),
            theme::stale(),
        ));
    }
    frame.render_widget(
        Paragraph::new(widgets::fit_line(
            Line::from(spans),
            usize::from(area.width),
        )),
        area,
    );
}

/// log10, for log axes.
fn lg(x: f64) -> f64 {
    x.max(1e-9).log10()
}

/// Bounds of a log axis and three labels (low, middle, high) in real units.
fn log_axis(values: impl Iterator<Item = f64>) -> ([f64; 2], Vec<String>) {
    let (lo, hi) = values
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    let (lo, hi) = if lo.is_finite() {
        (lg(lo), lg(hi))
    } else {
        (0.0, 1.0)
    };
    let (lo, hi) = if hi - lo < 1e-6 {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    };
    let labels = [lo, (lo + hi) / 2.0, hi]
        .iter()
        .map(|v| fmt_num(10f64.powf(*v)))
        .collect();
    ([lo, hi], labels)
}

/// The chart beside its table on a wide screen, else above it: the chart keeps half
/// the height and at least 10 rows when there are; the table gets what is left, up to
/// all its rows (see [`shown_rows`]).
fn split(area: Rect, table_rows: u16) -> (Rect, Rect) {
    if area.width >= 140 {
        let [chart, table] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
                .areas(area);
        (chart, table)
    } else {
        let chart_rows = (area.height / 2).max(area.height.min(10));
        let table = (table_rows + 3).min(area.height.saturating_sub(chart_rows));
        let [chart, table] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(table)]).areas(area);
        (chart, table)
    }
}

/// The rows of a table of `rows` that a table area `height` rows tall shows (borders
/// and the header take 3), centred on `focus` (the current plan, the recommendation)
/// when not all fit.
pub fn shown_rows(rows: usize, height: u16, focus: usize) -> std::ops::Range<usize> {
    let fit = usize::from(height.saturating_sub(3));
    if fit >= rows {
        return 0..rows;
    }
    let first = focus.saturating_sub(fit / 2).min(rows - fit);
    first..first + fit
}

/// A table's title, saying which rows show when not all do.
fn rows_title(title: &str, shown: &std::ops::Range<usize>, rows: usize) -> Line<'static> {
    if shown.len() == rows {
        Line::raw(format!(" {title} "))
    } else if shown.is_empty() {
        Line::raw(format!(
            " {title} · {rows} rows: a taller terminal shows them "
        ))
    } else {
        // Which rows are shown stays in view when the title is cut.
        Line::from(vec![
            Span::raw(format!(" {title}")),
            Span::raw(format!(
                " · rows {}–{} of {rows} ",
                shown.start + 1,
                shown.end
            )),
        ])
    }
}

/// What a trade-off chart draws, per level: a line, marked points and (for the
/// frontier) a reference line; with the axes' bounds and labels. Log scales are log10.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartData {
    pub lines: Vec<Vec<(f64, f64)>>,
    pub marks: Vec<Vec<(f64, f64)>>,
    pub references: Vec<Vec<(f64, f64)>>,
    pub x_bounds: [f64; 2],
    pub x_labels: Vec<String>,
    pub y_bounds: [f64; 2],
    pub y_labels: Vec<String>,
}

/// A sweep on log–log axes, the current plan's point marked on every level's line.
pub fn sweep_chart(sweep: &SweepResult, levels: usize) -> ChartData {
    let current = current_point();
    let lines: Vec<Vec<(f64, f64)>> = (0..levels)
        .map(|l| {
            sweep
                .points
                .iter()
                .map(|p| (lg(p.x), lg(p.consistent[l].mean)))
                .collect()
        })
        .collect();
    let marks = lines
        .iter()
        .map(|s| s.get(current).copied().into_iter().collect())
        .collect();
    let (x_bounds, x_labels) = log_axis(sweep.points.iter().map(|p| p.x));
    let (y_bounds, y_labels) = log_axis(
        sweep
            .points
            .iter()
            .flat_map(|p| p.consistent.iter().map(|c| c.mean)),
    );
    ChartData {
        lines,
        marks,
        references: vec![Vec::new(); levels],
        x_bounds,
        x_labels,
        y_bounds,
        y_labels,
    }
}

/// The frontier: leaf share in percent against log error, bottom-up as a dotted
/// horizontal line per level, the recommended plan marked (on the line, or off it when
/// its methods differ from the plan's).
pub fn frontier_chart(f: &Frontier) -> ChartData {
    let n = f.levels.len();
    let lines: Vec<Vec<(f64, f64)>> = (0..n)
        .map(|l| {
            f.points
                .iter()
                .map(|p| (p.x * 100.0, lg(p.consistent[l].mean)))
                .collect()
        })
        .collect();
    let rec_x = f.recommendation.as_ref().map(|r| r.x * 100.0);
    let (x0, x1) = f
        .points
        .iter()
        .map(|p| p.x * 100.0)
        .chain(rec_x)
        .fold((100.0f64, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
    let (x0, x1) = if x1 - x0 < 1e-9 {
        (x0 - 1.0, x1 + 1.0)
    } else {
        (x0, x1)
    };
    let references = f
        .bottom_up
        .iter()
        .map(|b| {
            (0..=24)
                .map(|i| (x0 + (x1 - x0) * f64::from(i) / 24.0, lg(b.mean)))
                .collect()
        })
        .collect();
    let marks = (0..n)
        .map(|l| {
            f.recommendation
                .as_ref()
                .map(|r| (r.x * 100.0, lg(r.consistent[l].mean)))
                .into_iter()
                .collect()
        })
        .collect();
    let (y_bounds, y_labels) = log_axis(
        f.points
            .iter()
            .flat_map(|p| p.consistent.iter().map(|c| c.mean))
            .chain(f.bottom_up.iter().map(|b| b.mean))
            .chain(
                f.recommendation
                    .iter()
                    .flat_map(|r| r.consistent.iter().map(|c| c.mean)),
            ),
    );
    ChartData {
        lines,
        marks,
        references,
        x_bounds: [x0, x1],
        x_labels: vec![format!("{x0:.0}%"), format!("{x1:.0}%")],
        y_bounds,
        y_labels,
    }
}

/// The chart widget for prepared data: lines in the levels' colours, marks drawn with
/// `mark`, references dotted.
fn chart<'a>(
    data: &'a ChartData,
    names: &[String],
    mark: Marker,
    title: String,
    width: u16,
) -> Chart<'a> {
    let mut datasets = Vec::new();
    for (l, line) in data.lines.iter().enumerate() {
        datasets.push(
            Dataset::default()
                .name(names[l].clone())
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(level_style(l))
                .data(line),
        );
        datasets.push(
            Dataset::default()
                .marker(Marker::Dot)
                .style(level_style(l))
                .data(&data.references[l]),
        );
        datasets.push(
            Dataset::default()
                .marker(mark)
                .style(level_style(l))
                .data(&data.marks[l]),
        );
    }
    // The legend is a line of its own under the chart ([`legend`]): drawn inside the
    // plot, ratatui's legend covers the curves' upper right corner.
    Chart::new(datasets)
        .legend_position(None)
        .block(widgets::block(title, width))
        .x_axis(
            // No axis titles: drawn inside the plot they cover the curves; the block's
            // title says what the axes are.
            Axis::default()
                .bounds(data.x_bounds)
                .labels(data.x_labels.clone()),
        )
        .y_axis(
            Axis::default()
                .bounds(data.y_bounds)
                .labels(data.y_labels.clone()),
        )
}

/// The charts' legend, one line under the chart: each level's colour, then what the
/// other marks mean.
fn legend(names: &[String], marks: &[&str]) -> Line<'static> {
    let mut spans = Vec::new();
    for (l, name) in names.iter().enumerate() {
        spans.push(Span::styled(format!("━ {name}  "), level_style(l)));
    }
    spans.push(Span::styled(marks.join(" · "), theme::dim()));
    Line::from(spans)
}

/// `area` less one line at its foot for the legend.
fn with_legend(area: Rect) -> (Rect, Rect) {
    let [chart, legend] = Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
    (chart, legend)
}

fn render_sweep(frame: &mut Frame, area: Rect, app: &App, sweep: &SweepResult, names: &[String]) {
    let (chart_area, table_area) = split(area, sweep.points.len() as u16);
    let current = current_point();
    let swept = &names[sweep.level];
    let symbol = plan_symbol(app);
    let data = sweep_chart(sweep, names.len());
    let (chart_area, legend_area) = with_legend(chart_area);
    frame.render_widget(
        chart(
            &data,
            names,
            Marker::Dot,
            format!(" EMD per level (y) as {symbol}({swept}) varies (x), log axes "),
            chart_area.width,
        ),
        chart_area,
    );
    widgets::wrapped(frame, legend_area, vec![legend(names, &["• current plan"])]);
    let mut header = vec![format!("{symbol} {swept}"), "×".to_string()];
    header.extend(names.iter().cloned());
    let rows: Vec<(Vec<String>, Style)> = sweep
        .points
        .iter()
        .zip(SWEEP_FACTORS)
        .enumerate()
        .map(|(i, (p, (n, d)))| {
            let mut cells = vec![
                widgets::level_amount_as(app.exact_epsilon, p.budgets[sweep.level].as_ref()),
                if d == 1 {
                    format!("{n}")
                } else {
                    format!("{n}/{d}")
                },
            ];
            cells.extend(p.consistent.iter().map(|c| stat(*c)));
            let style = if i == current {
                theme::heading()
            } else {
                Style::new()
            };
            (cells, style)
        })
        .collect();
    let all = rows.len();
    let shown = shown_rows(all, table_area.height, current);
    let title = rows_title("Sweep (bold: the current plan)", &shown, all);
    render_rows(frame, table_area, title, header, rows, shown, 2);
}

/// A table of texts in `area`: the header, then the rows in `shown` (each with its
/// style). Columns are as wide as their texts (the first `left` columns left-aligned,
/// the figures right-aligned, at least 15 cells so that they line up across runs), and
/// when the area is narrower the widest give way, ending in "…".
fn render_rows(
    frame: &mut Frame,
    area: Rect,
    title: Line<'static>,
    header: Vec<String>,
    rows: Vec<(Vec<String>, Style)>,
    shown: std::ops::Range<usize>,
    left: usize,
) {
    let cols: Vec<Col> = (0..header.len())
        .map(|i| {
            if i < left {
                Col::name(6)
            } else {
                Col::left().at_least(15)
            }
        })
        .collect();
    let block = widgets::block(title, area.width);
    let fitted = Columns::fit(
        &cols,
        std::iter::once(&header)
            .chain(rows.iter().map(|(cells, _)| cells))
            .map(|r| r.iter().map(String::as_str)),
        block.inner(area).width,
        1,
    );
    let body: Vec<Row> = rows
        .iter()
        .skip(shown.start)
        .take(shown.len())
        .map(|(cells, style)| fitted.row(cells).style(*style))
        .collect();
    frame.render_widget(
        Table::new(body, fitted.constraints())
            .column_spacing(fitted.spacing())
            .header(fitted.row(&header).style(theme::heading()))
            .block(block),
        area,
    );
}

fn render_frontier(frame: &mut Frame, area: Rect, app: &App, f: &Frontier, apply_key: &str) {
    let [main, rec] = Layout::vertical([Constraint::Min(6), Constraint::Length(3)]).areas(area);
    let rec_index = f.recommendation.as_ref().map(|r| r.candidate);
    // The recommended (★) and current (cur) plans get rows of their own when off the
    // line (their methods differ from the plan's); the line below names the methods.
    let extra: Vec<(usize, &str)> = [(rec_index, "★"), (f.current, "cur")]
        .into_iter()
        .filter_map(|(i, what)| i.map(|i| (i, what)))
        .filter(|(i, _)| !f.point_candidates.contains(i))
        .fold(Vec::new(), |mut v, (i, what)| {
            if !v.iter().any(|(j, _)| *j == i) {
                v.push((i, what));
            }
            v
        });
    let (chart_area, table_area) = split(main, (f.points.len() + extra.len()) as u16 + 1);
    let data = frontier_chart(f);
    let (chart_area, legend_area) = with_legend(chart_area);
    frame.render_widget(
        chart(
            &data,
            &f.levels,
            Marker::Block,
            " EMD per level (log y) vs the leaves' share of the total (x) ".into(),
            chart_area.width,
        ),
        chart_area,
    );
    widgets::wrapped(
        frame,
        legend_area,
        vec![legend(&f.levels, &["··· bottom-up", "█ recommended"])],
    );
    let mut header = vec!["leaf share".to_string(), "budgets (root first)".to_string()];
    header.extend(f.levels.iter().cloned());
    let budgets = |budgets: &[Option<crate::tradeoff::Amount>]| {
        budgets
            .iter()
            .map(|b| widgets::level_amount_as(app.exact_epsilon, b.as_ref()))
            .collect::<Vec<_>>()
            .join(" / ")
    };
    let mut rows: Vec<(Vec<String>, Style)> = f
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let c = f.point_candidates.get(i).copied();
            let star = c.is_some() && c == rec_index;
            let current = c.is_some() && c == f.current;
            // A plan another clearly beat after the first round ran fewer trials.
            let cut = c.is_some_and(|c| f.candidates[c].trials < f.trials);
            let mut cells = vec![
                format!(
                    "{:.0}%{}{}{}",
                    p.x * 100.0,
                    if star { " ★" } else { "" },
                    if current { " cur" } else { "" },
                    if cut { " †" } else { "" }
                ),
                budgets(&p.budgets),
            ];
            cells.extend(p.consistent.iter().map(|c| stat(*c)));
            let style = if star { theme::heading() } else { Style::new() };
            (cells, style)
        })
        .collect();
    for (i, what) in &extra {
        let c = &f.candidates[*i];
        let mut cells = vec![format!("{:.0}% {what}", c.x * 100.0), budgets(&c.budgets)];
        cells.extend(c.consistent.iter().map(|s| stat(*s)));
        let style = if Some(*i) == rec_index {
            theme::heading()
        } else {
            Style::new()
        };
        rows.push((cells, style));
    }
    let mut bu = vec![
        "bottom-up".to_string(),
        format!(
            "all {} on the leaves, {}",
            app.epsilon_text(&f.total_epsilon),
            f.bottom_up_method
        ),
    ];
    bu.extend(f.bottom_up.iter().map(|b| stat(*b)));
    rows.push((bu, theme::dim()));
    let all = rows.len();
    // The recommended row: on the line, or among the rows of its own after it.
    let focus = rec_index
        .and_then(|r| {
            f.point_candidates.iter().position(|c| *c == r).or_else(|| {
                extra
                    .iter()
                    .position(|(i, _)| *i == r)
                    .map(|e| f.points.len() + e)
            })
        })
        .unwrap_or(0);
    let shown = shown_rows(all, table_area.height, focus);
    let title = rows_title(
        &format!(
            "Frontier at {} = {} · {} trial(s)/plan{} · {} plans{} · ± s.e.",
            plan_symbol(app),
            app.epsilon_text(&f.total_epsilon),
            f.trials,
            match f.candidates.iter().map(|c| c.trials).min() {
                Some(t) if t < f.trials => format!(" († {t}: clearly beaten)"),
                _ => String::new(),
            },
            f.candidates.len(),
            match f.held_levels() {
                held if held.is_empty() => String::new(),
                held => format!(" · held: {}", held.join(", ")),
            }
        ),
        &shown,
        all,
    );
    render_rows(frame, table_area, title, header, rows, shown, 2);
    widgets::wrapped(frame, rec, vec![recommendation_line(app, f, apply_key)]);
}

/// The recommendation in one line: the plan, its error against bottom-up with the
/// uncertainty, where it was computed and the key that applies it; or why there is
/// none.
pub fn recommendation_line(app: &App, f: &Frontier, apply_key: &str) -> Line<'static> {
    match (&f.recommendation, &f.verdict) {
        (Some(r), _) => {
            let levels: Vec<String> = r
                .budgets
                .iter()
                .zip(&r.methods)
                .map(|(b, m)| {
                    format!(
                        "{} {m}",
                        widgets::level_amount_as(app.exact_epsilon, b.as_ref())
                    )
                })
                .collect();
            let ratios = r.ratio_texts();
            let (on, style) = match &f.data {
                PreviewData::Confidential => (
                    "computed on the CONFIDENTIAL data".to_string(),
                    theme::confidential(),
                ),
                PreviewData::Proxy { label, .. } => {
                    (format!("computed on the {label}"), theme::ok())
                }
            };
            let mut spans = vec![
                Span::styled("★ Recommended ", theme::heading()),
                Span::raw(format!(
                    "{}{} — error vs bottom-up per level {}; ",
                    if r.is_current {
                        "(the current plan) "
                    } else {
                        ""
                    },
                    levels.join(" / "),
                    ratios.join(", "),
                )),
                Span::styled(on, style),
            ];
            if !r.is_current {
                spans.push(Span::raw(format!("; {apply_key} puts it in the plan")));
            }
            Line::from(spans)
        }
        (None, Some(v)) => Line::styled(format!("No recommendation: {v}"), theme::warning()),
        (None, None) => Line::raw("no recommendation"),
    }
}

#[cfg(test)]
#[path = "tradeoff_tests.rs"]
mod tests;

/// The symbol of the open plan's measure (`ε` or `ρ`): a sweep or frontier is of the
/// plan it was run for, and one run before a toggle is marked as for an earlier plan.
fn plan_symbol(app: &App) -> &'static str {
    app.session.as_ref().map_or("ε", |s| s.symbol())
}
