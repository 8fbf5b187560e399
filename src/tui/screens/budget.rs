//! The Budget screen: the release plan, level by level — its budget in the plan's
//! measure (pure ε or ρ-zCDP, toggled here), its share of the total, the method, what it
//! costs in noise samples and what error to expect — with presets, K, the consistency
//! step, the ledger cap, and saving or loading the plan as TOML.

use crate::wire::Named;
use std::path::{Path, PathBuf};

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Row, Table};

use crate::consistency::Consistency;
use crate::data::LevelId;
use crate::estimate::{Tail, TailLength};
use crate::histogram::Size;
use crate::preview::fmt_num;
use crate::privacy::{Definition, Loss, Rounding};
use crate::release::plan::{LevelBudget, MaxSize, ReleasePlan, tail_groups};
use crate::tradeoff::Amount;

use super::super::action::{Action, Context};
use super::super::app::{App, Confirm, InputPurpose, Overlay};
use super::super::session::{DEFAULT_MAX_SIZE_EPSILON, Preset, Session, show};
use super::super::theme;
use super::super::widgets::{self, Col, Columns, int};

/// The selected level.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BudgetState {
    pub level: usize,
}

/// The key of a Budget action, for the screen's sentences.
fn key(app: &App, action: Action) -> String {
    app.keymap.key(Context::Budget, action)
}

/// Reports an edit's outcome.
fn done(app: &mut App, result: Result<(), String>) {
    if let Err(e) = result {
        app.error(e);
    }
}

pub fn update(app: &mut App, action: Action) {
    let Some(session) = &mut app.session else {
        return;
    };
    let depth = session.depth();
    let level = LevelId(app.budget.level.min(depth - 1));
    let name = session.plan.levels()[level.0].name().to_string();
    let symbol = session.symbol();
    match action {
        Action::Up => app.budget.level = app.budget.level.saturating_sub(1),
        Action::Down => app.budget.level = (app.budget.level + 1).min(depth - 1),
        Action::EpsilonUp | Action::EpsilonDown => {
            let r = session.step_budget(level, action == Action::EpsilonUp);
            let typing = key(app, Action::TypeEpsilon);
            done(
                app,
                r.map_err(|e| format!("{e}; type a value with {typing}")),
            );
        }
        Action::TypeEpsilon => {
            let current = session.plan.levels()[level.0].budget().exact();
            app.ask(
                InputPurpose::LevelEpsilon(level.0),
                format!("{symbol} for level {name} (a decimal like 0.5 or a fraction like 1/3):"),
                &current,
            );
        }
        Action::TypeTotal => {
            let current = session.levels_total().to_string();
            let how = session.preset.describe();
            app.ask(
                InputPurpose::TotalEpsilon,
                format!("Total {symbol} over the levels (split by the {how} preset):"),
                &current,
            );
        }
        Action::HoldLevel => match session.toggle_held(level) {
            Ok(true) => app.info(format!(
                "{name} held at its share: changing the total or another level rebalances only the levels not held"
            )),
            Ok(false) => app.info(format!("{name} released")),
            Err(e) => app.error(e),
        },
        Action::ToggleMethod => {
            let r = session.toggle_method(level);
            done(app, r);
        }
        Action::SetTail => {
            let current = match session.plan.levels()[level.0].method().tail() {
                Some(t) => format!("{},{}", t.above, t.groups),
                None => {
                    let t = Tail::AUTO.below(session.plan.max_size().bound());
                    format!("{},{}", t.above, t.groups)
                }
            };
            app.ask(
                InputPurpose::Tail(level.0),
                format!(
                    "Tail for level {name}: sizes below L as cumulative counts, groups of size L or more as the m largest groups' sizes, no extra {symbol} (L or L,m; \"none\" for plain hc):"
                ),
                &current,
            );
        }
        Action::PresetUniform => {
            let r = session.apply_preset(Preset::Uniform);
            done(app, r);
        }
        Action::PresetGeometric => {
            let ratio = match &session.preset {
                Preset::Geometric { ratio } => ratio.clone(),
                _ => session.overview.default_ratio.clone(),
            };
            let r = session.apply_preset(Preset::Geometric { ratio });
            done(app, r);
        }
        Action::MethodsDefault => {
            let r = session.apply_public_defaults();
            done(app, r);
        }
        Action::ApplyRecommendation => super::tradeoff::apply_recommendation(app),
        Action::RatioUp | Action::RatioDown => {
            let r = session.step_ratio(action == Action::RatioUp);
            done(app, r);
        }
        Action::SetMaxSize => {
            let current = session
                .fixed_max_size()
                .map_or_else(|| "10000".to_string(), |k| k.to_string());
            app.ask(
                InputPurpose::MaxSize,
                "The public bound K on a group's size (larger groups are top-coded to K):",
                &current,
            );
        }
        Action::EstimateMaxSize => {
            let current = match &session.plan.max_size() {
                MaxSize::Estimate { budget } => budget.exact(),
                MaxSize::Fixed(_) => DEFAULT_MAX_SIZE_EPSILON.to_string(),
            };
            app.ask(
                InputPurpose::MaxSizeEpsilon,
                format!("Estimate K privately with this {symbol} (added to the total):"),
                &current,
            );
        }
        Action::ToggleDefinition => {
            let r = session.toggle_definition();
            if r.is_ok() {
                let message = definition_message(app);
                app.info(message);
            }
            done(app, r);
        }
        Action::ToggleConsistency => session.toggle_consistency(),
        Action::ToggleMerge => session.toggle_merge(),
        Action::SavePlan => {
            let default = session
                .plan_file
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("{}-plan.toml", session.dataset.name())));
            ask_save(app, &default.display().to_string());
        }
        Action::LoadPlan => {
            let default = session
                .plan_file
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            app.ask(
                InputPurpose::LoadPlan,
                "Load a plan (release TOML) from:",
                &default,
            );
        }
        _ => {}
    }
}

/// `L`, `L,m` or `none` (plain hc) for the level named `level`.
fn parse_tail(text: &str, level: &str) -> Result<Option<Tail>, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("none") || text.is_empty() {
        return Ok(None);
    }
    let bad = || {
        format!(
            "{text:?}: expected L (a size) or L,m (m the groups listed, 1 to 10000000, or auto), or none"
        )
    };
    let mut parts = text.splitn(2, [',', ' ']).map(str::trim);
    let above = parts
        .next()
        .and_then(|a| a.replace('_', "").parse::<Size>().ok())
        .ok_or_else(bad)?;
    let groups = match parts.next().filter(|g| !g.is_empty()) {
        None => Tail::AUTO.groups,
        // Out of range: the plan model's message, naming the level.
        Some(g) if g.eq_ignore_ascii_case("auto") => TailLength::Auto,
        Some(g) => {
            let g = g.replace('_', "").parse::<u32>().ok().ok_or_else(bad)?;
            TailLength::Fixed(tail_groups(level, g).map_err(|e| e.to_string())?)
        }
    };
    Ok(Some(Tail { above, groups }))
}

/// Applies a typed value for the Budget screen.
pub fn submit(app: &mut App, purpose: &InputPurpose, text: &str) -> Result<(), String> {
    // A path, for the fields that take one.
    let resolved = app.resolve(text);
    let session = app.session.as_mut().ok_or("no dataset is open")?;
    // Parsed in the plan's measure, so that a refusal names it (`ρ "0" is not positive`).
    let definition = session.definition();
    let epsilon = |t: &str| {
        Loss::parse(definition, t)
            .map(|l| l.amount())
            .map_err(|e| e.to_string())
    };
    let before = session.plan.tuning();
    let sized = matches!(purpose, InputPurpose::MaxSize | InputPurpose::Tail(_));
    let done = submit_to(app, purpose, text, resolved, epsilon);
    if done.is_ok()
        && sized
        && let Some(session) = &app.session
        && session.plan.tuning() == crate::release::plan::tuning::Tuning::ConfidentialPreviews
        && before != crate::release::plan::tuning::Tuning::ConfidentialPreviews
    {
        let estimate = app.keymap.key(Context::Budget, Action::EstimateMaxSize);
        app.warn(format!(
            "typed after the Dataset or Hierarchy screen showed confidential sizes, this plan is recorded as tuning = confidential-previews (K or a tail may have been read off them); {estimate} estimates K privately instead, and a plan file written from public figures (coco plan) keeps it public"
        ));
    }
    done
}

fn submit_to(
    app: &mut App,
    purpose: &InputPurpose,
    text: &str,
    resolved: std::path::PathBuf,
    epsilon: impl Fn(&str) -> Result<Amount, String>,
) -> Result<(), String> {
    let session = app.session.as_mut().ok_or("no dataset is open")?;
    match purpose {
        InputPurpose::LevelEpsilon(l) => {
            // 0 leaves the level unmeasured (its regions estimated from their children).
            let budget =
                LevelBudget::parse(session.definition(), text).map_err(|e| e.to_string())?;
            session.set_budget(LevelId(*l), budget.loss().map(Loss::amount))
        }
        InputPurpose::TotalEpsilon => session.set_total(epsilon(text)?),
        InputPurpose::MaxSize => {
            let k = text.replace([',', '_'], "").parse::<u32>().map_err(|_| {
                format!("K = {text:?}: expected a whole number from 1 to 100,000,000")
            })?;
            session.set_max_size(MaxSize::Fixed(k))
        }
        InputPurpose::Tail(l) => {
            let level = LevelId(*l);
            let name = session.plan.levels().get(level.0).map_or("", |l| l.name());
            let tail = parse_tail(text, name)?;
            session.set_tail(level, tail)
        }
        InputPurpose::MaxSizeEpsilon => {
            let budget = session.in_measure(&epsilon(text)?);
            session.set_max_size(MaxSize::Estimate { budget })
        }
        InputPurpose::SavePlan => {
            if text.is_empty() {
                return Err("type a file name, e.g. plan.toml".into());
            }
            let path = resolved;
            if path.is_dir() {
                return Err(format!(
                    "{} is a directory: expected a file name",
                    crate::tui::widgets::path_text(&path)
                ));
            }
            if path.exists() {
                app.overlay = Some(Overlay::Confirm(Confirm::OverwritePlan(path)));
            } else {
                save(app, &path);
            }
            Ok(())
        }
        InputPurpose::LoadPlan => {
            let path = resolved;
            let plan = ReleasePlan::load(&path).map_err(|e| e.to_string())?;
            plan.validate(&session.dataset.hierarchy, &path)
                .map_err(|e| e.to_string())?;
            session.replace_plan(plan, path.clone());
            app.info(format!(
                "plan loaded from {}",
                crate::tui::widgets::path_text(&path)
            ));
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Asks where to save the plan, proposing `initial`.
pub fn ask_save(app: &mut App, initial: &str) {
    app.ask(
        InputPurpose::SavePlan,
        "Save the plan (release TOML) to:",
        initial,
    );
}

/// Writes the plan's TOML to `path` (resolved; asked about if it existed), and says
/// where; a failure reopens the field with the message.
pub fn save(app: &mut App, path: &Path) {
    let Some(session) = &mut app.session else {
        return;
    };
    match std::fs::write(path, session.plan.to_toml()) {
        Ok(()) => {
            session.plan_file = Some(path.to_path_buf());
            app.info(format!(
                "plan saved to {}",
                crate::tui::widgets::path_text(path)
            ));
        }
        Err(e) => {
            ask_save(app, &path.display().to_string());
            if let Some(Overlay::Input(i)) = &mut app.overlay {
                i.error = Some(format!("{}: {e}", crate::tui::widgets::path_text(path)));
            }
        }
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, session: &Session) {
    let depth = session.depth() as u16;
    // The ledger's lines, each wrapped whole; the notes take the rest.
    let ledger_lines = ledger_lines(app, session);
    let ledger_rows = widgets::lines_rows(&ledger_lines, area.width);
    let [summary, table, ledger, notes] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(depth + 3),
        Constraint::Length(ledger_rows),
        Constraint::Min(0),
    ])
    .areas(area);
    render_summary(frame, summary, app, session);
    render_levels(frame, table, app, session);
    widgets::wrapped(frame, ledger, ledger_lines);
    let level = LevelId(app.budget.level.min(session.depth() - 1));
    let default = session.public_default(level);
    let follows = session.plan.levels()[level.0].method() == default.method;
    let mut notes_text = recommendation_lines(app, session);
    notes_text.extend([
        Line::from(vec![
            Span::styled(
                format!(
                    "coco's default for {}: ",
                    session.plan.levels()[level.0].name()
                ),
                theme::heading(),
            ),
            Span::raw(default.reason),
            Span::styled(
                if follows {
                    " (the plan uses it; from public figures only: the hierarchy, G and K)"
                        .to_string()
                } else {
                    format!(
                        " ({} gives every level its default; from public figures only: the hierarchy, G and K)",
                        key(app, Action::MethodsDefault)
                    )
                },
                theme::dim(),
            ),
        ]),
        Line::styled(noise_note(session.definition()), theme::dim()),
    ]);
    widgets::wrapped(frame, notes, notes_text);
}

/// The Trade-off search's recommendation beside the current plan, level by level, with
/// the key that applies it; or how to get one.
fn recommendation_lines(app: &App, session: &Session) -> Vec<Line<'static>> {
    let Some(result) = &app.tradeoff.frontier else {
        // Say what the search would run on: the synthetic proxy by default, so no
        // "choose a proxy first" when one already is.
        let on = match session.target_data() {
            crate::tradeoff::PreviewData::Confidential => "the CONFIDENTIAL data".to_string(),
            crate::tradeoff::PreviewData::Proxy { label, .. } => format!("the {label}"),
        };
        return vec![Line::from(vec![
            Span::styled("Recommendation ", theme::heading()),
            Span::styled(
                format!(
                    "none yet (Trade-off screen: frontier {}, run {}; it runs on {on}, {} to choose other data)",
                    app.keymap.key(Context::Tradeoff, Action::ToggleView),
                    app.keymap.key(Context::Tradeoff, Action::Run),
                    app.keymap.key(Context::Tradeoff, Action::ChooseProxy),
                ),
                theme::dim(),
            ),
        ])];
    };
    let f = &result.frontier;
    let Some(r) = &f.recommendation else {
        return vec![super::tradeoff::recommendation_line(app, f, "")];
    };
    let levels: Vec<String> = session
        .plan
        .levels()
        .iter()
        .zip(r.budgets.iter().zip(&r.methods))
        .map(|(now, (b, m))| {
            let method = crate::tradeoff::method_text(now.method());
            // Only what changes is said twice; ε compared exactly, shown for reading.
            let now_amount = now.loss().map(crate::tui::session::amount);
            let same = *b == now_amount;
            let (b, e) = (
                crate::tui::widgets::level_amount_as(app.exact_epsilon, b.as_ref()),
                crate::tui::widgets::level_amount_as(app.exact_epsilon, now_amount.as_ref()),
            );
            match (same, *m == method) {
                (true, true) => format!("{} {b} {m} (as now)", now.name()),
                (false, true) => format!("{} {b} (now {e})", now.name()),
                (true, false) => format!("{} {m} (now {method})", now.name()),
                (false, false) => format!("{} {b} {m} (now {e} {method})", now.name()),
            }
        })
        .collect();
    let ratios = r.ratio_texts();
    let (on, style) = match &f.data {
        crate::tradeoff::PreviewData::Confidential => (
            "computed on the CONFIDENTIAL data: applying it records tuning = confidential-previews"
                .to_string(),
            theme::confidential(),
        ),
        crate::tradeoff::PreviewData::Proxy { label, .. } => (
            format!(
                "computed on the {label}, public data; the plan's tuning: {}",
                tuning_text(&session.plan)
            ),
            theme::ok(),
        ),
    };
    // Applied, the recommendation is the plan: not "for an earlier plan".
    let applied = session
        .plan
        .levels()
        .iter()
        .zip(r.plan.levels())
        .all(|(now, rec)| now.budget() == rec.budget() && now.method() == rec.method());
    let mut head = vec![
        Span::styled("Recommended ", theme::heading()),
        Span::raw(format!("({} trials per plan) ", f.trials)),
    ];
    if applied {
        head.push(Span::styled(
            "applied: the plan is this recommendation; ",
            theme::ok(),
        ));
    } else if result.revision != session.revision {
        head.push(Span::styled("searched for an earlier plan; ", theme::dim()));
    }
    head.push(Span::styled(on, style));
    vec![
        Line::from(head),
        Line::raw(format!(
            "{} — error vs bottom-up {}; {} applies it",
            levels.join(" · "),
            ratios.join(", "),
            key(app, Action::ApplyRecommendation)
        )),
    ]
}

/// The plan's tuning, with the proxy it was tuned on when it names one
/// (`proxy (synthetic)`).
fn tuning_text(plan: &ReleasePlan) -> String {
    match plan.tuning_source() {
        Some(source) => format!("{} ({source})", plan.tuning()),
        None => plan.tuning().name().to_string(),
    }
}

fn render_summary(frame: &mut Frame, area: Rect, app: &App, session: &Session) {
    let plan = &session.plan;
    let k = match &plan.max_size() {
        MaxSize::Fixed(k) => format!("{} (fixed)", int(u64::from(*k))),
        MaxSize::Estimate { budget } => {
            format!(
                "estimated privately with {} = {}",
                budget.definition().symbol(),
                app.epsilon_text(&crate::tui::session::amount(budget))
            )
        }
    };
    let merge = if plan.consistency().uses_merge() {
        plan.merge().name().to_string()
    } else {
        format!(
            "{} (unused by {})",
            plan.merge().name(),
            plan.consistency().name()
        )
    };
    let lines = vec![
        Line::from(
            [
                vec![Span::styled("Plan ", theme::heading())],
                widgets::field(
                    &format!("total {} =", session.symbol()),
                    app.epsilon_text(&session.total()),
                ),
                at_delta_field(&session.loss()),
                widgets::field(" · preset", session.preset.describe()),
                widgets::field(" · K", k),
            ]
            .concat(),
        ),
        Line::from(
            [
                widgets::field("consistency", plan.consistency().name()),
                widgets::field(" · merge", merge),
                widgets::field(" · tuning", tuning_text(plan)),
                widgets::field(
                    " · file",
                    session
                        .plan_file
                        .as_ref()
                        .map_or("not saved".into(), |p| p.display().to_string()),
                ),
            ]
            .concat(),
        ),
    ];
    let lines: Vec<Line> = lines
        .into_iter()
        .map(|l| widgets::fit_line(l, area.width as usize))
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}

fn render_levels(frame: &mut Frame, area: Rect, app: &App, session: &Session) {
    let h = &session.dataset.hierarchy;
    let wide = area.width >= 100;
    let mut headers = vec![
        "level",
        "nodes",
        session.symbol(),
        "share",
        "method",
        "noise samples",
        sd_header(session.definition()),
    ];
    // As wide as the numbers: a level of 8 million regions costs 81 billion samples.
    let mut cols = vec![
        Col::name(6).at_least(10),
        Col::left().at_least(5),
        Col::left().at_least(10),
        Col::left().at_least(6),
        Col::name(8).at_least(11),
        Col::left().at_least(13),
        Col::left().at_least(9),
    ];
    let mut texts: Vec<Vec<String>> = session
        .plan
        .levels()
        .iter()
        .zip(&session.figures)
        .zip(h.levels())
        .map(|((lp, f), level)| {
            vec![
                lp.name().to_string(),
                int(h.level_len(level) as u64),
                crate::tui::widgets::level_amount_as(
                    app.exact_epsilon,
                    lp.loss().map(crate::tui::session::amount).as_ref(),
                ),
                if lp.held() {
                    format!("{:.1}% held", f.share)
                } else {
                    format!("{:.1}%", f.share)
                },
                lp.method().label(),
                f.noise_samples.map_or_else(
                    || "nodes × (K+1)".to_string(),
                    |n| {
                        let at_most = if lp.method().samples_are_a_bound() {
                            "≤ "
                        } else {
                            ""
                        };
                        format!("{at_most}{}", int(n))
                    },
                ),
                f.noise_sd.map_or_else(|| "—".to_string(), fmt_num),
            ]
        })
        .collect();
    if wide {
        headers.insert(4, "");
        cols.insert(4, Col::fixed(8));
        for (t, f) in texts.iter_mut().zip(&session.figures) {
            t.insert(4, widgets::bar(f.share, 100.0, 8));
        }
    }
    let block = widgets::block(
        format!(
            " Budget per level ({}{} level, {}{} step {symbol}, {} type {symbol}, {} method, {} hold) ",
            key(app, Action::Up),
            key(app, Action::Down),
            key(app, Action::EpsilonDown),
            key(app, Action::EpsilonUp),
            key(app, Action::TypeEpsilon),
            key(app, Action::ToggleMethod),
            key(app, Action::HoldLevel),
            symbol = session.symbol(),
        ),
        area.width,
    );
    let fitted = Columns::fit(
        &cols,
        std::iter::once(headers.clone())
            .chain(texts.iter().map(|t| t.iter().map(String::as_str).collect())),
        block.inner(area).width,
        1,
    );
    let rows: Vec<Row> = texts
        .iter()
        .zip(h.levels())
        .map(|(t, level)| {
            let row = fitted.row(t);
            if level.0 == app.budget.level {
                row.style(theme::selected())
            } else {
                row
            }
        })
        .collect();
    let table = Table::new(rows, fitted.constraints())
        .column_spacing(fitted.spacing())
        .header(fitted.row(&headers).style(theme::heading()))
        .block(block);
    frame.render_widget(table, area);
}

/// The ledger's figures for this dataset and the plan's warnings.
fn ledger_lines(app: &App, session: &Session) -> Vec<Line<'static>> {
    let status = &session.ledger;
    let exact = app.exact_epsilon;
    // The ledger accounts in ε: a zCDP plan's ρ is neither added to what it spent nor
    // compared with its cap here (the Release screen says what a draw of it does).
    // The ε arithmetic below (after a release, over the cap) holds for a pure plan on
    // spending that is all pure ε; otherwise the ledger states ρ and the reservation
    // checks every cap.
    let total = session
        .loss()
        .as_pure()
        .cloned()
        .filter(|_| !status.in_rho());
    let mut lines = Vec::new();
    if let Some(e) = &status.error {
        lines.push(Line::styled(
            format!("ledger unavailable, draws are refused: {e}"),
            theme::error(),
        ));
    } else {
        lines.push(Line::from(
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
                total.as_ref().map_or_else(Vec::new, |total| {
                    widgets::field(
                        " · after a release of this plan",
                        show(&status.after(total), exact, Rounding::Up),
                    )
                }),
            ]
            .concat(),
        ));
        if let Some(total) = &total
            && status.exceeds_cap(total)
        {
            lines.push(Line::styled(
                format!(
                    "⚠ over the cap: {} spent + {} for this plan > cap {}; a draw would be refused",
                    status.spent_text(exact),
                    app.epsilon_text(total),
                    status.cap_text(exact)
                ),
                theme::warning(),
            ));
        }
    }
    if session.plan.consistency() == Consistency::Wls
        && session
            .plan
            .levels()
            .iter()
            .any(|l| l.method() == crate::estimate::Method::Naive)
    {
        lines.push(Line::styled(
            "wls needs hc, hc + tail or hg at every level: draws with this plan fall back to topdown",
            theme::warning(),
        ));
    }
    if let Some(hint) = tail_hint(session) {
        lines.push(Line::from(vec![
            Span::styled("Hint ", theme::heading()),
            Span::raw(hint),
        ]));
    }
    lines
}

/// A hint from public figures only (the plan and `K`) when some level measures plain
/// `hc` over many sizes: the case a tail is for.
fn tail_hint(session: &Session) -> Option<String> {
    let above = crate::estimate::Tail::DEFAULT.above;
    let k = session.fixed_max_size().filter(|&k| k > above + 1)?;
    let plain: Vec<&str> = session
        .plan
        .levels()
        .iter()
        .filter(|l| l.method() == crate::estimate::Method::Hc)
        .map(|l| l.name())
        .collect();
    (!plain.is_empty()).then(|| {
        format!(
            "{} measure{} plain hc over K + 1 = {} sizes: a tail lists each region's groups of size {above} or more at the same ε, as coco's default does (public figures only)",
            plain.join(", "),
            if plain.len() == 1 { "s" } else { "" },
            int(u64::from(k) + 1),
        )
    })
}

/// The column of each level's noise: its standard deviation per cell, σ for the
/// discrete Gaussian of a zCDP plan.
fn sd_header(definition: Definition) -> &'static str {
    match definition {
        Definition::Pure => "s.d./cell",
        Definition::Zcdp => "σ/cell",
    }
}

/// What the noise column means, under the table.
fn noise_note(definition: Definition) -> &'static str {
    match definition {
        Definition::Pure => {
            "s.d./cell: the standard deviation of the discrete Laplace noise on each measured cell (public: from ε alone)."
        }
        Definition::Zcdp => {
            "σ/cell: the σ of the discrete Gaussian noise on each measured cell, σ² = Δ₂²/(2ρ) (public: from ρ alone)."
        }
    }
}

/// For a zCDP plan, the (ε, δ)-DP statement its total implies at δ = 10⁻¹⁰; nothing
/// for a pure plan (its ε holds at δ = 0).
fn at_delta_field(total: &Loss) -> Vec<Span<'static>> {
    match crate::tui::session::at_delta(total) {
        Some(text) => vec![Span::styled(format!(" ({text})"), theme::dim())],
        None => Vec::new(),
    }
}

/// The status message after the plan's definition was toggled.
fn definition_message(app: &App) -> String {
    let Some(session) = &app.session else {
        return String::new();
    };
    let toggle = key(app, Action::ToggleDefinition);
    let total = session.loss();
    match session.definition() {
        Definition::Zcdp => format!(
            "the plan is now in ρ-zCDP (discrete Gaussian noise): every budget keeps its value, as a ρ; total ρ = {}, {}; {toggle} goes back to pure ε",
            app.epsilon_text(&session.total()),
            crate::tui::session::at_delta(&total).unwrap_or_default(),
        ),
        Definition::Pure => format!(
            "the plan is now in pure ε-DP (discrete Laplace noise): every budget keeps its value, as an ε; total ε = {}; {toggle} switches to ρ-zCDP",
            app.epsilon_text(&session.total()),
        ),
    }
}
