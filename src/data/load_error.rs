//! What a load reports: its progress and its errors ([`LoadError`]: the file, line and
//! column, what was found and what was expected), and the limits it enforces.

use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::HierarchyError;

/// Progress of a load, for a progress indicator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadProgress {
    /// The file being read.
    pub file: String,
    /// Bytes read so far and the file's size.
    pub bytes_read: u64,
    pub bytes_total: u64,
}

/// A dataset that cannot be loaded: which file, where, and what is wrong.
///
/// A CSV file's error renders as `path:line:column: message`; `line` is the 1-based
/// file line (the header is line 1) and `column` the 1-based field number, each present
/// when it applies. A Parquet file's renders as `path: row R, column NAME: message`:
/// `line` is then the 1-based data row ([`Position::Rows`]).
#[derive(Debug, Error)]
#[error("{}", self.render())]
pub struct LoadError {
    pub file: PathBuf,
    pub line: Option<u64>,
    /// (32 bits, so that a `LoadError` stays small.)
    pub column: Option<u32>,
    pub kind: LoadErrorKind,
    /// What `line` and `column` count.
    pub position: Position,
}

/// How a [`LoadError`]'s position reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Position {
    /// File lines and field numbers (CSV).
    #[default]
    Lines,
    /// Data rows, and the column's name, empty where no column applies (Parquet).
    /// (A thin box, so that a `LoadError` stays small.)
    Rows { column_name: Box<String> },
}

/// Where a row was, in a message: `line 4` of a CSV file or `row 3` of a Parquet file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub number: u64,
    /// A data row of a Parquet file (else a line of a CSV file).
    pub row: bool,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = if self.row { "row" } else { "line" };
        write!(f, "{unit} {}", self.number)
    }
}

impl LoadError {
    fn render(&self) -> String {
        let mut s = self.file.display().to_string();
        match &self.position {
            Position::Lines => {
                if let Some(l) = self.line {
                    s.push_str(&format!(":{l}"));
                    if let Some(c) = self.column {
                        s.push_str(&format!(":{c}"));
                    }
                }
            }
            Position::Rows { column_name } => {
                let mut at = Vec::new();
                if let Some(r) = self.line {
                    at.push(format!("row {r}"));
                }
                if !column_name.is_empty() {
                    at.push(format!("column {column_name}"));
                }
                if !at.is_empty() {
                    s.push_str(&format!(": {}", at.join(", ")));
                }
            }
        }
        format!("{s}: {}", self.kind)
    }

    /// A problem with a file (or directory) as a whole.
    pub(crate) fn in_file(file: &Path, kind: LoadErrorKind) -> LoadError {
        LoadError {
            file: file.to_path_buf(),
            line: None,
            column: None,
            kind,
            position: Position::Lines,
        }
    }

    /// A problem at a line (and 1-based column) of a file.
    pub(crate) fn at(
        file: &Path,
        line: u64,
        column: Option<usize>,
        kind: LoadErrorKind,
    ) -> LoadError {
        LoadError {
            file: file.to_path_buf(),
            line: Some(line),
            column: column.map(field_number),
            kind,
            position: Position::Lines,
        }
    }
}

/// A 1-based field number as a [`LoadError`] holds it (a header of more than 2^32
/// columns is refused long before).
pub(crate) fn field_number(column: usize) -> u32 {
    u32::try_from(column).unwrap_or(u32::MAX)
}

/// The most levels a hierarchy may have: display ids grow with the depth, so a runaway
/// header (a line of a million columns) would otherwise cost memory quadratic in it.
pub const MAX_LEVELS: usize = 100;

/// The most groups a dataset may hold: 10^12 (a trillion). Every count, sum and noisy
/// count fits in 64 bits with room for the noise, and `wls`'s projection, which fits
/// real targets in fixed point with 1/1024 resolution (`count · 1024` in an `i64` and
/// exact in an `f64`: below `2^53`, i.e. up to about 8.8·10^12 groups in one region), is
/// exact for every region. `tests/library/consistency.rs` releases a region of exactly this many
/// groups and refuses one more at load.
pub const MAX_TOTAL_GROUPS: u64 = 1_000_000_000_000;

/// The expected groups forms, as listed in messages.
const FORMS: &str = "groups.csv (group_id,region,size), groups.csv (group_id,region) with \
                     entities.csv (entity_id,group_id), or histograms.csv (region,size,count)";

/// What is wrong, one variant per class of problem. Each message says what was found
/// and what was expected; values from the files are quoted and cut to 40 characters.
#[derive(Debug, Error)]
pub enum LoadErrorKind {
    #[error("loading was cancelled")]
    Cancelled,
    #[error(
        "not a directory: expected a dataset directory holding hierarchy.csv and a groups file"
    )]
    NotADirectory,
    #[error("cannot read: {source}")]
    Io { source: io::Error },
    #[error(
        "directory not found: expected a dataset directory holding hierarchy.csv and a groups file"
    )]
    NoDirectory,
    #[error(
        "the header names {found} levels: expected at most {MAX_LEVELS} (a geographic hierarchy has a handful, e.g. nation,state,county)"
    )]
    TooManyLevels { found: usize },
    #[error("file not found: {needed}")]
    MissingFile { needed: &'static str },
    #[error("no groups file: expected {FORMS} (each also as .parquet, with the same columns)")]
    NoGroupsFile,
    #[error(
        "both {csv} and {parquet}: expected the table once, in one of the two formats (remove one)"
    )]
    BothFormats {
        csv: &'static str,
        parquet: &'static str,
    },
    #[error("not a readable Parquet file: {problem}")]
    NotParquet { problem: String },
    #[error("column {column} is {found}: expected {expected}")]
    ColumnType {
        column: Box<str>,
        found: Box<str>,
        expected: &'static str,
    },
    #[error("{column} is null: expected a value in every row")]
    Null { column: String },
    #[error("more than one groups form: found {found}; expected exactly one of {FORMS}")]
    SeveralForms { found: String },
    #[error("file is empty (0 bytes): expected a header row {expected}")]
    EmptyFile { expected: String },
    #[error("no header row, only blank lines: expected a header row {expected}")]
    NoHeader { expected: String },
    #[error("wrong header {found:?}: {problem}; expected the columns {expected} (in any order)")]
    Header {
        found: String,
        problem: Box<str>,
        expected: Box<str>,
    },
    #[error(
        "empty level name: expected a name in every column of the header (e.g. nation,state,county)"
    )]
    EmptyLevelName,
    #[error("level name {name:?} is already column {first_column}: expected each level named once")]
    DuplicateLevel { name: String, first_column: usize },
    #[error("row has {found} {}: expected {expected} ({columns}){hint}", fields(*.found))]
    FieldCount {
        found: usize,
        expected: usize,
        columns: String,
        /// Why, when it can be guessed (an open quote).
        hint: &'static str,
    },
    #[error(
        "invalid UTF-8 (byte 0x{byte:02x} at byte {offset} of the field): expected UTF-8 text (save the file as UTF-8)"
    )]
    NotUtf8 { byte: u8, offset: usize },
    #[error("{column} {value:?} is not a whole number: expected an integer from 0 to {max}")]
    NotInteger {
        column: &'static str,
        value: String,
        max: u64,
    },
    #[error("{column} {value:?} is too large: expected an integer from 0 to {max}")]
    TooLarge {
        column: &'static str,
        value: String,
        max: u64,
    },
    #[error("no regions: the file has a header but no rows; expected one row per leaf region")]
    NoRegions,
    #[error("empty {level} code: expected a code in every column")]
    EmptyCode { level: String },
    #[error(
        "code {code:?} contains '/': expected codes without '/', which separates codes in display ids"
    )]
    SlashInCode { code: String },
    #[error(
        "root code {found:?} differs from {expected:?} on line {first_line}: expected one root, the same code in the first column of every row"
    )]
    SecondRoot {
        found: String,
        expected: String,
        first_line: u64,
    },
    #[error(
        "leaf code {code:?} is already on line {first_line}: expected each leaf region once (leaf codes are unique across the file)"
    )]
    DuplicateLeaf { code: String, first_line: u64 },
    #[error(transparent)]
    Hierarchy(HierarchyError),
    #[error(
        "region {code:?} is not in hierarchy.csv: expected the code of a {leaf_level} (a leaf){hint}"
    )]
    UnknownRegion {
        code: String,
        leaf_level: Box<str>,
        /// A case-insensitive match, if any (codes are case-sensitive).
        hint: Box<str>,
    },
    #[error(
        "region {code:?} is a {level} in hierarchy.csv, not a leaf: expected the code of a {leaf_level}"
    )]
    RegionNotLeaf {
        code: String,
        level: Box<str>,
        leaf_level: Box<str>,
    },
    #[error("group_id {id:?} is already on {first}: expected each group once")]
    DuplicateGroup { id: String, first: Place },
    #[error("entity_id {id:?} is already on {first}: expected each entity once, in one group")]
    DuplicateEntity { id: String, first: Place },
    #[error("group_id {id:?} is not in groups.csv: expected the group_id of a row of groups.csv")]
    UnknownGroup { id: String },
    #[error("group {id:?} has more than {max} entities: expected at most {max} per group", max = u32::MAX)]
    GroupTooLarge { id: String },
    #[error("more than {max} groups: expected at most {max} rows", max = u32::MAX)]
    TooManyGroupRows,
    #[error(
        "region {region:?} with size {size} is already on {first}: expected each (region, size) pair at most once"
    )]
    DuplicateCell {
        region: String,
        size: u32,
        first: Place,
    },
    #[error(
        "the counts add up to more than {max} groups: expected at most 10^12 groups in the dataset (a bound that keeps every count exact through the release's arithmetic)",
        max = MAX_TOTAL_GROUPS
    )]
    TooManyGroups,
    #[error("{what} \"{text}\" {problem}")]
    BadText {
        what: &'static str,
        text: String,
        problem: super::text::TextProblem,
    },
    #[error(
        "a field of {bytes} bytes: expected at most {max} bytes in a field (codes, names and numbers are short)",
        max = super::text::MAX_FIELD_BYTES
    )]
    FieldTooLong { bytes: usize },
    #[error(
        "region {region:?} is not in hierarchy.csv: expected a display id such as {example:?} or a leaf code"
    )]
    UnknownNamedRegion { region: String, example: String },
    #[error(
        "region {region:?} ({node}) already has a name on line {first_line}: expected at most one name per region"
    )]
    DuplicateName {
        region: String,
        node: String,
        first_line: u64,
    },
    #[error(
        "empty name for region {region:?}: expected a display name (leave the region out of names.csv to give it none)"
    )]
    EmptyName { region: String },
}

pub(crate) fn fields(n: usize) -> &'static str {
    if n == 1 { "field" } else { "fields" }
}
