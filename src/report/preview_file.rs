//! A saved preview or search, as `coco preview … --json` and `coco preview … --sweep
//! --json` write it, read for the internal report. Only the fields the report shows are
//! read; others are ignored, so that fields added later (each level's `mae_per_cell`
//! and `relative_error`, shown when present) need no change here.

use std::path::Path;

use serde::Deserialize;

use super::ReportError;

/// A mean over trials and its standard error.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct Estimate {
    pub mean: f64,
    pub se: f64,
}

/// Where a preview's errors were measured.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct DataLabel {
    pub kind: String,
    /// A proxy's name (absent for the confidential data).
    #[serde(default)]
    pub label: Option<String>,
}

impl DataLabel {
    /// What the errors were measured on, in words.
    pub fn describe(&self) -> String {
        match &self.label {
            Some(label) => label.clone(),
            None if self.kind == "confidential" => "the confidential data".into(),
            None => self.kind.clone(),
        }
    }
}

/// One consistency variant's error.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Variant {
    pub variant: String,
    pub emd: Estimate,
}

/// One level of a preview.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct PreviewLevel {
    pub level: String,
    #[serde(default)]
    pub epsilon: Option<String>,
    #[serde(default)]
    pub rho: Option<String>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub independent: Option<Estimate>,
    #[serde(default)]
    pub consistent: Vec<Variant>,
    #[serde(default)]
    pub bottom_up: Option<Estimate>,
    #[serde(default)]
    pub omniscient: Option<f64>,
    /// The published estimate's mean absolute error per cell (when the preview gives it).
    #[serde(default)]
    pub mae_per_cell: Option<Estimate>,
    /// Its error relative to the regions' groups (when the preview gives it).
    #[serde(default)]
    pub relative_error: Option<Estimate>,
}

/// `coco preview --json`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Preview {
    #[serde(default)]
    pub notice: String,
    pub data: DataLabel,
    #[serde(default)]
    pub trials: Option<u64>,
    #[serde(default)]
    pub total_epsilon: Option<String>,
    pub levels: Vec<PreviewLevel>,
}

/// A split of the budget on the search's frontier: `x` is the leaves' share.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Point {
    pub x: f64,
    pub budgets: Vec<String>,
    pub consistent: Vec<Estimate>,
}

/// A plan the search compared.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Candidate {
    pub x: f64,
    pub budgets: Vec<String>,
    pub methods: Vec<String>,
    pub consistent: Vec<Estimate>,
    #[serde(default)]
    pub origin: String,
}

/// The search's recommendation.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Recommendation {
    #[serde(default)]
    pub candidate: Option<usize>,
    pub budgets: Vec<String>,
    pub methods: Vec<String>,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub is_current: bool,
}

/// `coco preview --sweep --json`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Search {
    #[serde(default)]
    pub notice: String,
    pub data: DataLabel,
    pub levels: Vec<String>,
    pub points: Vec<Point>,
    pub candidates: Vec<Candidate>,
    #[serde(default)]
    pub current: Option<usize>,
    #[serde(default)]
    pub bottom_up: Vec<Estimate>,
    #[serde(default)]
    pub trials: Option<u64>,
    #[serde(default)]
    pub recommendation: Option<Recommendation>,
}

/// A saved preview or search.
#[derive(Clone, Debug, PartialEq)]
pub enum PreviewFile {
    Preview(Preview),
    Search(Search),
}

/// Reads `path`: a search when it has `candidates`, else a preview.
pub fn read(path: &Path) -> Result<PreviewFile, ReportError> {
    let error = |problem: String| ReportError::Preview {
        path: path.to_path_buf(),
        problem,
    };
    let bytes = std::fs::read(path).map_err(|e| error(e.to_string()))?;
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| error(e.to_string()))?;
    if value.get("candidates").is_some() {
        serde_json::from_value(value)
            .map(PreviewFile::Search)
            .map_err(|e| error(format!("a search: {e}")))
    } else {
        serde_json::from_value(value)
            .map(PreviewFile::Preview)
            .map_err(|e| error(format!("a preview: {e}")))
    }
}
