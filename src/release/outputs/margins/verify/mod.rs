//! `coco verify`'s checks of the margins' files, each read back against what it was
//! computed from, so that a file edited and re-hashed in the manifest is found even
//! where the ledger at hand does not hold the draw (and so cannot vouch for the
//! manifest's digests):
//!
//! - `uncertainty.csv` / `uncertainty.parquet` against the counts ([`uncertainty`]);
//! - `summary.csv` / `summary.parquet`: each estimate recomputed from the counts, each
//!   interval around it and within its range ([`summary`]);
//! - `measurements.jsonl` against the manifest's plan and the regions of the tables
//!   ([`measurements`]);
//! - the wide tables' margins `tables/<i>-<level>-margins.*` against the wide tables
//!   ([`wide`]);
//! - `replicates.csv` / `replicates.parquet` against the tables' regions, `K` and the
//!   manifest's number of replicates ([`replicates`]).
//!
//! The CSV and Parquet forms of a file go through one comparison ([`rows`]).

mod measurements;
mod regions;
mod replicates;
pub(crate) mod rows;
pub(crate) mod summary;
mod uncertainty;
mod wide;

use std::path::Path;

use crate::release::outputs::manifest::Manifest;

/// At most this many problems are reported per file.
const MAX_PROBLEMS: usize = 5;

/// The problems of the margins' files in release `out`, for those the manifest lists
/// (and that are `readable`: regular files inside the release).
pub fn check(out: &Path, manifest: &Manifest, readable: &dyn Fn(&str) -> bool) -> Vec<String> {
    let lists = |name: &str| manifest.outputs.iter().any(|f| f.path == name) && readable(name);
    let mut problems = uncertainty::check(out, manifest, &lists);
    problems.extend(summary::check(out, manifest, &lists));
    problems.extend(measurements::check(out, manifest, &lists));
    problems.extend(wide::check(out, manifest, &lists));
    problems.extend(replicates::check(out, manifest, &lists));
    problems
}
