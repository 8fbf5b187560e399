//! Integral fits: real targets rounded to whole groups that keep the region's total.

use super::*;

/// The best monotone integral cumulative histogram for a real target given as runs
/// over `0..=K` with `groups` groups: bounded isotonic regression with the last cell
/// fixed (on runs, exactly as on the cells), then rounding.
pub fn integral_fit_runs(
    target: &[Piece],
    groups: Count,
    max_size: Size,
    fit: IsotonicFit,
) -> CountOfCounts {
    let mut slots = Vec::new();
    integral_slots(target, groups, max_size, fit, &mut Vec::new(), &mut slots);
    CountOfCounts::from_pairs(slots.iter().map(|r| (r.size, r.count)))
        .expect("block starts are distinct sizes")
}

/// `x` rounded half away from zero, exactly as [`f64::round`] (without a library call).
pub(super) fn round(x: f64) -> f64 {
    if x.is_nan() || x.abs() >= 4_503_599_627_370_496.0 {
        return x; // 2^52 and beyond: already an integer (or NaN)
    }
    let t = x as i64 as f64;
    let frac = x - t;
    if frac >= 0.5 {
        t + 1.0
    } else if frac <= -0.5 {
        t - 1.0
    } else {
        t
    }
}

/// [`integral_fit_runs`] into slots: the fitted histogram's `(size, count)` as unit
/// runs in `out` (cleared first), with `runs` as scratch.
pub(super) fn integral_slots(
    target: &[Piece],
    groups: Count,
    max_size: Size,
    fit: IsotonicFit,
    runs: &mut Vec<(i64, u64)>,
    out: &mut Vec<GroupRun>,
) {
    out.clear();
    runs.clear();
    if target.is_empty() {
        return;
    }
    let g = i64::try_from(groups).unwrap_or(i64::MAX / 2048);
    let last = g * SCALE as i64;
    for (i, p) in target.iter().enumerate() {
        let value = if p.x.is_finite() {
            round(p.x * SCALE).clamp(-9e15, 9e15) as i64
        } else {
            0
        };
        let cells = piece_len(target, i, max_size);
        match runs.last_mut() {
            Some(r) if r.0 == value => r.1 += cells,
            _ => runs.push((value, cells)),
        }
    }
    // Already monotone (the common case): the unconstrained fit is the target itself,
    // so the bounded fit is the target clipped to [0, G] (the isotonic module's proof;
    // for L1 the solution of monotone data is unique, so it is also the centred one).
    let monotone = runs.windows(2).all(|w| w[0].0 <= w[1].0);
    if monotone {
        for r in runs.iter_mut() {
            r.0 = r.0.clamp(0, last);
        }
    }
    let mut previous: i128 = 0;
    let mut push = |start: u64, num: i128, den: i128| {
        // Round value/SCALE to the nearest integer, halves up, exactly.
        let scaled_den = den * SCALE as i128;
        let value = (2 * num + scaled_den).div_euclid(2 * scaled_den);
        if value > previous {
            out.push(GroupRun {
                size: start as Size,
                count: (value - previous) as Count,
                variance: 1.0,
            });
            previous = value;
        }
    };
    if monotone {
        let mut start = 0u64;
        let n = runs.len();
        for (i, &(value, cells)) in runs.iter().enumerate() {
            if i + 1 == n {
                // The last cell is fixed at G.
                if cells > 1 {
                    push(start, i128::from(value), 1);
                }
                push(start + cells - 1, i128::from(last), 1);
            } else {
                push(start, i128::from(value), 1);
            }
            start += cells;
        }
    } else {
        for b in isotonic::fit_runs_with_last(fit, runs, 0, last) {
            let (num, den) = b.fraction();
            push(b.start as u64, num, den);
        }
    }
}

/// The best monotone integral cumulative histogram for a real target given cell by cell
/// (see [`integral_fit_runs`]).
pub fn integral_fit(target: &[f64], groups: Count, fit: IsotonicFit) -> CountOfCounts {
    if target.is_empty() {
        return CountOfCounts::new();
    }
    let pieces: Vec<Piece> = target
        .iter()
        .enumerate()
        .map(|(j, &x)| Piece {
            start: j as u32,
            x,
            v: 0.0,
        })
        .collect();
    integral_fit_runs(&pieces, groups, (target.len() - 1) as Size, fit)
}

/// Hands the parent's groups (unit runs), smallest first, to the children's target
/// slots, smallest first; what each child receives goes to `received` (one sorted list
/// of `(size, count)` per child, reusing its buffers).
pub(super) fn split_into(
    parent: &[GroupRun],
    wanted: &[Vec<GroupRun>],
    received: &mut Vec<Vec<(Size, Count)>>,
) -> Result<(), crate::consistency::MatchError> {
    let refs: Vec<&[GroupRun]> = wanted.iter().map(Vec::as_slice).collect();
    let pieces = match_groups(parent, &refs)?;
    received.resize_with(wanted.len().max(received.len()), Vec::new);
    for r in &mut received[..wanted.len()] {
        r.clear();
    }
    // Each child's pieces come in order of the parent's sizes.
    for p in pieces {
        let r = &mut received[p.child];
        match r.last_mut() {
            Some(last) if last.0 == p.parent_size => last.1 += p.count,
            _ => r.push((p.parent_size, p.count)),
        }
    }
    Ok(())
}

/// Hands the parent's groups, smallest first, to the children's target slots, smallest
/// first; returns what each child receives.
pub fn split_to_targets(
    fixed: HistRef<'_>,
    wanted: &[Vec<GroupRun>],
) -> Result<Vec<CountOfCounts>, crate::consistency::MatchError> {
    let parent = unit_runs(fixed.pairs());
    let refs: Vec<&[GroupRun]> = wanted.iter().map(Vec::as_slice).collect();
    let pieces = match_groups(&parent, &refs)?;
    let mut received: Vec<Vec<(Size, Count)>> = vec![Vec::new(); wanted.len()];
    for p in pieces {
        received[p.child].push((p.parent_size, p.count));
    }
    Ok(received
        .into_iter()
        .map(|r| CountOfCounts::from_pairs_summing(r).expect("counts within the parent's total"))
        .collect())
}
