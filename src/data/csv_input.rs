//! One CSV input file, read once as a stream: digest, progress, header and row checks.
//!
//! Implements the rules for CSV files given in the [`load`](super::load) module:
//! byte-order mark, line ends, quotes, blank lines, trimming (of ASCII whitespace), and
//! the numbering of lines (1-based file lines, where a row starts) and columns
//! (1-based field numbers).

use std::fs::File;
use std::io::{self, Read};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use csv::ByteRecord;
use sha2::{Digest, Sha256};

use super::load_error::{LoadError, LoadErrorKind, LoadProgress};
use super::text::MAX_FIELD_BYTES;
use super::{InputFile, hex};

/// Progress is reported at most once per this many bytes.
const PROGRESS_STEP: u64 = 4 << 20;

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Reads a file, feeding every byte to SHA-256 and the progress callback, and hides a
/// leading byte-order mark from the CSV parser.
struct Hashing<'p> {
    file: File,
    name: &'static str,
    sha: Sha256,
    bytes: u64,
    total: u64,
    reported: u64,
    progress: &'p mut dyn FnMut(LoadProgress) -> ControlFlow<()>,
    /// Bytes read while looking for a byte-order mark, not yet handed on.
    pending: Vec<u8>,
}

impl Hashing<'_> {
    /// Reports progress; an error when the callback asks to stop (a cancelled load).
    fn report(&mut self) -> io::Result<()> {
        self.reported = self.bytes;
        let flow = (self.progress)(LoadProgress {
            file: self.name.to_string(),
            bytes_read: self.bytes,
            bytes_total: self.total.max(self.bytes),
        });
        match flow {
            ControlFlow::Continue(()) => Ok(()),
            ControlFlow::Break(()) => Err(io::Error::other("loading was cancelled")),
        }
    }

    fn read_raw(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        self.sha.update(&buf[..n]);
        self.bytes += n as u64;
        if self.bytes - self.reported >= PROGRESS_STEP {
            self.report()?;
        }
        Ok(n)
    }

    /// Reads the first three bytes (fewer for a shorter file) and drops them if they
    /// are a byte-order mark. Returns whether the file holds any byte at all.
    fn skip_bom(&mut self) -> io::Result<bool> {
        let mut head = [0u8; 3];
        let mut len = 0;
        while len < head.len() {
            match self.read_raw(&mut head[len..]) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if head[..len] != BOM {
            self.pending = head[..len].to_vec();
        }
        Ok(len > 0)
    }
}

impl Read for Hashing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.pending.is_empty() {
            let n = self.pending.len().min(buf.len());
            buf[..n].copy_from_slice(&self.pending[..n]);
            self.pending.drain(..n);
            return Ok(n);
        }
        self.read_raw(buf)
    }
}

/// An open CSV file positioned after its header row.
pub(crate) struct CsvFile<'p> {
    path: PathBuf,
    name: &'static str,
    reader: csv::Reader<Hashing<'p>>,
    record: ByteRecord,
    header: Vec<String>,
}

impl<'p> CsvFile<'p> {
    /// Opens `dir/name` and reads its header row. `expected` completes "expected a
    /// header row …" in the message for a file without one.
    pub fn open(
        dir: &Path,
        name: &'static str,
        expected: &str,
        progress: &'p mut dyn FnMut(LoadProgress) -> ControlFlow<()>,
    ) -> Result<Self, LoadError> {
        let path = dir.join(name);
        let io_err = |source| LoadError::in_file(&path, LoadErrorKind::Io { source });
        let file = File::open(&path).map_err(io_err)?;
        let total = file.metadata().map_err(io_err)?.len();
        let mut hashing = Hashing {
            file,
            name,
            sha: Sha256::new(),
            bytes: 0,
            total,
            reported: 0,
            progress,
            pending: Vec::new(),
        };
        hashing.report().map_err(io_err)?;
        let nonempty = hashing.skip_bom().map_err(io_err)?;
        if !nonempty {
            return Err(LoadError::in_file(
                &path,
                LoadErrorKind::EmptyFile {
                    expected: expected.to_string(),
                },
            ));
        }
        let reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .buffer_capacity(1 << 16)
            .from_reader(hashing);
        let mut file = CsvFile {
            path,
            name,
            reader,
            record: ByteRecord::new(),
            header: Vec::new(),
        };
        if !file.read_record()? {
            return Err(LoadError::in_file(
                &file.path,
                LoadErrorKind::NoHeader {
                    expected: expected.to_string(),
                },
            ));
        }
        file.check_field_lengths()?;
        let mut header = Vec::with_capacity(file.record.len());
        for i in 0..file.record.len() {
            header.push(file.text(i)?.to_string());
        }
        file.header = header;
        Ok(file)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size in bytes.
    pub fn total_bytes(&self) -> u64 {
        self.reader.get_ref().total
    }

    /// The header's column names, trimmed.
    pub fn header(&self) -> &[String] {
        &self.header
    }

    /// Finds the expected columns (any order) in the header; the header must hold
    /// exactly these, each once. `hint` is added to the problem description.
    pub fn columns<const N: usize>(
        &self,
        expected: [&str; N],
        hint: &str,
    ) -> Result<[usize; N], LoadError> {
        check_header(&self.path, &self.header, expected, hint, Some(1))
    }

    fn read_record(&mut self) -> Result<bool, LoadError> {
        match self.reader.read_byte_record(&mut self.record) {
            Ok(more) => Ok(more),
            Err(e) => {
                let line = e.position().map(|p| p.line());
                let source = match e.into_kind() {
                    csv::ErrorKind::Io(source) => source,
                    other => io::Error::other(format!("{other:?}")),
                };
                Err(LoadError {
                    line,
                    ..LoadError::in_file(&self.path, LoadErrorKind::Io { source })
                })
            }
        }
    }

    /// Reads the next row; `Ok(false)` at the end of the file. The row must have one
    /// field per header column, each valid UTF-8.
    pub fn next_row(&mut self) -> Result<bool, LoadError> {
        loop {
            if !self.read_record()? {
                return Ok(false);
            }
            // A line of nothing but spaces carries no data, like an empty line.
            let blank = self.record.len() == 1 && self.field(0).is_empty();
            if !blank || self.header.len() == 1 {
                break;
            }
        }
        if self.record.len() != self.header.len() {
            // A quote left open swallows the line ends after it into one field.
            let open_quote = self.record.iter().any(|f| f.contains(&b'\n'));
            return Err(self.error(
                None,
                LoadErrorKind::FieldCount {
                    found: self.record.len(),
                    expected: self.header.len(),
                    columns: shown_name(&self.header.join(",")),
                    hint: if open_quote {
                        "; a field runs over a line break: is a quote (\") left open?"
                    } else {
                        ""
                    },
                },
            ));
        }
        self.check_field_lengths()?;
        // Almost every row is ASCII, checked in one pass over the row's bytes.
        if !self.record.as_slice().is_ascii() {
            for i in 0..self.record.len() {
                self.text(i)?;
            }
        }
        Ok(true)
    }

    /// Every field of the current row holds at most [`MAX_FIELD_BYTES`] bytes.
    fn check_field_lengths(&self) -> Result<(), LoadError> {
        if self.record.as_slice().len() <= MAX_FIELD_BYTES {
            return Ok(());
        }
        match self.record.iter().position(|f| f.len() > MAX_FIELD_BYTES) {
            Some(i) => Err(self.error(
                Some(i),
                LoadErrorKind::FieldTooLong {
                    bytes: self.record[i].len(),
                },
            )),
            None => Ok(()),
        }
    }

    /// The 1-based line where the current row starts.
    pub fn line(&self) -> u64 {
        self.record.position().map_or(1, |p| p.line())
    }

    /// Field `i` (0-based) of the current row, trimmed.
    pub fn field(&self, i: usize) -> &[u8] {
        self.record.get(i).unwrap_or_default().trim_ascii()
    }

    /// Field `i` as text, trimmed.
    pub fn text(&self, i: usize) -> Result<&str, LoadError> {
        let bytes = self.field(i);
        std::str::from_utf8(bytes).map_err(|e| {
            let at = e.valid_up_to();
            self.error(
                Some(i),
                LoadErrorKind::NotUtf8 {
                    byte: bytes[at],
                    offset: at + 1,
                },
            )
        })
    }

    /// Field `i` as an integer from 0 to `max`; `column` names it in messages.
    pub fn uint(&self, i: usize, column: &'static str, max: u64) -> Result<u64, LoadError> {
        let bytes = self.field(i);
        parse_uint(bytes, max).map_err(|too_large| {
            let value = shown(bytes);
            let kind = if too_large {
                LoadErrorKind::TooLarge { column, value, max }
            } else {
                LoadErrorKind::NotInteger { column, value, max }
            };
            self.error(Some(i), kind)
        })
    }

    /// An error at the current row and, if given, field `column` (0-based).
    pub fn error(&self, column: Option<usize>, kind: LoadErrorKind) -> LoadError {
        LoadError::at(&self.path, self.line(), column.map(|c| c + 1), kind)
    }

    /// Reads what is left of the file (normally nothing) and returns its description.
    pub fn finish(self) -> Result<InputFile, LoadError> {
        let path = self.path;
        let mut hashing = self.reader.into_inner();
        io::copy(&mut hashing, &mut io::sink())
            .map_err(|source| LoadError::in_file(&path, LoadErrorKind::Io { source }))?;
        hashing
            .report()
            .map_err(|source| LoadError::in_file(&path, LoadErrorKind::Io { source }))?;
        Ok(InputFile {
            path: self.name.to_string(),
            sha256: hex(&hashing.sha.finalize()),
            bytes: hashing.bytes,
        })
    }
}

/// Finds the expected columns (any order) in a file's column names; they must be
/// exactly these, each once. `hint` is added to the problem description; an error is at
/// `line` (the header's) when given, else at the file.
pub(crate) fn check_header<const N: usize>(
    path: &Path,
    header: &[String],
    expected: [&str; N],
    hint: &str,
    line: Option<u64>,
) -> Result<[usize; N], LoadError> {
    let mut problems = Vec::new();
    for (i, name) in header.iter().enumerate() {
        if !expected.contains(&name.as_str()) {
            problems.push(format!("unexpected column {name:?}"));
        } else if header[..i].contains(name) {
            problems.push(format!("column {name:?} appears twice"));
        }
    }
    let mut found = [0; N];
    for (slot, name) in found.iter_mut().zip(expected) {
        match header.iter().position(|h| h == name) {
            Some(i) => *slot = i,
            None => problems.push(format!("missing column {name:?}")),
        }
    }
    if problems.is_empty() {
        return Ok(found);
    }
    // A header of a million stray columns gets a message of a few lines.
    const SHOWN: usize = 4;
    let more = problems.len().saturating_sub(SHOWN);
    let mut problem = problems
        .iter()
        .take(SHOWN)
        .map(|p| shown_name(p))
        .collect::<Vec<_>>()
        .join(", ");
    if more > 0 {
        problem.push_str(&format!(
            " and {more} more problem(s) ({} columns in all)",
            header.len()
        ));
    }
    problem.push_str(hint);
    let kind = LoadErrorKind::Header {
        found: shown(header.join(",").as_bytes()),
        problem: problem.into(),
        expected: expected.join(",").into(),
    };
    Err(match line {
        Some(line) => LoadError::at(path, line, None, kind),
        None => LoadError::in_file(path, kind),
    })
}

/// The file line of each data row (0-based rows), kept as the points where
/// `line − row` changes (a blank line, a quoted line break), so that a clean file of
/// millions of rows costs one entry and an error can still name the line of any row.
#[derive(Default)]
pub(crate) struct RowLines {
    /// `(row, line − row)` from that row on.
    changes: Vec<(usize, u64)>,
}

impl RowLines {
    pub fn record(&mut self, row: usize, line: u64) {
        let offset = line.saturating_sub(row as u64);
        if self.changes.last().is_none_or(|&(_, o)| o != offset) {
            self.changes.push((row, offset));
        }
    }

    pub fn line(&self, row: usize) -> u64 {
        let i = self.changes.partition_point(|&(r, _)| r <= row);
        let offset = i.checked_sub(1).map_or(1, |i| self.changes[i].1);
        row as u64 + offset
    }
}

/// Parses ASCII digits (leading zeros allowed) as an integer from 0 to `max`.
/// `Err(true)` if they are digits with a larger value, `Err(false)` if not digits.
pub(crate) fn parse_uint(bytes: &[u8], max: u64) -> Result<u64, bool> {
    if bytes.is_empty() {
        return Err(false);
    }
    let mut value: u64 = 0;
    let mut overflow = false;
    for &b in bytes {
        if !b.is_ascii_digit() {
            return Err(false);
        }
        match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
    }
    if overflow || value > max {
        Err(true)
    } else {
        Ok(value)
    }
}

/// A value for an error message: lossy UTF-8, cut after 40 characters so that a
/// runaway field does not flood the terminal.
pub(crate) fn shown(bytes: &[u8]) -> String {
    const MAX: usize = 40;
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.into_owned(),
    }
}

/// A name from a file shown unquoted in a message (a level, a list of columns, a
/// display id): control characters escaped so the message stays on one line, cut like
/// [`shown`].
pub(crate) fn shown_name(name: &str) -> String {
    let mut escaped = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_control() {
            escaped.extend(c.escape_debug());
        } else {
            escaped.push(c);
        }
    }
    shown(escaped.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bounded_integers() {
        assert_eq!(parse_uint(b"0", 10), Ok(0));
        assert_eq!(parse_uint(b"007", 10), Ok(7));
        assert_eq!(parse_uint(b"11", 10), Err(true));
        assert_eq!(parse_uint(b"99999999999999999999999", u64::MAX), Err(true));
        assert_eq!(parse_uint(b"18446744073709551615", u64::MAX), Ok(u64::MAX));
        assert_eq!(parse_uint(b"-4", 10), Err(false));
        assert_eq!(parse_uint(b"+4", 10), Err(false));
        assert_eq!(parse_uint(b"4.0", 10), Err(false));
        assert_eq!(parse_uint(b"", 10), Err(false));
        // Digits then junk is not a number, however large the digits.
        assert_eq!(
            parse_uint(b"99999999999999999999999x", u64::MAX),
            Err(false)
        );
    }

    #[test]
    fn shown_values_are_cut() {
        assert_eq!(shown(b"abc"), "abc");
        let long = "é".repeat(50);
        assert_eq!(shown(long.as_bytes()), format!("{}…", "é".repeat(40)));
        assert_eq!(shown(b"a\xffb"), "a\u{FFFD}b");
        assert_eq!(shown_name("st\nate\t"), "st\\nate\\t");
        assert_eq!(shown_name("État"), "État");
    }
}
