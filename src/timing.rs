//! Where the time of a long run goes, for operators and benchmarks. Each phase of a
//! release (loading, measuring, the consistency step's passes, checks, writing) is a
//! `tracing` span with target [`TARGET`], and figures about a phase (sizes, counts) are
//! events with that target. The library prints nothing: a program that wants the
//! report installs [`report_to_stderr`] (the `coco` binary does when the environment
//! variable `COCO_TIMING` is set), which prints each phase's wall time and the process's
//! peak memory so far when the phase ends.

use std::borrow::Cow;
use std::time::Instant;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

pub use crate::units::{readable, time_left};

/// The target of coco's phase spans and timing events.
pub const TARGET: &str = "coco::timing";

/// A phase being timed: it ends when dropped (or at [`Phase::done`]).
pub struct Phase {
    _span: tracing::Span,
}

/// Starts a phase (nothing is measured unless a subscriber listens).
pub fn phase(name: impl Into<Cow<'static, str>>) -> Phase {
    let name = name.into();
    Phase {
        _span: tracing::info_span!(target: TARGET, "phase", name = %name),
    }
}

impl Phase {
    /// Ends the phase now.
    pub fn done(self) {}
}

/// Whether anyone listens to timing figures (to skip computing a costly one).
pub fn enabled() -> bool {
    tracing::enabled!(target: TARGET, tracing::Level::INFO)
}

/// A figure about a phase (sizes, counts).
pub fn note(text: &str) {
    tracing::info!(target: TARGET, "{text}");
}

/// Prints coco's phases and figures on standard error: `timing: <phase> <seconds> s
/// peak <memory>` as each phase ends, `timing: <figure>` for each figure. Installs a
/// process-wide subscriber; does nothing if one is installed already.
pub fn report_to_stderr() {
    let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry().with(Report));
}

/// The subscriber layer of [`report_to_stderr`].
struct Report;

/// When a phase started, and its name.
struct Started {
    name: String,
    at: Instant,
}

/// Reads one field of a span or event as text.
struct FieldText {
    field: &'static str,
    text: String,
}

impl Visit for FieldText {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == self.field {
            self.text = format!("{value:?}");
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == self.field {
            self.text = value.to_string();
        }
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Report {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().target() != TARGET {
            return;
        }
        let mut name = FieldText {
            field: "name",
            text: String::new(),
        };
        attrs.record(&mut name);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Started {
                name: name.text,
                at: Instant::now(),
            });
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let extensions = span.extensions();
        if let Some(started) = extensions.get::<Started>() {
            eprintln!(
                "timing: {:<28} {:>9.3} s   peak {}",
                started.name,
                started.at.elapsed().as_secs_f64(),
                peak_memory().map_or("?".into(), crate::units::bytes)
            );
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if event.metadata().target() != TARGET {
            return;
        }
        let mut message = FieldText {
            field: "message",
            text: String::new(),
        };
        event.record(&mut message);
        eprintln!("timing: {}", message.text);
    }
}

/// The process's peak resident memory (`VmHWM` in `/proc/self/status`), where known.
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line["VmHWM:".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    kb.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusty_fork::rusty_fork_test;

    // tracing caches whether anyone listens per call site, for the whole process: other
    // tests' threads registering the same call sites while this test's scoped
    // subscriber is installed could leave it a stale answer (it lost an event 1 time in
    // about 12). A process of its own has no other threads.
    rusty_fork_test! {
        #[test]
        fn phases_and_figures_reach_a_listening_subscriber_and_nothing_else() {
            use std::sync::{Arc, Mutex};
            // A layer that keeps what Report would print, for this thread only.
            struct Keep(Arc<Mutex<Vec<String>>>);
            impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Keep {
                fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
                    let mut name = FieldText {
                        field: "name",
                        text: String::new(),
                    };
                    attrs.record(&mut name);
                    self.0.lock().unwrap().push(format!("phase {}", name.text));
                }
                fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
                    let mut message = FieldText {
                        field: "message",
                        text: String::new(),
                    };
                    event.record(&mut message);
                    self.0.lock().unwrap().push(message.text);
                }
            }
            // Nobody listens: nothing to compute.
            assert!(!enabled());
            let kept = Arc::new(Mutex::new(Vec::new()));
            let subscriber = tracing_subscriber::registry().with(Keep(kept.clone()));
            tracing::subscriber::with_default(subscriber, || {
                assert!(enabled());
                let p = phase(format!("write counts.{}", "csv"));
                note("12 runs joined");
                p.done();
            });
            assert_eq!(
                *kept.lock().unwrap(),
                ["phase write counts.csv", "12 runs joined"]
            );
        }
    }
}
