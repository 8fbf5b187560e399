//! Background work: loading, previews, sweeps, drawing, exporting, each on its own
//! thread, reporting through one channel.
//!
//! "Latest request wins" per kind of job: starting a job sets the cancel flag of the
//! previous job of the same kind, and only messages of the latest job of each kind reach
//! the app. Jobs that write to the ledger (export, discard) are never cancelled; the
//! terminal loop waits for them, and for a draw, before it exits. Jobs that only
//! compute (loading, previews, sweeps, searches) are cancelled and left to end on their
//! own: quitting never waits for a census-scale load or trial.
//!
//! Trials report how long they take ([`TrialClock`], measured here where they run), so
//! that the screens can say how long the last one took and how long the run has left.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::data::{Dataset, LevelId, LoadErrorKind, LoadProgress, NodeId};
use crate::noise::NoiseSource;
use crate::preview::{self, PreviewOptions, PreviewProgress, PreviewReport};
use crate::proxy::{self, Proxy, ProxySpec};
use crate::release::ledger::{Ledger, Tool};
use crate::release::outputs::export::{OutputFormat, WriteOptions};
use crate::release::pipeline::draw::DrawOptions;
use crate::release::plan::ReleasePlan;
use crate::release::transaction::{
    ApproveError, Approved, PendingDraw, Recorded, Reservation, ReserveOptions, TransactionError,
};
use crate::tradeoff::{self, AllocationPoint, Frontier, PreviewData, SweepProgress};

use super::overview::Overview;
use super::search::{self, Query};

/// The message of a job that stopped because it was cancelled.
pub const CANCELLED: &str = "cancelled";

/// The kinds of job; one of each may be current.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobKind {
    Load,
    Search,
    Preview,
    Sweep,
    Frontier,
    /// Builds or loads a public proxy for previews.
    Proxy,
    Draw,
    Export,
    Discard,
}

impl JobKind {
    /// Jobs that record in the ledger run to the end.
    pub fn cancellable(self) -> bool {
        !matches!(self, JobKind::Export | JobKind::Discard)
    }

    /// Jobs that may write to the ledger, which the session waits for before it ends
    /// (a draw records itself as pending, or as discarded when it is dropped).
    pub fn records(self) -> bool {
        matches!(self, JobKind::Draw | JobKind::Export | JobKind::Discard)
    }
}

/// A job and everything it needs (shared read-only data behind `Arc`).
pub enum Job {
    /// Loads a dataset, then computes its [`Overview`].
    Load { dir: PathBuf },
    /// Finds the regions whose display id or name contains the query, in node order,
    /// leaving out `skip` (the exact match, shown already).
    Search {
        dataset: Arc<Dataset>,
        query: String,
        skip: Option<NodeId>,
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
        /// What `dataset` is: the confidential data or a proxy.
        data: PreviewData,
        plan: ReleasePlan,
        trials: usize,
        seed: Option<u64>,
    },
    /// Builds the synthetic proxy of `dataset` from its public part, or loads a proxy
    /// directory and checks its hierarchy against `dataset`'s, and that it is not
    /// confidential data (the dataset's, or data `ledger` records a draw from).
    Proxy {
        spec: ProxySpec,
        dataset: Arc<Dataset>,
        ledger: Option<Ledger>,
    },
    /// Reserves (ledger locked, read fail-closed, caps checked) and draws with fresh OS
    /// randomness through the release transaction. The draw comes back pending: recorded,
    /// holding the lock until it is approved or discarded.
    Draw {
        dataset: Arc<Dataset>,
        plan: ReleasePlan,
        ledger: Ledger,
    },
    /// Approves the pending draw in the slot: export, then "written".
    Export {
        pending: PendingSlot,
        out: PathBuf,
        format: OutputFormat,
    },
    /// Records the pending draw in the slot as discarded.
    Discard { pending: PendingSlot, note: String },
}

impl Job {
    pub fn kind(&self) -> JobKind {
        match self {
            Job::Load { .. } => JobKind::Load,
            Job::Search { .. } => JobKind::Search,
            Job::Preview { .. } => JobKind::Preview,
            Job::Sweep { .. } => JobKind::Sweep,
            Job::Frontier { .. } => JobKind::Frontier,
            Job::Proxy { .. } => JobKind::Proxy,
            Job::Draw { .. } => JobKind::Draw,
            Job::Export { .. } => JobKind::Export,
            Job::Discard { .. } => JobKind::Discard,
        }
    }
}

/// Where an undecided draw waits for the operator: shared by the screen and the job
/// that decides it, which takes it out (and puts it back if the decision could not be
/// made). Dropped undecided, it records a discard.
pub type PendingSlot = Arc<Mutex<Option<PendingDraw>>>;

/// Why a draw failed, and what the ledger recorded about it (only a draw that spent
/// budget before failing is recorded).
#[derive(Debug)]
pub struct DrawFailure {
    pub message: String,
    pub recorded: Option<Recorded>,
    /// The operator cancelled it before anything was measured or recorded.
    pub cancelled: bool,
}

/// Why an export did not happen, and what the ledger holds about the draw.
#[derive(Debug)]
pub struct ExportFailure {
    pub message: String,
    /// The draw is still pending (the path could not take it): choose another or
    /// discard. Otherwise it is decided: spent, not written.
    pub still_pending: bool,
    /// The ledger's "not written" line, when it could be written.
    pub recorded: Option<Recorded>,
}

/// A dataset and its overview, ready to open.
pub struct Opened {
    pub dataset: Dataset,
    pub overview: Overview,
}

/// Regions found by a search since its last message, and how far it has got.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    pub regions: Vec<NodeId>,
    pub scanned: usize,
    pub total: usize,
}

/// How long the trials of a run take, measured where they run. A sweep's or a
/// frontier's trials are counted over all its points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrialClock {
    pub started: Instant,
    /// When the trial under way started (when the last one finished).
    pub trial_started: Instant,
    /// Trials finished.
    pub done: usize,
    /// Trials in the whole run.
    pub total: usize,
    /// How long the last finished trial took.
    pub last: Option<Duration>,
}

impl TrialClock {
    pub fn new(total: usize) -> TrialClock {
        let now = Instant::now();
        TrialClock {
            started: now,
            trial_started: now,
            done: 0,
            total,
            last: None,
        }
    }

    /// Notes that `done` trials are finished; `true` if that is news.
    pub fn finished(&mut self, done: usize) -> bool {
        if done <= self.done {
            return false;
        }
        let now = Instant::now();
        self.last = Some(now - self.trial_started);
        self.trial_started = now;
        self.done = done;
        true
    }

    /// The finished trials' time.
    pub fn finished_time(&self) -> Duration {
        self.trial_started - self.started
    }

    /// The time left at `now`: the mean trial so far for each trial left, less the time
    /// spent on the trial under way. `None` before the first trial has finished.
    pub fn left(&self, now: Instant) -> Option<Duration> {
        if self.done == 0 {
            return None;
        }
        let mean = self.finished_time() / self.done as u32;
        let rest = mean * (self.total.saturating_sub(self.done)) as u32;
        Some(rest.saturating_sub(now.saturating_duration_since(self.trial_started)))
    }
}

/// What a job reports.
pub enum Update {
    LoadProgress(LoadProgress),
    /// The files are read: the overview is being computed.
    LoadSummarising,
    Loaded(Result<Box<Opened>, String>),
    SearchProgress(Found),
    Searched(Found),
    PreviewProgress(PreviewProgress, TrialClock),
    Previewed(Result<Box<PreviewReport>, String>),
    SweepProgress(SweepProgress, TrialClock),
    Swept(Result<Vec<AllocationPoint>, String>),
    FrontierProgress(SweepProgress, TrialClock),
    Frontier(Result<Box<Frontier>, String>),
    ProxyOpened(Result<Box<Proxy>, String>),
    DrawProgress {
        done: usize,
        total: usize,
    },
    /// Another coco session holds the ledger: the draw waits for it (who holds it).
    DrawWaiting(String),
    Drawn(Result<Box<PendingDraw>, DrawFailure>),
    Exported(Result<Box<Approved>, ExportFailure>),
    Discarded(Result<Recorded, String>),
}

impl Update {
    /// The last message of a job of `kind` that could not run.
    pub fn failed(kind: JobKind, message: String) -> Update {
        match kind {
            JobKind::Load => Update::Loaded(Err(message)),
            JobKind::Search => Update::Searched(Found::default()),
            JobKind::Preview => Update::Previewed(Err(message)),
            JobKind::Sweep => Update::Swept(Err(message)),
            JobKind::Frontier => Update::Frontier(Err(message)),
            JobKind::Proxy => Update::ProxyOpened(Err(message)),
            JobKind::Draw => Update::Drawn(Err(DrawFailure {
                message,
                recorded: None,
                cancelled: false,
            })),
            JobKind::Export => Update::Exported(Err(ExportFailure {
                message,
                still_pending: true,
                recorded: None,
            })),
            JobKind::Discard => Update::Discarded(Err(message)),
        }
    }

    /// Whether this is the job's last message.
    pub fn is_final(&self) -> bool {
        !matches!(
            self,
            Update::LoadProgress(_)
                | Update::LoadSummarising
                | Update::SearchProgress(_)
                | Update::PreviewProgress(..)
                | Update::SweepProgress(..)
                | Update::FrontierProgress(..)
                | Update::DrawProgress { .. }
                | Update::DrawWaiting(_)
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
                guarded(kind, || run_job(job, &cancel, &send), &send);
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

    /// Cancels what can be cancelled and waits for the jobs that may write to the
    /// ledger (they finish their work); jobs that only compute are left to stop on
    /// their own. Their messages are dropped.
    pub fn shutdown(&mut self) {
        for (kind, slot) in &self.current {
            if kind.cancellable() {
                slot.cancel.store(true, Ordering::Relaxed);
            }
        }
        for (_, (kind, handle)) in self.running.drain() {
            if kind.records() {
                let _ = handle.join();
            }
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

/// A [`TrialClock`] shared by the threads that report progress, with the time of the
/// last message sent.
struct Clocked {
    inner: Mutex<(TrialClock, Option<Instant>)>,
}

impl Clocked {
    fn new() -> Clocked {
        Clocked {
            inner: Mutex::new((TrialClock::new(0), None)),
        }
    }

    /// Notes that `done` of `total` trials are finished and returns the clock when a
    /// message is due (at most every [`PROGRESS_INTERVAL`], and whenever a trial has
    /// finished).
    fn tick(&self, done: usize, total: usize) -> Option<TrialClock> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (clock, last) = &mut *inner;
        clock.total = total;
        let news = clock.finished(done);
        if news || last.is_none_or(|t| t.elapsed() >= PROGRESS_INTERVAL) {
            *last = Some(Instant::now());
            Some(*clock)
        } else {
            None
        }
    }
}

/// Trials finished and trials in all in a sweep's or frontier's run, over its points.
fn sweep_trials(p: &SweepProgress) -> (usize, usize) {
    (p.trials_done, p.trials_total)
}

/// Runs a job; a bug that panics in it must not leave the screen waiting for an answer
/// that never comes: it ends the job with an error naming the panic instead.
fn guarded(kind: JobKind, run: impl FnOnce(), send: &(dyn Fn(Update) + Sync)) {
    if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_string());
        send(Update::failed(
            kind,
            format!("internal error, a bug in coco (please report it): {what}"),
        ));
    }
}

fn run_job(job: Job, cancel: &AtomicBool, send: &(dyn Fn(Update) + Sync)) {
    let throttle = Throttle::new();
    match job {
        Job::Load { dir } => {
            let opened = load(&dir, cancel, &|p: LoadProgress| {
                if throttle.due(p.bytes_read == p.bytes_total) {
                    send(Update::LoadProgress(p));
                }
            })
            .and_then(|dataset| {
                send(Update::LoadSummarising);
                let overview =
                    Overview::compute(&dataset, cancel).ok_or_else(|| CANCELLED.to_string())?;
                Ok(Box::new(Opened { dataset, overview }))
            });
            send(Update::Loaded(opened));
        }
        Job::Search {
            dataset,
            query,
            skip,
        } => {
            let h = &dataset.hierarchy;
            let query = Query::new(&query);
            let total = h.len();
            let mut found = Found {
                total,
                ..Found::default()
            };
            let mut from = 0u32;
            while (from as usize) < total && !cancel.load(Ordering::Relaxed) {
                let to = (from + search::CHUNK).min(total as u32);
                let new = found.regions.len();
                search::scan(h, &query, from..to, &mut found.regions);
                if let Some(i) = found.regions[new..].iter().position(|&id| Some(id) == skip) {
                    found.regions.remove(new + i);
                }
                found.scanned = to as usize;
                from = to;
                if (to as usize) < total && throttle.due(false) {
                    send(Update::SearchProgress(Found {
                        regions: std::mem::take(&mut found.regions),
                        ..found
                    }));
                }
            }
            send(Update::Searched(found));
        }
        Job::Preview {
            dataset,
            plan,
            options,
        } => {
            let clock = Clocked::new();
            let result = preview::preview(&dataset, &plan, &options, Some(cancel), &|p| {
                if let Some(c) = clock.tick(p.trial, p.trials) {
                    send(Update::PreviewProgress(p, c));
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
            let clock = Clocked::new();
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
                    let (done, total) = sweep_trials(&p);
                    if let Some(c) = clock.tick(done, total) {
                        send(Update::SweepProgress(p, c));
                    }
                },
            );
            send(Update::Swept(result.map_err(|e| e.to_string())));
        }
        Job::Frontier {
            dataset,
            data,
            plan,
            trials,
            seed,
        } => {
            let clock = Clocked::new();
            let result = frontier(&dataset, data, &plan, trials, seed, cancel, &|p| {
                let (done, total) = sweep_trials(&p);
                if let Some(c) = clock.tick(done, total) {
                    send(Update::FrontierProgress(p, c));
                }
            });
            send(Update::Frontier(result.map(Box::new)));
        }
        Job::Proxy {
            spec,
            dataset,
            ledger,
        } => {
            let result = proxy::open(&spec, &dataset, ledger.as_ref())
                .map(Box::new)
                .map_err(|e| e.to_string());
            send(Update::ProxyOpened(result));
        }
        Job::Draw {
            dataset,
            plan,
            ledger,
        } => {
            let result = draw(
                dataset,
                plan,
                &ledger,
                cancel,
                &|done, total| {
                    if throttle.due(done == total) {
                        send(Update::DrawProgress { done, total });
                    }
                },
                &|holder| send(Update::DrawWaiting(holder.to_string())),
            );
            send(Update::Drawn(result.map(Box::new)));
        }
        Job::Export {
            pending,
            out,
            format,
        } => send(Update::Exported(export(&pending, &out, format))),
        Job::Discard { pending, note } => {
            let taken = pending.lock().unwrap_or_else(|e| e.into_inner()).take();
            let result = match taken {
                Some(p) => p.discard(&note).map_err(|e| e.to_string()),
                None => Err("this draw is already decided".to_string()),
            };
            send(Update::Discarded(result));
        }
    }
}

/// Loads a dataset, stopping within a few megabytes read once `cancel` is raised.
fn load(
    dir: &Path,
    cancel: &AtomicBool,
    progress: &dyn Fn(LoadProgress),
) -> Result<Dataset, String> {
    match Dataset::load_cancellable(dir, cancel, &mut |p| progress(p)) {
        Ok(d) => Ok(d),
        Err(e) if matches!(e.kind, LoadErrorKind::Cancelled) => Err(CANCELLED.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// The search at the plan's total with its recommendation: the CLI's
/// [`tradeoff::search`] with the CLI's defaults, so a seed gives both the same plan.
fn frontier(
    dataset: &Dataset,
    data: PreviewData,
    plan: &ReleasePlan,
    trials: usize,
    seed: Option<u64>,
    cancel: &AtomicBool,
    progress: &(dyn Fn(SweepProgress) + Sync),
) -> Result<Frontier, String> {
    let options = tradeoff::SearchOptions {
        trials,
        seed,
        ..Default::default()
    };
    tradeoff::search(dataset, data, plan, &options, Some(cancel), progress)
        .map_err(|e| e.to_string())
}

/// Reserves and draws with fresh randomness from the OS (the release transaction).
fn draw(
    dataset: Arc<Dataset>,
    plan: ReleasePlan,
    ledger: &Ledger,
    cancel: &AtomicBool,
    progress: &(dyn Fn(usize, usize) + Sync),
    waiting: &dyn Fn(&str),
) -> Result<PendingDraw, DrawFailure> {
    let failed = |e: TransactionError| DrawFailure {
        cancelled: matches!(
            &e,
            TransactionError::Draw { error, .. }
                if matches!(**error, crate::release::pipeline::draw::RunError::Cancelled)
        ),
        recorded: match &e {
            TransactionError::Draw { recorded, .. } => recorded.clone(),
            _ => None,
        },
        message: e.to_string(),
    };
    let mut heard = |holder: &crate::release::ledger::LockHolder| waiting(&holder.text);
    let reservation = Reservation::open(
        ledger,
        dataset,
        plan,
        Tool::Tui,
        ReserveOptions {
            waiting: Some(&mut heard),
            ..ReserveOptions::default()
        },
    )
    .map_err(failed)?;
    let source = NoiseSource::from_os().map_err(|e| DrawFailure {
        message: e.to_string(),
        recorded: None,
        cancelled: false,
    })?;
    reservation
        .draw(
            &source,
            &DrawOptions {
                cancel: Some(cancel),
                progress: Some(progress),
                keep_measurements: false,
            },
        )
        .map_err(failed)
        // [uncertainty] The margins of error, for review (post-processing; no ε).
        .map(|pending| pending.with_margins(&Default::default()))
}

/// Approves the pending draw in the slot; a path that cannot take the release puts it
/// back, still pending.
fn export(
    slot: &PendingSlot,
    out: &std::path::Path,
    format: OutputFormat,
) -> Result<Box<Approved>, ExportFailure> {
    let taken = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
    let Some(pending) = taken else {
        return Err(ExportFailure {
            message: "this draw is already decided".into(),
            still_pending: false,
            recorded: None,
        });
    };
    let options = WriteOptions {
        format,
        ..WriteOptions::default()
    };
    let error = match pending.approve(out, &options) {
        Ok(approved) => return Ok(Box::new(approved)),
        Err(e) => e,
    };
    let message = error.to_string();
    match error {
        ApproveError::Refused { pending, .. } => {
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(*pending);
            Err(ExportFailure {
                message,
                still_pending: true,
                recorded: None,
            })
        }
        ApproveError::Failed { recorded, .. } => Err(ExportFailure {
            message,
            still_pending: false,
            recorded: recorded.ok(),
        }),
    }
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
    fn a_cancelled_load_stops_at_its_next_progress_report() {
        let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households");
        let reports = Mutex::new(0);
        let count = |_: LoadProgress| *reports.lock().unwrap() += 1;
        let stopped = load(&sample, &AtomicBool::new(true), &count);
        assert_eq!(stopped.err().as_deref(), Some(CANCELLED));
        assert_eq!(*reports.lock().unwrap(), 0);
        assert!(load(&sample, &AtomicBool::new(false), &count).is_ok());
        assert!(*reports.lock().unwrap() > 0);
    }

    #[test]
    fn the_trial_clock_counts_finished_trials_once() {
        let mut clock = TrialClock::new(4);
        assert!(!clock.finished(0));
        assert_eq!(clock.left(Instant::now()), None);
        assert!(clock.finished(1) && clock.last.is_some());
        assert!(!clock.finished(1));
        let at = clock.trial_started;
        let trial = clock.finished_time();
        assert_eq!(clock.left(at), Some(trial * 3));
    }

    #[test]
    fn ledger_jobs_are_never_cancelled() {
        assert!(!JobKind::Export.cancellable());
        assert!(!JobKind::Discard.cancellable());
        assert!(JobKind::Preview.cancellable() && JobKind::Draw.cancellable());
        assert!(Update::failed(JobKind::Export, "x".into()).is_final());
        assert!(!Update::DrawProgress { done: 1, total: 2 }.is_final());
    }

    #[test]
    fn a_job_that_panics_ends_with_an_error_naming_it() {
        let sent = std::sync::Mutex::new(Vec::new());
        let send = |u: Update| sent.lock().unwrap().push(u);
        // (The panic's message is printed by the default hook; the test passes.)
        guarded(
            JobKind::Preview,
            || panic!("estimates kept without runs"),
            &send,
        );
        guarded(JobKind::Preview, || {}, &send);
        let sent = sent.into_inner().unwrap();
        assert_eq!(sent.len(), 1, "only the panic sends");
        match &sent[0] {
            Update::Previewed(Err(message)) => assert_eq!(
                message,
                "internal error, a bug in coco (please report it): estimates kept without runs"
            ),
            _ => panic!("a preview's failure expected"),
        }
        assert!(sent[0].is_final());
    }
}
