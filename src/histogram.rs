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

    /// The histogram as a borrowed view.
    pub fn as_ref(&self) -> HistRef<'_> {
        HistRef { pairs: &self.pairs }
    }

    /// The sorted `(size, count)` pairs, every count > 0.
    pub fn pairs(&self) -> &[(Size, Count)] {
        &self.pairs
    }

    /// `G`: the number of groups.
    pub fn groups(&self) -> Count {
        self.as_ref().groups()
    }

    /// The number of entities: the sum of all group sizes.
    pub fn entities(&self) -> u128 {
        self.as_ref().entities()
    }

    /// The largest group size, or `None` for a region without groups.
    pub fn max_size(&self) -> Option<Size> {
        self.as_ref().max_size()
    }

    /// How many different sizes occur.
    pub fn distinct_sizes(&self) -> usize {
        self.pairs.len()
    }

    /// `H[size]`.
    pub fn count(&self, size: Size) -> Count {
        self.as_ref().count(size)
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Adds `other` into `self` (the histogram of the union of two disjoint regions).
    pub fn add<'a>(&mut self, other: impl Into<HistRef<'a>>) {
        let other = other.into();
        if other.pairs.is_empty() {
            return;
        }
        if self.pairs.is_empty() {
            self.pairs.extend_from_slice(other.pairs);
            return;
        }
        let mut out = Vec::with_capacity(self.pairs.len().max(other.pairs.len()));
        let (mut i, mut j) = (0, 0);
        let (a, b) = (&self.pairs, other.pairs);
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
    pub fn sum<'a, H: Into<HistRef<'a>>>(parts: impl IntoIterator<Item = H>) -> CountOfCounts {
        let mut total = CountOfCounts::new();
        for p in parts {
            total.add(p);
        }
        total
    }

    /// Top-codes sizes above `k` to `k` (Kuo et al. §4.1).
    pub fn top_coded(&self, k: Size) -> CountOfCounts {
        self.as_ref().top_coded(k)
    }

    /// `Hc` over `0..=k`, with sizes above `k` top-coded to `k`.
    pub fn cumulative(&self, k: Size) -> Cumulative {
        self.as_ref().cumulative(k)
    }

    /// `Hg`, run-length encoded.
    pub fn unattributed(&self) -> Unattributed {
        self.as_ref().unattributed()
    }

    /// Iterates over the cumulative histogram at the sizes where it changes:
    /// `(size, Hc[size])` for each size present.
    pub fn cumulative_steps(&self) -> impl Iterator<Item = (Size, Count)> + '_ {
        self.as_ref().cumulative_steps()
    }
}

/// A borrowed `H`: sorted `(size, count)` pairs with every count > 0, as held by a
/// [`CountOfCounts`] or by one region of a [`HistogramSet`]. Every read of a histogram
/// goes through it, so an arena of millions of regions needs no histogram per region.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HistRef<'a> {
    pairs: &'a [(Size, Count)],
}

impl<'a> HistRef<'a> {
    /// The sorted `(size, count)` pairs, every count > 0.
    pub fn pairs(self) -> &'a [(Size, Count)] {
        self.pairs
    }

    /// `G`: the number of groups.
    pub fn groups(self) -> Count {
        self.pairs.iter().map(|&(_, c)| c).sum()
    }

    /// The number of entities: the sum of all group sizes.
    pub fn entities(self) -> u128 {
        self.pairs
            .iter()
            .map(|&(s, c)| u128::from(s) * u128::from(c))
            .sum()
    }

    /// The largest group size, or `None` for a region without groups.
    pub fn max_size(self) -> Option<Size> {
        self.pairs.last().map(|&(s, _)| s)
    }

    /// How many different sizes occur.
    pub fn distinct_sizes(self) -> usize {
        self.pairs.len()
    }

    /// `H[size]`.
    pub fn count(self, size: Size) -> Count {
        match self.pairs.binary_search_by_key(&size, |&(s, _)| s) {
            Ok(i) => self.pairs[i].1,
            Err(_) => 0,
        }
    }

    pub fn is_empty(self) -> bool {
        self.pairs.is_empty()
    }

    /// An owned copy.
    pub fn to_owned(self) -> CountOfCounts {
        CountOfCounts {
            pairs: self.pairs.to_vec(),
        }
    }

    /// Top-codes sizes above `k` to `k` (Kuo et al. §4.1).
    pub fn top_coded(self, k: Size) -> CountOfCounts {
        let split = self.pairs.partition_point(|&(s, _)| s < k);
        let mut pairs = self.pairs[..split].to_vec();
        let above: Count = self.pairs[split..].iter().map(|&(_, c)| c).sum();
        if above > 0 {
            pairs.push((k, above));
        }
        CountOfCounts { pairs }
    }

    /// `Hc` over `0..=k`, with sizes above `k` top-coded to `k`.
    pub fn cumulative(self, k: Size) -> Cumulative {
        let mut values = vec![0; k as usize + 1];
        for &(s, c) in self.pairs {
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
    pub fn unattributed(self) -> Unattributed {
        Unattributed {
            runs: self.pairs.to_vec(),
        }
    }

    /// Iterates over the cumulative histogram at the sizes where it changes:
    /// `(size, Hc[size])` for each size present.
    pub fn cumulative_steps(self) -> impl Iterator<Item = (Size, Count)> + 'a {
        self.pairs.iter().scan(0, |acc, &(s, c)| {
            *acc += c;
            Some((s, *acc))
        })
    }
}

impl<'a> From<&'a CountOfCounts> for HistRef<'a> {
    fn from(h: &'a CountOfCounts) -> Self {
        h.as_ref()
    }
}

/// The histograms of many regions in one arena (region `i`'s pairs are one slice), so
/// that memory follows the distinct (region, size) cells: about 16 bytes per cell and 8
/// per region, where a `Vec<CountOfCounts>` costs a heap allocation per region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistogramSet {
    /// `offsets[i]..offsets[i + 1]` are region `i`'s pairs.
    offsets: Vec<usize>,
    pairs: Vec<(Size, Count)>,
}

impl Default for HistogramSet {
    fn default() -> Self {
        Self::new()
    }
}

impl HistogramSet {
    pub fn new() -> Self {
        Self {
            offsets: vec![0],
            pairs: Vec::new(),
        }
    }

    /// Room for `regions` histograms of `cells` pairs in all.
    pub fn with_capacity(regions: usize, cells: usize) -> Self {
        let mut offsets = Vec::with_capacity(regions + 1);
        offsets.push(0);
        Self {
            offsets,
            pairs: Vec::with_capacity(cells),
        }
    }

    /// `n` empty histograms.
    pub fn empty(n: usize) -> Self {
        Self {
            offsets: vec![0; n + 1],
            pairs: Vec::new(),
        }
    }

    /// The number of regions.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of (region, size) cells in all.
    pub fn cells(&self) -> usize {
        self.pairs.len()
    }

    /// Region `i`'s histogram.
    pub fn get(&self, i: usize) -> HistRef<'_> {
        HistRef {
            pairs: &self.pairs[self.offsets[i]..self.offsets[i + 1]],
        }
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = HistRef<'_>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Appends a histogram.
    pub fn push(&mut self, h: HistRef<'_>) {
        self.pairs.extend_from_slice(h.pairs);
        self.offsets.push(self.pairs.len());
    }

    /// Appends a histogram given as pairs that are already sorted by size, strictly
    /// increasing, with counts > 0 (checked in debug builds).
    pub fn push_sorted_pairs(&mut self, pairs: impl IntoIterator<Item = (Size, Count)>) {
        let start = self.pairs.len();
        self.pairs.extend(pairs);
        debug_assert!(
            self.pairs[start..].windows(2).all(|w| w[0].0 < w[1].0)
                && self.pairs[start..].iter().all(|p| p.1 > 0)
        );
        self.offsets.push(self.pairs.len());
    }

    /// The sets one after the other (each part's regions in order). Memory: the result
    /// is reserved once and each part freed as soon as it is copied.
    pub fn concat(parts: Vec<HistogramSet>) -> HistogramSet {
        let regions: usize = parts.iter().map(HistogramSet::len).sum();
        let cells: usize = parts.iter().map(HistogramSet::cells).sum();
        let mut out = HistogramSet::with_capacity(regions, cells);
        for part in parts {
            let base = out.pairs.len();
            out.pairs.extend_from_slice(&part.pairs);
            out.offsets
                .extend(part.offsets[1..].iter().map(|&o| base + o));
        }
        out
    }

    /// Owned copies, one per region (for small datasets and tests).
    pub fn to_vec(&self) -> Vec<CountOfCounts> {
        self.iter().map(HistRef::to_owned).collect()
    }

    /// The bytes held.
    pub fn memory_bytes(&self) -> u64 {
        (self.offsets.capacity() * std::mem::size_of::<usize>()
            + self.pairs.capacity() * std::mem::size_of::<(Size, Count)>()) as u64
    }
}

/// Histograms indexed by region: an arena, or a slice of owned histograms.
pub trait Histograms: Sync {
    /// The number of regions.
    fn regions(&self) -> usize;
    /// Region `i`'s histogram.
    fn hist(&self, i: usize) -> HistRef<'_>;
}

impl Histograms for HistogramSet {
    fn regions(&self) -> usize {
        self.len()
    }
    fn hist(&self, i: usize) -> HistRef<'_> {
        self.get(i)
    }
}

impl Histograms for [CountOfCounts] {
    fn regions(&self) -> usize {
        self.len()
    }
    fn hist(&self, i: usize) -> HistRef<'_> {
        self[i].as_ref()
    }
}

impl Histograms for Vec<CountOfCounts> {
    fn regions(&self) -> usize {
        self.len()
    }
    fn hist(&self, i: usize) -> HistRef<'_> {
        self[i].as_ref()
    }
}

impl FromIterator<CountOfCounts> for HistogramSet {
    fn from_iter<I: IntoIterator<Item = CountOfCounts>>(iter: I) -> Self {
        let mut out = HistogramSet::new();
        for h in iter {
            out.push(h.as_ref());
        }
        out
    }
}

impl<'a> FromIterator<HistRef<'a>> for HistogramSet {
    fn from_iter<I: IntoIterator<Item = HistRef<'a>>>(iter: I) -> Self {
        let mut out = HistogramSet::new();
        for h in iter {
            out.push(h);
        }
        out
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
