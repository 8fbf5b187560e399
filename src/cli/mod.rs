//! The batch commands: one module per command, each with its arguments and its `run`.
//! `src/main.rs` parses the command line and dispatches here.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Parser, Subcommand};
use coco::data::Dataset;
use coco::release::plan::ReleasePlan;

pub mod completions;
pub mod convert;
pub mod exit;
pub mod generate;
pub mod inspect;
pub mod ledger;
pub mod margins;
pub mod plan;
pub mod preview;
pub mod progress;
pub mod release;
pub mod report;
pub mod text;
#[cfg(feature = "tui")]
pub mod tui;
pub mod verify;

/// Differentially private hierarchical count-of-counts tables.
///
/// Without a command, coco opens the bundled sample dataset.
#[derive(Parser, Debug)]
#[command(name = "coco", version, about, long_about = None, after_help = exit::EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Summarise a dataset: levels, nodes, groups, entities, sizes (confidential).
    Inspect(inspect::InspectArgs),
    /// Generate a synthetic dataset.
    Gen(generate::GenArgs),
    /// Copy a dataset with its groups tables converted to Parquet.
    Convert(convert::ConvertArgs),
    /// Write a release plan (TOML) from an allocation rule, and show what it costs.
    Plan(plan::PlanArgs),
    /// Preview a plan: mean error per level over trials, against the truth (confidential).
    Preview(preview::PreviewArgs),
    /// Draw one release with fresh noise, check it and write it atomically.
    Release(release::ReleaseArgs),
    /// Open the terminal UI on a dataset (the bundled sample without DIR).
    #[cfg(feature = "tui")]
    Tui(tui::TuiArgs),
    /// Verify a release directory: its files against the manifest, its ledger entry
    /// (written, here, with this ε) and, with --dataset, the data it was drawn from.
    Verify(verify::VerifyArgs),
    /// Intervals for sums and shares of a published release's counts (any size range,
    /// per region or over a set of regions), from its published files alone.
    Margins(margins::MarginsArgs),
    /// Write a release's report: one self-contained HTML page to publish beside it, or
    /// with --internal a CONFIDENTIAL one with the ledger and a saved preview.
    Report(report::ReportArgs),
    /// Show the privacy-loss ledger: every release drawn, ε spent per dataset and the
    /// cap that binds; verify or repair it.
    Ledger(ledger::LedgerArgs),
    /// Print a shell completion script (e.g. `coco completions bash >
    /// ~/.local/share/bash-completion/completions/coco`).
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff; `coco man | man -l -`), or write every page with --out.
    Man(completions::ManArgs),
}

/// The bundled sample: `sample-data/households` next to the working directory, else
/// in the source tree coco was built from.
pub fn sample_dir() -> PathBuf {
    let local = Path::new("sample-data/households");
    if local.join("hierarchy.csv").exists() {
        return local.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households")
}

/// A plan file, checked against the dataset's hierarchy.
pub fn load_plan(dataset: &Dataset, config: &Path) -> Result<ReleasePlan> {
    let plan = ReleasePlan::load(config)?;
    plan.validate(&dataset.hierarchy, config)?;
    Ok(plan)
}

/// The ledger in `$COCO_HOME` (or the user's directories), its homes and files
/// tightened to their owner when an older coco left them readable by others (said on
/// standard error).
pub fn open_ledger() -> Result<coco::release::ledger::Ledger> {
    let ledger = coco::release::ledger::Ledger::open_default()?;
    for t in ledger.secure()? {
        eprintln!("note: {t}");
    }
    Ok(ledger)
}

/// A path or a text coco did not write, safe to print on a terminal: control and
/// format characters escaped (a directory name may hold a terminal's escape codes).
pub fn shown(text: impl std::fmt::Display) -> String {
    coco::data::text::escape_controls(&text.to_string()).into_owned()
}
