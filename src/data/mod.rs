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
mod names;
pub mod text;

use std::path::{Path, PathBuf};

pub use hierarchy::{Hierarchy, HierarchyError, LevelId, Node, NodeId};
pub use load::{LoadError, LoadErrorKind, LoadProgress};

use crate::histogram::{Count, CountOfCounts};
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
pub struct TrueHistograms(Vec<CountOfCounts>);

impl TrueHistograms {
    pub fn node(&self, id: NodeId) -> &CountOfCounts {
        &self.0[id.index()]
    }

    pub fn all(&self) -> &[CountOfCounts] {
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
}

impl Dataset {
    /// Loads and validates the dataset in `dir`.
    pub fn load(dir: &Path) -> Result<Dataset, LoadError> {
        load::load(dir, &mut |_| {})
    }

    /// Loads with progress reports (for the TUI).
    pub fn load_with_progress(
        dir: &Path,
        progress: &mut dyn FnMut(LoadProgress),
    ) -> Result<Dataset, LoadError> {
        load::load(dir, progress)
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
        let leaf_level = hierarchy.leaf_level();
        assert_eq!(
            leaves.len(),
            hierarchy.level_len(leaf_level),
            "one histogram per leaf"
        );
        let mut hists = vec![CountOfCounts::new(); hierarchy.len()];
        for (id, h) in hierarchy.level_nodes(leaf_level).zip(leaves) {
            hists[id.index()] = h;
        }
        hierarchy.aggregate(&mut hists);
        let groups = hists.iter().map(CountOfCounts::groups).collect();
        Dataset {
            dir,
            hierarchy,
            form,
            inputs,
            groups,
            truth: Confidential::new(TrueHistograms(hists)),
        }
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
        let mut hists: Vec<&[(crate::histogram::Size, crate::histogram::Count)]> = self
            .hierarchy
            .level_nodes(leaves)
            .map(|id| {
                self.truth
                    .for_diagnostic(Diagnostic::Provenance)
                    .node(id)
                    .pairs()
            })
            .collect();
        hists.sort_unstable();
        let mut h = Sha256::new();
        h.update(b"coco content digest v1\0");
        h.update((hists.len() as u64).to_le_bytes());
        for pairs in hists {
            h.update((pairs.len() as u64).to_le_bytes());
            for &(size, count) in pairs {
                h.update(u64::from(size).to_le_bytes());
                h.update(count.to_le_bytes());
            }
        }
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
    fn aggregation_is_sum_of_children() {
        let d = tiny();
        let h = &d.hierarchy;
        for node in h.nodes().iter().filter(|n| !n.is_leaf()) {
            let sum = CountOfCounts::sum(node.children().map(|c| {
                d.truth()
                    .for_diagnostic(crate::privacy::Diagnostic::Oracle)
                    .node(c)
            }));
            let id = h.find(&node.display_id).unwrap();
            assert_eq!(
                d.truth()
                    .for_diagnostic(crate::privacy::Diagnostic::Oracle)
                    .node(id),
                &sum
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
