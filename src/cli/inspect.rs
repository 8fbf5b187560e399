//! `coco inspect DIR [--json]`: a dataset's summary (confidential).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use coco::data::Dataset;
use coco::inspect::Summary;

#[derive(Args, Debug)]
pub struct InspectArgs {
    /// Dataset directory (hierarchy.csv plus groups in one of three forms).
    pub dir: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: InspectArgs) -> Result<()> {
    let dataset = Dataset::load(&args.dir)?;
    for w in coco::warning::Warning::of_dataset(&dataset) {
        eprintln!("warning: {w}");
    }
    let summary = Summary::of(&dataset);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", super::text::summary(&summary));
    }
    Ok(())
}
