//! The `coco` command: argument parsing and dispatch over the library.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use coco::data::Dataset;
use coco::generate::{self, Preset};
use coco::inspect::Summary;

/// Differentially private hierarchical count-of-counts tables.
///
/// Without a command, coco opens the bundled sample dataset.
#[derive(Parser, Debug)]
#[command(name = "coco", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Summarise a dataset: levels, nodes, groups, entities, sizes (confidential).
    Inspect {
        /// Dataset directory (hierarchy.csv plus groups in one of three forms).
        dir: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Generate a synthetic dataset.
    Gen {
        /// Which dataset to generate.
        #[arg(value_enum)]
        preset: Preset,
        /// Directory to write (created; must not hold files).
        #[arg(long)]
        out: PathBuf,
        /// Seed for the generator (the same seed gives the same files).
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

/// The bundled sample: `sample-data/households` next to the working directory, else
/// in the source tree coco was built from.
fn sample_dir() -> PathBuf {
    let local = Path::new("sample-data/households");
    if local.join("hierarchy.csv").exists() {
        return local.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households")
}

fn inspect(dir: &Path, json: bool) -> Result<()> {
    let dataset = Dataset::load(dir)?;
    let summary = Summary::of(&dataset);
    if json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", summary.to_text());
    }
    Ok(())
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        None => {
            let dir = sample_dir();
            inspect(&dir, false)?;
            if std::io::stdout().is_terminal() {
                eprintln!(
                    "\n(the interactive terminal UI is not built yet; `coco --help` lists the commands)"
                );
            }
            Ok(())
        }
        Some(Command::Inspect { dir, json }) => inspect(&dir, json),
        Some(Command::Gen { preset, out, seed }) => {
            let report = generate::generate(preset, &out, seed)
                .with_context(|| format!("could not generate {preset:?} into {}", out.display()))?;
            eprintln!(
                "wrote {} groups in {} leaves to {}",
                report.groups,
                report.leaves,
                report.dir.display()
            );
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
