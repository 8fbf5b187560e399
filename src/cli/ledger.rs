//! `coco ledger`: the privacy-loss ledger — show it, verify it, repair it, set caps.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use coco::privacy::Epsilon;
use coco::privacy::Rounding::{Down, Nearest, Up};
use coco::release::ledger::{Ledger, Repair, format_time};

use super::exit::{ExitWith, codes};

#[derive(Args, Debug)]
pub struct LedgerArgs {
    #[command(subcommand)]
    pub action: Option<LedgerAction>,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// Deprecated: use `coco ledger set-cap DATASET EPSILON`.
    #[arg(long, num_args = 2, value_names = ["DATASET", "EPSILON"], hide = true)]
    pub set_cap: Option<Vec<String>>,
}

#[derive(Subcommand, Debug)]
pub enum LedgerAction {
    /// Check every line, the hash chain and the draws' ids; list every problem (exit 4 if any).
    Verify,
    /// Set aside a torn last line (a crash mid-append) so draws can go on; nothing else is
    /// ever changed.
    Repair,
    /// Cap the total ε spent on a dataset (in config.toml in coco's configuration
    /// directory); the strictest cap that matches a dataset binds.
    SetCap {
        /// The dataset: its directory, or its content digest (see `coco ledger`).
        dataset: String,
        /// The cap: a decimal or a fraction like 1/3.
        epsilon: String,
    },
}

pub fn run(args: LedgerArgs) -> Result<()> {
    let LedgerArgs {
        action,
        json,
        set_cap,
    } = args;
    let ledger = Ledger::open_default()?;
    if let Some(args) = set_cap {
        let [dataset, eps] = args.as_slice() else {
            bail!("--set-cap takes DATASET EPSILON")
        };
        eprintln!(
            "note: `coco ledger --set-cap` is deprecated; use `coco ledger set-cap DATASET EPSILON`"
        );
        return set_cap_command(&ledger, dataset, eps);
    }
    match action {
        Some(LedgerAction::Verify) => {
            let v = ledger.verify()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                println!(
                    "ledger {}: {} line(s), {} draw(s)",
                    v.ledger.display(),
                    v.lines,
                    v.draws
                );
                for p in &v.problems {
                    println!("line {}: {}", p.line, p.message);
                }
                if let Some(line) = v.torn_tail {
                    println!(
                        "line {line}: torn (coco stopped while writing it): `coco ledger repair` sets it aside"
                    );
                }
                if v.ok() {
                    println!("ok: every line is readable and the hash chain is intact");
                }
            }
            if !v.ok() {
                return Err(ExitWith(codes::POLICY).into());
            }
            Ok(())
        }
        Some(LedgerAction::Repair) => {
            let outcome = ledger.repair()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&outcome)?);
            } else {
                match outcome {
                    Repair::NothingToRepair => println!("nothing to repair: the ledger is intact"),
                    Repair::SetAsideTornTail {
                        line,
                        bytes,
                        saved_to,
                    } => println!(
                        "set aside the torn line {line} ({bytes} bytes) in {}; draws may go on",
                        saved_to.display()
                    ),
                }
            }
            Ok(())
        }
        Some(LedgerAction::SetCap { dataset, epsilon }) => {
            set_cap_command(&ledger, &dataset, &epsilon)
        }
        None => show_ledger(&ledger, json),
    }
}

/// `coco ledger set-cap DATASET EPSILON`: a directory is recorded canonical.
fn set_cap_command(ledger: &Ledger, dataset: &str, eps: &str) -> Result<()> {
    let cap = Epsilon::parse(eps).with_context(|| format!("set-cap {dataset} {eps}"))?;
    let key = match std::fs::canonicalize(dataset) {
        Ok(p) if p.is_dir() => p.display().to_string(),
        _ => dataset.to_string(),
    };
    ledger.set_cap(&key, &cap)?;
    println!(
        "cap for {key} set to ε = {cap} in {}",
        ledger.config_path().display()
    );
    Ok(())
}

fn show_ledger(ledger: &Ledger, json: bool) -> Result<()> {
    let read = ledger.read()?;
    let summary = ledger.summary(&read)?;
    let draws = read.draws();
    if json {
        let value = serde_json::json!({
            "ledger": ledger.path(),
            "datasets": summary,
            "entries": draws,
            "problems": read.problems,
            "torn_tail": read.torn_tail,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("ledger {}", ledger.path().display());
        if draws.is_empty() {
            println!("no releases drawn yet");
        }
        for e in &draws {
            let levels: Vec<String> = e
                .levels
                .iter()
                .map(|l| format!("{} {} {}", l.name, l.epsilon.short(Nearest), l.label()))
                .collect();
            println!(
                "{}  {}  {}  ε {:<10} {:<11} {}  [{}]  tuning {}  {}",
                format_time(e.time),
                e.id,
                head(e.dataset.key(), 12),
                e.total_epsilon.short(Up),
                e.status.label(),
                e.output.as_deref().unwrap_or("-"),
                levels.join(", "),
                e.tuning.map_or("unknown", |t| t.name()),
                ledger.describe(&read, e)
            );
        }
        if !summary.is_empty() {
            println!("\nper dataset (content digest, directory):");
            for d in &summary {
                println!(
                    "  {}  {}  {} draw(s), {} written, ε spent {}{}",
                    head(&d.dataset, 12),
                    d.dataset_dir,
                    d.draws,
                    d.written,
                    d.spent_exact
                        .as_ref()
                        .map_or_else(|| d.spent.clone(), |s| s.short(Up)),
                    d.cap
                        .as_ref()
                        .map(|c| format!(" of cap {} ({} binds)", c.cap.short(Down), c.describe()))
                        .unwrap_or_else(|| ", no cap".into())
                );
            }
        }
    }
    if let Err(e) = read.fail_closed(&ledger.path()) {
        eprintln!("error: {e}");
        return Err(ExitWith(codes::POLICY).into());
    }
    Ok(())
}

/// The first `n` characters of a text (never splits a character).
fn head(text: &str, n: usize) -> String {
    text.chars().take(n).collect()
}
