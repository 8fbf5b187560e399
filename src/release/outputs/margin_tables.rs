//! `uncertainty.csv` and `uncertainty.parquet`: `level,region,size,count,lower,upper`,
//! in the order of `counts.csv` (level root first, region by display id, size), every
//! cell whose interval is not `[0, 0]`. `count` is the released count (`0` for a cell
//! `counts.csv` leaves out); and `summary.csv` and `summary.parquet`, each region's
//! statistics. Written in every format of a release through
//! [`TableFormat::write_margins`](super::writer::TableFormat::write_margins).

use std::io::Write;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::data::{Hierarchy, LevelId, NodeId, PublicData};
use crate::histogram::HistogramSet;
use crate::release::outputs::csv::{push_field, push_number, write_chunks};
use crate::release::outputs::parquet::{arrow_error, int64, write_batches};
use crate::release::outputs::rows::{DisplayIds, chunks_of};

use crate::release::margins::Uncertainty;

/// The header of `uncertainty.csv`.
pub const HEADER: &str = "level,region,size,count,lower,upper";
pub const CSV_FILE: &str = "uncertainty.csv";
pub const PARQUET_FILE: &str = "uncertainty.parquet";

/// Writes `uncertainty.csv` for the release `released` (levels' nodes sorted as in
/// `counts.csv`).
pub fn write_csv<W: Write + Send>(
    w: &mut W,
    public: PublicData<'_>,
    released: &HistogramSet,
    levels: &[Vec<NodeId>],
    u: &Uncertainty,
) -> std::io::Result<()> {
    let h = public.hierarchy;
    w.write_all(HEADER.as_bytes())?;
    w.write_all(b"\n")?;
    let level_fields = level_fields(h);
    let chunks = chunks_of(levels);
    write_chunks(w, chunks.len(), |i, buf| {
        let (l, range) = &chunks[i];
        let (mut regions, mut prefix) = (DisplayIds::new(h), Vec::new());
        let mut itoa = itoa::Buffer::new();
        for &id in &levels[*l][range.clone()] {
            let cells = u.region(*l, released.get(id.index()), public.groups(id));
            if cells.is_empty() {
                continue;
            }
            prefix.clear();
            prefix.extend_from_slice(&level_fields[*l]);
            push_field(&mut prefix, regions.of(id).as_bytes());
            prefix.push(b',');
            for c in cells {
                buf.extend_from_slice(&prefix);
                push_number(buf, &mut itoa, c.size);
                for v in [c.count, c.lower, c.upper] {
                    buf.push(b',');
                    push_number(buf, &mut itoa, v);
                }
                buf.push(b'\n');
            }
        }
        Ok(())
    })
}

fn level_fields(h: &Hierarchy) -> Vec<Vec<u8>> {
    h.levels()
        .map(|l| {
            let mut f = Vec::new();
            push_field(&mut f, h.level_name(l).as_bytes());
            f.push(b',');
            f
        })
        .collect()
}

/// The columns of `uncertainty.parquet`: those of `uncertainty.csv`.
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("level", DataType::Utf8, false),
        Field::new("region", DataType::Utf8, false),
        Field::new("size", DataType::Int64, false),
        Field::new("count", DataType::Int64, false),
        Field::new("lower", DataType::Int64, false),
        Field::new("upper", DataType::Int64, false),
    ]))
}

/// Writes `uncertainty.parquet`: the rows of `uncertainty.csv`.
pub fn write_parquet<W: Write + Send>(
    w: W,
    public: PublicData<'_>,
    released: &HistogramSet,
    levels: &[Vec<NodeId>],
    u: &Uncertainty,
) -> std::io::Result<()> {
    let h = public.hierarchy;
    let schema = schema();
    let chunks = chunks_of(levels);
    write_batches(w, schema.clone(), chunks.len(), |i| {
        let (l, range) = &chunks[i];
        let level_name = h.level_name(LevelId(*l));
        let mut level = arrow_array::builder::StringBuilder::new();
        let mut region = arrow_array::builder::StringBuilder::new();
        let mut cols: [Vec<i64>; 4] = Default::default();
        let mut regions = DisplayIds::new(h);
        for &id in &levels[*l][range.clone()] {
            let cells = u.region(*l, released.get(id.index()), public.groups(id));
            if cells.is_empty() {
                continue;
            }
            let name = regions.of(id);
            level.append_value_n(level_name, cells.len());
            region.append_value_n(name, cells.len());
            for c in cells {
                cols[0].push(i64::from(c.size));
                cols[1].push(int64(c.count)?);
                cols[2].push(int64(c.lower)?);
                cols[3].push(int64(c.upper)?);
            }
        }
        let mut columns: Vec<ArrayRef> = vec![Arc::new(level.finish()), Arc::new(region.finish())];
        for c in cols {
            columns.push(Arc::new(Int64Array::from(c)));
        }
        RecordBatch::try_new(schema.clone(), columns).map_err(arrow_error)
    })
}

pub const SUMMARY_FILE: &str = "summary.csv";

/// The header of `summary.csv` for a release with bound `k`.
pub fn summary_header(k: crate::histogram::Size) -> String {
    let mut fields = vec!["level".to_string(), "region".into(), "groups".into()];
    for stat in crate::release::margins::summary::stats(k) {
        let name = stat.name(k);
        fields.push(name.clone());
        fields.push(format!("{name}_lower"));
        fields.push(format!("{name}_upper"));
    }
    fields.join(",")
}

/// Appends a fixed-point value with four decimals.
fn push_fixed(buf: &mut Vec<u8>, v: i64) {
    let scale = crate::release::margins::summary::SCALE as i64;
    let _ = write!(buf, "{}.{:04}", v / scale, v % scale);
}

/// Writes `summary.csv`: one row per region with groups, in the order of `counts.csv`
/// (a statistic undefined for a region, a mean of no groups, is left empty).
pub fn write_summary<W: Write + Send>(
    w: &mut W,
    public: PublicData<'_>,
    released: &HistogramSet,
    levels: &[Vec<NodeId>],
    u: &Uncertainty,
) -> std::io::Result<()> {
    let h = public.hierarchy;
    w.write_all(summary_header(u.max_size()).as_bytes())?;
    w.write_all(b"\n")?;
    let level_fields = level_fields(h);
    let stats = crate::release::margins::summary::stats(u.max_size());
    let chunks = chunks_of(levels);
    write_chunks(w, chunks.len(), |i, buf| {
        let (l, range) = &chunks[i];
        let mut regions = DisplayIds::new(h);
        let mut itoa = itoa::Buffer::new();
        for &id in &levels[*l][range.clone()] {
            let groups = public.groups(id);
            buf.extend_from_slice(&level_fields[*l]);
            push_field(buf, regions.of(id).as_bytes());
            buf.push(b',');
            push_number(buf, &mut itoa, groups);
            let values = u.summary(*l, released.get(id.index()), groups);
            for (stat, value) in stats.iter().zip(values) {
                for v in value
                    .map(|v| [v.estimate, v.lower, v.upper])
                    .into_iter()
                    .flatten()
                {
                    buf.push(b',');
                    match stat {
                        crate::release::margins::summary::Stat::Groups(_) => {
                            push_number(buf, &mut itoa, v)
                        }
                        _ => push_fixed(buf, v),
                    }
                }
                if value.is_none() {
                    buf.extend_from_slice(b",,,");
                }
            }
            buf.push(b'\n');
        }
        Ok(())
    })
}

pub const SUMMARY_PARQUET_FILE: &str = "summary.parquet";

/// The columns of `summary.parquet`: those of `summary.csv`, the counts as 64-bit
/// integers and the means and shares as decimals with four places (exactly the values
/// `summary.csv` writes); a statistic undefined for a region is null. `columns`: those
/// of the coco that wrote the file (a release is written with the current ones).
pub fn summary_schema(
    k: crate::histogram::Size,
    columns: crate::release::margins::summary::Columns,
) -> SchemaRef {
    let mut fields = vec![
        Field::new("level", DataType::Utf8, false),
        Field::new("region", DataType::Utf8, false),
        Field::new("groups", DataType::Int64, false),
    ];
    for stat in columns.stats(k) {
        let name = stat.name(k);
        let kind = match stat {
            crate::release::margins::summary::Stat::Groups(_) => DataType::Int64,
            _ => DataType::Decimal128(SUMMARY_PRECISION, SUMMARY_SCALE),
        };
        for column in [
            name.clone(),
            format!("{name}_lower"),
            format!("{name}_upper"),
        ] {
            fields.push(Field::new(column, kind.clone(), true));
        }
    }
    Arc::new(Schema::new(fields))
}

/// Decimal digits of a fixed-point statistic in `summary.parquet` (an `i64` has 19).
const SUMMARY_PRECISION: u8 = 19;
/// Its decimal places: [`crate::release::margins::summary::SCALE`] is 10⁴.
const SUMMARY_SCALE: i8 = 4;

/// Writes `summary.parquet`: the rows of `summary.csv`.
pub fn write_summary_parquet<W: Write + Send>(
    w: W,
    public: PublicData<'_>,
    released: &HistogramSet,
    levels: &[Vec<NodeId>],
    u: &Uncertainty,
) -> std::io::Result<()> {
    let h = public.hierarchy;
    let stats = crate::release::margins::summary::stats(u.max_size());
    let schema = summary_schema(
        u.max_size(),
        crate::release::margins::summary::Columns::WithOccupied,
    );
    let chunks = chunks_of(levels);
    write_batches(w, schema.clone(), chunks.len(), |i| {
        let (l, range) = &chunks[i];
        let level_name = h.level_name(LevelId(*l));
        let mut level = arrow_array::builder::StringBuilder::new();
        let mut region = arrow_array::builder::StringBuilder::new();
        let mut groups: Vec<i64> = Vec::new();
        let mut values: Vec<Vec<Option<i64>>> = vec![Vec::new(); 3 * stats.len()];
        let mut regions = DisplayIds::new(h);
        for &id in &levels[*l][range.clone()] {
            let g = public.groups(id);
            level.append_value(level_name);
            region.append_value(regions.of(id));
            groups.push(int64(g)?);
            let stat_values = u.summary(*l, released.get(id.index()), g);
            for (j, value) in stat_values.into_iter().enumerate().take(stats.len()) {
                let v = value.map(|v| [v.estimate, v.lower, v.upper]);
                for (k, column) in values[3 * j..3 * j + 3].iter_mut().enumerate() {
                    column.push(v.map(|v| v[k]));
                }
            }
        }
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(level.finish()),
            Arc::new(region.finish()),
            Arc::new(Int64Array::from(groups)),
        ];
        for (j, stat) in stats.iter().enumerate() {
            for column in &values[3 * j..3 * j + 3] {
                columns.push(match stat {
                    crate::release::margins::summary::Stat::Groups(_) => {
                        Arc::new(Int64Array::from(column.clone()))
                    }
                    _ => Arc::new(
                        arrow_array::Decimal128Array::from(
                            column.iter().map(|v| v.map(i128::from)).collect::<Vec<_>>(),
                        )
                        .with_precision_and_scale(SUMMARY_PRECISION, SUMMARY_SCALE)
                        .map_err(arrow_error)?,
                    ),
                });
            }
        }
        RecordBatch::try_new(schema.clone(), columns).map_err(arrow_error)
    })
}
