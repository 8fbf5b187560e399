//! `coco verify`'s checks of `uncertainty.csv` and `uncertainty.parquet`: the header (the
//! columns), every row integral and nonnegative with `lower ≤ count ≤ upper`, and its
//! counts those of `counts.csv` (`counts.parquet`) in the same order (a cell the counts
//! list is listed, with the same count; a cell they leave out has count 0). Read
//! streaming, both files at once.

use std::path::Path;

use crate::release::outputs::manifest::Manifest;
use crate::release::outputs::margins::tables::{CSV_FILE, PARQUET_FILE};

use super::MAX_PROBLEMS;
use super::rows::{self, Rows};

/// The problems of `uncertainty.csv` and `uncertainty.parquet` in release `out` against
/// `counts.csv` and `counts.parquet`, for those the manifest lists (`lists`).
pub(super) fn check(out: &Path, manifest: &Manifest, lists: &dyn Fn(&str) -> bool) -> Vec<String> {
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
        let counts_schema = crate::release::outputs::parquet::counts_schema();
        let opened = rows::open(
            out,
            file,
            &crate::release::outputs::margins::tables::schema(),
        )
        .and_then(|m| Ok((m, rows::open(out, counts_file, &counts_schema)?)));
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

/// A cell of the counts: level, region, size, count.
type Cell = (String, String, u64, u64);

/// The problems of the margins' rows `margins` (of `file`) against the rows of
/// `counts_file`.
fn compare(
    file: &str,
    counts_file: &str,
    margins: &mut dyn Rows,
    counts: &mut dyn Rows,
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut next_count = || -> Result<Option<Cell>, String> {
        match counts.next_row() {
            None => Ok(None),
            Some(Err(e)) => Err(e),
            Some(Ok((l, r, n))) => match n.as_slice() {
                &[Some(size), Some(count)] => Ok(Some((l, r, size, count))),
                _ => Err(format!("{counts_file}: a row without a size and a count")),
            },
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
        let &[Some(size), Some(count), Some(lower), Some(upper)] = n.as_slice() else {
            problems.push(format!(
                "{file}: {row}: expected a size, a count, a lower and an upper bound"
            ));
            return problems;
        };
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
