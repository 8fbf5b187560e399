//! The running spending per dataset key: what the anchor records beside its count of
//! lines, so that a loss the operator accepts never returns budget.
//!
//! The hash chain and the anchor's count of lines say *that* lines were lost; they
//! cannot say what those lines spent, since the lines are gone. So the anchor also
//! records, for every dataset key its lines recorded a draw under, the ε spent in all
//! and how many draws, with every key the data was recorded under (content digest,
//! population key and its first-level regions' keys, input fingerprint for older lines,
//! directories). When lines are lost and the loss accepted, the difference between
//! what the old anchor knew and what the ledger still holds is written into the chain
//! (`loss_accepted`), and readers count it as spent against every dataset those keys
//! match, as if the lost draws were still there.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::keys::{DatasetIdentity, PopulationRecord};
use super::{DatasetRecord, LedgerEntry, fraction};
use crate::privacy::Epsilon;

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
    /// The ε spent, exactly.
    #[serde(with = "fraction")]
    pub epsilon: Epsilon,
    /// How many draws spent it.
    pub draws: usize,
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

    fn of(record: &DatasetRecord, epsilon: &Epsilon) -> KeySpend {
        KeySpend {
            content: record.content.clone(),
            fingerprint: match record.content {
                Some(_) => None,
                None => record.fingerprint.clone(),
            },
            population: record.population.clone(),
            dirs: vec![record.dir.clone()],
            epsilon: epsilon.clone(),
            draws: 1,
        }
    }

    /// Adds `other` (of the same key): the ε and draws summed, the directories and
    /// regions joined.
    fn absorb(&mut self, other: &KeySpend) {
        self.epsilon = self.epsilon.add(&other.epsilon);
        self.draws += other.draws;
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
            self.add(KeySpend::of(&entry.dataset, &entry.total_epsilon));
        }
    }

    /// Counts spending recorded as lost and still spent.
    pub fn add(&mut self, spend: KeySpend) {
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
/// per key, the ε and draws missing, with the keys and directories `known` recorded.
pub fn lost_between(known: &[KeySpend], now: &[KeySpend]) -> Vec<KeySpend> {
    known
        .iter()
        .filter_map(|k| {
            let held = now.iter().find(|n| n.key() == k.key());
            let epsilon = match held {
                None => k.epsilon.clone(),
                Some(n) => k.epsilon.checked_sub(&n.epsilon)?,
            };
            Some(KeySpend {
                epsilon,
                draws: k.draws - held.map_or(0, |n| n.draws.min(k.draws)),
                ..k.clone()
            })
        })
        .collect()
}

/// The ε of a list of spendings, exactly (`None` for none).
pub fn total(spends: &[KeySpend]) -> Option<Epsilon> {
    Epsilon::sum(spends.iter().map(|s| &s.epsilon))
}
