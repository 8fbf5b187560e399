//! The app and its worker together: keys in, actions applied, jobs started, results
//! received. The terminal loop ([`super::run`]) and the tests drive the same
//! [`Runtime`], the tests without a terminal.

use std::time::{Duration, Instant};

use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::{Frame, Terminal};

use super::action::Action;
use super::app::{App, AppOptions, Command, update};
use super::keymap::Key;
use super::ui;
use super::worker::{Job, Worker, WorkerEvent};

/// Answers a job without running it ([`Runtime::answer_with`]): the event the job would
/// send when done, or `None` to run it.
pub type Answer = Box<dyn FnMut(&Job) -> Option<WorkerEvent>>;

pub struct Runtime {
    pub app: App,
    worker: Worker,
    answer: Option<Answer>,
}

impl Runtime {
    /// Creates the app and starts what it asks for (loading the dataset).
    pub fn new(options: AppOptions) -> Runtime {
        let mut rt = Runtime {
            app: App::new(options),
            worker: Worker::new(),
            answer: None,
        };
        rt.flush();
        rt
    }

    /// Handles a key; `false` when nothing is bound to it here.
    pub fn key(&mut self, key: Key) -> bool {
        match self.app.action_for(key) {
            Some(action) => {
                self.act(action);
                true
            }
            None => false,
        }
    }

    /// Applies an action and starts the work it asks for.
    pub fn act(&mut self, action: Action) {
        update(&mut self.app, action);
        self.flush();
    }

    /// Types text into the field being edited.
    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.act(Action::Insert(c));
        }
    }

    /// Answers the jobs `answer` knows instead of running them (for tests that check how
    /// the screens show results, with results made for them); the others run.
    pub fn answer_with(&mut self, answer: Answer) {
        self.answer = Some(answer);
    }

    fn flush(&mut self) {
        // An answered job's event may start more jobs: until none is left.
        while !self.app.outbox.is_empty() {
            for command in std::mem::take(&mut self.app.outbox) {
                match command {
                    Command::Start(job) => {
                        match self.answer.as_mut().and_then(|answer| answer(&job)) {
                            Some(event) => self.app.receive(event),
                            None => self.worker.start(job),
                        }
                    }
                    Command::Cancel(kind) => self.worker.cancel(kind),
                }
            }
        }
    }

    /// Applies every message waiting from the worker; `true` if there was any.
    pub fn pump(&mut self) -> bool {
        let mut any = false;
        while let Some(event) = self.worker.try_recv() {
            self.app.receive(event);
            any = true;
        }
        self.flush();
        any
    }

    /// Applies messages until no job is running, or `timeout` passes (`false`).
    pub fn settle(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while self.worker.busy() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            if let Some(event) = self.worker.recv(left.min(Duration::from_millis(100))) {
                self.app.receive(event);
                self.flush();
            }
        }
        self.pump();
        true
    }

    /// The process is being stopped: see [`App::stop`].
    pub fn stop(&mut self) {
        self.app.stop();
        self.flush();
    }

    /// Whether background work is running.
    pub fn busy(&self) -> bool {
        self.worker.busy()
    }

    pub fn render(&self, frame: &mut Frame) {
        ui::render(frame, &self.app);
    }

    /// The frame at a given size, drawn off-screen (for tests and text captures).
    pub fn buffer(&self, width: u16, height: u16) -> Buffer {
        let mut terminal =
            Terminal::new(TestBackend::new(width, height)).expect("a test backend never fails");
        terminal
            .draw(|frame| self.render(frame))
            .expect("a test backend never fails");
        terminal.backend().buffer().clone()
    }

    /// The frame as text: one line per row, trailing spaces removed.
    pub fn text(&self, width: u16, height: u16) -> String {
        buffer_text(&self.buffer(width, height))
    }

    /// Stops what can be stopped and waits for ledger writes to finish.
    pub fn shutdown(&mut self) {
        self.worker.shutdown();
    }
}

/// The session ends: a draw the operator has seen but not decided on is recorded as
/// discarded (its ε is spent), and ledger writes are waited for.
impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop();
        self.worker.shutdown();
    }
}

/// A buffer's text, one line per row, trailing spaces removed.
pub fn buffer_text(buffer: &Buffer) -> String {
    let area = buffer.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut line = String::new();
        for x in area.left()..area.right() {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
