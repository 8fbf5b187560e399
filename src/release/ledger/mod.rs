//! The privacy-loss ledger: one JSON line per event of a release drawn, append-only,
//! read fail-closed.
//!
//! It lives in coco's home: `$COCO_HOME` when set, else the user's data directory
//! (`directories`), e.g. `~/.local/share/coco/ledger.jsonl` on Linux. Its caps and anchor
//! live in the user's configuration directory (`~/.config/coco/` on Linux; also
//! `$COCO_HOME` when set) — the one the ledger's pointer names once it has one (`place`),
//! so a run whose environment names another configuration directory still finds them:
//! `config.toml` there caps what is spent on a dataset, in ε, in ρ or in (ε, δ) (`coco
//! ledger set-cap` writes it). A `config.toml` left in the data directory by older versions, or in the
//! configuration directory the environment names, is still read, and its caps still bind
//! (every cap found applies):
//!
//! ```toml
//! default_cap = 4            # optional: applies to every dataset without a cap of its own
//! [caps]
//! "/data/census2030" = 2     # a dataset directory …
//! "5be0…c1" = "1/2"          # … or a dataset's content digest (see `coco ledger`)
//! ```
//!
//! # Records
//! Every line is a typed [`LedgerEntry`]: ε (or, in a zCDP draw's line of version 3, ρ)
//! as an exact fraction (`{"num": "1", "den":
//! "3"}`, no size limit), one spelling per method, status, randomness and tool, an RFC 3339
//! time. A draw has a `pending` line, written and synced before anyone sees it, then one
//! decision line under the same id (`written`, `not_written` or `discarded`); readers
//! keep the latest line of each id. Lines written before this format (no `v`) are read
//! too, their ε parsed exactly whatever its length. Lines about the ledger itself (a
//! loss accepted, a ledger adopted) are of version 3 (`events`); the ε a loss line
//! records as lost counts as spent.
//!
//! # Spending and caps
//! Spending is keyed by the dataset's content digest ([`Dataset::content_digest`]: the
//! leaves' count-of-counts, independent of form, order, names and formatting), its
//! population key ([`crate::data::population`]: the root's sizes, independent of the
//! hierarchy, matching one entity more or fewer) and its directory: an entry counts
//! against a dataset when any matches (or, for old lines, the byte fingerprint of the
//! input files) (`keys`). Every cap that covers the dataset applies and the strictest
//! binds; a directory cap covers the data the ledger recorded for that directory
//! wherever it is copied (`caps`). The default cap applies only to datasets without a
//! cap of their own.
//!
//! # Failing closed
//! The reader returns an error for any line it cannot read, a break in the hash chain,
//! or an id whose lines disagree; [`crate::release::transaction::Reservation::open`] (the first step
//! of every draw) refuses to go on until the operator repairs the ledger. The one tolerated defect is
//! a torn last line (coco stopped while appending it): readers report it, draws are
//! refused until `coco ledger repair` sets it aside. A torn line never hides spent ε:
//! every draw is recorded as pending, and synced, before anyone sees it.
//!
//! # The hash chain and the anchor
//! Each line carries `prev`, the SHA-256 of the previous line's bytes. An edit, a
//! deletion or an insertion anywhere but at the very end breaks the chain at the next
//! line. Lines removed from the end, a truncated or deleted ledger, or an older copy put
//! in its place are caught by the anchor (`anchor`): a small file kept apart from the
//! ledger (`ledger.anchor`, in the configuration directory) with the ledger's path, the
//! number of lines, the hash of the last and the running spending per dataset key
//! (`spending`), updated after every append and checked before every draw. A ledger
//! with lines and no anchor is refused until `coco ledger adopt`, and an accepted loss
//! is written into the chain with its ε, still counted (`recover`). Who rewrites both
//! files, or uses another home, is not caught: the ledger is the agency's record, as
//! safe as the file system that holds it (keep backups; see docs/privacy.md).
//!
//! Appends hold an exclusive lock on `ledger.lock` for the whole release (cap check,
//! draw, decision), write each line with one `write` and `fsync` it, so two processes
//! never interleave and never both slip under a cap. The ledger, lock and configuration
//! are created readable by their owner only (mode 0600), in directories of mode 0700,
//! and tightened when found looser (`files`).

mod records;
#[allow(unused_imports)]
pub use records::*;
mod legacy;
#[allow(unused_imports)]
pub use legacy::*;
mod chain;
#[allow(unused_imports)]
pub use chain::*;

mod anchor;
mod caps;
mod events;
mod files;
mod keys;
mod place;
mod quote;
mod recover;
mod spending;

pub use anchor::{ANCHOR_FILE, Anchor, AnchorCheck, AnchorReport, AnchorState};
pub use caps::{
    CapKey, CapLimit, CapRule, CapSource, CapStatus, Coverage, DatasetSpend, directory_data,
};
pub use events::{AdoptedLine, EVENT_VERSION, LedgerEvent, LossLine, Trusted, operator_name};
pub use files::{RECENT_FILE, Tightened, write_private};
pub use keys::{DatasetIdentity, PopulationRecord};
pub use place::{POINTER_FILE, Place};
pub use recover::{Adopted, Reanchored};
pub use spending::KeySpend;

use files::{ensure_private_dir, open_private};

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::plan::tuning::Tuning;
use super::plan::{MaxSize, ReleasePlan};
use crate::data::{Dataset, hex};
use crate::estimate::TailLength;
use crate::histogram::Size;
use crate::noise::Randomness;
use crate::privacy::{Budget, Definition, Epsilon, Loss, Rho};
use num_bigint::BigUint;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use thiserror::Error;
use time::OffsetDateTime;

pub const LEDGER_FILE: &str = "ledger.jsonl";
pub const CONFIG_FILE: &str = "config.toml";
pub const LOCK_FILE: &str = "ledger.lock";
/// Where `coco ledger repair` keeps the bytes of a torn last line it set aside.
pub const TORN_FILE: &str = "ledger.jsonl.torn";
/// The format of the draws' lines this coco writes (lines about the ledger itself are
/// of [`EVENT_VERSION`]).
pub const LEDGER_VERSION: u32 = 2;
/// The format of a zCDP draw's line: `"definition": "zcdp"` and every budget a ρ. A coco
/// that reads only versions 1 and 2 refuses a ledger holding one (fail closed). Event
/// lines share the number 3 ([`EVENT_VERSION`]) and are told apart by their `event`.
pub const ZCDP_LEDGER_VERSION: u32 = 3;
/// `prev` of the first chained line.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

#[derive(Debug, Error)]
pub enum LedgerError {
    #[error(
        "cannot find a home directory for coco's ledger; set COCO_HOME to a writable directory"
    )]
    NoHome,
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Config {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error(
        "{path}:{line}: {problem}; the ledger cannot be trusted, so no draw is allowed until it is repaired (`coco ledger verify` lists every problem; restore the ledger from a backup, `coco ledger repair` fixes only a torn last line)"
    )]
    Corrupt {
        path: PathBuf,
        line: usize,
        problem: String,
    },
    #[error(
        "{path}:{line}: the last line is torn (coco stopped while writing it); no draw is allowed until `coco ledger repair` sets it aside (it holds no ε that is not counted: every draw is recorded as pending first)"
    )]
    TornTail { path: PathBuf, line: usize },
    #[error("the privacy budget cap for this dataset would be exceeded: {0}; nothing was drawn")]
    CapExceeded(Box<CapRefusal>),
    #[error(
        "{path}: not repaired: {problems}; only a torn last line can be repaired by coco: restore the ledger from a backup"
    )]
    NotRepairable { path: PathBuf, problems: String },
    /// The ledger holds fewer lines than its anchor records, or not the lines anchored:
    /// spent ε would be forgotten.
    #[error(
        "{path}: {problem}; its anchor {anchor} records {anchored} line(s) ending in a line of SHA-256 {head}: the ledger was deleted, truncated or replaced by an older copy, and the ε its lost lines recorded would no longer count, so no draw is allowed. Restore ledger.jsonl from a backup that holds every anchored line (draws then go on), or, to accept the loss and go on from the ledger as it is, run `coco ledger reanchor --accept-loss` (the old anchor is kept beside it)"
    )]
    AnchorLost {
        path: PathBuf,
        anchor: PathBuf,
        anchored: usize,
        head: String,
        problem: String,
    },
    #[error(
        "{path}: the ledger's anchor cannot be read ({problem}); no draw is allowed until it is: restore it from a backup, or run `coco ledger reanchor --accept-loss` to anchor the ledger as it is"
    )]
    AnchorUnreadable { path: PathBuf, problem: String },
    /// A ledger of lines with no anchor: lines it lost could not be noticed.
    #[error(
        "{path}: the ledger holds {lines} line(s) but has no anchor ({anchor} does not exist): it was kept by an older coco, or its anchor was deleted (or coco's configuration directory is not the one it was written under), and a ledger no anchor vouches for may have lost lines whose ε would no longer count, so no draw is allowed. Restore the anchor from a backup, or run coco with the configuration directory that holds it; or run `coco ledger adopt`, which anchors the ledger as it is, trusting it to hold every draw ever made under it, and records that in the ledger"
    )]
    AnchorMissing {
        path: PathBuf,
        anchor: PathBuf,
        lines: usize,
    },
    /// No ledger and no anchor where the ledger's pointer says both were kept.
    #[error(
        "{path}: there is no ledger and no anchor ({anchor}), but {pointer}, written when coco first kept this ledger, says one was kept here: the ledger and its anchor were deleted, and the ε they recorded would no longer count, so no draw is allowed. Restore both from a backup; or run `coco ledger adopt`, which starts again from an empty ledger, trusting that no draw was ever recorded here, and records that in it"
    )]
    LedgerGone {
        path: PathBuf,
        anchor: PathBuf,
        pointer: PathBuf,
    },
    /// The ledger's pointer or anchor names another ledger, or cannot be read: its
    /// caps and anchor may be elsewhere.
    #[error(
        "{path}: {problem}; no draw is allowed until coco finds this ledger's own caps and anchor: run coco with the directories the ledger was kept under, or, if it was moved on purpose, run `coco ledger adopt`, which anchors it where it is now only if it holds every line its anchor records, and records the move in it"
    )]
    Misplaced { path: PathBuf, problem: String },
    /// `coco ledger set-cap` with a key that could never bind.
    #[error("{key}: {why}")]
    CapKey { key: String, why: String },
}

/// Why a draw was refused by a cap: what was spent, what was asked, which cap binds.
#[derive(Debug, Clone)]
pub struct CapRefusal {
    /// The ε of the pure draws spent before this draw (`None`: none).
    pub spent: Option<Epsilon>,
    /// The ρ of every draw spent before this one (`None`: nothing).
    pub spent_rho: Option<Rho>,
    /// How many of `draws` were zCDP.
    pub zcdp_draws: usize,
    pub draws: usize,
    pub requested: Loss,
    /// For an (ε, δ) cap: the ε the spending with this draw would be stated at.
    pub stated: Option<f64>,
    pub cap: CapLimit,
    pub rule: String,
    pub config: PathBuf,
}

impl std::fmt::Display for CapRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rho = || {
            self.spent_rho
                .as_ref()
                .map_or_else(|| "0".into(), Rho::to_string)
        };
        let set = format!("{}, set in {}", self.rule, self.config.display());
        match (&self.cap, &self.requested) {
            (CapLimit::Epsilon(cap), Loss::Pure(e)) if self.zcdp_draws == 0 => write!(
                f,
                "{} already spent in {} draw(s) + {} for this one > cap {} ({set})",
                self.spent
                    .as_ref()
                    .map_or_else(|| "0".into(), Epsilon::to_string),
                self.draws,
                e,
                cap,
            ),
            (CapLimit::Epsilon(cap), requested) => write!(
                f,
                "a pure-ε cap cannot account a ρ-zCDP draw: the discrete Gaussian is not ε-DP for any ε; {} ({} of the {} draw(s) spent on this dataset were zCDP) and the cap is ε = {cap} ({set}); set a ρ cap (coco ledger set-cap DATASET --rho R) or an (ε, δ) cap (coco ledger set-cap DATASET --epsilon E --delta D)",
                match requested {
                    Loss::Zcdp(r) => format!("this draw is ρ = {r}"),
                    Loss::Pure(e) => format!("this draw is ε = {e}"),
                },
                self.zcdp_draws,
                self.draws,
            ),
            (CapLimit::Rho(cap), requested) => write!(
                f,
                "ρ {} already spent in {} draw(s) (a pure draw counted as ρ = ε²/2) + ρ {} for this one{} > ρ cap {cap} ({set})",
                rho(),
                self.draws,
                requested.to_rho(),
                match requested {
                    Loss::Pure(e) => format!(" (ε = {e})"),
                    Loss::Zcdp(_) => String::new(),
                },
            ),
            (CapLimit::EpsilonDelta { epsilon, delta }, requested) => write!(
                f,
                "ρ {} already spent in {} draw(s) + ρ {} for this one is ({}, δ = {delta:e})-DP{} > cap (ε = {epsilon}, δ = {delta:e}) ({set})",
                rho(),
                self.draws,
                requested.to_rho(),
                self.stated
                    .map_or_else(|| "ε = ?".into(), |e| format!("ε = {e:.4}")),
                match (&self.spent, requested, self.zcdp_draws) {
                    (s, Loss::Pure(e), 0) => format!(
                        ", and ε {} as pure draws",
                        s.as_ref().map_or_else(|| e.clone(), |s| s.add(e))
                    ),
                    _ => String::new(),
                },
            ),
        }
    }
}

impl LedgerError {
    /// A refusal by policy (a cap, or a ledger that needs repair), as opposed to a
    /// failure to read or write.
    pub fn is_policy(&self) -> bool {
        matches!(
            self,
            LedgerError::Corrupt { .. }
                | LedgerError::TornTail { .. }
                | LedgerError::CapExceeded(_)
                | LedgerError::NotRepairable { .. }
                | LedgerError::AnchorLost { .. }
                | LedgerError::AnchorUnreadable { .. }
                | LedgerError::AnchorMissing { .. }
                | LedgerError::LedgerGone { .. }
                | LedgerError::Misplaced { .. }
        )
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LedgerError + '_ {
    move |source| LedgerError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What was spent on a dataset: the ε of its pure draws, and the ρ of all its draws.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spend {
    /// The ε of the pure draws; `None` when no pure draw was made.
    pub epsilon: Option<Epsilon>,
    /// The ρ of every draw, exactly: a zCDP draw's ρ, a pure draw's ε²/2 (per draw);
    /// `None` when nothing was spent.
    pub rho: Option<Rho>,
    /// The draws that spent it, lost ones included.
    pub draws: usize,
    /// How many of `draws` were zCDP draws (which no ε accounts).
    pub zcdp_draws: usize,
    /// The part of `epsilon` drawn and not yet decided (pending: counted as spent).
    pub pending: Option<Epsilon>,
    /// The part of `epsilon` spent by draws whose lines were lost, as accepted losses
    /// record it (still counted as spent).
    pub lost: Option<Epsilon>,
    /// How many of `draws` were lost.
    pub lost_draws: usize,
}

impl Spend {
    /// Whether every draw was pure (so the ε is all of the spending).
    pub fn all_pure(&self) -> bool {
        self.zcdp_draws == 0
    }

    pub fn text(&self) -> String {
        self.epsilon
            .as_ref()
            .map_or_else(|| "0".into(), Epsilon::to_string)
    }
}

/// What `coco ledger verify` found.
#[derive(Clone, Debug, Serialize)]
pub struct Verification {
    pub ledger: PathBuf,
    pub lines: usize,
    pub draws: usize,
    pub problems: Vec<Problem>,
    pub torn_tail: Option<usize>,
    /// The anchor: where it is, and whether the ledger holds what it records.
    pub anchor: AnchorReport,
    /// The lines about the ledger itself (losses accepted, adoptions), as written.
    pub events: Vec<LedgerEvent>,
}

impl Verification {
    /// Nothing stops a draw. Accepted losses and adoptions are reported, not problems:
    /// the operator decided them, and a loss's ε is still counted.
    pub fn ok(&self) -> bool {
        self.problems.is_empty() && self.torn_tail.is_none() && self.anchor.ok()
    }
}

/// What `coco ledger repair` did.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "done", rename_all = "snake_case")]
pub enum Repair {
    /// Nothing was wrong.
    NothingToRepair,
    /// The torn last line (its number and length) was moved to `saved_to`.
    SetAsideTornTail {
        line: usize,
        bytes: usize,
        saved_to: PathBuf,
    },
}

/// The ledger (in coco's data directory) and the caps on spending and its anchor (in
/// its configuration directory, as the ledger's pointer names it).
#[derive(Clone, Debug)]
pub struct Ledger {
    home: PathBuf,
    config_home: PathBuf,
    place: Place,
}

/// An exclusive lock on the ledger; released on drop.
#[derive(Debug)]
pub struct LedgerLock {
    _file: File,
}

/// What the lock file says of the coco holding it: written by each holder once it has
/// the lock (its process id and since when), for a coco that has to wait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockHolder {
    /// e.g. `pid 4242, since 2026-11-23T19:50:00Z`, or `unknown` when the file says
    /// nothing readable. Control characters are escaped.
    pub text: String,
}

impl Ledger {
    /// The ledger in `$COCO_HOME`, or in the user's data directory (its caps and anchor
    /// where its pointer says, else in the user's configuration directory).
    pub fn open_default() -> Result<Ledger, LedgerError> {
        Ok(Ledger::with_config(home_dir()?, config_dir()?))
    }

    /// The ledger and its configuration in one given home directory (unless the
    /// ledger's pointer names another for its caps and anchor).
    pub fn at(home: impl Into<PathBuf>) -> Ledger {
        let home = home.into();
        Ledger::with_config(home.clone(), home)
    }

    /// The ledger in `home`, its configuration where its pointer says, else in
    /// `config_home`.
    pub fn with_config(home: impl Into<PathBuf>, config_home: impl Into<PathBuf>) -> Ledger {
        let home = home.into();
        let (config_home, place) = place::locate(&home, &config_home.into());
        Ledger {
            home,
            config_home,
            place,
        }
    }

    /// Where the ledger and the recent datasets are kept.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Where the operator's settings are kept (`config.toml`, `keymap.toml`, the
    /// anchor).
    pub fn config_home(&self) -> &Path {
        &self.config_home
    }

    /// `config.toml` where older versions kept it (beside the ledger), when that is
    /// not where it is kept now.
    fn legacy_config_path(&self) -> Option<PathBuf> {
        (self.home != self.config_home).then(|| self.home.join(CONFIG_FILE))
    }

    /// `config.toml` in the configuration directory the environment names, when the
    /// ledger's pointer named another.
    fn environment_config_path(&self) -> Option<PathBuf> {
        match &self.place {
            Place::Pointer { environment } if *environment != self.config_home => {
                Some(environment.join(CONFIG_FILE))
            }
            _ => None,
        }
    }

    pub fn path(&self) -> PathBuf {
        self.home.join(LEDGER_FILE)
    }

    /// The `config.toml` that `set_cap` writes.
    pub fn config_path(&self) -> PathBuf {
        self.config_home.join(CONFIG_FILE)
    }

    fn ensure_home(&self) -> Result<(), LedgerError> {
        ensure_private_dir(&self.home)
    }

    /// Takes the exclusive lock (waits for another coco holding it).
    pub fn lock(&self) -> Result<LedgerLock, LedgerError> {
        self.lock_or_wait(&mut |_| {})
    }

    /// Takes the exclusive lock if no other coco holds it.
    fn try_lock(&self) -> Result<Option<LedgerLock>, LedgerError> {
        self.ensure_home()?;
        let path = self.home.join(LOCK_FILE);
        let file = open_private(
            &path,
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true),
        )
        .map_err(io(&path))?;
        match file.try_lock() {
            Ok(()) => Ok(Some(LedgerLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(io(&path)(e)),
        }
    }

    /// Takes the exclusive lock; when another coco holds it, calls `waiting` with what
    /// the lock file says of it, then waits.
    pub fn lock_or_wait(
        &self,
        waiting: &mut dyn FnMut(&LockHolder),
    ) -> Result<LedgerLock, LedgerError> {
        self.ensure_home()?;
        let path = self.home.join(LOCK_FILE);
        let mut file = open_private(
            &path,
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true),
        )
        .map_err(io(&path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut said = String::new();
                let _ = file.read_to_string(&mut said);
                let said = said.trim();
                waiting(&LockHolder {
                    text: if said.is_empty() {
                        "unknown".into()
                    } else {
                        crate::data::text::escape_controls(&cut(said)).into_owned()
                    },
                });
                file.lock().map_err(io(&path))?;
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(&path)(e)),
        }
        // Who holds it now, for a coco that has to wait (best effort: the lock is what
        // counts).
        let _ = file.set_len(0).and_then(|()| {
            file.seek(SeekFrom::Start(0))?;
            file.write_all(
                format!("pid {}, since {}\n", std::process::id(), format_time(now())).as_bytes(),
            )
        });
        Ok(LedgerLock { _file: file })
    }

    /// Whether another coco holds the ledger lock now: a session whose draw awaits the
    /// operator's decision, or a release under way. `false` when it cannot tell.
    pub fn held_elsewhere(&self) -> bool {
        let path = self.home.join(LOCK_FILE);
        let Ok(file) = OpenOptions::new().write(true).open(&path) else {
            return false;
        };
        matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
    }

    /// What `coco ledger` says of a draw beside its status: its note, or for a draw
    /// still pending, whether a running session awaits the operator's decision on it (a
    /// session holds the lock from its draw to its decision, so its pending line is the
    /// ledger's last) or the session stopped before deciding. Either way its ε is spent.
    pub fn describe(&self, read: &LedgerRead, entry: &LedgerEntry) -> String {
        if entry.status != Status::Pending {
            return entry.note.clone().unwrap_or_default();
        }
        let last = read.lines.last().is_some_and(|l| l.id == entry.id);
        if last && self.held_elsewhere() {
            "pending: drawn, awaiting the operator's decision in a running session (its ε counts as spent)".into()
        } else {
            "pending: drawn, no decision recorded (the session stopped before deciding; its ε counts as spent)".into()
        }
    }

    /// Reads every line. Fails only if the file cannot be read; defects are in the
    /// result ([`LedgerRead::problems`], [`LedgerRead::torn_tail`]).
    pub fn read(&self) -> Result<LedgerRead, LedgerError> {
        let path = self.path();
        match std::fs::read(&path) {
            Ok(bytes) => Ok(parse_ledger(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(parse_ledger(b"")),
            Err(e) => Err(io(&path)(e)),
        }
    }

    /// Reads the anchor, then the ledger (in that order: the anchor is written after
    /// the line it anchors, so a ledger read after it holds every line it records).
    pub fn read_anchored(&self) -> Result<(LedgerRead, Option<Anchor>), LedgerError> {
        let anchor = self.read_anchor()?;
        Ok((self.read()?, anchor))
    }

    /// Reads the ledger for a draw: any defect is an error (fail closed), and so is a
    /// ledger that does not hold every line its anchor records.
    pub fn read_strict(&self) -> Result<LedgerRead, LedgerError> {
        Ok(self.read_checked()?.0)
    }

    /// [`Ledger::read_strict`], with what the anchor says.
    pub fn read_checked(&self) -> Result<(LedgerRead, AnchorState), LedgerError> {
        let (read, anchor) = self.read_anchored()?;
        read.fail_closed(&self.path())?;
        let state = self.check_anchor(&read, anchor.as_ref())?;
        Ok((read, state))
    }

    /// Appends one line durably, chained to the last one, and returns it as written.
    /// Requires the lock. Refuses on a ledger with any defect, or one its anchor does
    /// not vouch for.
    pub fn append(
        &self,
        lock: &LedgerLock,
        mut entry: LedgerEntry,
    ) -> Result<LedgerEntry, LedgerError> {
        self.ensure_home()?;
        let read = self.read_strict()?;
        entry.v = version_of(entry.total.definition());
        self.append_line(lock, &read, &mut entry)?;
        Ok(entry)
    }

    /// Appends `link` after the lines of `read` (read under `_lock`, and judged fit to
    /// append to by the caller), then anchors the ledger with it and writes the pointer.
    fn append_line(
        &self,
        _lock: &LedgerLock,
        read: &LedgerRead,
        link: &mut impl Link,
    ) -> Result<(), LedgerError> {
        self.ensure_home()?;
        let path = self.path();
        link.chain_to(read.next_prev.clone());
        let mut line = serde_json::to_string(link).expect("ledger lines serialise");
        line.push('\n');
        let existed = path.exists();
        let mut file = open_private(
            &path,
            OpenOptions::new().create(true).append(true).read(true),
        )
        .map_err(io(&path))?;
        // A complete last line without its line break (a crash between the two): end it.
        let len = file.metadata().map_err(io(&path))?.len();
        if len > 0 {
            let mut last = [0u8];
            file.seek(SeekFrom::Start(len - 1))
                .and_then(|_| file.read_exact(&mut last))
                .map_err(io(&path))?;
            if last[0] != b'\n' {
                line.insert(0, '\n');
            }
        }
        file.write_all(line.as_bytes()).map_err(io(&path))?;
        file.sync_all().map_err(io(&path))?;
        if !existed {
            sync_dir(&self.home).map_err(io(&self.home))?;
        }
        // The anchor follows the line: a crash between the two leaves the anchor one
        // line behind, which the next check accepts (the ledger holds every line it
        // records) and the next append brings up to date. The pointer follows the
        // anchor, so a pointer is never without the anchor it leads to.
        let head = sha256_hex(line.trim_matches('\n').as_bytes());
        let mut spending = read.spending_by_key();
        link.count(&mut spending);
        self.write_anchor(read.line_count + 1, &head, spending.into_keys())?;
        self.write_pointer()
    }

    /// Checks every line, the chain, the ids and the anchor; lists every problem and
    /// every line about the ledger itself.
    pub fn verify(&self) -> Result<Verification, LedgerError> {
        let (read, anchor) = self.read_anchored()?;
        Ok(Verification {
            ledger: self.path(),
            lines: read.line_count,
            draws: read.draws().len(),
            problems: read.problems.clone(),
            torn_tail: read.torn_tail,
            anchor: self.anchor_report(&read, anchor.as_ref()),
            events: read.events.iter().map(|e| e.event.clone()).collect(),
        })
    }

    /// Sets aside a torn last line (appended to [`TORN_FILE`], then cut from the
    /// ledger), and nothing else: any other problem is refused.
    pub fn repair(&self) -> Result<Repair, LedgerError> {
        let lock = self.lock()?;
        let read = self.read()?;
        if !read.problems.is_empty() {
            return Err(LedgerError::NotRepairable {
                path: self.path(),
                problems: read
                    .problems
                    .iter()
                    .take(5)
                    .map(|p| format!("line {}: {}", p.line, p.message))
                    .collect::<Vec<_>>()
                    .join("; "),
            });
        }
        let Some(line) = read.torn_tail else {
            return Ok(Repair::NothingToRepair);
        };
        // A line the anchor records was complete once: it was cut, not torn.
        if let Some(anchor) = self.read_anchor()?
            && line <= anchor.lines
        {
            return Err(LedgerError::NotRepairable {
                path: self.path(),
                problems: format!(
                    "line {line} is cut short, but the anchor {} records {} complete line(s): the ledger was truncated, not torn by a crash",
                    self.anchor_path().display(),
                    anchor.lines
                ),
            });
        }
        let path = self.path();
        let bytes = std::fs::read(&path).map_err(io(&path))?;
        let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let torn = &bytes[keep..];
        let saved_to = self.home.join(TORN_FILE);
        let mut aside = open_private(&saved_to, OpenOptions::new().create(true).append(true))
            .map_err(io(&saved_to))?;
        aside
            .write_all(torn)
            .and_then(|()| aside.write_all(b"\n"))
            .and_then(|()| aside.sync_all())
            .map_err(io(&saved_to))?;
        let file = OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(io(&path))?;
        file.set_len(keep as u64).map_err(io(&path))?;
        file.sync_all().map_err(io(&path))?;
        drop(lock);
        Ok(Repair::SetAsideTornTail {
            line,
            bytes: torn.len(),
            saved_to,
        })
    }
}

/// `$COCO_HOME`, or the user's configuration directory for coco (caps, keymap).
pub fn config_dir() -> Result<PathBuf, LedgerError> {
    if let Some(home) = std::env::var_os("COCO_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    directories::ProjectDirs::from("org", "coco", "coco")
        .map(|d| d.config_dir().to_path_buf())
        .ok_or(LedgerError::NoHome)
}

/// `$COCO_HOME`, or the user's data directory for coco.
pub fn home_dir() -> Result<PathBuf, LedgerError> {
    if let Some(home) = std::env::var_os("COCO_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    directories::ProjectDirs::from("org", "coco", "coco")
        .map(|d| d.data_dir().to_path_buf())
        .ok_or(LedgerError::NoHome)
}

/// `fsync` on a directory, so a new or renamed entry in it is durable.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// A fresh random identifier (16 hex digits) from the operating system.
pub fn new_id() -> String {
    use rand::TryRng;
    let mut bytes = [0u8; 8];
    if rand::rngs::SysRng.try_fill_bytes(&mut bytes).is_err() {
        // Still unique enough for an id: time and process.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes = (t ^ u64::from(std::process::id()).rotate_left(32)).to_be_bytes();
    }
    hex(&bytes)
}

#[cfg(test)]
mod tests;
