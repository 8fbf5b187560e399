//! Choosing what the Preview and Trade-off screens measure against: the confidential
//! data, or a public proxy with the same hierarchy ([`crate::proxy`]). Tuned on a
//! proxy, a plan stays public; tuned on confidential previews, it is recorded so.
//!
//! The proxy is built or loaded in the background ([`Job::Proxy`]); until it is ready
//! the screens keep using what they used before.

use std::sync::Arc;

use ratatui::style::Style;

use crate::proxy::ProxySpec;
use crate::tradeoff::PreviewData;

use super::action::{Action, Context};
use super::app::{App, Command, InputPurpose};
use super::theme;
use super::worker::{Job, Update};

/// A proxy being built or loaded: what was asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxyState {
    pub opening: Option<String>,
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
        app.outbox
            .push(Command::Cancel(super::worker::JobKind::Proxy));
        app.warn("previews now run on the CONFIDENTIAL data: a plan tuned on them is recorded as confidential-previews");
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

pub fn receive(app: &mut App, update: Update) {
    let Update::ProxyOpened(result) = update else {
        return;
    };
    let Some(asked) = app.proxy.opening.take() else {
        return;
    };
    match result {
        Ok(proxy) => {
            let label = proxy.label.clone();
            if let Some(s) = &mut app.session {
                s.set_proxy(Some(Arc::new(*proxy)));
            }
            app.info(format!(
                "previews and the trade-off search now run on the {label}: public tuning"
            ));
        }
        Err(e) => app.error(format!("{asked}: {e}")),
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
    match &session.proxy {
        None => (
            format!("data: CONFIDENTIAL ({key}: proxy)"),
            theme::confidential(),
        ),
        Some(p) => (format!("data: {} ({key})", p.dataset.name()), theme::ok()),
    }
}

/// The banner over figures measured on `data`.
pub fn banner(data: &PreviewData) -> (String, Style) {
    match data {
        PreviewData::Confidential => (
            super::screens::preview::BANNER.to_string(),
            theme::confidential(),
        ),
        PreviewData::Proxy { label } => (
            format!(
                "PUBLIC PROXY: errors measured against the {label}, not the confidential data. A plan tuned on them stays public."
            ),
            theme::ok(),
        ),
    }
}
