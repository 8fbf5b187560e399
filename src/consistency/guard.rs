//! How much a region's consistent estimate leans on its children: `wls`'s combination
//! of a region's own fit with the sum of its children's estimates, with the weights
//! checked against the measurements themselves, so that a region is not made worse
//! than its own measurement.
//!
//! # Why
//! `wls` combines, size by size, a region's own fitted cumulative count `x` (variance
//! `v`) with the sum `s` of its children's combined estimates (variance `S`) by inverse
//! variance: `z = x − λ (x − s)` with `λ = v/(v + S)`. That is the best linear
//! combination *if the variances are right and the two errors independent and
//! unbiased*. They are a model, and fits are biased: an isotonic fit bounded by a
//! region's `G` sits below a flat stretch of the truth near the bound, a group just
//! above a tail's `L` is taken for noise, and so on. Each bias is small beside its
//! region's noise, but the biases of a region's children add up coherently while
//! their noise does not, and they share their sign with the region's own: the sum of
//! ten states is then off by several of its own standard deviations in the direction
//! the nation's own fit already errs, and any weight on it makes the nation worse.
//! What the unchecked step cost is measured in `docs/accuracy.md` ("What this shows":
//! the *unchecked* column).
//!
//! # The check, from the measurements
//! **Where the region's own noisy cells are at hand** (the cumulative head: `Hc[j]`
//! for `j` below the tail's `L`, or all of `Hc` for `hc`), they are an unbiased,
//! independent measurement with exactly known variance `σ²` per cell, and Stein's
//! unbiased risk estimate says how good any combination is without knowing the truth.
//! For `z = x − κ λ (x − s)` (the model's shares `λ`, scaled by one factor `κ` per
//! window of sizes) with `y` the noisy cells, the risk `Σ (z − θ)²` is estimated
//! without bias (Stein 1981; Gaussian noise, to a good approximation for the discrete
//! Laplace once cells are pooled) by
//!
//! `SURE(κ) = Σ (z − y)² − nσ² + 2σ² Σ ∂z_j/∂y_j`,
//!
//! where `∂x_j/∂y_j = 1/len(block of j)` for an isotonic fit (the block's mean; one
//! median cell in `len` for L1), i.e. `σ² ∂x_j/∂y_j = v_j` with the model's
//! `v_j = σ²/len`, and `s` does not depend on `y`. It is a parabola in `κ`, least at
//!
//! `κ̂ = (Σ λ_j d_j (x_j − y_j) + Σ λ_j v_j) / Σ λ_j² d_j²`,  `d = x − s`.
//!
//! `κ̂` estimates the share that minimises the true risk, which is 0 when the children's
//! bias is of the own fit's sign and larger than the noise the children remove. Its
//! noise is `σ/√(Σ λ² d²)` (the `y` in the numerator), so `wls` takes the lower
//! confidence bound `κ = clamp(κ̂ − 2 σ/√(Σ λ² d²), 0, 1)`: it leans on the children
//! only as far as the measurements show, at about 97.7% one-sided confidence, that doing
//! so lowers the region's error. A region whose evidence is thin (few cells, few
//! regions) keeps its own measurement. The sums run over every region of the level and
//! every cell of the window: the level's regions share one `κ` per window, which the
//! thousands of regions of a lower level pin down closely, and a root alone decides
//! its own.
//!
//! **Elsewhere** (the sizes a tail lists, where a region's estimate is the listed
//! groups' steps and no noisy cell measures `Hc` directly), the two estimates are
//! compared with each other: their difference `e = x − s` has mean square `v + S` if the
//! model holds, so over a window of the region's sizes the excess
//! `τ̂² = max(0, Σ (e² − v − S)) / Σ max(v, S)` per unit of scale is charged to the
//! children's side, `S + τ̂² max(v, S)` (a sum of thousands of blocks that claim to know
//! a cell exactly is where such biases hide; the charge follows the larger variance of
//! the cell so that exact claims and accumulated fit biases are both covered). This
//! leans on the region's own measurement when the two disagree beyond their noise.
//!
//! *Windows* are dyadic in the size — `{0}`, `{1}`, `[2, 4)`, `[4, 8)`, … — and split at
//! the region's `from` (where a tail's head ends): biases of fits are smooth in the size
//! and their extent scales with it, and the windows are fixed in advance (public), so no
//! choice is fitted to the data and no constant is tuned. The last cell (`K`, known
//! exactly) is never combined.
//!
//! Everything here is a function of the noisy measurements and public values: it is
//! post-processing and spends no ε.
//!
//! # Citations
//! Stein, "Estimation of the mean of a multivariate normal distribution", Ann. Statist.
//! 9(6), 1981 (the unbiased risk estimate); Meyer, Woodroofe, "On the degrees of freedom
//! in shape-restricted regression", Ann. Statist. 28(4), 2000 (the divergence of an
//! isotonic fit); James, Stein, Berkeley Symposium 1961, and Baranchik, Ann. Math.
//! Statist. 41(2), 1970 (data-chosen shrinkage that does not lose to the measurement it
//! shrinks); Hay et al., PVLDB 2010, §4 (combining a node with its children).

use super::pieces::{EXACT, Piece, advance, push_joined};

/// Windows per region: a dyadic index (sizes up to `2^32`) on each side of `from`.
const WINDOWS: usize = 2 * 34;

/// The one-sided confidence, in standard deviations, at which a level leans on its
/// children: `κ` is the lower bound of its estimate's `Φ(2) ≈ 97.7%` interval.
const CONFIDENCE_Z: f64 = 2.0;

/// How much a level's combined estimates leaned on their own measurements: sums over
/// cells (sizes `0..K` that are not known exactly on both sides), each cell weighted by
/// the sum of the two sides' variances there (so that the sizes where there is something
/// to combine count, not the long stretches both sides know well).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Leaning {
    /// The cells' total weight.
    pub cells: f64,
    /// The own measurement's weight `1 − λ`, summed over the cells.
    pub own_weight: f64,
    /// The own measurement's weight the variance model alone would have given.
    pub model_weight: f64,
    /// The weight of the cells where the check lowered the children's share below the
    /// model's.
    pub raised: f64,
}

impl Leaning {
    pub fn add(&mut self, other: &Leaning) {
        self.cells += other.cells;
        self.own_weight += other.own_weight;
        self.model_weight += other.model_weight;
        self.raised += other.raised;
    }

    /// The own measurement's mean weight, and the model's, over the cells.
    pub fn means(&self) -> Option<(f64, f64)> {
        (self.cells > 0.0).then(|| (self.own_weight / self.cells, self.model_weight / self.cells))
    }
}

/// The statistics of one level for Stein's estimate, per window.
#[derive(Clone, Debug)]
pub struct Calibration {
    num: [f64; WINDOWS],
    den: [f64; WINDOWS],
    noise: [f64; WINDOWS],
}

impl Default for Calibration {
    fn default() -> Self {
        Calibration {
            num: [0.0; WINDOWS],
            den: [0.0; WINDOWS],
            noise: [0.0; WINDOWS],
        }
    }
}

impl Calibration {
    pub fn add(&mut self, other: &Calibration) {
        for w in 0..WINDOWS {
            self.num[w] += other.num[w];
            self.den[w] += other.den[w];
            self.noise[w] += other.noise[w];
        }
    }

    /// Each window's factor `κ`: the lower confidence bound of Stein's estimate.
    pub fn factors(&self) -> Factors {
        let mut kappa = [1.0; WINDOWS];
        for (w, k) in kappa.iter_mut().enumerate() {
            if self.den[w] > 0.0 {
                let bound = self.num[w] - CONFIDENCE_Z * self.noise[w].sqrt();
                *k = (bound / self.den[w]).clamp(0.0, 1.0);
            }
        }
        Factors { kappa }
    }
}

/// A level's factor `κ` per window.
#[derive(Clone, Copy, Debug)]
pub struct Factors {
    kappa: [f64; WINDOWS],
}

/// One run of sizes with the own and the children's values.
#[derive(Clone, Copy, Debug)]
struct Seg {
    start: u32,
    len: u64,
    own: Piece,
    sum: Piece,
}

/// Per-thread scratch.
#[derive(Default)]
pub struct GuardScratch {
    segs: Vec<Seg>,
    raw: Vec<RawPiece>,
    excess: Vec<(u32, f64)>,
}

/// The dyadic index of size `j`: 0 for 0, `1 + ⌊log₂ j⌋` otherwise.
fn dyadic(j: u64) -> usize {
    if j == 0 {
        0
    } else {
        64 - j.leading_zeros() as usize
    }
}

/// The window of size `j` for a region whose own model changes at `from`.
fn window(j: u32, from: u32) -> usize {
    2 * dyadic(u64::from(j)) + usize::from(j >= from)
}

/// The start of the window after size `j` (see the module docs), at most `k + 1`.
fn window_end(j: u32, from: u32, k: u32) -> u64 {
    let (j, from, k) = (u64::from(j), u64::from(from), u64::from(k));
    if j >= k {
        return k + 1;
    }
    let mut end = (if j == 0 { 1 } else { 1u64 << dyadic(j) }).min(k);
    if from > j && from < end {
        end = from;
    }
    end
}

/// Both sides known exactly at this run.
fn exact(seg: &Seg) -> bool {
    seg.own.v <= 2.0 * EXACT && seg.sum.v <= 2.0 * EXACT
}

/// The variance model's share of the children: `S⁻¹/(v⁻¹ + S⁻¹)`.
fn model_share(seg: &Seg) -> f64 {
    let (v, s) = (seg.own.v.max(EXACT), seg.sum.v.max(EXACT));
    v / (v + s)
}

/// One run of sizes of a region's own unbiased noisy measurement of `Hc`: the value `u`
/// and an unbiased estimate of its variance, per cell.
#[derive(Clone, Copy, Debug, PartialEq)]
struct RawPiece {
    start: u32,
    u: f64,
    var: f64,
}

/// A region's own noisy measurement of `Hc[0..K)` as runs ([`RawPiece`]), from `raw` (its
/// noisy head cells `raw[..from]`, then the noisy values it listed, ascending): the head
/// cells as measured (variance `σ²`), and from `from` on the deconvolved count of the
/// listed values (see the module docs), with the unlisted groups at or below `from`.
fn raw_function(
    raw: &[i64],
    from: u32,
    k: u32,
    groups: u64,
    noise_var: f64,
    out: &mut Vec<RawPiece>,
) {
    out.clear();
    let head = (from as usize).min(raw.len()).min(k as usize);
    for (j, &y) in raw[..head].iter().enumerate() {
        out.push(RawPiece {
            start: j as u32,
            u: y as f64,
            var: noise_var,
        });
    }
    if from >= k || raw.len() < from as usize {
        return;
    }
    let listed = &raw[from as usize..];
    let c = noise_var / 2.0;
    let base = groups as f64 - listed.len() as f64;
    // Where u changes: `from`, and around each listed value.
    let mut starts: Vec<u32> = vec![from];
    for &y in listed {
        for t in [y - 1, y, y + 1] {
            if t >= i64::from(from) && t < i64::from(k) {
                starts.push(t as u32);
            }
        }
    }
    starts.sort_unstable();
    starts.dedup();
    let count_le = |j: i64| listed.partition_point(|&y| y <= j);
    let count_eq =
        |j: i64| listed.partition_point(|&y| y <= j) - listed.partition_point(|&y| y < j);
    for &j in &starts {
        let j = i64::from(j);
        let (eq, next) = (count_eq(j) as f64, count_eq(j + 1) as f64);
        let piece = RawPiece {
            start: j as u32,
            u: base + count_le(j) as f64 + c * (eq - next),
            var: c * (1.0 + c) * (eq + next),
        };
        match out.last() {
            Some(last) if last.u == piece.u && last.var == piece.var => {}
            _ => out.push(piece),
        }
    }
}

/// Whether a run's combination is calibrated on the region's own noisy measurement:
/// the head's noisy cells, or (for `hg`, where every group is listed) the deconvolved
/// count of its listed values. A tail's listed sizes above `L` are left to the
/// discrepancy check instead: their deconvolved count is unbiased but so noisy near the
/// listed values that no level could ever show, with confidence, that its children
/// help there.
fn calibrated(region: &Region<'_>, seg: &Seg) -> bool {
    region.checked
        && !region.raw.is_empty()
        && !exact(seg)
        && seg.start < region.k
        && (seg.start < region.from || region.from == 0)
}

/// `(Σ u, Σ var, cells)` of `raw` over the cells `start..end`.
fn raw_sums(raw: &[RawPiece], start: u32, end: u32) -> (f64, f64, f64) {
    let mut i = raw.partition_point(|p| p.start <= start).saturating_sub(1);
    let (mut u, mut var, mut cells) = (0.0, 0.0, 0.0);
    while i < raw.len() && raw[i].start < end {
        let a = raw[i].start.max(start);
        let b = raw.get(i + 1).map_or(end, |p| p.start.min(end));
        if b > a {
            let n = f64::from(b - a);
            u += n * raw[i].u;
            var += n * raw[i].var;
            cells += n;
        }
        i += 1;
    }
    (u, var, cells)
}

/// A region's own `(x, v)` and its children's sums `(s, S)`, both over `0..=k`, side by
/// side, split at the windows' edges.
fn segments(own: &[Piece], sums: &[Piece], from: u32, k: u32, segs: &mut Vec<Seg>) {
    segs.clear();
    let (mut i, mut j) = (0, 0);
    while i < own.len() && j < sums.len() {
        let start = own[i].start.max(sums[j].start);
        let end_own = own
            .get(i + 1)
            .map_or(u64::from(k) + 1, |p| u64::from(p.start));
        let end_sum = sums
            .get(j + 1)
            .map_or(u64::from(k) + 1, |p| u64::from(p.start));
        let end = end_own.min(end_sum);
        let mut at = u64::from(start);
        while at < end {
            let next = window_end(at as u32, from, k).min(end);
            segs.push(Seg {
                start: at as u32,
                len: next - at,
                own: own[i],
                sum: sums[j],
            });
            at = next;
        }
        if !advance(own, sums, &mut i, &mut j) {
            break;
        }
    }
}

/// A region's own measurement and its children's sum, for [`calibrate`] and [`combine`].
pub struct Region<'a> {
    /// The region's own fit `(x, v)` over `0..=k`.
    pub own: &'a [Piece],
    /// Its children's sums `(s, S)` over `0..=k`.
    pub sums: &'a [Piece],
    /// Whether to check the model's shares at all (else the model alone).
    pub checked: bool,
    /// Its noisy head cells, then the noisy values it listed, ascending.
    pub raw: &'a [i64],
    pub noise_var: f64,
    pub from: u32,
    pub groups: u64,
    pub k: u32,
}

/// What a region adds to its level's [`Calibration`]: the terms of Stein's estimate over
/// its sizes `0..K`.
pub fn calibrate(
    region: &Region<'_>,
    scratch: &mut GuardScratch,
    calibration: &mut impl CalibrationSink,
) {
    if region.sums.is_empty() || region.raw.is_empty() {
        return;
    }
    let k = region.k;
    segments(region.own, region.sums, region.from, k, &mut scratch.segs);
    raw_function(
        region.raw,
        region.from,
        k,
        region.groups,
        region.noise_var,
        &mut scratch.raw,
    );
    for seg in &scratch.segs {
        if !calibrated(region, seg) {
            continue;
        }
        let end = (u64::from(seg.start) + seg.len).min(u64::from(k)) as u32;
        let (sum_u, sum_var, cells) = raw_sums(&scratch.raw, seg.start, end);
        let w = window(seg.start, region.from);
        let lambda = model_share(seg);
        let d = seg.own.x - seg.sum.x;
        // The divergence term (Stein's `σ² ∂x/∂y`) is the model's variance for the head's
        // averaged cells; for listed values it is left out (see the module docs).
        let divergence = if seg.start < region.from {
            cells * seg.own.v
        } else {
            0.0
        };
        calibration.term(
            w,
            lambda * d * (cells * seg.own.x - sum_u) + lambda * divergence,
            cells * lambda * lambda * d * d,
            sum_var * lambda * lambda * d * d,
        );
    }
}

/// Where [`calibrate`] puts a region's terms of Stein's estimate: added to a level's
/// [`Calibration`] at once, or recorded ([`CalibrationTerms`]) to be added later in
/// region order, so that a level's regions can be worked on in parallel and still give
/// the sums of one pass over them in order, bit for bit, on any number of threads.
pub trait CalibrationSink {
    /// Window `w`'s terms: numerator, denominator, noise.
    fn term(&mut self, w: usize, num: f64, den: f64, noise: f64);
}

impl CalibrationSink for Calibration {
    fn term(&mut self, w: usize, num: f64, den: f64, noise: f64) {
        self.num[w] += num;
        self.den[w] += den;
        self.noise[w] += noise;
    }
}

/// Terms recorded in the order [`calibrate`] made them.
#[derive(Clone, Debug, Default)]
pub struct CalibrationTerms(Vec<(usize, f64, f64, f64)>);

impl CalibrationSink for CalibrationTerms {
    fn term(&mut self, w: usize, num: f64, den: f64, noise: f64) {
        self.0.push((w, num, den, noise));
    }
}

impl CalibrationTerms {
    /// Adds the recorded terms to `calibration`, in the order they were made.
    pub fn replay(&self, calibration: &mut Calibration) {
        for &(w, num, den, noise) in &self.0 {
            calibration.term(w, num, den, noise);
        }
    }
}

/// A region's own `(x, v)` combined with its children's sums `(s, S)` into `out`: the
/// model's shares scaled by its level's `factors` (see the module docs). Returns how much
/// the region leaned on its own measurement.
pub fn combine(
    region: &Region<'_>,
    factors: &Factors,
    scratch: &mut GuardScratch,
    out: &mut Vec<Piece>,
) -> Leaning {
    out.clear();
    if region.sums.is_empty() {
        out.extend_from_slice(region.own);
        return Leaning::default();
    }
    let k = region.k;
    segments(region.own, region.sums, region.from, k, &mut scratch.segs);
    let segs = &scratch.segs;
    // Where the check cannot lean on noisy cells: the excess of the discrepancy over the
    // model's variances, per unit of scale, per window.
    let excess = &mut scratch.excess;
    excess.clear();
    let (mut total, mut scale) = (0.0f64, 0.0f64);
    let mut window_start = 0u32;
    let flush = |excess: &mut Vec<(u32, f64)>, start: u32, total: f64, scale: f64| {
        let per_scale = if scale > 0.0 {
            total.max(0.0) / scale
        } else {
            0.0
        };
        excess.push((start, per_scale));
    };
    for seg in segs {
        if u64::from(seg.start) >= window_end(window_start, region.from, k) {
            flush(excess, window_start, total, scale);
            (total, scale) = (0.0, 0.0);
            window_start = seg.start;
        }
        if exact(seg) || calibrated(region, seg) {
            continue;
        }
        let len = seg.len as f64;
        let e = seg.own.x - seg.sum.x;
        total += len * (e * e - seg.own.v - seg.sum.v);
        scale += len * seg.own.v.max(seg.sum.v);
    }
    flush(excess, window_start, total, scale);
    let mut leaning = Leaning::default();
    let mut w = 0;
    for seg in segs {
        while w + 1 < excess.len() && excess[w + 1].0 <= seg.start {
            w += 1;
        }
        let (o, s) = (&seg.own, &seg.sum);
        let model = model_share(seg);
        let lambda = if exact(seg) || !region.checked {
            model
        } else if calibrated(region, seg) {
            factors.kappa[window(seg.start, region.from)] * model
        } else {
            let tau2 = excess[w].1 * o.v.max(s.v);
            let (v, sv) = (o.v.max(EXACT), s.v.max(EXACT) + tau2);
            v / (v + sv)
        };
        if !exact(seg) {
            // Each cell counts by how uncertain it is (the two sides' variances).
            let weight = seg.len as f64 * (o.v + s.v);
            leaning.cells += weight;
            leaning.own_weight += weight * (1.0 - lambda);
            leaning.model_weight += weight * (1.0 - model);
            if lambda < model {
                leaning.raised += weight;
            }
        }
        let keep = 1.0 - lambda;
        push_joined(
            out,
            Piece {
                start: seg.start,
                x: keep * o.x + lambda * s.x,
                v: keep * keep * o.v + lambda * lambda * s.v,
            },
        );
    }
    leaning
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(start: u32, x: f64, v: f64) -> Piece {
        Piece { start, x, v }
    }

    #[test]
    fn windows_are_dyadic_split_at_from_and_k() {
        let ends: Vec<u64> = [0u32, 1, 2, 3, 4, 7, 8, 19, 20, 31, 32, 99, 100]
            .iter()
            .map(|&j| window_end(j, 20, 100))
            .collect();
        assert_eq!(ends, [1, 2, 4, 4, 8, 8, 16, 20, 32, 32, 64, 100, 101]);
        assert_eq!(window(0, 20), 0);
        assert_eq!(window(19, 20), 2 * 5);
        assert_eq!(window(20, 20), 2 * 5 + 1);
        assert_eq!(window(u32::MAX, 0), 2 * 32 + 1);
    }

    fn region<'a>(own: &'a [Piece], sums: &'a [Piece], raw: &'a [i64], k: u32) -> Region<'a> {
        Region {
            own,
            sums,
            checked: true,
            raw,
            noise_var: 4.0,
            from: 0,
            groups: 100,
            k,
        }
    }

    #[test]
    fn a_sum_that_claims_precision_and_disagrees_is_outweighed() {
        // No noisy cells at hand: the children's sum claims to know cells 0..40 nearly
        // exactly and is 60 off; the combined estimate stays near the region's own.
        let own = [p(0, 100.0, 1.0), p(40, 100.0, EXACT)];
        let sums = [p(0, 160.0, 1e-6), p(40, 100.0, EXACT)];
        let mut out = Vec::new();
        let factors = Calibration::default().factors();
        let l = combine(
            &region(&own, &sums, &[], 40),
            &factors,
            &mut GuardScratch::default(),
            &mut out,
        );
        for piece in out.iter().filter(|q| q.start < 40) {
            assert!((piece.x - 100.0).abs() < 0.1, "{out:?}");
        }
        assert!(l.raised > 0.0 && l.own_weight > 0.99 * l.cells);
        assert!(l.model_weight < 0.01 * l.cells);
    }

    #[test]
    fn agreement_keeps_the_model_weights_and_no_evidence_changes_nothing() {
        let own = [p(0, 10.0, 4.0), p(8, 10.0, EXACT)];
        let sums = [p(0, 10.5, 1.0), p(8, 10.0, EXACT)];
        let mut out = Vec::new();
        let factors = Calibration::default().factors();
        let l = combine(
            &region(&own, &sums, &[], 8),
            &factors,
            &mut GuardScratch::default(),
            &mut out,
        );
        assert!(
            (out[0].x - (10.0 / 4.0 + 10.5) / 1.25).abs() < 1e-9,
            "{out:?}"
        );
        assert_eq!(l.raised, 0.0);
        assert!((l.own_weight - l.model_weight).abs() < 1e-12);
    }

    #[test]
    fn noisy_cells_that_side_with_the_region_keep_it_alone() {
        // A region's noisy cells all agree with its own fit (100) and not with its
        // children's sum (130): Stein's estimate shows the children's share only raises
        // the risk, so the level leans on the region's own measurement.
        let own = [p(0, 100.0, 4.0), p(64, 100.0, EXACT)];
        let sums = [p(0, 130.0, 4.0), p(64, 100.0, EXACT)];
        let raw: Vec<i64> = (0..64).map(|j| 100 + [-2, 1, 0, 2, -1][j % 5]).collect();
        let r = Region {
            from: 65,
            ..region(&own, &sums, &raw, 64)
        };
        let mut c = Calibration::default();
        calibrate(&r, &mut GuardScratch::default(), &mut c);
        let factors = c.factors();
        let mut out = Vec::new();
        let l = combine(&r, &factors, &mut GuardScratch::default(), &mut out);
        assert!((out[0].x - 100.0).abs() < 1e-9, "{out:?}");
        assert!((l.own_weight / l.cells - 1.0).abs() < 1e-12);
        // Cells that side with the children (130) let the level follow the model.
        let raw: Vec<i64> = (0..64).map(|j| 130 + [-2, 1, 0, 2, -1][j % 5]).collect();
        let r = Region {
            from: 65,
            ..region(&own, &sums, &raw, 64)
        };
        let mut c = Calibration::default();
        calibrate(&r, &mut GuardScratch::default(), &mut c);
        let l = combine(&r, &c.factors(), &mut GuardScratch::default(), &mut out);
        assert!((l.own_weight - l.model_weight).abs() < 1e-9, "{l:?}");
    }

    #[test]
    fn the_listed_values_deconvolve_to_an_unbiased_count() {
        // Two listed values at 30 and 31 of a region of 5 groups, from = 0 (no head
        // cells: both values are the tail's), σ² = 4:
        // c = 2. u_j = 3 + #{y ≤ j} + 2·(#{y = j} − #{y = j + 1}).
        let mut out = Vec::new();
        raw_function(&[30, 31], 0, 100, 5, 4.0, &mut out);
        let at = |j: u32| *out.iter().rev().find(|p| p.start <= j).unwrap();
        assert_eq!(at(0).u, 3.0);
        assert_eq!(at(29).u, 3.0 - 2.0);
        assert_eq!(at(30).u, 4.0 + 2.0 - 2.0);
        assert_eq!(at(31).u, 5.0 + 2.0);
        assert_eq!(at(32).u, 5.0);
        assert_eq!(at(29).var, 6.0);
        assert_eq!(at(30).var, 12.0);
        assert_eq!(at(32).var, 0.0);
    }
}
