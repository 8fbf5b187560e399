//! `coco verify`'s check of `replicates.csv` and `replicates.parquet`: the columns
//! (`level, region, size, replicate, count`, integers where integers belong), the levels
//! those of the manifest in order, the regions those of each level's wide table in its
//! order (a region without groups has no rows), each region's rows ordered by size then
//! replicate without repeats, sizes at most `K`, replicates numbered `1..=R` (`R` the
//! manifest's `uncertainty.replicates`), counts nonzero, and each replicate's counts of
//! a region adding up to its groups (every replicate is a consistent table, like the
//! release).
//!
//! What it cannot check: that the replicates are the ones the margins were read from,
//! or drawn as the plan says: they are draws of fresh noise, which no published file
//! determines.

use std::path::Path;

use crate::release::outputs::manifest::Manifest;
use crate::release::outputs::replicates::{file, schema};

use super::MAX_PROBLEMS;
use super::regions::LevelTable;
use super::rows::{self, Row, Rows};

/// The problems of `replicates.csv` and `replicates.parquet` in release `out`, for
/// those the manifest lists (`lists`).
pub(super) fn check(out: &Path, manifest: &Manifest, lists: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut problems = Vec::new();
    for ext in ["csv", "parquet"] {
        let name = file(ext);
        if !lists(&name) {
            continue;
        }
        let Some(u) = &manifest.uncertainty else {
            problems.push(format!(
                "{name} is listed but manifest.json has no \"uncertainty\" (its number of replicates)"
            ));
            continue;
        };
        match rows::open(out, &name, &schema()) {
            Ok(mut rows) => problems.extend(compare(
                out,
                manifest,
                lists,
                &name,
                rows.as_mut(),
                u.replicates,
            )),
            Err(e) => problems.push(e),
        }
    }
    problems
}

/// The problems of the replicate rows `rows` (of `name`) against the manifest's levels
/// and the wide tables' regions.
fn compare(
    out: &Path,
    manifest: &Manifest,
    lists: &dyn Fn(&str) -> bool,
    name: &str,
    rows: &mut dyn Rows,
    replicates: u32,
) -> Vec<String> {
    let mut problems = Vec::new();
    let r_max = u64::from(replicates);
    let k = u64::from(manifest.max_size);
    let mut n = 0u64;
    let next = |rows: &mut dyn Rows, n: &mut u64| -> Result<Option<Row>, String> {
        match rows.next_row() {
            None => Ok(None),
            Some(Err(e)) => Err(e),
            Some(Ok(r)) => {
                *n += 1;
                Ok(Some(r))
            }
        }
    };
    macro_rules! fail {
        ($($t:tt)*) => {{
            problems.push(format!($($t)*));
            if problems.len() >= MAX_PROBLEMS {
                return problems;
            }
        }};
    }
    let mut pending: Option<Row> = match next(rows, &mut n) {
        Ok(r) => r,
        Err(e) => {
            problems.push(e);
            return problems;
        }
    };
    for (i, level) in manifest.levels.iter().enumerate() {
        let mut table = match LevelTable::open(out, manifest, i, lists) {
            Ok(t) => t,
            Err(e) => {
                problems.push(format!("{name}: cannot check its regions: {e}"));
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
            if groups == 0 {
                continue;
            }
            // This region's rows: sizes then replicates, increasing.
            let mut sums = vec![0u64; replicates as usize];
            let mut last: Option<(u64, u64)> = None;
            while let Some((l, r, values)) = &pending {
                if *l != level.name || *r != region {
                    break;
                }
                let at = rows.at(n);
                let &[Some(size), Some(replicate), Some(count)] = values.as_slice() else {
                    problems.push(format!(
                        "{name}: {at}: expected a size, a replicate and a count"
                    ));
                    return problems;
                };
                if size > k {
                    fail!("{name}: {at}: size {size} is above K = {k}");
                }
                if !(1..=r_max).contains(&replicate) {
                    fail!(
                        "{name}: {at}: replicate {replicate}: expected 1 to {r_max} (manifest.json's uncertainty.replicates)"
                    );
                } else {
                    sums[(replicate - 1) as usize] =
                        sums[(replicate - 1) as usize].saturating_add(count);
                }
                if count == 0 {
                    fail!("{name}: {at}: count 0: only nonzero cells are listed");
                }
                if last.is_some_and(|p| p >= (size, replicate)) {
                    fail!(
                        "{name}: {at}: size {size}, replicate {replicate} after size {}, replicate {}: expected rows by size, then replicate, each once",
                        last.map_or(0, |p| p.0),
                        last.map_or(0, |p| p.1)
                    );
                }
                last = Some((size, replicate));
                match next(rows, &mut n) {
                    Ok(r) => pending = r,
                    Err(e) => {
                        problems.push(e);
                        return problems;
                    }
                }
            }
            for (r, sum) in (1u64..).zip(&sums) {
                if *sum != groups {
                    fail!(
                        "{name}: {},{region}: replicate {r}'s counts add up to {sum}, expected the region's {groups} groups (in {})",
                        level.name,
                        table.file
                    );
                    break;
                }
            }
        }
    }
    if let Some((l, r, _)) = pending {
        problems.push(format!(
            "{name}: {}: {l},{r}: not a region with groups of the manifest's levels and the tables, or out of order",
            rows.at(n)
        ));
    }
    problems
}
