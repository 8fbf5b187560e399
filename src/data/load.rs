//! Reading a dataset directory: streaming CSV, complete validation, nothing half-loaded.
//!
//! The directory holds `hierarchy.csv`, optionally `names.csv`, and the groups in
//! exactly one of three forms: `groups.csv` (`group_id,region,size`); `groups.csv`
//! (`group_id,region`) with `entities.csv` (`entity_id,group_id`); or `histograms.csv`
//! (`region,size,count`). Every file is read once, as a stream, while its SHA-256
//! digest is computed; the result is a complete [`Dataset`] or one [`LoadError`] saying
//! which file, line and column is wrong, what was found there and what was expected.
//!
//! What every file accepts:
//! * UTF-8 text with a header row naming the columns, in any order but each exactly
//!   once; a UTF-8 byte-order mark at the very start is skipped (it still counts in the
//!   file's digest and size);
//! * `\n` or `\r\n` line ends; fields quoted with `"` (a quoted field may hold commas,
//!   doubled quotes and line breaks); empty lines anywhere, trailing ones included, and
//!   in files of more than one column, lines holding only spaces, which are skipped;
//! * spaces and tabs (any ASCII whitespace) around every value and column name, which
//!   are trimmed.
//!
//! Codes are compared byte for byte after trimming: they are case-sensitive (`06A` and
//! `06a` are two different leaves). In `names.csv` a region is a display id (`US/06`)
//! or a leaf code; when a text could be both, the display id wins.
//!
//! Lines in errors are 1-based file lines (the header is line 1; a row's line is the
//! line where it starts, which matters after a quoted line break) and columns are
//! 1-based field numbers. Rows are checked in file order; duplicate `group_id`s and
//! `entity_id`s and duplicate (region, size) pairs are checked once the file has been
//! read, so an error further down the file is reported before them.
//!
//! Memory follows the number of groups (and, in the entities form, of entities), never
//! the size of the text: ids are kept as hashes, and a repeated hash is confirmed on
//! the real ids by a second read of the file before it is reported, so a hash
//! collision never produces a false error.

use std::io;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::csv_input::{CsvFile, RowLines};
use super::hierarchy::HierarchyBuilder;
use super::{Dataset, GroupsForm, Hierarchy, HierarchyError, groups, names};

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

fn fields(n: usize) -> &'static str {
    if n == 1 { "field" } else { "fields" }
}

/// Loads `dir`, reporting progress; when `progress` answers `Break`, reading stops at
/// once and the load fails with [`LoadErrorKind::Cancelled`].
pub(crate) fn load(
    dir: &Path,
    progress: &mut dyn FnMut(LoadProgress) -> ControlFlow<()>,
) -> Result<Dataset, LoadError> {
    let mut stopped = false;
    let result = load_reporting(dir, &mut |p| {
        let flow = progress(p);
        stopped |= flow.is_break();
        flow
    });
    match result {
        Err(_) if stopped => Err(LoadError::in_file(dir, LoadErrorKind::Cancelled)),
        other => other,
    }
}

fn load_reporting(
    dir: &Path,
    progress: &mut dyn FnMut(LoadProgress) -> ControlFlow<()>,
) -> Result<Dataset, LoadError> {
    let files = Present::find(dir)?;
    let form = files.form(dir)?;
    let (mut hierarchy, hierarchy_file) = read_hierarchy(dir, progress)?;
    let mut inputs = vec![hierarchy_file];
    if files.names {
        inputs.push(names::apply(dir, &mut hierarchy, progress)?);
    }
    let (leaves, groups_files) = match (form, files.groups, files.entities, files.histograms) {
        (GroupsForm::GroupSizes, Some(groups), _, _) => {
            groups::read_group_sizes(dir, groups, &hierarchy, progress)?
        }
        (GroupsForm::Entities, Some(groups), Some(entities), _) => {
            groups::read_entities(dir, groups, entities, &hierarchy, progress)?
        }
        (_, _, _, Some(histograms)) => {
            groups::read_histograms(dir, histograms, &hierarchy, progress)?
        }
        _ => return Err(LoadError::in_file(dir, LoadErrorKind::NoGroupsFile)),
    };
    inputs.extend(groups_files);
    Ok(Dataset::from_leaf_set(
        dir.to_path_buf(),
        hierarchy,
        form,
        inputs,
        leaves,
    ))
}

/// Every file a dataset directory may hold that loading reads.
const INPUT_FILES: [&str; 8] = [
    "hierarchy.csv",
    "names.csv",
    "groups.csv",
    "groups.parquet",
    "entities.csv",
    "entities.parquet",
    "histograms.csv",
    "histograms.parquet",
];

/// The bytes loading `dir` will read: the sizes of the input files it holds (0 for
/// what cannot be read; loading says why). Known before loading starts, so that its
/// progress can be told as a share of the whole.
pub fn input_bytes(dir: &Path) -> u64 {
    INPUT_FILES
        .iter()
        .filter_map(|name| std::fs::metadata(dir.join(name)).ok())
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len())
        .sum()
}

/// Which of the dataset's files exist: each groups table by its file name, CSV or
/// Parquet.
struct Present {
    names: bool,
    groups: Option<&'static str>,
    entities: Option<&'static str>,
    histograms: Option<&'static str>,
}

impl Present {
    fn find(dir: &Path) -> Result<Present, LoadError> {
        let meta = std::fs::metadata(dir).map_err(|source| {
            let kind = if source.kind() == io::ErrorKind::NotFound {
                LoadErrorKind::NoDirectory
            } else {
                LoadErrorKind::Io { source }
            };
            LoadError::in_file(dir, kind)
        })?;
        if !meta.is_dir() {
            return Err(LoadError::in_file(dir, LoadErrorKind::NotADirectory));
        }
        let exists = |name: &str| {
            let path = dir.join(name);
            path.try_exists()
                .map_err(|source| LoadError::in_file(&path, LoadErrorKind::Io { source }))
        };
        if !exists("hierarchy.csv")? {
            return Err(LoadError::in_file(
                &dir.join("hierarchy.csv"),
                LoadErrorKind::MissingFile {
                    needed: "every dataset needs hierarchy.csv, one row per leaf region with its \
                             codes from the root down",
                },
            ));
        }
        // A table as CSV or as Parquet, not both.
        let table =
            |csv: &'static str, parquet: &'static str| match (exists(csv)?, exists(parquet)?) {
                (true, true) => Err(LoadError::in_file(
                    dir,
                    LoadErrorKind::BothFormats { csv, parquet },
                )),
                (true, false) => Ok(Some(csv)),
                (false, true) => Ok(Some(parquet)),
                (false, false) => Ok(None),
            };
        Ok(Present {
            names: exists("names.csv")?,
            groups: table("groups.csv", "groups.parquet")?,
            entities: table("entities.csv", "entities.parquet")?,
            histograms: table("histograms.csv", "histograms.parquet")?,
        })
    }

    fn form(&self, dir: &Path) -> Result<GroupsForm, LoadError> {
        match (self.groups, self.entities, self.histograms) {
            (None, None, Some(_)) => Ok(GroupsForm::Histograms),
            (Some(_), None, None) => Ok(GroupsForm::GroupSizes),
            (Some(_), Some(_), None) => Ok(GroupsForm::Entities),
            (None, Some(entities), None) => Err(LoadError::in_file(
                &dir.join(if entities.ends_with(".parquet") {
                    "groups.parquet"
                } else {
                    "groups.csv"
                }),
                LoadErrorKind::MissingFile {
                    needed: "entities.csv needs groups.csv (group_id,region) beside it, saying \
                             which region each group is in",
                },
            )),
            (None, None, None) => Err(LoadError::in_file(dir, LoadErrorKind::NoGroupsFile)),
            _ => {
                let present: Vec<&str> = [self.groups, self.entities, self.histograms]
                    .into_iter()
                    .flatten()
                    .collect();
                Err(LoadError::in_file(
                    dir,
                    LoadErrorKind::SeveralForms {
                        found: present.join(" and "),
                    },
                ))
            }
        }
    }
}

/// Reads `hierarchy.csv`: level names in the header, one leaf path per row.
fn read_hierarchy(
    dir: &Path,
    progress: &mut dyn FnMut(LoadProgress) -> ControlFlow<()>,
) -> Result<(Hierarchy, super::InputFile), LoadError> {
    let mut f = CsvFile::open(
        dir,
        "hierarchy.csv",
        "naming the levels from the root down, e.g. nation,state,county",
        progress,
    )?;
    if f.header().len() > MAX_LEVELS {
        return Err(LoadError::at(
            f.path(),
            1,
            Some(MAX_LEVELS + 1),
            LoadErrorKind::TooManyLevels {
                found: f.header().len(),
            },
        ));
    }
    let levels = f.header().to_vec();
    for (i, name) in levels.iter().enumerate() {
        if name.is_empty() {
            return Err(LoadError::at(
                f.path(),
                1,
                Some(i + 1),
                LoadErrorKind::EmptyLevelName,
            ));
        }
        if let Err(problem) = super::text::check_label(name) {
            return Err(LoadError::at(
                f.path(),
                1,
                Some(i + 1),
                LoadErrorKind::BadText {
                    what: "level name",
                    text: super::csv_input::shown_name(name),
                    problem,
                },
            ));
        }
        if let Some(first) = levels[..i].iter().position(|n| n == name) {
            return Err(LoadError::at(
                f.path(),
                1,
                Some(i + 1),
                LoadErrorKind::DuplicateLevel {
                    name: name.clone(),
                    first_column: first + 1,
                },
            ));
        }
    }
    let depth = levels.len();
    let leaf_col = depth - 1;
    let path = f.path().to_path_buf();
    let hierarchy_error = |line: u64, e: HierarchyError| {
        LoadError::at(&path, line, None, LoadErrorKind::Hierarchy(e))
    };
    let mut builder = HierarchyBuilder::new(levels.clone()).map_err(|e| hierarchy_error(1, e))?;
    let mut lines = RowLines::default();
    // The previous row's codes: a code seen on the row before was checked there.
    let mut previous: Vec<String> = vec![String::new(); depth];
    while f.next_row()? {
        if builder.rows() == 0 {
            // Reserve for as many rows as the file holds at the first row's length.
            let row_bytes = (0..depth).map(|i| f.field(i).len() + 1).sum::<usize>() as u64;
            let rows = f.total_bytes() / row_bytes.max(1);
            builder.reserve_rows(rows.min(1 << 27) as usize);
        }
        lines.record(builder.rows(), f.line());
        for (i, level) in levels.iter().enumerate() {
            let code = f.text(i)?;
            if code == previous[i] && !code.is_empty() {
                continue;
            }
            if code.is_empty() {
                return Err(f.error(
                    Some(i),
                    LoadErrorKind::EmptyCode {
                        level: super::csv_input::shown_name(level),
                    },
                ));
            }
            if code.contains('/') {
                return Err(f.error(
                    Some(i),
                    LoadErrorKind::SlashInCode {
                        code: super::csv_input::shown(code.as_bytes()),
                    },
                ));
            }
            if let Err(problem) = super::text::check_label(code) {
                return Err(f.error(
                    Some(i),
                    LoadErrorKind::BadText {
                        what: "code",
                        text: super::csv_input::shown_name(code),
                        problem,
                    },
                ));
            }
            previous[i].clear();
            previous[i].push_str(code);
        }
        let mut codes = [""; MAX_LEVELS];
        for (i, code) in codes.iter_mut().enumerate().take(depth) {
            *code = f.text(i)?;
        }
        if let Err(e) = builder.push(&codes[..depth]) {
            return Err(match e {
                HierarchyError::SecondRoot { expected, found } => f.error(
                    Some(0),
                    LoadErrorKind::SecondRoot {
                        found: super::csv_input::shown(found.as_bytes()),
                        expected: super::csv_input::shown(expected.as_bytes()),
                        first_line: lines.line(0),
                    },
                ),
                HierarchyError::DuplicateLeaf { code, first_row } => f.error(
                    Some(leaf_col),
                    LoadErrorKind::DuplicateLeaf {
                        code: super::csv_input::shown(code.as_bytes()),
                        first_line: lines.line(first_row),
                    },
                ),
                e => hierarchy_error(f.line(), e),
            });
        }
    }
    if builder.rows() == 0 {
        return Err(LoadError::in_file(f.path(), LoadErrorKind::NoRegions));
    }
    let file = f.finish()?;
    let hierarchy = builder.finish().map_err(|e| hierarchy_error(1, e))?;
    Ok((hierarchy, file))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row check returns `Result<_, LoadError>`: a small error keeps the `Ok`
    /// path cheap (and within clippy's `result_large_err` threshold).
    #[test]
    fn errors_stay_small() {
        assert!(std::mem::size_of::<LoadError>() < 128);
    }

    #[test]
    fn rendering_omits_what_does_not_apply() {
        let kind = || LoadErrorKind::NoRegions;
        let file = Path::new("d/hierarchy.csv");
        let mut e = LoadError::in_file(file, kind());
        assert!(e.to_string().starts_with("d/hierarchy.csv: no regions"));
        e.line = Some(4);
        assert!(e.to_string().starts_with("d/hierarchy.csv:4: no regions"));
        e.column = Some(2);
        assert!(e.to_string().starts_with("d/hierarchy.csv:4:2: no regions"));
        e.line = None;
        assert!(e.to_string().starts_with("d/hierarchy.csv: no regions"));
    }
}
