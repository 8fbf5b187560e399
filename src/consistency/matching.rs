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
//! child run at the current smallest size: the cost is `O((parent runs + child runs) ×
//! children)`, never `O(G)`.
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
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in remainders.iter().take((total - given) as usize) {
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
}
