//! The `coco` command: argument parsing and dispatch over the library.

#![forbid(unsafe_code)]

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};

use std::sync::Arc;

use coco::data::{Dataset, LoadError};
use coco::estimate::Method;
use coco::generate::{self, Preset};
use coco::inspect::Summary;
use coco::noise::NoiseSource;
use coco::preview::{self, PreviewOptions, PreviewProgress};
use coco::privacy::{Epsilon, EpsilonError};
use coco::release::PlanError;
use coco::release::export::ExportError;
use coco::release::ledger::{Ledger, LedgerError, Repair, Tool, format_time};
use coco::release::plan::{Allocation, MaxSize, ReleasePlan, allocate};
use coco::release::resources::ResourceError;
use coco::release::transaction::{ApproveError, Reservation, TransactionError};
use coco::tradeoff::{self, Priority, SweepProgress};

/// How `coco` exits; scripts may rely on these.
const EXIT_CODES: &str = "Exit codes:
  0  success
  1  any other failure (reading or writing files, an internal error)
  2  usage error (bad command line)
  3  input error (dataset, plan, configuration or output path)
  4  refused by policy (a privacy-budget cap, a ledger that needs repair, a seeded release without --not-private)
  5  refused for resources (not enough memory for the plan)
  6  the release failed its checks (not written; its ε is spent), or coco verify found a problem";

/// Exit codes (see [`EXIT_CODES`]).
mod exit {
    pub const FAILURE: u8 = 1;
    pub const INPUT: u8 = 3;
    pub const POLICY: u8 = 4;
    pub const RESOURCES: u8 = 5;
    pub const CHECKS: u8 = 6;
}

/// Differentially private hierarchical count-of-counts tables.
///
/// Without a command, coco opens the bundled sample dataset.
#[derive(Parser, Debug)]
#[command(name = "coco", version, about, long_about = None, after_help = EXIT_CODES)]
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
        /// For us-blocks: the share of each county's households kept, in (0, 1]; the
        /// tracts and blocks scale with them (0.01: about 80,000 blocks).
        #[arg(long)]
        scale: Option<f64>,
    },
    /// Write a release plan (TOML) from an allocation rule, and show what it costs.
    Plan(PlanArgs),
    /// Preview a plan: mean error per level over trials, against the truth (confidential).
    Preview(PreviewArgs),
    /// Draw one release with fresh noise, check it and write it atomically.
    Release(ReleaseArgs),
    /// Open the terminal UI on a dataset (the bundled sample without DIR).
    Tui {
        /// Dataset directory (hierarchy.csv plus groups in one of three forms).
        dir: Option<PathBuf>,
    },
    /// Verify a release directory: its files against the manifest, its ledger entry
    /// (written, here, with this ε) and, with --dataset, the data it was drawn from.
    Verify {
        /// The release directory (written by coco release).
        out: PathBuf,
        /// The dataset it should have been drawn from: its content and files are
        /// compared with the ledger's record, counts.csv with its public group counts.
        #[arg(long)]
        dataset: Option<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show the privacy-loss ledger: every release drawn, ε spent per dataset and the
    /// cap that binds; verify or repair it.
    Ledger {
        #[command(subcommand)]
        action: Option<LedgerAction>,
        /// Print JSON instead of text.
        #[arg(long, global = true)]
        json: bool,
        /// Set a cap on the total ε for a dataset: DATASET (directory or content digest) and EPSILON.
        #[arg(long, num_args = 2, value_names = ["DATASET", "EPSILON"])]
        set_cap: Option<Vec<String>>,
    },
}

#[derive(Subcommand, Debug)]
enum LedgerAction {
    /// Check every line, the hash chain and the draws' ids; list every problem (exit 4 if any).
    Verify,
    /// Set aside a torn last line (a crash mid-append) so draws can go on; nothing else is
    /// ever changed.
    Repair,
}

#[derive(Args, Debug)]
struct ReleaseArgs {
    /// Dataset directory.
    dir: PathBuf,
    /// Release plan (TOML).
    #[arg(long)]
    config: PathBuf,
    /// Output directory (must not exist, or be empty).
    #[arg(long)]
    out: PathBuf,
    /// Seed the noise (for tests): anyone with the seed can regenerate the noise, so
    /// the release is NOT private. Refused unless --not-private is given too.
    #[arg(long)]
    seed: Option<u64>,
    /// With --seed: write the seeded release anyway, marked not private everywhere.
    #[arg(long, requires = "seed")]
    not_private: bool,
    /// Print one JSON object (output, ε, ledger id, checks) on standard output.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct PlanArgs {
    /// Dataset directory.
    dir: PathBuf,
    /// Total ε to split over the levels (decimal or fraction like 1/3).
    #[arg(long, default_value = "1")]
    total: String,
    /// How to split it (or give --budgets for a custom allocation).
    #[arg(long, value_enum, default_value_t = AllocationArg::Uniform)]
    allocation: AllocationArg,
    /// For geometric: each level's share over its parent's (default: cube root of the mean branching factor).
    #[arg(long)]
    ratio: Option<String>,
    /// Custom allocation: one ε per level, root first (e.g. 0.1,0.2,1/3); replaces --total.
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["total", "ratio"])]
    budgets: Option<Vec<String>>,
    /// Method at every level. Without it (and without --tail), each level gets the
    /// method coco chooses from public figures only (the hierarchy, each region's G and
    /// K): hc with a tail listing at least 1% of the largest region's groups; the plan's
    /// comments and the table say why.
    #[arg(long, value_enum)]
    method: Option<MethodArg>,
    /// With hc: measure sizes above N as the sorted sizes of the largest groups, at no
    /// extra ε (for a few large groups, e.g. group quarters among households).
    #[arg(long, value_name = "N")]
    tail: Option<coco::histogram::Size>,
    /// With --tail: how many of the largest groups each region lists.
    #[arg(long, value_name = "M", default_value_t = coco::estimate::TailGroups::DEFAULT.get(), requires = "tail")]
    tail_groups: u32,
    /// The public bound K on a group's size.
    #[arg(long, default_value_t = 10_000, conflicts_with = "estimate_max_size")]
    max_size: u32,
    /// Estimate K privately with this ε instead (added to the total).
    #[arg(long)]
    estimate_max_size: Option<String>,
    /// Write the plan here instead of standard output.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct PreviewArgs {
    /// Dataset directory.
    dir: PathBuf,
    /// Release plan (TOML).
    #[arg(long)]
    config: PathBuf,
    /// Number of independent trials.
    #[arg(long, default_value_t = 10)]
    trials: usize,
    /// Seed for reproducible trials (default: fresh randomness).
    #[arg(long)]
    seed: Option<u64>,
    /// Also run the other consistency steps and merge rules on the same measurements.
    #[arg(long)]
    compare: bool,
    /// Show the frontier instead: per-level error as the leaves' share of the plan's
    /// total ε grows, beside bottom-up, and recommend an allocation.
    #[arg(long)]
    sweep: bool,
    /// With --sweep: the leaves' shares to try (e.g. 1/3,0.5,0.8).
    #[arg(long, value_delimiter = ',', requires = "sweep")]
    shares: Option<Vec<String>>,
    /// With --sweep: recommend by weights per level on error relative to bottom-up (root first).
    #[arg(
        long,
        value_delimiter = ',',
        requires = "sweep",
        conflicts_with = "max_ratio"
    )]
    weights: Option<Vec<f64>>,
    /// With --sweep: recommend the best allocation with no level worse than this many times bottom-up.
    #[arg(long, requires = "sweep")]
    max_ratio: Option<f64>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum AllocationArg {
    Uniform,
    Geometric,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum MethodArg {
    Hc,
    Hg,
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

fn load_plan(dataset: &Dataset, config: &Path) -> Result<ReleasePlan> {
    let plan = ReleasePlan::load(config)?;
    plan.validate(&dataset.hierarchy, config)?;
    Ok(plan)
}

/// Progress on standard error: one rewritten line on a terminal, sparse lines otherwise.
struct StderrProgress {
    terminal: bool,
    last: Mutex<Option<Instant>>,
}

impl StderrProgress {
    fn new() -> Self {
        Self {
            terminal: std::io::stderr().is_terminal(),
            last: Mutex::new(None),
        }
    }

    fn report(&self, message: &str, last_step: bool) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let due =
            last.is_none_or(|t| t.elapsed().as_millis() >= if self.terminal { 100 } else { 2000 });
        if !due && !last_step {
            return;
        }
        *last = Some(Instant::now());
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(err, "\r\x1b[2K{message}");
            if last_step {
                let _ = writeln!(err);
            }
        } else {
            let _ = writeln!(err, "{message}");
        }
    }
}

fn plan_command(args: PlanArgs) -> Result<()> {
    let PlanArgs {
        dir,
        total,
        allocation,
        ratio,
        budgets,
        method,
        tail,
        tail_groups,
        max_size,
        estimate_max_size,
        out,
    } = args;
    let dataset = Dataset::load(&dir)?;
    let h = &dataset.hierarchy;
    let total = Epsilon::parse(&total).context("--total")?;
    let allocation = match allocation {
        AllocationArg::Uniform => Allocation::Uniform,
        AllocationArg::Geometric => {
            let ratio = match ratio {
                Some(r) => Epsilon::parse(&r).context("--ratio")?,
                None => coco::release::defaults::geometric_ratio(&dataset.hierarchy),
            };
            Allocation::Geometric { ratio }
        }
    };
    // None: each level's method from public figures (release::defaults).
    let method = match (method, tail) {
        (None, None) => None,
        (Some(MethodArg::Hc), None) => Some(Method::Hc),
        (Some(MethodArg::Hg), None) => Some(Method::Hg),
        (None | Some(MethodArg::Hc), Some(above)) => Some(Method::HcTail(coco::estimate::Tail {
            above,
            groups: coco::estimate::TailGroups::new(tail_groups).map_err(|e| {
                anyhow!(
                    "--tail-groups {}: expected a whole number from 1 to {}",
                    e.groups,
                    coco::estimate::tail::MAX_GROUPS
                )
            })?,
        })),
        (Some(MethodArg::Hg), Some(_)) => {
            bail!("--tail goes with --method hc (it extends the cumulative histogram)")
        }
    };
    let budgets = match budgets {
        Some(list) => list
            .iter()
            .map(|b| Epsilon::parse(b).with_context(|| format!("--budgets {b}")))
            .collect::<Result<Vec<_>>>()?,
        None => allocate(&total, h.depth(), allocation),
    };
    let max_size = match estimate_max_size {
        Some(e) => MaxSize::Estimate {
            epsilon: Epsilon::parse(&e).context("--estimate-max-size")?,
        },
        None => MaxSize::Fixed(max_size),
    };
    // The plan model checks every rule; the CLI only says which flag broke it.
    let made = match method {
        Some(method) => ReleasePlan::with_budgets(h, budgets, method, max_size).map(|p| (p, None)),
        None => {
            coco::release::defaults::public_default(h, |id| dataset.groups(id), &total, max_size)
                .and_then(|mut d| {
                    d.plan.set_budgets(budgets)?;
                    Ok((d.plan.clone(), Some(d)))
                })
        }
    };
    let (plan, defaults) = made.map_err(|e| {
        use coco::release::plan::PlanRuleError as R;
        match e {
            R::TailNotBelowK { above, k, .. } => {
                anyhow!("--tail {above}: expected a size below --max-size ({k})")
            }
            R::TailAbove { above, .. } => anyhow!(
                "--tail {above}: expected a size below --max-size ({})",
                coco::release::plan::MAX_K
            ),
            R::MaxSize { k } => anyhow!(
                "--max-size {k}: expected a whole number from 1 to {}",
                coco::release::plan::MAX_K
            ),
            R::MaxSizeEpsilon { reason, .. } => anyhow!("--estimate-max-size: {reason}"),
            R::LevelCount { given, levels, names } => anyhow!(
                "--budgets has {given} value(s) but the hierarchy has {levels} levels ({names}): give one ε per level, root first"
            ),
            e => anyhow!("{e}"),
        }
    })?;
    let text = match &defaults {
        Some(d) => coco::release::defaults::PublicDefault {
            plan: plan.clone(),
            levels: d.levels.clone(),
        }
        .to_toml(),
        None => plan.to_toml(),
    };
    match &out {
        Some(path) => std::fs::write(path, &text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => print!("{text}"),
    }
    // The cost table goes to stderr so stdout stays a valid plan.
    let k_for_cost = match plan.max_size() {
        MaxSize::Fixed(k) => *k,
        MaxSize::Estimate { .. } => 10_000,
    };
    let samples = plan.noise_samples(h, |id| dataset.groups(id), k_for_cost);
    let plan_total = plan.total_epsilon().expect("levels");
    eprintln!("\nlevel          nodes        ε    share  method           noise samples");
    for ((l, level), s) in plan.levels().iter().zip(h.levels()).zip(samples) {
        let share = l.epsilon().to_f64() / plan_total.to_f64() * 100.0;
        eprintln!(
            "{:<12} {:>7} {:>8} {:>7.1}%  {:<14} {:>15}",
            l.name(),
            h.level_len(level),
            l.epsilon().to_string(),
            share,
            l.method().label(),
            preview::fmt_num(s as f64)
        );
    }
    if let Some(d) = &defaults {
        eprintln!("\nwhy (public figures only: the hierarchy, each region's G and K):");
        for (l, why) in plan.levels().iter().zip(&d.levels) {
            eprintln!("  {:<12} {}", l.name(), why.reason);
        }
    }
    eprintln!(
        "total ε = {plan_total}{}",
        match &out {
            Some(path) => format!("; plan written to {}", path.display()),
            None => String::new(),
        }
    );
    Ok(())
}

fn preview_command(
    dir: &Path,
    config: &Path,
    trials: usize,
    seed: Option<u64>,
    compare: bool,
    json: bool,
) -> Result<()> {
    let dataset = Dataset::load(dir)?;
    let plan = load_plan(&dataset, config)?;
    let progress = StderrProgress::new();
    let options = PreviewOptions {
        trials,
        seed,
        compare,
        keep_last_trial: false,
        bottom_up: true,
    };
    let report = preview::preview(&dataset, &plan, &options, None, &|p: PreviewProgress| {
        let done = p.trial == p.trials && p.nodes_done == p.nodes;
        progress.report(
            &format!(
                "preview: trial {}/{} ({} of {} regions)",
                (p.trial + 1).min(p.trials),
                p.trials,
                p.nodes_done,
                p.nodes
            ),
            done,
        );
    })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", preview::render_text(&report));
    }
    Ok(())
}

fn sweep_command(args: PreviewArgs) -> Result<()> {
    let PreviewArgs {
        dir,
        config,
        trials,
        seed,
        shares,
        weights,
        max_ratio,
        json,
        ..
    } = args;
    let dataset = Dataset::load(&dir)?;
    let plan = load_plan(&dataset, &config)?;
    let total = Epsilon::sum(plan.levels().iter().map(|l| l.epsilon()))
        .expect("validated plans have levels");
    let shares: Vec<Epsilon> = match shares {
        Some(list) => list
            .iter()
            .map(|s| Epsilon::parse(s).with_context(|| format!("--shares {s}")))
            .collect::<Result<_>>()?,
        None => tradeoff::default_shares(dataset.hierarchy.depth()),
    };
    if let Some(bad) = shares
        .iter()
        .find(|s| **s >= Epsilon::from_ratio(1, 1).expect("1"))
    {
        bail!("--shares {bad}: each share must be below 1 (every level needs some budget)");
    }
    let progress = StderrProgress::new();
    let mut frontier = tradeoff::frontier(
        &dataset,
        &plan,
        &total,
        &shares,
        &tradeoff::Trials {
            trials,
            seed,
            cancel: None,
        },
        &|p: SweepProgress| {
            let last = p.point + 1 == p.points && p.trial.trial == p.trial.trials;
            progress.report(
                &format!(
                    "sweep: point {}/{}, trial {}/{}",
                    p.point + 1,
                    p.points,
                    (p.trial.trial + 1).min(p.trial.trials),
                    p.trial.trials
                ),
                last,
            );
        },
    )?;
    let priority = match (weights, max_ratio) {
        (Some(w), _) => Priority::Weights(w),
        (None, Some(x)) => Priority::MaxRatio(x),
        (None, None) => Priority::Weights(vec![1.0; dataset.hierarchy.depth()]),
    };
    frontier.recommendation = tradeoff::recommend(&frontier, &priority);
    if json {
        println!("{}", serde_json::to_string_pretty(&frontier)?);
    } else {
        print!("{}", tradeoff::render_text(&frontier));
    }
    Ok(())
}

fn release_command(args: ReleaseArgs) -> Result<()> {
    let ReleaseArgs {
        dir,
        config,
        out,
        seed,
        not_private,
        json,
    } = args;
    let phase = coco::timing::phase("load");
    let dataset = Arc::new(Dataset::load(&dir)?);
    phase.done();
    let plan = load_plan(&dataset, &config)?;
    let ledger = Ledger::open_default()?;
    // Locks the ledger until the draw is decided: concurrent releases queue here and
    // cannot both slip under a cap.
    let reservation = Reservation::open(&ledger, dataset, plan, Tool::Release, Some(&out))?;
    let spent_before = reservation.cap().spent.clone();
    let binding = reservation.cap().binding().cloned();
    let source = match seed {
        Some(s) => NoiseSource::seeded(s),
        None => NoiseSource::from_os()?,
    };
    let progress = StderrProgress::new();
    let pending = reservation.draw(
        &source,
        not_private,
        None,
        Some(&|done: usize, n: usize| {
            progress.report(
                &format!("release: measured {done} of {n} regions"),
                done == n,
            );
        }),
    )?;
    let approved = match pending.approve(&out) {
        Ok(a) => a,
        Err(ApproveError::Refused { error, pending }) => {
            // Checked before the draw; something changed since. The draw is spent.
            let recorded = pending.discard(&format!("not written: {error}"))?;
            return Err(anyhow::Error::new(*error).context(format!(
                "the release was drawn but not written; recorded in the ledger as {} (ε = {} spent)",
                recorded.status.label(),
                recorded.epsilon
            )));
        }
        Err(e) => return Err(e.into()),
    };
    let manifest = &approved.manifest;
    let epsilon = approved.draw.epsilon();
    let spent_after = match &spent_before.epsilon {
        Some(s) => s.add(epsilon),
        None => epsilon.clone(),
    };
    for w in &manifest.warnings {
        eprintln!("warning: {w}");
    }
    if let Err(e) = &approved.recorded {
        eprintln!(
            "warning: the release was written, but the ledger could not record it as written ({e}); its pending line keeps its ε counted"
        );
    }
    if json {
        let value = serde_json::json!({
            "output": std::path::absolute(&approved.out).unwrap_or_else(|_| approved.out.clone()),
            "total_epsilon": {
                "exact": epsilon.to_string(),
                "num": epsilon.numer().to_string(),
                "den": epsilon.denom().to_string(),
                "decimal": epsilon.to_f64(),
            },
            "ledger_id": manifest.ledger_entry,
            "ledger_status": approved.recorded.as_ref().map(|r| r.status).ok(),
            "max_size": manifest.max_size,
            "checks": manifest.checks,
            "reproducible": manifest.reproducible,
            "for_publication": manifest.for_publication,
            "warnings": manifest.warnings,
            "spent_on_dataset": {
                "exact": spent_after.to_string(),
                "draws": spent_before.draws + 1,
                "cap": binding.as_ref().map(|b| b.cap.to_string()),
                "cap_rule": binding.as_ref().map(|b| b.describe()),
            },
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    println!(
        "wrote {} (total ε = {}, K = {})",
        out.display(),
        manifest.total_epsilon_exact,
        manifest.max_size
    );
    let c = &manifest.checks;
    println!(
        "checks: integral {}, nonnegative {}, group totals {}, consistent {}, within K {}",
        c.integral, c.nonnegative, c.group_totals, c.consistent, c.within_max_size
    );
    if manifest.reproducible {
        println!("seeded: reproducible, NOT PRIVATE, marked not for publication");
    }
    println!(
        "ledger: {} (draw {}; {} draw(s) of this dataset, ε spent {}{})",
        ledger.path().display(),
        manifest.ledger_entry,
        spent_before.draws + 1,
        spent_after,
        binding
            .map(|b| format!(" of cap {} ({})", b.cap, b.describe()))
            .unwrap_or_default()
    );
    Ok(())
}

/// The first `n` characters of a text (never splits a character).
fn head(text: &str, n: usize) -> String {
    text.chars().take(n).collect()
}

/// `coco verify OUT [--dataset DIR] [--json]`.
fn verify_command(out: &Path, dataset: Option<&Path>, json: bool) -> Result<()> {
    let ledger = Ledger::open_default()?;
    let dataset = dataset.map(Dataset::load).transpose()?;
    let v = coco::release::verify::verify_release(out, &ledger, dataset.as_ref())?;
    if json {
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "release {} (manifest version {})",
            v.release, v.manifest_version
        );
        let ok = v.files.iter().filter(|f| f.state == "ok").count();
        println!("files: {ok} of {} match manifest.json", v.files.len());
        match &v.recorded {
            Some(r) => {
                println!(
                    "ledger {}: draw {} {} at {}, total ε = {}",
                    v.ledger,
                    v.ledger_entry,
                    r.status.label(),
                    r.time,
                    r.total_epsilon
                );
                println!(
                    "  drawn from (confidential): {}, content {}",
                    r.dataset.dir,
                    r.dataset.key()
                );
                for i in &r.dataset.inputs {
                    println!("    {}  sha256 {}", i.path, i.sha256);
                }
            }
            None => println!("ledger {}: draw {} not found", v.ledger, v.ledger_entry),
        }
        if let Some(d) = &v.dataset {
            let yes_no = |b: Option<bool>| match b {
                Some(true) => "yes",
                Some(false) => "no",
                None => "not recorded",
            };
            println!(
                "dataset {}: same content {}, same input files {}",
                d.directory,
                yes_no(d.same_content),
                yes_no(d.same_inputs)
            );
            if let Some(c) = &d.counts {
                println!(
                    "counts.csv against its public group counts: integral {}, nonnegative {}, group totals {}, consistent {}, within K {}",
                    c.integral, c.nonnegative, c.group_totals, c.consistent, c.within_max_size
                );
            }
        }
        for p in &v.problems {
            println!("problem: {p}");
        }
        if v.ok() {
            println!("ok: the release is what coco wrote and the ledger records");
        }
    }
    if !v.ok() {
        return Err(ExitWith(exit::CHECKS).into());
    }
    Ok(())
}

fn ledger_command(
    action: Option<LedgerAction>,
    json: bool,
    set_cap: Option<Vec<String>>,
) -> Result<()> {
    let ledger = Ledger::open_default()?;
    if let Some(args) = set_cap {
        let [dataset, eps] = args.as_slice() else {
            bail!("--set-cap takes DATASET EPSILON")
        };
        let cap = Epsilon::parse(eps)?;
        let key = match std::fs::canonicalize(dataset) {
            Ok(p) if p.is_dir() => p.display().to_string(),
            _ => dataset.clone(),
        };
        ledger.set_cap(&key, &cap)?;
        println!(
            "cap for {key} set to ε = {cap} in {}",
            ledger.config_path().display()
        );
        return Ok(());
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
                return Err(ExitWith(exit::POLICY).into());
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
        None => show_ledger(&ledger, json),
    }
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
                .map(|l| format!("{} {} {}", l.name, l.epsilon, l.label()))
                .collect();
            println!(
                "{}  {}  {}  ε {:<10} {:<11} {}  [{}]  {}",
                format_time(e.time),
                e.id,
                head(e.dataset.key(), 12),
                e.total_epsilon.to_string(),
                e.status.label(),
                e.output.as_deref().unwrap_or("-"),
                levels.join(", "),
                e.note.as_deref().unwrap_or("")
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
                    d.spent,
                    d.cap
                        .as_ref()
                        .map(|c| format!(" of cap {} ({} binds)", c.cap, c.describe()))
                        .unwrap_or_else(|| ", no cap".into())
                );
            }
        }
    }
    if let Err(e) = read.fail_closed(&ledger.path()) {
        eprintln!("error: {e}");
        return Err(ExitWith(exit::POLICY).into());
    }
    Ok(())
}

/// An exit code for a failure already reported.
#[derive(Debug)]
struct ExitWith(u8);

impl std::fmt::Display for ExitWith {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}", self.0)
    }
}

impl std::error::Error for ExitWith {}

/// The exit code for an error: the first cause in its chain that says.
fn exit_code(e: &anyhow::Error) -> u8 {
    use coco::release::run::RunError;
    fn run(e: &RunError) -> u8 {
        match e {
            RunError::Resources(_) | RunError::ResourcesAfterMaxSize { .. } => exit::RESOURCES,
            _ => exit::FAILURE,
        }
    }
    fn export(e: &ExportError) -> u8 {
        match e {
            ExportError::ChecksFailed { .. } => exit::CHECKS,
            ExportError::OutputExists { .. } | ExportError::BadOutput { .. } => exit::INPUT,
            ExportError::Io { .. } => exit::FAILURE,
        }
    }
    fn ledger(e: &LedgerError) -> u8 {
        match e {
            e if e.is_policy() => exit::POLICY,
            LedgerError::Config { .. } => exit::INPUT,
            _ => exit::FAILURE,
        }
    }
    for cause in e.chain() {
        if let Some(ExitWith(code)) = cause.downcast_ref() {
            return *code;
        }
        if let Some(t) = cause.downcast_ref::<TransactionError>() {
            return match t {
                TransactionError::Ledger(l) => ledger(l),
                TransactionError::Output(x) => export(x),
                TransactionError::EmptyPlan => exit::INPUT,
                TransactionError::SeededNotAllowed => exit::POLICY,
                TransactionError::Draw { error, .. } => run(error),
            };
        }
        if let Some(a) = cause.downcast_ref::<ApproveError>() {
            return match a {
                ApproveError::Refused { error, .. } | ApproveError::Failed { error, .. } => {
                    export(error)
                }
            };
        }
        if let Some(x) = cause.downcast_ref::<ExportError>() {
            return export(x);
        }
        if let Some(v) = cause.downcast_ref::<coco::release::verify::VerifyError>() {
            use coco::release::verify::VerifyError;
            return match v {
                VerifyError::Io { .. } | VerifyError::Manifest { .. } => exit::INPUT,
                VerifyError::Ledger(l) => ledger(l),
            };
        }
        if let Some(l) = cause.downcast_ref::<LedgerError>() {
            return ledger(l);
        }
        if let Some(r) = cause.downcast_ref::<RunError>() {
            return run(r);
        }
        if cause.downcast_ref::<ResourceError>().is_some() {
            return exit::RESOURCES;
        }
        if cause.downcast_ref::<LoadError>().is_some()
            || cause.downcast_ref::<PlanError>().is_some()
            || cause.downcast_ref::<EpsilonError>().is_some()
        {
            return exit::INPUT;
        }
    }
    exit::FAILURE
}

fn tui(dir: Option<PathBuf>) -> Result<()> {
    coco::tui::run(coco::tui::AppOptions {
        dataset: dir,
        home: None,
        preview_seed: None,
    })
    .context("the terminal UI failed")
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        None => {
            let dir = sample_dir();
            // Piped or redirected: the sample's summary, as before the UI existed.
            if !std::io::stdout().is_terminal() {
                return inspect(&dir, false);
            }
            tui(Some(dir))
        }
        Some(Command::Tui { dir }) => {
            if !std::io::stdout().is_terminal() {
                bail!(
                    "coco tui needs a terminal on standard output; for a summary of the dataset use `coco inspect DIR`"
                );
            }
            tui(Some(dir.unwrap_or_else(sample_dir)))
        }
        Some(Command::Inspect { dir, json }) => inspect(&dir, json),
        Some(Command::Gen {
            preset,
            out,
            seed,
            scale,
        }) => {
            let show = std::io::stderr().is_terminal();
            let mut last = 0usize;
            let mut progress = |done: usize, total: usize| {
                let pct = done * 100 / total.max(1);
                if show && pct != last {
                    last = pct;
                    eprint!("\rgen: {pct}% ({done} of {total} counties)");
                    if done == total {
                        eprintln!();
                    }
                }
            };
            let report = generate::generate_into(preset, &out, seed, scale, &mut progress)
                .with_context(|| {
                    format!(
                        "could not generate {} into {}",
                        preset
                            .to_possible_value()
                            .map(|v| v.get_name().to_string())
                            .unwrap_or_default(),
                        out.display()
                    )
                })?;
            eprintln!(
                "wrote {} groups in {} leaves to {}",
                report.groups,
                report.leaves,
                report.dir.display()
            );
            Ok(())
        }
        Some(Command::Plan(args)) => plan_command(args),
        Some(Command::Preview(args)) => {
            if args.sweep {
                sweep_command(args)
            } else {
                preview_command(
                    &args.dir,
                    &args.config,
                    args.trials,
                    args.seed,
                    args.compare,
                    args.json,
                )
            }
        }
        Some(Command::Release(args)) => release_command(args),
        Some(Command::Ledger {
            action,
            json,
            set_cap,
        }) => ledger_command(action, json, set_cap),
        Some(Command::Verify { out, dataset, json }) => {
            verify_command(&out, dataset.as_deref(), json)
        }
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = matches!(
        &cli.command,
        Some(Command::Release(ReleaseArgs { json: true, .. }))
    );
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = exit_code(&e);
            if e.downcast_ref::<ExitWith>().is_none() {
                // Values quoted from input files are cut where they are quoted; this
                // bounds whatever else a message lists (level names, columns, …).
                let message = cut_message(&format!("{e:#}"));
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
