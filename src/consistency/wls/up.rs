//! Step 2, upward: each node's own measurement combined with its children's sums.

use super::*;

/// The combined functions of the nodes above the leaves, level by level.
pub(super) struct Up {
    /// Per level (leaf level empty): per node of the level, its runs.
    pub(super) levels: Vec<LevelPieces>,
    /// Per level: how much its regions leaned on their own measurements.
    pub(super) leaning: Vec<crate::consistency::guard::Leaning>,
    /// Per level: regions whose runs were joined.
    pub(super) capped: Vec<u64>,
}

impl Up {
    pub(super) fn node<'s>(&'s self, input: &Input, id: NodeId) -> &'s [Piece] {
        let node = input.hierarchy.node(id);
        let first = input.hierarchy.level_range(node.level).start;
        self.levels[node.level.0].get((id.0 - first) as usize)
    }
}

/// The runs of the nodes of one level, in one arena.
#[derive(Default)]
pub(super) struct LevelPieces {
    pub(super) ends: Vec<usize>,
    pub(super) pieces: Vec<Piece>,
}

impl LevelPieces {
    pub(super) fn get(&self, i: usize) -> &[Piece] {
        let start = i.checked_sub(1).map_or(0, |p| self.ends[p]);
        &self.pieces[start..self.ends[i]]
    }

    pub(super) fn push(&mut self, pieces: &[Piece]) {
        self.pieces.extend_from_slice(pieces);
        self.ends.push(self.pieces.len());
    }

    pub(super) fn concat(parts: Vec<LevelPieces>) -> LevelPieces {
        let mut out = LevelPieces::default();
        out.pieces
            .reserve_exact(parts.iter().map(|p| p.pieces.len()).sum());
        for p in parts {
            let base = out.pieces.len();
            out.pieces.extend_from_slice(&p.pieces);
            out.ends.extend(p.ends.iter().map(|e| e + base));
        }
        out
    }
}

/// Step 2, upward: the combined `(z, V, B)` of every node above the leaves.
pub(super) fn up(input: &Input) -> Up {
    use crate::consistency::guard::{Calibration, CalibrationTerms, Leaning};
    let h = input.hierarchy;
    let depth = h.depth();
    let mut levels: Vec<LevelPieces> = (0..depth).map(|_| LevelPieces::default()).collect();
    let mut level_leaning = vec![Leaning::default(); depth];
    let mut capped = vec![0u64; depth];
    for l in (0..depth.saturating_sub(1)).rev() {
        let ids: Vec<u32> = h.level_range(LevelId(l)).collect();
        let chunk = crate::consistency::chunk_for(ids.len());
        let partial = Up {
            levels: std::mem::take(&mut levels),
            leaning: Vec::new(),
            capped: Vec::new(),
        };
        // First the level's evidence for the check, then the combination with it. The
        // evidence is recorded per region in parallel and added up in region order.
        let terms: Vec<CalibrationTerms> = ids
            .par_chunks(chunk)
            .map_init(Spare::take, |spare, chunk| {
                let scratch = &mut spare.0;
                let mut terms = CalibrationTerms::default();
                for &id in chunk {
                    let id = NodeId(id);
                    if !input.estimates.is_measured(id.index()) {
                        // No measurement: no evidence for the check.
                        continue;
                    }
                    let children = input.children_functions(&partial, id, scratch);
                    sum_children(&children, scratch);
                    scratch.children = children;
                    input.expand(id, &mut scratch.events, &mut scratch.own);
                    crate::consistency::guard::calibrate(
                        &input.region(id, &scratch.own, &scratch.sums),
                        &mut scratch.guard,
                        &mut terms,
                    );
                }
                terms
            })
            .collect();
        let mut calibration = Calibration::default();
        for t in &terms {
            t.replay(&mut calibration);
        }
        drop(terms);
        let factors = calibration.factors();
        let parts: Vec<(LevelPieces, Vec<Leaning>, u64)> = ids
            .par_chunks(chunk)
            .map_init(Spare::take, |spare, chunk| {
                let scratch = &mut spare.0;
                let mut out = LevelPieces::default();
                let mut leaning = Vec::new();
                let mut joined = 0u64;
                let mut combined = Vec::new();
                for &id in chunk {
                    let id = NodeId(id);
                    let children = input.children_functions(&partial, id, scratch);
                    sum_children(&children, scratch);
                    scratch.children = children;
                    if input.estimates.is_measured(id.index()) {
                        input.expand(id, &mut scratch.events, &mut scratch.own);
                        leaning.push(crate::consistency::guard::combine(
                            &input.region(id, &scratch.own, &scratch.sums),
                            &factors,
                            &mut scratch.guard,
                            &mut combined,
                        ));
                    } else {
                        // A region left unmeasured has no own term: it is its
                        // children's sum, `z = s`, `V = S`, and the downward pass
                        // shares its parent's correction among its children as usual.
                        combined.clear();
                        combined.extend_from_slice(&scratch.sums);
                    }
                    if crate::consistency::pieces::cap(&mut combined, input.cap(id), input.max_size)
                    {
                        joined += 1;
                    }
                    out.push(&combined);
                }
                (out, leaning, joined)
            })
            .collect();
        levels = partial.levels;
        let mut pieces = Vec::with_capacity(parts.len());
        for (part, leaning, joined) in parts {
            pieces.push(part);
            for region in &leaning {
                level_leaning[l].add(region);
            }
            capped[l] += joined;
        }
        levels[l] = LevelPieces::concat(pieces);
        if crate::timing::enabled() {
            let lp = &levels[l];
            let n = lp.ends.len();
            let max = (0..n).map(|i| lp.get(i).len()).max().unwrap_or(0);
            crate::timing::note(&format!(
                "wls level {l}: {n} regions, {} runs, at most {max} in one",
                lp.pieces.len()
            ));
        }
    }
    Up {
        levels,
        leaning: level_leaning,
        capped,
    }
}

/// The root's combined function: its target `f`.
pub(super) fn root_function(input: &Input, up: &Up, scratch: &mut Scratch) -> Vec<Piece> {
    if input.hierarchy.node(NodeId::ROOT).is_leaf() {
        let mut out = Vec::new();
        input.expand(NodeId::ROOT, &mut scratch.events, &mut out);
        out
    } else {
        up.node(input, NodeId::ROOT).to_vec()
    }
}

/// `(s, S, Sb)`: the sums of the children's `(z, V, B)`, into `scratch.sums`.
pub(super) fn sum_children(children: &[Vec<Piece>], scratch: &mut Scratch) {
    for c in children {
        scratch.events.add_function(c);
    }
    scratch.sums.clear();
    scratch.events.finish(&mut scratch.sums);
}
