//! The Hierarchy screen: the tree of regions beside the selected region's true
//! count-of-counts histogram (confidential), with search, log scale and a size window.

use std::collections::HashSet;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::data::{Hierarchy, NodeId};
use crate::histogram::Size;
use crate::privacy::Diagnostic;

use super::super::action::{Action, Context};
use super::super::app::{App, InputPurpose};
use super::super::session::Session;
use super::super::theme;
use super::super::widgets::{self, int};

/// The size windows that fewer/more sizes step through.
pub const WINDOWS: [Size; 12] = [3, 5, 8, 10, 12, 15, 20, 25, 30, 40, 50, 100];

/// Tree, selection and histogram settings. The selected region is also the one the
/// Preview screen overlays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HierarchyState {
    pub expanded: HashSet<NodeId>,
    pub selected: NodeId,
    pub log_scale: bool,
    /// Sizes up to this are shown one by one; larger ones are grouped into "N+".
    pub window: Size,
    /// The last search and its matches.
    pub query: Option<String>,
    pub matches: Vec<NodeId>,
    pub match_index: usize,
}

impl Default for HierarchyState {
    fn default() -> Self {
        HierarchyState {
            expanded: HashSet::from([NodeId::ROOT]),
            selected: NodeId::ROOT,
            log_scale: false,
            window: 10,
            query: None,
            matches: Vec::new(),
            match_index: 0,
        }
    }
}

/// The regions shown, in tree order, with their depth.
pub fn visible(h: &Hierarchy, expanded: &HashSet<NodeId>) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut stack = vec![NodeId::ROOT];
    while let Some(id) = stack.pop() {
        out.push(id);
        if expanded.contains(&id) {
            let children: Vec<NodeId> = h.node(id).children().collect();
            stack.extend(children.into_iter().rev());
        }
    }
    out
}

/// Selects a region and opens the branches above it.
pub fn select(app: &mut App, id: NodeId) {
    let Some(session) = &app.session else { return };
    let h = &session.dataset.hierarchy;
    let mut up = h.node(id).parent;
    while let Some(p) = up {
        app.hierarchy.expanded.insert(p);
        up = h.node(p).parent;
    }
    app.hierarchy.selected = id;
}

/// Regions matching a search: exact id or code first, then ids, codes and names that
/// contain the text (case-insensitive), in tree order.
pub fn find(h: &Hierarchy, query: &str) -> Vec<NodeId> {
    let q = query.trim().to_lowercase();
    if q.is_empty() {
        return Vec::new();
    }
    let mut exact: Vec<NodeId> = h.find(query.trim()).into_iter().collect();
    let mut id_text = String::new();
    let contains = (0..h.len() as u32).map(NodeId).filter(|&id| {
        id_text.clear();
        h.push_display_id(id, &mut id_text);
        id_text.to_lowercase().contains(&q)
            || h.name(id).is_some_and(|m| m.to_lowercase().contains(&q))
    });
    for id in contains {
        if !exact.contains(&id) {
            exact.push(id);
        }
    }
    exact
}

/// Runs a search and selects the first match.
pub fn search(app: &mut App, text: &str) -> Result<(), String> {
    let Some(session) = &app.session else {
        return Err("no dataset is open".into());
    };
    let matches = find(&session.dataset.hierarchy, text);
    let Some(&first) = matches.first() else {
        return Err(format!(
            "no region has an id, code or name containing {text:?}"
        ));
    };
    let n = matches.len();
    app.hierarchy.query = Some(text.to_string());
    app.hierarchy.matches = matches;
    app.hierarchy.match_index = 0;
    select(app, first);
    if n > 1 {
        let next = app.keymap.key(Context::Hierarchy, Action::NextMatch);
        app.info(format!("1 of {n} regions matching {text:?} ({next}: next)"));
    }
    Ok(())
}

/// The next match of the last search.
pub fn next_match(app: &mut App) {
    let state = &mut app.hierarchy;
    if state.matches.is_empty() {
        let search = app.keymap.key(Context::Hierarchy, Action::Search);
        app.warn(format!("no search yet: press {search} to search"));
        return;
    }
    state.match_index = (state.match_index + 1) % state.matches.len();
    let (i, n, id) = (
        state.match_index,
        state.matches.len(),
        state.matches[state.match_index],
    );
    let q = state.query.clone().unwrap_or_default();
    select(app, id);
    app.info(format!("{} of {n} regions matching {q:?}", i + 1));
}

/// Steps the size window.
pub fn step_window(window: Size, more: bool) -> Size {
    if more {
        WINDOWS
            .iter()
            .copied()
            .find(|&w| w > window)
            .unwrap_or(window)
    } else {
        WINDOWS
            .iter()
            .rev()
            .copied()
            .find(|&w| w < window)
            .unwrap_or(window)
    }
}

pub fn update(app: &mut App, action: Action) {
    let Some(session) = &app.session else { return };
    let h = &session.dataset.hierarchy;
    let rows = visible(h, &app.hierarchy.expanded);
    let pos = rows
        .iter()
        .position(|&id| id == app.hierarchy.selected)
        .unwrap_or(0);
    let last = rows.len() - 1;
    let node = h.node(app.hierarchy.selected);
    let state = &mut app.hierarchy;
    match action {
        Action::Up => state.selected = rows[pos.saturating_sub(1)],
        Action::Down => state.selected = rows[(pos + 1).min(last)],
        Action::PageUp => state.selected = rows[pos.saturating_sub(10)],
        Action::PageDown => state.selected = rows[(pos + 10).min(last)],
        Action::First => state.selected = rows[0],
        Action::Last => state.selected = rows[last],
        // Open: the guard closes it. Closed: open it.
        Action::ToggleNode if !node.is_leaf() && !state.expanded.remove(&state.selected) => {
            state.expanded.insert(state.selected);
        }
        // Already open: go down to the first child.
        Action::Expand if !node.is_leaf() && !state.expanded.insert(state.selected) => {
            state.selected = node.children().next().expect("not a leaf");
        }
        // Already closed: go up to the parent.
        Action::Collapse if !state.expanded.remove(&state.selected) => {
            if let Some(p) = node.parent {
                state.selected = p;
            }
        }
        Action::LogScale => state.log_scale = !state.log_scale,
        Action::FewerSizes => state.window = step_window(state.window, false),
        Action::MoreSizes => state.window = step_window(state.window, true),
        Action::Search => app.ask(
            InputPurpose::Search,
            "Find a region (id like ARV/01, code, or part of a name):",
            "",
        ),
        Action::NextMatch => next_match(app),
        _ => {}
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, session: &Session) {
    let tree_width = (area.width * 2 / 5).clamp(28, 60);
    let [tree, hist] =
        Layout::horizontal([Constraint::Length(tree_width), Constraint::Min(30)]).areas(area);
    render_tree(frame, tree, app, session);
    render_node(frame, hist, app, session);
}

fn render_tree(frame: &mut Frame, area: Rect, app: &App, session: &Session) {
    let h = &session.dataset.hierarchy;
    let rows = visible(h, &app.hierarchy.expanded);
    let block = widgets::block(" Regions · G (public) ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let height = inner.height as usize;
    let pos = rows
        .iter()
        .position(|&id| id == app.hierarchy.selected)
        .unwrap_or(0);
    let offset = pos
        .saturating_sub(height / 2)
        .min(rows.len().saturating_sub(height));
    let width = inner.width as usize;
    let lines: Vec<Line> = rows
        .iter()
        .skip(offset)
        .take(height)
        .map(|&id| {
            let node = h.node(id);
            let marker = if node.is_leaf() {
                "·"
            } else if app.hierarchy.expanded.contains(&id) {
                "▾"
            } else {
                "▸"
            };
            let g = int(session.dataset.groups(id));
            let indent = "  ".repeat(node.level.0);
            let h = &session.dataset.hierarchy;
            let label = match h.name(id) {
                Some(name) => format!("{indent}{marker} {} {name}", h.code(id)),
                None => format!("{indent}{marker} {}", h.code(id)),
            };
            let room = width.saturating_sub(g.chars().count() + 1);
            let text = format!("{:<room$} {g}", widgets::fit(&label, room));
            if id == app.hierarchy.selected {
                Line::styled(text, theme::selected())
            } else {
                Line::raw(text)
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

fn render_node(frame: &mut Frame, area: Rect, app: &App, session: &Session) {
    let h = &session.dataset.hierarchy;
    let id = app.hierarchy.selected;
    let node = h.node(id);
    let truth = session
        .dataset
        .truth()
        .for_diagnostic(Diagnostic::Inspect)
        .node(id);
    let block = widgets::block(widgets::confidential_title(&format!(
        "{} · true histogram",
        h.label(id)
    )));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [facts, head, bars, foot] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(inner);
    let level = h.level_name(node.level).to_string();
    let facts_lines = vec![
        Line::from(
            [
                widgets::field("level", level),
                widgets::field(
                    " · groups G",
                    format!("{} (public)", int(session.dataset.groups(id))),
                ),
            ]
            .concat(),
        ),
        Line::from(
            [
                widgets::field("entities", crate::inspect::thousands(truth.entities())),
                widgets::field(" · distinct sizes", truth.distinct_sizes().to_string()),
                widgets::field(
                    " · largest",
                    truth.max_size().map_or("-".into(), |m| int(u64::from(m))),
                ),
                vec![Span::styled(" *", theme::confidential())],
            ]
            .concat(),
        ),
    ];
    frame.render_widget(Paragraph::new(facts_lines), facts);
    frame.render_widget(
        Paragraph::new(Line::styled("  size    groups", theme::heading())),
        head,
    );
    let window = widgets::window_for(&[truth], app.hierarchy.window, bars.height as usize);
    let lines = widgets::histogram_lines(
        &[(truth, theme::series(0))],
        window,
        app.hierarchy.log_scale,
        bars.width as usize,
    );
    frame.render_widget(Paragraph::new(lines), bars);
    frame.render_widget(
        Paragraph::new(Line::styled(
            scale_note(
                app.hierarchy.log_scale,
                window,
                widgets::has_tail(&[truth], window),
            ),
            theme::dim(),
        )),
        foot,
    );
}

/// The footnote under a histogram: scale and window.
pub fn scale_note(log: bool, window: Size, tail: bool) -> String {
    let scale = if log { "log scale" } else { "linear scale" };
    if tail {
        format!(
            "{scale} · sizes 0–{window} one by one, then {}",
            widgets::tail_label(window)
        )
    } else {
        format!("{scale} · every size shown")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tests::tiny;

    #[test]
    fn the_tree_shows_expanded_branches_in_order() {
        let d = tiny();
        let h = &d.hierarchy;
        let mut expanded = HashSet::from([NodeId::ROOT]);
        let top = visible(h, &expanded);
        assert_eq!(top[0], NodeId::ROOT);
        assert_eq!(top.len(), 1 + h.node(NodeId::ROOT).children().len());
        let first_child = top[1];
        expanded.insert(first_child);
        let more = visible(h, &expanded);
        // The first child's children come right after it.
        let grandchildren: Vec<NodeId> = h.node(first_child).children().collect();
        assert_eq!(&more[2..2 + grandchildren.len()], grandchildren.as_slice());
    }

    #[test]
    fn windows_step_within_the_list() {
        assert_eq!(step_window(10, true), 12);
        assert_eq!(step_window(10, false), 8);
        assert_eq!(step_window(3, false), 3);
        assert_eq!(step_window(100, true), 100);
        assert_eq!(step_window(11, false), 10);
    }
}
