//! Tables of two text columns and nonnegative integer columns (`replicates.*`, the wide
//! tables' margins `tables/<i>-<level>-margins.*`), each defined once by its Arrow
//! schema and filled once, chunk by chunk, into [`NumericRows`]; every table format
//! writes them ([`TableFormat::write_numeric`](super::writer::TableFormat::write_numeric)):
//! the CSV header is the schema's column names, the Parquet columns its fields.

use arrow_schema::SchemaRef;

/// The rows of one chunk, column by column.
#[derive(Debug, Default)]
pub(crate) struct NumericRows {
    pub(crate) first: Vec<String>,
    pub(crate) second: Vec<String>,
    /// One vector per number column, in the schema's order.
    pub(crate) numbers: Vec<Vec<u64>>,
}

impl NumericRows {
    /// No rows, for a table of `columns` number columns.
    pub(crate) fn new(columns: usize) -> NumericRows {
        NumericRows {
            first: Vec::new(),
            second: Vec::new(),
            numbers: vec![Vec::new(); columns],
        }
    }

    /// Appends a row; `values` holds one value per number column.
    pub(crate) fn push(&mut self, first: &str, second: &str, values: &[u64]) {
        debug_assert_eq!(values.len(), self.numbers.len());
        self.first.push(first.to_string());
        self.second.push(second.to_string());
        for (column, &v) in self.numbers.iter_mut().zip(values) {
            column.push(v);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.first.len()
    }
}

/// How a chunk's rows are made: `fill(i, rows)` appends chunk `i`'s rows to empty
/// `rows`; chunks are filled in parallel and written in order.
pub(crate) type Fill<'a> = dyn Fn(usize, &mut NumericRows) -> std::io::Result<()> + Sync + 'a;

/// A numeric table: its columns and how many chunks its rows come in.
pub(crate) struct NumericTable<'a> {
    pub(crate) schema: SchemaRef,
    pub(crate) chunks: usize,
    pub(crate) fill: &'a Fill<'a>,
}

impl NumericTable<'_> {
    /// The number of number columns (after the two text columns).
    pub(crate) fn number_columns(&self) -> usize {
        self.schema.fields().len().saturating_sub(2)
    }

    /// The CSV header: the schema's column names.
    pub(crate) fn header(&self) -> String {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect::<Vec<_>>()
            .join(",")
    }
}
