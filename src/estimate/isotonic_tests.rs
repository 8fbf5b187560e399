use super::*;
use proptest::prelude::*;

fn values(blocks: &[Block]) -> Vec<f64> {
    expand(blocks)
}

/// The block structure is a valid partition with strictly increasing values.
fn check_structure(blocks: &[Block], n: usize, lo: i64, hi: i64) -> Result<(), TestCaseError> {
    let mut next = 0;
    for (i, b) in blocks.iter().enumerate() {
        prop_assert_eq!(b.start, next);
        prop_assert!(b.len > 0);
        next = b.end();
        prop_assert!(b.cmp_value(&Block::new(0, 1, lo.into(), 1)) != Ordering::Less);
        prop_assert!(b.cmp_value(&Block::new(0, 1, hi.into(), 1)) != Ordering::Greater);
        if i > 0 {
            prop_assert_eq!(blocks[i - 1].cmp_value(b), Ordering::Less);
        }
    }
    prop_assert_eq!(next, n);
    Ok(())
}

#[test]
fn hay_example_4() {
    // Hay et al. 2010, Example 4.
    assert_eq!(values(&l2(&[9i64, 10, 14], -100, 100)), [9.0, 10.0, 14.0]);
    assert_eq!(values(&l2(&[9i64, 14, 10], -100, 100)), [9.0, 12.0, 12.0]);
    assert_eq!(
        values(&l2(&[14i64, 9, 10, 15], -100, 100)),
        [11.0, 11.0, 11.0, 15.0]
    );
}

#[test]
fn r_isoreg_example() {
    // The example of R's stats::isoreg, c(1,0,4,3,3,5,4,2,0), worked by hand with
    // PAV: [1,0] pools to 0.5; 4,3,3 pool to 10/3; 5,4,2 to 11/3; adding 0 gives
    // 11/4 < 10/3, so 4..0 pool to 21/7 = 3.
    let blocks = l2(&[1i64, 0, 4, 3, 3, 5, 4, 2, 0], -10, 10);
    assert_eq!(
        values(&blocks),
        [0.5, 0.5, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0]
    );
    assert_eq!(blocks.iter().map(|b| b.len).collect::<Vec<_>>(), [2, 7]);
    assert_eq!(blocks[0].fraction(), (1, 2));
    assert_eq!(blocks[0].rounded(), 1);
}

#[test]
fn bounds_clip_and_merge_blocks() {
    // Unconstrained: [-3, -1, 2, 8]; bounds [0, 5] clip and merge the two
    // negative blocks into one block at 0.
    let blocks = l2(&[-3i64, -1, 2, 8], 0, 5);
    assert_eq!(values(&blocks), [0.0, 0.0, 2.0, 5.0]);
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks[0].len, 2);
    let blocks = l1(&[-3i64, -1, 2, 8], 0, 5);
    assert_eq!(values(&blocks), [0.0, 0.0, 2.0, 5.0]);
}

#[test]
fn l1_worked_examples() {
    // [3, 1, 2]: every [t, t, 2] with t in [1, 2] costs 2; the smallest is returned.
    assert_eq!(values(&l1(&[3i64, 1, 2], -10, 10)), [1.0, 1.0, 2.0]);
    // [5, 1]: any [t, t] with t in [1, 5] costs 4.
    assert_eq!(values(&l1(&[5i64, 1], -10, 10)), [1.0, 1.0]);
    // An odd block takes its median: [4, 9, 1] → 4.
    assert_eq!(values(&l1(&[4i64, 9, 1], -10, 10)), [4.0, 4.0, 4.0]);
    // Already sorted data is its own fit.
    assert_eq!(values(&l1(&[1i64, 2, 2, 7], -10, 10)), [1.0, 2.0, 2.0, 7.0]);
}

#[test]
fn empty_and_single() {
    assert!(l1::<i64>(&[], 0, 1).is_empty());
    assert!(l2::<i64>(&[], 0, 1).is_empty());
    assert!(fit_with_last::<i64>(IsotonicFit::L1, &[], 0, 1).is_empty());
    assert_eq!(values(&l2(&[7i64], 0, 5)), [5.0]);
    assert_eq!(
        values(&fit_with_last(IsotonicFit::L2, &[7i64], 0, 5)),
        [5.0]
    );
    assert_eq!(
        values(&fit_with_last(IsotonicFit::L1, &[3i64, 7, -2], 0, 5)),
        [3.0, 5.0, 5.0]
    );
}

#[test]
fn rounding_halves_up_and_negative() {
    assert_eq!(Block::new(0, 1, 5, 2).rounded(), 3);
    assert_eq!(Block::new(0, 1, -5, 2).rounded(), -2);
    assert_eq!(Block::new(0, 1, 7, 3).rounded(), 2);
    assert_eq!(Block::new(0, 1, -7, 3).rounded(), -2);
}

#[test]
fn fraction_comparison_beyond_i128_products() {
    let big = i128::MAX / 3;
    assert_eq!(cmp_fractions(big, 7, big - 1, 7), Ordering::Greater);
    assert_eq!(cmp_fractions(big, big, 1, 1), Ordering::Equal);
    assert_eq!(cmp_fractions(-big, 5, big, 5), Ordering::Less);
    assert_eq!(cmp_fractions(2 * big, big, 3, 1), Ordering::Less);
}

// ---- oracles -------------------------------------------------------------------

/// Hay et al. Theorem 1, exactly: x̂_k = min_{j≥k} max_{i≤k} mean(y_i..y_j).
fn min_max(y: &[i64]) -> Vec<(i128, i128)> {
    let n = y.len();
    let prefix: Vec<i128> = std::iter::once(0)
        .chain(y.iter().scan(0i128, |s, &v| {
            *s += i128::from(v);
            Some(*s)
        }))
        .collect();
    let mean = |i: usize, j: usize| (prefix[j + 1] - prefix[i], (j - i + 1) as i128);
    let less = |a: (i128, i128), b: (i128, i128)| cmp_fractions(a.0, a.1, b.0, b.1).is_lt();
    (0..n)
        .map(|k| {
            (k..n)
                .map(|j| {
                    (0..=k)
                        .map(|i| mean(i, j))
                        .reduce(|a, b| if less(a, b) { b } else { a })
                        .unwrap()
                })
                .reduce(|a, b| if less(b, a) { b } else { a })
                .unwrap()
        })
        .collect()
}

fn clip_fraction((n, d): (i128, i128), lo: i64, hi: i64) -> (i128, i128) {
    if cmp_fractions(n, d, lo.into(), 1).is_lt() {
        (lo.into(), 1)
    } else if cmp_fractions(n, d, hi.into(), 1).is_gt() {
        (hi.into(), 1)
    } else {
        (n, d)
    }
}

/// Sufficient optimality conditions of the bounded L2 problem, checked exactly on
/// every block (see the proof in the module documentation): with g_i = v − y_i,
/// an interior block has Σg = 0 and suffix sums ≥ 0; a block at `lo` has suffix
/// sums ≥ 0; a block at `hi` has prefix sums ≤ 0.
fn l2_kkt_holds(y: &[i64], blocks: &[Block], lo: i64, hi: i64) -> bool {
    if lo == hi {
        return true;
    }
    blocks.iter().all(|b| {
        let (n, d) = b.fraction();
        // Scaled by d: g_i·d = n − y_i·d.
        let g: Vec<i128> = y[b.start..b.end()]
            .iter()
            .map(|&v| n - i128::from(v) * d)
            .collect();
        let total: i128 = g.iter().sum();
        let suffixes_ok = (0..g.len()).all(|t| g[t..].iter().sum::<i128>() >= 0);
        let prefixes_ok = (1..=g.len()).all(|t| g[..t].iter().sum::<i128>() <= 0);
        let at_lo = b.cmp_value(&Block::new(0, 1, lo.into(), 1)).is_eq();
        let at_hi = b.cmp_value(&Block::new(0, 1, hi.into(), 1)).is_eq();
        if at_lo {
            suffixes_ok
        } else if at_hi {
            prefixes_ok
        } else {
            total == 0 && suffixes_ok
        }
    })
}

fn l1_cost(y: &[i64], x: &[i64]) -> i64 {
    y.iter().zip(x).map(|(a, b)| (a - b).abs()).sum()
}

/// All nondecreasing sequences of length n over the sorted candidate values.
fn monotone_sequences(candidates: &[i64], n: usize) -> Vec<Vec<i64>> {
    fn go(c: &[i64], n: usize, from: usize, cur: &mut Vec<i64>, out: &mut Vec<Vec<i64>>) {
        if cur.len() == n {
            out.push(cur.clone());
            return;
        }
        for i in from..c.len() {
            cur.push(c[i]);
            go(c, n, i, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    go(candidates, n, 0, &mut Vec::new(), &mut out);
    out
}

/// The L1 optimum over data values and bounds (where it is attained): the best
/// cost, and the optimal sequences.
fn l1_brute(y: &[i64], lo: i64, hi: i64, last: Option<i64>) -> (i64, Vec<Vec<i64>>) {
    let mut c: Vec<i64> = y.iter().map(|&v| v.clamp(lo, hi)).chain([lo, hi]).collect();
    c.sort_unstable();
    c.dedup();
    let seqs: Vec<Vec<i64>> = monotone_sequences(&c, y.len())
        .into_iter()
        .filter(|s| last.is_none_or(|l| s.last() == Some(&l)))
        .collect();
    let best = seqs.iter().map(|s| l1_cost(y, s)).min().unwrap();
    let optimal = seqs.into_iter().filter(|s| l1_cost(y, s) == best).collect();
    (best, optimal)
}

/// Twice the fitted values, as integers (centered L1 fits are integers or halves).
fn as_doubled(blocks: &[Block]) -> Vec<i64> {
    blocks
        .iter()
        .flat_map(|b| {
            let (n, d) = b.fraction();
            assert!(d == 1 || d == 2, "integers or halves");
            std::iter::repeat_n((2 * n / d) as i64, b.len)
        })
        .collect()
}

/// Twice the L1 cost of a fit given as doubled values.
fn l1_cost_doubled(y: &[i64], doubled: &[i64]) -> i64 {
    y.iter().zip(doubled).map(|(a, b)| (2 * a - b).abs()).sum()
}

fn as_ints(blocks: &[Block]) -> Vec<i64> {
    blocks
        .iter()
        .flat_map(|b| {
            assert_eq!(b.fraction().1, 1, "an L1 fit of integers is integral");
            std::iter::repeat_n(b.fraction().0 as i64, b.len)
        })
        .collect()
}

fn arb_problem() -> impl Strategy<Value = (Vec<i64>, i64, i64)> {
    (
        proptest::collection::vec(-8i64..12, 0..10),
        -3i64..4,
        0i64..8,
    )
        .prop_map(|(y, lo, width)| (y, lo, lo + width))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn l2_matches_min_max_and_clipping((y, lo, hi) in arb_problem()) {
        let free = l2(&y, i64::MIN / 4, i64::MAX / 4);
        check_structure(&free, y.len(), i64::MIN / 4, i64::MAX / 4)?;
        let oracle = min_max(&y);
        let bounded = l2(&y, lo, hi);
        check_structure(&bounded, y.len(), lo, hi)?;
        for (blocks, bounds) in [(&free, None), (&bounded, Some((lo, hi)))] {
            for b in blocks.iter() {
                for (k, &exact) in oracle.iter().enumerate().take(b.end()).skip(b.start) {
                    let want = match bounds {
                        Some((lo, hi)) => clip_fraction(exact, lo, hi),
                        None => exact,
                    };
                    prop_assert!(cmp_fractions(b.numer, b.denom, want.0, want.1).is_eq(),
                        "cell {} of {:?}: {:?} vs {:?}", k, y, b.fraction(), want);
                }
            }
        }
        prop_assert!(l2_kkt_holds(&y, &bounded, lo, hi));
    }

    #[test]
    fn l1_is_optimal_and_smallest((y, lo, hi) in arb_problem()) {
        let blocks = l1(&y, lo, hi);
        check_structure(&blocks, y.len(), lo, hi)?;
        if y.is_empty() { return Ok(()); }
        let x = as_ints(&blocks);
        let (best, optimal) = l1_brute(&y, lo, hi, None);
        prop_assert_eq!(l1_cost(&y, &x), best, "y = {:?}, x = {:?}", y, x);
        for s in &optimal {
            prop_assert!(x.iter().zip(s).all(|(a, b)| a <= b), "{:?} not below {:?}", x, s);
        }
    }

    #[test]
    fn fixed_last_solves_the_constrained_problem((y, lo, hi) in arb_problem()) {
        prop_assume!(!y.is_empty());
        let blocks = fit_with_last(IsotonicFit::L1, &y, lo, hi);
        check_structure(&blocks, y.len(), lo, hi)?;
        let doubled = as_doubled(&blocks);
        prop_assert_eq!(*doubled.last().unwrap(), 2 * hi);
        let (best, _) = l1_brute(&y, lo, hi, Some(hi));
        prop_assert_eq!(l1_cost_doubled(&y, &doubled), 2 * best);

        let blocks = fit_with_last(IsotonicFit::L2, &y, lo, hi);
        check_structure(&blocks, y.len(), lo, hi)?;
        prop_assert!(blocks.last().unwrap().cmp_value(&Block::new(0, 1, hi.into(), 1)).is_eq());
        // The first n−1 cells are the bounded fit of the first n−1 values.
        let n = y.len() - 1;
        let prefix = l2(&y[..n], lo, hi);
        prop_assert_eq!(&values(&blocks)[..n], &values(&prefix)[..]);
        let mut trimmed = blocks.clone();
        let last = trimmed.last_mut().unwrap();
        last.len -= 1;
        if last.len == 0 { trimmed.pop(); }
        prop_assert!(l2_kkt_holds(&y[..n], &trimmed, lo, hi));
    }

    #[test]
    fn l1_centered_is_the_optimal_midpoint((y, lo, hi) in arb_problem()) {
        let blocks = l1_centered(&y, lo, hi);
        check_structure(&blocks, y.len(), lo, hi)?;
        let doubled = as_doubled(&blocks);
        let (best, optimal) = l1_brute(&y, lo, hi, None);
        prop_assert_eq!(l1_cost_doubled(&y, &doubled), 2 * best);
        // The midpoint of the pointwise smallest and largest optimal solutions.
        for i in 0..y.len() {
            let smallest = optimal.iter().map(|s| s[i]).min().unwrap();
            let largest = optimal.iter().map(|s| s[i]).max().unwrap();
            prop_assert_eq!(doubled[i], smallest + largest);
        }
    }

    #[test]
    fn generic_over_i32((y, lo, hi) in arb_problem()) {
        let y32: Vec<i32> = y.iter().map(|&v| v as i32).collect();
        prop_assert_eq!(l1(&y32, lo, hi), l1(&y, lo, hi));
        prop_assert_eq!(l2(&y32, lo, hi), l2(&y, lo, hi));
    }

    #[test]
    fn rounding_keeps_order(y in proptest::collection::vec(-50i64..50, 1..30), hi in 0i64..40) {
        let blocks = l2(&y, 0, hi);
        let r: Vec<i128> = blocks.iter().map(Block::rounded).collect();
        prop_assert!(r.windows(2).all(|w| w[0] <= w[1]));
        prop_assert!(r.iter().all(|&v| (0..=i128::from(hi)).contains(&v)));
        for b in &blocks {
            prop_assert!((b.rounded() as f64 - b.value()).abs() <= 0.5);
        }
    }
}

// ---- runs of equal values -------------------------------------------------------

fn expand_runs(runs: &[(i64, u64)]) -> Vec<i64> {
    runs.iter()
        .flat_map(|&(v, cells)| std::iter::repeat_n(v, cells as usize))
        .collect()
}

#[test]
fn runs_worked_example() {
    // Cells [5, 5, 1, 1, 4, 4, 4] as three runs.
    let runs = [(5i64, 2u64), (1, 2), (4, 3)];
    // L2: the run of 5s and the run of 1s pool to 12/4 = 3 (the pools' own sums
    // and lengths, unreduced); the 4s stay.
    let blocks = fit_runs(IsotonicFit::L2, &runs, 0, 10);
    assert_eq!(blocks, [Block::new(0, 4, 12, 4), Block::new(4, 3, 12, 3)]);
    // L1: every [t, t, t, t, 4, 4, 4] with t in [1, 4] costs 8; the smallest
    // solution has t = 1, the largest t = 4 (the heap: (5, 2); the 1s take both 5s
    // and push (1, 4); the 4s push (4, 3)), so the centered one has t = 5/2.
    let blocks = fit_runs(IsotonicFit::L1, &runs, 0, 10);
    assert_eq!(blocks, [Block::new(0, 4, 5, 2), Block::new(4, 3, 8, 2)]);
    assert_eq!(values(&blocks), [2.5, 2.5, 2.5, 2.5, 4.0, 4.0, 4.0]);
    // Bounds [2, 3] clip both extremes: [2, 2, 2, 2, 3, 3, 3] and all 3s.
    let blocks = fit_runs(IsotonicFit::L1, &runs, 2, 3);
    assert_eq!(blocks, [Block::new(0, 4, 5, 2), Block::new(4, 3, 6, 2)]);
    // The last cell fixed at 6: cells 0..6 are fitted, the last 4 is ignored.
    let blocks = fit_runs_with_last(IsotonicFit::L2, &runs, 0, 6);
    assert_eq!(
        blocks,
        [
            Block::new(0, 4, 12, 4),
            Block::new(4, 2, 8, 2),
            Block::new(6, 1, 6, 1)
        ]
    );
    for kind in [IsotonicFit::L1, IsotonicFit::L2] {
        let cells = expand_runs(&runs);
        assert_eq!(fit_runs(kind, &runs, 0, 10), fit(kind, &cells, 0, 10));
    }
}

#[test]
fn runs_of_no_cells_stand_for_nothing() {
    let runs = [(3i64, 0u64), (5, 2), (1, 0), (1, 2), (7, 0)];
    let cells = [5i64, 5, 1, 1];
    for kind in [IsotonicFit::L1, IsotonicFit::L2] {
        assert_eq!(fit_runs(kind, &runs, 0, 9), fit(kind, &cells, 0, 9));
        assert_eq!(
            fit_runs_with_last(kind, &runs, 0, 9),
            fit_with_last(kind, &cells, 0, 9)
        );
        assert!(fit_runs_with_last(kind, &[(4, 0)], 0, 9).is_empty());
        assert!(fit_runs(kind, &[], 0, 9).is_empty());
    }
}

#[test]
#[should_panic(expected = "are empty")]
fn runs_reject_empty_bounds() {
    fit_runs(IsotonicFit::L1, &[(1, 1)], 2, 1);
}

fn arb_runs() -> impl Strategy<Value = Vec<(i64, u64)>> {
    prop_oneof![
        4 => proptest::collection::vec((-4i64..5, 1u64..6), 0..12),
        1 => (-4i64..5, 1u64..300).prop_map(|run| vec![run]),
    ]
}

/// Bounds as the callers use them, and tight ones that clip.
fn arb_bounds() -> impl Strategy<Value = (i64, i64)> {
    prop_oneof![
        (-3i64..4, 0i64..8).prop_map(|(lo, width)| (lo, lo + width)),
        Just((0, 0)),
        Just((-100, 100)),
        (-3i64..4).prop_map(|hi| (FREE_LOW, hi)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn runs_fit_as_the_expanded_cells(runs in arb_runs(), (lo, hi) in arb_bounds()) {
        let cells = expand_runs(&runs);
        for kind in [IsotonicFit::L1, IsotonicFit::L2] {
            prop_assert_eq!(fit_runs(kind, &runs, lo, hi), fit(kind, &cells, lo, hi),
                "{:?} within [{}, {}]", kind, lo, hi);
            prop_assert_eq!(
                fit_runs_with_last(kind, &runs, lo, hi),
                fit_with_last(kind, &cells, lo, hi),
                "{:?} with last {} above {}", kind, hi, lo
            );
        }
    }

    /// Weights up to 10⁹: multiplying every run's cells by `w` multiplies every
    /// block's start and length by `w` and keeps its value (the weighted problem
    /// is the same problem scaled).
    #[test]
    fn runs_with_large_weights_scale(
        runs in proptest::collection::vec((-4i64..5, 1u64..6), 0..12),
        (lo, hi) in arb_bounds(),
        w in prop_oneof![Just(1_000_000_000u64), 1u64..1_000_000_000],
    ) {
        let scaled: Vec<(i64, u64)> = runs.iter().map(|&(v, cells)| (v, cells * w)).collect();
        for kind in [IsotonicFit::L1, IsotonicFit::L2] {
            let small = fit_runs(kind, &runs, lo, hi);
            let large = fit_runs(kind, &scaled, lo, hi);
            prop_assert_eq!(small.len(), large.len());
            for (a, b) in small.iter().zip(&large) {
                prop_assert_eq!(a.start as u64 * w, b.start as u64);
                prop_assert_eq!(a.len as u64 * w, b.len as u64);
                prop_assert_eq!(a.cmp_value(b), Ordering::Equal);
            }
        }
    }
}

/// The slope trick on a plain binary heap: [`l1`]'s maxima before the two-level
/// [`Breakpoints`], kept as the reference it must agree with.
fn heap_tops(y: &[i64]) -> Vec<i64> {
    let mut heap = std::collections::BinaryHeap::new();
    let mut tops = Vec::with_capacity(y.len());
    for &v in y {
        if let Some(mut top) = heap.peek_mut()
            && *top > v
        {
            *top = v;
        }
        heap.push(v);
        tops.push(*heap.peek().unwrap());
    }
    tops
}

fn breakpoint_tops(y: &[i64]) -> Vec<i64> {
    let mut b = Breakpoints::default();
    y.iter()
        .map(|&v| {
            b.step(v);
            b.max().unwrap()
        })
        .collect()
}

/// Noisy cumulative counts: a rising trend, then flat, with noise of `scale`.
fn arb_noisy_cumulative() -> impl Strategy<Value = Vec<i64>> {
    (
        proptest::collection::vec(0i64..6, 0..300),
        0usize..300,
        1i64..60,
        any::<u64>(),
    )
        .prop_map(|(steps, flat, scale, seed)| {
            let mut state = seed | 1;
            let mut noise = move || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % (2 * scale as u64 + 1)) as i64 - scale
            };
            let mut level = 0;
            let mut out = Vec::new();
            for s in steps {
                level += s;
                out.push(level + noise());
            }
            for _ in 0..flat {
                out.push(level + noise());
            }
            out
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn breakpoints_keep_the_heaps_maxima(y in proptest::collection::vec(-40i64..40, 0..200)) {
        prop_assert_eq!(breakpoint_tops(&y), heap_tops(&y));
    }

    #[test]
    fn breakpoints_keep_the_heaps_maxima_on_noisy_cumulative_counts(y in arb_noisy_cumulative()) {
        prop_assert_eq!(breakpoint_tops(&y), heap_tops(&y));
    }
}

#[test]
fn breakpoints_keep_the_heaps_maxima_on_long_monotone_and_alternating_runs() {
    let rising: Vec<i64> = (0..5_000).collect();
    let falling: Vec<i64> = (0..5_000).rev().collect();
    let zigzag: Vec<i64> = (0..5_000)
        .map(|i| if i % 2 == 0 { i } else { -i })
        .collect();
    let sawtooth: Vec<i64> = (0..5_000).map(|i| i % 97).collect();
    for y in [rising, falling, zigzag, sawtooth] {
        assert_eq!(breakpoint_tops(&y), heap_tops(&y));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The stack path for short inputs gives the general path's blocks, cell by cell and
    /// run by run, on values that repeat, fall, rise and reach the bounds.
    #[test]
    fn short_l1_fits_are_the_general_ones(
        y in proptest::collection::vec(-30i64..30, 0..=SMALL),
        cells in proptest::collection::vec(0u64..4, SMALL),
        lo in -40i64..5,
        width in 0i64..60,
    ) {
        let hi = lo + width;
        if !y.is_empty() {
            prop_assert_eq!(fit(IsotonicFit::L1, &y, lo, hi), l1_centered(&y, lo, hi));
        }
        let runs: Vec<(i64, u64)> = y.iter().copied().zip(cells.iter().copied()).collect();
        prop_assert_eq!(l1_centered_small(runs.iter().copied(), lo, hi), l1_centered_runs(&runs, lo, hi));
        // Unbounded below, as the heads are fitted.
        if !y.is_empty() {
            prop_assert_eq!(
                fit(IsotonicFit::L1, &y, FREE_LOW, hi),
                l1_centered(&y, FREE_LOW, hi)
            );
        }
    }
}

#[test]
fn short_l1_fits_at_the_extremes() {
    let y = [i64::MAX / 4, -(i64::MAX / 4), 0, i64::MAX / 4, 5];
    assert_eq!(
        fit(IsotonicFit::L1, &y, FREE_LOW, i64::MAX / 2),
        l1_centered(&y, FREE_LOW, i64::MAX / 2)
    );
    let runs = [(7i64, 1_000_000u64), (3, 2_000_000), (9, 0), (1, 5)];
    assert_eq!(
        l1_centered_small(runs.iter().copied(), 0, 10),
        l1_centered_runs(&runs, 0, 10)
    );
}
