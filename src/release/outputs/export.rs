//! Writing a release directory atomically.
//!
//! Everything is written into a temporary directory beside the destination: `counts.csv`
//! (the contract), census-style wide tables `tables/<level>.csv` (sizes 0–6 and "7 or
//! more"), and `manifest.json`. Rows are formatted in parallel chunks and written in
//! order, byte for byte as `csv::Writer` writes them. Each file is `fsync`ed (on a
//! thread of its own, while the next is written); `counts.csv` is read back and checked
//! ([`check_counts`](crate::release::pipeline::checks::check_counts)) while the tables are written; once
//! every `fsync` is done, the directory is renamed into place and its parent `fsync`ed.
//! The release transaction records the outcome in the ledger afterwards. A crash at any
//! point leaves either no destination or a complete, verified one (plus at most a stray
//! `.coco-tmp-*` directory, which is never mistaken for a release).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::data::{Dataset, Hierarchy, NodeId, hex};
use crate::histogram::{Count, HistogramSet, Histograms, Size};
use crate::release::ledger::{new_id, sync_dir};
use crate::release::outputs::csv::{push_field, push_number, write_chunks};
use crate::release::outputs::manifest::{self, FileDigest, Manifest};
use crate::release::outputs::parquet as parquet_out;
use crate::release::outputs::read_back::read_counts;
use crate::release::pipeline::checks::Checks;
use crate::release::pipeline::draw::Draw;
use crate::release::plan::ReleasePlan;

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
    /// The margins of error could not be computed (`src/uncertainty/`).
    #[error("the margins of error: {0}")]
    Uncertainty(#[from] crate::uncertainty::UncertaintyError),
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

/// The files a release is written as: CSV (`counts.csv`, `tables/*.csv`; the default),
/// Parquet (`counts.parquet`, `tables/*.parquet`), or both. Either form holds the same
/// columns and rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputFormat {
    #[default]
    Csv,
    Parquet,
    Both,
}

impl OutputFormat {
    /// Every format, by its name on the command line.
    pub const ALL: [(&'static str, OutputFormat); 3] = [
        ("csv", OutputFormat::Csv),
        ("parquet", OutputFormat::Parquet),
        ("both", OutputFormat::Both),
    ];

    pub fn csv(self) -> bool {
        matches!(self, OutputFormat::Csv | OutputFormat::Both)
    }

    pub fn parquet(self) -> bool {
        matches!(self, OutputFormat::Parquet | OutputFormat::Both)
    }

    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Csv => "csv",
            OutputFormat::Parquet => "parquet",
            OutputFormat::Both => "both",
        }
    }

    /// The files' format in a sentence: "CSV", "Parquet", "CSV and Parquet".
    pub fn label(self) -> &'static str {
        match self {
            OutputFormat::Csv => "CSV",
            OutputFormat::Parquet => "Parquet",
            OutputFormat::Both => "CSV and Parquet",
        }
    }

    /// The next format, in the order of [`OutputFormat::ALL`].
    pub fn next(self) -> OutputFormat {
        match self {
            OutputFormat::Csv => OutputFormat::Parquet,
            OutputFormat::Parquet => OutputFormat::Both,
            OutputFormat::Both => OutputFormat::Csv,
        }
    }

    /// The format named `name` (`csv`, `parquet` or `both`).
    pub fn parse(name: &str) -> Option<OutputFormat> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|&(_, f)| f)
    }
}

/// The marker file of a seeded (reproducible, not private) release.
pub const NOT_PRIVATE_FILE: &str = "NOT-PRIVATE-SEEDED-RELEASE.txt";

/// A writer that hashes what passes through it.
pub(crate) struct Hashing<W: Write> {
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

/// Where a file's bytes go: buffered, hashed, to the file.
pub(crate) type Out = Hashing<BufWriter<File>>;

/// A file written and closed for writing, whose `fsync` is still to come.
struct Unsynced {
    digest: FileDigest,
    path: PathBuf,
    file: File,
}

impl Unsynced {
    fn sync(self) -> Result<FileDigest, ExportError> {
        self.file.sync_all().map_err(io(&self.path))?;
        Ok(self.digest)
    }
}

/// Creates `path`, lets `fill` write it and returns its digest, not yet `fsync`ed.
fn write_unsynced(
    dir: &Path,
    name: &str,
    fill: impl FnOnce(&mut Out) -> std::io::Result<()>,
) -> Result<Unsynced, ExportError> {
    let path = dir.join(name);
    let file = File::create(&path).map_err(io(&path))?;
    let mut w = Hashing {
        inner: BufWriter::with_capacity(1 << 16, file),
        hasher: Sha256::new(),
    };
    fill(&mut w).map_err(io(&path))?;
    w.flush().map_err(io(&path))?;
    let Hashing { inner, hasher } = w;
    let file = inner.into_inner().map_err(|e| io(&path)(e.into_error()))?;
    Ok(Unsynced {
        digest: FileDigest {
            path: name.to_string(),
            sha256: hex(&hasher.finalize()),
        },
        path,
        file,
    })
}

/// Creates `path`, lets `fill` write it, `fsync`s it and returns its digest.
pub(crate) fn write_file(
    dir: &Path,
    name: &str,
    fill: impl FnOnce(&mut Out) -> std::io::Result<()>,
) -> Result<FileDigest, ExportError> {
    write_unsynced(dir, name, fill)?.sync()
}

/// Nodes of each level sorted by display id (the order of `counts.csv`).
pub(crate) fn sorted_levels(h: &Hierarchy) -> Vec<Vec<NodeId>> {
    h.levels()
        .map(|l| {
            let mut ids: Vec<NodeId> = h.level_nodes(l).collect();
            if !ids
                .par_windows(2)
                .all(|w| h.cmp_display_ids(w[0], w[1]).is_le())
            {
                ids.par_sort_by(|&a, &b| h.cmp_display_ids(a, b));
            }
            ids
        })
        .collect()
}

/// Display ids of nodes taken one after another, each built from its parent's, which
/// is kept while siblings follow one another (as in a level sorted by display id).
pub(crate) struct DisplayIds<'h> {
    h: &'h Hierarchy,
    /// The parent of the last node, and where its display id and `/` end in `text`.
    parent: Option<(NodeId, usize)>,
    text: String,
}

impl<'h> DisplayIds<'h> {
    pub(crate) fn new(h: &'h Hierarchy) -> Self {
        Self {
            h,
            parent: None,
            text: String::new(),
        }
    }

    /// [`Hierarchy::display_id`] of `id`.
    pub(crate) fn of(&mut self, id: NodeId) -> &str {
        let parent = self.h.node(id).parent;
        match (parent, self.parent) {
            (Some(p), Some((q, end))) if p == q => self.text.truncate(end),
            (Some(p), _) => {
                self.text.clear();
                self.h.push_display_id(p, &mut self.text);
                self.text.push('/');
                self.parent = Some((p, self.text.len()));
            }
            (None, _) => {
                self.text.clear();
                self.parent = None;
            }
        }
        self.text.push_str(self.h.code(id));
        &self.text
    }
}

/// Regions per chunk of rows formatted at once (about a megabyte of `counts.csv` for
/// census blocks).
pub(super) const CHUNK_REGIONS: usize = 8192;

/// The chunks of a release's rows: (level, range of its sorted nodes).
pub(crate) fn chunks_of(levels: &[Vec<NodeId>]) -> Vec<(usize, std::ops::Range<usize>)> {
    levels
        .iter()
        .enumerate()
        .flat_map(|(l, ids)| {
            (0..ids.len())
                .step_by(CHUNK_REGIONS)
                .map(move |s| (l, s..(s + CHUNK_REGIONS).min(ids.len())))
        })
        .collect()
}

/// Writes `counts.csv`: `level,region,size,count`, zero counts left out, sorted by
/// level (root first), region, size. Byte for byte what `csv::Writer` writes for these
/// records; chunks of regions are formatted in parallel and written in order.
fn write_counts<W: Write + Send>(
    w: &mut W,
    h: &Hierarchy,
    hists: &HistogramSet,
    levels: &[Vec<NodeId>],
) -> std::io::Result<()> {
    w.write_all(b"level,region,size,count\n")?;
    // `level,` as a row starts, once per level.
    let level_fields: Vec<Vec<u8>> = h
        .levels()
        .map(|l| {
            let mut f = Vec::new();
            push_field(&mut f, h.level_name(l).as_bytes());
            f.push(b',');
            f
        })
        .collect();
    let chunks = chunks_of(levels);
    write_chunks(w, chunks.len(), |i, buf| {
        let (l, range) = &chunks[i];
        let (mut regions, mut prefix) = (DisplayIds::new(h), Vec::new());
        let mut itoa = itoa::Buffer::new();
        for &id in &levels[*l][range.clone()] {
            let pairs = hists.hist(id.index()).pairs();
            if pairs.is_empty() {
                continue;
            }
            prefix.clear();
            prefix.extend_from_slice(&level_fields[*l]);
            push_field(&mut prefix, regions.of(id).as_bytes());
            prefix.push(b',');
            for &(size, count) in pairs {
                buf.extend_from_slice(&prefix);
                push_number(buf, &mut itoa, size);
                buf.push(b',');
                push_number(buf, &mut itoa, count);
                buf.push(b'\n');
            }
        }
        Ok(())
    })
}

/// The census-style table of one level: one row per region, sizes 0–6 and "7 or more".
/// Byte for byte what `csv::Writer` writes for these records.
fn write_wide<W: Write + Send>(
    w: &mut W,
    h: &Hierarchy,
    hists: &HistogramSet,
    ids: &[NodeId],
) -> std::io::Result<()> {
    w.write_all(b"region,name,groups,")?;
    for s in 0..7 {
        write!(w, "size_{s},")?;
    }
    w.write_all(b"size_7_or_more\n")?;
    let chunks = ids.len().div_ceil(CHUNK_REGIONS);
    write_chunks(w, chunks, |i, buf| {
        let mut regions = DisplayIds::new(h);
        let mut itoa = itoa::Buffer::new();
        let end = ((i + 1) * CHUNK_REGIONS).min(ids.len());
        for &id in &ids[i * CHUNK_REGIONS..end] {
            let hist = hists.hist(id.index());
            let mut cells: [Count; 8] = [0; 8];
            for &(size, count) in hist.pairs() {
                cells[(size as usize).min(7)] += count;
            }
            push_field(buf, regions.of(id).as_bytes());
            buf.push(b',');
            push_field(buf, h.name(id).unwrap_or_default().as_bytes());
            for value in std::iter::once(hist.groups()).chain(cells) {
                buf.push(b',');
                push_number(buf, &mut itoa, value);
            }
            buf.push(b'\n');
        }
        Ok(())
    })
}

/// A file name for a level's table: its index and a safe version of its name (ASCII
/// letters, digits, `-` and `_`; cut to 100 characters, so that a level name of up to
/// the 1024 bytes a field may hold still gives a valid file name).
fn table_name(index: usize, level: &str) -> String {
    table_file(index, level, "csv")
}

/// [`table_name`] with the extension `ext`.
pub(super) fn table_file(index: usize, level: &str, ext: &str) -> String {
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
    format!("tables/{index}-{safe}.{ext}")
}

fn csv_error(e: csv::Error) -> std::io::Error {
    std::io::Error::other(e)
}

/// Reads `counts.csv` back and checks it.
fn verify_counts(path: &Path, dataset: &Dataset, max_size: Size) -> Result<Checks, ExportError> {
    match read_counts(path, dataset.public(), max_size, false) {
        Ok(read) => Ok(read.checks),
        Err(e) => Err(io(path)(csv_error(e))),
    }
}

/// Reads `counts.parquet` back: the checks of `counts.csv`, and its rows must describe
/// exactly the histograms drawn.
fn verify_counts_parquet(
    path: &Path,
    dataset: &Dataset,
    draw: &Draw,
) -> Result<Checks, ExportError> {
    let (checks, read) =
        parquet_out::read_counts(path, dataset.public(), draw.max_size()).map_err(io(path))?;
    match parquet_out::first_difference(&dataset.hierarchy, &read, draw.histograms()) {
        Some(problem) => Err(io(path)(std::io::Error::other(format!(
            "read back, it is not the release written: {problem}"
        )))),
        None => Ok(checks),
    }
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
    // `link/` resolves through a symbolic link `link` (a trailing slash follows it):
    // the path is checked as it names its last component, without the slash.
    let trimmed = trim_trailing_separators(out);
    let out = trimmed.as_path();
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

/// `out` without trailing `/` (the root stays itself).
fn trim_trailing_separators(out: &Path) -> PathBuf {
    let text = out.as_os_str().as_encoded_bytes();
    let mut end = text.len();
    while end > 1 && std::path::is_separator(text[end - 1] as char) {
        end -= 1;
    }
    // Cut at an ASCII separator: still a valid encoding.
    PathBuf::from(os_string_of(&text[..end]))
}

/// Bytes cut from an `OsStr`'s encoding at an ASCII character, as an `OsString`.
fn os_string_of(bytes: &[u8]) -> std::ffi::OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::ffi::OsStr::from_bytes(bytes).to_os_string()
    }
    #[cfg(not(unix))]
    {
        std::ffi::OsString::from(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// The SHA-256 of a written release's `manifest.json` (the ledger keeps it).
pub fn manifest_sha256(out: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(out.join("manifest.json"))?;
    Ok(hex(&Sha256::digest(&bytes)))
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
    write_release_dir_as(out, dataset, plan, draw, OutputFormat::Csv)
}

/// [`write_release_dir`] in the files of `format`; every file written is read back:
/// `counts.csv` and `counts.parquet` through the release checks, and the Parquet
/// files compared with what was written.
pub fn write_release_dir_as(
    out: &Path,
    dataset: &Dataset,
    plan: &ReleasePlan,
    draw: &Draw,
    format: OutputFormat,
) -> Result<Manifest, ExportError> {
    write_release_dir_with(
        out,
        dataset,
        plan,
        draw,
        format,
        &crate::uncertainty::Extras::default(),
    )
}

/// [`write_release_dir_as`] with the extra files of `extras` (the margins of error,
/// `summary.csv`, the noisy measurements; see [`crate::uncertainty`]).
pub fn write_release_dir_with(
    out: &Path,
    dataset: &Dataset,
    plan: &ReleasePlan,
    draw: &Draw,
    format: OutputFormat,
    extras: &crate::uncertainty::Extras,
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
        let manifest = fill_release_dir(&tmp, dataset, plan, draw, format, extras)?;
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
    format: OutputFormat,
    extras: &crate::uncertainty::Extras,
) -> Result<Manifest, ExportError> {
    let h = &dataset.hierarchy;
    let hists = draw.histograms();
    let levels = sorted_levels(h);
    // Each file is `fsync`ed on a thread of its own as soon as it is written, while the
    // next is written and `counts.csv` read back; all are joined before the manifest.
    let (outputs, checks) = std::thread::scope(|scope| {
        let mut syncing = Vec::new();
        let written = (|| {
            let spawn_sync = |file: Unsynced| scope.spawn(move || file.sync());
            if let crate::noise::Randomness::Seeded { seed } = draw.randomness() {
                // Unmistakable beside the tables, not only inside the manifest.
                syncing.push(spawn_sync(write_unsynced(tmp, NOT_PRIVATE_FILE, |w| {
                    writeln!(
                        w,
                        "NOT PRIVATE: this release was drawn with seeded noise (seed {seed}).\nAnyone who knows the seed can regenerate the noise and subtract it.\nIt is for tests only and must never be published."
                    )
                })?));
            }
            let tables = tmp.join("tables");
            std::fs::create_dir(&tables).map_err(io(&tables))?;
            let mut checks = None;
            if format.csv() {
                let phase = crate::timing::phase("  write counts.csv");
                syncing.push(spawn_sync(write_unsynced(tmp, "counts.csv", |w| {
                    write_counts(w, h, hists, &levels)
                })?));
                phase.done();
                // The tables are written while `counts.csv` is read back.
                let (tables_synced, read) = rayon::join(
                    || {
                        let _phase = crate::timing::phase("  write tables");
                        let mut syncing = Vec::new();
                        for ((level, ids), index) in h.levels().zip(&levels).zip(0..) {
                            let name = table_name(index, h.level_name(level));
                            let file =
                                write_unsynced(tmp, &name, |w| write_wide(w, h, hists, ids))?;
                            syncing.push(spawn_sync(file));
                        }
                        sync_dir(&tables).map_err(io(&tables))?;
                        Ok::<_, ExportError>(syncing)
                    },
                    || {
                        let _phase = crate::timing::phase("  read back counts.csv");
                        verify_counts(&tmp.join("counts.csv"), dataset, draw.max_size())
                    },
                );
                syncing.extend(tables_synced?);
                checks = Some(read?);
            }
            if format.parquet() {
                let phase = crate::timing::phase("  write counts.parquet");
                syncing.push(spawn_sync(write_unsynced(tmp, "counts.parquet", |w| {
                    parquet_out::write_counts(w, h, hists, &levels)
                })?));
                phase.done();
                // The tables are written (and read back) while `counts.parquet` is read
                // back.
                let (tables_synced, read) = rayon::join(
                    || {
                        let _phase = crate::timing::phase("  write and read back tables (parquet)");
                        let mut syncing = Vec::new();
                        for ((level, ids), index) in h.levels().zip(&levels).zip(0..) {
                            let name = table_file(index, h.level_name(level), "parquet");
                            let file = write_unsynced(tmp, &name, |w| {
                                parquet_out::write_wide(w, h, hists, ids)
                            })?;
                            let path = tmp.join(&name);
                            parquet_out::check_wide(&path, h, hists, ids).map_err(io(&path))?;
                            syncing.push(spawn_sync(file));
                        }
                        sync_dir(&tables).map_err(io(&tables))?;
                        Ok::<_, ExportError>(syncing)
                    },
                    || {
                        let _phase = crate::timing::phase("  read back counts.parquet");
                        verify_counts_parquet(&tmp.join("counts.parquet"), dataset, draw)
                    },
                );
                syncing.extend(tables_synced?);
                let read = read?;
                // Both forms must pass; the manifest reports the CSV's checks when both
                // were written (they passed, or this is where the release stops).
                checks = Some(match checks {
                    Some(csv) if read.passed() => csv,
                    _ => read,
                });
            }
            Ok::<_, ExportError>(checks.unwrap_or_default())
        })();
        let phase = crate::timing::phase("  fsync (rest)");
        // Every file is synced (or failed) before anything is returned, in order.
        let outputs = syncing
            .into_iter()
            .map(|s| {
                s.join().unwrap_or_else(|_| {
                    Err(ExportError::Io {
                        path: tmp.to_path_buf(),
                        source: std::io::Error::other("an fsync thread panicked"),
                    })
                })
            })
            .collect::<Result<Vec<FileDigest>, _>>();
        phase.done();
        let checks = written?;
        Ok::<_, ExportError>((outputs?, checks))
    })?;
    if !checks.passed() {
        return Err(ExportError::ChecksFailed {
            problems: checks.problems.join("; "),
            checks,
        });
    }
    let mut manifest = manifest::build(dataset, plan, draw);
    manifest.checks = checks;
    manifest.outputs = outputs;
    // [uncertainty] The margins of error and the other extra files: post-processing of
    // the draw with public data only (`src/uncertainty/`).
    let (files, described) = crate::uncertainty::outputs::write(
        tmp,
        dataset.public(),
        plan,
        draw,
        &levels,
        format,
        extras,
    )?;
    manifest.outputs.extend(files);
    manifest.uncertainty = described;
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

#[cfg(test)]
mod writer_tests {
    use super::*;

    /// `counts.csv` as `csv::Writer` writes it, row by row (the reference).
    fn counts_by_csv(h: &Hierarchy, hists: &HistogramSet, levels: &[Vec<NodeId>]) -> Vec<u8> {
        let mut csv = csv::Writer::from_writer(Vec::new());
        csv.write_record(["level", "region", "size", "count"])
            .unwrap();
        for (level, ids) in h.levels().zip(levels) {
            for &id in ids {
                for &(size, count) in hists.hist(id.index()).pairs() {
                    csv.write_record([
                        h.level_name(level),
                        &h.display_id(id),
                        &size.to_string(),
                        &count.to_string(),
                    ])
                    .unwrap();
                }
            }
        }
        csv.into_inner().unwrap()
    }

    /// A level's table as `csv::Writer` writes it (the reference).
    fn wide_by_csv(h: &Hierarchy, hists: &HistogramSet, ids: &[NodeId]) -> Vec<u8> {
        let mut csv = csv::Writer::from_writer(Vec::new());
        let mut header = vec!["region".to_string(), "name".into(), "groups".into()];
        header.extend((0..7).map(|s| format!("size_{s}")));
        header.push("size_7_or_more".into());
        csv.write_record(&header).unwrap();
        for &id in ids {
            let hist = hists.hist(id.index());
            let mut cells: [Count; 8] = [0; 8];
            for &(size, count) in hist.pairs() {
                cells[(size as usize).min(7)] += count;
            }
            let mut row = vec![h.display_id(id), h.name(id).unwrap_or_default().to_string()];
            row.extend(
                std::iter::once(hist.groups())
                    .chain(cells)
                    .map(|v| v.to_string()),
            );
            csv.write_record(&row).unwrap();
        }
        csv.into_inner().unwrap()
    }

    /// A hierarchy whose names and codes need quoting, with enough regions for many
    /// chunks, and histograms of all shapes.
    fn tricky() -> (Hierarchy, HistogramSet) {
        let levels = vec!["na,tion".into(), "st\"ate".into(), "block".into()];
        let states = ["A", "B,C", "\"D\"", "é e", "\n"];
        let mut rows = Vec::new();
        for (s, state) in states.iter().enumerate() {
            for b in 0..(3 * CHUNK_REGIONS / (s + 1)) {
                let code = match b % 5 {
                    0 => format!("{s}{b:06}"),
                    1 => format!("{s}-{b},x"),
                    2 => format!("q{s}\"{b}"),
                    3 => format!(" {s} {b} "),
                    _ => format!("{s}.{b}\rcr"),
                };
                rows.push(vec!["U,S".to_string(), state.to_string(), code]);
            }
        }
        let mut h = Hierarchy::from_leaf_paths(levels, &rows).unwrap();
        for i in (0..h.len() as u32).step_by(3) {
            let name = match i % 4 {
                0 => format!("Name {i}"),
                1 => format!("Name, {i}"),
                2 => format!("\"{i}\" said"),
                _ => String::new(),
            };
            h.set_name(NodeId(i), name);
        }
        let mut hists = HistogramSet::new();
        for i in 0..h.len() as u64 {
            let pairs: Vec<(Size, Count)> = (0..(i % 11) as Size)
                .map(|s| (s * (i as Size % 3 + 1), (i * 7 + u64::from(s)) % 50 + 1))
                .chain((i % 13 == 0).then_some((5000, u64::MAX / 4)))
                .collect();
            hists.push_sorted_pairs(pairs);
        }
        (h, hists)
    }

    #[test]
    fn written_as_csv_writes_them() {
        let (h, hists) = tricky();
        let levels = sorted_levels(&h);
        assert!(levels.iter().map(Vec::len).sum::<usize>() > 4 * CHUNK_REGIONS);
        let mut ours = Vec::new();
        write_counts(&mut ours, &h, &hists, &levels).unwrap();
        assert!(
            ours == counts_by_csv(&h, &hists, &levels),
            "counts.csv differs"
        );
        for ids in &levels {
            let mut ours = Vec::new();
            write_wide(&mut ours, &h, &hists, ids).unwrap();
            assert!(ours == wide_by_csv(&h, &hists, ids), "a table differs");
        }
    }

    #[test]
    fn display_ids_follow_the_hierarchy() {
        let (h, _) = tricky();
        let mut ids = DisplayIds::new(&h);
        for level in sorted_levels(&h) {
            for id in level {
                assert_eq!(ids.of(id), h.display_id(id));
            }
        }
        // In any order too.
        for i in (0..h.len() as u32).rev().step_by(7) {
            assert_eq!(ids.of(NodeId(i)), h.display_id(NodeId(i)));
            assert_eq!(ids.of(NodeId::ROOT), h.display_id(NodeId::ROOT));
        }
    }
}
