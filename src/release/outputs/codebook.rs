//! `README.txt`: the codebook of a release directory, in a data user's words: what each
//! file present holds, its columns, what size 0 means, how to read an interval, the
//! privacy definition and budget, and where the full documentation is.
//!
//! It is rendered from the manifest alone ([`render`]): the plan's levels and budgets,
//! `K`, the margins' confidence and replicates, and the names of the files listed
//! (`README.txt` itself left out). Everything it says is in the published manifest
//! already; nothing in it is computed from confidential data. The writer renders it
//! just before `manifest.json` is written and lists it there with its SHA-256, and
//! `coco verify` renders it again from the manifest it reads and compares the bytes.

use std::fmt::Write as _;

use crate::privacy::Definition;
use crate::release::outputs::manifest::Manifest;
use crate::release::outputs::rows::table_file;

/// The codebook's file name.
pub const FILE: &str = "README.txt";

/// The marker of a seeded release (`export::NOT_PRIVATE_FILE`, which the writer, a
/// layer above, names; the test below holds them equal).
const NOT_PRIVATE_FILE: &str = "NOT-PRIVATE-SEEDED-RELEASE.txt";

/// The kinds of file a release holds, in the order the codebook describes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    NotPrivate,
    Counts,
    Wide,
    WideMargins,
    Uncertainty,
    Summary,
    Replicates,
    Measurements,
    /// A file listed that this version of coco does not describe.
    Other,
}

/// The kind of the file at `path` of a release with `manifest`.
fn kind_of(manifest: &Manifest, path: &str) -> Kind {
    let levels = || manifest.levels.iter().enumerate();
    let any_ext = |f: &dyn Fn(&str) -> String| ["csv", "parquet"].iter().any(|e| f(e) == path);
    match path {
        NOT_PRIVATE_FILE => Kind::NotPrivate,
        "counts.csv" | "counts.parquet" => Kind::Counts,
        "uncertainty.csv" | "uncertainty.parquet" => Kind::Uncertainty,
        "summary.csv" | "summary.parquet" => Kind::Summary,
        "replicates.csv" | "replicates.parquet" => Kind::Replicates,
        "measurements.jsonl" => Kind::Measurements,
        _ if levels().any(|(i, l)| any_ext(&|e| table_file(i, &l.name, e))) => Kind::Wide,
        _ if levels().any(|(i, l)| {
            any_ext(&|e| crate::release::outputs::wide_margins::file(i, &l.name, e))
        }) =>
        {
            Kind::WideMargins
        }
        _ => Kind::Other,
    }
}

/// The budget as the manifest states it, in a sentence.
fn budget(manifest: &Manifest) -> String {
    let p = &manifest.privacy;
    let per_level = p
        .levels
        .iter()
        .map(|l| match (&l.epsilon, &l.rho) {
            _ if !l.measured => format!(
                "{} not measured (budget 0: estimated from its children)",
                l.name
            ),
            (Some(e), _) => format!("{} ε = {e}", l.name),
            (None, Some(r)) => format!("{} ρ = {r}", l.name),
            (None, None) => l.name.clone(),
        })
        .collect::<Vec<_>>()
        .join("; ");
    let bound = match (&manifest.max_size_epsilon, &manifest.max_size_rho) {
        (Some(e), _) => {
            format!(" The bound K was estimated privately with ε = {e}, included in the total.")
        }
        (None, Some(r)) => {
            format!(" The bound K was estimated privately with ρ = {r}, included in the total.")
        }
        (None, None) => String::new(),
    };
    match p.definition {
        Definition::Pure => format!(
            "Pure ε-differential privacy, total ε = {} (each level: {per_level}).{bound}",
            p.epsilon
                .as_deref()
                .unwrap_or(&manifest.total_epsilon_exact)
        ),
        Definition::Zcdp => format!(
            "ρ-zero-concentrated differential privacy (zCDP), total ρ = {} (each level: {per_level}), which implies (ε = {}, δ = {:e})-differential privacy.{bound}",
            p.rho
                .as_deref()
                .or(manifest.total_rho.as_deref())
                .unwrap_or("?"),
            (p.epsilon_at_delta * 100.0).ceil() / 100.0,
            p.delta
        ),
    }
}

/// Wraps `text` at 88 columns, each line indented by `indent`.
fn wrap(out: &mut String, indent: &str, text: &str) {
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() + indent.len() > 88 {
            let _ = writeln!(out, "{indent}{line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{indent}{line}");
    }
}

/// What the files of `kind` hold, for a release with `manifest`.
fn describe(manifest: &Manifest, kind: Kind) -> String {
    let k = manifest.max_size;
    let confidence = manifest.uncertainty.as_ref().map_or("90".to_string(), |u| {
        format!("{}", (u.confidence * 1000.0).round() / 10.0)
    });
    let replicates = manifest.uncertainty.as_ref().map_or(0, |u| u.replicates);
    match kind {
        Kind::NotPrivate => "A warning: this release was drawn with seeded noise for testing. Anyone who knows the seed can remove the noise. It is NOT private and must never be published.".into(),
        Kind::Counts => format!(
            "The released counts, one row per nonzero cell. Columns: level (the level's name), region (the region's id, its ancestors' ids before it, separated by /), size (a number of members, 0 to K = {k}), count (how many of the region's groups have exactly that many members). A cell not listed has count 0. Every region's counts add up to its number of groups, and a region's counts are the sums of its children's."
        ),
        Kind::Wide => "Census-style tables, one file per level: one row per region of the level (regions without groups included). Columns: region, name (the region's name, if the hierarchy gives one), groups (the region's number of groups: public and exact), size_0 to size_6 (the number of groups of exactly that size), size_7_or_more (groups of 7 or more members).".into(),
        Kind::WideMargins => format!(
            "The margins of the wide tables, beside each one: the same rows (region, name, groups), then a lower and an upper bound of the {confidence}% interval for each of the table's columns (size_0_lower, size_0_upper, …, size_7_or_more_lower, size_7_or_more_upper). The bounds of size_j are the interval of that cell in the uncertainty file; those of size_7_or_more are the interval of groups_size_7_or_more in the summary file, so that the same number has one interval everywhere."
        ),
        Kind::Uncertainty => format!(
            "The margins of error of the cells: a {confidence}% interval for the true number of groups of each size in each region. Columns: level, region, size, count (the released count, 0 for a cell counts leaves out), lower, upper. Every released cell is listed, and so is every released 0 that may hide groups; a cell not listed has the interval [0, 0]."
        ),
        Kind::Summary => format!(
            "Statistics per region, each with its {confidence}% interval (columns <statistic>, <statistic>_lower, <statistic>_upper; the column names say which statistic): numbers of groups of at least some sizes, the mean group size and shares of groups. Columns level, region and groups (public) come first; a statistic that is undefined (a mean of no groups) is empty. Unless a column's name says otherwise (occupied), means and shares are over all groups, size 0 included."
        ),
        Kind::Replicates => format!(
            "The {replicates} bootstrap replicates the margins were read from, published so that you can compute a standard error for any statistic of the tables. Columns: level, region, size, replicate (1 to {replicates}), count: every nonzero cell of every replicate, in the order of the counts and then by replicate. Each replicate is a complete table like the release (its counts add up to each region's groups). The rule: compute your statistic f on the release (f_0) and on each replicate (f_1 … f_R); its standard error is SE = sqrt( (1/R) Σ_r (f_r − f_0)² ), and a 90% interval is f_0 ± 1.645 × SE (a margin of error of 1.645 × SE, as the American Community Survey's). The replicates are post-processing of the published tables with noise of their own: they cost no privacy budget."
        ),
        Kind::Measurements => "The noisy measurements the release was computed from, one JSON object per line (the differentially private outputs themselves; every table is computed from them).".into(),
        Kind::Other => "A file this version of coco does not describe here; its digest is in manifest.json.".into(),
    }
}

/// The codebook of the release whose manifest is `manifest`: the same bytes for the
/// same manifest (its own entry in `outputs`, if any, is ignored).
pub fn render(manifest: &Manifest) -> String {
    let mut out = String::new();
    let version = &manifest.coco_version;
    out.push_str("README.txt: what the files of this release hold\n");
    out.push_str("================================================\n\n");
    let levels = manifest
        .levels
        .iter()
        .map(|l| l.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    wrap(
        &mut out,
        "",
        &format!(
            "This directory is a release of count-of-counts tables made by coco {version}. For every region of a hierarchy (levels, from the top: {levels}), it says how many groups have each size: how many households have 1, 2, 3 … persons, how many taxi zones have so many trips. A group's size is its number of members (entities), from 0 to K = {} in this release.",
            manifest.max_size
        ),
    );
    out.push('\n');
    if manifest.reproducible || !manifest.for_publication {
        wrap(
            &mut out,
            "",
            "WARNING: this release was drawn with seeded noise: it is NOT private and must never be published.",
        );
        out.push('\n');
    }
    out.push_str("Privacy\n-------\n");
    wrap(&mut out, "", &budget(manifest));
    wrap(
        &mut out,
        "",
        &format!(
            "What is protected: {}. Public, and published exactly: {}. The counts are noisy; every other file is computed from the noisy counts and public information only.",
            manifest.privacy.unit, manifest.privacy.public
        ),
    );
    out.push('\n');
    out.push_str("Files\n-----\n");
    out.push_str("manifest.json\n");
    wrap(
        &mut out,
        "    ",
        "How the release was made: the privacy budget and definition, the methods per level, K, how the margins of error were computed, and the SHA-256 of every other file (coco verify checks them).",
    );
    out.push_str("README.txt\n");
    wrap(&mut out, "    ", "This file.");
    let mut kinds: Vec<(Kind, Vec<&str>)> = Vec::new();
    for f in &manifest.outputs {
        if f.path == FILE {
            continue;
        }
        let kind = kind_of(manifest, &f.path);
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, files)) => files.push(&f.path),
            None => kinds.push((kind, vec![&f.path])),
        }
    }
    kinds.sort_by_key(|(k, _)| *k);
    for (kind, files) in &kinds {
        for f in files {
            let _ = writeln!(out, "{f}");
        }
        wrap(&mut out, "    ", &describe(manifest, *kind));
    }
    out.push('\n');
    out.push_str("Size 0\n------\n");
    wrap(
        &mut out,
        "",
        "A group of size 0 is a group with no members: a household that exists (it is counted in the region's groups, which are public) but where nobody was counted, such as a vacant dwelling. Means and shares in the summary are over all groups, size 0 included; for occupied groups only, leave size 0 out.",
    );
    out.push('\n');
    if let Some(u) = &manifest.uncertainty {
        out.push_str("Reading an interval\n-------------------\n");
        wrap(
            &mut out,
            "",
            &format!(
                "An interval [lower, upper] is a {}% interval for the true count: over many cells, about that share of the intervals hold their true value. The intervals are computed from {} (the plan's measurements drawn again on the released tables), from published information only. They are not symmetric around the released count: counts are whole numbers that cannot go below 0 or above the region's groups, and the estimator's errors are skewed. Cell intervals cannot be added up to give an interval for a sum; use the summary, or the replicate tables where published.",
                (u.confidence * 1000.0).round() / 10.0,
                u.replicates_phrase()
            ),
        );
        out.push('\n');
    }
    out.push_str("More\n----\n");
    wrap(
        &mut out,
        "",
        &format!(
            "The full documentation is in coco {version}'s source: docs/data-contract.md (every file and column), docs/uncertainty.md (the margins of error, the replicate tables and the ± margin), docs/privacy.md (the privacy guarantee) and docs/README.md (where to start)."
        ),
    );
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_seeded_marker_is_the_writers() {
        assert_eq!(
            super::NOT_PRIVATE_FILE,
            crate::release::outputs::export::NOT_PRIVATE_FILE
        );
    }
}
