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
use std::path::Path;

use super::csv_input::{CsvFile, RowLines};
use super::hierarchy::HierarchyBuilder;
use super::{Dataset, GroupsForm, Hierarchy, HierarchyError, groups, names};

pub use super::load_error::{
    LoadError, LoadErrorKind, LoadProgress, MAX_LEVELS, MAX_TOTAL_GROUPS, Place, Position,
};

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
    // Labels that read alike are a warning, not an error: found while the names'
    // lines are known.
    let mut look_alikes = super::look_alike::codes(&hierarchy);
    if files.names {
        let (file, names) = names::apply(dir, &mut hierarchy, progress)?;
        inputs.push(file);
        look_alikes.extend(names);
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
    let mut dataset = Dataset::from_leaf_set(dir.to_path_buf(), hierarchy, form, inputs, leaves);
    dataset.look_alikes = look_alikes;
    Ok(dataset)
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
