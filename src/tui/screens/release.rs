//! The Release screen: draw one release with fresh OS randomness, look at what would be
//! published and at its structural checks, then approve and export it or discard it.
//!
//! Only public output is shown here: no comparison with the true data. The ledger lock
//! is taken before the draw (cap check) and held until the operator decides; a draw
//! that was shown is always recorded — written, or discarded with its ε spent.

use crate::wire::Named;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Row, Table};

use crate::data::{Dataset, LevelId, NodeId};
use crate::histogram::Histograms;
use crate::histogram::Size;
use crate::noise::Randomness;
use crate::release::outputs::export::{OutputFormat, check_output};
use crate::release::outputs::manifest::Manifest;
use crate::release::pipeline::checks::Checks;
use crate::release::pipeline::draw::Draw;
use crate::release::plan::{MaxSize, ReleasePlan};

use super::super::action::{Action, Context};
use super::super::app::{App, Command, Confirm, InputPurpose, Overlay, retire};
use super::super::session::Session;
use super::super::theme;
use super::super::widgets::{self, Col, Columns, int};
use super::super::worker::{Job, JobKind, PendingSlot, Update};

/// What became of a draw.
#[derive(Clone, Debug)]
pub enum Decision {
    Undecided,
    Exported {
        out: PathBuf,
        manifest: Box<Manifest>,
    },
    Discarded,
    /// The export failed after the ledger recorded the draw: spent, not written.
    RecordedNotWritten {
        message: String,
    },
}

/// A draw, the plan it used and what became of it.
#[derive(Clone)]
pub struct DrawnRelease {
    pub draw: Arc<Draw>,
    pub plan: ReleasePlan,
    pub dataset: Arc<Dataset>,
    /// The draw as the release transaction holds it (recorded as pending, ledger lock
    /// held) while it is undecided; `None` once decided.
    pub pending: Option<PendingSlot>,
    pub decision: Decision,
    /// \[uncertainty\] The margins of error of every cell (public: post-processing).
    pub margins: Option<Arc<crate::release::margins::Uncertainty>>,
}

/// Work in progress on this screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Busy {
    Drawing {
        progress: Option<(usize, usize)>,
        /// Another coco session holds the ledger (who): the draw waits for it.
        waiting: Option<String>,
        /// The operator cancelled: a draw that still completes is never shown.
        cancelled: bool,
    },
    Exporting {
        out: PathBuf,
    },
    Discarding,
}

#[derive(Clone, Default)]
pub struct ReleaseState {
    pub drawn: Option<DrawnRelease>,
    pub busy: Option<Busy>,
    pub error: Option<String>,
    /// The level whose table is shown, and the first row.
    pub level: usize,
    pub scroll: usize,
    /// When the draw under way started.
    pub drawing_since: Option<Instant>,
    /// The format the approved release is written in (`coco release --format`).
    pub format: OutputFormat,
}

impl ReleaseState {
    pub fn undecided(&self) -> bool {
        self.drawn
            .as_ref()
            .is_some_and(|d| matches!(d.decision, Decision::Undecided))
    }
}

/// The key of a Release action, for the screen's sentences.
fn key(app: &App, action: Action) -> String {
    app.keymap.key(Context::Release, action)
}

/// The default export directory: `release-<dataset>-<n>` with the first free `n`.
pub fn default_out(dataset: &Dataset) -> PathBuf {
    let name = dataset.name();
    (1..)
        .map(|n| PathBuf::from(format!("release-{name}-{n}")))
        .find(|p| !p.exists())
        .expect("a free name")
}

pub fn update(app: &mut App, action: Action) {
    let Some(session) = &app.session else { return };
    let depth = session.depth();
    let rows = app.release.drawn.as_ref().map_or(0, |_| {
        session
            .dataset
            .hierarchy
            .level_len(LevelId(app.release.level.min(depth - 1)))
    });
    let state = &mut app.release;
    match action {
        Action::Draw => draw(app),
        Action::Approve => {
            if !state.undecided() || state.busy.is_some() {
                let d = key(app, Action::Draw);
                app.warn(format!("nothing to approve: draw a release first ({d})"));
                return;
            }
            let out = default_out(&session.dataset);
            let prompt = format!(
                "Export the approved release in {} ({} changes it before you approve) to the directory (must not exist, or be empty):",
                state.format.label(),
                key(app, Action::ToggleFormat)
            );
            app.ask(InputPurpose::ExportDir, &prompt, &out.display().to_string());
        }
        Action::Discard => {
            if !state.undecided() || state.busy.is_some() {
                let d = key(app, Action::Draw);
                app.warn(format!("nothing to discard: draw a release first ({d})"));
                return;
            }
            app.overlay = Some(Overlay::Confirm(Confirm::Discard));
        }
        Action::ToggleFormat => {
            state.format = state.format.next();
            let label = state.format.label();
            app.info(format!("the release will be exported in {label}"));
        }
        Action::WriteReport => write_report(app),
        Action::Cancel => {
            if let Some(Busy::Drawing { cancelled, .. }) = &mut state.busy {
                *cancelled = true;
                app.outbox.push(Command::Cancel(JobKind::Draw));
            }
        }
        Action::Up => state.scroll = state.scroll.saturating_sub(1),
        Action::Down => state.scroll = (state.scroll + 1).min(rows.saturating_sub(1)),
        Action::PageUp => state.scroll = state.scroll.saturating_sub(10),
        Action::PageDown => state.scroll = (state.scroll + 10).min(rows.saturating_sub(1)),
        Action::Left => {
            state.level = state.level.saturating_sub(1);
            state.scroll = 0;
        }
        Action::Right => {
            state.level = (state.level + 1).min(depth - 1);
            state.scroll = 0;
        }
        _ => {}
    }
}

/// Writes the public report of the exported release beside its directory, from its
/// published files (as `coco report RELEASE --out RELEASE-report.html`).
fn write_report(app: &mut App) {
    let Some(DrawnRelease {
        decision: Decision::Exported { out, .. },
        ..
    }) = &app.release.drawn
    else {
        let a = key(app, Action::Approve);
        app.warn(format!(
            "no exported release to report on: draw, then approve and export it ({a}) first"
        ));
        return;
    };
    let file = crate::report::place::beside(out);
    let written = crate::report::release_files::read(out).and_then(|facts| {
        let html = crate::report::build(&facts, &crate::report::Audience::Public);
        crate::report::place::write(&file, crate::report::Kind::Public, &html)
    });
    match written {
        Ok(()) => app.info(format!(
            "wrote the public report {} (from the published files; publish it beside the release)",
            crate::tui::widgets::path_text(&file)
        )),
        Err(e) => app.error(format!("no report written: {e}")),
    }
}

/// Starts a draw unless one is undecided or work is in progress.
fn draw(app: &mut App) {
    let Some(session) = &app.session else { return };
    if app.release.undecided() {
        let (a, x) = (key(app, Action::Approve), key(app, Action::Discard));
        app.warn(format!(
            "a drawn release is undecided: approve ({a}) or discard ({x}) it first"
        ));
        return;
    }
    if app.release.busy.is_some() {
        let esc = key(app, Action::Cancel);
        app.warn(format!(
            "wait for the work in progress to finish ({esc} cancels a draw)"
        ));
        return;
    }
    let Some(ledger) = app.ledger.clone() else {
        app.error("no coco home for the ledger: set COCO_HOME to a writable directory");
        return;
    };
    app.outbox.push(Command::Start(Job::Draw {
        dataset: session.dataset.clone(),
        plan: session.plan.clone(),
        ledger,
    }));
    app.release.busy = Some(Busy::Drawing {
        progress: None,
        waiting: None,
        cancelled: false,
    });
    app.release.drawing_since = Some(Instant::now());
    app.release.error = None;
    // Decided (an undecided draw is never replaced): its tables may hold millions of
    // regions, freed off the UI thread.
    retire(app.release.drawn.take());
}

/// Exports the undecided draw to `text` (an error keeps the field open).
pub fn export(app: &mut App, text: &str) -> Result<(), String> {
    if app.release.busy.is_some() {
        return Err("wait for the work in progress to finish".into());
    }
    if text.is_empty() {
        return Err("type a directory name".into());
    }
    let out = app.resolve(text);
    check_output(&out).map_err(|e| e.to_string())?;
    let Some(drawn) = &app.release.drawn else {
        return Err("nothing to export".into());
    };
    let Some(pending) = drawn.pending.clone() else {
        return Err("this draw is already decided".into());
    };
    app.outbox.push(Command::Start(Job::Export {
        pending,
        out: out.clone(),
        format: app.release.format,
    }));
    app.release.busy = Some(Busy::Exporting { out });
    Ok(())
}

/// Records the undecided draw as discarded; `false` if there is none to record.
pub fn discard(app: &mut App, note: &str) -> bool {
    if app.release.busy.is_some() {
        return false;
    }
    let Some(drawn) = &app.release.drawn else {
        return false;
    };
    let Some(pending) = drawn.pending.clone() else {
        return false;
    };
    app.outbox.push(Command::Start(Job::Discard {
        pending,
        note: note.to_string(),
    }));
    app.release.busy = Some(Busy::Discarding);
    true
}

pub fn receive(app: &mut App, update: Update) {
    match update {
        Update::DrawProgress { done, total } => {
            if let Some(Busy::Drawing {
                progress, waiting, ..
            }) = &mut app.release.busy
            {
                *progress = Some((done, total));
                *waiting = None;
            }
        }
        Update::DrawWaiting(holder) => {
            if let Some(Busy::Drawing { waiting, .. }) = &mut app.release.busy {
                *waiting = Some(holder);
            }
        }
        Update::Drawn(result) => {
            let Some(Busy::Drawing { cancelled, .. }) = app.release.busy.take() else {
                // Not waited for (superseded): dropping a pending draw records a discard.
                return;
            };
            match (result, &app.session) {
                (Ok(pending), _) if cancelled => {
                    // Cancelled too late: the draw was already recorded as pending. It is
                    // never shown, and is recorded as discarded (its ε stays spent).
                    let epsilon = match &pending.recorded().loss {
                        crate::privacy::Loss::Pure(e) => app.epsilon_text(e),
                        other => other.labelled(),
                    };
                    let slot: PendingSlot = Arc::new(std::sync::Mutex::new(Some(*pending)));
                    app.outbox.push(Command::Start(Job::Discard {
                        pending: slot,
                        note:
                            "cancelled by the operator after it was drawn and recorded; never shown"
                                .into(),
                    }));
                    app.release.busy = Some(Busy::Discarding);
                    app.warn(format!(
                        "draw cancelled too late: it had already been recorded in the ledger, so it is recorded as discarded (not shown); its ε = {epsilon} stays spent"
                    ));
                }
                (Ok(pending), Some(_)) => {
                    let draw = pending.draw().clone();
                    let plan = pending.plan().clone();
                    let dataset = pending.dataset().clone();
                    let margins = pending.margins().cloned();
                    app.release.drawn = Some(DrawnRelease {
                        draw,
                        plan,
                        dataset,
                        margins,
                        pending: Some(Arc::new(std::sync::Mutex::new(Some(*pending)))),
                        decision: Decision::Undecided,
                    });
                    app.release.scroll = 0;
                    let (a, x) = (key(app, Action::Approve), key(app, Action::Discard));
                    app.info(format!(
                        "drawn and recorded as pending: review the tables and checks, then approve ({a}) or discard ({x})"
                    ));
                }
                // No session to show it in: dropping it records a discard.
                (Ok(_), None) => {}
                (Err(f), _) if f.cancelled => {
                    app.info("draw cancelled before anything was measured: nothing was drawn or recorded");
                }
                (Err(f), _) => {
                    let message = f.message.clone();
                    app.release.error = Some(message.clone());
                    app.error(format!("no release drawn: {message}"));
                }
            }
            refresh_ledger(app);
        }
        Update::Exported(result) => {
            app.release.busy = None;
            let Some(drawn) = &mut app.release.drawn else {
                return;
            };
            let symbol = drawn.draw.guarantee().definition().symbol();
            match result {
                Ok(approved) => {
                    let out = approved.out.clone();
                    drawn.pending = None;
                    drawn.decision = Decision::Exported {
                        out: out.clone(),
                        manifest: Box::new(approved.manifest),
                    };
                    let w = key(app, Action::WriteReport);
                    match approved.recorded {
                        Ok(r) => app.info(format!(
                            "exported to {} and recorded in the ledger as {} (draw {}); {w} writes its public report",
                            crate::tui::widgets::path_text(&out),
                            r.status.label(),
                            r.id
                        )),
                        Err(e) => app.warn(format!(
                            "exported to {}, but the ledger could not record it as written ({e}); its pending line keeps the {symbol} counted",
                            crate::tui::widgets::path_text(&out)
                        )),
                    }
                }
                Err(failure) => {
                    if !failure.still_pending {
                        drawn.pending = None;
                        drawn.decision = Decision::RecordedNotWritten {
                            message: failure.message.clone(),
                        };
                    }
                    app.release.error = Some(failure.message.clone());
                    app.error(format!("export failed: {}", failure.message));
                }
            }
            refresh_ledger(app);
        }
        Update::Discarded(result) => {
            app.release.busy = None;
            let Some(drawn) = &mut app.release.drawn else {
                refresh_ledger(app);
                return;
            };
            match result {
                Ok(_) => {
                    let symbol = drawn.draw.guarantee().definition().symbol();
                    drawn.pending = None;
                    drawn.decision = Decision::Discarded;
                    if app.quit_after_discard {
                        app.quit = true;
                    }
                    app.info(format!(
                        "discarded: recorded in the ledger; its {symbol} stays spent"
                    ));
                }
                Err(e) => {
                    app.quit_after_discard = false;
                    app.error(format!(
                        "could not record the discard (the draw is still undecided): {e}"
                    ));
                }
            }
            refresh_ledger(app);
        }
        _ => {}
    }
}

fn refresh_ledger(app: &mut App) {
    let ledger = app.ledger.clone();
    if let Some(s) = &mut app.session {
        s.refresh_ledger(ledger.as_ref());
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, session: &Session) {
    let checks = app.release.drawn.as_ref().map(|d| check_lines(app, d));
    // Each line takes as many rows as it wraps to.
    let checks_height = checks
        .as_ref()
        .map_or(0, |lines| widgets::lines_rows(lines, area.width));
    let check_lines_or_none = checks;
    // The plan and the ledger, then what to do or what happened: each line wrapped
    // whole (the rows they always had at least).
    let summary_lines = summary_lines(app, session);
    let status_line = status_line(app);
    let summary_height = widgets::lines_rows(&summary_lines, area.width).max(4);
    let status_height = status_line.as_ref().map_or(2, |l| {
        widgets::lines_rows(std::slice::from_ref(l), area.width).max(2)
    });
    let [summary, status, checks_area, table] = Layout::vertical([
        Constraint::Length(summary_height),
        Constraint::Length(status_height),
        Constraint::Length(checks_height),
        Constraint::Min(0),
    ])
    .areas(area);
    widgets::wrapped(frame, summary, summary_lines);
    match status_line {
        Some(line) => widgets::wrapped(frame, status, vec![line]),
        None => render_progress(frame, status, app),
    }
    if let (Some(drawn), Some(lines)) = (&app.release.drawn, check_lines_or_none) {
        widgets::wrapped(frame, checks_area, lines);
        render_table(frame, table, app, session, drawn);
    }
}

/// The plan (of the draw, once there is one), the ledger and what stops or warns.
fn summary_lines(app: &App, session: &Session) -> Vec<Line<'static>> {
    let plan = app
        .release
        .drawn
        .as_ref()
        .map_or(&session.plan, |d| &d.plan);
    let levels: Vec<String> = plan
        .levels()
        .iter()
        .map(|l| {
            format!(
                "{} {} {}",
                l.name(),
                crate::tui::widgets::level_amount_as(
                    app.exact_epsilon,
                    l.loss().map(|b| b.amount()).as_ref()
                ),
                l.method().label()
            )
        })
        .collect();
    let symbol = plan.definition().symbol();
    let plan_total = plan.total();
    let total = plan_total
        .as_ref()
        .map(|t| {
            let text = app.epsilon_text(&t.amount());
            match crate::tui::session::at_delta(t) {
                Some(at_delta) => format!("{text} ({at_delta})"),
                None => text,
            }
        })
        .unwrap_or_default();
    let k = match &plan.max_size() {
        MaxSize::Fixed(k) => int(u64::from(*k)),
        MaxSize::Estimate { budget } => {
            format!(
                "estimated with {} = {}",
                budget.definition().symbol(),
                app.epsilon_text(&budget.amount())
            )
        }
    };
    let exact = app.exact_epsilon;
    let status = &session.ledger;
    let mut lines = vec![
        Line::from(
            [
                vec![Span::styled(
                    if app.release.drawn.is_some() {
                        "Plan of this draw "
                    } else {
                        "Plan "
                    },
                    theme::heading(),
                )],
                widgets::field(&format!("total {symbol} ="), total),
                widgets::field(" · K", k),
                widgets::field(" · consistency", plan.consistency().name()),
                widgets::field(" · tuning", plan.tuning().name()),
            ]
            .concat(),
        ),
        Line::from(widgets::field("levels", levels.join(" · "))),
        Line::from(
            [
                vec![Span::styled("Ledger ", theme::heading())],
                widgets::field(
                    if status.in_rho() {
                        "ρ spent on this dataset"
                    } else {
                        "ε spent on this dataset"
                    },
                    format!(
                        "{} in {} draw(s)",
                        status.spent_text(exact),
                        status.releases
                    ),
                ),
                widgets::field(" · cap", status.cap_text(exact)),
            ]
            .concat(),
        ),
    ];
    if let Some(e) = &status.error {
        lines.push(Line::styled(
            format!("⚠ the ledger stops every draw: {e}"),
            theme::error(),
        ));
    }
    if let Some(losses) = &status.losses {
        lines.push(Line::styled(format!("⚠ {losses}"), theme::warning()));
    }
    if let Some(total) = plan.total_epsilon() {
        if app.release.drawn.is_none() && status.exceeds_cap(&total) {
            lines.push(Line::styled(
                format!(
                    "⚠ a draw of ε = {} would exceed the cap and be refused",
                    app.epsilon_text(&total)
                ),
                theme::warning(),
            ));
        } else if app
            .release
            .drawn
            .as_ref()
            .is_some_and(|d| d.plan != session.plan)
        {
            lines.push(Line::styled(
                "the plan has changed since this draw: the draw keeps the plan it was made with",
                theme::dim(),
            ));
        }
    }
    lines
}

/// The progress of the draw under way.
fn render_progress(frame: &mut Frame, area: Rect, app: &App) {
    let state = &app.release;
    if let Some(Busy::Drawing {
        progress, waiting, ..
    }) = &state.busy
    {
        let spent = state.drawing_since.map(|t| t.elapsed());
        let elapsed = spent.map_or(String::new(), |t| format!(" · {}", widgets::duration(t)));
        let (ratio, label) = match progress {
            Some((done, total)) => {
                let ratio = *done as f64 / (*total).max(1) as f64;
                let left = spent
                    .and_then(|t| widgets::pace_left(t, ratio))
                    .map_or(String::new(), |l| format!(" · {l}"));
                (
                    ratio,
                    format!(
                        "drawing with OS randomness: {}{elapsed}{left} · {} cancels",
                        widgets::trial_regions(*done, *total, "the consistency step and checks"),
                        key(app, Action::Cancel)
                    ),
                )
            }
            None => (
                0.0,
                match waiting {
                    Some(holder) => format!(
                        "waiting for the ledger: another coco session holds it ({}); the draw goes on when it is released · {} cancels",
                        crate::data::text::escape_controls(holder),
                        key(app, Action::Cancel)
                    ),
                    None => format!(
                        "taking the ledger lock and checking the cap… · {} cancels",
                        key(app, Action::Cancel)
                    ),
                },
            ),
        };
        frame.render_widget(widgets::progress(ratio, label), Rect { height: 1, ..area });
    }
}

/// What to do next or what happened to the draw; `None` while a draw is under way
/// (its progress is shown instead).
fn status_line(app: &App) -> Option<Line<'static>> {
    let state = &app.release;
    if let Some(Busy::Drawing { .. }) = &state.busy {
        return None;
    }
    let (d_key, a_key, x_key, f_key) = (
        key(app, Action::Draw),
        key(app, Action::Approve),
        key(app, Action::Discard),
        key(app, Action::ToggleFormat),
    );
    let symbol = app.session.as_ref().map_or("ε", |s| s.symbol());
    let line = match (&state.busy, &state.drawn) {
        (Some(Busy::Exporting { out }), _) => Line::raw(format!(
            "exporting to {} and recording in the ledger…",
            crate::tui::widgets::path_text(out)
        )),
        (Some(Busy::Discarding), _) => Line::raw("recording the discard in the ledger…"),
        (_, None) => match &state.error {
            Some(e) => Line::styled(format!("no release drawn: {e}"), theme::error()),
            None => Line::raw(format!(
                "{d_key} draws one release with fresh OS randomness (never the preview seed). Drawing spends the plan's {symbol}: \
                 every draw is recorded in the ledger, whether it is exported or discarded."
            )),
        },
        (_, Some(d)) => match &d.decision {
            Decision::Undecided => Line::from(vec![
                Span::styled("UNDECIDED ", theme::warning()),
                Span::raw(format!(
                    "draw of {}: {a_key} approves and exports it in {} ({f_key} changes the format), {x_key} discards it (its {} stays spent either way)",
                    app.loss_text(d.draw.guarantee()),
                    state.format.label(),
                    d.draw.guarantee().definition().symbol()
                )),
            ]),
            Decision::Exported { out, manifest } => Line::from(vec![
                Span::styled("EXPORTED ", theme::ok()),
                Span::raw(format!(
                    "to {} in {} · manifest checks {} · recorded in the ledger",
                    crate::tui::widgets::path_text(out),
                    exported_format(manifest).label(),
                    if manifest.checks.passed() {
                        "all passed"
                    } else {
                        "FAILED"
                    }
                )),
            ]),
            Decision::Discarded => Line::from(vec![
                Span::styled("DISCARDED ", theme::warning()),
                Span::raw(format!(
                    "recorded in the ledger: {} stays spent. {d_key} draws again (spends {} again).",
                    app.loss_text(d.draw.guarantee()),
                    d.draw.guarantee().definition().symbol()
                )),
            ]),
            Decision::RecordedNotWritten { message } => Line::from(vec![
                Span::styled("NOT WRITTEN ", theme::error()),
                Span::raw(format!("recorded in the ledger as spent: {message}")),
            ]),
        },
    };
    Some(line)
}

/// The format a release directory was written in, from the files its manifest lists.
fn exported_format(manifest: &Manifest) -> OutputFormat {
    let has = |name: &str| manifest.outputs.iter().any(|f| f.path == name);
    match (has("counts.csv"), has("counts.parquet")) {
        (true, true) => OutputFormat::Both,
        (false, true) => OutputFormat::Parquet,
        _ => OutputFormat::Csv,
    }
}

/// The cells of the census-style table: sizes 0–6 and 7 or more.
pub fn wide_cells(h: crate::histogram::HistRef<'_>) -> [u64; 8] {
    let mut cells = [0u64; 8];
    for &(size, count) in h.pairs() {
        cells[(size as usize).min(7)] += count;
    }
    cells
}

/// \[uncertainty\] The census-style cells with their margins of error: `count (lower–upper)`
/// for sizes 0–6 (a cell without an interval is exactly 0), and for 7 or more the
/// interval of `summary.csv`'s groups of size ≥ 7.
pub fn wide_intervals(
    u: &crate::release::margins::Uncertainty,
    level: usize,
    hist: crate::histogram::HistRef<'_>,
    groups: u64,
) -> Vec<String> {
    let listed = u.region(level, hist, groups);
    let shown = |c: u64, lo: u64, hi: u64| {
        if lo == c && hi == c {
            int(c)
        } else {
            format!("{} ({}–{})", int(c), int(lo), int(hi))
        }
    };
    let mut out: Vec<String> = (0..7u32)
        .map(|s| match listed.iter().find(|c| c.size == s) {
            Some(c) => shown(c.count, c.lower, c.upper),
            None => int(hist.count(s)),
        })
        .collect();
    let seven = wide_cells(hist)[7];
    // The wide table's last column: the groups of size 7 or more (up to K).
    let interval = crate::release::margins::summary::SizeRange::new(7, u.max_size(), u.max_size())
        .ok()
        .and_then(|r| {
            u.statistic(
                level,
                crate::release::margins::summary::Stat::Groups(r),
                hist,
                groups,
            )
        });
    out.push(match interval {
        Some(v) => shown(seven, v.lower.max(0) as u64, v.upper.max(0) as u64),
        None => int(seven),
    });
    out
}

/// The `i`-th region of a level in the order of display ids (the order of the exported
/// tables), without sorting the level: node order is that order but for rare codes
/// ([`crate::tui::overview::LevelFacts::display_order`]).
fn nth_by_display_id(session: &Session, level: LevelId, i: usize) -> Option<NodeId> {
    match &session.overview.levels[level.0].display_order {
        Some(order) => order.get(i).copied(),
        None => {
            let range = session.dataset.hierarchy.level_range(level);
            (i < range.len()).then(|| NodeId(range.start + i as u32))
        }
    }
}

fn render_table(frame: &mut Frame, area: Rect, app: &App, session: &Session, drawn: &DrawnRelease) {
    let h = &drawn.dataset.hierarchy;
    let level = LevelId(app.release.level.min(h.depth() - 1));
    let regions = h.level_len(level);
    let margins = match &drawn.margins {
        Some(u) => format!(", {:.0}% margins of error", u.confidence.level() * 100.0),
        None => String::new(),
    };
    let block = widgets::block(
        format!(
            " Public output: released counts of level {} by group size{margins} ({}{} level, {}{} scroll) ",
            h.level_name(level),
            key(app, Action::Left),
            key(app, Action::Right),
            key(app, Action::Up),
            key(app, Action::Down)
        ),
        area.width,
    );
    let inner = block.inner(area);
    let visible = inner.height.saturating_sub(1) as usize;
    let first = app
        .release
        .scroll
        .min(regions.saturating_sub(visible.max(1)));
    let with_names = inner.width >= 96;
    let mut header = vec!["region".to_string()];
    let mut cols = vec![Col::left().at_least(12)];
    if with_names {
        header.push("name".into());
        cols.push(Col::name(6).at_least(17));
    }
    header.push("groups".into());
    cols.push(Col::right().at_least(8));
    header.extend((0..7).map(|s| s.to_string()));
    header.push("7+".into());
    cols.extend([Col::right().at_least(6); 8]);
    let texts: Vec<Vec<String>> = (first..regions.min(first + visible))
        .filter_map(|i| nth_by_display_id(session, level, i))
        .map(|id| {
            let hist = drawn.draw.histograms().hist(id.index());
            let mut cells = vec![h.display_id(id)];
            if with_names {
                cells.push(h.name(id).unwrap_or_default().to_string());
            }
            cells.push(int(hist.groups()));
            match &drawn.margins {
                Some(u) => cells.extend(wide_intervals(u, level.0, hist, drawn.dataset.groups(id))),
                None => cells.extend(wide_cells(hist).iter().map(|c| int(*c))),
            }
            cells
        })
        .collect();
    // Columns as wide as the numbers on screen (a state holds millions of households).
    let fitted = Columns::fit(
        &cols,
        std::iter::once(&header)
            .chain(&texts)
            .map(|r| r.iter().map(String::as_str)),
        inner.width,
        1,
    );
    let rows: Vec<Row> = texts.iter().map(|t| fitted.row(t)).collect();
    frame.render_widget(
        Table::new(rows, fitted.constraints())
            .column_spacing(fitted.spacing())
            .header(fitted.row(&header).style(theme::heading()))
            .block(block),
        area,
    );
}

/// The structural checks and how the draw was made.
fn check_lines(app: &App, drawn: &DrawnRelease) -> Vec<Line<'static>> {
    let d = &drawn.draw;
    let c = d.checks();
    let checks = checks_line(c, d.max_size());
    let mut lines = vec![
        Line::from(checks),
        Line::from(
            [
                widgets::field(
                    &format!(
                        "{} (from the measurements)",
                        d.guarantee().definition().symbol()
                    ),
                    guarantee_text(app, d.guarantee()),
                ),
                widgets::field(" · consistency", d.consistency().name()),
                widgets::field(
                    " · noise",
                    match d.randomness() {
                        Randomness::Os => "fresh OS randomness".to_string(),
                        Randomness::Seeded { seed } => format!("seed {seed}"),
                    },
                ),
            ]
            .concat(),
        ),
    ];
    if d.randomness().is_reproducible() {
        lines.push(Line::styled(
            "seeded noise: reproducible, NOT FOR PUBLICATION",
            theme::error(),
        ));
    }
    if let Some(f) = d.fallback() {
        lines.push(Line::styled(f.to_string(), theme::warning()));
    }
    for w in d.warnings() {
        lines.push(Line::styled(w.to_string(), theme::warning()));
    }
    lines.extend(problem_lines(c));
    lines
}

/// One mark per structural check: green ✓ or red ✗.
fn checks_line(c: &Checks, max_size: Size) -> Vec<Span<'static>> {
    let mut checks = vec![Span::styled("Checks ", theme::heading())];
    for (name, ok) in [
        ("integral".to_string(), c.integral),
        ("nonnegative".to_string(), c.nonnegative),
        ("totals = public G".to_string(), c.group_totals),
        ("parents = Σ children".to_string(), c.consistent),
        (
            format!("sizes ≤ K = {}", int(u64::from(max_size))),
            c.within_max_size,
        ),
    ] {
        if checks.len() > 1 {
            checks.push(Span::raw("  "));
        }
        checks.push(Span::styled(
            if ok { "✓ " } else { "✗ " },
            widgets::check_style(ok),
        ));
        checks.push(Span::raw(name));
    }
    checks
}

/// The first few problems the checks found, in red.
fn problem_lines(c: &Checks) -> impl Iterator<Item = Line<'static>> + '_ {
    c.problems
        .iter()
        .take(4)
        .map(|p| Line::styled(p.clone(), theme::error()))
}

/// A draw's guarantee in its measure, with the (ε, δ) a ρ implies.
fn guarantee_text(app: &App, guarantee: &crate::privacy::Loss) -> String {
    let text = app.epsilon_text(&guarantee.amount());
    match crate::tui::session::at_delta(guarantee) {
        Some(at_delta) => format!("{text} ({at_delta})"),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::CountOfCounts;
    use crate::release::pipeline::checks::check_release;
    use ratatui::style::Color;

    /// A release whose parents do not add up shows a red ✗ beside that check, green ✓
    /// beside the others, and the problem in red. (A `Draw` cannot be altered, so the
    /// rendering is tested on the checks of altered tables.)
    #[test]
    fn a_failing_check_is_red_and_named() {
        let d = Dataset::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households"),
        )
        .unwrap();
        let truth = d.truth().for_diagnostic(crate::privacy::Diagnostic::Oracle);
        let mut hists = truth.all().to_vec();
        let leaf = d
            .hierarchy
            .level_nodes(d.hierarchy.leaf_level())
            .next()
            .unwrap();
        let mut pairs = hists[leaf.index()].pairs().to_vec();
        pairs[0].1 -= 1;
        pairs.push((pairs.last().unwrap().0 + 1, 1));
        hists[leaf.index()] = CountOfCounts::from_pairs_summing(pairs).unwrap();
        let checks = check_release(d.public(), &hists, 10_000);
        assert!(!checks.consistent && checks.integral);
        let spans = checks_line(&checks, 10_000);
        let mark = |name: &str| {
            let i = spans.iter().position(|s| s.content == name).unwrap();
            (spans[i - 1].content.to_string(), spans[i - 1].style.fg)
        };
        assert_eq!(
            mark("parents = Σ children"),
            ("✗ ".into(), Some(Color::Red))
        );
        assert_eq!(mark("integral"), ("✓ ".into(), Some(Color::Green)));
        let problems: Vec<Line> = problem_lines(&checks).collect();
        assert!(
            problems[0]
                .to_string()
                .contains("differs from the sum of its children")
        );
        assert_eq!(problems[0].style.fg, Some(Color::Red));
    }
}
