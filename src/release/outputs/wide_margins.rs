//! The wide tables' margins: `tables/<i>-<level>-margins.csv|parquet`, written beside
//! each wide table when the margins of error are computed. The same rows as the wide
//! table (`region, name, groups`), then for each of its columns `size_0 … size_6,
//! size_7_or_more` a `…_lower` and a `…_upper` bound at the manifest's confidence:
//!
//! - `size_j`: the interval `uncertainty.csv` gives the cell of size `j` (a cell it
//!   does not list is `[0, 0]`), so the same number has one interval in both files;
//! - `size_7_or_more`: the interval `summary.csv` gives `groups_size_7_or_more` (when
//!   `K ≥ 7`; with `K < 7` no group is that large and the interval is `[0, 0]`).
//!
//! `groups` is public (`G`) and exact: it has no bounds. The wide tables themselves are
//! unchanged (a contract).

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::data::{NodeId, PublicData};
use crate::histogram::{Count, HistogramSet};
use crate::release::margins::Uncertainty;
use crate::release::margins::summary;
use crate::release::outputs::numeric::{NumericRows, NumericTable};
use crate::release::outputs::rows::{CHUNK_REGIONS, DisplayIds, table_file};
use crate::release::outputs::writer::{Out, TableFormat};

/// The margins of level `index` (named `level`) in a format with extension `ext`:
/// `tables/<i>-<level>-margins.<ext>`, beside `tables/<i>-<level>.<ext>`.
pub fn file(index: usize, level: &str, ext: &str) -> String {
    let table = table_file(index, level, "");
    format!("{}-margins.{ext}", table.trim_end_matches('.'))
}

/// The names of the wide table's size columns.
fn size_columns() -> Vec<String> {
    let mut names: Vec<String> = (0..7).map(|s| format!("size_{s}")).collect();
    names.push("size_7_or_more".into());
    names
}

/// The name of `summary.csv`'s statistic that `size_7_or_more` is.
const SEVEN_OR_MORE: &str = "groups_size_7_or_more";

/// The columns: `region, name, groups`, then `size_0_lower, size_0_upper, …,
/// size_7_or_more_lower, size_7_or_more_upper`.
pub fn schema() -> SchemaRef {
    let mut fields = vec![
        Field::new("region", DataType::Utf8, false),
        Field::new("name", DataType::Utf8, false),
        Field::new("groups", DataType::Int64, false),
    ];
    for column in size_columns() {
        for bound in ["lower", "upper"] {
            fields.push(Field::new(
                format!("{column}_{bound}"),
                DataType::Int64,
                false,
            ));
        }
    }
    Arc::new(Schema::new(fields))
}

/// The bounds of a region's row: `(lower, upper)` for sizes 0–6 and 7 or more
/// (`seven`: `summary.csv`'s statistic of 7 or more, when `K ≥ 7`).
fn bounds(
    u: &Uncertainty,
    level: usize,
    released: &HistogramSet,
    id: NodeId,
    groups: Count,
    seven: Option<summary::Stat>,
) -> [(u64, u64); 8] {
    let hist = released.get(id.index());
    let mut out = [(0u64, 0u64); 8];
    // The region's cell intervals, computed once for its cells and its statistic.
    let cells = std::cell::OnceCell::new();
    let region = cells.get_or_init(|| u.region(level, hist, groups));
    for c in region {
        if c.size < 7 {
            out[c.size as usize] = (c.lower, c.upper);
        }
    }
    if u.max_size() >= 7 {
        out[7] = match seven.and_then(|stat| u.statistic_with(level, stat, hist, groups, &cells)) {
            Some(iv) => (iv.lower.max(0) as u64, iv.upper.max(0) as u64),
            // `summary.csv` publishes this statistic whenever `K ≥ 7`; were it ever
            // absent, the cells' bounds summed hold the sum of their counts too.
            None => {
                let (mut lower, mut upper) = (0u64, 0u64);
                for c in region.iter().filter(|c| c.size >= 7) {
                    lower = lower.saturating_add(c.lower);
                    upper = upper.saturating_add(c.upper);
                }
                (lower, upper.min(groups))
            }
        };
    }
    out
}

/// Writes the margins of a level's wide table (`ids`, the level's nodes in the order
/// of `counts.csv`) in `format`.
pub(crate) fn write(
    w: &mut Out,
    format: &dyn TableFormat,
    public: PublicData<'_>,
    released: &HistogramSet,
    level: usize,
    ids: &[NodeId],
    u: &Uncertainty,
) -> std::io::Result<()> {
    let h = public.hierarchy;
    let k = u.max_size();
    let seven = summary::stats(k)
        .into_iter()
        .find(|stat| stat.name(k) == SEVEN_OR_MORE);
    let chunks = ids.len().div_ceil(CHUNK_REGIONS);
    let fill = |i: usize, rows: &mut NumericRows| {
        let mut regions = DisplayIds::new(h);
        let end = ((i + 1) * CHUNK_REGIONS).min(ids.len());
        let mut values = Vec::with_capacity(17);
        for &id in &ids[i * CHUNK_REGIONS..end] {
            let groups = public.groups(id);
            values.clear();
            values.push(groups);
            for (lower, upper) in bounds(u, level, released, id, groups, seven) {
                values.extend([lower, upper]);
            }
            let region = regions.of(id);
            rows.push(region, h.name(id).unwrap_or_default(), &values);
        }
        Ok(())
    };
    format.write_numeric(
        w,
        &NumericTable {
            schema: schema(),
            chunks,
            fill: &fill,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::file;

    #[test]
    fn the_margins_sit_beside_their_table() {
        assert_eq!(file(0, "nation", "csv"), "tables/0-nation-margins.csv");
        assert_eq!(
            file(2, "Ortsteil/Bezirk é", "parquet"),
            "tables/2-Ortsteil_Bezirk__-margins.parquet"
        );
    }
}
