//! `coco completions SHELL` and `coco man`: shell completions and the manual page,
//! generated from the same argument definitions the command parses (clap_complete,
//! clap_mangen), so they never drift from the command.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, CommandFactory};
use clap_complete::Shell;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write `coco.1` and one page per command (`coco-release.1`, …) into this
    /// directory instead of printing `coco.1`.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Prints the completion script, e.g. `coco completions bash > ~/.local/share/bash-completion/completions/coco`.
pub fn completions(args: CompletionsArgs) -> Result<()> {
    let mut command = super::Cli::command();
    clap_complete::generate(args.shell, &mut command, "coco", &mut std::io::stdout());
    Ok(())
}

/// Prints `coco.1` (roff), or writes every page into a directory.
pub fn man(args: ManArgs) -> Result<()> {
    let command = super::Cli::command();
    match args.out {
        None => clap_mangen::Man::new(command)
            .render(&mut std::io::stdout())
            .context("cannot write the manual page to standard output"),
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(command, &dir)
                .with_context(|| format!("cannot write manual pages into {}", dir.display()))?;
            eprintln!(
                "wrote the manual pages into {}",
                super::shown(dir.display())
            );
            Ok(())
        }
    }
}
