//! `coco inspect`: a summary of a dataset. (Being written.)

use serde::Serialize;

use crate::data::Dataset;

/// What `coco inspect` prints. Computed from the true histograms: confidential.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub dataset: String,
}

impl Summary {
    pub fn of(dataset: &Dataset) -> Summary {
        Summary {
            dataset: dataset.name(),
        }
    }

    /// The human-readable report.
    pub fn to_text(&self) -> String {
        format!("dataset {}\n", self.dataset)
    }
}
