//! How a plan was tuned: whether the choices it publishes (K, the methods, the tails,
//! the split of ε) were made from public information, from previews of a public proxy,
//! or after previews of the confidential data.
//!
//! A plan's parameters are published with the release. If they were chosen by looking
//! at errors measured against the confidential data (coco's previews, its trade-off
//! search, the Dataset screen's confidential columns), the published plan is a function
//! of the data that no ε accounts for. coco cannot prevent that, but it records it: the
//! plan file (`tuning = "…"`), the ledger entry and the manifest say which it was. The
//! label is a fact about how the operator worked, never a figure computed from the data.

use crate::wire::Named;
use serde::{Deserialize, Serialize};

/// How a plan was tuned, from the most to the least private.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
#[value(rename_all = "kebab-case")]
pub enum Tuning {
    /// coco's default plan, chosen from public information only (the hierarchy, each
    /// region's G and K): `coco plan` without options, the plan the TUI opens with,
    /// `coco preview DIR` without `--config`.
    #[value(skip)]
    PublicDefault,
    /// Chosen by the operator from public information, without previews of the
    /// confidential data (`coco plan` with options, edits made in the TUI before any
    /// confidential preview).
    Public,
    /// Tuned on previews of a public proxy dataset with the same hierarchy (an earlier
    /// census, or coco's synthetic proxy built from the public G).
    Proxy,
    /// Not recorded: a plan written by hand or by an older coco.
    #[default]
    #[value(skip)]
    Unknown,
    /// Chosen after previews measured against the confidential data, or a size (K, a
    /// tail) typed in the TUI after its confidential figures were on screen: the
    /// published parameters may be a function of the data outside the privacy
    /// guarantee.
    #[value(alias = "confidential")]
    ConfidentialPreviews,
}

impl Tuning {
    /// One sentence for the operator.
    pub fn describe(self) -> &'static str {
        match self {
            Tuning::PublicDefault => "coco's default, from public information only",
            Tuning::Public => "chosen from public information, without confidential previews",
            Tuning::Proxy => "tuned on previews of a public proxy dataset",
            Tuning::Unknown => "not recorded",
            Tuning::ConfidentialPreviews => {
                "chosen after previews or figures of the confidential data (outside the privacy guarantee)"
            }
        }
    }

    /// Whether the plan's parameters are known to depend on public information only.
    pub fn is_public(self) -> bool {
        matches!(self, Tuning::PublicDefault | Tuning::Public | Tuning::Proxy)
    }

    /// What an edit of a plan with this tuning makes it: the default, edited, is the
    /// operator's public choice; the others keep their label.
    pub fn edited(self) -> Tuning {
        match self {
            Tuning::PublicDefault => Tuning::Public,
            t => t,
        }
    }

    /// The less private of two labels (a plan tuned both ways is as private as the
    /// worse).
    pub fn worse(self, other: Tuning) -> Tuning {
        self.max(other)
    }
}

/// The public proxy a plan was tuned on: `synthetic` (coco's synthetic proxy) or a
/// proxy dataset's name. Public by construction (a proxy is public data), one line of
/// printable text so it reads the same in the plan file, the manifest and the ledger.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TuningSource(String);

impl TuningSource {
    /// The longest source accepted.
    pub const MAX_CHARS: usize = 200;

    /// A source from text: trimmed, not empty, at most [`Self::MAX_CHARS`] characters,
    /// no control characters.
    pub fn new(text: &str) -> Option<TuningSource> {
        let text = text.trim();
        (!text.is_empty()
            && text.chars().count() <= Self::MAX_CHARS
            && !text.chars().any(char::is_control))
        .then(|| TuningSource(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for TuningSource {
    type Error = String;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        TuningSource::new(&text).ok_or_else(|| {
            format!("{text:?} is not a proxy's name (one line of printable text, at most 200 characters)")
        })
    }
}

impl From<TuningSource> for String {
    fn from(source: TuningSource) -> String {
        source.0
    }
}

impl std::fmt::Display for TuningSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Display for Tuning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_spelling_everywhere() {
        for t in Tuning::all().into_iter() {
            assert_eq!(Tuning::parse(t.name()), Some(t));
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, format!("\"{}\"", t.name()));
            assert_eq!(serde_json::from_str::<Tuning>(&json).unwrap(), t);
        }
        assert_eq!(Tuning::parse("confidential"), None);
    }

    #[test]
    fn labels_only_get_worse() {
        assert_eq!(Tuning::PublicDefault.edited(), Tuning::Public);
        assert_eq!(Tuning::Proxy.edited(), Tuning::Proxy);
        assert_eq!(
            Tuning::Proxy.worse(Tuning::ConfidentialPreviews),
            Tuning::ConfidentialPreviews
        );
        assert_eq!(Tuning::Public.worse(Tuning::PublicDefault), Tuning::Public);
        assert!(Tuning::Proxy.is_public() && !Tuning::Unknown.is_public());
    }
}
