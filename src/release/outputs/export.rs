//! Writing a release directory atomically.
//!
//! Everything is written into a temporary directory beside the destination: `counts.csv`
//! (the contract), census-style wide tables `tables/<i>-<level>.csv` (sizes 0–6 and
//! "7 or more"), and `manifest.json`. Rows are formatted in parallel chunks and written in
//! order, byte for byte as `csv::Writer` writes them. Each file is `fsync`ed (on a
//! thread of its own, while the next is written); `counts.csv` is read back and checked
//! ([`check_counts`](crate::release::outputs::read_back::check_counts)) while the tables are written; once
//! every `fsync` is done, the directory is renamed into place and its parent `fsync`ed.
//! The release transaction records the outcome in the ledger afterwards. A crash at any
//! point leaves either no destination or a complete, verified one (plus at most a stray
//! `.coco-tmp-*` directory, which is never mistaken for a release).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::data::{Dataset, hex};
use crate::release::ledger::{new_id, sync_dir};
use crate::release::outputs::manifest::{self, Manifest};
use crate::release::outputs::rows::{sorted_levels, table_file};
use crate::release::outputs::writer::{Unsynced, io, join_synced, write_file, write_unsynced};
use crate::release::pipeline::checks::Checks;
use crate::release::pipeline::draw::Draw;
use crate::release::plan::ReleasePlan;

pub use crate::release::outputs::writer::{ExportError, OutputFormat};

/// Refuses an output path that exists and is not an empty directory.
pub fn check_output_free(out: &Path) -> Result<(), ExportError> {
    match std::fs::read_dir(out) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                Err(ExportError::OutputExists {
                    path: out.to_path_buf(),
                })
            } else {
                Ok(())
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) => Err(ExportError::OutputExists {
            path: out.to_path_buf(),
        }),
    }
}

/// The marker file of a seeded (reproducible, not private) release.
pub const NOT_PRIVATE_FILE: &str = "NOT-PRIVATE-SEEDED-RELEASE.txt";

/// The longest output directory name accepted: the temporary directory beside it adds
/// about 40 bytes, and most file systems allow 255.
pub const MAX_OUTPUT_NAME: usize = 200;

/// Checks everything about an output path that can be checked before a draw: it is
/// not `.` or `..`, not a symbolic link (even a dangling one), not a file or a
/// non-empty directory; its name fits the file system; its parent exists and is a
/// writable directory. Nothing is created: a mistyped parent is refused before any ε
/// is spent, not made into a new tree that holds the release.
pub fn check_output(out: &Path) -> Result<(), ExportError> {
    let bad = |why: String| ExportError::BadOutput {
        path: out.to_path_buf(),
        why,
    };
    // `link/` resolves through a symbolic link `link` (a trailing slash follows it):
    // the path is checked as it names its last component, without the slash.
    let trimmed = trim_trailing_separators(out);
    let out = trimmed.as_path();
    let Some(name) = out.file_name() else {
        return Err(bad(
            "it names no directory of its own (\".\", \"..\" or a root): give a new directory's name"
                .into(),
        ));
    };
    if matches!(
        out.components().next_back(),
        Some(std::path::Component::CurDir | std::path::Component::ParentDir)
    ) {
        return Err(bad(
            "it ends in \".\" or \"..\": give a new directory's name".into(),
        ));
    }
    if name.len() > MAX_OUTPUT_NAME {
        return Err(bad(format!(
            "its name is {} bytes long: expected at most {MAX_OUTPUT_NAME}",
            name.len()
        )));
    }
    match std::fs::symlink_metadata(out) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(bad(
                "it is a symbolic link: a release is written to a real new directory".into(),
            ));
        }
        Ok(meta) if !meta.is_dir() => {
            return Err(ExportError::OutputExists {
                path: out.to_path_buf(),
            });
        }
        Ok(_) => check_output_free(out)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return Err(bad(
                "a part of its path is not a directory: give a path under a directory".into(),
            ));
        }
        Err(e) => return Err(io(out)(e)),
    }
    let parent = parent_dir(out);
    match std::fs::metadata(&parent) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(bad(format!(
                "its parent {} is not a directory: expected an existing, writable directory",
                parent.display()
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(bad(format!(
                "its parent {} does not exist: expected an existing, writable directory (coco creates the release directory only, not the directories above it)",
                parent.display()
            )));
        }
        Err(e) => {
            return Err(bad(format!(
                "its parent {} cannot be examined: {e}",
                parent.display()
            )));
        }
    }
    // Writable: the only sure test is to write.
    let probe = parent.join(format!(".coco-probe-{}-{}", std::process::id(), new_id()));
    File::create(&probe)
        .and_then(|_| std::fs::remove_file(&probe))
        .map_err(|e| {
            bad(format!(
                "its parent {} is not writable: {e}",
                parent.display()
            ))
        })?;
    Ok(())
}

/// `out` without trailing `/` (the root stays itself).
fn trim_trailing_separators(out: &Path) -> PathBuf {
    let text = out.as_os_str().as_encoded_bytes();
    let mut end = text.len();
    while end > 1 && std::path::is_separator(text[end - 1] as char) {
        end -= 1;
    }
    // Cut at an ASCII separator: still a valid encoding.
    PathBuf::from(os_string_of(&text[..end]))
}

/// Bytes cut from an `OsStr`'s encoding at an ASCII character, as an `OsString`.
fn os_string_of(bytes: &[u8]) -> std::ffi::OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::ffi::OsStr::from_bytes(bytes).to_os_string()
    }
    #[cfg(not(unix))]
    {
        std::ffi::OsString::from(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// The SHA-256 of a written release's `manifest.json` (the ledger keeps it).
pub fn manifest_sha256(out: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(out.join("manifest.json"))?;
    Ok(hex(&Sha256::digest(&bytes)))
}

fn parent_dir(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// What a release directory holds besides `counts.csv` and `manifest.json`: the
/// formats of the tables and the extra files. The default: CSV, with the margins of
/// error at 90%.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    pub format: OutputFormat,
    /// The margins of error, `summary.csv` and the noisy measurements
    /// ([`crate::release::margins`]).
    pub extras: crate::release::outputs::margins::Extras,
}

/// Writes a drawn release into `out` atomically: into a temporary directory beside it,
/// each file `fsync`ed, every file written read back (`counts.csv` and `counts.parquet`
/// through the release checks, the Parquet files compared with what was written), then
/// renamed into place and the parent `fsync`ed. Records nothing: the release transaction
/// ([`crate::release::transaction`]) records the outcome once it is known. A release that
/// fails its checks is never written, and on any failure nothing appears at `out`.
pub fn write_release_dir(
    out: &Path,
    dataset: &Dataset,
    plan: &ReleasePlan,
    draw: &Draw,
    options: &WriteOptions,
) -> Result<Manifest, ExportError> {
    let WriteOptions { format, extras } = options;
    let format = *format;
    check_output(out)?;
    if !draw.checks().passed() {
        return Err(ExportError::ChecksFailed {
            problems: draw.checks().problems.join("; "),
            checks: draw.checks().clone(),
        });
    }
    let parent = parent_dir(out);
    let base = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "release".into());
    let tmp = parent.join(format!(
        ".{base}.coco-tmp-{}-{}",
        std::process::id(),
        new_id()
    ));
    std::fs::create_dir(&tmp).map_err(io(&tmp))?;
    let result = (|| {
        let manifest = fill_release_dir(&tmp, dataset, plan, draw, format, extras)?;
        sync_dir(&tmp).map_err(io(&tmp))?;
        if out.exists() {
            // An empty directory: rename replaces it on Linux, but clear it explicitly.
            std::fs::remove_dir(out).map_err(io(out))?;
        }
        std::fs::rename(&tmp, out).map_err(io(out))?;
        sync_dir(&parent).map_err(io(&parent))?;
        Ok(manifest)
    })();
    if result.is_err() && tmp.exists() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}

fn fill_release_dir(
    tmp: &Path,
    dataset: &Dataset,
    plan: &ReleasePlan,
    draw: &Draw,
    format: OutputFormat,
    extras: &crate::release::outputs::margins::Extras,
) -> Result<Manifest, ExportError> {
    use crate::release::outputs::margins::files;
    std::thread::scope(|scope| {
        // The margins' bootstrap reads only the draw, the plan and public data: it runs
        // while the tables are written, `fsync`ed and read back, whose I/O leaves the
        // cores idle part of the time.
        let margins = scope.spawn(|| files::margins(dataset.public(), plan, draw, extras));
        let tables = write_tables(tmp, dataset, plan, draw, format);
        let margins = margins
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let (mut manifest, levels) = tables?;
        let margins = margins?;
        // [uncertainty] The margins of error and the other extra files: post-processing
        // of the draw with public data only (`src/release/margins/`).
        let (files, described) = files::write(
            tmp,
            dataset.public(),
            draw,
            &levels,
            format,
            margins.as_deref(),
        )?;
        manifest.outputs.extend(files);
        manifest.uncertainty = described;
        // The wide tables' margins and the replicate tables, when computed and asked
        // for: post-processing of the draw with public data only.
        if let Some(u) = margins.as_deref() {
            let phase = crate::timing::phase("  write the wide tables' margins");
            manifest
                .outputs
                .extend(write_margin_tables(tmp, dataset, draw, &levels, format, u)?);
            phase.done();
        }
        // Last before the manifest: the codebook says what every other file holds.
        let codebook = crate::release::outputs::codebook::render(&manifest);
        manifest.outputs.push(write_file(
            tmp,
            crate::release::outputs::codebook::FILE,
            |w| w.write_all(codebook.as_bytes()),
        )?);
        let json = serde_json::to_string_pretty(&manifest).expect("manifests serialise");
        write_file(tmp, "manifest.json", |w| {
            w.write_all(json.as_bytes())?;
            w.write_all(b"\n")
        })?;
        Ok(manifest)
    })
}

/// Writes the margins of the wide tables (`tables/<i>-<level>-margins.<ext>`) and, if
/// `u` kept its replicates, the replicate tables (`replicates.<ext>`), in every format
/// asked for; returns their digests.
fn write_margin_tables(
    tmp: &Path,
    dataset: &Dataset,
    draw: &Draw,
    levels: &[Vec<crate::data::NodeId>],
    format: OutputFormat,
    u: &crate::release::margins::Uncertainty,
) -> Result<Vec<crate::release::outputs::manifest::FileDigest>, ExportError> {
    use crate::release::outputs::{replicates, wide_margins};
    let h = &dataset.hierarchy;
    let public = dataset.public();
    std::thread::scope(|scope| {
        let mut syncing = Vec::new();
        let written = (|| {
            for table_format in format.tables() {
                let ext = table_format.extension();
                for ((level, ids), index) in h.levels().zip(levels).zip(0..) {
                    let name = wide_margins::file(index, h.level_name(level), ext);
                    let file = write_unsynced(tmp, &name, |w| {
                        wide_margins::write(
                            w,
                            *table_format,
                            public,
                            draw.histograms(),
                            index,
                            ids,
                            u,
                        )
                    })?;
                    syncing.push(scope.spawn(move || file.sync()));
                }
                if !u.replicate_tables.is_empty() {
                    let name = replicates::file(ext);
                    let file = write_unsynced(tmp, &name, |w| {
                        replicates::write(w, *table_format, public, levels, &u.replicate_tables)
                    })?;
                    syncing.push(scope.spawn(move || file.sync()));
                }
            }
            let tables = tmp.join("tables");
            sync_dir(&tables).map_err(io(&tables))
        })();
        let synced = join_synced(tmp, syncing);
        written?;
        synced
    })
}

/// Writes the tables (`counts` and the wide tables, in every format asked for), reads
/// them back and checks them; returns the manifest with their digests, and the levels'
/// regions in the order of the files.
fn write_tables(
    tmp: &Path,
    dataset: &Dataset,
    plan: &ReleasePlan,
    draw: &Draw,
    format: OutputFormat,
) -> Result<(Manifest, Vec<Vec<crate::data::NodeId>>), ExportError> {
    let h = &dataset.hierarchy;
    let hists = draw.histograms();
    let levels = sorted_levels(h);
    // Each file is `fsync`ed on a thread of its own as soon as it is written, while the
    // next is written and `counts.csv` read back; all are joined before the manifest.
    let (outputs, checks) = std::thread::scope(|scope| {
        let mut syncing = Vec::new();
        let written = (|| {
            let spawn_sync = |file: Unsynced| scope.spawn(move || file.sync());
            if let crate::noise::Randomness::Seeded { seed } = draw.randomness() {
                // Unmistakable beside the tables, not only inside the manifest.
                syncing.push(spawn_sync(write_unsynced(tmp, NOT_PRIVATE_FILE, |w| {
                    writeln!(
                        w,
                        "NOT PRIVATE: this release was drawn with seeded noise (seed {seed}).\nAnyone who knows the seed can regenerate the noise and subtract it.\nIt is for tests only and must never be published."
                    )
                })?));
            }
            let tables = tmp.join("tables");
            std::fs::create_dir(&tables).map_err(io(&tables))?;
            let mut checks: Option<Checks> = None;
            for table_format in format.tables() {
                let ext = table_format.extension();
                let counts = format!("counts.{ext}");
                let phase = crate::timing::phase(format!("  write {counts}"));
                syncing.push(spawn_sync(write_unsynced(tmp, &counts, |w| {
                    table_format.write_counts(w, h, hists, &levels)
                })?));
                phase.done();
                // The tables are written (and, where the format needs it, read back)
                // while `counts` is read back.
                let (tables_synced, read) = rayon::join(
                    || {
                        let _phase = crate::timing::phase(format!("  write tables ({ext})"));
                        let mut syncing = Vec::new();
                        for ((level, ids), index) in h.levels().zip(&levels).zip(0..) {
                            let name = table_file(index, h.level_name(level), ext);
                            let file = write_unsynced(tmp, &name, |w| {
                                table_format.write_wide(w, h, hists, ids)
                            })?;
                            let path = tmp.join(&name);
                            table_format
                                .read_back_wide(&path, h, hists, ids)
                                .map_err(io(&path))?;
                            syncing.push(spawn_sync(file));
                        }
                        sync_dir(&tables).map_err(io(&tables))?;
                        Ok::<_, ExportError>(syncing)
                    },
                    || {
                        let _phase = crate::timing::phase(format!("  read back {counts}"));
                        table_format.read_back_counts(&tmp.join(&counts), dataset, draw)
                    },
                );
                syncing.extend(tables_synced?);
                let read = read?;
                // Every form must pass; the manifest reports the first form's checks
                // (CSV's when both were written) when all passed, or this is where the
                // release stops.
                checks = Some(match checks {
                    Some(first) if read.passed() => first,
                    _ => read,
                });
            }
            Ok::<_, ExportError>(checks.unwrap_or_default())
        })();
        let phase = crate::timing::phase("  fsync (rest)");
        // Every file is synced (or failed) before anything is returned, in order.
        let outputs = join_synced(tmp, syncing);
        phase.done();
        let checks = written?;
        Ok::<_, ExportError>((outputs?, checks))
    })?;
    if !checks.passed() {
        return Err(ExportError::ChecksFailed {
            problems: checks.problems.join("; "),
            checks,
        });
    }
    let mut manifest = manifest::build(dataset, plan, draw);
    manifest.checks = checks;
    manifest.outputs = outputs;
    Ok((manifest, levels))
}
