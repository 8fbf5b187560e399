//! Top-down consistency on random hierarchies: every result passes the release checks,
//! and exact estimates come back unchanged.

use crate::common;

use coco::consistency::{MergeRule, bottom_up, top_down};
use coco::data::NodeId;
use coco::estimate::{Estimates, GroupRun, NodeEstimate};
use coco::histogram::{CountOfCounts, HistRef, Histograms, Size};
use coco::release::pipeline::checks::check_release;
use proptest::prelude::*;

const K: Size = 30;

fn exact_estimate(h: HistRef<'_>, variance: f64) -> NodeEstimate {
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
        fit: None,
    }
}

/// A scrambled estimate with the right number of groups: sizes shifted by a
/// node-dependent amount, variances varying by size.
fn scrambled_estimate(h: HistRef<'_>, shift: u32) -> NodeEstimate {
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
        fit: None,
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_config(200))]

    #[test]
    fn releases_pass_checks(d in common::arb_dataset(6, 3, K), shift in 0u32..4, average in any::<bool>()) {
        let h = &d.hierarchy;
        let estimates: Vec<NodeEstimate> =
            (0..h.len()).map(|i| scrambled_estimate(d.truth().for_diagnostic(coco::privacy::Diagnostic::Oracle).node(NodeId(i as u32)), shift + (i as u32 % 2))).collect();
        let rule = if average { MergeRule::Average } else { MergeRule::Weighted };
        let released = top_down(h, &Estimates::from_vec(estimates), K, rule).unwrap();
        let checks = check_release(d.public(), &released, K);
        prop_assert!(checks.passed(), "{:?}", checks);
    }

    #[test]
    fn exact_estimates_are_kept(d in common::arb_dataset(5, 3, K)) {
        let h = &d.hierarchy;
        let estimates: Vec<NodeEstimate> = (0..h.len()).map(|i| exact_estimate(d.truth().for_diagnostic(coco::privacy::Diagnostic::Oracle).node(NodeId(i as u32)), 2.0)).collect();
        let released = top_down(h, &Estimates::from_vec(estimates), K, MergeRule::Weighted).unwrap();
        for (i, r) in released.iter().enumerate() {
            prop_assert_eq!(r.to_owned(), d.truth().for_diagnostic(coco::privacy::Diagnostic::Oracle).node(NodeId(i as u32)).top_coded(K));
        }
        let leaves: Vec<CountOfCounts> = h.level_nodes(h.leaf_level()).map(|id| d.truth().for_diagnostic(coco::privacy::Diagnostic::Oracle).node(id).top_coded(K)).collect();
        let bu = bottom_up(h, leaves.iter().map(CountOfCounts::as_ref));
        prop_assert_eq!(bu, released);
    }
}

mod wls {
    use super::*;
    use coco::consistency::{Consistency, ConsistencyOptions, make_consistent};
    use coco::data::Dataset;
    use coco::estimate::{
        self, EstimateOptions, IsotonicFit, Method, Tail, TailGroups, TailLength,
    };
    use coco::noise::{NoiseSource, Purpose};
    use coco::privacy::Epsilon;

    /// Real measurements (seeded) of every node, with budgets varying by level and
    /// each level's method from `methods` (cycled).
    fn measured(d: &Dataset, seed: u64, methods: &[Method]) -> Vec<NodeEstimate> {
        let source = NoiseSource::seeded(seed);
        let budgets = ["0.2", "0.5", "1", "2", "1/3", "0.7"];
        (0..d.hierarchy.len() as u32)
            .map(NodeId)
            .map(|id| {
                let level = d.hierarchy.node(id).level.0;
                let eps = Epsilon::parse(budgets[level]).unwrap();
                let m = estimate::measure(
                    methods[level % methods.len()],
                    d.truth()
                        .for_diagnostic(coco::privacy::Diagnostic::Oracle)
                        .node(id),
                    id,
                    d.groups(id),
                    K,
                    &coco::privacy::Loss::from(&eps),
                    &mut source.stream(Purpose::Measure.node(id)),
                )
                .unwrap();
                estimate::estimate(&m, &EstimateOptions::default())
            })
            .collect()
    }

    proptest! {
        #![proptest_config(crate::common::proptest_config(150))]

        #[test]
        fn releases_pass_checks(
            d in common::arb_dataset(6, 3, K),
            seed in any::<u64>(),
            l2 in any::<bool>(),
            tails in proptest::collection::vec(proptest::option::of((0u32..K, 1u32..6)), 1..4),
        ) {
            let h = &d.hierarchy;
            // Plain hc and hc with tails of every shape, mixed across levels.
            let methods: Vec<Method> = tails
                .iter()
                .map(|t| match *t {
                    None => Method::Hc,
                    Some((above, groups)) => Method::HcTail(Tail { above, groups: TailLength::Fixed(TailGroups::new(groups).unwrap()) }),
                })
                .collect();
            let estimates = measured(&d, seed, &methods);
            let options = ConsistencyOptions {
                merge: MergeRule::Weighted,
                projection_fit: if l2 { IsotonicFit::L2 } else { IsotonicFit::L1 },
                ..ConsistencyOptions::default()
            };
            let out = make_consistent(Consistency::Wls, h, &Estimates::from_vec(estimates), d.public().groups, K, &options).unwrap();
            prop_assert_eq!(out.used, Consistency::Wls);
            let checks = check_release(d.public(), &out.histograms, K);
            prop_assert!(checks.passed(), "{:?}", checks);
        }

        #[test]
        fn noiseless_measurements_give_the_truth(d in common::arb_dataset(5, 3, K)) {
            let h = &d.hierarchy;
            // Noise switched off: the "noisy" cumulative histograms are the true ones.
            let estimates: Vec<NodeEstimate> = (0..h.len() as u32)
                .map(NodeId)
                .map(|id| {
                    let exact = estimate::true_vector(Method::Hc, d.truth().for_diagnostic(coco::privacy::Diagnostic::Oracle).node(id), d.groups(id), K);
                    estimate::cumulative::estimate(&exact, d.groups(id), &coco::privacy::Loss::from(&Epsilon::parse("1").unwrap()), IsotonicFit::L1)
                })
                .collect();
            let out = make_consistent(Consistency::Wls, h, &Estimates::from_vec(estimates), d.public().groups, K, &ConsistencyOptions::default()).unwrap();
            for (i, r) in out.histograms.iter().enumerate() {
                prop_assert_eq!(r.to_owned(), d.truth().for_diagnostic(coco::privacy::Diagnostic::Oracle).node(NodeId(i as u32)).top_coded(K));
            }
        }

        #[test]
        fn noiseless_tails_give_the_truth(
            d in common::arb_dataset(5, 3, K),
            above in 0u32..K,
            groups in 1u32..8,
        ) {
            let h = &d.hierarchy;
            let tail = Tail { above, groups: TailLength::Fixed(TailGroups::new(groups).unwrap()) };
            // Noise switched off, at an ε so large that the significance margin is
            // below one: unsaturated tails and the heads are the true ones.
            let eps = Epsilon::parse("1000").unwrap();
            let estimates: Vec<NodeEstimate> = (0..h.len() as u32)
                .map(NodeId)
                .map(|id| {
                    let (head, top) = estimate::tail::true_vectors(d.truth().for_diagnostic(coco::privacy::Diagnostic::Oracle).node(id), d.groups(id), K, &tail);
                    estimate::tail::estimate(&head, &top, d.groups(id), K, &tail, &coco::privacy::Loss::from(&eps), &EstimateOptions::default())
                })
                .collect();
            let saturated = estimates.iter().any(|e| e.fit.as_ref().is_some_and(|f| f.saturated));
            let out = make_consistent(Consistency::Wls, h, &Estimates::from_vec(estimates), d.public().groups, K, &ConsistencyOptions::default()).unwrap();
            prop_assert!(check_release(d.public(), &out.histograms, K).passed());
            if !saturated {
                for (i, r) in out.histograms.iter().enumerate() {
                    prop_assert_eq!(r.to_owned(), d.truth().for_diagnostic(coco::privacy::Diagnostic::Oracle).node(NodeId(i as u32)).top_coded(K));
                }
            }
        }

        /// `hg` is first-class under `wls`: every group a step, alone or mixed with `hc`
        /// and tails across levels.
        #[test]
        fn hg_and_mixed_levels_release_with_wls(
            d in common::arb_dataset(6, 3, K),
            seed in any::<u64>(),
            layout in proptest::collection::vec(0u8..3, 1..4),
        ) {
            let h = &d.hierarchy;
            let methods: Vec<Method> = layout
                .iter()
                .map(|m| match m {
                    0 => Method::Hg,
                    1 => Method::Hc,
                    _ => Method::HcTail(Tail { above: 4, groups: TailLength::Fixed(TailGroups::new(3).unwrap()) }),
                })
                .collect();
            let estimates = measured(&d, seed, &methods);
            let out = make_consistent(Consistency::Wls, h, &Estimates::from_vec(estimates), d.public().groups, K, &ConsistencyOptions::default()).unwrap();
            prop_assert_eq!(out.used, Consistency::Wls);
            prop_assert!(out.fallback.is_none());
            let checks = check_release(d.public(), &out.histograms, K);
            prop_assert!(checks.passed(), "{:?}", checks);
        }

        #[test]
        fn noiseless_hg_gives_the_truth(d in common::arb_dataset(5, 3, K)) {
            let h = &d.hierarchy;
            let one = Epsilon::parse("1").unwrap();
            let estimates: Vec<NodeEstimate> = (0..h.len() as u32)
                .map(NodeId)
                .map(|id| {
                    let truth = d.truth().for_diagnostic(coco::privacy::Diagnostic::Oracle).node(id);
                    let exact: Vec<i32> = estimate::unattributed::true_vector(truth, d.groups(id), K)
                        .map(|s| s as i32)
                        .collect();
                    estimate::unattributed::estimate(&exact, d.groups(id), K, &coco::privacy::Loss::from(&one), IsotonicFit::L2)
                })
                .collect();
            let out = make_consistent(Consistency::Wls, h, &Estimates::from_vec(estimates), d.public().groups, K, &ConsistencyOptions::default()).unwrap();
            for (i, r) in out.histograms.iter().enumerate() {
                prop_assert_eq!(r.to_owned(), d.truth().for_diagnostic(coco::privacy::Diagnostic::Oracle).node(NodeId(i as u32)).top_coded(K));
            }
        }
    }

    #[test]
    fn falls_back_to_topdown_without_fits() {
        use proptest::strategy::ValueTree;
        let d = common::arb_dataset(3, 2, K)
            .new_tree(&mut proptest::test_runner::TestRunner::deterministic())
            .unwrap()
            .current();
        let h = &d.hierarchy;
        let estimates: Vec<NodeEstimate> = (0..h.len())
            .map(|i| {
                exact_estimate(
                    d.truth()
                        .for_diagnostic(coco::privacy::Diagnostic::Oracle)
                        .node(NodeId(i as u32)),
                    1.0,
                )
            })
            .collect();
        let out = make_consistent(
            Consistency::Wls,
            h,
            &Estimates::from_vec(estimates),
            d.public().groups,
            K,
            &ConsistencyOptions::default(),
        )
        .unwrap();
        assert_eq!(out.used, Consistency::TopDown);
        assert!(
            out.fallback
                .unwrap()
                .to_string()
                .contains("needs method \"hc\" or \"hg\"")
        );
        assert!(check_release(d.public(), &out.histograms, K).passed());
    }
}

/// The largest dataset the loader accepts, 10^12 groups, in one region: a release of it
/// keeps every count exact (the projection's fixed-point arithmetic holds it), and one
/// group more is refused at load.
#[test]
fn the_largest_group_count_the_loader_accepts_is_released_exactly() {
    use coco::noise::NoiseSource;
    use coco::release::plan::MaxSize;
    let tmp = tempfile::tempdir().unwrap();
    let write = |dir: &std::path::Path, big: u64| {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("hierarchy.csv"), "nation,county\nUS,a\nUS,b\n").unwrap();
        std::fs::write(
            dir.join("histograms.csv"),
            format!("region,size,count\na,1,{big}\na,2,1\nb,3,2\n"),
        )
        .unwrap();
    };
    let most = tmp.path().join("most");
    write(&most, 1_000_000_000_000 - 3);
    let d = coco::data::Dataset::load(&most).unwrap();
    assert_eq!(d.groups(NodeId::ROOT), 1_000_000_000_000);
    let one = coco::privacy::Epsilon::parse("1").unwrap();
    let mut plan = coco::release::plan::defaults::public_default(
        &d.hierarchy,
        |id| d.groups(id),
        &one,
        MaxSize::Fixed(8),
    )
    .unwrap()
    .plan;
    for l in d.hierarchy.levels() {
        plan.set_method(l, coco::estimate::Method::Hc).unwrap();
    }
    let draw = coco::release::pipeline::draw::draw(
        &d,
        &plan,
        &NoiseSource::seeded(5),
        &Default::default(),
    )
    .unwrap();
    assert!(draw.checks().passed(), "{:?}", draw.checks());
    let root = draw.histograms().hist(0);
    assert_eq!(root.groups(), 1_000_000_000_000);
    // Most groups stay at size 1: the noise moves a handful, not 91% to K.
    let at_one = root.pairs().iter().find(|p| p.0 == 1).map_or(0, |p| p.1);
    assert!(at_one > 999_999_999_000, "{:?}", root.pairs());
    let over = tmp.path().join("over");
    write(&over, 1_000_000_000_000 - 2);
    let err = coco::data::Dataset::load(&over).unwrap_err().to_string();
    assert!(err.contains("expected at most 10^12 groups"), "{err}");
}
