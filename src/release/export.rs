//! Writing a release directory atomically.
//!
//! Everything is written into a temporary directory beside the destination: `counts.csv`
//! (the contract), census-style wide tables `tables/<level>.csv` (sizes 0–6 and "7 or
//! more"), and `manifest.json`. Each file is `fsync`ed; `counts.csv` is read back and
//! checked ([`check_counts`]); then the directory is renamed into place and its parent
//! `fsync`ed. The release transaction records the outcome in the ledger afterwards. A crash at any point leaves either no
//! destination or a complete, verified one (plus at most a stray `.coco-tmp-*`
//! directory, which is never mistaken for a release).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rayon::slice::ParallelSliceMut;
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::checks::{Checks, check_counts};
use super::ledger::{new_id, sync_dir};
use super::manifest::{self, FileDigest, Manifest};
use super::plan::ReleasePlan;
use super::run::Draw;
use crate::data::{Dataset, NodeId, hex};
use crate::histogram::{Count, Histograms, Size};

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
    #[error("{path}: cannot write a release there: {why}")]
    BadOutput { path: PathBuf, why: String },
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

/// The marker file of a seeded (reproducible, not private) release.
pub const NOT_PRIVATE_FILE: &str = "NOT-PRIVATE-SEEDED-RELEASE.txt";

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
            if !ids
                .windows(2)
                .all(|w| h.cmp_display_ids(w[0], w[1]).is_le())
            {
                ids.par_sort_by(|&a, &b| h.cmp_display_ids(a, b));
            }
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
    let mut region = String::new();
    let (mut itoa, mut itoa2) = (itoa::Buffer::new(), itoa::Buffer::new());
    for (level, ids) in h.levels().zip(sorted_levels(dataset)) {
        let name = h.level_name(level);
        for id in ids {
            region.clear();
            h.push_display_id(id, &mut region);
            for &(size, count) in draw.histograms().hist(id.index()).pairs() {
                csv.write_record([
                    name.as_bytes(),
                    region.as_bytes(),
                    itoa.format(size).as_bytes(),
                    itoa2.format(count).as_bytes(),
                ])
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
    let mut region = String::new();
    let mut numbers: Vec<String> = vec![String::new(); 9];
    for &id in ids {
        let hist = draw.histograms().hist(id.index());
        let mut cells: [Count; 8] = [0; 8];
        for &(size, count) in hist.pairs() {
            cells[(size as usize).min(7)] += count;
        }
        region.clear();
        h.push_display_id(id, &mut region);
        for (slot, value) in numbers
            .iter_mut()
            .zip(std::iter::once(hist.groups()).chain(cells))
        {
            slot.clear();
            slot.push_str(itoa::Buffer::new().format(value));
        }
        csv.write_record(
            [region.as_str(), h.name(id).unwrap_or_default()]
                .into_iter()
                .chain(numbers.iter().map(String::as_str)),
        )
        .map_err(csv_error)?;
    }
    csv.flush()
}

/// A file name for a level's table: its index and a safe version of its name (ASCII
/// letters, digits, `-` and `_`; cut to 100 characters, so that a level name of up to
/// the 1024 bytes a field may hold still gives a valid file name).
fn table_name(index: usize, level: &str) -> String {
    let safe: String = level
        .chars()
        .take(100)
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
    let reader = csv::Reader::from_path(path).map_err(|e| io(path)(csv_error(e)))?;
    let mut failed = None;
    let checks = check_counts(dataset.public(), counts_rows(reader, &mut failed), max_size);
    match failed {
        Some(e) => Err(io(path)(csv_error(e))),
        None => Ok(checks),
    }
}

/// The rows of a `counts.csv` as they are read (streamed, not collected); the first
/// read error ends them and is left in `failed`.
pub(crate) fn counts_rows<'a, R: std::io::Read + 'a>(
    reader: csv::Reader<R>,
    failed: &'a mut Option<csv::Error>,
) -> impl Iterator<Item = [String; 4]> + 'a {
    reader.into_records().map_while(move |record| match record {
        Ok(r) => {
            let field = |i: usize| r.get(i).unwrap_or("").to_string();
            Some([field(0), field(1), field(2), field(3)])
        }
        Err(e) => {
            *failed = Some(e);
            None
        }
    })
}

/// The longest output directory name accepted: the temporary directory beside it adds
/// about 40 bytes, and most file systems allow 255.
pub const MAX_OUTPUT_NAME: usize = 200;

/// Checks everything about an output path that can be checked before a draw: it is
/// not `.` or `..`, not a symbolic link (even a dangling one), not a file or a
/// non-empty directory; its name fits the file system; its parent exists (it is
/// created if missing) and is a writable directory.
pub fn check_output(out: &Path) -> Result<(), ExportError> {
    let bad = |why: String| ExportError::BadOutput {
        path: out.to_path_buf(),
        why,
    };
    let Some(name) = out.file_name() else {
        return Err(bad(
            "it names no directory of its own (\".\", \"..\" or a root): give a new directory's name"
                .into(),
        ));
    };
    if matches!(
        out.components().next_back(),
        Some(std::path::Component::CurDir | std::path::Component::ParentDir)
    ) {
        return Err(bad(
            "it ends in \".\" or \"..\": give a new directory's name".into(),
        ));
    }
    if name.len() > MAX_OUTPUT_NAME {
        return Err(bad(format!(
            "its name is {} bytes long: expected at most {MAX_OUTPUT_NAME}",
            name.len()
        )));
    }
    match std::fs::symlink_metadata(out) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(bad(
                "it is a symbolic link: a release is written to a real new directory".into(),
            ));
        }
        Ok(meta) if !meta.is_dir() => {
            return Err(ExportError::OutputExists {
                path: out.to_path_buf(),
            });
        }
        Ok(_) => check_output_free(out)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return Err(bad(
                "a part of its path is not a directory: give a path under a directory".into(),
            ));
        }
        Err(e) => return Err(io(out)(e)),
    }
    let parent = parent_dir(out);
    std::fs::create_dir_all(&parent).map_err(|e| {
        bad(format!(
            "its parent {} cannot be created: {e}",
            parent.display()
        ))
    })?;
    if !std::fs::metadata(&parent).map_err(io(&parent))?.is_dir() {
        return Err(bad(format!("{} is not a directory", parent.display())));
    }
    // Writable: the only sure test is to write.
    let probe = parent.join(format!(".coco-probe-{}-{}", std::process::id(), new_id()));
    File::create(&probe)
        .and_then(|_| std::fs::remove_file(&probe))
        .map_err(|e| {
            bad(format!(
                "its parent {} is not writable: {e}",
                parent.display()
            ))
        })?;
    Ok(())
}

fn parent_dir(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Writes a drawn release into `out` atomically: into a temporary directory beside it,
/// each file `fsync`ed, `counts.csv` read back and checked, then renamed into place and
/// the parent `fsync`ed. Records nothing: the release transaction
/// ([`super::transaction`]) records the outcome once it is known. A release that fails
/// its checks is never written, and on any failure nothing appears at `out`.
pub fn write_release_dir(
    out: &Path,
    dataset: &Dataset,
    plan: &ReleasePlan,
    draw: &Draw,
) -> Result<Manifest, ExportError> {
    check_output(out)?;
    if !draw.checks().passed() {
        return Err(ExportError::ChecksFailed {
            problems: draw.checks().problems.join("; "),
            checks: draw.checks().clone(),
        });
    }
    let parent = parent_dir(out);
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
    let result = (|| {
        let manifest = fill_release_dir(&tmp, dataset, plan, draw)?;
        sync_dir(&tmp).map_err(io(&tmp))?;
        if out.exists() {
            // An empty directory: rename replaces it on Linux, but clear it explicitly.
            std::fs::remove_dir(out).map_err(io(out))?;
        }
        std::fs::rename(&tmp, out).map_err(io(out))?;
        sync_dir(&parent).map_err(io(&parent))?;
        Ok(manifest)
    })();
    if result.is_err() && tmp.exists() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}

fn fill_release_dir(
    tmp: &Path,
    dataset: &Dataset,
    plan: &ReleasePlan,
    draw: &Draw,
) -> Result<Manifest, ExportError> {
    let mut outputs = Vec::new();
    if let crate::noise::Randomness::Seeded { seed } = draw.randomness() {
        // Unmistakable beside the tables, not only inside the manifest.
        outputs.push(write_file(tmp, NOT_PRIVATE_FILE, |w| {
            writeln!(
                w,
                "NOT PRIVATE: this release was drawn with seeded noise (seed {seed}).\nAnyone who knows the seed can regenerate the noise and subtract it.\nIt is for tests only and must never be published."
            )
        })?);
    }
    outputs.push(write_file(tmp, "counts.csv", |w| {
        write_counts(w, dataset, draw)
    })?);
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
    let checks = verify_counts(&tmp.join("counts.csv"), dataset, draw.max_size())?;
    if !checks.passed() {
        return Err(ExportError::ChecksFailed {
            problems: checks.problems.join("; "),
            checks,
        });
    }
    let mut manifest = manifest::build(dataset, plan, draw);
    manifest.checks = checks;
    manifest.outputs = outputs;
    let json = serde_json::to_string_pretty(&manifest).expect("manifests serialise");
    write_file(tmp, "manifest.json", |w| {
        w.write_all(json.as_bytes())?;
        w.write_all(b"\n")
    })?;
    Ok(manifest)
}

#[cfg(test)]
mod table_name_tests {
    use super::table_name;

    #[test]
    fn table_names_are_safe_and_short() {
        assert_eq!(table_name(0, "nation"), "tables/0-nation.csv");
        assert_eq!(
            table_name(2, "Ortsteil/Bezirk é"),
            "tables/2-Ortsteil_Bezirk__.csv"
        );
        let long = table_name(1, &"x".repeat(1024));
        assert!(long.len() < 255 - "tables/".len(), "{}", long.len());
    }
}
