//! Progress of the batch commands on standard error. On a terminal, a bar (indicatif) with
//! the time elapsed and an estimate of the time left, redrawn at most a few times a
//! second. Elsewhere (a log, a pipe, a job scheduler's capture) a bar would be invisible,
//! so long work prints plain lines instead, one every [`DEFAULT_EVERY`] at most
//! (`COCO_PROGRESS_EVERY=SECONDS` changes it; `0` prints every step): work that ends
//! sooner prints nothing, so short commands keep their logs clean.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

const TEMPLATE: &str =
    "{prefix}: [{bar:30}] {pos}/{len} {msg} · {elapsed} elapsed, about {eta} left";

/// How often plain progress lines are printed when standard error is not a terminal.
pub const DEFAULT_EVERY: Duration = Duration::from_secs(10);

/// The environment variable that sets how often, in seconds.
pub const EVERY_VARIABLE: &str = "COCO_PROGRESS_EVERY";

/// One command's progress. Cheap to share with worker threads.
pub struct Progress {
    how: How,
}

enum How {
    Bar(ProgressBar),
    Lines(Mutex<Lines>),
}

/// Plain lines: when the last one was printed, and what the last update said.
struct Lines {
    what: &'static str,
    every: Duration,
    started: Instant,
    printed: Instant,
    any: bool,
    last: Option<(u64, u64, String)>,
}

impl Lines {
    fn line(&self, done: u64, len: u64, message: &str) -> String {
        let elapsed = self.started.elapsed();
        let left = (done > 0 && done < len).then(|| {
            let per = elapsed.as_secs_f64() / done as f64;
            Duration::from_secs_f64(per * (len - done) as f64)
        });
        // Exact to the second (`1 min 37 s`), where a rounded `2 minutes` after 97 s
        // reads as wrong in a log.
        let mut line = format!(
            "{}: {done}/{len} {message} · {} elapsed",
            self.what,
            coco::units::readable(elapsed)
        );
        if let Some(left) = left {
            line.push_str(&format!(", about {} left", coco::units::readable(left)));
        }
        line
    }
}

/// `COCO_PROGRESS_EVERY` as a duration; unset or unreadable gives the default (a
/// progress setting is not worth stopping a command for).
fn every() -> Duration {
    std::env::var(EVERY_VARIABLE)
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
        .unwrap_or(DEFAULT_EVERY)
}

impl Progress {
    /// Progress labelled `what` (e.g. "preview"); its length is set by [`Progress::update`].
    pub fn new(what: &'static str) -> Self {
        if !std::io::stderr().is_terminal() {
            let now = Instant::now();
            return Self {
                how: How::Lines(Mutex::new(Lines {
                    what,
                    every: every(),
                    started: now,
                    printed: now,
                    any: false,
                    last: None,
                })),
            };
        }
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(TEMPLATE)
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_prefix(what);
        Self { how: How::Bar(bar) }
    }

    /// `done` of `len` steps, with what is being done.
    pub fn update(&self, done: u64, len: u64, message: impl Into<Cow<'static, str>>) {
        match &self.how {
            How::Bar(bar) => {
                if bar.length() != Some(len) {
                    bar.set_length(len);
                }
                bar.set_position(done);
                bar.set_message(message);
            }
            How::Lines(lines) => {
                let Ok(mut lines) = lines.lock() else { return };
                let message = message.into().into_owned();
                if lines.printed.elapsed() >= lines.every {
                    let line = lines.line(done, len, &message);
                    // Progress is advice: a closed standard error must not stop the work.
                    let _ = writeln!(std::io::stderr().lock(), "{line}");
                    lines.printed = Instant::now();
                    lines.any = true;
                }
                lines.last = Some((done, len, message));
            }
        }
    }

    /// Leave the last state on screen (on a terminal); in plain lines, end with the last
    /// state if any line was printed, so a log shows the work finished.
    pub fn finish(&self) {
        match &self.how {
            How::Bar(bar) => bar.finish(),
            How::Lines(lines) => {
                let Ok(mut lines) = lines.lock() else { return };
                if let (true, Some((done, len, message))) = (lines.any, lines.last.take()) {
                    let line = format!("{} (done)", lines.line(done, len, &message));
                    let _ = writeln!(std::io::stderr().lock(), "{line}");
                }
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let How::Bar(bar) = &self.how
            && !bar.is_finished()
        {
            bar.abandon();
        }
    }
}
