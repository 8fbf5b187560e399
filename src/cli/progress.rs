//! Progress on standard error for the batch commands.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Instant;

/// Progress on standard error: one rewritten line on a terminal, sparse lines otherwise.
pub struct StderrProgress {
    terminal: bool,
    last: Mutex<Option<Instant>>,
}

impl StderrProgress {
    pub fn new() -> Self {
        Self {
            terminal: std::io::stderr().is_terminal(),
            last: Mutex::new(None),
        }
    }

    pub fn report(&self, message: &str, last_step: bool) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let due =
            last.is_none_or(|t| t.elapsed().as_millis() >= if self.terminal { 100 } else { 2000 });
        if !due && !last_step {
            return;
        }
        *last = Some(Instant::now());
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(err, "\r\x1b[2K{message}");
            if last_step {
                let _ = writeln!(err);
            }
        } else {
            let _ = writeln!(err, "{message}");
        }
    }
}
