//! A release read back from its published files alone, for `coco margins`: what a data
//! user holds after downloading a release directory. No dataset and no ledger are read.
//!
//! - `manifest.json`: the plan (levels, methods, ε or ρ, tails, `K`, consistency step,
//!   fits) and the margins' confidence, replicate count and bootstrap key;
//! - the level tables (`tables/<i>-<level>.csv`, else `.parquet`): every region of every
//!   level with its public `G`; the leaves' display ids (`ROOT/…/LEAF`) give the
//!   hierarchy, in the order coco builds it from `hierarchy.csv` (by parent, then code),
//!   so that each region's replicate noise is the release's;
//! - `counts.csv` (else `counts.parquet`): the released histograms.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::data::{Hierarchy, NodeId, PublicData};
use crate::histogram::{Count, HistogramSet, Size};
use crate::release::margins::{BootstrapKey, Confidence, Released, Rule};
use crate::release::outputs::manifest::Manifest;
use crate::release::outputs::read_rows::{CountSource, WideSource};
use crate::release::outputs::rows::table_file;
use crate::release::plan::ReleasePlan;

/// A release directory that cannot be read as one.
#[derive(Debug, Error)]
pub enum PublishedError {
    #[error(
        "{path}: cannot be read ({problem}): expected a coco release directory holding manifest.json"
    )]
    NoManifest { path: PathBuf, problem: String },
    #[error("{path}: {problem}: expected the manifest.json coco writes")]
    Manifest { path: PathBuf, problem: String },
    #[error("{path}: {problem}")]
    File { path: PathBuf, problem: String },
    #[error(
        "{path}: the release has no margins of error (no \"uncertainty\", or no \"uncertainty.seed\" in a release written before coco published it): expected a release written with margins by this version of coco"
    )]
    NoMargins { path: PathBuf },
    #[error("{path}: the plan it records cannot be rebuilt: {problem}")]
    Plan { path: PathBuf, problem: String },
}

/// What a release directory publishes, read back.
pub struct Published {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub hierarchy: Hierarchy,
    /// `G` per node, indexed by [`NodeId`].
    pub groups: Vec<Count>,
    pub histograms: HistogramSet,
    pub plan: ReleasePlan,
    /// The margins' confidence, rule, replicates and key, from the manifest.
    pub confidence: Confidence,
    pub rule: Rule,
    pub replicates: u32,
    /// The runs of top replicates drawn besides (none when none, or before coco drew
    /// them).
    pub top_runs: Vec<crate::release::margins::TopRun>,
    pub key: BootstrapKey,
}

impl Published {
    pub fn public(&self) -> PublicData<'_> {
        PublicData {
            hierarchy: &self.hierarchy,
            groups: &self.groups,
        }
    }

    /// The released tables, for the bootstrap.
    pub fn released(&self) -> Released<'_> {
        Released::new(
            &self.histograms,
            self.manifest.max_size,
            self.manifest.consistency,
        )
    }
}

/// Reads the release directory `dir`.
pub fn read(dir: &Path) -> Result<Published, PublishedError> {
    let manifest_path = dir.join("manifest.json");
    let bytes = std::fs::read(&manifest_path).map_err(|e| PublishedError::NoManifest {
        path: manifest_path.clone(),
        problem: e.to_string(),
    })?;
    let manifest: Manifest =
        serde_json::from_slice(&bytes).map_err(|e| PublishedError::Manifest {
            path: manifest_path.clone(),
            problem: e.to_string(),
        })?;
    let no_margins = || PublishedError::NoMargins {
        path: manifest_path.clone(),
    };
    let margins = manifest.uncertainty.as_ref().ok_or_else(no_margins)?;
    let key = margins.seed.as_deref().ok_or_else(no_margins)?;
    let bad = |problem: String| PublishedError::Manifest {
        path: manifest_path.clone(),
        problem,
    };
    let key = BootstrapKey::parse(key).map_err(|e| bad(e.to_string()))?;
    let confidence = Confidence::new(margins.confidence).map_err(|e| bad(e.to_string()))?;
    if manifest.levels.is_empty() {
        return Err(bad("no levels".into()));
    }
    let lists = |name: &str| manifest.outputs.iter().any(|f| f.path == name);
    let file_error = |file: &str, problem: String| PublishedError::File {
        path: dir.join(file),
        problem,
    };

    // Every level's regions and G, from its table; the leaves' ids make the hierarchy.
    let mut tables: Vec<(String, Vec<(String, Count)>)> = Vec::new();
    for (i, level) in manifest.levels.iter().enumerate() {
        let file = ["csv", "parquet"]
            .into_iter()
            .map(|ext| table_file(i, &level.name, ext))
            .find(|t| lists(t))
            .ok_or_else(|| {
                bad(format!(
                    "lists no table of level {} ({}), which gives its regions and their public G",
                    level.name,
                    table_file(i, &level.name, "csv")
                ))
            })?;
        let mut source = WideSource::open(&dir.join(&file)).map_err(|e| file_error(&file, e))?;
        let mut rows = Vec::new();
        while let Some(row) = source.row() {
            let (region, cells) = row.map_err(|e| file_error(&file, e))?;
            rows.push((region, cells[0]));
        }
        tables.push((file, rows));
    }
    let level_names: Vec<String> = manifest.levels.iter().map(|l| l.name.clone()).collect();
    let (leaf_file, leaves) = tables.last().expect("at least one level");
    let paths: Vec<Vec<String>> = leaves
        .iter()
        .map(|(region, _)| region.split('/').map(str::to_string).collect())
        .collect();
    let hierarchy = Hierarchy::from_leaf_paths(level_names, &paths).map_err(|(row, e)| {
        file_error(
            leaf_file,
            match row {
                Some(r) => format!("row {}: {e}", r + 1),
                None => e.to_string(),
            },
        )
    })?;
    let mut groups: Vec<Option<Count>> = vec![None; hierarchy.len()];
    for (l, (file, rows)) in tables.iter().enumerate() {
        for (row, (region, g)) in rows.iter().enumerate() {
            let id = hierarchy
                .find_display_id(region)
                .filter(|&id| hierarchy.node(id).level.0 == l)
                .ok_or_else(|| {
                    file_error(
                        file,
                        format!(
                            "row {}: region {region:?} is not a region of level {} under the leaves' ids",
                            row + 1,
                            manifest.levels[l].name
                        ),
                    )
                })?;
            groups[id.index()] = Some(*g);
        }
    }
    let groups: Vec<Count> = groups
        .into_iter()
        .enumerate()
        .map(|(i, g)| {
            g.ok_or_else(|| {
                let id = NodeId(i as u32);
                file_error(
                    &tables[hierarchy.node(id).level.0].0,
                    format!(
                        "no row for region {}: expected every region of its level",
                        hierarchy.display_id(id)
                    ),
                )
            })
        })
        .collect::<Result<_, _>>()?;

    let histograms = read_counts(dir, &manifest, &hierarchy)?;
    let plan = plan_of(&manifest).map_err(|problem| PublishedError::Plan {
        path: manifest_path.clone(),
        problem,
    })?;
    Ok(Published {
        dir: dir.to_path_buf(),
        confidence,
        rule: margins.rule,
        replicates: margins.replicates.max(1),
        top_runs: margins.runs(),
        key,
        manifest,
        hierarchy,
        groups,
        histograms,
        plan,
    })
}

/// The released histograms of `counts.csv` (else `counts.parquet`), in node order.
fn read_counts(
    dir: &Path,
    manifest: &Manifest,
    h: &Hierarchy,
) -> Result<HistogramSet, PublishedError> {
    let lists = |name: &str| manifest.outputs.iter().any(|f| f.path == name);
    let file = ["counts.csv", "counts.parquet"]
        .into_iter()
        .find(|f| lists(f))
        .ok_or_else(|| PublishedError::Manifest {
            path: dir.join("manifest.json"),
            problem: "lists neither counts.csv nor counts.parquet".into(),
        })?;
    let error = |row: u64, problem: String| PublishedError::File {
        path: dir.join(file),
        problem: if file.ends_with(".csv") {
            format!("line {}: {problem}", row + 1)
        } else {
            format!("row {row}: {problem}")
        },
    };
    let mut source = CountSource::open(&dir.join(file)).map_err(|e| PublishedError::File {
        path: dir.join(file),
        problem: e,
    })?;
    let mut pairs: Vec<Vec<(Size, Count)>> = vec![Vec::new(); h.len()];
    let mut row = 0u64;
    while let Some(next) = source.row() {
        row += 1;
        let (level, region, size, count) = next.map_err(|e| error(row, e))?;
        let id = h
            .find_display_id(&region)
            .filter(|&id| h.level_name(h.node(id).level) == level)
            .ok_or_else(|| {
                error(
                    row,
                    format!("{level},{region}: not a region of the level tables"),
                )
            })?;
        let size = Size::try_from(size)
            .ok()
            .filter(|&s| s <= manifest.max_size)
            .ok_or_else(|| {
                error(
                    row,
                    format!(
                        "size {size}: expected a size from 0 to K = {}",
                        manifest.max_size
                    ),
                )
            })?;
        let cells = &mut pairs[id.index()];
        if cells.last().is_some_and(|&(s, _)| s >= size) {
            return Err(error(
                row,
                format!("{level},{region}: size {size} out of order or twice"),
            ));
        }
        if count > 0 {
            cells.push((size, count));
        }
    }
    let mut histograms = HistogramSet::with_capacity(h.len(), pairs.iter().map(Vec::len).sum());
    for p in pairs {
        histograms.push_sorted_pairs(p);
    }
    Ok(histograms)
}

/// The plan the manifest records, as the plan file would have said it, read by the plan
/// file's own reader: one plan model (`ReleasePlan::check_rules`) builds it, as every
/// plan coco runs. The consistency step is the one the plan asked for
/// (`consistency_planned`, else `consistency`); the one that ran is the
/// [`Released`]'s, as for the release's own bootstrap.
fn plan_of(manifest: &Manifest) -> Result<ReleasePlan, String> {
    let mut text = format!("max_size = {}\n", manifest.max_size);
    let consistency = manifest.consistency_planned.unwrap_or(manifest.consistency);
    for (key, value) in [
        ("consistency", spell(&consistency)),
        ("merge", spell(&manifest.merge)),
        ("hc_fit", spell(&manifest.hc_fit)),
        ("hg_fit", spell(&manifest.hg_fit)),
    ] {
        text.push_str(&format!("{key} = {}\n", toml_string(&value)));
    }
    for level in &manifest.levels {
        text.push_str("[[level]]\n");
        text.push_str(&format!("name = {}\n", toml_string(&level.name)));
        match &level.rho {
            Some(rho) => text.push_str(&format!("rho = {}\n", toml_string(rho))),
            None if !level.epsilon_exact.is_empty() => text.push_str(&format!(
                "epsilon = {}\n",
                toml_string(&level.epsilon_exact)
            )),
            None => return Err(format!("level {}: no exact ε and no ρ", level.name)),
        }
        let method = spell(&level.method);
        text.push_str(&format!("method = {}\n", toml_string(&method)));
        if let Some(tail) = &level.tail {
            let groups = serde_json::to_string(&tail.groups).map_err(|e| e.to_string())?;
            text.push_str(&format!(
                "tail = {{ above = {}, groups = {groups} }}\n",
                tail.above
            ));
        }
    }
    ReleasePlan::parse(&text, Path::new("manifest.json")).map_err(|e| e.to_string())
}

/// A TOML basic string (a JSON string is one: the same escapes).
fn toml_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// A serde enum's spelling (`"wls"`, `"l1"`…).
fn spell<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
