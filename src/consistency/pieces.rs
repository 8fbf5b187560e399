//! Functions of the group size that are constant on runs of sizes ("pieces"): the form
//! in which `wls` ([`super::wls`]) holds every node's fit, variance and consistent
//! target, so that its cost follows the number of runs, never `K + 1` cells per node.
//!
//! A function over sizes `0..=K` is a list of [`Piece`]s with strictly increasing
//! starts, the first at 0; piece `i` covers `start_i..start_{i+1}` (the last one up to
//! `K`). Each piece carries two values: a fitted or combined cumulative count `x` and its
//! variance `v`.
//!
//! **Sums without cancellation.** A parent's sum of its children's functions is built
//! from events (where a child's value changes, by how much). Variances range from
//! `10^−12` (a cell known exactly) to `10^4` and more, so adding and removing a large
//! variance in floating point would leave an error as large as the small ones; they are
//! summed in 128-bit fixed point (units of `2^−50`, saturating), in which every change
//! added is removed exactly. Counts are summed in floating point, whose
//! rounding is far below the `1/1024` resolution the projection works at.
//!
//! **Events by position.** Positions below `DENSE` (the sizes where almost every
//! group lies) are accumulated in per-thread arrays and read back in order; the rest are
//! sorted. A sum over children costs `O(events + distinct positions)`.

/// The variance given to a cell known exactly (keeps the weights finite).
pub const EXACT: f64 = 1e-12;

/// Positions below this are gathered densely (see the module documentation).
const DENSE: usize = 1 << 13;

/// A sum held as two floats (double-double, about 106 bits): adding and later removing
/// the same variance leaves the small ones beside it exact.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Dd {
    hi: f64,
    lo: f64,
}

impl Dd {
    /// Adds one float exactly (Knuth's TwoSum), then renormalises.
    pub fn add(&mut self, x: f64) {
        let s = self.hi + x;
        let bp = s - self.hi;
        let err = (self.hi - (s - bp)) + (x - bp);
        let lo = self.lo + err;
        self.hi = s + lo;
        self.lo = lo - (self.hi - s);
    }

    pub fn add_dd(&mut self, other: Dd) {
        self.add(other.hi);
        self.add(other.lo);
    }

    pub fn value(self) -> f64 {
        self.hi + self.lo
    }
}

/// One run of sizes `start..` (up to the next piece's start) with constant values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    pub start: u32,
    /// A cumulative count: a fit, a combined estimate or a target.
    pub x: f64,
    /// Its variance.
    pub v: f64,
}

/// A change at a position: `x` changes by the given amount, `v` by the given exact sum.
#[derive(Clone, Copy, Debug, Default)]
struct Delta {
    x: f64,
    v: Dd,
}

impl Delta {
    fn add(&mut self, other: Delta) {
        self.x += other.x;
        self.v.add_dd(other.v);
    }
}

/// Per-thread scratch for building functions from events.
pub struct Events {
    dense: Vec<Delta>,
    marked: Vec<bool>,
    touched: Vec<u32>,
    far: Vec<(u32, Delta)>,
}

impl Default for Events {
    fn default() -> Self {
        Self {
            dense: vec![Delta::default(); DENSE],
            marked: vec![false; DENSE],
            touched: Vec::new(),
            far: Vec::new(),
        }
    }
}

impl Events {
    /// Records a change at `pos`: `x` by the given amount, `v` by `v_in − v_out` (added
    /// exactly, so that a variance added at one position and removed at another cancels
    /// exactly).
    pub fn add(&mut self, pos: u32, x: f64, v_in: f64, v_out: f64) {
        let mut v = Dd::default();
        v.add(v_in);
        v.add(-v_out);
        let d = Delta { x, v };
        let p = pos as usize;
        if p < DENSE {
            if !self.marked[p] {
                self.marked[p] = true;
                self.touched.push(pos);
            }
            self.dense[p].add(d);
        } else {
            self.far.push((pos, d));
        }
    }

    /// Records the changes of a function: its first piece as a change from 0, then
    /// each piece as a change from the one before.
    pub fn add_function(&mut self, pieces: &[Piece]) {
        let mut prev = (0.0, 0.0);
        for p in pieces {
            self.add(p.start, p.x - prev.0, p.v, prev.1);
            prev = (p.x, p.v);
        }
    }

    /// The function the recorded changes add up to, from position `from` on, appended
    /// to `out` (positions before `from` must have no changes). Neighbouring pieces
    /// with equal values are joined. The scratch is left empty.
    pub fn finish(&mut self, out: &mut Vec<Piece>) {
        // Dense positions in order: scan their range when that is cheaper than sorting.
        let n = self.touched.len();
        if n > 0 {
            let (lo, hi) = self
                .touched
                .iter()
                .fold((u32::MAX, 0), |(lo, hi), &p| (lo.min(p), hi.max(p)));
            if ((hi - lo) as usize) < 8 * n {
                self.touched.clear();
                self.touched
                    .extend((lo..=hi).filter(|&p| self.marked[p as usize]));
            } else {
                self.touched.sort_unstable();
            }
        }
        self.far.sort_unstable_by_key(|&(p, _)| p);
        let mut running = (0.0f64, Dd::default());
        let (mut i, mut j) = (0, 0);
        let first_out = out.len();
        while i < self.touched.len() || j < self.far.len() {
            let dense_pos = self.touched.get(i).copied().unwrap_or(u32::MAX);
            let far_pos = self.far.get(j).map_or(u32::MAX, |e| e.0);
            let pos = dense_pos.min(far_pos);
            let mut d = Delta::default();
            if dense_pos == pos {
                let p = pos as usize;
                d.add(self.dense[p]);
                self.dense[p] = Delta::default();
                self.marked[p] = false;
                i += 1;
            }
            while j < self.far.len() && self.far[j].0 == pos {
                d.add(self.far[j].1);
                j += 1;
            }
            running.0 += d.x;
            running.1.add_dd(d.v);
            let piece = Piece {
                start: pos,
                x: running.0,
                v: running.1.value(),
            };
            match out.last() {
                Some(last) if out.len() > first_out && same_values(last, &piece) => {}
                _ => out.push(piece),
            }
        }
        self.touched.clear();
        self.far.clear();
    }
}

fn same_values(a: &Piece, b: &Piece) -> bool {
    a.x.to_bits() == b.x.to_bits() && a.v.to_bits() == b.v.to_bits()
}

/// Appends a piece, joining it to the last one when their values are equal.
pub fn push_joined(out: &mut Vec<Piece>, piece: Piece) {
    match out.last() {
        Some(last) if same_values(last, &piece) => {}
        _ => out.push(piece),
    }
}

/// Two functions side by side on the union of their breakpoints: `op` gives the
/// values of each output piece from the two input pieces covering it. Both must start
/// at 0. Equal neighbours are joined.
pub fn merge(
    a: &[Piece],
    b: &[Piece],
    out: &mut Vec<Piece>,
    op: impl Fn(&Piece, &Piece) -> (f64, f64),
) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let start = a[i].start.max(b[j].start);
        let (x, v) = op(&a[i], &b[j]);
        push_joined(out, Piece { start, x, v });
        if !advance(a, b, &mut i, &mut j) {
            break;
        }
    }
}

/// One step of a walk over two piece lists in parallel: moves past whichever of the
/// current pieces `a[i]`, `b[j]` ends first (both when they end together); `false` when
/// both are the last.
pub(super) fn advance(a: &[Piece], b: &[Piece], i: &mut usize, j: &mut usize) -> bool {
    let a_end = a.get(*i + 1).map_or(u32::MAX, |p| p.start);
    let b_end = b.get(*j + 1).map_or(u32::MAX, |p| p.start);
    if a_end == u32::MAX && b_end == u32::MAX {
        return false;
    }
    if a_end <= b_end {
        *i += 1;
    }
    if b_end <= a_end {
        *j += 1;
    }
    true
}

/// Keeps a function within `cap` runs (a memory bound the resource guard can count on)
/// by joining the neighbours that differ least, weighted by their lengths: the
/// difference of their values in standard deviations, squared, plus the squared log
/// ratio of their variances. Joined runs take the length-weighted means. Functions
/// within the cap are left as they are. Returns whether runs were joined.
pub fn cap(pieces: &mut Vec<Piece>, cap: usize, max_size: u32) -> bool {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = pieces.len();
    if n <= cap.max(1) {
        return false;
    }
    let mut len: Vec<f64> = (0..n)
        .map(|i| piece_len(pieces, i, max_size) as f64)
        .collect();
    let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
    let mut next: Vec<usize> = (1..=n).collect();
    let mut alive = vec![true; n];
    let mut version = vec![0u32; n];
    let cost = |a: &Piece, b: &Piece, la: f64, lb: f64| -> f64 {
        let v = (a.v + b.v).max(EXACT);
        let dx = a.x - b.x;
        let dv = (a.v.max(EXACT) / b.v.max(EXACT)).ln();
        (dx * dx / v + dv * dv) * (la * lb / (la + lb))
    };
    // Candidates: joining piece i into the live piece before it.
    let mut heap: BinaryHeap<(Reverse<u64>, usize, u32)> = BinaryHeap::new();
    let key = |c: f64| Reverse(c.max(0.0).to_bits());
    for i in 1..n {
        heap.push((
            key(cost(&pieces[i - 1], &pieces[i], len[i - 1], len[i])),
            i,
            0,
        ));
    }
    let mut live = n;
    while live > cap.max(1) {
        let Some((_, i, v)) = heap.pop() else { break };
        if !alive[i] || version[i] != v || prev[i] == usize::MAX {
            continue;
        }
        let a = prev[i];
        let (la, lb) = (len[a], len[i]);
        let w = la + lb;
        let (pa, pb) = (pieces[a], pieces[i]);
        pieces[a] = Piece {
            start: pa.start,
            x: (pa.x * la + pb.x * lb) / w,
            v: (pa.v * la + pb.v * lb) / w,
        };
        len[a] = w;
        alive[i] = false;
        live -= 1;
        let after = next[i];
        next[a] = after;
        if after < n {
            prev[after] = a;
            version[after] += 1;
            heap.push((
                key(cost(&pieces[a], &pieces[after], w, len[after])),
                after,
                version[after],
            ));
        }
        if prev[a] != usize::MAX {
            version[a] += 1;
            let b = prev[a];
            heap.push((key(cost(&pieces[b], &pieces[a], len[b], w)), a, version[a]));
        }
    }
    let mut w = 0;
    for r in 0..n {
        if alive[r] {
            pieces[w] = pieces[r];
            w += 1;
        }
    }
    pieces.truncate(w);
    true
}

/// The length of piece `i` in a function over `0..=max_size`.
pub fn piece_len(pieces: &[Piece], i: usize, max_size: u32) -> u64 {
    let end = pieces
        .get(i + 1)
        .map_or(u64::from(max_size) + 1, |p| u64::from(p.start));
    end - u64::from(pieces[i].start)
}

/// The value of a function at size `j`.
pub fn value_at(pieces: &[Piece], j: u32) -> Piece {
    let i = pieces.partition_point(|p| p.start <= j);
    pieces[i.saturating_sub(1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(points: &[(u32, f64, f64)]) -> Vec<Piece> {
        points
            .iter()
            .map(|&(start, x, v)| Piece { start, x, v })
            .collect()
    }

    #[test]
    fn sums_keep_small_variances_exact() {
        // A huge variance added and removed leaves the tiny ones intact.
        let a = f(&[(0, 1.0, EXACT), (5, 2.0, 1e5), (9, 3.0, EXACT)]);
        let b = f(&[(0, 1.0, EXACT), (7, 4.0, EXACT)]);
        let far = f(&[(0, 0.0, EXACT), (20_000, 5.0, 2.0)]);
        let mut events = Events::default();
        for g in [&a, &b, &far] {
            events.add_function(g);
        }
        let mut out = Vec::new();
        events.finish(&mut out);
        let starts: Vec<u32> = out.iter().map(|p| p.start).collect();
        assert_eq!(starts, [0, 5, 7, 9, 20_000]);
        assert_eq!(value_at(&out, 3).x, 2.0);
        assert_eq!(value_at(&out, 8).x, 6.0);
        assert_eq!(value_at(&out, 9).x, 7.0);
        let tiny = value_at(&out, 10).v;
        assert!((tiny - 3.0 * EXACT).abs() < 1e-24, "{tiny}");
        assert_eq!(value_at(&out, 30_000).x, 12.0);
        // The scratch is left empty for the next node.
        events.add_function(&b);
        let mut again = Vec::new();
        events.finish(&mut again);
        assert_eq!(again, b);
    }

    #[test]
    fn capping_joins_the_most_alike_neighbours() {
        // Three runs close in value, one far: capped at 2, the close ones join.
        let mut g = f(&[(0, 1.0, 1.0), (2, 1.1, 1.0), (4, 1.2, 1.0), (6, 50.0, 1.0)]);
        cap(&mut g, 2, 9);
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].start, g[1].start), (0, 6));
        assert!((g[0].x - 1.1).abs() < 1e-12);
        assert_eq!(g[1].x, 50.0);
        // Within the cap: unchanged.
        let mut h = f(&[(0, 1.0, 1.0), (3, 2.0, 1.0)]);
        let before = h.clone();
        cap(&mut h, 2, 9);
        assert_eq!(h, before);
        // A long function capped hard keeps its first start and increasing starts.
        let mut long: Vec<Piece> = (0..1000)
            .map(|i| Piece {
                start: i,
                x: f64::from(i % 7),
                v: 1.0 + f64::from(i % 3),
            })
            .collect();
        cap(&mut long, 10, 999);
        assert_eq!(long.len(), 10);
        assert_eq!(long[0].start, 0);
        assert!(long.windows(2).all(|w| w[0].start < w[1].start));
    }

    #[test]
    fn merging_takes_every_breakpoint() {
        let a = f(&[(0, 1.0, 1.0), (4, 2.0, 1.0)]);
        let b = f(&[
            (0, 10.0, 1.0),
            (2, 20.0, 1.0),
            (4, 30.0, 1.0),
            (6, 30.0, 2.0),
        ]);
        let mut out = Vec::new();
        merge(&a, &b, &mut out, |p, q| (p.x + q.x, p.v + q.v));
        let got: Vec<(u32, f64, f64)> = out.iter().map(|p| (p.start, p.x, p.v)).collect();
        assert_eq!(
            got,
            [
                (0, 11.0, 2.0),
                (2, 21.0, 2.0),
                (4, 32.0, 2.0),
                (6, 32.0, 3.0)
            ]
        );
        assert_eq!(piece_len(&out, 3, 9), 4);
    }
}
