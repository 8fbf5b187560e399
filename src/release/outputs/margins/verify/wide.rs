//! `coco verify`'s check of the wide tables' margins (`tables/<i>-<level>-margins.csv`
//! and `.parquet`): the columns, the same regions as the level's wide table in the same
//! order with the same `groups`, and every bound around the table's value and within
//! the region's groups (`lower ≤ value ≤ upper ≤ groups`).
//!
//! The bounds are not recomputed: they are the intervals of `uncertainty.*` and
//! `summary.*`, which are checked against the counts themselves.

use std::path::Path;

use crate::release::outputs::manifest::Manifest;
use crate::release::outputs::read_rows::WideSource;
use crate::release::outputs::rows::table_file;
use crate::release::outputs::wide_margins::{file, schema};

use super::MAX_PROBLEMS;
use super::rows::{self, Rows};

/// The problems of the wide tables' margins in release `out`, for those the manifest
/// lists (`lists`).
pub(super) fn check(out: &Path, manifest: &Manifest, lists: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, level) in manifest.levels.iter().enumerate() {
        for ext in ["csv", "parquet"] {
            let name = file(i, &level.name, ext);
            if !lists(&name) {
                continue;
            }
            if manifest.uncertainty.is_none() {
                problems.push(format!(
                    "{name} is listed but manifest.json has no \"uncertainty\""
                ));
            }
            let table = ["csv", "parquet"]
                .into_iter()
                .map(|e| table_file(i, &level.name, e))
                .find(|t| lists(t));
            let Some(table) = table else {
                problems.push(format!(
                    "{name} is listed but not the wide table it is the margins of ({})",
                    table_file(i, &level.name, ext)
                ));
                continue;
            };
            let opened = rows::open(out, &name, &schema()).and_then(|m| {
                WideSource::open(&out.join(&table))
                    .map(|t| (m, t))
                    .map_err(|e| format!("{table}: cannot be read: {e}"))
            });
            match opened {
                Ok((mut margins, mut values)) => {
                    problems.extend(compare(&name, &table, margins.as_mut(), &mut values))
                }
                Err(e) => problems.push(e),
            }
        }
    }
    problems
}

/// The margins' rows against the wide table's.
fn compare(
    name: &str,
    table: &str,
    margins: &mut dyn Rows,
    values: &mut WideSource,
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut n = 0u64;
    let columns = [
        "size_0",
        "size_1",
        "size_2",
        "size_3",
        "size_4",
        "size_5",
        "size_6",
        "size_7_or_more",
    ];
    loop {
        if problems.len() >= MAX_PROBLEMS {
            problems.push(format!("{name}: further rows not checked"));
            return problems;
        }
        let (m, v) = (margins.next_row(), values.row());
        n += 1;
        let at = margins.at(n);
        let ((region, _name, bounds), (table_region, cells)) = match (m, v) {
            (None, None) => return problems,
            (Some(Err(e)), _) => {
                problems.push(e);
                return problems;
            }
            (_, Some(Err(e))) => {
                problems.push(format!("{table}: {e}"));
                return problems;
            }
            (Some(Ok(_)), None) => {
                problems.push(format!("{name}: {at}: a row more than {table} holds"));
                return problems;
            }
            (None, Some(Ok((r, _)))) => {
                problems.push(format!("{name}: ends before region {r} of {table}"));
                return problems;
            }
            (Some(Ok(m)), Some(Ok(v))) => (m, v),
        };
        if region != table_region {
            problems.push(format!(
                "{name}: {at}: region {region}, where {table} has {table_region}: expected the same rows in the same order"
            ));
            return problems;
        }
        let Some(Some(groups)) = bounds.first().copied() else {
            problems.push(format!("{name}: {at}: no groups"));
            return problems;
        };
        if groups != cells[0] {
            problems.push(format!(
                "{name}: {at}: region {region} has {groups} groups, {table} says {}",
                cells[0]
            ));
        }
        for (j, column) in columns.iter().enumerate() {
            let (lower, upper) = match (bounds.get(1 + 2 * j), bounds.get(2 + 2 * j)) {
                (Some(Some(l)), Some(Some(u))) => (*l, *u),
                _ => {
                    problems.push(format!("{name}: {at}: no bounds of {column}"));
                    return problems;
                }
            };
            let value = cells[1 + j];
            if !(lower <= value && value <= upper && upper <= groups) {
                problems.push(format!(
                    "{name}: {at}: region {region}, {column}: [{lower}, {upper}] around {value} (in {table}): expected lower ≤ value ≤ upper ≤ groups ({groups})"
                ));
            }
        }
    }
}
