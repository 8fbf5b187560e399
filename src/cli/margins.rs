//! `coco margins RELEASE_DIR --level LEVEL --sizes A..B [--share [--occupied]]
//! [--regions FILE]`: the number (or share) of groups whose size is in a range, per
//! region of a level or over a set of its regions, with its interval, as CSV on
//! standard output. Reads the published files only (a data user's download): no
//! dataset, no ledger, no ε.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use coco::release::margins::Confidence;
use coco::release::margins::summary::{Denominator, SizeRange, Stat};
use coco::release::margins::sums::{self, Query, Regions, SumsOptions};
use coco::release::outputs::margins::published;

use super::exit::FlagError;

#[derive(Args, Debug)]
pub struct MarginsArgs {
    /// The release directory, as published (manifest.json, counts.csv or
    /// counts.parquet, the level tables).
    pub release: PathBuf,
    /// The level whose regions are asked of (a level name in manifest.json).
    #[arg(long)]
    pub level: String,
    /// Group sizes: A..B (A to B, both included), A.. (A up to the release's K) or A
    /// (one size).
    #[arg(long, value_name = "A..B")]
    pub sizes: String,
    /// The share of the region's groups instead of their number (over all its groups,
    /// the public G, size-0 groups included).
    #[arg(long)]
    pub share: bool,
    /// With --share: the share of the occupied groups (size 1 or more) instead.
    #[arg(long, requires = "share")]
    pub occupied: bool,
    /// One row for these regions taken together: a file of regions of LEVEL, one a
    /// line as counts.csv spells them (blank lines and # comments skipped).
    #[arg(long, value_name = "FILE")]
    pub regions: Option<PathBuf>,
    /// The intervals' confidence (default: the release's, the manifest's
    /// uncertainty.confidence; another gives intervals the release's files do not).
    #[arg(long)]
    pub confidence: Option<String>,
}

pub fn run(args: MarginsArgs) -> Result<()> {
    let release = published::read(&args.release)?;
    let h = &release.hierarchy;
    let k = release.manifest.max_size;
    let level = h.level_by_name(&args.level).ok_or_else(|| FlagError {
        flag: "--level".into(),
        message: format!(
            "{}: not a level of the release: expected one of {}",
            super::shown(&args.level),
            h.level_names().join(", ")
        ),
    })?;
    let range = SizeRange::parse(&args.sizes, k).map_err(|e| FlagError {
        flag: "--sizes".into(),
        message: e.to_string(),
    })?;
    let stat = match (args.share, args.occupied) {
        (false, _) => Stat::Groups(range),
        (true, false) => Stat::Share(range, Denominator::All),
        (true, true) => Stat::Share(range, Denominator::Occupied),
    };
    let confidence = match &args.confidence {
        None => release.confidence,
        Some(text) => Confidence::parse(text)
            .ok()
            .flatten()
            .ok_or_else(|| FlagError {
                flag: "--confidence".into(),
                message: format!(
                    "{}: expected a number strictly between 0 and 1",
                    super::shown(text)
                ),
            })?,
    };
    let regions = match &args.regions {
        None => Regions::Each,
        Some(file) => Regions::Set(sums::read_regions(file, h, level)?),
    };
    let answers = sums::margins(
        release.released(),
        &release.plan,
        release.public(),
        &SumsOptions {
            confidence,
            rule: release.rule,
            replicates: release.replicates,
            top_runs: release.top_runs.clone(),
            key: release.key,
        },
        &[Query {
            level,
            stat,
            regions,
        }],
    )?;
    let mut rows: Vec<(String, Option<_>)> = answers
        .into_iter()
        .flatten()
        .map(|a| (a.subject.label(h), a.interval))
        .collect();
    // The order of counts.csv: by display id.
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let mut w = csv::Writer::from_writer(std::io::stdout().lock());
    w.write_record(["level", "region", "statistic", "estimate", "lower", "upper"])?;
    let name = stat.name(k);
    for (region, interval) in rows {
        let values = match interval {
            Some(iv) => [iv.estimate, iv.lower, iv.upper].map(|v| sums::shown(stat, v)),
            None => Default::default(),
        };
        w.write_record(
            [args.level.as_str(), region.as_str(), name.as_str()]
                .into_iter()
                .chain(values.iter().map(String::as_str)),
        )?;
    }
    w.flush()?;
    Ok(())
}
