//! Errors a data user reads cell by cell, beside the earth mover's distance
//! ([`crate::emd`]): the absolute error of a released count-of-counts table's cells, and
//! the share of a region's groups that sit in the wrong size cell.
//!
//! # Formula
//! For one region with released table `r` and true table `t` (top-coded at `K`, as the
//! release is), `D = Σ_j |r_j − t_j|` over every size `j`.
//!
//! * **Mean absolute error per cell** of a level: `Σ_regions D / Σ_regions C`, where a
//!   region's `C` counts the sizes `j` with `r_j > 0` or `t_j > 0` (the cells either table
//!   lists; cells empty in both are exact and would only dilute the mean with `K`).
//!   It is what a reader of `counts.csv` sees on average in a listed cell.
//! * **Relative error** of a level: the mean over its regions with `G > 0` of
//!   `D / (2·G)`. A consistent release holds exactly `G` groups in every region, so
//!   `D / 2` is the number of groups that must move to another size cell to turn the
//!   released table into the true one, and `D / (2·G)` the share of the region's groups
//!   that are in the wrong size cell: 0 is exact, 1 means no group is where it belongs.
//!   Unlike the EMD it does not grow with the sizes involved (a nation of millions and a
//!   village compare on the same scale).
//!
//! Both are CONFIDENTIAL diagnostics, like every error measured against the truth.

use crate::histogram::{Count, HistRef, Size};

/// One region's `D = Σ_j |r_j − t_j|` and `C`, the sizes listed in either table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CellDifference {
    /// `Σ_j |r_j − t_j|`.
    pub absolute: u64,
    /// The sizes with a nonzero count in either table.
    pub cells: u64,
}

impl CellDifference {
    /// `D / (2·G)`: the share of the region's `G` groups in the wrong size cell; `None`
    /// for a region without groups.
    pub fn share_of_groups(&self, groups: Count) -> Option<f64> {
        (groups > 0).then(|| self.absolute as f64 / (2.0 * groups as f64))
    }
}

/// The cell-by-cell difference between a released table and the true one, both sparse
/// and sorted by size (the true one top-coded at `k` first).
pub fn difference<'a, 'b>(
    released: impl Into<HistRef<'a>>,
    truth: impl Into<HistRef<'b>>,
    k: Size,
) -> CellDifference {
    let truth = truth.into().top_coded(k);
    let (pa, pb) = (released.into().pairs(), truth.pairs());
    let (mut i, mut j) = (0, 0);
    let mut out = CellDifference::default();
    while i < pa.len() || j < pb.len() {
        let (a, b) = match (pa.get(i), pb.get(j)) {
            (Some(x), Some(y)) if x.0 == y.0 => {
                i += 1;
                j += 1;
                (x.1, y.1)
            }
            (Some(x), Some(y)) if x.0 < y.0 => {
                i += 1;
                (x.1, 0)
            }
            (Some(x), None) => {
                i += 1;
                (x.1, 0)
            }
            (_, Some(y)) => {
                j += 1;
                (0, y.1)
            }
            (None, None) => unreachable!("the loop runs while one side has pairs"),
        };
        if a > 0 || b > 0 {
            out.cells += 1;
            out.absolute += a.abs_diff(b);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::CountOfCounts;
    use proptest::prelude::*;

    /// The same sums over dense tables `0..=k`, the slow way.
    fn dense_oracle(r: &CountOfCounts, t: &CountOfCounts, k: Size) -> CellDifference {
        let t = t.top_coded(k);
        let mut out = CellDifference::default();
        for size in 0..=k {
            let (a, b) = (r.count(size), t.count(size));
            if a > 0 || b > 0 {
                out.cells += 1;
                out.absolute += a.abs_diff(b);
            }
        }
        out
    }

    #[test]
    fn a_worked_example() {
        // Released: 3 groups of 1, 1 of 2; true: 2 of 1, 1 of 2, 1 of 5 (K = 4: top-coded
        // to 4). Cells 1, 2, 4: |3−2| + |1−1| + |0−1| = 2 over 3 cells; one group of the
        // four is in the wrong cell: 2 / (2·4) = 0.25.
        let r = CountOfCounts::from_pairs(vec![(1, 3), (2, 1)]).unwrap();
        let t = CountOfCounts::from_pairs(vec![(1, 2), (2, 1), (5, 1)]).unwrap();
        let d = difference(&r, &t, 4);
        assert_eq!(
            d,
            CellDifference {
                absolute: 2,
                cells: 3
            }
        );
        assert_eq!(d.share_of_groups(4), Some(0.25));
        assert_eq!(d.share_of_groups(0), None);
        assert_eq!(difference(&t.top_coded(4), &t, 4).absolute, 0);
    }

    proptest! {
        #[test]
        fn the_sparse_walk_matches_the_dense_sums(
            r in proptest::collection::vec(0u64..5, 0..12),
            t in proptest::collection::vec(0u64..5, 0..16),
            k in 1u32..14,
        ) {
            let r = CountOfCounts::from_dense(&r).top_coded(k);
            let t = CountOfCounts::from_dense(&t);
            prop_assert_eq!(difference(&r, &t, k), dense_oracle(&r, &t, k));
        }
    }
}
