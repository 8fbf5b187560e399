//! The Hierarchy screen: the tree of regions beside the selected region's true
//! count-of-counts histogram (confidential), with search, log scale and a size window.

use std::collections::HashSet;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::data::NodeId;
use crate::histogram::Size;
use crate::privacy::Diagnostic;

use super::super::action::{Action, Context};
use super::super::app::{App, Command, InputPurpose};
use super::super::search::Query;
use super::super::session::Session;
use super::super::theme;
use super::super::tree::Tree;
use super::super::widgets::{self, int};
use super::super::worker::{Job, Update};

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
    /// The last search, while it runs and after.
    pub search: Option<Search>,
}

impl Default for HierarchyState {
    fn default() -> Self {
        HierarchyState {
            expanded: HashSet::from([NodeId::ROOT]),
            selected: NodeId::ROOT,
            log_scale: false,
            window: 10,
            search: None,
        }
    }
}

/// A search and the regions it found: an exact id or code first, then, as the scan in
/// the background finds them, every region whose id or name contains the text, in
/// node order (level by level).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Search {
    pub query: String,
    pub matches: Vec<NodeId>,
    /// The match shown, once there is one.
    pub shown: Option<usize>,
    /// Regions scanned so far, of all of them.
    pub scanned: usize,
    pub total: usize,
    pub done: bool,
}

impl Search {
    /// "2 of 12" (or "2 of 12 so far" while the scan runs).
    fn position(&self) -> String {
        let so_far = if self.done { "" } else { " so far" };
        format!(
            "{} of {}{so_far}",
            self.shown.map_or(0, |i| i + 1),
            int(self.matches.len() as u64)
        )
    }
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

/// Starts a search: an exact display id or leaf code is selected at once, and the
/// regions whose id, code or name contain the text are looked for in the background.
pub fn search(app: &mut App, text: &str) -> Result<(), String> {
    let Some(session) = &app.session else {
        return Err("no dataset is open".into());
    };
    let query = text.trim().to_string();
    if Query::new(&query).is_empty() {
        return Err("type part of a region's id, code or name".into());
    }
    let exact = session.dataset.hierarchy.find(&query);
    app.outbox.push(Command::Start(Job::Search {
        dataset: session.dataset.clone(),
        query: query.clone(),
        skip: exact,
    }));
    app.hierarchy.search = Some(Search {
        query,
        matches: exact.into_iter().collect(),
        shown: exact.map(|_| 0),
        scanned: 0,
        total: session.dataset.hierarchy.len(),
        done: false,
    });
    if let Some(id) = exact {
        select(app, id);
    }
    Ok(())
}

/// Takes in what the background search found: the first match is shown as soon as it
/// arrives; the end of the scan says how many there are.
pub fn receive(app: &mut App, update: Update) {
    let (found, done) = match update {
        Update::SearchProgress(found) => (found, false),
        Update::Searched(found) => (found, true),
        _ => return,
    };
    let Some(search) = &mut app.hierarchy.search else {
        return;
    };
    if search.done {
        return;
    }
    search.matches.extend(found.regions);
    search.scanned = found.scanned;
    search.done = done;
    let first = match search.shown {
        None if !search.matches.is_empty() => {
            search.shown = Some(0);
            Some(search.matches[0])
        }
        _ => None,
    };
    let (query, n, position) = (
        search.query.clone(),
        search.matches.len(),
        search.position(),
    );
    if let Some(id) = first {
        select(app, id);
    }
    if done {
        if n == 0 {
            app.warn(format!(
                "no region has an id, code or name containing {query:?}"
            ));
        } else if n > 1 {
            let next = app.keymap.key(Context::Hierarchy, Action::NextMatch);
            app.info(format!(
                "{position} regions matching {query:?} ({next}: next)"
            ));
        }
    }
}

/// The next match of the last search (of those found so far while it runs).
pub fn next_match(app: &mut App) {
    let Some(search) = app
        .hierarchy
        .search
        .as_mut()
        .filter(|s| !s.matches.is_empty())
    else {
        match &app.hierarchy.search {
            Some(s) if !s.done => app.info(format!("searching for {:?}…", s.query)),
            _ => {
                let search = app.keymap.key(Context::Hierarchy, Action::Search);
                app.warn(format!("no match to go to: press {search} to search"));
            }
        }
        return;
    };
    let i = search.shown.map_or(0, |i| (i + 1) % search.matches.len());
    search.shown = Some(i);
    let (id, query, position) = (search.matches[i], search.query.clone(), search.position());
    select(app, id);
    app.info(format!("{position} regions matching {query:?}"));
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

/// Rows moved by page up and page down.
const PAGE: isize = 10;

pub fn update(app: &mut App, action: Action) {
    let Some(session) = &app.session else { return };
    let h = &session.dataset.hierarchy;
    let tree = Tree::new(h, &app.hierarchy.expanded);
    let selected = app.hierarchy.selected;
    let node = h.node(selected);
    let moved = match action {
        Action::Up => Some(tree.step(selected, -1)),
        Action::Down => Some(tree.step(selected, 1)),
        Action::PageUp => Some(tree.step(selected, -PAGE)),
        Action::PageDown => Some(tree.step(selected, PAGE)),
        Action::First => Some(NodeId::ROOT),
        Action::Last => Some(tree.last()),
        _ => None,
    };
    let state = &mut app.hierarchy;
    if let Some(id) = moved {
        state.selected = id;
        return;
    }
    match action {
        // Open: the guard closes it. Closed: open it.
        Action::ToggleNode if !node.is_leaf() && !state.expanded.remove(&selected) => {
            state.expanded.insert(selected);
        }
        // Already open: go down to the first child.
        Action::Expand if !node.is_leaf() && !state.expanded.insert(selected) => {
            state.selected = node.children().next().expect("not a leaf");
        }
        // Already closed: go up to the parent.
        Action::Collapse if !state.expanded.remove(&selected) => {
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
    let mut block = widgets::block(" Regions · G (public) ", area.width);
    if let Some(search) = &app.hierarchy.search {
        block = block.title_bottom(search_title(search));
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let tree = Tree::new(h, &app.hierarchy.expanded);
    let width = inner.width as usize;
    let lines: Vec<Line> = tree
        .window(app.hierarchy.selected, inner.height as usize)
        .into_iter()
        .map(|id| {
            let node = h.node(id);
            let marker = if node.is_leaf() {
                "·"
            } else if tree.is_open(id) {
                "▾"
            } else {
                "▸"
            };
            let g = int(session.dataset.groups(id));
            let indent = "  ".repeat(node.level.0);
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

/// The search under the tree: its text, and the match shown of how many, or how far
/// the scan has got.
fn search_title(search: &Search) -> Line<'static> {
    let query = widgets::fit(&search.query, 16);
    let text = if search.done && search.matches.is_empty() {
        format!(" /{query}: no match ")
    } else if search.done {
        format!(" /{query}: {} ", search.position())
    } else {
        format!(
            " /{query}: searching… {} found, {}% ",
            int(search.matches.len() as u64),
            search.scanned * 100 / search.total.max(1)
        )
    };
    Line::styled(text, theme::dim())
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
    let block = widgets::block(
        widgets::confidential_title(&format!("{} · true histogram", h.label(id))),
        area.width,
    );
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

    #[test]
    fn windows_step_within_the_list() {
        assert_eq!(step_window(10, true), 12);
        assert_eq!(step_window(10, false), 8);
        assert_eq!(step_window(3, false), 3);
        assert_eq!(step_window(100, true), 100);
        assert_eq!(step_window(11, false), 10);
    }
}
