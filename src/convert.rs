//! `coco convert DIR --out OUT`: a dataset directory with its groups tables in Parquet.
//!
//! The dataset is loaded first (every check of the loader, errors naming file, line and
//! column), then copied: `hierarchy.csv` and `names.csv` byte for byte, and each groups
//! table (`groups.csv`, `entities.csv`, `histograms.csv`) streamed into its Parquet
//! twin with the same columns, in the same order: codes and ids as strings, `size` and
//! `count` as 64-bit integers, in row groups of [`BATCH_ROWS`] rows. The copy loads
//! with the same summary (`coco inspect`) as the original, apart from file names, sizes
//! and digests. A table already in Parquet is copied as it is.
//!
//! The copy is as confidential as the original: the directory is created readable by
//! its owner only (mode 0700, and 0700 for any parent it has to create) and every file
//! in it 0600, whatever the original's modes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use thiserror::Error;

use crate::data::{Dataset, LoadError};

/// Rows per batch (and so per row group) of a converted table.
pub const BATCH_ROWS: usize = 1 << 16;

#[derive(Debug, Error)]
pub enum ConvertError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("{path}: already exists: give a new directory for the converted dataset")]
    OutputExists { path: PathBuf },
    #[error("{path}: {message}")]
    Failed { path: PathBuf, message: String },
}

fn failed(path: &Path) -> impl Fn(String) -> ConvertError + '_ {
    move |message| ConvertError::Failed {
        path: path.to_path_buf(),
        message,
    }
}

/// What was converted: the files written to the new directory.
#[derive(Clone, Debug)]
pub struct Converted {
    pub dataset: Dataset,
    pub files: Vec<String>,
}

/// Converts the dataset in `src` into a new directory `out` with its groups tables in
/// Parquet (see the module doc). `out` must not exist.
pub fn to_parquet(src: &Path, out: &Path) -> Result<Converted, ConvertError> {
    let dataset = Dataset::load(src)?;
    if out.exists() {
        return Err(ConvertError::OutputExists {
            path: out.to_path_buf(),
        });
    }
    private_dir(out).map_err(|e| failed(out)(e.to_string()))?;
    let mut files = Vec::new();
    for input in &dataset.inputs {
        let from = src.join(&input.path);
        let (stem, ext) = input.path.rsplit_once('.').unwrap_or((&input.path, ""));
        let table = matches!(stem, "groups" | "entities" | "histograms") && ext == "csv";
        let name = if table {
            format!("{stem}.parquet")
        } else {
            input.path.clone()
        };
        let to = out.join(&name);
        if table {
            csv_to_parquet(&from, &to).map_err(failed(&to))?;
        } else {
            copy_private(&from, &to).map_err(|e| failed(&to)(e.to_string()))?;
        }
        files.push(name);
    }
    Ok(Converted { dataset, files })
}

/// Creates a directory (and missing parents) readable by its owner only.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Creates a new file readable by its owner only.
fn create_private(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Copies a file's bytes into a new file readable by its owner only (`fs::copy` would
/// copy the original's mode too).
fn copy_private(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut src = std::fs::File::open(from)?;
    let mut dst = create_private(to)?;
    std::io::copy(&mut src, &mut dst)?;
    dst.sync_all()
}

/// Whether a column of the contract holds numbers.
fn numeric(column: &str) -> bool {
    matches!(column, "size" | "count")
}

/// Streams a CSV table (already checked by the loader) into a Parquet file with the
/// same columns.
fn csv_to_parquet(from: &Path, to: &Path) -> Result<(), String> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(true)
        .from_path(from)
        .map_err(|e| e.to_string())?;
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(|h| h.trim_start_matches('\u{feff}').to_string())
        .collect();
    let schema = Arc::new(Schema::new(
        header
            .iter()
            .map(|h| {
                let t = if numeric(h) {
                    DataType::Int64
                } else {
                    DataType::Utf8
                };
                Field::new(h, t, false)
            })
            .collect::<Vec<_>>(),
    ));
    let file = create_private(to).map_err(|e| e.to_string())?;
    let mut out = std::io::BufWriter::new(file);
    let mut writer = ArrowWriter::try_new(
        &mut out,
        schema.clone(),
        Some(crate::release::outputs::parquet::properties(BATCH_ROWS)),
    )
    .map_err(|e| e.to_string())?;
    enum Builder {
        Text(StringBuilder),
        Number(Int64Builder),
    }
    let new_builders = || -> Vec<Builder> {
        header
            .iter()
            .map(|h| {
                if numeric(h) {
                    Builder::Number(Int64Builder::with_capacity(BATCH_ROWS))
                } else {
                    Builder::Text(StringBuilder::with_capacity(BATCH_ROWS, BATCH_ROWS * 8))
                }
            })
            .collect()
    };
    let mut builders = new_builders();
    let mut rows = 0;
    let mut flush = |builders: Vec<Builder>| -> Result<(), String> {
        let columns: Vec<ArrayRef> = builders
            .into_iter()
            .map(|b| match b {
                Builder::Text(mut b) => Arc::new(b.finish()) as ArrayRef,
                Builder::Number(mut b) => Arc::new(b.finish()) as ArrayRef,
            })
            .collect();
        let batch = RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())?;
        writer.write(&batch).map_err(|e| e.to_string())
    };
    let mut record = csv::StringRecord::new();
    while reader.read_record(&mut record).map_err(|e| e.to_string())? {
        // Lines of nothing but spaces, which the loader skips.
        if record.len() == 1 && header.len() > 1 && record[0].is_empty() {
            continue;
        }
        for (b, value) in builders.iter_mut().zip(record.iter()) {
            match b {
                Builder::Text(b) => b.append_value(value),
                Builder::Number(b) => b.append_value(
                    value
                        .parse::<i64>()
                        .map_err(|_| format!("{value:?} is not a 64-bit integer"))?,
                ),
            }
        }
        rows += 1;
        if rows == BATCH_ROWS {
            flush(std::mem::replace(&mut builders, new_builders()))?;
            rows = 0;
        }
    }
    if rows > 0 {
        flush(builders)?;
    }
    writer.close().map_err(|e| e.to_string())?;
    std::io::Write::flush(&mut out).map_err(|e| e.to_string())?;
    out.into_inner()
        .map_err(|e| e.to_string())?
        .sync_all()
        .map_err(|e| e.to_string())
}
