//! The app's state, split by screen, and the one [`update`] that changes it.
//!
//! [`update`] takes an [`Action`] and changes plain data; work that takes time is
//! queued in [`App::outbox`] as a [`Command`] for the worker, and its results come back
//! through [`App::receive`]. Nothing here draws or touches the terminal.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::data::Dataset;
use crate::release::ledger::Ledger;

use super::action::{Action, Context};
use super::input::{Edit, TextField, complete_path, resolve_path};
use super::keymap::{Key, Keymap};
use super::screens::{budget, dataset, hierarchy, preview, release, tradeoff};
use super::session::Session;
use super::worker::{Job, JobKind, Update, WorkerEvent};

/// The screens, in tab order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Screen {
    Dataset,
    Hierarchy,
    Budget,
    Preview,
    Tradeoff,
    Release,
}

impl Screen {
    pub const ALL: [Screen; 6] = [
        Screen::Dataset,
        Screen::Hierarchy,
        Screen::Budget,
        Screen::Preview,
        Screen::Tradeoff,
        Screen::Release,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Screen::Dataset => "Dataset",
            Screen::Hierarchy => "Hierarchy",
            Screen::Budget => "Budget",
            Screen::Preview => "Preview",
            Screen::Tradeoff => "Trade-off",
            Screen::Release => "Release",
        }
    }

    pub fn context(self) -> Context {
        match self {
            Screen::Dataset => Context::Dataset,
            Screen::Hierarchy => Context::Hierarchy,
            Screen::Budget => Context::Budget,
            Screen::Preview => Context::Preview,
            Screen::Tradeoff => Context::Tradeoff,
            Screen::Release => Context::Release,
        }
    }

    fn index(self) -> usize {
        Screen::ALL.iter().position(|s| *s == self).expect("listed")
    }

    fn offset(self, by: isize) -> Screen {
        let n = Screen::ALL.len() as isize;
        Screen::ALL[((self.index() as isize + by).rem_euclid(n)) as usize]
    }
}

/// What a text field is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputPurpose {
    LevelEpsilon(usize),
    TotalEpsilon,
    MaxSize,
    MaxSizeEpsilon,
    Tail(usize),
    SavePlan,
    LoadPlan,
    Search,
    PreviewTrials,
    TradeoffTrials,
    ExportDir,
    /// What previews run on: `synthetic`, a proxy directory, or `none`.
    Proxy,
}

impl InputPurpose {
    /// Whether the field takes a path (resolved from the start directory, `~` the home
    /// directory; Tab completes it).
    pub fn is_path(&self) -> bool {
        matches!(
            self,
            InputPurpose::SavePlan | InputPurpose::LoadPlan | InputPurpose::ExportDir
        )
    }
}

/// A text field in a box, with the problem of the last value submitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputOverlay {
    pub purpose: InputPurpose,
    pub prompt: String,
    pub field: TextField,
    pub error: Option<String>,
    /// What Tab found when it could not complete alone (the names that could follow).
    pub note: Option<String>,
}

/// The dataset picker: a path field and the recent datasets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picker {
    pub field: TextField,
    /// Index into [`App::recent`].
    pub selected: Option<usize>,
    pub error: Option<String>,
    /// What Tab found when it could not complete alone.
    pub note: Option<String>,
}

/// A yes/no question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Confirm {
    /// Quit although a drawn release is undecided (it is then recorded as discarded).
    QuitWithDraw,
    /// Discard the drawn release.
    Discard,
    /// Put a recommendation computed on the confidential data into the plan.
    ApplyConfidentialRecommendation,
    /// Save the plan over this existing file.
    OverwritePlan(PathBuf),
}

/// The pages of the help overlay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HelpPage {
    /// The keys of the screen it was opened on, then those that work everywhere.
    Keys,
    /// The words the screens use ([`crate::glossary`]).
    Glossary,
}

/// What is drawn over the screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Overlay {
    Help { page: HelpPage, scroll: usize },
    Input(InputOverlay),
    Picker(Picker),
    Confirm(Confirm),
}

/// Work for the worker.
pub enum Command {
    Start(Job),
    Cancel(JobKind),
}

/// How a message reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    Info,
    Warning,
    Error,
}

/// The loading of a dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadState {
    Idle,
    Loading {
        dir: PathBuf,
        started: Instant,
        step: LoadStep,
        /// How the reading goes, across every input file.
        read: LoadRead,
    },
    Failed {
        dir: PathBuf,
        message: String,
    },
}

/// Where a load has got to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadStep {
    Starting,
    /// Reading a file (the last report: the file may be read and being built on).
    Reading {
        file: String,
        bytes_read: u64,
        bytes_total: u64,
    },
    /// Read: summarising the regions for the screens (levels, `G`, sizes, the digest).
    Summarising,
}

/// How much of a dataset's input files has been read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadRead {
    /// The sizes of the files loading reads ([`crate::data::input_bytes`]).
    pub total: u64,
    /// The bytes of the files read to their end.
    pub finished: u64,
}

impl LoadRead {
    /// The share of every input file read, with `step` the file being read.
    pub fn share(&self, step: &LoadStep) -> f64 {
        let now = match step {
            LoadStep::Reading { bytes_read, .. } => *bytes_read,
            LoadStep::Starting => 0,
            LoadStep::Summarising => self.total.saturating_sub(self.finished),
        };
        if self.total == 0 {
            return 0.0;
        }
        ((self.finished + now) as f64 / self.total as f64).min(1.0)
    }
}

/// How the app starts.
#[derive(Clone, Debug, Default)]
pub struct AppOptions {
    /// The dataset to open.
    pub dataset: Option<PathBuf>,
    /// coco's home (ledger, recent datasets, keymap); `None` to use `$COCO_HOME` or
    /// the user's data directory.
    pub home: Option<PathBuf>,
    /// Seed for previews and sweeps (`None`: fresh OS randomness each run). Releases
    /// always use OS randomness.
    pub preview_seed: Option<u64>,
}

/// The seed a preview uses when the operator switches to a fixed seed.
pub const DEFAULT_PREVIEW_SEED: u64 = 1;

/// The recent datasets' file in coco's home.
pub use crate::release::ledger::RECENT_FILE;
const RECENT_MAX: usize = 8;

/// Everything the UI shows, split by screen.
pub struct App {
    pub screen: Screen,
    pub overlay: Option<Overlay>,
    pub keymap: Keymap,
    pub ledger: Option<Ledger>,
    pub load: LoadState,
    pub session: Option<Session>,
    pub recent: Vec<PathBuf>,
    /// Seed of previews and sweeps; `None` for OS randomness.
    pub preview_seed: Option<u64>,
    pub dataset: dataset::DatasetState,
    pub hierarchy: hierarchy::HierarchyState,
    pub budget: budget::BudgetState,
    pub preview: preview::PreviewState,
    pub tradeoff: tradeoff::TradeoffState,
    pub release: release::ReleaseState,
    pub proxy: super::proxy::ProxyState,
    /// One line for the operator, until the next key.
    pub message: Option<(Tone, String)>,
    /// Why the keymap override was not used, if it was not.
    pub keymap_warning: Option<String>,
    pub outbox: Vec<Command>,
    /// Quit once the pending discard is recorded.
    pub quit_after_discard: bool,
    pub quit: bool,
    /// Stopped by Ctrl-C (or a signal) rather than quit: coco exits with status 130.
    pub interrupted: bool,
    /// ε shown exactly (fractions, every digit) instead of as short decimals.
    pub exact_epsilon: bool,
    /// Where relative paths typed in the UI start from: the directory coco was started in.
    pub start_dir: PathBuf,
}

impl App {
    /// ε as the operator reads it: a short decimal, or exactly after `E`
    /// ([`App::exact_epsilon`]).
    pub fn epsilon_text<U: crate::privacy::Unit>(&self, e: &crate::privacy::Budget<U>) -> String {
        crate::tui::widgets::epsilon_as(self.exact_epsilon, e)
    }

    /// A loss as the operator reads it, with its measure: `ε = 0.25`, `ρ = ≈0.3333`.
    pub fn loss_text(&self, loss: &crate::privacy::Loss) -> String {
        format!(
            "{} = {}",
            loss.definition().symbol(),
            self.epsilon_text(&loss.amount())
        )
    }

    pub fn new(options: AppOptions) -> App {
        let (ledger, home_error) = match options.home {
            Some(h) => (Some(Ledger::at(h)), None),
            None => match Ledger::open_default() {
                Ok(l) => (Some(l), None),
                Err(e) => (None, Some(e.to_string())),
            },
        };
        let dirs: Vec<&std::path::Path> = ledger
            .as_ref()
            .map(|l| vec![l.config_home(), l.home()])
            .unwrap_or_default();
        let (keymap, keymap_warning) = Keymap::load(&dirs);
        let recent = ledger
            .as_ref()
            .map(|l| read_recent(l.home()))
            .unwrap_or_default();
        // Homes and files an older coco left readable by others are tightened, and the
        // operator told.
        let tightened = match ledger.as_ref().map(Ledger::secure) {
            Some(Ok(changed)) if !changed.is_empty() => Some(
                changed
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            Some(Err(e)) => Some(format!("cannot make coco's home private: {e}")),
            _ => None,
        };
        let message = match (&keymap_warning, home_error, tightened) {
            (Some(w), _, _) => Some((Tone::Warning, w.clone())),
            (None, Some(e), _) => Some((Tone::Warning, e)),
            (None, None, Some(t)) => Some((Tone::Warning, t)),
            (None, None, None) => None,
        };
        let mut app = App {
            screen: Screen::Dataset,
            overlay: None,
            keymap,
            ledger,
            load: LoadState::Idle,
            session: None,
            recent,
            preview_seed: options.preview_seed,
            dataset: Default::default(),
            hierarchy: Default::default(),
            budget: Default::default(),
            preview: Default::default(),
            tradeoff: Default::default(),
            release: Default::default(),
            proxy: Default::default(),
            message,
            keymap_warning,
            outbox: Vec::new(),
            quit_after_discard: false,
            quit: false,
            interrupted: false,
            exact_epsilon: false,
            start_dir: std::env::current_dir().unwrap_or_default(),
        };
        if let Some(dir) = options.dataset {
            app.open(dir);
        }
        app
    }

    /// Starts loading a dataset (the current one stays open until it has loaded).
    pub fn open(&mut self, dir: PathBuf) {
        self.load = LoadState::Loading {
            read: LoadRead {
                total: crate::data::input_bytes(&dir),
                finished: 0,
            },
            dir: dir.clone(),
            started: Instant::now(),
            step: LoadStep::Starting,
        };
        self.outbox.push(Command::Start(Job::Load { dir }));
    }

    /// Whether a dataset is being loaded.
    pub fn loading(&self) -> bool {
        matches!(self.load, LoadState::Loading { .. })
    }

    /// Stops loading: the dataset open before (if any) stays open.
    pub fn cancel_load(&mut self) {
        if let LoadState::Loading { dir, .. } = &self.load {
            let dir = dir.display().to_string();
            self.outbox.push(Command::Cancel(JobKind::Load));
            self.load = LoadState::Idle;
            self.info(format!("stopped loading {dir}"));
        }
    }

    pub fn info(&mut self, text: impl Into<String>) {
        self.message = Some((Tone::Info, text.into()));
    }

    pub fn warn(&mut self, text: impl Into<String>) {
        self.message = Some((Tone::Warning, text.into()));
    }

    pub fn error(&mut self, text: impl Into<String>) {
        self.message = Some((Tone::Error, text.into()));
    }

    /// Where keys are looked up first.
    pub fn context(&self) -> Context {
        match &self.overlay {
            Some(Overlay::Help { .. }) => Context::Help,
            Some(Overlay::Input(_)) => Context::Input,
            Some(Overlay::Picker(_)) => Context::Picker,
            Some(Overlay::Confirm(_)) => Context::Confirm,
            None => self.screen.context(),
        }
    }

    /// The action a key asks for here, if any.
    pub fn action_for(&self, key: Key) -> Option<Action> {
        use ratatui::crossterm::event::{KeyCode, KeyModifiers};
        let typed = match key.code {
            KeyCode::Char(c)
                if !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                Some(Action::Insert(c))
            }
            _ => None,
        };
        let k = &self.keymap;
        match &self.overlay {
            Some(Overlay::Input(_)) => k.action(Context::Input, key).or(typed),
            Some(Overlay::Picker(_)) => k
                .action(Context::Picker, key)
                .or_else(|| k.action(Context::Input, key))
                .or(typed),
            // Ctrl-C stops coco from a question or the help too (a text field takes it as
            // cancel, as shells do).
            Some(Overlay::Help { .. }) => k.action(Context::Help, key).or_else(|| {
                k.action(Context::Global, key)
                    .filter(|a| *a == Action::Interrupt)
            }),
            Some(Overlay::Confirm(_)) => k.action(Context::Confirm, key).or_else(|| {
                k.action(Context::Global, key)
                    .filter(|a| *a == Action::Interrupt)
            }),
            None => k
                .action(self.screen.context(), key)
                .or_else(|| k.action(Context::Global, key)),
        }
    }

    /// The process is being stopped (a signal, the terminal closed): an undecided draw
    /// is recorded as discarded, since the operator has seen it, and the app quits once
    /// the worker has finished writing.
    pub fn stop(&mut self) {
        if self.undecided_draw() {
            release::discard(
                self,
                "discarded: coco was stopped before the operator decided",
            );
        }
        self.quit = true;
    }

    /// Whether a drawn release waits for approval or discard.
    pub fn undecided_draw(&self) -> bool {
        self.release.undecided()
    }

    /// The text field being edited, if any.
    pub fn field_mut(&mut self) -> Option<&mut TextField> {
        match &mut self.overlay {
            Some(Overlay::Input(i)) => Some(&mut i.field),
            Some(Overlay::Picker(p)) => Some(&mut p.field),
            _ => None,
        }
    }

    /// Opens a text field.
    pub fn ask(&mut self, purpose: InputPurpose, prompt: impl Into<String>, initial: &str) {
        self.overlay = Some(Overlay::Input(InputOverlay {
            purpose,
            prompt: prompt.into(),
            field: TextField::with_text(initial),
            error: None,
            note: None,
        }));
    }

    /// A path as typed in the UI, resolved: `~` is the home directory and a relative
    /// path starts from [`App::start_dir`].
    pub fn resolve(&self, typed: &str) -> PathBuf {
        resolve_path(typed, &self.start_dir)
    }

    /// Handles a message from the worker.
    pub fn receive(&mut self, event: WorkerEvent) {
        match event.kind {
            JobKind::Load => self.receive_load(event.update),
            JobKind::Search => hierarchy::receive(self, event.update),
            JobKind::Preview => preview::receive(self, event.update),
            JobKind::Sweep | JobKind::Frontier => tradeoff::receive(self, event.update),
            JobKind::Proxy => {
                super::proxy::receive(self, event.update, &|app, screen| match screen {
                    Screen::Preview => preview::start(app),
                    Screen::Tradeoff => tradeoff::start(app),
                    _ => {}
                })
            }
            JobKind::Draw | JobKind::Export | JobKind::Discard => {
                release::receive(self, event.update)
            }
        }
    }

    fn receive_load(&mut self, update: Update) {
        let LoadState::Loading {
            dir, step, read, ..
        } = &mut self.load
        else {
            return;
        };
        let dir = dir.clone();
        match update {
            Update::LoadProgress(p) => {
                // A new file: the one before it was read to its end.
                if let LoadStep::Reading {
                    file, bytes_total, ..
                } = step
                    && *file != p.file
                {
                    read.finished += *bytes_total;
                }
                *step = LoadStep::Reading {
                    file: p.file,
                    bytes_read: p.bytes_read,
                    bytes_total: p.bytes_total,
                };
            }
            Update::LoadSummarising => *step = LoadStep::Summarising,
            Update::Loaded(Ok(opened)) => {
                // Work on the previous dataset is of no use now; its results are ignored.
                for kind in [
                    JobKind::Search,
                    JobKind::Preview,
                    JobKind::Sweep,
                    JobKind::Frontier,
                    JobKind::Proxy,
                    JobKind::Draw,
                ] {
                    self.outbox.push(Command::Cancel(kind));
                }
                let super::worker::Opened { dataset, overview } = *opened;
                let dataset: Arc<Dataset> = Arc::new(dataset);
                let labels = crate::warning::Warning::of_dataset(&dataset);
                self.load = LoadState::Idle;
                let session = Session::open(dataset, overview, self.ledger.as_ref());
                // The previous dataset and its trials' histograms may hold millions of
                // regions: freed on a thread of their own, not between two frames.
                retire((
                    self.session.replace(session),
                    std::mem::take(&mut self.preview),
                ));
                self.hierarchy = Default::default();
                self.tradeoff = tradeoff::TradeoffState::for_depth(
                    self.session.as_ref().map_or(1, Session::depth),
                );
                self.release = Default::default();
                self.proxy = Default::default();
                self.budget = Default::default();
                self.dataset = Default::default();
                self.note_figures();
                self.remember(&dir);
                // Region labels that read alike: the published rows would look the same.
                if let Some(w) = labels.first() {
                    self.warn(w.to_string());
                } else if !matches!(self.message, Some((Tone::Warning | Tone::Error, _))) {
                    // A warning (a bad keymap) stays up until the next key.
                    self.info(format!("opened {}", crate::tui::widgets::path_text(&dir)));
                }
            }
            Update::Loaded(Err(message)) => {
                if self.session.is_some() {
                    self.error(format!(
                        "could not open {}: {message}",
                        crate::tui::widgets::path_text(&dir)
                    ));
                }
                self.load = LoadState::Failed { dir, message };
            }
            _ => {}
        }
    }

    /// The Dataset and Hierarchy screens show confidential figures (entities, the
    /// largest true size, true histograms): once one is on screen, a size typed into the
    /// plan is recorded as possibly read off them.
    fn note_figures(&mut self) {
        if matches!(self.screen, Screen::Dataset | Screen::Hierarchy)
            && let Some(s) = &mut self.session
        {
            s.saw_confidential_figures();
        }
    }

    /// Puts a dataset first in the recent list and saves the list.
    fn remember(&mut self, dir: &Path) {
        let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        // `a/b/` and `a/b` are one dataset.
        let absolute: PathBuf = absolute.components().collect();
        self.recent.retain(|p| *p != absolute);
        self.recent.insert(0, absolute);
        self.recent.truncate(RECENT_MAX);
        if let Some(ledger) = &self.ledger {
            let text: String = self
                .recent
                .iter()
                .map(|p| format!("{}\n", p.display()))
                .collect();
            // Directories of confidential data: private, like the ledger beside it.
            let path = ledger.home().join(RECENT_FILE);
            let written = crate::release::ledger::write_private(&path, text.as_bytes());
            if let Err(e) = written {
                self.warn(format!(
                    "{}: cannot remember recent datasets: {e}",
                    crate::tui::widgets::path_text(&path)
                ));
            }
        }
    }
}

/// Drops a value on a thread of its own: freeing the results of a census-scale run
/// (millions of small histograms) takes longer than a frame.
pub fn retire<T: Send + 'static>(value: T) {
    let spawned = std::thread::Builder::new()
        .name("coco-free".into())
        .spawn(move || drop(value));
    // Without a thread, the value was dropped with the closure: here, but dropped.
    let _ = spawned;
}

fn read_recent(home: &Path) -> Vec<PathBuf> {
    std::fs::read_to_string(home.join(RECENT_FILE))
        .map(|t| {
            t.lines()
                .filter(|l| !l.trim().is_empty())
                .map(PathBuf::from)
                .take(RECENT_MAX)
                .collect()
        })
        .unwrap_or_default()
}

/// The one place where actions change the app.
pub fn update(app: &mut App, action: Action) {
    app.message = None;
    if action == Action::Interrupt {
        // As a signal does: an undecided draw is recorded as discarded, writes in
        // progress are waited for, and coco exits with status 130.
        app.overlay = None;
        app.interrupted = true;
        app.stop();
        return;
    }
    match app.overlay.clone() {
        Some(Overlay::Help { page, scroll }) => help(app, page, scroll, action),
        Some(Overlay::Input(_)) => input(app, action),
        Some(Overlay::Picker(_)) => picker(app, action),
        Some(Overlay::Confirm(c)) => confirm(app, c, action),
        None => screen_action(app, action),
    }
}

fn screen_action(app: &mut App, action: Action) {
    match action {
        Action::Quit => {
            if matches!(
                app.release.busy,
                Some(release::Busy::Exporting { .. } | release::Busy::Discarding)
            ) {
                app.warn("the draw is being recorded in the ledger: quit again when it is done");
            } else if app.undecided_draw() {
                app.overlay = Some(Overlay::Confirm(Confirm::QuitWithDraw));
            } else {
                app.quit = true;
            }
        }
        Action::Help => {
            app.overlay = Some(Overlay::Help {
                page: HelpPage::Keys,
                scroll: 0,
            })
        }
        Action::ToggleExact => {
            app.exact_epsilon = !app.exact_epsilon;
            app.info(if app.exact_epsilon {
                "ε shown exactly"
            } else {
                "ε shown as short decimals (≈ when rounded; spent rounds up, caps round down)"
            });
        }
        Action::NextScreen => go(app, app.screen.offset(1)),
        Action::PrevScreen => go(app, app.screen.offset(-1)),
        Action::ScreenDataset => go(app, Screen::Dataset),
        Action::ScreenHierarchy => go(app, Screen::Hierarchy),
        Action::ScreenBudget => go(app, Screen::Budget),
        Action::ScreenPreview => go(app, Screen::Preview),
        Action::ScreenTradeoff => go(app, Screen::Tradeoff),
        Action::ScreenRelease => go(app, Screen::Release),
        Action::CancelLoad | Action::Cancel if app.loading() => app.cancel_load(),
        Action::OpenDataset => {
            if app.release.busy.is_some() {
                let esc = app.keymap.key(Context::Release, Action::Cancel);
                app.warn(format!(
                    "wait for the draw or export in progress to finish ({esc} cancels a draw)"
                ));
                return;
            }
            if app.undecided_draw() {
                let (a, x) = (
                    app.keymap.key(Context::Release, Action::Approve),
                    app.keymap.key(Context::Release, Action::Discard),
                );
                app.warn(format!(
                    "a drawn release is undecided: approve ({a}) or discard ({x}) it on the Release screen before opening another dataset"
                ));
                return;
            }
            app.overlay = Some(Overlay::Picker(Picker {
                field: TextField::default(),
                selected: None,
                error: None,
                note: None,
            }));
        }
        other if app.loading() => {
            if !matches!(other, Action::Insert(_)) {
                let esc = app.keymap.key(Context::Global, Action::CancelLoad);
                app.warn(format!(
                    "a dataset is loading: wait for it, or press {esc} to stop loading"
                ));
            }
        }
        other => {
            if app.session.is_none() {
                if !matches!(other, Action::Insert(_)) {
                    let o = app.keymap.key(Context::Global, Action::OpenDataset);
                    app.warn(format!("no dataset is open: press {o} to open one"));
                }
                return;
            }
            match app.screen {
                Screen::Dataset => dataset::update(app, other),
                Screen::Hierarchy => hierarchy::update(app, other),
                Screen::Budget => budget::update(app, other),
                Screen::Preview => preview::update(app, other),
                Screen::Tradeoff => tradeoff::update(app, other),
                Screen::Release => release::update(app, other),
            }
        }
    }
}

/// Shows a screen. The screens that show the ledger read it again: another coco may
/// have drawn meanwhile.
fn go(app: &mut App, screen: Screen) {
    app.screen = screen;
    app.note_figures();
    if matches!(screen, Screen::Budget | Screen::Release) {
        let ledger = app.ledger.clone();
        if let Some(s) = &mut app.session {
            s.refresh_ledger(ledger.as_ref());
        }
    }
}

fn help(app: &mut App, page: HelpPage, scroll: usize, action: Action) {
    let help = |page, scroll| Some(Overlay::Help { page, scroll });
    app.overlay = match action {
        Action::Close => None,
        Action::Glossary => match page {
            HelpPage::Keys => help(HelpPage::Glossary, 0),
            HelpPage::Glossary => help(HelpPage::Keys, 0),
        },
        Action::Up => help(page, scroll.saturating_sub(1)),
        Action::Down => help(page, scroll + 1),
        Action::PageUp => help(page, scroll.saturating_sub(10)),
        Action::PageDown => help(page, scroll + 10),
        _ => help(page, scroll),
    };
}

/// The edit a key asks of a text field, if it is one.
fn edit_of(action: Action) -> Option<Edit> {
    Some(match action {
        Action::Insert(c) => Edit::Insert(c),
        Action::Backspace => Edit::Backspace,
        Action::Delete => Edit::Delete,
        Action::CursorLeft => Edit::Left,
        Action::CursorRight => Edit::Right,
        Action::CursorHome => Edit::Home,
        Action::CursorEnd => Edit::End,
        Action::WordLeft => Edit::WordLeft,
        Action::WordRight => Edit::WordRight,
        Action::DeleteWord => Edit::DeleteWord,
        Action::DeleteToStart => Edit::DeleteToStart,
        Action::DeleteToEnd => Edit::DeleteToEnd,
        _ => return None,
    })
}

/// Edits shared by the text field and the picker; `true` when the action was an edit.
fn edit(app: &mut App, action: Action) -> bool {
    let Some(edit) = edit_of(action) else {
        return false;
    };
    let Some(field) = app.field_mut() else {
        return false;
    };
    field.edit(edit);
    if let Some(Overlay::Input(i)) = &mut app.overlay {
        i.note = None;
    }
    true
}

/// Tab in a path field: the text completed, or what could follow.
fn complete(app: &App, field: &TextField) -> Result<(TextField, Option<String>), String> {
    let typed = field.text();
    let Some(done) = complete_path(typed, &app.start_dir) else {
        return Err(format!(
            "nothing matches {typed:?} in {}",
            app.resolve(typed)
                .parent()
                .map_or_else(String::new, |p| p.display().to_string())
        ));
    };
    let note = (!done.candidates.is_empty()).then(|| {
        const SHOWN: usize = 8;
        let mut text = done.candidates[..done.candidates.len().min(SHOWN)].join("  ");
        if done.candidates.len() > SHOWN {
            text.push_str(&format!("  … ({} in all)", done.candidates.len()));
        }
        text
    });
    Ok((TextField::with_text(done.text), note))
}

fn input(app: &mut App, action: Action) {
    if edit(app, action) {
        return;
    }
    match action {
        Action::Cancel => app.overlay = None,
        Action::Complete => {
            let Some(Overlay::Input(overlay)) = &app.overlay else {
                return;
            };
            if !overlay.purpose.is_path() {
                return;
            }
            let result = complete(app, &overlay.field);
            if let Some(Overlay::Input(overlay)) = &mut app.overlay {
                match result {
                    Ok((field, note)) => {
                        overlay.field = field;
                        overlay.note = note;
                        overlay.error = None;
                    }
                    Err(e) => overlay.error = Some(e),
                }
            }
        }
        Action::Submit => {
            let Some(Overlay::Input(overlay)) = app.overlay.take() else {
                return;
            };
            let text = overlay.field.text().trim().to_string();
            match submit(app, &overlay.purpose, &text) {
                Ok(()) => {}
                Err(e) => {
                    app.overlay = Some(Overlay::Input(InputOverlay {
                        error: Some(e),
                        ..overlay
                    }));
                }
            }
        }
        _ => {}
    }
}

/// Applies a submitted text; an error keeps the field open with the message.
fn submit(app: &mut App, purpose: &InputPurpose, text: &str) -> Result<(), String> {
    match purpose {
        InputPurpose::Search => hierarchy::search(app, text),
        InputPurpose::PreviewTrials => {
            app.preview.trials = parse_trials(text)?;
            Ok(())
        }
        InputPurpose::TradeoffTrials => {
            app.tradeoff.trials = parse_trials(text)?;
            Ok(())
        }
        InputPurpose::ExportDir => release::export(app, text),
        InputPurpose::Proxy => super::proxy::submit(app, text),
        _ => budget::submit(app, purpose, text),
    }
}

/// Trials: a whole number from 1 to 1000.
fn parse_trials(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(n),
        _ => Err(format!(
            "{text:?} is not a number of trials: expected a whole number from 1 to 1000"
        )),
    }
}

fn picker(app: &mut App, action: Action) {
    if edit(app, action) {
        if let Some(Overlay::Picker(p)) = &mut app.overlay {
            p.selected = None;
            p.error = None;
            p.note = None;
        }
        return;
    }
    let recent = app.recent.clone();
    let Some(Overlay::Picker(p)) = &mut app.overlay else {
        return;
    };
    match action {
        Action::Cancel => app.overlay = None,
        Action::Up | Action::Down if !recent.is_empty() => {
            let last = recent.len() - 1;
            let next = match (p.selected, action) {
                (None, Action::Down) => 0,
                (None, _) => last,
                (Some(i), Action::Down) => (i + 1).min(last),
                (Some(i), _) => i.saturating_sub(1),
            };
            p.selected = Some(next);
            p.field = TextField::with_text(recent[next].display().to_string());
        }
        Action::Complete => {
            let field = p.field.clone();
            let result = complete(app, &field);
            let Some(Overlay::Picker(p)) = &mut app.overlay else {
                return;
            };
            match result {
                Ok((field, note)) => {
                    p.field = field;
                    p.note = note;
                    p.error = None;
                }
                Err(e) => p.error = Some(e),
            }
        }
        Action::Submit => {
            let text = p.field.text().trim().to_string();
            if text.is_empty() {
                p.error = Some("type the path of a dataset directory".into());
                return;
            }
            app.overlay = None;
            let dir = app.resolve(&text);
            app.open(dir);
        }
        _ => {}
    }
}

fn confirm(app: &mut App, question: Confirm, action: Action) {
    match action {
        Action::Yes => {
            app.overlay = None;
            match question {
                Confirm::QuitWithDraw => {
                    if release::discard(app, "discarded when quitting the TUI") {
                        app.quit_after_discard = true;
                    }
                }
                Confirm::Discard => {
                    release::discard(app, "discarded by the operator");
                }
                Confirm::ApplyConfidentialRecommendation => {
                    tradeoff::apply_recommendation_now(app);
                }
                Confirm::OverwritePlan(path) => budget::save(app, &path),
            }
        }
        Action::No => {
            app.overlay = None;
            // Back to the file name, to choose another.
            if let Confirm::OverwritePlan(path) = question {
                budget::ask_save(app, &path.display().to_string());
            }
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "app_tests.rs"]
mod tests;
