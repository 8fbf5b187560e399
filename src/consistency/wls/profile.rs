//! The variance profile of a fitted estimate, cell by cell: blocks of the head, steps
//! of the listed groups, widened as the module's `WIDEN` says.

use super::*;

/// A head block's variance per cell: the noise variance over the block's length, the
/// variance of the block's mean (Kuo et al. §5.1.1). The fit's biases, which this leaves
/// out, are what [`crate::consistency::guard`] checks against the region's noisy cells.
pub(super) fn head_block_variance(fit: &FitRef<'_>, b: &HeadBlock) -> f64 {
    fit.noise_variance / f64::from(b.len.max(1))
}

/// A node's fit as runs of `(x, v)` over `0..=K` (step 1), into `out`.
pub(crate) fn expand(
    fit: &FitRef<'_>,
    groups: Count,
    max_size: Size,
    profile: Profile,
    events: &mut Events,
    out: &mut Vec<Piece>,
) {
    out.clear();
    // No groups: `Hc ≡ 0`, known exactly.
    if groups == 0 {
        out.push(Piece {
            start: 0,
            x: 0.0,
            v: EXACT,
        });
        return;
    }
    let k = u64::from(max_size);
    let cells = k + 1;
    let from = u64::from(fit.from).min(cells);
    let var = fit.noise_variance;
    // The head: one run per isotonic block.
    for b in fit.head {
        let start = u64::from(b.start);
        let end = (start + u64::from(b.len)).min(from);
        if start >= end {
            continue;
        }
        push_joined(
            out,
            Piece {
                start: start as u32,
                x: b.value,
                v: head_block_variance(fit, b).max(EXACT),
            },
        );
        // `Hc[K] = G` is known.
        if end == cells {
            let last = Piece {
                start: k as u32,
                x: b.value,
                v: EXACT,
            };
            match out.last_mut() {
                Some(p) if p.start == last.start => *p = last,
                _ => out.push(last),
            }
        }
    }
    if from >= cells {
        if out.is_empty() {
            out.push(Piece {
                start: 0,
                x: groups as f64,
                v: EXACT,
            });
        }
        return;
    }
    // The steps: `Hc[j] = G − #{ŝ > j}` from `from` on.
    let above_from: u64 = fit
        .steps
        .iter()
        .filter(|r| u64::from(r.size) > from)
        .map(|r| u64::from(r.count))
        .sum();
    events.add(
        from as u32,
        groups.saturating_sub(above_from) as f64,
        EXACT,
        0.0,
    );
    // A saturated tail's unlisted groups, put at `L`, leave the cells below the
    // smallest listed size as uncertain as one noisy head cell.
    let unlisted_end = fit.steps.first().map_or(0, |r| u64::from(r.size));
    if fit.saturated && unlisted_end > from {
        events.add(from as u32, 0.0, var, EXACT);
        events.add(unlisted_end.min(cells) as u32, 0.0, EXACT, var);
    }
    for run in fit.steps {
        let s = u64::from(run.size);
        if s > from && s <= k {
            events.add(s as u32, f64::from(run.count), 0.0, 0.0);
        }
        let scale = fit.step_scale(run);
        if scale > 0.0 {
            add_profile(
                events,
                s,
                f64::from(run.count),
                scale * WIDEN,
                from,
                cells,
                profile,
            );
        }
    }
    let head_len = out.len();
    events.finish(out);
    // Changes at K + 1 (the ends of runs that reach K) are past the last cell.
    while out.len() > head_len + 1 && u64::from(out[out.len() - 1].start) > k {
        out.pop();
    }
    debug_assert!(out.len() > head_len);
    // `Hc[K] = G` is known.
    let last = out[out.len() - 1];
    if u64::from(last.start) == k {
        out.last_mut().expect("a run").v = EXACT;
    } else {
        out.push(Piece {
            start: k as u32,
            x: last.x,
            v: EXACT,
        });
    }
}

/// Adds the variance profile of `count` groups located at `size` with widened scale
/// `width` over the cells `from..cells`.
pub(super) fn add_profile(
    events: &mut Events,
    size: u64,
    count: f64,
    width: f64,
    from: u64,
    cells: u64,
    profile: Profile,
) {
    let own = (REACH * width).ceil() as u64 + 1;
    let lo = size.saturating_sub(own).max(from);
    let hi = (size + own).min(cells);
    if lo >= hi {
        return;
    }
    // Cells a..e (clipped to lo..hi) on one side of the step, with the mean of their
    // p(1 − p). Cell j ≥ size is at distance j − size + ½, cell j < size at size − j − ½.
    let mut bin = |a: u64, e: u64| {
        let (a, e) = (a.max(lo), e.min(hi));
        if a >= e {
            return;
        }
        let nearest = if a >= size { a - size } else { size - e };
        let mean = count * mean_p_one_minus_p(nearest, e - a, width);
        if mean > 0.0 {
            events.add(a as u32, 0.0, mean, 0.0);
            events.add(e as u32, 0.0, 0.0, mean);
        }
    };
    match profile {
        Profile::Cells => {
            for j in lo..hi {
                bin(j, j + 1);
            }
        }
        Profile::Bins => {
            // Right of the step, then left of it: the 4 nearest cells one by one, then
            // bins half as wide as their distance, aligned to multiples of their width.
            let mut p = size.max(lo);
            while p < hi {
                let next = match p - size {
                    k if k < 4 => p + 1,
                    k => {
                        let w = 1u64 << (62 - k.leading_zeros());
                        (p / w + 1) * w
                    }
                };
                bin(p, next);
                p = next;
            }
            let mut q = size.min(hi);
            while q > lo {
                let lower = match size - q {
                    d if d < 4 => q - 1,
                    d => {
                        let w = 1u64 << (62 - d.leading_zeros());
                        ((q - 1) / w) * w
                    }
                };
                bin(lower, q);
                q = lower;
            }
        }
    }
}

/// The mean of `p(1 − p)`, `p = e^{−d/width}/2`, over the `n` cells at distances
/// `d = k0 + ½, k0 + 1½, …` (two geometric series).
pub(super) fn mean_p_one_minus_p(k0: u64, n: u64, width: f64) -> f64 {
    if n == 1 {
        let p = 0.5 * (-((k0 as f64) + 0.5) / width).exp();
        return p * (1.0 - p);
    }
    let a = 1.0 / width;
    let first = (-((k0 as f64) + 0.5) * a).exp();
    // Σ_{i<n} r^i = (1 − r^n)/(1 − r), r = e^{−a}, with expm1 for accuracy near r = 1.
    let sum_p = 0.5 * first * ((-(n as f64) * a).exp_m1() / (-a).exp_m1());
    let sum_p2 = 0.25 * first * first * ((-2.0 * (n as f64) * a).exp_m1() / (-2.0 * a).exp_m1());
    (sum_p - sum_p2) / n as f64
}
