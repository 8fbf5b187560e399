//! Progress of the batch commands on standard error (indicatif): a bar with the time
//! elapsed and an estimate of the time left, redrawn at most a few times a second, and
//! nothing at all when standard error is not a terminal (logs and pipes stay clean).

use std::borrow::Cow;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

const TEMPLATE: &str =
    "{prefix}: [{bar:30}] {pos}/{len} {msg} · {elapsed} elapsed, about {eta} left";

/// One command's progress bar. Cheap to share with worker threads.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar labelled `what` (e.g. "preview"); its length is set by [`Progress::update`].
    pub fn new(what: &'static str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(TEMPLATE)
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_prefix(what);
        Self { bar }
    }

    /// `done` of `len` steps, with what is being done.
    pub fn update(&self, done: u64, len: u64, message: impl Into<Cow<'static, str>>) {
        if self.bar.length() != Some(len) {
            self.bar.set_length(len);
        }
        self.bar.set_position(done);
        self.bar.set_message(message);
    }

    /// Leave the last state on screen (on a terminal) and stop drawing.
    pub fn finish(&self) {
        self.bar.finish();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if !self.bar.is_finished() {
            self.bar.abandon();
        }
    }
}
