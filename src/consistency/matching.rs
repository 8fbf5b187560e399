//! Optimal matching of a parent's groups to its children's groups (Kuo et al. §5.2,
//! Algorithm 2), on run-length encoded size estimates.
//!
//! The parent's estimate `τ.Ĥg` and each child's `c.Ĥg` are sorted lists of group
//! sizes. The matching pairs every parent group with exactly one child group, minimising
//! the total `|parent size − child size|`. Going through both sides smallest first and
//! pairing in order is optimal (Lemma 5.4; in one dimension any order-preserving
//! matching is). Where the parent has fewer groups of its smallest remaining size than
//! the children have of theirs, the parent's groups are shared among the children in
//! proportion to how many each child has at that size, rounded by largest remainder
//! (Algorithm 2 line 15 and footnote 10).
//!
//! Both sides are run-length encoded, so each step consumes a whole parent run or every
//! child run at the current smallest size, never `O(G)`.
//!
//! ## The front
//!
//! A step works on the *front*: the children whose current run has the smallest size
//! `s`, in child order. Finding it by scanning every child costs `O(children)` a step;
//! instead, the front is kept between steps. Runs are sorted, so the smallest size
//! never decreases, and every run smaller than it is used up. Hence when the smallest
//! size first becomes `s`, the front is exactly the children with a run of groups at
//! size `s` (their earlier runs are used up, and no run of theirs is smaller than `s`);
//! while it stays `s`, children only leave (a child whose next run has size `s` stays,
//! and no child outside the front has a run left at `s`). So the children's nonempty
//! runs, listed once as `(size, child)` and sorted, give every front in turn: a step
//! matches the front, drops the children that moved past `s`, and an empty front is
//! refilled with the next size's entries. A child's second run of the same size, or the
//! run after a share that emptied its run, is matched at the next step, as the paper's
//! scan does.
//!
//! Cost: `O(R log R)` to sort the `R` child runs, then `O(k)` for a step over a front
//! of `k` children (each of which gets a piece, except in a proportional split, which
//! ends a parent run): `O(R log R + parent runs + pieces)` and, in the worst case of
//! wide splits, `O(parent runs × children)`. The scan it replaces cost
//! `O((parent runs + child runs) × children)` when sizes are spread out.
//!
//! # Citations
//! Kuo et al., PVLDB 2018, §5.2, Algorithm 2 (line 5 reads `c.Hc[i]` where `c.Hg[i]` is
//! meant) and Lemma 5.4.

use thiserror::Error;

use crate::estimate::GroupRun;
use crate::histogram::{Count, Size};

/// `count` groups of child `child` (its index among the parent's children), estimated
/// at `child_size` with `child_variance`, matched to parent groups estimated at
/// `parent_size` with `parent_variance`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatchedPiece {
    pub child: usize,
    pub count: Count,
    pub parent_size: Size,
    pub parent_variance: f64,
    pub child_size: Size,
    pub child_variance: f64,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum MatchError {
    #[error("the parent has {parent} groups but its children have {children}")]
    GroupTotals { parent: Count, children: Count },
}

/// Runs of the given `(size, count)` pairs with variance 1: slots to match when only
/// sizes matter (the `wls` split).
pub fn unit_runs(pairs: &[(Size, Count)]) -> Vec<GroupRun> {
    pairs
        .iter()
        .map(|&(size, count)| GroupRun {
            size,
            count,
            variance: 1.0,
        })
        .collect()
}

/// Matches the parent's groups to its children's groups, smallest first.
///
/// Every run list must be sorted by size. Returns the matched pieces in matching order;
/// each child's pieces cover exactly its groups.
pub fn match_groups(
    parent: &[GroupRun],
    children: &[&[GroupRun]],
) -> Result<Vec<MatchedPiece>, MatchError> {
    check_totals(parent, children)?;
    debug_assert!(
        children.iter().all(|c| c.is_sorted_by_key(|r| r.size)),
        "child runs sorted by size"
    );
    let mut pieces =
        Vec::with_capacity(parent.len() + children.iter().map(|c| c.len()).sum::<usize>());
    // The sizes at which each child has groups, smallest first, ties in child order: the
    // order in which children join the front (module documentation). Packed as
    // `size << 32 | child`, which sorts faster than pairs.
    assert!(
        u32::try_from(children.len()).is_ok(),
        "at most 2^32 children"
    );
    let mut arrivals: Vec<u64> = children
        .iter()
        .enumerate()
        .flat_map(|(c, runs)| {
            runs.iter()
                .filter(|r| r.count > 0)
                .map(move |r| u64::from(r.size) << 32 | c as u64)
        })
        .collect();
    arrivals.sort_unstable();
    arrivals.dedup();
    let mut arrivals = arrivals
        .into_iter()
        .map(|key| ((key >> 32) as Size, (key & u64::from(u32::MAX)) as usize))
        .peekable();
    // Cursor per child: run index and groups of that run not yet matched.
    let mut cursor: Vec<(usize, Count)> = children
        .iter()
        .map(|c| (0, c.first().map_or(0, |r| r.count)))
        .collect();
    for (c, runs) in children.iter().enumerate() {
        skip_empty(runs, &mut cursor[c]);
    }
    // The children whose current run has the smallest size, in child order.
    let mut front: Vec<usize> = Vec::with_capacity(children.len());
    let mut smallest: Size = 0;
    let mut counts: Vec<Count> = Vec::with_capacity(children.len());
    let mut shares: Vec<Count> = Vec::with_capacity(children.len());
    for prun in parent {
        let mut left = prun.count;
        while left > 0 {
            if front.is_empty() {
                let &(size, _) = arrivals
                    .peek()
                    .expect("totals agree, so children have groups left");
                smallest = size;
                while let Some((_, c)) = arrivals.next_if(|&(s, _)| s == size) {
                    front.push(c);
                }
            }
            let available: Count = front.iter().map(|&c| cursor[c].1).sum();
            // Each child keeps its place at the front while its current run has the
            // smallest size (`retain` visits the children once each, in order).
            let at_size = |c: usize, cursor: (usize, Count)| {
                children[c]
                    .get(cursor.0)
                    .is_some_and(|r| r.size == smallest)
            };
            if left >= available {
                // Every child group at this size is matched now; a child's next run,
                // even of the same size, waits for the next step.
                front.retain(|&c| {
                    let (i, n) = cursor[c];
                    pieces.push(piece(c, n, prun, &children[c][i]));
                    next_run(children[c], &mut cursor[c]);
                    at_size(c, cursor[c])
                });
                left -= available;
            } else {
                // Share the parent's remaining groups among the children in proportion.
                counts.clear();
                counts.extend(front.iter().map(|&c| cursor[c].1));
                largest_remainder(left, &counts, &mut shares);
                let mut next_share = shares.iter().copied();
                front.retain(|&c| {
                    let share = next_share.next().expect("one share per child");
                    if share > 0 {
                        let (i, n) = cursor[c];
                        pieces.push(piece(c, share, prun, &children[c][i]));
                        cursor[c].1 = n - share;
                        if cursor[c].1 == 0 {
                            next_run(children[c], &mut cursor[c]);
                        }
                    }
                    at_size(c, cursor[c])
                });
                left = 0;
            }
        }
    }
    Ok(pieces)
}

fn check_totals(parent: &[GroupRun], children: &[&[GroupRun]]) -> Result<(), MatchError> {
    let parent_total: Count = parent.iter().map(|r| r.count).sum();
    let children_total: Count = children
        .iter()
        .flat_map(|c| c.iter())
        .map(|r| r.count)
        .sum();
    if parent_total != children_total {
        return Err(MatchError::GroupTotals {
            parent: parent_total,
            children: children_total,
        });
    }
    Ok(())
}

/// The implementation [`match_groups`] replaced, kept as its oracle: it scans every
/// child at each step to find the front, `O((parent runs + child runs) × children)`.
#[cfg(test)]
fn match_groups_reference(
    parent: &[GroupRun],
    children: &[&[GroupRun]],
) -> Result<Vec<MatchedPiece>, MatchError> {
    let parent_total: Count = parent.iter().map(|r| r.count).sum();
    let children_total: Count = children
        .iter()
        .flat_map(|c| c.iter())
        .map(|r| r.count)
        .sum();
    if parent_total != children_total {
        return Err(MatchError::GroupTotals {
            parent: parent_total,
            children: children_total,
        });
    }
    let mut pieces =
        Vec::with_capacity(parent.len() + children.iter().map(|c| c.len()).sum::<usize>());
    // Cursor per child: run index and groups of that run not yet matched.
    let mut cursor: Vec<(usize, Count)> = children
        .iter()
        .map(|c| (0, c.first().map_or(0, |r| r.count)))
        .collect();
    for (c, runs) in children.iter().enumerate() {
        skip_empty(runs, &mut cursor[c]);
    }
    let mut at_min: Vec<usize> = Vec::with_capacity(children.len());
    let mut shares: Vec<Count> = Vec::with_capacity(children.len());
    for prun in parent {
        let mut left = prun.count;
        while left > 0 {
            // The children whose current run has the smallest size.
            let mut smallest = Size::MAX;
            at_min.clear();
            for (c, runs) in children.iter().enumerate() {
                let (i, _) = cursor[c];
                if let Some(r) = runs.get(i) {
                    if r.size < smallest {
                        smallest = r.size;
                        at_min.clear();
                    }
                    if r.size == smallest {
                        at_min.push(c);
                    }
                }
            }
            let available: Count = at_min.iter().map(|&c| cursor[c].1).sum();
            debug_assert!(available > 0, "totals agree, so children have groups left");
            if left >= available {
                // Every child group at this size is matched now.
                for &c in &at_min {
                    let (i, n) = cursor[c];
                    pieces.push(piece(c, n, prun, &children[c][i]));
                    cursor[c] = (i + 1, children[c].get(i + 1).map_or(0, |r| r.count));
                    skip_empty(children[c], &mut cursor[c]);
                }
                left -= available;
            } else {
                // Share the parent's remaining groups among the children in proportion.
                let counts: Vec<Count> = at_min.iter().map(|&c| cursor[c].1).collect();
                largest_remainder(left, &counts, &mut shares);
                for (&c, &share) in at_min.iter().zip(&shares) {
                    if share == 0 {
                        continue;
                    }
                    let (i, n) = cursor[c];
                    pieces.push(piece(c, share, prun, &children[c][i]));
                    cursor[c].1 = n - share;
                    if cursor[c].1 == 0 {
                        cursor[c] = (i + 1, children[c].get(i + 1).map_or(0, |r| r.count));
                        skip_empty(children[c], &mut cursor[c]);
                    }
                }
                left = 0;
            }
        }
    }
    Ok(pieces)
}

fn piece(child: usize, count: Count, parent: &GroupRun, run: &GroupRun) -> MatchedPiece {
    MatchedPiece {
        child,
        count,
        parent_size: parent.size,
        parent_variance: parent.variance,
        child_size: run.size,
        child_variance: run.variance,
    }
}

/// Moves a cursor to the next run with groups.
fn next_run(runs: &[GroupRun], cursor: &mut (usize, Count)) {
    let i = cursor.0 + 1;
    *cursor = (i, runs.get(i).map_or(0, |r| r.count));
    skip_empty(runs, cursor);
}

/// Moves a cursor past runs with no groups.
fn skip_empty(runs: &[GroupRun], cursor: &mut (usize, Count)) {
    while cursor.1 == 0 && cursor.0 < runs.len() {
        cursor.0 += 1;
        cursor.1 = runs.get(cursor.0).map_or(0, |r| r.count);
    }
}

/// Splits `total` into integer shares proportional to `weights` (`total < Σ weights`):
/// floors of the exact quotas, then one more for the largest remainders (ties to the
/// first). Each share is at most its weight.
fn largest_remainder(total: Count, weights: &[Count], shares: &mut Vec<Count>) {
    let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    shares.clear();
    let mut remainders: Vec<(u128, usize)> = Vec::with_capacity(weights.len());
    let mut given: Count = 0;
    for (i, &w) in weights.iter().enumerate() {
        let quota = u128::from(total) * u128::from(w);
        let floor = (quota / sum) as Count;
        shares.push(floor);
        given += floor;
        remainders.push((quota % sum, i));
    }
    // The extra groups go to the `extra` first remainders in the order (remainder
    // descending, index ascending). Indices are distinct, so that order is total and
    // selecting its first `extra` entries (linear time) picks the same ones as sorting.
    let extra = (total - given) as usize;
    if extra == 0 {
        return;
    }
    remainders.select_nth_unstable_by(extra - 1, |a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in &remainders[..extra] {
        shares[i] += 1;
    }
}

/// The total cost `Σ count × |parent size − child size|` of a matching.
pub fn cost(pieces: &[MatchedPiece]) -> u128 {
    pieces
        .iter()
        .map(|p| u128::from(p.count) * u128::from(p.parent_size.abs_diff(p.child_size)))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathfinding::prelude::{Matrix, kuhn_munkres_min};
    use proptest::prelude::*;

    use super::unit_runs as runs;

    #[test]
    fn paper_example_proportional_split() {
        // §5.2: the parent has 300 groups of size 1; children have 200, 100 and 100.
        let parent = runs(&[(1, 300), (2, 100)]);
        let c1 = runs(&[(1, 200)]);
        let c2 = runs(&[(1, 100)]);
        let c3 = runs(&[(1, 100)]);
        let pieces = match_groups(&parent, &[&c1, &c2, &c3]).unwrap();
        let at_size_1: Vec<(usize, Count)> = pieces
            .iter()
            .filter(|p| p.parent_size == 1)
            .map(|p| (p.child, p.count))
            .collect();
        assert_eq!(at_size_1, vec![(0, 150), (1, 75), (2, 75)]);
        for c in 0..3 {
            let total: Count = pieces
                .iter()
                .filter(|p| p.child == c)
                .map(|p| p.count)
                .sum();
            assert_eq!(total, [200, 100, 100][c]);
        }
    }

    #[test]
    fn totals_must_agree() {
        let parent = runs(&[(1, 3)]);
        let child = runs(&[(1, 2)]);
        assert_eq!(
            match_groups(&parent, &[&child]),
            Err(MatchError::GroupTotals {
                parent: 3,
                children: 2
            })
        );
        assert_eq!(match_groups(&[], &[&[], &[]]).unwrap(), vec![]);
    }

    #[test]
    fn largest_remainder_rounds_to_total() {
        let mut shares = Vec::new();
        largest_remainder(10, &[1, 1, 1], &mut shares);
        assert_eq!(shares, vec![4, 3, 3]);
        largest_remainder(2, &[5, 3, 2], &mut shares);
        assert_eq!(shares, vec![1, 1, 0]);
    }

    /// Optimal cost by the Hungarian algorithm on the expanded groups.
    fn hungarian(parent: &[GroupRun], children: &[Vec<GroupRun>]) -> i64 {
        let top: Vec<i64> = parent
            .iter()
            .flat_map(|r| std::iter::repeat_n(i64::from(r.size), r.count as usize))
            .collect();
        let bottom: Vec<i64> = children
            .iter()
            .flat_map(|c| {
                c.iter()
                    .flat_map(|r| std::iter::repeat_n(i64::from(r.size), r.count as usize))
            })
            .collect();
        if top.is_empty() {
            return 0;
        }
        let weights = Matrix::from_fn(top.len(), bottom.len(), |(i, j)| (top[i] - bottom[j]).abs());
        kuhn_munkres_min(&weights).0
    }

    fn sorted_runs(sizes: Vec<Size>) -> Vec<GroupRun> {
        let hist = crate::histogram::CountOfCounts::from_sizes(sizes);
        runs(hist.pairs())
    }

    fn instance() -> impl Strategy<Value = (Vec<GroupRun>, Vec<Vec<GroupRun>>)> {
        proptest::collection::vec(proptest::collection::vec(0u32..12, 0..6), 1..5).prop_flat_map(
            |kids| {
                let total: usize = kids.iter().map(Vec::len).sum();
                (
                    proptest::collection::vec(0u32..12, total..=total),
                    Just(kids),
                )
                    .prop_map(|(p, kids)| {
                        (sorted_runs(p), kids.into_iter().map(sorted_runs).collect())
                    })
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn matching_is_optimal((parent, children) in instance()) {
            let refs: Vec<&[GroupRun]> = children.iter().map(Vec::as_slice).collect();
            let pieces = match_groups(&parent, &refs).unwrap();
            prop_assert_eq!(cost(&pieces) as i64, hungarian(&parent, &children));
            // Each child's groups are covered exactly, size by size.
            for (c, kid) in children.iter().enumerate() {
                for r in kid {
                    let matched: Count = pieces.iter().filter(|p| p.child == c && p.child_size == r.size).map(|p| p.count).sum();
                    prop_assert_eq!(matched, r.count);
                }
            }
            // And the parent's too.
            for r in &parent {
                let matched: Count = pieces.iter().filter(|p| p.parent_size == r.size).map(|p| p.count).sum();
                prop_assert_eq!(matched, r.count);
            }
        }
    }

    /// Sorted runs from `(size step, count, variance index)`: steps of 0 repeat a size
    /// (with its own variance), counts of 0 give empty runs.
    fn stepped_runs(spec: &[(Size, Count, usize)]) -> Vec<GroupRun> {
        let mut size = 0;
        spec.iter()
            .map(|&(step, count, v)| {
                size += step;
                GroupRun {
                    size,
                    count,
                    variance: [0.5, 1.0, 2.0][v],
                }
            })
            .collect()
    }

    /// Few sizes and small counts, so that children tie at the smallest size, the
    /// parent often has fewer groups there than they do (a proportional split), and a
    /// child's share can empty its run with the next run at the same size. Now and then
    /// the totals disagree by one.
    fn tangled_instance() -> impl Strategy<Value = (Vec<GroupRun>, Vec<Vec<GroupRun>>)> {
        let run = (0 as Size..3, 0 as Count..6, 0usize..3);
        proptest::collection::vec(proptest::collection::vec(run, 0..6), 0..10).prop_flat_map(
            |kids| {
                let children: Vec<Vec<GroupRun>> = kids.iter().map(|k| stepped_runs(k)).collect();
                let total: Count = children.iter().flatten().map(|r| r.count).sum();
                (
                    Just(children),
                    proptest::collection::vec((0 as Size..3, 0..=total, 0usize..3), 0..8),
                    (0 as Size..3, 0usize..3),
                    prop_oneof![9 => Just(0 as Count), 1 => Just(1)],
                )
                    .prop_map(move |(children, mut cuts, (step, v), extra)| {
                        // The parent's runs split `total` at sorted cut points; equal
                        // cuts give runs of 0 groups.
                        cuts.sort_by_key(|&(_, cut, _)| cut);
                        let mut spec = Vec::with_capacity(cuts.len() + 1);
                        let mut done = 0;
                        for &(step, cut, v) in &cuts {
                            spec.push((step, cut - done, v));
                            done = cut;
                        }
                        spec.push((step, total - done + extra, v));
                        (stepped_runs(&spec), children)
                    })
            },
        )
    }

    /// Largest remainder as first written, sorting every remainder.
    fn largest_remainder_by_sorting(total: Count, weights: &[Count]) -> Vec<Count> {
        let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
        let quota = |w: Count| u128::from(total) * u128::from(w);
        let mut shares: Vec<Count> = weights.iter().map(|&w| (quota(w) / sum) as Count).collect();
        let mut remainders: Vec<(u128, usize)> = weights
            .iter()
            .enumerate()
            .map(|(i, &w)| (quota(w) % sum, i))
            .collect();
        remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let given: Count = shares.iter().sum();
        for &(_, i) in remainders.iter().take((total - given) as usize) {
            shares[i] += 1;
        }
        shares
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn largest_remainder_selects_what_sorting_picks(
            (weights, total) in proptest::collection::vec(0 as Count..8, 1..12)
                .prop_filter("some weight", |w| w.iter().sum::<Count>() > 0)
                .prop_flat_map(|w| {
                    let sum: Count = w.iter().sum();
                    (Just(w), 0..sum)
                })
        ) {
            let mut shares = Vec::new();
            largest_remainder(total, &weights, &mut shares);
            prop_assert_eq!(shares, largest_remainder_by_sorting(total, &weights));
        }

        #[test]
        fn front_matches_the_reference_scan((parent, children) in tangled_instance()) {
            let refs: Vec<&[GroupRun]> = children.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(match_groups(&parent, &refs), match_groups_reference(&parent, &refs));
        }

        #[test]
        fn front_matches_the_reference_scan_on_distinct_sizes((parent, children) in instance()) {
            let refs: Vec<&[GroupRun]> = children.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(match_groups(&parent, &refs), match_groups_reference(&parent, &refs));
        }
    }
}
