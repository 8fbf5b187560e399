//! Reading a dataset directory: streaming CSV, complete validation, nothing half-loaded.

use std::path::{Path, PathBuf};

use thiserror::Error;

use super::Dataset;

/// Progress of a load, for a progress indicator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadProgress {
    /// The file being read.
    pub file: String,
    /// Bytes read so far and the file's size.
    pub bytes_read: u64,
    pub bytes_total: u64,
}

/// A dataset that cannot be loaded: which file, where, and what is wrong.
#[derive(Debug, Error)]
#[error("{}", self.render())]
pub struct LoadError {
    pub file: PathBuf,
    pub line: Option<u64>,
    pub column: Option<usize>,
    pub kind: LoadErrorKind,
}

impl LoadError {
    fn render(&self) -> String {
        let mut s = self.file.display().to_string();
        if let Some(l) = self.line {
            s.push_str(&format!(":{l}"));
            if let Some(c) = self.column {
                s.push_str(&format!(":{c}"));
            }
        }
        format!("{s}: {}", self.kind)
    }
}

#[derive(Debug, Error)]
pub enum LoadErrorKind {
    #[error("not implemented yet")]
    Unimplemented,
}

pub(crate) fn load(
    dir: &Path,
    _progress: &mut dyn FnMut(LoadProgress),
) -> Result<Dataset, LoadError> {
    Err(LoadError {
        file: dir.to_path_buf(),
        line: None,
        column: None,
        kind: LoadErrorKind::Unimplemented,
    })
}
