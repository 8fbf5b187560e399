//! The tail's unresolved zone: the sizes just above a tail's `L` where the estimator
//! cannot tell a group from noise, and the bootstrap world that accounts for it.
//!
//! `hc` with a tail ([`crate::estimate::tail`]) counts a fitted block of listed sizes as
//! groups above `L` only if it lies [`SIGNIFICANT`] of its standard deviations above
//! `L`; the groups of the other blocks are put at `L`. A lone group of size
//! `L + d` is therefore released at `L` unless `d` exceeds `SIGNIFICANT·√Var` (`Var`
//! the noise variance of one measured value): the release's cells `(L, L + Z]`,
//! `Z = ⌈SIGNIFICANT·√Var⌉`, are 0 whatever the truth holds there, and its size-`L`
//! cell holds them all. That is a bias of the estimator, and a bootstrap whose truth is
//! the release cannot see it: in its world those cells are empty too, every replicate
//! agrees, and their intervals come out `[0, 0]` while the truth may hold groups there.
//!
//! So the bootstrap's truth is not the release itself but the release with the bias
//! undone as far as public information allows ([`world`]): at each tail level, each
//! region's size-`L` groups are spread over the zone by a falling line ([`spread`]).
//! All of them: the release cannot tell the groups truly of size `L` from those put
//! there, and a truth that holds many at `L` is still covered, the replicates putting
//! the spread groups back at `L` (the size-`L` cell's interval then reaches down to
//! where the zone's groups came from). The replicates then put those groups back at `L`, and
//! the errors of the zone's cells and of the size-`L` cell are those the estimator
//! makes on groups spread over the zone. The world is post-processing of the release
//! and the plan: it reads nothing else. The release says nothing about where in the
//! zone its groups lie; the pooled classes learn the chance that a zone cell of each
//! size holds one when the groups fall off with size, as counts of counts do.

use crate::data::{NodeId, PublicData};
use crate::estimate::Method;
use crate::estimate::tail::SIGNIFICANT;
use crate::histogram::{Count, CountOfCounts, HistogramSet, Size};
use crate::noise::mechanism::variance_of;
use crate::release::plan::ReleasePlan;

/// A level's zone: the sizes `above + 1 ..= last`, where a released 0 is not known to be
/// 0 and from which the released size-`above` cell may have taken its groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zone {
    /// The tail's `L`.
    pub above: Size,
    /// The last size of the zone (at most `K`).
    pub last: Size,
}

impl Zone {
    /// Whether size `s` lies in the zone (above `L`, at most `last`).
    pub fn holds(&self, s: Size) -> bool {
        s > self.above && s <= self.last
    }
}

/// Per level (root first), the zone of a level measured with `hc` and a tail; `None`
/// for the others, and for a tail whose `L` is `K` or more.
pub fn zones(plan: &ReleasePlan, levels: usize, k: Size) -> Vec<Option<Zone>> {
    (0..levels)
        .map(|l| {
            let level = plan.level(crate::data::LevelId(l));
            let Method::HcTail(tail) = level.method() else {
                return None;
            };
            if tail.above >= k {
                return None;
            }
            // The tail is per measured level: an unmeasured level has no noisy tail.
            let var = variance_of(level.loss()?, level.method().sensitivity_norms());
            let width = (SIGNIFICANT * var.sqrt()).ceil();
            let last = (f64::from(tail.above) + width).min(f64::from(k)) as Size;
            (last > tail.above).then_some(Zone {
                above: tail.above,
                last,
            })
        })
        .collect()
}

/// The bootstrap's truth: the released histograms with the estimators' biases undone
/// as far as public information allows. In every region of a level with a zone, the
/// size-`L` groups are spread over the zone's sizes (see the module docs); in every
/// region of a level `skipped` gives a noise s.d. for (measured with `hg`), the sizes the release skipped
/// between populous sizes are filled ([`super::skipped`]); and every region of a level
/// `plan` leaves unmeasured is the sum of its children's truths: a replicate estimates
/// such a region from its children, as the release did, so its truth is theirs (the
/// released region, their sum, would miss the groups spread below it). `None` if no
/// level has a zone or skipped sizes to fill.
pub fn world(
    released: &HistogramSet,
    public: PublicData<'_>,
    zones: &[Option<Zone>],
    skipped: &[Option<f64>],
    plan: &ReleasePlan,
) -> Option<HistogramSet> {
    if zones.iter().all(Option::is_none) && skipped.iter().all(Option::is_none) {
        return None;
    }
    let h = public.hierarchy;
    let mut hists: Vec<CountOfCounts> = (0..h.len())
        .map(|i| {
            let hist = released.get(i);
            let level = h.node(NodeId(i as u32)).level.0;
            match zones.get(level).copied().flatten() {
                Some(zone) => spread(hist.pairs(), zone, phase(i)),
                None => match skipped.get(level).copied().flatten() {
                    Some(sd) => super::skipped::fill(hist.pairs(), sd, phase(i)),
                    None => hist.to_owned(),
                },
            }
        })
        .collect();
    for id in h.bottom_up() {
        let node = h.node(id);
        if node.is_leaf() || plan.level(node.level).is_measured() {
            continue;
        }
        hists[id.index()] = CountOfCounts::sum(node.children().map(|c| hists[c.index()].as_ref()));
    }
    Some(hists.into_iter().collect())
}

/// Per level (root first), for a level measured with `hg`, whose rounding skips sizes
/// ([`super::skipped`]), the s.d. of one measured value's noise; `None` for the others.
pub fn skipped_levels(plan: &ReleasePlan, levels: usize) -> Vec<Option<f64>> {
    (0..levels)
        .map(|l| {
            let level = plan.level(crate::data::LevelId(l));
            if !matches!(level.method(), Method::Hg) {
                return None;
            }
            let var = variance_of(level.loss()?, level.method().sensitivity_norms());
            Some(var.sqrt())
        })
        .collect()
}

/// A region's phase in `[0, 1)`: the fractional parts of multiples of the golden ratio,
/// spread evenly over any run of regions, so that over a level the groups spread land
/// on every size of the zone in proportion, not on the same few sizes in every region.
fn phase(region: usize) -> f64 {
    const GOLDEN: f64 = 0.618_033_988_749_894_8;
    (region as f64 * GOLDEN).fract()
}

/// One region's histogram with its groups at `L` spread over the zone: group `i` of
/// `n` at the `(i + phase)/n` quantile of a density falling linearly from `L` to the
/// zone's end (a count-of-counts histogram falls with size above its mode, at a rate
/// the release does not say: the line is between flat and steep).
fn spread(pairs: &[(Size, Count)], zone: Zone, phase: f64) -> CountOfCounts {
    let count = |s: Size| {
        pairs
            .binary_search_by_key(&s, |p| p.0)
            .map_or(0, |i| pairs[i].1)
    };
    let excess = count(zone.above);
    let unchanged = || CountOfCounts::from_pairs_summing(pairs.iter().copied());
    if excess == 0 {
        return unchanged().unwrap_or_default();
    }
    let width = f64::from(zone.last - zone.above);
    let mut out: Vec<(Size, Count)> = pairs
        .iter()
        .copied()
        .filter(|&(s, _)| s != zone.above)
        .collect();
    for i in 0..excess {
        let u = (i as f64 + phase) / excess as f64;
        // The quantile of the triangular density 2(1 − x)/W on [0, W).
        let x = width * (1.0 - (1.0 - u).sqrt());
        let offset = (x.floor() as Size).min(zone.last - zone.above - 1);
        out.push((zone.above + 1 + offset, 1));
    }
    // A released size in the zone adds to the groups spread there; the sum of the
    // counts is the region's `G`, so it cannot overflow.
    CountOfCounts::from_pairs_summing(out)
        .or_else(|_| unchanged())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_excess_at_l_is_spread_over_the_zone() {
        let zone = Zone {
            above: 20,
            last: 40,
        };
        // The 6 groups at 20 go to the quantiles 1/12, 3/12, …, 11/12 of the falling
        // line over (20, 40]: 20·(1 − √(1 − u)) = 0.9, 2.7, 4.7, 7.1, 10.0, 14.2 above 21.
        let h = spread(&[(3, 10), (19, 2), (20, 6), (45, 1)], zone, 0.5);
        assert_eq!(
            h.pairs(),
            &[
                (3, 10),
                (19, 2),
                (21, 1),
                (23, 1),
                (25, 1),
                (28, 1),
                (31, 1),
                (35, 1),
                (45, 1)
            ]
        );
        assert_eq!(h.groups(), 10 + 2 + 6 + 1);
        // Nothing at L: unchanged.
        let h = spread(&[(3, 10), (45, 1)], zone, 0.5);
        assert_eq!(h.pairs(), &[(3, 10), (45, 1)]);
        // More groups than sizes: several per size, all within the zone.
        let h = spread(&[(20, 50)], zone, 0.0);
        assert_eq!(h.groups(), 50);
        assert!(h.pairs().iter().all(|&(s, _)| zone.holds(s)));
        // Over many regions of one group each, the falling line: every size of the zone
        // gets some, the first more than the last.
        let mut at = vec![0u32; 41];
        for region in 0..2_000 {
            for &(s, c) in spread(&[(20, 1)], zone, phase(region)).pairs() {
                at[s as usize] += c as u32;
            }
        }
        assert!((21..=40).all(|s| at[s] > 0), "{at:?}");
        assert!(at[21] > 3 * at[39], "{at:?}");
    }
}
