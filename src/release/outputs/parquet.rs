//! A release in Parquet: `counts.parquet` and `tables/<i>-<level>.parquet`, the same
//! columns and rows as `counts.csv` and the wide tables, and their read-back.
//!
//! Columns are strings (`level`, `region`, `name`) and 64-bit signed integers (`size`,
//! `count`, `groups`, `size_0` …), none nullable; a region without a name has an empty
//! `name`, as in the CSV. Rows are built as Arrow record batches in parallel chunks of
//! regions (the chunks of `counts.csv`) and written in order by one thread through
//! [`ArrowWriter`], which flushes a row group every [`ROW_GROUP_ROWS`] rows: memory holds
//! a few batches and one row group, never the release.
//!
//! Reading back streams the file batch by batch: `counts.parquet` goes through the
//! same checks as `counts.csv` ([`CountChecker`]) and its histograms are compared with
//! the ones written; a table is compared row by row with what it should hold.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, mpsc};

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use rayon::prelude::*;

use crate::data::{Hierarchy, NodeId, PublicData};
use crate::histogram::{Count, HistogramSet, Histograms, Size};
use crate::release::outputs::read_back::{CountChecker, CountRow};
use crate::release::outputs::rows::{CHUNK_REGIONS, DisplayIds, chunks_of};
use crate::release::pipeline::checks::Checks;

/// Rows per row group (about 20 MB of `counts.csv` text).
pub(super) const ROW_GROUP_ROWS: usize = 1 << 20;

/// Rows per batch when reading back.
const READ_BATCH: usize = 1 << 16;

fn other(message: String) -> std::io::Error {
    std::io::Error::other(message)
}

fn parquet_error(e: parquet::errors::ParquetError) -> std::io::Error {
    match e {
        parquet::errors::ParquetError::External(e) => match e.downcast::<std::io::Error>() {
            Ok(io) => *io,
            Err(e) => other(e.to_string()),
        },
        e => other(e.to_string()),
    }
}

pub(crate) fn arrow_error(e: arrow_schema::ArrowError) -> std::io::Error {
    match e {
        arrow_schema::ArrowError::IoError(_, io) => io,
        e => other(e.to_string()),
    }
}

/// The columns of `counts.parquet`.
pub(crate) fn counts_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("level", DataType::Utf8, false),
        Field::new("region", DataType::Utf8, false),
        Field::new("size", DataType::Int64, false),
        Field::new("count", DataType::Int64, false),
    ]))
}

/// The names of the wide tables' number columns, after `region` and `name`.
fn table_number_columns() -> Vec<String> {
    let mut names = vec!["groups".to_string()];
    names.extend((0..7).map(|s| format!("size_{s}")));
    names.push("size_7_or_more".into());
    names
}

/// The columns of a wide table.
pub(super) fn table_schema() -> SchemaRef {
    let mut fields = vec![
        Field::new("region", DataType::Utf8, false),
        Field::new("name", DataType::Utf8, false),
    ];
    fields.extend(
        table_number_columns()
            .into_iter()
            .map(|n| Field::new(n, DataType::Int64, false)),
    );
    Arc::new(Schema::new(fields))
}

/// How coco writes Parquet: zstd at its default level (read by pyarrow, polars, DuckDB
/// and Spark alike), row groups of at most `row_group_rows` rows.
pub fn properties(row_group_rows: usize) -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(row_group_rows.max(1)))
        .set_created_by(format!("coco {}", env!("CARGO_PKG_VERSION")))
        .build()
}

/// A count, size or total as a Parquet `INT64` (every value coco publishes is below
/// 2^63: at most 10^12 groups).
pub(crate) fn int64(value: u64) -> std::io::Result<i64> {
    i64::try_from(value).map_err(|_| other(format!("{value} does not fit a 64-bit integer")))
}

/// Writes the batches `make(0..chunks)` in order to a Parquet file on `w`: batches are
/// made in parallel, a bounded number at a time, while a thread of its own encodes the
/// previous ones.
pub(crate) fn write_batches<W, F>(
    w: W,
    schema: SchemaRef,
    chunks: usize,
    make: F,
) -> std::io::Result<()>
where
    W: Write + Send,
    F: Fn(usize) -> std::io::Result<RecordBatch> + Sync,
{
    let mut writer =
        ArrowWriter::try_new(w, schema, Some(properties(ROW_GROUP_ROWS))).map_err(parquet_error)?;
    let at_once = 2 * rayon::current_num_threads().max(1);
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::sync_channel::<Vec<RecordBatch>>(1);
        let encoder = scope.spawn(move || -> std::io::Result<()> {
            for batches in rx {
                for batch in batches.iter().filter(|b| b.num_rows() > 0) {
                    writer.write(batch).map_err(parquet_error)?;
                }
            }
            writer.close().map_err(parquet_error)?;
            Ok(())
        });
        let mut made = Ok(());
        for start in (0..chunks).step_by(at_once) {
            let end = (start + at_once).min(chunks);
            match (start..end)
                .into_par_iter()
                .map(&make)
                .collect::<std::io::Result<Vec<_>>>()
            {
                // A send fails only when the encoder stopped on an error, returned below.
                Ok(batches) => {
                    if tx.send(batches).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    made = Err(e);
                    break;
                }
            }
        }
        drop(tx);
        let written = encoder
            .join()
            .unwrap_or_else(|_| Err(other("the Parquet writing thread panicked".into())));
        // An error in making a batch leaves the file unfinished: report that error.
        made.and(written)
    })
}

/// Writes `counts.parquet`: `level, region, size, count`, the rows of `counts.csv` in
/// its order.
pub(super) fn write_counts<W: Write + Send>(
    w: W,
    h: &Hierarchy,
    hists: &HistogramSet,
    levels: &[Vec<NodeId>],
) -> std::io::Result<()> {
    let schema = counts_schema();
    let chunks = chunks_of(levels);
    write_batches(w, schema.clone(), chunks.len(), |i| {
        let (l, range) = &chunks[i];
        let ids = &levels[*l][range.clone()];
        let rows: usize = ids
            .iter()
            .map(|id| hists.hist(id.index()).pairs().len())
            .sum();
        let level_name = h.level_name(crate::data::LevelId(*l));
        let mut level =
            arrow_array::builder::StringBuilder::with_capacity(rows, rows * level_name.len());
        let mut region = arrow_array::builder::StringBuilder::with_capacity(rows, rows * 16);
        let (mut size, mut count) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
        let mut regions = DisplayIds::new(h);
        for &id in ids {
            let pairs = hists.hist(id.index()).pairs();
            if pairs.is_empty() {
                continue;
            }
            let name = regions.of(id);
            level.append_value_n(level_name, pairs.len());
            region.append_value_n(name, pairs.len());
            for &(s, c) in pairs {
                size.push(i64::from(s));
                count.push(int64(c)?);
            }
        }
        let columns: Vec<ArrayRef> = vec![
            Arc::new(level.finish()),
            Arc::new(region.finish()),
            Arc::new(Int64Array::from(size)),
            Arc::new(Int64Array::from(count)),
        ];
        RecordBatch::try_new(schema.clone(), columns).map_err(arrow_error)
    })
}

/// The cells of a region's row in a wide table: groups, sizes 0–6, 7 or more.
fn wide_cells(hists: &HistogramSet, id: NodeId) -> [Count; 9] {
    let hist = hists.hist(id.index());
    let mut cells: [Count; 9] = [0; 9];
    cells[0] = hist.groups();
    for &(size, count) in hist.pairs() {
        cells[1 + (size as usize).min(7)] += count;
    }
    cells
}

/// Writes a level's wide table: `region, name, groups, size_0 … size_6,
/// size_7_or_more`, the rows of its CSV table.
pub(super) fn write_wide<W: Write + Send>(
    w: W,
    h: &Hierarchy,
    hists: &HistogramSet,
    ids: &[NodeId],
) -> std::io::Result<()> {
    let schema = table_schema();
    let chunks = ids.len().div_ceil(CHUNK_REGIONS);
    write_batches(w, schema.clone(), chunks, |i| {
        let ids = &ids[i * CHUNK_REGIONS..((i + 1) * CHUNK_REGIONS).min(ids.len())];
        let mut region = arrow_array::builder::StringBuilder::with_capacity(ids.len(), 0);
        let mut name = arrow_array::builder::StringBuilder::with_capacity(ids.len(), 0);
        let mut numbers: Vec<Vec<i64>> = (0..9).map(|_| Vec::with_capacity(ids.len())).collect();
        let mut regions = DisplayIds::new(h);
        for &id in ids {
            region.append_value(regions.of(id));
            name.append_value(h.name(id).unwrap_or_default());
            for (column, value) in numbers.iter_mut().zip(wide_cells(hists, id)) {
                column.push(int64(value)?);
            }
        }
        let mut columns: Vec<ArrayRef> = vec![Arc::new(region.finish()), Arc::new(name.finish())];
        columns.extend(
            numbers
                .into_iter()
                .map(|v| Arc::new(Int64Array::from(v)) as ArrayRef),
        );
        RecordBatch::try_new(schema.clone(), columns).map_err(arrow_error)
    })
}

/// Opens a Parquet file coco wrote and checks that its columns are `schema`'s; the
/// batches of its rows, read as they are needed.
pub(crate) fn open_batches(
    path: &Path,
    schema: &SchemaRef,
) -> std::io::Result<impl Iterator<Item = std::io::Result<RecordBatch>> + use<>> {
    let file = std::fs::File::open(path)?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(parquet_error)?;
    let found = builder.schema();
    let names = |s: &Schema| {
        s.fields()
            .iter()
            .map(|f| format!("{} ({})", f.name(), f.data_type()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let same = found.fields().len() == schema.fields().len()
        && found
            .fields()
            .iter()
            .zip(schema.fields())
            .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type());
    if !same {
        return Err(other(format!(
            "the columns are {}: expected {}",
            names(found),
            names(schema)
        )));
    }
    let reader = builder
        .with_batch_size(READ_BATCH)
        .build()
        .map_err(parquet_error)?;
    Ok(reader.map(|b| b.map_err(arrow_error)))
}

/// A row of `counts.parquet`, as read.
struct TypedCount<'a> {
    level: &'a str,
    region: &'a str,
    size: i64,
    count: i64,
}

impl CountRow for TypedCount<'_> {
    fn level(&self) -> &str {
        self.level
    }
    fn region(&self) -> &str {
        self.region
    }
    fn size(&self) -> Option<Size> {
        Size::try_from(self.size).ok()
    }
    fn count(&self) -> Option<i128> {
        Some(i128::from(self.count))
    }
    fn size_text(&self) -> String {
        self.size.to_string()
    }
    fn count_text(&self) -> String {
        self.count.to_string()
    }
}

/// The string column `i` of `batch` (the schema was checked).
fn strings(batch: &RecordBatch, i: usize) -> &StringArray {
    batch.column(i).as_string::<i32>()
}

fn ints(batch: &RecordBatch, i: usize) -> &Int64Array {
    batch.column(i).as_primitive::<Int64Type>()
}

/// A null where coco writes none: the file was not written by coco.
fn no_nulls(batch: &RecordBatch, first_row: u64) -> std::io::Result<()> {
    for (i, column) in batch.columns().iter().enumerate() {
        if let Some(nulls) = column.nulls()
            && let Some(row) = (0..nulls.len()).find(|&r| nulls.is_null(r))
        {
            return Err(other(format!(
                "row {}, column {}: a null, where coco writes a value",
                first_row + row as u64 + 1,
                batch.schema().field(i).name()
            )));
        }
    }
    Ok(())
}

/// Reads `counts.parquet` back: the checks of `counts.csv` ([`CountChecker`]) and the
/// histograms its rows describe (in node order). A file that is not coco's form
/// (other columns, nulls, unreadable) is an error.
pub(super) fn read_counts(
    path: &Path,
    public: PublicData<'_>,
    max_size: Size,
) -> std::io::Result<(Checks, HistogramSet)> {
    let mut checker = CountChecker::new(public);
    let mut row = 0u64;
    for batch in open_batches(path, &counts_schema())? {
        let batch = batch?;
        no_nulls(&batch, row)?;
        let (level, region) = (strings(&batch, 0), strings(&batch, 1));
        let (size, count) = (ints(&batch, 2), ints(&batch, 3));
        for r in 0..batch.num_rows() {
            checker.push(&TypedCount {
                level: level.value(r),
                region: region.value(r),
                size: size.value(r),
                count: count.value(r),
            });
        }
        row += batch.num_rows() as u64;
    }
    Ok(checker.finish_with_histograms(max_size))
}

/// Where two sets of histograms over the same regions first differ, if they do.
pub(super) fn first_difference(
    h: &Hierarchy,
    read: &HistogramSet,
    written: &HistogramSet,
) -> Option<String> {
    if read.regions() != written.regions() {
        return Some(format!(
            "{} regions read back, {} written",
            read.regions(),
            written.regions()
        ));
    }
    (0..read.regions())
        .into_par_iter()
        .find_first(|&i| read.hist(i).pairs() != written.hist(i).pairs())
        .map(|i| {
            format!(
                "the rows of {} differ from the ones written",
                h.display_id(NodeId(i as u32))
            )
        })
}

/// Reads a wide table back and compares it, row by row, with what it should hold.
pub(super) fn check_wide(
    path: &Path,
    h: &Hierarchy,
    hists: &HistogramSet,
    ids: &[NodeId],
) -> std::io::Result<()> {
    let mut regions = DisplayIds::new(h);
    let mut next = ids.iter();
    let mut row = 0u64;
    for batch in open_batches(path, &table_schema())? {
        let batch = batch?;
        no_nulls(&batch, row)?;
        let (region, name) = (strings(&batch, 0), strings(&batch, 1));
        let numbers: Vec<&Int64Array> = (2..11).map(|i| ints(&batch, i)).collect();
        for r in 0..batch.num_rows() {
            row += 1;
            let Some(&id) = next.next() else {
                return Err(other(format!(
                    "row {row}: more rows than the {} regions of the level",
                    ids.len()
                )));
            };
            let same = region.value(r) == regions.of(id)
                && name.value(r) == h.name(id).unwrap_or_default()
                && numbers
                    .iter()
                    .zip(wide_cells(hists, id))
                    .all(|(column, value)| i128::from(column.value(r)) == i128::from(value));
            if !same {
                return Err(other(format!(
                    "row {row} ({}) differs from the one written",
                    region.value(r)
                )));
            }
        }
    }
    if next.next().is_some() {
        return Err(other(format!(
            "{row} rows read back: expected one per region, {}",
            ids.len()
        )));
    }
    Ok(())
}

/// Rows of a Parquet file coco wrote, one at a time (for `coco verify`'s cross-checks):
/// the batches are read as the rows are asked for.
pub(super) struct RowReader {
    batches: Box<dyn Iterator<Item = std::io::Result<RecordBatch>>>,
    batch: Option<RecordBatch>,
    at: usize,
    row: u64,
}

impl RowReader {
    fn open(path: &Path, schema: &SchemaRef) -> std::io::Result<RowReader> {
        Ok(RowReader {
            batches: Box::new(open_batches(path, schema)?),
            batch: None,
            at: 0,
            row: 0,
        })
    }

    /// The batch holding the next row and its index in it, or `None` at the end.
    fn advance(&mut self) -> Option<std::io::Result<(&RecordBatch, usize)>> {
        loop {
            if let Some(b) = &self.batch
                && self.at < b.num_rows()
            {
                self.at += 1;
                self.row += 1;
                return Some(Ok((self.batch.as_ref().expect("set"), self.at - 1)));
            }
            match self.batches.next()? {
                Ok(b) => {
                    if let Err(e) = no_nulls(&b, self.row) {
                        return Some(Err(e));
                    }
                    self.batch = Some(b);
                    self.at = 0;
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// `counts.parquet`'s rows: level, region, size, count.
pub(super) struct CountRows(RowReader);

impl CountRows {
    pub(super) fn open(path: &Path) -> std::io::Result<CountRows> {
        RowReader::open(path, &counts_schema()).map(CountRows)
    }

    pub(super) fn next_row(&mut self) -> Option<std::io::Result<(String, String, i64, i64)>> {
        Some(self.0.advance()?.map(|(b, r)| {
            (
                strings(b, 0).value(r).to_string(),
                strings(b, 1).value(r).to_string(),
                ints(b, 2).value(r),
                ints(b, 3).value(r),
            )
        }))
    }
}

/// A wide table's rows: region and its nine numbers (groups, sizes 0–6, 7 or more).
pub(super) struct WideRows(RowReader);

impl WideRows {
    pub(super) fn open(path: &Path) -> std::io::Result<WideRows> {
        RowReader::open(path, &table_schema()).map(WideRows)
    }

    pub(super) fn next_row(&mut self) -> Option<std::io::Result<(String, [i64; 9])>> {
        Some(self.0.advance()?.map(|(b, r)| {
            let mut cells = [0i64; 9];
            for (i, c) in cells.iter_mut().enumerate() {
                *c = ints(b, 2 + i).value(r);
            }
            (strings(b, 0).value(r).to_string(), cells)
        }))
    }
}

/// Writes a numeric table ([`crate::release::outputs::numeric`]): the schema's two
/// string columns and 64-bit integer columns, the rows of its CSV form.
pub(crate) fn write_numeric<W: Write + Send>(
    w: W,
    table: &crate::release::outputs::numeric::NumericTable<'_>,
) -> std::io::Result<()> {
    let schema = table.schema.clone();
    let columns = table.number_columns();
    write_batches(w, schema.clone(), table.chunks, |i| {
        let mut rows = crate::release::outputs::numeric::NumericRows::new(columns);
        (table.fill)(i, &mut rows)?;
        let mut arrays: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(&rows.first)),
            Arc::new(StringArray::from_iter_values(&rows.second)),
        ];
        for column in &rows.numbers {
            let values = column
                .iter()
                .map(|&v| int64(v))
                .collect::<std::io::Result<Vec<i64>>>()?;
            arrays.push(Arc::new(Int64Array::from(values)));
        }
        RecordBatch::try_new(schema.clone(), arrays).map_err(arrow_error)
    })
}
