//! The frame: tabs, the screen, the message line, the status bar with the keys of the
//! screen, and the overlays (help, text fields, the dataset picker, questions).
//! Render functions read the app and draw; they change nothing.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use super::action::{Action, Context};
use super::app::{
    App, Confirm, HelpPage, InputOverlay, LoadRead, LoadState, LoadStep, Overlay, Picker, Screen,
    Tone,
};
use super::screens::{budget, dataset, hierarchy, preview, release, tradeoff};
use super::session::show;
use super::theme;
use super::widgets::{self, int};
use crate::privacy::Rounding;

/// Draws the whole app.
pub fn render(frame: &mut Frame, app: &App) {
    let area = frame.area();
    let message_lines = app.message.as_ref().map(|(tone, text)| {
        let style = match tone {
            Tone::Info => theme::ok(),
            Tone::Warning => theme::warning(),
            Tone::Error => theme::error(),
        };
        vec![Line::styled(text.clone(), style)]
    });
    // A message wraps onto up to three rows (more ends in "…").
    let message_height = message_lines
        .as_ref()
        .map_or(0, |m| widgets::lines_rows(m, area.width).min(3));
    let hint_lines = hint_lines(app, area.width);
    let [tabs, body, message, status, hints] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(message_height),
        Constraint::Length(1),
        Constraint::Length(hint_lines.len() as u16),
    ])
    .areas(area);
    render_tabs(frame, tabs, app);
    render_body(frame, body, app);
    if let Some(lines) = message_lines {
        widgets::wrapped(frame, message, lines);
    }
    render_status(frame, status, app);
    frame.render_widget(Paragraph::new(hint_lines), hints);
    match &app.overlay {
        Some(Overlay::Help { page, scroll }) => render_help(frame, body, app, *page, *scroll),
        Some(Overlay::Input(input)) => render_input(frame, body, app, input),
        Some(Overlay::Picker(picker)) => render_picker(frame, body, app, picker),
        Some(Overlay::Confirm(question)) => render_confirm(frame, body, app, question),
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
        (
            LoadState::Loading {
                dir,
                started,
                step,
                read,
            },
            _,
        ) => {
            render_loading(frame, area, app, dir, started.elapsed(), step, read);
        }
        (LoadState::Failed { dir, message }, None) => {
            let lines = vec![
                Line::styled(
                    format!("Could not open {}", crate::tui::widgets::path_text(dir)),
                    theme::error(),
                ),
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
                    .block(widgets::block(" Dataset not loaded ", area.width)),
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
    read: &LoadRead,
) {
    let [text, gauge, keys, _] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(1),
        Constraint::Length(2),
        Constraint::Min(0),
    ])
    .areas(area.inner(ratatui::layout::Margin::new(2, 1)));
    widgets::wrapped(
        frame,
        text,
        vec![Line::raw(loading_text(dir, elapsed, step, read))],
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

/// The line above the load gauge: the directory, the time so far, and while the files
/// are read, how much of them and about how long the rest takes at this pace.
pub fn loading_text(
    dir: &std::path::Path,
    elapsed: std::time::Duration,
    step: &LoadStep,
    read: &LoadRead,
) -> String {
    let mut text = format!(
        "Loading {} … {}",
        crate::tui::widgets::path_text(dir),
        widgets::duration(elapsed)
    );
    if matches!(step, LoadStep::Reading { .. }) && read.total > 0 {
        let share = read.share(step);
        text.push_str(&format!(
            " · {:.0}% of the {} read",
            share * 100.0,
            megabytes(read.total)
        ));
        if let Some(left) = widgets::pace_left(elapsed, share) {
            text.push_str(&format!(" · {left}"));
        }
    }
    text
}

/// A size for reading: `712,742 bytes` below a megabyte, else `830.4 MB`.
fn megabytes(bytes: u64) -> String {
    if bytes < 1_000_000 {
        format!("{} bytes", int(bytes))
    } else {
        format!("{:.1} MB", bytes as f64 / 1e6)
    }
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
    let line = status_line(app, area.width as usize);
    frame.render_widget(Paragraph::new(line), area);
}

/// The status bar: the dataset, the ε spent (a pending draw counted, and said), the
/// plan's total, the randomness of previews and releases, warnings. On a narrow
/// terminal the least needed parts go first (releases' randomness, then previews'),
/// never the ε spent.
pub fn status_line(app: &App, width: usize) -> Line<'static> {
    let Some(s) = &app.session else {
        return Line::styled("no dataset", theme::dim());
    };
    let exact = app.exact_epsilon;
    // (spans, how soon the part goes when room is short: higher first).
    let mut parts: Vec<(Vec<Span<'static>>, u8)> = Vec::new();
    parts.push((vec![Span::styled(s.dataset.name(), theme::heading())], 0));
    let cap = match (&s.ledger.cap, &s.ledger.binding) {
        (Some(c), _) => format!(" of cap {}", show(c, exact, Rounding::Down)),
        (None, Some(limit)) => format!(" of cap {}", limit.short(Rounding::Down)),
        (None, None) => String::new(),
    };
    let mut spent = widgets::field(
        s.ledger.spent_label(),
        format!("{}{cap}", s.ledger.spent_text(exact)),
    );
    // The ledger's figures are in ε: a ρ being drawn says its unit.
    let pure_total = s.loss().as_pure().cloned();
    if let Some(release::Busy::Drawing { .. }) = &app.release.busy {
        let drawing = app.epsilon_text(&s.total());
        let drawing = match &pure_total {
            Some(_) => drawing,
            None => format!("{} {drawing}", s.symbol()),
        };
        spent.push(Span::styled(
            format!(" + {drawing} being drawn"),
            theme::warning(),
        ));
    }
    parts.push((spent, 0));
    parts.push((
        widgets::field(
            &format!("total {}", s.symbol()),
            app.epsilon_text(&s.total()),
        ),
        1,
    ));
    parts.push((
        widgets::field(
            "previews:",
            app.preview_seed
                .map_or("OS randomness".into(), |seed| format!("seed {seed}")),
        ),
        2,
    ));
    parts.push((widgets::field("releases:", "OS randomness"), 3));
    let mut warnings = Vec::new();
    if pure_total
        .as_ref()
        .is_some_and(|total| s.ledger.exceeds_cap(total))
    {
        warnings.push(Span::styled(" ⚠ plan over cap", theme::warning()));
    }
    if s.ledger.error.is_some() {
        warnings.push(Span::styled(" ⚠ ledger needs repair", theme::error()));
    }
    // In reading order: the dataset, the plan, the randomness, then what is spent.
    let order = [0, 2, 3, 4, 1];
    let sep = 3;
    let width_of = |parts: &[&(Vec<Span<'static>>, u8)]| {
        parts
            .iter()
            .map(|(spans, _)| spans.iter().map(Span::width).sum::<usize>())
            .sum::<usize>()
            + sep * parts.len().saturating_sub(1)
            + warnings.iter().map(Span::width).sum::<usize>()
    };
    let mut kept: Vec<&(Vec<Span<'static>>, u8)> = order.iter().map(|&i| &parts[i]).collect();
    while width_of(&kept) > width {
        let Some(drop) = kept
            .iter()
            .enumerate()
            .filter(|(_, p)| p.1 > 0)
            .max_by_key(|(i, p)| (p.1, *i))
            .map(|(i, _)| i)
        else {
            break;
        };
        kept.remove(drop);
    }
    let mut spans = Vec::new();
    for (i, (part, _)) in kept.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" │ ", theme::dim()));
        }
        spans.extend(part.iter().cloned());
    }
    spans.extend(warnings);
    Line::from(spans)
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
            (Action::HoldLevel, "hold"),
            (Action::ToggleMethod, "method"),
            (Action::SetTail, "tail"),
            (Action::MethodsDefault, "defaults"),
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
            (Action::ToggleFormat, "format"),
            (Action::Right, "level"),
            (Action::Down, "scroll"),
        ],
        Context::Help => &[
            (Action::Close, "close"),
            (Action::Down, "scroll"),
            (Action::Glossary, "glossary"),
        ],
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

/// The hint bar: `? help` and `q quit`, then the screen's keys, on one line or, when
/// they do not fit, more (at most three); then the other global keys (screens, open)
/// where room is left (the help lists every key).
pub fn hint_lines(app: &App, width: u16) -> Vec<Line<'static>> {
    let context = app.context();
    let width = width as usize;
    let global = |actions: &[Action]| -> Vec<(Context, Action, &'static str)> {
        hints(Context::Global)
            .iter()
            .filter(|(a, _)| actions.contains(a))
            .map(|(a, l)| (Context::Global, *a, *l))
            .collect()
    };
    let mut essential: Vec<(Context, Action, &str)> = Vec::new();
    if app.overlay.is_none() {
        essential.extend(global(&[Action::Help, Action::Quit]));
    }
    // On the glossary, the key that shows it brings the keys back.
    let glossary_shown = matches!(
        app.overlay,
        Some(Overlay::Help {
            page: HelpPage::Glossary,
            ..
        })
    );
    // A zCDP plan's budgets are ρ: the Budget screen's keys say so.
    let zcdp = app
        .session
        .as_ref()
        .is_some_and(|s| s.definition() == crate::privacy::Definition::Zcdp);
    essential.extend(hints(context).iter().map(|(a, l)| match a {
        Action::Glossary if glossary_shown => (context, *a, "keys"),
        Action::EpsilonUp if zcdp => (context, *a, "ρ+"),
        Action::EpsilonDown if zcdp => (context, *a, "ρ−"),
        Action::TypeEpsilon if zcdp => (context, *a, "type ρ"),
        _ => (context, *a, *l),
    }));
    if context == Context::Picker {
        essential.extend(
            hints(Context::Input)
                .iter()
                .map(|(a, l)| (Context::Input, *a, *l)),
        );
    }
    let optional = if app.overlay.is_none() {
        global(&[Action::NextScreen, Action::OpenDataset])
    } else {
        Vec::new()
    };
    let items = |list: Vec<(Context, Action, &'static str)>| -> Vec<(String, &'static str)> {
        list.into_iter()
            .filter_map(|(ctx, action, label)| {
                app.keymap
                    .first_key(ctx, action)
                    .map(|key| (key.to_string(), label))
            })
            .collect()
    };
    let (essential, optional) = (items(essential), items(optional));
    let item_width =
        |(key, label): &(String, &str)| widgets::text_width(key) + widgets::text_width(label) + 3;
    // As many lines as the essential keys take (at most three), then the others where
    // they fit.
    const MOST: usize = 3;
    let mut lines: Vec<Vec<Span<'static>>> = vec![Vec::new()];
    let mut used = 0;
    for (i, item) in essential.iter().chain(&optional).enumerate() {
        let len = item_width(item);
        if used + len > width {
            if i >= essential.len() || lines.len() == MOST {
                break;
            }
            lines.push(Vec::new());
            used = 0;
        }
        used += len;
        let row = lines.last_mut().expect("one line at least");
        row.push(Span::styled(item.0.clone(), theme::key()));
        row.push(Span::raw(format!(" {}  ", item.1)));
    }
    lines.into_iter().map(Line::from).collect()
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

/// An action's line in the help. The Budget screen's budget keys speak the plan's
/// measure: for a ρ plan, their ε is a ρ (the toggle's own line names both).
fn help_text(app: &App, action: Action) -> String {
    let zcdp = app
        .session
        .as_ref()
        .is_some_and(|s| s.definition() == crate::privacy::Definition::Zcdp);
    let in_measure = matches!(
        action,
        Action::EpsilonUp
            | Action::EpsilonDown
            | Action::TypeEpsilon
            | Action::TypeTotal
            | Action::PresetUniform
            | Action::PresetGeometric
            | Action::EstimateMaxSize
            | Action::ScreenBudget
            | Action::ScreenTradeoff
    );
    if zcdp && in_measure {
        action.description().replace('ε', "ρ")
    } else {
        action.description().to_string()
    }
}

/// The lines of the help overlay, `width` cells wide: the screen's keys, then the
/// global ones.
pub fn help_lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(w) = &app.keymap_warning {
        for row in widgets::wrap_words(w, width) {
            lines.push(Line::styled(row, theme::warning()));
        }
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
            // The description wraps under itself, past the keys' column.
            let rows = widgets::wrap_words(&help_text(app, b.action), width.saturating_sub(18));
            for (i, row) in rows.into_iter().enumerate() {
                let keys = if i == 0 { keys.as_str() } else { "" };
                lines.push(Line::from(vec![
                    Span::styled(format!("{keys:>16}  "), theme::key()),
                    Span::raw(row),
                ]));
            }
        }
        lines.push(Line::raw(""));
    }
    let glossary = format!(
        "The words the screens use (EMD, independent, bottom-up, omniscient, wls, tail, proxy, \
         tuning, …): press {} for the glossary.",
        app.keymap.key(Context::Help, Action::Glossary)
    );
    let source = "Keys come from keymap.toml in coco's configuration directory when it exists \
                  (see docs/tui.md).";
    for text in [glossary.as_str(), source] {
        for row in widgets::wrap_words(text, width) {
            lines.push(Line::styled(row, theme::dim()));
        }
    }
    lines
}

/// The lines of the glossary page of the help, `width` cells wide: each term, then
/// what it means, indented ([`crate::glossary::GLOSSARY`], as `docs/glossary.md` has it).
pub fn glossary_lines(width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for t in crate::glossary::GLOSSARY {
        lines.push(Line::styled(t.term, theme::heading()));
        for row in widgets::wrap_words(t.text, width.saturating_sub(2)) {
            lines.push(Line::raw(format!("  {row}")));
        }
    }
    lines
}

fn render_help(frame: &mut Frame, area: Rect, app: &App, page: HelpPage, scroll: usize) {
    let r = popup(frame, area, 84, area.height);
    let width = usize::from(r.width.saturating_sub(2));
    let k = |action| app.keymap.key(Context::Help, action);
    let (lines, title) = match page {
        HelpPage::Keys => (
            help_lines(app, width),
            format!(
                " Keys · {} ({} closes, {} glossary, {}{} scroll) ",
                app.screen.title(),
                k(Action::Close),
                k(Action::Glossary),
                k(Action::Up),
                k(Action::Down),
            ),
        ),
        HelpPage::Glossary => (
            glossary_lines(width),
            format!(
                " Glossary ({} keys, {} closes, {}{} scroll) ",
                k(Action::Glossary),
                k(Action::Close),
                k(Action::Up),
                k(Action::Down),
            ),
        ),
    };
    let block = widgets::block(title, r.width);
    let inner = block.inner(r);
    let max_scroll = lines.len().saturating_sub(inner.height as usize);
    let scroll = scroll.min(max_scroll) as u16;
    frame.render_widget(Paragraph::new(lines).block(block).scroll((scroll, 0)), r);
}

fn render_input(frame: &mut Frame, area: Rect, app: &App, input: &InputOverlay) {
    let width = 78.min(area.width.saturating_sub(2));
    let inner_width = width.saturating_sub(2);
    // The prompt, the field, then what the field says: the path it names, what Tab
    // found, the problem with the last value submitted; each wrapped, none cut.
    let wrapped = |text: &str| wrapped_height(text, inner_width);
    let resolved = input
        .purpose
        .is_path()
        .then(|| format!("→ {}", app.resolve(input.field.text()).display()));
    let mut below: Vec<Line> = Vec::new();
    if let Some(r) = &resolved {
        below.push(Line::styled(r.clone(), theme::dim()));
    }
    if let Some(n) = &input.note {
        below.push(Line::raw(n.clone()));
    }
    if let Some(e) = &input.error {
        below.push(Line::styled(e.clone(), theme::error()));
    }
    let prompt_height = wrapped(&input.prompt);
    let below_height: u16 = below.iter().map(|l| wrapped(&l.to_string())).sum();
    let height = (prompt_height + 1 + below_height.max(1) + 2).min(area.height);
    let r = popup(frame, area, width, height);
    let mut title = format!(
        " {} accepts · {} cancels ",
        app.keymap.key(Context::Input, Action::Submit),
        app.keymap.key(Context::Input, Action::Cancel)
    );
    if input.purpose.is_path() {
        title.push_str(&format!(
            "· {} completes ",
            app.keymap.key(Context::Input, Action::Complete)
        ));
    }
    let block = widgets::block(title, r.width);
    let inner = block.inner(r);
    frame.render_widget(block, r);
    let [prompt, field, rest] = Layout::vertical([
        Constraint::Length(prompt_height),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(inner);
    frame.render_widget(
        Paragraph::new(input.prompt.clone()).wrap(Wrap { trim: true }),
        prompt,
    );
    render_field(frame, field, &input.field);
    frame.render_widget(Paragraph::new(below).wrap(Wrap { trim: true }), rest);
}

/// How many rows `text` takes wrapped at `width` cells.
fn wrapped_height(text: &str, width: u16) -> u16 {
    widgets::wrapped_rows(text, width as usize) as u16
}

/// The field's text (scrolled to keep the cursor in view) and the terminal cursor; a
/// wide character takes two cells.
fn render_field(frame: &mut Frame, area: Rect, field: &super::input::TextField) {
    let width = area.width.saturating_sub(3) as usize;
    let scroll = field.scroll(width);
    let [prompt, text] =
        Layout::horizontal([Constraint::Length(2), Constraint::Min(0)]).areas(area);
    frame.render_widget(Paragraph::new(Span::styled("> ", theme::key())), prompt);
    frame.render_widget(
        Paragraph::new(field.text().to_string()).scroll((0, scroll as u16)),
        text,
    );
    frame.set_cursor_position((text.x + (field.cursor_column() - scroll) as u16, text.y));
}

fn render_picker(frame: &mut Frame, area: Rect, app: &App, picker: &Picker) {
    let height = (app.recent.len() as u16 + 7).min(area.height);
    let r = popup(frame, area, 80, height);
    let block = widgets::block(
        format!(
            " Open a dataset · {} opens · {} completes · {} cancels ",
            app.keymap.key(Context::Input, Action::Submit),
            app.keymap.key(Context::Picker, Action::Complete),
            app.keymap.key(Context::Input, Action::Cancel)
        ),
        r.width,
    );
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
    } else if let Some(n) = &picker.note {
        frame.render_widget(Paragraph::new(Line::raw(n.clone())), error);
    } else if !picker.field.text().is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled(
                format!("→ {}", app.resolve(picker.field.text()).display()),
                theme::dim(),
            )),
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
            widgets::fit(&crate::tui::widgets::path_text(p), list.width as usize - 2)
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
pub fn question(app: &App, question: &Confirm) -> String {
    let (loss, symbol) = app.release.drawn.as_ref().map_or_else(
        || (String::new(), "ε"),
        |d| {
            let guarantee = d.draw.guarantee();
            (app.loss_text(guarantee), guarantee.definition().symbol())
        },
    );
    match question {
        Confirm::QuitWithDraw => format!(
            "A drawn release is undecided. Quitting now records it in the ledger as discarded: \
             its {loss} stays spent. Quit and record the discard?"
        ),
        Confirm::Discard => format!(
            "Discard this draw? The ledger records it as discarded and its {loss} stays \
             spent; a new draw spends {symbol} again."
        ),
        Confirm::OverwritePlan(path) => format!(
            "{} exists. Save the plan over it (its contents are replaced)? No goes back to the \
             file name.",
            crate::tui::widgets::path_text(path)
        ),
        Confirm::ApplyConfidentialRecommendation => "This recommendation was computed from \
             the CONFIDENTIAL data: a plan tuned on it publishes a function of the data \
             outside the privacy guarantee, and is recorded as tuning = confidential-previews \
             in the ledger and manifest. (A search on a public proxy keeps the tuning public.) \
             Apply it?"
            .to_string(),
    }
}

fn render_confirm(frame: &mut Frame, area: Rect, app: &App, q: &Confirm) {
    let text = question(app, q);
    let width = 64.min(area.width.saturating_sub(2));
    let height = (wrapped_height(&text, width.saturating_sub(2)) + 2).clamp(7, area.height);
    let r = popup(frame, area, width, height);
    let yes = app.keymap.keys_text(Context::Confirm, Action::Yes);
    let no = app.keymap.keys_text(Context::Confirm, Action::No);
    let block = widgets::block(format!(" {yes} yes · {no} no "), r.width);
    frame.render_widget(
        Paragraph::new(Line::styled(text, theme::warning()))
            .wrap(Wrap { trim: true })
            .block(block),
        r,
    );
}
