//! What the operator should know about a release's estimates, or about the dataset's
//! labels, as values: each kind has its fields (a level, counts, the tail's parameters,
//! the labels that read alike), so screens and reports can treat it by kind. On every wire — `manifest.json`'s `warnings`, a preview's `notes`
//! in `--json` — a warning is its sentence, as it always was (the contract); code never
//! builds or parses one from text.

use std::fmt;

use crate::data::Dataset;
use crate::data::look_alike::LookAlikes;
use crate::estimate::TailLength;
use crate::histogram::Size;
use crate::units::thousands;

/// A warning about a release or a preview's estimates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Warning {
    /// `wls` was asked for but a level is measured with `naive` (no fit): `topdown` ran.
    WlsNeedsFits,
    /// Some regions' tails were saturated: all `listed` groups lay above `above`, so
    /// more may, and the unlisted ones were put at `above`.
    SaturatedTail {
        level: String,
        saturated: u64,
        regions: u64,
        listed: TailLength,
        above: Size,
    },
    /// `wls` joined the most alike runs of `joined` of the level's `regions` regions to
    /// stay within the memory it had (their released counts are approximate).
    JoinedRuns {
        level: String,
        joined: u64,
        regions: u64,
    },
    /// Codes or names of one parent's children that read alike
    /// ([`crate::data::look_alike`]): the published rows would look the same.
    LookAlikeLabels(LookAlikes),
}

/// A warning's kind, named on every wire it is written to (`manifest.json`'s
/// `warning_kinds`) through [`crate::wire`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    WlsNeedsFits,
    SaturatedTail,
    JoinedRuns,
    LookAlikeLabels,
}

impl Warning {
    /// Its kind.
    pub fn kind(&self) -> WarningKind {
        match self {
            Warning::WlsNeedsFits => WarningKind::WlsNeedsFits,
            Warning::SaturatedTail { .. } => WarningKind::SaturatedTail,
            Warning::JoinedRuns { .. } => WarningKind::JoinedRuns,
            Warning::LookAlikeLabels(_) => WarningKind::LookAlikeLabels,
        }
    }

    /// What the operator should know about a dataset as loaded (its labels): shown by
    /// `coco inspect`, `coco preview`, `coco release` and the TUI.
    pub fn of_dataset(dataset: &Dataset) -> Vec<Warning> {
        let alike = dataset.look_alikes();
        if alike.is_empty() {
            Vec::new()
        } else {
            vec![Warning::LookAlikeLabels(alike.clone())]
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::WlsNeedsFits => f.write_str(
                "consistency \"wls\" needs method \"hc\" or \"hg\" at every level (not \"naive\"); used \"topdown\" instead",
            ),
            Warning::SaturatedTail {
                level,
                saturated,
                regions,
                listed,
                above,
            } => write!(
                f,
                "{level}: the tail is saturated in {saturated} of {regions} regions (all {listed} listed groups lie above size {above}; any more were put at {above}): raise tail.groups, raise tail.above, or use plain hc where many groups are large"
            ),
            Warning::JoinedRuns {
                level,
                joined,
                regions,
            } => write!(
                f,
                "{level}: wls joined the most alike runs of {} of {} regions to stay within the memory available (their released counts are approximate): free memory or raise COCO_MEMORY_LIMIT",
                thousands(u128::from(*joined)),
                thousands(u128::from(*regions)),
            ),
            Warning::LookAlikeLabels(alike) => {
                f.write_str(
                    "labels of one parent's regions read alike (the same once in NFKC, lower case, without invisible characters), so the published tables would show rows that look the same: ",
                )?;
                for (i, pair) in alike.shown.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{pair}")?;
                }
                let more = alike.total - alike.shown.len() as u64;
                if more > 0 {
                    write!(f, "; and {} more pair(s)", thousands(u128::from(more)))?;
                }
                f.write_str(": rename one of each pair in the input if readers must tell them apart")
            }
        }
    }
}

/// As its sentence (the manifest's and the preview's wire).
impl serde::Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
