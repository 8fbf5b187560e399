//! `coco gen`: deterministic synthetic datasets.
//!
//! Three recipes ([`Preset`]): the bundled [`sample`] (a fictional country, committed
//! under `sample-data/households/`), [`us_counties`] (Kuo et al.'s partially
//! synthetic housing on the real 3,220 US counties) and [`taxi`] (a dense, shallow
//! city shaped like the paper's taxi data). Both draw from ChaCha20 streams
//! keyed by the seed ([`random`]), count with exact binomial draws ([`binomial`]) and
//! never use the platform's `ln`/`exp` (the `libm` crate's, a pure-Rust port of musl's
//! built from correctly rounded operations, instead), so a seed gives the same bytes on
//! every machine. (They were hand-written before; switching to `libm` left every
//! generated file byte-identical: the sample, us-counties, taxi and us-blocks at 0.05.)
//!
//! A dataset is built in memory ([`Generated`]) and written following the data
//! contract (`hierarchy.csv`, `groups.csv` or `histograms.csv`, `names.csv`; rows
//! sorted) into a temporary directory beside the target, renamed into place at the
//! end: a failure never leaves half a dataset.

pub mod binomial;
pub mod household_sizes;
pub mod random;
pub mod sample;
pub mod shapes;
pub mod taxi;
pub mod us_blocks;
pub mod us_counties;
mod write;

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::data::{Dataset, GroupsForm, Hierarchy};
use crate::histogram::{CountOfCounts, Size};

/// A dataset recipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Preset {
    /// The bundled example (three levels, tens of thousands of households).
    Sample,
    /// Nation → 52 states → 3,220 counties with real household counts (ACS 2019).
    UsCounties,
    /// A dense taxi-like city: 1 → 2 → 28 neighbourhoods, sizes (pick-ups) 1..6,000.
    Taxi,
    /// Nation → states → counties → tracts → blocks from the real county household
    /// totals: about 8 million blocks and 122 million households (--scale 0.01 for a
    /// hundredth).
    UsBlocks,
    /// Robustness shape: households with rare group quarters of medium size (many just
    /// above 20) over few of 15,360 blocks, many blocks empty.
    GroupQuarters,
    /// Robustness shape: dense large sizes (median 120, up to 8,000) in 20 zones.
    Dense,
    /// Robustness shape: one child holds 99% of its parent's groups at every level.
    Skewed,
    /// Robustness shape: eight levels, most regions with one child.
    Chain,
    /// Robustness shape: one group of 9,000 and one of 50,000 among households.
    Giant,
    /// Robustness shape: Pareto sizes (α = 1.2) up to 100,000.
    HeavyTail,
    /// Robustness shape: 4,000 regions of 0 to 3 groups under one parent.
    ManyTiny,
    /// Robustness shape: 400 counties, most empty, the others small.
    Sparse,
}

impl Preset {
    /// Draws the dataset in memory.
    pub fn build(self, seed: u64) -> Result<Generated, GenerateError> {
        match self {
            Preset::Sample => sample::generate(seed),
            Preset::UsCounties => us_counties::generate(seed),
            Preset::Taxi => taxi::generate(seed),
            Preset::UsBlocks => Err(GenerateError::StreamedOnly),
            shape => shape.shape().expect("a shape").build(seed, 1.0),
        }
    }

    /// The robustness shape this preset draws, if it is one.
    pub fn shape(self) -> Option<shapes::Shape> {
        use shapes::Shape;
        Some(match self {
            Preset::GroupQuarters => Shape::GroupQuarters,
            Preset::Dense => Shape::Dense,
            Preset::Skewed => Shape::Skewed,
            Preset::Chain => Shape::Chain,
            Preset::Giant => Shape::Giant,
            Preset::HeavyTail => Shape::HeavyTail,
            Preset::ManyTiny => Shape::ManyTiny,
            Preset::Sparse => Shape::Sparse,
            Preset::Sample | Preset::UsCounties | Preset::Taxi | Preset::UsBlocks => return None,
        })
    }
}

#[derive(Debug, Error)]
pub enum GenerateError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Csv { path: PathBuf, source: csv::Error },
    #[error(
        "{path} already exists and is not an empty directory: expected a new path or an empty directory"
    )]
    NotEmpty { path: PathBuf },
    #[error("{path} exists and is not a directory: expected a new path or an empty directory")]
    NotADirectory { path: PathBuf },
    /// `us-blocks` is written as it is drawn, never held in memory whole.
    #[error(
        "us-blocks is written to files as it is drawn: use generate_into (coco gen us-blocks --out DIR)"
    )]
    StreamedOnly,
    #[error("--scale applies to us-blocks only")]
    ScaleNotApplicable,
    #[error(
        "--scale {scale}: expected a share of the households above 0 and at most 1 (e.g. 0.01)"
    )]
    BadScale { scale: f64 },
    #[error("{path} has no directory name: expected a path like ./my-dataset")]
    NoName { path: PathBuf },
    /// A data file built into the binary is broken: a build problem, not a user one.
    #[error("embedded {file}, line {line}: {message}")]
    Asset {
        file: &'static str,
        line: u64,
        message: String,
    },
    /// The generated leaves do not form a valid hierarchy: a bug in a recipe.
    #[error("generated hierarchy, leaf {}: {error}", row.map_or("(header)".to_string(), |r| (r + 1).to_string()))]
    Hierarchy {
        row: Option<usize>,
        error: crate::data::HierarchyError,
    },
}

/// Leaf paths and display names of a three-level geography, from the root's code and
/// name and, per leaf in path order, its parent's code and name and its own: each
/// parent is named where its first leaf appears.
fn three_level_geography<'a>(
    root: (&str, &str),
    leaves: impl IntoIterator<Item = (&'a str, &'a str, &'a str, &'a str)>,
) -> (Vec<Vec<String>>, Vec<(String, String)>) {
    let (root_code, root_name) = root;
    let mut paths: Vec<Vec<String>> = Vec::new();
    let mut names = vec![(root_code.to_string(), root_name.to_string())];
    for (parent, parent_name, code, name) in leaves {
        if paths.last().is_none_or(|p| p[1] != parent) {
            names.push((format!("{root_code}/{parent}"), parent_name.to_string()));
        }
        names.push((format!("{root_code}/{parent}/{code}"), name.to_string()));
        paths.push(vec![
            root_code.to_string(),
            parent.to_string(),
            code.to_string(),
        ]);
    }
    (paths, names)
}

/// What was written.
#[derive(Clone, Debug)]
pub struct GenerateReport {
    pub dir: PathBuf,
    pub groups: u64,
    pub leaves: usize,
    /// All regions, leaves and their ancestors.
    pub nodes: usize,
    /// People (entities) in all groups.
    pub entities: u128,
    pub max_size: Option<Size>,
    pub form: GroupsForm,
    /// Names of the files written, in the order written.
    pub files: Vec<String>,
}

/// A dataset in memory, in the order the contract writes it.
#[derive(Clone, Debug)]
pub struct Generated {
    /// Level names, root first.
    pub level_names: Vec<String>,
    /// One path of codes per leaf, sorted.
    pub leaves: Vec<Vec<String>>,
    /// `(display id, name)` for named regions, in path order.
    pub names: Vec<(String, String)>,
    pub groups: Groups,
}

/// The groups of every leaf (same order as [`Generated::leaves`]).
#[derive(Clone, Debug)]
pub enum Groups {
    /// Form 1 (`groups.csv`): `(group id, size)` sorted by id.
    Sizes(Vec<Vec<(String, Size)>>),
    /// Form 3 (`histograms.csv`).
    Histograms(Vec<CountOfCounts>),
}

impl Generated {
    pub fn form(&self) -> GroupsForm {
        match self.groups {
            Groups::Sizes(_) => GroupsForm::GroupSizes,
            Groups::Histograms(_) => GroupsForm::Histograms,
        }
    }

    /// The count-of-counts histogram of each leaf.
    pub fn leaf_histograms(&self) -> Vec<CountOfCounts> {
        match &self.groups {
            Groups::Sizes(leaves) => leaves
                .iter()
                .map(|g| CountOfCounts::from_sizes(g.iter().map(|&(_, s)| s)))
                .collect(),
            Groups::Histograms(h) => h.clone(),
        }
    }

    /// The dataset without going through files (`dir` and `inputs` empty).
    pub fn to_dataset(&self) -> Result<Dataset, GenerateError> {
        let mut hierarchy = Hierarchy::from_leaf_paths(self.level_names.clone(), &self.leaves)
            .map_err(|(row, error)| GenerateError::Hierarchy { row, error })?;
        for (id, name) in &self.names {
            if let Some(node) = hierarchy.find(id) {
                hierarchy.set_name(node, name.clone());
            }
        }
        // The hierarchy orders leaves by path, as `leaves` already is; map by code
        // anyway so that the two can never silently disagree.
        let hists = self.leaf_histograms();
        let mut by_node = vec![CountOfCounts::new(); hierarchy.len()];
        for (path, h) in self.leaves.iter().zip(hists) {
            let code = path.last().map(String::as_str).unwrap_or_default();
            if let Some(id) = hierarchy.leaf(code) {
                by_node[id.index()] = h;
            }
        }
        let leaves = hierarchy
            .level_nodes(hierarchy.leaf_level())
            .map(|id| std::mem::take(&mut by_node[id.index()]))
            .collect();
        Ok(Dataset::from_leaf_histograms(
            PathBuf::new(),
            hierarchy,
            self.form(),
            Vec::new(),
            leaves,
        ))
    }

    /// Regions: the leaves and their distinct ancestors.
    fn node_count(&self) -> usize {
        let depth = self.level_names.len();
        (1..=depth)
            .map(|l| {
                1 + self
                    .leaves
                    .windows(2)
                    .filter(|w| w[0][..l] != w[1][..l])
                    .count()
            })
            .sum()
    }
}

/// Writes the dataset `preset` into `out` (created; must be empty or absent), at
/// `scale` for `us-blocks` (default 1), reporting `(done, total)` steps for the large
/// presets.
pub fn generate_into(
    preset: Preset,
    out: &Path,
    seed: u64,
    scale: Option<f64>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<GenerateReport, GenerateError> {
    match (preset, scale) {
        (Preset::UsBlocks, scale) => Ok(us_blocks::write(
            out,
            us_blocks::Options {
                seed,
                scale: scale.unwrap_or(1.0),
            },
            progress,
        )?
        .report),
        (_, Some(_)) => Err(GenerateError::ScaleNotApplicable),
        (preset, None) => generate(preset, out, seed),
    }
}

/// Writes the dataset `preset` into `out` (created; must be empty or absent).
pub fn generate(preset: Preset, out: &Path, seed: u64) -> Result<GenerateReport, GenerateError> {
    if preset == Preset::UsBlocks {
        return generate_into(preset, out, seed, None, &mut |_, _| {});
    }
    // Fail before drawing anything if the target is taken.
    write::check_target(out)?;
    let data = preset.build(seed)?;
    let files = write::write_dataset(&data, out)?;
    let root = CountOfCounts::sum(data.leaf_histograms().iter());
    Ok(GenerateReport {
        dir: out.to_path_buf(),
        groups: root.groups(),
        leaves: data.leaves.len(),
        nodes: data.node_count(),
        entities: root.entities(),
        max_size: root.max_size(),
        form: data.form(),
        files,
    })
}
