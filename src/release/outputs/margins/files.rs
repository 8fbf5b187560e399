//! The extra files of a release directory, written by the release writer
//! ([`crate::release::outputs::export`]) after the tables: `uncertainty.csv` (and
//! `uncertainty.parquet`), `summary.csv` (and `summary.parquet`), `measurements.jsonl`.

use std::path::Path;

use crate::data::{NodeId, PublicData};
use crate::release::outputs::manifest::{FileDigest, ManifestUncertainty};
use crate::release::outputs::writer::write_file;
use crate::release::outputs::writer::{ExportError, OutputFormat};
use crate::release::pipeline::draw::Draw;
use crate::release::plan::ReleasePlan;

use super::tables as files;
use crate::release::margins::{UncertaintyOptions, intervals};

/// What a release writes besides its tables.
#[derive(Clone, Debug)]
pub struct Extras {
    /// The margins of error (`uncertainty.csv`, `summary.csv`); `None`: neither.
    pub uncertainty: Option<UncertaintyOptions>,
    /// Margins already computed for this draw (shown for review): written as they are.
    pub computed: Option<std::sync::Arc<crate::release::margins::Uncertainty>>,
}

impl Default for Extras {
    /// Margins of error at 90%.
    fn default() -> Self {
        Extras {
            uncertainty: Some(UncertaintyOptions::default()),
            computed: None,
        }
    }
}

impl Extras {
    /// No extra files (the release's tables only).
    pub const NONE: Extras = Extras {
        uncertainty: None,
        computed: None,
    };
}

/// Writes the extra files of `extras` into `dir` (a release being written), returning
/// their digests and the manifest's description.
pub fn write(
    dir: &Path,
    public: PublicData<'_>,
    plan: &ReleasePlan,
    draw: &Draw,
    levels: &[Vec<NodeId>],
    format: OutputFormat,
    extras: &Extras,
) -> Result<(Vec<FileDigest>, Option<ManifestUncertainty>), ExportError> {
    let mut digests = Vec::new();
    if let Some(m) = draw.measurements() {
        digests.push(write_file(dir, super::measurements::FILE, |w| {
            super::measurements::write(w, public, levels, m)
        })?);
    }
    let Some(options) = extras.uncertainty else {
        return Ok((digests, None));
    };
    let options = UncertaintyOptions {
        // A seeded release gets reproducible margins (from a key apart from its own).
        seed: options.seed.or(match draw.randomness() {
            crate::noise::Randomness::Seeded { seed } => Some(seed),
            crate::noise::Randomness::Os => None,
        }),
        ..options
    };
    let u = match &extras.computed {
        Some(u) => u.clone(),
        None => {
            let phase = crate::timing::phase("  margins of error (bootstrap)");
            let u = intervals(draw, plan, public, &options)?;
            phase.done();
            std::sync::Arc::new(u)
        }
    };
    let released = draw.histograms();
    if format.csv() {
        digests.push(write_file(dir, files::CSV_FILE, |w| {
            files::write_csv(w, public, released, levels, &u)
        })?);
    }
    if format.parquet() {
        digests.push(write_file(dir, files::PARQUET_FILE, |w| {
            files::write_parquet(w, public, released, levels, &u)
        })?);
    }
    if format.csv() {
        digests.push(write_file(dir, files::SUMMARY_FILE, |w| {
            files::write_summary(w, public, released, levels, &u)
        })?);
    }
    if format.parquet() {
        digests.push(write_file(dir, files::SUMMARY_PARQUET_FILE, |w| {
            files::write_summary_parquet(w, public, released, levels, &u)
        })?);
    }
    Ok((
        digests,
        Some(ManifestUncertainty {
            confidence: u.confidence.level(),
            method: u.method().to_string(),
            replicates: u.replicates,
            rule: u.rule,
        }),
    ))
}
