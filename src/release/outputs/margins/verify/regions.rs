//! Each level's regions as the release publishes them: the rows of the level's wide
//! table (`tables/<i>-<level>.csv`, else its Parquet form), which lists every region of
//! the level, with groups or without, in the order of `counts.csv`, with its public
//! `G`. `coco verify` checks the tables against the counts; the margins' files are
//! checked against the tables' regions, so a region left out, listed twice or unknown
//! is found whichever file it is in.

use std::path::Path;

use crate::histogram::Count;
use crate::release::outputs::manifest::Manifest;
use crate::release::outputs::read_rows::WideSource;
use crate::release::outputs::rows::table_file;

/// One level's table, read row by row.
pub(super) struct LevelTable {
    /// The table's path in the release, for messages.
    pub file: String,
    rows: WideSource,
    /// Rows read so far.
    pub read: u64,
}

impl LevelTable {
    /// The table of level `i` of `manifest` in release `out`: the CSV form if the
    /// manifest lists it (`lists`), else the Parquet form; why not, if neither is.
    pub fn open(
        out: &Path,
        manifest: &Manifest,
        i: usize,
        lists: &dyn Fn(&str) -> bool,
    ) -> Result<LevelTable, String> {
        let name = &manifest.levels[i].name;
        let Some(file) = ["csv", "parquet"]
            .into_iter()
            .map(|ext| table_file(i, name, ext))
            .find(|t| lists(t))
        else {
            return Err(format!(
                "manifest.json lists no table of level {name} ({}), which lists its regions",
                table_file(i, name, "csv")
            ));
        };
        let rows = WideSource::open(&out.join(&file))
            .map_err(|e| format!("{file}: cannot be read: {e}"))?;
        Ok(LevelTable {
            file,
            rows,
            read: 0,
        })
    }

    /// The next region and its `G`.
    pub fn next(&mut self) -> Option<Result<(String, Count), String>> {
        let row = self.rows.row()?;
        self.read += 1;
        Some(
            row.map(|(region, cells)| (region, cells[0]))
                .map_err(|e| format!("{}: {e}", self.file)),
        )
    }

    /// Where `region` is in this table (1 for the first row), read afresh from `out`;
    /// `None` if it is not there.
    pub fn position(&self, out: &Path, region: &str) -> Result<Option<u64>, String> {
        let mut rows = WideSource::open(&out.join(&self.file))
            .map_err(|e| format!("{}: cannot be read: {e}", self.file))?;
        let mut n = 0u64;
        while let Some(row) = rows.row() {
            n += 1;
            match row {
                Ok((r, _)) if r == region => return Ok(Some(n)),
                Ok(_) => {}
                Err(e) => return Err(format!("{}: {e}", self.file)),
            }
        }
        Ok(None)
    }
}
