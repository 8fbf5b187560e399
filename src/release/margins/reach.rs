//! How far from the released groups a true group may lie: the cells a released 0 may
//! hide a group in.
//!
//! A cell's pooled interval ([`super::pool`]) answers "how far is this count from the
//! truth" for a typical cell of its class. Where groups are sparse (large sizes, small
//! regions, little ε) a true group is rarely released at its own size but near it, and
//! the cells around a released group are almost all empty: the pooled quantiles of
//! their class give `[0, 0]`, and the cell that holds the true group is not covered.
//!
//! The bootstrap measures the displacement directly. For every cell the bootstrap's
//! truth (the release) holds, it records the distance `D` from that size to the nearest
//! size the replicate released (0 where the replicate released that size too), pooled
//! by level and size ([`super::pool::size_bucket`]). The reach of a level and size is
//! the `confidence` quantile of `D`: a released-0 cell within the reach of its size from
//! a released size has an upper bound of at least 1 (a group may lie there), so the
//! cells that hold true groups are covered as often as the confidence says.
//!
//! Where groups are dense (small sizes, many groups) the replicates release every size
//! the truth holds, `D` is 0 for nearly all cells and the reach is 0: nothing changes.
//! A level whose classes already cover the confidence's share of its true cells in the
//! bootstrap world gets no reach at all (the many-region levels, as a rule): the rule
//! lists cells only where the level as a whole needs them.

use rustc_hash::FxHashMap as HashMap;

use crate::histogram::{Count, Size};

use super::pool::{self, Class, Merge, Merged, SizeKey, class_of, distance, size_bucket};
use super::zone::Zone;
use super::{Confidence, Offsets};

/// The regions of a level whose true cells the tally records, at most about this many
/// (every `n / SAMPLE_REGIONS`-th region of a level of `n`): the reach is read from
/// shares of them, which a sample of this size measures to well within a point, and a
/// census block level (8 million regions) is tallied in a fraction of the time.
pub const SAMPLE_REGIONS: usize = 50_000;

/// A level's size bucket's pooled displacements ([`SizeKey::Bucket`]), or a coarser
/// pool's (neighbouring buckets merged, [`SizeKey::Merged`]; the level's,
/// [`SizeKey::Any`]).
type Key = (u16, SizeKey);

/// The coarser pools a bucket's borrows from, finest first: its neighbours merged in
/// ever wider ranges, then the level's.
fn coarser((level, size): Key) -> Vec<Key> {
    let mut out: Vec<Key> = match size {
        SizeKey::Bucket(b) => Merged::around(b)
            .map(|m| (level, SizeKey::Merged(m)))
            .collect(),
        SizeKey::Merged(_) | SizeKey::Any => Vec::new(),
    };
    if size != SizeKey::Any {
        out.push((level, SizeKey::Any));
    }
    out
}

/// The true cells of one pool: how many, and for each the class the replicate put its
/// size in, the error `e = c − c*` there, and the displacement `D` (with their
/// multiplicities).
#[derive(Clone, Debug, Default)]
struct Tally {
    cells: u64,
    records: HashMap<(Class, i64, Size), u64>,
}

impl Merge for Tally {
    fn merge_from(&mut self, other: &Tally) {
        self.merge(other);
    }

    fn cells(&self) -> u64 {
        self.cells
    }
}

impl Tally {
    fn merge(&mut self, other: &Tally) {
        self.cells += other.cells;
        for (&k, &n) in &other.records {
            *self.records.entry(k).or_default() += n;
        }
    }

    /// The smallest reach that leaves at most `1 − confidence` of the true cells
    /// uncovered, given the classes' `offsets`; at most the `confidence` quantile of
    /// the displacements (a reach cannot cover what the classes miss at `D = 0`).
    fn reach(&self, offsets: &HashMap<Class, Offsets>, confidence: Confidence) -> Size {
        let allowed = ((1.0 - confidence.level()) * self.cells as f64).floor() as u64;
        let mut uncovered = 0u64;
        // Cells a reach of `D` or more would cover: uncovered by their class, released
        // 0 by the replicate, one true group.
        let mut fixable: Vec<(Size, u64)> = Vec::new();
        let mut displaced: Vec<(Size, u64)> = Vec::new();
        for (&(class, e, d), &n) in &self.records {
            let o = offsets
                .get(&class)
                .copied()
                .unwrap_or(Offsets { low: 0, high: 0 });
            if d > 0 {
                displaced.push((d, n));
            }
            if o.low <= e && e <= o.high {
                continue;
            }
            if d > 0 && e == 1 {
                fixable.push((d, n));
            } else {
                uncovered += n;
            }
        }
        let zero_cells = self.cells - displaced.iter().map(|&(_, n)| n).sum::<u64>();
        displaced.push((0, zero_cells));
        displaced.sort_unstable();
        let need = (confidence.level() * self.cells as f64).ceil() as u64;
        let mut seen = 0;
        let cap = displaced
            .iter()
            .find(|&&(_, n)| {
                seen += n;
                seen >= need
            })
            .map_or(0, |&(d, _)| d);
        fixable.sort_unstable();
        let mut left: u64 = uncovered + fixable.iter().map(|&(_, n)| n).sum::<u64>();
        if left <= allowed {
            return 0;
        }
        for &(d, n) in &fixable {
            if d > cap {
                break;
            }
            left -= n;
            if left <= allowed {
                return d;
            }
        }
        cap
    }
}

/// The true cells of one replicate or more, per level and size bucket.
#[derive(Clone, Debug, Default)]
pub struct ReachPools(HashMap<Key, Tally>);

impl ReachPools {
    /// Records every cell `(s, c > 0)` of `truth` (the released histogram of a region
    /// of `level`) with what the replicate (`observed`) released there: the class of
    /// its size, the error, and the distance from `s` to the nearest size the
    /// replicate released (0 if it released `s`; capped at `k + 1`).
    pub fn add_region(
        &mut self,
        level: u16,
        truth: &[(Size, Count)],
        observed: &[(Size, Count)],
        k: Size,
        zone: Option<Zone>,
    ) {
        for &(s, c) in truth {
            if c == 0 {
                continue;
            }
            let r = observed
                .binary_search_by_key(&s, |&(t, _)| t)
                .map_or(0, |j| observed[j].1);
            let d = if r > 0 {
                0
            } else {
                distance(observed, s).min(k.saturating_add(1))
            };
            let class = class_of(level, observed, s, r, zone);
            let tally = self
                .0
                .entry((level, SizeKey::Bucket(size_bucket(s))))
                .or_default();
            tally.cells += 1;
            *tally
                .records
                .entry((class, c as i64 - r as i64, d))
                .or_default() += 1;
        }
    }

    pub fn merge(&mut self, other: ReachPools) {
        if self.0.len() < other.0.len() {
            let mine = std::mem::replace(&mut self.0, other.0);
            return self.merge(ReachPools(mine));
        }
        for (k, v) in other.0 {
            self.0.entry(k).or_default().merge(&v);
        }
    }

    /// The reach of every level and size bucket at `confidence`, given the classes'
    /// `offsets` (`Tally::reach`): from its own pool if it holds at least
    /// [`MIN_SAMPLES`] true cells, else from the finest coarser pool that does
    /// (neighbouring buckets merged pairwise, then the level's), else the level's.
    ///
    /// A level whose classes already cover the confidence's share of its true cells
    /// gets no reach, whatever a bucket of it lacks, but for its tail (the buckets from
    /// `tail_from[level]`: the tail's `L`, or [`DEFAULT_TAIL_FROM`] for a level without
    /// one), which gets its reach too when the classes miss that share of the tail's
    /// own true cells. Gated with the level alone, a level of many head cells covered
    /// by their classes shut the reach off for its few tail cells, and a lone large
    /// group released beside its size (a sparse block's, a district's) was `[0, 0]` where
    /// it lay. Gated by its own cells alone, the tail lost the reach the level's gate
    /// gave it where the bootstrap's world covers the tail better than the truth is
    /// covered (measured: `docs/uncertainty.md`, item 5).
    pub fn table(
        &self,
        offsets: &HashMap<Class, Offsets>,
        confidence: Confidence,
        tail_from: &[Size],
    ) -> Reach {
        let coarse = pool::coarse_pools(&self.0, coarser);
        let first_tail =
            |level: usize| size_bucket(tail_from.get(level).copied().unwrap_or(DEFAULT_TAIL_FROM));
        let mut top: Vec<Option<u16>> = Vec::new();
        let mut parts: HashMap<(u16, bool), Tally> = HashMap::default();
        for (&(level, size), tally) in &self.0 {
            let SizeKey::Bucket(b) = size else { continue };
            parts
                .entry((level, b >= first_tail(usize::from(level))))
                .or_default()
                .merge(tally);
            let level = usize::from(level);
            if top.len() <= level {
                top.resize(level + 1, None);
            }
            top[level] = Some(top[level].map_or(b, |t| t.max(b)));
        }
        let mut memo: HashMap<Key, Size> = HashMap::default();
        // Every bucket up to the largest held, held or not: a bucket no truth held
        // reads the pools of its neighbours.
        let by_level = top
            .iter()
            .enumerate()
            .map(|(level, top)| {
                let Some(top) = *top else {
                    return Vec::new();
                };
                let needs =
                    |pool: Option<&Tally>| pool.is_some_and(|p| p.reach(offsets, confidence) > 0);
                let whole = needs(coarse.get(&(level as u16, SizeKey::Any)));
                let tail = needs(parts.get(&(level as u16, true)));
                let (head_open, tail_open) = (whole, whole || tail);
                if !head_open && !tail_open {
                    return Vec::new();
                }
                (0..=top)
                    .map(|b| {
                        let gate = if b >= first_tail(level) {
                            tail_open
                        } else {
                            head_open
                        };
                        if !gate {
                            return 0;
                        }
                        let key = (level as u16, SizeKey::Bucket(b));
                        match pool::choose(key, self.0.get(&key), &coarser(key), &coarse) {
                            Some((k, p)) => *memo
                                .entry(k)
                                .or_insert_with(|| p.reach(offsets, confidence)),
                            None => 0,
                        }
                    })
                    .collect()
            })
            .collect();
        Reach { by_level }
    }
}

/// Where a level without a tail is split into head and tail for the reach's gates: the
/// default tail's `L` ([`crate::estimate::Tail::AUTO`]).
pub const DEFAULT_TAIL_FROM: Size = crate::estimate::Tail::AUTO.above;

/// The reach per level and size bucket ([`ReachPools::table`]).
#[derive(Clone, Debug, Default)]
pub struct Reach {
    by_level: Vec<Vec<Size>>,
}

impl Reach {
    /// The reach at size `s` of `level`: a released-0 cell of that size within it of a
    /// released size may hold a group.
    pub fn at(&self, level: u16, s: Size) -> Size {
        let Some(row) = self.by_level.get(usize::from(level)) else {
            return 0;
        };
        let b = usize::from(size_bucket(s));
        row.get(b).or(row.last()).copied().unwrap_or(0)
    }

    /// The largest reach of `level` at sizes from `lo` to `hi`.
    pub fn most(&self, level: u16, lo: Size, hi: Size) -> Size {
        let Some(row) = self.by_level.get(usize::from(level)) else {
            return 0;
        };
        if row.is_empty() {
            return 0;
        }
        let (a, b) = (usize::from(size_bucket(lo)), usize::from(size_bucket(hi)));
        let last = row.len() - 1;
        row[a.min(last)..=b.min(last)]
            .iter()
            .copied()
            .max()
            .unwrap_or(0)
    }

    /// The released-0 sizes of a region (its released `pairs`, sizes `0..=k`) within
    /// reach of a released size, ascending.
    pub fn cells(&self, level: u16, pairs: &[(Size, Count)], k: Size) -> Vec<Size> {
        let mut out: Vec<Size> = Vec::new();
        for &(s, _) in pairs {
            // The widest reach of any size the window may hold.
            let mut w = self.at(level, s);
            loop {
                let wider = self.most(level, s.saturating_sub(w), s.saturating_add(w).min(k));
                if wider <= w {
                    break;
                }
                w = wider;
            }
            if w == 0 {
                continue;
            }
            // Past the cells already listed: the sizes stay ascending and distinct.
            let from = s.saturating_sub(w).max(out.last().map_or(0, |&z| z + 1));
            for z in from..=s.saturating_add(w).min(k) {
                if z != s
                    && pairs.binary_search_by_key(&z, |&(t, _)| t).is_err()
                    && distance(pairs, z) <= self.at(level, z)
                {
                    out.push(z);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_moved_by_the_replicates_gives_its_neighbours_a_reach() {
        let mut pools = ReachPools::default();
        // Level 0: a group at 40 that the replicates put 3 sizes away, every time.
        for _ in 0..200 {
            pools.add_region(0, &[(2, 50), (40, 1)], &[(2, 48), (43, 1)], 100, None);
        }
        // Level 1: every size released where it was.
        for _ in 0..200 {
            pools.add_region(1, &[(2, 50), (40, 1)], &[(2, 50), (40, 1)], 100, None);
        }
        // Classes that cover nothing.
        let reach = pools.table(&HashMap::default(), Confidence::DEFAULT, &[]);
        assert_eq!(reach.at(0, 40), 3);
        assert_eq!(reach.at(0, 2), 0);
        assert_eq!(reach.at(1, 40), 0);
        let cells = reach.cells(0, &[(2, 50), (40, 1)], 100);
        assert_eq!(cells, vec![37, 38, 39, 41, 42, 43]);
        assert!(reach.cells(1, &[(2, 50), (40, 1)], 100).is_empty());
        // Within 0..=K.
        assert_eq!(
            reach.cells(0, &[(2, 50), (99, 1)], 100),
            vec![96, 97, 98, 100]
        );
    }

    #[test]
    fn no_reach_where_the_classes_already_cover_the_true_groups() {
        let mut pools = ReachPools::default();
        for _ in 0..200 {
            pools.add_region(0, &[(2, 50), (40, 1)], &[(2, 48), (43, 1)], 100, None);
        }
        // The released-0 class at distance 3 already reaches 1 (and the class of
        // size 2 covers its error of 2).
        let far = class_of(0, &[(2, 48), (43, 1)], 40, 0, None);
        let two = class_of(0, &[(2, 48), (43, 1)], 2, 48, None);
        let offsets: HashMap<Class, Offsets> = [
            (far, Offsets { low: 0, high: 1 }),
            (two, Offsets { low: -3, high: 3 }),
        ]
        .into_iter()
        .collect();
        let reach = pools.table(&offsets, Confidence::DEFAULT, &[]);
        assert_eq!(reach.at(0, 40), 0);
        assert!(reach.cells(0, &[(2, 50), (40, 1)], 100).is_empty());
        // Half the true groups displaced by 3, the other half by 9: at 90%, the reach
        // must take in both.
        let mut pools = ReachPools::default();
        for i in 0..200 {
            let moved = if i % 2 == 0 { 43 } else { 49 };
            pools.add_region(0, &[(40, 1)], &[(moved, 1)], 100, None);
        }
        assert_eq!(
            pools
                .table(&HashMap::default(), Confidence::DEFAULT, &[])
                .at(0, 40),
            9
        );
    }
}
