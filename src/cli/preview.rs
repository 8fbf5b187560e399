//! `coco preview DIR --config PLAN`: mean error per level over trials (confidential),
//! or with `--sweep` the frontier over the leaves' share of ε.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use coco::data::Dataset;
use coco::preview::{self, PreviewOptions, PreviewProgress};
use coco::privacy::Epsilon;
use coco::tradeoff::{self, Priority, SweepProgress};

use super::load_plan;
use super::progress::StderrProgress;

#[derive(Args, Debug)]
pub struct PreviewArgs {
    /// Dataset directory.
    pub dir: PathBuf,
    /// Release plan (TOML).
    #[arg(long)]
    pub config: PathBuf,
    /// Number of independent trials.
    #[arg(long, default_value_t = 10)]
    pub trials: usize,
    /// Seed for reproducible trials (default: fresh randomness).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Also run the other consistency steps and merge rules on the same measurements.
    #[arg(long)]
    pub compare: bool,
    /// Show the frontier instead: per-level error as the leaves' share of the plan's
    /// total ε grows, beside bottom-up, and recommend an allocation.
    #[arg(long)]
    pub sweep: bool,
    /// With --sweep: the leaves' shares to try (e.g. 1/3,0.5,0.8).
    #[arg(long, value_delimiter = ',', requires = "sweep")]
    pub shares: Option<Vec<String>>,
    /// With --sweep: recommend by weights per level on error relative to bottom-up (root first).
    #[arg(
        long,
        value_delimiter = ',',
        requires = "sweep",
        conflicts_with = "max_ratio"
    )]
    pub weights: Option<Vec<f64>>,
    /// With --sweep: recommend the best allocation with no level worse than this many times bottom-up.
    #[arg(long, requires = "sweep")]
    pub max_ratio: Option<f64>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: PreviewArgs) -> Result<()> {
    if args.sweep {
        sweep(args)
    } else {
        preview(
            &args.dir,
            &args.config,
            args.trials,
            args.seed,
            args.compare,
            args.json,
        )
    }
}

fn preview(
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

fn sweep(args: PreviewArgs) -> Result<()> {
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
