//! Top-down consistency on random hierarchies: every result passes the release checks,
//! and exact estimates come back unchanged.

mod common;

use coco::consistency::{MergeRule, bottom_up, top_down};
use coco::data::NodeId;
use coco::estimate::{GroupRun, NodeEstimate};
use coco::histogram::{CountOfCounts, Size};
use coco::release::check_release;
use proptest::prelude::*;

const K: Size = 30;

fn exact_estimate(h: &CountOfCounts, variance: f64) -> NodeEstimate {
    let top = h.top_coded(K);
    NodeEstimate {
        runs: top
            .pairs()
            .iter()
            .map(|&(size, count)| GroupRun {
                size,
                count,
                variance,
            })
            .collect(),
        histogram: top,
        cumulative_fit: None,
    }
}

/// A scrambled estimate with the right number of groups: sizes shifted by a
/// node-dependent amount, variances varying by size.
fn scrambled_estimate(h: &CountOfCounts, shift: u32) -> NodeEstimate {
    let sizes: Vec<Size> = h
        .unattributed()
        .iter()
        .map(|s| (s + shift * (s % 3)).min(K))
        .collect();
    let hist = CountOfCounts::from_sizes(sizes);
    NodeEstimate {
        runs: hist
            .pairs()
            .iter()
            .map(|&(size, count)| GroupRun {
                size,
                count,
                variance: 1.0 + f64::from(size % 5),
            })
            .collect(),
        histogram: hist,
        cumulative_fit: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn releases_pass_checks(d in common::arb_dataset(6, 3, K), shift in 0u32..4, average in any::<bool>()) {
        let h = &d.hierarchy;
        let estimates: Vec<NodeEstimate> =
            (0..h.len()).map(|i| scrambled_estimate(d.truth().node(NodeId(i as u32)), shift + (i as u32 % 2))).collect();
        let rule = if average { MergeRule::Average } else { MergeRule::Weighted };
        let released = top_down(h, &estimates, K, rule).unwrap();
        let checks = check_release(d.public(), &released, K);
        prop_assert!(checks.passed(), "{:?}", checks);
    }

    #[test]
    fn exact_estimates_are_kept(d in common::arb_dataset(5, 3, K)) {
        let h = &d.hierarchy;
        let estimates: Vec<NodeEstimate> = (0..h.len()).map(|i| exact_estimate(d.truth().node(NodeId(i as u32)), 2.0)).collect();
        let released = top_down(h, &estimates, K, MergeRule::Weighted).unwrap();
        for i in 0..h.len() {
            prop_assert_eq!(&released[i], &d.truth().node(NodeId(i as u32)).top_coded(K));
        }
        let leaves = h.level_nodes(h.leaf_level()).map(|id| (id, d.truth().node(id).top_coded(K)));
        let bu = bottom_up(h, leaves);
        prop_assert_eq!(bu, released);
    }
}
