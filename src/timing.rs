//! Where the time of a long run goes, for operators and benchmarks: with the
//! environment variable `COCO_TIMING` set, each phase of a release (loading, measuring,
//! the consistency step's passes, checks, writing) prints its wall time and the
//! process's peak memory so far on standard error. Without it, nothing is printed.

use std::time::{Duration, Instant};

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

/// A phase being timed; reports when dropped (or at [`Phase::done`]).
pub struct Phase {
    name: &'static str,
    start: Option<Instant>,
}

/// Whether `COCO_TIMING` is set.
pub fn enabled() -> bool {
    std::env::var_os("COCO_TIMING").is_some()
}

/// A figure about a phase (sizes, counts), printed only when `COCO_TIMING` is set.
pub fn note(text: &str) {
    if enabled() {
        eprintln!("timing: {text}");
    }
}

/// Starts timing a phase (a no-op unless `COCO_TIMING` is set).
pub fn phase(name: &'static str) -> Phase {
    Phase {
        name,
        start: std::env::var_os("COCO_TIMING").map(|_| Instant::now()),
    }
}

impl Phase {
    /// Ends the phase now.
    pub fn done(self) {}
}

impl Drop for Phase {
    fn drop(&mut self) {
        if let Some(start) = self.start {
            eprintln!(
                "timing: {:<28} {:>9.3} s   peak {}",
                self.name,
                start.elapsed().as_secs_f64(),
                peak_memory().map_or("?".into(), crate::release::resources::bytes)
            );
        }
    }
}

/// The process's peak resident memory (`VmHWM` in `/proc/self/status`), where known.
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line["VmHWM:".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    kb.checked_mul(1024)
}
