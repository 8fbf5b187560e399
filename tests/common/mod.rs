//! Shared helpers for integration tests: random hierarchies and datasets.
#![allow(dead_code)]

use std::path::PathBuf;

pub mod cli;
#[cfg(feature = "tui")]
pub mod tui;

use coco::data::{Dataset, GroupsForm, Hierarchy};
use coco::histogram::{CountOfCounts, Size};
use proptest::prelude::*;

/// Proptest's settings for `cases` cases, with the regression seeds kept beside the test's
/// source file (`<file>.proptest-regressions`). Proptest's default looks up the tree for a
/// `main.rs`, finds `tests/<executable>/main.rs`, and would read and write
/// `tests/proptest-regressions/<file>.txt` instead.
pub fn proptest_config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::with_cases(cases)
    }
}

/// A random hierarchy of 1–`max_depth` levels: each node has 1–`max_children`
/// children, so single-child chains occur.
pub fn arb_hierarchy(max_depth: usize, max_children: usize) -> impl Strategy<Value = Hierarchy> {
    (1..=max_depth, any::<u64>()).prop_map(move |(depth, seed)| {
        let mut state = seed | 1;
        let mut next = move |n: usize| {
            // xorshift: deterministic shape from the seed.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let names: Vec<String> = (0..depth).map(|l| format!("L{l}")).collect();
        let mut paths: Vec<Vec<String>> = vec![vec!["R".to_string()]];
        for _ in 1..depth {
            let mut deeper = Vec::new();
            for p in &paths {
                for c in 0..1 + next(max_children) {
                    let mut q = p.clone();
                    q.push(format!("{}-{c}", p.last().unwrap()));
                    deeper.push(q);
                }
            }
            paths = deeper;
        }
        Hierarchy::from_leaf_paths(names, &paths).unwrap()
    })
}

/// A dataset on a random hierarchy with random leaf histograms: empty leaves, groups of
/// size 0, and occasionally a group above `k`.
pub fn arb_dataset(
    max_depth: usize,
    max_children: usize,
    k: Size,
) -> impl Strategy<Value = Dataset> {
    arb_hierarchy(max_depth, max_children).prop_flat_map(move |h| {
        let leaves = h.level_len(h.leaf_level());
        let leaf = prop_oneof![
            1 => Just(Vec::<Size>::new()),
            4 => proptest::collection::vec(prop_oneof![8 => 0..=k.min(12), 1 => 0..=k, 1 => k..k * 3 + 1], 1..25),
        ];
        (Just(h), proptest::collection::vec(leaf, leaves..=leaves)).prop_map(|(h, sizes)| {
            let hists = sizes.into_iter().map(CountOfCounts::from_sizes).collect();
            Dataset::from_leaf_histograms(PathBuf::new(), h, GroupsForm::Histograms, vec![], hists)
        })
    })
}
