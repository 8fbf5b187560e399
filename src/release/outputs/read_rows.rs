//! The files of a written release read back row by row, CSV or Parquet alike, for
//! `coco verify`'s comparisons of one file with another: the counts and the wide
//! tables ([`CountSource`], [`WideSource`]), used to check the tables against the
//! counts ([`crate::release::outputs::verify`]) and the margins' files against the
//! tables' regions ([`crate::release::outputs::margins::verify`]).

use std::path::Path;

use crate::release::outputs::parquet as parquet_out;

/// One region's row as the counts give it and as a wide table gives it: groups, then
/// sizes 0–6 and 7 or more.
pub(super) type Cells = [u64; 9];

/// The counts of a release, one region at a time: `counts.csv` or `counts.parquet`.
pub(super) enum CountSource {
    Csv(csv::StringRecordsIntoIter<std::fs::File>),
    Parquet(parquet_out::CountRows),
}

impl CountSource {
    pub(super) fn open(path: &Path) -> Result<CountSource, String> {
        if path.extension().is_some_and(|e| e == "parquet") {
            parquet_out::CountRows::open(path)
                .map(CountSource::Parquet)
                .map_err(|e| e.to_string())
        } else {
            csv::ReaderBuilder::new()
                .from_path(path)
                .map(|r| CountSource::Csv(r.into_records()))
                .map_err(|e| e.to_string())
        }
    }

    /// The next row: level, region, size, count.
    pub(super) fn row(&mut self) -> Option<Result<(String, String, u64, u64), String>> {
        match self {
            CountSource::Csv(rows) => Some(rows.next()?.map_err(|e| e.to_string()).and_then(|r| {
                let number = |i: usize| {
                    r.get(i).and_then(|t| t.parse::<u64>().ok()).ok_or_else(|| {
                        format!(
                            "line {}: field {} is not a nonnegative integer",
                            r.position().map_or(0, |p| p.line()),
                            i + 1
                        )
                    })
                };
                if r.len() != 4 {
                    return Err("a row without four fields".into());
                }
                Ok((r[0].to_string(), r[1].to_string(), number(2)?, number(3)?))
            })),
            CountSource::Parquet(rows) => Some(
                rows.next_row()?
                    .map_err(|e| e.to_string())
                    .and_then(|(l, r, s, c)| match (u64::try_from(s), u64::try_from(c)) {
                        (Ok(s), Ok(c)) => Ok((l, r, s, c)),
                        _ => Err(format!("region {r}: a negative size or count")),
                    }),
            ),
        }
    }
}

/// A wide table's rows: region and its cells.
pub(super) enum WideSource {
    Csv(csv::StringRecordsIntoIter<std::fs::File>),
    Parquet(parquet_out::WideRows),
}

impl WideSource {
    pub(super) fn open(path: &Path) -> Result<WideSource, String> {
        if path.extension().is_some_and(|e| e == "parquet") {
            parquet_out::WideRows::open(path)
                .map(WideSource::Parquet)
                .map_err(|e| e.to_string())
        } else {
            csv::ReaderBuilder::new()
                .from_path(path)
                .map(|r| WideSource::Csv(r.into_records()))
                .map_err(|e| e.to_string())
        }
    }

    pub(super) fn row(&mut self) -> Option<Result<(String, Cells), String>> {
        match self {
            WideSource::Csv(rows) => Some(rows.next()?.map_err(|e| e.to_string()).and_then(|r| {
                if r.len() != 11 {
                    return Err("a row without eleven fields".into());
                }
                let mut cells = [0u64; 9];
                for (i, c) in cells.iter_mut().enumerate() {
                    *c = r[2 + i]
                        .parse()
                        .map_err(|_| format!("region {}: {:?} is not a count", &r[0], &r[2 + i]))?;
                }
                Ok((r[0].to_string(), cells))
            })),
            WideSource::Parquet(rows) => Some(
                rows.next_row()?
                    .map_err(|e| e.to_string())
                    .and_then(|(region, numbers)| {
                        let mut cells = [0u64; 9];
                        for (c, n) in cells.iter_mut().zip(numbers) {
                            *c = u64::try_from(n)
                                .map_err(|_| format!("region {region}: a negative count"))?;
                        }
                        Ok((region, cells))
                    }),
            ),
        }
    }
}
