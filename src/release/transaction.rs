//! The release transaction: the one sequence by which coco spends ε, used by
//! `coco release` and by the terminal UI alike.
//!
//! ```text
//! Reservation::open ──draw──▶ PendingDraw ──approve(out)──▶ Approved   ("written")
//!   ledger locked,             recorded as        │
//!   read fail-closed,          "pending" before    ├─discard(note)──▶ Recorded ("discarded")
//!   every matching cap         anyone sees it      │
//!   checked, OUT checked                           └─(dropped)──────▶ recorded "discarded"
//! ```
//!
//! Each step consumes the one before, so the order cannot be broken: a draw exists only
//! inside a [`PendingDraw`], which exists only once its pending line is on disk; the
//! ledger lock is held from the cap check until the decision is recorded, so a
//! concurrent release cannot slip under a cap. A [`PendingDraw`] dropped undecided (coco
//! quit, a signal, a cancelled job whose draw had already been recorded) records a
//! discard. Every result says what the ledger recorded ([`Recorded`]), so no caller has
//! to guess.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use thiserror::Error;

use crate::data::Dataset;
use crate::noise::NoiseSource;
use crate::privacy::{DEFAULT_DELTA, Epsilon, Loss};
use crate::release::ledger::{
    CapStatus, DatasetIdentity, DrawSpend, Ledger, LedgerEntry, LedgerError, LedgerLock,
    LockHolder, Status, Tool, new_id,
};
use crate::release::outputs::export::{self, ExportError};
use crate::release::outputs::manifest::Manifest;
use crate::release::pipeline::draw::{self as run, Draw, RunError};
use crate::release::plan::ReleasePlan;

/// What the ledger recorded about a draw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    pub id: String,
    pub status: Status,
    /// The draw's loss: its ε, or its ρ.
    pub loss: Loss,
}

impl Recorded {
    fn of(entry: &LedgerEntry) -> Recorded {
        Recorded {
            id: entry.id.clone(),
            status: entry.status,
            loss: entry.total.clone(),
        }
    }
}

#[derive(Debug, Error)]
pub enum TransactionError {
    /// The ledger refused (a cap, or a ledger that needs repair) or failed.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The output directory cannot take a release; nothing was drawn.
    #[error(transparent)]
    Output(ExportError),
    #[error("the plan has no levels")]
    EmptyPlan,
    /// A total ε above [`LARGE_EPSILON`] without the operator's explicit consent.
    #[error(
        "total ε = {epsilon} is above {LARGE_EPSILON}, the most coco draws without being told to (coco release --allow-large-epsilon): at such an ε the noise hides almost nothing (neighbouring datasets may differ in likelihood by e^{LARGE_EPSILON} ≈ 4.9×10^8 and more) and the release is close to the confidential data itself; nothing was drawn"
    )]
    LargeEpsilon { epsilon: String },
    /// Seeded noise asked for where it was not allowed.
    #[error(
        "seeded noise is reproducible by anyone who knows the seed, so the release would not be private; it is refused unless asked for as not private (coco release --seed N --not-private, for tests)"
    )]
    SeededNotAllowed,
    /// The draw failed. `recorded` says what the ledger holds about it: only a draw
    /// that spent budget before failing (a private `K`) is recorded.
    #[error("{error}{}", match recorded {
        Some(r) => format!(" (recorded in the ledger: draw {}, {})", r.id, r.status.label()),
        None => String::new(),
    })]
    Draw {
        error: Box<RunError>,
        recorded: Option<Recorded>,
    },
}

/// The largest total ε coco draws without being told to (`coco release
/// --allow-large-epsilon`): e^20 ≈ 4.9×10^8 bounds how much more likely a release is
/// on one dataset than on a neighbour, which protects no one in practice, and at ε = 20
/// on one level the noise on a count has a standard deviation below 10^-4. Above it a
/// release is refused unless allowed, and warned of whenever it is drawn.
pub const LARGE_EPSILON: u32 = 20;

/// Whether `epsilon` is above [`LARGE_EPSILON`].
pub fn is_large(epsilon: &Epsilon) -> bool {
    *epsilon > Epsilon::from_ratio(u64::from(LARGE_EPSILON), 1).expect("positive")
}

/// What a reservation checks first and may do beyond the defaults.
#[derive(Default)]
pub struct ReserveOptions<'a> {
    /// Where the release will be written, when known: checked before anything else
    /// (it is checked again when the release is approved).
    pub output: Option<&'a Path>,
    /// Draw a total ε above [`LARGE_EPSILON`] (the operator said so).
    pub allow_large_epsilon: bool,
    /// Draw with seeded noise (tests; such a draw is marked reproducible and not for
    /// publication everywhere). Without it a seeded source is refused.
    pub allow_seeded: bool,
    /// Told who holds the ledger when another coco does, before waiting for it.
    pub waiting: Option<&'a mut dyn FnMut(&LockHolder)>,
}

/// The first step: the ledger locked and read fail-closed, every cap that matches the
/// dataset checked against the plan's total, the output path (if known) checked.
#[derive(Debug)]
pub struct Reservation {
    ledger: Ledger,
    lock: LedgerLock,
    dataset: Arc<Dataset>,
    plan: ReleasePlan,
    tool: Tool,
    loss: Loss,
    cap: CapStatus,
    notes: Vec<String>,
    /// Whether a seeded source may be drawn with ([`ReserveOptions::allow_seeded`]).
    allow_seeded: bool,
}

impl Reservation {
    /// Locks the ledger (waiting for another coco that holds it, telling
    /// `options.waiting`), reads it fail-closed and checks every matching cap; checks
    /// `options.output` first. A total ε above [`LARGE_EPSILON`] is refused unless
    /// `options.allow_large_epsilon`. A ledger that holds fewer lines than its anchor
    /// records, or has lines and no anchor, is refused (a lost ledger restores no
    /// budget). Nothing is drawn.
    pub fn open(
        ledger: &Ledger,
        dataset: Arc<Dataset>,
        plan: ReleasePlan,
        tool: Tool,
        options: ReserveOptions<'_>,
    ) -> Result<Reservation, TransactionError> {
        if let Some(out) = options.output {
            export::check_output(out).map_err(TransactionError::Output)?;
        }
        let total = plan.total().ok_or(TransactionError::EmptyPlan)?;
        // A ρ is held to the same bound through the ε of its (ε, δ) statement at
        // δ = 10⁻¹⁰ (rounded up).
        let large = match &total {
            Loss::Pure(e) => is_large(e).then(|| e.to_string()),
            Loss::Zcdp(r) => {
                let at = total.epsilon_at(DEFAULT_DELTA);
                (at > f64::from(LARGE_EPSILON))
                    .then(|| format!("{at:.2} (ρ = {r} stated at δ = {DEFAULT_DELTA:e})"))
            }
        };
        if let Some(epsilon) = large
            && !options.allow_large_epsilon
        {
            return Err(TransactionError::LargeEpsilon { epsilon });
        }
        let lock = match options.waiting {
            Some(waiting) => ledger.lock_or_wait(waiting)?,
            None => ledger.lock()?,
        };
        let (read, _anchor) = ledger.read_checked()?;
        let notes = ledger.notes_before_draw(&lock);
        let identity = DatasetIdentity::of(&dataset);
        let cap = ledger.check_cap(&read, &identity, &total)?;
        Ok(Reservation {
            ledger: ledger.clone(),
            lock,
            dataset,
            plan,
            tool,
            loss: total,
            cap,
            notes,
            allow_seeded: options.allow_seeded,
        })
    }

    /// The caps that apply and what was spent before this draw.
    pub fn cap(&self) -> &CapStatus {
        &self.cap
    }

    /// What the operator should be told about the ledger (its caps and anchor found
    /// elsewhere than the environment says).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The loss this draw will spend: its ε, or its ρ.
    pub fn loss(&self) -> &Loss {
        &self.loss
    }

    /// Draws with `source` and records the draw as pending before returning it. A
    /// seeded `source` is refused unless the reservation allows it
    /// ([`ReserveOptions::allow_seeded`]).
    pub fn draw(
        self,
        source: &NoiseSource,
        options: &run::DrawOptions<'_>,
    ) -> Result<PendingDraw, TransactionError> {
        if source.randomness().is_reproducible() && !self.allow_seeded {
            return Err(TransactionError::SeededNotAllowed);
        }
        let Reservation {
            ledger,
            lock,
            dataset,
            plan,
            tool,
            loss,
            cap: _,
            notes: _,
            allow_seeded: _,
        } = self;
        let drawn = run::draw(&dataset, &plan, source, options);
        let draw = match drawn {
            Ok(draw) => draw,
            Err(error) => {
                // A private K drawn before a refusal that depends on it: spent.
                let recorded = match error.spent_before_failing() {
                    None => None,
                    Some(spent) => {
                        let id = new_id();
                        let mut entry = LedgerEntry::for_draw(
                            &dataset,
                            &plan,
                            DrawSpend {
                                id: &id,
                                loss: spent,
                                randomness: source.randomness(),
                                levels: false,
                            },
                            Status::NotWritten,
                            tool,
                        );
                        entry.note = Some(format!("refused after K was estimated: {error}"));
                        Some(Recorded::of(&ledger.append(&lock, entry)?))
                    }
                };
                return Err(TransactionError::Draw {
                    error: Box::new(error),
                    recorded,
                });
            }
        };
        debug_assert_eq!(draw.guarantee(), &loss);
        let mut entry = LedgerEntry::for_draw(
            &dataset,
            &plan,
            DrawSpend {
                id: draw.id(),
                loss: &loss,
                randomness: draw.randomness(),
                levels: true,
            },
            Status::Pending,
            tool,
        );
        entry.note = Some("drawn; no decision recorded yet".into());
        // If this line cannot be written the draw is dropped unseen.
        let entry = ledger.append(&lock, entry)?;
        Ok(PendingDraw {
            ledger,
            lock: Some(lock),
            dataset,
            plan,
            draw: Arc::new(draw),
            entry,
            margins: None,
        })
    }
}

/// A draw recorded as pending and not yet decided. Holds the ledger lock. Dropping it
/// records a discard.
pub struct PendingDraw {
    ledger: Ledger,
    /// `None` once decided.
    lock: Option<LedgerLock>,
    dataset: Arc<Dataset>,
    plan: ReleasePlan,
    draw: Arc<Draw>,
    /// The pending line as written.
    entry: LedgerEntry,
    /// \[uncertainty\] The margins of error computed for review before the decision
    /// ([`PendingDraw::with_margins`]); the export writes these same intervals.
    margins: Option<Arc<crate::release::margins::Uncertainty>>,
}

/// A release written and recorded.
#[derive(Debug)]
pub struct Approved {
    pub out: PathBuf,
    pub manifest: Manifest,
    pub draw: Arc<Draw>,
    /// The "written" line, or why it could not be appended (the release exists and the
    /// pending line keeps its ε counted).
    pub recorded: Result<Recorded, String>,
}

/// Why an approval did not write a release.
#[derive(Debug, Error)]
pub enum ApproveError {
    /// The output path cannot take the release: nothing was written or recorded, and
    /// the draw is still pending (choose another path, or discard it).
    #[error("{error}")]
    Refused {
        error: Box<ExportError>,
        pending: Box<PendingDraw>,
    },
    /// The release was not written (failed checks, or writing failed); the ledger
    /// records it as not written (`recorded`), or could not (`Err`), in which case the
    /// pending line keeps its ε counted.
    #[error("{error}; {}", match recorded {
        Ok(r) => format!("recorded in the ledger as {} ({} spent)", r.status.label(), r.loss.labelled()),
        Err(e) => format!("the ledger could not record the outcome ({e}); its pending line keeps the ε counted"),
    })]
    Failed {
        error: Box<ExportError>,
        recorded: Result<Recorded, String>,
    },
}

impl std::fmt::Debug for PendingDraw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingDraw")
            .field("id", &self.entry.id)
            .field("loss", &self.entry.total)
            .field("decided", &self.lock.is_none())
            .finish()
    }
}

impl PendingDraw {
    /// The draw: only what would be published, plus the checks.
    pub fn draw(&self) -> &Arc<Draw> {
        &self.draw
    }

    pub fn dataset(&self) -> &Arc<Dataset> {
        &self.dataset
    }

    pub fn plan(&self) -> &ReleasePlan {
        &self.plan
    }

    /// \[uncertainty\] Computes the margins of error of the draw (post-processing with
    /// public data only) for review; the export then writes these same intervals. A
    /// failure leaves none: the export computes them again, and reports its failure.
    pub fn with_margins(mut self, options: &crate::release::margins::UncertaintyOptions) -> Self {
        self.margins = crate::release::margins::intervals(
            &*self.draw,
            &self.plan,
            self.dataset.public(),
            options,
        )
        .ok()
        .map(Arc::new);
        self
    }

    /// \[uncertainty\] The margins computed by [`PendingDraw::with_margins`].
    pub fn margins(&self) -> Option<&Arc<crate::release::margins::Uncertainty>> {
        self.margins.as_ref()
    }

    /// What the ledger holds for this draw so far.
    pub fn recorded(&self) -> Recorded {
        Recorded::of(&self.entry)
    }

    /// Writes the release to `out` as `options` says (the formats, the margins of
    /// error and the other files of [`crate::release::margins`]), checking `out` again
    /// first: a path that cannot take it leaves the draw pending. Then records it as
    /// written.
    pub fn approve(
        mut self,
        out: &Path,
        options: &export::WriteOptions,
    ) -> Result<Approved, ApproveError> {
        if let Err(error) = export::check_output(out) {
            return Err(ApproveError::Refused {
                error: Box::new(error),
                pending: Box::new(self),
            });
        }
        let phase = crate::timing::phase("write and read back");
        let options = export::WriteOptions {
            extras: crate::release::outputs::margins::Extras {
                computed: self
                    .margins
                    .clone()
                    .filter(|_| options.extras.uncertainty.is_some()),
                ..options.extras.clone()
            },
            ..options.clone()
        };
        let result =
            export::write_release_dir(out, &self.dataset, &self.plan, &self.draw, &options);
        phase.done();
        let output = std::path::absolute(out)
            .unwrap_or_else(|_| out.to_path_buf())
            .display()
            .to_string();
        match result {
            Ok(manifest) => {
                // The ledger keeps the manifest's digest: `coco verify` tells an edited
                // manifest from the one written (the release exists either way).
                let digest = export::manifest_sha256(out).ok();
                let recorded = self
                    .decide(Status::Written, Some(output), None, digest)
                    .map_err(|e| e.to_string());
                Ok(Approved {
                    out: out.to_path_buf(),
                    manifest,
                    draw: self.draw.clone(),
                    recorded,
                })
            }
            Err(error) => {
                let note = match &error {
                    ExportError::ChecksFailed { problems, .. } => {
                        format!("failed checks: {problems}")
                    }
                    e => format!("not written: {e}"),
                };
                let recorded = self
                    .decide(Status::NotWritten, Some(output), Some(note), None)
                    .map_err(|e| e.to_string());
                Err(ApproveError::Failed {
                    error: Box::new(error),
                    recorded,
                })
            }
        }
    }

    /// Records the draw as discarded: its ε stays spent.
    pub fn discard(mut self, note: &str) -> Result<Recorded, LedgerError> {
        self.decide(Status::Discarded, None, Some(note.to_string()), None)
    }

    /// Appends the decision (with the written manifest's digest, for a release
    /// written) and releases the lock. Called once.
    fn decide(
        &mut self,
        status: Status,
        output: Option<String>,
        note: Option<String>,
        manifest_sha256: Option<String>,
    ) -> Result<Recorded, LedgerError> {
        let lock = self
            .lock
            .take()
            .expect("a pending draw is decided only once");
        let entry = LedgerEntry {
            time: crate::release::ledger::now(),
            status,
            output,
            note,
            manifest_sha256,
            ..self.entry.clone()
        };
        Ok(Recorded::of(&self.ledger.append(&lock, entry)?))
    }
}

impl Drop for PendingDraw {
    fn drop(&mut self) {
        if self.lock.is_some() {
            // Nobody decided: coco is stopping, or the draw was abandoned. Its ε is
            // spent either way; if even this line fails, the pending line still counts.
            let _ = self.decide(
                Status::Discarded,
                None,
                Some(
                    "discarded: coco stopped (or the draw was abandoned) before a decision".into(),
                ),
                None,
            );
        }
    }
}
