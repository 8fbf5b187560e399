//! `coco convert DIR --out OUT`: a copy of a dataset with its groups tables in Parquet.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// Dataset directory (checked as `coco inspect` checks it).
    pub dir: PathBuf,
    /// The new dataset directory (must not exist).
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(args: ConvertArgs) -> Result<()> {
    let converted = coco::convert::to_parquet(&args.dir, &args.out)?;
    println!(
        "{}: {} ({} regions, the same groups as {}; readable by its owner only: a copy of confidential data)",
        super::shown(args.out.display()),
        converted.files.join(", "),
        converted.dataset.hierarchy.len(),
        super::shown(args.dir.display())
    );
    Ok(())
}
