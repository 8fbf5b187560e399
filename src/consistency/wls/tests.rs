use super::*;
use crate::emd::emd;
use pathfinding::prelude::{Matrix, kuhn_munkres_min};
use proptest::prelude::*;

fn runs(h: &CountOfCounts) -> Vec<GroupRun> {
    unit_runs(h.pairs())
}

/// All ways to hand the parent's groups to children with the given capacities; the
/// smallest total `Σ_c EMD(received_c, target_c)`.
fn brute_force(parent: &[Size], targets: &[CountOfCounts]) -> u64 {
    fn go(
        i: usize,
        parent: &[Size],
        targets: &[CountOfCounts],
        got: &mut Vec<Vec<Size>>,
        best: &mut u64,
    ) {
        if i == parent.len() {
            let cost = got
                .iter()
                .zip(targets)
                .map(|(g, t)| emd(&CountOfCounts::from_sizes(g.iter().copied()), t))
                .sum();
            *best = (*best).min(cost);
            return;
        }
        for c in 0..targets.len() {
            if (got[c].len() as u64) < targets[c].groups() {
                got[c].push(parent[i]);
                go(i + 1, parent, targets, got, best);
                got[c].pop();
            }
        }
    }
    let mut best = u64::MAX;
    go(
        0,
        parent,
        targets,
        &mut vec![Vec::new(); targets.len()],
        &mut best,
    );
    best
}

fn hungarian(parent: &[Size], targets: &[CountOfCounts]) -> i64 {
    let slots: Vec<i64> = targets
        .iter()
        .flat_map(|t| t.unattributed().iter().map(i64::from).collect::<Vec<_>>())
        .collect();
    if parent.is_empty() {
        return 0;
    }
    let m = Matrix::from_fn(parent.len(), slots.len(), |(i, j)| {
        (i64::from(parent[i]) - slots[j]).abs()
    });
    kuhn_munkres_min(&m).0
}

fn instance() -> impl Strategy<Value = (Vec<Size>, Vec<CountOfCounts>)> {
    proptest::collection::vec(proptest::collection::vec(0u32..8, 0..4), 1..4).prop_flat_map(
        |kids| {
            let total: usize = kids.iter().map(Vec::len).sum();
            (
                proptest::collection::vec(0u32..8, total..=total),
                Just(kids),
            )
                .prop_map(|(mut p, kids)| {
                    p.sort_unstable();
                    (p, kids.into_iter().map(CountOfCounts::from_sizes).collect())
                })
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn split_is_optimal((parent, targets) in instance()) {
        let fixed = CountOfCounts::from_sizes(parent.iter().copied());
        let wanted: Vec<Vec<GroupRun>> = targets.iter().map(runs).collect();
        let got = split_to_targets(fixed.as_ref(), &wanted).unwrap();
        let cost: u64 = got.iter().zip(&targets).map(|(g, t)| emd(g, t)).sum();
        prop_assert_eq!(cost, brute_force(&parent, &targets));
        prop_assert_eq!(cost as i64, hungarian(&parent, &targets));
        // The lower bound Σ_j |P[j] − Σ_c R_c[j]| is attained.
        prop_assert_eq!(cost, emd(&fixed, &CountOfCounts::sum(&targets)));
        // Each child receives exactly its number of groups; together, the parent's.
        for (g, t) in got.iter().zip(&targets) {
            prop_assert_eq!(g.groups(), t.groups());
        }
        prop_assert_eq!(CountOfCounts::sum(&got), fixed);
    }

    /// The fit on runs is the fit on the cells, including the fast path for
    /// targets that are already monotone.
    #[test]
    fn integral_fit_on_runs_is_the_cellwise_fit(
        values in proptest::collection::vec((-3.0f64..12.0, 1u32..5), 1..8),
        groups in 0u64..10,
        l1 in any::<bool>(),
        sorted in any::<bool>(),
    ) {
        let mut values = values;
        if sorted {
            values.sort_by(|a, b| a.0.total_cmp(&b.0));
            for v in &mut values { v.0 = v.0.clamp(0.0, groups as f64); }
        }
        let fit = if l1 { IsotonicFit::L1 } else { IsotonicFit::L2 };
        let mut pieces = Vec::new();
        let mut cells = Vec::new();
        let mut start = 0u32;
        for &(x, len) in &values {
            pieces.push(Piece { start, x, v: 0.0 });
            cells.extend(std::iter::repeat_n(x, len as usize));
            start += len;
        }
        let k = start - 1;
        let fixed: Vec<i64> = cells.iter().map(|&t| (t * SCALE).round() as i64).collect();
        let blocks = isotonic::fit_with_last(fit, &fixed, 0, groups as i64 * 1024);
        let mut expected = Vec::new();
        let mut previous = 0i128;
        for b in &blocks {
            let (num, den) = b.fraction();
            let d = den * 1024;
            let value = (2 * num + d).div_euclid(2 * d);
            if value > previous {
                expected.push((b.start as Size, (value - previous) as Count));
                previous = value;
            }
        }
        prop_assert_eq!(
            integral_fit_runs(&pieces, groups, k, fit),
            CountOfCounts::from_pairs(expected).unwrap()
        );
    }
}

#[test]
fn rounding_is_the_library_rounding() {
    let edge = [
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        0.49999999999999994,
        -0.49999999999999994,
        4503599627370495.5,
        4503599627370496.0,
        -4503599627370495.5,
        1e300,
        -1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        123.456,
        -987.5,
    ];
    for x in edge {
        assert_eq!(round(x), x.round(), "{x}");
    }
    assert!(round(f64::NAN).is_nan());
    let mut state = 0x2545F4914F6CDD1Du64;
    for _ in 0..100_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let x = f64::from_bits(state) % 1e7;
        if x.is_finite() {
            assert_eq!(round(x), x.round(), "{x}");
        }
    }
}

#[test]
fn integral_fit_rounds_monotone() {
    let h = integral_fit(&[0.4, 2.6, 1.9, 3.2, 5.0], 5, IsotonicFit::L2);
    assert_eq!(h.groups(), 5);
    assert_eq!(h.cumulative(4).values(), &[0, 2, 2, 3, 5]);
    assert_eq!(
        integral_fit(&[-3.0, 7.0, 4.0], 4, IsotonicFit::L1)
            .cumulative(2)
            .values()[2],
        4
    );
}

/// The model of step 1 evaluated cell by cell, straight from its definition.
fn dense_model(fit: &FitRef<'_>, groups: Count, k: Size) -> Vec<(f64, f64)> {
    let var = fit.noise_variance;
    if groups == 0 {
        return vec![(0.0, EXACT); k as usize + 1];
    }
    let from = (fit.from as usize).min(k as usize + 1);
    let first_size = fit.steps.first().map_or(0, |r| r.size as usize);
    (0..=k as usize)
        .map(|j| {
            if j < from {
                let b = fit
                    .head
                    .iter()
                    .find(|b| (b.start as usize..(b.start + b.len) as usize).contains(&j))
                    .unwrap();
                if j == k as usize {
                    (b.value, EXACT)
                } else {
                    (b.value, head_block_variance(fit, b).max(EXACT))
                }
            } else {
                let above = fit.listed_above(j);
                let mut v = if fit.saturated && j < first_size {
                    var
                } else {
                    EXACT
                };
                for r in fit.steps {
                    let width = fit.step_scale(r) * WIDEN;
                    let own = (REACH * width).ceil() as usize + 1;
                    let s = r.size as usize;
                    if j + own >= s && j < s + own {
                        let d = (j as f64 + 0.5 - s as f64).abs();
                        let p = 0.5 * (-d / width).exp();
                        v += f64::from(r.count) * p * (1.0 - p);
                    }
                }
                if j == k as usize {
                    v = EXACT;
                }
                ((groups - above) as f64, v)
            }
        })
        .collect()
}

/// One piece per cell.
fn cells(values: &[(f64, f64)]) -> Vec<Piece> {
    values
        .iter()
        .enumerate()
        .map(|(j, &(x, v))| Piece {
            start: j as u32,
            x,
            v,
        })
        .collect()
}

/// Step 2 on dense cells, one piece per cell (the implementation before runs): the
/// same check ([`crate::consistency::guard`]) on cell-by-cell functions, then the
/// downward shares from the formulas.
fn dense_targets(
    h: &Hierarchy,
    est: &Estimates,
    groups: &[Count],
    k: Size,
    model: &[Vec<(f64, f64)>],
) -> Vec<Vec<f64>> {
    use crate::consistency::guard;
    let n = h.len();
    let cells_n = model[0].len();
    let mut z = vec![vec![0.0; cells_n]; n];
    let mut big_v = vec![vec![0.0; cells_n]; n];
    for l in (0..h.depth()).rev().map(LevelId) {
        let ids: Vec<NodeId> = h.level_nodes(l).collect();
        let sums = |i: NodeId, z: &[Vec<f64>], big_v: &[Vec<f64>]| -> Vec<(f64, f64)> {
            (0..cells_n)
                .map(|j| {
                    let node = h.node(i);
                    (
                        node.children().map(|c| z[c.index()][j]).sum(),
                        node.children().map(|c| big_v[c.index()][j]).sum(),
                    )
                })
                .collect()
        };
        let region = |i: NodeId, own: &'_ [Piece], sums: &'_ [Piece]| {
            let fit = est.fit(i.index()).unwrap();
            guard::Region {
                own: own.to_vec().leak(),
                sums: sums.to_vec().leak(),
                checked: true,
                raw: fit.raw,
                noise_var: fit.noise_variance,
                from: fit.from,
                groups: groups[i.index()],
                k,
            }
        };
        let mut calibration = guard::Calibration::default();
        for &i in &ids {
            if h.node(i).is_leaf() {
                continue;
            }
            let own = cells(&model[i.index()]);
            let sum = cells(&sums(i, &z, &big_v));
            guard::calibrate(
                &region(i, &own, &sum),
                &mut Default::default(),
                &mut calibration,
            );
        }
        let factors = calibration.factors();
        for &i in &ids {
            if h.node(i).is_leaf() {
                for j in 0..cells_n {
                    (z[i.index()][j], big_v[i.index()][j]) = model[i.index()][j];
                }
                continue;
            }
            let own = cells(&model[i.index()]);
            let sum = cells(&sums(i, &z, &big_v));
            let mut out = Vec::new();
            guard::combine(
                &region(i, &own, &sum),
                &factors,
                &mut Default::default(),
                &mut out,
            );
            for j in 0..cells_n {
                let p = crate::consistency::pieces::value_at(&out, j as u32);
                (z[i.index()][j], big_v[i.index()][j]) = (p.x, p.v);
            }
        }
    }
    let mut f = z.clone();
    for (i, node) in h.nodes().iter().enumerate() {
        if node.is_leaf() {
            continue;
        }
        for j in 0..cells_n {
            let s: f64 = node.children().map(|c| z[c.index()][j]).sum();
            let sv: f64 = node.children().map(|c| big_v[c.index()][j]).sum();
            for c in node.children() {
                let share = if sv > 0.0 {
                    big_v[c.index()][j] / sv
                } else {
                    0.0
                };
                f[c.index()][j] = z[c.index()][j] + share * (f[i][j] - s);
            }
        }
    }
    f
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]
    /// The runs compute exactly what the cell-by-cell formulas do.
    #[test]
    fn runs_compute_the_cellwise_least_squares(
        leaves in proptest::collection::vec(proptest::collection::vec(0u32..30, 0..12), 4..9),
        methods in proptest::collection::vec(0u8..4, 3),
        seed in any::<u64>(),
    ) {
        use crate::data::Dataset;
        use crate::estimate::{self, EstimateOptions, Method, Tail, TailGroups, TailLength};
        use crate::noise::{NoiseSource, Purpose};
        use crate::privacy::{Diagnostic, Epsilon};
        let k: Size = 40;
        let paths: Vec<Vec<String>> = (0..leaves.len())
            .map(|i| vec!["R".into(), format!("m{}", i % 3), format!("l{i}")])
            .collect();
        let names = vec!["a".into(), "b".into(), "c".into()];
        let h = Hierarchy::from_leaf_paths(names, &paths).unwrap();
        let hists = leaves.iter().map(|l| CountOfCounts::from_sizes(l.iter().copied())).collect();
        let d = Dataset::from_leaf_histograms(Default::default(), h, crate::data::GroupsForm::Histograms, vec![], hists);
        let h = &d.hierarchy;
        let source = NoiseSource::seeded(seed);
        let budgets = ["0.5", "1", "0.3"];
        let estimates: Vec<_> = (0..h.len() as u32).map(NodeId).map(|id| {
            let level = h.node(id).level.0;
            let method = match methods[level] {
                0 => Method::Hc,
                1 => Method::Hg,
                2 => Method::HcTail(Tail { above: 6, groups: TailLength::Fixed(TailGroups::new(4).unwrap()) }),
                _ => Method::HcTail(Tail { above: 6, groups: TailLength::Auto }),
            };
            let m = estimate::measure(
                method,
                d.truth().for_diagnostic(Diagnostic::Oracle).node(id),
                id,
                d.groups(id),
                k,
                &Epsilon::parse(budgets[level]).unwrap().into(),
                &mut source.stream(Purpose::Measure.node(id)),
            ).unwrap();
            estimate::estimate(&m, &EstimateOptions::default())
        }).collect();
        let est = Estimates::from_vec(estimates);
        let groups = d.public().groups;
        let model: Vec<_> = (0..h.len()).map(|i| dense_model(&est.fit(i).unwrap(), groups[i], k)).collect();
        let dense = dense_targets(h, &est, groups, k, &model);
        let runs = targets(h, &est, groups, k, Profile::Cells);
        for i in 0..h.len() {
            for j in 0..=k {
                let (a, b) = (crate::consistency::pieces::value_at(&runs[i], j).x, dense[i][j as usize]);
                prop_assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()), "node {} size {}: {} vs {}", i, j, a, b);
            }
        }
    }
}

#[test]
fn binned_profiles_average_the_cells() {
    // Bins of the profile hold the mean of the cells they cover: the profile's total
    // over the cells is the same either way.
    for width in [0.3, 1.0, 4.5, 30.0] {
        for size in [0u64, 3, 40, 500] {
            let cells = 2000;
            let total = |profile| {
                let mut events = Events::default();
                events.add(0, 0.0, 0.0, 0.0);
                add_profile(&mut events, size, 2.0, width, 0, cells, profile);
                let mut out = Vec::new();
                events.finish(&mut out);
                (0..out.len())
                    .map(|i| out[i].v * piece_len(&out, i, (cells - 1) as u32) as f64)
                    .sum::<f64>()
            };
            let (cells_total, bins_total) = (total(Profile::Cells), total(Profile::Bins));
            assert!(
                (cells_total - bins_total).abs() <= 1e-9 * cells_total.max(1e-12),
                "width {width} size {size}: {cells_total} vs {bins_total}"
            );
        }
    }
}

#[test]
fn binned_profiles_have_few_runs() {
    // A block's households at sizes 1..=7 with a wide profile: the bins of the
    // seven steps coincide far from them.
    let mut events = Events::default();
    events.add(0, 0.0, 0.0, 0.0);
    for size in 1..=7 {
        add_profile(&mut events, size, 2.0, 15.0, 0, 10_001, Profile::Bins);
    }
    let mut out = Vec::new();
    events.finish(&mut out);
    assert!(out.len() < 40, "{} runs", out.len());
}
