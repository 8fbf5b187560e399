//! The operator's answers to a ledger its anchor does not vouch for: `coco ledger
//! reanchor [--accept-loss]` (the anchor records lines the ledger lost) and `coco ledger
//! adopt` (no anchor, or the ledger moved). Each is explicit, says what it trusts, and
//! is written into the chain (`events`), so the privacy record keeps it.

use std::path::PathBuf;

use serde::Serialize;

use super::events::{
    AdoptTag, AdoptedLine, EVENT_VERSION, LedgerEvent, LossLine, LossTag, Trusted, operator_name,
};
use super::place::Place;
use super::spending::lost_between;
use super::{ANCHOR_FILE, Ledger, LedgerError, LedgerLock, format_time, io, new_id, now};

/// What `coco ledger reanchor` did.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "done", rename_all = "snake_case")]
pub enum Reanchored {
    /// The ledger holds what the anchor recorded; the anchor now records every line.
    InAgreement { lines: usize },
    /// The ledger had lost anchored lines and the operator accepted it: the old anchor
    /// was kept in `kept`, `loss` was written into the chain, and the new anchor records
    /// the ledger with it (`lines` in all, the loss line included).
    Replaced {
        lines: usize,
        anchored: usize,
        kept: PathBuf,
        loss: Box<LossLine>,
    },
}

/// What `coco ledger adopt` did.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "done", rename_all = "snake_case")]
pub enum Adopted {
    /// The ledger is anchored where it is: nothing to do.
    NothingToAdopt { lines: usize },
    /// `adoption` was written into the chain and the ledger anchored as it is, with its
    /// pointer beside it.
    Adopted {
        anchor: PathBuf,
        adoption: AdoptedLine,
    },
}

impl Ledger {
    /// `coco ledger reanchor [--accept-loss]`: anchors the ledger as it is. Without
    /// `accept_loss`, a ledger that lost anchored lines, an anchor of another ledger or
    /// an unreadable anchor is refused with the reason; with it, the old anchor is kept
    /// beside the new one (`ledger.anchor.replaced-<time>`), and a loss line records
    /// when, how many lines, who accepted it and the ε the old anchor knew of that the
    /// ledger no longer holds, which every reader goes on counting as spent. A ledger
    /// with no anchor at all is `adopt`'s; a ledger with a defect of its own is never
    /// anchored (repair or restore it first).
    pub fn reanchor(&self, accept_loss: bool) -> Result<Reanchored, LedgerError> {
        let lock = self.lock()?;
        let read = self.read()?;
        read.fail_closed(&self.path())?;
        let (old, refusal) = match self.read_anchor() {
            Err(e @ LedgerError::AnchorUnreadable { .. }) => (None, e),
            Err(e) => return Err(e),
            Ok(found) => match self.check_anchor(&read, found.as_ref()) {
                Ok(_) => {
                    self.anchor_read(&read)?;
                    self.write_pointer()?;
                    return Ok(Reanchored::InAgreement {
                        lines: read.line_count,
                    });
                }
                Err(e @ (LedgerError::AnchorMissing { .. } | LedgerError::LedgerGone { .. })) => {
                    return Err(e);
                }
                Err(e) => (found, e),
            },
        };
        if !accept_loss || !self.anchor_path().exists() {
            // Without an anchor file where coco looks (the pointer is wrong), nothing
            // anchored anything here that could be accepted as lost: `adopt` says so.
            return Err(refusal);
        }
        let (lost, uncounted) = match old.as_ref().map(|a| &a.spent) {
            Some(Some(known)) => (lost_between(known, &read.spending()), None),
            Some(None) => (
                Vec::new(),
                Some("the old anchor, written by an older coco, recorded no spending: what the lost lines spent is not known and not counted".to_string()),
            ),
            None => (
                Vec::new(),
                Some("the old anchor could not be read: what the lost lines spent is not known and not counted".to_string()),
            ),
        };
        let kept = self.keep_old_anchor()?;
        let mut event = LedgerEvent::LossAccepted(LossLine {
            v: EVENT_VERSION,
            event: LossTag::LossAccepted,
            id: new_id(),
            time: now(),
            anchored_lines: old.as_ref().map_or(0, |a| a.lines),
            ledger_lines: read.line_count,
            lost,
            uncounted,
            kept_anchor: kept.display().to_string(),
            accepted_by: operator_name(),
            prev: String::new(),
        });
        self.append_line(&lock, &read, &mut event)?;
        drop(lock);
        let LedgerEvent::LossAccepted(loss) = event else {
            unreachable!("written as a loss line")
        };
        Ok(Reanchored::Replaced {
            lines: read.line_count + 1,
            anchored: loss.anchored_lines,
            kept,
            loss: Box::new(loss),
        })
    }

    /// `coco ledger adopt`: anchors a ledger no anchor vouches for, and says what that
    /// trusts. With no anchor (a ledger an older coco kept, an anchor deleted, or the
    /// ledger and its anchor both gone), the ledger as it is is trusted to hold every
    /// draw; with an anchor that names another place (the ledger or its home moved), the
    /// anchor must find every line it records, or the loss is `reanchor --accept-loss`'s.
    /// The adoption is written into the chain, and the pointer and anchor rewritten.
    pub fn adopt(&self) -> Result<Adopted, LedgerError> {
        let lock = self.lock()?;
        let read = self.read()?;
        read.fail_closed(&self.path())?;
        let anchor = self.read_anchor()?;
        let moved_from = match &self.place {
            Place::Moved { recorded } => Some(recorded.clone()),
            _ => None,
        }
        .or_else(|| {
            anchor
                .as_ref()
                .and_then(|a| a.ledger.clone())
                .filter(|l| *l != self.ledger_id())
        });
        let trusted = match &anchor {
            Some(a) => {
                self.held(&read, a)?;
                Trusted::CheckedByAnchor
            }
            None => Trusted::LedgerAsIs,
        };
        let pointer_ok = matches!(self.place, Place::Environment | Place::Pointer { .. });
        let fresh = anchor.is_none() && read.line_count == 0 && !self.pointer_path().exists();
        if pointer_ok && moved_from.is_none() && (anchor.is_some() || fresh) {
            return Ok(Adopted::NothingToAdopt {
                lines: read.line_count,
            });
        }
        let mut event = LedgerEvent::Adopted(AdoptedLine {
            v: EVENT_VERSION,
            event: AdoptTag::Adopted,
            id: new_id(),
            time: now(),
            ledger_lines: read.line_count,
            trusted,
            moved_from,
            accepted_by: operator_name(),
            prev: String::new(),
        });
        self.append_line(&lock, &read, &mut event)?;
        drop(lock);
        let LedgerEvent::Adopted(adoption) = event else {
            unreachable!("written as an adoption line")
        };
        Ok(Adopted::Adopted {
            anchor: self.anchor_path(),
            adoption,
        })
    }

    /// What the operator should be told before a draw (under the lock, the ledger read
    /// and checked): the caps and anchor were found through the ledger's pointer, not
    /// where the environment points.
    pub fn notes_before_draw(&self, _lock: &LedgerLock) -> Vec<String> {
        self.place_note().into_iter().collect()
    }

    /// Records, when coco first keeps something for this ledger that is not a line (a
    /// cap), where its caps and anchor are: the pointer, and an anchor of no lines for a
    /// ledger not used yet. Skipped while another coco holds the ledger (its next line
    /// records both) or when the ledger is refused anyway (draws say why).
    pub(super) fn establish(&self) -> Result<(), LedgerError> {
        if self.pointer_path().exists() {
            return Ok(());
        }
        let Some(_lock) = self.try_lock()? else {
            return Ok(());
        };
        let (read, anchor) = self.read_anchored()?;
        if !read.problems.is_empty() || read.torn_tail.is_some() {
            return Ok(());
        }
        match self.check_anchor(&read, anchor.as_ref()) {
            Ok(super::AnchorState::Fresh) => {
                self.anchor_read(&read)?;
                self.write_pointer()
            }
            Ok(super::AnchorState::Holds { .. }) => self.write_pointer(),
            Err(_) => Ok(()),
        }
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
