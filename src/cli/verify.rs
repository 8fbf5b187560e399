//! `coco verify OUT [--dataset DIR]`: a release against its manifest and the ledger.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use coco::data::Dataset;
use coco::release::ledger::Ledger;

use super::exit::{ExitWith, codes};

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The release directory (written by coco release).
    pub out: PathBuf,
    /// The dataset it should have been drawn from: its content and files are
    /// compared with the ledger's record, counts.csv with its public group counts.
    #[arg(long)]
    pub dataset: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: VerifyArgs) -> Result<()> {
    let VerifyArgs { out, dataset, json } = args;
    let out = out.as_path();
    let ledger = Ledger::open_default()?;
    let dataset = dataset.as_deref().map(Dataset::load).transpose()?;
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
        return Err(ExitWith(codes::CHECKS).into());
    }
    Ok(())
}
