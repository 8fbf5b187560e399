//! What the operator should know about a release's estimates, as values: each kind has
//! its fields (a level, counts, the tail's parameters), so screens and reports can
//! treat it by kind. On every wire — `manifest.json`'s `warnings`, a preview's `notes`
//! in `--json` — a warning is its sentence, as it always was (the contract); code never
//! builds or parses one from text.

use std::fmt;

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
        }
    }
}

/// As its sentence (the manifest's and the preview's wire).
impl serde::Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
