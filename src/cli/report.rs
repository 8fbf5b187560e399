//! `coco report RELEASE_DIR --out FILE.html [--internal [--preview FILE.json]]`: a
//! release as one self-contained HTML page ([`coco::report`]). The public report reads
//! the published files only; the internal one adds the ledger's history of the dataset
//! (read fail-closed) and a saved preview or search, and says CONFIDENTIAL on every page.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use coco::report::{self, Audience, ledger_history, preview_file, release_files};

use super::shown;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The release directory, as published (manifest.json, counts, uncertainty.csv,
    /// summary.csv, the level tables).
    pub release: PathBuf,
    /// The HTML file to write (refused inside a release directory: publish a public
    /// report beside the release).
    #[arg(long, value_name = "FILE.html")]
    pub out: PathBuf,
    /// The internal report: adds the ledger's history of the dataset against its cap
    /// and, with --preview, the plans compared. CONFIDENTIAL: never publish it.
    #[arg(long)]
    pub internal: bool,
    /// A saved preview or search (`coco preview … --json > FILE.json`, with or without
    /// --sweep) to show in the internal report.
    #[arg(long, value_name = "FILE.json", requires = "internal")]
    pub preview: Option<PathBuf>,
}

pub fn run(args: ReportArgs) -> Result<()> {
    let kind = if args.internal {
        report::Kind::Internal
    } else {
        report::Kind::Public
    };
    // Refused before anything is read: where it would go decides whether it may be made.
    if let Some(release) = report::place::release_around(&args.out) {
        return Err(report::ReportError::InsideRelease {
            out: args.out.clone(),
            release,
            kind,
        }
        .into());
    }
    let facts = release_files::read(&args.release)?;
    let audience = if args.internal {
        let ledger = super::open_ledger()?;
        let history = ledger_history::history(&ledger, &facts.published.manifest.ledger_entry)?;
        let preview = args
            .preview
            .as_deref()
            .map(preview_file::read)
            .transpose()?;
        Audience::Internal(Box::new(report::Internal {
            ledger: history,
            preview,
        }))
    } else {
        Audience::Public
    };
    let html = report::build(&facts, &audience);
    report::place::write(&args.out, kind, &html)?;
    match kind {
        report::Kind::Public => println!(
            "wrote {}: the public report of {} (from its published files only; publish it beside the release)",
            shown(args.out.display()),
            shown(args.release.display())
        ),
        report::Kind::Internal => println!(
            "wrote {}: CONFIDENTIAL internal report of {} (the ledger{}); keep it with the agency, never publish it",
            shown(args.out.display()),
            shown(args.release.display()),
            if args.preview.is_some() {
                " and the preview"
            } else {
                ""
            }
        ),
    }
    Ok(())
}
