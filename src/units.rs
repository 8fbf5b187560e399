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
