//! Writing a release directory atomically.
//!
//! Everything is written into a temporary directory beside the destination: `counts.csv`
//! (the contract), census-style wide tables `tables/<level>.csv` (sizes 0–6 and "7 or
//! more"), and `manifest.json`. Each file is `fsync`ed; `counts.csv` is read back and
//! checked ([`check_counts`]); the draw is recorded in the ledger; then the directory is
//! renamed into place and its parent `fsync`ed. A crash at any point leaves either no
//! destination or a complete, verified one (plus at most a stray `.coco-tmp-*`
//! directory, which is never mistaken for a release).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};
use thiserror::Error;

use super::checks::{Checks, check_counts};
use super::ledger::{
    Ledger, LedgerEntry, LedgerError, LedgerLevel, LedgerLock, new_id, rfc3339, sync_dir,
};
use super::manifest::{self, FileDigest, Manifest};
use super::plan::{MaxSize, ReleasePlan};
use super::run::Draw;
use crate::data::{Dataset, NodeId, hex};
use crate::histogram::{Count, Size};

#[derive(Debug, Error)]
pub enum ExportError {
    #[error(
        "{path} already exists and is not an empty directory: choose a new output directory (a release is never written over another)"
    )]
    OutputExists { path: PathBuf },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the release failed its checks and was not written: {problems}")]
    ChecksFailed { problems: String, checks: Checks },
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Refuses an output path that exists and is not an empty directory.
pub fn check_output_free(out: &Path) -> Result<(), ExportError> {
    match std::fs::read_dir(out) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                Err(ExportError::OutputExists {
                    path: out.to_path_buf(),
                })
            } else {
                Ok(())
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) => Err(ExportError::OutputExists {
            path: out.to_path_buf(),
        }),
    }
}

/// A writer that hashes what passes through it.
struct Hashing<W: Write> {
    inner: W,
    hasher: Sha256,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Creates `path`, lets `fill` write it, `fsync`s it and returns its digest.
fn write_file(
    dir: &Path,
    name: &str,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<FileDigest, ExportError> {
    let path = dir.join(name);
    let file = File::create(&path).map_err(io(&path))?;
    let mut w = Hashing {
        inner: BufWriter::new(file),
        hasher: Sha256::new(),
    };
    fill(&mut w).map_err(io(&path))?;
    w.flush().map_err(io(&path))?;
    let Hashing { inner, hasher } = w;
    let file = inner.into_inner().map_err(|e| io(&path)(e.into_error()))?;
    file.sync_all().map_err(io(&path))?;
    Ok(FileDigest {
        path: name.to_string(),
        sha256: hex(&hasher.finalize()),
    })
}

/// Nodes of each level sorted by display id (the order of `counts.csv`).
fn sorted_levels(dataset: &Dataset) -> Vec<Vec<NodeId>> {
    let h = &dataset.hierarchy;
    h.levels()
        .map(|l| {
            let mut ids: Vec<NodeId> = h.level_nodes(l).collect();
            ids.sort_by(|a, b| h.node(*a).display_id.cmp(&h.node(*b).display_id));
            ids
        })
        .collect()
}

fn csv_error(e: csv::Error) -> std::io::Error {
    std::io::Error::other(e)
}

/// Writes `counts.csv`: `level,region,size,count`, zero counts left out, sorted by
/// level (root first), region, size.
fn write_counts(w: &mut dyn Write, dataset: &Dataset, draw: &Draw) -> std::io::Result<()> {
    let h = &dataset.hierarchy;
    let mut csv = csv::Writer::from_writer(w);
    csv.write_record(["level", "region", "size", "count"])
        .map_err(csv_error)?;
    for (level, ids) in h.levels().zip(sorted_levels(dataset)) {
        let name = h.level_name(level);
        for id in ids {
            let region = &h.node(id).display_id;
            for &(size, count) in draw.histograms[id.index()].pairs() {
                csv.write_record([name, region, &size.to_string(), &count.to_string()])
                    .map_err(csv_error)?;
            }
        }
    }
    csv.flush()
}

/// The census-style table of one level: one row per region, sizes 0–6 and "7 or more".
fn write_wide(
    w: &mut dyn Write,
    dataset: &Dataset,
    draw: &Draw,
    ids: &[NodeId],
) -> std::io::Result<()> {
    let h = &dataset.hierarchy;
    let mut csv = csv::Writer::from_writer(w);
    let mut header = vec![
        "region".to_string(),
        "name".to_string(),
        "groups".to_string(),
    ];
    header.extend((0..7).map(|s| format!("size_{s}")));
    header.push("size_7_or_more".into());
    csv.write_record(&header).map_err(csv_error)?;
    for &id in ids {
        let node = h.node(id);
        let hist = &draw.histograms[id.index()];
        let mut cells: [Count; 8] = [0; 8];
        for &(size, count) in hist.pairs() {
            cells[(size as usize).min(7)] += count;
        }
        let mut row = vec![
            node.display_id.clone(),
            node.name.clone().unwrap_or_default(),
            hist.groups().to_string(),
        ];
        row.extend(cells.iter().map(Count::to_string));
        csv.write_record(&row).map_err(csv_error)?;
    }
    csv.flush()
}

/// A file name for a level's table: its index and a safe version of its name.
fn table_name(index: usize, level: &str) -> String {
    let safe: String = level
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("tables/{index}-{safe}.csv")
}

/// Reads `counts.csv` back and checks it.
fn verify_counts(path: &Path, dataset: &Dataset, max_size: Size) -> Result<Checks, ExportError> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| io(path)(csv_error(e)))?;
    let mut rows: Vec<[String; 4]> = Vec::new();
    for record in reader.records() {
        let r = record.map_err(|e| io(path)(csv_error(e)))?;
        let field = |i: usize| r.get(i).unwrap_or("").to_string();
        rows.push([field(0), field(1), field(2), field(3)]);
    }
    Ok(check_counts(
        dataset.public(),
        rows.iter()
            .map(|r| [r[0].as_str(), r[1].as_str(), r[2].as_str(), r[3].as_str()]),
        max_size,
    ))
}

/// The ledger line for a draw.
pub fn ledger_entry(
    dataset: &Dataset,
    plan: &ReleasePlan,
    draw: &Draw,
    output: Option<&Path>,
    written: bool,
    tool: &str,
) -> LedgerEntry {
    LedgerEntry {
        levels: plan
            .levels
            .iter()
            .map(|l| LedgerLevel {
                name: l.name.clone(),
                epsilon: l.epsilon.to_string(),
                method: l.method.label(),
            })
            .collect(),
        max_size_epsilon: match &plan.max_size {
            MaxSize::Estimate { epsilon } => Some(epsilon.to_string()),
            MaxSize::Fixed(_) => None,
        },
        written,
        ..base_entry(
            dataset,
            draw.id.clone(),
            &draw.epsilon,
            draw.randomness,
            output,
            tool,
        )
    }
}

/// The ledger line for a run that spent only the budget of estimating `K` (it was then
/// refused, see [`super::run::RunError::ResourcesAfterMaxSize`]).
pub fn max_size_only_entry(
    dataset: &Dataset,
    epsilon: &crate::privacy::Epsilon,
    randomness: crate::noise::Randomness,
    output: Option<&Path>,
    tool: &str,
    note: String,
) -> LedgerEntry {
    LedgerEntry {
        max_size_epsilon: Some(epsilon.to_string()),
        note: Some(note),
        ..base_entry(dataset, new_id(), epsilon, randomness, output, tool)
    }
}

/// A ledger line with no levels, not written, no note: what both kinds of line share.
fn base_entry(
    dataset: &Dataset,
    id: String,
    epsilon: &crate::privacy::Epsilon,
    randomness: crate::noise::Randomness,
    output: Option<&Path>,
    tool: &str,
) -> LedgerEntry {
    LedgerEntry {
        id,
        time: rfc3339(SystemTime::now()),
        dataset: dataset.fingerprint(),
        dataset_dir: absolute(&dataset.dir).display().to_string(),
        levels: Vec::new(),
        max_size_epsilon: None,
        total_epsilon: epsilon.to_string(),
        output: output.map(|o| absolute(o).display().to_string()),
        written: false,
        randomness: match randomness {
            crate::noise::Randomness::Os => "os".into(),
            crate::noise::Randomness::Seeded { seed } => format!("seeded ({seed})"),
        },
        tool: tool.into(),
        note: None,
        pending: false,
    }
}

/// Records in the ledger the budget a failed draw had already spent, if any (today: a
/// private `K` estimated before a memory refusal). Returns whether a line was written.
/// The caller holds the ledger lock.
pub fn record_failed_draw(
    dataset: &Dataset,
    error: &super::run::RunError,
    randomness: crate::noise::Randomness,
    output: Option<&Path>,
    ledger: &Ledger,
    lock: &LedgerLock,
    tool: &str,
) -> Result<bool, LedgerError> {
    let Some(spent) = error.spent_before_failing() else {
        return Ok(false);
    };
    let entry = max_size_only_entry(
        dataset,
        spent,
        randomness,
        output,
        tool,
        "refused for lack of memory after K was estimated".to_string(),
    );
    ledger.append(lock, &entry)?;
    Ok(true)
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Writes a drawn release into `out` atomically and records it in the ledger (the
/// caller holds the ledger lock). A release that fails its checks is recorded as drawn
/// but not written, and nothing appears at `out`.
pub fn write_release(
    out: &Path,
    dataset: &Dataset,
    plan: &ReleasePlan,
    draw: &Draw,
    ledger: &Ledger,
    lock: &LedgerLock,
    tool: &str,
) -> Result<Manifest, ExportError> {
    check_output_free(out)?;
    let mut entry = ledger_entry(dataset, plan, draw, Some(out), true, tool);
    if !draw.checks.passed() {
        entry.written = false;
        entry.note = Some(format!(
            "failed checks: {}",
            draw.checks.problems.join("; ")
        ));
        ledger.append(lock, &entry)?;
        return Err(ExportError::ChecksFailed {
            problems: draw.checks.problems.join("; "),
            checks: draw.checks.clone(),
        });
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    let base = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "release".into());
    let tmp = parent.join(format!(
        ".{base}.coco-tmp-{}-{}",
        std::process::id(),
        new_id()
    ));
    std::fs::create_dir(&tmp).map_err(io(&tmp))?;
    let mut recorded = false;
    let result = (|| {
        let manifest = fill_release_dir(&tmp, dataset, plan, draw, &entry)?;
        sync_dir(&tmp).map_err(io(&tmp))?;
        // Record the draw before it becomes visible: a crash from here on leaves the
        // ledger counting it (the safe side), never a release the ledger does not know.
        ledger.append(lock, &entry)?;
        recorded = true;
        if out.exists() {
            // An empty directory: rename replaces it on Linux, but clear it explicitly.
            std::fs::remove_dir(out).map_err(io(out))?;
        }
        std::fs::rename(&tmp, out).map_err(io(out))?;
        sync_dir(&parent).map_err(io(&parent))?;
        Ok(manifest)
    })();
    if let Err(e) = &result {
        if tmp.exists() {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        if !recorded {
            // The draw happened: its ε is spent whether or not it was written.
            entry.written = false;
            entry.note = Some(format!("not written: {e}"));
            ledger.append(lock, &entry)?;
        }
    }
    result
}

fn fill_release_dir(
    tmp: &Path,
    dataset: &Dataset,
    plan: &ReleasePlan,
    draw: &Draw,
    entry: &LedgerEntry,
) -> Result<Manifest, ExportError> {
    let mut outputs = vec![write_file(tmp, "counts.csv", |w| {
        write_counts(w, dataset, draw)
    })?];
    let tables = tmp.join("tables");
    std::fs::create_dir(&tables).map_err(io(&tables))?;
    let h = &dataset.hierarchy;
    for ((level, ids), index) in h.levels().zip(sorted_levels(dataset)).zip(0..) {
        let name = table_name(index, h.level_name(level));
        outputs.push(write_file(tmp, &name, |w| {
            write_wide(w, dataset, draw, &ids)
        })?);
    }
    sync_dir(&tables).map_err(io(&tables))?;
    let checks = verify_counts(&tmp.join("counts.csv"), dataset, draw.max_size)?;
    if !checks.passed() {
        return Err(ExportError::ChecksFailed {
            problems: checks.problems.join("; "),
            checks,
        });
    }
    let mut manifest = manifest::build(dataset, plan, draw, entry.time.clone(), entry.id.clone());
    manifest.checks = (&checks).into();
    manifest.outputs = outputs;
    let json = serde_json::to_string_pretty(&manifest).expect("manifests serialise");
    write_file(tmp, "manifest.json", |w| {
        w.write_all(json.as_bytes())?;
        w.write_all(b"\n")
    })?;
    Ok(manifest)
}

/// Records a draw before anyone sees it (TUI), as pending: its ε counts as spent from
/// now on, whatever happens to the process. The decision (export or discard) is
/// recorded later under the same id; readers keep the latest line of each id
/// ([`Ledger::draws`]). The caller holds the ledger lock.
pub fn record_pending(
    dataset: &Dataset,
    plan: &ReleasePlan,
    draw: &Draw,
    ledger: &Ledger,
    lock: &LedgerLock,
    tool: &str,
) -> Result<(), LedgerError> {
    let mut entry = ledger_entry(dataset, plan, draw, None, false, tool);
    entry.pending = true;
    entry.note = Some(
        "drawn and shown; no decision recorded (coco stopped before the operator decided)".into(),
    );
    ledger.append(lock, &entry)
}

/// Records a draw that the operator discarded (TUI): its ε counts as spent.
pub fn record_discard(
    dataset: &Dataset,
    plan: &ReleasePlan,
    draw: &Draw,
    ledger: &Ledger,
    tool: &str,
    note: &str,
) -> Result<(), ExportError> {
    let lock = ledger.lock()?;
    record_discard_locked(dataset, plan, draw, ledger, &lock, tool, note)
}

/// [`record_discard`] for a caller that already holds the ledger lock (the TUI holds it
/// from the cap check before a draw until the operator decides; taking it again from
/// the same process would wait for ever).
pub fn record_discard_locked(
    dataset: &Dataset,
    plan: &ReleasePlan,
    draw: &Draw,
    ledger: &Ledger,
    lock: &LedgerLock,
    tool: &str,
    note: &str,
) -> Result<(), ExportError> {
    let mut entry = ledger_entry(dataset, plan, draw, None, false, tool);
    entry.note = Some(note.to_string());
    ledger.append(lock, &entry)?;
    Ok(())
}
