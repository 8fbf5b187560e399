//! Where a ledger's caps and anchor are: found from the ledger itself, not from a
//! second environment variable.
//!
//! Without `COCO_HOME`, the ledger is in the user's data directory and its caps
//! (`config.toml`) and anchor (`ledger.anchor`) in the configuration directory, each
//! found through environment variables of its own (`XDG_DATA_HOME`, `XDG_CONFIG_HOME`,
//! `HOME`). A cron job, `sudo`, a systemd unit or a container may change one and not
//! the other, and coco would find the ledger without its caps and anchor. So:
//!
//! - the ledger's home holds a pointer, [`POINTER_FILE`], written with the ledger's
//!   first line (or the first cap set), naming the ledger it was written beside and the
//!   directory of its caps and anchor; coco follows it, whatever the environment says
//!   of the configuration directory, and reads the caps the environment's directory
//!   holds as well (every cap found applies);
//! - the anchor names the ledger it anchors (version 2), and a ledger whose anchor names
//!   another ledger is refused;
//! - a pointer written beside another ledger (the home was moved or copied), or one
//!   that cannot be read, stops every draw until `coco ledger adopt` (which checks the
//!   ledger against its anchor) records the new place;
//! - a pointer with neither a ledger nor an anchor beside it is evidence that both
//!   were deleted, and stops every draw too.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::chain::cut;
use super::files::{ensure_private_dir, write_private};
use super::{LEDGER_FILE, Ledger, LedgerError, canonical_dir, io};

/// The pointer's file name, in the ledger's home.
pub const POINTER_FILE: &str = "ledger.pointer";

/// The pointer's format.
const POINTER_VERSION: u32 = 1;

/// What the pointer records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Pointer {
    v: u32,
    /// The ledger it was written beside (canonical path).
    ledger: String,
    /// The directory of the ledger's caps and anchor (canonical path).
    config_home: String,
}

/// How a ledger's caps and anchor were found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// No pointer beside the ledger (first use, or a ledger an older coco kept): the
    /// configuration directory is the one the environment names.
    Environment,
    /// The pointer names the configuration directory; `environment` is the one the
    /// environment names, whose caps are read as well when it is another.
    Pointer { environment: PathBuf },
    /// The pointer was written beside the ledger `recorded`, not this one: the home was
    /// moved or copied. Draws are refused until `coco ledger adopt`.
    Moved { recorded: String },
    /// The pointer cannot be read. Draws are refused until `coco ledger adopt`.
    Unreadable { problem: String },
}

/// The configuration directory of the ledger in `home`, and how it was found, given
/// the one the environment names.
pub(super) fn locate(home: &Path, environment: &Path) -> (PathBuf, Place) {
    let path = home.join(POINTER_FILE);
    let unreadable = |problem: String| {
        (
            environment.to_path_buf(),
            Place::Unreadable {
                problem: format!("{}: {problem}", path.display()),
            },
        )
    };
    let text = match std::fs::read(&path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(_) => return unreadable("not UTF-8".into()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return (environment.to_path_buf(), Place::Environment);
        }
        Err(e) => return unreadable(e.to_string()),
    };
    let pointer: Pointer = match serde_json::from_str(&text) {
        Ok(p) => p,
        Err(e) => return unreadable(format!("not a pointer ({})", cut(&e.to_string()))),
    };
    if pointer.v != POINTER_VERSION || !Path::new(&pointer.config_home).is_absolute() {
        return unreadable(format!(
            "version {}, configuration directory {:?}: expected version {POINTER_VERSION} and an absolute path",
            pointer.v,
            cut(&pointer.config_home)
        ));
    }
    if pointer.ledger != ledger_id(home) {
        return (
            environment.to_path_buf(),
            Place::Moved {
                recorded: pointer.ledger,
            },
        );
    }
    (
        PathBuf::from(pointer.config_home),
        Place::Pointer {
            environment: environment.to_path_buf(),
        },
    )
}

/// The ledger of `home` as pointers and anchors name it: its canonical path.
pub(super) fn ledger_id(home: &Path) -> String {
    Path::new(&canonical_dir(home))
        .join(LEDGER_FILE)
        .display()
        .to_string()
}

impl Ledger {
    /// Where the pointer to the caps and anchor is kept: beside the ledger.
    pub fn pointer_path(&self) -> PathBuf {
        self.home.join(POINTER_FILE)
    }

    /// How the caps and anchor were found.
    pub fn place(&self) -> &Place {
        &self.place
    }

    /// This ledger as pointers and anchors name it.
    pub(super) fn ledger_id(&self) -> String {
        ledger_id(&self.home)
    }

    /// Why the pointer stops draws, if it does.
    pub(super) fn place_problem(&self) -> Option<String> {
        match &self.place {
            Place::Environment | Place::Pointer { .. } => None,
            Place::Moved { recorded } => Some(format!(
                "{} was written beside the ledger {recorded}, not this one: coco's home was moved or copied from there, and this ledger's caps and anchor may be elsewhere",
                self.pointer_path().display()
            )),
            Place::Unreadable { problem } => Some(format!(
                "the pointer to this ledger's caps and anchor cannot be read ({problem})"
            )),
        }
    }

    /// A sentence for the operator when the caps and anchor are not where the
    /// environment says (the pointer was followed).
    pub fn place_note(&self) -> Option<String> {
        match &self.place {
            Place::Pointer { environment } if *environment != self.config_home => Some(format!(
                "this ledger's caps and anchor are in {} (as {} records), not in {} where the environment points coco's configuration (XDG_CONFIG_HOME or HOME differ from the runs that wrote the ledger): the ledger's own are used, and the caps in both apply",
                self.config_home.display(),
                self.pointer_path().display(),
                environment.display()
            )),
            _ => None,
        }
    }

    /// Writes the pointer (beside the ledger, naming it and the configuration
    /// directory) unless it already says so.
    pub(super) fn write_pointer(&self) -> Result<(), LedgerError> {
        ensure_private_dir(&self.config_home)?;
        let pointer = Pointer {
            v: POINTER_VERSION,
            ledger: self.ledger_id(),
            config_home: canonical_dir(&self.config_home),
        };
        let path = self.pointer_path();
        let mut text = serde_json::to_string(&pointer).expect("a pointer serialises");
        text.push('\n');
        match std::fs::read_to_string(&path) {
            Ok(found) if found == text => return Ok(()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(&path)(e)),
        }
        write_private(&path, text.as_bytes())
    }
}
