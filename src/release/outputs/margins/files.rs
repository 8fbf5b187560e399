//! The extra files of a release directory, written by the release writer
//! ([`crate::release::outputs::export`]) after the tables: `uncertainty.csv` (and
//! `uncertainty.parquet`), `summary.csv` (and `summary.parquet`), `measurements.jsonl`.

use std::path::Path;
use std::sync::Arc;

use crate::data::{NodeId, PublicData};
use crate::release::outputs::manifest::{FileDigest, ManifestUncertainty};
use crate::release::outputs::writer::{ExportError, Margins, MarginsTable, OutputFormat};
use crate::release::outputs::writer::{Out, join_synced, write_file, write_unsynced};
use crate::release::pipeline::draw::Draw;
use crate::release::plan::ReleasePlan;

use crate::release::margins::{Uncertainty, UncertaintyOptions, intervals};

/// What a release writes besides its tables.
#[derive(Clone, Debug)]
pub struct Extras {
    /// The margins of error (`uncertainty.csv`, `summary.csv`); `None`: neither.
    pub uncertainty: Option<UncertaintyOptions>,
    /// Margins already computed for this draw (shown for review): written as they are.
    pub computed: Option<Arc<Uncertainty>>,
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

/// The margins of error `extras` asks for: those already computed, or computed now from
/// the draw, the plan and public data (post-processing; a seeded release gets
/// reproducible margins, from a key apart from its own). `None`: no margins.
pub fn margins(
    public: PublicData<'_>,
    plan: &ReleasePlan,
    draw: &Draw,
    extras: &Extras,
) -> Result<Option<Arc<Uncertainty>>, ExportError> {
    let Some(options) = extras.uncertainty.clone() else {
        return Ok(None);
    };
    // Margins computed for review kept no replicates: asked for, they are drawn again.
    if let Some(u) = &extras.computed
        && (!options.keep_replicates || !u.replicate_tables.is_empty())
    {
        return Ok(Some(u.clone()));
    }
    let options = UncertaintyOptions {
        key: options.key.or(match draw.randomness() {
            crate::noise::Randomness::Seeded { seed } => {
                Some(crate::noise::NoiseSource::seeded(seed))
            }
            crate::noise::Randomness::Os => None,
        }),
        ..options
    };
    let phase = crate::timing::phase("  margins of error (bootstrap)");
    let u = intervals(draw, plan, public, &options)?;
    phase.done();
    Ok(Some(Arc::new(u)))
}

/// Writes the extra files into `dir` (a release being written): the measurements if the
/// draw kept them, and the margins `u` ([`margins`]) if any. Returns their digests and
/// the manifest's description of the margins.
pub fn write(
    dir: &Path,
    public: PublicData<'_>,
    draw: &Draw,
    levels: &[Vec<NodeId>],
    format: OutputFormat,
    u: Option<&Uncertainty>,
) -> Result<(Vec<FileDigest>, Option<ManifestUncertainty>), ExportError> {
    let mut digests = Vec::new();
    if let Some(m) = draw.measurements() {
        digests.push(write_file(dir, super::measurements::FILE, |w| {
            super::measurements::write(w, public, levels, m)
        })?);
    }
    let Some(u) = u else {
        return Ok((digests, None));
    };
    let released = draw.histograms();
    // Each file is `fsync`ed on a thread of its own while the next is written (2 GB of
    // `uncertainty.csv` at census scale); all are joined before returning.
    let synced = std::thread::scope(|scope| {
        let mut syncing = Vec::new();
        let written = (|| {
            let mut write = |name: &str, fill: &dyn Fn(&mut Out) -> std::io::Result<()>| {
                let phase = crate::timing::phase(format!("  write {name}"));
                let file = write_unsynced(dir, name, fill)?;
                phase.done();
                syncing.push(scope.spawn(move || file.sync()));
                Ok::<_, ExportError>(())
            };
            let margins = Margins {
                public,
                released,
                levels,
                u,
            };
            // Table by table, each in every format: `uncertainty.csv`,
            // `uncertainty.parquet`, `summary.csv`, `summary.parquet`.
            for table in MarginsTable::ALL {
                for f in format.tables() {
                    write(&table.file(*f), &|w| f.write_margins(w, table, &margins))?;
                }
            }
            Ok::<_, ExportError>(())
        })();
        // Every file is synced (or failed) before anything is returned, in order.
        let phase = crate::timing::phase("  fsync (margins)");
        let synced = join_synced(dir, syncing);
        phase.done();
        written?;
        synced
    })?;
    digests.extend(synced);
    Ok((
        digests,
        Some(ManifestUncertainty {
            confidence: u.confidence.level(),
            method: u.method(),
            replicates: u.replicates,
            top_replicates: u.top_replicates(),
            top_levels: u.top_runs.first().map_or(0, |run| run.levels),
            top_runs: u.top_runs.clone(),
            rule: u.rule,
            seed: Some(u.key.to_hex()),
        }),
    ))
}
