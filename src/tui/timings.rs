//! `COCO_TUI_TIMINGS=FILE`: how long each step of the UI's loop took, to measure the UI
//! at scale. One line per step: its kind ([`Step`]: `start`, `key`, `worker`, `frame`),
//! a tab and the milliseconds it took (`key`, tab, `0.042`).
//!
//! Timings only. A step is a kind ([`Step`]), never the key pressed: keys typed into
//! the UI include dataset paths, plan paths and region names, which have no place in a
//! file left behind for anyone who can read it. The file is created with mode 0600, and
//! one that exists readable by others is tightened (the operator is told), as coco does
//! with every file it keeps.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::time::Instant;

/// One step of the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Starting the UI (opening the dataset's first screen).
    Start,
    /// One key's update.
    Key,
    /// One batch of background results (logged when it took a millisecond or more:
    /// an idle loop looks every 40 ms).
    Worker,
    /// One frame drawn.
    Frame,
}

impl Step {
    fn name(self) -> &'static str {
        match self {
            Step::Start => "start",
            Step::Key => "key",
            Step::Worker => "worker",
            Step::Frame => "frame",
        }
    }
}

/// The timings log: off unless opened.
#[derive(Debug, Default)]
pub struct Timings {
    file: Option<File>,
}

impl Timings {
    /// The log [`super::TIMINGS_VAR`] names, if any, and a line the operator should
    /// read before the UI starts (`note: ` a file tightened, or `warning: ` one that
    /// cannot be opened: then nothing is logged).
    pub fn from_env() -> (Timings, Option<String>) {
        let Some(path) = std::env::var_os(super::TIMINGS_VAR) else {
            return (Timings::default(), None);
        };
        let path = Path::new(&path);
        match Timings::open(path) {
            Ok((timings, note)) => (timings, note.map(|n| format!("note: {n}"))),
            Err(e) => (
                Timings::default(),
                Some(format!(
                    "warning: {}={}: cannot open it ({e}); no timings are logged",
                    super::TIMINGS_VAR,
                    crate::data::text::escape_controls(&path.display().to_string())
                )),
            ),
        }
    }

    /// Opens `path` for appending: created with mode 0600, or tightened to 0600 if it
    /// exists readable or writable by others (said in the note returned).
    pub fn open(path: &Path) -> io::Result<(Timings, Option<String>)> {
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path)?;
        let mut note = None;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = file.metadata()?.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
                note = Some(format!(
                    "{} was readable by others (mode {mode:04o}): made private (0600)",
                    crate::data::text::escape_controls(&path.display().to_string())
                ));
            }
        }
        Ok((Timings { file: Some(file) }, note))
    }

    /// Runs `f`, logging how long it took as `step`.
    pub fn time<T>(&mut self, step: Step, f: impl FnOnce() -> T) -> T {
        let Some(file) = &mut self.file else {
            return f();
        };
        let start = Instant::now();
        let out = f();
        let ms = start.elapsed().as_secs_f64() * 1e3;
        if step != Step::Worker || ms >= 1.0 {
            // A log for measurements: a write that fails loses a line, not the UI.
            let _ = writeln!(file, "{}\t{ms:.3}", step.name());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_log_is_private_and_holds_timings_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("timings.tsv");
        let (mut t, note) = Timings::open(&path).unwrap();
        assert_eq!(note, None);
        assert_eq!(mode(&path), 0o600);
        t.time(Step::Key, || ());
        t.time(Step::Frame, || ());
        t.time(Step::Worker, || ());
        drop(t);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!((lines[0][0], lines[1][0]), ("key", "frame"));
        for l in &lines {
            assert_eq!(l.len(), 2, "{text}");
            assert!(l[1].parse::<f64>().is_ok(), "{text}");
        }
        // An existing file readable by others is tightened, and the operator told.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (_, note) = Timings::open(&path).unwrap();
        assert_eq!(mode(&path), 0o600);
        assert!(note.unwrap().contains("(mode 0644): made private (0600)"));
    }
}
