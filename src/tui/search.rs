//! Finding regions by a piece of their display id, code or name.
//!
//! An exact display id or leaf code is found at once ([`crate::data::Hierarchy::find`]:
//! binary searches). Anything else means looking at every region: 8 million display ids
//! of a census hierarchy down to the block, about a second of work. So the scan runs in
//! the worker, a [`CHUNK`] of regions at a time, checking for cancellation and sending
//! what it found so far; the Hierarchy screen shows the first match as soon as it
//! arrives and counts the others as they come.
//!
//! Display ids are not stored: the scan goes through the regions in node order, where
//! siblings are neighbours, and builds each parent's id once for all its children. A
//! region whose parent's id contains the text contains it too.

use std::ops::Range;

use crate::data::{Hierarchy, NodeId};

/// Regions scanned between two looks at the cancel flag.
pub const CHUNK: u32 = 1 << 16;

/// A search text, compared without regard to case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    needle: String,
}

impl Query {
    pub fn new(text: &str) -> Query {
        Query {
            needle: text.trim().to_lowercase(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.needle.is_empty()
    }

    /// Whether `text`, already in lower case, contains the query.
    fn in_lower(&self, text: &str) -> bool {
        text.contains(self.needle.as_str())
    }

    /// Whether `text` contains the query, whatever its case.
    pub fn in_text(&self, text: &str) -> bool {
        if text.is_ascii() {
            // Without allocating: compare windows of the text byte by byte.
            let n = self.needle.as_bytes();
            n.is_empty()
                || text
                    .as_bytes()
                    .windows(n.len())
                    .any(|w| w.eq_ignore_ascii_case(n))
        } else {
            self.in_lower(&text.to_lowercase())
        }
    }
}

/// Appends `text` to `out` in lower case.
fn push_lower(out: &mut String, text: &str) {
    if text.is_ascii() {
        let start = out.len();
        out.push_str(text);
        out[start..].make_ascii_lowercase();
    } else {
        out.push_str(&text.to_lowercase());
    }
}

/// Appends to `out`, in node order, the regions of `nodes` whose display id or name
/// contains the query.
pub fn scan(h: &Hierarchy, query: &Query, nodes: Range<u32>, out: &mut Vec<NodeId>) {
    // The parent whose lower-case display id and '/' are in `prefix`.
    let mut parent: Option<Option<NodeId>> = None;
    let mut prefix = String::new();
    let mut parent_matches = false;
    let mut id_text = String::new();
    for i in nodes {
        let id = NodeId(i);
        let node_parent = h.node(id).parent;
        if parent != Some(node_parent) {
            parent = Some(node_parent);
            prefix.clear();
            parent_matches = false;
            if let Some(p) = node_parent {
                let mut raw = String::new();
                h.push_display_id(p, &mut raw);
                push_lower(&mut prefix, &raw);
                parent_matches = query.in_lower(&prefix);
                prefix.push('/');
            }
        }
        let found = parent_matches
            || {
                id_text.clear();
                id_text.push_str(&prefix);
                push_lower(&mut id_text, h.code(id));
                query.in_lower(&id_text)
            }
            || h.name(id).is_some_and(|name| query.in_text(name));
        if found {
            out.push(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Dataset;

    /// Every region whose display id or name contains the text, the slow way.
    fn oracle(h: &Hierarchy, text: &str) -> Vec<NodeId> {
        let q = text.trim().to_lowercase();
        (0..h.len() as u32)
            .map(NodeId)
            .filter(|&id| {
                h.display_id(id).to_lowercase().contains(&q)
                    || h.name(id).is_some_and(|n| n.to_lowercase().contains(&q))
            })
            .collect()
    }

    #[test]
    fn the_scan_finds_what_the_slow_way_finds_in_any_chunks() {
        let d = Dataset::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households"),
        )
        .unwrap();
        let h = &d.hierarchy;
        let n = h.len() as u32;
        for text in [
            "vessa", "VESSA", "arv/0", "01", "0301", "ö", "KAARLÖ", "/", "ARV", "zzz", " port ",
        ] {
            let want = oracle(h, text);
            let query = Query::new(text);
            let mut whole = Vec::new();
            scan(h, &query, 0..n, &mut whole);
            assert_eq!(whole, want, "{text:?}");
            let mut pieces = Vec::new();
            for from in (0..n).step_by(7) {
                scan(h, &query, from..(from + 7).min(n), &mut pieces);
            }
            assert_eq!(pieces, want, "{text:?} in chunks");
        }
    }

    #[test]
    fn case_is_ignored_with_or_without_ascii() {
        let q = Query::new("Kaarl");
        assert!(q.in_text("KAARLÖ") && q.in_text("kaarlö") && !q.in_text("Karl"));
        assert!(Query::new("ÖS").in_text("Östra"));
        assert!(Query::new("  ").is_empty());
    }
}
