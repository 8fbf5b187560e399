//! The `coco` command: parses the command line and dispatches to one module per
//! command (`src/cli/`).

#![forbid(unsafe_code)]

mod cli;

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

use cli::exit::{ExitWith, exit_code};
use cli::{Cli, Command};

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        #[cfg(feature = "tui")]
        None => cli::tui::default_open(),
        #[cfg(not(feature = "tui"))]
        None => {
            eprintln!(
                "coco was built without its terminal UI (feature `tui`); the bundled sample:"
            );
            cli::inspect::run(cli::inspect::InspectArgs {
                dir: cli::sample_dir(),
                json: false,
            })
        }
        #[cfg(feature = "tui")]
        Some(Command::Tui(args)) => cli::tui::run(args),
        Some(Command::Inspect(args)) => cli::inspect::run(args),
        Some(Command::Gen(args)) => cli::generate::run(args),
        Some(Command::Convert(args)) => cli::convert::run(args),
        Some(Command::Plan(args)) => cli::plan::run(args),
        Some(Command::Preview(args)) => cli::preview::run(args),
        Some(Command::Release(args)) => cli::release::run(args),
        Some(Command::Ledger(args)) => cli::ledger::run(args),
        Some(Command::Verify(args)) => cli::verify::run(args),
        Some(Command::Margins(args)) => cli::margins::run(args),
        Some(Command::Report(args)) => cli::report::run(args),
        Some(Command::Completions(args)) => cli::completions::completions(args),
        Some(Command::Man(args)) => cli::completions::man(args),
    }
}

/// The longest error line printed, in bytes.
const MAX_ERROR_BYTES: usize = 1000;

/// `message` cut at [`MAX_ERROR_BYTES`] on a character boundary, with a mark.
fn cut_message(message: &str) -> String {
    if message.len() <= MAX_ERROR_BYTES {
        return message.to_string();
    }
    let mut end = MAX_ERROR_BYTES;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes cut)", &message[..end], message.len() - end)
}

/// The command line, or exit code 2 with clap's message (help and version print and
/// exit 0). A refused value is one line, as every other error of coco's: clap's
/// pointer to `--help` is left out; its usage and the values it would take stay.
fn parse() -> Cli {
    Cli::try_parse().unwrap_or_else(|e| {
        if !e.use_stderr() {
            e.exit()
        }
        let text = e.render().to_string();
        // Each line shown on its own (a typed value may hold control characters); the
        // hint to run --help is dropped, the usage line kept.
        let kept: Vec<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with("For more information, try"))
            .map(|l| cli::shown(l).to_string())
            .collect();
        eprintln!("{}", kept.join("\n"));
        std::process::exit(i32::from(cli::exit::codes::USAGE))
    })
}

fn main() -> ExitCode {
    let cli = parse();
    // Each phase's wall time and peak memory on standard error (docs/performance.md).
    if std::env::var_os("COCO_TIMING").is_some() {
        coco::timing::report_to_stderr();
    }
    let json = matches!(
        &cli.command,
        Some(Command::Release(cli::release::ReleaseArgs {
            json: true,
            ..
        }))
    );
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = exit_code(&e);
            if e.downcast_ref::<ExitWith>().is_none() {
                // Values quoted from input files are cut where they are quoted; this
                // bounds whatever else a message lists (level names, columns, …).
                // A path or a quoted value may hold a terminal's escape codes: escaped.
                let message = cut_message(&cli::shown(format!("{e:#}")));
                eprintln!("error: {message}");
                if json {
                    let value = serde_json::json!({ "error": message, "exit_code": code });
                    println!("{value}");
                }
            }
            ExitCode::from(code)
        }
    }
}
