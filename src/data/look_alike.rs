//! Labels that look the same: two regions of one parent whose codes, or whose names,
//! differ as text but read alike in the published tables (`Ostwick` and `OSTWICK`, an
//! `é` composed and the same letter written as `e` and a combining accent, full-width
//! letters, a trailing ideographic space). Not an error, since either may be meant, but
//! the operator is warned: readers of `counts.csv` could not tell the two rows apart.
//!
//! # The rule
//! Two labels look alike when their [`skeleton`]s are equal: the text without the
//! characters the loader refuses as invisible ([`super::text`]: format characters,
//! default-ignorable code points, blank fillers; none is left in loaded text, so this
//! only matters to other callers), in Unicode normalisation form NFKC (compatibility
//! forms folded: full-width letters, ligatures, superscripts, no-break and other
//! Unicode spaces as a plain space; the `unicode-normalization` crate, whose tables are
//! Unicode 18.0.0's), lower-cased (the standard library's lowercase mapping, which
//! equals Unicode's case folding except for a few letters such as `ß`), NFKC again
//! (lowercasing may leave a text not in NFKC), with runs of whitespace made one space
//! and the ends trimmed.
//!
//! Codes are compared among the children of each parent (display ids are what a reader
//! tells regions by) and names among the named children of each parent.

use std::borrow::Cow;
use std::collections::HashMap;

use unicode_normalization::UnicodeNormalization;

use super::{Hierarchy, NodeId};

/// How many look-alike pairs a dataset keeps to show (all are counted).
pub const SHOWN: usize = 5;

/// Which label of a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelKind {
    /// Its code in `hierarchy.csv`.
    Code,
    /// Its name in `names.csv`.
    Name,
}

/// One region's label as loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// The region's display id.
    pub region: String,
    pub text: String,
    /// The line of `names.csv` that gave a name.
    pub line: Option<u64>,
}

/// Two labels of one parent's children that look the same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LookAlike {
    pub kind: LabelKind,
    /// The parent's display id.
    pub parent: String,
    pub first: Label,
    pub second: Label,
}

/// A dataset's look-alike labels: the first [`SHOWN`] pairs, and how many in all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LookAlikes {
    pub shown: Vec<LookAlike>,
    pub total: u64,
}

impl LookAlikes {
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    fn push(&mut self, pair: LookAlike) {
        if self.shown.len() < SHOWN {
            self.shown.push(pair);
        }
        self.total += 1;
    }

    /// Both lists, this one's pairs first.
    pub fn extend(&mut self, other: LookAlikes) {
        let total = self.total + other.total;
        for pair in other.shown {
            self.push(pair);
        }
        self.total = total;
    }
}

/// What a label looks like (see the module documentation). Borrows when the text is
/// already its own skeleton, which most codes are.
pub fn skeleton(text: &str) -> Cow<'_, str> {
    let plain = text
        .bytes()
        .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
        && !text.contains("  ")
        && text.trim() == text;
    if plain {
        return Cow::Borrowed(text);
    }
    if text.is_ascii() {
        // NFKC leaves ASCII as it is, and nothing in ASCII is invisible.
        let lower = text.to_ascii_lowercase();
        return Cow::Owned(lower.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    let visible: String = text
        .chars()
        .filter(|&c| !(super::text::is_format(c) || super::text::is_invisible(c)))
        .collect();
    let folded: String = visible.nfkc().collect::<String>().to_lowercase();
    let again: String = folded.nfkc().collect();
    Cow::Owned(again.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Code points of `a` and `b` where they first differ, for a message: `at character 8:
/// U+0049 against U+00CE` (or where one ends).
pub fn first_difference(a: &str, b: &str) -> String {
    let (mut x, mut y) = (a.chars(), b.chars());
    let mut at = 1;
    loop {
        match (x.next(), y.next()) {
            (Some(p), Some(q)) if p == q => at += 1,
            (Some(p), Some(q)) => {
                return format!(
                    "at character {at}: U+{:04X} against U+{:04X}",
                    p as u32, q as u32
                );
            }
            (Some(p), None) => {
                return format!("at character {at}: U+{:04X} against the end", p as u32);
            }
            (None, Some(q)) => {
                return format!("at character {at}: the end against U+{:04X}", q as u32);
            }
            (None, None) => return "nowhere".into(),
        }
    }
}

/// The look-alike codes among the children of every region of `hierarchy`.
pub fn codes(hierarchy: &Hierarchy) -> LookAlikes {
    let mut found = LookAlikes::default();
    for (i, node) in hierarchy.nodes().iter().enumerate() {
        // Codes of one parent are distinct, so plain ones (lower-case ASCII, single
        // spaces) are their own distinct skeletons: a pair needs one that is not.
        if node.children.len() < 2
            || node
                .children()
                .all(|c| matches!(skeleton(hierarchy.code(c)), Cow::Borrowed(_)))
        {
            continue;
        }
        let parent = NodeId(i as u32);
        let mut seen: HashMap<Cow<'_, str>, NodeId> = HashMap::new();
        for child in node.children() {
            let key = skeleton(hierarchy.code(child));
            match seen.get(&key) {
                Some(&first) => found.push(LookAlike {
                    kind: LabelKind::Code,
                    parent: hierarchy.display_id(parent),
                    first: code_label(hierarchy, first),
                    second: code_label(hierarchy, child),
                }),
                None => {
                    seen.insert(key, child);
                }
            }
        }
    }
    found
}

fn code_label(hierarchy: &Hierarchy, id: NodeId) -> Label {
    Label {
        region: hierarchy.display_id(id),
        text: hierarchy.code(id).to_string(),
        line: None,
    }
}

/// The look-alike names among `names` (a region, its name and the line of `names.csv`
/// that gave it, in file order).
pub fn names(hierarchy: &Hierarchy, names: &[(NodeId, String, u64)]) -> LookAlikes {
    let mut found = LookAlikes::default();
    let mut seen: HashMap<(Option<NodeId>, Cow<'_, str>), usize> = HashMap::new();
    for (i, (id, name, _)) in names.iter().enumerate() {
        let parent = hierarchy.node(*id).parent;
        match seen.entry((parent, skeleton(name))) {
            std::collections::hash_map::Entry::Occupied(first) => {
                let label = |j: usize| Label {
                    region: hierarchy.display_id(names[j].0),
                    text: names[j].1.clone(),
                    line: Some(names[j].2),
                };
                found.push(LookAlike {
                    kind: LabelKind::Name,
                    parent: parent.map_or_else(String::new, |p| hierarchy.display_id(p)),
                    first: label(*first.get()),
                    second: label(i),
                });
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(i);
            }
        }
    }
    found
}

impl std::fmt::Display for LookAlike {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let quoted = |l: &Label| format!("\"{}\"", super::text::escape_controls(&l.text));
        match self.kind {
            LabelKind::Code => write!(
                f,
                "codes {} ({}) and {} ({}) under {}",
                quoted(&self.first),
                self.first.region,
                quoted(&self.second),
                self.second.region,
                self.parent
            )?,
            LabelKind::Name => {
                let line = |l: &Label| match l.line {
                    Some(n) => format!("{}, names.csv:{n}", l.region),
                    None => l.region.clone(),
                };
                write!(
                    f,
                    "names {} ({}) and {} ({}) under {}",
                    quoted(&self.first),
                    line(&self.first),
                    quoted(&self.second),
                    line(&self.second),
                    self.parent
                )?
            }
        }
        write!(
            f,
            " (they differ {})",
            first_difference(&self.first.text, &self.second.text)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skeletons_fold_what_reads_alike() {
        assert_eq!(skeleton("ostwick"), "ostwick");
        assert!(matches!(skeleton("ostwick"), Cow::Borrowed(_)));
        assert_eq!(skeleton("OSTWICK"), "ostwick");
        // Composed and decomposed: canonically equivalent.
        assert_eq!(skeleton("\u{ce}le"), skeleton("I\u{302}le"));
        // Full-width letters, a ligature, Unicode spaces.
        assert_eq!(skeleton("\u{ff2f}stwick"), "ostwick");
        assert_eq!(skeleton("\u{fb01}eld"), "field");
        assert_eq!(skeleton("Ost\u{a0}\u{3000}wick\u{3000}"), "ost wick");
        // What the loader refuses is left out.
        assert_eq!(skeleton("Ostwick\u{3164}"), "ostwick");
        assert_eq!(skeleton("Ost\u{200b}wick"), "ostwick");
        // Different letters stay different.
        assert_ne!(skeleton("Ostwick"), skeleton("Ostwich"));
        assert_ne!(skeleton("Straße"), skeleton("Strasse"));
    }

    #[test]
    fn siblings_alike_are_found_and_cousins_are_not() {
        let paths: Vec<Vec<String>> = [
            ["X", "a", "A1"],
            ["X", "a", "a1"],
            ["X", "b", "b1"],
            ["X", "B", "b2"],
        ]
        .iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect();
        let h =
            Hierarchy::from_leaf_paths(vec!["n".into(), "s".into(), "c".into()], &paths).unwrap();
        let found = codes(&h);
        assert_eq!(found.total, 2, "{found:?}");
        let text: Vec<String> = found.shown.iter().map(ToString::to_string).collect();
        assert!(
            text.contains(&"codes \"B\" (X/B) and \"b\" (X/b) under X (they differ at character 1: U+0042 against U+0062)".to_string()),
            "{text:?}"
        );
        assert!(
            text.contains(&"codes \"A1\" (X/a/A1) and \"a1\" (X/a/a1) under X/a (they differ at character 1: U+0041 against U+0061)".to_string()),
            "{text:?}"
        );
        let id = |p: &str| h.find(p).unwrap();
        let names_given = vec![
            (id("X/a"), "Ostwick".to_string(), 2),
            (id("X/b"), "Other".to_string(), 3),
            (id("X/B"), "OSTWICK".to_string(), 4),
            // Same name, other parents: not compared.
            (id("X/a/a1"), "Vale".to_string(), 5),
            (id("X/b/b1"), "Vale".to_string(), 6),
        ];
        let found = names(&h, &names_given);
        assert_eq!(found.total, 1);
        assert_eq!(
            found.shown[0].to_string(),
            "names \"Ostwick\" (X/a, names.csv:2) and \"OSTWICK\" (X/B, names.csv:4) under X (they differ at character 2: U+0073 against U+0053)"
        );
    }

    #[test]
    fn many_pairs_are_counted_and_a_few_kept() {
        let mut all = LookAlikes::default();
        let pair = LookAlike {
            kind: LabelKind::Code,
            parent: "X".into(),
            first: Label {
                region: "X/a".into(),
                text: "a".into(),
                line: None,
            },
            second: Label {
                region: "X/A".into(),
                text: "A".into(),
                line: None,
            },
        };
        for _ in 0..3 {
            all.push(pair.clone());
        }
        let mut more = LookAlikes::default();
        for _ in 0..4 {
            more.push(pair.clone());
        }
        all.extend(more);
        assert_eq!((all.shown.len(), all.total), (SHOWN, 7));
        assert_eq!(
            first_difference("ab", "a"),
            "at character 2: U+0062 against the end"
        );
    }
}
