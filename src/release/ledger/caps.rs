//! Caps on what is spent on a dataset (in ε, in ρ or in (ε, δ)): `config.toml`, read strictly, and which caps cover
//! a dataset.
//!
//! ```toml
//! default_cap = 4                    # every dataset without a cap of its own
//! [caps]
//! "/data/census" = { epsilon = "2", content = "5be0…c1", population = "9f3a…07" }
//! "/data/other" = 1                  # a directory (an absolute path) …
//! "5be0…c1" = "1/2"                  # … or a digest: 64 lowercase hex digits
//! "9f3a…07" = { rho = "1/2" }         # a ρ cap (a pure draw counts as ρ = ε²/2)
//! "77c1…e2" = { epsilon = "4", delta = 1e-10 }   # an (ε, δ) cap
//! ```
//!
//! A cap limits the ε of pure draws ([`CapLimit::Epsilon`], refusing any zCDP draw), the
//! ρ of every draw ([`CapLimit::Rho`]) or the ε of the spending's (ε, δ) statement
//! ([`CapLimit::EpsilonDelta`]); docs/privacy.md says why each is sound.
//!
//! A key is a dataset directory (an absolute path) or a full digest (a content digest,
//! a population key or, for older keys, an input fingerprint); anything else — a
//! shortened or upper-case digest, a relative path, `default_cap` written below
//! `[caps]` — is an error naming the line, since such a key could never bind.
//!
//! A directory cap written by hand (without the data it covers) is checked as `coco
//! ledger set-cap` checks one when it is first read: the directory must hold a dataset
//! coco can load, and its content digest and population key are then written beside it
//! in the file, so copies of that data are covered from then on, before any draw. A
//! directory that does not exist or holds no dataset is an error naming the line, unless
//! the ledger records draws from it (the cap then covers their data).
//!
//! A cap covers a dataset when
//! - a directory key names the dataset's directory, or the data its value recorded when
//!   `coco ledger set-cap` set it (`content`, `population`: copies of it anywhere, in any
//!   form or hierarchy), or data the ledger recorded for a draw from that directory;
//! - a digest key names the dataset's content, input files, population (or a neighbour,
//!   or a first-level region), or data the ledger recorded with that digest.
//!
//! Every cap that covers a dataset applies and the strictest binds; the default applies
//! only to datasets no cap covers.

use std::path::{Path, PathBuf};

use serde::Serialize;
use toml_edit::Document;

use super::files::{ensure_private_dir, write_private};
use super::keys::DatasetIdentity;
use super::{
    CapRefusal, DatasetRecord, Ledger, LedgerError, LedgerRead, Spend, Status, canonical_dir,
    fraction, io,
};
use crate::data::Dataset;
use crate::privacy::{DEFAULT_DELTA, Epsilon, Loss, Rho, Rounding, epsilon_at_delta};

/// A key of `[caps]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CapKey {
    /// A dataset directory, absolute (canonical when `set-cap` wrote it).
    Directory(String),
    /// A full digest: content digest, population key or input fingerprint.
    Digest(String),
}

impl CapKey {
    /// The key as written in `config.toml`.
    pub fn as_str(&self) -> &str {
        match self {
            CapKey::Directory(k) | CapKey::Digest(k) => k,
        }
    }

    /// A `[caps]` key: an absolute path or 64 lowercase hex digits; why not otherwise.
    pub fn parse(key: &str) -> Result<CapKey, String> {
        if Path::new(key).is_absolute() {
            return Ok(CapKey::Directory(key.to_string()));
        }
        check_digest(key).map(|()| CapKey::Digest(key.to_string()))
    }
}

/// Whether `key` is a full digest as coco writes them; why not otherwise.
pub(super) fn check_digest(key: &str) -> Result<(), String> {
    let hex = !key.is_empty() && key.bytes().all(|b| b.is_ascii_hexdigit());
    if hex && key.len() == 64 && !key.bytes().any(|b| b.is_ascii_uppercase()) {
        return Ok(());
    }
    Err(if hex && key.len() == 64 {
        "a digest in upper case: coco writes and compares digests in lower case (copy it as `coco ledger --json` shows it)".into()
    } else if hex {
        format!(
            "a digest of {} hex digits: expected all 64 (a shortened digest, as `coco ledger` shows, never matches; `coco ledger --json` shows it in full)",
            key.len()
        )
    } else if key == "default_cap" {
        "default_cap is not a dataset: it belongs above the [caps] line (a key below [caps] is a dataset directory or a digest)".into()
    } else {
        "neither a dataset directory (an absolute path) nor a digest (64 lowercase hex digits): such a key could never bind".into()
    })
}

/// What a cap limits: the ε of pure draws, the ρ of every draw, or the ε of an (ε, δ)
/// statement at a stated δ.
#[derive(Clone, Debug, PartialEq)]
pub enum CapLimit {
    /// Pure ε-DP: Σε ≤ cap exactly. Refuses any zCDP draw (the discrete Gaussian is not
    /// ε-DP for any ε).
    Epsilon(Epsilon),
    /// ρ-zCDP: Σρ ≤ cap exactly, a pure draw counted as ρ = ε²/2.
    Rho(Rho),
    /// (ε, δ)-DP: the ρ of every draw stated at δ (rounded up) ≤ ε, or, for pure draws
    /// only, Σε ≤ ε exactly.
    EpsilonDelta { epsilon: Epsilon, delta: f64 },
}

impl Eq for CapLimit {}

impl CapLimit {
    /// `epsilon`, `rho` or `epsilon_delta`.
    pub fn unit(&self) -> &'static str {
        match self {
            CapLimit::Epsilon(_) => "epsilon",
            CapLimit::Rho(_) => "rho",
            CapLimit::EpsilonDelta { .. } => "epsilon_delta",
        }
    }

    /// The ε of a pure-ε cap.
    pub fn as_epsilon(&self) -> Option<&Epsilon> {
        match self {
            CapLimit::Epsilon(e) => Some(e),
            _ => None,
        }
    }

    /// The δ of an (ε, δ) cap.
    pub fn delta(&self) -> Option<f64> {
        match self {
            CapLimit::EpsilonDelta { delta, .. } => Some(*delta),
            _ => None,
        }
    }

    /// The cap's value exactly, without its unit (`2`, `1/2`).
    pub fn value(&self) -> String {
        match self {
            CapLimit::Epsilon(e) | CapLimit::EpsilonDelta { epsilon: e, .. } => e.to_string(),
            CapLimit::Rho(r) => r.to_string(),
        }
    }

    /// The value for people, rounded `rounding` (ε caps read as today: the bare ε).
    pub fn short(&self, rounding: Rounding) -> String {
        match self {
            CapLimit::Epsilon(e) => e.short(rounding),
            CapLimit::Rho(r) => format!("ρ {}", r.short(rounding)),
            CapLimit::EpsilonDelta { epsilon, delta } => {
                format!("ε {} at δ = {delta:e}", epsilon.short(rounding))
            }
        }
    }

    /// The cap with its unit, exactly: `ε = 2`, `ρ = 1/2`, `(ε = 2, δ = 1e-10)`.
    pub fn labelled(&self) -> String {
        match self {
            CapLimit::Epsilon(e) => format!("ε = {e}"),
            CapLimit::Rho(r) => format!("ρ = {r}"),
            CapLimit::EpsilonDelta { epsilon, delta } => {
                format!("(ε = {epsilon}, δ = {delta:e})")
            }
        }
    }

    /// The fraction of the cap still free after `spent` (0 when used up or when the
    /// cap refuses what was spent): how caps of different units are ranked.
    fn headroom(&self, spent: &Spend) -> f64 {
        let free = |used: f64, cap: f64| (1.0 - used / cap).max(0.0);
        match self {
            CapLimit::Epsilon(cap) => match spent.all_pure() {
                true => free(
                    spent.epsilon.as_ref().map_or(0.0, Epsilon::to_f64),
                    cap.to_f64(),
                ),
                false => 0.0,
            },
            CapLimit::Rho(cap) => free(spent.rho.as_ref().map_or(0.0, Rho::to_f64), cap.to_f64()),
            CapLimit::EpsilonDelta { epsilon, delta } => {
                let via_rho = spent
                    .rho
                    .as_ref()
                    .map_or(0.0, |r| epsilon_at_delta(r, *delta));
                let used = match (spent.all_pure(), &spent.epsilon) {
                    (true, Some(e)) => via_rho.min(e.to_f64()),
                    _ => via_rho,
                };
                free(used, epsilon.to_f64())
            }
        }
    }

    /// Why this cap refuses a draw of `requested` after `spent`; `None` if it allows it.
    /// Exact for ε and ρ caps; an (ε, δ) cap compares the conversion rounded up with
    /// the cap rounded down, so it never lets a larger ε through.
    fn refuses(&self, spent: &Spend, requested: &Loss) -> Option<Refused> {
        let rho_after = match &spent.rho {
            Some(s) => s.add(&requested.to_rho()),
            None => requested.to_rho(),
        };
        let pure_after = match (spent.all_pure(), requested) {
            (true, Loss::Pure(e)) => Some(match &spent.epsilon {
                Some(s) => s.add(e),
                None => e.clone(),
            }),
            _ => None,
        };
        match self {
            CapLimit::Epsilon(cap) => match pure_after {
                Some(after) => (&after > cap).then_some(Refused::Over),
                None => Some(Refused::NotPure),
            },
            CapLimit::Rho(cap) => (&rho_after > cap).then_some(Refused::Over),
            CapLimit::EpsilonDelta { epsilon, delta } => {
                let pure_fits = pure_after.is_some_and(|after| &after <= epsilon);
                let stated = epsilon_at_delta(&rho_after, *delta);
                let rho_fits = stated <= below(epsilon.to_f64());
                (!pure_fits && !rho_fits).then_some(Refused::Stated(stated))
            }
        }
    }
}

/// The largest f64 below `x` (positive): a cap read in floating point never rounds up.
fn below(x: f64) -> f64 {
    if x > 0.0 && x.is_finite() {
        f64::from_bits(x.to_bits() - 1)
    } else {
        x
    }
}

/// How a cap refuses.
#[derive(Clone, Debug, PartialEq)]
enum Refused {
    /// The spending would exceed it.
    Over,
    /// A pure-ε cap, and the spending or the draw is zCDP.
    NotPure,
    /// An (ε, δ) cap: the ε the spending would be stated at.
    Stated(f64),
}

/// What a directory cap recorded of the data in its directory when it was set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct CapData {
    content: Option<String>,
    population: Option<String>,
}

impl CapData {
    fn is_empty(&self) -> bool {
        self.content.is_none() && self.population.is_none()
    }
}

/// The content digest and population key of the dataset in `dir`, as a directory cap
/// records them: the check `coco ledger set-cap` makes, and the one a directory cap
/// written by hand goes through when first read. Why not, otherwise.
pub fn directory_data(dir: &Path) -> Result<(String, String), String> {
    if !dir.exists() {
        return Err("no such directory".into());
    }
    if !dir.is_dir() {
        return Err("not a directory".into());
    }
    let data = Dataset::load(dir).map_err(|e| format!("not a dataset coco can load ({e})"))?;
    Ok((data.content_digest(), data.population_keys().key))
}

#[derive(Clone, Debug)]
struct ConfigCap {
    key: CapKey,
    cap: CapLimit,
    data: CapData,
    /// Its line in the file.
    line: usize,
    /// The file.
    file: PathBuf,
}

/// Why a cap covers a dataset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// The key names the dataset itself (its directory, or one of its digests).
    Itself,
    /// The directory's data as recorded when the cap was set: the dataset is a copy.
    CapRecorded,
    /// The ledger recorded this data for a draw under the key.
    Ledger,
}

/// Which line of `config.toml` a cap comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CapSource {
    /// `default_cap`.
    Default,
    /// A `[caps]` key naming a dataset directory.
    Directory { key: String, via: Via },
    /// A `[caps]` key naming a digest (content, population or, for older keys, the
    /// input files' fingerprint).
    Content { key: String, via: Via },
}

/// A cap that applies to a dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapRule {
    pub cap: CapLimit,
    pub source: CapSource,
    /// The `config.toml` it is written in.
    pub file: PathBuf,
}

impl CapRule {
    /// A short name for screens: `default cap`, `directory cap` or `content cap`.
    pub fn kind(&self) -> &'static str {
        match self.source {
            CapSource::Default => "default cap",
            CapSource::Directory { .. } => "directory cap",
            CapSource::Content { .. } => "content cap",
        }
    }

    /// Which cap this is, with its key and why it applies.
    pub fn describe(&self) -> String {
        let via = |via: Via| match via {
            Via::Itself => "",
            Via::CapRecorded => ", which held the same data when the cap was set",
            Via::Ledger => ", for which the ledger records the same data",
        };
        match &self.source {
            CapSource::Default => "default_cap".into(),
            CapSource::Directory { key, via: v } => format!(
                "the cap on directory {}{}",
                crate::data::text::escape_controls(key),
                via(*v)
            ),
            CapSource::Content { key, via: v } => format!(
                "the cap on digest {}…{}",
                key.chars().take(12).collect::<String>(),
                via(*v)
            ),
        }
    }
}

impl Serialize for CapRule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("CapRule", 6)?;
        st.serialize_field("cap", &self.cap.value())?;
        match &self.cap {
            CapLimit::Epsilon(e) | CapLimit::EpsilonDelta { epsilon: e, .. } => {
                st.serialize_field("cap_exact", &fraction::to(e))?
            }
            CapLimit::Rho(r) => st.serialize_field("cap_exact", &fraction::to(r))?,
        }
        st.serialize_field("unit", self.cap.unit())?;
        if let Some(delta) = self.cap.delta() {
            st.serialize_field("delta", &delta)?;
        }
        st.serialize_field("source", &self.source)?;
        st.serialize_field("file", &self.file)?;
        st.end()
    }
}

/// The caps that apply to a dataset, the strictest first, and what is spent.
#[derive(Clone, Debug)]
pub struct CapStatus {
    pub spent: Spend,
    /// Every matching cap, strictest first: the first binds (the one that refused, or
    /// the one with the least headroom left as a fraction of itself; among ε caps
    /// alone, the smallest).
    pub caps: Vec<CapRule>,
}

impl CapStatus {
    pub fn binding(&self) -> Option<&CapRule> {
        self.caps.first()
    }

    /// What is left under the binding cap, if it is a pure-ε cap (`None` without one,
    /// zero when used up).
    pub fn remaining(&self) -> Option<Option<Epsilon>> {
        let cap = self.binding()?.cap.as_epsilon()?;
        Some(match &self.spent.epsilon {
            None => Some(cap.clone()),
            Some(s) => cap.checked_sub(s),
        })
    }

    /// The unit `coco ledger` shows the spending in: ε under a pure-ε cap (or none)
    /// while every draw is pure, ρ otherwise.
    pub fn shown_in_rho(&self) -> bool {
        !self.spent.all_pure()
            || self
                .binding()
                .is_some_and(|r| !matches!(r.cap, CapLimit::Epsilon(_)))
    }

    /// The δ the spending is stated at: the binding (ε, δ) cap's, else 10⁻¹⁰.
    pub fn delta(&self) -> f64 {
        self.binding()
            .and_then(|r| r.cap.delta())
            .unwrap_or(DEFAULT_DELTA)
    }

    /// The ε of the (ε, δ) statement the spending implies at [`CapStatus::delta`]: the
    /// pure ε itself while every draw is pure (it holds at δ = 0), else the ρ's
    /// conversion (rounded up). `None` when nothing was spent.
    pub fn epsilon_at_delta(&self) -> Option<f64> {
        match (self.spent.all_pure(), &self.spent.epsilon, &self.spent.rho) {
            (true, Some(e), _) => Some(e.to_f64()),
            (_, _, Some(r)) => Some(epsilon_at_delta(r, self.delta())),
            _ => None,
        }
    }
}

/// Orders caps strictest first: among pure-ε caps alone by value, exactly (as coco
/// always has); across units by the headroom left as a fraction of each cap.
fn rank(caps: &mut [CapRule], spent: &Spend) {
    if caps.iter().all(|c| c.cap.as_epsilon().is_some()) {
        caps.sort_by(|a, b| a.cap.as_epsilon().cmp(&b.cap.as_epsilon()));
    } else {
        caps.sort_by(|a, b| a.cap.headroom(spent).total_cmp(&b.cap.headroom(spent)));
    }
}

/// What `coco ledger` reports for one dataset.
#[derive(Clone, Debug, Serialize)]
pub struct DatasetSpend {
    /// The content digest (or, for older lines, the fingerprint).
    pub dataset: String,
    pub dataset_dir: String,
    pub draws: usize,
    pub written: usize,
    pub spent: String,
    #[serde(serialize_with = "ser_opt_fraction")]
    pub spent_exact: Option<Epsilon>,
    /// The part of `spent` that draws whose lines were lost spent, as accepted losses
    /// record it (still counted), and how many draws: `"0"` and 0 without a loss.
    pub lost: String,
    #[serde(serialize_with = "ser_opt_fraction")]
    pub lost_exact: Option<Epsilon>,
    pub lost_draws: usize,
    /// The ρ of every draw (a pure draw's ε²/2), exactly, and as text (`"0"`).
    pub spent_rho: String,
    #[serde(serialize_with = "ser_opt_fraction")]
    pub spent_rho_exact: Option<Rho>,
    /// How many of `draws` were zCDP draws.
    pub zcdp_draws: usize,
    /// The unit the spending is shown in: `epsilon` or `rho`.
    pub unit: &'static str,
    /// The ε of the (ε, δ) statement the spending implies (`null`: nothing spent).
    pub epsilon_at_delta: Option<f64>,
    /// The δ it is stated at (the binding (ε, δ) cap's, else 10⁻¹⁰).
    pub delta: f64,
    /// The cap that binds, if any.
    pub cap: Option<CapRule>,
    /// Every cap that matches.
    pub caps: Vec<CapRule>,
}

fn ser_opt_fraction<M: crate::privacy::budget::Unit, S: serde::Serializer>(
    e: &Option<crate::privacy::Budget<M>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    e.as_ref().map(fraction::to).serialize(s)
}

/// What a cap set with `coco ledger set-cap` covers, for the operator to read.
#[derive(Clone, Debug, Serialize)]
pub struct Coverage {
    /// The key written.
    pub key: String,
    /// For a directory: its data's content digest and population key, recorded with
    /// the cap (copies of the data anywhere are covered).
    pub content: Option<String>,
    pub population: Option<String>,
    /// Draws the ledger records under the key (from the directory, or with the digest).
    pub draws: usize,
    /// The distinct content digests of those draws (each covered, wherever copied).
    pub recorded_contents: Vec<String>,
}

/// Whether a ledger line's dataset is named by a digest key.
fn record_named(record: &DatasetRecord, key: &str) -> bool {
    record.content.as_deref() == Some(key)
        || record.fingerprint.as_deref() == Some(key)
        || record.population.as_ref().is_some_and(|p| p.key == key)
}

/// Whether a ledger line was drawn from the directory `dir` (canonical).
fn record_in(record: &DatasetRecord, dir: &str) -> bool {
    record.dir == dir || canonical_dir(Path::new(&record.dir)) == dir
}

impl Ledger {
    /// Every cap that covers the dataset, the strictest first, and the ε spent on it.
    pub fn cap_status(
        &self,
        read: &LedgerRead,
        identity: &DatasetIdentity,
    ) -> Result<CapStatus, LedgerError> {
        let config = self.config(read)?;
        let records = read.records();
        let mut caps: Vec<CapRule> = config
            .caps
            .iter()
            .filter_map(|c| {
                let source = match &c.key {
                    CapKey::Directory(key) => {
                        let dir = canonical_dir(Path::new(key));
                        let via = if identity.same_dir(key) {
                            Via::Itself
                        } else if c
                            .data
                            .content
                            .as_deref()
                            .is_some_and(|d| identity.named_by(d))
                            || c.data
                                .population
                                .as_deref()
                                .is_some_and(|d| identity.named_by(d))
                        {
                            Via::CapRecorded
                        } else if records
                            .iter()
                            .any(|r| record_in(r, &dir) && identity.same_data(r))
                        {
                            Via::Ledger
                        } else {
                            return None;
                        };
                        CapSource::Directory {
                            key: key.clone(),
                            via,
                        }
                    }
                    CapKey::Digest(key) => {
                        let via = if identity.named_by(key) {
                            Via::Itself
                        } else if records
                            .iter()
                            .any(|r| record_named(r, key) && identity.same_data(r))
                        {
                            Via::Ledger
                        } else {
                            return None;
                        };
                        CapSource::Content {
                            key: key.clone(),
                            via,
                        }
                    }
                };
                Some(CapRule {
                    cap: c.cap.clone(),
                    source,
                    file: c.file.clone(),
                })
            })
            .collect();
        if caps.is_empty() {
            for (cap, file) in config.defaults {
                caps.push(CapRule {
                    cap,
                    source: CapSource::Default,
                    file,
                });
            }
        }
        let spent = read.spent(identity);
        rank(&mut caps, &spent);
        Ok(CapStatus { spent, caps })
    }

    /// Refuses a draw of `requested` (an ε or a ρ) if any cap that applies would
    /// refuse it; that cap is then the binding one.
    pub fn check_cap(
        &self,
        read: &LedgerRead,
        identity: &DatasetIdentity,
        requested: &Loss,
    ) -> Result<CapStatus, LedgerError> {
        let mut status = self.cap_status(read, identity)?;
        let refusal = status
            .caps
            .iter()
            .enumerate()
            .find_map(|(i, rule)| rule.cap.refuses(&status.spent, requested).map(|r| (i, r)));
        if let Some((i, why)) = refusal {
            let rule = status.caps.remove(i);
            let spent = &status.spent;
            return Err(LedgerError::CapExceeded(Box::new(CapRefusal {
                spent: spent.epsilon.clone(),
                spent_rho: spent.rho.clone(),
                zcdp_draws: spent.zcdp_draws,
                draws: spent.draws,
                requested: requested.clone(),
                stated: match why {
                    Refused::Stated(e) => Some(e),
                    _ => None,
                },
                cap: rule.cap.clone(),
                rule: rule.describe(),
                config: rule.file.clone(),
            })));
        }
        Ok(status)
    }

    /// Per-dataset totals, in order of first appearance (then the data only accepted
    /// losses still record), with the caps that apply.
    pub fn summary(&self, read: &LedgerRead) -> Result<Vec<DatasetSpend>, LedgerError> {
        // The caps are read (and checked) even when no dataset has a draw yet.
        self.config(read)?;
        let mut groups: Vec<(DatasetIdentity, usize, usize)> = Vec::new();
        let group_of = |groups: &[(DatasetIdentity, usize, usize)], key: &str| {
            groups
                .iter()
                .position(|(id, _, _)| id.content == key || id.fingerprint == key)
        };
        for e in read.draws() {
            match group_of(&groups, e.dataset.key()) {
                Some(i) => {
                    let (id, draws, written) = &mut groups[i];
                    *draws += 1;
                    *written += usize::from(e.status == Status::Written);
                    id.dir = e.dataset.dir.clone();
                }
                None => groups.push((
                    DatasetIdentity::recorded(&e.dataset),
                    1,
                    usize::from(e.status == Status::Written),
                )),
            }
        }
        // Data whose every draw was lost is still spent on.
        for lost in read.lost() {
            if group_of(&groups, lost.key()).is_none() {
                groups.push((DatasetIdentity::recorded(&lost.records()[0]), 0, 0));
            }
        }
        groups
            .into_iter()
            .map(|(identity, draws, written)| {
                let status = self.cap_status(read, &identity)?;
                Ok(DatasetSpend {
                    dataset: if identity.content.is_empty() {
                        identity.fingerprint.clone()
                    } else {
                        identity.content.clone()
                    },
                    dataset_dir: identity.dir.clone(),
                    draws,
                    written,
                    spent: status.spent.text(),
                    spent_exact: status.spent.epsilon.clone(),
                    lost: status
                        .spent
                        .lost
                        .as_ref()
                        .map_or_else(|| "0".into(), Epsilon::to_string),
                    lost_exact: status.spent.lost.clone(),
                    lost_draws: status.spent.lost_draws,
                    spent_rho: status
                        .spent
                        .rho
                        .as_ref()
                        .map_or_else(|| "0".into(), Rho::to_string),
                    spent_rho_exact: status.spent.rho.clone(),
                    zcdp_draws: status.spent.zcdp_draws,
                    unit: if status.shown_in_rho() {
                        "rho"
                    } else {
                        "epsilon"
                    },
                    epsilon_at_delta: status.epsilon_at_delta(),
                    delta: status.delta(),
                    cap: status.binding().cloned(),
                    caps: status.caps.clone(),
                })
            })
            .collect()
    }

    /// The caps of this ledger's `config.toml`, of the one in the configuration
    /// directory the environment names (when the ledger's pointer named another) and of
    /// an older version's beside the ledger: every cap found applies (a moved file never
    /// loosens a cap), and the strictest default binds. A directory cap written by hand
    /// is checked and bound to its data here, the first time it is read (see the module
    /// documentation); `read` says which directories the ledger records draws from.
    fn config(&self, read: &LedgerRead) -> Result<Config, LedgerError> {
        let mut config = Config::default();
        let mut paths = vec![self.config_path()];
        for p in [self.environment_config_path(), self.legacy_config_path()]
            .into_iter()
            .flatten()
        {
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
        for path in paths {
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io(&path)(e)),
            };
            let mut found = Config::parse(&text, &path)?;
            bind_directory_caps(&mut found, &text, &path, read)?;
            // Every default found applies; of two pure-ε defaults the smaller binds.
            for (cap, file) in found.defaults {
                let same = config
                    .defaults
                    .iter_mut()
                    .find(|(c, _)| c.as_epsilon().is_some() && cap.as_epsilon().is_some());
                match same {
                    Some(d) => {
                        if cap.as_epsilon() < d.0.as_epsilon() {
                            *d = (cap, file);
                        }
                    }
                    None => config.defaults.push((cap, file)),
                }
            }
            config.caps.extend(found.caps);
        }
        Ok(config)
    }

    /// Sets (or replaces) the cap on a key in config.toml. A directory's cap records
    /// `data`, the content digest and population key of what it holds now, so that
    /// copies of that data are covered wherever they are. When only an older version's
    /// file exists (beside the ledger), its settings are carried into the new file.
    /// Returns what the cap covers.
    pub fn set_cap(
        &self,
        key: &CapKey,
        cap: &CapLimit,
        data: Option<(&str, &str)>,
    ) -> Result<Coverage, LedgerError> {
        if let CapKey::Digest(k) = key {
            check_digest(k).map_err(|why| LedgerError::CapKey {
                key: k.clone(),
                why,
            })?;
        }
        // Every file of caps is read first, as any command that reads caps does: one
        // that holds a key that could never bind is refused, naming its line.
        let ledger = self.read()?;
        self.config(&ledger)?;
        ensure_private_dir(&self.config_home)?;
        let path = self.config_path();
        let read = |path: &Path| match std::fs::read_to_string(path) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(path)(e)),
        };
        let text = match read(&path)? {
            Some(t) => t,
            None => match self.legacy_config_path() {
                Some(old) => read(&old)?.unwrap_or_default(),
                None => String::new(),
            },
        };
        Config::parse(&text, &path)?;
        let mut doc: toml_edit::DocumentMut = text.parse().expect("parsed above");
        if !doc.contains_table("caps") {
            doc["caps"] = toml_edit::table();
        }
        doc["caps"][key.as_str()] = match (key, data) {
            (CapKey::Directory(_), Some((content, population))) => {
                directory_cap(cap, content, population)
            }
            (_, _) => match cap {
                CapLimit::Epsilon(e) => toml_edit::value(e.to_string()),
                _ => toml_edit::value(limit_table(cap)),
            },
        };
        write_private(&path, doc.to_string().as_bytes())?;
        // The caps now belong to this ledger: its pointer records where they are, so a
        // run whose environment names another configuration directory finds them.
        self.establish()?;
        // What it covers, from the ledger as it is (read as shown: a ledger with a
        // defect still says what it recorded).
        let mine: Vec<&DatasetRecord> = ledger
            .draws()
            .into_iter()
            .map(|e| &e.dataset)
            .filter(|r| match key {
                CapKey::Directory(d) => record_in(r, &canonical_dir(Path::new(d))),
                CapKey::Digest(k) => record_named(r, k),
            })
            .collect();
        let mut recorded_contents: Vec<String> = Vec::new();
        for r in &mine {
            if let Some(c) = &r.content
                && !recorded_contents.contains(c)
            {
                recorded_contents.push(c.clone());
            }
        }
        Ok(Coverage {
            key: key.as_str().to_string(),
            content: data.map(|d| d.0.to_string()),
            population: data.map(|d| d.1.to_string()),
            draws: mine.len(),
            recorded_contents,
        })
    }
}

#[derive(Clone, Debug, Default)]
struct Config {
    /// The default caps and the files they are written in (one per unit).
    defaults: Vec<(CapLimit, PathBuf)>,
    caps: Vec<ConfigCap>,
}

/// Checks every directory cap of `config` (read from `text` in `path`) that records no
/// data, as `coco ledger set-cap` checks a directory, and binds it: its data's content
/// digest and population key are recorded in `config` and written beside it in `path`
/// (the file keeps its other lines as they are). A directory that holds no dataset
/// coco can load is an error naming the line, unless the ledger records draws from it.
fn bind_directory_caps(
    config: &mut Config,
    text: &str,
    path: &Path,
    read: &LedgerRead,
) -> Result<(), LedgerError> {
    let mut bound: Vec<(String, CapLimit, String, String)> = Vec::new();
    let mut recorded: Option<Vec<DatasetRecord>> = None;
    for cap in &mut config.caps {
        let CapKey::Directory(key) = &cap.key else {
            continue;
        };
        if !cap.data.is_empty() {
            continue;
        }
        match directory_data(Path::new(key)) {
            Ok((content, population)) => {
                cap.data = CapData {
                    content: Some(content.clone()),
                    population: Some(population.clone()),
                };
                bound.push((key.clone(), cap.cap.clone(), content, population));
            }
            Err(why) => {
                let dir = canonical_dir(Path::new(key));
                let records = recorded.get_or_insert_with(|| read.records());
                if !records.iter().any(|r| record_in(r, &dir)) {
                    return Err(LedgerError::Config {
                        path: path.to_path_buf(),
                        line: cap.line,
                        message: format!(
                            "[caps] key {:?}: {why}, and the ledger records no draw from it: a directory cap names an existing dataset directory (`coco ledger set-cap DATASET EPSILON` checks it and records its data), or a directory the ledger records draws from; such a key could never bind",
                            crate::data::text::escape_controls(key)
                        ),
                    });
                }
            }
        }
    }
    if bound.is_empty() {
        return Ok(());
    }
    let mut doc: toml_edit::DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| LedgerError::Config {
                path: path.to_path_buf(),
                line: 1,
                message: format!("not valid TOML: {}", e.message().replace('\n', " ")),
            })?;
    for (key, cap, content, population) in bound {
        doc["caps"][key.as_str()] = directory_cap(&cap, &content, &population);
    }
    write_private(path, doc.to_string().as_bytes())
}

/// A cap's limit as an inline table: `{ epsilon }`, `{ rho }` or `{ epsilon, delta }`.
fn limit_table(cap: &CapLimit) -> toml_edit::InlineTable {
    let mut t = toml_edit::InlineTable::new();
    match cap {
        CapLimit::Epsilon(e) => {
            t.insert("epsilon", e.to_string().into());
        }
        CapLimit::Rho(r) => {
            t.insert("rho", r.to_string().into());
        }
        CapLimit::EpsilonDelta { epsilon, delta } => {
            t.insert("epsilon", epsilon.to_string().into());
            t.insert("delta", (*delta).into());
        }
    }
    t
}

/// A directory cap as `config.toml` records it: `{ epsilon, content, population }`
/// (or `rho`, or `epsilon` and `delta`, for the limit).
fn directory_cap(cap: &CapLimit, content: &str, population: &str) -> toml_edit::Item {
    let mut t = limit_table(cap);
    t.insert("content", content.into());
    t.insert("population", population.into());
    toml_edit::value(t)
}

impl Config {
    fn parse(text: &str, path: &Path) -> Result<Config, LedgerError> {
        let line_of = |span: Option<std::ops::Range<usize>>| {
            span.map_or(1, |s| {
                text[..s.start.min(text.len())].matches('\n').count() + 1
            })
        };
        let err = |span: Option<std::ops::Range<usize>>, message: String| LedgerError::Config {
            path: path.to_path_buf(),
            line: line_of(span),
            message,
        };
        let doc = Document::parse(text).map_err(|e| {
            err(
                e.span(),
                format!("not valid TOML: {}", e.message().replace('\n', " ")),
            )
        })?;
        let mut config = Config::default();
        let eps = |raw: Option<&str>, span: Option<std::ops::Range<usize>>| {
            let raw = match raw {
                Some(s) => s.to_string(),
                None => span
                    .clone()
                    .and_then(|s| text.get(s))
                    .unwrap_or("")
                    .trim()
                    .to_string(),
            };
            Epsilon::parse(&raw).map_err(|e| err(span, e.to_string()))
        };
        for (key, item) in doc.as_table().iter() {
            match key {
                "default_cap" => {
                    let cap = match item.as_inline_table() {
                        Some(t) => cap_table(None, t, &eps, &err)?.0,
                        None => CapLimit::Epsilon(eps(item.as_str(), item.span())?),
                    };
                    config.defaults.push((cap, path.to_path_buf()));
                }
                "caps" => {
                    let Some(table) = item.as_table() else {
                        return Err(err(
                            item.span(),
                            "caps must be a table: [caps] then \"dataset\" = epsilon".into(),
                        ));
                    };
                    for (k, v) in table.iter() {
                        let span = table.key(k).and_then(|k| k.span()).or(v.span());
                        let key = CapKey::parse(k)
                            .map_err(|why| err(span.clone(), format!("[caps] key {k:?}: {why}")))?;
                        let (cap, data) = match v.as_inline_table() {
                            Some(t) => cap_table(Some(&key), t, &eps, &err)?,
                            None => (
                                CapLimit::Epsilon(eps(v.as_str(), v.span())?),
                                CapData::default(),
                            ),
                        };
                        let line = line_of(span);
                        config.caps.push(ConfigCap {
                            key,
                            cap,
                            data,
                            line,
                            file: path.to_path_buf(),
                        });
                    }
                }
                other => {
                    return Err(err(
                        item.span(),
                        format!("unknown key {other:?}: expected default_cap or [caps]"),
                    ));
                }
            }
        }
        Ok(config)
    }
}

/// Where a value is in `config.toml`'s text.
type Span = Option<std::ops::Range<usize>>;

/// Reads an ε from a value's text (or its quoted string), naming its line.
type ReadEpsilon<'a> = &'a dyn Fn(Option<&str>, Span) -> Result<Epsilon, LedgerError>;

/// A cap written as an inline table: `{ epsilon = … }`, `{ rho = … }` or `{ epsilon = …,
/// delta = … }`, a directory's with its `content` and `population` (`key` is `None` for
/// `default_cap`).
fn cap_table(
    key: Option<&CapKey>,
    t: &toml_edit::InlineTable,
    eps: ReadEpsilon<'_>,
    err: &dyn Fn(Span, String) -> LedgerError,
) -> Result<(CapLimit, CapData), LedgerError> {
    let name_of = key.map_or_else(
        || "default_cap".to_string(),
        |k| format!("[caps] key {:?}", k.as_str()),
    );
    let mut epsilon = None;
    let mut rho = None;
    let mut delta = None;
    let mut data = CapData::default();
    for (name, value) in t.iter() {
        let digest = |what: &str| -> Result<String, LedgerError> {
            if !matches!(key, Some(CapKey::Directory(_))) {
                return Err(err(
                    value.span(),
                    format!("{name_of}: {what} is recorded only for a directory's cap"),
                ));
            }
            let text = value
                .as_str()
                .ok_or_else(|| err(value.span(), format!("{what}: expected a digest in quotes")))?;
            check_digest(text)
                .map_err(|why| err(value.span(), format!("{what} {text:?}: {why}")))?;
            Ok(text.to_string())
        };
        match name {
            "epsilon" => epsilon = Some(eps(value.as_str(), value.span())?),
            "rho" => {
                let raw = value
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| value.to_string().trim().to_string());
                rho = Some(
                    Rho::parse(&raw)
                        .map_err(|e| err(value.span(), format!("{name_of}: rho: {e}")))?,
                );
            }
            "delta" => {
                let d = value
                    .as_float()
                    .filter(|d| *d > 0.0 && *d < 1.0)
                    .ok_or_else(|| {
                        err(
                            value.span(),
                            format!("{name_of}: delta {}: expected a number between 0 and 1 (exclusive), e.g. 1e-10", value.to_string().trim()),
                        )
                    })?;
                delta = Some(d);
            }
            "content" => data.content = Some(digest("content")?),
            "population" => data.population = Some(digest("population")?),
            other => {
                return Err(err(
                    value.span(),
                    format!(
                        "{name_of}: unknown field {other:?}: expected epsilon, rho or epsilon with delta{}",
                        if matches!(key, Some(CapKey::Directory(_))) {
                            ", and content and population"
                        } else {
                            ""
                        }
                    ),
                ));
            }
        }
    }
    let cap = match (epsilon, rho, delta) {
        (Some(e), None, None) => CapLimit::Epsilon(e),
        (None, Some(r), None) => CapLimit::Rho(r),
        (Some(e), None, Some(d)) => CapLimit::EpsilonDelta {
            epsilon: e,
            delta: d,
        },
        _ => {
            return Err(err(
                t.span(),
                format!(
                    "{name_of}: expected exactly one limit: {{ epsilon = … }} (pure ε), {{ rho = … }} (ρ-zCDP) or {{ epsilon = …, delta = … }} ((ε, δ))"
                ),
            ));
        }
    };
    Ok((cap, data))
}

#[cfg(test)]
impl Ledger {
    /// The caps of the configuration as (key, ε) texts.
    pub(super) fn config_text_caps(&self) -> Vec<(String, String)> {
        self.config(&self.read().unwrap())
            .unwrap()
            .caps
            .iter()
            .map(|c| (c.key.as_str().to_string(), c.cap.value()))
            .collect()
    }

    /// Why the configuration cannot be read.
    pub(super) fn config_text_error(&self) -> String {
        self.config(&self.read().unwrap()).unwrap_err().to_string()
    }
}
