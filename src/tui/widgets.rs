//! Small drawing helpers shared by the screens: text bars, sparklines, the size buckets
//! of a histogram, numbers. Pure functions of their inputs.

use std::time::{Duration, Instant};

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Gauge, Paragraph, Row, Wrap};

use crate::histogram::{HistRef, Size};
use crate::inspect::thousands;
use crate::preview::Stat;

use super::session::show;
use super::theme;
use super::worker::TrialClock;
use crate::privacy::Rounding;

/// A whole number with thousands separators.
pub fn int(n: u64) -> String {
    thousands(u128::from(n))
}

/// A duration as an operator reads it: `0.31 s`, `2.5 s`, `25 s`, `3 min 5 s`,
/// `1 h 2 min` ([`crate::timing::readable`]).
pub fn duration(d: Duration) -> String {
    crate::timing::readable(d)
}

/// How a run of trials is going, at `now`, with `done` the share of the run done (by
/// trials and regions): how long the last trial took and the time left; before the
/// first trial ends, the time it has taken so far and, from the pace through the
/// regions, a first estimate of the time left (short: it leaves out the steps after
/// the regions are measured).
pub fn trial_timing(clock: &TrialClock, done: f64, now: Instant) -> String {
    if let (Some(last), Some(left)) = (clock.last, clock.left(now)) {
        return format!(
            "last trial {} · about {} left",
            duration(last),
            duration(left)
        );
    }
    let spent = now.saturating_duration_since(clock.started);
    let mut text = format!("first trial {} so far", duration(spent));
    if let Some(left) = pace_left(spent, done) {
        text.push_str(&format!(" · {left}"));
    }
    text
}

/// A first estimate of the time left when `done` of a job has taken `spent`: the rest
/// at the same pace. An estimate, not a bound either way: the first regions run slower
/// (caches, threads starting) and the steps after the regions are left out. `None`
/// before a second has passed or while nothing is done.
pub fn pace_left(spent: Duration, done: f64) -> Option<String> {
    crate::timing::time_left(spent, done)
        .map(|left| format!("about {} left at this pace", duration(left)))
}

/// Where a trial is among the regions: measuring them one by one, then (all measured)
/// `then`, the step that follows ([`crate::preview::TrialStep::text`] in a preview).
pub fn trial_regions(nodes_done: usize, nodes: usize, then: &str) -> String {
    if nodes_done < nodes {
        format!(
            "{} of {} regions",
            int(nodes_done as u64),
            int(nodes as u64)
        )
    } else {
        format!("all {} regions measured · {then}…", int(nodes as u64))
    }
}

/// ε as the operator reads it: a short decimal (`0.25`, `≈2.834`), or exactly when
/// `exact` (the `E` key). For a budget being planned (rounded to the nearest).
pub fn epsilon_as<U: crate::privacy::Unit>(exact: bool, e: &crate::privacy::Budget<U>) -> String {
    show(e, exact, Rounding::Nearest)
}

/// A level's budget as the operator reads it ([`epsilon_as`]), or "not measured" for
/// a level left unmeasured (budget 0).
pub fn level_amount_as<U: crate::privacy::Unit>(
    exact: bool,
    e: Option<&crate::privacy::Budget<U>>,
) -> String {
    e.map_or_else(|| NOT_MEASURED.to_string(), |e| epsilon_as(exact, e))
}

/// How a level left unmeasured is shown wherever a level's budget or its independent
/// estimate would be.
pub const NOT_MEASURED: &str = "0 (not measured)";

/// A mean ± standard error.
pub fn stat(s: Stat) -> String {
    s.text()
}

/// A horizontal bar of `value / max` of `width` cells, in eighths of a cell.
pub fn bar(value: f64, max: f64, width: usize) -> String {
    if width == 0 || max <= 0.0 || value <= 0.0 || !value.is_finite() {
        return String::new();
    }
    let eighths = ((value / max).min(1.0) * (width * 8) as f64).round() as usize;
    // A nonzero value always shows.
    let eighths = eighths.max(1);
    let mut s = "█".repeat(eighths / 8);
    const PARTS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    s.push_str(PARTS[eighths % 8]);
    s
}

/// The length a bar is drawn for: the value itself, or ln(1 + value) on a log scale.
pub fn scaled(value: f64, log: bool) -> f64 {
    if log { value.max(0.0).ln_1p() } else { value }
}

/// Values resampled to `width` columns (each the largest of its share) as block
/// characters, from zero to the largest value.
pub fn sparkline(values: &[u64], width: usize) -> String {
    const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    if values.is_empty() || width == 0 {
        return String::new();
    }
    let columns = width.min(values.len());
    let max = *values.iter().max().expect("non-empty") as f64;
    (0..columns)
        .map(|c| {
            let from = c * values.len() / columns;
            let to = ((c + 1) * values.len() / columns).max(from + 1);
            let v = values[from..to].iter().copied().max().unwrap_or(0) as f64;
            if max <= 0.0 {
                LEVELS[0]
            } else {
                LEVELS[((v / max) * 7.0).round() as usize]
            }
        })
        .collect()
}

/// Counts of sizes `0..=window` and, last, of every size above `window`.
pub fn buckets(h: HistRef<'_>, window: Size) -> Vec<u64> {
    let mut out = vec![0u64; window as usize + 2];
    for &(size, count) in h.pairs() {
        let i = if size > window {
            window as usize + 1
        } else {
            size as usize
        };
        out[i] += count;
    }
    out
}

/// The sizes to show one by one: the operator's window, no more than the largest size
/// present, and no more than `rows` rows allow (one row is kept for "N+").
pub fn window_for(hists: &[HistRef<'_>], window: Size, rows: usize) -> Size {
    let largest = hists.iter().filter_map(|h| h.max_size()).max().unwrap_or(0);
    let fit = rows.saturating_sub(2) as Size;
    window.min(largest).min(fit)
}

/// The label of the last bucket: "N+" sizes above the window.
pub fn tail_label(window: Size) -> String {
    format!("{}+", window + 1)
}

/// Whether the tail bucket has anything in it for any of the histograms.
pub fn has_tail(hists: &[HistRef<'_>], window: Size) -> bool {
    hists
        .iter()
        .any(|h| h.max_size().is_some_and(|m| m > window))
}

/// The columns of a table sized to their texts within the width available, so that no
/// text is ever cut without a mark: each column is as wide as its widest text (header
/// included) and at least its minimum; when they do not all fit, the columns that give
/// way (names, free text) shrink first, down to their floor, then the widest column;
/// a text wider than its column then ends in an ellipsis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Columns {
    widths: Vec<u16>,
    align: Vec<Align>,
    spacing: u16,
}

/// Where a cell's text sits in its column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// How one column is sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Col {
    pub align: Align,
    /// The narrowest the column is when its texts are narrower.
    pub min: u16,
    /// A column that gives way first, down to this width.
    pub gives_way_to: Option<u16>,
    /// A drawing of a set width (a sparkline, a bar): never measured or shrunk first.
    pub fixed: Option<u16>,
}

impl Col {
    pub const fn left() -> Col {
        Col {
            align: Align::Left,
            min: 0,
            gives_way_to: None,
            fixed: None,
        }
    }

    pub const fn right() -> Col {
        Col {
            align: Align::Right,
            ..Col::left()
        }
    }

    /// A name or free text: left-aligned, and the first to give up room, down to `floor`.
    pub const fn name(floor: u16) -> Col {
        Col {
            gives_way_to: Some(floor),
            ..Col::left()
        }
    }

    /// A drawing `width` cells wide.
    pub const fn fixed(width: u16) -> Col {
        Col {
            fixed: Some(width),
            ..Col::left()
        }
    }

    pub const fn at_least(self, min: u16) -> Col {
        Col { min, ..self }
    }
}

impl Columns {
    /// Sizes `cols` to `rows` (the header among them) within `width` cells, with
    /// `spacing` cells between columns.
    pub fn fit<'a, R>(
        cols: &[Col],
        rows: impl IntoIterator<Item = R>,
        width: u16,
        spacing: u16,
    ) -> Columns
    where
        R: IntoIterator<Item = &'a str>,
    {
        // The widest text of each column (a drawing: its width).
        let mut texts: Vec<u16> = cols.iter().map(|c| c.fixed.unwrap_or(0)).collect();
        for row in rows {
            for (i, text) in row.into_iter().enumerate() {
                if let Some(w) = texts.get_mut(i)
                    && cols[i].fixed.is_none()
                {
                    *w = (*w).max(u16::try_from(text_width(text)).unwrap_or(u16::MAX));
                }
            }
        }
        let mut widths: Vec<u16> = texts.iter().zip(cols).map(|(&t, c)| t.max(c.min)).collect();
        let gaps =
            spacing.saturating_mul(u16::try_from(cols.len().saturating_sub(1)).unwrap_or(u16::MAX));
        let mut total: u32 = widths.iter().map(|&w| u32::from(w)).sum::<u32>() + u32::from(gaps);
        while total > u32::from(width) {
            // Room beyond the texts first (a minimum), then the widest column that gives
            // way and is above its floor, then the widest measured column, then the
            // widest drawing.
            let widest = |pick: &dyn Fn(usize) -> bool| {
                (0..widths.len())
                    .filter(|&i| pick(i))
                    .max_by_key(|&i| (widths[i], i))
            };
            let Some(i) = widest(&|i| widths[i] > texts[i])
                .or_else(|| widest(&|i| cols[i].gives_way_to.is_some_and(|f| widths[i] > f)))
                .or_else(|| widest(&|i| cols[i].fixed.is_none() && widths[i] > 1))
                .or_else(|| widest(&|i| widths[i] > 0))
            else {
                break;
            };
            widths[i] -= 1;
            total -= 1;
        }
        Columns {
            widths,
            align: cols.iter().map(|c| c.align).collect(),
            spacing,
        }
    }

    /// The columns' widths, for [`ratatui::widgets::Table::new`].
    pub fn constraints(&self) -> Vec<Constraint> {
        self.widths.iter().map(|&w| Constraint::Length(w)).collect()
    }

    /// The spacing between columns, for [`ratatui::widgets::Table::column_spacing`].
    pub fn spacing(&self) -> u16 {
        self.spacing
    }

    pub fn width(&self, column: usize) -> usize {
        self.widths.get(column).map_or(0, |&w| usize::from(w))
    }

    /// A table row of `texts`, each as it fits its column ([`Columns::cell`]).
    pub fn row<S: AsRef<str>>(&self, texts: impl IntoIterator<Item = S>) -> Row<'static> {
        Row::new(
            texts
                .into_iter()
                .enumerate()
                .map(|(i, t)| Cell::from(self.cell(i, t.as_ref())))
                .collect::<Vec<_>>(),
        )
    }

    /// `text` as it fits column `column`: aligned, and ending in "…" when cut.
    pub fn cell(&self, column: usize, text: &str) -> String {
        let width = self.width(column);
        let shown = fit(text, width);
        let pad = width.saturating_sub(text_width(&shown));
        match self.align.get(column) {
            Some(Align::Right) => format!("{}{shown}", " ".repeat(pad)),
            _ => shown,
        }
    }
}

/// How many terminal cells a text takes (wide characters take two).
pub fn text_width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// A bordered block drawn `width` cells wide, with its title fitted between the
/// corners ([`fit_title`]).
pub fn block(title: impl Into<Line<'static>>, width: u16) -> Block<'static> {
    let room = usize::from(width.saturating_sub(2));
    Block::default()
        .borders(Borders::ALL)
        .title(fit_title(title.into(), room))
}

/// A title cut to `width` cells. Its first span says what the block shows, the spans
/// after it are labels (CONFIDENTIAL, STALE, PUBLIC PROXY): when the title is too long
/// the first span gives way and ends in "…", the labels stay whole while they fit.
pub fn fit_title(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let style = line.style;
    let mut spans = line.spans;
    let labels: usize = spans.iter().skip(1).map(Span::width).sum();
    // Room for the first span's opening cell, a letter and the "…" and a space.
    if spans.len() > 1 && labels + 4 <= width {
        let first = spans.remove(0);
        let spaced = spans[0].content.starts_with(' ');
        let mut out = fit_line(Line::from(first), width - labels - usize::from(!spaced)).spans;
        if !spaced {
            out.push(Span::raw(" "));
        }
        out.extend(spans);
        return Line::from(out).style(style);
    }
    fit_line(Line::from(spans).style(style), width)
}

/// A title marked confidential.
pub fn confidential_title(text: &str) -> Line<'static> {
    Line::from(vec![
        Span::raw(format!(" {text} ")),
        Span::styled("CONFIDENTIAL", theme::confidential()),
        Span::raw(" "),
    ])
}

/// A label and a value, the label dimmed.
pub fn field(label: &str, value: impl Into<String>) -> Vec<Span<'static>> {
    vec![
        Span::styled(format!("{label} "), theme::dim()),
        Span::raw(value.into()),
    ]
}

/// Text cut to `width` terminal cells, with an ellipsis when cut (a wide character that
/// would straddle the edge is left out).
pub fn fit(text: &str, width: usize) -> String {
    if text_width(text) <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut s = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width - 1 {
            break;
        }
        used += w;
        s.push(c);
    }
    s.push('…');
    s
}

/// A line cut to `width` cells, ending in "…" when cut (its spans keep their styles).
pub fn fit_line(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width || width == 0 {
        return line;
    }
    // Room for the text, the ellipsis taking the last cell.
    let mut left = width - 1;
    let mut spans = Vec::new();
    for span in line.spans {
        let w = span.width();
        if w <= left {
            left -= w;
            spans.push(span);
            continue;
        }
        let mut cut = String::new();
        for c in span.content.chars() {
            let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            if cw > left {
                break;
            }
            left -= cw;
            cut.push(c);
        }
        spans.push(Span::styled(cut, span.style));
        break;
    }
    spans.push(Span::raw("…"));
    Line::from(spans).style(line.style)
}

/// How many rows `text` takes when wrapped at word boundaries to `width` cells (a word
/// wider than a row is broken), as [`ratatui::widgets::Wrap`] lays it out.
pub fn wrapped_rows(text: &str, width: usize) -> usize {
    if width == 0 {
        return 0;
    }
    text.lines()
        .map(|line| wrap_words(line, width).len())
        .sum::<usize>()
        .max(1)
}

/// How many rows `lines` take wrapped at `width` cells, each at least one.
pub fn lines_rows(lines: &[Line<'_>], width: u16) -> u16 {
    lines
        .iter()
        .map(|l| wrapped_rows(&l.to_string(), usize::from(width)) as u16)
        .sum()
}

/// `lines` wrapped at word boundaries into `area`. When they need more rows than it
/// has, the last row shown ends in "…": text is never cut without a mark.
pub fn wrapped(frame: &mut Frame, area: Rect, lines: Vec<Line<'static>>) {
    let rows = lines_rows(&lines, area.width);
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), area);
    if rows > area.height && !area.is_empty() {
        mark_cut_row(frame, area, area.bottom() - 1);
    }
}

/// Puts "…" after the last character on row `y` of `area` (in its last cell when the
/// row is full).
fn mark_cut_row(frame: &mut Frame, area: Rect, y: u16) {
    let buffer = frame.buffer_mut();
    let last = (area.left()..area.right())
        .rev()
        .find(|&x| buffer[(x, y)].symbol() != " ");
    let x = match last {
        Some(x) if x + 1 < area.right() => x + 1,
        Some(x) => x,
        None => area.left(),
    };
    buffer[(x, y)].set_symbol("…");
}

/// `text` (one line) broken into rows of at most `width` cells at word boundaries, as
/// [`ratatui::widgets::Wrap`] lays it out (a word wider than a row is broken).
pub fn wrap_words(text: &str, width: usize) -> Vec<String> {
    crate::units::wrap_words(
        text,
        width,
        |c| unicode_width::UnicodeWidthChar::width(c).unwrap_or(0),
        true,
    )
}

/// A style for a check's outcome.
pub fn check_style(passed: bool) -> Style {
    if passed { theme::ok() } else { theme::error() }
}

/// One line per size of the window, and one for the sizes above it when any has a
/// count there: the size, then each histogram's count and bar, all bars on one scale.
pub fn histogram_lines(
    hists: &[(HistRef<'_>, Style)],
    window: Size,
    log: bool,
    width: usize,
) -> Vec<Line<'static>> {
    let all: Vec<HistRef<'_>> = hists.iter().map(|(h, _)| *h).collect();
    let tail = has_tail(&all, window);
    let counts: Vec<Vec<u64>> = all.iter().map(|&h| buckets(h, window)).collect();
    let max = counts
        .iter()
        .flatten()
        .map(|&c| scaled(c as f64, log))
        .fold(0.0, f64::max);
    let n = hists.len().max(1);
    // Counts as wide as the widest (a region may hold tens of millions of groups).
    let count_width = counts
        .iter()
        .flatten()
        .map(|&c| int(c).len())
        .max()
        .unwrap_or(0)
        .max(9);
    let bar_width = (width.saturating_sub(7) / n).saturating_sub(count_width + 2);
    let rows = window as usize + 1 + usize::from(tail);
    (0..rows)
        .map(|i| {
            let label = if i == window as usize + 1 {
                tail_label(window)
            } else {
                i.to_string()
            };
            let mut spans = vec![Span::styled(format!("{label:>6} "), theme::dim())];
            for (c, (_, style)) in counts.iter().zip(hists) {
                let v = c[i];
                spans.push(Span::raw(format!("{:>count_width$} ", int(v))));
                let b = bar(scaled(v as f64, log), max, bar_width);
                spans.push(Span::styled(format!("{b:<bar_width$} "), *style));
            }
            Line::from(spans)
        })
        .collect()
}

/// A one-line progress gauge: `ratio` (clamped to [0, 1]) with a label.
pub fn progress(ratio: f64, label: String) -> Gauge<'static> {
    Gauge::default()
        .ratio(ratio.clamp(0.0, 1.0))
        .label(label)
        .gauge_style(theme::key())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::CountOfCounts;

    #[test]
    fn bars_use_eighths_and_always_show_nonzero_values() {
        assert_eq!(bar(1.0, 1.0, 4), "████");
        assert_eq!(bar(0.5, 1.0, 3), "█▌");
        assert_eq!(bar(0.001, 1.0, 10), "▏");
        assert_eq!(bar(0.0, 1.0, 10), "");
        assert_eq!(bar(2.0, 1.0, 2), "██");
    }

    #[test]
    fn durations_read_at_a_glance() {
        let ms = Duration::from_millis;
        assert_eq!(duration(ms(312)), "0.31 s");
        assert_eq!(duration(ms(2_460)), "2.5 s");
        assert_eq!(duration(ms(25_900)), "25 s");
        assert_eq!(duration(ms(185_000)), "3 min 5 s");
        assert_eq!(duration(ms(3_725_000)), "1 h 2 min");
    }

    #[test]
    fn trials_say_how_long_they_take_and_have_left() {
        let mut clock = TrialClock::new(10);
        let start = clock.started;
        let at = |ms: u64| start + Duration::from_millis(ms);
        assert_eq!(
            trial_timing(&clock, 0.0, at(1_500)),
            "first trial 1.5 s so far"
        );
        assert_eq!(
            trial_timing(&clock, 0.01, at(30_000)),
            "first trial 30 s so far · about 49 min 30 s left at this pace"
        );
        // Two trials of 2 s: 8 left, 16 s, of which 0.5 s are spent on the third.
        clock.trial_started = at(4_000);
        clock.done = 2;
        clock.last = Some(Duration::from_secs(2));
        assert_eq!(
            trial_timing(&clock, 0.25, at(4_500)),
            "last trial 2.0 s · about 15 s left"
        );
        assert_eq!(trial_regions(5, 1_000, "x"), "5 of 1,000 regions");
        assert_eq!(
            pace_left(Duration::from_secs(30), 0.25).as_deref(),
            Some("about 1 min 30 s left at this pace")
        );
        assert_eq!(pace_left(Duration::from_millis(500), 0.25), None);
        assert_eq!(pace_left(Duration::from_secs(30), 0.0), None);
        assert_eq!(
            trial_regions(1_000, 1_000, "the bottom-up baseline"),
            "all 1,000 regions measured · the bottom-up baseline…"
        );
    }

    #[test]
    fn columns_fit_their_texts_and_names_give_way_first() {
        let rows = [
            ["region", "name", "groups"],
            ["US/01", "Alabama and the Outer Isles", "1,867,890"],
            ["US/02", "Alaska", "378,079"],
        ];
        let cols = [Col::left(), Col::name(4), Col::right()];
        let fitted = |width| Columns::fit(&cols, rows.iter().map(|r| r.iter().copied()), width, 1);
        // Room for all: each as wide as its widest text.
        let c = fitted(60);
        assert_eq!((c.width(0), c.width(1), c.width(2)), (6, 27, 9));
        assert_eq!(c.cell(2, "378,079"), "  378,079");
        // Less room: the name gives way, with an ellipsis; numbers stay whole.
        let c = fitted(30);
        assert_eq!((c.width(0), c.width(1), c.width(2)), (6, 13, 9));
        assert_eq!(c.cell(1, "Alabama and the Outer Isles"), "Alabama and …");
        assert_eq!(c.cell(2, "1,867,890"), "1,867,890");
        // Far less: past the name's floor the widest column shrinks, marked.
        let c = fitted(17);
        assert_eq!(c.width(0) + c.width(1) + c.width(2) + 2, 17);
        assert!(c.cell(2, "1,867,890").ends_with('…'));
    }

    #[test]
    fn sparklines_resample_to_the_width() {
        assert_eq!(sparkline(&[8, 4, 0], 3), "█▅▁");
        assert_eq!(sparkline(&[8, 8, 0, 0], 2), "█▁");
        assert_eq!(sparkline(&[1], 10), "█");
        assert_eq!(sparkline(&[], 10), "");
    }

    #[test]
    fn buckets_group_sizes_past_the_window() {
        let h = CountOfCounts::from_pairs(vec![(0, 2), (1, 5), (3, 1), (9, 4)]).unwrap();
        assert_eq!(buckets(h.as_ref(), 2), vec![2, 5, 0, 5]);
        assert_eq!(window_for(&[h.as_ref()], 20, 100), 9);
        assert_eq!(window_for(&[h.as_ref()], 20, 6), 4);
        assert!(has_tail(&[h.as_ref()], 4));
        assert!(!has_tail(&[h.as_ref()], 9));
        assert_eq!(tail_label(4), "5+");
        assert_eq!(fit("Republic of Arvenia", 8), "Republi…");
        // Wide characters take two cells.
        assert_eq!(fit("東京都港区", 5), "東京…");
        let line = Line::from(vec![Span::raw("Files "), Span::raw("a.csv (1 bytes)")]);
        assert_eq!(fit_line(line.clone(), 12).to_string(), "Files a.csv…");
        assert_eq!(
            fit_line(line.clone(), 40).to_string(),
            "Files a.csv (1 bytes)"
        );
        // A span that would just fill the width is cut too: the ellipsis needs a cell.
        assert_eq!(fit_line(line, 6).to_string(), "Files…");
    }

    #[test]
    fn titles_keep_their_labels_and_mark_the_cut() {
        let title = confidential_title("ARV/01/0101 · last trial ([ ] region, v view)");
        let whole = title.width();
        assert_eq!(
            fit_title(title.clone(), whole).to_string(),
            title.to_string()
        );
        let cut = fit_title(title, 30).to_string();
        assert_eq!(text_width(&cut), 30, "{cut}");
        assert!(cut.ends_with("… CONFIDENTIAL "), "{cut}");
        // Too narrow for the label: the whole title is cut, with the mark.
        let cut = fit_title(confidential_title("a region"), 12).to_string();
        assert_eq!(cut, " a region C…");
        // One span: cut like a line.
        assert_eq!(
            fit_title(Line::raw(" Levels of it "), 8).to_string(),
            " Levels…"
        );
    }

    /// The rows are those ratatui draws (the oracle: a wrapped paragraph rendered).
    #[test]
    fn words_wrap_as_ratatui_wraps_them() {
        use ratatui::widgets::Widget;
        let texts = [
            "Stop coco at once, as a signal does (an undecided draw is recorded as discarded; exit status 130)",
            "a verylongwordthatdoesnotfit at all, then short ones",
            "Kaarlö-Vessaport Metropolitan Neighborhood · 大きな 世帯 groups",
        ];
        for text in texts {
            for width in [6u16, 10, 17, 40, 200] {
                let rows = wrap_words(text, usize::from(width));
                let area = Rect::new(0, 0, width, 40);
                let mut buffer = ratatui::buffer::Buffer::empty(area);
                Paragraph::new(text)
                    .wrap(Wrap { trim: true })
                    .render(area, &mut buffer);
                let drawn: Vec<String> = (0..area.height)
                    .map(|y| {
                        // A wide character's second cell is drawn blank: skipped.
                        let mut row = String::new();
                        let mut x = 0;
                        while x < width {
                            let symbol = buffer[(x, y)].symbol();
                            row.push_str(symbol);
                            x += u16::try_from(text_width(symbol).max(1)).unwrap_or(1);
                        }
                        row.trim_end().to_string()
                    })
                    .filter(|r| !r.is_empty())
                    .collect();
                let ours: Vec<String> = rows.iter().map(|r| r.trim_end().to_string()).collect();
                if text.chars().all(|c| text_width(&c.to_string()) <= 1) {
                    assert_eq!(ours, drawn, "{width}: {text}");
                } else {
                    // ratatui lets a wide character run past the row's end; counting
                    // it on the next row reserves a row too many, never one too few.
                    assert!(ours.len() >= drawn.len(), "{width}: {ours:?} {drawn:?}");
                }
                assert_eq!(wrapped_rows(text, usize::from(width)), rows.len());
            }
        }
        assert_eq!(wrap_words("", 10), [""]);
    }
}

/// A path as shown on screen: control and format characters (a bidirectional override,
/// a zero-width space) escaped, so a directory's name cannot rearrange what the screen says.
pub fn path_text(path: impl AsRef<std::path::Path>) -> String {
    let path = path.as_ref();
    crate::data::text::escape_controls(&path.display().to_string()).into_owned()
}
