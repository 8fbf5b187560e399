//! The public geographic hierarchy: levels from the root down, and the tree of regions.
//!
//! Nodes live in one arena ordered level by level (the root is node 0) and, within a
//! level, by parent and then by code, so the children of a node are one contiguous
//! range of the next level. A node is identified by its path of codes; its display id
//! is the path joined by `/` (`US/06/06037`).

use std::collections::HashMap;
use std::ops::Range;

use thiserror::Error;

use crate::histogram::CountOfCounts;

/// Index of a node in [`Hierarchy::nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

impl NodeId {
    pub const ROOT: NodeId = NodeId(0);

    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Index of a level, 0 = root.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LevelId(pub usize);

/// One region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The region's code at its level (`06037`).
    pub code: String,
    pub level: LevelId,
    pub parent: Option<NodeId>,
    /// Children, as a range of node indices (empty for a leaf).
    pub children: Range<u32>,
    /// Codes from the root joined by `/` (`US/06/06037`).
    pub display_id: String,
    /// Optional human-readable name (`Los Angeles County`).
    pub name: Option<String>,
}

impl Node {
    pub fn children(&self) -> impl ExactSizeIterator<Item = NodeId> + '_ {
        self.children.clone().map(NodeId)
    }

    pub fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }

    /// The display id, followed by the name when there is one.
    pub fn label(&self) -> String {
        match &self.name {
            Some(name) => format!("{} ({name})", self.display_id),
            None => self.display_id.clone(),
        }
    }
}

/// A structural problem with a set of leaf paths. The loader adds the file and line.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum HierarchyError {
    #[error("no levels: the header must name at least one level")]
    NoLevels,
    #[error("level name {name:?} appears twice in the header")]
    DuplicateLevel { name: String },
    #[error("empty level name in the header (column {column})")]
    EmptyLevelName { column: usize },
    #[error("no regions: the file has a header but no rows")]
    NoRows,
    #[error("expected {expected} codes (one per level), found {found}")]
    WrongDepth { expected: usize, found: usize },
    #[error("empty code in column {column} ({level})")]
    EmptyCode { column: usize, level: String },
    #[error("code {code:?} in column {column} contains '/', which separates codes in display ids")]
    SlashInCode { code: String, column: usize },
    #[error(
        "root code {found:?} differs from {expected:?} on the first row: there must be exactly one root"
    )]
    SecondRoot { expected: String, found: String },
    #[error(
        "leaf code {code:?} appears twice (first at row {first_row}); leaf codes must be unique"
    )]
    DuplicateLeaf { code: String, first_row: usize },
}

/// The tree of regions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hierarchy {
    level_names: Vec<String>,
    nodes: Vec<Node>,
    /// Node index range of each level.
    levels: Vec<Range<u32>>,
    /// Leaf code → node.
    leaves: HashMap<String, NodeId>,
}

impl Hierarchy {
    /// Builds the tree from the level names (root first) and one path of codes per
    /// leaf. On error, returns the index of the offending path (`None` for the header)
    /// with the problem.
    pub fn from_leaf_paths(
        level_names: Vec<String>,
        paths: &[Vec<String>],
    ) -> Result<Self, (Option<usize>, HierarchyError)> {
        if level_names.is_empty() {
            return Err((None, HierarchyError::NoLevels));
        }
        for (i, name) in level_names.iter().enumerate() {
            if name.trim().is_empty() {
                return Err((None, HierarchyError::EmptyLevelName { column: i + 1 }));
            }
            if level_names[..i].contains(name) {
                return Err((None, HierarchyError::DuplicateLevel { name: name.clone() }));
            }
        }
        if paths.is_empty() {
            return Err((None, HierarchyError::NoRows));
        }
        let depth = level_names.len();
        let mut leaf_rows: HashMap<&str, usize> = HashMap::with_capacity(paths.len());
        for (row, path) in paths.iter().enumerate() {
            if path.len() != depth {
                return Err((
                    Some(row),
                    HierarchyError::WrongDepth {
                        expected: depth,
                        found: path.len(),
                    },
                ));
            }
            for (col, code) in path.iter().enumerate() {
                if code.is_empty() {
                    return Err((
                        Some(row),
                        HierarchyError::EmptyCode {
                            column: col + 1,
                            level: level_names[col].clone(),
                        },
                    ));
                }
                if code.contains('/') {
                    return Err((
                        Some(row),
                        HierarchyError::SlashInCode {
                            code: code.clone(),
                            column: col + 1,
                        },
                    ));
                }
            }
            if path[0] != paths[0][0] {
                return Err((
                    Some(row),
                    HierarchyError::SecondRoot {
                        expected: paths[0][0].clone(),
                        found: path[0].clone(),
                    },
                ));
            }
            let leaf = path[depth - 1].as_str();
            if let Some(&first) = leaf_rows.get(leaf) {
                return Err((
                    Some(row),
                    HierarchyError::DuplicateLeaf {
                        code: leaf.to_string(),
                        first_row: first,
                    },
                ));
            }
            leaf_rows.insert(leaf, row);
        }

        // Level by level: the distinct path prefixes of length l+1, sorted, so that each
        // parent's children are contiguous and in code order.
        let mut sorted: Vec<&Vec<String>> = paths.iter().collect();
        sorted.sort();
        let mut nodes: Vec<Node> = Vec::new();
        let mut levels: Vec<Range<u32>> = Vec::with_capacity(depth);
        // For each sorted path, the node index of its prefix at the previous level.
        let mut parent_of_path: Vec<Option<NodeId>> = vec![None; sorted.len()];
        for level in 0..depth {
            let start = nodes.len() as u32;
            let mut prev_prefix: Option<&[String]> = None;
            for (i, path) in sorted.iter().enumerate() {
                let prefix = &path[..=level];
                if prev_prefix != Some(prefix) {
                    let parent = parent_of_path[i];
                    nodes.push(Node {
                        code: path[level].clone(),
                        level: LevelId(level),
                        parent,
                        children: 0..0,
                        display_id: prefix.join("/"),
                        name: None,
                    });
                    prev_prefix = Some(prefix);
                }
                parent_of_path[i] = Some(NodeId(nodes.len() as u32 - 1));
            }
            levels.push(start..nodes.len() as u32);
        }
        // Children ranges: the nodes of level l+1 are sorted by parent.
        for level in levels.iter().skip(1) {
            for id in level.clone() {
                let parent = nodes[id as usize]
                    .parent
                    .expect("non-root nodes have parents")
                    .index();
                let range = &mut nodes[parent].children;
                if Range::is_empty(range) {
                    *range = id..id + 1;
                } else {
                    range.end = id + 1;
                }
            }
        }
        let leaves = levels[depth - 1]
            .clone()
            .map(|id| (nodes[id as usize].code.clone(), NodeId(id)))
            .collect();
        Ok(Self {
            level_names,
            nodes,
            levels,
            leaves,
        })
    }

    /// Level names, root first.
    pub fn level_names(&self) -> &[String] {
        &self.level_names
    }

    pub fn depth(&self) -> usize {
        self.level_names.len()
    }

    pub fn levels(&self) -> impl ExactSizeIterator<Item = LevelId> {
        (0..self.level_names.len()).map(LevelId)
    }

    pub fn leaf_level(&self) -> LevelId {
        LevelId(self.level_names.len() - 1)
    }

    pub fn level_name(&self, level: LevelId) -> &str {
        &self.level_names[level.0]
    }

    /// The level with this name.
    pub fn level_by_name(&self, name: &str) -> Option<LevelId> {
        self.level_names.iter().position(|n| n == name).map(LevelId)
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    pub fn root(&self) -> NodeId {
        NodeId::ROOT
    }

    /// The nodes of one level, in order.
    pub fn level_nodes(&self, level: LevelId) -> impl ExactSizeIterator<Item = NodeId> + Clone {
        self.levels[level.0].clone().map(NodeId)
    }

    pub fn level_len(&self, level: LevelId) -> usize {
        self.levels[level.0].len()
    }

    /// The leaf with this code.
    pub fn leaf(&self, code: &str) -> Option<NodeId> {
        self.leaves.get(code).copied()
    }

    /// The node with this display id (`US/06`), or a leaf by its code.
    pub fn find(&self, id: &str) -> Option<NodeId> {
        self.find_path(id).or_else(|| self.leaf(id))
    }

    fn find_path(&self, id: &str) -> Option<NodeId> {
        let mut node = NodeId::ROOT;
        let mut parts = id.split('/');
        if parts.next()? != self.nodes[0].code {
            return None;
        }
        for code in parts {
            let n = &self.nodes[node.index()];
            let children = &self.nodes[n.children.start as usize..n.children.end as usize];
            let pos = children
                .binary_search_by(|c| c.code.as_str().cmp(code))
                .ok()?;
            node = NodeId(n.children.start + pos as u32);
        }
        Some(node)
    }

    /// Attaches a display name to a node.
    pub fn set_name(&mut self, id: NodeId, name: String) {
        self.nodes[id.index()].name = Some(name);
    }

    /// Node ids from the leaves up to the root (every child before its parent).
    pub fn bottom_up(&self) -> impl Iterator<Item = NodeId> {
        (0..self.nodes.len() as u32).rev().map(NodeId)
    }

    /// Sets every non-leaf node's histogram to the sum of its children's, from the
    /// leaves up (`per_node` is indexed by [`NodeId`]; leaves are left as they are).
    pub fn aggregate(&self, per_node: &mut [CountOfCounts]) {
        for id in self.bottom_up() {
            let node = &self.nodes[id.index()];
            if !node.is_leaf() {
                let sum = CountOfCounts::sum(node.children().map(|c| &per_node[c.index()]));
                per_node[id.index()] = sum;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(rows: &[&str]) -> Vec<Vec<String>> {
        rows.iter()
            .map(|r| r.split(',').map(String::from).collect())
            .collect()
    }

    fn names(h: &str) -> Vec<String> {
        h.split(',').map(String::from).collect()
    }

    #[test]
    fn builds_levels_and_children() {
        let h = Hierarchy::from_leaf_paths(
            names("nation,state,county"),
            &paths(&["US,06,06037", "US,01,01001", "US,06,06001", "US,01,01003"]),
        )
        .unwrap();
        assert_eq!(h.len(), 1 + 2 + 4);
        let root = h.node(h.root());
        assert_eq!(root.display_id, "US");
        let states: Vec<&str> = root
            .children()
            .map(|c| h.node(c).display_id.as_str())
            .collect();
        assert_eq!(states, ["US/01", "US/06"]);
        let ca = h.find("US/06").unwrap();
        let counties: Vec<&str> = h
            .node(ca)
            .children()
            .map(|c| h.node(c).code.as_str())
            .collect();
        assert_eq!(counties, ["06001", "06037"]);
        assert_eq!(h.leaf("06037"), h.find("US/06/06037"));
        assert_eq!(h.level_nodes(LevelId(2)).len(), 4);
        for id in h.level_nodes(LevelId(2)) {
            assert!(h.node(id).is_leaf());
            assert_eq!(h.node(h.node(id).parent.unwrap()).level, LevelId(1));
        }
        // Every child comes after its parent.
        let order: Vec<NodeId> = h.bottom_up().collect();
        for (pos, id) in order.iter().enumerate() {
            if let Some(p) = h.node(*id).parent {
                assert!(order[pos..].contains(&p));
            }
        }
    }

    #[test]
    fn single_level() {
        let h = Hierarchy::from_leaf_paths(names("nation"), &paths(&["US"])).unwrap();
        assert_eq!(h.len(), 1);
        assert!(h.node(h.root()).is_leaf());
        assert_eq!(h.leaf("US"), Some(NodeId::ROOT));
    }

    #[test]
    fn structural_errors() {
        let err = |h: &str, rows: &[&str]| {
            Hierarchy::from_leaf_paths(names(h), &paths(rows)).unwrap_err()
        };
        assert_eq!(
            err("a,a", &["x,y"]).1,
            HierarchyError::DuplicateLevel { name: "a".into() }
        );
        assert!(matches!(
            err("a,b", &["x,y", "z,w"]),
            (Some(1), HierarchyError::SecondRoot { .. })
        ));
        assert!(matches!(
            err("a,b", &["x,y", "x,y"]),
            (Some(1), HierarchyError::DuplicateLeaf { first_row: 0, .. })
        ));
        assert!(matches!(
            err("a,b", &["x,y/z"]),
            (Some(0), HierarchyError::SlashInCode { column: 2, .. })
        ));
        assert!(matches!(
            err("a,b", &["x,"]),
            (Some(0), HierarchyError::EmptyCode { column: 2, .. })
        ));
        assert!(matches!(
            err("a,b", &["x,y,z"]),
            (
                Some(0),
                HierarchyError::WrongDepth {
                    expected: 2,
                    found: 3
                }
            )
        ));
        assert_eq!(err("a,b", &[]).1, HierarchyError::NoRows);
    }
}
