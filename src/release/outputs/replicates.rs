//! `replicates.csv` and `replicates.parquet` (`coco release --replicate-tables`): the
//! bootstrap replicates the margins of error were read from, published as the American
//! Community Survey publishes its replicate weights, so that a data user can compute
//! the standard error of any statistic of the tables (`docs/uncertainty.md`, "Replicate
//! tables").
//!
//! Columns `level,region,size,replicate,count`: every nonzero cell of every replicate
//! `1..=R` (`R` is the manifest's `uncertainty.replicates`), rows in the order of
//! `counts.csv` (level root first, region by display id, size) and then by replicate.
//! Each replicate is the plan's measurements drawn again on the released tables,
//! estimated and made consistent as the release was ([`crate::release::margins`]): a
//! post-processing of the published tables with noise of its own, so publishing them
//! costs no ε and says nothing more of the confidential data than the tables do.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::data::{LevelId, NodeId, PublicData};
use crate::histogram::HistogramSet;
use crate::release::outputs::numeric::{NumericRows, NumericTable};
use crate::release::outputs::rows::{DisplayIds, chunks_of};
use crate::release::outputs::writer::{Out, TableFormat};

/// The file of the replicates in a format with extension `ext`.
pub fn file(ext: &str) -> String {
    format!("replicates.{ext}")
}

/// The columns: `level, region, size, replicate, count`.
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("level", DataType::Utf8, false),
        Field::new("region", DataType::Utf8, false),
        Field::new("size", DataType::Int64, false),
        Field::new("replicate", DataType::Int64, false),
        Field::new("count", DataType::Int64, false),
    ]))
}

/// Writes the replicate table of `replicates` (replicate `r` is numbered `r + 1`) in
/// `format`; `levels` holds each level's nodes in the order of `counts.csv`.
pub(crate) fn write(
    w: &mut Out,
    format: &dyn TableFormat,
    public: PublicData<'_>,
    levels: &[Vec<NodeId>],
    replicates: &[HistogramSet],
) -> std::io::Result<()> {
    let h = public.hierarchy;
    let chunks = chunks_of(levels);
    let fill = |i: usize, rows: &mut NumericRows| {
        let (l, range) = &chunks[i];
        let level = h.level_name(LevelId(*l));
        let mut regions = DisplayIds::new(h);
        let mut cells: Vec<(u64, u64, u64)> = Vec::new();
        for &id in &levels[*l][range.clone()] {
            let region = regions.of(id);
            if public.groups(id) == 0 {
                continue;
            }
            cells.clear();
            for (r, replicate) in (1u64..).zip(replicates) {
                for &(size, count) in replicate.get(id.index()).pairs() {
                    if count > 0 {
                        cells.push((u64::from(size), r, count));
                    }
                }
            }
            cells.sort_unstable();
            for &(size, r, count) in &cells {
                rows.push(level, region, &[size, r, count]);
            }
        }
        Ok(())
    };
    format.write_numeric(
        w,
        &NumericTable {
            schema: schema(),
            chunks: chunks.len(),
            fill: &fill,
        },
    )
}
