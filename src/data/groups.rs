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
use std::ops::ControlFlow;
use std::path::Path;

use rayon::slice::ParallelSliceMut;

use super::csv_input::{RowLines, shown, shown_name};
use super::ids::{Duplicate, GroupIndex, IdHashes};
use super::load::{LoadError, LoadErrorKind, LoadProgress, Place};
use super::table::{Locator, TableFile};
use super::{Hierarchy, InputFile, NodeId};
use crate::histogram::{Count, CountOfCounts, HistogramSet, Size};

/// Leaf histograms (in leaf order) and the files they were read from.
pub(crate) type LeafHistograms = (HistogramSet, Vec<InputFile>);

/// Leaf codes → leaf positions (0-based within the leaf level), through the
/// hierarchy's own index of leaf codes.
struct LeafCodes<'h> {
    hierarchy: &'h Hierarchy,
    /// The first leaf's node id.
    first: u32,
    /// The leaf of the previous row: files are usually sorted by region, in the order
    /// of `hierarchy.csv`, so a row names that leaf or one of the next few.
    last: Option<u32>,
}

impl<'h> LeafCodes<'h> {
    fn new(hierarchy: &'h Hierarchy) -> Self {
        LeafCodes {
            hierarchy,
            first: hierarchy.level_range(hierarchy.leaf_level()).start,
            last: None,
        }
    }

    fn len(&self) -> usize {
        self.hierarchy.level_len(self.hierarchy.leaf_level())
    }

    /// The leaf named in field `column` of the current row of `f`.
    fn get(&mut self, f: &TableFile, column: usize) -> Result<usize, LoadError> {
        let code = f.field(column);
        let is = |leaf: u32| {
            (leaf as usize) < self.len()
                && self.hierarchy.code(NodeId(self.first + leaf)).as_bytes() == code
        };
        if let Some(last) = self.last {
            // The same leaf, or one of the next few (leaves without groups are skipped).
            if let Some(leaf) = (last..last + 8).find(|&l| is(l)) {
                self.last = Some(leaf);
                return Ok(leaf as usize);
            }
        }
        match self.hierarchy.leaf_bytes(code) {
            Some(id) => {
                let leaf = id.0 - self.first;
                self.last = Some(leaf);
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
        if let Some(id) = (0..h.len() as u32)
            .map(NodeId)
            .find(|&id| h.code(id) == text)
        {
            return LoadErrorKind::RegionNotLeaf {
                code: shown(code),
                level: shown_name(h.level_name(h.node(id).level)).into(),
                leaf_level,
            };
        }
        let lower = text.to_lowercase();
        let hint = h
            .level_nodes(h.leaf_level())
            .map(|id| h.code(id))
            .find(|c| c.to_lowercase() == lower)
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

    /// The histograms of all leaves, in one arena.
    fn into_set(tallies: Vec<Tally>) -> HistogramSet {
        let mut set = HistogramSet::with_capacity(tallies.len(), 0);
        for t in tallies {
            set.push(t.into_histogram().as_ref());
        }
        set
    }
}

fn duplicate_error(
    at: &Locator,
    dup: Duplicate,
    kind: fn(String, Place) -> LoadErrorKind,
) -> LoadError {
    at.at(
        dup.line,
        Some(dup.column),
        kind(dup.id, at.place(dup.first_line)),
    )
}

fn duplicate_group(id: String, first: Place) -> LoadErrorKind {
    LoadErrorKind::DuplicateGroup { id, first }
}

fn duplicate_entity(id: String, first: Place) -> LoadErrorKind {
    LoadErrorKind::DuplicateEntity { id, first }
}

const GROUPS_HEADER: &str = "naming the columns group_id,region,size";

/// Form 1: `groups.csv` (or `groups.parquet`, named by `name`) with
/// `group_id,region,size`.
pub(crate) fn read_group_sizes(
    dir: &Path,
    name: &'static str,
    hierarchy: &Hierarchy,
    progress: &mut dyn FnMut(LoadProgress) -> ControlFlow<()>,
) -> Result<LeafHistograms, LoadError> {
    let mut f = TableFile::open(dir, name, GROUPS_HEADER, progress)?;
    let sizeless = f.header().len() == 2
        && f.header().iter().any(|c| c == "group_id")
        && f.header().iter().any(|c| c == "region");
    let hint = match (sizeless, name.ends_with(".parquet")) {
        (false, _) => "",
        (true, false) => " (a groups.csv without sizes needs entities.csv beside it)",
        (true, true) => {
            " (a groups.parquet without sizes needs entities.parquet or entities.csv beside it)"
        }
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
    let at = f.locator();
    let file = f.finish()?;
    if let Some(dup) = ids.find_duplicate(dir, name, id_col)? {
        return Err(duplicate_error(&at, dup, duplicate_group));
    }
    Ok((Tally::into_set(tallies), vec![file]))
}

/// Form 2: `groups.csv` with `group_id,region` and `entities.csv` with
/// `entity_id,group_id`.
pub(crate) fn read_entities(
    dir: &Path,
    groups_name: &'static str,
    entities_name: &'static str,
    hierarchy: &Hierarchy,
    progress: &mut dyn FnMut(LoadProgress) -> ControlFlow<()>,
) -> Result<LeafHistograms, LoadError> {
    let mut f = TableFile::open(
        dir,
        groups_name,
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
                found: format!("{groups_name} with a size column, and {entities_name}"),
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
    let groups_at = f.locator();
    let groups_file = f.finish()?;
    if let Some(dup) = index.seal(dir, groups_name, id_col)? {
        return Err(duplicate_error(&groups_at, dup, duplicate_group));
    }

    let mut f = TableFile::open(
        dir,
        entities_name,
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
    let entities_at = f.locator();
    let entities_file = f.finish()?;
    drop(index);
    if let Some(dup) = entity_ids.find_duplicate(dir, entities_name, entity_col)? {
        return Err(duplicate_error(&entities_at, dup, duplicate_entity));
    }
    let mut tallies = vec![Tally::default(); leaves.len()];
    for (leaf, size) in leaf_of.into_iter().zip(sizes) {
        tallies[leaf as usize].add(size);
    }
    Ok((Tally::into_set(tallies), vec![groups_file, entities_file]))
}

/// Form 3: `histograms.csv` (or `histograms.parquet`, named by `name`) with
/// `region,size,count`.
///
/// Rows are kept as read, in runs of consecutive rows of one leaf, with nothing per row
/// but the size and the count: a file sorted by region (as written by coco's generators
/// and most exports) becomes the leaves' arena directly. Lines are kept only where
/// `line − row` changes (blank lines), and the lines of a duplicate (region, size) pair
/// are found from its rows. A leaf whose rows are split over several runs is handled by
/// sorting all rows by (leaf, size), as is a file whose runs are out of leaf order.
pub(crate) fn read_histograms(
    dir: &Path,
    name: &'static str,
    hierarchy: &Hierarchy,
    progress: &mut dyn FnMut(LoadProgress) -> ControlFlow<()>,
) -> Result<LeafHistograms, LoadError> {
    let mut f = TableFile::open(dir, name, "naming the columns region,size,count", progress)?;
    let [region_col, size_col, count_col] = f.columns(["region", "size", "count"], "")?;
    let mut leaves = LeafCodes::new(hierarchy);
    let n = leaves.len();
    // Each run: its leaf and where its rows start in `rows`.
    let mut runs: Vec<(u32, usize)> = Vec::new();
    let mut rows: Vec<(Size, Count)> = Vec::new();
    let mut started = vec![false; n];
    let mut split_leaf = false;
    let mut lines = RowLines::default();
    let mut total: Count = 0;
    while f.next_row()? {
        let leaf = leaves.get(&f, region_col)? as u32;
        let size = f.uint(size_col, "size", u64::from(Size::MAX))? as Size;
        let count = f.uint(count_col, "count", Count::MAX)?;
        // Parents add their children's counts: a total past u64 would overflow there.
        total = total
            .checked_add(count)
            .filter(|&t| t <= super::load::MAX_TOTAL_GROUPS)
            .ok_or_else(|| f.error(Some(count_col), LoadErrorKind::TooManyGroups))?;
        lines.record(rows.len(), f.line());
        if runs.last().is_none_or(|&(l, _)| l != leaf) {
            split_leaf |= std::mem::replace(&mut started[leaf as usize], true);
            runs.push((leaf, rows.len()));
        }
        rows.push((size, count));
    }
    drop(started);
    let at = f.locator();
    let file = f.finish()?;
    let leaf_code = |leaf: u32| {
        let id = hierarchy.level_range(hierarchy.leaf_level()).start + leaf;
        shown(hierarchy.code(NodeId(id)).as_bytes())
    };
    let duplicate = |leaf: u32, size: Size, first_row: usize, row: usize| {
        at.at(
            lines.line(row),
            Some(region_col),
            LoadErrorKind::DuplicateCell {
                region: leaf_code(leaf),
                size,
                first: at.place(lines.line(first_row)),
            },
        )
    };
    let in_order = !split_leaf && runs.windows(2).all(|w| w[0].0 < w[1].0);
    if !in_order {
        // Every row with its leaf: sort by (leaf, size, row).
        let mut cells: Vec<(u32, Size, Count, usize)> = Vec::with_capacity(rows.len());
        for (r, &(leaf, start)) in runs.iter().enumerate() {
            let end = runs.get(r + 1).map_or(rows.len(), |&(_, s)| s);
            cells.extend((start..end).map(|i| (leaf, rows[i].0, rows[i].1, i)));
        }
        drop(rows);
        cells.par_sort_unstable_by_key(|&(leaf, size, _, row)| (leaf, size, row));
        // The duplicate whose second row comes first in the file.
        if let Some(w) = cells
            .windows(2)
            .filter(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
            .min_by_key(|w| w[1].3)
        {
            return Err(duplicate(w[1].0, w[1].1, w[0].3, w[1].3));
        }
        let mut set = HistogramSet::with_capacity(n, cells.len());
        let mut i = 0;
        for leaf in 0..n as u32 {
            let start = i;
            while i < cells.len() && cells[i].0 == leaf {
                i += 1;
            }
            set.push_sorted_pairs(
                cells[start..i]
                    .iter()
                    .filter(|c| c.2 > 0)
                    .map(|&(_, size, count, _)| (size, count)),
            );
        }
        return Ok((set, vec![file]));
    }
    // Runs in leaf order, one per leaf: sort each run by size where it is not sorted,
    // and find duplicates within runs.
    let mut first_duplicate: Option<(u32, Size, usize, usize)> = None;
    for (r, &(leaf, start)) in runs.iter().enumerate() {
        let end = runs.get(r + 1).map_or(rows.len(), |&(_, s)| s);
        let run = &mut rows[start..end];
        if run.windows(2).all(|w| w[0].0 < w[1].0) {
            continue;
        }
        let mut keyed: Vec<(Size, usize)> = run
            .iter()
            .enumerate()
            .map(|(i, p)| (p.0, start + i))
            .collect();
        keyed.sort_unstable();
        if let Some(w) = keyed
            .windows(2)
            .filter(|w| w[0].0 == w[1].0)
            .min_by_key(|w| w[1].1)
            && first_duplicate.is_none_or(|d| w[1].1 < d.3)
        {
            first_duplicate = Some((leaf, w[1].0, w[0].1, w[1].1));
        }
        run.sort_unstable_by_key(|p| p.0);
    }
    if let Some((leaf, size, first, second)) = first_duplicate {
        return Err(duplicate(leaf, size, first, second));
    }
    let mut set = HistogramSet::with_capacity(n, rows.len());
    let mut next_run = 0;
    for leaf in 0..n as u32 {
        match runs.get(next_run) {
            Some(&(l, start)) if l == leaf => {
                let end = runs.get(next_run + 1).map_or(rows.len(), |&(_, s)| s);
                set.push_sorted_pairs(rows[start..end].iter().copied().filter(|p| p.1 > 0));
                next_run += 1;
            }
            _ => set.push_sorted_pairs(std::iter::empty()),
        }
    }
    Ok((set, vec![file]))
}
