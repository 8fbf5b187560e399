//! Files under coco's homes: created readable by their owner only (0600) in directories
//! of mode 0700, and tightened, with a note, when found looser (an older coco, or the
//! terminal UI of one, created some of them 0755/0644).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{
    ANCHOR_FILE, CONFIG_FILE, LEDGER_FILE, LOCK_FILE, Ledger, LedgerError, POINTER_FILE, TORN_FILE,
    io, sync_dir,
};

/// The terminal UI's list of recently opened datasets (directories: confidential like
/// the ledger), in the data directory.
pub const RECENT_FILE: &str = "recent-datasets.txt";

/// A file or directory whose mode was looser than coco's and was tightened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tightened {
    pub path: PathBuf,
    /// The permission bits found.
    pub was: u32,
    /// The permission bits set (0700 or 0600).
    pub now: u32,
}

impl std::fmt::Display for Tightened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: was readable by others (mode {:04o}); now {:04o}, its owner's only",
            crate::data::text::escape_controls(&self.path.display().to_string()),
            self.was,
            self.now
        )
    }
}

/// Creates a directory (and its parents) readable by its owner only, if missing.
pub(super) fn ensure_private_dir(dir: &Path) -> Result<(), LedgerError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(io(dir))
}

/// Creates (or opens) a file readable by its owner only.
pub(super) fn open_private(path: &Path, options: &mut OpenOptions) -> std::io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Writes `bytes` to `path` atomically (a temporary file beside it, `fsync`ed, renamed
/// over it, the directory `fsync`ed), readable by its owner only; creates the directory
/// (0700) if missing.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), LedgerError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    ensure_private_dir(&dir)?;
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let mut f = open_private(
        &tmp,
        OpenOptions::new().create(true).truncate(true).write(true),
    )
    .map_err(io(&tmp))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(io(&tmp))?;
    drop(f);
    // The renamed file keeps the temporary's mode (0600), whatever the old one had.
    std::fs::rename(&tmp, path).map_err(io(path))?;
    sync_dir(&dir).map_err(io(&dir))
}

/// Sets `path`'s permission bits to `mode` if others may read, write or enter it.
fn tighten(path: &Path, mode: u32) -> Result<Option<Tightened>, LedgerError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(path)(e)),
        };
        // A symbolic link's own mode means nothing; what it points to is not coco's.
        if meta.file_type().is_symlink() {
            return Ok(None);
        }
        let was = meta.permissions().mode() & 0o777;
        if was & 0o077 == 0 {
            return Ok(None);
        }
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(io(path))?;
        Ok(Some(Tightened {
            path: path.to_path_buf(),
            was,
            now: mode,
        }))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, mode);
        Ok(None)
    }
}

impl Ledger {
    /// Tightens coco's homes (0700) and the files coco writes in them (0600) where they
    /// are looser; creates nothing. Returns what it changed, for the operator to be
    /// told.
    pub fn secure(&self) -> Result<Vec<Tightened>, LedgerError> {
        let mut changed = Vec::new();
        let mut dirs = vec![self.home.clone()];
        if self.config_home != self.home {
            dirs.push(self.config_home.clone());
        }
        for dir in &dirs {
            changed.extend(tighten(dir, 0o700)?);
        }
        let files = [
            self.home.join(LEDGER_FILE),
            self.home.join(LOCK_FILE),
            self.home.join(TORN_FILE),
            self.home.join(RECENT_FILE),
            self.home.join(POINTER_FILE),
            self.home.join(CONFIG_FILE),
            self.config_home.join(CONFIG_FILE),
            self.config_home.join(ANCHOR_FILE),
        ];
        let mut seen = std::collections::HashSet::new();
        for f in files {
            if seen.insert(f.clone()) {
                changed.extend(tighten(&f, 0o600)?);
            }
        }
        Ok(changed)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn looser_homes_and_files_are_tightened_once() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir(&home).unwrap();
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(home.join(RECENT_FILE), "/data\n").unwrap();
        std::fs::set_permissions(
            home.join(RECENT_FILE),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let ledger = Ledger::at(&home);
        let changed = ledger.secure().unwrap();
        assert_eq!(changed.len(), 2, "{changed:?}");
        assert_eq!((changed[0].was, changed[0].now), (0o755, 0o700));
        assert!(
            changed[1].to_string().contains("mode 0644"),
            "{}",
            changed[1]
        );
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&home), 0o700);
        assert_eq!(mode(&home.join(RECENT_FILE)), 0o600);
        assert!(ledger.secure().unwrap().is_empty());
        write_private(&home.join("x"), b"y").unwrap();
        assert_eq!(mode(&home.join("x")), 0o600);
    }
}
