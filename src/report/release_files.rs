//! What a report shows of a release, read from its published files only: the
//! manifest, the level tables and the counts (through
//! [`published::read`](crate::release::outputs::margins::published::read), as
//! `coco margins` reads them), `uncertainty.csv` and `summary.csv`. Nothing here reads
//! a dataset or the ledger, so what it gives is as public as the release.

use std::path::{Path, PathBuf};

use crate::data::NodeId;
use crate::histogram::Count;
use crate::release::outputs::margins::published::{self, Published};

use super::ReportError;

/// One listed cell of `uncertainty.csv`: a size, its released count and its interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub size: u64,
    pub count: u64,
    pub lower: u64,
    pub upper: u64,
}

/// One statistic of `summary.csv` for a region: its name and its figures as the file
/// writes them (empty where the file leaves them empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statistic {
    pub name: String,
    pub estimate: String,
    pub lower: String,
    pub upper: String,
}

/// What a report shows of one level.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelFacts {
    pub name: String,
    pub regions: usize,
    /// The level's groups: the sum of its regions' public G.
    pub groups: u128,
    /// The region with the most groups (the first by display id among equals).
    pub largest: NodeId,
    pub largest_id: String,
    pub largest_groups: Count,
    /// The largest region's listed cells, by size.
    pub cells: Vec<Cell>,
    /// The width (`upper − lower`) of every listed cell of the level.
    pub widths: Vec<u64>,
    /// The largest region's row of `summary.csv`.
    pub summary: Vec<Statistic>,
}

/// A release read back for a report.
pub struct ReleaseFacts {
    pub published: Published,
    pub levels: Vec<LevelFacts>,
}

/// Reads the release directory `dir` for a report.
pub fn read(dir: &Path) -> Result<ReleaseFacts, ReportError> {
    let published = published::read(dir)?;
    let h = &published.hierarchy;
    let mut levels: Vec<LevelFacts> = h
        .levels()
        .map(|level| {
            let mut largest: Option<(NodeId, Count)> = None;
            let mut groups = 0u128;
            let mut regions = 0usize;
            let mut nodes: Vec<NodeId> = h.level_nodes(level).collect();
            nodes.sort_by_key(|&n| h.display_id(n));
            for n in nodes {
                let g = published.groups[n.index()];
                groups += u128::from(g);
                regions += 1;
                if largest.is_none_or(|(_, best)| g > best) {
                    largest = Some((n, g));
                }
            }
            let (largest, largest_groups) = largest.expect("a level has a region");
            LevelFacts {
                name: h.level_name(level).to_string(),
                regions,
                groups,
                largest,
                largest_id: h.display_id(largest),
                largest_groups,
                cells: Vec::new(),
                widths: Vec::new(),
                summary: Vec::new(),
            }
        })
        .collect();
    let lists = |f: &str| published.manifest.outputs.iter().any(|o| o.path == f);
    let csv_file = |name: &str| -> Result<PathBuf, ReportError> {
        if lists(&format!("{name}.csv")) {
            Ok(dir.join(format!("{name}.csv")))
        } else {
            Err(ReportError::File {
                path: dir.join("manifest.json"),
                problem: format!(
                    "lists no {name}.csv: a report reads the margins of error from the CSV form \
                     (a release written with --format csv or both, with margins of error)"
                ),
            })
        }
    };
    read_uncertainty(&csv_file("uncertainty")?, &mut levels)?;
    read_summary(&csv_file("summary")?, &mut levels)?;
    Ok(ReleaseFacts { published, levels })
}

/// A CSV reader of `path` whose header must be `expected` (a prefix of it, for
/// `summary.csv`, whose statistics follow).
fn open(path: &Path, expected: &[&str]) -> Result<csv::Reader<std::fs::File>, ReportError> {
    let file_error = |problem: String| ReportError::File {
        path: path.to_path_buf(),
        problem,
    };
    let mut reader = csv::Reader::from_path(path).map_err(|e| file_error(e.to_string()))?;
    let header = reader.headers().map_err(|e| file_error(e.to_string()))?;
    let found: Vec<&str> = header.iter().take(expected.len()).collect();
    if found != expected {
        return Err(ReportError::Row {
            path: path.to_path_buf(),
            line: 1,
            problem: format!(
                "header {:?}: expected it to begin {:?}, as coco writes it",
                header.iter().collect::<Vec<_>>().join(","),
                expected.join(",")
            ),
        });
    }
    Ok(reader)
}

fn read_uncertainty(path: &Path, levels: &mut [LevelFacts]) -> Result<(), ReportError> {
    let mut reader = open(
        path,
        &["level", "region", "size", "count", "lower", "upper"],
    )?;
    for (i, record) in reader.records().enumerate() {
        let line = i as u64 + 2;
        let row_error = |problem: String| ReportError::Row {
            path: path.to_path_buf(),
            line,
            problem,
        };
        let record = record.map_err(|e| row_error(e.to_string()))?;
        let level = levels
            .iter_mut()
            .find(|l| l.name == record[0])
            .ok_or_else(|| {
                row_error(format!(
                    "level {:?}: expected a level of the manifest",
                    &record[0]
                ))
            })?;
        let number = |i: usize, name: &str| -> Result<u64, ReportError> {
            record
                .get(i)
                .and_then(|t| t.parse::<u64>().ok())
                .ok_or_else(|| {
                    row_error(format!(
                        "{name} {:?}: expected a whole number",
                        record.get(i).unwrap_or("")
                    ))
                })
        };
        let cell = Cell {
            size: number(2, "size")?,
            count: number(3, "count")?,
            lower: number(4, "lower")?,
            upper: number(5, "upper")?,
        };
        if !(cell.lower <= cell.count && cell.count <= cell.upper) {
            return Err(row_error(format!(
                "interval [{}, {}] does not hold its count {}: expected lower ≤ count ≤ upper",
                cell.lower, cell.upper, cell.count
            )));
        }
        level.widths.push(cell.upper - cell.lower);
        if record[1] == *level.largest_id {
            level.cells.push(cell);
        }
    }
    Ok(())
}

fn read_summary(path: &Path, levels: &mut [LevelFacts]) -> Result<(), ReportError> {
    let mut reader = open(path, &["level", "region", "groups"])?;
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| ReportError::File {
            path: path.to_path_buf(),
            problem: e.to_string(),
        })?
        .iter()
        .map(str::to_string)
        .collect();
    // After `groups`, each statistic is three columns: NAME, NAME_lower, NAME_upper.
    let stats = &header[3..];
    if !stats.len().is_multiple_of(3)
        || stats
            .chunks(3)
            .any(|c| c[1] != format!("{}_lower", c[0]) || c[2] != format!("{}_upper", c[0]))
    {
        return Err(ReportError::Row {
            path: path.to_path_buf(),
            line: 1,
            problem: "expected each statistic's columns as NAME, NAME_lower, NAME_upper".into(),
        });
    }
    for (i, record) in reader.records().enumerate() {
        let record = record.map_err(|e| ReportError::Row {
            path: path.to_path_buf(),
            line: i as u64 + 2,
            problem: e.to_string(),
        })?;
        let Some(level) = levels.iter_mut().find(|l| l.name == record[0]) else {
            return Err(ReportError::Row {
                path: path.to_path_buf(),
                line: i as u64 + 2,
                problem: format!("level {:?}: expected a level of the manifest", &record[0]),
            });
        };
        if record[1] != *level.largest_id {
            continue;
        }
        let field = |j: usize| record.get(3 + j).unwrap_or("").to_string();
        level.summary = stats
            .chunks(3)
            .enumerate()
            .map(|(k, c)| Statistic {
                name: c[0].clone(),
                estimate: field(3 * k),
                lower: field(3 * k + 1),
                upper: field(3 * k + 2),
            })
            .collect();
    }
    Ok(())
}
