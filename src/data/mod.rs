//! Datasets: the public hierarchy and group counts, and the confidential count-of-counts.
//!
//! A dataset directory holds `hierarchy.csv` and the groups in exactly one of three
//! forms (see the README's data contract). [`Dataset::load`] reads and validates it
//! completely or not at all.
//!
//! The privacy boundary is in the types: [`PublicData`] (the hierarchy and the number
//! of groups per region, public per Kuo et al. §3) is what post-processing may read;
//! [`TrueHistograms`] is confidential and is read only by the measurement step and by
//! diagnostics that say they are confidential.

mod csv_input;
mod groups;
pub mod hierarchy;
mod ids;
pub mod load;
pub mod load_error;
pub mod look_alike;
mod names;
mod parquet_input;
pub mod population;
mod table;
pub mod text;

use std::path::{Path, PathBuf};

pub use hierarchy::{Hierarchy, HierarchyError, LevelId, Node, NodeId};
pub use load::{LoadError, LoadErrorKind, LoadProgress, Place, Position, input_bytes};
pub use population::PopulationKeys;

use rayon::prelude::*;

use crate::histogram::{Count, CountOfCounts, HistRef, HistogramSet, Size};
use crate::privacy::{Confidential, Diagnostic};

/// Which of the three groups forms a dataset uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupsForm {
    /// `groups.csv` with `group_id,region,size`.
    GroupSizes,
    /// `groups.csv` with `group_id,region` and `entities.csv` with `entity_id,group_id`.
    Entities,
    /// `histograms.csv` with `region,size,count`.
    Histograms,
}

impl GroupsForm {
    pub fn describe(self) -> &'static str {
        match self {
            GroupsForm::GroupSizes => "groups.csv (group_id,region,size)",
            GroupsForm::Entities => "groups.csv + entities.csv",
            GroupsForm::Histograms => "histograms.csv (region,size,count)",
        }
    }
}

/// One input file, with its SHA-256 digest (hex).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct InputFile {
    /// File name within the dataset directory.
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
}

/// The true count-of-counts histogram of every node, indexed by [`NodeId`]. Confidential.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrueHistograms(HistogramSet);

impl TrueHistograms {
    pub fn node(&self, id: NodeId) -> HistRef<'_> {
        self.0.get(id.index())
    }

    pub fn all(&self) -> &HistogramSet {
        &self.0
    }
}

/// What post-processing may read: the hierarchy and the public number of groups per node.
#[derive(Clone, Copy, Debug)]
pub struct PublicData<'a> {
    pub hierarchy: &'a Hierarchy,
    /// `G` per node, indexed by [`NodeId`].
    pub groups: &'a [Count],
}

impl PublicData<'_> {
    pub fn groups(&self, id: NodeId) -> Count {
        self.groups[id.index()]
    }
}

/// A loaded, validated dataset.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// The directory it was loaded from (empty for generated datasets).
    pub dir: PathBuf,
    pub hierarchy: Hierarchy,
    pub form: GroupsForm,
    /// The files read, in a fixed order, with their digests.
    pub inputs: Vec<InputFile>,
    groups: Vec<Count>,
    truth: Confidential<TrueHistograms>,
    /// Codes or names of one parent's children that read alike (public: labels only).
    look_alikes: look_alike::LookAlikes,
}

impl Dataset {
    /// [`GroupsForm::describe`] with the files this dataset was read from (`groups.parquet
    /// (group_id,region,size)` for a Parquet table).
    pub fn form_description(&self) -> String {
        let mut text = self.form.describe().to_string();
        for input in &self.inputs {
            if let Some(stem) = input.path.strip_suffix(".parquet") {
                text = text.replace(&format!("{stem}.csv"), &input.path);
            }
        }
        text
    }

    /// Loads and validates the dataset in `dir`.
    pub fn load(dir: &Path) -> Result<Dataset, LoadError> {
        load::load(dir, &mut |_| std::ops::ControlFlow::Continue(()))
    }

    /// Loads with progress reports (for the TUI).
    pub fn load_with_progress(
        dir: &Path,
        progress: &mut dyn FnMut(LoadProgress),
    ) -> Result<Dataset, LoadError> {
        load::load(dir, &mut |p| {
            progress(p);
            std::ops::ControlFlow::Continue(())
        })
    }

    /// Loads with progress reports, stopping within a few megabytes read once `cancel`
    /// is raised ([`LoadErrorKind::Cancelled`]); what
    /// was read is dropped.
    pub fn load_cancellable(
        dir: &Path,
        cancel: &std::sync::atomic::AtomicBool,
        progress: &mut dyn FnMut(LoadProgress),
    ) -> Result<Dataset, LoadError> {
        load::load(dir, &mut |p| {
            if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                return std::ops::ControlFlow::Break(());
            }
            progress(p);
            std::ops::ControlFlow::Continue(())
        })
    }

    /// Builds a dataset from the hierarchy and one histogram per leaf (in the order of
    /// [`Hierarchy::level_nodes`] at the leaf level); parents are aggregated bottom-up.
    pub fn from_leaf_histograms(
        dir: PathBuf,
        hierarchy: Hierarchy,
        form: GroupsForm,
        inputs: Vec<InputFile>,
        leaves: Vec<CountOfCounts>,
    ) -> Dataset {
        let leaves: HistogramSet = leaves.into_iter().collect();
        Self::from_leaf_set(dir, hierarchy, form, inputs, leaves)
    }

    /// [`Dataset::from_leaf_histograms`] with the leaves in one arena.
    pub fn from_leaf_set(
        dir: PathBuf,
        hierarchy: Hierarchy,
        form: GroupsForm,
        inputs: Vec<InputFile>,
        leaves: HistogramSet,
    ) -> Dataset {
        let leaf_level = hierarchy.leaf_level();
        assert_eq!(
            leaves.len(),
            hierarchy.level_len(leaf_level),
            "one histogram per leaf"
        );
        let hists = aggregate_levels(&hierarchy, leaves);
        let groups = hists.iter().map(HistRef::groups).collect();
        Dataset {
            dir,
            hierarchy,
            form,
            inputs,
            groups,
            truth: Confidential::new(TrueHistograms(hists)),
            look_alikes: Default::default(),
        }
    }

    /// Codes or names of one parent's children that read alike, found at load
    /// ([`look_alike`]): the operator is warned, since the published rows would look the
    /// same.
    pub fn look_alikes(&self) -> &look_alike::LookAlikes {
        &self.look_alikes
    }

    /// The public part: what post-processing may read.
    pub fn public(&self) -> PublicData<'_> {
        PublicData {
            hierarchy: &self.hierarchy,
            groups: &self.groups,
        }
    }

    /// `G` of a node (public).
    pub fn groups(&self, id: NodeId) -> Count {
        self.groups[id.index()]
    }

    /// The true histograms: confidential, opened only by the measurement step and by
    /// named diagnostics (see [`Confidential`]), never by post-processing.
    pub fn truth(&self) -> &Confidential<TrueHistograms> {
        &self.truth
    }

    /// SHA-256 over the input files' digests, in order: identifies the dataset in the
    /// privacy-loss ledger and the release manifest.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for f in &self.inputs {
            h.update(f.path.as_bytes());
            h.update([0]);
            h.update(f.sha256.as_bytes());
            h.update([0]);
        }
        hex(&h.finalize())
    }

    /// A digest of the confidential content: the multiset of the leaves' count-of-counts,
    /// independent of the groups form, row order, formatting, region codes and names.
    /// Keys privacy-loss spending in the ledger, so that rewriting the same data another
    /// way does not reset the ε spent on it.
    ///
    /// It is a noise-free function of the confidential data, so it is **confidential**: it
    /// goes into the agency's ledger only, never into a published file.
    pub fn content_digest(&self) -> String {
        use sha2::{Digest, Sha256};
        let leaves = self.hierarchy.leaf_level();
        let truth = self.truth.for_diagnostic(Diagnostic::Provenance);
        // Sorted as slices; a key of the first two pairs, kept beside each leaf, decides
        // most comparisons without reading the histograms (the order is the same).
        let mut keyed: Vec<(u128, u32, bool)> = self
            .hierarchy
            .level_nodes(leaves)
            .map(|id| {
                let (key, whole) = prefix_key(truth.node(id).pairs());
                (key, id.0, whole)
            })
            .collect();
        keyed.par_sort_unstable_by(|a, b| {
            a.0.cmp(&b.0).then_with(|| {
                if a.2 && b.2 {
                    // Both keys hold their whole histograms: equal keys, equal pairs.
                    std::cmp::Ordering::Equal
                } else {
                    truth
                        .node(NodeId(a.1))
                        .pairs()
                        .cmp(truth.node(NodeId(b.1)).pairs())
                }
            })
        });
        let hists = keyed
            .iter()
            .map(|&(_, id, _)| truth.node(NodeId(id)).pairs());
        let mut h = Sha256::new();
        h.update(b"coco content digest v1\0");
        h.update((keyed.len() as u64).to_le_bytes());
        // The same bytes as one update per number, fed in large pieces.
        let mut buffer: Vec<u8> = Vec::with_capacity(1 << 16);
        for pairs in hists {
            buffer.extend_from_slice(&(pairs.len() as u64).to_le_bytes());
            for &(size, count) in pairs {
                buffer.extend_from_slice(&u64::from(size).to_le_bytes());
                buffer.extend_from_slice(&count.to_le_bytes());
            }
            if buffer.len() >= (1 << 16) - 1024 {
                h.update(&buffer);
                buffer.clear();
            }
        }
        h.update(&buffer);
        hex(&h.finalize())
    }

    /// A short name for messages: the directory's last component.
    pub fn name(&self) -> String {
        self.dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.dir.display().to_string())
    }
}

/// A key whose order agrees with the lexicographic order of histograms' pairs, and
/// whether it holds the whole histogram. The key is up to eight 16-bit chunks, one per
/// pair, first pair highest: `(size + 1) · 2^8 + count` while both fit in 8 bits (0 for
/// no pair, which sorts a histogram before its extensions). A pair that does not fit
/// gives a saturated chunk (`255 · 2^8` for a large size; `(size + 1) · 2^8 + 255` for a
/// large count) and ends the key, since it no longer decides what follows. So differing
/// keys order as the pairs do, and equal whole keys mean equal histograms; census blocks
/// (a dozen households of a few sizes) nearly always fit whole.
fn prefix_key(pairs: &[(Size, Count)]) -> (u128, bool) {
    let mut key: u128 = 0;
    let mut whole = pairs.len() <= 8;
    for (i, &(s, c)) in pairs.iter().take(8).enumerate() {
        let chunk: u128 = if s >= 254 {
            255 << 8
        } else if c >= 255 {
            (u128::from(s) + 1) << 8 | 255
        } else {
            (u128::from(s) + 1) << 8 | u128::from(c)
        };
        key |= chunk << (16 * (7 - i));
        if s >= 254 || c >= 255 {
            whole = false;
            break;
        }
    }
    (key, whole)
}

/// Every node's histogram in node order, the parents summed from their children level by
/// level (in parallel within a level).
pub(crate) fn aggregate_levels(hierarchy: &Hierarchy, leaves: HistogramSet) -> HistogramSet {
    let depth = hierarchy.depth();
    let mut below = leaves;
    let mut levels: Vec<HistogramSet> = Vec::with_capacity(depth);
    for level in (0..depth.saturating_sub(1)).rev() {
        let range = hierarchy.level_range(LevelId(level));
        let first_child = hierarchy.level_range(LevelId(level + 1)).start;
        let ids: Vec<u32> = range.collect();
        let parts: Vec<HistogramSet> = ids
            .par_chunks(4096)
            .map(|chunk| {
                let mut out = HistogramSet::with_capacity(chunk.len(), 0);
                let mut scratch: Vec<(Size, Count)> = Vec::new();
                for &id in chunk {
                    let node = hierarchy.node(NodeId(id));
                    let children = (node.children.start - first_child) as usize
                        ..(node.children.end - first_child) as usize;
                    sum_into(children.map(|c| below.get(c)), &mut scratch);
                    out.push_sorted_pairs(scratch.iter().copied());
                }
                out
            })
            .collect();
        let this = HistogramSet::concat(parts);
        levels.push(below);
        below = this;
    }
    levels.push(below);
    levels.reverse();
    HistogramSet::concat(levels)
}

/// The sum of histograms, as sorted pairs in `out` (cleared first).
pub(crate) fn sum_into<'a>(parts: impl Iterator<Item = HistRef<'a>>, out: &mut Vec<(Size, Count)>) {
    out.clear();
    for p in parts {
        out.extend_from_slice(p.pairs());
    }
    out.sort_unstable_by_key(|&(s, _)| s);
    let mut w = 0;
    for r in 0..out.len() {
        if w > 0 && out[w - 1].0 == out[r].0 {
            // Totals are bounded by the loader (at most 10^12 groups in a dataset).
            out[w - 1].1 = out[w - 1].1.saturating_add(out[r].1);
        } else {
            out[w] = out[r];
            w += 1;
        }
    }
    out.truncate(w);
}

/// Lower-case hex of a byte string.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::histogram::Size;

    /// A small three-level dataset for tests across the crate.
    pub fn tiny() -> Dataset {
        let names = vec!["nation".into(), "state".into(), "county".into()];
        let rows: Vec<Vec<String>> = ["US,A,a1", "US,A,a2", "US,B,b1", "US,B,b2", "US,B,b3"]
            .iter()
            .map(|r| r.split(',').map(String::from).collect())
            .collect();
        let h = Hierarchy::from_leaf_paths(names, &rows).unwrap();
        let leaf = |sizes: &[Size]| CountOfCounts::from_sizes(sizes.iter().copied());
        let leaves = vec![
            leaf(&[1, 1, 2, 3, 0]),
            leaf(&[2, 2, 4]),
            leaf(&[]),
            leaf(&[1, 5, 5, 7, 40]),
            leaf(&[3]),
        ];
        Dataset::from_leaf_histograms(PathBuf::new(), h, GroupsForm::Histograms, vec![], leaves)
    }

    #[test]
    fn the_prefix_key_orders_as_the_pairs() {
        use proptest::prelude::*;
        let pair = (
            prop_oneof![0u32..4, 250u32..260],
            prop_oneof![1u64..4, 250u64..260],
        );
        let pairs = proptest::collection::vec(pair, 0..11);
        proptest!(|(a in pairs.clone(), b in pairs)| {
            let ((ka, wa), (kb, wb)) = (prefix_key(&a), prefix_key(&b));
            if ka != kb {
                prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
            } else if wa && wb {
                prop_assert_eq!(&a, &b);
            }
        });
    }

    #[test]
    fn aggregation_is_sum_of_children() {
        let d = tiny();
        let h = &d.hierarchy;
        for (i, node) in h.nodes().iter().enumerate().filter(|(_, n)| !n.is_leaf()) {
            let sum = CountOfCounts::sum(node.children().map(|c| {
                d.truth()
                    .for_diagnostic(crate::privacy::Diagnostic::Oracle)
                    .node(c)
            }));
            let id = h.find(&h.display_id(NodeId(i as u32))).unwrap();
            assert_eq!(
                d.truth()
                    .for_diagnostic(crate::privacy::Diagnostic::Oracle)
                    .node(id),
                sum.as_ref()
            );
            assert_eq!(d.groups(id), sum.groups());
        }
        assert_eq!(d.groups(NodeId::ROOT), 14);
        assert_eq!(
            d.truth()
                .for_diagnostic(crate::privacy::Diagnostic::Oracle)
                .node(NodeId::ROOT)
                .max_size(),
            Some(40)
        );
    }
}
