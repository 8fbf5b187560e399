//! A groups table read a row at a time, from CSV or from Parquet: the readers of the
//! groups forms ([`super::groups`]) see one interface, so every row check is the same
//! whatever the file's format. The format is the file name's extension.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use super::InputFile;
use super::csv_input::CsvFile;
use super::load::{LoadError, LoadErrorKind, LoadProgress, Place};
use super::parquet_input::{ParquetFile, rows_error};

/// An open groups table, positioned before its first row.
pub(crate) enum TableFile<'p> {
    Csv(CsvFile<'p>),
    Parquet(ParquetFile<'p>),
}

/// Makes errors at a row and column of a table once the file is closed (duplicates
/// are found after the whole file was read).
pub(crate) struct Locator {
    path: PathBuf,
    /// A Parquet file's column names (a CSV file's positions need none).
    parquet_columns: Option<Vec<String>>,
}

impl Locator {
    /// An error at `line` (a CSV line, or a Parquet data row) and, if given, column
    /// `column` (0-based).
    pub fn at(&self, line: u64, column: Option<usize>, kind: LoadErrorKind) -> LoadError {
        match &self.parquet_columns {
            Some(header) => rows_error(&self.path, header, line, column, kind),
            None => LoadError::at(&self.path, line, column.map(|c| c + 1), kind),
        }
    }

    /// `line` as a message names it ("line 4", "row 3").
    pub fn place(&self, line: u64) -> Place {
        Place {
            number: line,
            row: self.parquet_columns.is_some(),
        }
    }
}

macro_rules! each {
    ($self:expr, $f:ident => $e:expr) => {
        match $self {
            TableFile::Csv($f) => $e,
            TableFile::Parquet($f) => $e,
        }
    };
}

impl<'p> TableFile<'p> {
    /// Opens `dir/name`, a `.parquet` file or a CSV file. `expected` completes
    /// "expected a header row …" for a CSV file without one.
    pub fn open(
        dir: &Path,
        name: &'static str,
        expected: &str,
        progress: &'p mut dyn FnMut(LoadProgress) -> ControlFlow<()>,
    ) -> Result<Self, LoadError> {
        if name.ends_with(".parquet") {
            ParquetFile::open(dir, name, progress).map(TableFile::Parquet)
        } else {
            CsvFile::open(dir, name, expected, progress).map(TableFile::Csv)
        }
    }

    pub fn path(&self) -> &Path {
        each!(self, f => f.path())
    }

    /// The column names.
    pub fn header(&self) -> &[String] {
        each!(self, f => f.header())
    }

    /// Finds the expected columns (any order, each once, nothing else); in a Parquet
    /// file, checks their types too.
    pub fn columns<const N: usize>(
        &mut self,
        expected: [&str; N],
        hint: &str,
    ) -> Result<[usize; N], LoadError> {
        each!(self, f => f.columns(expected, hint))
    }

    /// Reads the next row; `Ok(false)` at the end.
    pub fn next_row(&mut self) -> Result<bool, LoadError> {
        each!(self, f => f.next_row())
    }

    /// The current row's line (CSV) or 1-based data row (Parquet).
    pub fn line(&self) -> u64 {
        each!(self, f => f.line())
    }

    /// Column `i` of the current row, trimmed.
    pub fn field(&self, i: usize) -> &[u8] {
        each!(self, f => f.field(i))
    }

    /// Column `i` as an integer from 0 to `max`.
    pub fn uint(&self, i: usize, column: &'static str, max: u64) -> Result<u64, LoadError> {
        each!(self, f => f.uint(i, column, max))
    }

    /// An error at the current row and, if given, column `column` (0-based).
    pub fn error(&self, column: Option<usize>, kind: LoadErrorKind) -> LoadError {
        each!(self, f => f.error(column, kind))
    }

    pub fn locator(&self) -> Locator {
        Locator {
            path: self.path().to_path_buf(),
            parquet_columns: match self {
                TableFile::Csv(_) => None,
                TableFile::Parquet(f) => Some(f.header().to_vec()),
            },
        }
    }

    /// Reads what is left and returns the file's description.
    pub fn finish(self) -> Result<InputFile, LoadError> {
        each!(self, f => f.finish())
    }
}
