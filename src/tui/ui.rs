//! The frame: tabs, the screen, the message line, the status bar with the keys of the
//! screen, and the overlays (help, text fields, the dataset picker, questions).
//! Render functions read the app and draw; they change nothing.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use super::action::{Action, Context};
use super::app::{App, Confirm, InputOverlay, LoadState, LoadStep, Overlay, Picker, Screen, Tone};
use super::screens::{budget, dataset, hierarchy, preview, release, tradeoff};
use super::theme;
use super::widgets::{self, int};

/// Draws the whole app.
pub fn render(frame: &mut Frame, app: &App) {
    let area = frame.area();
    let message_height = u16::from(app.message.is_some());
    let [tabs, body, message, status, hints] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(message_height),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    render_tabs(frame, tabs, app);
    render_body(frame, body, app);
    if let Some((tone, text)) = &app.message {
        let style = match tone {
            Tone::Info => theme::ok(),
            Tone::Warning => theme::warning(),
            Tone::Error => theme::error(),
        };
        frame.render_widget(Paragraph::new(Line::styled(text.clone(), style)), message);
    }
    render_status(frame, status, app);
    render_hints(frame, hints, app);
    match &app.overlay {
        Some(Overlay::Help { scroll }) => render_help(frame, body, app, *scroll),
        Some(Overlay::Input(input)) => render_input(frame, body, app, input),
        Some(Overlay::Picker(picker)) => render_picker(frame, body, app, picker),
        Some(Overlay::Confirm(question)) => render_confirm(frame, body, app, *question),
        None => {}
    }
}

fn render_tabs(frame: &mut Frame, area: Rect, app: &App) {
    let mut spans = vec![Span::styled(" coco ", theme::heading())];
    for (i, s) in Screen::ALL.iter().enumerate() {
        let text = format!(" {} {} ", i + 1, s.title());
        spans.push(if *s == app.screen {
            Span::styled(text, theme::selected())
        } else {
            Span::raw(text)
        });
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn render_body(frame: &mut Frame, area: Rect, app: &App) {
    match (&app.load, &app.session) {
        (LoadState::Loading { dir, started, step }, _) => {
            render_loading(frame, area, app, dir, started.elapsed(), step);
        }
        (LoadState::Failed { dir, message }, None) => {
            let lines = vec![
                Line::styled(format!("Could not open {}", dir.display()), theme::error()),
                Line::raw(""),
                Line::raw(message.clone()),
                Line::raw(""),
                Line::raw(format!(
                    "Press {} to open another dataset, {} to quit.",
                    app.keymap.key(Context::Global, Action::OpenDataset),
                    app.keymap.key(Context::Global, Action::Quit)
                )),
            ];
            frame.render_widget(
                Paragraph::new(lines)
                    .wrap(Wrap { trim: false })
                    .block(widgets::block(" Dataset not loaded ")),
                area,
            );
        }
        (_, None) => {
            frame.render_widget(
                Paragraph::new(format!(
                    "No dataset is open. Press {} to open one.",
                    app.keymap.key(Context::Global, Action::OpenDataset)
                )),
                area,
            );
        }
        (_, Some(session)) => match app.screen {
            Screen::Dataset => dataset::render(frame, area, app, session),
            Screen::Hierarchy => hierarchy::render(frame, area, app, session),
            Screen::Budget => budget::render(frame, area, app, session),
            Screen::Preview => preview::render(frame, area, app, session),
            Screen::Tradeoff => tradeoff::render(frame, area, app, session),
            Screen::Release => release::render(frame, area, app, session),
        },
    }
}

fn render_loading(
    frame: &mut Frame,
    area: Rect,
    app: &App,
    dir: &std::path::Path,
    elapsed: std::time::Duration,
    step: &LoadStep,
) {
    let [text, gauge, keys, _] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(1),
        Constraint::Length(2),
        Constraint::Min(0),
    ])
    .areas(area.inner(ratatui::layout::Margin::new(2, 1)));
    frame.render_widget(
        Paragraph::new(format!(
            "Loading {} … {}",
            dir.display(),
            widgets::duration(elapsed)
        )),
        text,
    );
    let (ratio, label) = load_progress(step);
    frame.render_widget(widgets::progress(ratio, label), gauge);
    frame.render_widget(
        Paragraph::new(Line::styled(
            format!(
                "\n{} stops loading · {} quits",
                app.keymap.key(Context::Global, Action::CancelLoad),
                app.keymap.key(Context::Global, Action::Quit)
            ),
            theme::dim(),
        )),
        keys,
    );
}

/// The load gauge: how much of the file being read is read, and what happens.
pub fn load_progress(step: &LoadStep) -> (f64, String) {
    match step {
        LoadStep::Starting => (0.0, "starting".into()),
        LoadStep::Reading {
            file,
            bytes_read,
            bytes_total,
        } if bytes_read < bytes_total => (
            *bytes_read as f64 / *bytes_total as f64,
            format!(
                "{file}: {} of {} bytes",
                int(*bytes_read),
                int(*bytes_total)
            ),
        ),
        LoadStep::Reading {
            file, bytes_total, ..
        } => (
            1.0,
            format!("{file}: {} bytes read · building…", int(*bytes_total)),
        ),
        LoadStep::Summarising => (
            1.0,
            "read · summarising the regions (levels, G, sizes, content digest)…".into(),
        ),
    }
}

fn render_status(frame: &mut Frame, area: Rect, app: &App) {
    let sep = || Span::styled(" │ ", theme::dim());
    let mut spans = vec![];
    match &app.session {
        Some(s) => {
            spans.push(Span::styled(s.dataset.name(), theme::heading()));
            spans.push(sep());
            spans.extend(widgets::field("total ε", s.total().to_string()));
            spans.push(sep());
            spans.extend(widgets::field(
                "previews:",
                app.preview_seed
                    .map_or("OS randomness".into(), |seed| format!("seed {seed}")),
            ));
            spans.push(sep());
            spans.extend(widgets::field("releases:", "OS randomness"));
            spans.push(sep());
            let cap = s
                .ledger
                .cap
                .as_ref()
                .map_or(String::new(), |c| format!(" of cap {c}"));
            spans.extend(widgets::field(
                "ε spent",
                format!("{}{cap}", s.ledger.spent_text()),
            ));
            if s.ledger.exceeds_cap(&s.total()) {
                spans.push(Span::styled(" ⚠ plan over cap", theme::warning()));
            }
            if s.ledger.error.is_some() {
                spans.push(Span::styled(" ⚠ ledger needs repair", theme::error()));
            }
        }
        None => spans.push(Span::styled("no dataset", theme::dim())),
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The keys shown in the hint bar for a context, with short labels.
pub fn hints(context: Context) -> &'static [(Action, &'static str)] {
    match context {
        Context::Dataset => &[(Action::Down, "level")],
        Context::Hierarchy => &[
            (Action::ToggleNode, "open/close"),
            (Action::Search, "search"),
            (Action::NextMatch, "next"),
            (Action::LogScale, "log"),
            (Action::MoreSizes, "more sizes"),
            (Action::FewerSizes, "fewer"),
        ],
        Context::Budget => &[
            (Action::EpsilonUp, "ε+"),
            (Action::EpsilonDown, "ε−"),
            (Action::TypeEpsilon, "type ε"),
            (Action::TypeTotal, "total"),
            (Action::ToggleMethod, "method"),
            (Action::SetTail, "tail"),
            (Action::MethodsDefault, "defaults"),
            (Action::ApplyRecommendation, "recommended"),
            (Action::PresetUniform, "uniform"),
            (Action::PresetGeometric, "geometric"),
            (Action::SetMaxSize, "K"),
            (Action::ToggleConsistency, "consistency"),
            (Action::SavePlan, "save"),
            (Action::LoadPlan, "load"),
        ],
        Context::Preview => &[
            (Action::Run, "run"),
            (Action::Cancel, "cancel"),
            (Action::TypeTrials, "trials"),
            (Action::ToggleSeed, "seed"),
            (Action::NextNode, "region"),
            (Action::Search, "find"),
            (Action::ToggleView, "bars/lines"),
            (Action::ChooseProxy, "proxy"),
        ],
        Context::Tradeoff => &[
            (Action::Run, "run"),
            (Action::Cancel, "cancel"),
            (Action::Right, "level"),
            (Action::ToggleView, "sweep/frontier"),
            (Action::ApplyRecommendation, "apply"),
            (Action::ChooseProxy, "proxy"),
            (Action::TypeTrials, "trials"),
        ],
        Context::Release => &[
            (Action::Draw, "draw"),
            (Action::Approve, "approve & export"),
            (Action::Discard, "discard"),
            (Action::Right, "level"),
            (Action::Down, "scroll"),
        ],
        Context::Help => &[(Action::Close, "close"), (Action::Down, "scroll")],
        Context::Input => &[(Action::Submit, "accept"), (Action::Cancel, "cancel")],
        Context::Picker => &[
            (Action::Down, "recent"),
            (Action::Complete, "complete"),
            (Action::Submit, "open"),
        ],
        Context::Confirm => &[(Action::Yes, "yes"), (Action::No, "no")],
        Context::Global => &[
            (Action::Help, "help"),
            (Action::NextScreen, "screens"),
            (Action::OpenDataset, "open"),
            (Action::Quit, "quit"),
        ],
    }
}

fn render_hints(frame: &mut Frame, area: Rect, app: &App) {
    let context = app.context();
    let mut list: Vec<(Context, Action, &str)> = Vec::new();
    if app.overlay.is_none() {
        list.extend(
            hints(Context::Global)
                .iter()
                .map(|(a, l)| (Context::Global, *a, *l)),
        );
    }
    list.extend(hints(context).iter().map(|(a, l)| (context, *a, *l)));
    if context == Context::Picker {
        list.extend(
            hints(Context::Input)
                .iter()
                .map(|(a, l)| (Context::Input, *a, *l)),
        );
    }
    let mut spans = Vec::new();
    let mut used = 0usize;
    for (ctx, action, label) in list {
        let Some(key) = app.keymap.first_key(ctx, action) else {
            continue;
        };
        let key = key.to_string();
        let len = key.chars().count() + label.chars().count() + 3;
        if used + len > area.width as usize {
            break;
        }
        used += len;
        spans.push(Span::styled(key, theme::key()));
        spans.push(Span::raw(format!(" {label}  ")));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// A centred box of at most `width` × `height` inside `area`, cleared.
fn popup(frame: &mut Frame, area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width.saturating_sub(2));
    let h = height.min(area.height);
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, r);
    r
}

/// The lines of the help overlay: the screen's keys, then the global ones.
pub fn help_lines(app: &App) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(w) = &app.keymap_warning {
        lines.push(Line::styled(w.clone(), theme::warning()));
        lines.push(Line::raw(""));
    }
    let sections = [
        (
            app.screen.context(),
            format!("{} screen", app.screen.title()),
        ),
        (Context::Global, "Everywhere".to_string()),
    ];
    for (context, title) in sections {
        lines.push(Line::styled(title, theme::heading()));
        for b in app.keymap.bindings(context) {
            let keys = app.keymap.keys_text(context, b.action);
            let keys = if keys.is_empty() {
                "(unbound)".to_string()
            } else {
                keys
            };
            lines.push(Line::from(vec![
                Span::styled(format!("{keys:>16}  "), theme::key()),
                Span::raw(b.action.description()),
            ]));
        }
        lines.push(Line::raw(""));
    }
    lines.push(Line::styled(
        "Keys come from keymap.toml in coco's home when it exists (see the README).",
        theme::dim(),
    ));
    lines
}

fn render_help(frame: &mut Frame, area: Rect, app: &App, scroll: usize) {
    let lines = help_lines(app);
    let r = popup(frame, area, 84, area.height);
    let block = widgets::block(format!(
        " Keys · {} ({} closes, {}{} scroll) ",
        app.screen.title(),
        app.keymap.key(Context::Help, Action::Close),
        app.keymap.key(Context::Help, Action::Up),
        app.keymap.key(Context::Help, Action::Down),
    ));
    let inner = block.inner(r);
    let max_scroll = lines.len().saturating_sub(inner.height as usize);
    let scroll = scroll.min(max_scroll) as u16;
    frame.render_widget(Paragraph::new(lines).block(block).scroll((scroll, 0)), r);
}

fn render_input(frame: &mut Frame, area: Rect, app: &App, input: &InputOverlay) {
    let r = popup(frame, area, 78, 7);
    let block = widgets::block(format!(
        " {} accepts · {} cancels ",
        app.keymap.key(Context::Input, Action::Submit),
        app.keymap.key(Context::Input, Action::Cancel)
    ));
    let inner = block.inner(r);
    frame.render_widget(block, r);
    let [prompt, field, error] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(input.prompt.clone()), prompt);
    render_field(frame, field, &input.field);
    if let Some(e) = &input.error {
        frame.render_widget(
            Paragraph::new(Line::styled(e.clone(), theme::error())).wrap(Wrap { trim: true }),
            error,
        );
    }
}

/// The field's text (scrolled to keep the cursor in view) and the terminal cursor.
fn render_field(frame: &mut Frame, area: Rect, field: &super::input::TextField) {
    let width = area.width.saturating_sub(3) as usize;
    let start = field.cursor().saturating_sub(width);
    let shown: String = field.text().chars().skip(start).take(width + 1).collect();
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled("> ", theme::key()),
            Span::raw(shown),
        ])),
        area,
    );
    frame.set_cursor_position((area.x + 2 + (field.cursor() - start) as u16, area.y));
}

fn render_picker(frame: &mut Frame, area: Rect, app: &App, picker: &Picker) {
    let height = (app.recent.len() as u16 + 7).min(area.height);
    let r = popup(frame, area, 80, height);
    let block = widgets::block(format!(
        " Open a dataset · {} opens · {} completes · {} cancels ",
        app.keymap.key(Context::Input, Action::Submit),
        app.keymap.key(Context::Picker, Action::Complete),
        app.keymap.key(Context::Input, Action::Cancel)
    ));
    let inner = block.inner(r);
    frame.render_widget(block, r);
    let [prompt, field, error, list] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(inner);
    frame.render_widget(
        Paragraph::new("Dataset directory (hierarchy.csv and a groups file):"),
        prompt,
    );
    render_field(frame, field, &picker.field);
    if let Some(e) = &picker.error {
        frame.render_widget(
            Paragraph::new(Line::styled(e.clone(), theme::error())),
            error,
        );
    }
    let mut lines = vec![Line::styled(
        if app.recent.is_empty() {
            "No recent datasets yet.".to_string()
        } else {
            format!(
                "Recent ({}{} picks one):",
                app.keymap.key(Context::Picker, Action::Up),
                app.keymap.key(Context::Picker, Action::Down)
            )
        },
        theme::dim(),
    )];
    for (i, p) in app.recent.iter().enumerate() {
        let text = format!(
            "  {}",
            widgets::fit(&p.display().to_string(), list.width as usize - 2)
        );
        lines.push(if picker.selected == Some(i) {
            Line::styled(text, theme::selected())
        } else {
            Line::raw(text)
        });
    }
    frame.render_widget(Paragraph::new(lines), list);
}

/// The question asked, in words.
pub fn question(app: &App, question: Confirm) -> String {
    let epsilon = app
        .release
        .drawn
        .as_ref()
        .map_or_else(String::new, |d| d.draw.epsilon().to_string());
    match question {
        Confirm::QuitWithDraw => format!(
            "A drawn release is undecided. Quitting now records it in the ledger as discarded: \
             its ε = {epsilon} stays spent. Quit and record the discard?"
        ),
        Confirm::Discard => format!(
            "Discard this draw? The ledger records it as discarded and its ε = {epsilon} stays \
             spent; a new draw spends ε again."
        ),
        Confirm::ApplyConfidentialRecommendation => "This recommendation was computed from \
             the CONFIDENTIAL data: a plan tuned on it publishes a function of the data \
             outside the privacy guarantee, and is recorded as tuning = confidential-previews \
             in the ledger and manifest. (A search on a public proxy keeps the tuning public.) \
             Apply it?"
            .to_string(),
    }
}

fn render_confirm(frame: &mut Frame, area: Rect, app: &App, q: Confirm) {
    let r = popup(frame, area, 64, 7);
    let yes = app.keymap.keys_text(Context::Confirm, Action::Yes);
    let no = app.keymap.keys_text(Context::Confirm, Action::No);
    let block = widgets::block(format!(" {yes} yes · {no} no "));
    frame.render_widget(
        Paragraph::new(Line::styled(question(app, q), theme::warning()))
            .wrap(Wrap { trim: true })
            .block(block),
        r,
    );
}
