//! `coco tui [DIR]` and `coco` with no command: the terminal UI.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;

use super::exit::ExitWith;

#[derive(Args, Debug)]
pub struct TuiArgs {
    /// Dataset directory (hierarchy.csv plus groups in one of three forms).
    pub dir: Option<PathBuf>,
}

/// `coco` alone: the UI on the bundled sample, or its summary when not on a terminal.
pub fn default_open() -> Result<()> {
    let dir = super::sample_dir();
    // Piped or redirected: the sample's summary, as before the UI existed.
    if !std::io::stdout().is_terminal() {
        return super::inspect::run(super::inspect::InspectArgs { dir, json: false });
    }
    open(dir)
}

pub fn run(args: TuiArgs) -> Result<()> {
    if !std::io::stdout().is_terminal() {
        bail!(
            "coco tui needs a terminal on standard output; for a summary of the dataset use `coco inspect DIR`"
        );
    }
    open(args.dir.unwrap_or_else(super::sample_dir))
}

/// Runs the UI; Ctrl-C or a stopping signal exits with 128 + the signal's number (130
/// for Ctrl-C), once the terminal is restored and the ledger written.
fn open(dir: PathBuf) -> Result<()> {
    let exit = coco::tui::run(coco::tui::AppOptions {
        dataset: Some(dir),
        home: None,
        preview_seed: None,
    })
    .context("the terminal UI failed")?;
    match exit {
        coco::tui::Exit::Quit => Ok(()),
        stopped => Err(ExitWith(stopped.code()).into()),
    }
}
