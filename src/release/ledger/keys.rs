//! How the ledger recognises a dataset: which recorded draws count against it.
//!
//! A draw's line records the dataset's content digest (the leaves' count-of-counts),
//! its population key (the root's non-empty sizes, [`crate::data::population`]), the
//! byte fingerprint of its input files (older lines) and its directory. A dataset is
//! charged for a draw when any of these says it is the same data:
//!
//! | recorded | matches a dataset that |
//! |---|---|
//! | content digest | has the same leaves' count-of-counts (another form, order, codes, names) |
//! | population key | has the same non-empty groups under any hierarchy, or one entity more or fewer, or is one first-level region of it (or it is one of the recorded dataset's), each give or take one entity |
//! | fingerprint (lines before the content digest) | has byte for byte the same input files |
//! | directory | is loaded from that directory, whatever it holds now |

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{DatasetRecord, canonical_dir};
use crate::data::{Dataset, PopulationKeys};

/// The population keys a ledger line records (confidential, like the content digest).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PopulationRecord {
    /// The whole population's key.
    pub key: String,
    /// The keys of the regions of the first level below the root.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<String>,
}

/// How the ledger recognises a dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetIdentity {
    /// [`Dataset::content_digest`].
    pub content: String,
    /// [`Dataset::fingerprint`], for lines of the older format.
    pub fingerprint: String,
    /// The directory, canonical.
    pub dir: String,
    /// [`Dataset::population_keys`]; `None` for an identity rebuilt from a line that
    /// recorded none.
    pub population: Option<PopulationKeys>,
}

impl DatasetIdentity {
    pub fn of(dataset: &Dataset) -> DatasetIdentity {
        DatasetIdentity {
            content: dataset.content_digest(),
            fingerprint: dataset.fingerprint(),
            dir: canonical_dir(&dataset.dir),
            population: Some(dataset.population_keys()),
        }
    }

    /// The identity a ledger line records (its population key matched exactly, without
    /// neighbours: they cannot be computed from a digest).
    pub fn recorded(record: &DatasetRecord) -> DatasetIdentity {
        DatasetIdentity {
            content: record.content.clone().unwrap_or_default(),
            fingerprint: record.fingerprint.clone().unwrap_or_default(),
            dir: record.dir.clone(),
            population: record
                .population
                .as_ref()
                .map(|p| PopulationKeys::recorded(&p.key, &p.parts)),
        }
    }

    /// Whether a draw recorded with `record` counts against this dataset: the same data
    /// by any key, or the same directory.
    pub fn matches(&self, record: &DatasetRecord) -> bool {
        self.same_data(record) || self.same_dir(&record.dir)
    }

    /// Whether `record` describes the same data (content, population or, for older
    /// lines, the input files' bytes), wherever it was loaded from.
    pub fn same_data(&self, record: &DatasetRecord) -> bool {
        // Lines with a content digest match by content; older lines by the fingerprint.
        let by_content = match &record.content {
            Some(content) => !self.content.is_empty() && *content == self.content,
            None => {
                !self.fingerprint.is_empty()
                    && record.fingerprint.as_deref() == Some(self.fingerprint.as_str())
            }
        };
        by_content
            || match (&self.population, &record.population) {
                (Some(mine), Some(theirs)) => mine.matches(&theirs.key, &theirs.parts),
                _ => false,
            }
    }

    /// Whether `dir` (as a ledger line or a cap records it) is this dataset's directory.
    pub fn same_dir(&self, dir: &str) -> bool {
        !self.dir.is_empty() && (dir == self.dir || canonical_dir(Path::new(dir)) == self.dir)
    }

    /// Whether a digest (a cap's key) names this dataset's content, its input files,
    /// its population or one of its first-level regions, give or take one entity.
    pub fn named_by(&self, digest: &str) -> bool {
        (!self.content.is_empty() && digest == self.content)
            || (!self.fingerprint.is_empty() && digest == self.fingerprint)
            || self.population.as_ref().is_some_and(|p| p.names(digest))
    }
}
