//! The sizes `hg`'s rounding skips, and the bootstrap world that fills them.
//!
//! `hg` ([`crate::estimate::unattributed`]) fits the noisy sorted group sizes with an
//! isotonic regression and rounds each fitted block to one size. Where the noise is
//! large against the steps of the sorted sizes (a large region at a small ε: thousands
//! of groups, a noise s.d. of several sizes), the fit is a staircase whose steps are
//! coarser than the truth's: two neighbouring blocks round to sizes 8 and 10, and the
//! groups truly of size 9 are split between them. The release's cell 9 is 0 whatever the
//! truth holds there. That is a bias of the estimator, and a bootstrap whose truth is the
//! release cannot see it: in its world size 9 is empty, a replicate that skips it makes
//! no error there, and the released-0 cell's interval comes out `[0, 0]` or `[0, 1]`
//! while the truth held 40 groups (measured on `deep`: the heads of its four upper
//! levels were covered 0.73–0.83, their misses mostly such cells).
//!
//! So in the bootstrap's truth ([`super::zone::world`]) every region of a level
//! measured with `hg` has the sizes its release skipped between two populous released
//! sizes filled ([`fill`]): each released size stands for the sizes halfway to its
//! released neighbours, and its groups are spread evenly over them. A replicate then
//! makes the errors the estimator makes on a truth with no gaps, and skips sizes as
//! the release did. Gaps between sizes holding fewer groups than the gap is wide (the
//! sparse large sizes, where sizes are truly far apart) are left alone. Like the tail's
//! zone, this is post-processing of the release and the plan: it reads nothing else.

use crate::histogram::{Count, CountOfCounts, Size};

/// Whether the gap between released sizes `a` and `b` (`a < b`, each with its count of
/// groups) is filled: it skips at least one size, and each side holds at least as many
/// groups as the gap is wide, so that the sizes it is given hold one group or more each.
/// A gap between sizes with fewer groups (the sparse large sizes) is taken as the
/// truth's.
fn filled(a: (Size, Count), b: (Size, Count)) -> bool {
    let d = Count::from(b.0 - a.0);
    d >= 2 && a.1 >= d && b.1 >= d
}

/// One region's released `hg` histogram with its skipped sizes filled (see the module
/// docs). Released size `s` with `n` groups stands for itself and, for each filled gap
/// beside it, the sizes of that gap nearer to `s` than to the other side (the middle
/// size of a gap of odd length half); its `n` groups are spread over them by weight,
/// the first share starting at `phase` ∈ `[0, 1)` of a group (a region's phase varies
/// where the fractions of groups land). The number of groups is unchanged.
pub fn fill(pairs: &[(Size, Count)], sd: f64, phase: f64) -> CountOfCounts {
    let unchanged = || CountOfCounts::from_pairs(pairs.iter().copied()).unwrap_or_default();
    // A region of fewer groups than the noise's variance is fitted in blocks that span
    // most of its sizes: its release collapses sizes rather than skipping them.
    let groups: Count = pairs.iter().map(|p| p.1).sum();
    if (groups as f64) < sd * sd || !pairs.windows(2).any(|w| filled(w[0], w[1])) {
        return unchanged();
    }
    let mut out: Vec<(Size, Count)> = Vec::with_capacity(pairs.len() * 2);
    for (k, &(s, n)) in pairs.iter().enumerate() {
        // The sizes this one stands for, with weights in halves: (size, 2 or 1).
        let below = k
            .checked_sub(1)
            .map(|j| pairs[j])
            .filter(|&p| filled(p, (s, n)))
            .map_or(0, |p| s - p.0);
        let above = pairs
            .get(k + 1)
            .copied()
            .filter(|&p| filled((s, n), p))
            .map_or(0, |p| p.0 - s);
        let mut shares: Vec<(Size, u64)> = Vec::new();
        // A gap of width d: the sizes at distance j < d/2 from `s` are its own, the
        // one at j = d/2 (d even) is shared.
        let side = |d: Size, j: Size| -> u64 {
            match (2 * j).cmp(&d) {
                std::cmp::Ordering::Less => 2,
                std::cmp::Ordering::Equal => 1,
                std::cmp::Ordering::Greater => 0,
            }
        };
        for j in (1..below).rev() {
            shares.push((s - j, side(below, j)));
        }
        shares.push((s, 2));
        for j in 1..above {
            shares.push((s + j, side(above, j)));
        }
        shares.retain(|&(_, w)| w > 0);
        let total: u64 = shares.iter().map(|&(_, w)| w).sum();
        // Group counts by cumulative weight: floor(n · C / W + phase), the last
        // share ending at exactly n.
        let start = (phase.clamp(0.0, 1.0 - f64::EPSILON) * total as f64) as u128;
        let (n128, w128) = (u128::from(n), u128::from(total));
        let mut cumulative = 0u128;
        let mut given = 0u128;
        for (size, w) in shares {
            cumulative += u128::from(w);
            let upto = (n128 * cumulative + start) / w128;
            let upto = upto.min(n128);
            if upto > given {
                out.push((size, (upto - given) as Count));
                given = upto;
            }
        }
        if given < n128 {
            out.push((s, (n128 - given) as Count));
        }
    }
    CountOfCounts::from_pairs_summing(out).unwrap_or_else(|_| unchanged())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_between_populous_sizes_is_filled_from_both_sides() {
        // 8 and 10 hold 100 each: size 9 is shared, a third of each side's groups.
        let h = fill(&[(8, 100), (10, 100)], 1.0, 0.0);
        assert_eq!(h.pairs(), &[(8, 66), (9, 67), (10, 67)]);
        assert_eq!(h.groups(), 200);
        // A gap of 3 sizes: 5 is 4's, 7 is 8's, 6 is shared.
        let h = fill(&[(4, 30), (8, 30)], 1.0, 0.0);
        assert_eq!(h.pairs(), &[(4, 12), (5, 12), (6, 12), (7, 12), (8, 12)]);
    }

    #[test]
    fn neighbouring_and_sparse_sizes_are_unchanged() {
        let pairs = [(1, 500), (2, 300), (3, 2), (7, 1), (30, 1)];
        assert_eq!(fill(&pairs, 1.0, 0.3).pairs(), &pairs);
        // A gap wider than either side's groups is not filled.
        assert_eq!(
            fill(&[(5, 3), (9, 40)], 1.0, 0.5).pairs(),
            &[(5, 3), (9, 40)]
        );
        // At a noise s.d. of 15, a region of 200 groups is too small to skip sizes.
        assert_eq!(
            fill(&[(8, 100), (10, 100)], 15.0, 0.0).pairs(),
            &[(8, 100), (10, 100)]
        );
        assert_eq!(fill(&[(8, 100), (10, 100)], 14.0, 0.0).groups(), 200);
        assert_eq!(fill(&[(8, 100), (10, 100)], 14.0, 0.0).pairs().len(), 3);
    }

    #[test]
    fn the_groups_are_kept_whatever_the_phase() {
        let pairs = [(0, 7), (2, 13), (5, 40), (6, 9), (12, 77), (40, 1)];
        let g: Count = pairs.iter().map(|p| p.1).sum();
        for i in 0..50 {
            let h = fill(&pairs, 1.0, f64::from(i) / 50.0);
            assert_eq!(h.groups(), g);
            // Nothing below the first size or above the last.
            assert!(h.pairs().iter().all(|&(s, _)| (0..=40).contains(&s)));
        }
    }
}
