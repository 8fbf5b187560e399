//! Writing large CSV files fast and byte for byte as `csv::Writer` (default settings)
//! would: rows are formatted in parallel into chunk buffers, which one writer thread
//! writes (and so hashes) in order, with a bounded number of chunks in flight.

use std::io::Write;
use std::sync::mpsc;

use rayon::prelude::*;

use crate::data::{Hierarchy, NodeId};
use crate::histogram::{Count, HistogramSet, Histograms};
use crate::release::outputs::rows::{CHUNK_REGIONS, DisplayIds, chunks_of};

/// Appends one field to `out` exactly as `csv::Writer` with its default settings
/// (`QuoteStyle::Necessary`, `,`, `"` doubled, `\n` records) writes it in a record of
/// more than one field: as is, unless it holds a `,`, `"`, `\r` or `\n`; then quoted,
/// with each `"` doubled. (The one case this does not cover, a record made of a single
/// empty field, which `csv` writes as `""`, never arises here: every record has
/// several fields.)
pub(crate) fn push_field(out: &mut Vec<u8>, field: &[u8]) {
    if !needs_quotes(field) {
        out.extend_from_slice(field);
        return;
    }
    out.push(b'"');
    for part in field.split_inclusive(|&b| b == b'"') {
        out.extend_from_slice(part);
        if part.last() == Some(&b'"') {
            out.push(b'"');
        }
    }
    out.push(b'"');
}

/// Whether `csv::Writer` quotes this field (`csv_core`'s `requires_quotes` for the
/// default settings: the delimiter, the quote and both line-break bytes).
fn needs_quotes(field: &[u8]) -> bool {
    field
        .iter()
        .any(|&b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
}

/// Appends a nonnegative integer field (never quoted).
pub(crate) fn push_number(out: &mut Vec<u8>, itoa: &mut itoa::Buffer, n: impl itoa::Integer) {
    out.extend_from_slice(itoa.format(n).as_bytes());
}

/// How many chunks are formatted at once: each batch is formatted in parallel while
/// the previous one is written, so at most three batches are in memory.
fn batch_len() -> usize {
    2 * rayon::current_num_threads().max(1)
}

/// Writes chunks `0..chunks` to `w` in order. `fill(i, buf)` appends chunk `i`'s bytes
/// to an empty `buf`; chunks are filled in parallel, a batch at a time, while a thread
/// of its own writes the previous batch. Buffers are reused. Stops at the first error
/// (of `fill` or of `w`) and returns it.
pub(crate) fn write_chunks<W, F>(w: &mut W, chunks: usize, fill: F) -> std::io::Result<()>
where
    W: Write + Send,
    F: Fn(usize, &mut Vec<u8>) -> std::io::Result<()> + Sync,
{
    let batch = batch_len();
    std::thread::scope(|scope| {
        // Full batches to the writer, emptied buffers back.
        let (full_tx, full_rx) = mpsc::sync_channel::<Vec<Vec<u8>>>(1);
        let (empty_tx, empty_rx) = mpsc::channel::<Vec<Vec<u8>>>();
        let writer = scope.spawn(move || -> std::io::Result<()> {
            for mut bufs in full_rx {
                for buf in &mut bufs {
                    w.write_all(buf)?;
                    buf.clear();
                }
                // The filler may have stopped already; then the buffers are dropped.
                let _ = empty_tx.send(bufs);
            }
            Ok(())
        });
        let mut filled = Ok(());
        for start in (0..chunks).step_by(batch) {
            let n = batch.min(chunks - start);
            let mut bufs = empty_rx.try_recv().unwrap_or_default();
            bufs.resize_with(n, Vec::new);
            filled = bufs
                .par_iter_mut()
                .enumerate()
                .try_for_each(|(j, buf)| fill(start + j, buf));
            // A send fails only when the writer stopped on an error, returned below.
            if filled.is_err() || full_tx.send(bufs).is_err() {
                break;
            }
        }
        drop(full_tx);
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the writing thread panicked")));
        filled.and(written)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What `csv::Writer` writes for a record of these fields.
    fn csv_record(fields: &[&[u8]]) -> Vec<u8> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(fields).unwrap();
        w.into_inner().unwrap()
    }

    fn ours(fields: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            push_field(&mut out, f);
        }
        out.push(b'\n');
        out
    }

    #[test]
    fn fields_are_quoted_as_csv_quotes_them() {
        let tricky: [&[u8]; 14] = [
            b"",
            b"US/06",
            b"a,b",
            b"say \"hi\"",
            b"\"",
            b"\"\"",
            b"line\nbreak",
            b"cr\rhere",
            b" spaced ",
            b"#comment",
            b"\\escape",
            "Zürich é".as_bytes(),
            b"'single'",
            b"end\"",
        ];
        for a in tricky {
            for b in tricky {
                assert_eq!(
                    ours(&[a, b, b"1"]),
                    csv_record(&[a, b, b"1"]),
                    "{a:?} {b:?}"
                );
                assert_eq!(ours(&[a, b]), csv_record(&[a, b]), "{a:?} {b:?}");
            }
        }
    }

    proptest! {
        #[test]
        fn any_fields_are_written_as_csv_writes_them(
            a in proptest::collection::vec(any::<u8>(), 0..12),
            b in proptest::collection::vec(prop_oneof![Just(b'"'), Just(b','), Just(b'\n'), Just(b'\r'), Just(b'x'), any::<u8>()], 0..12),
        ) {
            prop_assert_eq!(ours(&[&a, &b, b"7"]), csv_record(&[&a, &b, b"7"]));
        }
    }

    #[test]
    fn chunks_are_written_in_order() {
        for chunks in [0, 1, 3, 4, 5, 17, 100] {
            let mut out = Vec::new();
            write_chunks(&mut out, chunks, |i, buf| {
                assert!(buf.is_empty());
                buf.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, i % 7));
                writeln!(buf, "{i}")
            })
            .unwrap();
            let want: Vec<u8> = (0..chunks)
                .flat_map(|i| {
                    let mut v = vec![b'a' + (i % 26) as u8; i % 7];
                    v.extend(format!("{i}\n").bytes());
                    v
                })
                .collect();
            assert_eq!(out, want);
        }
    }

    #[test]
    fn errors_stop_the_writing() {
        let mut out = Vec::new();
        let e = write_chunks(&mut out, 50, |i, buf| {
            if i == 20 {
                return Err(std::io::Error::other("chunk 20"));
            }
            writeln!(buf, "{i}")
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "chunk 20");

        struct Failing(usize);
        impl Write for Failing {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                if self.0 == 0 {
                    return Err(std::io::Error::other("disk full"));
                }
                self.0 -= 1;
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let e = write_chunks(&mut Failing(3), 1000, |i, buf| writeln!(buf, "{i}")).unwrap_err();
        assert_eq!(e.to_string(), "disk full");
    }
}

/// Writes `counts.csv`: `level,region,size,count`, zero counts left out, sorted by
/// level (root first), region, size. Byte for byte what `csv::Writer` writes for these
/// records; chunks of regions are formatted in parallel and written in order.
pub(crate) fn write_counts<W: Write + Send>(
    w: &mut W,
    h: &Hierarchy,
    hists: &HistogramSet,
    levels: &[Vec<NodeId>],
) -> std::io::Result<()> {
    w.write_all(b"level,region,size,count\n")?;
    // `level,` as a row starts, once per level.
    let level_fields: Vec<Vec<u8>> = h
        .levels()
        .map(|l| {
            let mut f = Vec::new();
            push_field(&mut f, h.level_name(l).as_bytes());
            f.push(b',');
            f
        })
        .collect();
    let chunks = chunks_of(levels);
    write_chunks(w, chunks.len(), |i, buf| {
        let (l, range) = &chunks[i];
        let (mut regions, mut prefix) = (DisplayIds::new(h), Vec::new());
        let mut itoa = itoa::Buffer::new();
        for &id in &levels[*l][range.clone()] {
            let pairs = hists.hist(id.index()).pairs();
            if pairs.is_empty() {
                continue;
            }
            prefix.clear();
            prefix.extend_from_slice(&level_fields[*l]);
            push_field(&mut prefix, regions.of(id).as_bytes());
            prefix.push(b',');
            for &(size, count) in pairs {
                buf.extend_from_slice(&prefix);
                push_number(buf, &mut itoa, size);
                buf.push(b',');
                push_number(buf, &mut itoa, count);
                buf.push(b'\n');
            }
        }
        Ok(())
    })
}

/// The census-style table of one level: one row per region, sizes 0–6 and "7 or more".
/// Byte for byte what `csv::Writer` writes for these records.
pub(crate) fn write_wide<W: Write + Send>(
    w: &mut W,
    h: &Hierarchy,
    hists: &HistogramSet,
    ids: &[NodeId],
) -> std::io::Result<()> {
    w.write_all(b"region,name,groups,")?;
    for s in 0..7 {
        write!(w, "size_{s},")?;
    }
    w.write_all(b"size_7_or_more\n")?;
    let chunks = ids.len().div_ceil(CHUNK_REGIONS);
    write_chunks(w, chunks, |i, buf| {
        let mut regions = DisplayIds::new(h);
        let mut itoa = itoa::Buffer::new();
        let end = ((i + 1) * CHUNK_REGIONS).min(ids.len());
        for &id in &ids[i * CHUNK_REGIONS..end] {
            let hist = hists.hist(id.index());
            let mut cells: [Count; 8] = [0; 8];
            for &(size, count) in hist.pairs() {
                cells[(size as usize).min(7)] += count;
            }
            push_field(buf, regions.of(id).as_bytes());
            buf.push(b',');
            push_field(buf, h.name(id).unwrap_or_default().as_bytes());
            for value in std::iter::once(hist.groups()).chain(cells) {
                buf.push(b',');
                push_number(buf, &mut itoa, value);
            }
            buf.push(b'\n');
        }
        Ok(())
    })
}

#[cfg(test)]
mod writer_tests {
    use super::*;
    use crate::histogram::Size;
    use crate::release::outputs::rows::sorted_levels;

    /// `counts.csv` as `csv::Writer` writes it, row by row (the reference).
    fn counts_by_csv(h: &Hierarchy, hists: &HistogramSet, levels: &[Vec<NodeId>]) -> Vec<u8> {
        let mut csv = csv::Writer::from_writer(Vec::new());
        csv.write_record(["level", "region", "size", "count"])
            .unwrap();
        for (level, ids) in h.levels().zip(levels) {
            for &id in ids {
                for &(size, count) in hists.hist(id.index()).pairs() {
                    csv.write_record([
                        h.level_name(level),
                        &h.display_id(id),
                        &size.to_string(),
                        &count.to_string(),
                    ])
                    .unwrap();
                }
            }
        }
        csv.into_inner().unwrap()
    }

    /// A level's table as `csv::Writer` writes it (the reference).
    fn wide_by_csv(h: &Hierarchy, hists: &HistogramSet, ids: &[NodeId]) -> Vec<u8> {
        let mut csv = csv::Writer::from_writer(Vec::new());
        let mut header = vec!["region".to_string(), "name".into(), "groups".into()];
        header.extend((0..7).map(|s| format!("size_{s}")));
        header.push("size_7_or_more".into());
        csv.write_record(&header).unwrap();
        for &id in ids {
            let hist = hists.hist(id.index());
            let mut cells: [Count; 8] = [0; 8];
            for &(size, count) in hist.pairs() {
                cells[(size as usize).min(7)] += count;
            }
            let mut row = vec![h.display_id(id), h.name(id).unwrap_or_default().to_string()];
            row.extend(
                std::iter::once(hist.groups())
                    .chain(cells)
                    .map(|v| v.to_string()),
            );
            csv.write_record(&row).unwrap();
        }
        csv.into_inner().unwrap()
    }

    /// A hierarchy whose names and codes need quoting, with enough regions for many
    /// chunks, and histograms of all shapes.
    fn tricky() -> (Hierarchy, HistogramSet) {
        let levels = vec!["na,tion".into(), "st\"ate".into(), "block".into()];
        let states = ["A", "B,C", "\"D\"", "é e", "\n"];
        let mut rows = Vec::new();
        for (s, state) in states.iter().enumerate() {
            for b in 0..(3 * CHUNK_REGIONS / (s + 1)) {
                let code = match b % 5 {
                    0 => format!("{s}{b:06}"),
                    1 => format!("{s}-{b},x"),
                    2 => format!("q{s}\"{b}"),
                    3 => format!(" {s} {b} "),
                    _ => format!("{s}.{b}\rcr"),
                };
                rows.push(vec!["U,S".to_string(), state.to_string(), code]);
            }
        }
        let mut h = Hierarchy::from_leaf_paths(levels, &rows).unwrap();
        for i in (0..h.len() as u32).step_by(3) {
            let name = match i % 4 {
                0 => format!("Name {i}"),
                1 => format!("Name, {i}"),
                2 => format!("\"{i}\" said"),
                _ => String::new(),
            };
            h.set_name(NodeId(i), name);
        }
        let mut hists = HistogramSet::new();
        for i in 0..h.len() as u64 {
            let pairs: Vec<(Size, Count)> = (0..(i % 11) as Size)
                .map(|s| (s * (i as Size % 3 + 1), (i * 7 + u64::from(s)) % 50 + 1))
                .chain((i % 13 == 0).then_some((5000, u64::MAX / 4)))
                .collect();
            hists.push_sorted_pairs(pairs);
        }
        (h, hists)
    }

    #[test]
    fn written_as_csv_writes_them() {
        let (h, hists) = tricky();
        let levels = sorted_levels(&h);
        assert!(levels.iter().map(Vec::len).sum::<usize>() > 4 * CHUNK_REGIONS);
        let mut ours = Vec::new();
        write_counts(&mut ours, &h, &hists, &levels).unwrap();
        assert!(
            ours == counts_by_csv(&h, &hists, &levels),
            "counts.csv differs"
        );
        for ids in &levels {
            let mut ours = Vec::new();
            write_wide(&mut ours, &h, &hists, ids).unwrap();
            assert!(ours == wide_by_csv(&h, &hists, ids), "a table differs");
        }
    }

    #[test]
    fn display_ids_follow_the_hierarchy() {
        let (h, _) = tricky();
        let mut ids = DisplayIds::new(&h);
        for level in sorted_levels(&h) {
            for id in level {
                assert_eq!(ids.of(id), h.display_id(id));
            }
        }
        // In any order too.
        for i in (0..h.len() as u32).rev().step_by(7) {
            assert_eq!(ids.of(NodeId(i)), h.display_id(NodeId(i)));
            assert_eq!(ids.of(NodeId::ROOT), h.display_id(NodeId::ROOT));
        }
    }
}

/// Writes a numeric table ([`crate::release::outputs::numeric`]): its header, then its
/// rows chunk by chunk, byte for byte what `csv::Writer` writes for these records.
pub(crate) fn write_numeric<W: Write + Send>(
    w: &mut W,
    table: &crate::release::outputs::numeric::NumericTable<'_>,
) -> std::io::Result<()> {
    w.write_all(table.header().as_bytes())?;
    w.write_all(b"\n")?;
    let columns = table.number_columns();
    write_chunks(w, table.chunks, |i, buf| {
        let mut rows = crate::release::outputs::numeric::NumericRows::new(columns);
        (table.fill)(i, &mut rows)?;
        let mut itoa = itoa::Buffer::new();
        for r in 0..rows.len() {
            push_field(buf, rows.first[r].as_bytes());
            buf.push(b',');
            push_field(buf, rows.second[r].as_bytes());
            for column in &rows.numbers {
                buf.push(b',');
                push_number(buf, &mut itoa, column[r]);
            }
            buf.push(b'\n');
        }
        Ok(())
    })
}
