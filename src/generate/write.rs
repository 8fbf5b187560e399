//! Writing a generated dataset: the contract's files, all or nothing.

use std::fs;
use std::path::{Path, PathBuf};

use super::{GenerateError, Generated, Groups};

/// Whether `out` may receive a dataset: absent, or an empty directory.
pub(super) fn check_target(out: &Path) -> Result<(), GenerateError> {
    match fs::symlink_metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(GenerateError::Io {
            path: out.to_path_buf(),
            source,
        }),
        Ok(meta) if meta.is_dir() => {
            let mut entries = fs::read_dir(out).map_err(|source| GenerateError::Io {
                path: out.to_path_buf(),
                source,
            })?;
            if entries.next().is_none() {
                Ok(())
            } else {
                Err(GenerateError::NotEmpty {
                    path: out.to_path_buf(),
                })
            }
        }
        Ok(_) => Err(GenerateError::NotADirectory {
            path: out.to_path_buf(),
        }),
    }
}

/// A directory removed on drop unless kept: the half-written dataset of a failure.
pub(super) struct TempDir {
    pub(super) path: PathBuf,
    keep: bool,
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.keep {
            // Best effort: the error being reported matters more than this one.
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// Creates a fresh hidden directory beside `out` (same file system, so the final
/// rename is atomic).
pub(super) fn temp_dir_beside(out: &Path) -> Result<TempDir, GenerateError> {
    let name = out
        .file_name()
        .ok_or_else(|| GenerateError::NoName {
            path: out.to_path_buf(),
        })?
        .to_string_lossy()
        .into_owned();
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).map_err(|source| GenerateError::Io {
        path: parent.clone(),
        source,
    })?;
    let pid = std::process::id();
    for attempt in 0u32.. {
        let path = parent.join(format!(".{name}.coco-gen-{pid}-{attempt}"));
        match fs::create_dir(&path) {
            Ok(()) => return Ok(TempDir { path, keep: false }),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 1000 => {}
            Err(source) => return Err(GenerateError::Io { path, source }),
        }
    }
    unreachable!("the loop returns within 1001 attempts")
}

/// Writes `data` into `out` through a temporary directory; returns the file names.
pub(super) fn write_dataset(data: &Generated, out: &Path) -> Result<Vec<String>, GenerateError> {
    let tmp = temp_dir_beside(out)?;
    let mut files = Vec::new();

    let path = tmp.path.join("hierarchy.csv");
    write_csv(
        &path,
        &data.level_names,
        data.leaves.iter().map(|p| p.to_vec()),
    )?;
    files.push("hierarchy.csv".to_string());

    match &data.groups {
        Groups::Sizes(leaves) => {
            let path = tmp.path.join("groups.csv");
            let rows = data.leaves.iter().zip(leaves).flat_map(|(leaf, groups)| {
                let region = leaf.last().cloned().unwrap_or_default();
                groups
                    .iter()
                    .map(move |(id, size)| vec![id.clone(), region.clone(), size.to_string()])
            });
            write_csv(&path, &["group_id", "region", "size"], rows)?;
            files.push("groups.csv".to_string());
        }
        Groups::Histograms(hists) => {
            let path = tmp.path.join("histograms.csv");
            let rows = data.leaves.iter().zip(hists).flat_map(|(leaf, h)| {
                let region = leaf.last().cloned().unwrap_or_default();
                h.pairs()
                    .iter()
                    .map(move |(s, c)| vec![region.clone(), s.to_string(), c.to_string()])
            });
            write_csv(&path, &["region", "size", "count"], rows)?;
            files.push("histograms.csv".to_string());
        }
    }

    if !data.names.is_empty() {
        let path = tmp.path.join("names.csv");
        let rows = data
            .names
            .iter()
            .map(|(id, name)| vec![id.clone(), name.clone()]);
        write_csv(&path, &["region", "name"], rows)?;
        files.push("names.csv".to_string());
    }

    commit(tmp, out)?;
    Ok(files)
}

/// Moves a fully written temporary directory to `out` (which must still be absent or
/// empty), keeping it only when that succeeds.
pub(super) fn commit(tmp: TempDir, out: &Path) -> Result<(), GenerateError> {
    // The target may have become non-empty while we wrote.
    check_target(out)?;
    if out.exists() {
        // An empty directory: renaming over it is not portable, so remove it first.
        fs::remove_dir(out).map_err(|source| GenerateError::Io {
            path: out.to_path_buf(),
            source,
        })?;
    }
    fs::rename(&tmp.path, out).map_err(|source| GenerateError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let mut tmp = tmp;
    tmp.keep = true;
    Ok(())
}

/// One CSV file: header, rows, `\n` line ends, quoting only where needed.
fn write_csv<H, R>(
    path: &Path,
    header: &[H],
    rows: impl Iterator<Item = Vec<R>>,
) -> Result<(), GenerateError>
where
    H: AsRef<[u8]>,
    R: AsRef<[u8]>,
{
    let csv_err = |source| GenerateError::Csv {
        path: path.to_path_buf(),
        source,
    };
    let file = fs::File::create(path).map_err(|source| GenerateError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(std::io::BufWriter::with_capacity(1 << 16, file));
    w.write_record(header).map_err(csv_err)?;
    for row in rows {
        w.write_record(&row).map_err(csv_err)?;
    }
    let file = w
        .into_inner()
        .map_err(|e| GenerateError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        })?
        .into_inner()
        .map_err(|e| GenerateError::Io {
            path: path.to_path_buf(),
            source: e.into_error(),
        })?;
    file.sync_all().map_err(|source| GenerateError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(())
}
