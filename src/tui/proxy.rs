//! Choosing what the Preview and Trade-off screens measure against: the confidential
//! data, or a public proxy with the same hierarchy ([`crate::proxy`]). Tuned on a
//! proxy, a plan stays public; tuned on confidential previews, it is recorded so.
//!
//! The screens default to public data: until the operator chooses (`p`), the first run
//! opens the synthetic proxy and runs on it. The proxy is built or loaded in the
//! background ([`Job::Proxy`]); a run asked for meanwhile (`r`) waits for it and starts
//! once it is open — never on the confidential data in the meantime (a proxy that
//! fails to open drops the runs waiting for it, with a message). The confidential data
//! is used only when the operator chooses it (`p`, `none`), which is said each time.

use std::sync::Arc;

use ratatui::style::Style;

use crate::proxy::ProxySpec;
use crate::tradeoff::PreviewData;

use super::action::{Action, Context};
use super::app::{App, Command, InputPurpose, Screen};
use super::theme;
use super::worker::{Job, Update};

/// A proxy being built or loaded: what was asked for, and the runs waiting for it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxyState {
    pub opening: Option<String>,
    /// The screens whose run (`r`) waits for the proxy to open, in the order asked.
    pub queued: Vec<Screen>,
}

/// Whether a run of `screen` may start now. Otherwise it is queued until the proxy
/// being opened is ready (when none is chosen, the synthetic one is opened): a run
/// never goes to the confidential data unless the operator chose it.
pub fn ready_or_queue(app: &mut App, screen: Screen) -> bool {
    let Some(session) = &app.session else {
        return false;
    };
    if app.proxy.opening.is_none() && session.target_ready() {
        return true;
    }
    if app.proxy.opening.is_none() {
        // Nothing chosen: previews default to the public synthetic proxy.
        let dataset = session.dataset.clone();
        app.proxy.opening = Some("synthetic".into());
        app.outbox.push(Command::Start(Job::Proxy {
            spec: ProxySpec::Synthetic,
            dataset,
            ledger: app.ledger.clone(),
        }));
    }
    if !app.proxy.queued.contains(&screen) {
        app.proxy.queued.push(screen);
    }
    let p = app.keymap.key(Context::Preview, Action::ChooseProxy);
    app.info(format!(
        "opening the proxy {}…: the run starts on it once it is open ({p} chooses other data)",
        app.proxy.opening.as_deref().unwrap_or("")
    ));
    false
}

/// Asks which data previews should run on.
pub fn ask(app: &mut App) {
    let current = match app.session.as_ref().and_then(|s| s.proxy.as_ref()) {
        Some(_) => "none".to_string(),
        None => "synthetic".to_string(),
    };
    app.ask(
        InputPurpose::Proxy,
        "Preview on: \"synthetic\" (a public proxy drawn from each region's public G), a proxy dataset's directory with the same hierarchy (e.g. an earlier census), or \"none\" for the confidential data:",
        &current,
    );
}

/// Starts building or loading the proxy typed, or goes back to the confidential data.
pub fn submit(app: &mut App, text: &str) -> Result<(), String> {
    let session = app.session.as_mut().ok_or("no dataset is open")?;
    let text = text.trim();
    if text.is_empty() {
        return Err(
            "type \"synthetic\", a dataset directory, or \"none\" for the confidential data".into(),
        );
    }
    if text.eq_ignore_ascii_case("none") || text.eq_ignore_ascii_case("confidential") {
        session.set_proxy(None);
        app.proxy.opening = None;
        let dropped = !std::mem::take(&mut app.proxy.queued).is_empty();
        app.outbox
            .push(Command::Cancel(super::worker::JobKind::Proxy));
        app.warn(format!(
            "previews now run on the CONFIDENTIAL data: a plan tuned on them is recorded as confidential-previews{}",
            if dropped {
                " (the run that waited for the proxy was not started: press r to run it)"
            } else {
                ""
            }
        ));
        return Ok(());
    }
    let spec = ProxySpec::parse(text);
    app.proxy.opening = Some(text.to_string());
    app.outbox.push(Command::Start(Job::Proxy {
        spec,
        dataset: session.dataset.clone(),
        ledger: app.ledger.clone(),
    }));
    app.info(format!("opening the proxy {text}…"));
    Ok(())
}

/// Takes the opened proxy (or the error) and starts the runs that waited for it, with
/// `start` (the app's dispatch to the screen that runs).
pub fn receive(app: &mut App, update: Update, start: &dyn Fn(&mut App, Screen)) {
    let Update::ProxyOpened(result) = update else {
        return;
    };
    let Some(asked) = app.proxy.opening.take() else {
        return;
    };
    let queued = std::mem::take(&mut app.proxy.queued);
    match result {
        Ok(proxy) => {
            let label = proxy.label.clone();
            let mut tuning = None;
            if let Some(s) = &mut app.session {
                s.set_proxy(Some(Arc::new(*proxy)));
                tuning = Some(s.plan.tuning());
            }
            // The runs asked for while it opened, on it.
            for &screen in &queued {
                start(app, screen);
            }
            app.info(format!(
                "previews and the trade-off search now run on the {label} (public data){}{}",
                if queued.is_empty() { "" } else { "; the run asked for has started" },
                tuning.map_or(String::new(), |t| format!("; the plan's tuning: {t}"))
            ));
        }
        Err(e) => app.error(format!(
            "{asked}: {e}{}",
            if queued.is_empty() {
                ""
            } else {
                "; the run that waited for it was not started (it never runs on the confidential data unless chosen: p, none)"
            }
        )),
    }
}

/// What the next preview or search runs on, in words, with its style and the key that
/// changes it.
pub fn target_text(app: &App, context: Context) -> (String, Style) {
    let key = app.keymap.key(context, Action::ChooseProxy);
    let Some(session) = &app.session else {
        return (String::new(), Style::new());
    };
    if let Some(opening) = &app.proxy.opening {
        return (format!("opening the proxy {opening}…"), theme::dim());
    }
    match (&session.proxy, session.confidential_chosen) {
        (None, true) => (
            format!("data: CONFIDENTIAL ({key}: proxy)"),
            theme::confidential(),
        ),
        (None, false) => (
            format!("data: synthetic proxy, public (opens at the first run; {key}: other data)"),
            theme::ok(),
        ),
        (Some(p), _) => (format!("data: {} ({key})", p.dataset.name()), theme::ok()),
    }
}

/// The banner over figures measured on the confidential data.
pub const CONFIDENTIAL_BANNER: &str = "CONFIDENTIAL DIAGNOSTICS: errors measured against the true data, for the operator's decision only. Not differentially private: never publish them.";

/// The banner over figures measured on `data`.
pub fn banner(data: &PreviewData) -> (String, Style) {
    match data {
        PreviewData::Confidential => (CONFIDENTIAL_BANNER.to_string(), theme::confidential()),
        PreviewData::Proxy { label, .. } => (
            format!(
                "PUBLIC PROXY: errors measured against the {label}, not the confidential data. A plan tuned on them stays public."
            ),
            theme::ok(),
        ),
    }
}
