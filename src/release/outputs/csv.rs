//! Writing large CSV files fast and byte for byte as `csv::Writer` (default settings)
//! would: rows are formatted in parallel into chunk buffers, which one writer thread
//! writes (and so hashes) in order, with a bounded number of chunks in flight.

use std::io::Write;
use std::sync::mpsc;

use rayon::prelude::*;

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
