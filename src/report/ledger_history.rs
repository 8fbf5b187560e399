//! The ledger's history of the dataset a release was drawn from, for the internal
//! report: every draw of that dataset (drawn, written, discarded: each one spent its
//! budget) with what had been spent after it, against the cap that binds. Read through
//! the ledger's own API, as `coco ledger` reads it, and fail closed: a ledger with any
//! unreadable line, or one its anchor does not vouch for, gives no history.

use crate::privacy::Loss;
use crate::privacy::measure::rho_of_epsilon;
use crate::release::ledger::{CapLimit, Ledger, format_time};

use super::ReportError;

/// One draw of the dataset.
#[derive(Clone, Debug, PartialEq)]
pub struct DrawRow {
    pub time: String,
    pub id: String,
    pub status: &'static str,
    /// The draw's budget, exactly, with its symbol.
    pub loss: String,
    /// What the dataset had spent after this draw, in the history's unit.
    pub spent_after: f64,
    pub tuning: String,
    pub output: String,
}

/// Every draw of the release's dataset and where the spending stands.
#[derive(Clone, Debug, PartialEq)]
pub struct LedgerHistory {
    /// The ledger file read.
    pub ledger: std::path::PathBuf,
    /// The dataset's key (its content digest) and the directory the ledger records.
    pub dataset: String,
    pub dataset_dir: String,
    /// The release's own draw (the manifest's `ledger_entry`).
    pub this_draw: String,
    pub draws: Vec<DrawRow>,
    /// `ε` or `ρ`: the unit spending is counted in (a zCDP draw makes it ρ, pure draws
    /// counting as ρ = ε²/2).
    pub symbol: &'static str,
    /// What has been spent, exactly, as the ledger says it.
    pub spent: String,
    /// The cap that binds, with its unit, and its value in `symbol` where it is one.
    pub cap: Option<(String, Option<f64>)>,
}

/// The history of the dataset drawn by `draw_id`, from `ledger`.
pub fn history(ledger: &Ledger, draw_id: &str) -> Result<LedgerHistory, ReportError> {
    let (read, _anchor) = ledger.read_checked()?;
    let summary = ledger.summary(&read)?;
    let draws = read.draws();
    let this = draws
        .iter()
        .find(|e| e.id == draw_id)
        .ok_or_else(|| ReportError::NotInLedger {
            ledger: ledger.path(),
            draw: draw_id.to_string(),
        })?;
    let key = this.dataset.key().to_string();
    let spend = summary.iter().find(|d| d.dataset == key);
    let in_rho = spend.is_some_and(|d| d.unit == "rho");
    let mut spent_after = 0.0;
    let rows: Vec<DrawRow> = draws
        .iter()
        .filter(|e| e.dataset.key() == key)
        .map(|e| {
            spent_after += match &e.total {
                Loss::Pure(eps) if in_rho => rho_of_epsilon(eps).to_f64(),
                Loss::Pure(eps) => eps.to_f64(),
                Loss::Zcdp(rho) => rho.to_f64(),
            };
            DrawRow {
                time: format_time(e.time),
                id: e.id.clone(),
                status: e.status.label(),
                loss: e.total.labelled(),
                spent_after,
                tuning: e
                    .tuning
                    .map_or("unknown", |t| crate::wire::Named::name(t))
                    .to_string(),
                output: e.output.clone().unwrap_or_default(),
            }
        })
        .collect();
    let cap = spend.and_then(|d| d.cap.as_ref()).map(|c| {
        let value = match (&c.cap, in_rho) {
            (CapLimit::Epsilon(e), false) => Some(e.to_f64()),
            (CapLimit::Rho(r), true) => Some(r.to_f64()),
            _ => None,
        };
        (c.cap.labelled(), value)
    });
    Ok(LedgerHistory {
        ledger: ledger.path(),
        dataset: key.clone(),
        dataset_dir: this.dataset.dir.clone(),
        this_draw: draw_id.to_string(),
        draws: rows,
        symbol: if in_rho { "ρ" } else { "ε" },
        spent: spend.map_or_else(String::new, |d| {
            if in_rho {
                d.spent_rho.clone()
            } else {
                d.spent.clone()
            }
        }),
        cap,
    })
}
