//! Count-of-counts histograms in the three representations of Kuo et al. §3.
//!
//! For a region with `G` groups, each holding some number of entities:
//!
//! * [`CountOfCounts`] is `H`: `H[j]` = number of groups of size `j`, kept sparse as
//!   sorted `(size, count)` pairs with `count > 0`, so memory follows the number of
//!   distinct sizes, not the largest size.
//! * [`Cumulative`] is `Hc` over `0..=K`: `Hc[j]` = number of groups of size `≤ j`, dense,
//!   with sizes above `K` top-coded to `K` (so `Hc[K] = G`).
//! * [`Unattributed`] is `Hg`: the sorted list of the `G` group sizes, kept run-length
//!   encoded as `(size, multiplicity)` runs so that a node with 10^8 groups never
//!   materialises 10^8 entries. [`Unattributed::iter`] expands it lazily.
//!
//! All conversions are exact. Top-coding (Kuo et al. §4.1) replaces every size above
//! the public bound `K` by `K`; the private estimators apply it before any noise.
//!
//! # Citations
//! Kuo, Chiu, Kifer, Hay, Machanavajjhala, "Differentially Private Hierarchical
//! Count-of-Counts Histograms", PVLDB 11(11), 2018, §3 and §4.1.

use std::cmp::Ordering;

use thiserror::Error;

/// The number of entities in one group (a household's persons, a taxi's pick-ups).
pub type Size = u32;
/// A number of groups.
pub type Count = u64;

/// A histogram that is not a valid count-of-counts histogram.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum HistogramError {
    #[error("cumulative histogram decreases at size {size}: {before} then {after}")]
    NotMonotone {
        size: Size,
        before: Count,
        after: Count,
    },
    #[error("cumulative histogram is empty: it needs at least the cell for size 0")]
    EmptyCumulative,
    #[error("size {size} appears twice")]
    DuplicateSize { size: Size },
    #[error("the histogram holds more than {max} groups", max = Count::MAX)]
    Overflow,
}

/// `H`: for each size, how many groups have exactly that size. Sparse and sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CountOfCounts {
    /// Sorted by size, strictly increasing, every count > 0.
    pairs: Vec<(Size, Count)>,
}

impl CountOfCounts {
    /// The empty histogram (a region without groups).
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds `H` from `(size, count)` pairs in any order; zero counts are dropped and a
    /// size given twice is an error (it would hide a data problem).
    pub fn from_pairs(
        pairs: impl IntoIterator<Item = (Size, Count)>,
    ) -> Result<Self, HistogramError> {
        let mut pairs: Vec<(Size, Count)> = pairs.into_iter().filter(|&(_, c)| c > 0).collect();
        pairs.sort_unstable_by_key(|&(s, _)| s);
        if let Some(w) = pairs.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(HistogramError::DuplicateSize { size: w[0].0 });
        }
        Ok(Self { pairs })
    }

    /// Builds `H` from `(size, count)` pairs in any order, adding the counts of a size
    /// given more than once.
    pub fn from_pairs_summing(
        pairs: impl IntoIterator<Item = (Size, Count)>,
    ) -> Result<Self, HistogramError> {
        let mut pairs: Vec<(Size, Count)> = pairs.into_iter().filter(|&(_, c)| c > 0).collect();
        pairs.sort_unstable_by_key(|&(s, _)| s);
        let mut out: Vec<(Size, Count)> = Vec::with_capacity(pairs.len());
        for (s, c) in pairs {
            match out.last_mut() {
                Some(last) if last.0 == s => {
                    last.1 = last.1.checked_add(c).ok_or(HistogramError::Overflow)?
                }
                _ => out.push((s, c)),
            }
        }
        Ok(Self { pairs: out })
    }

    /// Builds `H` by counting the given group sizes.
    pub fn from_sizes(sizes: impl IntoIterator<Item = Size>) -> Self {
        let mut sizes: Vec<Size> = sizes.into_iter().collect();
        sizes.sort_unstable();
        Self::from_sorted_sizes(sizes)
    }

    /// Builds `H` by counting sizes that are already sorted ascending.
    fn from_sorted_sizes(sizes: impl IntoIterator<Item = Size>) -> Self {
        let mut pairs: Vec<(Size, Count)> = Vec::new();
        for s in sizes {
            match pairs.last_mut() {
                Some(last) if last.0 == s => last.1 += 1,
                _ => pairs.push((s, 1)),
            }
        }
        Self { pairs }
    }

    /// Builds `H` from a dense vector where `dense[j]` is the number of groups of size `j`.
    pub fn from_dense(dense: &[Count]) -> Self {
        let pairs = dense
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0)
            .map(|(s, &c)| (s as Size, c))
            .collect();
        Self { pairs }
    }

    /// The sorted `(size, count)` pairs, every count > 0.
    pub fn pairs(&self) -> &[(Size, Count)] {
        &self.pairs
    }

    /// `G`: the number of groups.
    pub fn groups(&self) -> Count {
        self.pairs.iter().map(|&(_, c)| c).sum()
    }

    /// The number of entities: the sum of all group sizes.
    pub fn entities(&self) -> u128 {
        self.pairs
            .iter()
            .map(|&(s, c)| u128::from(s) * u128::from(c))
            .sum()
    }

    /// The largest group size, or `None` for a region without groups.
    pub fn max_size(&self) -> Option<Size> {
        self.pairs.last().map(|&(s, _)| s)
    }

    /// How many different sizes occur.
    pub fn distinct_sizes(&self) -> usize {
        self.pairs.len()
    }

    /// `H[size]`.
    pub fn count(&self, size: Size) -> Count {
        match self.pairs.binary_search_by_key(&size, |&(s, _)| s) {
            Ok(i) => self.pairs[i].1,
            Err(_) => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Adds `other` into `self` (the histogram of the union of two disjoint regions).
    pub fn add(&mut self, other: &CountOfCounts) {
        if other.pairs.is_empty() {
            return;
        }
        if self.pairs.is_empty() {
            self.pairs.clone_from(&other.pairs);
            return;
        }
        let mut out = Vec::with_capacity(self.pairs.len().max(other.pairs.len()));
        let (mut i, mut j) = (0, 0);
        let (a, b) = (&self.pairs, &other.pairs);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                Ordering::Less => {
                    out.push(a[i]);
                    i += 1;
                }
                Ordering::Greater => {
                    out.push(b[j]);
                    j += 1;
                }
                Ordering::Equal => {
                    out.push((a[i].0, a[i].1 + b[j].1));
                    i += 1;
                    j += 1;
                }
            }
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
        self.pairs = out;
    }

    /// The histogram of the union of disjoint regions.
    pub fn sum<'a>(parts: impl IntoIterator<Item = &'a CountOfCounts>) -> CountOfCounts {
        let mut total = CountOfCounts::new();
        for p in parts {
            total.add(p);
        }
        total
    }

    /// Top-codes sizes above `k` to `k` (Kuo et al. §4.1).
    pub fn top_coded(&self, k: Size) -> CountOfCounts {
        let split = self.pairs.partition_point(|&(s, _)| s < k);
        let mut pairs = self.pairs[..split].to_vec();
        let above: Count = self.pairs[split..].iter().map(|&(_, c)| c).sum();
        if above > 0 {
            pairs.push((k, above));
        }
        CountOfCounts { pairs }
    }

    /// `Hc` over `0..=k`, with sizes above `k` top-coded to `k`.
    pub fn cumulative(&self, k: Size) -> Cumulative {
        let mut values = vec![0; k as usize + 1];
        for &(s, c) in &self.pairs {
            values[s.min(k) as usize] += c;
        }
        let mut running = 0;
        for v in &mut values {
            running += *v;
            *v = running;
        }
        Cumulative { values }
    }

    /// `Hg`, run-length encoded.
    pub fn unattributed(&self) -> Unattributed {
        Unattributed {
            runs: self.pairs.clone(),
        }
    }

    /// Iterates over the cumulative histogram at the sizes where it changes:
    /// `(size, Hc[size])` for each size present.
    pub fn cumulative_steps(&self) -> impl Iterator<Item = (Size, Count)> + '_ {
        self.pairs.iter().scan(0, |acc, &(s, c)| {
            *acc += c;
            Some((s, *acc))
        })
    }
}

/// `Hc`: `values[j]` = number of groups of size `≤ j`, for `j` in `0..=K`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cumulative {
    values: Vec<Count>,
}

impl Cumulative {
    /// Wraps a dense cumulative histogram, checking it is nondecreasing and non-empty.
    pub fn from_values(values: Vec<Count>) -> Result<Self, HistogramError> {
        if values.is_empty() {
            return Err(HistogramError::EmptyCumulative);
        }
        if let Some(i) = values.windows(2).position(|w| w[1] < w[0]) {
            return Err(HistogramError::NotMonotone {
                size: (i + 1) as Size,
                before: values[i],
                after: values[i + 1],
            });
        }
        Ok(Self { values })
    }

    /// `K`, the largest size the histogram covers.
    pub fn max_size(&self) -> Size {
        (self.values.len() - 1) as Size
    }

    pub fn values(&self) -> &[Count] {
        &self.values
    }

    /// `G` = `Hc[K]`.
    pub fn groups(&self) -> Count {
        *self
            .values
            .last()
            .expect("a cumulative histogram has at least one cell")
    }

    /// Back to `H` by differencing.
    pub fn to_count_of_counts(&self) -> CountOfCounts {
        let mut prev = 0;
        let mut pairs = Vec::new();
        for (s, &v) in self.values.iter().enumerate() {
            if v > prev {
                pairs.push((s as Size, v - prev));
            }
            prev = v;
        }
        CountOfCounts { pairs }
    }
}

/// `Hg`: the sorted group sizes, as `(size, multiplicity)` runs with strictly increasing
/// sizes and multiplicities > 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unattributed {
    runs: Vec<(Size, Count)>,
}

impl Unattributed {
    /// Builds `Hg` from sizes given in nondecreasing order; `None` if they are not sorted.
    pub fn from_sorted_sizes(sizes: impl IntoIterator<Item = Size>) -> Option<Self> {
        let mut runs: Vec<(Size, Count)> = Vec::new();
        for s in sizes {
            match runs.last_mut() {
                Some(last) if last.0 == s => last.1 += 1,
                Some(last) if last.0 > s => return None,
                _ => runs.push((s, 1)),
            }
        }
        Some(Self { runs })
    }

    pub fn runs(&self) -> &[(Size, Count)] {
        &self.runs
    }

    /// `G`, the length of `Hg`.
    pub fn groups(&self) -> Count {
        self.runs.iter().map(|&(_, c)| c).sum()
    }

    /// The `G` sizes in ascending order, expanded lazily.
    pub fn iter(&self) -> impl Iterator<Item = Size> + '_ {
        self.runs
            .iter()
            .flat_map(|&(s, c)| std::iter::repeat_n(s, c as usize))
    }

    /// Back to `H` by counting.
    pub fn to_count_of_counts(&self) -> CountOfCounts {
        CountOfCounts {
            pairs: self.runs.clone(),
        }
    }
}

impl From<&Unattributed> for CountOfCounts {
    fn from(hg: &Unattributed) -> Self {
        hg.to_count_of_counts()
    }
}

impl From<&Cumulative> for CountOfCounts {
    fn from(hc: &Cumulative) -> Self {
        hc.to_count_of_counts()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn h(pairs: &[(Size, Count)]) -> CountOfCounts {
        CountOfCounts::from_pairs(pairs.iter().copied()).unwrap()
    }

    #[test]
    fn paper_example_representations() {
        // Kuo et al. §3: H = [0,2,1,2] gives Hc = [0,2,3,5] and Hg = [1,1,2,3,3].
        let hist = CountOfCounts::from_dense(&[0, 2, 1, 2]);
        assert_eq!(hist.cumulative(3).values(), &[0, 2, 3, 5]);
        assert_eq!(
            hist.unattributed().iter().collect::<Vec<_>>(),
            vec![1, 1, 2, 3, 3]
        );
        assert_eq!(hist.groups(), 5);
        assert_eq!(hist.entities(), 1 + 1 + 2 + 3 + 3);
    }

    #[test]
    fn top_coding_moves_large_groups_to_k() {
        let hist = h(&[(1, 3), (5, 2), (9, 1), (12, 4)]);
        assert_eq!(hist.top_coded(9), h(&[(1, 3), (5, 2), (9, 5)]));
        assert_eq!(hist.cumulative(9).values()[9], 10);
        assert_eq!(hist.cumulative(9).to_count_of_counts(), hist.top_coded(9));
        assert_eq!(hist.top_coded(20), hist);
    }

    #[test]
    fn duplicate_sizes_are_rejected_or_summed() {
        assert_eq!(
            CountOfCounts::from_pairs([(2, 1), (2, 3)]),
            Err(HistogramError::DuplicateSize { size: 2 })
        );
        assert_eq!(
            CountOfCounts::from_pairs_summing([(2, 1), (2, 3)]).unwrap(),
            h(&[(2, 4)])
        );
    }

    #[test]
    fn cumulative_must_be_monotone() {
        assert!(matches!(
            Cumulative::from_values(vec![1, 3, 2]),
            Err(HistogramError::NotMonotone { size: 2, .. })
        ));
        assert_eq!(
            Cumulative::from_values(vec![]),
            Err(HistogramError::EmptyCumulative)
        );
    }

    #[test]
    fn empty_region() {
        let empty = CountOfCounts::new();
        assert_eq!(empty.groups(), 0);
        assert_eq!(empty.max_size(), None);
        assert_eq!(empty.cumulative(4).values(), &[0, 0, 0, 0, 0]);
        assert_eq!(empty.unattributed().groups(), 0);
    }

    fn arb_hist() -> impl Strategy<Value = CountOfCounts> {
        proptest::collection::vec((0u32..60, 1u64..20), 0..12)
            .prop_map(|v| CountOfCounts::from_pairs_summing(v).unwrap())
    }

    proptest! {
        #[test]
        fn round_trips(hist in arb_hist(), extra in 0u32..10) {
            let k = hist.max_size().unwrap_or(0) + extra;
            prop_assert_eq!(hist.cumulative(k).to_count_of_counts(), hist.clone());
            prop_assert_eq!(hist.unattributed().to_count_of_counts(), hist.clone());
            let sizes: Vec<Size> = hist.unattributed().iter().collect();
            prop_assert_eq!(Unattributed::from_sorted_sizes(sizes.iter().copied()).unwrap(), hist.unattributed());
            prop_assert_eq!(CountOfCounts::from_sizes(sizes.iter().rev().copied()), hist.clone());
            prop_assert_eq!(sizes.len() as u64, hist.groups());
        }

        #[test]
        fn top_coded_round_trip(hist in arb_hist(), k in 0u32..60) {
            let hc = hist.cumulative(k);
            prop_assert_eq!(hc.groups(), hist.groups());
            prop_assert_eq!(hc.to_count_of_counts(), hist.top_coded(k));
            prop_assert!(hist.top_coded(k).max_size().unwrap_or(0) <= k);
        }

        #[test]
        fn sum_is_pointwise(a in arb_hist(), b in arb_hist()) {
            let s = CountOfCounts::sum([&a, &b]);
            for size in 0..70 {
                prop_assert_eq!(s.count(size), a.count(size) + b.count(size));
            }
        }
    }
}
