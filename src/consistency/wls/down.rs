//! Step 3, downward: each parent's consistent histogram split among its children.

use super::*;

/// A parent's correction per unit of variance, `(f_τ − s_τ)/S_τ`, as runs (in `x`).
pub(super) fn correction(
    target: &[Piece],
    children: &[Vec<Piece>],
    scratch: &mut Scratch,
) -> Vec<Piece> {
    sum_children(children, scratch);
    let mut corr = Vec::new();
    merge(target, &scratch.sums, &mut corr, |f, s| {
        let c = if s.v > 0.0 { (f.x - s.x) / s.v } else { 0.0 };
        (c, 0.0)
    });
    corr
}

/// A child's target `f_c = z_c + V_c · (f_τ − s_τ)/S_τ`, as runs (in `x`), exactly.
pub(super) fn child_target(child: &[Piece], corr: &[Piece], out: &mut Vec<Piece>) {
    merge(child, corr, out, |c, k| (c.x + c.v * k.x, 0.0));
}

/// A parent's correction with, for each of its runs, the largest `|correction|` from
/// that run on.
pub(super) struct Correction {
    pub(super) pieces: Vec<Piece>,
    pub(super) suffix_max: Vec<f64>,
}

impl Correction {
    pub(super) fn new(pieces: Vec<Piece>) -> Self {
        let mut suffix_max = vec![0.0; pieces.len()];
        let mut m: f64 = 0.0;
        for (i, p) in pieces.iter().enumerate().rev() {
            m = m.max(p.x.abs());
            suffix_max[i] = m;
        }
        Correction { pieces, suffix_max }
    }

    /// The largest `|correction|` at sizes from `start` on.
    pub(super) fn max_from(&self, start: u32) -> f64 {
        let i = self
            .pieces
            .partition_point(|p| p.start <= start)
            .saturating_sub(1);
        self.suffix_max[i]
    }
}

/// A child's target as [`child_target`] computes it, at the resolution the projection
/// works at (`1/SCALE`): neighbouring runs whose values round to the same fixed-point
/// value are joined (so a leaf's projection is exactly that of the full target, and a
/// stored target is within `1/(2·SCALE)` of it), and where the child is certain (its
/// last runs: one value, variance [`EXACT`]) and the parent's correction too
/// small to move the rounded value, the correction's own runs are not visited. This is
/// what keeps a census block at the dozen runs of its own fit while its tract's target
/// holds the hundreds of runs it inherits from above.
pub(super) fn child_target_rounded(child: &[Piece], corr: &Correction, out: &mut Vec<Piece>) {
    out.clear();
    // The child's certain suffix.
    let mut t = child.len();
    if let Some(last) = child.last() {
        while t > 0 {
            let p = &child[t - 1];
            if p.v == EXACT && p.x.to_bits() == last.x.to_bits() {
                t -= 1;
            } else {
                break;
            }
        }
    }
    let end = if t < child.len() {
        let p = &child[t];
        let shift = EXACT * corr.max_from(p.start) * SCALE;
        let scaled = p.x * SCALE;
        let frac = scaled - scaled.floor();
        // Safe when no shift up to `shift` can carry the fixed-point value across a
        // rounding boundary (a half), with a margin for the float products.
        let safe = shift.is_finite() && (frac - 0.5).abs() > shift + 1e-6 && shift < 0.25;
        safe.then_some(p.start)
    } else {
        None
    };
    let push = |out: &mut Vec<Piece>, piece: Piece| match out.last() {
        Some(last) if round(last.x * SCALE) == round(piece.x * SCALE) => {}
        _ => out.push(piece),
    };
    let (mut i, mut j) = (0, 0);
    let corr = &corr.pieces;
    while i < child.len() && j < corr.len() {
        let start = child[i].start.max(corr[j].start);
        if end.is_some_and(|e| start >= e) {
            break;
        }
        push(
            out,
            Piece {
                start,
                x: child[i].x + child[i].v * corr[j].x,
                v: 0.0,
            },
        );
        if !crate::consistency::pieces::advance(child, corr, &mut i, &mut j) {
            break;
        }
    }
    if let Some(e) = end {
        push(
            out,
            Piece {
                start: e,
                x: child[t].x,
                v: 0.0,
            },
        );
    }
}

/// Whether each node (by [`NodeId`]) lies in the unmeasured top of the hierarchy: it
/// was not measured, and neither was any region above it. Such a region has no
/// histogram of its own to split: it is its subtree's, so each of its children keeps its
/// own projection and the region is their sum ([`down`]). (A region left unmeasured
/// below a measured one receives its parent's groups and splits them as usual.)
fn unmeasured_top(input: &Input) -> Vec<bool> {
    let h = input.hierarchy;
    let mut top = vec![false; h.len()];
    for l in 0..h.depth() {
        for id in h.level_nodes(LevelId(l)) {
            let above = h.node(id).parent.is_none_or(|p| top[p.index()]);
            top[id.index()] = above && !input.estimates.is_measured(id.index());
        }
    }
    top
}

/// Steps 2 (downward) and 3: targets and projection, level by level from the root; with,
/// per level, the regions whose stored targets had runs joined.
pub(super) fn down(
    input: &Input,
    up: &Up,
    fit: IsotonicFit,
) -> Result<(HistogramSet, Vec<u64>), ConsistencyError> {
    let h = input.hierarchy;
    let k = input.max_size;
    let root_target = root_function(input, up, &mut Scratch::default());
    let mut released = HistogramSet::with_capacity(1, 0);
    released.push(integral_fit_runs(&root_target, input.groups[0], k, fit).as_ref());
    let mut levels = vec![released];
    let mut targets = LevelPieces::default();
    targets.push(&root_target);
    let mut capped = vec![0u64; h.depth()];
    let top = unmeasured_top(input);
    for l in 0..h.depth() - 1 {
        let parents: Vec<u32> = h.level_range(LevelId(l)).collect();
        let first = parents.first().copied().unwrap_or(0);
        let fixed = levels.last().expect("the level above");
        let child_internal = l + 1 < h.depth() - 1;
        let parts: Vec<(HistogramSet, LevelPieces, u64)> = parents
            .par_chunks(crate::consistency::chunk_for(parents.len()))
            .map_init(Spare::take, |spare, chunk| {
                let scratch = &mut spare.0;
                let mut hists = HistogramSet::new();
                let mut next = LevelPieces::default();
                let mut f_child = Vec::new();
                let mut wanted: Vec<Vec<GroupRun>> = Vec::new();
                let mut received: Vec<Vec<(Size, Count)>> = Vec::new();
                let mut fit_runs: Vec<(i64, u64)> = Vec::new();
                let mut parent_runs: Vec<GroupRun> = Vec::new();
                let mut joined = 0u64;
                for &p in chunk {
                    let parent = NodeId(p);
                    let pos = (p - first) as usize;
                    let children = input.children_functions(up, parent, scratch);
                    let corr = Correction::new(correction(targets.get(pos), &children, scratch));
                    let n = children.len();
                    wanted.resize_with(n.max(wanted.len()), Vec::new);
                    for ((c, child), slots) in
                        h.node(parent).children().zip(&children).zip(&mut wanted)
                    {
                        child_target_rounded(child, &corr, &mut f_child);
                        integral_slots(
                            &f_child,
                            input.groups[c.index()],
                            k,
                            fit,
                            &mut fit_runs,
                            slots,
                        );
                        if child_internal {
                            if crate::consistency::pieces::cap(&mut f_child, input.cap(c), k) {
                                joined += 1;
                            }
                            next.push(&f_child);
                        }
                    }
                    scratch.children = children;
                    if top[parent.index()] {
                        // Its children keep their own projections; it is their sum
                        // (below).
                        for slots in &wanted[..n] {
                            hists.push(
                                CountOfCounts::from_pairs(slots.iter().map(|r| (r.size, r.count)))
                                    .expect("block starts are distinct sizes")
                                    .as_ref(),
                            );
                        }
                        continue;
                    }
                    parent_runs.clear();
                    parent_runs.extend(unit_runs(fixed.get(pos).pairs()));
                    split_into(&parent_runs, &wanted[..n], &mut received).map_err(|source| {
                        ConsistencyError::Match {
                            node: parent,
                            source,
                        }
                    })?;
                    for r in &received[..n] {
                        hists.push_sorted_pairs(r.iter().copied());
                    }
                }
                Ok((hists, next, joined))
            })
            .collect::<Result<_, ConsistencyError>>()?;
        let mut hists = Vec::with_capacity(parts.len());
        let mut nexts = Vec::with_capacity(parts.len());
        for (h, n, j) in parts {
            hists.push(h);
            nexts.push(n);
            capped[l + 1] += j;
        }
        levels.push(HistogramSet::concat(hists));
        targets = LevelPieces::concat(nexts);
    }
    // The unmeasured top, bottom-up: each region the sum of its children.
    for l in (0..h.depth() - 1).rev() {
        let range = h.level_range(LevelId(l));
        if !range.clone().any(|id| top[id as usize]) {
            continue;
        }
        let first_child = h.level_range(LevelId(l + 1)).start;
        let mut rebuilt = HistogramSet::new();
        for id in range {
            let node = h.node(NodeId(id));
            if top[id as usize] {
                let sum = CountOfCounts::sum(
                    node.children()
                        .map(|c| levels[l + 1].get((c.0 - first_child) as usize)),
                );
                rebuilt.push(sum.as_ref());
            } else {
                rebuilt.push(levels[l].get((id - h.level_range(LevelId(l)).start) as usize));
            }
        }
        levels[l] = rebuilt;
    }
    Ok((HistogramSet::concat(levels), capped))
}
