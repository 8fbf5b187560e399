//! `coco gen PRESET --out DIR`: a synthetic dataset.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use coco::generate::{self, Preset};

use super::progress::Progress;

#[derive(Args, Debug)]
pub struct GenArgs {
    /// Which dataset to generate.
    #[arg(value_enum)]
    pub preset: Preset,
    /// Directory to write (created; must not hold files).
    #[arg(long)]
    pub out: PathBuf,
    /// Seed for the generator (the same seed gives the same files).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// For us-blocks: the share of each county's households kept, in (0, 1]; the
    /// tracts and blocks scale with them (0.01: about 80,000 blocks).
    #[arg(long, value_parser = scale, allow_negative_numbers = true)]
    pub scale: Option<f64>,
}

/// `--scale`: a share of the households above 0 and at most 1.
fn scale(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 1.0 => Ok(s),
        _ => Err("expected a share of the households above 0 and at most 1 (e.g. 0.01)".into()),
    }
}

pub fn run(args: GenArgs) -> Result<()> {
    let GenArgs {
        preset,
        out,
        seed,
        scale,
    } = args;
    let progress = Progress::new("gen");
    let mut progress_fn = |done: usize, total: usize| {
        progress.update(done as u64, total as u64, "counties");
    };
    let report = generate::generate_into(preset, &out, seed, scale, &mut progress_fn)
        .with_context(|| {
            format!(
                "could not generate {} into {}",
                preset
                    .to_possible_value()
                    .map(|v| v.get_name().to_string())
                    .unwrap_or_default(),
                super::shown(out.display())
            )
        })?;
    progress.finish();
    eprintln!(
        "wrote {} groups in {} leaves to {}",
        report.groups,
        report.leaves,
        super::shown(report.dir.display())
    );
    Ok(())
}
