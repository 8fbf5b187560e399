//! `coco verify OUT`: is a release directory what coco wrote, and where did it come from?
//!
//! The published files carry nothing computed from the confidential data but the noisy
//! tables, so provenance is checked against the agency's ledger: the manifest names its
//! ledger entry, which records the dataset (content digest, input files' SHA-256, the
//! directory). The check reads:
//!
//! - every output file against the digest in `manifest.json` (and no file besides);
//! - the ledger entry: it exists, says `written` to this directory, with the manifest's ε;
//! - with a dataset (`--dataset DIR`): its content and input files against the entry,
//!   and `counts.csv` against the dataset's public group counts (integral, nonnegative,
//!   totals = G, parents = Σ children, sizes ≤ K).
//!
//! It never changes anything, and it is for the agency: what it shows of the dataset
//! (digests, the directory) is as confidential as the ledger.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::checks::Checks;
use super::counts_in::{ReadCounts, read_counts};
use super::ledger::{DatasetRecord, Ledger, LedgerError, Status, canonical_dir};
use super::manifest::{FileDigest, Manifest};
use super::parquet_out;
use crate::data::Dataset;
use crate::privacy::Epsilon;

/// A release directory that cannot be verified at all.
#[derive(Debug, Error)]
pub enum VerifyError {
    #[error("{path}: cannot read it")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a coco manifest: {problem}")]
    Manifest { path: PathBuf, problem: String },
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

/// One output file against its digest in the manifest.
#[derive(Clone, Debug, Serialize)]
pub struct FileCheck {
    pub path: String,
    /// `ok`, `changed` (another digest) or `missing`.
    pub state: &'static str,
}

/// How a dataset given to the check compares with the one the ledger recorded.
#[derive(Clone, Debug, Serialize)]
pub struct DatasetMatch {
    pub directory: String,
    /// The leaves' count-of-counts are the same (the ledger's spending key).
    pub same_content: Option<bool>,
    /// Every input file is byte for byte the one recorded.
    pub same_inputs: Option<bool>,
    /// `counts.csv` checked against this dataset's public group counts.
    pub counts: Option<Checks>,
    /// `counts.parquet` checked the same way, for a release that holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts_parquet: Option<Checks>,
}

/// Everything `coco verify` found.
#[derive(Clone, Debug, Serialize)]
pub struct ReleaseVerification {
    pub release: String,
    pub manifest_version: u32,
    pub ledger: String,
    pub ledger_entry: String,
    /// A seeded release: reproducible by anyone with the seed, never for publication.
    pub seeded: bool,
    pub files: Vec<FileCheck>,
    /// Files in the directory that the manifest does not list.
    pub unlisted: Vec<String>,
    /// What the ledger recorded for the draw (confidential), if found.
    pub recorded: Option<Recorded>,
    pub dataset: Option<DatasetMatch>,
    /// Every reason the release does not verify; empty when it does.
    pub problems: Vec<String>,
}

/// The ledger's record of the release.
#[derive(Clone, Debug, Serialize)]
pub struct Recorded {
    pub time: String,
    pub status: Status,
    pub output: Option<String>,
    pub total_epsilon: String,
    pub dataset: DatasetRecord,
}

impl ReleaseVerification {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

fn sha256_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Every file under `dir`, as paths relative to it with `/` separators.
fn listed(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in std::fs::read_dir(dir.join(&rel))? {
            let entry = entry?;
            let name = rel.join(entry.file_name());
            if entry.file_type()?.is_dir() {
                stack.push(name);
            } else {
                out.push(name.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The first three problems of failed checks, and how many more there are.
fn first_problems(c: &Checks) -> String {
    let shown = c
        .problems
        .iter()
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    match c.problems.len() {
        n if n > 3 => format!("{shown} and {} more", n - 3),
        _ => shown,
    }
}

/// Verifies the release in `out` against its manifest, the ledger and, if given, the
/// dataset it was drawn from.
pub fn verify_release(
    out: &Path,
    ledger: &Ledger,
    dataset: Option<&Dataset>,
) -> Result<ReleaseVerification, VerifyError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| VerifyError::Io { path, source }
    };
    let manifest_path = out.join("manifest.json");
    let text = std::fs::read_to_string(&manifest_path).map_err(io(&manifest_path))?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| VerifyError::Manifest {
        path: manifest_path.clone(),
        problem: e.to_string(),
    })?;
    let mut problems = Vec::new();

    // `counts.csv` against the dataset, read once: hashed on the way, while the other
    // files are hashed and the dataset's content digest computed beside it.
    // Releases written before Parquet always list `counts.csv`; a Parquet release lists
    // `counts.parquet`, checked the same way.
    let lists = |name: &str| manifest.outputs.iter().any(|f| f.path == name);
    let (with_csv, with_parquet) = (lists("counts.csv"), lists("counts.parquet"));
    let counts_path = out.join("counts.csv");
    let parquet_path = out.join("counts.parquet");
    let hashed_with_counts = |f: &&FileDigest| dataset.is_some() && f.path == "counts.csv";
    let ((counts_read, parquet_read), (mut digests, content)) = rayon::join(
        || {
            let csv = dataset.filter(|_| with_csv || !with_parquet).map(|d| {
                let _phase = crate::timing::phase("verify: read counts.csv");
                read_counts(&counts_path, d.public(), manifest.max_size, true)
            });
            let parquet = dataset.filter(|_| with_parquet).map(|d| {
                let _phase = crate::timing::phase("verify: read counts.parquet");
                parquet_out::read_counts(&parquet_path, d.public(), manifest.max_size)
                    .map(|(checks, _)| checks)
            });
            (csv, parquet)
        },
        || {
            rayon::join(
                || {
                    let _phase = crate::timing::phase("verify: hash the other files");
                    manifest
                        .outputs
                        .par_iter()
                        .map(|f| {
                            if hashed_with_counts(&f) {
                                return None;
                            }
                            Some(sha256_file(&out.join(&f.path)))
                        })
                        .collect::<Vec<_>>()
                },
                || {
                    dataset.map(|d| {
                        let _phase = crate::timing::phase("verify: content digest");
                        d.content_digest()
                    })
                },
            )
        },
    );
    for (f, digest) in manifest.outputs.iter().zip(&mut digests) {
        if digest.is_none() {
            // Where the reading with the checks could not hash it, as any other file.
            *digest = Some(match &counts_read {
                Some(Ok(ReadCounts {
                    sha256: Some(d), ..
                })) => Ok(d.clone()),
                _ => sha256_file(&out.join(&f.path)),
            });
        }
    }

    // The files.
    let mut files = Vec::new();
    for (f, digest) in manifest.outputs.iter().zip(digests.into_iter().flatten()) {
        let path = out.join(&f.path);
        let state = match digest {
            Ok(d) if d == f.sha256 => "ok",
            Ok(_) => "changed",
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "missing",
            Err(e) => return Err(io(&path)(e)),
        };
        if state != "ok" {
            problems.push(format!("{}: {state} since it was written", f.path));
        }
        files.push(FileCheck {
            path: f.path.clone(),
            state,
        });
    }
    let unlisted: Vec<String> = listed(out)
        .map_err(io(out))?
        .into_iter()
        .filter(|p| p != "manifest.json" && !manifest.outputs.iter().any(|f| &f.path == p))
        .collect();
    for p in &unlisted {
        problems.push(format!("{p}: not listed in manifest.json"));
    }
    let seeded = manifest.reproducible || !manifest.for_publication;
    if seeded {
        problems.push(
            "a seeded release: anyone who knows the seed can regenerate its noise; it must never be published"
                .into(),
        );
    }

    // The ledger.
    let read = ledger.read()?;
    for p in read.problems.iter().take(3) {
        problems.push(format!(
            "the ledger {} has a problem at line {}: {}",
            ledger.path().display(),
            p.line,
            p.message
        ));
    }
    let entry = read
        .draws()
        .into_iter()
        .find(|e| e.id == manifest.ledger_entry)
        .cloned();
    let recorded = match &entry {
        None => {
            problems.push(format!(
                "draw {} is not in the ledger {} (another machine's or another COCO_HOME's ledger?)",
                manifest.ledger_entry,
                ledger.path().display()
            ));
            None
        }
        Some(e) => {
            if e.status != Status::Written {
                problems.push(format!(
                    "the ledger records draw {} as {}, not written",
                    e.id,
                    e.status.label()
                ));
            }
            let here = canonical_dir(out);
            if let Some(o) = &e.output
                && canonical_dir(Path::new(o)) != here
            {
                problems.push(format!(
                    "the ledger records draw {} as written to {o}, not to {here} (moved or copied since)",
                    e.id
                ));
            }
            match Epsilon::parse_unbounded(&manifest.total_epsilon_exact) {
                Ok(m) if m == e.total_epsilon => {}
                _ => problems.push(format!(
                    "manifest.json says total ε = {} but the ledger recorded {}",
                    manifest.total_epsilon_exact, e.total_epsilon
                )),
            }
            Some(Recorded {
                time: super::ledger::format_time(e.time),
                status: e.status,
                output: e.output.clone(),
                total_epsilon: e.total_epsilon.to_string(),
                dataset: e.dataset.clone(),
            })
        }
    };

    // The dataset.
    let (mut counts_read, mut parquet_read) = (counts_read, parquet_read);
    let dataset = dataset.map(|d| {
        let recorded = entry.as_ref().map(|e| &e.dataset);
        let same_content = recorded
            .and_then(|r| r.content.as_ref())
            .map(|c| Some(c) == content.as_ref());
        let same_inputs = recorded.filter(|r| !r.inputs.is_empty()).map(|r| {
            r.inputs.len() == d.inputs.len()
                && r.inputs
                    .iter()
                    .zip(&d.inputs)
                    .all(|(a, b)| a.path == b.path && a.sha256 == b.sha256)
        });
        match same_content {
            Some(false) => problems.push(format!(
                "{} holds other data than the release was drawn from",
                d.dir.display()
            )),
            None if recorded.is_some() => problems.push(
                "the ledger entry records no content digest to compare the dataset with".into(),
            ),
            _ => {}
        }
        let (counts, unreadable) = match counts_read.take() {
            Some(Ok(read)) => (Some(read.checks), None),
            Some(Err(e)) => (None, Some(e)),
            None => (None, None),
        };
        match &counts {
            // A Parquet-only release has no `counts.csv` to read.
            None if !with_csv && with_parquet => {}
            Some(c) if !c.passed() => problems.push(format!(
                "counts.csv fails its checks against {}: {}",
                d.dir.display(),
                first_problems(c)
            )),
            None => problems.push(match unreadable {
                Some(e) => format!("counts.csv cannot be read as CSV: {e}"),
                None => "counts.csv cannot be read as CSV".into(),
            }),
            _ => {}
        }
        let counts_parquet = match parquet_read.take() {
            Some(Ok(c)) => {
                if !c.passed() {
                    problems.push(format!(
                        "counts.parquet fails its checks against {}: {}",
                        d.dir.display(),
                        first_problems(&c)
                    ));
                }
                Some(c)
            }
            Some(Err(e)) => {
                problems.push(format!(
                    "counts.parquet cannot be read as coco's Parquet: {e}"
                ));
                None
            }
            None => None,
        };
        DatasetMatch {
            directory: canonical_dir(&d.dir),
            same_content,
            same_inputs,
            counts,
            counts_parquet,
        }
    });

    Ok(ReleaseVerification {
        release: canonical_dir(out),
        manifest_version: manifest.version,
        ledger: ledger.path().display().to_string(),
        ledger_entry: manifest.ledger_entry,
        seeded,
        files,
        unlisted,
        recorded,
        dataset,
        problems,
    })
}
