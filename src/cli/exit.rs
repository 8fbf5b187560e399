//! How `coco` exits: the codes scripts rely on, and the code for an error.

use coco::data::LoadError;
use coco::privacy::EpsilonError;
use coco::release::ledger::LedgerError;
use coco::release::outputs::export::ExportError;
use coco::release::pipeline::resources::ResourceError;
use coco::release::plan::PlanError;
use coco::release::transaction::{ApproveError, TransactionError};

/// How `coco` exits; scripts may rely on these.
pub const EXIT_CODES: &str = "Exit codes:
  0  success
  1  any other failure (reading or writing files, an internal error)
  2  usage error: a bad command line (an unknown flag, a flag's value coco cannot use, flags that do not go together)
  3  input error (dataset, plan, configuration or output path)
  4  refused by policy (a privacy-budget cap, a ledger that needs repair or lost anchored lines, a seeded release without --not-private, a total ε above 20 without --allow-large-epsilon)
  5  refused for resources (not enough memory for the plan, or more noise samples than a run may draw)
  6  the release failed its checks (not written; its ε is spent), or coco verify found a problem
  130  stopped by Ctrl-C (128 + the signal's number for other stopping signals)";

/// Exit codes (see [`EXIT_CODES`]).
pub mod codes {
    pub const FAILURE: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const INPUT: u8 = 3;
    pub const POLICY: u8 = 4;
    pub const RESOURCES: u8 = 5;
    pub const CHECKS: u8 = 6;
}

/// A bad command line that clap's parsers could not see: flags that do not go together,
/// or a flag's value that breaks a rule of what it makes (a `--tail` not below
/// `--max-size`, one `--budgets` value per level). Exit code 2, as clap's own refusals
/// of a value: every bad flag value exits 2; a bad file exits 3.
#[derive(Debug, thiserror::Error)]
#[error("{flag}: {message}")]
pub struct FlagError {
    pub flag: String,
    pub message: String,
}

/// An exit code for a failure already reported.
#[derive(Debug)]
pub struct ExitWith(pub u8);

impl std::fmt::Display for ExitWith {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}", self.0)
    }
}

impl std::error::Error for ExitWith {}

/// The exit code for an error: the first cause in its chain that says.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    use coco::release::pipeline::draw::RunError;
    fn run(e: &RunError) -> u8 {
        match e {
            RunError::Resources(_) | RunError::ResourcesAfterMaxSize { .. } => codes::RESOURCES,
            _ => codes::FAILURE,
        }
    }
    fn export(e: &ExportError) -> u8 {
        match e {
            ExportError::ChecksFailed { .. } => codes::CHECKS,
            ExportError::OutputExists { .. } | ExportError::BadOutput { .. } => codes::INPUT,
            ExportError::Io { .. } | ExportError::Uncertainty(_) => codes::FAILURE,
        }
    }
    fn ledger(e: &LedgerError) -> u8 {
        match e {
            e if e.is_policy() => codes::POLICY,
            LedgerError::Config { .. } | LedgerError::CapKey { .. } => codes::INPUT,
            _ => codes::FAILURE,
        }
    }
    for cause in e.chain() {
        if let Some(ExitWith(code)) = cause.downcast_ref() {
            return *code;
        }
        if cause.downcast_ref::<FlagError>().is_some() {
            return codes::USAGE;
        }
        if let Some(t) = cause.downcast_ref::<TransactionError>() {
            return match t {
                TransactionError::Ledger(l) => ledger(l),
                TransactionError::Output(x) => export(x),
                TransactionError::EmptyPlan => codes::INPUT,
                TransactionError::SeededNotAllowed | TransactionError::LargeEpsilon { .. } => {
                    codes::POLICY
                }
                TransactionError::Draw { error, .. } => run(error),
            };
        }
        if let Some(a) = cause.downcast_ref::<ApproveError>() {
            return match a {
                ApproveError::Refused { error, .. } | ApproveError::Failed { error, .. } => {
                    export(error)
                }
            };
        }
        if let Some(x) = cause.downcast_ref::<ExportError>() {
            return export(x);
        }
        if let Some(v) = cause.downcast_ref::<coco::release::outputs::verify::VerifyError>() {
            use coco::release::outputs::verify::VerifyError;
            return match v {
                VerifyError::Io { .. } | VerifyError::Manifest { .. } => codes::INPUT,
                VerifyError::Ledger(l) => ledger(l),
            };
        }
        if let Some(r) = cause.downcast_ref::<coco::report::ReportError>() {
            use coco::report::ReportError;
            return match r {
                ReportError::InsideRelease { .. } => codes::POLICY,
                ReportError::Ledger(l) => ledger(l),
                ReportError::Write { .. } => codes::FAILURE,
                _ => codes::INPUT,
            };
        }
        if let Some(l) = cause.downcast_ref::<LedgerError>() {
            return ledger(l);
        }
        if let Some(r) = cause.downcast_ref::<RunError>() {
            return run(r);
        }
        // Transparent: its cause is not in the chain of its own.
        if let Some(coco::preview::PreviewError::Run(r)) = cause.downcast_ref() {
            return run(r);
        }
        if cause.downcast_ref::<ResourceError>().is_some() {
            return codes::RESOURCES;
        }
        if let Some(c) = cause.downcast_ref::<coco::convert::ConvertError>() {
            return match c {
                coco::convert::ConvertError::Failed { .. } => codes::FAILURE,
                _ => codes::INPUT,
            };
        }
        if let Some(g) = cause.downcast_ref::<coco::generate::GenerateError>() {
            use coco::generate::GenerateError;
            return match g {
                GenerateError::Io { .. } | GenerateError::Csv { .. } => codes::FAILURE,
                // Flags that do not go together: a bad command line.
                GenerateError::ScaleNotApplicable | GenerateError::BadScale { .. } => codes::USAGE,
                // Where to write, or what to write: the command line's input.
                _ => codes::INPUT,
            };
        }
        if cause.downcast_ref::<LoadError>().is_some()
            || cause.downcast_ref::<PlanError>().is_some()
            || cause.downcast_ref::<EpsilonError>().is_some()
            || cause.downcast_ref::<coco::proxy::ProxyError>().is_some()
            || cause
                .downcast_ref::<coco::release::outputs::margins::published::PublishedError>()
                .is_some()
            || cause
                .downcast_ref::<coco::release::margins::sums::RegionsError>()
                .is_some()
        {
            return codes::INPUT;
        }
    }
    codes::FAILURE
}
