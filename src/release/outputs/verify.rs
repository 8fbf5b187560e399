//! `coco verify OUT`: is a release directory what coco wrote, and where did it come from?
//!
//! The published files carry nothing computed from the confidential data but the noisy
//! tables, so provenance is checked against the agency's ledger: the manifest names its
//! ledger entry, which records the dataset (content digest, input files' SHA-256, the
//! directory). The check reads:
//!
//! - `manifest.json` against the SHA-256 the ledger's `written` line recorded (lines
//!   written before coco recorded it: the manifest's ε, randomness and levels against
//!   the line's), so an edited manifest does not verify;
//! - every output file against the digest in `manifest.json` (and no file besides),
//!   reading only regular files inside the release: a listed path that is absolute,
//!   climbs out with `..`, or is a symbolic link or a device is refused unread;
//! - the wide tables (`tables/*.csv`, `tables/*.parquet`) against `counts.csv` (or
//!   `counts.parquet`), row by row, and `counts.parquet` against `counts.csv` when both
//!   are there: a table changed and re-hashed in the manifest disagrees with the counts;
//! - the margins' files read back the same way: `uncertainty.*` and `summary.*` against
//!   the counts, `measurements.jsonl` against the manifest's plan and the tables'
//!   regions ([`crate::release::outputs::margins::verify`]), so that none of the
//!   published files is checked by its digest alone;
//! - `README.txt` (the codebook) against what coco writes for this manifest;
//! - the wide tables' margins (`tables/<i>-<level>-margins.*`) against the wide tables,
//!   and the replicate tables (`replicates.*`) against the tables' regions, `K` and the
//!   manifest's number of replicates;
//! - the ledger entry: it exists, says `written` to this directory, with the manifest's
//!   ε and randomness (a seeded draw never verifies as publishable, whatever the
//!   manifest says), and the ledger holds what its anchor records;
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

use crate::data::{Dataset, hex};
use crate::noise::Randomness;
use crate::privacy::{Definition, Epsilon, Loss, Rho};
use crate::release::ledger::{
    DatasetRecord, Ledger, LedgerEntry, LedgerError, Status, canonical_dir,
};
use crate::release::outputs::manifest::{FileDigest, Manifest};
use crate::release::outputs::parquet as parquet_out;
use crate::release::outputs::read_back::{ReadCounts, read_counts};
use crate::release::outputs::read_rows::{Cells, CountSource, WideSource};
use crate::release::pipeline::checks::Checks;

/// The name of the `<meta>` by which a report of coco (`coco report`) says which kind
/// it is: an internal one (`content="internal"`) is refused in a release directory.
pub const REPORT_KIND_META: &str = "coco-report";

/// The largest `manifest.json` read (a manifest coco writes is a few kilobytes, plus
/// about 100 bytes per level).
const MAX_MANIFEST_BYTES: u64 = 16 << 20;

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
    /// `ok`, `changed` (another digest), `missing`, or `refused` (not a regular file
    /// inside the release: not read).
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
    /// A pure draw's total ε (absent for a zCDP draw).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_epsilon: Option<String>,
    /// A zCDP draw's total ρ (absent for a pure draw).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_rho: Option<String>,
    /// How the draw's noise was keyed, as the ledger recorded it.
    pub randomness: Randomness,
    /// The SHA-256 of `manifest.json` the `written` line recorded (absent in older
    /// lines).
    pub manifest_sha256: Option<String>,
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

/// Whether `rel` (a path `manifest.json` lists) names a regular file inside `out`:
/// relative, of plain names only (no `..`, no root, no `\\`), through real
/// directories (no symbolic link on the way) to a regular file (not a link, a device
/// or a pipe). Why not, otherwise. A missing file is inside (and reported missing).
fn inside(out: &Path, rel: &str) -> Result<(), String> {
    use std::path::Component;
    let path = Path::new(rel);
    if rel.is_empty()
        || rel.contains('\\')
        || !path.components().all(|c| matches!(c, Component::Normal(_)))
    {
        return Err(
            "not a plain path inside the release (absolute, with \"..\" or \".\", or empty)".into(),
        );
    }
    let parts: Vec<Component> = path.components().collect();
    let mut at = out.to_path_buf();
    for (i, part) in parts.iter().enumerate() {
        at.push(part);
        let meta = match std::fs::symlink_metadata(&at) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(format!("cannot be examined: {e}")),
        };
        let last = i + 1 == parts.len();
        if meta.file_type().is_symlink() {
            return Err("a symbolic link: only files inside the release are read".into());
        }
        if !last && !meta.is_dir() {
            return Err("a part of its path is not a directory".into());
        }
        if last && !meta.is_file() {
            return Err("not a regular file (a directory, a device or a pipe)".into());
        }
    }
    Ok(())
}

/// `manifest.json`'s bytes, if it is a regular file of a manifest's size.
fn read_manifest(path: &Path) -> Result<Vec<u8>, VerifyError> {
    use std::io::Read;
    let io = |source| VerifyError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::symlink_metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(VerifyError::Manifest {
            path: path.to_path_buf(),
            problem: "not a regular file (a symbolic link, a directory or a device): coco reads only regular files inside a release".into(),
        });
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_MANIFEST_BYTES + 1).read_to_end(&mut bytes))
        .map_err(io)?;
    if bytes.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(VerifyError::Manifest {
            path: path.to_path_buf(),
            problem: format!("larger than {MAX_MANIFEST_BYTES} bytes: not a manifest coco wrote"),
        });
    }
    Ok(bytes)
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

/// Whether `path` is an HTML file that says it is an internal report (its `<meta
/// name="coco-report" content="internal">`, in the head: the first 64 KiB are read).
fn is_internal_report(path: &Path) -> bool {
    use std::io::Read;
    let is_html = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"));
    let mut head = Vec::new();
    is_html
        && std::fs::File::open(path)
            .and_then(|f| f.take(64 << 10).read_to_end(&mut head))
            .is_ok()
        && String::from_utf8_lossy(&head).contains(&format!(
            "<meta name=\"{REPORT_KIND_META}\" content=\"internal\">"
        ))
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
    let manifest_bytes = read_manifest(&manifest_path)?;
    let manifest_sha256 = hex(&Sha256::digest(&manifest_bytes));
    let manifest: Manifest =
        serde_json::from_slice(&manifest_bytes).map_err(|e| VerifyError::Manifest {
            path: manifest_path.clone(),
            problem: e.to_string(),
        })?;
    let mut problems = Vec::new();
    // Only regular files inside the release are read.
    let refused: Vec<(String, String)> = manifest
        .outputs
        .iter()
        .filter_map(|f| inside(out, &f.path).err().map(|why| (f.path.clone(), why)))
        .collect();
    for (path, why) in &refused {
        problems.push(format!(
            "manifest.json lists {}: {why}; not read",
            crate::data::text::escape_controls(path)
        ));
    }
    let readable = |path: &str| !refused.iter().any(|(p, _)| p == path);

    // `counts.csv` against the dataset, read once: hashed on the way, while the other
    // files are hashed and the dataset's content digest computed beside it.
    // Releases written before Parquet always list `counts.csv`; a Parquet release lists
    // `counts.parquet`, checked the same way.
    let lists = |name: &str| manifest.outputs.iter().any(|f| f.path == name) && readable(name);
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
                            if !readable(&f.path) {
                                return Some(Err(std::io::Error::other("refused")));
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
            _ if !readable(&f.path) => "refused",
            Ok(d) if d == f.sha256 => "ok",
            Ok(_) => "changed",
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "missing",
            Err(e) => return Err(io(&path)(e)),
        };
        if state != "ok" && state != "refused" {
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
        if is_internal_report(&out.join(p)) {
            problems.push(format!(
                "{p}: an internal report of coco (CONFIDENTIAL: the ledger, previews): it must \
                 never be in a release directory; move it out before publishing"
            ));
        } else {
            problems.push(format!("{p}: not listed in manifest.json"));
        }
    }
    problems.extend(unmeasured_levels(&manifest));
    // The tables against the counts.
    problems.extend(cross_check(out, &manifest, &readable));
    // [uncertainty] The margins' files, each in the form it was written: `uncertainty.*`
    // and `summary.*` against the counts, `measurements.jsonl` against the manifest's
    // plan and the tables' regions (`src/release/outputs/margins/verify/`).
    problems.extend(crate::release::outputs::margins::verify::check(
        out, &manifest, &readable,
    ));
    problems.extend(check_codebook(out, &manifest, &readable));

    // The ledger (the anchor read first: see `Ledger::read_anchored`).
    let (read, anchor) = ledger.read_anchored()?;
    for p in read.problems.iter().take(3) {
        problems.push(format!(
            "the ledger {} has a problem at line {}: {}",
            ledger.path().display(),
            p.line,
            p.message
        ));
    }
    if let Err(e) = ledger.check_anchor(&read, anchor.as_ref()) {
        problems.push(e.to_string());
    }
    let entry = read
        .draws()
        .into_iter()
        .find(|e| e.id == manifest.ledger_entry)
        .cloned();
    let seeded = manifest.reproducible
        || !manifest.for_publication
        || entry
            .as_ref()
            .is_some_and(|e| e.randomness.is_reproducible());
    if seeded {
        problems.push(
            "a seeded release: anyone who knows the seed can regenerate its noise; it must never be published"
                .into(),
        );
    }
    if let Some(e) = &entry {
        problems.extend(against_ledger(e, &manifest, &manifest_sha256));
    }
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
            match &e.total {
                Loss::Pure(recorded) => {
                    match Epsilon::parse_unbounded(&manifest.total_epsilon_exact) {
                        Ok(m) if &m == recorded => {}
                        _ => problems.push(format!(
                            "manifest.json says total ε = {} but the ledger recorded {recorded}",
                            manifest.total_epsilon_exact
                        )),
                    }
                }
                Loss::Zcdp(recorded) => {
                    let said = |r: &Option<String>| {
                        r.as_deref()
                            .and_then(|t| Rho::parse_unbounded(t).ok())
                            .is_some_and(|m| &m == recorded)
                    };
                    if !said(&manifest.total_rho)
                        || !said(&manifest.privacy.rho)
                        || manifest.privacy.definition != Definition::Zcdp
                    {
                        problems.push(format!(
                            "manifest.json says {} (total_rho {}, privacy.rho {}) but the ledger recorded a ρ-zCDP draw of ρ = {recorded}",
                            manifest.privacy.definition,
                            manifest.total_rho.as_deref().unwrap_or("absent"),
                            manifest.privacy.rho.as_deref().unwrap_or("absent"),
                        ));
                    }
                }
            }
            Some(Recorded {
                time: crate::release::ledger::format_time(e.time),
                status: e.status,
                output: e.output.clone(),
                total_epsilon: e.total.as_pure().map(|t| t.to_string()),
                total_rho: e.total.as_zcdp().map(|r| r.to_string()),
                randomness: e.randomness,
                manifest_sha256: e.manifest_sha256.clone(),
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

/// `README.txt`, where the manifest lists it: exactly the codebook coco writes for this
/// manifest ([`crate::release::outputs::codebook::render`]), so that an edited codebook
/// is found even where the ledger cannot vouch for the manifest's digests. Only a
/// release written by this version of coco is compared (another version words its
/// codebook otherwise); its digest is checked either way.
fn check_codebook(out: &Path, manifest: &Manifest, readable: &dyn Fn(&str) -> bool) -> Vec<String> {
    use crate::release::outputs::codebook::{FILE, render};
    if !manifest.outputs.iter().any(|f| f.path == FILE)
        || !readable(FILE)
        || manifest.coco_version != env!("CARGO_PKG_VERSION")
    {
        return Vec::new();
    }
    match std::fs::read(out.join(FILE)) {
        Ok(bytes) if bytes == render(manifest).as_bytes() => Vec::new(),
        Ok(_) => vec![format!(
            "{FILE}: not the codebook coco writes for this manifest.json (edited, or written for another release)"
        )],
        // Reported as missing with the digests.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => vec![format!("{FILE}: cannot be read: {e}")],
    }
}

/// Where the manifest disagrees with the ledger's line of its draw: its digest (when
/// the line recorded it), the randomness, and the levels' ε and methods.
fn against_ledger(e: &LedgerEntry, manifest: &Manifest, sha256: &str) -> Vec<String> {
    let mut problems = Vec::new();
    match &e.manifest_sha256 {
        Some(recorded) if recorded != sha256 => problems.push(format!(
            "manifest.json was changed since it was written: its SHA-256 is {sha256}, the ledger's line of draw {} records {recorded}",
            e.id
        )),
        Some(_) => {}
        None if e.status == Status::Written => problems.push(format!(
            "the ledger's line of draw {} (written by an older coco) records no digest of manifest.json: only its ε, randomness and levels are checked against the ledger",
            e.id
        )),
        None => {}
    }
    if manifest.randomness.source != e.randomness {
        problems.push(format!(
            "manifest.json says the noise was keyed {} but the ledger recorded {}",
            describe(manifest.randomness.source),
            describe(e.randomness)
        ));
    }
    if !e.levels.is_empty() {
        // The ledger lists the levels that spent budget: the manifest's measured ones.
        let measured: Vec<_> = manifest.levels.iter().filter(|l| l.measured).collect();
        let same = e.levels.len() == measured.len()
            && e.levels.iter().zip(measured).all(|(a, b)| {
                a.name == b.name
                    && a.method == b.method
                    && match a.budget() {
                        Loss::Pure(e) => {
                            Epsilon::parse_unbounded(&b.epsilon_exact).is_ok_and(|x| &x == e)
                        }
                        Loss::Zcdp(r) => b
                            .rho
                            .as_deref()
                            .and_then(|t| Rho::parse_unbounded(t).ok())
                            .is_some_and(|x| &x == r),
                    }
            });
        if !same {
            problems.push(
                "manifest.json's levels (names, ε, methods) are not the ones the ledger recorded"
                    .into(),
            );
        }
    }
    problems
}

/// Where the manifest's levels contradict what it says of their measurement: a level
/// marked `"measured": false` states a budget of 0 and no noise samples, a measured one
/// a positive budget, and the leaf level (the last) is measured, since an unmeasured
/// region is estimated from its children.
fn unmeasured_levels(manifest: &Manifest) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, level) in manifest.levels.iter().enumerate() {
        let budget = level.rho.as_deref().unwrap_or(&level.epsilon_exact);
        let zero = budget.trim() == "0";
        match (level.measured, zero) {
            (false, false) => problems.push(format!(
                "manifest.json: level {:?} is marked \"measured\": false but states a budget of {budget:?}: expected \"0\"",
                level.name
            )),
            (true, true) => problems.push(format!(
                "manifest.json: level {:?} states a budget of 0 without \"measured\": false",
                level.name
            )),
            _ => {}
        }
        if !level.measured && level.noise_samples != 0 {
            problems.push(format!(
                "manifest.json: level {:?} is marked \"measured\": false but states {} noise samples: expected 0",
                level.name, level.noise_samples
            ));
        }
        if !level.measured && i + 1 == manifest.levels.len() {
            problems.push(format!(
                "manifest.json: the leaf level {:?} is marked \"measured\": false: the leaves must be measured",
                level.name
            ));
        }
    }
    problems
}

fn describe(r: Randomness) -> String {
    match r {
        Randomness::Os => "from the operating system".into(),
        Randomness::Seeded { seed } => format!("from seed {seed} (reproducible)"),
    }
}

/// The counts grouped by region: (level, region, cells), in the file's order.
struct Regions {
    source: CountSource,
    next: Option<(String, String, u64, u64)>,
    failed: Option<String>,
}

impl Regions {
    fn new(mut source: CountSource) -> Regions {
        let mut failed = None;
        let next = match source.row() {
            Some(Ok(r)) => Some(r),
            Some(Err(e)) => {
                failed = Some(e);
                None
            }
            None => None,
        };
        Regions {
            source,
            next,
            failed,
        }
    }

    fn peek_level(&self) -> Option<&str> {
        self.next.as_ref().map(|r| r.0.as_str())
    }

    fn region(&mut self) -> Option<(String, String, Cells)> {
        let (level, region, size, count) = self.next.take()?;
        let mut cells = [0u64; 9];
        let add = |cells: &mut Cells, size: u64, count: u64| {
            cells[0] = cells[0].saturating_add(count);
            let i = 1 + size.min(7) as usize;
            cells[i] = cells[i].saturating_add(count);
        };
        add(&mut cells, size, count);
        loop {
            match self.source.row() {
                Some(Ok(r)) if r.0 == level && r.1 == region => add(&mut cells, r.2, r.3),
                Some(Ok(r)) => {
                    self.next = Some(r);
                    break;
                }
                Some(Err(e)) => {
                    self.failed = Some(e);
                    break;
                }
                None => break,
            }
        }
        Some((level, region, cells))
    }
}

/// At most this many disagreements are listed per file, then a count.
const SHOWN: usize = 3;

/// The wide tables against the counts (`counts.csv`, else `counts.parquet`), and
/// `counts.parquet` against `counts.csv` when both are there: every disagreement.
fn cross_check(out: &Path, manifest: &Manifest, readable: &dyn Fn(&str) -> bool) -> Vec<String> {
    let lists = |name: &str| manifest.outputs.iter().any(|f| f.path == name) && readable(name);
    let counts = ["counts.csv", "counts.parquet"]
        .into_iter()
        .find(|n| lists(n));
    let Some(counts) = counts else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    if counts == "counts.csv" && lists("counts.parquet") {
        problems.extend(same_counts(out));
    }
    let mut regions = match CountSource::open(&out.join(counts)) {
        Ok(source) => Regions::new(source),
        Err(e) => return vec![format!("{counts} cannot be read to check the tables: {e}")],
    };
    for (i, level) in manifest.levels.iter().enumerate() {
        let tables: Vec<String> = ["csv", "parquet"]
            .into_iter()
            .map(|ext| crate::release::outputs::rows::table_file(i, &level.name, ext))
            .filter(|t| lists(t))
            .collect();
        // The first table against this level's regions in the counts, streamed (the
        // table lists them in the same order, with the regions the counts leave out
        // for having no group); a second (Parquet beside CSV) against the first.
        if let Some(table) = tables.first() {
            let found = match WideSource::open(&out.join(table)) {
                Ok(rows) => compare_table(rows, &mut || {
                    (regions.peek_level() == Some(level.name.as_str()))
                        .then(|| regions.region().map(|(_, r, c)| (r, c)))
                        .flatten()
                }),
                Err(e) => vec![format!("cannot be read: {e}")],
            };
            problems.extend(summarise(table, counts, found));
        }
        if let [first, second] = tables.as_slice() {
            problems.extend(summarise(second, first, same_tables(out, first, second)));
        }
        // A level without tables, or what a failed comparison left: skipped.
        while regions.peek_level() == Some(level.name.as_str()) {
            regions.region();
        }
    }
    if let Some(e) = regions.failed.take() {
        problems.push(format!("{counts} cannot be read to the end: {e}"));
    } else if let Some((level, region, _)) = regions.region() {
        problems.push(format!(
            "{counts} holds level {level:?} (region {region}) after the manifest's levels, or out of order"
        ));
    }
    problems
}

/// One sentence for the disagreements of `file` with `with`, if any.
fn summarise(file: &str, with: &str, found: Vec<String>) -> Option<String> {
    if found.is_empty() {
        return None;
    }
    let n = found.len();
    let shown: Vec<String> = found.into_iter().take(SHOWN).collect();
    Some(format!(
        "{file} disagrees with {with}: {}{}",
        shown.join("; "),
        if n > SHOWN {
            format!(" and {} more", n - SHOWN)
        } else {
            String::new()
        }
    ))
}

/// Two tables of one level (CSV and Parquet), row by row.
fn same_tables(out: &Path, a: &str, b: &str) -> Vec<String> {
    let (mut x, mut y) = match (
        WideSource::open(&out.join(a)),
        WideSource::open(&out.join(b)),
    ) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => return vec![format!("cannot be read: {e}")],
    };
    let mut row = 0u64;
    loop {
        row += 1;
        match (x.row(), y.row()) {
            (None, None) => return Vec::new(),
            (Some(Ok(p)), Some(Ok(q))) if p == q => {}
            (Some(Err(e)), _) | (_, Some(Err(e))) => return vec![format!("cannot be read: {e}")],
            _ => return vec![format!("row {row} differs")],
        }
    }
}

/// A table's rows against its level's regions in the counts (`next` gives them in
/// order); the disagreements found.
fn compare_table(
    mut rows: WideSource,
    next: &mut dyn FnMut() -> Option<(String, Cells)>,
) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = next();
    loop {
        let row = match rows.row() {
            None => break,
            Some(Err(e)) => {
                found.push(format!("cannot be read: {e}"));
                return found;
            }
            Some(Ok(row)) => row,
        };
        let (region, cells) = row;
        match &pending {
            Some((r, c)) if *r == region => {
                if *c != cells {
                    found.push(format!(
                        "region {region}: groups and sizes {cells:?} in the table, {c:?} in the counts"
                    ));
                }
                pending = next();
            }
            // A region without groups has no rows in the counts.
            _ if cells == [0; 9] => {}
            _ => found.push(format!(
                "region {region}: {cells:?} in the table, no such row in the counts (or out of order)"
            )),
        }
    }
    if let Some((r, _)) = pending {
        found.push(format!("region {r}: in the counts, not in the table"));
    }
    while let Some((r, _)) = next() {
        found.push(format!("region {r}: in the counts, not in the table"));
    }
    found
}

/// `counts.parquet` against `counts.csv`, row by row.
fn same_counts(out: &Path) -> Vec<String> {
    let open = |n: &str| CountSource::open(&out.join(n));
    let (mut a, mut b) = match (open("counts.csv"), open("counts.parquet")) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return vec![format!("the counts cannot be read: {e}")],
    };
    let mut row = 0u64;
    loop {
        row += 1;
        match (a.row(), b.row()) {
            (None, None) => return Vec::new(),
            (Some(Ok(x)), Some(Ok(y))) if x == y => {}
            (Some(Err(e)), _) | (_, Some(Err(e))) => {
                return vec![format!("the counts cannot be read: {e}")];
            }
            _ => {
                return vec![format!(
                    "counts.parquet disagrees with counts.csv at row {row}"
                )];
            }
        }
    }
}
