//! One Parquet input file (`groups.parquet`, `entities.parquet`, `histograms.parquet`),
//! read once as a stream of record batches and handed on a row at a time through the
//! same interface as a CSV file ([`super::table::TableFile`]), so that every row check
//! of the CSV forms applies unchanged.
//!
//! What a Parquet file may hold: exactly the columns of the CSV form (by name, in any
//! order, each once; nested columns are refused). Codes (`region`) are strings; numbers
//! (`size`, `count`) are integers of any width, signed or unsigned; ids (`group_id`,
//! `entity_id`) are strings or integers (an integer id is its decimal text, so `42`
//! in `groups.parquet` is the group `42` of an `entities.csv`). The arrow schema some
//! writers embed is ignored: types are read from the Parquet schema itself, so a
//! dictionary-encoded or "large" string column is a string column like any other.
//! Strings are trimmed of ASCII whitespace like CSV fields, hold at most 1,024 bytes,
//! and must be UTF-8. A null anywhere is an error.
//!
//! Positions are data rows, 1-based across row groups (the first row of the file is
//! row 1), and columns by name: `groups.parquet: row 12, column size: …`.
//!
//! Memory: the reader holds one batch of rows ([`BATCH_ROWS`]) and the pages it is
//! decoding, never a whole row group; progress follows the bytes the reader has fetched,
//! and the file's SHA-256 is computed by a thread of its own reading it in order.

use std::fs::File;
use std::io::{self, Read};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::{
    ArrowReaderOptions, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder,
};
use parquet::file::reader::{ChunkReader, Length};
use sha2::{Digest, Sha256};

use super::csv_input::{check_header, shown};
use super::load::{LoadError, LoadErrorKind, LoadProgress, Position};
use super::text::MAX_FIELD_BYTES;
use super::{InputFile, hex};

/// Rows decoded at a time.
pub(crate) const BATCH_ROWS: usize = 8192;

/// Progress is reported at most once per this many bytes fetched.
const PROGRESS_STEP: u64 = 4 << 20;

/// What a column of the contract holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// A code (`region`): a string.
    Code,
    /// A number (`size`, `count`): an integer.
    Number,
    /// An id (`group_id`, `entity_id`): a string or an integer.
    Id,
}

impl Role {
    fn of(column: &str) -> Role {
        match column {
            "size" | "count" => Role::Number,
            "group_id" | "entity_id" => Role::Id,
            _ => Role::Code,
        }
    }

    fn expected(self) -> &'static str {
        match self {
            Role::Code => "a string (codes are text: a number would lose leading zeros)",
            Role::Number => "an integer (of any width, signed or unsigned)",
            Role::Id => "a string or an integer",
        }
    }

    fn accepts(self, kind: Kind) -> bool {
        matches!(
            (self, kind),
            (Role::Code, Kind::Bytes) | (Role::Number, Kind::Int) | (Role::Id, _)
        )
    }
}

/// The kinds of Arrow column this reader takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Bytes,
    Int,
}

fn kind_of(t: &DataType) -> Option<Kind> {
    match t {
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView => Some(Kind::Bytes),
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => Some(Kind::Int),
        _ => None,
    }
}

/// The file as the Parquet reader fetches it, counting the bytes fetched.
struct Source {
    file: File,
    len: u64,
    fetched: Arc<AtomicU64>,
}

impl Length for Source {
    fn len(&self) -> u64 {
        self.len
    }
}

/// A reader from the file that counts what it reads.
struct Counting<R> {
    inner: R,
    fetched: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.fetched.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl ChunkReader for Source {
    type T = Counting<<File as ChunkReader>::T>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        Ok(Counting {
            inner: self.file.get_read(start)?,
            fetched: self.fetched.clone(),
        })
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        let bytes = self.file.get_bytes(start, length)?;
        self.fetched.fetch_add(length as u64, Ordering::Relaxed);
        Ok(bytes)
    }
}

/// The SHA-256 of a file, computed on a thread of its own; stops early when asked.
struct Digesting {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<io::Result<String>>>,
}

impl Digesting {
    fn start(mut file: File) -> Digesting {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut sha = Sha256::new();
            let mut buf = vec![0u8; 1 << 20];
            loop {
                if stopped.load(Ordering::Relaxed) {
                    return Err(io::Error::other("stopped"));
                }
                match file.read(&mut buf) {
                    Ok(0) => return Ok(hex(&sha.finalize())),
                    Ok(n) => sha.update(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        });
        Digesting {
            stop,
            thread: Some(thread),
        }
    }

    fn finish(mut self) -> io::Result<String> {
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(digest)) => digest,
            _ => Err(io::Error::other("the digest thread stopped")),
        }
    }
}

impl Drop for Digesting {
    fn drop(&mut self) {
        // An abandoned load does not wait for the digest.
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// One column of the current batch.
enum Column {
    Bytes(ArrayRef),
    /// Integers widened, with their nulls; `text` holds the current row's decimal
    /// text for an id column.
    Int {
        array: ArrayRef,
        values: Vec<i128>,
        text: Option<String>,
    },
}

/// The bytes of row `r` of a string or binary column.
fn bytes_at(array: &ArrayRef, r: usize) -> &[u8] {
    match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().value(r).as_bytes(),
        DataType::LargeUtf8 => array.as_string::<i64>().value(r).as_bytes(),
        DataType::Utf8View => array.as_string_view().value(r).as_bytes(),
        DataType::Binary => array.as_binary::<i32>().value(r),
        DataType::LargeBinary => array.as_binary::<i64>().value(r),
        _ => array.as_binary_view().value(r),
    }
}

/// An integer column's values, widened.
fn widened(array: &ArrayRef) -> Vec<i128> {
    macro_rules! widen {
        ($t:ty) => {
            array
                .as_primitive::<$t>()
                .values()
                .iter()
                .map(|&v| i128::from(v))
                .collect()
        };
    }
    match array.data_type() {
        DataType::Int8 => widen!(Int8Type),
        DataType::Int16 => widen!(Int16Type),
        DataType::Int32 => widen!(Int32Type),
        DataType::Int64 => widen!(Int64Type),
        DataType::UInt8 => widen!(UInt8Type),
        DataType::UInt16 => widen!(UInt16Type),
        DataType::UInt32 => widen!(UInt32Type),
        _ => widen!(UInt64Type),
    }
}

/// An open Parquet file, positioned before its first row.
pub(crate) struct ParquetFile<'p> {
    path: PathBuf,
    name: &'static str,
    header: Vec<String>,
    roles: Vec<Role>,
    total: u64,
    fetched: Arc<AtomicU64>,
    reported: u64,
    progress: &'p mut dyn FnMut(LoadProgress) -> ControlFlow<()>,
    builder: Option<ParquetRecordBatchReaderBuilder<Source>>,
    reader: Option<ParquetRecordBatchReader>,
    digest: Option<Digesting>,
    columns: Vec<Column>,
    /// Rows in the current batch, the current row in it, and rows before the batch.
    batch_rows: usize,
    at: usize,
    rows_before: u64,
}

impl<'p> ParquetFile<'p> {
    /// Opens `dir/name` and reads its schema.
    pub fn open(
        dir: &Path,
        name: &'static str,
        progress: &'p mut dyn FnMut(LoadProgress) -> ControlFlow<()>,
    ) -> Result<Self, LoadError> {
        let path = dir.join(name);
        let io_err = |source| LoadError::in_file(&path, LoadErrorKind::Io { source });
        let file = File::open(&path).map_err(io_err)?;
        let total = file.metadata().map_err(io_err)?.len();
        let not_parquet =
            |problem: String| LoadError::in_file(&path, LoadErrorKind::NotParquet { problem });
        if total == 0 {
            return Err(not_parquet("the file is empty (0 bytes)".into()));
        }
        // A file of its own: a clone would share the reader's offset.
        let digest = Digesting::start(File::open(&path).map_err(io_err)?);
        let fetched = Arc::new(AtomicU64::new(0));
        let source = Source {
            file,
            len: total,
            fetched: fetched.clone(),
        };
        let options = ArrowReaderOptions::new().with_skip_arrow_metadata(true);
        let builder = ParquetRecordBatchReaderBuilder::try_new_with_options(source, options)
            .map_err(|e| not_parquet(e.to_string()))?;
        let header: Vec<String> = builder
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let roles = header.iter().map(|n| Role::of(n)).collect();
        let mut file = ParquetFile {
            path: path.clone(),
            name,
            header,
            roles,
            total,
            fetched,
            reported: 0,
            progress,
            builder: Some(builder),
            reader: None,
            digest: Some(digest),
            columns: Vec::new(),
            batch_rows: 0,
            at: 0,
            rows_before: 0,
        };
        file.report().map_err(io_err)?;
        Ok(file)
    }

    fn report(&mut self) -> io::Result<()> {
        let bytes = self.fetched.load(Ordering::Relaxed).min(self.total);
        self.reported = bytes;
        match (self.progress)(LoadProgress {
            file: self.name.to_string(),
            bytes_read: bytes,
            bytes_total: self.total,
        }) {
            ControlFlow::Continue(()) => Ok(()),
            ControlFlow::Break(()) => Err(io::Error::other("loading was cancelled")),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The names of the file's (top-level) columns.
    pub fn header(&self) -> &[String] {
        &self.header
    }

    /// Finds the expected columns (any order, each once, nothing else) and checks
    /// their types.
    pub fn columns<const N: usize>(
        &mut self,
        expected: [&str; N],
        hint: &str,
    ) -> Result<[usize; N], LoadError> {
        let found = check_header(&self.path, &self.header, expected, hint, None)?;
        let schema = self
            .builder
            .as_ref()
            .expect("columns are found before rows are read")
            .schema()
            .clone();
        for (i, field) in schema.fields().iter().enumerate() {
            let role = self.roles[i];
            if !kind_of(field.data_type()).is_some_and(|k| role.accepts(k)) {
                return Err(LoadError {
                    position: Position::Rows {
                        column_name: Box::default(),
                    },
                    ..LoadError::in_file(
                        &self.path,
                        LoadErrorKind::ColumnType {
                            column: shown(field.name().as_bytes()).into(),
                            found: field.data_type().to_string().into(),
                            expected: role.expected(),
                        },
                    )
                });
            }
        }
        Ok(found)
    }

    /// Reads the next row; `Ok(false)` after the last. A null, a string over 1,024
    /// bytes or one that is not UTF-8 is an error at its row and column.
    pub fn next_row(&mut self) -> Result<bool, LoadError> {
        self.at += 1;
        if self.at >= self.batch_rows {
            let Some(batch) = self.next_batch()? else {
                return Ok(false);
            };
            self.rows_before += self.batch_rows as u64;
            self.batch_rows = batch.num_rows();
            self.at = 0;
            self.columns = batch
                .columns()
                .iter()
                .map(|array| match kind_of(array.data_type()) {
                    Some(Kind::Int) => Column::Int {
                        array: array.clone(),
                        values: widened(array),
                        text: None,
                    },
                    _ => Column::Bytes(array.clone()),
                })
                .collect();
            if self.batch_rows == 0 {
                return self.next_row();
            }
        }
        let r = self.at;
        for i in 0..self.columns.len() {
            let null = match &self.columns[i] {
                Column::Bytes(array) | Column::Int { array, .. } => array.is_null(r),
            };
            if null {
                return Err(self.error(
                    Some(i),
                    LoadErrorKind::Null {
                        column: shown(self.header[i].as_bytes()),
                    },
                ));
            }
            match &mut self.columns[i] {
                Column::Bytes(array) => {
                    let bytes = bytes_at(array, r);
                    if bytes.len() > MAX_FIELD_BYTES {
                        let bytes = bytes.len();
                        return Err(self.error(Some(i), LoadErrorKind::FieldTooLong { bytes }));
                    }
                    if let Err(e) = std::str::from_utf8(bytes) {
                        let at = e.valid_up_to();
                        let byte = bytes[at];
                        return Err(self.error(
                            Some(i),
                            LoadErrorKind::NotUtf8 {
                                byte,
                                offset: at + 1,
                            },
                        ));
                    }
                }
                Column::Int { values, text, .. } => {
                    if self.roles[i] == Role::Id {
                        let text = text.get_or_insert_with(String::new);
                        text.clear();
                        text.push_str(itoa::Buffer::new().format(values[r]));
                    }
                }
            }
        }
        Ok(true)
    }

    /// The next batch of rows, reporting progress; `None` at the end.
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, LoadError> {
        if let Some(builder) = self.builder.take() {
            let reader = builder.with_batch_size(BATCH_ROWS).build().map_err(|e| {
                self.in_file(LoadErrorKind::NotParquet {
                    problem: e.to_string(),
                })
            })?;
            self.reader = Some(reader);
        }
        let next = self.reader.as_mut().and_then(Iterator::next);
        if self.fetched.load(Ordering::Relaxed) - self.reported >= PROGRESS_STEP {
            self.report()
                .map_err(|source| self.in_file(LoadErrorKind::Io { source }))?;
        }
        match next {
            None => Ok(None),
            Some(Ok(batch)) => Ok(Some(batch)),
            Some(Err(e)) => {
                let row = self.rows_before + self.batch_rows as u64 + 1;
                Err(LoadError {
                    line: Some(row),
                    ..self.in_file(LoadErrorKind::NotParquet {
                        problem: e.to_string(),
                    })
                })
            }
        }
    }

    fn in_file(&self, kind: LoadErrorKind) -> LoadError {
        LoadError {
            position: Position::Rows {
                column_name: Box::default(),
            },
            ..LoadError::in_file(&self.path, kind)
        }
    }

    /// The current row, 1-based.
    pub fn line(&self) -> u64 {
        self.rows_before + self.at as u64 + 1
    }

    /// Column `i` of the current row as text, trimmed (an integer id as its decimal
    /// text).
    pub fn field(&self, i: usize) -> &[u8] {
        match &self.columns[i] {
            Column::Bytes(array) => bytes_at(array, self.at).trim_ascii(),
            Column::Int { text, .. } => text.as_deref().unwrap_or_default().as_bytes(),
        }
    }

    /// Column `i` as an integer from 0 to `max`; `column` names it in messages.
    pub fn uint(&self, i: usize, column: &'static str, max: u64) -> Result<u64, LoadError> {
        let Column::Int { values, .. } = &self.columns[i] else {
            // Number columns are integers (checked by `columns`).
            return Err(self.error(
                Some(i),
                LoadErrorKind::ColumnType {
                    column: shown(self.header[i].as_bytes()).into(),
                    found: "a string".into(),
                    expected: Role::Number.expected(),
                },
            ));
        };
        let value = values[self.at];
        match u64::try_from(value) {
            Ok(v) if v <= max => Ok(v),
            Ok(_) => Err(self.error(
                Some(i),
                LoadErrorKind::TooLarge {
                    column,
                    value: value.to_string(),
                    max,
                },
            )),
            Err(_) => Err(self.error(
                Some(i),
                LoadErrorKind::NotInteger {
                    column,
                    value: value.to_string(),
                    max,
                },
            )),
        }
    }

    /// An error at the current row and, if given, column `column` (0-based).
    pub fn error(&self, column: Option<usize>, kind: LoadErrorKind) -> LoadError {
        rows_error(&self.path, &self.header, self.line(), column, kind)
    }

    /// The file's description, once every row has been read.
    pub fn finish(mut self) -> Result<InputFile, LoadError> {
        let path = self.path.clone();
        let io_err = |source| LoadError::in_file(&path, LoadErrorKind::Io { source });
        self.fetched.store(self.total, Ordering::Relaxed);
        self.report().map_err(io_err)?;
        let sha256 = self
            .digest
            .take()
            .expect("finished once")
            .finish()
            .map_err(io_err)?;
        Ok(InputFile {
            path: self.name.to_string(),
            sha256,
            bytes: self.total,
        })
    }
}

/// An error at data row `row` (1-based) and, if given, column `column` (0-based) of a
/// Parquet file whose columns are `header`.
pub(crate) fn rows_error(
    path: &Path,
    header: &[String],
    row: u64,
    column: Option<usize>,
    kind: LoadErrorKind,
) -> LoadError {
    LoadError {
        file: path.to_path_buf(),
        line: Some(row),
        column: column.map(|c| super::load_error::field_number(c + 1)),
        kind,
        position: Position::Rows {
            column_name: column
                .map(|c| super::csv_input::shown_name(&header[c]))
                .unwrap_or_default()
                .into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Compression;
    use parquet::file::properties::WriterProperties;

    /// A file of one row group far larger than a batch is read a page at a time: when
    /// the first row is handed on, most of the row group has not been fetched, and
    /// progress is reported as the pages come.
    #[test]
    fn a_row_group_is_not_read_whole() {
        const ROWS: usize = 400_000;
        let dir = tempfile::tempdir().unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new("region", DataType::Utf8, false),
            Field::new("size", DataType::Int64, false),
            Field::new("count", DataType::Int64, false),
        ]));
        let regions: Vec<String> = (0..ROWS).map(|i| format!("r{:011}", i * 7919)).collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from(regions)),
                Arc::new(Int64Array::from_iter_values(
                    (0..ROWS as i64).map(|i| i * 31),
                )),
                Arc::new(Int64Array::from_iter_values(
                    (0..ROWS as i64).map(|i| i ^ 0x5555),
                )),
            ],
        )
        .unwrap();
        let props = WriterProperties::builder()
            .set_compression(Compression::UNCOMPRESSED)
            .set_dictionary_enabled(false)
            .set_max_row_group_row_count(Some(ROWS))
            .build();
        let path = dir.path().join("histograms.parquet");
        let mut w =
            ArrowWriter::try_new(File::create(&path).unwrap(), schema, Some(props)).unwrap();
        w.write(&batch).unwrap();
        let meta = w.close().unwrap();
        assert_eq!(meta.num_row_groups(), 1);
        let total = std::fs::metadata(&path).unwrap().len();
        assert!(total > 10 << 20, "{total}");

        let mut reports = Vec::new();
        let mut progress = |p: LoadProgress| {
            reports.push(p.bytes_read);
            ControlFlow::Continue(())
        };
        let mut f = ParquetFile::open(dir.path(), "histograms.parquet", &mut progress).unwrap();
        f.columns(["region", "size", "count"], "").unwrap();
        assert!(f.next_row().unwrap());
        let fetched = f.fetched.load(Ordering::Relaxed);
        assert!(
            fetched < total / 3,
            "{fetched} of {total} bytes fetched for the first row"
        );
        let mut rows = 1;
        while f.next_row().unwrap() {
            rows += 1;
        }
        assert_eq!(rows, ROWS);
        assert_eq!(f.line(), ROWS as u64 + 1);
        let input = f.finish().unwrap();
        assert_eq!(input.bytes, total);
        assert_eq!(
            input.sha256,
            hex(&Sha256::digest(std::fs::read(&path).unwrap()))
        );
        // Reported at opening, at least twice on the way, and at the end.
        assert!(reports.len() >= 4, "{reports:?}");
        assert!(reports.windows(2).all(|w| w[0] <= w[1]), "{reports:?}");
        assert_eq!(reports.last(), Some(&total));
    }

    /// A load cancelled through progress stops within the row group.
    #[test]
    fn cancelling_stops_within_a_row_group() {
        let dir = tempfile::tempdir().unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new(
            "count",
            DataType::Int64,
            false,
        )]));
        let n = 2_000_000i64;
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from_iter_values(
                (0..n).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15u64 as i64)),
            ))],
        )
        .unwrap();
        let props = WriterProperties::builder()
            .set_compression(Compression::UNCOMPRESSED)
            .set_dictionary_enabled(false)
            .set_max_row_group_row_count(Some(n as usize))
            .build();
        let path = dir.path().join("t.parquet");
        let mut w =
            ArrowWriter::try_new(File::create(&path).unwrap(), schema, Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let mut calls = 0;
        let mut progress = |_: LoadProgress| {
            calls += 1;
            if calls > 1 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let mut f = ParquetFile::open(dir.path(), "t.parquet", &mut progress).unwrap();
        f.columns(["count"], "").unwrap();
        let mut rows = 0u64;
        let e = loop {
            match f.next_row() {
                Ok(true) => rows += 1,
                Ok(false) => panic!("read to the end despite the cancel"),
                Err(e) => break e,
            }
        };
        assert!(e.to_string().contains("loading was cancelled"), "{e}");
        assert!(rows < n as u64 / 2, "{rows} rows read");
    }
}
