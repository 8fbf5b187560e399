//! `uncertainty.csv` and `uncertainty.parquet`: `level,region,size,count,lower,upper`,
//! in the order of `counts.csv` (level root first, region by display id, size), every
//! cell whose interval is not `[0, 0]`. `count` is the released count (`0` for a cell
//! `counts.csv` leaves out).

use std::io::Write;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::data::{Hierarchy, LevelId, NodeId, PublicData};
use crate::histogram::HistogramSet;
use crate::release::outputs::csv::{push_field, push_number, write_chunks};
use crate::release::outputs::parquet::{arrow_error, int64, write_batches};
use crate::release::outputs::rows::{DisplayIds, chunks_of};

use super::Uncertainty;

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
    for stat in super::summary::stats(k) {
        let name = stat.name();
        fields.push(name.clone());
        fields.push(format!("{name}_lower"));
        fields.push(format!("{name}_upper"));
    }
    fields.join(",")
}

/// Appends a fixed-point value with four decimals.
fn push_fixed(buf: &mut Vec<u8>, v: i64) {
    let scale = super::summary::SCALE as i64;
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
    let stats = super::summary::stats(u.max_size());
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
                        super::summary::Stat::AtLeast(_) => push_number(buf, &mut itoa, v),
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
