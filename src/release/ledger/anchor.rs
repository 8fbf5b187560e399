//! The ledger's anchor: how a lost, truncated or replaced ledger is noticed.
//!
//! The hash chain catches a line changed, removed or inserted anywhere but at the end.
//! It cannot catch lines removed from the end, a ledger deleted (coco would start a new
//! one) or an older copy put in its place: each is a valid chain. The anchor,
//! `ledger.anchor` in coco's configuration directory (apart from the ledger, which is
//! in the data directory unless `COCO_HOME` puts both in one place), records how many
//! lines the ledger has and the SHA-256 of the last. It is written atomically (mode
//! 0600) after every append and checked before every draw:
//!
//! - no anchor and no ledger: first use; the first append creates both;
//! - no anchor beside a ledger (a coco that kept none, or an anchor deleted): the
//!   anchor is created from the ledger at the next draw, and the operator is told;
//! - the ledger holds the anchored lines, perhaps with lines after them (coco stopped
//!   between a line and its anchor): draws go on, and the next append re-anchors;
//! - fewer lines than anchored, or another line where the anchored one was: every draw
//!   is refused ([`LedgerError::AnchorLost`]) until the operator restores the ledger
//!   from a backup holding every anchored line, or accepts the loss with `coco ledger
//!   reanchor --accept-loss`, which keeps the old anchor beside the new one.
//!
//! Who can write both files can rewrite both consistently; a second `COCO_HOME` or
//! another machine has a ledger and an anchor of its own. The README says so.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::files::{ensure_private_dir, write_private};
use super::{GENESIS, Ledger, LedgerError, LedgerRead, chain::cut, format_time, io, now};

/// The anchor's file name, in coco's configuration directory.
pub const ANCHOR_FILE: &str = "ledger.anchor";

/// The anchor's format.
const ANCHOR_VERSION: u32 = 1;

/// What the anchor records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Anchor {
    pub v: u32,
    /// How many lines the ledger held after the last append.
    pub lines: usize,
    /// The SHA-256 of the last of them ([`GENESIS`] for none).
    pub head: String,
    #[serde(with = "time::serde::rfc3339")]
    pub time: OffsetDateTime,
}

/// What the anchor says of a ledger that holds what it records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum AnchorState {
    /// No anchor, no ledger: first use.
    Fresh,
    /// No anchor beside a ledger of `lines` lines (kept by a coco that wrote none, or
    /// deleted): it is created from the ledger at the next draw.
    Missing { lines: usize },
    /// The ledger holds the `anchored` lines, and `lines` in all.
    Holds { anchored: usize, lines: usize },
}

/// What `coco ledger reanchor` did.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "done", rename_all = "snake_case")]
pub enum Reanchored {
    /// The ledger holds what the anchor recorded; the anchor now records every line.
    InAgreement { lines: usize },
    /// There was no anchor: one was created from the ledger.
    Created { lines: usize },
    /// The ledger had lost anchored lines and the operator accepted it: the old anchor
    /// was kept in `kept`, the new one records the ledger as it is.
    Replaced {
        lines: usize,
        anchored: usize,
        kept: PathBuf,
    },
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
        if anchor.v != ANCHOR_VERSION || !hex || (anchor.lines == 0) != (anchor.head == GENESIS) {
            return Err(LedgerError::AnchorUnreadable {
                path,
                problem: format!(
                    "version {}, {} line(s), head {:?}: expected version {ANCHOR_VERSION} and a SHA-256 in hex",
                    anchor.v,
                    anchor.lines,
                    cut(&anchor.head)
                ),
            });
        }
        Ok(Some(anchor))
    }

    /// Whether `read` holds every line `anchor` records (read the anchor first: see
    /// [`Ledger::read_anchored`]).
    pub fn check_anchor(
        &self,
        read: &LedgerRead,
        anchor: Option<&Anchor>,
    ) -> Result<AnchorState, LedgerError> {
        let Some(anchor) = anchor else {
            return Ok(match read.line_count {
                0 => AnchorState::Fresh,
                lines => AnchorState::Missing { lines },
            });
        };
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
        Ok(AnchorState::Holds {
            anchored: anchor.lines,
            lines: read.line_count,
        })
    }

    /// Records that the ledger holds `lines` lines, the last of SHA-256 `head`.
    pub(super) fn write_anchor(&self, lines: usize, head: &str) -> Result<(), LedgerError> {
        ensure_private_dir(&self.config_home)?;
        let anchor = Anchor {
            v: ANCHOR_VERSION,
            lines,
            head: head.to_string(),
            time: now(),
        };
        let mut text = serde_json::to_string(&anchor).expect("an anchor serialises");
        text.push('\n');
        write_private(&self.anchor_path(), text.as_bytes())
    }

    /// Anchors the ledger as read (under the lock): every line it holds.
    pub(super) fn anchor_read(&self, read: &LedgerRead) -> Result<(), LedgerError> {
        let head = read.line_hashes.last().map_or(GENESIS, String::as_str);
        self.write_anchor(read.line_count, head)
    }

    /// Under the lock, before a draw: creates the anchor of a ledger that has none yet
    /// (an upgrade from a coco that kept none), and returns a sentence saying so.
    pub fn anchor_if_missing(
        &self,
        _lock: &super::LedgerLock,
        read: &LedgerRead,
        state: &AnchorState,
    ) -> Result<Option<String>, LedgerError> {
        match state {
            AnchorState::Missing { lines } => {
                self.anchor_read(read)?;
                Ok(Some(format!(
                    "the ledger had no anchor (kept by a coco that wrote none, or deleted): created {} from its {lines} line(s); from now on a ledger that loses lines stops every draw",
                    self.anchor_path().display()
                )))
            }
            _ => Ok(None),
        }
    }

    /// `coco ledger reanchor [--accept-loss]`: anchors the ledger as it is. Without
    /// `accept_loss` a ledger that lost anchored lines (or an unreadable anchor) is
    /// refused with the reason; with it, the old anchor is kept beside the new one
    /// (`ledger.anchor.replaced-<time>`) and the ledger as it is becomes the record.
    /// A ledger with a defect of its own is never anchored (repair or restore it
    /// first).
    pub fn reanchor(&self, accept_loss: bool) -> Result<Reanchored, LedgerError> {
        let lock = self.lock()?;
        let read = self.read()?;
        read.fail_closed(&self.path())?;
        let anchor = match self.read_anchor() {
            Ok(a) => a,
            Err(e) if !accept_loss => return Err(e),
            Err(_) => None,
        };
        let outcome = match self.check_anchor(&read, anchor.as_ref()) {
            Ok(AnchorState::Fresh | AnchorState::Missing { .. }) if anchor.is_none() => {
                // An unreadable anchor set aside by --accept-loss lands here too.
                if self.anchor_path().exists() {
                    let kept = self.keep_old_anchor()?;
                    Reanchored::Replaced {
                        lines: read.line_count,
                        anchored: 0,
                        kept,
                    }
                } else {
                    Reanchored::Created {
                        lines: read.line_count,
                    }
                }
            }
            Ok(_) => Reanchored::InAgreement {
                lines: read.line_count,
            },
            Err(e) if !accept_loss => return Err(e),
            Err(_) => {
                let kept = self.keep_old_anchor()?;
                Reanchored::Replaced {
                    lines: read.line_count,
                    anchored: anchor.map_or(0, |a| a.lines),
                    kept,
                }
            }
        };
        self.anchor_read(&read)?;
        drop(lock);
        Ok(outcome)
    }

    /// Renames the anchor to `ledger.anchor.replaced-<time>` (never over another).
    fn keep_old_anchor(&self) -> Result<PathBuf, LedgerError> {
        let from = self.anchor_path();
        let stamp = format_time(now()).replace(':', "");
        let mut to = self
            .config_home
            .join(format!("{ANCHOR_FILE}.replaced-{stamp}"));
        let mut n = 1;
        while to.exists() {
            n += 1;
            to = self
                .config_home
                .join(format!("{ANCHOR_FILE}.replaced-{stamp}-{n}"));
        }
        std::fs::rename(&from, &to).map_err(io(&from))?;
        Ok(to)
    }
}
