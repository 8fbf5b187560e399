//! The privacy-loss ledger: one JSON line per event of a release drawn, append-only,
//! read fail-closed.
//!
//! It lives in coco's home: `$COCO_HOME` when set, else the user's data directory
//! (`directories`), e.g. `~/.local/share/coco/ledger.jsonl` on Linux. The operator's
//! settings live in the user's configuration directory (`~/.config/coco/` on Linux; also
//! `$COCO_HOME` when set): `config.toml` there caps the total ε spent on a dataset
//! (`coco ledger set-cap` writes it). A `config.toml` left in the data directory by older
//! versions is still read, and its caps still bind (every cap found applies):
//!
//! ```toml
//! default_cap = 4            # optional: applies to every dataset without a cap of its own
//! [caps]
//! "/data/census2030" = 2     # a dataset directory …
//! "5be0…c1" = "1/2"          # … or a dataset's content digest (see `coco ledger`)
//! ```
//!
//! # Records
//! Every line is a typed [`LedgerEntry`]: ε as an exact fraction (`{"num": "1", "den":
//! "3"}`, no size limit), one spelling per method, status, randomness and tool, an RFC 3339
//! time. A draw has a `pending` line, written and synced before anyone sees it, then one
//! decision line under the same id (`written`, `not_written` or `discarded`); readers
//! keep the latest line of each id. Lines written before this format (no `v`) are read
//! too, their ε parsed exactly whatever its length.
//!
//! # Spending and caps
//! Spending is keyed by the dataset's content digest ([`Dataset::content_digest`]: the
//! leaves' count-of-counts, independent of form, order, names and formatting), its
//! population key ([`crate::data::population`]: the root's sizes, independent of the
//! hierarchy, matching one entity more or fewer) and its directory: an entry counts
//! against a dataset when any matches (or, for old lines, the byte fingerprint of the
//! input files) ([`keys`]). Every cap that covers the dataset applies and the strictest
//! binds; a directory cap covers the data the ledger recorded for that directory
//! wherever it is copied ([`caps`]). The default cap applies only to datasets without a
//! cap of their own.
//!
//! # Failing closed
//! The reader returns an error for any line it cannot read, a break in the hash chain,
//! or an id whose lines disagree; [`super::transaction::Reservation::open`] (the first step
//! of every draw) refuses to go on until the operator repairs the ledger. The one tolerated defect is
//! a torn last line (coco stopped while appending it): readers report it, draws are
//! refused until `coco ledger repair` sets it aside. A torn line never hides spent ε:
//! every draw is recorded as pending, and synced, before anyone sees it.
//!
//! # The hash chain and the anchor
//! Each line carries `prev`, the SHA-256 of the previous line's bytes. An edit, a
//! deletion or an insertion anywhere but at the very end breaks the chain at the next
//! line. Lines removed from the end, a truncated or deleted ledger, or an older copy put
//! in its place are caught by the anchor ([`anchor`]): a small file kept apart from the
//! ledger (`ledger.anchor`, in the configuration directory) with the number of lines and
//! the hash of the last, updated after every append and checked before every draw. Who
//! rewrites both files, or uses another home, is not caught: the ledger is the agency's
//! record, as safe as the file system that holds it (keep backups; see the README).
//!
//! Appends hold an exclusive lock on `ledger.lock` for the whole release (cap check,
//! draw, decision), write each line with one `write` and `fsync` it, so two processes
//! never interleave and never both slip under a cap. The ledger, lock and configuration
//! are created readable by their owner only (mode 0600), in directories of mode 0700,
//! and tightened when found looser ([`files`]).

mod anchor;
mod caps;
mod files;
mod keys;

pub use anchor::{ANCHOR_FILE, Anchor, AnchorState, Reanchored};
pub use caps::{CapKey, CapRule, CapSource, CapStatus, Coverage, DatasetSpend};
pub use files::{RECENT_FILE, Tightened, write_private};
pub use keys::{DatasetIdentity, PopulationRecord};

use files::{ensure_private_dir, open_private};

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::plan::{MaxSize, ReleasePlan};
use super::tuning::Tuning;
use crate::data::{Dataset, hex};
use crate::estimate::{Method, TailLength};
use crate::histogram::Size;
use crate::noise::Randomness;
use crate::privacy::Epsilon;
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
/// The format of the lines this coco writes.
pub const LEDGER_VERSION: u32 = 2;
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
    /// `coco ledger set-cap` with a key that could never bind.
    #[error("{key}: {why}")]
    CapKey { key: String, why: String },
}

/// Why a draw was refused by a cap: what was spent, what was asked, which cap binds.
#[derive(Debug, Clone)]
pub struct CapRefusal {
    pub spent: String,
    pub draws: usize,
    pub requested: String,
    pub cap: String,
    pub rule: String,
    pub config: PathBuf,
}

impl std::fmt::Display for CapRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} already spent in {} draw(s) + {} for this one > cap {} ({}, set in {})",
            self.spent,
            self.draws,
            self.requested,
            self.cap,
            self.rule,
            self.config.display()
        )
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
        )
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LedgerError + '_ {
    move |source| LedgerError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// ε as an exact fraction of decimal strings, any size.
mod fraction {
    use super::*;

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Fraction {
        pub num: String,
        pub den: String,
    }

    pub fn to(e: &Epsilon) -> Fraction {
        Fraction {
            num: e.numer().to_str_radix(10),
            den: e.denom().to_str_radix(10),
        }
    }

    pub fn from(f: &Fraction) -> Result<Epsilon, String> {
        let term = |s: &str| {
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| BigUint::parse_bytes(s.as_bytes(), 10))
                .flatten()
        };
        match (term(&f.num), term(&f.den)) {
            (Some(n), Some(d)) => Epsilon::from_parts(n, d).ok_or_else(|| {
                format!(
                    "ε {}/{} is not positive: expected a fraction of positive whole numbers",
                    f.num, f.den
                )
            }),
            _ => Err(format!(
                "ε {{num: {:?}, den: {:?}}} is not a fraction of whole numbers",
                cut(&f.num),
                cut(&f.den)
            )),
        }
    }

    pub fn serialize<S: serde::Serializer>(e: &Epsilon, s: S) -> Result<S::Ok, S::Error> {
        to(e).serialize(s)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Epsilon, D::Error> {
        let f = Fraction::deserialize(d)?;
        from(&f).map_err(serde::de::Error::custom)
    }

    pub mod option {
        use super::*;

        pub fn serialize<S: serde::Serializer>(
            e: &Option<Epsilon>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            e.as_ref().map(to).serialize(s)
        }

        pub fn deserialize<'de, D: serde::Deserializer<'de>>(
            d: D,
        ) -> Result<Option<Epsilon>, D::Error> {
            Option::<Fraction>::deserialize(d)?
                .map(|f| from(&f).map_err(serde::de::Error::custom))
                .transpose()
        }
    }
}

/// Where a draw stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Drawn and recorded before anyone saw it; no decision recorded yet. Alone, it
    /// means coco stopped before one was made. Its ε counts as spent.
    Pending,
    /// A verified release was written to `output`.
    Written,
    /// Not written (refused by the checks, or writing failed). Its ε is spent.
    NotWritten,
    /// Discarded by the operator (or coco quit with it undecided). Its ε is spent.
    Discarded,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Written => "written",
            Status::NotWritten => "not written",
            Status::Discarded => "discarded",
        }
    }
}

/// What drew a release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    /// `coco release`.
    Release,
    /// The terminal UI.
    Tui,
}

/// A level's method, one spelling (in the ledger and the manifest; a tail is recorded
/// beside it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MethodKind {
    Hc,
    Hg,
    Naive,
}

impl MethodKind {
    pub fn of(method: Method) -> MethodKind {
        match method {
            Method::Hc | Method::HcTail(_) => MethodKind::Hc,
            Method::Hg => MethodKind::Hg,
            Method::Naive => MethodKind::Naive,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TailRecord {
    /// `L`.
    pub above: Size,
    /// `m` (a number, or `"auto"`). Absent in lines written before the ledger recorded
    /// it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<TailLength>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelRecord {
    pub name: String,
    #[serde(with = "fraction")]
    pub epsilon: Epsilon,
    pub method: MethodKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<TailRecord>,
}

impl LevelRecord {
    pub fn label(&self) -> String {
        let m = match self.method {
            MethodKind::Hc => "hc",
            MethodKind::Hg => "hg",
            MethodKind::Naive => "naive",
        };
        match self.tail {
            Some(t) => format!("{m}+tail>{}", t.above),
            None => m.to_string(),
        }
    }
}

/// An input file and its SHA-256: provenance for the agency (confidential, never
/// published).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputRecord {
    pub path: String,
    pub sha256: String,
}

/// Which dataset a draw was made on. Confidential: the digests are noise-free functions
/// of the data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetRecord {
    /// [`Dataset::content_digest`]; absent in lines written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// SHA-256 over the input files' digests (how older lines keyed spending).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The directory it was loaded from, canonical when it could be resolved.
    pub dir: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<InputRecord>,
    /// The population key and its first-level regions' keys
    /// ([`crate::data::population`]); absent in lines written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub population: Option<PopulationRecord>,
}

impl DatasetRecord {
    /// The key `coco ledger` groups by and shows: the content digest, else the
    /// fingerprint.
    pub fn key(&self) -> &str {
        self.content
            .as_deref()
            .or(self.fingerprint.as_deref())
            .unwrap_or("")
    }
}

/// One line of the ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LedgerEntry {
    /// The line format: [`LEDGER_VERSION`] (1 for lines read from the older format).
    pub v: u32,
    /// The draw's id: every line about one draw carries it.
    pub id: String,
    #[serde(with = "time::serde::rfc3339")]
    pub time: OffsetDateTime,
    pub dataset: DatasetRecord,
    pub levels: Vec<LevelRecord>,
    /// The budget spent on estimating `K`, if it was estimated.
    #[serde(
        default,
        with = "fraction::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_size_epsilon: Option<Epsilon>,
    /// The whole draw's ε, exactly.
    #[serde(with = "fraction")]
    pub total_epsilon: Epsilon,
    pub status: Status,
    /// Where it was written (or was to be written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    pub randomness: Randomness,
    pub tool: Tool,
    /// Why it was not written, or what the operator was told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// How the plan was tuned (absent in lines written before coco recorded it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuning: Option<Tuning>,
    /// On a `written` line: the SHA-256 of the release's `manifest.json`, so that
    /// `coco verify` can tell an edited manifest (absent in older lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_sha256: Option<String>,
    /// SHA-256 of the previous line's bytes ([`GENESIS`] for the first line); empty for
    /// lines of the older format, which were not chained.
    #[serde(default)]
    pub prev: String,
}

impl LedgerEntry {
    /// A line about a draw under `plan` on `dataset`, spending `epsilon`, not yet
    /// chained (`prev` is set by [`Ledger::append`]).
    pub fn for_draw(
        dataset: &Dataset,
        plan: &ReleasePlan,
        spend: DrawSpend<'_>,
        status: Status,
        tool: Tool,
    ) -> LedgerEntry {
        let levels = match spend.levels {
            true => plan
                .levels()
                .iter()
                .map(|l| LevelRecord {
                    name: l.name().to_string(),
                    epsilon: l.epsilon().clone(),
                    method: MethodKind::of(l.method()),
                    tail: l.method().tail().map(|t| TailRecord {
                        above: t.above,
                        groups: Some(t.groups),
                    }),
                })
                .collect(),
            false => Vec::new(),
        };
        let population = dataset.population_keys();
        LedgerEntry {
            v: LEDGER_VERSION,
            id: spend.id.to_string(),
            time: now(),
            dataset: DatasetRecord {
                content: Some(dataset.content_digest()),
                fingerprint: Some(dataset.fingerprint()),
                dir: canonical_dir(&dataset.dir),
                inputs: dataset
                    .inputs
                    .iter()
                    .map(|f| InputRecord {
                        path: f.path.clone(),
                        sha256: f.sha256.clone(),
                    })
                    .collect(),
                population: Some(PopulationRecord {
                    key: population.key,
                    parts: population.parts,
                }),
            },
            levels,
            max_size_epsilon: match &plan.max_size() {
                MaxSize::Estimate { epsilon } => Some(epsilon.clone()),
                MaxSize::Fixed(_) => None,
            },
            total_epsilon: spend.epsilon.clone(),
            status,
            output: None,
            randomness: spend.randomness,
            tool,
            note: None,
            tuning: Some(plan.tuning()),
            manifest_sha256: None,
            prev: String::new(),
        }
    }
}

/// What a ledger line about a draw spends.
#[derive(Clone, Copy, Debug)]
pub struct DrawSpend<'a> {
    pub id: &'a str,
    pub epsilon: &'a Epsilon,
    pub randomness: Randomness,
    /// Whether the levels were measured (false when only `K` was estimated).
    pub levels: bool,
}

/// The time now, to the second, in UTC.
pub fn now() -> OffsetDateTime {
    let t = OffsetDateTime::now_utc();
    t.replace_nanosecond(0).unwrap_or(t)
}

/// `time` as RFC 3339, e.g. `2026-11-23T19:50:00Z`.
pub fn format_time(time: OffsetDateTime) -> String {
    time.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| time.to_string())
}

/// The directory as the ledger records it: canonical, else absolute.
pub fn canonical_dir(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string()
}

/// A ledger line of the format before version 2.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LegacyEntry {
    id: String,
    time: String,
    dataset: String,
    dataset_dir: String,
    levels: Vec<LegacyLevel>,
    #[serde(default)]
    max_size_epsilon: Option<String>,
    total_epsilon: String,
    output: Option<String>,
    written: bool,
    randomness: String,
    tool: String,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    pending: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LegacyLevel {
    name: String,
    epsilon: String,
    method: String,
}

impl LegacyEntry {
    fn convert(self) -> Result<LedgerEntry, String> {
        let eps = |what: &str, text: &str| {
            Epsilon::parse_unbounded(text).map_err(|e| format!("{what}: {e}"))
        };
        let time =
            OffsetDateTime::parse(&self.time, &time::format_description::well_known::Rfc3339)
                .map_err(|_| format!("time {:?} is not an RFC 3339 time", cut(&self.time)))?;
        if self.dataset.len() != 64 || !self.dataset.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "dataset {:?} is not a SHA-256 fingerprint (64 hex digits)",
                cut(&self.dataset)
            ));
        }
        let levels = self
            .levels
            .iter()
            .map(|l| {
                let (method, tail) = match l.method.as_str() {
                    "hc" => (MethodKind::Hc, None),
                    "hg" => (MethodKind::Hg, None),
                    "naive" => (MethodKind::Naive, None),
                    other => match other.strip_prefix("hc+tail>").map(str::parse::<Size>) {
                        Some(Ok(above)) => (
                            MethodKind::Hc,
                            Some(TailRecord {
                                above,
                                groups: None,
                            }),
                        ),
                        _ => return Err(format!("method {:?} is not a method", cut(other))),
                    },
                };
                Ok(LevelRecord {
                    name: l.name.clone(),
                    epsilon: eps("level ε", &l.epsilon)?,
                    method,
                    tail,
                })
            })
            .collect::<Result<_, String>>()?;
        let randomness = match self.randomness.as_str() {
            "os" => Randomness::Os,
            other => match other
                .strip_prefix("seeded (")
                .and_then(|s| s.strip_suffix(')'))
                .map(str::parse::<u64>)
            {
                Some(Ok(seed)) => Randomness::Seeded { seed },
                _ => return Err(format!("randomness {:?} is not known", cut(other))),
            },
        };
        let tool = match self.tool.as_str() {
            "release" => Tool::Release,
            "tui" => Tool::Tui,
            other => return Err(format!("tool {:?} is not known", cut(other))),
        };
        Ok(LedgerEntry {
            v: 1,
            id: self.id,
            time,
            dataset: DatasetRecord {
                content: None,
                fingerprint: Some(self.dataset.to_ascii_lowercase()),
                dir: self.dataset_dir,
                inputs: Vec::new(),
                population: None,
            },
            levels,
            max_size_epsilon: self
                .max_size_epsilon
                .map(|e| eps("max_size_epsilon", &e))
                .transpose()?,
            total_epsilon: eps("total_epsilon", &self.total_epsilon)?,
            status: match (self.pending, self.written) {
                (true, _) => Status::Pending,
                (false, true) => Status::Written,
                (false, false) => Status::NotWritten,
            },
            output: self.output,
            randomness,
            tool,
            note: self.note,
            tuning: None,
            manifest_sha256: None,
            prev: String::new(),
        })
    }
}

/// A value cut to a readable length for a message.
fn cut(s: &str) -> String {
    const MAX: usize = 60;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// One problem found in the ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub line: usize,
    pub message: String,
}

/// The ledger as read: every line, and the defects found.
#[derive(Clone, Debug, Default)]
pub struct LedgerRead {
    /// Every readable line, in order.
    pub lines: Vec<LedgerEntry>,
    /// Lines that are wrong (unreadable, chain broken, ids that disagree): any of them
    /// stops every draw.
    pub problems: Vec<Problem>,
    /// The line number of a torn last line, if the file ends in one.
    pub torn_tail: Option<usize>,
    /// How many lines the file holds (readable or not).
    pub line_count: usize,
    /// The SHA-256 of each line's bytes (readable or not), in order: what the anchor
    /// compares.
    line_hashes: Vec<String>,
    /// The hash the next line chains to.
    next_prev: String,
    /// Whether the file is empty or ends with a line break.
    ends_with_newline: bool,
}

impl LedgerRead {
    /// One entry per draw: the latest line of each id, in the order the draws were
    /// first recorded.
    pub fn draws(&self) -> Vec<&LedgerEntry> {
        let mut out: Vec<&LedgerEntry> = Vec::with_capacity(self.lines.len());
        let mut at: HashMap<&str, usize> = HashMap::new();
        for e in &self.lines {
            match at.get(e.id.as_str()) {
                Some(&i) => out[i] = e,
                None => {
                    at.insert(&e.id, out.len());
                    out.push(e);
                }
            }
        }
        out
    }

    /// Whether a draw may be made on top of this ledger: nothing wrong, no torn tail.
    pub fn fail_closed(&self, path: &Path) -> Result<(), LedgerError> {
        if let Some(p) = self.problems.first() {
            return Err(LedgerError::Corrupt {
                path: path.to_path_buf(),
                line: p.line,
                problem: p.message.clone(),
            });
        }
        if let Some(line) = self.torn_tail {
            return Err(LedgerError::TornTail {
                path: path.to_path_buf(),
                line,
            });
        }
        Ok(())
    }

    /// The ε spent on a dataset: every draw whose line matches it by content, by
    /// directory or (older lines) by fingerprint.
    pub fn spent(&self, identity: &DatasetIdentity) -> Spend {
        let mine: Vec<&LedgerEntry> = self
            .draws()
            .into_iter()
            .filter(|e| identity.matches(&e.dataset))
            .collect();
        Spend {
            epsilon: Epsilon::sum(mine.iter().map(|e| &e.total_epsilon)),
            draws: mine.len(),
            pending: Epsilon::sum(
                mine.iter()
                    .filter(|e| e.status == Status::Pending)
                    .map(|e| &e.total_epsilon),
            ),
        }
    }
}

/// Parses the ledger's bytes. Never fails: problems are collected.
fn parse_ledger(bytes: &[u8]) -> LedgerRead {
    let mut read = LedgerRead {
        next_prev: GENESIS.to_string(),
        ends_with_newline: bytes.is_empty() || bytes.ends_with(b"\n"),
        ..LedgerRead::default()
    };
    let mut segments: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    if bytes.ends_with(b"\n") || bytes.is_empty() {
        segments.pop();
    }
    let last = segments.len();
    read.line_count = last;
    let mut chained = false;
    // id → (index of its first line, the latest status).
    let mut ids: HashMap<String, usize> = HashMap::new();
    for (i, raw) in segments.iter().enumerate() {
        let line = i + 1;
        let problem = |message: String| Problem { line, message };
        let parsed = parse_line(raw);
        read.line_hashes.push(sha256_hex(raw));
        let entry = match parsed {
            Ok(e) => e,
            Err(message) => {
                if line == last && !read.ends_with_newline && looks_torn(raw) {
                    read.torn_tail = Some(line);
                } else if line == last && !read.ends_with_newline {
                    read.problems.push(problem(format!(
                        "{message}; the last line has no line break but is not a line cut short (it holds more than one line's text, or text coco never writes), so it is not a torn line `coco ledger repair` could set aside"
                    )));
                } else {
                    read.problems.push(problem(message));
                }
                // The next line chains to this one as it is, readable or not.
                read.next_prev = sha256_hex(raw);
                continue;
            }
        };
        if entry.v >= 2 {
            if entry.prev != read.next_prev {
                read.problems.push(problem(format!(
                    "the hash chain is broken: this line follows a line whose SHA-256 is {}, but records {} (a line before it was changed, removed or inserted)",
                    cut(&read.next_prev),
                    cut(&entry.prev)
                )));
            }
            chained = true;
        } else if chained {
            read.problems.push(problem(
                "a line in the old format after chained lines (written by an older coco, or by hand)"
                    .into(),
            ));
        }
        read.next_prev = sha256_hex(raw);
        if let Some(&first) = ids.get(&entry.id) {
            let earlier: &LedgerEntry = &read.lines[first];
            let latest = read
                .lines
                .iter()
                .rev()
                .find(|e| e.id == entry.id)
                .expect("seen");
            if latest.status != Status::Pending {
                read.problems.push(problem(format!(
                    "draw {} was already decided ({}) and has another line",
                    entry.id,
                    latest.status.label()
                )));
            } else if earlier.total_epsilon != entry.total_epsilon
                || earlier.dataset.content != entry.dataset.content
                || earlier.dataset.fingerprint != entry.dataset.fingerprint
            {
                read.problems.push(problem(format!(
                    "draw {} has lines that disagree on its dataset or its ε",
                    entry.id
                )));
            }
        } else {
            ids.insert(entry.id.clone(), read.lines.len());
        }
        read.lines.push(entry);
    }
    read
}

/// Whether an unreadable last line without a line break is a line cut short (coco
/// stopped while appending it): its text is the beginning of a JSON value, cut inside a
/// character at worst. Lines joined into one, or any complete text that is not an
/// entry, are not.
fn looks_torn(raw: &[u8]) -> bool {
    let text = match std::str::from_utf8(raw) {
        Ok(t) => t,
        // Cut inside the last character.
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&raw[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return false,
    };
    match serde_json::from_str::<serde_json::Value>(text) {
        Err(e) => e.is_eof(),
        Ok(_) => false,
    }
}

/// One line: the current format (with `v`) or the older one.
fn parse_line(raw: &[u8]) -> Result<LedgerEntry, String> {
    let text = std::str::from_utf8(raw).map_err(|e| {
        format!(
            "not UTF-8 (invalid byte at column {}): expected one JSON object per line",
            e.valid_up_to() + 1
        )
    })?;
    if text.trim().is_empty() {
        return Err("an empty line: expected one JSON object per line".into());
    }
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        format!(
            "not JSON ({}): expected one JSON object per line",
            cut(&e.to_string())
        )
    })?;
    let entry = match value.get("v") {
        Some(_) => serde_json::from_value::<LedgerEntry>(value)
            .map_err(|e| format!("not a ledger entry: {}", cut_long(&e.to_string())))?,
        None => serde_json::from_value::<LegacyEntry>(value)
            .map_err(|e| format!("not a ledger entry: {}", cut_long(&e.to_string())))?
            .convert()?,
    };
    if entry.v == 0 || entry.v > LEDGER_VERSION {
        return Err(format!(
            "format version {} is not known to this coco (expected 1 to {LEDGER_VERSION})",
            entry.v
        ));
    }
    if entry.id.is_empty()
        || entry.id.len() > 64
        || !entry.id.bytes().all(|b| b.is_ascii_alphanumeric())
    {
        return Err(format!("id {:?} is not a draw id", cut(&entry.id)));
    }
    Ok(entry)
}

fn cut_long(s: &str) -> String {
    const MAX: usize = 200;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The ε spent on a dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spend {
    /// `None` when nothing was spent.
    pub epsilon: Option<Epsilon>,
    pub draws: usize,
    /// The part of `epsilon` drawn and not yet decided (pending: counted as spent).
    pub pending: Option<Epsilon>,
}

impl Spend {
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
    /// The anchor: what it says of the ledger, or why the ledger does not hold what
    /// it anchored.
    pub anchor: Result<AnchorState, String>,
}

impl Verification {
    pub fn ok(&self) -> bool {
        self.problems.is_empty() && self.torn_tail.is_none() && self.anchor.is_ok()
    }
}

/// What `coco ledger repair` did.
#[derive(Clone, Debug, Serialize)]
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

/// The ledger (in coco's data directory) and the caps on spending (in its
/// configuration directory).
#[derive(Clone, Debug)]
pub struct Ledger {
    home: PathBuf,
    config_home: PathBuf,
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
    /// The ledger in `$COCO_HOME`, or in the user's data directory (its caps in the
    /// user's configuration directory).
    pub fn open_default() -> Result<Ledger, LedgerError> {
        Ok(Ledger {
            home: home_dir()?,
            config_home: config_dir()?,
        })
    }

    /// The ledger and its configuration in one given home directory.
    pub fn at(home: impl Into<PathBuf>) -> Ledger {
        let home = home.into();
        Ledger {
            config_home: home.clone(),
            home,
        }
    }

    /// The ledger in `home`, its configuration in `config_home`.
    pub fn with_config(home: impl Into<PathBuf>, config_home: impl Into<PathBuf>) -> Ledger {
        Ledger {
            home: home.into(),
            config_home: config_home.into(),
        }
    }

    /// Where the ledger and the recent datasets are kept.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Where the operator's settings are kept (`config.toml`, `keymap.toml`).
    pub fn config_home(&self) -> &Path {
        &self.config_home
    }

    /// `config.toml` where older versions kept it (beside the ledger), when that is
    /// not where it is kept now.
    fn legacy_config_path(&self) -> Option<PathBuf> {
        (self.home != self.config_home).then(|| self.home.join(CONFIG_FILE))
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
    /// Requires the lock. Refuses on a ledger with any defect.
    pub fn append(
        &self,
        _lock: &LedgerLock,
        mut entry: LedgerEntry,
    ) -> Result<LedgerEntry, LedgerError> {
        self.ensure_home()?;
        let path = self.path();
        let read = self.read_strict()?;
        entry.v = LEDGER_VERSION;
        entry.prev = read.next_prev.clone();
        let mut line = serde_json::to_string(&entry).expect("ledger entries serialise");
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
        // records) and the next append brings up to date.
        let head = sha256_hex(line.trim_matches('\n').as_bytes());
        self.write_anchor(read.line_count + 1, &head)?;
        Ok(entry)
    }

    /// Checks every line, the chain, the ids and the anchor; lists every problem.
    pub fn verify(&self) -> Result<Verification, LedgerError> {
        let (read, anchor) = self.read_anchored()?;
        Ok(Verification {
            ledger: self.path(),
            lines: read.line_count,
            draws: read.draws().len(),
            problems: read.problems.clone(),
            torn_tail: read.torn_tail,
            anchor: self
                .check_anchor(&read, anchor.as_ref())
                .map_err(|e| e.to_string()),
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
mod tests {
    use super::*;

    fn dataset(sizes: &[u32]) -> Dataset {
        use crate::data::{GroupsForm, Hierarchy};
        use crate::histogram::CountOfCounts;
        let h = Hierarchy::from_leaf_paths(
            vec!["nation".into(), "county".into()],
            &[vec!["N".into(), "a".into()], vec!["N".into(), "b".into()]],
        )
        .unwrap();
        Dataset::from_leaf_histograms(
            PathBuf::new(),
            h,
            GroupsForm::Histograms,
            vec![],
            vec![
                CountOfCounts::from_sizes(sizes.iter().copied()),
                CountOfCounts::from_sizes([1, 2]),
            ],
        )
    }

    fn entry(d: &Dataset, eps: &str, status: Status) -> LedgerEntry {
        let plan = ReleasePlan::uniform(
            &d.hierarchy,
            &Epsilon::parse(eps).unwrap(),
            Method::Hc,
            crate::release::plan::MaxSize::Fixed(100),
        )
        .unwrap();
        let id = new_id();
        LedgerEntry::for_draw(
            d,
            &plan,
            DrawSpend {
                id: &id,
                epsilon: &plan.total_epsilon().unwrap(),
                randomness: Randomness::Os,
                levels: true,
            },
            status,
            Tool::Release,
        )
    }

    #[test]
    fn append_read_and_sum_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path().join("home"));
        let d = dataset(&[1, 1, 3]);
        let id = DatasetIdentity::of(&d);
        let lock = ledger.lock().unwrap();
        // Totals beyond what an operator may type are kept exactly.
        for eps in ["0.30000000000000004", "1/3", "0.12345678901234567"] {
            ledger
                .append(&lock, entry(&d, eps, Status::Written))
                .unwrap();
        }
        drop(lock);
        let read = ledger.read_strict().unwrap();
        let spent = read.spent(&id);
        let expected = Epsilon::parse_unbounded("0.30000000000000004")
            .unwrap()
            .add(&Epsilon::parse("1/3").unwrap())
            .add(&Epsilon::parse("0.12345678901234567").unwrap());
        assert_eq!(spent.epsilon.unwrap(), expected);
        assert_eq!(spent.draws, 3);
        // Another dataset is not charged.
        assert_eq!(read.spent(&DatasetIdentity::of(&dataset(&[5]))).draws, 0);
    }

    #[test]
    fn the_content_key_ignores_codes_and_order() {
        use crate::data::{GroupsForm, Hierarchy};
        use crate::histogram::CountOfCounts;
        let a = dataset(&[1, 1, 3]);
        let h = Hierarchy::from_leaf_paths(
            vec!["country".into(), "district".into()],
            &[vec!["X".into(), "q".into()], vec!["X".into(), "p".into()]],
        )
        .unwrap();
        let b = Dataset::from_leaf_histograms(
            PathBuf::new(),
            h,
            GroupsForm::GroupSizes,
            vec![],
            vec![
                CountOfCounts::from_sizes([2, 1]),
                CountOfCounts::from_sizes([3, 1, 1]),
            ],
        );
        assert_eq!(a.content_digest(), b.content_digest());
        assert_ne!(a.content_digest(), dataset(&[1, 1, 4]).content_digest());
    }

    #[test]
    fn every_defect_but_a_torn_tail_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path());
        let d = dataset(&[1]);
        let lock = ledger.lock().unwrap();
        for _ in 0..3 {
            ledger
                .append(&lock, entry(&d, "1", Status::Written))
                .unwrap();
        }
        let good = std::fs::read_to_string(ledger.path()).unwrap();
        let lines: Vec<&str> = good.lines().collect();
        // An edited ε: the line still parses, the chain breaks at the next line.
        let edited = good.replacen("\"num\":\"1\"", "\"num\":\"0\"", 1);
        std::fs::write(ledger.path(), &edited).unwrap();
        let e = ledger.read_strict().unwrap_err().to_string();
        assert!(
            e.contains("ledger.jsonl:1: not a ledger entry: ε 0/2 is not positive"),
            "{e}"
        );
        let edited = good.replacen("\"num\":\"1\"", "\"num\":\"2\"", 1);
        std::fs::write(ledger.path(), &edited).unwrap();
        let e = ledger.read_strict().unwrap_err().to_string();
        assert!(
            e.contains("ledger.jsonl:2: the hash chain is broken"),
            "{e}"
        );
        // A removed line.
        std::fs::write(ledger.path(), format!("{}\n{}\n", lines[0], lines[2])).unwrap();
        assert!(
            ledger
                .read_strict()
                .unwrap_err()
                .to_string()
                .contains(":2: the hash chain")
        );
        // A stray byte.
        std::fs::write(ledger.path(), format!("{}\nx\n{}\n", lines[0], lines[1])).unwrap();
        let e = ledger.read_strict().unwrap_err();
        assert!(e.is_policy());
        assert!(e.to_string().contains("ledger.jsonl:2: not JSON"), "{e}");
        // After an unreadable line, the next one chains to that line as it is (so the
        // message names its real digest), and every line is counted once.
        let read = ledger.read().unwrap();
        assert_eq!(read.line_count, 3);
        assert_eq!(read.problems.len(), 2);
        assert!(read.problems[1].message.contains(&cut(&sha256_hex(b"x"))));
        assert_eq!(ledger.verify().unwrap().lines, 3);
        // Non-ASCII text in a field is read, not sliced.
        std::fs::write(
            ledger.path(),
            format!("{}\n", lines[0].replacen("\"dir\":\"", "\"dir\":\"é/", 1)),
        )
        .unwrap();
        assert!(ledger.read().unwrap().problems.is_empty());
        // … but it holds fewer lines than the anchor records: draws stop.
        assert!(matches!(
            ledger.read_strict(),
            Err(LedgerError::AnchorLost { anchored: 3, .. })
        ));
        // A torn last line: readers go on, draws stop until it is repaired.
        std::fs::write(ledger.path(), format!("{good}{{\"v\":2,\"id\":\"ab")).unwrap();
        let read = ledger.read().unwrap();
        assert_eq!((read.lines.len(), read.torn_tail), (3, Some(4)));
        assert!(matches!(
            ledger.read_strict(),
            Err(LedgerError::TornTail { line: 4, .. })
        ));
        assert!(
            ledger
                .append(&lock, entry(&d, "1", Status::Written))
                .is_err()
        );
        drop(lock);
        assert!(matches!(
            ledger.repair().unwrap(),
            Repair::SetAsideTornTail { line: 4, .. }
        ));
        assert_eq!(std::fs::read_to_string(ledger.path()).unwrap(), good);
        assert!(ledger.read_strict().is_ok());
        assert!(matches!(ledger.repair().unwrap(), Repair::NothingToRepair));
        // Anything else is not repaired.
        std::fs::write(ledger.path(), format!("x\n{good}")).unwrap();
        assert!(matches!(
            ledger.repair(),
            Err(LedgerError::NotRepairable { .. })
        ));
    }

    #[test]
    fn a_pending_draw_and_its_decision_count_once() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path());
        let d = dataset(&[1]);
        let id = DatasetIdentity::of(&d);
        let lock = ledger.lock().unwrap();
        let shown = entry(&d, "1/2", Status::Pending);
        ledger.append(&lock, shown.clone()).unwrap();
        ledger
            .append(&lock, entry(&d, "1/4", Status::Written))
            .unwrap();
        assert_eq!(ledger.read().unwrap().spent(&id).draws, 2);
        let decided = LedgerEntry {
            status: Status::Discarded,
            ..shown.clone()
        };
        ledger.append(&lock, decided.clone()).unwrap();
        let read = ledger.read_strict().unwrap();
        let spent = read.spent(&id);
        assert_eq!((spent.text(), spent.draws), ("0.75".to_string(), 2));
        assert_eq!(read.draws()[0].status, Status::Discarded);
        // A second decision is a defect: the line is written, then the ledger refuses.
        ledger.append(&lock, decided).unwrap();
        let e = ledger.read_strict().unwrap_err().to_string();
        assert!(
            e.contains(":4: draw") && e.contains("was already decided"),
            "{e}"
        );
    }

    #[test]
    fn a_pending_draw_reads_as_awaiting_while_its_session_runs_and_counts_as_pending() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path());
        let d = dataset(&[1]);
        let id = DatasetIdentity::of(&d);
        let lock = ledger.lock().unwrap();
        ledger
            .append(&lock, entry(&d, "1/4", Status::Written))
            .unwrap();
        let stale = entry(&d, "1/8", Status::Pending);
        ledger.append(&lock, stale.clone()).unwrap();
        let live = entry(&d, "1/2", Status::Pending);
        ledger.append(&lock, live.clone()).unwrap();
        let read = ledger.read().unwrap();
        let spent = read.spent(&id);
        assert_eq!(spent.text(), "0.875");
        assert_eq!(spent.pending, Some(Epsilon::parse("5/8").unwrap()));
        // The session holding the lock awaits its decision on the last line; an older
        // pending line is a session that stopped.
        assert!(ledger.held_elsewhere());
        assert!(
            ledger
                .describe(&read, &live)
                .starts_with("pending: drawn, awaiting the operator's decision")
        );
        assert!(
            ledger
                .describe(&read, &stale)
                .starts_with("pending: drawn, no decision recorded (the session stopped")
        );
        drop(lock);
        assert!(!ledger.held_elsewhere());
        assert!(
            ledger
                .describe(&read, &live)
                .contains("the session stopped before deciding")
        );
        assert_eq!(
            ledger.describe(&read, read.draws()[0]),
            read.draws()[0].note.clone().unwrap_or_default()
        );
    }

    #[test]
    fn the_strictest_matching_cap_binds() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path());
        let data_dir = tempfile::tempdir().unwrap();
        let mut d = dataset(&[1]);
        d.dir = data_dir.path().to_path_buf();
        let id = DatasetIdentity::of(&d);
        ledger
            .set_cap(
                &CapKey::Digest(id.content.clone()),
                &Epsilon::parse("4").unwrap(),
                None,
            )
            .unwrap();
        ledger
            .set_cap(
                &CapKey::Directory(id.dir.clone()),
                &Epsilon::parse("0.5").unwrap(),
                None,
            )
            .unwrap();
        std::fs::write(
            ledger.config_path(),
            format!(
                "default_cap = 0.1\n{}",
                std::fs::read_to_string(ledger.config_path()).unwrap()
            ),
        )
        .unwrap();
        let read = ledger.read().unwrap();
        let status = ledger.cap_status(&read, &id).unwrap();
        assert_eq!(
            status.caps.len(),
            2,
            "the default does not apply: {status:?}"
        );
        assert_eq!(status.binding().unwrap().cap.to_string(), "0.5");
        assert!(matches!(
            status.binding().unwrap().source,
            CapSource::Directory { .. }
        ));
        let e = ledger
            .check_cap(&read, &id, &Epsilon::parse("1").unwrap())
            .unwrap_err();
        assert!(
            e.to_string().contains("cap 0.5 (the cap on directory"),
            "{e}"
        );
        // A dataset without a cap of its own gets the default.
        let other = DatasetIdentity::of(&dataset(&[9]));
        let status = ledger.cap_status(&read, &other).unwrap();
        assert_eq!(status.binding().unwrap().source, CapSource::Default);
    }

    #[test]
    fn caps_in_an_older_versions_place_still_bind_and_move_on_the_next_set() {
        let data = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        let config_home = config.path().join("coco");
        let ledger = Ledger::with_config(data.path(), &config_home);
        let a = DatasetIdentity::of(&dataset(&[1]));
        let b = DatasetIdentity::of(&dataset(&[2]));
        // An older version wrote config.toml beside the ledger.
        std::fs::write(
            data.path().join(CONFIG_FILE),
            format!("default_cap = 3\n[caps]\n\"{}\" = 0.5\n", a.content),
        )
        .unwrap();
        let read = ledger.read().unwrap();
        let cap = |id: &DatasetIdentity| {
            ledger
                .cap_status(&read, id)
                .unwrap()
                .binding()
                .map(|r| r.cap.to_string())
        };
        assert_eq!(cap(&a).as_deref(), Some("0.5"));
        assert_eq!(cap(&b).as_deref(), Some("3"));
        // Setting a cap writes the new place, carrying the old settings over.
        ledger
            .set_cap(
                &CapKey::Digest(b.content.clone()),
                &Epsilon::parse("2").unwrap(),
                None,
            )
            .unwrap();
        assert_eq!(ledger.config_path(), config_home.join(CONFIG_FILE));
        let text = std::fs::read_to_string(ledger.config_path()).unwrap();
        assert!(
            text.contains("default_cap = 3") && text.contains(&a.content),
            "{text}"
        );
        assert_eq!(cap(&a).as_deref(), Some("0.5"));
        assert_eq!(cap(&b).as_deref(), Some("2"));
        // Both files are read: a looser cap in the new one never lifts the old one's.
        ledger
            .set_cap(
                &CapKey::Digest(a.content.clone()),
                &Epsilon::parse("9").unwrap(),
                None,
            )
            .unwrap();
        assert_eq!(cap(&a).as_deref(), Some("0.5"));
        std::fs::remove_file(data.path().join(CONFIG_FILE)).unwrap();
        assert_eq!(cap(&a).as_deref(), Some("9"));
    }

    #[test]
    fn older_lines_are_read_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path());
        let fp = "ab".repeat(32);
        let line = format!(
            r#"{{"id":"0123456789abcdef","time":"2026-11-22T01:02:03Z","dataset":"{fp}","dataset_dir":"/d","levels":[{{"name":"n","epsilon":"0.30000000000000004","method":"hc+tail>20"}}],"total_epsilon":"1.00000000000000004","output":null,"written":true,"randomness":"seeded (7)","tool":"release"}}"#
        );
        std::fs::write(ledger.path(), format!("{line}\n")).unwrap();
        let read = ledger.read_strict().unwrap();
        let e = &read.lines[0];
        assert_eq!(
            e.total_epsilon,
            Epsilon::parse_unbounded("1.00000000000000004").unwrap()
        );
        assert_eq!(e.status, Status::Written);
        assert_eq!(e.randomness, Randomness::Seeded { seed: 7 });
        assert_eq!(
            e.levels[0].tail,
            Some(TailRecord {
                above: 20,
                groups: None
            })
        );
        // A chained line may follow; an old-format line may not follow a chained one.
        let lock = ledger.lock().unwrap();
        ledger
            .append(&lock, entry(&dataset(&[1]), "1", Status::Written))
            .unwrap();
        assert!(ledger.read_strict().is_ok());
        let mut f = OpenOptions::new().append(true).open(ledger.path()).unwrap();
        f.write_all(
            format!("{}\n", line.replace("0123456789abcdef", "fedcba9876543210")).as_bytes(),
        )
        .unwrap();
        let e = ledger.read_strict().unwrap_err().to_string();
        assert!(
            e.contains(":3: a line in the old format after chained lines"),
            "{e}"
        );
    }

    #[test]
    fn tails_are_recorded_as_numbers_and_checked_on_reading() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path().join("home"));
        let d = dataset(&[1, 1, 3]);
        let tail = crate::estimate::Tail::DEFAULT;
        let plan = ReleasePlan::uniform(
            &d.hierarchy,
            &Epsilon::parse("1").unwrap(),
            Method::HcTail(tail),
            crate::release::plan::MaxSize::Fixed(100),
        )
        .unwrap();
        let id = new_id();
        let e = LedgerEntry::for_draw(
            &d,
            &plan,
            DrawSpend {
                id: &id,
                epsilon: &plan.total_epsilon().unwrap(),
                randomness: Randomness::Os,
                levels: true,
            },
            Status::Written,
            Tool::Release,
        );
        let lock = ledger.lock().unwrap();
        ledger.append(&lock, e).unwrap();
        drop(lock);
        let text = std::fs::read_to_string(ledger.path()).unwrap();
        assert_eq!(
            text.matches(r#""method":"hc","tail":{"above":20,"groups":1000}}"#)
                .count(),
            2,
            "{text}"
        );
        let read = ledger.read_strict().unwrap();
        for level in &read.lines[0].levels {
            assert_eq!(
                level.tail,
                Some(TailRecord {
                    above: 20,
                    groups: Some(TailLength::Fixed(crate::estimate::TailGroups::DEFAULT))
                })
            );
        }
        // Read back, the line is written again byte for byte.
        let mut again = serde_json::to_string(&read.lines[0]).unwrap();
        again.push('\n');
        assert_eq!(again, text);
        // coco never writes m out of range: such a line is a defect.
        std::fs::write(
            ledger.path(),
            text.replacen(r#""groups":1000"#, r#""groups":0"#, 1),
        )
        .unwrap();
        let e = ledger.read_strict().unwrap_err().to_string();
        assert!(
            e.contains(":1: not a ledger entry: a tail of 0 groups: expected a whole number from 1 to 10000000"),
            "{e}"
        );
    }

    #[test]
    fn files_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path().join("home"));
        let lock = ledger.lock().unwrap();
        ledger
            .append(&lock, entry(&dataset(&[1]), "1", Status::Written))
            .unwrap();
        ledger
            .set_cap(
                &CapKey::Digest("ab".repeat(32)),
                &Epsilon::parse("1").unwrap(),
                None,
            )
            .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for name in [LEDGER_FILE, LOCK_FILE, CONFIG_FILE, ANCHOR_FILE] {
                let mode = std::fs::metadata(ledger.home().join(name))
                    .unwrap()
                    .permissions()
                    .mode();
                assert_eq!(mode & 0o777, 0o600, "{name}");
            }
        }
    }

    #[test]
    fn config_caps() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path());
        let key = "ab".repeat(32);
        let digest = CapKey::Digest(key.clone());
        ledger
            .set_cap(&digest, &Epsilon::parse("1/2").unwrap(), None)
            .unwrap();
        ledger
            .set_cap(&digest, &Epsilon::parse("2").unwrap(), None)
            .unwrap();
        let config = ledger.config_text_caps();
        assert_eq!(config, vec![(key.clone(), "2".to_string())]);
        std::fs::write(
            ledger.config_path(),
            format!("default_cap = 3\n[caps]\n\"{key}\" = 0.5\n\"/d\" = \"x\"\n"),
        )
        .unwrap();
        let e = ledger.config_text_error();
        assert!(e.ends_with("config.toml:4: ε \"x\" is not a number: expected a decimal like 0.25 or a fraction like \"1/3\""), "{e}");
        std::fs::write(ledger.config_path(), "defaultcap = 3\n").unwrap();
        assert!(
            ledger
                .config_text_error()
                .contains("config.toml:1: unknown key \"defaultcap\"")
        );
    }

    /// Issue 23: a key that could never bind is an error naming its line: a shortened
    /// or upper-case digest, a relative path, `default_cap` written below `[caps]`, a
    /// directory cap's table with an unknown field.
    #[test]
    fn config_keys_are_read_strictly() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path());
        let full = "ab".repeat(32);
        for (text, line, expected) in [
            (
                "[caps]\n\"/d\" = 1\ndefault_cap = 4\n".to_string(),
                3,
                "default_cap is not a dataset: it belongs above the [caps] line",
            ),
            (
                format!("[caps]\n\"{}\" = 1\n", &full[..12]),
                2,
                "a digest of 12 hex digits: expected all 64",
            ),
            (
                format!("[caps]\n\"{}\" = 1\n", full.to_uppercase()),
                2,
                "a digest in upper case",
            ),
            (
                "[caps]\n\"some/dir\" = 1\n".to_string(),
                2,
                "neither a dataset directory (an absolute path) nor a digest",
            ),
            (
                "[caps]\n\"/d\" = { epsilon = 1, colour = \"red\" }\n".to_string(),
                2,
                "unknown field \"colour\"",
            ),
            (
                format!(
                    "[caps]\n\"/d\" = {{ epsilon = 1, content = \"{}\" }}\n",
                    &full[..10]
                ),
                2,
                "content \"abababab",
            ),
        ] {
            std::fs::write(ledger.config_path(), &text).unwrap();
            let e = ledger.config_text_error();
            assert!(
                e.contains(&format!("config.toml:{line}:")) && e.contains(expected),
                "{text}: {e}"
            );
        }
        // The table a directory cap is written as reads back.
        std::fs::write(
            ledger.config_path(),
            format!("[caps]\n\"/d\" = {{ epsilon = \"1/2\", content = \"{full}\", population = \"{full}\" }}\n"),
        )
        .unwrap();
        assert_eq!(
            ledger.config_text_caps(),
            vec![("/d".to_string(), "0.5".to_string())]
        );
    }

    /// Issue 23: a directory cap covers the data the ledger recorded for that directory
    /// and the data it held when the cap was set, wherever that data is copied.
    #[test]
    fn a_directory_cap_follows_its_data() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path().join("home"));
        let a_dir = tempfile::tempdir().unwrap();
        let b_dir = tempfile::tempdir().unwrap();
        let mut a = dataset(&[1, 2, 3]);
        a.dir = a_dir.path().to_path_buf();
        let mut copy = a.clone();
        copy.dir = b_dir.path().to_path_buf();
        let (ia, ib) = (DatasetIdentity::of(&a), DatasetIdentity::of(&copy));
        // Set with the data's keys: the copy is covered before any draw.
        let keys = a.population_keys();
        ledger
            .set_cap(
                &CapKey::Directory(ia.dir.clone()),
                &Epsilon::parse("0.5").unwrap(),
                Some((&ia.content, &keys.key)),
            )
            .unwrap();
        let read = ledger.read().unwrap();
        let rule = |id: &DatasetIdentity| {
            ledger
                .cap_status(&read, id)
                .unwrap()
                .binding()
                .map(CapRule::describe)
        };
        assert!(rule(&ia).unwrap().starts_with("the cap on directory"));
        assert!(
            rule(&ib)
                .unwrap()
                .contains("which held the same data when the cap was set"),
            "{:?}",
            rule(&ib)
        );
        // Written by hand, without the data: the ledger's record of the directory binds.
        std::fs::write(
            ledger.config_path(),
            format!("[caps]\n\"{}\" = 0.5\n", ia.dir),
        )
        .unwrap();
        assert_eq!(rule(&ib), None);
        let lock = ledger.lock().unwrap();
        ledger
            .append(&lock, entry(&a, "0.4", Status::Written))
            .unwrap();
        drop(lock);
        let read = ledger.read().unwrap();
        let status = ledger.cap_status(&read, &ib).unwrap();
        assert!(
            status
                .binding()
                .unwrap()
                .describe()
                .contains("for which the ledger records the same data"),
            "{status:?}"
        );
        // The copy's spending includes the original's, by content.
        assert_eq!(status.spent.text(), "0.4");
        let e = ledger
            .check_cap(&read, &ib, &Epsilon::parse("0.2").unwrap())
            .unwrap_err();
        assert!(e.is_policy(), "{e}");
    }

    /// Issue 23: restructured copies of the same people are charged for each other's
    /// draws by the population key; other data is not.
    #[test]
    fn spending_follows_the_population_across_hierarchies() {
        use crate::data::{GroupsForm, Hierarchy};
        use crate::histogram::CountOfCounts;
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path());
        // Two provinces, two leaves each.
        let h = Hierarchy::from_leaf_paths(
            vec!["n".into(), "p".into(), "l".into()],
            &[
                vec!["N".into(), "A".into(), "a1".into()],
                vec!["N".into(), "A".into(), "a2".into()],
                vec!["N".into(), "B".into(), "b1".into()],
                vec!["N".into(), "B".into(), "b2".into()],
            ],
        )
        .unwrap();
        let leaves = |l: Vec<Vec<u32>>| -> Vec<CountOfCounts> {
            l.into_iter().map(CountOfCounts::from_sizes).collect()
        };
        let d = Dataset::from_leaf_histograms(
            PathBuf::new(),
            h.clone(),
            GroupsForm::GroupSizes,
            vec![],
            leaves(vec![vec![1, 2], vec![3, 0], vec![2, 2, 5], vec![1]]),
        );
        let lock = ledger.lock().unwrap();
        ledger
            .append(&lock, entry(&d, "1", Status::Written))
            .unwrap();
        drop(lock);
        let read = ledger.read_strict().unwrap();
        let charged = |x: &Dataset| read.spent(&DatasetIdentity::of(x)).draws;
        let flat = |sizes: Vec<Vec<u32>>| {
            let names: Vec<String> = (0..sizes.len()).map(|i| format!("x{i}")).collect();
            let h = Hierarchy::from_leaf_paths(
                vec!["n".into(), "l".into()],
                &names
                    .iter()
                    .map(|c| vec!["N".to_string(), c.clone()])
                    .collect::<Vec<_>>(),
            )
            .unwrap();
            Dataset::from_leaf_histograms(
                PathBuf::new(),
                h,
                GroupsForm::GroupSizes,
                vec![],
                leaves(sizes),
            )
        };
        // The leaf level dropped (provinces as leaves), a leaf split, an empty leaf, a
        // group of size 0 or 1 more, one entity more: charged.
        assert_eq!(charged(&flat(vec![vec![1, 2, 3, 0], vec![2, 2, 5, 1]])), 1);
        assert_eq!(
            charged(&flat(vec![
                vec![1],
                vec![2],
                vec![3, 0],
                vec![2, 2, 5, 1],
                vec![]
            ])),
            1
        );
        assert_eq!(
            charged(&flat(vec![vec![1, 2, 3, 0, 0], vec![2, 2, 5, 1]])),
            1
        );
        assert_eq!(charged(&flat(vec![vec![1, 2, 3, 1], vec![2, 2, 5, 1]])), 1);
        assert_eq!(charged(&flat(vec![vec![1, 2, 3], vec![2, 3, 5, 1]])), 1);
        // One province alone: charged (a first-level region, cut whole).
        assert_eq!(charged(&flat(vec![vec![2, 2, 5], vec![1]])), 1);
        // Two entities more, or another population: not.
        assert_eq!(charged(&flat(vec![vec![1, 2, 3, 0], vec![2, 2, 7, 1]])), 0);
        assert_eq!(charged(&flat(vec![vec![9, 9], vec![4]])), 0);
    }

    /// Issue 23: a ledger deleted, truncated or replaced by an older copy stops draws
    /// until the operator restores it or accepts the loss; a ledger with no anchor yet
    /// (an upgrade) gets one.
    #[test]
    fn a_lost_ledger_is_noticed_by_its_anchor() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path());
        let d = dataset(&[1]);
        let lock = ledger.lock().unwrap();
        // First use: no ledger, no anchor.
        assert_eq!(ledger.read_checked().unwrap().1, AnchorState::Fresh);
        for _ in 0..3 {
            ledger
                .append(&lock, entry(&d, "1", Status::Written))
                .unwrap();
        }
        drop(lock);
        let good = std::fs::read(ledger.path()).unwrap();
        assert_eq!(
            ledger.read_checked().unwrap().1,
            AnchorState::Holds {
                anchored: 3,
                lines: 3
            }
        );
        // Deleted, or its last line removed: refused, naming the command.
        let older: Vec<u8> = {
            let text = String::from_utf8(good.clone()).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            format!("{}\n{}\n", lines[0], lines[1]).into_bytes()
        };
        for bytes in [Vec::new(), older.clone()] {
            std::fs::write(ledger.path(), &bytes).unwrap();
            let e = ledger.read_strict().unwrap_err();
            assert!(e.is_policy());
            assert!(
                e.to_string().contains("coco ledger reanchor --accept-loss"),
                "{e}"
            );
        }
        std::fs::remove_file(ledger.path()).unwrap();
        assert!(matches!(
            ledger.read_strict(),
            Err(LedgerError::AnchorLost { .. })
        ));
        // Another chain of the same length put in its place.
        let other = Ledger::at(dir.path().join("other"));
        let lock = other.lock().unwrap();
        for _ in 0..3 {
            other
                .append(&lock, entry(&d, "1", Status::Written))
                .unwrap();
        }
        drop(lock);
        std::fs::copy(other.path(), ledger.path()).unwrap();
        assert!(
            ledger
                .read_strict()
                .unwrap_err()
                .to_string()
                .contains("is not the line anchored")
        );
        // Restored from a backup: draws go on; reanchor without --accept-loss refuses
        // a loss.
        std::fs::write(ledger.path(), &older).unwrap();
        assert!(matches!(
            ledger.reanchor(false),
            Err(LedgerError::AnchorLost { .. })
        ));
        std::fs::write(ledger.path(), &good).unwrap();
        assert!(ledger.read_strict().is_ok());
        assert!(matches!(
            ledger.reanchor(false).unwrap(),
            Reanchored::InAgreement { lines: 3 }
        ));
        // Accepting the loss keeps the old anchor.
        std::fs::write(ledger.path(), &older).unwrap();
        let Reanchored::Replaced {
            lines,
            anchored,
            kept,
        } = ledger.reanchor(true).unwrap()
        else {
            panic!("replaced")
        };
        assert_eq!((lines, anchored), (2, 3));
        assert!(kept.exists());
        assert!(ledger.read_strict().is_ok());
        // Upgrade: a ledger with no anchor is read, and anchored at the next draw.
        std::fs::remove_file(ledger.anchor_path()).unwrap();
        let lock = ledger.lock().unwrap();
        let (read, state) = ledger.read_checked().unwrap();
        assert_eq!(state, AnchorState::Missing { lines: 2 });
        let note = ledger
            .anchor_if_missing(&lock, &read, &state)
            .unwrap()
            .unwrap();
        assert!(note.contains("created"), "{note}");
        assert_eq!(
            ledger.read_checked().unwrap().1,
            AnchorState::Holds {
                anchored: 2,
                lines: 2
            }
        );
        // An anchor one line behind (coco stopped between the line and its anchor).
        ledger
            .write_anchor(1, &ledger.read().unwrap().line_hashes[0])
            .unwrap();
        assert_eq!(
            ledger.read_checked().unwrap().1,
            AnchorState::Holds {
                anchored: 1,
                lines: 2
            }
        );
        // An unreadable anchor stops draws too.
        std::fs::write(ledger.anchor_path(), "{").unwrap();
        assert!(matches!(
            ledger.read_strict(),
            Err(LedgerError::AnchorUnreadable { .. })
        ));
        drop(lock);
    }

    /// Issue 23: only a line cut short is torn: lines joined into one are a defect
    /// `repair` refuses, and so is a cut anchored line.
    #[test]
    fn only_a_line_cut_short_is_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path());
        let d = dataset(&[1]);
        let lock = ledger.lock().unwrap();
        for _ in 0..2 {
            ledger
                .append(&lock, entry(&d, "1", Status::Written))
                .unwrap();
        }
        drop(lock);
        let good = std::fs::read_to_string(ledger.path()).unwrap();
        let joined = good.replace('\n', "");
        std::fs::write(ledger.path(), &joined).unwrap();
        let read = ledger.read().unwrap();
        assert_eq!(read.torn_tail, None);
        assert!(
            read.problems[0].message.contains("not a line cut short"),
            "{:?}",
            read.problems
        );
        assert!(matches!(
            ledger.repair(),
            Err(LedgerError::NotRepairable { .. })
        ));
        assert_eq!(std::fs::read_to_string(ledger.path()).unwrap(), joined);
        // The last anchored line cut: not torn, the ledger was truncated.
        std::fs::write(ledger.path(), &good[..good.len() - 10]).unwrap();
        let e = ledger.repair().unwrap_err().to_string();
        assert!(e.contains("truncated, not torn"), "{e}");
        // A line cut inside a character is torn.
        std::fs::write(
            ledger.path(),
            format!("{good}{{\"v\":2,\"dir\":\"\u{e9}")
                .as_bytes()
                .split_last()
                .unwrap()
                .1,
        )
        .unwrap();
        assert!(ledger.read().unwrap().torn_tail.is_some());
        assert!(matches!(
            ledger.repair().unwrap(),
            Repair::SetAsideTornTail { line: 3, .. }
        ));
    }
}
