//! The palette: the terminal's own foreground and background, plus a few accents that
//! read on light and dark backgrounds alike. Selection is reversed video, never a colour.

use ratatui::style::{Color, Modifier, Style};

/// Section titles and the active tab.
pub fn heading() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

/// The selected row or tab.
pub fn selected() -> Style {
    Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
}

/// Figures computed from the true data, which must not be published.
pub fn confidential() -> Style {
    Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD)
}

/// Results from a plan that has changed since they were computed.
pub fn stale() -> Style {
    Style::new()
        .fg(Color::Yellow)
        .add_modifier(Modifier::BOLD | Modifier::REVERSED)
}

/// Something the operator should read before going on.
pub fn warning() -> Style {
    Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD)
}

/// A failed check or an error.
pub fn error() -> Style {
    Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
}

/// A passed check, a finished export.
pub fn ok() -> Style {
    Style::new().fg(Color::Green).add_modifier(Modifier::BOLD)
}

/// Keys in the hint bar and help.
pub fn key() -> Style {
    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

/// Secondary text.
pub fn dim() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}

/// The series of charts and bars, in a fixed order: true, noisy, consistent, bottom-up,
/// reference.
pub const SERIES: [Color; 5] = [
    Color::Reset,
    Color::Yellow,
    Color::Cyan,
    Color::Green,
    Color::Magenta,
];

pub fn series(i: usize) -> Style {
    Style::new().fg(SERIES[i % SERIES.len()])
}
