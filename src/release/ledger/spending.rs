//! The running spending per dataset key: what the anchor records beside its count of
//! lines, so that a loss the operator accepts never returns budget.
//!
//! The hash chain and the anchor's count of lines say *that* lines were lost; they
//! cannot say what those lines spent, since the lines are gone. So the anchor also
//! records, for every dataset key its lines recorded a draw under, the ε of its pure
//! draws, the ρ of every draw (a pure draw's ε converted exactly, ε²/2 per draw) and how
//! many draws, with every key the data was recorded under (content digest,
//! population key and its first-level regions' keys, input fingerprint for older lines,
//! directories). When lines are lost and the loss accepted, the difference between
//! what the old anchor knew and what the ledger still holds is written into the chain
//! (`loss_accepted`), and readers count it as spent against every dataset those keys
//! match, as if the lost draws were still there.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::keys::{DatasetIdentity, PopulationRecord};
use super::quote::cut;
use super::{DatasetRecord, LedgerEntry, fraction};
use crate::privacy::measure::rho_of_epsilon;
use crate::privacy::{Epsilon, Loss, Rho};

/// The ε recorded under one dataset key (the content digest, or for lines of the
/// older format the input fingerprint), with every key that data was recorded under.
/// Confidential, like the ledger lines it sums.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeySpend {
    /// The content digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The input files' fingerprint: only for data recorded without a content digest
    /// (lines of the older format), which match by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The population key and the keys of its first-level regions (every region any
    /// of the draws recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub population: Option<PopulationRecord>,
    /// Every directory the draws were made from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirs: Vec<String>,
    /// The ε the pure draws spent, exactly (absent when every draw was zCDP).
    #[serde(
        default,
        with = "fraction::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub epsilon: Option<Epsilon>,
    /// The ρ every draw spent, exactly: a zCDP draw's ρ, a pure draw's ε²/2 (Bun and
    /// Steinke 2016, Proposition 1.4), summed per draw (zCDP composes by adding ρ).
    /// Always written now; absent in anchors of version 2 and in older loss lines,
    /// which are read as (Σε)²/2 ([`KeySpend::rho_spent`]), never less than the sum
    /// per draw.
    #[serde(
        default,
        with = "fraction::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub rho: Option<Rho>,
    /// How many draws spent it.
    pub draws: usize,
    /// How many of them were zCDP draws (absent: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub zcdp_draws: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl KeySpend {
    /// The key it is grouped by: the content digest, else the fingerprint.
    pub fn key(&self) -> &str {
        self.content
            .as_deref()
            .or(self.fingerprint.as_deref())
            .unwrap_or("")
    }

    /// The data as a ledger line records it, once per directory.
    pub fn records(&self) -> Vec<DatasetRecord> {
        let record = |dir: &str| DatasetRecord {
            content: self.content.clone(),
            fingerprint: self.fingerprint.clone(),
            dir: dir.to_string(),
            inputs: Vec::new(),
            population: self.population.clone(),
        };
        match self.dirs.as_slice() {
            [] => vec![record("")],
            dirs => dirs.iter().map(|d| record(d)).collect(),
        }
    }

    /// Whether this spending counts against a dataset: the same data by any key, or
    /// one of the directories.
    pub fn matches(&self, identity: &DatasetIdentity) -> bool {
        self.records().iter().any(|r| identity.matches(r))
    }

    /// The ρ spent: as recorded, or for a record written before ρ was (which holds
    /// pure draws only) `(Σε)²/2`, which is at least the sum of `εᵢ²/2` per draw.
    /// `None` only for a record of nothing (which the readers refuse).
    pub fn rho_spent(&self) -> Option<Rho> {
        self.rho
            .clone()
            .or_else(|| self.epsilon.as_ref().map(rho_of_epsilon))
    }

    /// Why this record cannot be counted: it records no spending at all, or zCDP
    /// draws without a ρ.
    pub fn check(&self) -> Result<(), String> {
        if self.epsilon.is_none() && self.rho.is_none() {
            return Err(format!(
                "the spending recorded for dataset {} has neither epsilon nor rho",
                cut(self.key())
            ));
        }
        if self.zcdp_draws > 0 && self.rho.is_none() {
            return Err(format!(
                "the spending recorded for dataset {} counts zCDP draws but no rho",
                cut(self.key())
            ));
        }
        if self.zcdp_draws > self.draws {
            return Err(format!(
                "the spending recorded for dataset {} counts more zCDP draws than draws",
                cut(self.key())
            ));
        }
        Ok(())
    }

    fn of(record: &DatasetRecord, loss: &Loss) -> KeySpend {
        KeySpend {
            content: record.content.clone(),
            fingerprint: match record.content {
                Some(_) => None,
                None => record.fingerprint.clone(),
            },
            population: record.population.clone(),
            dirs: vec![record.dir.clone()],
            epsilon: loss.as_pure().cloned(),
            rho: Some(loss.to_rho()),
            draws: 1,
            zcdp_draws: usize::from(loss.as_pure().is_none()),
        }
    }

    /// Adds `other` (of the same key): the ε and draws summed, the directories and
    /// regions joined.
    fn absorb(&mut self, other: &KeySpend) {
        self.epsilon = add(&self.epsilon, &other.epsilon);
        self.rho = add(&self.rho_spent(), &other.rho_spent());
        self.draws += other.draws;
        self.zcdp_draws += other.zcdp_draws;
        for d in &other.dirs {
            if !self.dirs.contains(d) {
                self.dirs.push(d.clone());
            }
        }
        match (&mut self.population, &other.population) {
            (Some(mine), Some(theirs)) => {
                for p in &theirs.parts {
                    if !mine.parts.contains(p) {
                        mine.parts.push(p.clone());
                    }
                }
            }
            (None, Some(theirs)) => self.population = Some(theirs.clone()),
            _ => {}
        }
    }
}

/// Sums spending per dataset key, each draw once (by its id), in the order the keys
/// first appear.
#[derive(Clone, Debug, Default)]
pub struct Spending {
    keys: Vec<KeySpend>,
    at: HashMap<String, usize>,
    ids: HashSet<String>,
}

impl Spending {
    /// Counts a draw's line (a later line of the same draw adds nothing: the reader
    /// refuses lines of one draw that disagree on its ε).
    pub fn add_draw(&mut self, entry: &LedgerEntry) {
        if self.ids.insert(entry.id.clone()) {
            self.add(KeySpend::of(&entry.dataset, &entry.total));
        }
    }

    /// Counts spending recorded as lost and still spent (its ρ made explicit).
    pub fn add(&mut self, mut spend: KeySpend) {
        spend.rho = spend.rho_spent();
        match self.at.get(spend.key()) {
            Some(&i) => self.keys[i].absorb(&spend),
            None => {
                self.at.insert(spend.key().to_string(), self.keys.len());
                self.keys.push(spend);
            }
        }
    }

    pub fn into_keys(self) -> Vec<KeySpend> {
        self.keys
    }
}

/// What `known` (an anchor's record) holds that `now` (the ledger as it is) does not:
/// per key, the ε, ρ and draws missing, with the keys and directories `known` recorded.
/// A key is lost when its ε or its ρ is less now than `known` recorded.
pub fn lost_between(known: &[KeySpend], now: &[KeySpend]) -> Vec<KeySpend> {
    known
        .iter()
        .filter_map(|k| {
            let held = now.iter().find(|n| n.key() == k.key());
            let epsilon = less(&k.epsilon, &held.and_then(|n| n.epsilon.clone()));
            let rho = less(&k.rho_spent(), &held.and_then(KeySpend::rho_spent));
            if epsilon.is_none() && rho.is_none() {
                return None;
            }
            // A lost ε is at least its ε²/2 of ρ, whatever the records say.
            let rho = rho.or_else(|| epsilon.as_ref().map(rho_of_epsilon));
            Some(KeySpend {
                epsilon,
                rho,
                draws: k.draws - held.map_or(0, |n| n.draws.min(k.draws)),
                zcdp_draws: k.zcdp_draws - held.map_or(0, |n| n.zcdp_draws.min(k.zcdp_draws)),
                ..k.clone()
            })
        })
        .collect()
}

/// `a − b` when positive.
fn less<M: crate::privacy::budget::Unit>(
    a: &Option<crate::privacy::Budget<M>>,
    b: &Option<crate::privacy::Budget<M>>,
) -> Option<crate::privacy::Budget<M>> {
    match (a, b) {
        (Some(a), None) => Some(a.clone()),
        (Some(a), Some(b)) => a.checked_sub(b),
        (None, _) => None,
    }
}

/// `a + b`, either absent.
fn add<M: crate::privacy::budget::Unit>(
    a: &Option<crate::privacy::Budget<M>>,
    b: &Option<crate::privacy::Budget<M>>,
) -> Option<crate::privacy::Budget<M>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.add(b)),
        (a, b) => a.clone().or_else(|| b.clone()),
    }
}

/// The ε of a list of spendings' pure draws, exactly (`None` for none).
pub fn total(spends: &[KeySpend]) -> Option<Epsilon> {
    Epsilon::sum(spends.iter().filter_map(|s| s.epsilon.as_ref()))
}

/// The ρ of a list of spendings, exactly (`None` for none).
pub fn total_rho(spends: &[KeySpend]) -> Option<Rho> {
    let rhos: Vec<Rho> = spends.iter().filter_map(KeySpend::rho_spent).collect();
    Rho::sum(rhos.iter())
}
