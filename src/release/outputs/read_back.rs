//! Reading a `counts.csv` back and checking it ([`check_counts`]) fast: the file is
//! read in large chunks cut at line ends (and hashed on the way, if asked), whose rows
//! are parsed and checked in parallel, a bounded batch of chunks at a time, and joined
//! in order.
//!
//! The fast path takes only what is plainly the form coco writes: UTF-8, no `"` and no
//! `\r` anywhere, no empty line, four fields on every line, and rows that pass every
//! row check. On anything else (a quoted field, a short row, an unknown region, a bad
//! count, a region's rows apart…) it gives up and the file is read again row by row
//! with `csv` and [`check_counts`], exactly as before, so that every message (a CSV
//! error with its line, a failed check) is the same as that reading gives. A line is
//! never cut by a chunk: where no chunk line-ending is found within
//! `MAX_CHUNK_GROWTH` chunks, the row-by-row path takes the file, in bounded memory.

use std::io::Read;
use std::path::Path;
use std::sync::mpsc;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::data::{Hierarchy, NodeId, PublicData, hex};
use crate::histogram::{Count, CountOfCounts, HistogramSet, Size};
use crate::release::pipeline::checks::{Checks, check_release};

/// The size a chunk is filled to before it is cut at its last line end.
const CHUNK: usize = 4 << 20;
/// A chunk that finds no line end by this many times [`CHUNK`] gives the file to the
/// row-by-row path (a line of `counts.csv` is a few dozen bytes).
const MAX_CHUNK_GROWTH: usize = 4;

/// What reading a `counts.csv` gave.
pub(super) struct ReadCounts {
    pub checks: Checks,
    /// The file's SHA-256, when asked for and the fast path read the whole file.
    pub sha256: Option<String>,
}

/// Reads the `counts.csv` at `path` and checks it against `public` ([`check_counts`]);
/// with `hash`, computes the file's SHA-256 in the same reading where it can. A read
/// error (of the file, or of its CSV) is returned as `csv` reports it.
pub(super) fn read_counts(
    path: &Path,
    public: PublicData<'_>,
    max_size: Size,
    hash: bool,
) -> Result<ReadCounts, csv::Error> {
    read_counts_with(path, public, max_size, hash, CHUNK)
}

/// [`read_counts`] with chunks of about `chunk` bytes.
fn read_counts_with(
    path: &Path,
    public: PublicData<'_>,
    max_size: Size,
    hash: bool,
    chunk: usize,
) -> Result<ReadCounts, csv::Error> {
    let phase = crate::timing::phase("  counts.csv: read rows");
    let fast = fast(path, public, hash, chunk);
    phase.done();
    if let Some((rows, sha256)) = fast {
        let _phase = crate::timing::phase("  counts.csv: check histograms");
        return Ok(ReadCounts {
            checks: rows.finish(max_size),
            sha256,
        });
    }
    crate::timing::note(
        "counts.csv is read again row by row (not plainly coco's form, or a check fails)",
    );
    let reader = csv::Reader::from_path(path)?;
    let mut failed = None;
    let checks = check_counts(public, counts_rows(reader, &mut failed), max_size);
    match failed {
        Some(e) => Err(e),
        None => Ok(ReadCounts {
            checks,
            sha256: None,
        }),
    }
}

/// The rows of a `counts.csv` as they are read (streamed, not collected); the first
/// read error ends them and is left in `failed`.
fn counts_rows<'a, R: Read + 'a>(
    reader: csv::Reader<R>,
    failed: &'a mut Option<csv::Error>,
) -> impl Iterator<Item = [String; 4]> + 'a {
    reader.into_records().map_while(move |record| match record {
        Ok(r) => {
            let field = |i: usize| r.get(i).unwrap_or("").to_string();
            Some([field(0), field(1), field(2), field(3)])
        }
        Err(e) => {
            *failed = Some(e);
            None
        }
    })
}

/// The fast path: the gathered rows (and the digest, if asked), or `None` where the
/// file is not plainly coco's form, a row fails a check, or it cannot be read.
fn fast<'a>(
    path: &Path,
    public: PublicData<'a>,
    hash: bool,
    chunk: usize,
) -> Option<(CountRows<'a>, Option<String>)> {
    let file = std::fs::File::open(path).ok()?;
    let h = public.hierarchy;
    let batch = 2 * rayon::current_num_threads().max(1);
    std::thread::scope(|scope| {
        // Batches of chunks to parse, and emptied ones back to the reader.
        let (full_tx, full_rx) = mpsc::sync_channel::<Vec<Vec<u8>>>(1);
        let (empty_tx, empty_rx) = mpsc::channel::<Vec<Vec<u8>>>();
        let reader =
            scope.spawn(move || read_chunks(file, batch, chunk, hash, &full_tx, &empty_rx));
        let mut rows = CountRows::new(public);
        // The region of the last row taken, to join a run cut by a chunk's end.
        let mut last: Option<String> = None;
        let mut first_chunk = true;
        let plain = 'read: {
            for chunks in &full_rx {
                let parsed: Vec<Option<Chunk>> = chunks
                    .par_iter()
                    .enumerate()
                    .map(|(i, bytes)| parse_chunk(h, bytes, first_chunk && i == 0))
                    .collect();
                first_chunk = false;
                let _ = empty_tx.send(chunks);
                for chunk in parsed {
                    match chunk {
                        Some(chunk) if join(&mut rows, &mut last, &chunk) => {}
                        _ => break 'read false,
                    }
                }
            }
            true
        };
        // Stops the reading thread at its next chunk.
        drop(full_rx);
        drop(empty_tx);
        let read = reader.join();
        // A read error too is left to the row-by-row reading, which reports it as
        // before.
        match read {
            Ok(Ok(Some(digest))) if plain && !first_chunk => Some((rows, digest)),
            _ => None,
        }
    })
}

/// Reads `file` in chunks of whole lines (of about `chunk` bytes), `batch` chunks to a
/// message, hashing what it reads if asked. Returns `Some(digest)` at the end of the
/// file, `None` when it stopped early (a line too long, or the receiver gone).
fn read_chunks(
    mut file: std::fs::File,
    batch: usize,
    chunk: usize,
    hash: bool,
    full: &mpsc::SyncSender<Vec<Vec<u8>>>,
    empty: &mpsc::Receiver<Vec<Vec<u8>>>,
) -> std::io::Result<Option<Option<String>>> {
    let mut hasher = hash.then(Sha256::new);
    // Bytes after the last line end of the previous chunk.
    let mut carry: Vec<u8> = Vec::new();
    let mut at_end = false;
    while !at_end {
        let mut chunks = empty.try_recv().unwrap_or_default();
        chunks.truncate(batch);
        let mut used = 0;
        while used < batch && !at_end {
            if chunks.len() == used {
                chunks.push(Vec::new());
            }
            let buf = &mut chunks[used];
            buf.clear();
            buf.append(&mut carry);
            let mut target = chunk;
            loop {
                if buf.len() < target {
                    let start = buf.len();
                    buf.reserve(target - start);
                    (&mut file).take((target - start) as u64).read_to_end(buf)?;
                    if let Some(hasher) = &mut hasher {
                        hasher.update(&buf[start..]);
                    }
                    if buf.len() < target {
                        at_end = true;
                        break;
                    }
                }
                match buf.iter().rposition(|&b| b == b'\n') {
                    Some(end) => {
                        carry.extend_from_slice(&buf[end + 1..]);
                        buf.truncate(end + 1);
                        break;
                    }
                    None if target >= chunk * MAX_CHUNK_GROWTH => return Ok(None),
                    None => target *= 2,
                }
            }
            used += 1;
        }
        chunks.truncate(used);
        if full.send(chunks).is_err() {
            return Ok(None);
        }
    }
    Ok(Some(hasher.map(|h| hex(&h.finalize()))))
}

/// One chunk's rows, parsed and checked row by row, and what is needed to join it to
/// the rows before.
struct Chunk {
    /// Runs of rows of one region each: (node, first cell).
    runs: Vec<(NodeId, usize)>,
    cells: Vec<(Size, Count)>,
    /// The regions of its first and last rows (empty when it has no rows).
    first: String,
    last: String,
}

/// Parses one chunk of whole lines (the first line being the header of the file if
/// `header`). `None` when it is not plainly coco's form or a row fails a check, all of
/// which the row-by-row reading reports.
///
/// A row that starts with the same `level,region,` bytes as the row before and ends in
/// two plain numbers is taken without more ado; any other row is split and checked as
/// [`check_counts`] checks it.
fn parse_chunk(h: &Hierarchy, bytes: &[u8], header: bool) -> Option<Chunk> {
    let mut rest = bytes;
    if header {
        // `csv` takes the first record as the header: its fields are not read, but
        // every record must have as many.
        let (line, after) = split_line(rest);
        if plain_line(line)?.split(',').count() != 4 {
            return None;
        }
        rest = after;
    }
    let mut chunk = Chunk {
        runs: Vec::with_capacity(bytes.len() / 100),
        cells: Vec::with_capacity(bytes.len() / 24),
        first: String::new(),
        last: String::new(),
    };
    // The previous row's region, its node, and its `level,region,` bytes.
    let mut current: Option<(&str, NodeId, &[u8])> = None;
    while !rest.is_empty() {
        if let Some((_, _, prefix)) = current
            && let Some(after) = rest.strip_prefix(prefix)
            && let Some((size, after)) = number(after, b',')
            && let Some((count, after)) = number(after, b'\n')
            && let Ok(size) = Size::try_from(size)
        {
            chunk.cells.push((size, count));
            rest = after;
            continue;
        }
        let (line, after) = split_line(rest);
        rest = after;
        let mut fields = plain_line(line)?.split(',');
        let (Some(level), Some(region), Some(size), Some(count), None) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            // An empty line, or not four fields.
            return None;
        };
        let id = match current {
            Some((name, id, _)) if name == region => id,
            _ => {
                let id = find_region(h, region, current.map(|(r, id, _)| (r, id)))?;
                if current.is_none() {
                    chunk.first = region.to_string();
                }
                chunk.runs.push((id, chunk.cells.len()));
                let prefix = &line[..level.len() + 1 + region.len() + 1];
                current = Some((region, id, prefix));
                id
            }
        };
        if h.level_name(h.node(id).level) != level {
            return None;
        }
        // As `check_counts` parses them.
        let count = Count::try_from(count.parse::<i128>().ok()?).ok()?;
        let size = size.parse::<Size>().ok()?;
        chunk.cells.push((size, count));
    }
    if let Some((region, _, _)) = current {
        chunk.last = region.to_string();
    }
    Some(chunk)
}

/// The first line of `bytes` (without its `\n`) and what follows it.
fn split_line(bytes: &[u8]) -> (&[u8], &[u8]) {
    match bytes.iter().position(|&b| b == b'\n') {
        Some(end) => (&bytes[..end], &bytes[end + 1..]),
        None => (bytes, &[]),
    }
}

/// A line as text, where it is UTF-8 and holds no `"` and no `\r` (a quoted field or
/// another line end, which only `csv` reads right).
fn plain_line(line: &[u8]) -> Option<&str> {
    if line.iter().any(|&b| b == b'"' || b == b'\r') {
        return None;
    }
    std::str::from_utf8(line).ok()
}

/// A whole number of decimal digits only (at least one) ending at `end` (or at the end
/// of the bytes, for a line end), and what follows `end`. `None` for anything else,
/// including a number too large, which the row-by-row parse takes.
fn number(bytes: &[u8], end: u8) -> Option<(Count, &[u8])> {
    let mut n: Count = 0;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'0'..=b'9' => n = n.checked_mul(10)?.checked_add(Count::from(b - b'0'))?,
            _ if b == end && i > 0 => return Some((n, &bytes[i + 1..])),
            _ => return None,
        }
    }
    (end == b'\n' && !bytes.is_empty()).then_some((n, &[]))
}

/// The node with display id `region`, as [`Hierarchy::find_display_id`] finds it; the
/// region of the row before (and its node) makes the usual case quick: a later
/// sibling of that node (under the same path), found among them by its code (siblings
/// are in the order of their codes, each code once).
pub(super) fn find_region(
    h: &Hierarchy,
    region: &str,
    before: Option<(&str, NodeId)>,
) -> Option<NodeId> {
    if let Some((prev, prev_id)) = before
        && let Some(slash) = prev.rfind('/')
        && region.len() > slash
        && region.as_bytes()[..=slash] == prev.as_bytes()[..=slash]
        && let Some(parent) = h.node(prev_id).parent
        && let code = &region[slash + 1..]
        && !code.contains('/')
    {
        let (mut lo, mut hi) = (prev_id.0 + 1, h.node(parent).children.end);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match h.code(NodeId(mid)).cmp(code) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(NodeId(mid)),
            }
        }
    }
    h.find_display_id(region)
}

/// Adds a chunk's rows to those before it, as `check_counts` takes rows one by one: a
/// run of the region the last chunk ended with goes on. `false` where a region's rows
/// are not together (reported by the row-by-row path).
fn join(rows: &mut CountRows<'_>, last: &mut Option<String>, chunk: &Chunk) -> bool {
    if chunk.runs.is_empty() {
        return true;
    }
    let goes_on = last.as_deref() == Some(chunk.first.as_str());
    for (r, &(id, start)) in chunk.runs.iter().enumerate() {
        // The first run may go on from the chunk before; every other starts.
        if (r > 0 || !goes_on) && !rows.start_run(id) {
            return false;
        }
        let end = chunk.runs.get(r + 1).map_or(chunk.cells.len(), |&(_, s)| s);
        rows.extend_cells(&chunk.cells[start..end]);
    }
    *last = Some(chunk.last.clone());
    true
}

// ---------------------------------------------------------------------------------
// The checks of published rows, whatever their form.

/// Checks published rows `(level, region, size, count)` as text, the form they are
/// written in: every count must parse as a nonnegative integer, every region and level
/// must exist, then the histograms they describe are checked with [`check_release`].
/// The rows are read once, as they come (a file can be streamed through): memory
/// follows the cells, not the text. Rows of one region are expected together (as
/// `counts.csv` writes them); a region found again later is reported.
pub fn check_counts<S: AsRef<str>>(
    public: PublicData<'_>,
    rows: impl IntoIterator<Item = [S; 4]>,
    max_size: Size,
) -> Checks {
    let mut checker = CountChecker::new(public);
    for row in rows {
        checker.push(&row);
    }
    checker.finish(max_size)
}

/// One published row of `counts.csv` or `counts.parquet`, as read: the level and the
/// region as text, the size and the count as written (text, or typed integers).
pub(crate) trait CountRow {
    fn level(&self) -> &str;
    fn region(&self) -> &str;
    /// The size, or `None` where it is not a whole number from 0 to `Size::MAX`.
    fn size(&self) -> Option<Size>;
    /// The count as a whole number (of any sign), or `None` where it is not one.
    fn count(&self) -> Option<i128>;
    /// The size and the count as they read, for messages.
    fn size_text(&self) -> String;
    fn count_text(&self) -> String;
}

impl<S: AsRef<str>> CountRow for [S; 4] {
    fn level(&self) -> &str {
        self[0].as_ref()
    }
    fn region(&self) -> &str {
        self[1].as_ref()
    }
    fn size(&self) -> Option<Size> {
        self[2].as_ref().parse().ok()
    }
    fn count(&self) -> Option<i128> {
        self[3].as_ref().parse().ok()
    }
    fn size_text(&self) -> String {
        self[2].as_ref().to_string()
    }
    fn count_text(&self) -> String {
        self[3].as_ref().to_string()
    }
}

/// [`check_counts`] a row at a time, for rows of any form ([`CountRow`]): text rows
/// of `counts.csv`, typed rows of `counts.parquet`, the same checks and messages.
pub(crate) struct CountChecker<'a> {
    gathered: CountRows<'a>,
    /// The region of the last row and its node.
    current: Option<(String, Option<NodeId>)>,
}

impl<'a> CountChecker<'a> {
    pub(crate) fn new(public: PublicData<'a>) -> Self {
        Self {
            gathered: CountRows::new(public),
            current: None,
        }
    }

    pub(crate) fn push(&mut self, row: &impl CountRow) {
        let h = self.gathered.public.hierarchy;
        let gathered = &mut self.gathered;
        let (level, region) = (row.level(), row.region());
        let id = match &mut self.current {
            Some((name, id)) if name == region => *id,
            current => {
                let before = current
                    .as_ref()
                    .and_then(|(name, id)| id.map(|id| (name.as_str(), id)));
                let id = crate::release::outputs::read_back::find_region(h, region, before);
                match current {
                    Some((name, slot)) => {
                        name.clear();
                        name.push_str(region);
                        *slot = id;
                    }
                    None => *current = Some((region.to_string(), id)),
                }
                if let Some(id) = id
                    && !gathered.start_run(id)
                {
                    gathered.checks.consistent = false;
                    gathered
                        .checks
                        .fail(format!("{region}: its rows are not together"));
                    gathered.runs.push((id, gathered.cells.len()));
                }
                id
            }
        };
        let checks = &mut gathered.checks;
        let Some(id) = id else {
            checks.group_totals = false;
            checks.fail(format!("unknown region {region:?}"));
            return;
        };
        if h.level_name(h.node(id).level) != level {
            checks.consistent = false;
            checks.fail(format!("{region}: listed at level {level:?}"));
        }
        let count_value = match row.count() {
            Some(c) if c < 0 => {
                checks.nonnegative = false;
                checks.fail(format!(
                    "{region} size {}: negative count {}",
                    row.size_text(),
                    row.count_text()
                ));
                return;
            }
            Some(c) => match Count::try_from(c) {
                Ok(c) => c,
                Err(_) => {
                    checks.group_totals = false;
                    checks.fail(format!(
                        "{region} size {}: count {} out of range",
                        row.size_text(),
                        row.count_text()
                    ));
                    return;
                }
            },
            None => {
                checks.integral = false;
                checks.fail(format!(
                    "{region} size {}: count {:?} is not a whole number",
                    row.size_text(),
                    row.count_text()
                ));
                return;
            }
        };
        let Some(size_value) = row.size() else {
            checks.integral = false;
            checks.fail(format!(
                "{region}: size {:?} is not a whole number",
                row.size_text()
            ));
            return;
        };
        gathered.cells.push((size_value, count_value));
    }

    pub(crate) fn finish(self, max_size: Size) -> Checks {
        self.gathered.finish(max_size)
    }

    /// [`CountChecker::finish`], with the histograms the rows describe (in node
    /// order), to compare with what was written.
    pub(crate) fn finish_with_histograms(self, max_size: Size) -> (Checks, HistogramSet) {
        self.gathered.finish_with_histograms(max_size)
    }
}

/// The rows of a `counts.csv` gathered for [`check_counts`], as they are read: each
/// region's run of cells, and what failed on the way.
pub(crate) struct CountRows<'a> {
    public: PublicData<'a>,
    checks: Checks,
    /// Each region's rows, as read: runs of (node, first cell).
    runs: Vec<(NodeId, usize)>,
    cells: Vec<(Size, Count)>,
    seen: Vec<bool>,
}

impl<'a> CountRows<'a> {
    pub(crate) fn new(public: PublicData<'a>) -> Self {
        Self {
            public,
            checks: Checks::all_passed(),
            runs: Vec::new(),
            cells: Vec::new(),
            seen: vec![false; public.hierarchy.len()],
        }
    }

    /// Starts the run of rows of region `id`, whose rows are to follow. Returns false,
    /// and starts nothing, when the region had rows before (its rows are not together).
    pub(crate) fn start_run(&mut self, id: NodeId) -> bool {
        if std::mem::replace(&mut self.seen[id.index()], true) {
            return false;
        }
        self.runs.push((id, self.cells.len()));
        true
    }

    /// Adds cells `(size, count)` of valid rows to the current run.
    pub(crate) fn extend_cells(&mut self, cells: &[(Size, Count)]) {
        self.cells.extend_from_slice(cells);
    }

    /// Checks the histograms the rows describe ([`check_release`]) and returns all that
    /// failed.
    pub(crate) fn finish(self, max_size: Size) -> Checks {
        self.finish_with_histograms(max_size).0
    }

    /// [`CountRows::finish`], with the histograms the rows describe.
    pub(crate) fn finish_with_histograms(self, max_size: Size) -> (Checks, HistogramSet) {
        let Self {
            public,
            mut checks,
            runs,
            cells,
            seen,
        } = self;
        let h = public.hierarchy;
        drop(seen);
        // In node order; a region's sizes must be strictly increasing.
        let mut order: Vec<usize> = (0..runs.len()).collect();
        if !runs.windows(2).all(|w| w[0].0 < w[1].0) {
            order.sort_unstable_by_key(|&r| runs[r].0);
        }
        let mut histograms = HistogramSet::with_capacity(h.len(), cells.len());
        let mut next = order.iter().peekable();
        for i in 0..h.len() as u32 {
            match next.peek() {
                Some(&&r) if runs[r].0 == NodeId(i) => {
                    next.next();
                    let end = runs.get(r + 1).map_or(cells.len(), |&(_, s)| s);
                    let run = &cells[runs[r].1..end];
                    if run.windows(2).all(|w| w[0].0 < w[1].0) {
                        histograms.push_sorted_pairs(run.iter().copied().filter(|p| p.1 > 0));
                    } else {
                        match CountOfCounts::from_pairs(run.iter().copied()) {
                            Ok(hist) => histograms.push(hist.as_ref()),
                            Err(e) => {
                                checks.consistent = false;
                                checks.fail(format!("{}: {e}", h.display_id(NodeId(i))));
                                histograms.push_sorted_pairs(std::iter::empty());
                            }
                        }
                    }
                }
                _ => histograms.push_sorted_pairs(std::iter::empty()),
            }
            // A region listed twice was reported above; its later rows are ignored.
            while next.peek().is_some_and(|&&r| runs[r].0 == NodeId(i)) {
                next.next();
            }
        }
        drop(cells);
        let structural = check_release(public, &histograms, max_size);
        checks.group_totals &= structural.group_totals;
        checks.consistent &= structural.consistent;
        checks.within_max_size &= structural.within_max_size;
        for p in structural.problems {
            checks.fail(p);
        }
        (checks, histograms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Dataset;
    use crate::data::tests::tiny;
    use crate::histogram::Histograms;

    /// `counts.csv` as coco writes it for the tiny dataset's true histograms.
    fn written(d: &Dataset) -> String {
        let h = &d.hierarchy;
        let hists = d
            .truth()
            .for_diagnostic(crate::privacy::Diagnostic::Oracle)
            .all();
        let mut text = String::from("level,region,size,count\n");
        for (i, node) in h.nodes().iter().enumerate() {
            for &(s, c) in hists.hist(i).pairs() {
                text += &format!(
                    "{},{},{s},{c}\n",
                    h.level_name(node.level),
                    h.display_id(NodeId(i as u32))
                );
            }
        }
        text
    }

    /// What the row-by-row reading alone gives.
    fn row_by_row(path: &Path, d: &Dataset) -> Result<Checks, String> {
        let reader = csv::Reader::from_path(path).map_err(|e| e.to_string())?;
        let mut failed = None;
        let checks = check_counts(d.public(), counts_rows(reader, &mut failed), 40);
        match failed {
            Some(e) => Err(e.to_string()),
            None => Ok(checks),
        }
    }

    fn with_chunks(path: &Path, d: &Dataset, chunk: usize) -> Result<Checks, String> {
        read_counts_with(path, d.public(), 40, false, chunk)
            .map(|r| r.checks)
            .map_err(|e| e.to_string())
    }

    /// Every way of reading gives what the row-by-row reading gives, whatever the
    /// chunks (cut anywhere, even inside a region's run or a long line).
    fn same_as_row_by_row(d: &Dataset, dir: &Path, name: &str, bytes: &[u8]) {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let want = row_by_row(&path, d);
        for chunk in [1, 2, 3, 7, 16, 40, 64, 100, 1000, 1 << 20] {
            assert_eq!(
                with_chunks(&path, d, chunk),
                want,
                "{name}, chunks of {chunk}"
            );
        }
    }

    #[test]
    fn coco_form_is_read_fast_and_hashed() {
        let d = tiny();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("counts.csv");
        let text = written(&d);
        std::fs::write(&path, &text).unwrap();
        for chunk in [16, 40, 64, 1 << 20] {
            let (rows, digest) = fast(&path, d.public(), true, chunk).expect("the fast path");
            assert_eq!(digest, Some(hex(&Sha256::digest(text.as_bytes()))));
            let checks = rows.finish(40);
            assert!(checks.passed(), "{checks:?}");
            assert_eq!(Ok(checks), row_by_row(&path, &d));
        }
        // Without a final line end too.
        std::fs::write(&path, text.trim_end()).unwrap();
        let (rows, _) = fast(&path, d.public(), false, 64).expect("the fast path");
        assert!(rows.finish(40).passed());
        // A line longer than a chunk may grow to: read row by row, same answer.
        let read = read_counts_with(&path, d.public(), 40, true, 1).unwrap();
        assert!(read.checks.passed());
        assert_eq!(read.sha256, None);
    }

    #[test]
    fn anything_else_reads_as_row_by_row() {
        let d = tiny();
        let dir = tempfile::tempdir().unwrap();
        let text = written(&d);
        let lines: Vec<&str> = text.lines().collect();
        let joined = |lines: &[&str]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        let replaced = |from: &str, to: &str| text.replacen(from, to, 1);
        let mut cases: Vec<(&str, Vec<u8>)> = vec![
            ("as written", text.clone().into()),
            ("no final line end", text.trim_end().into()),
            ("crlf", text.replace('\n', "\r\n").into()),
            ("cr only", text.replace('\n', "\r").into()),
            (
                "quoted region",
                replaced("nation,US,", "nation,\"US\",").into(),
            ),
            (
                "quoted line break",
                replaced("state,US/A,", "state,\"US/A\nx\",").into(),
            ),
            (
                "quote inside",
                replaced("state,US/A,", "state,US\"/A,").into(),
            ),
            ("empty line", replaced("\nstate,", "\n\nstate,").into()),
            ("empty lines at the end", format!("{text}\n\n").into()),
            ("three fields", replaced("state,US/A,", "state,US/A").into()),
            (
                "five fields",
                replaced("state,US/A,", "state,US/A,,").into(),
            ),
            (
                "negative count",
                replaced("county,US/A/a1,1,2", "county,US/A/a1,1,-2").into(),
            ),
            (
                "plus count",
                replaced("county,US/A/a1,1,2", "county,US/A/a1,1,+2").into(),
            ),
            (
                "plus size",
                replaced("county,US/A/a1,1,2", "county,US/A/a1,+1,2").into(),
            ),
            (
                "fraction",
                replaced("county,US/A/a1,1,2", "county,US/A/a1,1,2.5").into(),
            ),
            (
                "empty count",
                replaced("county,US/A/a1,1,2", "county,US/A/a1,1,").into(),
            ),
            (
                "huge count",
                replaced(
                    "county,US/A/a1,1,2",
                    "county,US/A/a1,1,99999999999999999999",
                )
                .into(),
            ),
            (
                "huger count",
                replaced(
                    "county,US/A/a1,1,2",
                    &format!("county,US/A/a1,1,{}", "9".repeat(50)),
                )
                .into(),
            ),
            (
                "huge size",
                replaced("county,US/A/a1,1,2", "county,US/A/a1,4294967296,2").into(),
            ),
            (
                "leading zeros",
                replaced("county,US/A/a1,1,2", "county,US/A/a1,001,0002").into(),
            ),
            (
                "zero count",
                replaced(
                    "county,US/A/a1,1,2",
                    "county,US/A/a1,1,2\ncounty,US/A/a1,2,0",
                )
                .into(),
            ),
            (
                "unknown region",
                replaced("county,US/A/a1,", "county,US/A/a9,").into(),
            ),
            (
                "another level",
                replaced("county,US/A/a1,1,2", "state,US/A/a1,1,2").into(),
            ),
            (
                "spaces",
                replaced("county,US/A/a1,1,2", "county,US/A/a1, 1,2").into(),
            ),
            ("bom", format!("\u{feff}{text}").into()),
            (
                "header of three",
                replaced("level,region,size,count", "level,region,size").into(),
            ),
            ("header only", "level,region,size,count\n".into()),
            ("empty", Vec::new()),
            (
                "a region twice",
                replaced(
                    "county,US/A/a1,1,2",
                    "county,US/A/a1,2,2\ncounty,US/A/a1,1,2",
                )
                .into(),
            ),
            (
                "the same size twice",
                replaced(
                    "county,US/A/a1,1,2",
                    "county,US/A/a1,1,1\ncounty,US/A/a1,1,1",
                )
                .into(),
            ),
        ];
        // A region's rows apart, and rows left out.
        let mut apart = lines.clone();
        let moved = apart.remove(2);
        apart.push(moved);
        cases.push(("rows apart", joined(&apart).into()));
        let mut fewer = lines.clone();
        fewer.remove(3);
        cases.push(("a row left out", joined(&fewer).into()));
        let mut bad = text.clone().into_bytes();
        let at = text.find("US/B").unwrap();
        bad[at + 3] = 0xff;
        cases.push(("not utf-8", bad));
        for (name, bytes) in &cases {
            same_as_row_by_row(&d, dir.path(), name, bytes);
        }
        // And they are read as checks or errors, not all the same.
        let answers: Vec<_> = cases
            .iter()
            .map(|(name, bytes)| {
                let path = dir.path().join(name);
                std::fs::write(&path, bytes).unwrap();
                with_chunks(&path, &d, 64)
            })
            .collect();
        assert!(answers[0].as_ref().is_ok_and(Checks::passed));
        assert!(answers.iter().any(Result::is_err));
        assert!(
            answers
                .iter()
                .any(|a| a.as_ref().is_ok_and(|c| !c.passed()))
        );
    }

    #[test]
    fn regions_are_found_as_find_display_id_finds_them() {
        let levels = vec!["a".to_string(), "b".into(), "c".into()];
        let mut rows = Vec::new();
        for b in ["1", "2", "10", "x/y", ""] {
            for c in ["1", "3", "5", "3/1", "7"] {
                rows.push(vec!["R".to_string(), b.to_string(), format!("{b}{c}")]);
            }
        }
        // Whatever the loader makes of such codes.
        rows.retain(|r| {
            Hierarchy::from_leaf_paths(levels.clone(), std::slice::from_ref(r)).is_ok()
        });
        let h = Hierarchy::from_leaf_paths(levels, &rows).unwrap();
        let mut regions: Vec<String> = (0..h.len() as u32)
            .map(|i| h.display_id(NodeId(i)))
            .collect();
        regions.extend(
            [
                "R/1/19", "R/1/", "R/2/23", "R/9/91", "R//1", "R/1/11/1", "X/1/11",
            ]
            .map(String::from),
        );
        for i in 0..h.len() as u32 {
            let prev = h.display_id(NodeId(i));
            for region in &regions {
                assert_eq!(
                    find_region(&h, region, Some((&prev, NodeId(i)))),
                    h.find_display_id(region),
                    "{region} after {prev}"
                );
            }
        }
    }

    #[test]
    fn a_missing_file_is_a_read_error() {
        let d = tiny();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("none.csv");
        let e = read_counts(&path, d.public(), 40, true).err().unwrap();
        assert_eq!(e.to_string(), row_by_row(&path, &d).unwrap_err());
    }
}
