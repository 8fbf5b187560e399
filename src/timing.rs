//! Where the time of a long run goes, for operators and benchmarks: with the
//! environment variable `COCO_TIMING` set, each phase of a release (loading, measuring,
//! the consistency step's passes, checks, writing) prints its wall time and the
//! process's peak memory so far on standard error. Without it, nothing is printed.

use std::time::Instant;

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
