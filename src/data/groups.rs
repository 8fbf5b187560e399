//! The three groups forms, each read into one count-of-counts histogram per leaf.
//!
//! * `groups.csv` (`group_id,region,size`): one row per group.
//! * `groups.csv` (`group_id,region`) with `entities.csv` (`entity_id,group_id`): sizes
//!   are counted from the entity rows; a group without entities has size 0.
//! * `histograms.csv` (`region,size,count`): the leaves' histograms, each (region, size)
//!   pair at most once; a count of 0 adds nothing.
//!
//! Leaves are returned in the order of [`Hierarchy::level_nodes`] at the leaf level.
//! Rows are checked in file order; duplicate ids are checked once the whole file has
//! been read (see [`super::ids`]), so another error further down the file is reported
//! before them.

use std::collections::HashMap;
use std::path::Path;

use super::csv_input::{CsvFile, shown, shown_name};
use super::ids::{Duplicate, GroupIndex, IdHashes, ShortKeyMap};
use super::load::{LoadError, LoadErrorKind, LoadProgress};
use super::{Hierarchy, InputFile, NodeId};
use crate::histogram::{Count, CountOfCounts, Size};

/// Leaf histograms (in leaf order) and the files they were read from.
pub(crate) type LeafHistograms = (Vec<CountOfCounts>, Vec<InputFile>);

/// Leaf codes → leaf positions (0-based within the leaf level).
struct LeafCodes<'h> {
    hierarchy: &'h Hierarchy,
    map: ShortKeyMap<u32>,
    /// The last code looked up and its leaf: files are often sorted by region.
    last: Option<(Vec<u8>, u32)>,
}

impl<'h> LeafCodes<'h> {
    fn new(hierarchy: &'h Hierarchy) -> Self {
        let first = hierarchy
            .level_nodes(hierarchy.leaf_level())
            .next()
            .map_or(0, |id| id.0);
        let map = hierarchy
            .level_nodes(hierarchy.leaf_level())
            .map(|id| {
                let code = hierarchy.node(id).code.as_bytes().into();
                (code, id.0 - first)
            })
            .collect();
        LeafCodes {
            hierarchy,
            map,
            last: None,
        }
    }

    fn len(&self) -> usize {
        self.hierarchy.level_len(self.hierarchy.leaf_level())
    }

    /// The leaf named in field `column` of the current row of `f`.
    fn get(&mut self, f: &CsvFile, column: usize) -> Result<usize, LoadError> {
        let code = f.field(column);
        if let Some((last, leaf)) = &self.last
            && last.as_slice() == code
        {
            return Ok(*leaf as usize);
        }
        match self.map.get(code) {
            Some(&leaf) => {
                let last = self.last.get_or_insert_with(|| (Vec::new(), 0));
                last.0.clear();
                last.0.extend_from_slice(code);
                last.1 = leaf;
                Ok(leaf as usize)
            }
            None => Err(f.error(Some(column), self.not_a_leaf(code))),
        }
    }

    /// Why `code` is no leaf: the code of a region at another level, or unknown (with a
    /// hint when it matches a leaf but for case).
    fn not_a_leaf(&self, code: &[u8]) -> LoadErrorKind {
        let h = self.hierarchy;
        let leaf_level: Box<str> = shown_name(h.level_name(h.leaf_level())).into();
        let text = String::from_utf8_lossy(code);
        if let Some(node) = h.nodes().iter().find(|n| n.code == text) {
            return LoadErrorKind::RegionNotLeaf {
                code: shown(code),
                level: shown_name(h.level_name(node.level)).into(),
                leaf_level,
            };
        }
        let hint = h
            .level_nodes(h.leaf_level())
            .map(|id| &h.node(id).code)
            .find(|c| c.to_lowercase() == text.to_lowercase())
            .map(|c| format!("; codes are case-sensitive, and hierarchy.csv has {c:?}"))
            .unwrap_or_default();
        LoadErrorKind::UnknownRegion {
            code: shown(code),
            leaf_level,
            hint: hint.into(),
        }
    }
}

/// How many groups of each size, for one leaf.
#[derive(Clone, Default)]
struct Tally {
    /// Counts of the small sizes, indexed by size.
    dense: Vec<Count>,
    /// Counts of sizes from [`Tally::DENSE`] on.
    sparse: HashMap<Size, Count>,
}

impl Tally {
    const DENSE: Size = 256;

    fn add(&mut self, size: Size) {
        if size < Self::DENSE {
            let i = size as usize;
            if self.dense.len() <= i {
                self.dense.resize(i + 1, 0);
            }
            self.dense[i] += 1;
        } else {
            *self.sparse.entry(size).or_insert(0) += 1;
        }
    }

    fn into_histogram(self) -> CountOfCounts {
        let dense = self
            .dense
            .into_iter()
            .enumerate()
            .map(|(s, c)| (s as Size, c));
        CountOfCounts::from_pairs(dense.chain(self.sparse))
            .expect("dense and sparse sizes are disjoint")
    }
}

fn duplicate_error(
    f_path: &Path,
    dup: Duplicate,
    kind: fn(String, u64) -> LoadErrorKind,
) -> LoadError {
    LoadError::at(
        f_path,
        dup.line,
        Some(dup.column + 1),
        kind(dup.id, dup.first_line),
    )
}

fn duplicate_group(id: String, first_line: u64) -> LoadErrorKind {
    LoadErrorKind::DuplicateGroup { id, first_line }
}

fn duplicate_entity(id: String, first_line: u64) -> LoadErrorKind {
    LoadErrorKind::DuplicateEntity { id, first_line }
}

const GROUPS_HEADER: &str = "naming the columns group_id,region,size";

/// Form 1: `groups.csv` with `group_id,region,size`.
pub(crate) fn read_group_sizes(
    dir: &Path,
    hierarchy: &Hierarchy,
    progress: &mut dyn FnMut(LoadProgress),
) -> Result<LeafHistograms, LoadError> {
    let mut f = CsvFile::open(dir, "groups.csv", GROUPS_HEADER, progress)?;
    let sizeless = f.header().len() == 2
        && f.header().iter().any(|c| c == "group_id")
        && f.header().iter().any(|c| c == "region");
    let hint = if sizeless {
        " (a groups.csv without sizes needs entities.csv beside it)"
    } else {
        ""
    };
    let [id_col, region_col, size_col] = f.columns(["group_id", "region", "size"], hint)?;
    let mut leaves = LeafCodes::new(hierarchy);
    let mut tallies = vec![Tally::default(); leaves.len()];
    let mut ids = IdHashes::default();
    while f.next_row()? {
        let leaf = leaves.get(&f, region_col)?;
        let size = f.uint(size_col, "size", u64::from(Size::MAX))? as Size;
        ids.push(f.field(id_col));
        tallies[leaf].add(size);
    }
    let path = f.path().to_path_buf();
    let file = f.finish()?;
    if let Some(dup) = ids.find_duplicate(dir, "groups.csv", id_col)? {
        return Err(duplicate_error(&path, dup, duplicate_group));
    }
    let hists = tallies.into_iter().map(Tally::into_histogram).collect();
    Ok((hists, vec![file]))
}

/// Form 2: `groups.csv` with `group_id,region` and `entities.csv` with
/// `entity_id,group_id`.
pub(crate) fn read_entities(
    dir: &Path,
    hierarchy: &Hierarchy,
    progress: &mut dyn FnMut(LoadProgress),
) -> Result<LeafHistograms, LoadError> {
    let mut f = CsvFile::open(
        dir,
        "groups.csv",
        "naming the columns group_id,region",
        progress,
    )?;
    let mut sorted_header = f.header().to_vec();
    sorted_header.sort();
    if sorted_header == ["group_id", "region", "size"] {
        return Err(LoadError::at(
            f.path(),
            1,
            None,
            LoadErrorKind::SeveralForms {
                found: "groups.csv with a size column, and entities.csv".into(),
            },
        ));
    }
    let [id_col, region_col] = f.columns(["group_id", "region"], "")?;
    let mut leaves = LeafCodes::new(hierarchy);
    let mut index = GroupIndex::default();
    let mut leaf_of: Vec<u32> = Vec::new();
    while f.next_row()? {
        let leaf = leaves.get(&f, region_col)?;
        if index.len() >= GroupIndex::MAX_GROUPS {
            return Err(f.error(None, LoadErrorKind::TooManyGroupRows));
        }
        index.push(f.field(id_col));
        leaf_of.push(leaf as u32);
    }
    let groups_path = f.path().to_path_buf();
    let groups_file = f.finish()?;
    if let Some(dup) = index.seal(dir, "groups.csv", id_col)? {
        return Err(duplicate_error(&groups_path, dup, duplicate_group));
    }

    let mut f = CsvFile::open(
        dir,
        "entities.csv",
        "naming the columns entity_id,group_id",
        progress,
    )?;
    let [entity_col, group_col] = f.columns(["entity_id", "group_id"], "")?;
    let mut sizes: Vec<Size> = vec![0; leaf_of.len()];
    let mut entity_ids = IdHashes::default();
    // Entities are usually listed group by group: the last group is looked up once.
    let mut last: Option<(Vec<u8>, u32)> = None;
    while f.next_row()? {
        let id = f.field(group_col);
        let group = match &mut last {
            Some((last_id, group)) if last_id.as_slice() == id => *group,
            _ => {
                let guess = last.as_ref().map(|&(_, group)| group + 1);
                let Some(group) = index.get(id, guess) else {
                    return Err(f.error(
                        Some(group_col),
                        LoadErrorKind::UnknownGroup { id: shown(id) },
                    ));
                };
                let (last_id, last_group) = last.get_or_insert_with(|| (Vec::new(), 0));
                last_id.clear();
                last_id.extend_from_slice(id);
                *last_group = group;
                group
            }
        };
        let size = &mut sizes[group as usize];
        *size = size.checked_add(1).ok_or_else(|| {
            f.error(
                Some(group_col),
                LoadErrorKind::GroupTooLarge { id: shown(id) },
            )
        })?;
        entity_ids.push(f.field(entity_col));
    }
    let entities_path = f.path().to_path_buf();
    let entities_file = f.finish()?;
    drop(index);
    if let Some(dup) = entity_ids.find_duplicate(dir, "entities.csv", entity_col)? {
        return Err(duplicate_error(&entities_path, dup, duplicate_entity));
    }
    let mut tallies = vec![Tally::default(); leaves.len()];
    for (leaf, size) in leaf_of.into_iter().zip(sizes) {
        tallies[leaf as usize].add(size);
    }
    let hists = tallies.into_iter().map(Tally::into_histogram).collect();
    Ok((hists, vec![groups_file, entities_file]))
}

/// Form 3: `histograms.csv` with `region,size,count`.
pub(crate) fn read_histograms(
    dir: &Path,
    hierarchy: &Hierarchy,
    progress: &mut dyn FnMut(LoadProgress),
) -> Result<LeafHistograms, LoadError> {
    let mut f = CsvFile::open(
        dir,
        "histograms.csv",
        "naming the columns region,size,count",
        progress,
    )?;
    let [region_col, size_col, count_col] = f.columns(["region", "size", "count"], "")?;
    let mut leaves = LeafCodes::new(hierarchy);
    /// One row: leaf, size, count, line.
    type Cell = (u32, Size, Count, u64);
    let mut cells: Vec<Cell> = Vec::new();
    let mut total: Count = 0;
    while f.next_row()? {
        let leaf = leaves.get(&f, region_col)?;
        let size = f.uint(size_col, "size", u64::from(Size::MAX))? as Size;
        let count = f.uint(count_col, "count", Count::MAX)?;
        // Parents add their children's counts: a total past u64 would overflow there.
        total = total
            .checked_add(count)
            .filter(|&t| t <= super::load::MAX_TOTAL_GROUPS)
            .ok_or_else(|| f.error(Some(count_col), LoadErrorKind::TooManyGroups))?;
        cells.push((leaf as u32, size, count, f.line()));
    }
    let path = f.path().to_path_buf();
    let file = f.finish()?;
    cells.sort_unstable_by_key(|&(leaf, size, _, line)| (leaf, size, line));
    // The duplicate whose second row comes first in the file.
    let duplicate = cells
        .windows(2)
        .filter(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
        .min_by_key(|w| w[1].3);
    if let Some(w) = duplicate {
        let leaf = hierarchy
            .level_nodes(hierarchy.leaf_level())
            .nth(w[1].0 as usize)
            .unwrap_or(NodeId::ROOT);
        return Err(LoadError::at(
            &path,
            w[1].3,
            Some(region_col + 1),
            LoadErrorKind::DuplicateCell {
                region: shown(hierarchy.node(leaf).code.as_bytes()),
                size: w[1].1,
                first_line: w[0].3,
            },
        ));
    }
    let mut hists = vec![CountOfCounts::new(); leaves.len()];
    for run in cells.chunk_by(|a, b| a.0 == b.0) {
        let pairs = run.iter().map(|&(_, size, count, _)| (size, count));
        hists[run[0].0 as usize] =
            CountOfCounts::from_pairs(pairs).expect("duplicate sizes were rejected above");
    }
    Ok((hists, vec![file]))
}
