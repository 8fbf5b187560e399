//! The rows of a published file read back for a comparison, from CSV or Parquet alike:
//! each comparison is written once over [`Rows`], whichever form the release holds.
//!
//! A file's columns are described once, by the Arrow schema its Parquet form is
//! written with: `level`, `region`, then numbers. Its CSV form has the schema's column
//! names as its header, and its numbers as coco writes them: a 64-bit integer column
//! as a nonnegative integer, a decimal column of scale `s` as a nonnegative number with
//! exactly `s` decimals (`summary.csv`'s means and shares, `2.6091`), a null as an empty
//! field. Both forms give the numbers as the same integers (a decimal in units of
//! `10^-s`), so a comparison cannot tell them apart.

use std::path::Path;

use arrow_schema::{DataType, SchemaRef};

/// A row: its level, its region, and its numbers in the schema's order (`None`: an
/// empty field or a null, where the column may hold one).
pub(crate) type Row = (String, String, Vec<Option<u64>>);

/// Rows of `level, region` and numbers, from a CSV or a Parquet file.
pub(crate) trait Rows {
    /// The next row, or what is wrong with it (the message names the file and row).
    fn next_row(&mut self) -> Option<Result<Row, String>>;
    /// Where row `n` (1 for the first after the header) is: `line n + 1` or `row n`.
    fn at(&self, n: u64) -> At;
}

/// A row's place in its file, shown as `line 12` or `row 11` (built for every row: no
/// allocation until a problem is written).
#[derive(Clone, Copy)]
pub(crate) struct At(&'static str, u64);

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.0, self.1)
    }
}

/// What a number column holds.
#[derive(Clone, Copy)]
enum Number {
    /// A 64-bit integer.
    Integer,
    /// A decimal with this many places, read in units of `10^-places`.
    Decimal(u32),
}

/// A number column of a schema (the columns after `level` and `region`).
struct Column {
    name: String,
    number: Number,
    nullable: bool,
}

/// The number columns of `schema`, the columns after `level` and `region`.
fn number_columns(schema: &SchemaRef) -> Vec<Column> {
    schema
        .fields()
        .iter()
        .skip(2)
        .map(|f| Column {
            name: f.name().clone(),
            number: match f.data_type() {
                DataType::Decimal128(_, places) => {
                    Number::Decimal(u32::from(places.unsigned_abs()))
                }
                _ => Number::Integer,
            },
            nullable: f.is_nullable(),
        })
        .collect()
}

/// `text` as a nonnegative number of `number`'s form (digits; with `d` places, digits,
/// a point and exactly `d` digits), in its units.
fn parse_number(text: &str, number: Number) -> Option<u64> {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    match number {
        Number::Integer => digits(text).then(|| text.parse().ok()).flatten(),
        Number::Decimal(places) => {
            let (whole, fraction) = text.split_once('.')?;
            if !digits(whole) || !digits(fraction) || fraction.len() != places as usize {
                return None;
            }
            let whole: u64 = whole.parse().ok()?;
            let fraction: u64 = fraction.parse().ok()?;
            whole
                .checked_mul(10u64.checked_pow(places)?)?
                .checked_add(fraction)
        }
    }
}

/// Rows of a CSV file coco wrote, numbers checked against its schema.
pub(super) struct CsvRows {
    file: String,
    reader: csv::Reader<std::fs::File>,
    record: csv::StringRecord,
    columns: Vec<Column>,
}

impl CsvRows {
    /// Opens `path` (shown as `file`) and checks that its header names `schema`'s columns.
    pub(super) fn open(path: &Path, file: &str, schema: &SchemaRef) -> Result<CsvRows, String> {
        let header = schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect::<Vec<_>>()
            .join(",");
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
                "{file}: line 1: the header is \"{}\", expected \"{header}\"",
                crate::data::text::escape_controls(&found)
            ));
        }
        Ok(CsvRows {
            file: file.to_string(),
            reader,
            record: csv::StringRecord::new(),
            columns: number_columns(schema),
        })
    }
}

impl Rows for CsvRows {
    fn next_row(&mut self) -> Option<Result<Row, String>> {
        match self.reader.read_record(&mut self.record) {
            Ok(false) => None,
            Err(e) => Some(Err(format!("{}: {e}", self.file))),
            Ok(true) => {
                let line = self.record.position().map_or(0, |p| p.line());
                let expected = self.columns.len() + 2;
                if self.record.len() != expected {
                    return Some(Err(format!(
                        "{}: line {line}: {} fields, expected {expected}",
                        self.file,
                        self.record.len(),
                    )));
                }
                let mut numbers = Vec::with_capacity(self.columns.len());
                for (i, (field, column)) in
                    self.record.iter().skip(2).zip(&self.columns).enumerate()
                {
                    if field.is_empty() && column.nullable {
                        numbers.push(None);
                        continue;
                    }
                    match parse_number(field, column.number) {
                        Some(n) => numbers.push(Some(n)),
                        None => {
                            let form = match column.number {
                                Number::Integer => "a nonnegative integer".to_string(),
                                Number::Decimal(places) => {
                                    format!("a nonnegative number with {places} decimals")
                                }
                            };
                            return Some(Err(format!(
                                "{}: line {line}: field {} ({}) is \"{}\", expected {form}{}",
                                self.file,
                                i + 3,
                                column.name,
                                crate::data::text::escape_controls(field),
                                if column.nullable { " or empty" } else { "" }
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

    fn at(&self, n: u64) -> At {
        At("line", n + 1)
    }
}

/// Rows of a Parquet file coco wrote (`level`, `region`, then 64-bit integers or
/// decimals), its columns checked against the schema when it is opened.
pub(super) struct ParquetRows {
    file: String,
    batches: Box<dyn Iterator<Item = std::io::Result<arrow_array::RecordBatch>>>,
    batch: Option<arrow_array::RecordBatch>,
    columns: Vec<Column>,
    index: usize,
    row: u64,
}

impl ParquetRows {
    pub(super) fn open(path: &Path, file: &str, schema: &SchemaRef) -> Result<ParquetRows, String> {
        let batches = crate::release::outputs::parquet::open_batches(path, schema)
            .map_err(|e| format!("{file}: cannot be read as coco's Parquet: {e}"))?;
        Ok(ParquetRows {
            file: file.to_string(),
            batches: Box::new(batches),
            batch: None,
            columns: number_columns(schema),
            index: 0,
            row: 0,
        })
    }
}

impl Rows for ParquetRows {
    fn next_row(&mut self) -> Option<Result<Row, String>> {
        use arrow_array::Array;
        use arrow_array::cast::AsArray;
        use arrow_array::types::{Decimal128Type, Int64Type};
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
        let (i, file) = (self.index, self.file.as_str());
        self.index += 1;
        self.row += 1;
        let row = self.row;
        for c in 0..2 {
            if batch.column(c).is_null(i) {
                return Some(Err(format!(
                    "{file}: row {row}, column {}: a null, where coco writes a value",
                    batch.schema().field(c).name()
                )));
            }
        }
        let mut numbers = Vec::with_capacity(self.columns.len());
        for (c, column) in self.columns.iter().enumerate() {
            let values = batch.column(c + 2);
            if values.is_null(i) {
                if column.nullable {
                    numbers.push(None);
                    continue;
                }
                return Some(Err(format!(
                    "{file}: row {row}, column {}: a null, where coco writes a value",
                    column.name
                )));
            }
            // The schema was checked when the file was opened: each column is of the
            // type read here.
            let value = match column.number {
                Number::Integer => i128::from(values.as_primitive::<Int64Type>().value(i)),
                Number::Decimal(_) => values.as_primitive::<Decimal128Type>().value(i),
            };
            match u64::try_from(value) {
                Ok(n) => numbers.push(Some(n)),
                Err(_) => {
                    return Some(Err(format!(
                        "{file}: row {row}, column {}: {value}, expected a nonnegative number",
                        column.name
                    )));
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

/// Opens `file` in release `out` as the rows of `schema`: Parquet by its extension,
/// else CSV.
pub(crate) fn open(out: &Path, file: &str, schema: &SchemaRef) -> Result<Box<dyn Rows>, String> {
    let path = out.join(file);
    if file.ends_with(".parquet") {
        ParquetRows::open(&path, file, schema).map(|r| Box::new(r) as Box<dyn Rows>)
    } else {
        CsvRows::open(&path, file, schema).map(|r| Box::new(r) as Box<dyn Rows>)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_exactly_in_the_form_coco_writes_them() {
        assert_eq!(parse_number("0", Number::Integer), Some(0));
        assert_eq!(
            parse_number("18446744073709551615", Number::Integer),
            Some(u64::MAX)
        );
        assert_eq!(parse_number("18446744073709551616", Number::Integer), None);
        for bad in ["", "-1", "+1", "1.0", " 1", "1e3"] {
            assert_eq!(parse_number(bad, Number::Integer), None, "{bad:?}");
        }
        assert_eq!(parse_number("2.6091", Number::Decimal(4)), Some(26_091));
        assert_eq!(parse_number("0.0005", Number::Decimal(4)), Some(5));
        for bad in [
            "2.609", "2.60910", "2", ".6091", "2.", "-2.6091", "2.6o91", "2,6091",
        ] {
            assert_eq!(parse_number(bad, Number::Decimal(4)), None, "{bad:?}");
        }
    }
}
