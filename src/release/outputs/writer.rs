//! How a release's files are written: each through a hashing, buffered writer
//! ([`write_unsynced`]), and each table format ([`TableFormat`]) knowing how to write
//! `counts` and a level's wide table (and how to read them back), the numeric tables
//! and the margins of error's tables. CSV and Parquet are
//! the formats today; a third is one more implementation and one more
//! [`OutputFormat`](super::export::OutputFormat) name.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::data::{Dataset, Hierarchy, NodeId, PublicData, hex};
use crate::histogram::HistogramSet;
use crate::release::margins::Uncertainty;
use crate::release::outputs::manifest::FileDigest;
use crate::release::outputs::margin_tables as margins;
use crate::release::outputs::numeric::NumericTable;
use crate::release::outputs::read_back::read_counts;
use crate::release::outputs::{csv, parquet};
use crate::release::pipeline::checks::Checks;
use crate::release::pipeline::draw::Draw;

/// Why a release directory was not written.
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
    /// The margins of error could not be computed (`src/release/margins/`).
    #[error("the margins of error: {0}")]
    Uncertainty(#[from] crate::release::margins::UncertaintyError),
}

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

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
pub(crate) struct Unsynced {
    digest: FileDigest,
    path: PathBuf,
    file: File,
}

impl Unsynced {
    pub(crate) fn sync(self) -> Result<FileDigest, ExportError> {
        self.file.sync_all().map_err(io(&self.path))?;
        Ok(self.digest)
    }
}

/// Waits for every `fsync` thread (each file synced or failed) and returns the digests
/// in order, or the first failure; a panicked thread is an I/O error on `dir`.
pub(crate) fn join_synced(
    dir: &Path,
    syncing: Vec<std::thread::ScopedJoinHandle<'_, Result<FileDigest, ExportError>>>,
) -> Result<Vec<FileDigest>, ExportError> {
    syncing
        .into_iter()
        .map(|s| {
            s.join().unwrap_or_else(|_| {
                Err(ExportError::Io {
                    path: dir.to_path_buf(),
                    source: std::io::Error::other("an fsync thread panicked"),
                })
            })
        })
        .collect()
}

/// Creates `path`, lets `fill` write it and returns its digest, not yet `fsync`ed.
pub(crate) fn write_unsynced(
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

/// One file format of a release's tables: `counts.<ext>` (the rows of `counts.csv`) and
/// `tables/<i>-<level>.<ext>` (the census-style wide tables), each written in the order
/// of [`super::rows`], and read back before the release is renamed into place.
pub(crate) trait TableFormat: Sync {
    /// The files' extension: `csv`, `parquet`.
    fn extension(&self) -> &'static str;

    /// Writes `counts.<ext>`: `level, region, size, count`, zero counts left out.
    fn write_counts(
        &self,
        w: &mut Out,
        h: &Hierarchy,
        hists: &HistogramSet,
        levels: &[Vec<NodeId>],
    ) -> std::io::Result<()>;

    /// Writes a level's wide table: `region, name, groups, size_0 … size_6,
    /// size_7_or_more`.
    fn write_wide(
        &self,
        w: &mut Out,
        h: &Hierarchy,
        hists: &HistogramSet,
        ids: &[NodeId],
    ) -> std::io::Result<()>;

    /// Reads `counts.<ext>` back: the release checks, and whatever else the format
    /// can tell of the rows being the ones drawn.
    fn read_back_counts(
        &self,
        path: &Path,
        dataset: &Dataset,
        draw: &Draw,
    ) -> Result<Checks, ExportError>;

    /// Writes a numeric table ([`super::numeric`]: the replicate tables, the wide
    /// tables' margins) in this format.
    fn write_numeric(&self, w: &mut Out, table: &NumericTable<'_>) -> std::io::Result<()>;

    /// Writes one of the margins of error's tables (`uncertainty.<ext>`,
    /// `summary.<ext>`: [`super::margin_tables`]) in this format.
    fn write_margins(
        &self,
        w: &mut Out,
        table: MarginsTable,
        margins: &Margins<'_>,
    ) -> std::io::Result<()>;

    /// Reads a written wide table back, where the format needs it (a binary format is
    /// compared with what it should hold; CSV rows are formatted by the code that
    /// `counts.csv`'s read-back checks).
    fn read_back_wide(
        &self,
        _path: &Path,
        _h: &Hierarchy,
        _hists: &HistogramSet,
        _ids: &[NodeId],
    ) -> std::io::Result<()> {
        Ok(())
    }
}

/// The margins of error's tables, each written in every format of a release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MarginsTable {
    /// `uncertainty.<ext>`: every cell's interval.
    Cells,
    /// `summary.<ext>`: each region's statistics.
    Summary,
}

impl MarginsTable {
    /// Both, in the order a release writes them.
    pub(crate) const ALL: [MarginsTable; 2] = [MarginsTable::Cells, MarginsTable::Summary];

    /// The table's file in `format`.
    pub(crate) fn file(self, format: &dyn TableFormat) -> String {
        let stem = match self {
            MarginsTable::Cells => "uncertainty",
            MarginsTable::Summary => "summary",
        };
        format!("{stem}.{}", format.extension())
    }
}

/// What the margins' tables are written from: the release's public data, its released
/// histograms, its levels' regions in `counts.csv`'s order, and the intervals.
pub(crate) struct Margins<'a> {
    pub public: PublicData<'a>,
    pub released: &'a HistogramSet,
    pub levels: &'a [Vec<NodeId>],
    pub u: &'a Uncertainty,
}

/// `counts.csv` and `tables/*.csv`, byte for byte what `csv::Writer` writes.
pub(crate) struct Csv;

impl TableFormat for Csv {
    fn extension(&self) -> &'static str {
        "csv"
    }

    fn write_counts(
        &self,
        w: &mut Out,
        h: &Hierarchy,
        hists: &HistogramSet,
        levels: &[Vec<NodeId>],
    ) -> std::io::Result<()> {
        csv::write_counts(w, h, hists, levels)
    }

    fn write_wide(
        &self,
        w: &mut Out,
        h: &Hierarchy,
        hists: &HistogramSet,
        ids: &[NodeId],
    ) -> std::io::Result<()> {
        csv::write_wide(w, h, hists, ids)
    }

    fn write_numeric(&self, w: &mut Out, table: &NumericTable<'_>) -> std::io::Result<()> {
        csv::write_numeric(w, table)
    }

    fn write_margins(
        &self,
        w: &mut Out,
        table: MarginsTable,
        m: &Margins<'_>,
    ) -> std::io::Result<()> {
        match table {
            MarginsTable::Cells => margins::write_csv(w, m.public, m.released, m.levels, m.u),
            MarginsTable::Summary => margins::write_summary(w, m.public, m.released, m.levels, m.u),
        }
    }

    fn read_back_counts(
        &self,
        path: &Path,
        dataset: &Dataset,
        draw: &Draw,
    ) -> Result<Checks, ExportError> {
        match read_counts(path, dataset.public(), draw.max_size(), false) {
            Ok(read) => Ok(read.checks),
            Err(e) => Err(io(path)(std::io::Error::other(e))),
        }
    }
}

/// `counts.parquet` and `tables/*.parquet`: the same columns and rows.
pub(crate) struct Parquet;

impl TableFormat for Parquet {
    fn extension(&self) -> &'static str {
        "parquet"
    }

    fn write_counts(
        &self,
        w: &mut Out,
        h: &Hierarchy,
        hists: &HistogramSet,
        levels: &[Vec<NodeId>],
    ) -> std::io::Result<()> {
        parquet::write_counts(w, h, hists, levels)
    }

    fn write_wide(
        &self,
        w: &mut Out,
        h: &Hierarchy,
        hists: &HistogramSet,
        ids: &[NodeId],
    ) -> std::io::Result<()> {
        parquet::write_wide(w, h, hists, ids)
    }

    fn write_numeric(&self, w: &mut Out, table: &NumericTable<'_>) -> std::io::Result<()> {
        parquet::write_numeric(w, table)
    }

    fn write_margins(
        &self,
        w: &mut Out,
        table: MarginsTable,
        m: &Margins<'_>,
    ) -> std::io::Result<()> {
        match table {
            MarginsTable::Cells => margins::write_parquet(w, m.public, m.released, m.levels, m.u),
            MarginsTable::Summary => {
                margins::write_summary_parquet(w, m.public, m.released, m.levels, m.u)
            }
        }
    }

    /// The checks of `counts.csv`, and its rows must describe exactly the histograms
    /// drawn.
    fn read_back_counts(
        &self,
        path: &Path,
        dataset: &Dataset,
        draw: &Draw,
    ) -> Result<Checks, ExportError> {
        let (checks, read) =
            parquet::read_counts(path, dataset.public(), draw.max_size()).map_err(io(path))?;
        match parquet::first_difference(&dataset.hierarchy, &read, draw.histograms()) {
            Some(problem) => Err(io(path)(std::io::Error::other(format!(
                "read back, it is not the release written: {problem}"
            )))),
            None => Ok(checks),
        }
    }

    fn read_back_wide(
        &self,
        path: &Path,
        h: &Hierarchy,
        hists: &HistogramSet,
        ids: &[NodeId],
    ) -> std::io::Result<()> {
        parquet::check_wide(path, h, hists, ids)
    }
}

/// The files a release is written as: CSV (`counts.csv`, `tables/*.csv`; the default),
/// Parquet (`counts.parquet`, `tables/*.parquet`), or both. Either form holds the same
/// columns and rows.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
#[value(rename_all = "lowercase")]
pub enum OutputFormat {
    #[default]
    Csv,
    Parquet,
    Both,
}

impl OutputFormat {
    pub fn csv(self) -> bool {
        matches!(self, OutputFormat::Csv | OutputFormat::Both)
    }

    pub fn parquet(self) -> bool {
        matches!(self, OutputFormat::Parquet | OutputFormat::Both)
    }

    /// The files' format in a sentence: "CSV", "Parquet", "CSV and Parquet".
    pub fn label(self) -> &'static str {
        match self {
            OutputFormat::Csv => "CSV",
            OutputFormat::Parquet => "Parquet",
            OutputFormat::Both => "CSV and Parquet",
        }
    }

    /// The next format, in declaration order.
    pub fn next(self) -> OutputFormat {
        match self {
            OutputFormat::Csv => OutputFormat::Parquet,
            OutputFormat::Parquet => OutputFormat::Both,
            OutputFormat::Both => OutputFormat::Csv,
        }
    }

    /// The table formats written, in order (the manifest reports the first one's
    /// checks).
    pub(crate) fn tables(self) -> &'static [&'static dyn TableFormat] {
        match self {
            OutputFormat::Csv => &[&Csv],
            OutputFormat::Parquet => &[&Parquet],
            OutputFormat::Both => &[&Csv, &Parquet],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The margins' files are named as readers and `coco verify` look for them.
    #[test]
    fn the_margins_files_are_named_as_their_readers_expect() {
        let names: Vec<String> = MarginsTable::ALL
            .iter()
            .flat_map(|t| OutputFormat::Both.tables().iter().map(|f| t.file(*f)))
            .collect();
        assert_eq!(
            names,
            [
                margins::CSV_FILE,
                margins::PARQUET_FILE,
                margins::SUMMARY_FILE,
                margins::SUMMARY_PARQUET_FILE
            ]
        );
    }
}
