//! Public proxies: datasets with the same hierarchy as the confidential one, on which
//! previews and the trade-off search can run without looking at the confidential data.
//!
//! A plan tuned on previews of the confidential data publishes a function of it (its
//! ε split, methods and tails) outside the privacy guarantee. Tuned on a proxy, every
//! choice depends on public information only. Two kinds:
//!
//! * **A proxy directory**: any dataset in coco's input format with exactly the same
//!   hierarchy (levels, regions and their codes), e.g. an earlier census that has been
//!   published. Its group counts may differ from the confidential ones. It must not be
//!   confidential data itself: a directory whose content digest or population key
//!   ([`crate::data::population`]: the same groups under another hierarchy, or one
//!   entity more or fewer) matches the dataset's, or any dataset's the ledger records
//!   a draw from, is refused. So is one within [`NEAR_ENTITIES`] entities of the
//!   dataset ([`entities_apart`]): a copy with a few groups changed is the confidential
//!   data for privacy purposes. A plan tuned on it would not be public.
//! * **The synthetic proxy** ([`synthetic`]): each leaf region's public `G` groups with
//!   sizes drawn from a fixed public model ([`SyntheticModel`]): vacant units, households
//!   from the shifted-Poisson model of [`crate::generate::household_sizes`] (mean 2.5),
//!   and a few large groups (group quarters) spread over a wide range of sizes. Only the
//!   hierarchy and `G` are read ([`PublicData`]), so building it spends no ε.
//!
//! The proxy's errors say how a plan behaves on data shaped like the model or like the
//! earlier census, not on the confidential data: the closer the proxy, the better the
//! tuning, and nothing about the confidential sizes leaks through it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use thiserror::Error;

use crate::data::{Dataset, GroupsForm, Hierarchy, LoadError, NodeId, PublicData};
use crate::generate::binomial::binomial;
use crate::generate::household_sizes::SizeModel;
use crate::generate::random::GenRng;
use crate::histogram::{Count, HistogramSet, Size};
use crate::release::ledger::{DatasetIdentity, Ledger, LedgerError};
use libm::{exp, log as ln};

/// Which proxy to preview against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProxySpec {
    /// coco's synthetic proxy, built from the public `G` ([`synthetic`]).
    Synthetic,
    /// A dataset directory with the same hierarchy.
    Dir(PathBuf),
}

impl ProxySpec {
    /// `synthetic`, or a directory.
    pub fn parse(text: &str) -> ProxySpec {
        if text.trim().eq_ignore_ascii_case("synthetic") {
            ProxySpec::Synthetic
        } else {
            ProxySpec::Dir(PathBuf::from(text))
        }
    }
}

/// `synthetic`, or the directory as given.
impl std::fmt::Display for ProxySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProxySpec::Synthetic => f.write_str("synthetic"),
            ProxySpec::Dir(dir) => write!(f, "{}", dir.display()),
        }
    }
}

/// What `--proxy` takes: every text names a proxy (`synthetic` or a directory).
impl std::str::FromStr for ProxySpec {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<ProxySpec, Self::Err> {
        Ok(ProxySpec::parse(text))
    }
}

/// A proxy ready for previews, and what to call it.
#[derive(Clone, Debug)]
pub struct Proxy {
    pub dataset: Arc<Dataset>,
    /// e.g. `synthetic proxy (public G, model sizes)` or `proxy census2020`.
    pub label: String,
    /// What a plan tuned on it records as its `tuning_source`: `synthetic`, or the
    /// proxy dataset's name.
    pub source: String,
}

impl Proxy {
    /// What previews on this proxy run on (for [`crate::tradeoff::PreviewData`]).
    pub fn preview_data(&self) -> crate::tradeoff::PreviewData {
        crate::tradeoff::PreviewData::Proxy {
            label: self.label.clone(),
            source: self.source.clone(),
        }
    }
}

/// The synthetic proxy's `tuning_source`.
pub const SYNTHETIC_SOURCE: &str = "synthetic";

#[derive(Debug, Error)]
pub enum ProxyError {
    /// The proxy's own files: the load error names the file, line and column.
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(
        "proxy {file}: levels {found}; expected the dataset's levels {expected} (a proxy needs the same hierarchy)"
    )]
    Levels {
        file: PathBuf,
        found: String,
        expected: String,
    },
    #[error(
        "proxy {file}: region {found:?} ({level}) where the dataset has {expected:?}: a proxy needs the same regions with the same codes, level by level"
    )]
    Region {
        file: PathBuf,
        level: String,
        expected: String,
        found: String,
    },
    #[error(
        "proxy {file}: {found} regions; expected the dataset's {expected} (a proxy needs the same regions; {first})"
    )]
    Count {
        file: PathBuf,
        found: usize,
        expected: usize,
        first: String,
    },
    /// The proxy is confidential data: the dataset itself, or data a draw was made on.
    #[error(
        "proxy {dir}: {why}: a proxy must be public data (an earlier published census, or \"synthetic\"); a plan tuned on confidential data would not be public"
    )]
    Confidential { dir: PathBuf, why: String },
    /// The proxy is the dataset but for a few entities ([`entities_apart`]).
    #[error(
        "proxy {dir}: it is {distance} entities from the confidential dataset (entities added to or removed from groups to make one's non-empty groups the other's), and a proxy at most {NEAR_ENTITIES} apart is the confidential data for privacy purposes (differential privacy protects a group of k entities only at k·ε): a proxy must be public data (an earlier published census, or \"synthetic\"); a plan tuned on confidential data would not be public"
    )]
    Near { dir: PathBuf, distance: u64 },
    #[error("proxy: cannot check it against the ledger: {0}")]
    Ledger(#[from] LedgerError),
}

/// The synthetic proxy's label.
pub const SYNTHETIC_LABEL: &str = "synthetic proxy (public G, model sizes)";

/// Opens a proxy for `dataset`: builds the synthetic one from its public part, or
/// loads a directory, checks that its hierarchy is the dataset's and that it is not
/// confidential data: not the dataset's data (by content digest or population key) nor
/// any dataset's the ledger records a draw from.
pub fn open(
    spec: &ProxySpec,
    dataset: &Dataset,
    ledger: Option<&Ledger>,
) -> Result<Proxy, ProxyError> {
    match spec {
        ProxySpec::Synthetic => Ok(Proxy {
            dataset: Arc::new(synthetic(dataset.public(), &SyntheticModel::default())),
            label: SYNTHETIC_LABEL.into(),
            source: SYNTHETIC_SOURCE.into(),
        }),
        ProxySpec::Dir(dir) => {
            let proxy = Dataset::load(dir)?;
            same_hierarchy(
                &dataset.hierarchy,
                &proxy.hierarchy,
                &dir.join("hierarchy.csv"),
            )?;
            not_confidential(dir, &proxy, dataset, ledger)?;
            Ok(Proxy {
                label: format!("proxy {}", proxy.name()),
                source: proxy.name(),
                dataset: Arc::new(proxy),
            })
        }
    }
}

/// Refuses a proxy that is the dataset's data, or data the ledger records a draw from.
fn not_confidential(
    dir: &Path,
    proxy: &Dataset,
    dataset: &Dataset,
    ledger: Option<&Ledger>,
) -> Result<(), ProxyError> {
    let refuse = |why: String| ProxyError::Confidential {
        dir: dir.to_path_buf(),
        why,
    };
    let mine = DatasetIdentity::of(proxy);
    let theirs = DatasetIdentity::of(dataset);
    if mine.content == theirs.content {
        return Err(refuse(
            "it holds the confidential dataset's own data (the same content digest)".into(),
        ));
    }
    if let (Some(a), Some(b)) = (&mine.population, &theirs.population)
        && a.matches(&b.key, &b.parts)
    {
        return Err(refuse(
            "it holds the confidential dataset's groups (the same population key: the same non-empty groups under another hierarchy, one entity more or fewer, or one of its regions)".into(),
        ));
    }
    // Compared with the dataset's truth, for the operator, who sees it anyway: the
    // refusal says the distance only when it is within the bound.
    let root = |d: &Dataset| -> Vec<(Size, Count)> {
        d.truth()
            .for_diagnostic(crate::privacy::Diagnostic::Provenance)
            .node(NodeId::ROOT)
            .pairs()
            .to_vec()
    };
    if let Some(distance) = entities_apart(&root(proxy), &root(dataset), NEAR_ENTITIES) {
        return Err(ProxyError::Near {
            dir: dir.to_path_buf(),
            distance,
        });
    }
    if let Some(ledger) = ledger {
        let read = ledger.read()?;
        if let Some(e) = read
            .draws()
            .into_iter()
            .find(|e| mine.same_data(&e.dataset))
        {
            return Err(refuse(format!(
                "the ledger records a draw from the same data (draw {}, {}): it is confidential data",
                e.id,
                crate::data::text::escape_controls(&e.dataset.dir)
            )));
        }
    }
    Ok(())
}

/// A proxy this many entities from the dataset, or fewer, is refused. Differential
/// privacy protects one entity at ε and a group of k entities only at k·ε (group
/// privacy); coco refuses a total ε above 20 as protecting no one, so at the default
/// total ε = 1 two datasets up to 20 entities apart are ones the guarantee still treats
/// as near each other: a proxy that close is the dataset for privacy purposes, and
/// tuning on it tunes on the confidential data. The bound is a floor, not a test of
/// independence: a proxy derived from the confidential data is confidential however far
/// it was moved (docs/privacy.md, "Tuning").
pub const NEAR_ENTITIES: u64 = 20;

/// The number of entities that must be added to or removed from groups to turn the
/// non-empty groups of `a` into those of `b` (both a root's count-of-counts, sorted by
/// size; groups of size 0 are free to add or drop, as for the population key), if it
/// is at most `bound`; `None` when it is more. It is the number of one-entity steps
/// between two datasets in the sense of the privacy unit.
///
/// # Formula
/// With `A(t)` the number of groups of size `t` or more, `d = Σ_{t ≥ 1} |A(t) − B(t)|`.
/// Each step changes exactly one `A(t)` by one (an entity added to a group of size `s`
/// raises `A(s + 1)`; removed, it lowers `A(s)`), so `d` steps are needed; matching
/// the groups sorted by size, padded with empty groups, takes `Σ |a_i − b_i| = d`
/// steps, so `d` suffice. It is the earth mover's distance between the two histograms
/// of non-empty sizes with empty groups added to equal their numbers (Kuo et al. 2018,
/// Lemma 1, and [`crate::emd`]).
pub fn entities_apart(a: &[(Size, Count)], b: &[(Size, Count)], bound: u64) -> Option<u64> {
    // Walked from the largest size down: between two sizes present both A and B are
    // constant.
    let (mut i, mut j) = (a.len(), b.len());
    let (mut above_a, mut above_b): (u128, u128) = (0, 0);
    let mut total: u128 = 0;
    let mut last: Option<Size> = None;
    loop {
        let next = match (
            i.checked_sub(1).map(|k| a[k].0),
            j.checked_sub(1).map(|k| b[k].0),
        ) {
            (Some(x), Some(y)) => x.max(y),
            (Some(x), None) => x,
            (None, Some(y)) => y,
            (None, None) => 0,
        };
        if let Some(prev) = last {
            // Sizes next + 1 ..= prev.
            total += u128::from(prev - next) * above_a.abs_diff(above_b);
            if total > u128::from(bound) {
                return None;
            }
        }
        if next == 0 {
            return Some(total as u64);
        }
        if i > 0 && a[i - 1].0 == next {
            above_a += u128::from(a[i - 1].1);
            i -= 1;
        }
        if j > 0 && b[j - 1].0 == next {
            above_b += u128::from(b[j - 1].1);
            j -= 1;
        }
        last = Some(next);
    }
}

/// Checks that `proxy` has `expected`'s levels and regions (codes, parents, order);
/// names may differ. `file` is named in the error.
pub fn same_hierarchy(
    expected: &Hierarchy,
    proxy: &Hierarchy,
    file: &Path,
) -> Result<(), ProxyError> {
    if expected.level_names() != proxy.level_names() {
        return Err(ProxyError::Levels {
            file: file.to_path_buf(),
            found: proxy.level_names().join(", "),
            expected: expected.level_names().join(", "),
        });
    }
    // Regions in node order (each level sorted): same level, parent and code.
    let differs = |i: usize| {
        let (a, b) = (&expected.nodes()[i], &proxy.nodes()[i]);
        a.level != b.level
            || a.parent != b.parent
            || expected.code(NodeId(i as u32)) != proxy.code(NodeId(i as u32))
    };
    let common = expected.len().min(proxy.len());
    if let Some(i) = (0..common).find(|&i| differs(i)) {
        let id = NodeId(i as u32);
        return Err(ProxyError::Region {
            file: file.to_path_buf(),
            level: proxy.level_name(proxy.nodes()[i].level).to_string(),
            expected: expected.display_id(id),
            found: proxy.display_id(id),
        });
    }
    if expected.len() != proxy.len() {
        let first = if proxy.len() > common {
            format!("it also has {:?}", proxy.display_id(NodeId(common as u32)))
        } else {
            format!("it lacks {:?}", expected.display_id(NodeId(common as u32)))
        };
        return Err(ProxyError::Count {
            file: file.to_path_buf(),
            found: proxy.len(),
            expected: expected.len(),
            first,
        });
    }
    Ok(())
}

/// The public model the synthetic proxy draws sizes from. Its figures are public
/// knowledge about households in general, not about any dataset: about one unit in ten
/// vacant (size 0), households averaging 2.5 people (the shifted Poisson of
/// [`SizeModel`]), and one group in [`SyntheticModel::large_one_in`] a large group
/// (dormitory, prison, barracks) of log-uniform size between the bounds.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntheticModel {
    pub vacant_share: f64,
    pub mean_household: f64,
    pub large_one_in: u64,
    pub large_sizes: (Size, Size),
    /// Fixes the draw: the same hierarchy and `G` give the same proxy.
    pub seed: u64,
}

impl Default for SyntheticModel {
    fn default() -> Self {
        SyntheticModel {
            vacant_share: 0.1,
            mean_household: 2.5,
            large_one_in: 2_000,
            large_sizes: (30, 3_000),
            seed: 1,
        }
    }
}

/// Leaves drawn per parallel task.
const CHUNK: usize = 4096;

/// The synthetic proxy of a dataset whose public part is `public`: each leaf's `G`
/// groups drawn from `model` (one random stream per leaf), parents summed. Reads the
/// hierarchy and `G` only.
pub fn synthetic(public: PublicData<'_>, model: &SyntheticModel) -> Dataset {
    let h = public.hierarchy;
    let leaves: Vec<NodeId> = h.level_nodes(h.leaf_level()).collect();
    let households =
        SizeModel::fit_mean(model.mean_household).expect("the model's mean is in range");
    let parts: Vec<HistogramSet> = leaves
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut out = HistogramSet::with_capacity(chunk.len(), 0);
            for &id in chunk {
                let mut rng = GenRng::new(model.seed, u64::from(id.0));
                out.push_sorted_pairs(draw_region(public.groups(id), model, &households, &mut rng));
            }
            out
        })
        .collect();
    Dataset::from_leaf_set(
        PathBuf::from("synthetic proxy"),
        h.clone(),
        GroupsForm::Histograms,
        Vec::new(),
        HistogramSet::concat(parts),
    )
}

/// One region's `g` groups as sorted `(size, count)` pairs.
fn draw_region(
    g: Count,
    model: &SyntheticModel,
    households: &SizeModel,
    rng: &mut GenRng,
) -> Vec<(Size, Count)> {
    let vacant = binomial(rng, g, model.vacant_share);
    let large = binomial(rng, g - vacant, 1.0 / model.large_one_in as f64);
    let mut pairs: Vec<(Size, Count)> = Vec::new();
    if vacant > 0 {
        pairs.push((0, vacant));
    }
    pairs.extend(households.draw(g - vacant - large, rng));
    let (lo, hi) = (
        ln(f64::from(model.large_sizes.0)),
        ln(f64::from(model.large_sizes.1)),
    );
    for _ in 0..large {
        let size = exp(rng.uniform(lo, hi)).round() as Size;
        pairs.push((size, 1));
    }
    pairs.sort_unstable();
    // Equal sizes drawn twice become one pair.
    let mut merged: Vec<(Size, Count)> = Vec::with_capacity(pairs.len());
    for (s, c) in pairs {
        match merged.last_mut() {
            Some(last) if last.0 == s => last.1 += c,
            _ => merged.push((s, c)),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Dataset {
        Dataset::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households"))
            .unwrap()
    }

    #[test]
    fn the_synthetic_proxy_keeps_the_hierarchy_and_every_g() {
        let d = sample();
        let p = synthetic(d.public(), &SyntheticModel::default());
        assert_eq!(p.hierarchy, d.hierarchy);
        for id in (0..d.hierarchy.len() as u32).map(NodeId) {
            assert_eq!(p.groups(id), d.groups(id), "{}", d.hierarchy.display_id(id));
        }
        // Reproducible, and not the confidential data.
        let again = synthetic(d.public(), &SyntheticModel::default());
        let truth = |x: &Dataset| {
            x.truth()
                .for_diagnostic(crate::privacy::Diagnostic::Preview)
                .all()
                .clone()
        };
        assert_eq!(truth(&p), truth(&again));
        assert_ne!(truth(&p), truth(&d));
        // Households of about 2.5 people, a few large groups.
        let root = p
            .truth()
            .for_diagnostic(crate::privacy::Diagnostic::Preview)
            .node(NodeId::ROOT)
            .pairs()
            .to_vec();
        let vacant = root.iter().find(|p| p.0 == 0).map_or(0, |p| p.1);
        let share = vacant as f64 / d.groups(NodeId::ROOT) as f64;
        assert!((0.08..0.12).contains(&share), "{share}");
        let large: u64 = root.iter().filter(|p| p.0 >= 30).map(|p| p.1).sum();
        assert!((5..=60).contains(&large), "{large}");
    }

    #[test]
    fn a_proxy_with_another_hierarchy_is_refused_by_name() {
        let d = sample();
        let names = |levels: &[&str]| levels.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let paths = |rows: &[[&str; 2]]| {
            rows.iter()
                .map(|r| r.iter().map(|s| s.to_string()).collect())
                .collect::<Vec<Vec<String>>>()
        };
        let a = Hierarchy::from_leaf_paths(names(&["n", "r"]), &paths(&[["X", "1"], ["X", "2"]]))
            .unwrap();
        let file = Path::new("old/hierarchy.csv");
        let err = same_hierarchy(&d.hierarchy, &a, file)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("proxy old/hierarchy.csv: levels n, r; expected the dataset's levels country, province, district"),
            "{err}"
        );
        let b = Hierarchy::from_leaf_paths(names(&["n", "r"]), &paths(&[["X", "1"], ["X", "3"]]))
            .unwrap();
        let err = same_hierarchy(&a, &b, file).unwrap_err().to_string();
        assert!(
            err.contains("region \"X/3\" (r) where the dataset has \"X/2\""),
            "{err}"
        );
        let c = Hierarchy::from_leaf_paths(
            names(&["n", "r"]),
            &paths(&[["X", "1"], ["X", "2"], ["X", "4"]]),
        )
        .unwrap();
        let err = same_hierarchy(&a, &c, file).unwrap_err().to_string();
        assert!(
            err.contains("4 regions; expected the dataset's 3 (a proxy needs the same regions; it also has \"X/4\")"),
            "{err}"
        );
        assert!(same_hierarchy(&a, &a.clone(), file).is_ok());
        assert_eq!(ProxySpec::parse("Synthetic"), ProxySpec::Synthetic);
        assert_eq!(ProxySpec::parse("old"), ProxySpec::Dir("old".into()));
    }

    /// The one-entity steps between two histograms, against a brute force: the sizes
    /// sorted, padded with empty groups, matched in order.
    #[test]
    fn entities_apart_is_the_number_of_one_entity_steps() {
        use crate::histogram::CountOfCounts;
        use proptest::prelude::*;
        fn brute(a: &[Size], b: &[Size]) -> u64 {
            let sorted = |v: &[Size]| {
                let mut v: Vec<u64> = v.iter().map(|&s| u64::from(s)).filter(|&s| s > 0).collect();
                v.sort_unstable_by(|x, y| y.cmp(x));
                v
            };
            let (mut x, mut y) = (sorted(a), sorted(b));
            let n = x.len().max(y.len());
            x.resize(n, 0);
            y.resize(n, 0);
            x.iter().zip(&y).map(|(p, q)| p.abs_diff(*q)).sum()
        }
        let pairs = |v: &[Size]| {
            CountOfCounts::from_sizes(v.iter().copied())
                .pairs()
                .to_vec()
        };
        let sizes = proptest::collection::vec(prop_oneof![0u32..6, 0u32..40, 1000u32..1003], 0..30);
        proptest!(|(a in sizes.clone(), b in sizes, bound in 0u64..200)| {
            let d = brute(&a, &b);
            let got = entities_apart(&pairs(&a), &pairs(&b), bound);
            prop_assert_eq!(got, (d <= bound).then_some(d));
            prop_assert_eq!(entities_apart(&pairs(&b), &pairs(&a), u64::MAX), Some(d));
        });
        // The issue's proxy: one group changed by two.
        assert_eq!(
            entities_apart(&pairs(&[1, 2, 4]), &pairs(&[1, 2, 6]), 20),
            Some(2)
        );
        // Empty groups are free.
        assert_eq!(entities_apart(&pairs(&[0, 0, 3]), &pairs(&[3]), 0), Some(0));
        // Far apart: not computed past the bound.
        assert_eq!(
            entities_apart(&pairs(&[4_000_000_000]), &pairs(&[]), 20),
            None
        );
    }
}
