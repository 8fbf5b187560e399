//! `coco preview DIR [--config PLAN]`: mean error per level over trials, or with
//! `--sweep` the search over each level's method and the leaves' share of ε.
//!
//! Without `--config` the plan is coco's public default (`coco plan DIR` without
//! options). Against the confidential data the figures are CONFIDENTIAL; with
//! `--proxy synthetic` or `--proxy DIR` they are measured on a public proxy with the
//! same hierarchy, and a plan tuned on them stays public.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use coco::data::Dataset;
use coco::preview::{self, PreviewOptions, PreviewProgress};
use coco::privacy::{Epsilon, Share};
use coco::proxy::{self, ProxySpec};
use coco::release::plan::{MaxSize, ReleasePlan};
use coco::tradeoff::{self, PreviewData, Priority, SweepProgress};

use super::exit::FlagError;
use super::load_plan;
use super::progress::Progress;

/// What the columns of the output mean, for `coco preview --help`.
const COLUMNS: &str =
    "The columns (mean EMD per region to the truth, ± its standard error over the trials):
  independent      each region's own estimate, before the consistency step
  consistent       what a release of the plan would publish (after wls or topdown)
  bottom-up        the whole budget on the leaves, the regions above summed from them
  omniscient ref.  Kuo et al.'s yardstick: distinct sizes × the noise's sd per region (√2/ε; σ for ρ)
Defined in docs/glossary.md, and in the TUI's help (? then g).";

#[derive(Args, Debug)]
#[command(after_help = COLUMNS)]
pub struct PreviewArgs {
    /// Dataset directory.
    pub dir: PathBuf,
    /// Release plan (TOML). Without it: coco's public default plan, as `coco plan DIR`
    /// writes it (ε = 1 split evenly, each level's method from public figures, K = 10000).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Measure against a public proxy instead of the confidential data: `synthetic`
    /// (drawn from each region's public G and a public size model) or a dataset
    /// directory with the same hierarchy (e.g. an earlier census). Tuning on it keeps
    /// the plan's parameters public.
    #[arg(long, value_name = "synthetic|DIR")]
    pub proxy: Option<ProxySpec>,
    /// Number of independent trials (per plan, with --sweep).
    #[arg(long, default_value_t = tradeoff::DEFAULT_TRIALS, value_parser = at_least_one)]
    pub trials: usize,
    /// Seed for reproducible trials (default: fresh randomness): the same seed, plan and
    /// data give the same output byte for byte, with --sweep the same recommendation
    /// as the TUI's Trade-off screen with that seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Also run the other consistency steps and merge rules on the same measurements, and wls without its check against the measurements.
    #[arg(long)]
    pub compare: bool,
    /// Also compute each trial's 90% margins of error as a release would publish them,
    /// and show how often they covered the truth (CONFIDENTIAL; with --proxy, the
    /// proxy's truth, labelled PUBLIC PROXY; docs/uncertainty.md).
    #[arg(long)]
    pub coverage: bool,
    /// Search instead: per-level error as the leaves' share of the plan's total ε
    /// grows, beside bottom-up, over each level's method (hc, tails, hg), and
    /// recommend a plan that bottom-up does not dominate.
    #[arg(long)]
    pub sweep: bool,
    /// With --sweep: the leaves' shares to try (e.g. 1/3,0.5,0.8).
    #[arg(long, value_delimiter = ',', requires = "sweep", value_parser = share_below_one, allow_negative_numbers = true)]
    pub shares: Option<Vec<Share>>,
    /// With --sweep: recommend by weights per level on error relative to bottom-up (root first).
    #[arg(
        long,
        value_delimiter = ',',
        requires = "sweep",
        conflicts_with = "max_ratio",
        value_parser = weight,
        allow_negative_numbers = true
    )]
    pub weights: Option<Vec<f64>>,
    /// With --sweep: recommend the best allocation with no level worse than this many times bottom-up.
    #[arg(long, requires = "sweep", value_parser = at_least_one_times, allow_negative_numbers = true)]
    pub max_ratio: Option<f64>,
    /// With --sweep: write the recommended plan to FILE (TOML, as `coco plan` writes
    /// it), labelled with where it came from: tuning = "proxy" and tuning_source naming
    /// the proxy with --proxy, "confidential-previews" without. Fails, writing nothing,
    /// when no plan is recommended.
    #[arg(long, value_name = "FILE", requires = "sweep")]
    pub write_plan: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The plan previewed and where it came from.
struct Chosen {
    plan: ReleasePlan,
    /// One sentence for standard error, the text output and the JSON.
    source: String,
}

fn choose_plan(dataset: &Dataset, config: Option<&PathBuf>) -> Result<Chosen> {
    match config {
        Some(path) => Ok(Chosen {
            plan: load_plan(dataset, path)?,
            source: super::shown(path.display()),
        }),
        None => {
            let one = Epsilon::from_ratio(1, 1).expect("1");
            let d = coco::release::plan::defaults::public_default(
                &dataset.hierarchy,
                |id| dataset.groups(id),
                coco::privacy::Loss::Pure(one),
                MaxSize::Fixed(coco::release::plan::defaults::DEFAULT_MAX_SIZE),
            )?;
            Ok(Chosen {
                plan: d.plan,
                source: "coco's public default (no --config: the plan `coco plan DIR` writes, chosen from public information only)".into(),
            })
        }
    }
}

/// What the trials run on: the dataset itself, or the proxy asked for.
fn target(
    dataset: Dataset,
    spec: Option<&ProxySpec>,
) -> Result<(std::sync::Arc<Dataset>, PreviewData)> {
    match spec {
        None => Ok((std::sync::Arc::new(dataset), PreviewData::Confidential)),
        Some(spec) => {
            // A directory proxy is checked against the ledger's datasets: it must not be
            // confidential data.
            let ledger = match spec {
                ProxySpec::Dir(_) => Some(super::open_ledger()?),
                ProxySpec::Synthetic => None,
            };
            let p = proxy::open(spec, &dataset, ledger.as_ref())
                .with_context(|| format!("--proxy {spec}"))?;
            eprintln!(
                "previewing on the {}, which is public: not on the confidential data",
                p.label
            );
            let data = p.preview_data();
            Ok((p.dataset, data))
        }
    }
}

pub fn run(args: PreviewArgs) -> Result<()> {
    let dataset = Dataset::load(&args.dir)?;
    for w in coco::warning::Warning::of_dataset(&dataset) {
        eprintln!("warning: {w}");
    }
    let chosen = choose_plan(&dataset, args.config.as_ref())?;
    if args.config.is_none() {
        eprintln!("plan: {}", chosen.source);
    }
    let (on, data) = target(dataset, args.proxy.as_ref())?;
    if args.sweep {
        sweep(args, &on, data, chosen)
    } else {
        preview(args, &on, data, chosen)
    }
}

fn preview(args: PreviewArgs, dataset: &Dataset, data: PreviewData, chosen: Chosen) -> Result<()> {
    let progress = Progress::new("preview");
    let options = PreviewOptions {
        trials: args.trials,
        seed: args.seed,
        compare: args.compare,
        keep_last_trial: false,
        bottom_up: true,
        coverage: args
            .coverage
            .then_some(coco::release::margins::Confidence::DEFAULT),
    };
    let mut report = preview::preview(
        dataset,
        &chosen.plan,
        &options,
        None,
        &|p: PreviewProgress| {
            let nodes = p.nodes as u64;
            progress.update(
                p.trial as u64 * nodes + p.nodes_done as u64,
                p.trials as u64 * nodes,
                format!(
                    "regions (trial {} of {}){}",
                    (p.trial + 1).min(p.trials),
                    p.trials,
                    if p.nodes_done >= p.nodes && p.nodes > 0 {
                        format!(", all measured: {} running", p.step.text())
                    } else {
                        String::new()
                    }
                ),
            );
        },
    )?;
    progress.finish();
    report.notice = data.notice();
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        if let Some(o) = value.as_object_mut() {
            o.insert("plan".into(), serde_json::json!(chosen.source));
            o.insert("tuning".into(), serde_json::json!(chosen.plan.tuning()));
            o.insert("data".into(), serde_json::to_value(&data)?);
        }
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", super::text::preview(&report, &data));
        println!(
            "\nplan: {} (tuning: {})",
            chosen.source,
            chosen.plan.tuning()
        );
    }
    Ok(())
}

fn sweep(args: PreviewArgs, dataset: &Dataset, data: PreviewData, chosen: Chosen) -> Result<()> {
    let PreviewArgs {
        trials,
        seed,
        shares,
        weights,
        max_ratio,
        json,
        write_plan,
        ..
    } = args;
    let plan = chosen.plan;
    let depth = dataset.hierarchy.depth();
    if let Some(w) = &weights
        && w.len() != depth
    {
        return Err(FlagError {
            flag: "--weights".into(),
            message: format!(
                "{} weight(s) but the hierarchy has {depth} levels: give one weight per level, root first",
                w.len()
            ),
        }
        .into());
    }
    let options = tradeoff::SearchOptions {
        trials,
        seed,
        shares,
        priority: match (weights, max_ratio) {
            (Some(w), _) => Some(Priority::Weights(w)),
            (None, Some(x)) => Some(Priority::MaxRatio(x)),
            (None, None) => None,
        },
    };
    let progress = Progress::new("sweep");
    let frontier = tradeoff::search(dataset, data, &plan, &options, None, &|p: SweepProgress| {
        progress.update(
            p.trials_done as u64,
            p.trials_total as u64,
            if p.round > 1 {
                format!(
                    "trials (second round: plan {} of the {} still in question)",
                    p.point + 1,
                    p.points
                )
            } else {
                format!("trials (plan {} of {})", p.point + 1, p.points)
            },
        );
    })?;
    progress.finish();
    if let Some(path) = &write_plan {
        write_recommendation(&frontier, &options, path)?;
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&frontier)?);
    } else {
        print!("{}", super::text::frontier(&frontier));
    }
    if let Some(path) = &write_plan {
        eprintln!(
            "wrote the recommended plan to {}",
            super::shown(path.display())
        );
    }
    Ok(())
}

/// `--write-plan FILE`: the recommendation as a plan file, each level's note saying
/// where its budget and method came from.
fn write_recommendation(
    frontier: &tradeoff::Frontier,
    options: &tradeoff::SearchOptions,
    path: &std::path::Path,
) -> Result<()> {
    let (Some(plan), Some(r)) = (frontier.recommended_plan(), &frontier.recommendation) else {
        let why = frontier
            .verdict
            .clone()
            .unwrap_or_else(|| "the search recommends no plan".into());
        return Err(FlagError {
            flag: "--write-plan".into(),
            message: format!("nothing written to {}: {why}", super::shown(path.display())),
        }
        .into());
    };
    let on = match &frontier.data {
        PreviewData::Confidential => "the CONFIDENTIAL data".to_string(),
        PreviewData::Proxy { label, .. } => format!("the {label}"),
    };
    let seed = options
        .seed
        .map_or_else(|| "fresh randomness".to_string(), |s| format!("seed {s}"));
    let ratios = r.ratio_texts();
    let notes: Vec<String> = frontier
        .levels
        .iter()
        .zip(&ratios)
        .map(|(level, ratio)| {
            format!(
                "Recommended by coco preview --sweep on {on} ({} trials per plan, {seed}): {}; {level}'s error {ratio} bottom-up's.",
                frontier.trials, r.reason
            )
        })
        .collect();
    std::fs::write(path, plan.to_plan_file(&[], &notes))
        .with_context(|| format!("cannot write {}", super::shown(path.display())))?;
    Ok(())
}

/// `--shares`: a share of the plan's total for the leaves, above 0 and below 1 (every
/// level needs some budget).
fn share_below_one(text: &str) -> Result<Share, String> {
    let share = Share::parse(text).map_err(|e| e.to_string())?;
    if share >= Share::from_ratio(1, 1).expect("1") {
        return Err(format!(
            "share {text:?} is not below 1: every level needs some budget"
        ));
    }
    Ok(share)
}

/// `--weights`: how much a level's error counts, a finite number of at least 0.
fn weight(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(w) if w.is_finite() && w >= 0.0 => Ok(w),
        _ => Err("expected a weight: a finite number of at least 0, e.g. 1 or 0.5".into()),
    }
}

/// `--max-ratio`: how many times bottom-up's error a level may have, at least 1.
fn at_least_one_times(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 1.0 => Ok(x),
        _ => Err("expected a finite number of at least 1 (times bottom-up's error)".into()),
    }
}

/// `--trials`: a whole number of trials, at least 1 (0 is refused, never run as 1).
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("expected at least 1 trial".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a whole number of trials, at least 1".into()),
    }
}
