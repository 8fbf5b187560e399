//! The Hierarchy screen's tree of regions, walked lazily.
//!
//! The rows of the tree are the root, then, for each open region, its children in
//! order, each followed by its own rows when it is open. A census hierarchy has 8
//! million blocks and a county may hold hundreds of tracts of a hundred blocks each, so
//! the rows are never listed: the row after or before a region is found from the
//! region's place among its siblings (children are contiguous node ranges), in a few
//! steps up or down the tree. Moving costs the rows moved over, and a frame costs the
//! rows it shows, whatever is open.

use std::collections::HashSet;

use crate::data::{Hierarchy, NodeId};

/// The tree as shown: a hierarchy and the regions that are open.
#[derive(Clone, Copy)]
pub struct Tree<'a> {
    h: &'a Hierarchy,
    expanded: &'a HashSet<NodeId>,
}

impl<'a> Tree<'a> {
    pub fn new(h: &'a Hierarchy, expanded: &'a HashSet<NodeId>) -> Tree<'a> {
        Tree { h, expanded }
    }

    /// Whether the region's children are shown.
    pub fn is_open(&self, id: NodeId) -> bool {
        !self.h.node(id).is_leaf() && self.expanded.contains(&id)
    }

    fn last_child(&self, id: NodeId) -> NodeId {
        NodeId(self.h.node(id).children.end - 1)
    }

    /// The row below `id`, if any.
    pub fn next(&self, id: NodeId) -> Option<NodeId> {
        if self.is_open(id) {
            return Some(NodeId(self.h.node(id).children.start));
        }
        // The next sibling of the region or of its nearest ancestor that has one.
        let mut at = id;
        while let Some(parent) = self.h.node(at).parent {
            if at.0 + 1 < self.h.node(parent).children.end {
                return Some(NodeId(at.0 + 1));
            }
            at = parent;
        }
        None
    }

    /// The row above `id`, if any.
    pub fn prev(&self, id: NodeId) -> Option<NodeId> {
        let parent = self.h.node(id).parent?;
        if id.0 == self.h.node(parent).children.start {
            return Some(parent);
        }
        // The previous sibling's last row.
        let mut at = NodeId(id.0 - 1);
        while self.is_open(at) {
            at = self.last_child(at);
        }
        Some(at)
    }

    /// The last row.
    pub fn last(&self) -> NodeId {
        let mut at = NodeId::ROOT;
        while self.is_open(at) {
            at = self.last_child(at);
        }
        at
    }

    /// The row `by` rows below `id` (above it when negative), or the last (first) row
    /// when there are fewer.
    pub fn step(&self, id: NodeId, by: isize) -> NodeId {
        let mut at = id;
        for _ in 0..by.unsigned_abs() {
            let next = if by > 0 { self.next(at) } else { self.prev(at) };
            match next {
                Some(n) => at = n,
                None => break,
            }
        }
        at
    }

    /// The `height` rows shown around `selected`: it sits in the middle unless the
    /// tree's first or last row comes first.
    pub fn window(&self, selected: NodeId, height: usize) -> Vec<NodeId> {
        if height == 0 {
            return Vec::new();
        }
        let mut above = Vec::new();
        let mut at = selected;
        while above.len() < height / 2 {
            match self.prev(at) {
                Some(p) => {
                    above.push(p);
                    at = p;
                }
                None => break,
            }
        }
        let mut below = vec![selected];
        let mut at = selected;
        while above.len() + below.len() < height {
            match self.next(at) {
                Some(n) => {
                    below.push(n);
                    at = n;
                }
                None => break,
            }
        }
        // Near the end: fill the frame from above.
        let mut at = above.last().copied().unwrap_or(selected);
        while above.len() + below.len() < height {
            match self.prev(at) {
                Some(p) => {
                    above.push(p);
                    at = p;
                }
                None => break,
            }
        }
        above.reverse();
        above.extend(below);
        above
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Dataset;

    /// Every row, listed the eager way.
    fn rows(h: &Hierarchy, expanded: &HashSet<NodeId>) -> Vec<NodeId> {
        let mut out = Vec::new();
        let mut stack = vec![NodeId::ROOT];
        while let Some(id) = stack.pop() {
            out.push(id);
            if expanded.contains(&id) {
                stack.extend(h.node(id).children.clone().rev().map(NodeId));
            }
        }
        out
    }

    /// The rows shown the eager way: the selection in the middle, clamped to the ends.
    fn shown(all: &[NodeId], selected: NodeId, height: usize) -> Vec<NodeId> {
        let pos = all.iter().position(|&id| id == selected).unwrap();
        let offset = pos
            .saturating_sub(height / 2)
            .min(all.len().saturating_sub(height));
        all.iter().skip(offset).take(height).copied().collect()
    }

    #[test]
    fn walking_the_tree_lazily_gives_the_rows_listed_eagerly() {
        let d = Dataset::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households"),
        )
        .unwrap();
        let h = &d.hierarchy;
        // Some open, some closed, and an open region under a closed one (not shown).
        let mut expanded = HashSet::from([NodeId::ROOT]);
        let root_children: Vec<NodeId> = h.node(NodeId::ROOT).children().collect();
        expanded.insert(root_children[0]);
        expanded.insert(root_children[2]);
        expanded.insert(
            h.node(root_children[1])
                .children()
                .next()
                .unwrap_or(NodeId::ROOT),
        );
        expanded.insert(*root_children.last().unwrap());
        for open in [HashSet::from([NodeId::ROOT]), expanded] {
            let tree = Tree::new(h, &open);
            let all = rows(h, &open);
            for (i, &id) in all.iter().enumerate() {
                assert_eq!(tree.next(id), all.get(i + 1).copied());
                assert_eq!(tree.prev(id), i.checked_sub(1).map(|j| all[j]));
                assert_eq!(tree.step(id, 10), all[(i + 10).min(all.len() - 1)]);
                assert_eq!(tree.step(id, -10), all[i.saturating_sub(10)]);
                for height in [0, 1, 2, 5, 24, all.len(), all.len() + 3] {
                    assert_eq!(
                        tree.window(id, height),
                        shown(&all, id, height),
                        "row {i}, height {height}"
                    );
                }
            }
            assert_eq!(tree.last(), *all.last().unwrap());
        }
    }
}
