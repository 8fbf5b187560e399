//! What a report shows of a release, read from its published files only: the
//! manifest, the level tables and the counts (through
//! [`published::read`](crate::release::outputs::margins::published::read), as
//! `coco margins` reads them), `uncertainty.csv` and `summary.csv` (or their Parquet
//! forms, in a release written with `--format parquet`, read through the same rows as
//! `coco verify` reads them). Nothing here reads a dataset or the ledger, so what it
//! gives is as public as the release.

use std::path::Path;

use arrow_schema::{DataType, SchemaRef};

use crate::data::NodeId;
use crate::histogram::Count;
use crate::release::outputs::margins::published::{self, Published};
use crate::release::outputs::margins::tables;
use crate::release::outputs::margins::verify::rows::{self, Rows};

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
    // The CSV form where the release has one, else the Parquet form.
    let listed = |name: &str| -> Result<String, ReportError> {
        [format!("{name}.csv"), format!("{name}.parquet")]
            .into_iter()
            .find(|f| lists(f))
            .ok_or_else(|| ReportError::File {
                path: dir.join("manifest.json"),
                problem: format!(
                    "lists neither {name}.csv nor {name}.parquet: a report shows the margins of \
                     error, and this release was written without them (--uncertainty none)"
                ),
            })
    };
    let uncertainty = listed("uncertainty")?;
    read_uncertainty(
        open(dir, &uncertainty, &tables::schema())?.as_mut(),
        &dir.join(&uncertainty),
        &mut levels,
    )?;
    let summary = listed("summary")?;
    let schema = tables::summary_schema(
        published.manifest.max_size,
        crate::release::outputs::margins::verify::summary::columns(&published.manifest),
    );
    read_summary(
        open(dir, &summary, &schema)?.as_mut(),
        &dir.join(&summary),
        &schema,
        &mut levels,
    )?;
    Ok(ReleaseFacts { published, levels })
}

/// The rows of `file` in release `dir`, CSV or Parquet, checked against `schema` (the
/// columns coco writes it with).
fn open(dir: &Path, file: &str, schema: &SchemaRef) -> Result<Box<dyn Rows>, ReportError> {
    rows::open(dir, file, schema).map_err(|problem| ReportError::File {
        path: dir.join(file),
        problem,
    })
}

/// What is wrong with row `n` of `file`.
fn row_error(rows: &dyn Rows, file: &Path, n: u64, problem: String) -> ReportError {
    ReportError::File {
        path: file.to_path_buf(),
        problem: format!("{}: {problem}", rows.at(n)),
    }
}

/// Calls `f` with each row's level, region, numbers and a maker of errors at that row;
/// a row of a level the manifest does not have is refused.
fn each_row(
    rows: &mut dyn Rows,
    file: &Path,
    levels: &mut [LevelFacts],
    mut f: impl FnMut(
        &mut LevelFacts,
        &str,
        &[Option<u64>],
        &dyn Fn(String) -> ReportError,
    ) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    let mut n = 0;
    while let Some(row) = rows.next_row() {
        n += 1;
        let (level, region, numbers) = row.map_err(|problem| ReportError::File {
            path: file.to_path_buf(),
            problem,
        })?;
        let error = |problem: String| row_error(&*rows, file, n, problem);
        let Some(facts) = levels.iter_mut().find(|l| l.name == level) else {
            return Err(error(format!(
                "level {level:?}: expected a level of the manifest"
            )));
        };
        f(facts, &region, &numbers, &error)?;
    }
    Ok(())
}

fn read_uncertainty(
    rows: &mut dyn Rows,
    file: &Path,
    levels: &mut [LevelFacts],
) -> Result<(), ReportError> {
    each_row(rows, file, levels, |facts, region, numbers, error| {
        let [Some(size), Some(count), Some(lower), Some(upper)] = numbers[..] else {
            return Err(error("expected a size, a count and its interval".into()));
        };
        let cell = Cell {
            size,
            count,
            lower,
            upper,
        };
        if !(cell.lower <= cell.count && cell.count <= cell.upper) {
            return Err(error(format!(
                "interval [{}, {}] does not hold its count {}: expected lower ≤ count ≤ upper",
                cell.lower, cell.upper, cell.count
            )));
        }
        facts.widths.push(cell.upper - cell.lower);
        if region == facts.largest_id {
            facts.cells.push(cell);
        }
        Ok(())
    })
}

/// A number of a summary column as `summary.csv` writes it: an integer, a decimal with
/// the column's places (`2.6091`), or empty.
fn summary_text(value: Option<u64>, data_type: &DataType) -> String {
    match (value, data_type) {
        (None, _) => String::new(),
        (Some(v), DataType::Decimal128(_, places)) if *places > 0 => {
            let places = u32::from(places.unsigned_abs());
            let unit = 10u64.pow(places);
            format!("{}.{:0width$}", v / unit, v % unit, width = places as usize)
        }
        (Some(v), _) => v.to_string(),
    }
}

fn read_summary(
    rows: &mut dyn Rows,
    file: &Path,
    schema: &SchemaRef,
    levels: &mut [LevelFacts],
) -> Result<(), ReportError> {
    // After `level`, `region` and `groups`, each statistic is three columns: NAME,
    // NAME_lower, NAME_upper (the schema says so).
    let stats: Vec<_> = schema.fields().iter().skip(3).collect();
    each_row(rows, file, levels, |facts, region, numbers, _| {
        if region != facts.largest_id {
            return Ok(());
        }
        let field =
            |j: usize| summary_text(numbers.get(1 + j).copied().flatten(), stats[j].data_type());
        facts.summary = stats
            .chunks(3)
            .enumerate()
            .map(|(k, c)| Statistic {
                name: c[0].name().clone(),
                estimate: field(3 * k),
                lower: field(3 * k + 1),
                upper: field(3 * k + 2),
            })
            .collect();
        Ok(())
    })
}
