//! `coco verify`'s checks of `uncertainty.csv` (and `uncertainty.parquet`): the header,
//! every row integral and nonnegative with `lower ≤ count ≤ upper`, and its counts
//! those of `counts.csv` in the same order (a cell `counts.csv` lists is listed, with
//! the same count; a cell it leaves out has count 0). Read streaming, both files at
//! once.

use std::path::Path;

use crate::release::outputs::manifest::Manifest;

use super::tables::{CSV_FILE, HEADER, PARQUET_FILE};

/// At most this many problems are reported per file.
const MAX_PROBLEMS: usize = 5;

type Row = (String, String, u64, u64);

/// Rows of a `level,region,size,count[,…]` CSV file, numbers checked.
struct CsvRows {
    file: &'static str,
    reader: csv::Reader<std::fs::File>,
    record: csv::StringRecord,
    columns: usize,
}

impl CsvRows {
    fn open(path: &Path, file: &'static str, header: &str) -> Result<CsvRows, String> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_path(path)
            .map_err(|e| format!("{file}: cannot be read: {e}"))?;
        let found = reader
            .headers()
            .map_err(|e| format!("{file}: cannot read its header: {e}"))?
            .iter()
            .collect::<Vec<_>>()
            .join(",");
        if found != header {
            return Err(format!(
                "{file}: line 1: the header is \"{found}\", expected \"{header}\""
            ));
        }
        Ok(CsvRows {
            file,
            reader,
            record: csv::StringRecord::new(),
            columns: header.split(',').count(),
        })
    }

    /// The next row's level, region and numbers, or what is wrong with it.
    fn next(&mut self) -> Option<Result<(String, String, Vec<u64>), String>> {
        match self.reader.read_record(&mut self.record) {
            Ok(false) => None,
            Err(e) => Some(Err(format!("{}: {e}", self.file))),
            Ok(true) => {
                let line = self.record.position().map_or(0, |p| p.line());
                if self.record.len() != self.columns {
                    return Some(Err(format!(
                        "{}: line {line}: {} fields, expected {}",
                        self.file,
                        self.record.len(),
                        self.columns
                    )));
                }
                let mut numbers = Vec::with_capacity(self.columns - 2);
                for (i, field) in self.record.iter().enumerate().skip(2) {
                    match field.parse::<u64>() {
                        Ok(n) => numbers.push(n),
                        Err(_) => {
                            return Some(Err(format!(
                                "{}: line {line}: field {} is \"{}\", expected a nonnegative integer",
                                self.file,
                                i + 1,
                                crate::data::text::escape_controls(field)
                            )));
                        }
                    }
                }
                Some(Ok((
                    self.record[0].to_string(),
                    self.record[1].to_string(),
                    numbers,
                )))
            }
        }
    }
}

/// The problems of `uncertainty.csv` in release `out` against `counts.csv`, if the
/// manifest lists both (and they are `readable`).
pub fn check(out: &Path, manifest: &Manifest, readable: &dyn Fn(&str) -> bool) -> Vec<String> {
    let lists = |name: &str| manifest.outputs.iter().any(|f| f.path == name) && readable(name);
    let mut problems = Vec::new();
    if lists(PARQUET_FILE) && manifest.uncertainty.is_none() {
        problems.push(format!(
            "{PARQUET_FILE} is listed but manifest.json has no \"uncertainty\""
        ));
    }
    if !lists(CSV_FILE) {
        return problems;
    }
    if manifest.uncertainty.is_none() {
        problems.push(format!(
            "{CSV_FILE} is listed but manifest.json has no \"uncertainty\""
        ));
    }
    if !lists("counts.csv") {
        return problems;
    }
    let mut margins = match CsvRows::open(&out.join(CSV_FILE), CSV_FILE, HEADER) {
        Ok(r) => r,
        Err(e) => {
            problems.push(e);
            return problems;
        }
    };
    let mut counts = match CsvRows::open(
        &out.join("counts.csv"),
        "counts.csv",
        "level,region,size,count",
    ) {
        Ok(r) => r,
        Err(e) => {
            problems.push(e);
            return problems;
        }
    };
    let mut next_count = || -> Result<Option<Row>, String> {
        match counts.next() {
            None => Ok(None),
            Some(Err(e)) => Err(e),
            Some(Ok((l, r, n))) => Ok(Some((l, r, n[0], n[1]))),
        }
    };
    let mut pending = match next_count() {
        Ok(p) => p,
        Err(e) => {
            problems.push(e);
            return problems;
        }
    };
    let mut row = 1u64;
    while let Some(next) = margins.next() {
        row += 1;
        if problems.len() >= MAX_PROBLEMS {
            problems.push(format!("{CSV_FILE}: further rows not checked"));
            return problems;
        }
        let (level, region, n) = match next {
            Ok(r) => r,
            Err(e) => {
                problems.push(e);
                return problems;
            }
        };
        let (size, count, lower, upper) = (n[0], n[1], n[2], n[3]);
        if !(lower <= count && count <= upper) {
            problems.push(format!(
                "{CSV_FILE}: line {row}: lower {lower}, count {count}, upper {upper}: expected lower ≤ count ≤ upper"
            ));
        }
        if upper == 0 {
            problems.push(format!(
                "{CSV_FILE}: line {row}: the interval [0, 0] is listed; unlisted cells are [0, 0]"
            ));
        }
        let same_cell = pending
            .as_ref()
            .is_some_and(|(l, r, s, _)| *l == level && *r == region && *s == size);
        if count > 0 {
            match &pending {
                Some((l, r, s, c)) if same_cell && *c == count => {
                    let _ = (l, r, s);
                }
                Some((l, r, s, c)) => {
                    problems.push(format!(
                        "{CSV_FILE}: line {row}: {level},{region},{size} has count {count}, but the next row of counts.csv is {l},{r},{s} with count {c}"
                    ));
                    return problems;
                }
                None => {
                    problems.push(format!(
                        "{CSV_FILE}: line {row}: {level},{region},{size} has count {count}, which counts.csv does not list"
                    ));
                    return problems;
                }
            }
            pending = match next_count() {
                Ok(p) => p,
                Err(e) => {
                    problems.push(e);
                    return problems;
                }
            };
        } else if same_cell {
            problems.push(format!(
                "{CSV_FILE}: line {row}: {level},{region},{size} has count 0, but counts.csv lists it with count {}",
                pending.as_ref().map_or(0, |p| p.3)
            ));
            return problems;
        }
    }
    if let Some((l, r, s, c)) = pending {
        problems.push(format!(
            "{CSV_FILE}: does not list {l},{r},{s} (count {c} in counts.csv): every released cell has an interval"
        ));
    }
    problems
}
