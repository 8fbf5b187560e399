//! `coco inspect`: a summary of a dataset, for the agency's own eyes.
//!
//! Computed from the true histograms, so it is confidential: the hierarchy and the
//! number of groups `G` per region are public (Kuo et al. §3), but the entity totals,
//! the group sizes and their spread are not, and the summary must not be published.

use serde::Serialize;

use crate::data::{Dataset, GroupsForm, InputFile, LevelId, NodeId};
use crate::histogram::{Count, Size};
use crate::privacy::Diagnostic;

/// How many of a level's largest nodes are listed.
const TOP: usize = 5;

const NOTICE: &str = "computed from the confidential data: the hierarchy and the group counts \
                      (G) are public, but entities and group sizes are confidential; do not \
                      publish this summary";

/// What `coco inspect` prints. Computed from the true histograms: confidential.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Always `true`, so that no reader of the JSON can miss it.
    pub confidential: bool,
    pub notice: &'static str,
    pub dataset: String,
    pub directory: String,
    pub form: GroupsForm,
    pub form_description: String,
    pub inputs: Vec<InputFile>,
    /// [`Dataset::fingerprint`]: the exact input bytes (coco 0.1 keyed its ledger and
    /// manifests by it; caps set on it still apply).
    pub fingerprint: String,
    /// [`Dataset::content_digest`]: the key of ε spending in the ledger (the leaves'
    /// count-of-counts, whatever the form, order, names or formatting). Confidential.
    pub content_digest: String,
    /// From the root down.
    pub levels: Vec<LevelSummary>,
    pub root: NodeSummary,
}

/// One level of the hierarchy. Its nodes partition the groups, so its totals equal the
/// root's.
#[derive(Clone, Debug, Serialize)]
pub struct LevelSummary {
    pub name: String,
    pub nodes: usize,
    /// Nodes without any group.
    pub empty_nodes: usize,
    pub groups: Count,
    pub entities: u128,
    pub max_size: Option<Size>,
    pub distinct_sizes: usize,
    /// The nodes with the most groups, most first (ties in hierarchy order).
    pub largest: Vec<NodeSummary>,
}

/// One node's totals.
#[derive(Clone, Debug, Serialize)]
pub struct NodeSummary {
    pub id: String,
    pub name: Option<String>,
    pub groups: Count,
    pub entities: u128,
    pub max_size: Option<Size>,
    pub distinct_sizes: usize,
}

impl NodeSummary {
    fn of(dataset: &Dataset, id: NodeId) -> NodeSummary {
        let h = dataset.truth().for_diagnostic(Diagnostic::Inspect).node(id);
        NodeSummary {
            id: dataset.hierarchy.display_id(id),
            name: dataset.hierarchy.name(id).map(str::to_string),
            groups: dataset.groups(id),
            entities: h.entities(),
            max_size: h.max_size(),
            distinct_sizes: h.distinct_sizes(),
        }
    }
}

impl LevelSummary {
    fn of(dataset: &Dataset, level: LevelId) -> LevelSummary {
        let h = &dataset.hierarchy;
        let truth = dataset.truth().for_diagnostic(Diagnostic::Inspect);
        let hists = || h.level_nodes(level).map(|id| truth.node(id));
        // The largest regions: a partial sort, not of every region.
        let key = |id: &NodeId| (std::cmp::Reverse(dataset.groups(*id)), *id);
        let mut by_groups: Vec<NodeId> = h.level_nodes(level).collect();
        if by_groups.len() > TOP {
            by_groups.select_nth_unstable_by_key(TOP, key);
            by_groups.truncate(TOP);
        }
        by_groups.sort_by_key(key);
        LevelSummary {
            name: h.level_name(level).to_string(),
            nodes: h.level_len(level),
            empty_nodes: hists().filter(|h| h.is_empty()).count(),
            groups: h.level_nodes(level).map(|id| dataset.groups(id)).sum(),
            entities: hists().map(|h| h.entities()).sum(),
            max_size: hists().filter_map(|h| h.max_size()).max(),
            // Every level holds every group once, so the sizes present at a level are
            // the root's.
            distinct_sizes: truth.node(NodeId::ROOT).distinct_sizes(),
            largest: by_groups
                .into_iter()
                .take(TOP)
                .map(|id| NodeSummary::of(dataset, id))
                .collect(),
        }
    }
}

impl Summary {
    pub fn of(dataset: &Dataset) -> Summary {
        Summary {
            confidential: true,
            notice: NOTICE,
            dataset: dataset.name(),
            directory: dataset.dir.display().to_string(),
            form: dataset.form,
            form_description: dataset.form_description(),
            inputs: dataset.inputs.clone(),
            fingerprint: dataset.fingerprint(),
            content_digest: dataset.content_digest(),
            levels: dataset
                .hierarchy
                .levels()
                .map(|level| LevelSummary::of(dataset, level))
                .collect(),
            root: NodeSummary::of(dataset, NodeId::ROOT),
        }
    }
}

pub use crate::units::thousands;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(
            thousands(u128::from(u64::MAX)),
            "18,446,744,073,709,551,615"
        );
    }

    #[test]
    fn summary_of_the_tiny_dataset() {
        let d = crate::data::tests::tiny();
        let s = Summary::of(&d);
        assert!(s.confidential);
        assert_eq!(s.levels.len(), 3);
        // Every level partitions the same 14 groups.
        for level in &s.levels {
            assert_eq!(level.groups, 14);
            assert_eq!(level.entities, s.root.entities);
            assert_eq!(level.max_size, Some(40));
        }
        assert_eq!(
            s.root.entities,
            1 + 1 + 2 + 3 + 2 + 2 + 4 + 1 + 5 + 5 + 7 + 40 + 3
        );
        let counties = &s.levels[2];
        assert_eq!((counties.nodes, counties.empty_nodes), (5, 1));
        let top: Vec<(&str, Count)> = counties
            .largest
            .iter()
            .map(|n| (n.id.as_str(), n.groups))
            .collect();
        // a1 and b2 tie at 5 groups and keep hierarchy order.
        assert_eq!(
            top,
            [
                ("US/A/a1", 5),
                ("US/B/b2", 5),
                ("US/A/a2", 3),
                ("US/B/b3", 1),
                ("US/B/b1", 0)
            ]
        );
        assert_eq!(counties.distinct_sizes, 8);
    }
}
