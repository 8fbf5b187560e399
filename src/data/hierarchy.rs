//! The public geographic hierarchy: levels from the root down, and the tree of regions.
//!
//! Nodes live in one arena ordered level by level (the root is node 0) and, within a
//! level, by parent and then by code, so the children of a node are one contiguous
//! range of the next level. A node is identified by its path of codes; its display id
//! is the path joined by `/` (`US/06/06037`).
//!
//! **Memory follows the nodes, not their text.** A census hierarchy down to the block
//! has 8 million leaves, each with a 15-character code and a 40-character display id.
//! Every node's own code is kept once, in one string arena; display ids are built on
//! demand from the codes along the path ([`Hierarchy::display_id`]), and the leaf codes
//! are found through a hash table of node numbers that compares against the arena, so
//! nothing is stored twice. A node costs about 40 bytes besides its code.
//!
//! [`HierarchyBuilder`] builds the tree from leaf paths streamed row by row (the
//! loader's `hierarchy.csv`), keeping per node its parent and code only: rows that
//! repeat the previous row's prefix (a sorted file) cost one comparison per level.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::Range;

use hashbrown::HashTable;
use rayon::slice::ParallelSliceMut;
use thiserror::Error;
use xxhash_rust::xxh3::xxh3_64;

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

/// One region's place in the tree. Its code, display id and name are kept by the
/// [`Hierarchy`] ([`Hierarchy::code`], [`Hierarchy::display_id`], [`Hierarchy::name`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub level: LevelId,
    pub parent: Option<NodeId>,
    /// Children, as a range of node indices (empty for a leaf).
    pub children: Range<u32>,
}

impl Node {
    pub fn children(&self) -> impl ExactSizeIterator<Item = NodeId> + '_ {
        self.children.clone().map(NodeId)
    }

    pub fn is_leaf(&self) -> bool {
        self.children.is_empty()
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
    #[error("more than {max} regions: expected at most {max}", max = u32::MAX - 1)]
    TooManyNodes,
}

/// Every node's own code, in node order, in one string.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Codes {
    text: String,
    /// `ends[i]`: where node `i`'s code ends in `text` (it starts where node `i − 1`'s
    /// ends).
    ends: Vec<u64>,
}

impl Codes {
    fn push(&mut self, code: &str) {
        self.text.push_str(code);
        self.ends.push(self.text.len() as u64);
    }

    fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }

    fn len(&self) -> usize {
        self.ends.len()
    }
}

fn hash_code(code: &[u8]) -> u64 {
    xxh3_64(code)
}

/// The tree of regions.
#[derive(Clone, Debug)]
pub struct Hierarchy {
    level_names: Vec<String>,
    nodes: Vec<Node>,
    /// Node index range of each level.
    levels: Vec<Range<u32>>,
    codes: Codes,
    names: HashMap<NodeId, Box<str>>,
    /// How leaves are found by code.
    leaves: LeafIndex,
}

impl PartialEq for Hierarchy {
    fn eq(&self, other: &Self) -> bool {
        self.level_names == other.level_names
            && self.nodes == other.nodes
            && self.levels == other.levels
            && self.codes == other.codes
            && self.names == other.names
    }
}

impl Eq for Hierarchy {}

impl Hierarchy {
    /// Builds the tree from the level names (root first) and one path of codes per
    /// leaf. On error, returns the index of the offending path (`None` for the header)
    /// with the problem.
    pub fn from_leaf_paths(
        level_names: Vec<String>,
        paths: &[Vec<String>],
    ) -> Result<Self, (Option<usize>, HierarchyError)> {
        let mut builder = HierarchyBuilder::new(level_names).map_err(|e| (None, e))?;
        let mut codes: Vec<&str> = Vec::new();
        for (row, path) in paths.iter().enumerate() {
            codes.clear();
            codes.extend(path.iter().map(String::as_str));
            builder.push(&codes).map_err(|e| (Some(row), e))?;
        }
        builder.finish().map_err(|e| (None, e))
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

    /// The region's code at its level (`06037`).
    pub fn code(&self, id: NodeId) -> &str {
        self.codes.get(id.index())
    }

    /// The codes from the root down to `id`, joined by `/` (`US/06/06037`).
    pub fn display_id(&self, id: NodeId) -> String {
        let mut s = String::new();
        self.push_display_id(id, &mut s);
        s
    }

    /// Appends the display id of `id` to `out` (no allocation when `out` has room).
    pub fn push_display_id(&self, id: NodeId, out: &mut String) {
        if let Some(parent) = self.nodes[id.index()].parent {
            self.push_display_id(parent, out);
            out.push('/');
        }
        out.push_str(self.code(id));
    }

    /// Compares the display ids of two nodes byte by byte, as strings, without building
    /// them. Siblings compare by code alone.
    pub fn cmp_display_ids(&self, a: NodeId, b: NodeId) -> Ordering {
        if a == b {
            return Ordering::Equal;
        }
        let (na, nb) = (&self.nodes[a.index()], &self.nodes[b.index()]);
        if na.parent == nb.parent {
            return self.code(a).cmp(self.code(b));
        }
        let (pa, pb) = (self.code_path(a), self.code_path(b));
        joined(&pa).cmp(joined(&pb))
    }

    /// The codes from the root down to `id`.
    fn code_path(&self, id: NodeId) -> Vec<&[u8]> {
        let mut p: Vec<&[u8]> = Vec::with_capacity(self.nodes[id.index()].level.0 + 1);
        let mut node = Some(id);
        while let Some(n) = node {
            p.push(self.code(n).as_bytes());
            node = self.nodes[n.index()].parent;
        }
        p.reverse();
        p
    }

    /// The region's display name (`Los Angeles County`), if `names.csv` gave one.
    pub fn name(&self, id: NodeId) -> Option<&str> {
        self.names.get(&id).map(|n| &**n)
    }

    /// The display id, followed by the name when there is one.
    pub fn label(&self, id: NodeId) -> String {
        match self.name(id) {
            Some(name) => format!("{} ({name})", self.display_id(id)),
            None => self.display_id(id),
        }
    }

    /// The nodes of one level, in order.
    pub fn level_nodes(&self, level: LevelId) -> impl ExactSizeIterator<Item = NodeId> + Clone {
        self.levels[level.0].clone().map(NodeId)
    }

    /// The node index range of one level.
    pub fn level_range(&self, level: LevelId) -> Range<u32> {
        self.levels[level.0].clone()
    }

    pub fn level_len(&self, level: LevelId) -> usize {
        self.levels[level.0].len()
    }

    /// The leaf with this code.
    pub fn leaf(&self, code: &str) -> Option<NodeId> {
        self.leaf_bytes(code.as_bytes())
    }

    /// The leaf with this code, given as bytes.
    pub fn leaf_bytes(&self, code: &[u8]) -> Option<NodeId> {
        let range = self.levels[self.levels.len() - 1].clone();
        let code_of = |leaf: u32| self.codes.get((range.start + leaf) as usize).as_bytes();
        match &self.leaves {
            LeafIndex::Sorted => {
                let n = range.len() as u32;
                let (mut lo, mut hi) = (0u32, n);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    match code_of(mid).cmp(code) {
                        Ordering::Less => lo = mid + 1,
                        Ordering::Greater => hi = mid,
                        Ordering::Equal => return Some(NodeId(range.start + mid)),
                    }
                }
                None
            }
            LeafIndex::Hashed(table) => table
                .find(hash_code(code), |&leaf| code_of(leaf) == code)
                .map(|&leaf| NodeId(range.start + leaf)),
        }
    }

    /// The node with this display id (`US/06`), or a leaf by its code.
    pub fn find(&self, id: &str) -> Option<NodeId> {
        self.find_path(id).or_else(|| self.leaf(id))
    }

    /// The node with this display id (`US/06`), not a leaf code.
    pub fn find_display_id(&self, id: &str) -> Option<NodeId> {
        self.find_path(id)
    }

    fn find_path(&self, id: &str) -> Option<NodeId> {
        let mut node = NodeId::ROOT;
        let mut parts = id.split('/');
        if parts.next()? != self.code(NodeId::ROOT) {
            return None;
        }
        for code in parts {
            let n = &self.nodes[node.index()];
            let (start, end) = (n.children.start as usize, n.children.end as usize);
            let mut lo = start;
            let mut hi = end;
            // Children are sorted by code.
            while lo < hi {
                let mid = (lo + hi) / 2;
                match self.codes.get(mid).cmp(code) {
                    Ordering::Less => lo = mid + 1,
                    Ordering::Greater => hi = mid,
                    Ordering::Equal => {
                        lo = mid;
                        hi = mid + 1;
                        break;
                    }
                }
            }
            if lo >= hi || self.codes.get(lo) != code {
                return None;
            }
            node = NodeId(lo as u32);
        }
        Some(node)
    }

    /// Attaches a display name to a node.
    pub fn set_name(&mut self, id: NodeId, name: String) {
        self.names.insert(id, name.into_boxed_str());
    }

    /// How many nodes have a display name.
    pub fn named(&self) -> usize {
        self.names.len()
    }

    /// Node ids from the leaves up to the root (every child before its parent).
    pub fn bottom_up(&self) -> impl Iterator<Item = NodeId> {
        (0..self.nodes.len() as u32).rev().map(NodeId)
    }

    /// The bytes the hierarchy holds, roughly (for resource estimates and tests).
    /// The top `depth` levels of this hierarchy, the last of them its leaves: the same
    /// nodes with the same ids (nodes are ordered level by level), codes and names.
    /// The margins of error draw the levels with few regions again on it
    /// ([`crate::release::margins`]).
    ///
    /// # Panics
    /// If `depth` is 0 or more than [`Hierarchy::depth`].
    pub fn truncated(&self, depth: usize) -> Hierarchy {
        assert!(
            (1..=self.depth()).contains(&depth),
            "a hierarchy of {} levels cut to {depth}",
            self.depth()
        );
        let levels = self.levels[..depth].to_vec();
        let end = levels[depth - 1].end as usize;
        let mut nodes = self.nodes[..end].to_vec();
        for id in levels[depth - 1].clone() {
            nodes[id as usize].children = 0..0;
        }
        let codes = Codes {
            text: self.codes.text[..self.codes.ends[end - 1] as usize].to_string(),
            ends: self.codes.ends[..end].to_vec(),
        };
        let leaves = leaf_index(&codes, levels[depth - 1].clone());
        Hierarchy {
            level_names: self.level_names[..depth].to_vec(),
            nodes,
            levels,
            codes,
            names: self
                .names
                .iter()
                .filter(|(id, _)| id.index() < end)
                .map(|(&id, n)| (id, n.clone()))
                .collect(),
            leaves,
        }
    }

    pub fn memory_bytes(&self) -> u64 {
        (self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.codes.text.capacity()
            + self.codes.ends.capacity() * 8
            + match &self.leaves {
                LeafIndex::Sorted => 0,
                LeafIndex::Hashed(t) => t.capacity() * 5,
            }
            + self.names.values().map(|n| n.len() + 32).sum::<usize>()) as u64
    }
}

/// The bytes of codes joined by `/`.
fn joined<'a>(codes: &'a [&'a [u8]]) -> impl Iterator<Item = u8> + 'a {
    codes.iter().enumerate().flat_map(|(i, c)| {
        let sep: &[u8] = if i == 0 { b"" } else { b"/" };
        sep.iter().chain(c.iter()).copied()
    })
}

/// How a hierarchy finds a leaf by its code.
#[derive(Clone, Debug)]
enum LeafIndex {
    /// The leaf codes increase (as bytes) in node order: binary search, no table. The
    /// usual case: census codes (GEOIDs) sort by their parents' codes.
    Sorted,
    /// Positions within the leaf level, hashed by code with [`hash_code`].
    Hashed(HashTable<u32>),
}

/// One level's nodes while a hierarchy is built, in the order they were first seen.
#[derive(Default)]
struct PendingLevel {
    /// Each node's parent (its index in the previous level's `PendingLevel`).
    parent: Vec<u32>,
    codes: Codes,
    /// The nodes, found by (parent, code) with [`PendingLevel::key_hash`]; at the leaf
    /// level by code alone with [`hash_code`] (leaf codes are unique in the file).
    index: HashTable<u32>,
}

impl PendingLevel {
    /// The hash of an upper level's key, (parent, code).
    fn key_hash(parent: u32, code: &[u8]) -> u64 {
        hash_code(code) ^ u64::from(parent).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// The node with this parent and code.
    fn find(&self, parent: u32, code: &str) -> Option<u32> {
        self.index
            .find(Self::key_hash(parent, code.as_bytes()), |&i| {
                self.parent[i as usize] == parent && self.codes.get(i as usize) == code
            })
            .copied()
    }

    fn insert(&mut self, parent: u32, code: &str) -> u32 {
        let i = self.parent.len() as u32;
        self.parent.push(parent);
        self.codes.push(code);
        let (parents, codes) = (&self.parent, &self.codes);
        self.index
            .insert_unique(Self::key_hash(parent, code.as_bytes()), i, |&j| {
                Self::key_hash(parents[j as usize], codes.get(j as usize).as_bytes())
            });
        i
    }
}

/// Builds a [`Hierarchy`] from leaf paths given one at a time (see the module docs).
pub struct HierarchyBuilder {
    level_names: Vec<String>,
    levels: Vec<PendingLevel>,
    /// The leaf codes so far increase strictly in file order: none can repeat, and the
    /// leaf level's table is not built (it is, in one go, once a code does not increase).
    increasing: bool,
    /// The previous row's node at each level.
    previous: Vec<u32>,
    rows: usize,
}

impl HierarchyBuilder {
    /// Checks the level names (root first).
    pub fn new(level_names: Vec<String>) -> Result<Self, HierarchyError> {
        if level_names.is_empty() {
            return Err(HierarchyError::NoLevels);
        }
        for (i, name) in level_names.iter().enumerate() {
            if name.trim().is_empty() {
                return Err(HierarchyError::EmptyLevelName { column: i + 1 });
            }
            if level_names[..i].contains(name) {
                return Err(HierarchyError::DuplicateLevel { name: name.clone() });
            }
        }
        let depth = level_names.len();
        Ok(Self {
            level_names,
            levels: (0..depth).map(|_| PendingLevel::default()).collect(),
            increasing: true,
            previous: Vec::with_capacity(depth),
            rows: 0,
        })
    }

    /// Room for about `rows` more rows (a guess from the file's size): saves growing the
    /// leaf table step by step.
    pub fn reserve_rows(&mut self, rows: usize) {
        let leaf = self.levels.len() - 1;
        let level = &mut self.levels[leaf];
        level.parent.reserve(rows);
        level.codes.ends.reserve(rows);
    }

    /// Rows accepted so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Adds one leaf's path of codes, root first.
    pub fn push(&mut self, path: &[&str]) -> Result<(), HierarchyError> {
        let depth = self.level_names.len();
        if path.len() != depth {
            return Err(HierarchyError::WrongDepth {
                expected: depth,
                found: path.len(),
            });
        }
        for (col, code) in path.iter().enumerate() {
            if code.is_empty() {
                return Err(HierarchyError::EmptyCode {
                    column: col + 1,
                    level: self.level_names[col].clone(),
                });
            }
            if code.contains('/') {
                return Err(HierarchyError::SlashInCode {
                    code: code.to_string(),
                    column: col + 1,
                });
            }
        }
        if self.rows >= (u32::MAX - 1) as usize / depth.max(1) {
            return Err(HierarchyError::TooManyNodes);
        }
        if let Some(&root) = self.previous.first().filter(|_| self.rows > 0) {
            let expected = self.levels[0].codes.get(root as usize);
            if path[0] != expected {
                return Err(HierarchyError::SecondRoot {
                    expected: expected.to_string(),
                    found: path[0].to_string(),
                });
            }
        }
        let leaf_level = depth - 1;
        // Walk down: a level whose prefix matches the previous row's reuses its node.
        // (After an error the builder is not to be used: a failed row may leave nodes
        // above its leaf behind.)
        let mut same = self.rows > 0;
        let mut parent = 0u32;
        self.previous.resize(depth, 0);
        for (l, code) in path[..leaf_level].iter().enumerate() {
            let level = &mut self.levels[l];
            let id = if same && level.codes.get(self.previous[l] as usize) == *code {
                self.previous[l]
            } else {
                same = false;
                match level.find(parent, code) {
                    Some(id) => id,
                    None => level.insert(parent, code),
                }
            };
            self.previous[l] = id;
            parent = id;
        }
        let code = path[leaf_level];
        let PendingLevel {
            parent: parents,
            codes,
            index,
        } = &mut self.levels[leaf_level];
        if self.increasing {
            let last = parents.len().checked_sub(1);
            if last.is_none_or(|i| codes.get(i) < code) {
                let id = parents.len() as u32;
                parents.push(parent);
                codes.push(code);
                self.previous[leaf_level] = id;
                self.rows += 1;
                return Ok(());
            }
            // From here on, leaves are found through the table.
            self.increasing = false;
            index.reserve(parents.len(), |&j| {
                hash_code(codes.get(j as usize).as_bytes())
            });
            for i in 0..parents.len() as u32 {
                let hash = hash_code(codes.get(i as usize).as_bytes());
                index.insert_unique(hash, i, |&j| hash_code(codes.get(j as usize).as_bytes()));
            }
        }
        // The leaf: one probe both finds a duplicate and places a new code.
        let hash = hash_code(code.as_bytes());
        match index.entry(
            hash,
            |&j| codes.get(j as usize) == code,
            |&j| hash_code(codes.get(j as usize).as_bytes()),
        ) {
            hashbrown::hash_table::Entry::Occupied(e) => {
                return Err(HierarchyError::DuplicateLeaf {
                    code: code.to_string(),
                    first_row: *e.get() as usize,
                });
            }
            hashbrown::hash_table::Entry::Vacant(v) => {
                let id = parents.len() as u32;
                v.insert(id);
                parents.push(parent);
                codes.push(code);
                self.previous[leaf_level] = id;
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// The hierarchy: nodes ordered level by level, by parent, then by code.
    pub fn finish(self) -> Result<Hierarchy, HierarchyError> {
        if self.rows == 0 {
            return Err(HierarchyError::NoRows);
        }
        let depth = self.level_names.len();
        let total: usize = self.levels.iter().map(|l| l.parent.len()).sum();
        let mut nodes: Vec<Node> = Vec::with_capacity(total);
        let mut codes = Codes {
            text: String::with_capacity(self.levels.iter().map(|l| l.codes.text.len()).sum()),
            ends: Vec::with_capacity(total),
        };
        let mut levels: Vec<Range<u32>> = Vec::with_capacity(depth);
        // The final node id of each pending node of the previous level.
        let mut final_of: Vec<u32> = Vec::new();
        let mut leaves: Option<LeafIndex> = None;
        for (l, pending) in self.levels.into_iter().enumerate() {
            let PendingLevel {
                parent,
                codes: pcodes,
                index,
            } = pending;
            let n = parent.len();
            let start = nodes.len() as u32;
            // Order within the level: by the parent's final id, then by code.
            let parent_final = |i: u32| -> u32 {
                if l == 0 {
                    0
                } else {
                    final_of[parent[i as usize] as usize]
                }
            };
            let key = |i: u32| (parent_final(i), pcodes.get(i as usize));
            let mut order: Vec<u32> = (0..n as u32).collect();
            let sorted = order.windows(2).all(|w| key(w[0]) <= key(w[1]));
            if !sorted {
                order.par_sort_unstable_by(|&a, &b| key(a).cmp(&key(b)));
            }
            // Nothing moved: the leaves are found as the builder found them.
            if l == depth - 1 && sorted {
                leaves = Some(if self.increasing {
                    LeafIndex::Sorted
                } else {
                    LeafIndex::Hashed(index)
                });
            } else {
                drop(index);
            }
            let mut next_final = vec![0u32; n];
            for (pos, &i) in order.iter().enumerate() {
                let id = start + pos as u32;
                next_final[i as usize] = id;
                nodes.push(Node {
                    level: LevelId(l),
                    parent: (l > 0).then(|| NodeId(parent_final(i))),
                    children: 0..0,
                });
                codes.push(pcodes.get(i as usize));
            }
            levels.push(start..nodes.len() as u32);
            final_of = next_final;
        }
        drop(final_of);
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
        let leaves = leaves.unwrap_or_else(|| leaf_index(&codes, levels[depth - 1].clone()));
        debug_assert_eq!(codes.len(), nodes.len());
        Ok(Hierarchy {
            level_names: self.level_names,
            nodes,
            levels,
            codes,
            names: HashMap::new(),
            leaves,
        })
    }
}

/// The index of the leaves `leaf_range` by code: [`LeafIndex::Sorted`] when their codes
/// increase in node order, else a hash table.
fn leaf_index(codes: &Codes, leaf_range: Range<u32>) -> LeafIndex {
    let first = leaf_range.start;
    let increasing = leaf_range
        .clone()
        .skip(1)
        .all(|id| codes.get(id as usize - 1) < codes.get(id as usize));
    if increasing {
        return LeafIndex::Sorted;
    }
    let mut table: HashTable<u32> = HashTable::with_capacity(leaf_range.len());
    for id in leaf_range {
        let hash = hash_code(codes.get(id as usize).as_bytes());
        table.insert_unique(hash, id - first, |&j| {
            hash_code(codes.get((first + j) as usize).as_bytes())
        });
    }
    LeafIndex::Hashed(table)
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
        assert_eq!(h.display_id(h.root()), "US");
        let states: Vec<String> = root.children().map(|c| h.display_id(c)).collect();
        assert_eq!(states, ["US/01", "US/06"]);
        let ca = h.find("US/06").unwrap();
        let counties: Vec<&str> = h.node(ca).children().map(|c| h.code(c)).collect();
        assert_eq!(counties, ["06001", "06037"]);
        assert_eq!(h.leaf("06037"), h.find("US/06/06037"));
        assert_eq!(h.display_id(h.leaf("06037").unwrap()), "US/06/06037");
        assert_eq!(h.find("US/06/0603"), None);
        assert_eq!(h.find("US/07"), None);
        assert_eq!(h.find("XX/06"), None);
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
    fn truncated_keeps_the_top_levels_as_built_from_their_paths() {
        let rows = [
            "US,06,06037",
            "US,01,01001",
            "US,06,06001",
            "US,01,01003",
            "US,02,02013",
        ];
        let h = Hierarchy::from_leaf_paths(names("nation,state,county"), &paths(&rows)).unwrap();
        let top: Vec<&str> = rows.iter().map(|r| &r[..5]).collect();
        let mut top: Vec<&str> = top.into_iter().collect();
        top.sort_unstable();
        top.dedup();
        let expected = Hierarchy::from_leaf_paths(names("nation,state"), &paths(&top)).unwrap();
        let cut = h.truncated(2);
        assert_eq!(cut, expected);
        assert_eq!(cut.leaf("02"), expected.leaf("02"));
        assert_eq!(cut.find("US/06"), h.find("US/06"));
        assert!(cut.level_nodes(LevelId(1)).all(|id| cut.node(id).is_leaf()));
        assert_eq!(h.truncated(3), h);
        assert_eq!(h.truncated(1).len(), 1);
    }

    #[test]
    fn the_same_code_under_two_parents_is_two_nodes() {
        let h = Hierarchy::from_leaf_paths(
            names("a,b,c"),
            &paths(&["R,x,1", "R,y,2", "R,x,3", "R,y,4"]),
        )
        .unwrap();
        assert_eq!(h.len(), 1 + 2 + 4);
        let h = Hierarchy::from_leaf_paths(names("a,b,c"), &paths(&["R,x,m1", "R,y,m2", "R,z,m3"]))
            .unwrap();
        // Codes at an upper level repeat under different parents.
        let h2 = Hierarchy::from_leaf_paths(
            names("a,b,c,d"),
            &paths(&["R,x,1,a", "R,y,1,b", "R,x,1,c"]),
        )
        .unwrap();
        assert_eq!(h.len(), 7);
        assert_eq!(h2.level_len(LevelId(2)), 2);
        assert_eq!(h2.display_id(h2.leaf("c").unwrap()), "R/x/1/c");
        assert_eq!(
            h2.node(h2.find("R/x/1").unwrap()).children().len(),
            2,
            "a and c share R/x/1"
        );
    }

    #[test]
    fn display_ids_compare_as_strings() {
        // "A-x" sorts before "A/B" as a string ('-' < '/') though "A" < "A-x" as a code.
        let h = Hierarchy::from_leaf_paths(
            names("r,a,b"),
            &paths(&["R,A,B", "R,A-x,C", "R,é,D", "R,A,BB"]),
        )
        .unwrap();
        let mut ids: Vec<NodeId> = h.level_nodes(LevelId(2)).collect();
        ids.sort_by(|&a, &b| h.cmp_display_ids(a, b));
        let sorted: Vec<String> = ids.iter().map(|&i| h.display_id(i)).collect();
        let mut expected = sorted.clone();
        expected.sort();
        assert_eq!(sorted, expected);
        assert_eq!(sorted, ["R/A-x/C", "R/A/B", "R/A/BB", "R/é/D"]);
        assert_eq!(h.display_id(h.leaf("D").unwrap()), "R/é/D");
    }

    #[test]
    fn unsorted_rows_give_the_sorted_tree() {
        let rows = ["US,06,06037", "US,01,01001", "US,06,06001", "US,01,01003"];
        let mut reversed = rows;
        reversed.reverse();
        let a = Hierarchy::from_leaf_paths(names("n,s,c"), &paths(&rows)).unwrap();
        let b = Hierarchy::from_leaf_paths(names("n,s,c"), &paths(&reversed)).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn leaves_are_found_whether_their_codes_sort_or_not() {
        // Increasing codes: binary search; codes out of order (z before a under one
        // parent, or across parents): a table.
        for rows in [
            &["R,A,a1", "R,A,a2", "R,B,b1"][..],
            &["R,A,z", "R,A,a", "R,B,m"][..],
            &["R,B,a", "R,A,b"][..],
            &["R,A,b", "R,B,a"][..],
        ] {
            let h = Hierarchy::from_leaf_paths(names("r,s,l"), &paths(rows)).unwrap();
            for row in rows {
                let code = row.rsplit(',').next().unwrap();
                let id = h.leaf(code).unwrap();
                assert_eq!(h.code(id), code);
                assert!(h.node(id).is_leaf());
            }
            assert_eq!(h.leaf("nope"), None);
            assert_eq!(h.leaf("A"), None, "an upper-level code is not a leaf");
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
    fn names_attach_to_nodes() {
        let mut h = Hierarchy::from_leaf_paths(names("n,s"), &paths(&["US,06", "US,01"])).unwrap();
        let ca = h.find("US/06").unwrap();
        h.set_name(ca, "California".into());
        assert_eq!(h.name(ca), Some("California"));
        assert_eq!(h.label(ca), "US/06 (California)");
        assert_eq!(h.label(NodeId::ROOT), "US");
        assert_eq!(h.named(), 1);
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
            err("a,b,c", &["x,p,y", "x,q,z", "x,r,y"]),
            (Some(2), HierarchyError::DuplicateLeaf { first_row: 0, .. })
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
