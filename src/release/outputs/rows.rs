//! The order and names of a release's rows, shared by every table format: levels root
//! first, regions sorted by display id within a level, formatted in chunks of
//! [`CHUNK_REGIONS`] regions; display ids built incrementally ([`DisplayIds`]); the file
//! names of the wide tables ([`table_file`]).

use rayon::prelude::*;

use crate::data::{Hierarchy, NodeId};

/// Nodes of each level sorted by display id (the order of `counts.csv`).
pub(crate) fn sorted_levels(h: &Hierarchy) -> Vec<Vec<NodeId>> {
    h.levels()
        .map(|l| {
            let mut ids: Vec<NodeId> = h.level_nodes(l).collect();
            if !ids
                .par_windows(2)
                .all(|w| h.cmp_display_ids(w[0], w[1]).is_le())
            {
                ids.par_sort_by(|&a, &b| h.cmp_display_ids(a, b));
            }
            ids
        })
        .collect()
}

/// Display ids of nodes taken one after another, each built from its parent's, which
/// is kept while siblings follow one another (as in a level sorted by display id).
pub(crate) struct DisplayIds<'h> {
    h: &'h Hierarchy,
    /// The parent of the last node, and where its display id and `/` end in `text`.
    parent: Option<(NodeId, usize)>,
    text: String,
}

impl<'h> DisplayIds<'h> {
    pub(crate) fn new(h: &'h Hierarchy) -> Self {
        Self {
            h,
            parent: None,
            text: String::new(),
        }
    }

    /// [`Hierarchy::display_id`] of `id`.
    pub(crate) fn of(&mut self, id: NodeId) -> &str {
        let parent = self.h.node(id).parent;
        match (parent, self.parent) {
            (Some(p), Some((q, end))) if p == q => self.text.truncate(end),
            (Some(p), _) => {
                self.text.clear();
                self.h.push_display_id(p, &mut self.text);
                self.text.push('/');
                self.parent = Some((p, self.text.len()));
            }
            (None, _) => {
                self.text.clear();
                self.parent = None;
            }
        }
        self.text.push_str(self.h.code(id));
        &self.text
    }
}

/// Regions per chunk of rows formatted at once (about a megabyte of `counts.csv` for
/// census blocks).
pub(crate) const CHUNK_REGIONS: usize = 8192;

/// The chunks of a release's rows: (level, range of its sorted nodes).
pub(crate) fn chunks_of(levels: &[Vec<NodeId>]) -> Vec<(usize, std::ops::Range<usize>)> {
    levels
        .iter()
        .enumerate()
        .flat_map(|(l, ids)| {
            (0..ids.len())
                .step_by(CHUNK_REGIONS)
                .map(move |s| (l, s..(s + CHUNK_REGIONS).min(ids.len())))
        })
        .collect()
}

/// A file name for a level's table: its index and a safe version of its name (ASCII
/// letters, digits, `-` and `_`; cut to 100 characters, so that a level name of up to
/// the 1024 bytes a field may hold still gives a valid file name), with the extension
/// `ext`.
pub(crate) fn table_file(index: usize, level: &str, ext: &str) -> String {
    let safe: String = level
        .chars()
        .take(100)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("tables/{index}-{safe}.{ext}")
}

#[cfg(test)]
mod table_name_tests {
    use super::table_file;

    fn table_name(index: usize, level: &str) -> String {
        table_file(index, level, "csv")
    }

    #[test]
    fn table_names_are_safe_and_short() {
        assert_eq!(table_name(0, "nation"), "tables/0-nation.csv");
        assert_eq!(
            table_name(2, "Ortsteil/Bezirk é"),
            "tables/2-Ortsteil_Bezirk__.csv"
        );
        let long = table_name(1, &"x".repeat(1024));
        assert!(long.len() < 255 - "tables/".len(), "{}", long.len());
    }
}
