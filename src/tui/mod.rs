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
//!    `K`, consistency, the ledger cap; the plan saved and loaded as release TOML.
//! 4. **Preview**: mean error per level over trials, against the truth (confidential
//!    diagnostics), and one region's true, noisy and consistent histograms.
//! 5. **Trade-off**: error as one level's ε varies, and the frontier of allocations at
//!    the plan's total with a recommendation.
//! 6. **Release**: one draw with fresh OS randomness, its public tables and checks;
//!    approve and export (the same code as `coco release`) or discard. Every draw shown
//!    is recorded in the privacy-loss ledger.
//!
//! Previews may use a fixed seed (the status bar says which); releases never do.
//!
//! The architecture follows the Elm pattern: plain state split by screen ([`app`],
//! [`screens`]), keys mapped to [`action::Action`]s by a [`keymap`] (defaults in
//! `assets/keymap.toml`, overridable by `keymap.toml` in coco's home), one
//! [`app::update`], pure render functions ([`ui`], `screens::*::render`), and background
//! jobs on worker threads reporting through a channel, the latest request of each kind
//! winning ([`worker`]). [`runtime::Runtime`] ties them together for the terminal loop
//! and for tests, which drive it without a terminal.

pub mod action;
pub mod app;
pub mod input;
pub mod keymap;
pub mod runtime;
pub mod screens;
pub mod session;
pub mod theme;
pub mod ui;
pub mod widgets;
pub mod worker;

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{self, Event, KeyEventKind};

pub use app::AppOptions;

use keymap::Key;
use runtime::Runtime;

/// How long the loop waits for a key before looking at the worker again.
const POLL: Duration = Duration::from_millis(40);

/// Runs the UI on the terminal until the operator quits. The terminal is restored on
/// every way out (errors included; `ratatui::init`'s panic hook covers panics).
pub fn run(options: AppOptions) -> io::Result<()> {
    let stop = stop_signals();
    let mut terminal = match ratatui::try_init() {
        Ok(t) => t,
        Err(e) => {
            // Raw mode may be on already.
            let _ = ratatui::try_restore();
            return Err(e);
        }
    };
    let result = event_loop(&mut terminal, options, &stop);
    ratatui::restore();
    result
}

/// A flag raised by SIGTERM, SIGHUP (the terminal closed) or SIGINT.
fn stop_signals() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    #[cfg(unix)]
    let signals = [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGINT,
    ];
    #[cfg(not(unix))]
    let signals = [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT];
    for signal in signals {
        // Without the handler the default (terminate) applies: nothing better to do.
        let _ = signal_hook::flag::register(signal, flag.clone());
    }
    flag
}

fn event_loop(
    terminal: &mut DefaultTerminal,
    options: AppOptions,
    stop: &AtomicBool,
) -> io::Result<()> {
    let mut rt = Runtime::new(options);
    let mut dirty = true;
    while !rt.app.quit {
        if stop.load(Ordering::Relaxed) {
            // Records an undecided draw; `shutdown` below waits for the ledger write.
            rt.stop();
            break;
        }
        if dirty {
            terminal.draw(|frame| rt.render(frame))?;
            dirty = false;
        }
        if event::poll(POLL)? {
            match event::read()? {
                Event::Key(k) if k.kind == KeyEventKind::Press => {
                    rt.key(Key::from_event(&k));
                    dirty = true;
                }
                Event::Resize(..) => dirty = true,
                _ => {}
            }
        }
        if rt.pump() {
            dirty = true;
        }
    }
    rt.shutdown();
    Ok(())
}
