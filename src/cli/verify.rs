//! `coco verify OUT [--dataset DIR]`: a release against its manifest and the ledger.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use coco::data::Dataset;

use super::exit::{ExitWith, codes};
use super::shown;

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
    let ledger = super::open_ledger()?;
    let dataset = dataset.as_deref().map(Dataset::load).transpose()?;
    let v = coco::release::outputs::verify::verify_release(out, &ledger, dataset.as_ref())?;
    if json {
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "CONFIDENTIAL where it shows the ledger's record: digests and directories of the dataset drawn from"
        );
        println!(
            "release {} (manifest version {})",
            shown(&v.release),
            v.manifest_version
        );
        let ok = v.files.iter().filter(|f| f.state == "ok").count();
        println!("files: {ok} of {} match manifest.json", v.files.len());
        match &v.recorded {
            Some(r) => {
                println!(
                    "ledger {}: draw {} {} at {}, total {}",
                    shown(&v.ledger),
                    shown(&v.ledger_entry),
                    r.status.label(),
                    r.time,
                    match (&r.total_epsilon, &r.total_rho) {
                        (Some(e), _) => format!("ε = {e}"),
                        (None, Some(rho)) => format!("ρ = {rho}"),
                        (None, None) => "unknown".into(),
                    }
                );
                println!(
                    "  drawn from (confidential): {}, content {}",
                    shown(&r.dataset.dir),
                    shown(r.dataset.key())
                );
                for i in &r.dataset.inputs {
                    println!("    {}  sha256 {}", shown(&i.path), shown(&i.sha256));
                }
            }
            None => println!(
                "ledger {}: draw {} not found",
                shown(&v.ledger),
                shown(&v.ledger_entry)
            ),
        }
        if let Some(d) = &v.dataset {
            let yes_no = |b: Option<bool>| match b {
                Some(true) => "yes",
                Some(false) => "no",
                None => "not recorded",
            };
            println!(
                "dataset {}: same content {}, same input files {}",
                shown(&d.directory),
                yes_no(d.same_content),
                yes_no(d.same_inputs)
            );
            for (file, checks) in [
                ("counts.csv", &d.counts),
                ("counts.parquet", &d.counts_parquet),
            ] {
                if let Some(c) = checks {
                    println!(
                        "{file} against its public group counts: integral {}, nonnegative {}, group totals {}, consistent {}, within K {}",
                        c.integral, c.nonnegative, c.group_totals, c.consistent, c.within_max_size
                    );
                }
            }
        }
        for p in &v.problems {
            println!("problem: {}", shown(p));
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
