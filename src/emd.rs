//! Earth mover's distance between count-of-counts histograms (Kuo et al. §3.1, Lemma 1).
//!
//! # Formula
//! `EMD(H, Ĥ) = Σ_j |Hc[j] − Ĥc[j]|`, the L1 distance between the cumulative
//! histograms: the smallest number of entities that must be added to or removed from
//! groups of `H` to obtain `Ĥ`. When both have the same number of groups it equals the
//! L1 distance between the sorted group sizes (`Hg`).
//!
//! The sum runs over `j` from 0 to the largest size present in either histogram (beyond
//! it both cumulative histograms are constant). When the group totals differ the terms
//! past the largest size would each add `|G − Ĝ|` for ever; they are left out, so the
//! distance is then the earth mover's distance up to the largest size present.
//!
//! The walk visits only the sizes present in either histogram: `O(distinct sizes)`.
//!
//! # Citations
//! Kuo et al., PVLDB 2018, Lemma 1, after Li, Li, Venkatasubramanian, "t-closeness", ICDE 2007.

use crate::histogram::{Count, HistRef, Size};

/// The earth mover's distance between `a` and `b`.
pub fn emd<'a, 'b>(a: impl Into<HistRef<'a>>, b: impl Into<HistRef<'b>>) -> u64 {
    let (pa, pb) = (a.into().pairs(), b.into().pairs());
    let (mut i, mut j) = (0, 0);
    let (mut ca, mut cb): (Count, Count) = (0, 0);
    let mut total: u64 = 0;
    // The cumulative difference is constant between consecutive sizes present.
    let mut last_size: Option<Size> = None;
    while i < pa.len() || j < pb.len() {
        let next = match (pa.get(i), pb.get(j)) {
            (Some(x), Some(y)) => x.0.min(y.0),
            (Some(x), None) => x.0,
            (None, Some(y)) => y.0,
            (None, None) => unreachable!(),
        };
        if let Some(prev) = last_size {
            total += u64::from(next - prev) * ca.abs_diff(cb);
        }
        if pa.get(i).is_some_and(|x| x.0 == next) {
            ca += pa[i].1;
            i += 1;
        }
        if pb.get(j).is_some_and(|y| y.0 == next) {
            cb += pb[j].1;
            j += 1;
        }
        last_size = Some(next);
    }
    // The cell at the largest size itself.
    total + ca.abs_diff(cb)
}

/// Mean and maximum of per-node distances over one level.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LevelEmd {
    pub mean: f64,
    pub max: u64,
    pub nodes: usize,
}

impl LevelEmd {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::CountOfCounts;
    use proptest::prelude::*;

    fn dense(v: &[Count]) -> CountOfCounts {
        CountOfCounts::from_dense(v)
    }

    /// Reference: the L1 distance of the dense cumulative histograms over `0..=k`.
    fn emd_dense(a: &CountOfCounts, b: &CountOfCounts) -> u64 {
        let k = a.max_size().unwrap_or(0).max(b.max_size().unwrap_or(0));
        let (ca, cb) = (a.cumulative(k), b.cumulative(k));
        ca.values()
            .iter()
            .zip(cb.values())
            .map(|(x, y)| x.abs_diff(*y))
            .sum()
    }

    #[test]
    fn paper_example() {
        // Kuo et al. §3.1: 100 groups of size 1 versus all of size 2 (EMD 100) or 5 (EMD 400).
        let h = dense(&[0, 100]);
        assert_eq!(emd(&h, &dense(&[0, 0, 100])), 100);
        assert_eq!(emd(&h, &dense(&[0, 0, 0, 0, 0, 100])), 400);
    }

    #[test]
    fn empty_histograms() {
        assert_eq!(emd(&CountOfCounts::new(), &CountOfCounts::new()), 0);
        assert_eq!(emd(&CountOfCounts::new(), &dense(&[3])), 3);
    }

    fn arb_hist_with(groups: u64) -> impl Strategy<Value = CountOfCounts> {
        proptest::collection::vec(0u32..40, groups as usize..=groups as usize)
            .prop_map(CountOfCounts::from_sizes)
    }

    fn arb_hist() -> impl Strategy<Value = CountOfCounts> {
        proptest::collection::vec((0u32..50, 1u64..9), 0..10)
            .prop_map(|v| CountOfCounts::from_pairs_summing(v).unwrap())
    }

    proptest! {
        #[test]
        fn matches_dense_definition(a in arb_hist(), b in arb_hist()) {
            prop_assert_eq!(emd(&a, &b), emd_dense(&a, &b));
        }

        #[test]
        fn metric_properties(a in arb_hist_with(12), b in arb_hist_with(12), c in arb_hist_with(12)) {
            prop_assert_eq!(emd(&a, &a), 0);
            prop_assert_eq!(emd(&a, &b), emd(&b, &a));
            prop_assert!(emd(&a, &c) <= emd(&a, &b) + emd(&b, &c));
            if emd(&a, &b) == 0 { prop_assert_eq!(&a, &b); }
        }

        #[test]
        fn equals_l1_of_sorted_sizes(a in arb_hist_with(15), b in arb_hist_with(15)) {
            let l1: u64 = a.unattributed().iter().zip(b.unattributed().iter())
                .map(|(x, y)| u64::from(x.abs_diff(y))).sum();
            prop_assert_eq!(emd(&a, &b), l1);
        }
    }
}
