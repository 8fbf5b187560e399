//! `coco ledger`: the privacy-loss ledger — show it, verify it, repair it, re-anchor it,
//! adopt it, set caps. What it prints (digests, directories) is as confidential as the
//! ledger. Its JSON shapes are documented in docs/data-contract.md and tested against it
//! (`tests/cli/ledger_edges.rs`).

use coco::wire::Named;
use std::path::Path;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use coco::privacy::Rounding::{Down, Nearest, Up};
use coco::privacy::{Epsilon, Loss, Rho};
use coco::release::ledger::{
    Adopted, AnchorCheck, AnchorReport, CapKey, CapLimit, Ledger, LedgerRead, Reanchored, Repair,
    directory_data, format_time,
};

use super::exit::{ExitWith, FlagError, codes};
use super::shown;

/// The first line of every text output that shows digests or directories.
const CONFIDENTIAL: &str =
    "CONFIDENTIAL: digests and directories of confidential datasets; do not publish";

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
    /// Check every line, the hash chain, the draws' ids and the anchor; list every
    /// problem (exit 4 if any).
    Verify,
    /// Set aside a torn last line (a crash mid-append) so draws can go on; nothing else is
    /// ever changed.
    Repair,
    /// Anchor the ledger as it is. After restoring ledger.jsonl from a backup that holds
    /// every anchored line, nothing is needed; a ledger that lost anchored lines is
    /// anchored only with --accept-loss, which writes the loss into the ledger.
    Reanchor {
        /// Accept that the ledger lost lines its anchor recorded. The loss is written
        /// into the ledger (when, how many lines, who accepted it) with the ε the old
        /// anchor knew those lines spent, which still counts against every cap. The old
        /// anchor is kept beside the new one.
        #[arg(long)]
        accept_loss: bool,
    },
    /// Anchor a ledger no anchor vouches for: one kept by an older coco (or whose anchor
    /// was deleted), trusting that it holds every draw ever made under it; or one moved
    /// to another directory, if its anchor finds every line it recorded. The adoption is
    /// written into the ledger.
    Adopt,
    /// Cap the total ε spent on a dataset (in config.toml in coco's configuration
    /// directory); the strictest cap that covers a dataset binds.
    SetCap {
        /// The dataset: an existing dataset directory (its data is covered wherever it
        /// is copied), or a full content digest (64 lowercase hex digits, as `coco
        /// ledger --json` shows it).
        dataset: String,
        /// A pure-ε cap: a decimal or a fraction like 1/3.
        #[arg(allow_negative_numbers = true)]
        epsilon: Option<Epsilon>,
        /// A ρ-zCDP cap instead (a decimal or a fraction like 1/2): every draw counts
        /// by its ρ, a pure draw's ε as ρ = ε²/2.
        #[arg(long, value_name = "R", allow_negative_numbers = true)]
        rho: Option<Rho>,
        /// With --delta, an (ε, δ) cap instead: the spending's ρ stated at δ (or, for
        /// pure draws only, their ε) must stay within this ε.
        #[arg(long = "epsilon", value_name = "E", allow_negative_numbers = true)]
        epsilon_flag: Option<Epsilon>,
        /// The δ of an (ε, δ) cap, between 0 and 1 (e.g. 1e-10).
        #[arg(long, value_name = "D", allow_negative_numbers = true)]
        delta: Option<f64>,
    },
}

pub fn run(args: LedgerArgs) -> Result<()> {
    let LedgerArgs {
        action,
        json,
        set_cap,
    } = args;
    let ledger = super::open_ledger()?;
    if let Some(args) = set_cap {
        let [dataset, eps] = args.as_slice() else {
            bail!("--set-cap takes DATASET EPSILON")
        };
        eprintln!(
            "note: `coco ledger --set-cap` is deprecated; use `coco ledger set-cap DATASET EPSILON`"
        );
        let cap = Epsilon::parse(eps).map_err(|e| FlagError {
            flag: format!("--set-cap {} {eps}", shown(dataset)),
            message: e.to_string(),
        })?;
        return set_cap_command(&ledger, dataset, &CapLimit::Epsilon(cap), json);
    }
    match action {
        Some(LedgerAction::Verify) => verify(&ledger, json),
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
                        shown(saved_to.display())
                    ),
                }
            }
            Ok(())
        }
        Some(LedgerAction::Reanchor { accept_loss }) => {
            let outcome = ledger.reanchor(accept_loss)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&outcome)?);
                return Ok(());
            }
            let anchor = shown(ledger.anchor_path().display());
            match outcome {
                Reanchored::InAgreement { lines } => println!(
                    "the ledger holds every line its anchor recorded; {anchor} now records its {lines} line(s)"
                ),
                Reanchored::Replaced { lines, loss, .. } => {
                    println!(
                        "{}",
                        shown(coco::release::ledger::LedgerEvent::LossAccepted(*loss).describe())
                    );
                    println!(
                        "the loss is written into the ledger; {anchor} now records its {lines} line(s), the loss line included; what the lost lines spent still counts against every cap"
                    );
                }
            }
            Ok(())
        }
        Some(LedgerAction::Adopt) => {
            let outcome = ledger.adopt()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&outcome)?);
                return Ok(());
            }
            match outcome {
                Adopted::NothingToAdopt { lines } => println!(
                    "nothing to adopt: the ledger ({lines} line(s)) is anchored where it is, by {}",
                    shown(ledger.anchor_path().display())
                ),
                Adopted::Adopted { anchor, adoption } => {
                    println!(
                        "{}",
                        shown(coco::release::ledger::LedgerEvent::Adopted(adoption).describe())
                    );
                    println!(
                        "the adoption is written into the ledger; {} now anchors it, and from now on a ledger that loses lines stops every draw",
                        shown(anchor.display())
                    );
                }
            }
            Ok(())
        }
        Some(LedgerAction::SetCap {
            dataset,
            epsilon,
            rho,
            epsilon_flag,
            delta,
        }) => {
            let cap = match (epsilon, rho, epsilon_flag, delta) {
                (Some(e), None, None, None) => CapLimit::Epsilon(e),
                (None, Some(r), None, None) => CapLimit::Rho(r),
                (None, None, Some(e), Some(d)) => {
                    if !(d > 0.0 && d < 1.0) {
                        return Err(FlagError {
                            flag: format!("--delta {d}"),
                            message: "δ must be between 0 and 1 (exclusive), e.g. 1e-10".into(),
                        }
                        .into());
                    }
                    CapLimit::EpsilonDelta {
                        epsilon: e,
                        delta: d,
                    }
                }
                _ => {
                    return Err(FlagError {
                        flag: "set-cap".into(),
                        message: "give exactly one cap: EPSILON (pure ε), --rho R (ρ-zCDP), or --epsilon E --delta D ((ε, δ))".into(),
                    }
                    .into());
                }
            };
            set_cap_command(&ledger, &dataset, &cap, json)
        }
        None => show_ledger(&ledger, json),
    }
}

fn verify(ledger: &Ledger, json: bool) -> Result<()> {
    let v = ledger.verify()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "ledger {}: {} line(s), {} draw(s)",
            shown(v.ledger.display()),
            v.lines,
            v.draws
        );
        for p in &v.problems {
            println!("line {}: {}", p.line, shown(&p.message));
        }
        if let Some(line) = v.torn_tail {
            println!(
                "line {line}: torn (coco stopped while writing it): `coco ledger repair` sets it aside"
            );
        }
        println!("anchor: {}", anchor_text(&v.anchor));
        for e in &v.events {
            println!("{}", shown(e.describe()));
        }
        if v.ok() {
            println!(
                "ok: every line is readable, the hash chain is intact and the ledger holds what its anchor records{}",
                match v.events.len() {
                    0 => String::new(),
                    n => format!(
                        " ({n} line(s) about the ledger itself above: decisions of the operator, not problems)"
                    ),
                }
            );
        }
    }
    if !v.ok() {
        return Err(ExitWith(codes::POLICY).into());
    }
    Ok(())
}

/// What the anchor says, in a sentence.
fn anchor_text(report: &AnchorReport) -> String {
    let path = shown(report.path.display());
    match &report.check {
        AnchorCheck::Fresh => format!("none yet at {path} (no draw recorded)"),
        AnchorCheck::Holds { anchored, lines } => format!(
            "{path}: the ledger holds the {anchored} line(s) anchored{}",
            if lines > anchored {
                format!(" and {} after them", lines - anchored)
            } else {
                String::new()
            }
        ),
        AnchorCheck::Refused { problem } => shown(problem),
    }
}

/// Whether `text` looks like a digest the operator meant (hex only, any case or length).
fn looks_like_digest(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `coco ledger set-cap DATASET EPSILON`: DATASET is an existing dataset directory
/// (recorded canonical, with its data's digests so copies are covered) or a full
/// lowercase digest; anything else is refused (exit 3), since it could never bind.
fn set_cap_command(ledger: &Ledger, dataset: &str, cap: &CapLimit, json: bool) -> Result<()> {
    let cap = cap.clone();
    let path = Path::new(dataset);
    let refuse = |why: String| -> anyhow::Error {
        coco::release::ledger::LedgerError::CapKey {
            key: shown(dataset),
            why,
        }
        .into()
    };
    let (key, data) = if path.is_dir() {
        let canonical =
            std::fs::canonicalize(path).with_context(|| format!("set-cap {}", shown(dataset)))?;
        let data = directory_data(&canonical).map_err(|why| {
            refuse(format!(
                "{why}: a cap is set on a dataset directory or a content digest"
            ))
        })?;
        (
            CapKey::Directory(canonical.display().to_string()),
            Some(data),
        )
    } else if looks_like_digest(dataset) {
        let key = CapKey::parse(dataset).map_err(refuse)?;
        (key, None)
    } else if path.exists() {
        return Err(refuse(
            "not a directory: expected a dataset directory or a full content digest".into(),
        ));
    } else {
        return Err(refuse(
            "no such directory, and not a digest: expected an existing dataset directory or a full content digest (64 lowercase hex digits, as `coco ledger --json` shows it)".into(),
        ));
    };
    let coverage = ledger.set_cap(
        &key,
        &cap,
        data.as_ref().map(|(c, p)| (c.as_str(), p.as_str())),
    )?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "config": ledger.config_path(),
                "cap": cap.value(),
                "unit": cap.unit(),
                "delta": cap.delta(),
                "covers": coverage,
            }))?
        );
        return Ok(());
    }
    println!("{CONFIDENTIAL}");
    println!(
        "cap {} set in {}; it covers:",
        cap.labelled(),
        shown(ledger.config_path().display())
    );
    match &key {
        CapKey::Directory(dir) => {
            println!("  the directory {}", shown(dir));
            if let (Some(content), Some(population)) = (&coverage.content, &coverage.population) {
                println!("  its data wherever it is copied, in any groups form: content {content}");
                println!(
                    "  the same groups under another hierarchy, or one entity more or fewer: population {population}"
                );
            }
        }
        CapKey::Digest(digest) => println!(
            "  any dataset whose content digest or population key is {digest} (and, for a population key, one entity more or fewer)"
        ),
    }
    match coverage.draws {
        0 => println!("  no draw recorded in the ledger under it yet"),
        n => println!(
            "  the data of {n} draw(s) the ledger records under it ({} content digest(s): {})",
            coverage.recorded_contents.len(),
            coverage.recorded_contents.join(", ")
        ),
    }
    Ok(())
}

fn show_ledger(ledger: &Ledger, json: bool) -> Result<()> {
    let (read, anchor) = ledger.read_anchored()?;
    let report = ledger.anchor_report(&read, anchor.as_ref());
    let anchor = ledger.check_anchor(&read, anchor.as_ref());
    let summary = ledger.summary(&read)?;
    let draws = read.draws();
    if json {
        let value = serde_json::json!({
            "ledger": ledger.path(),
            "config_home": ledger.config_home(),
            "datasets": summary,
            "entries": draws,
            "events": read.events.iter().map(|e| &e.event).collect::<Vec<_>>(),
            "problems": read.problems,
            "torn_tail": read.torn_tail,
            "anchor": report,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("{CONFIDENTIAL}");
        println!("ledger {}", shown(ledger.path().display()));
        if draws.is_empty() {
            println!(
                "{}",
                if read.events.is_empty() {
                    "no releases drawn yet"
                } else {
                    "no draw in the ledger's lines (the lines about the ledger itself are below)"
                }
            );
        }
        for e in &draws {
            let levels: Vec<String> = e
                .levels
                .iter()
                .map(|l| format!("{} {} {}", l.name, short(l.budget(), Nearest), l.label()))
                .collect();
            println!(
                "{}",
                shown(format!(
                    "{}  {}  {}  {} {:<10} {:<11} {}  [{}]  tuning {}  {}",
                    format_time(e.time),
                    e.id,
                    head(e.dataset.key(), 12),
                    e.total.definition().symbol(),
                    short(&e.total, Up),
                    e.status.label(),
                    e.output.as_deref().unwrap_or("-"),
                    levels.join(", "),
                    e.tuning.map_or("unknown", |t| t.name()),
                    ledger.describe(&read, e)
                ))
            );
        }
        show_events(&read);
        if !summary.is_empty() {
            println!("\nper dataset (content digest, directory):");
            for d in &summary {
                println!(
                    "{}",
                    shown(format!(
                        "  {}  {}  {} draw(s), {} written, {} spent {}{}{}{}",
                        head(&d.dataset, 12),
                        d.dataset_dir,
                        d.draws,
                        d.written,
                        if d.unit == "rho" { "ρ" } else { "ε" },
                        match d.unit {
                            "rho" => d
                                .spent_rho_exact
                                .as_ref()
                                .map_or_else(|| d.spent_rho.clone(), |s| s.short(Up)),
                            _ => d
                                .spent_exact
                                .as_ref()
                                .map_or_else(|| d.spent.clone(), |s| s.short(Up)),
                        },
                        match (d.unit, d.epsilon_at_delta) {
                            ("rho", Some(e)) => format!(
                                " ((ε = {:.2}, δ = {:e})-DP{})",
                                (e * 100.0).ceil() / 100.0,
                                d.delta,
                                if d.zcdp_draws < d.draws {
                                    ", pure draws counted as ρ = ε²/2"
                                } else {
                                    ""
                                }
                            ),
                            _ => String::new(),
                        },
                        d.lost_exact.as_ref().map_or_else(String::new, |l| format!(
                            " ({} of it by {} draw(s) whose lines were lost, still counted)",
                            l.short(Up),
                            d.lost_draws
                        )),
                        d.cap
                            .as_ref()
                            .map(|c| format!(
                                " of cap {} ({} binds)",
                                c.cap.short(Down),
                                c.describe()
                            ))
                            .unwrap_or_else(|| ", no cap".into())
                    ))
                );
            }
        }
    }
    let defect = read
        .fail_closed(&ledger.path())
        .and_then(|()| anchor.map(|_| ()));
    if let Err(e) = defect {
        eprintln!("error: {}", shown(e));
        return Err(ExitWith(codes::POLICY).into());
    }
    Ok(())
}

/// The lines about the ledger itself (losses accepted, adoptions), each with its line.
fn show_events(read: &LedgerRead) {
    if read.events.is_empty() {
        return;
    }
    println!("\nthe ledger itself:");
    for e in &read.events {
        println!("  line {}: {}", e.line, shown(e.event.describe()));
    }
}

/// A loss for people, rounded `rounding`.
fn short(loss: &Loss, rounding: coco::privacy::Rounding) -> String {
    match loss {
        Loss::Pure(e) => e.short(rounding),
        Loss::Zcdp(r) => r.short(rounding),
    }
}

/// The first `n` characters of a text (never splits a character).
fn head(text: &str, n: usize) -> String {
    text.chars().take(n).collect()
}
