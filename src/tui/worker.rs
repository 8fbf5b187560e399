//! Background work: loading, previews, sweeps, drawing, exporting, each on its own
//! thread, reporting through one channel.
//!
//! "Latest request wins" per kind of job: starting a job sets the cancel flag of the
//! previous job of the same kind, and only messages of the latest job of each kind reach
//! the app. Jobs that write to the ledger (export, discard) are never cancelled; the
//! terminal loop waits for them before it exits.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::data::{Dataset, LevelId, LoadProgress};
use crate::noise::NoiseSource;
use crate::preview::{self, PreviewOptions, PreviewProgress, PreviewReport};
use crate::privacy::Epsilon;
use crate::release::export::{self, ExportError};
use crate::release::ledger::{Ledger, LedgerLock};
use crate::release::manifest::Manifest;
use crate::release::plan::ReleasePlan;
use crate::release::run::{self, Draw};
use crate::tradeoff::{self, AllocationPoint, Frontier, Priority, SweepProgress};

/// The kinds of job; one of each may be current.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobKind {
    Load,
    Preview,
    Sweep,
    Frontier,
    Draw,
    Export,
    Discard,
}

impl JobKind {
    /// Jobs that record in the ledger run to the end.
    pub fn cancellable(self) -> bool {
        !matches!(self, JobKind::Export | JobKind::Discard)
    }
}

/// A job and everything it needs (shared read-only data behind `Arc`).
pub enum Job {
    Load {
        dir: PathBuf,
    },
    Preview {
        dataset: Arc<Dataset>,
        plan: ReleasePlan,
        options: PreviewOptions,
    },
    Sweep {
        dataset: Arc<Dataset>,
        plan: ReleasePlan,
        level: LevelId,
        trials: usize,
        seed: Option<u64>,
    },
    Frontier {
        dataset: Arc<Dataset>,
        plan: ReleasePlan,
        trials: usize,
        seed: Option<u64>,
    },
    /// Takes the ledger lock, checks the cap and draws with fresh OS randomness. The lock
    /// comes back with the draw and is held until the draw is approved or discarded.
    Draw {
        dataset: Arc<Dataset>,
        plan: ReleasePlan,
        ledger: Ledger,
    },
    Export {
        dataset: Arc<Dataset>,
        plan: ReleasePlan,
        draw: Arc<Draw>,
        ledger: Ledger,
        lock: Arc<LedgerLock>,
        out: PathBuf,
    },
    Discard {
        dataset: Arc<Dataset>,
        plan: ReleasePlan,
        draw: Arc<Draw>,
        ledger: Ledger,
        lock: Arc<LedgerLock>,
        note: String,
    },
}

impl Job {
    pub fn kind(&self) -> JobKind {
        match self {
            Job::Load { .. } => JobKind::Load,
            Job::Preview { .. } => JobKind::Preview,
            Job::Sweep { .. } => JobKind::Sweep,
            Job::Frontier { .. } => JobKind::Frontier,
            Job::Draw { .. } => JobKind::Draw,
            Job::Export { .. } => JobKind::Export,
            Job::Discard { .. } => JobKind::Discard,
        }
    }
}

/// A drawn release with the ledger lock taken before the draw.
pub struct Drawn {
    pub draw: Draw,
    pub lock: Arc<LedgerLock>,
}

/// Why an export did not happen, and whether the ledger recorded the draw anyway.
#[derive(Debug)]
pub struct ExportFailure {
    pub message: String,
    /// The ledger gained a line for this draw: it is decided (spent, not written).
    pub recorded: bool,
}

/// What a job reports.
pub enum Update {
    LoadProgress(LoadProgress),
    Loaded(Result<Box<Dataset>, String>),
    PreviewProgress(PreviewProgress),
    Previewed(Result<Box<PreviewReport>, String>),
    SweepProgress(SweepProgress),
    Swept(Result<Vec<AllocationPoint>, String>),
    FrontierProgress(SweepProgress),
    Frontier(Result<Box<Frontier>, String>),
    DrawProgress { done: usize, total: usize },
    Drawn(Result<Box<Drawn>, String>),
    Exported(Result<Box<(PathBuf, Manifest)>, ExportFailure>),
    Discarded(Result<(), String>),
}

impl Update {
    /// The last message of a job of `kind` that could not run.
    pub fn failed(kind: JobKind, message: String) -> Update {
        match kind {
            JobKind::Load => Update::Loaded(Err(message)),
            JobKind::Preview => Update::Previewed(Err(message)),
            JobKind::Sweep => Update::Swept(Err(message)),
            JobKind::Frontier => Update::Frontier(Err(message)),
            JobKind::Draw => Update::Drawn(Err(message)),
            JobKind::Export => Update::Exported(Err(ExportFailure {
                message,
                recorded: false,
            })),
            JobKind::Discard => Update::Discarded(Err(message)),
        }
    }

    /// Whether this is the job's last message.
    pub fn is_final(&self) -> bool {
        !matches!(
            self,
            Update::LoadProgress(_)
                | Update::PreviewProgress(_)
                | Update::SweepProgress(_)
                | Update::FrontierProgress(_)
                | Update::DrawProgress { .. }
        )
    }
}

/// One message from a job.
pub struct WorkerEvent {
    pub kind: JobKind,
    pub update: Update,
}

struct Message {
    kind: JobKind,
    id: u64,
    update: Update,
}

struct Slot {
    id: u64,
    cancel: Arc<AtomicBool>,
}

/// Starts jobs and delivers the latest ones' messages.
pub struct Worker {
    tx: Sender<Message>,
    rx: Receiver<Message>,
    next_id: u64,
    current: HashMap<JobKind, Slot>,
    /// Jobs started and not yet finished (including superseded ones).
    running: HashMap<u64, (JobKind, JoinHandle<()>)>,
}

impl Default for Worker {
    fn default() -> Self {
        Self::new()
    }
}

/// Progress messages are sent at most this often (the last one always is).
const PROGRESS_INTERVAL: Duration = Duration::from_millis(50);

impl Worker {
    pub fn new() -> Worker {
        let (tx, rx) = channel();
        Worker {
            tx,
            rx,
            next_id: 0,
            current: HashMap::new(),
            running: HashMap::new(),
        }
    }

    /// Starts a job, superseding (and cancelling) the current job of its kind.
    pub fn start(&mut self, job: Job) {
        let kind = job.kind();
        self.cancel(kind);
        self.next_id += 1;
        let id = self.next_id;
        let cancel = Arc::new(AtomicBool::new(false));
        self.current.insert(
            kind,
            Slot {
                id,
                cancel: cancel.clone(),
            },
        );
        let tx = self.tx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("coco-{kind:?}").to_lowercase())
            .spawn(move || {
                let send = |update: Update| {
                    let _ = tx.send(Message { kind, id, update });
                };
                run_job(job, &cancel, &send);
            });
        match spawned {
            Ok(handle) => {
                self.running.insert(id, (kind, handle));
            }
            Err(e) => {
                let _ = self.tx.send(Message {
                    kind,
                    id,
                    update: Update::failed(kind, format!("cannot start a thread: {e}")),
                });
            }
        }
    }

    /// Asks the current job of a kind to stop (ledger jobs are never stopped).
    pub fn cancel(&mut self, kind: JobKind) {
        if let Some(slot) = self.current.get(&kind).filter(|_| kind.cancellable()) {
            slot.cancel.store(true, Ordering::Relaxed);
        }
    }

    /// Whether any job has not finished yet.
    pub fn busy(&self) -> bool {
        !self.running.is_empty()
    }

    /// Whether a job of this kind is running.
    pub fn is_running(&self, kind: JobKind) -> bool {
        self.running.values().any(|(k, _)| *k == kind)
    }

    /// The next message of a current job, waiting at most `timeout`.
    pub fn recv(&mut self, timeout: Duration) -> Option<WorkerEvent> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = match self.rx.recv_timeout(left) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
            };
            if let Some(event) = self.accept(message) {
                return Some(event);
            }
        }
    }

    /// The next message of a current job, if one is waiting.
    pub fn try_recv(&mut self) -> Option<WorkerEvent> {
        while let Ok(message) = self.rx.try_recv() {
            if let Some(event) = self.accept(message) {
                return Some(event);
            }
        }
        None
    }

    fn accept(&mut self, message: Message) -> Option<WorkerEvent> {
        if let Some((_, handle)) = message
            .update
            .is_final()
            .then(|| self.running.remove(&message.id))
            .flatten()
        {
            let _ = handle.join();
        }
        let current = self
            .current
            .get(&message.kind)
            .is_some_and(|s| s.id == message.id);
        if !current {
            return None;
        }
        if message.update.is_final() {
            self.current.remove(&message.kind);
        }
        Some(WorkerEvent {
            kind: message.kind,
            update: message.update,
        })
    }

    /// Cancels what can be cancelled and waits for every job to end (ledger jobs finish
    /// their work). Their messages are dropped.
    pub fn shutdown(&mut self) {
        for (kind, slot) in &self.current {
            if kind.cancellable() {
                slot.cancel.store(true, Ordering::Relaxed);
            }
        }
        for (_, (_, handle)) in self.running.drain() {
            let _ = handle.join();
        }
        self.current.clear();
    }
}

/// Sends progress at most every [`PROGRESS_INTERVAL`], and always the last step.
struct Throttle {
    last: Mutex<Option<Instant>>,
}

impl Throttle {
    fn new() -> Throttle {
        Throttle {
            last: Mutex::new(None),
        }
    }

    fn due(&self, last_step: bool) -> bool {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if last_step || last.is_none_or(|t| t.elapsed() >= PROGRESS_INTERVAL) {
            *last = Some(Instant::now());
            true
        } else {
            false
        }
    }
}

fn run_job(job: Job, cancel: &AtomicBool, send: &(dyn Fn(Update) + Sync)) {
    let throttle = Throttle::new();
    match job {
        Job::Load { dir } => {
            let result = Dataset::load_with_progress(&dir, &mut |p: LoadProgress| {
                if throttle.due(p.bytes_read == p.bytes_total) {
                    send(Update::LoadProgress(p));
                }
            });
            send(Update::Loaded(
                result.map(Box::new).map_err(|e| e.to_string()),
            ));
        }
        Job::Preview {
            dataset,
            plan,
            options,
        } => {
            let result = preview::preview(&dataset, &plan, &options, Some(cancel), &|p| {
                if throttle.due(p.trial == p.trials) {
                    send(Update::PreviewProgress(p));
                }
            });
            send(Update::Previewed(
                result.map(Box::new).map_err(|e| e.to_string()),
            ));
        }
        Job::Sweep {
            dataset,
            plan,
            level,
            trials,
            seed,
        } => {
            let result = tradeoff::sweep_level(
                &dataset,
                &plan,
                level,
                &tradeoff::SWEEP_FACTORS,
                &tradeoff::Trials {
                    trials,
                    seed,
                    cancel: Some(cancel),
                },
                &|p| {
                    if throttle.due(false) {
                        send(Update::SweepProgress(p));
                    }
                },
            );
            send(Update::Swept(result.map_err(|e| e.to_string())));
        }
        Job::Frontier {
            dataset,
            plan,
            trials,
            seed,
        } => {
            let result = frontier(&dataset, &plan, trials, seed, cancel, &|p| {
                if throttle.due(false) {
                    send(Update::FrontierProgress(p));
                }
            });
            send(Update::Frontier(result.map(Box::new)));
        }
        Job::Draw {
            dataset,
            plan,
            ledger,
        } => {
            let result = draw(&dataset, &plan, &ledger, cancel, &|done, total| {
                if throttle.due(done == total) {
                    send(Update::DrawProgress { done, total });
                }
            });
            send(Update::Drawn(result.map(Box::new)));
        }
        Job::Export {
            dataset,
            plan,
            draw,
            ledger,
            lock,
            out,
        } => {
            send(Update::Exported(
                export_release(&dataset, &plan, &draw, &ledger, &lock, &out)
                    .map(|m| Box::new((out, m))),
            ));
        }
        Job::Discard {
            dataset,
            plan,
            draw,
            ledger,
            lock,
            note,
        } => {
            let result =
                export::record_discard_locked(&dataset, &plan, &draw, &ledger, &lock, "tui", &note)
                    .map_err(|e| e.to_string());
            send(Update::Discarded(result));
        }
    }
}

/// The frontier at the plan's total, with the recommendation for equal weights.
fn frontier(
    dataset: &Dataset,
    plan: &ReleasePlan,
    trials: usize,
    seed: Option<u64>,
    cancel: &AtomicBool,
    progress: &(dyn Fn(SweepProgress) + Sync),
) -> Result<Frontier, String> {
    let total = Epsilon::sum(plan.levels.iter().map(|l| &l.epsilon))
        .ok_or_else(|| "the plan has no levels".to_string())?;
    let depth = dataset.hierarchy.depth();
    let shares = tradeoff::default_shares(depth);
    let mut f = tradeoff::frontier(
        dataset,
        plan,
        &total,
        &shares,
        &tradeoff::Trials {
            trials,
            seed,
            cancel: Some(cancel),
        },
        progress,
    )
    .map_err(|e| e.to_string())?;
    f.recommendation = tradeoff::recommend(&f, &Priority::Weights(vec![1.0; depth]));
    Ok(f)
}

/// Locks the ledger, checks the cap and draws with fresh randomness from the OS.
fn draw(
    dataset: &Dataset,
    plan: &ReleasePlan,
    ledger: &Ledger,
    cancel: &AtomicBool,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Drawn, String> {
    let total = plan
        .total_epsilon()
        .ok_or_else(|| "the plan has no levels".to_string())?;
    // Held until the draw is approved or discarded: a concurrent release cannot slip
    // under the cap meanwhile.
    let lock = ledger.lock().map_err(|e| e.to_string())?;
    ledger
        .check_cap(dataset, &total)
        .map_err(|e| e.to_string())?;
    let source = NoiseSource::from_os().map_err(|e| e.to_string())?;
    let draw = match run::draw(dataset, plan, &source, Some(cancel), Some(progress)) {
        Ok(draw) => draw,
        Err(e) => {
            // A private K drawn before a refusal: its budget is spent and recorded.
            let recorded = export::record_failed_draw(
                dataset,
                &e,
                source.randomness(),
                None,
                ledger,
                &lock,
                "tui",
            )
            .map_err(|le| format!("{e}; and the ledger could not record it: {le}"))?;
            return Err(if recorded {
                format!("{e} (recorded in the ledger)")
            } else {
                e.to_string()
            });
        }
    };
    // Recorded before it is shown: a draw the operator has seen counts as spent even if
    // coco is then killed. If the line cannot be written the draw is never shown.
    export::record_pending(dataset, plan, &draw, ledger, &lock, "tui").map_err(|e| {
        format!("the draw could not be recorded in the ledger, so it is not shown: {e}")
    })?;
    Ok(Drawn {
        draw,
        lock: Arc::new(lock),
    })
}

/// Writes the release through the same code as `coco release`; tells whether the
/// ledger recorded the draw when it fails (the lock is held, so only this job appends).
fn export_release(
    dataset: &Dataset,
    plan: &ReleasePlan,
    draw: &Draw,
    ledger: &Ledger,
    lock: &LedgerLock,
    out: &std::path::Path,
) -> Result<Manifest, ExportFailure> {
    let lines_before = ledger.entries().map(|(e, bad)| e.len() + bad.len()).ok();
    export::write_release(out, dataset, plan, draw, ledger, lock, "tui").map_err(|e| {
        let lines_after = ledger.entries().map(|(e, bad)| e.len() + bad.len()).ok();
        let recorded = match (lines_before, lines_after) {
            (Some(b), Some(a)) => a > b,
            // Unknown: only a full output directory is known to leave no line.
            _ => !matches!(e, ExportError::OutputExists { .. }),
        };
        ExportFailure {
            message: e.to_string(),
            recorded,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(worker: &mut Worker) -> Vec<WorkerEvent> {
        let mut events = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        while worker.busy() && Instant::now() < deadline {
            events.extend(worker.recv(Duration::from_millis(100)));
        }
        events.extend(std::iter::from_fn(|| worker.try_recv()));
        events
    }

    #[test]
    fn only_the_latest_job_of_a_kind_reports() {
        let mut worker = Worker::new();
        worker.start(Job::Load {
            dir: PathBuf::from("/no/such/first"),
        });
        worker.start(Job::Load {
            dir: PathBuf::from("/no/such/second"),
        });
        let events = drain(&mut worker);
        assert!(!worker.busy());
        let finals: Vec<String> = events
            .into_iter()
            .filter_map(|e| match e.update {
                Update::Loaded(Err(m)) => Some(m),
                _ => None,
            })
            .collect();
        assert_eq!(finals.len(), 1, "{finals:?}");
        assert!(finals[0].starts_with("/no/such/second"), "{finals:?}");
    }

    #[test]
    fn ledger_jobs_are_never_cancelled() {
        assert!(!JobKind::Export.cancellable());
        assert!(!JobKind::Discard.cancellable());
        assert!(JobKind::Preview.cancellable() && JobKind::Draw.cancellable());
        assert!(Update::failed(JobKind::Export, "x".into()).is_final());
        assert!(!Update::DrawProgress { done: 1, total: 2 }.is_final());
    }
}
