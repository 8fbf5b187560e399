//! Tree-wide weighted least squares on isotonic fits, checked against the noisy
//! measurements and projected top-down by optimal splitting: coco's own consistency
//! step (`consistency = "wls"`).
//!
//! The paper's top-down step (Algorithm 1) merges each group's size estimates along
//! matched pairs and can leave the root worse than its own measurement. This step uses
//! the structure that makes the cumulative histogram special: it is additive,
//! `Hc_parent[j] = Σ_children Hc_child[j]` for every size `j`, and each node's noisy
//! measurement has exactly known noise variance before post-processing.
//!
//! 1. **Every method as a cumulative fit.** Each node's estimate is read as a cumulative
//!    histogram with a variance per cell ([`NodeFit`](crate::estimate::NodeFit)):
//!    * `hc`: the isotonic fit of its noisy `Hc` with `Hc[K] = G` and values at most
//!      `G`, without the lower bound 0 ([`isotonic::fit_free_with_last`]): where the
//!      truth is 0 (no groups of size 0, say), clipping at 0 biases every region's value
//!      upward and the bias adds up in a parent's sum of thousands of children. Each
//!      cell of a block of `S` cells gets the variance of the block's mean, `σ²/S` (Kuo
//!      et al. §5.1.1; `σ²` the level's exact noise variance). That leaves out the fit's
//!      biases (a pool in a steep stretch, a flat stretch pulled below the bound `G`):
//!      step 2's check measures what they cost. The known last cell gets variance 0
//!      ([`EXACT`]); a region with no groups is known exactly everywhere.
//!    * `hc` with a tail: the head's fit below `L` as above, and from `L` on
//!      `Hc[j] = G − #{ŝ > j}` over the listed groups' estimated sizes `ŝ`.
//!    * `hg`: the same step function over every group (the tail's form with `L = 0`).
//!
//!    A listed group's step in `Hc` is located with a Laplace error of scale `b`:
//!    `b = √(Var_loc/2)` with `Var_loc = Var/S + spread` for a block of `S` pooled sizes
//!    (the block's averaged noise, and the spread of the true sizes it pooled, estimated
//!    from its residuals: [`crate::estimate::pooled_spread`]). Cell `j` gets the variance
//!    `p(1 − p)`, `p = e^{−d/(WIDEN·b)}/2` at distance `d = |j + ½ − ŝ|`, summed over the
//!    groups ([`WIDEN`] says why the profile is wider than `b`). That profile is smooth
//!    and reaches [`REACH`]`·WIDEN·b` cells each way; kept cell by cell it would cost
//!    hundreds of cells per group at block level. It is kept as [`Profile::Bins`]: its
//!    average over bins of cells, one cell wide for the 4 cells next to the step, then
//!    two bins per doubling of the distance, aligned to multiples of their width so that
//!    the bins of nearby groups (a block's households of sizes 1 to 7) coincide. The
//!    variance is exact near the step and within a factor of about `e^{w/(WIDEN·b)}` in
//!    a bin of width `w` farther out, where it is small. ([`Profile::Cells`] keeps it cell
//!    by cell, for tests.)
//!
//!    Each node's function is kept as runs of sizes with constant values
//!    ([`super::pieces`]), so a node costs its runs, not `K + 1` cells.
//! 2. **Tree-wide least squares, per size, checked against the measurements.** For each
//!    `j`, the fitted values `x_τ[j]` with variances `v_τ[j]` are combined into estimates
//!    that satisfy every parent = sum of children (Hay et al. §4, Qardaji et al. §3, with
//!    unequal variances). An upward pass combines each node's own value with the sum of
//!    its children's, `z_τ = x_τ − λ (x_τ − s_τ)`, `V_τ = (1 − λ)² v_τ + λ² S_τ`, with
//!    `s_τ = Σ_c z_c`, `S_τ = Σ_c V_c` (a leaf keeps `z = x`, `V = v`). The model's share
//!    is `λ = v/(v + S)`, the generalised-least-squares weight for independent, unbiased
//!    estimates; [`super::guard`] scales it per level and window of sizes by what the
//!    noisy measurements show (Stein's unbiased risk estimate, at 97.7% confidence), and
//!    where they cannot show it by the discrepancy between the two estimates, so that a
//!    region leans on its children only as far as that lowers its error. A downward pass
//!    fixes the root at `f = z` and shares each parent's discrepancy among its children
//!    in proportion to their variances: `f_c = z_c + (V_c / S_τ)(f_τ − s_τ)`. All of it
//!    is done on runs: a parent's run boundaries are the union of its children's and its
//!    own.
//! 3. **Projection, top-down, by optimal splitting.** The targets `f` are consistent but
//!    real, possibly non-monotone. The root's target is fitted by bounded isotonic
//!    regression with `Hc[K] = G` (on runs, [`isotonic::fit_runs_with_last`], exactly
//!    the cell-wise fit) and rounded: an integral histogram `P` with exactly `G` groups.
//!    Then each parent's fixed histogram is split among its children: each child's
//!    target is made monotone and integral the same way (`R_c`, exactly `G_c` groups),
//!    and the parent's groups, smallest first, are handed to the children's target
//!    slots, smallest first ([`super::matching::match_groups`], Algorithm 2).
//!
//! **The split is optimal.** For cumulative histograms with equal totals,
//! `Σ_j |A_c[j] − R_c[j]|` is the earth mover's distance between child `c`'s received
//! groups and its target groups, i.e. the cost of the best matching between the two
//! multisets of sizes. So the cost of any split, `Σ_c EMD(A_c, R_c)`, is at least the
//! cost of the best matching between the parent's groups and the union of all the
//! children's target slots, which in one dimension is the sorted matching — exactly
//! what is computed — and the sorted matching achieves it. Its cost is
//! `EMD(P, Σ_c R_c) = Σ_j |P[j] − Σ_c R_c[j]|`, the triangle-inequality lower bound. The
//! tests check this against brute force and the Hungarian algorithm.
//!
//! **Cost.** Memory: the combined runs of the nodes above the leaves, kept between the
//! passes, and one level's targets at a time; a leaf's runs are rebuilt from its fit
//! when needed (once on the way up, once on the way down). Time: proportional to the
//! runs summed over all nodes; nodes of one level run in parallel.
//!
//! Every node needs a fit (`hc`, `hc` with a tail or `hg`); plans with `naive`
//! somewhere fall back to the top-down step (callers say so).
//!
//! # Citations
//! Hay, Rastogi, Miklau, Suciu, PVLDB 2010, §4 (constrained inference on trees);
//! Qardaji, Yang, Li, PVLDB 2013, §3 (weighted averaging and mean consistency);
//! Kuo et al., PVLDB 2018, §5.1 (variance of isotonic fits), §5.2 (matching).

use rayon::prelude::*;

use super::ConsistencyError;
use super::matching::{match_groups, unit_runs};
pub use super::pieces::EXACT;
use super::pieces::{Events, Piece, merge, piece_len, push_joined};
use crate::data::{Hierarchy, LevelId, NodeId};
use crate::estimate::isotonic;
use crate::estimate::{Estimates, FitRef, GroupRun, HeadBlock, IsotonicFit};
use crate::histogram::{Count, CountOfCounts, HistRef, HistogramSet, Size};

/// A step's variance profile is this many location scales `b` wide. The chance that a
/// group whose step this node put at `ŝ` lies on the other side of `j` is
/// `e^{−|j + ½ − ŝ|/b}/2`, centred on the node's own estimate. But the nodes combined at
/// a cell estimate one common step, and their estimates of it differ: two independent
/// locations with Laplace errors of scale `b` differ by more than `3b` with probability
/// `(1 + 3/2)e^{−3} ≈ 0.12`. A profile `b` wide centred on each node's own `ŝ` makes each
/// node look sure of the cells just past its own step, exactly where it and the others
/// disagree, and the combination lands on the farther estimate rather than between
/// them. Widened `3b`, the profile stays within `e^{−1}` of its peak over the range that
/// holds the other estimate in nearly 9 pairs in 10, so the weights do not switch sides
/// inside it. Measured (12 trials, seeds 1000+, the default plan): the nation of a
/// census-like dataset with group quarters near `L` 0.72 of its own error at `3b`
/// against 0.84 at `b`; the exact `p` or its convolution with a second Laplace error
/// (`(1 + d/b)e^{−d/b}/4`) lose likewise on every shape with listed groups.
pub const WIDEN: f64 = 3.0;
/// A profile reaches this many widened scales each way: beyond, `e^{−12} < 10⁻⁵` of its
/// peak, below what the projection's `1/1024` resolution can see.
const REACH: f64 = 12.0;
/// Fixed-point scale for fitting real targets with the integer isotonic regression.
const SCALE: f64 = 1024.0;

/// The fewest runs a region's function is ever cut to.
pub const MIN_REGION_RUNS: usize = 256;

/// The bytes one run takes.
pub const RUN_BYTES: u64 = std::mem::size_of::<Piece>() as u64;

/// The memory the runs of one level above the leaves may take (the upward pass keeps
/// every such level; the downward pass one level of targets more). A region may hold
/// its share of it by the leaves below it, and at least [`MIN_REGION_RUNS`] runs;
/// beyond, its most alike neighbouring runs are joined ([`super::pieces::cap`]) and the
/// release says so ([`super::Consistent::capped`]). Sized from the memory the machine
/// has ([`RunBudget::from_available`]), it binds only where memory would run out: a
/// region's function has at most `K + 1` runs, so a region holding a share `q` of the
/// leaves is never cut once `q · bytes_per_level ≥ (K + 1) · RUN_BYTES`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunBudget {
    pub bytes_per_level: u64,
}

impl RunBudget {
    /// No limit (tests, small hierarchies).
    pub const UNBOUNDED: RunBudget = RunBudget {
        bytes_per_level: u64::MAX,
    };

    /// Half of `available` bytes, shared evenly by the `depth − 1` levels above the
    /// leaves and the downward pass's targets.
    pub fn from_available(available: u64, depth: usize) -> RunBudget {
        RunBudget {
            bytes_per_level: (available / 2) / (depth.max(1) as u64),
        }
    }

    /// The most runs of a region with `leaves` of the hierarchy's `total` leaves below it.
    pub fn region_cap(self, leaves: u64, total: u64) -> usize {
        let share = (u128::from(self.bytes_per_level) * u128::from(leaves)
            / u128::from(total.max(1))) as u64;
        usize::try_from(share / RUN_BYTES)
            .unwrap_or(usize::MAX)
            .max(MIN_REGION_RUNS)
    }
}

/// How a listed group's location variance is spread over the cells around it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Profile {
    /// Averages over bins that widen with the distance (see the module docs).
    #[default]
    Bins,
    /// Cell by cell: exact, and as costly as the cells it reaches.
    Cells,
}

/// What `wls` made: every node's released histogram, and per level how much its
/// regions leaned on their own measurements and how many had runs joined.
pub struct WlsOutput {
    pub histograms: HistogramSet,
    /// Per level (the leaves' is empty).
    pub leaning: Vec<super::guard::Leaning>,
    /// Per level: regions whose runs were joined to stay within the [`RunBudget`].
    pub capped: Vec<u64>,
}

/// Runs the estimator on the fits of every node (`estimates` and `groups` indexed by
/// [`NodeId`]); every node must have a fit.
pub fn wls(
    hierarchy: &Hierarchy,
    estimates: &Estimates,
    groups: &[Count],
    max_size: Size,
    fit: IsotonicFit,
    budget: RunBudget,
    checked: bool,
) -> Result<WlsOutput, ConsistencyError> {
    let mut input = Input::new(hierarchy, estimates, groups, max_size, Profile::Bins);
    input.budget = budget;
    input.checked = checked;
    let phase = crate::timing::phase("wls up");
    let up = up(&input);
    phase.done();
    let _phase = crate::timing::phase("wls down and projection");
    let (histograms, down_capped) = down(&input, &up, fit)?;
    let capped = up
        .capped
        .iter()
        .zip(&down_capped)
        .map(|(a, b)| a + b)
        .collect();
    Ok(WlsOutput {
        histograms,
        leaning: up.leaning,
        capped,
    })
}

/// The consistent real targets `f_τ` of every node (step 2), as runs, for tests and
/// diagnostics: small hierarchies only (every node's targets are kept).
pub fn targets(
    hierarchy: &Hierarchy,
    estimates: &Estimates,
    groups: &[Count],
    max_size: Size,
    profile: Profile,
) -> Vec<Vec<Piece>> {
    let input = Input::new(hierarchy, estimates, groups, max_size, profile);
    let up = up(&input);
    let n = hierarchy.len();
    let mut f: Vec<Vec<Piece>> = vec![Vec::new(); n];
    let mut scratch = Scratch::default();
    f[0] = root_function(&input, &up, &mut scratch);
    for level in hierarchy.levels().take(hierarchy.depth() - 1) {
        for p in hierarchy.level_nodes(level) {
            let children = input.children_functions(&up, p, &mut scratch);
            let corr = correction(&f[p.index()], &children, &mut scratch);
            for (c, child) in hierarchy.node(p).children().zip(&children) {
                let mut out = Vec::new();
                child_target(child, &corr, &mut out);
                f[c.index()] = out;
            }
            scratch.children = children;
        }
    }
    f
}

/// DEBUG (lab): a node's own `(x, v, b)`, its children's sums and the combination.
#[doc(hidden)]
pub fn debug_node(
    hierarchy: &Hierarchy,
    estimates: &Estimates,
    groups: &[Count],
    max_size: Size,
    node: NodeId,
) -> (Vec<Piece>, Vec<Piece>, Vec<Piece>) {
    let input = Input::new(hierarchy, estimates, groups, max_size, Profile::Bins);
    let up = up(&input);
    let mut scratch = Scratch::default();
    let children = input.children_functions(&up, node, &mut scratch);
    sum_children(&children, &mut scratch);
    let mut own = Vec::new();
    input.expand(node, &mut scratch.events, &mut own);
    let mut combined = Vec::new();
    let mut c = super::guard::Calibration::default();
    let region = input.region(node, &own, &scratch.sums);
    super::guard::calibrate(&region, &mut Default::default(), &mut c);
    super::guard::combine(
        &region,
        &c.factors(),
        &mut Default::default(),
        &mut combined,
    );
    (own, scratch.sums.clone(), combined)
}

/// What the passes read: the hierarchy, the fits, the public `G` and `K`.
struct Input<'a> {
    hierarchy: &'a Hierarchy,
    estimates: &'a Estimates,
    groups: &'a [Count],
    max_size: Size,
    profile: Profile,
    budget: RunBudget,
    /// Whether the combination is checked against the measurements.
    checked: bool,
    /// The leaves below each node above the leaves (indexed by [`NodeId`]).
    leaves_below: Vec<u64>,
}

impl<'a> Input<'a> {
    fn new(
        hierarchy: &'a Hierarchy,
        estimates: &'a Estimates,
        groups: &'a [Count],
        max_size: Size,
        profile: Profile,
    ) -> Self {
        // Leaves are the last level; each node above holds its children's leaves.
        let internal = hierarchy.level_range(hierarchy.leaf_level()).start as usize;
        let mut leaves_below = vec![0u64; internal];
        for id in (0..internal).rev() {
            leaves_below[id] = hierarchy
                .node(NodeId(id as u32))
                .children()
                .map(|c| leaves_below.get(c.index()).copied().unwrap_or(1))
                .sum();
        }
        Input {
            hierarchy,
            estimates,
            groups,
            max_size,
            profile,
            budget: RunBudget::UNBOUNDED,
            checked: true,
            leaves_below,
        }
    }

    /// The most runs node `id` (above the leaves) may keep.
    fn cap(&self, id: NodeId) -> usize {
        let total = self.hierarchy.level_len(self.hierarchy.leaf_level()) as u64;
        let leaves = self.leaves_below.get(id.index()).copied().unwrap_or(1);
        self.budget.region_cap(leaves, total)
    }

    fn fit(&self, id: NodeId) -> FitRef<'a> {
        self.estimates
            .fit(id.index())
            .expect("wls runs only when every node has a fit")
    }

    /// What the check reads of a region: its own fit and its children's sums (runs), its
    /// noisy measurement and public values.
    fn region<'r>(
        &self,
        id: NodeId,
        own: &'r [Piece],
        sums: &'r [Piece],
    ) -> super::guard::Region<'r>
    where
        'a: 'r,
    {
        let fit = self.fit(id);
        super::guard::Region {
            own,
            sums,
            checked: self.checked,
            raw: fit.raw,
            noise_var: fit.noise_variance,
            from: fit.from,
            groups: self.groups[id.index()],
            k: self.max_size,
        }
    }

    /// A node's own fit as runs `(x, v)`.
    fn expand(&self, id: NodeId, events: &mut Events, out: &mut Vec<Piece>) {
        expand(
            &self.fit(id),
            self.groups[id.index()],
            self.max_size,
            self.profile,
            events,
            out,
        );
    }

    /// The combined functions `(z, V)` of `parent`'s children: stored for nodes
    /// above the leaves, rebuilt from the fit for leaves.
    fn children_functions(
        &self,
        up: &Up,
        parent: NodeId,
        scratch: &mut Scratch,
    ) -> Vec<Vec<Piece>> {
        let node = self.hierarchy.node(parent);
        let mut out = std::mem::take(&mut scratch.children);
        out.resize_with(node.children.len(), Vec::new);
        out.truncate(node.children.len());
        for (c, buf) in node.children().zip(out.iter_mut()) {
            if self.hierarchy.node(c).is_leaf() {
                self.expand(c, &mut scratch.events, buf);
            } else {
                buf.clear();
                buf.extend_from_slice(up.node(self, c));
            }
        }
        out
    }
}

/// Per-thread scratch.
#[derive(Default)]
struct Scratch {
    events: Events,
    guard: super::guard::GuardScratch,
    own: Vec<Piece>,
    sums: Vec<Piece>,
    children: Vec<Vec<Piece>>,
}

/// The combined functions of the nodes above the leaves, level by level.
struct Up {
    /// Per level (leaf level empty): per node of the level, its runs.
    levels: Vec<LevelPieces>,
    /// Per level: how much its regions leaned on their own measurements.
    leaning: Vec<super::guard::Leaning>,
    /// Per level: regions whose runs were joined.
    capped: Vec<u64>,
}

impl Up {
    fn node<'s>(&'s self, input: &Input, id: NodeId) -> &'s [Piece] {
        let node = input.hierarchy.node(id);
        let first = input.hierarchy.level_range(node.level).start;
        self.levels[node.level.0].get((id.0 - first) as usize)
    }
}

/// The runs of the nodes of one level, in one arena.
#[derive(Default)]
struct LevelPieces {
    ends: Vec<usize>,
    pieces: Vec<Piece>,
}

impl LevelPieces {
    fn get(&self, i: usize) -> &[Piece] {
        let start = i.checked_sub(1).map_or(0, |p| self.ends[p]);
        &self.pieces[start..self.ends[i]]
    }

    fn push(&mut self, pieces: &[Piece]) {
        self.pieces.extend_from_slice(pieces);
        self.ends.push(self.pieces.len());
    }

    fn concat(parts: Vec<LevelPieces>) -> LevelPieces {
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

/// Nodes handled by one task.
const CHUNK: usize = 256;

/// Step 2, upward: the combined `(z, V, B)` of every node above the leaves.
fn up(input: &Input) -> Up {
    let h = input.hierarchy;
    let depth = h.depth();
    let mut levels: Vec<LevelPieces> = (0..depth).map(|_| LevelPieces::default()).collect();
    let mut level_leaning = vec![super::guard::Leaning::default(); depth];
    let mut capped = vec![0u64; depth];
    for l in (0..depth.saturating_sub(1)).rev() {
        let ids: Vec<u32> = h.level_range(LevelId(l)).collect();
        let partial = Up {
            levels: std::mem::take(&mut levels),
            leaning: Vec::new(),
            capped: Vec::new(),
        };
        // First the level's evidence for the check, then the combination with it.
        let calibration = ids
            .par_chunks(CHUNK)
            .map_init(Scratch::default, |scratch, chunk| {
                let mut c = super::guard::Calibration::default();
                for &id in chunk {
                    let id = NodeId(id);
                    let children = input.children_functions(&partial, id, scratch);
                    sum_children(&children, scratch);
                    scratch.children = children;
                    input.expand(id, &mut scratch.events, &mut scratch.own);
                    super::guard::calibrate(
                        &input.region(id, &scratch.own, &scratch.sums),
                        &mut scratch.guard,
                        &mut c,
                    );
                }
                c
            })
            .reduce(super::guard::Calibration::default, |mut a, b| {
                a.add(&b);
                a
            });
        let factors = calibration.factors();
        let parts: Vec<(LevelPieces, super::guard::Leaning, u64)> = ids
            .par_chunks(CHUNK)
            .map_init(Scratch::default, |scratch, chunk| {
                let mut out = LevelPieces::default();
                let mut leaning = super::guard::Leaning::default();
                let mut joined = 0u64;
                let mut combined = Vec::new();
                for &id in chunk {
                    let id = NodeId(id);
                    let children = input.children_functions(&partial, id, scratch);
                    sum_children(&children, scratch);
                    scratch.children = children;
                    input.expand(id, &mut scratch.events, &mut scratch.own);
                    let l = super::guard::combine(
                        &input.region(id, &scratch.own, &scratch.sums),
                        &factors,
                        &mut scratch.guard,
                        &mut combined,
                    );
                    leaning.add(&l);
                    if super::pieces::cap(&mut combined, input.cap(id), input.max_size) {
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
            level_leaning[l].add(&leaning);
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
fn root_function(input: &Input, up: &Up, scratch: &mut Scratch) -> Vec<Piece> {
    if input.hierarchy.node(NodeId::ROOT).is_leaf() {
        let mut out = Vec::new();
        input.expand(NodeId::ROOT, &mut scratch.events, &mut out);
        out
    } else {
        up.node(input, NodeId::ROOT).to_vec()
    }
}

/// `(s, S, Sb)`: the sums of the children's `(z, V, B)`, into `scratch.sums`.
fn sum_children(children: &[Vec<Piece>], scratch: &mut Scratch) {
    for c in children {
        scratch.events.add_function(c);
    }
    scratch.sums.clear();
    scratch.events.finish(&mut scratch.sums);
}

/// A parent's correction per unit of variance, `(f_τ − s_τ)/S_τ`, as runs (in `x`).
fn correction(target: &[Piece], children: &[Vec<Piece>], scratch: &mut Scratch) -> Vec<Piece> {
    sum_children(children, scratch);
    let mut corr = Vec::new();
    merge(target, &scratch.sums, &mut corr, |f, s| {
        let c = if s.v > 0.0 { (f.x - s.x) / s.v } else { 0.0 };
        (c, 0.0)
    });
    corr
}

/// A child's target `f_c = z_c + V_c · (f_τ − s_τ)/S_τ`, as runs (in `x`), exactly.
fn child_target(child: &[Piece], corr: &[Piece], out: &mut Vec<Piece>) {
    merge(child, corr, out, |c, k| (c.x + c.v * k.x, 0.0));
}

/// A parent's correction with, for each of its runs, the largest `|correction|` from
/// that run on.
struct Correction {
    pieces: Vec<Piece>,
    suffix_max: Vec<f64>,
}

impl Correction {
    fn new(pieces: Vec<Piece>) -> Self {
        let mut suffix_max = vec![0.0; pieces.len()];
        let mut m: f64 = 0.0;
        for (i, p) in pieces.iter().enumerate().rev() {
            m = m.max(p.x.abs());
            suffix_max[i] = m;
        }
        Correction { pieces, suffix_max }
    }

    /// The largest `|correction|` at sizes from `start` on.
    fn max_from(&self, start: u32) -> f64 {
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
fn child_target_rounded(child: &[Piece], corr: &Correction, out: &mut Vec<Piece>) {
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
        if !super::pieces::advance(child, corr, &mut i, &mut j) {
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

/// Steps 2 (downward) and 3: targets and projection, level by level from the root; with,
/// per level, the regions whose stored targets had runs joined.
fn down(
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
    for l in 0..h.depth() - 1 {
        let parents: Vec<u32> = h.level_range(LevelId(l)).collect();
        let first = parents.first().copied().unwrap_or(0);
        let fixed = levels.last().expect("the level above");
        let child_internal = l + 1 < h.depth() - 1;
        let parts: Vec<(HistogramSet, LevelPieces, u64)> = parents
            .par_chunks(CHUNK)
            .map_init(Scratch::default, |scratch, chunk| {
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
                            if super::pieces::cap(&mut f_child, input.cap(c), k) {
                                joined += 1;
                            }
                            next.push(&f_child);
                        }
                    }
                    scratch.children = children;
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
    Ok((HistogramSet::concat(levels), capped))
}

/// A head block's variance per cell: the noise variance over the block's length, the
/// variance of the block's mean (Kuo et al. §5.1.1). The fit's biases, which this leaves
/// out, are what [`super::guard`] checks against the region's noisy cells.
fn head_block_variance(fit: &FitRef<'_>, b: &HeadBlock) -> f64 {
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
fn add_profile(
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
fn mean_p_one_minus_p(k0: u64, n: u64, width: f64) -> f64 {
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
fn round(x: f64) -> f64 {
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
fn integral_slots(
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
fn split_into(
    parent: &[GroupRun],
    wanted: &[Vec<GroupRun>],
    received: &mut Vec<Vec<(Size, Count)>>,
) -> Result<(), super::MatchError> {
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
) -> Result<Vec<CountOfCounts>, super::MatchError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emd::emd;
    use pathfinding::prelude::{Matrix, kuhn_munkres_min};
    use proptest::prelude::*;

    fn runs(h: &CountOfCounts) -> Vec<GroupRun> {
        unit_runs(h.pairs())
    }

    /// All ways to hand the parent's groups to children with the given capacities; the
    /// smallest total `Σ_c EMD(received_c, target_c)`.
    fn brute_force(parent: &[Size], targets: &[CountOfCounts]) -> u64 {
        fn go(
            i: usize,
            parent: &[Size],
            targets: &[CountOfCounts],
            got: &mut Vec<Vec<Size>>,
            best: &mut u64,
        ) {
            if i == parent.len() {
                let cost = got
                    .iter()
                    .zip(targets)
                    .map(|(g, t)| emd(&CountOfCounts::from_sizes(g.iter().copied()), t))
                    .sum();
                *best = (*best).min(cost);
                return;
            }
            for c in 0..targets.len() {
                if (got[c].len() as u64) < targets[c].groups() {
                    got[c].push(parent[i]);
                    go(i + 1, parent, targets, got, best);
                    got[c].pop();
                }
            }
        }
        let mut best = u64::MAX;
        go(
            0,
            parent,
            targets,
            &mut vec![Vec::new(); targets.len()],
            &mut best,
        );
        best
    }

    fn hungarian(parent: &[Size], targets: &[CountOfCounts]) -> i64 {
        let slots: Vec<i64> = targets
            .iter()
            .flat_map(|t| t.unattributed().iter().map(i64::from).collect::<Vec<_>>())
            .collect();
        if parent.is_empty() {
            return 0;
        }
        let m = Matrix::from_fn(parent.len(), slots.len(), |(i, j)| {
            (i64::from(parent[i]) - slots[j]).abs()
        });
        kuhn_munkres_min(&m).0
    }

    fn instance() -> impl Strategy<Value = (Vec<Size>, Vec<CountOfCounts>)> {
        proptest::collection::vec(proptest::collection::vec(0u32..8, 0..4), 1..4).prop_flat_map(
            |kids| {
                let total: usize = kids.iter().map(Vec::len).sum();
                (
                    proptest::collection::vec(0u32..8, total..=total),
                    Just(kids),
                )
                    .prop_map(|(mut p, kids)| {
                        p.sort_unstable();
                        (p, kids.into_iter().map(CountOfCounts::from_sizes).collect())
                    })
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn split_is_optimal((parent, targets) in instance()) {
            let fixed = CountOfCounts::from_sizes(parent.iter().copied());
            let wanted: Vec<Vec<GroupRun>> = targets.iter().map(runs).collect();
            let got = split_to_targets(fixed.as_ref(), &wanted).unwrap();
            let cost: u64 = got.iter().zip(&targets).map(|(g, t)| emd(g, t)).sum();
            prop_assert_eq!(cost, brute_force(&parent, &targets));
            prop_assert_eq!(cost as i64, hungarian(&parent, &targets));
            // The lower bound Σ_j |P[j] − Σ_c R_c[j]| is attained.
            prop_assert_eq!(cost, emd(&fixed, &CountOfCounts::sum(&targets)));
            // Each child receives exactly its number of groups; together, the parent's.
            for (g, t) in got.iter().zip(&targets) {
                prop_assert_eq!(g.groups(), t.groups());
            }
            prop_assert_eq!(CountOfCounts::sum(&got), fixed);
        }

        /// The fit on runs is the fit on the cells, including the fast path for
        /// targets that are already monotone.
        #[test]
        fn integral_fit_on_runs_is_the_cellwise_fit(
            values in proptest::collection::vec((-3.0f64..12.0, 1u32..5), 1..8),
            groups in 0u64..10,
            l1 in any::<bool>(),
            sorted in any::<bool>(),
        ) {
            let mut values = values;
            if sorted {
                values.sort_by(|a, b| a.0.total_cmp(&b.0));
                for v in &mut values { v.0 = v.0.clamp(0.0, groups as f64); }
            }
            let fit = if l1 { IsotonicFit::L1 } else { IsotonicFit::L2 };
            let mut pieces = Vec::new();
            let mut cells = Vec::new();
            let mut start = 0u32;
            for &(x, len) in &values {
                pieces.push(Piece { start, x, v: 0.0 });
                cells.extend(std::iter::repeat_n(x, len as usize));
                start += len;
            }
            let k = start - 1;
            let fixed: Vec<i64> = cells.iter().map(|&t| (t * SCALE).round() as i64).collect();
            let blocks = isotonic::fit_with_last(fit, &fixed, 0, groups as i64 * 1024);
            let mut expected = Vec::new();
            let mut previous = 0i128;
            for b in &blocks {
                let (num, den) = b.fraction();
                let d = den * 1024;
                let value = (2 * num + d).div_euclid(2 * d);
                if value > previous {
                    expected.push((b.start as Size, (value - previous) as Count));
                    previous = value;
                }
            }
            prop_assert_eq!(
                integral_fit_runs(&pieces, groups, k, fit),
                CountOfCounts::from_pairs(expected).unwrap()
            );
        }
    }

    #[test]
    fn rounding_is_the_library_rounding() {
        let edge = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            0.49999999999999994,
            -0.49999999999999994,
            4503599627370495.5,
            4503599627370496.0,
            -4503599627370495.5,
            1e300,
            -1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            123.456,
            -987.5,
        ];
        for x in edge {
            assert_eq!(round(x), x.round(), "{x}");
        }
        assert!(round(f64::NAN).is_nan());
        let mut state = 0x2545F4914F6CDD1Du64;
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = f64::from_bits(state) % 1e7;
            if x.is_finite() {
                assert_eq!(round(x), x.round(), "{x}");
            }
        }
    }

    #[test]
    fn integral_fit_rounds_monotone() {
        let h = integral_fit(&[0.4, 2.6, 1.9, 3.2, 5.0], 5, IsotonicFit::L2);
        assert_eq!(h.groups(), 5);
        assert_eq!(h.cumulative(4).values(), &[0, 2, 2, 3, 5]);
        assert_eq!(
            integral_fit(&[-3.0, 7.0, 4.0], 4, IsotonicFit::L1)
                .cumulative(2)
                .values()[2],
            4
        );
    }

    /// The model of step 1 evaluated cell by cell, straight from its definition.
    fn dense_model(fit: &FitRef<'_>, groups: Count, k: Size) -> Vec<(f64, f64)> {
        let var = fit.noise_variance;
        if groups == 0 {
            return vec![(0.0, EXACT); k as usize + 1];
        }
        let from = (fit.from as usize).min(k as usize + 1);
        let first_size = fit.steps.first().map_or(0, |r| r.size as usize);
        (0..=k as usize)
            .map(|j| {
                if j < from {
                    let b = fit
                        .head
                        .iter()
                        .find(|b| (b.start as usize..(b.start + b.len) as usize).contains(&j))
                        .unwrap();
                    if j == k as usize {
                        (b.value, EXACT)
                    } else {
                        (b.value, head_block_variance(fit, b).max(EXACT))
                    }
                } else {
                    let above = fit.listed_above(j);
                    let mut v = if fit.saturated && j < first_size {
                        var
                    } else {
                        EXACT
                    };
                    for r in fit.steps {
                        let width = fit.step_scale(r) * WIDEN;
                        let own = (REACH * width).ceil() as usize + 1;
                        let s = r.size as usize;
                        if j + own >= s && j < s + own {
                            let d = (j as f64 + 0.5 - s as f64).abs();
                            let p = 0.5 * (-d / width).exp();
                            v += f64::from(r.count) * p * (1.0 - p);
                        }
                    }
                    if j == k as usize {
                        v = EXACT;
                    }
                    ((groups - above) as f64, v)
                }
            })
            .collect()
    }

    /// One piece per cell.
    fn cells(values: &[(f64, f64)]) -> Vec<Piece> {
        values
            .iter()
            .enumerate()
            .map(|(j, &(x, v))| Piece {
                start: j as u32,
                x,
                v,
            })
            .collect()
    }

    /// Step 2 on dense cells, one piece per cell (the implementation before runs): the
    /// same check ([`super::super::guard`]) on cell-by-cell functions, then the
    /// downward shares from the formulas.
    fn dense_targets(
        h: &Hierarchy,
        est: &Estimates,
        groups: &[Count],
        k: Size,
        model: &[Vec<(f64, f64)>],
    ) -> Vec<Vec<f64>> {
        use super::super::guard;
        let n = h.len();
        let cells_n = model[0].len();
        let mut z = vec![vec![0.0; cells_n]; n];
        let mut big_v = vec![vec![0.0; cells_n]; n];
        for l in (0..h.depth()).rev().map(LevelId) {
            let ids: Vec<NodeId> = h.level_nodes(l).collect();
            let sums = |i: NodeId, z: &[Vec<f64>], big_v: &[Vec<f64>]| -> Vec<(f64, f64)> {
                (0..cells_n)
                    .map(|j| {
                        let node = h.node(i);
                        (
                            node.children().map(|c| z[c.index()][j]).sum(),
                            node.children().map(|c| big_v[c.index()][j]).sum(),
                        )
                    })
                    .collect()
            };
            let region = |i: NodeId, own: &'_ [Piece], sums: &'_ [Piece]| {
                let fit = est.fit(i.index()).unwrap();
                guard::Region {
                    own: own.to_vec().leak(),
                    sums: sums.to_vec().leak(),
                    checked: true,
                    raw: fit.raw,
                    noise_var: fit.noise_variance,
                    from: fit.from,
                    groups: groups[i.index()],
                    k,
                }
            };
            let mut calibration = guard::Calibration::default();
            for &i in &ids {
                if h.node(i).is_leaf() {
                    continue;
                }
                let own = cells(&model[i.index()]);
                let sum = cells(&sums(i, &z, &big_v));
                guard::calibrate(
                    &region(i, &own, &sum),
                    &mut Default::default(),
                    &mut calibration,
                );
            }
            let factors = calibration.factors();
            for &i in &ids {
                if h.node(i).is_leaf() {
                    for j in 0..cells_n {
                        (z[i.index()][j], big_v[i.index()][j]) = model[i.index()][j];
                    }
                    continue;
                }
                let own = cells(&model[i.index()]);
                let sum = cells(&sums(i, &z, &big_v));
                let mut out = Vec::new();
                guard::combine(
                    &region(i, &own, &sum),
                    &factors,
                    &mut Default::default(),
                    &mut out,
                );
                for j in 0..cells_n {
                    let p = super::super::pieces::value_at(&out, j as u32);
                    (z[i.index()][j], big_v[i.index()][j]) = (p.x, p.v);
                }
            }
        }
        let mut f = z.clone();
        for (i, node) in h.nodes().iter().enumerate() {
            if node.is_leaf() {
                continue;
            }
            for j in 0..cells_n {
                let s: f64 = node.children().map(|c| z[c.index()][j]).sum();
                let sv: f64 = node.children().map(|c| big_v[c.index()][j]).sum();
                for c in node.children() {
                    let share = if sv > 0.0 {
                        big_v[c.index()][j] / sv
                    } else {
                        0.0
                    };
                    f[c.index()][j] = z[c.index()][j] + share * (f[i][j] - s);
                }
            }
        }
        f
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(60))]
        /// The runs compute exactly what the cell-by-cell formulas do.
        #[test]
        fn runs_compute_the_cellwise_least_squares(
            leaves in proptest::collection::vec(proptest::collection::vec(0u32..30, 0..12), 4..9),
            methods in proptest::collection::vec(0u8..4, 3),
            seed in any::<u64>(),
        ) {
            use crate::data::Dataset;
            use crate::estimate::{self, EstimateOptions, Method, Tail, TailGroups, TailLength};
            use crate::noise::{NoiseSource, StreamId};
            use crate::privacy::{Diagnostic, Epsilon};
            let k: Size = 40;
            let paths: Vec<Vec<String>> = (0..leaves.len())
                .map(|i| vec!["R".into(), format!("m{}", i % 3), format!("l{i}")])
                .collect();
            let names = vec!["a".into(), "b".into(), "c".into()];
            let h = Hierarchy::from_leaf_paths(names, &paths).unwrap();
            let hists = leaves.iter().map(|l| CountOfCounts::from_sizes(l.iter().copied())).collect();
            let d = Dataset::from_leaf_histograms(Default::default(), h, crate::data::GroupsForm::Histograms, vec![], hists);
            let h = &d.hierarchy;
            let source = NoiseSource::seeded(seed);
            let budgets = ["0.5", "1", "0.3"];
            let estimates: Vec<_> = (0..h.len() as u32).map(NodeId).map(|id| {
                let level = h.node(id).level.0;
                let method = match methods[level] {
                    0 => Method::Hc,
                    1 => Method::Hg,
                    2 => Method::HcTail(Tail { above: 6, groups: TailLength::Fixed(TailGroups::new(4).unwrap()) }),
                    _ => Method::HcTail(Tail { above: 6, groups: TailLength::Auto }),
                };
                let m = estimate::measure(
                    method,
                    d.truth().for_diagnostic(Diagnostic::Oracle).node(id),
                    id,
                    d.groups(id),
                    k,
                    &Epsilon::parse(budgets[level]).unwrap(),
                    &mut source.stream(StreamId::node(0, id.0)),
                ).unwrap();
                estimate::estimate(&m, &EstimateOptions::default())
            }).collect();
            let est = Estimates::from_vec(estimates);
            let groups = d.public().groups;
            let model: Vec<_> = (0..h.len()).map(|i| dense_model(&est.fit(i).unwrap(), groups[i], k)).collect();
            let dense = dense_targets(h, &est, groups, k, &model);
            let runs = targets(h, &est, groups, k, Profile::Cells);
            for i in 0..h.len() {
                for j in 0..=k {
                    let (a, b) = (crate::consistency::pieces::value_at(&runs[i], j).x, dense[i][j as usize]);
                    prop_assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()), "node {} size {}: {} vs {}", i, j, a, b);
                }
            }
        }
    }

    #[test]
    fn binned_profiles_average_the_cells() {
        // Bins of the profile hold the mean of the cells they cover: the profile's total
        // over the cells is the same either way.
        for width in [0.3, 1.0, 4.5, 30.0] {
            for size in [0u64, 3, 40, 500] {
                let cells = 2000;
                let total = |profile| {
                    let mut events = Events::default();
                    events.add(0, 0.0, 0.0, 0.0);
                    add_profile(&mut events, size, 2.0, width, 0, cells, profile);
                    let mut out = Vec::new();
                    events.finish(&mut out);
                    (0..out.len())
                        .map(|i| out[i].v * piece_len(&out, i, (cells - 1) as u32) as f64)
                        .sum::<f64>()
                };
                let (cells_total, bins_total) = (total(Profile::Cells), total(Profile::Bins));
                assert!(
                    (cells_total - bins_total).abs() <= 1e-9 * cells_total.max(1e-12),
                    "width {width} size {size}: {cells_total} vs {bins_total}"
                );
            }
        }
    }

    #[test]
    fn binned_profiles_have_few_runs() {
        // A block's households at sizes 1..=7 with a wide profile: the bins of the
        // seven steps coincide far from them.
        let mut events = Events::default();
        events.add(0, 0.0, 0.0, 0.0);
        for size in 1..=7 {
            add_profile(&mut events, size, 2.0, 15.0, 0, 10_001, Profile::Bins);
        }
        let mut out = Vec::new();
        events.finish(&mut out);
        assert!(out.len() < 40, "{} runs", out.len());
    }
}
