//! How figures are written for people: counts with thousands separators, sizes in
//! bytes, durations. Depends on nothing else in coco, so every layer can use it.

use std::time::Duration;

/// `1234567` → `1,234,567`.
pub fn thousands(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes for people: `512 B`, `1.5 KB`, `12.3 GB` (powers of 1024).
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KB", "MB", "GB", "TB", "PB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A duration as an operator reads it: `0.31 s`, `2.5 s`, `25 s`, `3 min 5 s`,
/// `1 h 2 min`.
pub fn readable(d: Duration) -> String {
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

/// The time the rest of a job takes at the pace so far, when `done` of it (a share, 0
/// to 1) took `spent`: `None` before a second has passed or while nothing is done, when
/// the figure would be noise.
pub fn time_left(spent: Duration, done: f64) -> Option<Duration> {
    (done > 0.0 && done < 1.0 && spent >= Duration::from_secs(1))
        .then(|| Duration::from_secs_f64((spent.as_secs_f64() * (1.0 - done) / done).min(1e9)))
}

/// `text` (one line) broken into rows of at most `width` columns at word boundaries,
/// each character `char_width` columns wide: words are separated by one space, and a
/// word wider than a row is broken across rows when `break_long` (as a terminal lays it
/// out), else left whole on a row of its own (a path in a comment). Empty text is one
/// empty row.
pub fn wrap_words(
    text: &str,
    width: usize,
    char_width: impl Fn(char) -> usize,
    break_long: bool,
) -> Vec<String> {
    let width = width.max(1);
    let mut rows = vec![String::new()];
    let mut used = 0;
    for word in text.split_whitespace() {
        let w: usize = word.chars().map(&char_width).sum();
        if used > 0 && used + 1 + w > width {
            rows.push(String::new());
            used = 0;
        }
        let row = rows.last_mut().expect("one row at least");
        if used > 0 {
            row.push(' ');
            used += 1;
        }
        if !break_long {
            rows.last_mut().expect("one row at least").push_str(word);
            used += w;
            continue;
        }
        for c in word.chars() {
            let cw = char_width(c);
            if used + cw > width {
                rows.push(String::new());
                used = 0;
            }
            rows.last_mut().expect("one row at least").push(c);
            used += cw;
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_wrap_at_the_width_and_long_ones_break_only_when_asked() {
        let one = |_| 1;
        assert_eq!(wrap_words("", 10, one, true), [""]);
        assert_eq!(wrap_words("a bb ccc", 4, one, true), ["a bb", "ccc"]);
        assert_eq!(
            wrap_words("a abcdefgh b", 4, one, true),
            ["a", "abcd", "efgh", "b"]
        );
        assert_eq!(
            wrap_words("a abcdefgh b", 4, one, false),
            ["a", "abcdefgh", "b"]
        );
        // Wide characters count as two columns where the caller says so.
        let wide = |c: char| if c == '東' { 2 } else { 1 };
        assert_eq!(wrap_words("東京 x", 4, wide, true), ["東京", "x"]);
    }
}
