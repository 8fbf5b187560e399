//! `coco verify`'s check of `summary.csv` and `summary.parquet`: every region of every
//! level has its row, in the order of the tables, with its public `G`; every estimate
//! is the statistic of the region's released histogram in the counts (`counts.csv`,
//! `counts.parquet`), computed by the writer's own function
//! ([`Stat::of`](crate::release::margins::summary::Stat::of)) and written as it writes
//! it; an undefined statistic is empty; every interval holds its estimate and lies in
//! the statistic's range ([`Stat::range`]). The intervals themselves come from the
//! bootstrap, which verify cannot repeat: an interval moved but still around its
//! estimate and within its range is not found. Read streaming: the summary, the counts
//! and one level's table at a time.

use std::path::Path;

use crate::histogram::{Count, CountOfCounts, Size};
use crate::release::margins::summary::{Columns, SCALE, Stat};
use crate::release::outputs::manifest::Manifest;
use crate::release::outputs::margins::tables::{
    SUMMARY_FILE, SUMMARY_PARQUET_FILE, summary_schema,
};
use crate::release::outputs::parquet::counts_schema;

use super::MAX_PROBLEMS;
use super::regions::LevelTable;
use super::rows::{self, Rows};

/// The problems of `summary.csv` and `summary.parquet` in release `out`, for those the
/// manifest lists (`lists`): each against the counts of its own form.
pub(super) fn check(out: &Path, manifest: &Manifest, lists: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut problems = Vec::new();
    for (file, counts_file) in [
        (SUMMARY_PARQUET_FILE, "counts.parquet"),
        (SUMMARY_FILE, "counts.csv"),
    ] {
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
        let opened = rows::open(
            out,
            file,
            &summary_schema(manifest.max_size, columns(manifest)),
        )
        .and_then(|s| Ok((s, rows::open(out, counts_file, &counts_schema())?)));
        match opened {
            Ok((mut summary, counts)) => problems.extend(compare(
                out,
                manifest,
                lists,
                (file, summary.as_mut()),
                Counts::new(counts_file, counts),
            )),
            Err(e) => problems.push(e),
        }
    }
    problems
}

/// The statistics the summary of the release holds: a release written before coco
/// published the bootstrap's key (`uncertainty.seed`) holds the first columns only.
pub(crate) fn columns(manifest: &Manifest) -> Columns {
    match manifest.uncertainty.as_ref().and_then(|u| u.seed.as_ref()) {
        Some(_) => Columns::WithOccupied,
        None => Columns::First,
    }
}

/// The counts, one region's histogram at a time.
struct Counts {
    file: &'static str,
    rows: Box<dyn Rows>,
    /// The next row: level, region, size, count.
    next: Option<(String, String, u64, u64)>,
    failed: Option<String>,
}

impl Counts {
    fn new(file: &'static str, rows: Box<dyn Rows>) -> Counts {
        let mut counts = Counts {
            file,
            rows,
            next: None,
            failed: None,
        };
        counts.advance();
        counts
    }

    fn advance(&mut self) {
        self.next = match self.rows.next_row() {
            Some(Ok((level, region, n))) => match n.as_slice() {
                &[Some(size), Some(count)] => Some((level, region, size, count)),
                _ => {
                    self.failed = Some(format!("{}: a row without a size and a count", self.file));
                    None
                }
            },
            Some(Err(e)) => {
                self.failed = Some(e);
                None
            }
            None => None,
        };
    }

    /// The histogram of `region` of `level`: its rows if they are next (a region
    /// without groups has none).
    fn histogram(&mut self, level: &str, region: &str) -> Result<CountOfCounts, String> {
        let mut pairs: Vec<(Size, Count)> = Vec::new();
        while let Some((l, r, size, count)) = &self.next {
            if l != level || r != region {
                break;
            }
            let size = Size::try_from(*size).map_err(|_| {
                format!(
                    "{}: {level},{region}: size {size} is not a group size",
                    self.file
                )
            })?;
            pairs.push((size, *count));
            self.advance();
        }
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        CountOfCounts::from_pairs(pairs)
            .map_err(|e| format!("{}: {level},{region}: {e}", self.file))
    }
}

/// A statistic's value as the summary writes it: a count, or four decimals.
fn shown(stat: Stat, v: i128) -> String {
    match stat {
        Stat::Groups(_) => v.to_string(),
        _ => {
            let scale = SCALE as i128;
            format!("{}.{:04}", v / scale, v % scale)
        }
    }
}

/// The problems of the summary's rows (of `file`) against each level's table and the
/// counts.
fn compare(
    out: &Path,
    manifest: &Manifest,
    lists: &dyn Fn(&str) -> bool,
    (file, summary): (&str, &mut dyn Rows),
    mut counts: Counts,
) -> Vec<String> {
    let k = manifest.max_size;
    let stats = columns(manifest).stats(k);
    let mut problems = Vec::new();
    let mut row = 0u64;
    for (i, level) in manifest.levels.iter().enumerate() {
        let mut table = match LevelTable::open(out, manifest, i, lists) {
            Ok(t) => t,
            Err(e) => {
                problems.push(format!("{file}: not checked: {e}"));
                return problems;
            }
        };
        while let Some(region) = table.next() {
            let (region, groups) = match region {
                Ok(r) => r,
                Err(e) => {
                    problems.push(e);
                    return problems;
                }
            };
            if problems.len() >= MAX_PROBLEMS {
                problems.push(format!("{file}: further rows not checked"));
                return problems;
            }
            row += 1;
            let at = summary.at(row);
            let (l, r, numbers) = match summary.next_row() {
                None => {
                    problems.push(format!(
                        "{file}: no row for region {region} of level {} (the file ends before {at}; every region of {} has one)",
                        level.name, table.file
                    ));
                    return problems;
                }
                Some(Err(e)) => {
                    problems.push(e);
                    return problems;
                }
                Some(Ok(found)) => found,
            };
            if l != level.name || r != region {
                problems.push(format!(
                    "{file}: {at}: {l},{r}, expected {},{region}, the next region of {} (a row missing, twice, unknown or out of order)",
                    level.name, table.file
                ));
                return problems;
            }
            let Some((&found_groups, values)) = numbers.split_first() else {
                problems.push(format!("{file}: {at}: no groups"));
                return problems;
            };
            if found_groups != Some(groups) {
                problems.push(format!(
                    "{file}: {at}: {l},{r} has {} groups, expected {groups}, its public G in {}",
                    found_groups.map_or("no".to_string(), |g| g.to_string()),
                    table.file
                ));
            }
            let hist = match counts.histogram(&l, &r) {
                Ok(h) => h,
                Err(e) => {
                    problems.push(e);
                    return problems;
                }
            };
            // The schema holds an estimate and two bounds per statistic.
            for (stat, found) in stats.iter().zip(values.chunks_exact(3)) {
                let name = stat.name(k);
                // Compared as i128: a written value beyond i64 is shown as written.
                let expected = stat.of(hist.as_ref(), groups).map(i128::from);
                let found: Vec<Option<i128>> = found.iter().map(|v| v.map(i128::from)).collect();
                let problem = match (expected, found.as_slice()) {
                    (None, [None, None, None]) => None,
                    (None, _) => Some(format!(
                        "{name} is given, expected it empty (undefined for a region without groups)"
                    )),
                    (Some(x), &[Some(e), Some(lower), Some(upper)]) => {
                        let (min, max) = stat.range(groups, k);
                        let (min, max) = (i128::from(min), i128::from(max).max(x));
                        if e != x {
                            Some(format!(
                                "{name} is {}, expected {}, the statistic of its histogram in {}",
                                shown(*stat, e),
                                shown(*stat, x),
                                counts.file
                            ))
                        } else if !(lower <= e && e <= upper) {
                            Some(format!(
                                "{name}'s interval [{}, {}] does not hold its estimate {}",
                                shown(*stat, lower),
                                shown(*stat, upper),
                                shown(*stat, e)
                            ))
                        } else if lower < min || upper > max {
                            Some(format!(
                                "{name}'s interval [{}, {}] leaves the statistic's range [{}, {}]",
                                shown(*stat, lower),
                                shown(*stat, upper),
                                shown(*stat, min),
                                shown(*stat, max)
                            ))
                        } else {
                            None
                        }
                    }
                    (Some(x), _) => Some(format!(
                        "{name} or its interval is empty, expected the estimate {} and its interval",
                        shown(*stat, x)
                    )),
                };
                if let Some(p) = problem {
                    problems.push(format!("{file}: {at}: {l},{r}: {p}"));
                }
            }
        }
    }
    if let Some(next) = summary.next_row() {
        row += 1;
        let at = summary.at(row);
        problems.push(match next {
            Ok((l, r, _)) => format!(
                "{file}: {at}: {l},{r} after the last region of the last level (a row twice, unknown or out of order)"
            ),
            Err(e) => e,
        });
    }
    problems
}
