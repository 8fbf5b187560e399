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

    /// The human-readable report: aligned columns, thousands separators.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!("Dataset {} ({})\n", self.dataset, self.directory));
        out.push_str(
            "CONFIDENTIAL: computed from the true data; do not publish this summary.\n\
             The hierarchy and the group counts (G) are public; entities and group sizes are not.\n\n",
        );

        let files: Vec<Vec<String>> = self
            .inputs
            .iter()
            .map(|f| {
                vec![
                    f.path.clone(),
                    format!("{} bytes", thousands(f.bytes.into())),
                    format!("sha256 {}…", &f.sha256[..f.sha256.len().min(16)]),
                ]
            })
            .collect();
        out.push_str(&format!("Groups form   {}\n", self.form_description));
        let files = table(&[], &files, &[false, true, false]);
        for (i, line) in files.lines().enumerate() {
            let label = if i == 0 { "Input files" } else { "" };
            out.push_str(&format!("{label:<14}{line}\n"));
        }
        out.push_str(&format!(
            "Ledger key    {}… (content digest: ε spending is keyed by it)\n",
            &self.content_digest[..self.content_digest.len().min(12)]
        ));
        out.push_str(&format!(
            "Fingerprint   {}… (the exact input bytes)\n\n",
            &self.fingerprint[..self.fingerprint.len().min(16)]
        ));

        let r = &self.root;
        out.push_str(&format!(
            "Root {}: {} groups, {} entities, largest group {}, {} distinct sizes\n\n",
            label(&r.id, r.name.as_deref()),
            thousands(r.groups.into()),
            thousands(r.entities),
            size(r.max_size),
            thousands(r.distinct_sizes as u128),
        ));

        out.push_str("Levels\n");
        let rows: Vec<Vec<String>> = self
            .levels
            .iter()
            .map(|l| {
                vec![
                    l.name.clone(),
                    thousands(l.nodes as u128),
                    thousands(l.empty_nodes as u128),
                    thousands(l.groups.into()),
                    thousands(l.entities),
                    size(l.max_size),
                    thousands(l.distinct_sizes as u128),
                ]
            })
            .collect();
        out.push_str(&indent(&table(
            &[
                "level",
                "nodes",
                "empty",
                "groups",
                "entities",
                "max size",
                "distinct sizes",
            ],
            &rows,
            &[false, true, true, true, true, true, true],
        )));

        let below_root = self.levels.iter().skip(1).filter(|l| l.nodes > 0);
        let mut first = true;
        for level in below_root {
            if first {
                out.push_str("\nLargest nodes by groups (G)\n");
                first = false;
            }
            let shown = level.largest.len();
            if shown < level.nodes {
                out.push_str(&format!(
                    "  {} (top {shown} of {})\n",
                    level.name,
                    thousands(level.nodes as u128)
                ));
            } else {
                out.push_str(&format!("  {}\n", level.name));
            }
            let named = level.largest.iter().any(|n| n.name.is_some());
            let rows: Vec<Vec<String>> = level
                .largest
                .iter()
                .map(|n| {
                    let mut row = vec![n.id.clone()];
                    if named {
                        row.push(n.name.clone().unwrap_or_default());
                    }
                    row.extend([
                        thousands(n.groups.into()),
                        thousands(n.entities),
                        size(n.max_size),
                    ]);
                    row
                })
                .collect();
            let (header, right): (Vec<&str>, Vec<bool>) = if named {
                (
                    vec!["id", "name", "groups", "entities", "max size"],
                    vec![false, false, true, true, true],
                )
            } else {
                (
                    vec!["id", "groups", "entities", "max size"],
                    vec![false, true, true, true],
                )
            };
            out.push_str(&indent(&indent(&table(&header, &rows, &right))));
        }
        out
    }
}

fn label(id: &str, name: Option<&str>) -> String {
    match name {
        Some(name) => format!("{id} ({name})"),
        None => id.to_string(),
    }
}

fn size(s: Option<Size>) -> String {
    s.map_or_else(|| "-".to_string(), |s| thousands(s.into()))
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// Columns separated by two spaces, each as wide as its widest cell; `right` marks the
/// right-aligned (numeric) columns. An empty `header` prints no header line.
fn table(header: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let columns = right.len();
    let width = |s: &str| s.chars().count();
    let mut widths = vec![0; columns];
    for (i, w) in widths.iter_mut().enumerate() {
        let cells = rows.iter().filter_map(|r| r.get(i)).map(|c| width(c));
        let head = header.get(i).map_or(0, |h| width(h));
        *w = cells.fold(head, usize::max);
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            let pad = " ".repeat(widths[i] - width(cell));
            if right[i] {
                s.push_str(&pad);
                s.push_str(cell);
            } else {
                s.push_str(cell);
                if i + 1 < cells.len() {
                    s.push_str(&pad);
                }
            }
        }
        s.push('\n');
        s
    };
    let mut out = String::new();
    if !header.is_empty() {
        out.push_str(&line(header.to_vec()));
    }
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

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
    fn tables_align_columns() {
        let rows = vec![
            vec!["a".to_string(), "1".to_string()],
            vec!["long".to_string(), "1,000".to_string()],
        ];
        assert_eq!(
            table(&["id", "n"], &rows, &[false, true]),
            "id        n\na         1\nlong  1,000\n"
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
        let text = s.to_text();
        assert!(text.contains("CONFIDENTIAL"));
        assert!(
            text.contains("Root US: 14 groups, 76 entities, largest group 40, 8 distinct sizes")
        );
    }
}
