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
//!    and reaches `REACH``·WIDEN·b` cells each way; kept cell by cell it would cost
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

mod down;
mod integral;
mod profile;
mod up;

use down::*;
use integral::*;
pub use integral::{integral_fit, integral_fit_runs, split_to_targets};
use profile::*;
use up::*;

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

thread_local! {
    /// The scratch a thread's last task of a pass gave back, for its next task: a
    /// level split among the cores in small tasks ([`crate::consistency::chunk_for`]),
    /// and the margins' replicates drawn one per core, would otherwise grow a new one
    /// per task (at `K` = 100,000, vectors of 100,000 runs: 3% of the taxi release's
    /// time). What it keeps is one region's runs at most.
    static SPARE: std::cell::Cell<Option<Scratch>> = const { std::cell::Cell::new(None) };
}

/// A task's scratch: the thread's spare, or a new one; given back when the task ends.
/// A task that runs inside another on the same thread finds none and makes its own.
struct Spare(Scratch);

impl Spare {
    fn take() -> Spare {
        Spare(SPARE.with(std::cell::Cell::take).unwrap_or_default())
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        let scratch = std::mem::take(&mut self.0);
        SPARE.with(|s| s.set(Some(scratch)));
    }
}

#[cfg(test)]
mod tests;
