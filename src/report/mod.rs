//! `coco report`: a release as one self-contained HTML page a reviewer opens offline in
//! any browser, or prints.
//!
//! - The **public** report is built from a release's published files only
//!   ([`release_files`]): what was released, the privacy definition and budget per
//!   level, the plan and its reasons, the consistency step, the checks, and per level
//!   the largest region's counts with their margins of error, the widths of the
//!   intervals and the summary statistics ([`public`]). Like the files it is built from
//!   it may be published: it reads no dataset and no ledger.
//! - The **internal** report adds what only the agency may see ([`internal`]): the
//!   ledger's history of the dataset against its cap ([`ledger_history`], failing
//!   closed as every reading of the ledger does) and a saved preview or search
//!   ([`preview_file`]). Every page says CONFIDENTIAL, in print too.
//!
//! A page is inline HTML, CSS and SVG ([`html`], [`chart`]): no script, no font, no
//! request of any kind (its own Content-Security-Policy forbids them), every chart with
//! a table of its figures and a text alternative. Neither report may be written inside
//! a release directory ([`place`]). The core never imports the terminal UI.

pub mod chart;
pub mod html;
pub mod internal;
pub mod ledger_history;
pub mod place;
pub mod preview_file;
pub mod public;
pub mod release_files;

use std::path::PathBuf;

use thiserror::Error;

use crate::release::ledger::LedgerError;
use crate::release::outputs::margins::published::PublishedError;

pub use html::Kind;
use ledger_history::LedgerHistory;
use preview_file::PreviewFile;
use release_files::ReleaseFacts;

/// A report that cannot be made.
#[derive(Debug, Error)]
pub enum ReportError {
    #[error(transparent)]
    Published(#[from] PublishedError),
    #[error("{path}: {problem}")]
    File { path: PathBuf, problem: String },
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error(
        "{ledger}: holds no draw {draw} (the release's manifest.json, \"ledger_entry\"): expected the ledger the release was drawn under (COCO_HOME)"
    )]
    NotInLedger { ledger: PathBuf, draw: String },
    #[error(
        "{path}: {problem}: expected the JSON that `coco preview … --json` writes (a preview, or a search with --sweep)"
    )]
    Preview { path: PathBuf, problem: String },
    #[error("{out}: inside the release directory {release} (it holds coco's manifest.json): {}", match kind {
        Kind::Internal => "an internal report is CONFIDENTIAL and would be published with the release; write it outside any release directory",
        Kind::Public => "coco verify refuses a file the manifest does not list; write the report beside the release directory",
    })]
    InsideRelease {
        out: PathBuf,
        release: PathBuf,
        kind: Kind,
    },
    #[error("{path}: cannot write it: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Who a report is for.
pub enum Audience {
    Public,
    Internal(Box<Internal>),
}

/// What the internal report adds.
pub struct Internal {
    pub ledger: LedgerHistory,
    pub preview: Option<PreviewFile>,
}

impl Audience {
    pub fn kind(&self) -> Kind {
        match self {
            Audience::Public => Kind::Public,
            Audience::Internal(_) => Kind::Internal,
        }
    }
}

/// The report of the release `facts` for `audience`, as a whole HTML page.
pub fn build(facts: &ReleaseFacts, audience: &Audience) -> String {
    let mut body = public::sections(facts, audience.kind());
    if let Audience::Internal(extra) = audience {
        body.push_str(&internal::sections(
            &facts.published.manifest,
            &extra.ledger,
            extra.preview.as_ref(),
        ));
    }
    html::page(audience.kind(), "Count-of-counts release: report", &body)
}
