//! `coco verify`'s checks of `uncertainty.csv` and `uncertainty.parquet`: the header (the
//! columns), every row integral and nonnegative with `lower ≤ count ≤ upper`, and its
//! counts those of `counts.csv` (`counts.parquet`) in the same order (a cell the counts
//! list is listed, with the same count; a cell they leave out has count 0). Read
//! streaming, both files at once.

use std::path::Path;

use crate::release::outputs::manifest::Manifest;

use super::tables::{CSV_FILE, HEADER, PARQUET_FILE};

/// At most this many problems are reported per file.
const MAX_PROBLEMS: usize = 5;

type Row = (String, String, u64, u64);

/// Rows of a `level,region,size,count[,…]` CSV file, numbers checked.
struct CsvRows {
    file: &'static str,
    reader: csv::Reader<std::fs::File>,
    record: csv::StringRecord,
    columns: usize,
}

impl CsvRows {
    fn open(path: &Path, file: &'static str, header: &str) -> Result<CsvRows, String> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_path(path)
            .map_err(|e| format!("{file}: cannot be read: {e}"))?;
        let found = reader
            .headers()
            .map_err(|e| format!("{file}: cannot read its header: {e}"))?
            .iter()
            .collect::<Vec<_>>()
            .join(",");
        if found != header {
            return Err(format!(
                "{file}: line 1: the header is \"{found}\", expected \"{header}\""
            ));
        }
        Ok(CsvRows {
            file,
            reader,
            record: csv::StringRecord::new(),
            columns: header.split(',').count(),
        })
    }

    /// The next row's level, region and numbers, or what is wrong with it.
    fn next(&mut self) -> Option<Result<(String, String, Vec<u64>), String>> {
        match self.reader.read_record(&mut self.record) {
            Ok(false) => None,
            Err(e) => Some(Err(format!("{}: {e}", self.file))),
            Ok(true) => {
                let line = self.record.position().map_or(0, |p| p.line());
                if self.record.len() != self.columns {
                    return Some(Err(format!(
                        "{}: line {line}: {} fields, expected {}",
                        self.file,
                        self.record.len(),
                        self.columns
                    )));
                }
                let mut numbers = Vec::with_capacity(self.columns - 2);
                for (i, field) in self.record.iter().enumerate().skip(2) {
                    match field.parse::<u64>() {
                        Ok(n) => numbers.push(n),
                        Err(_) => {
                            return Some(Err(format!(
                                "{}: line {line}: field {} is \"{}\", expected a nonnegative integer",
                                self.file,
                                i + 1,
                                crate::data::text::escape_controls(field)
                            )));
                        }
                    }
                }
                Some(Ok((
                    self.record[0].to_string(),
                    self.record[1].to_string(),
                    numbers,
                )))
            }
        }
    }
}

/// Rows of `level, region` and numbers, from a CSV or a Parquet file.
trait Rows {
    /// The next row, or what is wrong with it (the message names the file and row).
    fn next_row(&mut self) -> Option<Result<(String, String, Vec<u64>), String>>;
    /// Where row `n` (1 for the first after the header) is: `line n + 1` or `row n`.
    fn at(&self, n: u64) -> At;
}

/// A row's place in its file, shown as `line 12` or `row 11` (built for every row: no
/// allocation until a problem is written).
#[derive(Clone, Copy)]
struct At(&'static str, u64);

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.0, self.1)
    }
}

impl Rows for CsvRows {
    fn next_row(&mut self) -> Option<Result<(String, String, Vec<u64>), String>> {
        self.next()
    }
    fn at(&self, n: u64) -> At {
        At("line", n + 1)
    }
}

/// Rows of a Parquet file coco wrote (`level`, `region`, then 64-bit integers).
struct ParquetRows {
    file: &'static str,
    batches: Box<dyn Iterator<Item = std::io::Result<arrow_array::RecordBatch>>>,
    batch: Option<arrow_array::RecordBatch>,
    index: usize,
    row: u64,
}

impl ParquetRows {
    fn open(
        path: &Path,
        file: &'static str,
        schema: &arrow_schema::SchemaRef,
    ) -> Result<ParquetRows, String> {
        let batches = crate::release::outputs::parquet::open_batches(path, schema)
            .map_err(|e| format!("{file}: cannot be read as coco's Parquet: {e}"))?;
        Ok(ParquetRows {
            file,
            batches: Box::new(batches),
            batch: None,
            index: 0,
            row: 0,
        })
    }
}

impl Rows for ParquetRows {
    fn next_row(&mut self) -> Option<Result<(String, String, Vec<u64>), String>> {
        use arrow_array::Array;
        use arrow_array::cast::AsArray;
        use arrow_array::types::Int64Type;
        while self
            .batch
            .as_ref()
            .is_none_or(|b| self.index >= b.num_rows())
        {
            match self.batches.next()? {
                Ok(b) => {
                    self.batch = Some(b);
                    self.index = 0;
                }
                Err(e) => return Some(Err(format!("{}: {e}", self.file))),
            }
        }
        let batch = self.batch.as_ref()?;
        let (i, file) = (self.index, self.file);
        self.index += 1;
        self.row += 1;
        let row = self.row;
        let mut numbers = Vec::with_capacity(batch.num_columns() - 2);
        for c in 0..batch.num_columns() {
            let column = batch.column(c);
            let name = || batch.schema().field(c).name().clone();
            if column.is_null(i) {
                return Some(Err(format!(
                    "{file}: row {row}, column {}: a null, where coco writes a value",
                    name()
                )));
            }
            if c >= 2 {
                let v = column.as_primitive::<Int64Type>().value(i);
                match u64::try_from(v) {
                    Ok(n) => numbers.push(n),
                    Err(_) => {
                        return Some(Err(format!(
                            "{file}: row {row}, column {}: {v}, expected a nonnegative integer",
                            name()
                        )));
                    }
                }
            }
        }
        Some(Ok((
            batch.column(0).as_string::<i32>().value(i).to_string(),
            batch.column(1).as_string::<i32>().value(i).to_string(),
            numbers,
        )))
    }
    fn at(&self, n: u64) -> At {
        At("row", n)
    }
}

/// The problems of `uncertainty.csv` and `uncertainty.parquet` in release `out` against
/// `counts.csv` and `counts.parquet`, for those the manifest lists (and that are
/// `readable`).
pub fn check(out: &Path, manifest: &Manifest, readable: &dyn Fn(&str) -> bool) -> Vec<String> {
    let lists = |name: &str| manifest.outputs.iter().any(|f| f.path == name) && readable(name);
    let mut problems = Vec::new();
    for (file, counts_file) in [(PARQUET_FILE, "counts.parquet"), (CSV_FILE, "counts.csv")] {
        if !lists(file) {
            continue;
        }
        if manifest.uncertainty.is_none() {
            problems.push(format!(
                "{file} is listed but manifest.json has no \"uncertainty\""
            ));
        }
        if !lists(counts_file) {
            continue;
        }
        let opened: Result<(Box<dyn Rows>, Box<dyn Rows>), String> = if file == CSV_FILE {
            CsvRows::open(&out.join(file), CSV_FILE, HEADER).and_then(|m| {
                let c = CsvRows::open(
                    &out.join(counts_file),
                    "counts.csv",
                    "level,region,size,count",
                )?;
                Ok((Box::new(m) as Box<dyn Rows>, Box::new(c) as Box<dyn Rows>))
            })
        } else {
            use crate::release::outputs::parquet::counts_schema;
            ParquetRows::open(&out.join(file), PARQUET_FILE, &super::tables::schema()).and_then(
                |m| {
                    let c = ParquetRows::open(
                        &out.join(counts_file),
                        "counts.parquet",
                        &counts_schema(),
                    )?;
                    Ok((Box::new(m) as Box<dyn Rows>, Box::new(c) as Box<dyn Rows>))
                },
            )
        };
        match opened {
            Ok((mut margins, mut counts)) => problems.extend(compare(
                file,
                counts_file,
                margins.as_mut(),
                counts.as_mut(),
            )),
            Err(e) => problems.push(e),
        }
    }
    problems
}

/// The problems of the margins' rows `margins` (of `file`) against the rows of
/// `counts_file`.
fn compare(
    file: &str,
    counts_file: &str,
    margins: &mut dyn Rows,
    counts: &mut dyn Rows,
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut next_count = || -> Result<Option<Row>, String> {
        match counts.next_row() {
            None => Ok(None),
            Some(Err(e)) => Err(e),
            Some(Ok((l, r, n))) => Ok(Some((l, r, n[0], n[1]))),
        }
    };
    let mut pending = match next_count() {
        Ok(p) => p,
        Err(e) => {
            problems.push(e);
            return problems;
        }
    };
    let mut i = 0u64;
    while let Some(next) = margins.next_row() {
        i += 1;
        let row = margins.at(i);
        if problems.len() >= MAX_PROBLEMS {
            problems.push(format!("{file}: further rows not checked"));
            return problems;
        }
        let (level, region, n) = match next {
            Ok(r) => r,
            Err(e) => {
                problems.push(e);
                return problems;
            }
        };
        let (size, count, lower, upper) = (n[0], n[1], n[2], n[3]);
        if !(lower <= count && count <= upper) {
            problems.push(format!(
                "{file}: {row}: lower {lower}, count {count}, upper {upper}: expected lower ≤ count ≤ upper"
            ));
        }
        if upper == 0 {
            problems.push(format!(
                "{file}: {row}: the interval [0, 0] is listed; unlisted cells are [0, 0]"
            ));
        }
        let same_cell = pending
            .as_ref()
            .is_some_and(|(l, r, s, _)| *l == level && *r == region && *s == size);
        if count > 0 {
            match &pending {
                Some((l, r, s, c)) if same_cell && *c == count => {
                    let _ = (l, r, s);
                }
                Some((l, r, s, c)) => {
                    problems.push(format!(
                        "{file}: {row}: {level},{region},{size} has count {count}, but the next row of {counts_file} is {l},{r},{s} with count {c}"
                    ));
                    return problems;
                }
                None => {
                    problems.push(format!(
                        "{file}: {row}: {level},{region},{size} has count {count}, which {counts_file} does not list"
                    ));
                    return problems;
                }
            }
            pending = match next_count() {
                Ok(p) => p,
                Err(e) => {
                    problems.push(e);
                    return problems;
                }
            };
        } else if same_cell {
            problems.push(format!(
                "{file}: {row}: {level},{region},{size} has count 0, but {counts_file} lists it with count {}",
                pending.as_ref().map_or(0, |p| p.3)
            ));
            return problems;
        }
    }
    if let Some((l, r, s, c)) = pending {
        problems.push(format!(
            "{file}: does not list {l},{r},{s} (count {c} in {counts_file}): every released cell has an interval"
        ));
    }
    problems
}
