//! The noisy measurements of a draw, kept when asked (`coco release --measurements`):
//! the differentially private outputs themselves, every table of the release being
//! post-processing of them. Written as `measurements.jsonl`
//! ([`crate::release::outputs::margins::measurements`]).

use crate::data::NodeId;
use crate::estimate::NodeMeasurement;
use crate::estimate::max_size::MaxSizeMeasurement;

/// Every noisy measurement of a draw, by node, and the private `K` probe if made.
#[derive(Clone, Debug)]
pub struct Measurements {
    nodes: Vec<NodeMeasurement>,
    probe: Option<MaxSizeMeasurement>,
}

impl Measurements {
    pub(crate) fn new(mut nodes: Vec<NodeMeasurement>, probe: Option<MaxSizeMeasurement>) -> Self {
        nodes.sort_by_key(|m| m.node());
        Measurements { nodes, probe }
    }

    /// The measurement of `node`, if it was measured.
    pub fn node(&self, node: NodeId) -> Option<&NodeMeasurement> {
        self.nodes
            .binary_search_by_key(&node, |m| m.node())
            .ok()
            .map(|i| &self.nodes[i])
    }

    pub fn probe(&self) -> Option<&MaxSizeMeasurement> {
        self.probe.as_ref()
    }
}
