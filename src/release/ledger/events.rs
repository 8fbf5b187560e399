//! Lines that record what happened to the ledger itself rather than a draw: a loss the
//! operator accepted (`coco ledger reanchor --accept-loss`) and a ledger adopted
//! without its anchor, or moved (`coco ledger adopt`).
//!
//! They are facts of the agency's privacy record, so they are links of the hash chain
//! like every line, and they say what they trusted and who accepted it when the host
//! says. They are of format version 3 ([`EVENT_VERSION`]): a coco that reads only the
//! draws' versions 1 and 2 refuses the whole ledger instead of reading it without the
//! ε a loss line still counts. Each kind is read strictly (every field known).

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::format_time;
use super::quote::{cut, cut_long};
use super::spending::{KeySpend, total, total_rho};
use crate::privacy::Rounding;

/// The format version of event lines.
pub const EVENT_VERSION: u32 = 3;

/// The `event` of a [`LossLine`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossTag {
    LossAccepted,
}

/// The `event` of an [`AdoptedLine`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdoptTag {
    Adopted,
}

/// Lines the anchor recorded were lost, and the operator went on from the ledger as it
/// was. The ε the lost lines spent, as the old anchor knew it, is still counted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LossLine {
    /// [`EVENT_VERSION`].
    pub v: u32,
    pub event: LossTag,
    /// A fresh id of this line.
    pub id: String,
    #[serde(with = "time::serde::rfc3339")]
    pub time: OffsetDateTime,
    /// How many lines the old anchor recorded.
    pub anchored_lines: usize,
    /// How many lines the ledger held when the loss was accepted (before this one).
    pub ledger_lines: usize,
    /// Per dataset key, the ε (and draws) the old anchor knew of that the ledger no
    /// longer holds: counted as spent by every reader.
    pub lost: Vec<KeySpend>,
    /// Why more ε may have been lost than `lost` holds (the old anchor recorded no
    /// spending, or could not be read); absent when `lost` is all of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncounted: Option<String>,
    /// Where the old anchor was kept.
    pub kept_anchor: String,
    /// Who accepted it, as the host names the user running coco (absent when it does
    /// not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_by: Option<String>,
    /// SHA-256 of the previous line's bytes.
    pub prev: String,
}

/// What an adoption trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trusted {
    /// No anchor could check the ledger (a ledger of an older coco, an anchor deleted,
    /// or the ledger and its anchor both gone): the ledger as it was is taken to hold
    /// every draw.
    LedgerAsIs,
    /// The anchor found holds every line it records: only the ledger's place changed.
    CheckedByAnchor,
}

/// `coco ledger adopt`: a ledger anchored without an anchor to check it, or anchored
/// where it now is after a move.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdoptedLine {
    /// [`EVENT_VERSION`].
    pub v: u32,
    pub event: AdoptTag,
    /// A fresh id of this line.
    pub id: String,
    #[serde(with = "time::serde::rfc3339")]
    pub time: OffsetDateTime,
    /// How many lines the ledger held (before this one).
    pub ledger_lines: usize,
    pub trusted: Trusted,
    /// The ledger the pointer or the anchor named, when it was another path (the
    /// ledger was moved or copied from there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_from: Option<String>,
    /// Who adopted it, as the host names the user running coco.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_by: Option<String>,
    /// SHA-256 of the previous line's bytes.
    pub prev: String,
}

/// A line about the ledger itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum LedgerEvent {
    LossAccepted(LossLine),
    Adopted(AdoptedLine),
}

impl LedgerEvent {
    pub fn time(&self) -> OffsetDateTime {
        match self {
            LedgerEvent::LossAccepted(l) => l.time,
            LedgerEvent::Adopted(a) => a.time,
        }
    }

    /// The spending it records as lost and still counted (none for an adoption).
    pub fn lost(&self) -> &[KeySpend] {
        match self {
            LedgerEvent::LossAccepted(l) => &l.lost,
            LedgerEvent::Adopted(_) => &[],
        }
    }

    pub(super) fn set_prev(&mut self, prev: String) {
        match self {
            LedgerEvent::LossAccepted(l) => l.prev = prev,
            LedgerEvent::Adopted(a) => a.prev = prev,
        }
    }

    pub(super) fn prev(&self) -> &str {
        match self {
            LedgerEvent::LossAccepted(l) => &l.prev,
            LedgerEvent::Adopted(a) => &a.prev,
        }
    }

    /// One sentence for the operator (`coco ledger`, `coco ledger verify`, the TUI):
    /// what happened, when, who accepted it, and what still counts.
    pub fn describe(&self) -> String {
        let by = |who: &Option<String>| {
            who.as_ref()
                .map_or_else(String::new, |w| format!(" by {w}"))
        };
        match self {
            LedgerEvent::LossAccepted(l) => {
                let zcdp = l.lost.iter().any(|k| k.zcdp_draws > 0);
                let lost = match (total(&l.lost), total_rho(&l.lost)) {
                    (_, Some(rho)) if zcdp => format!(
                        "ρ {} of {} lost draw(s) on {} dataset(s) still counts as spent",
                        rho.short(Rounding::Up),
                        l.lost.iter().map(|k| k.draws).sum::<usize>(),
                        l.lost.len()
                    ),
                    (Some(eps), _) => format!(
                        "ε {} of {} lost draw(s) on {} dataset(s) still counts as spent",
                        eps.short(Rounding::Up),
                        l.lost.iter().map(|k| k.draws).sum::<usize>(),
                        l.lost.len()
                    ),
                    _ => "no ε was lost with them (they were decisions of draws the ledger still holds)".into(),
                };
                format!(
                    "loss accepted on {}{}: the ledger held {} line(s) where its anchor recorded {}; {lost}{}; the old anchor is kept in {}",
                    format_time(l.time),
                    by(&l.accepted_by),
                    l.ledger_lines,
                    l.anchored_lines,
                    l.uncounted
                        .as_ref()
                        .map_or_else(String::new, |u| format!(" ({u})")),
                    l.kept_anchor
                )
            }
            LedgerEvent::Adopted(a) => format!(
                "ledger adopted on {}{}: its {} line(s) anchored {}{}",
                format_time(a.time),
                by(&a.accepted_by),
                a.ledger_lines,
                match a.trusted {
                    Trusted::LedgerAsIs =>
                        "as they were, with no anchor to check them (trusted to hold every draw)",
                    Trusted::CheckedByAnchor =>
                        "where the ledger now is (its anchor found it holding every line it recorded)",
                },
                a.moved_from
                    .as_ref()
                    .map_or_else(String::new, |m| format!("; moved from {m}"))
            ),
        }
    }
}

/// An event line, read strictly by its `event`.
pub(crate) fn parse_event(value: serde_json::Value) -> Result<LedgerEvent, String> {
    let kind = value
        .get("event")
        .and_then(serde_json::Value::as_str)
        .map(str::to_string);
    let event = match kind.as_deref() {
        Some("loss_accepted") => serde_json::from_value::<LossLine>(value)
            .map(LedgerEvent::LossAccepted)
            .map_err(|e| format!("not a loss line: {}", cut_long(&e.to_string())))?,
        Some("adopted") => serde_json::from_value::<AdoptedLine>(value)
            .map(LedgerEvent::Adopted)
            .map_err(|e| format!("not an adoption line: {}", cut_long(&e.to_string())))?,
        Some(other) => {
            return Err(format!(
                "event {:?} is not known to this coco (expected loss_accepted or adopted)",
                cut(other)
            ));
        }
        None => return Err("event is not a text: expected loss_accepted or adopted".into()),
    };
    let (v, id) = match &event {
        LedgerEvent::LossAccepted(l) => (l.v, &l.id),
        LedgerEvent::Adopted(a) => (a.v, &a.id),
    };
    if let Some(problem) = event.lost().iter().find_map(|k| k.check().err()) {
        return Err(format!("a loss line: {problem}"));
    }
    if v != EVENT_VERSION {
        return Err(format!(
            "an event line of format version {v}: expected {EVENT_VERSION}"
        ));
    }
    if id.is_empty() || id.len() > 64 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(format!("id {:?} is not a line id", cut(id)));
    }
    Ok(event)
}

/// The user running coco, as the host names it: `$USER`, else `$LOGNAME`, else (on
/// Linux) the name `/etc/passwd` gives the process's user id. `None` when nothing says.
pub fn operator_name() -> Option<String> {
    for var in ["USER", "LOGNAME"] {
        if let Some(name) = std::env::var_os(var)
            .map(|v| v.to_string_lossy().into_owned())
            .filter(|v| !v.trim().is_empty())
        {
            return Some(name);
        }
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .to_string();
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    Some(
        passwd
            .lines()
            .find_map(|l| {
                let mut f = l.split(':');
                let name = f.next()?;
                (f.nth(1)? == uid).then(|| name.to_string())
            })
            .unwrap_or_else(|| format!("uid {uid}")),
    )
}
