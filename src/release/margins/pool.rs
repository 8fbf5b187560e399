//! Pooling replicate differences over comparable cells.
//!
//! A bootstrap interval needs quantiles of a cell's error `e = c − c*`, the released
//! count `c` (the truth in the bootstrap world) minus a replicate's count `c*`. With the few replicates a census-scale release affords, one
//! cell's own differences cannot give a 5% quantile; the cells of one level whose size
//! and released count are alike can. Cells are pooled into [`Class`]es: the level, the
//! size (exact up to 16, then four buckets per doubling), and the released count (exact
//! up to 3, then two buckets per doubling). A released-0 cell is classed by its distance
//! to the region's nearest released size (1, 2, 3–4, 5–8, 9–16, or farther): a group the
//! estimator moved lies near where the release put its neighbours, and only those cells
//! can hide one.
//!
//! A class holds the number of its cells and, over the replicates, the counts of its
//! nonzero differences (the zeros are what is left: cells × replicates minus those). A
//! class with fewer than [`MIN_SAMPLES`] differences borrows the quantiles of the
//! coarser class of its level and count (any size), then of its level alone.

use rustc_hash::FxHashMap as HashMap;

use crate::histogram::{Count, HistRef, Size};

use super::zone::Zone;

/// The nearest released size a released-0 cell may be from to be listed on its own
/// account: farther cells form one class per level (`far`).
pub const NEAR: Size = 16;

/// Below this many differences a class's 5% and 95% quantiles rest on a handful of
/// values (at 100, the 95% quantile is the 95th of 100): it borrows a coarser class's.
pub const MIN_SAMPLES: u64 = 100;

/// A pool of comparable cells (see the module docs): a level, what its cells' sizes
/// are and what the release says of their counts. The classes cells are pooled in are
/// [`SizeKey::Bucket`] or [`SizeKey::Any`] (far cells) with [`CountKey::Released`] or
/// [`CountKey::Zero`]; the others are the coarser classes a class borrows from
/// ([`Class::coarser`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Class {
    pub level: u16,
    pub size: SizeKey,
    pub count: CountKey,
}

/// What a class knows of its cells' sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SizeKey {
    /// One [`size_bucket`].
    Bucket(u16),
    /// The buckets next to each other whose number, halved `halvings` times, is
    /// `prefix` ([`Merged`]).
    Merged(Merged),
    /// Every size of the level.
    Any,
}

/// Neighbouring buckets merged pairwise, `halvings` times: the `2^halvings` buckets
/// `prefix · 2^halvings ..= (prefix + 1) · 2^halvings − 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Merged {
    pub halvings: u8,
    pub prefix: u16,
}

impl Merged {
    /// The ever wider ranges of buckets holding `bucket`, narrowest first, up to the
    /// one that starts at bucket 0.
    pub fn around(bucket: u16) -> impl Iterator<Item = Merged> {
        (1u8..=16)
            .map(move |halvings| Merged {
                halvings,
                prefix: bucket >> halvings,
            })
            .scan(false, |done, m| {
                // Stop after the first range starting at bucket 0.
                if *done {
                    return None;
                }
                *done = m.prefix == 0;
                Some(m)
            })
    }
}

/// What a class knows of its cells' released counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CountKey {
    /// A released count above 0, in its [`count_bucket`].
    Released(u16),
    /// Count buckets merged ([`Merged`] over [`count_bucket`]s).
    Merged(Merged),
    /// Every released count above 0 of the level.
    AnyReleased,
    /// A released 0, by how far it lies from the region's nearest released size.
    Zero(Gap),
    /// Every released 0 of the level.
    AnyZero,
}

/// How far a released-0 cell lies from the region's nearest released size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Gap {
    One,
    Two,
    UpTo4,
    UpTo8,
    /// 9 to [`NEAR`].
    UpToNear,
    /// Farther than [`NEAR`]: one class per level, whatever the size.
    Far,
    /// Farther than [`NEAR`] but in the level's tail zone ([`super::zone`]): a group
    /// the estimator put at `L` may be there, so one class per size bucket.
    Zone,
}

impl Gap {
    /// The gap of a distance `d ≥ 1` to the nearest released size.
    pub fn of(d: Size) -> Gap {
        match d {
            0 | 1 => Gap::One,
            2 => Gap::Two,
            3..=4 => Gap::UpTo4,
            5..=8 => Gap::UpTo8,
            9..=NEAR => Gap::UpToNear,
            _ => Gap::Far,
        }
    }
}

impl Class {
    /// The class of a level's far released-0 cells.
    pub fn far(level: u16) -> Class {
        Class {
            level,
            size: SizeKey::Any,
            count: CountKey::Zero(Gap::Far),
        }
    }

    /// The coarser classes this one borrows from when it holds too few errors, finest
    /// first: its size buckets merged with their neighbours in ever wider ranges, then
    /// any size with its count buckets merged the same way, then its level's cells of
    /// its kind (released 0, or not).
    pub fn coarser(self) -> Vec<Class> {
        let mut out = Vec::new();
        if let SizeKey::Bucket(b) = self.size {
            out.extend(Merged::around(b).map(|m| Class {
                size: SizeKey::Merged(m),
                ..self
            }));
        }
        let any = Class {
            size: SizeKey::Any,
            ..self
        };
        out.push(any);
        match self.count {
            CountKey::Released(b) => {
                out.extend(Merged::around(b).map(|m| Class {
                    count: CountKey::Merged(m),
                    ..any
                }));
                out.push(Class {
                    count: CountKey::AnyReleased,
                    ..any
                });
            }
            CountKey::Zero(_) => out.push(Class {
                count: CountKey::AnyZero,
                ..any
            }),
            CountKey::Merged(_) | CountKey::AnyReleased | CountKey::AnyZero => {}
        }
        out
    }
}

/// Pools that merge: a class's errors, a reach's tally.
pub trait Merge: Default {
    fn merge_from(&mut self, other: &Self);
    /// How many cells the pool holds.
    fn cells(&self) -> u64;
}

/// Every coarser pool of `own` (keyed by `coarser(key)`, finest first), each the merge
/// of the pools of the keys under it.
pub fn coarse_pools<K, P, I>(own: &HashMap<K, P>, coarser: impl Fn(K) -> I) -> HashMap<K, P>
where
    K: Copy + Eq + std::hash::Hash,
    P: Merge,
    I: IntoIterator<Item = K>,
{
    let mut coarse: HashMap<K, P> = HashMap::default();
    for (&key, p) in own {
        for a in coarser(key) {
            coarse.entry(a).or_default().merge_from(p);
        }
    }
    coarse
}

/// The pool a key's quantiles are read from: its own (`own`) if it holds at least
/// [`MIN_SAMPLES`] cells, else the finest of its coarser pools (`chain`, finest first,
/// from `coarse`) that does, else the coarsest, however few it holds. `None` when
/// there is no pool at all. Returns the key of the pool chosen, with it.
pub fn choose<'a, K, P>(
    key: K,
    own: Option<&'a P>,
    chain: &[K],
    coarse: &'a HashMap<K, P>,
) -> Option<(K, &'a P)>
where
    K: Copy + Eq + std::hash::Hash,
    P: Merge,
{
    std::iter::once((key, own))
        .chain(chain.iter().map(|a| (*a, coarse.get(a))))
        .find_map(|(k, p)| p.filter(|p| p.cells() >= MIN_SAMPLES).map(|p| (k, p)))
        .or_else(|| {
            let last = chain.last()?;
            coarse.get(last).map(|p| (*last, p))
        })
}

/// Sizes up to 16 on their own, then four buckets per doubling.
pub fn size_bucket(s: Size) -> u16 {
    if s <= 16 {
        return s as u16;
    }
    let log = 31 - s.leading_zeros(); // ≥ 4
    let quarter = (s >> (log - 2)) & 3;
    (16 + 4 * (log - 4) + quarter + 1) as u16
}

/// The largest size of the cells a [`SizeKey`] holds.
pub fn size_key_max(key: SizeKey) -> Size {
    match key {
        SizeKey::Bucket(b) => size_bucket_max(b),
        SizeKey::Merged(m) => {
            let last = ((u32::from(m.prefix) + 1) << m.halvings) - 1;
            size_bucket_max(last.min(u32::from(u16::MAX)) as u16)
        }
        SizeKey::Any => Size::MAX,
    }
}

/// The largest size of a [`size_bucket`].
pub fn size_bucket_max(b: u16) -> Size {
    if b <= 16 {
        return Size::from(b);
    }
    let log = (u32::from(b) - 17) / 4 + 4;
    let quarter = (u32::from(b) - 17) % 4;
    if log >= 32 {
        return Size::MAX;
    }
    let width = 1u64 << (log - 2);
    ((1u64 << log) + u64::from(quarter) * width + width - 1).min(u64::from(Size::MAX)) as Size
}

/// The smallest count of a [`count_bucket`].
pub fn count_bucket_min(b: u16) -> Count {
    if b <= 3 {
        return Count::from(b);
    }
    let log = (u32::from(b) - 4) / 2 + 2;
    let half = (u32::from(b) - 4) % 2;
    if log >= 64 {
        return Count::MAX;
    }
    (1u64 << log) + u64::from(half) * (1u64 << (log - 1))
}

/// Counts 1–3 on their own, then two buckets per doubling.
pub fn count_bucket(c: Count) -> u16 {
    if c <= 3 {
        return c as u16;
    }
    let log = 63 - c.leading_zeros(); // ≥ 2
    let half = (c >> (log - 1)) & 1;
    (3 + 2 * (log - 2) + half as u32 + 1) as u16
}

/// The distance from `s` to the nearest of the sorted `sizes` (none: `Size::MAX`).
pub fn distance(sizes: &[(Size, Count)], s: Size) -> Size {
    let i = sizes.partition_point(|&(t, _)| t < s);
    let after = sizes.get(i).map_or(Size::MAX, |&(t, _)| t - s);
    let before = if i > 0 { s - sizes[i - 1].0 } else { Size::MAX };
    after.min(before)
}

/// The class of the cell of size `s` with released count `c` in a region of `level`
/// whose released sizes are `released`, the level's tail zone being `zone`
/// ([`super::zone`]): a released 0 in the zone farther than [`NEAR`] from a released
/// size is not far (a group the estimator put at `L` may be there) but in a class of
/// its own per size bucket.
pub fn class_of(
    level: u16,
    released: &[(Size, Count)],
    s: Size,
    c: Count,
    zone: Option<Zone>,
) -> Class {
    if c > 0 {
        return Class {
            level,
            size: SizeKey::Bucket(size_bucket(s)),
            count: CountKey::Released(count_bucket(c)),
        };
    }
    match Gap::of(distance(released, s)) {
        Gap::Far if zone.is_some_and(|z| z.holds(s)) => Class {
            level,
            size: SizeKey::Bucket(size_bucket(s)),
            count: CountKey::Zero(Gap::Zone),
        },
        Gap::Far => Class::far(level),
        gap => Class {
            level,
            size: SizeKey::Bucket(size_bucket(s)),
            count: CountKey::Zero(gap),
        },
    }
}

/// Calls `f(size, released count)` for every cell of a region that has a class of its
/// own, ascending: the released sizes, the released-0 sizes within [`NEAR`] of one, and
/// the sizes of the level's tail `zone`. Returns the number of the region's other cells
/// (sizes `0..=K`), which are far.
pub fn for_each_near_cell(
    hist: HistRef<'_>,
    k: Size,
    zone: Option<Zone>,
    mut f: impl FnMut(Size, Count),
) -> u64 {
    let pairs = hist.pairs();
    let (k, near) = (u64::from(k), u64::from(NEAR));
    let mut visit = Visit {
        pairs,
        at: 0,
        next: 0,
        listed: 0,
    };
    let mut zone = zone.map(|z| (u64::from(z.above) + 1, u64::from(z.last).min(k)));
    for &(s, _) in pairs {
        let s = u64::from(s);
        let lo = s.saturating_sub(near);
        if let Some((a, b)) = zone.filter(|&(a, _)| a <= lo) {
            visit.range(a, b, &mut f);
            zone = None;
        }
        visit.range(lo, (s + near).min(k).max(s), &mut f);
    }
    if let Some((a, b)) = zone {
        visit.range(a, b, &mut f);
    }
    (k + 1).saturating_sub(visit.listed)
}

/// A walk over a region's cells in ascending order of size, each visited once.
struct Visit<'a> {
    pairs: &'a [(Size, Count)],
    /// The first released pair not below the sizes visited.
    at: usize,
    /// The first size not yet visited.
    next: u64,
    listed: u64,
}

impl Visit<'_> {
    /// Visits the sizes `lo..=hi` not visited yet, with their released counts.
    fn range(&mut self, lo: u64, hi: u64, f: &mut impl FnMut(Size, Count)) {
        for z in lo.max(self.next)..=hi {
            while self.at < self.pairs.len() && u64::from(self.pairs[self.at].0) < z {
                self.at += 1;
            }
            let c = match self.pairs.get(self.at) {
                Some(&(s, c)) if u64::from(s) == z => c,
                _ => 0,
            };
            f(z as Size, c);
            self.listed += 1;
        }
        self.next = self.next.max(hi + 1);
    }
}

/// The differences of one class over the replicates.
#[derive(Clone, Debug, Default)]
pub struct Pool {
    /// Cells in the class, over all replicates.
    pub cells: u64,
    /// Nonzero differences and how often each occurred.
    pub nonzero: HashMap<i64, u64>,
}

impl Merge for Pool {
    fn merge_from(&mut self, other: &Pool) {
        self.merge(other);
    }

    fn cells(&self) -> u64 {
        self.cells
    }
}

impl Pool {
    pub fn merge(&mut self, other: &Pool) {
        self.cells += other.cells;
        for (&d, &n) in &other.nonzero {
            *self.nonzero.entry(d).or_default() += n;
        }
    }

    /// The sorted distribution of the differences: values with their multiplicities,
    /// zeros included.
    pub fn distribution(&self) -> Vec<(i64, u64)> {
        let nonzero: u64 = self.nonzero.values().sum();
        let zeros = self.cells.saturating_sub(nonzero);
        let mut out: Vec<(i64, u64)> = self.nonzero.iter().map(|(&d, &n)| (d, n)).collect();
        if zeros > 0 {
            out.push((0, zeros));
        }
        out.sort_unstable();
        out
    }
}

/// The `p`-quantile of a sorted distribution: the smallest value whose cumulative share
/// reaches `p` (0 for an empty one).
pub fn quantile(dist: &[(i64, u64)], p: f64) -> i64 {
    let total: u64 = dist.iter().map(|&(_, n)| n).sum();
    if total == 0 {
        return 0;
    }
    let need = (p * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0u64;
    for &(v, n) in dist {
        seen += n;
        if seen >= need {
            return v;
        }
    }
    dist.last().map_or(0, |&(v, _)| v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::CountOfCounts;

    #[test]
    fn buckets_are_monotone() {
        let mut last = 0;
        for s in 0..5000u32 {
            let b = size_bucket(s);
            assert!(b >= last && b - last <= 1, "{s}");
            last = b;
        }
        let mut last = 0;
        for c in 0..5000u64 {
            let b = count_bucket(c);
            assert!(b >= last && b - last <= 1, "{c}");
            last = b;
        }
    }

    #[test]
    fn bucket_bounds_hold_their_values() {
        for s in (0..100_000u32).chain([u32::MAX / 2, u32::MAX - 1]) {
            let b = size_bucket(s);
            assert!(s <= size_bucket_max(b), "{s}");
            assert!(b == 0 || size_bucket_max(b - 1) < s, "{s}");
        }
        for c in (0..100_000u64).chain([1 << 40, (1 << 41) - 1]) {
            let b = count_bucket(c);
            assert!(count_bucket_min(b) <= c, "{c}");
            assert!(count_bucket_min(b + 1) > c, "{c}");
        }
    }

    #[test]
    fn near_cells_are_each_visited_once_in_order() {
        let h = CountOfCounts::from_pairs([(3, 5), (10, 1), (60, 2)]).unwrap();
        let mut seen = Vec::new();
        let far = for_each_near_cell(h.as_ref(), 100, None, |s, c| seen.push((s, c)));
        let sizes: Vec<Size> = seen.iter().map(|&(s, _)| s).collect();
        let mut sorted = sizes.clone();
        sorted.dedup();
        assert_eq!(sizes, sorted);
        assert!(sizes.windows(2).all(|w| w[0] < w[1]));
        let expect: Vec<Size> = (0..=100)
            .filter(|&s| distance(h.pairs(), s) <= NEAR)
            .collect();
        assert_eq!(sizes, expect);
        assert_eq!(far, 101 - expect.len() as u64);
        assert!(seen.contains(&(10, 1)) && seen.contains(&(11, 0)));

        // With a tail zone (20, 50]: its sizes too, still once each and in order, and
        // its released 0 far from a released size has the zone's class.
        let zone = Zone {
            above: 20,
            last: 50,
        };
        let mut seen = Vec::new();
        let far = for_each_near_cell(h.as_ref(), 100, Some(zone), |s, c| seen.push((s, c)));
        let sizes: Vec<Size> = seen.iter().map(|&(s, _)| s).collect();
        let expect: Vec<Size> = (0..=100)
            .filter(|&s| distance(h.pairs(), s) <= NEAR || zone.holds(s))
            .collect();
        assert_eq!(sizes, expect);
        assert_eq!(far, 101 - expect.len() as u64);
        assert!(seen.contains(&(60, 2)) && seen.contains(&(30, 0)));
        assert_eq!(
            class_of(0, h.pairs(), 30, 0, Some(zone)).count,
            CountKey::Zero(Gap::Zone)
        );
        assert_eq!(class_of(0, h.pairs(), 30, 0, None), Class::far(0));
        assert_eq!(
            class_of(0, h.pairs(), 70, 0, Some(zone)).count,
            CountKey::Zero(Gap::UpToNear)
        );
    }

    /// A class borrows from ranges of neighbouring buckets, each holding the one before
    /// and its own bucket, never from buckets elsewhere on the scale.
    #[test]
    fn coarser_classes_are_nested_ranges_of_neighbours() {
        let range = |m: Merged| {
            let lo = u32::from(m.prefix) << m.halvings;
            lo..=lo + (1 << m.halvings) - 1
        };
        for b in [0u16, 1, 2, 5, 16, 17, 40, 113] {
            let ranges: Vec<_> = Merged::around(b).map(range).collect();
            assert!(!ranges.is_empty());
            assert_eq!(*ranges.last().unwrap().start(), 0, "{b}");
            let mut last = u32::from(b)..=u32::from(b);
            for r in ranges {
                assert!(r.contains(last.start()) && r.contains(last.end()), "{b}");
                assert_eq!(r.end() - r.start() + 1, 2 * (last.end() - last.start() + 1));
                last = r;
            }
        }
        // Buckets 2 and 40 share no range but the level's whole: bucket 2's widest range
        // stops at bucket 3, below 40's narrowest.
        let a: Vec<_> = Merged::around(2).collect();
        let b: Vec<_> = Merged::around(40).collect();
        assert!(a.iter().all(|m| !b.contains(m)));
        let c = Class {
            level: 1,
            size: SizeKey::Bucket(40),
            count: CountKey::Released(5),
        };
        let chain = c.coarser();
        assert_eq!(
            chain.last(),
            Some(&Class {
                level: 1,
                size: SizeKey::Any,
                count: CountKey::AnyReleased
            })
        );
        let zero = Class {
            count: CountKey::Zero(Gap::Two),
            ..c
        };
        assert_eq!(zero.coarser().last().unwrap().count, CountKey::AnyZero);
        assert_eq!(
            size_key_max(SizeKey::Merged(Merged {
                halvings: 1,
                prefix: 2
            })),
            5
        );
    }

    #[test]
    fn quantiles_of_a_distribution() {
        let d = vec![(-2, 1), (0, 8), (3, 1)];
        assert_eq!(quantile(&d, 0.05), -2);
        assert_eq!(quantile(&d, 0.5), 0);
        assert_eq!(quantile(&d, 0.9), 0);
        assert_eq!(quantile(&d, 0.95), 3);
    }
}
