//! The ledger's anchor: how a lost, truncated or replaced ledger is noticed.
//!
//! The hash chain catches a line changed, removed or inserted anywhere but at the end.
//! It cannot catch lines removed from the end, a ledger deleted (coco would start a new
//! one) or an older copy put in its place: each is a valid chain. The anchor,
//! `ledger.anchor` in the ledger's configuration directory (apart from the ledger, which
//! is in the data directory unless `COCO_HOME` puts both in one place; the ledger's
//! pointer says where, see `place`), records the ledger it anchors, how many lines it
//! has, the SHA-256 of the last and the running spending per dataset key (`spending`).
//! It is written atomically (mode 0600) after every append and checked before every
//! draw:
//!
//! - no anchor and no ledger: first use; the first append creates both (unless the
//!   ledger's pointer is there: then both were deleted, and draws are refused);
//! - no anchor beside a ledger of lines (a ledger an older coco kept, or an anchor
//!   deleted): every draw is refused ([`LedgerError::AnchorMissing`]) until the
//!   operator restores the anchor or runs `coco ledger adopt`, which anchors the ledger
//!   as it is, says that it trusts it to hold every draw, and records that in the chain;
//! - an anchor of another ledger (coco's data directory changed): refused
//!   ([`LedgerError::Misplaced`]);
//! - the ledger holds the anchored lines, perhaps with lines after them (coco stopped
//!   between a line and its anchor): draws go on, and the next append re-anchors;
//! - fewer lines than anchored, or another line where the anchored one was: every draw
//!   is refused ([`LedgerError::AnchorLost`]) until the operator restores the ledger
//!   from a backup holding every anchored line, or accepts the loss with `coco ledger
//!   reanchor --accept-loss` (`recover`), which keeps the old anchor, writes the loss
//!   into the chain with the ε the old anchor knew of, and keeps counting that ε.
//!
//! Who can write both files can rewrite both consistently; a second `COCO_HOME` or
//! another machine has a ledger and an anchor of its own. docs/privacy.md says so.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::files::{ensure_private_dir, write_private};
use super::spending::KeySpend;
use super::{GENESIS, Ledger, LedgerError, LedgerRead, io, now, quote::cut};

/// The anchor's file name, in the ledger's configuration directory.
pub const ANCHOR_FILE: &str = "ledger.anchor";

/// The anchor's format: 3 records the ledger and its spending with the ρ of every key;
/// 2 (read, never written) its spending in ε only (read as ρ = (Σε)²/2, conservative);
/// 1 (read, never written) only the lines. A coco that knows only 1 and 2 refuses an
/// anchor of version 3 (fail closed).
const ANCHOR_VERSION: u32 = 3;

/// What the anchor records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Anchor {
    pub v: u32,
    /// The ledger anchored (its canonical path); absent in version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<String>,
    /// How many lines the ledger held after the last append.
    pub lines: usize,
    /// The SHA-256 of the last of them ([`GENESIS`] for none).
    pub head: String,
    #[serde(with = "time::serde::rfc3339")]
    pub time: OffsetDateTime,
    /// The ε those lines record per dataset key (draws, and losses still counted);
    /// absent in version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent: Option<Vec<KeySpend>>,
}

/// What the anchor says of a ledger that holds what it records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum AnchorState {
    /// No anchor, no ledger: first use.
    Fresh,
    /// The ledger holds the `anchored` lines, and `lines` in all.
    Holds { anchored: usize, lines: usize },
}

/// What `coco ledger` and `coco ledger verify` say of the anchor (their JSON's
/// `anchor`): where it is, and whether the ledger holds what it records.
#[derive(Clone, Debug, Serialize)]
pub struct AnchorReport {
    /// The anchor file.
    pub path: PathBuf,
    #[serde(flatten)]
    pub check: AnchorCheck,
}

/// Whether the ledger holds what its anchor records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum AnchorCheck {
    /// No ledger and no anchor yet: first use.
    Fresh,
    /// The ledger holds the `anchored` lines, and `lines` in all.
    Holds { anchored: usize, lines: usize },
    /// Draws are refused, for `problem`.
    Refused { problem: String },
}

impl AnchorReport {
    pub fn ok(&self) -> bool {
        !matches!(self.check, AnchorCheck::Refused { .. })
    }
}

impl Ledger {
    /// Where the anchor is kept.
    pub fn anchor_path(&self) -> PathBuf {
        self.config_home.join(ANCHOR_FILE)
    }

    /// The anchor, or `None` when there is none. An anchor that cannot be parsed is an
    /// error that stops draws.
    pub fn read_anchor(&self) -> Result<Option<Anchor>, LedgerError> {
        let path = self.anchor_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                return Err(LedgerError::AnchorUnreadable {
                    path,
                    problem: "not UTF-8".into(),
                });
            }
            Err(e) => return Err(io(&path)(e)),
        };
        let anchor: Anchor =
            serde_json::from_str(&text).map_err(|e| LedgerError::AnchorUnreadable {
                path: path.clone(),
                problem: cut(&e.to_string()),
            })?;
        let hex = anchor.head.len() == 64
            && anchor
                .head
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        let spent = anchor.spent.as_deref().unwrap_or_default();
        let fields = match anchor.v {
            1 => anchor.ledger.is_none() && anchor.spent.is_none(),
            2 => {
                anchor.ledger.is_some()
                    && anchor.spent.is_some()
                    && spent
                        .iter()
                        .all(|k| k.epsilon.is_some() && k.rho.is_none() && k.zcdp_draws == 0)
            }
            3 => {
                anchor.ledger.is_some()
                    && anchor.spent.is_some()
                    && spent.iter().all(|k| k.rho.is_some())
            }
            _ => false,
        };
        if let Some(problem) = spent.iter().find_map(|k| k.check().err()) {
            return Err(LedgerError::AnchorUnreadable { path, problem });
        }
        if !fields || !hex || (anchor.lines == 0) != (anchor.head == GENESIS) {
            return Err(LedgerError::AnchorUnreadable {
                path,
                problem: format!(
                    "version {}, {} line(s), head {:?}{}: expected version 1, 2 or {ANCHOR_VERSION} (versions 2 and 3 with the ledger and its spending, in ε for 2, with ρ for 3) and a SHA-256 in hex",
                    anchor.v,
                    anchor.lines,
                    cut(&anchor.head),
                    match (&anchor.ledger, &anchor.spent) {
                        (None, None) => "",
                        (Some(_), None) => ", a ledger but no spending",
                        (None, Some(_)) => ", spending but no ledger",
                        (Some(_), Some(_)) => ", a ledger and spending",
                    }
                ),
            });
        }
        Ok(Some(anchor))
    }

    /// Whether `read` is this ledger's and holds every line `anchor` records (read the
    /// anchor first: see [`Ledger::read_anchored`]).
    pub fn check_anchor(
        &self,
        read: &LedgerRead,
        anchor: Option<&Anchor>,
    ) -> Result<AnchorState, LedgerError> {
        if let Some(problem) = self.place_problem() {
            return Err(LedgerError::Misplaced {
                path: self.path(),
                problem,
            });
        }
        let Some(anchor) = anchor else {
            if read.line_count > 0 {
                return Err(LedgerError::AnchorMissing {
                    path: self.path(),
                    anchor: self.anchor_path(),
                    lines: read.line_count,
                });
            }
            if self.pointer_path().exists() {
                return Err(LedgerError::LedgerGone {
                    path: self.path(),
                    anchor: self.anchor_path(),
                    pointer: self.pointer_path(),
                });
            }
            return Ok(AnchorState::Fresh);
        };
        if let Some(theirs) = &anchor.ledger
            && *theirs != self.ledger_id()
        {
            return Err(LedgerError::Misplaced {
                path: self.path(),
                problem: format!(
                    "its anchor {} belongs to the ledger {theirs}, not to this one ({}): coco's data directory is not the one the anchor was written for (XDG_DATA_HOME, HOME or COCO_HOME differ from the runs that wrote it)",
                    self.anchor_path().display(),
                    self.ledger_id()
                ),
            });
        }
        self.held(read, anchor)?;
        Ok(AnchorState::Holds {
            anchored: anchor.lines,
            lines: read.line_count,
        })
    }

    /// Whether `read` holds every line `anchor` records, wherever either is.
    pub(super) fn held(&self, read: &LedgerRead, anchor: &Anchor) -> Result<(), LedgerError> {
        let lost = |problem: String| LedgerError::AnchorLost {
            path: self.path(),
            anchor: self.anchor_path(),
            anchored: anchor.lines,
            head: anchor.head.chars().take(16).collect::<String>() + "…",
            problem,
        };
        if anchor.lines > read.line_count {
            return Err(lost(match read.line_count {
                0 => "the ledger is missing or empty".into(),
                n => format!("it holds {n} line(s)"),
            }));
        }
        let head = match anchor.lines {
            0 => GENESIS,
            n => read.line_hashes[n - 1].as_str(),
        };
        if head != anchor.head {
            return Err(lost(format!(
                "its line {} is not the line anchored (lines were removed and others written, or another ledger was put in its place)",
                anchor.lines
            )));
        }
        Ok(())
    }

    /// [`Ledger::check_anchor`] as `coco ledger` and `coco ledger verify` report it.
    pub fn anchor_report(&self, read: &LedgerRead, anchor: Option<&Anchor>) -> AnchorReport {
        AnchorReport {
            path: self.anchor_path(),
            check: match self.check_anchor(read, anchor) {
                Ok(AnchorState::Fresh) => AnchorCheck::Fresh,
                Ok(AnchorState::Holds { anchored, lines }) => {
                    AnchorCheck::Holds { anchored, lines }
                }
                Err(e) => AnchorCheck::Refused {
                    problem: e.to_string(),
                },
            },
        }
    }

    /// Records that the ledger holds `lines` lines, the last of SHA-256 `head`, which
    /// spent `spent`.
    pub(super) fn write_anchor(
        &self,
        lines: usize,
        head: &str,
        spent: Vec<KeySpend>,
    ) -> Result<(), LedgerError> {
        ensure_private_dir(&self.config_home)?;
        let anchor = Anchor {
            v: ANCHOR_VERSION,
            ledger: Some(self.ledger_id()),
            lines,
            head: head.to_string(),
            time: now(),
            spent: Some(spent),
        };
        let mut text = serde_json::to_string(&anchor).expect("an anchor serialises");
        text.push('\n');
        write_private(&self.anchor_path(), text.as_bytes())
    }

    /// Anchors the ledger as read (under the lock): every line it holds.
    pub(super) fn anchor_read(&self, read: &LedgerRead) -> Result<(), LedgerError> {
        let head = read.line_hashes.last().map_or(GENESIS, String::as_str);
        self.write_anchor(read.line_count, head, read.spending())
    }
}
