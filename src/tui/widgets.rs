//! Small drawing helpers shared by the screens: text bars, sparklines, the size buckets
//! of a histogram, numbers. Pure functions of their inputs.

use std::time::{Duration, Instant};

use ratatui::layout::Constraint;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Gauge};

use crate::histogram::{HistRef, Size};
use crate::inspect::thousands;
use crate::preview::Stat;

use super::theme;
use super::worker::TrialClock;

/// A whole number with thousands separators.
pub fn int(n: u64) -> String {
    thousands(u128::from(n))
}

/// A duration as an operator reads it: `0.31 s`, `2.5 s`, `25 s`, `3 min 5 s`,
/// `1 h 2 min`.
pub fn duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    let whole = d.as_secs();
    if secs < 1.0 {
        format!("{secs:.2} s")
    } else if secs < 10.0 {
        format!("{secs:.1} s")
    } else if whole < 60 {
        format!("{whole} s")
    } else if whole < 3600 {
        format!("{} min {} s", whole / 60, whole % 60)
    } else {
        format!("{} h {} min", whole / 3600, whole % 3600 / 60)
    }
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
    if done > 0.0 && done < 1.0 && spent >= Duration::from_secs(1) {
        let left = spent.as_secs_f64() * (1.0 - done) / done;
        text.push_str(&format!(
            " · ≥ {} left at this pace",
            duration(Duration::from_secs_f64(left.min(1e9)))
        ));
    }
    text
}

/// Where a trial is among the regions: measuring them one by one, then (all measured)
/// the steps that follow.
pub fn trial_regions(nodes_done: usize, nodes: usize) -> String {
    if nodes_done < nodes {
        format!(
            "{} of {} regions",
            int(nodes_done as u64),
            int(nodes as u64)
        )
    } else {
        format!(
            "all {} regions measured · consistency and errors…",
            int(nodes as u64)
        )
    }
}

/// A mean ± standard error.
pub fn stat(s: Stat) -> String {
    format!(
        "{} ± {}",
        crate::preview::fmt_num(s.mean),
        crate::preview::fmt_num(s.se)
    )
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

/// A column as wide as its widest text, and at least `min` (the header's width).
pub fn column<'a>(min: u16, texts: impl IntoIterator<Item = &'a str>) -> Constraint {
    let widest = texts
        .into_iter()
        .map(|t| t.chars().count())
        .max()
        .unwrap_or(0);
    Constraint::Length(min.max(u16::try_from(widest).unwrap_or(u16::MAX)))
}

/// A bordered block with a title.
pub fn block(title: impl Into<Line<'static>>) -> Block<'static> {
    Block::default().borders(Borders::ALL).title(title.into())
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

/// Text cut to `width` characters, with an ellipsis when cut.
pub fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else if width == 0 {
        String::new()
    } else {
        let mut s: String = text.chars().take(width - 1).collect();
        s.push('…');
        s
    }
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
    let bar_width = (width.saturating_sub(7) / n).saturating_sub(11);
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
                spans.push(Span::raw(format!("{:>9} ", int(v))));
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
            "first trial 30 s so far · ≥ 49 min 30 s left at this pace"
        );
        // Two trials of 2 s: 8 left, 16 s, of which 0.5 s are spent on the third.
        clock.trial_started = at(4_000);
        clock.done = 2;
        clock.last = Some(Duration::from_secs(2));
        assert_eq!(
            trial_timing(&clock, 0.25, at(4_500)),
            "last trial 2.0 s · about 15 s left"
        );
        assert_eq!(trial_regions(5, 1_000), "5 of 1,000 regions");
        assert_eq!(
            trial_regions(1_000, 1_000),
            "all 1,000 regions measured · consistency and errors…"
        );
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
    }
}
