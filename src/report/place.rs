//! Where a report may be written. A release directory is published as a whole, its
//! subdirectories included, so a report is refused anywhere under one: an internal
//! report there would be published with the release, and `coco verify` refuses any file
//! the manifest does not list, a public report included (publish that one beside the
//! release directory).
//!
//! A directory is a release directory when it holds a `manifest.json` that coco wrote
//! (a JSON object with `coco_version`), or one that cannot be read as JSON: fail closed,
//! since it may be a release's. Every ancestor of the report's directory counts, up to
//! the root.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::ReportError;
use super::html::Kind;

/// The release directory `out` would be inside, if any.
pub fn release_around(out: &Path) -> Option<PathBuf> {
    let absolute = if out.is_absolute() {
        out.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(out)
    };
    // The deepest existing ancestor, with its links resolved: a link into a release
    // directory is inside it.
    let mut dir = absolute.parent()?.to_path_buf();
    let existing = loop {
        match dir.canonicalize() {
            Ok(d) => break d,
            Err(_) => dir = dir.parent()?.to_path_buf(),
        }
    };
    existing
        .ancestors()
        .find(|d| holds_manifest(d))
        .map(Path::to_path_buf)
}

fn holds_manifest(dir: &Path) -> bool {
    let path = dir.join("manifest.json");
    if !path.is_file() {
        return false;
    }
    match std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    {
        Some(v) => v.get("coco_version").is_some(),
        None => true,
    }
}

/// Where the TUI writes the public report of the release in `release`: beside it,
/// `<release>-report.html`.
pub fn beside(release: &Path) -> PathBuf {
    let name = release
        .file_name()
        .map_or_else(|| "release".into(), |n| n.to_string_lossy().into_owned());
    release.with_file_name(format!("{name}-report.html"))
}

/// Writes `html` to `out` whole (through a temporary file renamed over it), after
/// checking that `out` is not inside a release directory. An internal report is
/// readable by its owner only.
pub fn write(out: &Path, kind: Kind, html: &str) -> Result<(), ReportError> {
    if let Some(release) = release_around(out) {
        return Err(ReportError::InsideRelease {
            out: out.to_path_buf(),
            release,
            kind,
        });
    }
    let io = |e: std::io::Error| ReportError::Write {
        path: out.to_path_buf(),
        source: e,
    };
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = out
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(true).write(true);
    #[cfg(unix)]
    if kind == Kind::Internal {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = (|| {
        let mut f = options.open(&tmp)?;
        f.write_all(html.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, out)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_anywhere_under_a_release_directory_is_inside_it() {
        let tmp = tempfile::tempdir().unwrap();
        let release = tmp.path().join("r");
        std::fs::create_dir_all(release.join("tables")).unwrap();
        std::fs::write(release.join("manifest.json"), r#"{"coco_version":"0.1.0"}"#).unwrap();
        let release = release.canonicalize().unwrap();
        for out in [
            release.join("report.html"),
            release.join("tables/report.html"),
            release.join("new/deeper/report.html"),
        ] {
            assert_eq!(
                release_around(&out).as_deref(),
                Some(release.as_path()),
                "{out:?}"
            );
        }
        assert_eq!(release_around(&tmp.path().join("r-report.html")), None);
        assert_eq!(beside(&release), release.with_file_name("r-report.html"));
    }

    #[test]
    fn another_tools_manifest_is_not_a_release_but_an_unreadable_one_is() {
        let tmp = tempfile::tempdir().unwrap();
        let web = tmp.path().join("web");
        std::fs::create_dir_all(&web).unwrap();
        std::fs::write(web.join("manifest.json"), r#"{"name":"app"}"#).unwrap();
        assert_eq!(release_around(&web.join("report.html")), None);
        std::fs::write(web.join("manifest.json"), "{not json").unwrap();
        assert!(release_around(&web.join("report.html")).is_some());
    }
}
