//! coco's terminal UI: the operator's view of a release, from the data to the export.
//!
//! `coco` opens the bundled sample and `coco tui DIR` a dataset. Six screens (keys 1–6,
//! Tab / Shift-Tab):
//!
//! 1. **Dataset**: levels, regions, groups `G` (public) and entities and sizes
//!    (confidential), the `K` in force.
//! 2. **Hierarchy**: the tree of regions beside the selected region's true histogram
//!    (confidential); search with `/`.
//! 3. **Budget**: ε per level, share, method, noise cost and expected error; presets,
//!    `K`, consistency, the ledger cap, how the plan was tuned, the Trade-off search's
//!    recommendation beside it; the plan saved and loaded as release TOML. The session
//!    opens with coco's public default plan.
//! 4. **Preview**: mean error per level over trials, against the truth (confidential
//!    diagnostics), and one region's true, noisy and consistent histograms.
//! 5. **Trade-off**: error as one level's ε varies, and the frontier of allocations at
//!    the plan's total with a search over each level's method and a recommendation.
//!    Previews and searches run on the confidential data or a public proxy ([`proxy`]).
//! 6. **Release**: one draw with fresh OS randomness, its public tables and checks;
//!    approve and export (the same code as `coco release`) or discard. Every draw shown
//!    is recorded in the privacy-loss ledger.
//!
//! Previews may use a fixed seed (the status bar says which); releases never do.
//!
//! The architecture follows the Elm pattern: plain state split by screen ([`app`],
//! [`screens`]), keys mapped to [`action::Action`]s by a [`keymap`] (defaults in
//! `assets/keymap.toml`, overridable by `keymap.toml` in coco's configuration
//! directory), one [`app::update`], pure render functions ([`ui`],
//! `screens::*::render`), and background jobs on worker threads reporting through a
//! channel, the latest request of each kind winning ([`worker`]). [`runtime::Runtime`]
//! ties them together for the terminal loop and for tests, which drive it without a
//! terminal.

pub mod action;
pub mod app;
pub mod input;
pub mod keymap;
pub mod overview;
pub mod proxy;
pub mod runtime;
pub mod screens;
pub mod search;
pub mod session;
pub mod theme;
pub mod timings;
pub mod tree;
pub mod ui;
pub mod widgets;
pub mod worker;

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{self, Event, KeyEventKind};

pub use app::AppOptions;

use keymap::Key;
use runtime::Runtime;
use timings::{Step, Timings};

/// How long the loop waits for a key before looking at the worker again.
const POLL: Duration = Duration::from_millis(40);

/// While background work runs, the frame is drawn again at least this often, so that
/// its clocks move even when no progress arrives.
const TICK: Duration = Duration::from_millis(500);

/// The variable naming a file where the loop logs how long each key, each batch of
/// worker messages and each frame took (to measure the UI at scale; timings only, in a
/// private file: [`timings`]).
pub const TIMINGS_VAR: &str = "COCO_TUI_TIMINGS";

/// How the UI ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The operator quit.
    Quit,
    /// Ctrl-C, or a signal (SIGINT, SIGTERM, SIGHUP): the process should exit with the
    /// conventional status 128 + the signal's number (130 for Ctrl-C).
    Interrupted { signal: i32 },
}

impl Exit {
    /// The process's exit status.
    pub fn code(self) -> u8 {
        match self {
            Exit::Quit => 0,
            Exit::Interrupted { signal } => u8::try_from(128 + signal).unwrap_or(1),
        }
    }
}

/// Runs the UI on the terminal until the operator quits, presses Ctrl-C, or a signal
/// (SIGTERM, SIGHUP, SIGINT) stops it. The terminal is restored on every way out (errors
/// included; the panic hook `ratatui::try_init` installs covers panics), a drawn
/// release that is still undecided is recorded in the ledger as discarded, and an
/// export under way is finished (never left half-written) before it returns.
pub fn run(options: AppOptions) -> io::Result<Exit> {
    let stop = stop_signals();
    // Said before the terminal is taken: it stays on the shell's screen.
    let (timings, note) = Timings::from_env();
    if let Some(note) = note {
        eprintln!("{note}");
    }
    let mut terminal = match ratatui::try_init() {
        Ok(t) => t,
        Err(e) => {
            // Raw mode may be on already.
            let _ = ratatui::try_restore();
            return Err(e);
        }
    };
    let result = event_loop(&mut terminal, options, &stop, timings);
    // The terminal may be gone (SIGHUP): nothing to restore then, and nowhere to say so.
    let _ = ratatui::try_restore();
    let signal = stop.load(Ordering::Relaxed);
    if signal != 0 {
        // Stopped by a signal: not an error of coco's, but not a quit either.
        return Ok(Exit::Interrupted {
            signal: signal as i32,
        });
    }
    result
}

/// The number of the signal that stopped coco (SIGTERM, SIGHUP: the terminal closed, or
/// SIGINT), or 0.
fn stop_signals() -> Arc<AtomicUsize> {
    let flag = Arc::new(AtomicUsize::new(0));
    #[cfg(unix)]
    let signals = [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGINT,
    ];
    #[cfg(not(unix))]
    let signals = [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT];
    for signal in signals {
        // No "second signal kills" rule: a closing terminal often sends SIGHUP twice
        // (the kernel, then the shell), and the draw must still be recorded. If a
        // handler cannot be installed the default (terminate) applies.
        let _ = signal_hook::flag::register_usize(signal, flag.clone(), signal as usize);
    }
    flag
}

fn event_loop(
    terminal: &mut DefaultTerminal,
    options: AppOptions,
    stop: &AtomicUsize,
    mut timings: Timings,
) -> io::Result<Exit> {
    let input = spawn_input();
    // Dropping the runtime, however the loop ends (quit, a signal, a terminal error,
    // a panic), records an undecided draw and waits for ledger writes.
    let mut rt = timings.time(Step::Start, || Runtime::new(options));
    let mut dirty = true;
    let mut drawn = Instant::now();
    while !rt.app.quit && stop.load(Ordering::Relaxed) == 0 {
        if dirty || (rt.busy() && drawn.elapsed() >= TICK) {
            timings.time(Step::Frame, || terminal.draw(|frame| rt.render(frame)))?;
            drawn = Instant::now();
            dirty = false;
        }
        let mut next = input.recv_timeout(POLL);
        loop {
            match next {
                Ok(Ok(Event::Key(k))) if k.kind == KeyEventKind::Press => {
                    let key = Key::from_event(&k);
                    timings.time(Step::Key, || rt.key(key));
                    dirty = true;
                }
                Ok(Ok(Event::Resize(..))) => dirty = true,
                Ok(Ok(_)) | Err(RecvTimeoutError::Timeout) => {}
                Ok(Err(e)) => return Err(e),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(io::Error::other("the terminal input stopped"));
                }
            }
            if rt.app.quit {
                break;
            }
            match input.try_recv() {
                Ok(event) => next = Ok(event),
                Err(_) => break,
            }
        }
        if timings.time(Step::Worker, || rt.pump()) {
            dirty = true;
        }
    }
    Ok(if rt.app.interrupted {
        // Ctrl-C stands for SIGINT.
        Exit::Interrupted {
            signal: signal_hook::consts::SIGINT,
        }
    } else {
        Exit::Quit
    })
}

/// Reads terminal events on a thread of its own, so that the loop keeps checking for
/// signals and results even when reading blocks (crossterm spins on a terminal that
/// has hung up).
fn spawn_input() -> Receiver<io::Result<Event>> {
    let (tx, rx) = channel();
    let spawned = std::thread::Builder::new()
        .name("coco-input".into())
        .spawn(move || {
            loop {
                let event = event::read();
                let failed = event.is_err();
                if tx.send(event).is_err() || failed {
                    break;
                }
            }
        });
    if let Err(e) = spawned {
        // The receiver reports the error on its first read.
        let (tx, rx) = channel();
        let _ = tx.send(Err(e));
        return rx;
    }
    rx
}
