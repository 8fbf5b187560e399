//! Resource guards: the memory and noise samples a plan needs, checked against the
//! memory available before anything is allocated, so that a plan too large for the
//! machine is refused with the figures instead of being killed half-way.
//!
//! The estimate is made from public values only (the hierarchy, `G` per region, `K`,
//! the plan), and follows what is measured, not `K`: a region measured with `hg` or a
//! tail costs its measured values, not `K + 1` cells.
//!
//! * **Measuring, per region processed at once** (one per worker thread, the regions
//!   with the largest needs): `hc` and `naive` hold `K + 1` noisy cells of 8 bytes and
//!   the isotonic fit's scratch (a heap and the running medians, 8 bytes per cell each,
//!   and 8 more for the naive projection's sort); `hg` holds `G` noisy sizes of 4 bytes,
//!   and with the L1 fit 8 more bytes per group of scratch; a tail its `L` head cells and
//!   `min(m, G)` listed sizes.
//! * **The estimates kept**, per region: the fit `wls` combines (a 48-byte record, and
//!   one 16-byte run per isotonic block and 8-byte step per listed block: counted as a
//!   handful, [`HANDFUL`], or the measured values if fewer — a fit holds one run per
//!   distinct fitted value), the runs `topdown` matches (24 bytes per distinct size), the
//!   independent histogram a preview keeps (16 bytes per distinct size); distinct sizes
//!   are counted as `min(G, K + 1, HANDFUL)` per region, plus the actual bound for the
//!   few regions with more groups.
//! * **The released histograms**: 16 bytes per distinct size and 8 per region.
//! * **The noisy measurements of the regions above the leaves**, which `wls` checks its
//!   combination against: 8 bytes per measured value (`K + 1` per `hc` region, `G` per
//!   `hg` region, `L` plus the listed groups per region with a tail).
//! * **`wls`**: the combined runs of every region above the leaves and one level's
//!   targets, [`crate::consistency::wls::RUN_BYTES`] per run. A region holds as many runs
//!   as its function has, up to its share of half the memory available
//!   ([`crate::consistency::wls::RunBudget`]); what is counted here is the least that
//!   budget leaves every region, [`crate::consistency::wls::MIN_REGION_RUNS`] runs (or
//!   `K + 1`), so a plan is refused only if even that does not fit, and a release says
//!   where runs were joined.
//!
//! The memory available is what the operating system reports (read with `sysinfo` on
//! every platform: `MemAvailable` on Linux), lowered to the room left under a cgroup
//! memory limit when there is one, and to `COCO_MEMORY_LIMIT`
//! when that is set (bytes, or with a suffix `K`, `M`, `G`, `T`: a budget for coco on a
//! shared machine); where none can be read, coco assumes [`ASSUMED_AVAILABLE`] and says
//! so.
//!
//! # Formula
//! With `T` worker threads, `W(v)` the measuring need of region `v` and `d(v) =
//! min(G_v, K + 1, HANDFUL)`: `bytes = Σ_{T largest} W(v) + Σ_v (8 + 16·d(v)) + Σ_v
//! kept(v) + Σ_{v above the leaves} 8·raw(v) + [wls] Σ_{internal levels l} R·n_l·min(K + 1,
//! 256) + max_l (same for one level)`, `R` the bytes of one run. Noise samples: `K + 1` per `hc` or `naive` region, `G_v` per `hg` region,
//! `L + min(m, G_v)` per region with a tail, one for a private `K`.

use thiserror::Error;

use crate::consistency::Consistency;
use crate::data::{Dataset, NodeId};
use crate::estimate::{EstimateOptions, IsotonicFit, Method};
use crate::histogram::{Count, Size};
use crate::release::pipeline::LevelSetting;

/// What coco assumes is available when the operating system does not say.
pub const ASSUMED_AVAILABLE: u64 = 8 << 30;

/// What a run needs, with the largest parts named for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Needs {
    /// Bytes of memory, in total.
    pub bytes: u64,
    /// Noise samples drawn.
    pub noise_samples: u64,
    /// The parts of `bytes`, largest first: what, bytes.
    pub parts: Vec<(String, u64)>,
}

/// The memory available to coco, and where the figure comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Available {
    pub bytes: u64,
    /// E.g. "the memory the operating system reports available".
    pub source: String,
}

/// A run refused for lack of memory, or for drawing more noise samples than a run may.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{}", self.message())]
pub struct ResourceError {
    /// What was refused ("this plan", "the bottom-up baseline").
    pub what: &'static str,
    pub needs: Needs,
    pub available: Available,
    /// What the operator can change, e.g. "lower max_size (K) or free memory".
    pub advice: String,
    /// Set when the refusal is for noise samples: the limit they exceed.
    pub sample_limit: Option<SampleLimit>,
}

impl ResourceError {
    fn message(&self) -> String {
        match &self.sample_limit {
            Some(limit) => format!(
                "too many noise samples: {} draws {} noise samples, more than the {} a run may draw ({}; at a few million a second on 2 cores, about {}); no region was measured. To draw fewer, {}",
                self.what,
                crate::units::thousands(u128::from(self.needs.noise_samples)),
                crate::units::thousands(u128::from(limit.samples)),
                limit.source,
                crate::units::readable(std::time::Duration::from_secs_f64(
                    self.needs.noise_samples as f64 / SAMPLES_PER_SECOND
                )),
                self.advice
            ),
            None => format!(
                "not enough memory: {} needs about {} ({}) but only {} is available ({}); no region was measured. To fit, {}",
                self.what,
                bytes(self.needs.bytes),
                parts(&self.needs.parts),
                bytes(self.available.bytes),
                self.available.source,
                self.advice
            ),
        }
    }
}

/// The most noise samples one run may draw, and where that figure comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampleLimit {
    pub samples: u64,
    pub source: String,
}

/// The most noise samples a run draws unless `COCO_NOISE_SAMPLE_LIMIT` says otherwise:
/// 10^10, about half an hour at `SAMPLES_PER_SECOND` — far beyond what a census needs
/// and the point past which a plan is a mistake (a K typed with three zeros too many)
/// rather than a release. The measurements behind both figures are in
/// `docs/performance.md` ("The noise-sample limit").
pub const NOISE_SAMPLE_LIMIT: u64 = 10_000_000_000;

/// The rate of the exact sampler with the estimation that follows it on the 2-core
/// reference machine, for a refusal's time estimate (`docs/performance.md`).
const SAMPLES_PER_SECOND: f64 = 5.5e6;

/// The noise-sample limit in force: [`NOISE_SAMPLE_LIMIT`], or `COCO_NOISE_SAMPLE_LIMIT`
/// (a whole number) when set and readable.
pub fn sample_limit() -> SampleLimit {
    match std::env::var("COCO_NOISE_SAMPLE_LIMIT").ok() {
        Some(text) => match text.trim().parse::<u64>() {
            Ok(samples) => SampleLimit {
                samples,
                source: "COCO_NOISE_SAMPLE_LIMIT".into(),
            },
            Err(_) => SampleLimit {
                samples: NOISE_SAMPLE_LIMIT,
                source:
                    "coco's limit; COCO_NOISE_SAMPLE_LIMIT was ignored: expected a whole number"
                        .into(),
            },
        },
        None => SampleLimit {
            samples: NOISE_SAMPLE_LIMIT,
            source: "coco's limit; COCO_NOISE_SAMPLE_LIMIT raises it".into(),
        },
    }
}

/// The measuring need of one region (see the module's formula).
fn working_bytes(method: Method, groups: Count, k: Size, options: &EstimateOptions) -> u64 {
    let cells = u64::from(k) + 1;
    match method {
        Method::Hc => 32 * cells,
        // The head's cells and the listed groups, fitted as Hg (L1 needs 12 bytes per
        // value), and the steps the consistency step keeps.
        // An `auto` tail of a region that may measure the rest of `Hc` instead: as `hc`.
        Method::HcTail(t) if may_continue(t, groups, k) => 32 * cells,
        Method::HcTail(t) => {
            let n = t.max_positions(groups, k);
            32 * (u64::from(t.above.min(k)) + 1) + 28 * n
        }
        Method::Naive => 40 * cells,
        Method::Hg => match options.unattributed_fit {
            IsotonicFit::L1 => groups.saturating_mul(12),
            IsotonicFit::L2 => groups.saturating_mul(4),
        },
    }
}

/// The noisy values a region's measurement holds at most (kept for the regions above
/// the leaves: [`crate::estimate::NodeFit::raw`]).
fn raw_values(method: Method, groups: Count, k: Size) -> u64 {
    match method {
        Method::Hc | Method::Naive => u64::from(k) + 1,
        Method::Hg => groups,
        Method::HcTail(t) if may_continue(t, groups, k) => u64::from(k) + 1,
        Method::HcTail(t) => u64::from(t.above.min(k)) + t.max_positions(groups, k),
    }
}

/// Whether an `auto` tail of a region with `groups` groups may measure all of `Hc`.
fn may_continue(tail: crate::estimate::Tail, groups: Count, k: Size) -> bool {
    tail.groups == crate::estimate::TailLength::Auto
        && groups >= u64::from(k) + 1 - u64::from(tail.above.min(k))
}

/// Distinct sizes, fit runs or steps counted per region when it could hold more: "a
/// handful" (every region measured so far held fewer on average; see the module docs).
pub const HANDFUL: u64 = 8;

/// What a run keeps of each estimate, for the estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kept {
    pub histograms: bool,
    pub runs: bool,
    pub fits: bool,
}

/// The bytes kept of one region's estimate.
fn kept_bytes(method: Method, groups: Count, k: Size, kept: Kept) -> u64 {
    let cells = u64::from(k) + 1;
    let distinct = groups.min(cells).min(HANDFUL);
    let mut bytes = 1; // the saturation flag
    if kept.histograms {
        bytes += 8 + 16 * distinct;
    }
    if kept.runs {
        bytes += 8 + 24 * distinct;
    }
    if kept.fits {
        let (head, steps) = match method {
            Method::Hc => (cells, 0),
            Method::Hg => (0, groups),
            Method::HcTail(t) if may_continue(t, groups, k) => (cells, 0),
            Method::HcTail(t) => (u64::from(t.above.min(k)) + 1, t.max_positions(groups, k)),
            Method::Naive => (0, 0),
        };
        bytes += 48 + 16 * head.min(HANDFUL) + 8 * steps.min(HANDFUL);
    }
    bytes
}

/// The needs of measuring the regions `nodes` with their levels' settings under `K`,
/// with `threads` regions at once, keeping `kept` of each estimate, then making them
/// consistent with `consistency` (`None` when no consistency step follows, as for the
/// bottom-up baseline).
#[allow(clippy::too_many_arguments)]
pub fn needs(
    dataset: &Dataset,
    nodes: &[NodeId],
    settings: &[Option<LevelSetting>],
    max_size: Size,
    options: &EstimateOptions,
    consistency: Option<Consistency>,
    kept: Kept,
    threads: usize,
) -> Needs {
    let h = &dataset.hierarchy;
    let cells = u64::from(max_size) + 1;
    let mut working: Vec<u64> = Vec::with_capacity(nodes.len());
    let mut samples: u64 = 0;
    let mut released: u64 = 0;
    let mut estimates: u64 = 0;
    let mut all_fit = true;
    for &id in nodes {
        let Some(setting) = &settings[h.node(id).level.0] else {
            continue;
        };
        let g = dataset.groups(id);
        working.push(working_bytes(setting.method, g, max_size, options));
        samples = samples.saturating_add(setting.method.noise_samples(g, max_size));
        released = released.saturating_add(8 + 16 * g.min(cells).min(HANDFUL));
        estimates = estimates.saturating_add(kept_bytes(setting.method, g, max_size, kept));
        if kept.fits && !h.node(id).is_leaf() {
            estimates = estimates.saturating_add(8 * raw_values(setting.method, g, max_size));
        }
        all_fit &= setting.method != Method::Naive;
    }
    working.sort_unstable_by_key(|&w| std::cmp::Reverse(w));
    let at_once = threads.max(1).min(working.len());
    let measuring: u64 = working[..at_once]
        .iter()
        .fold(0u64, |a, &b| a.saturating_add(b));
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut parts = vec![
        (
            format!(
                "{} for the noisy vectors of {at_once} region{} measured at once",
                bytes(measuring),
                plural(at_once)
            ),
            measuring,
        ),
        (
            format!(
                "{} for the estimates of {} regions",
                bytes(estimates),
                nodes.len()
            ),
            estimates,
        ),
        (
            format!("{} for the released histograms", bytes(released)),
            released,
        ),
    ];
    // wls runs only when every region has a fit; otherwise topdown does.
    if consistency == Some(Consistency::Wls) && all_fit {
        let mut stored: u64 = 0;
        let mut widest: u64 = 0;
        for level in h.levels().take(h.depth().saturating_sub(1)) {
            let n = h.level_len(level);
            let runs = (crate::consistency::wls::MIN_REGION_RUNS as u64).min(cells);
            let level_bytes = crate::consistency::wls::RUN_BYTES
                .saturating_mul(n as u64)
                .saturating_mul(runs);
            stored = stored.saturating_add(level_bytes);
            widest = widest.max(level_bytes);
        }
        let wls = stored.saturating_add(widest);
        parts.push((
            format!(
                "at most {} for the wls runs of {} regions above the leaves",
                bytes(wls),
                h.len() - h.level_len(h.leaf_level())
            ),
            wls,
        ));
    }
    parts.sort_by_key(|p| std::cmp::Reverse(p.1));
    Needs {
        bytes: parts.iter().fold(0u64, |a, p| a.saturating_add(p.1)),
        noise_samples: samples,
        parts,
    }
}

/// Refuses `needs` when it draws more noise samples than [`sample_limit`] or needs more
/// memory than `available`.
pub fn check(
    what: &'static str,
    needs: Needs,
    available: Available,
    advice: String,
) -> Result<(), ResourceError> {
    if needs.bytes > available.bytes {
        return Err(ResourceError {
            what,
            needs,
            available,
            advice,
            sample_limit: None,
        });
    }
    let limit = sample_limit();
    if needs.noise_samples > limit.samples {
        return Err(ResourceError {
            what,
            needs,
            available,
            advice,
            sample_limit: Some(limit),
        });
    }
    Ok(())
}

/// What an operator can change in a plan to need less memory, as a phrase.
/// `k_estimated`: `K` comes from a private estimate rather than the plan.
pub fn advice(settings: &[Option<LevelSetting>], k_estimated: bool) -> String {
    let methods = || settings.iter().flatten().map(|s| s.method);
    let mut options = Vec::new();
    if methods().any(|m| m != Method::Hg) {
        options.push(if k_estimated {
            "set max_size to a fixed bound (K)".to_string()
        } else {
            "lower max_size (K)".to_string()
        });
    }
    if methods().any(|m| m == Method::Hg) {
        options.push("use method = \"hc\" where regions hold many groups".to_string());
    }
    if methods().any(|m| m == Method::Hc) {
        options.push("measure small regions with method = \"hg\" or a tail".to_string());
    }
    options.push("free memory".to_string());
    let last = options.pop().expect("one option");
    if options.is_empty() {
        last
    } else {
        format!("{} or {last}", options.join(", "))
    }
}

/// The memory available now: see the module documentation.
pub fn available_memory() -> Available {
    let found = available_from_system();
    match std::env::var("COCO_MEMORY_LIMIT")
        .ok()
        .as_deref()
        .map(parse_limit)
    {
        Some(Some(limit)) if limit < found.bytes => Available {
            bytes: limit,
            source: "COCO_MEMORY_LIMIT".into(),
        },
        Some(None) => Available {
            source: format!(
                "{}; COCO_MEMORY_LIMIT was ignored: expected a number of bytes, e.g. 8G",
                found.source
            ),
            ..found
        },
        _ => found,
    }
}

/// `COCO_MEMORY_LIMIT`: bytes, or a number with a suffix K, M, G or T (powers of 1024).
fn parse_limit(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, shift) = match text.char_indices().last()? {
        (i, 'K' | 'k') => (&text[..i], 10),
        (i, 'M' | 'm') => (&text[..i], 20),
        (i, 'G' | 'g') => (&text[..i], 30),
        (i, 'T' | 't') => (&text[..i], 40),
        _ => (text, 0),
    };
    digits
        .trim()
        .parse::<u64>()
        .ok()?
        .checked_mul(1u64 << shift)
}

fn available_from_system() -> Available {
    // Reading the figure opens a dozen files: a process that draws many times in a row
    // (the privacy audit, a sweep) reuses a reading for a second, during which what
    // the machine has cannot move far; a release reads it afresh.
    use std::sync::Mutex;
    use std::time::{Duration, Instant};
    static LAST: Mutex<Option<(Instant, Available)>> = Mutex::new(None);
    const FRESH: Duration = Duration::from_secs(1);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((at, available)) = last.as_ref()
        && at.elapsed() < FRESH
    {
        return available.clone();
    }
    let available = read_available_from_system();
    *last = Some((Instant::now(), available.clone()));
    available
}

fn read_available_from_system() -> Available {
    // sysinfo reads each platform's own figure (MemAvailable on Linux, the VM
    // statistics on macOS, GlobalMemoryStatusEx on Windows) and the cgroup's limits.
    let (machine, cgroup) = match sysinfo::System::new() {
        Ok(mut system) => {
            system.refresh_memory();
            let machine = Some(system.available_memory()).filter(|&b| b > 0);
            let cgroup = system.cgroup_limits().map(|c| c.free_memory);
            (machine, cgroup)
        }
        Err(_) => (None, None),
    };
    choose_available(machine, cgroup)
}

/// The tighter of the machine's available memory and the room under a cgroup limit.
fn choose_available(machine: Option<u64>, cgroup: Option<u64>) -> Available {
    let cgroup_source = || "the room left under the cgroup's memory limit".to_string();
    match (machine, cgroup) {
        (Some(m), Some(c)) if c < m => Available {
            bytes: c,
            source: cgroup_source(),
        },
        (Some(m), _) => Available {
            bytes: m,
            source: "the memory the operating system reports available".into(),
        },
        (None, Some(c)) => Available {
            bytes: c,
            source: cgroup_source(),
        },
        (None, None) => Available {
            bytes: ASSUMED_AVAILABLE,
            source: format!(
                "assumed: the operating system did not report its free memory, so coco assumes {}",
                bytes(ASSUMED_AVAILABLE)
            ),
        },
    }
}

/// The needs of a whole plan's measurements and consistency step under `K`.
pub fn plan_needs(
    dataset: &Dataset,
    settings: &[Option<LevelSetting>],
    max_size: Size,
    options: &EstimateOptions,
    consistency: Consistency,
    kept: Kept,
) -> Needs {
    let all: Vec<NodeId> = (0..dataset.hierarchy.len() as u32).map(NodeId).collect();
    needs(
        dataset,
        &all,
        settings,
        max_size,
        options,
        Some(consistency),
        kept,
        rayon::current_num_threads(),
    )
}

pub use crate::units::bytes;

fn parts(parts: &[(String, u64)]) -> String {
    parts
        .iter()
        .filter(|p| p.1 > 0)
        .map(|p| p.0.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tests::tiny;
    use crate::privacy::Epsilon;

    fn settings(method: Method) -> Vec<Option<LevelSetting>> {
        vec![
            Some(LevelSetting {
                method,
                budget: Epsilon::parse("1").unwrap().into(),
            });
            3
        ]
    }

    fn all_nodes(d: &Dataset) -> Vec<NodeId> {
        (0..d.hierarchy.len() as u32).map(NodeId).collect()
    }

    const NOTHING: Kept = Kept {
        histograms: false,
        runs: false,
        fits: false,
    };
    const FITS: Kept = Kept {
        histograms: false,
        runs: false,
        fits: true,
    };

    #[test]
    fn the_estimate_follows_the_formula() {
        // tiny(): 8 regions; G = 14 (root), 8 and 6 (states), 5, 3, 0, 5, 1 (counties).
        let d = tiny();
        let groups: Vec<u64> = (0..8).map(|i| d.groups(NodeId(i))).collect();
        assert_eq!(groups, [14, 8, 6, 5, 3, 0, 5, 1]);
        let opts = EstimateOptions::default();
        let k: Size = 1000;
        let cells = 1001u64;
        let released: u64 = groups.iter().map(|&g| 8 + 16 * g.min(HANDFUL)).sum();

        let hc = needs(
            &d,
            &all_nodes(&d),
            &settings(Method::Hc),
            k,
            &opts,
            Some(Consistency::TopDown),
            NOTHING,
            2,
        );
        assert_eq!(hc.bytes, 2 * 32 * cells + released + 8);
        assert_eq!(hc.noise_samples, 8 * cells);

        // wls keeps the fits (a record and a handful of runs each), the noisy cells of
        // the 3 regions above the leaves (K + 1 each, for its check), and its own runs of
        // those regions: the least its budget leaves them, 256 runs each (K + 1 = 1001
        // is more), plus one level's.
        let wls = needs(
            &d,
            &all_nodes(&d),
            &settings(Method::Hc),
            k,
            &opts,
            Some(Consistency::Wls),
            FITS,
            2,
        );
        let fits = 8 * (1 + 48 + 16 * HANDFUL) + 3 * 8 * cells;
        let run = crate::consistency::wls::RUN_BYTES;
        let runs = run * 256 * (1 + 2) + run * 256 * 2;
        assert_eq!(wls.bytes, 2 * 32 * cells + released + fits + runs);
        assert!(
            wls.parts
                .iter()
                .any(|p| p.0.contains("wls runs of 3 regions above the leaves")),
            "{:?}",
            wls.parts
        );

        // naive: no fits, so wls falls back to topdown and has no runs of its own.
        let naive = needs(
            &d,
            &all_nodes(&d),
            &settings(Method::Naive),
            k,
            &opts,
            Some(Consistency::Wls),
            NOTHING,
            3,
        );
        assert_eq!(naive.bytes, 3 * 40 * cells + released + 8);

        // hg: the largest regions at once, 4 bytes per group with L2, 12 with L1; wls runs
        // follow the levels' caps, not the groups.
        let hg = needs(
            &d,
            &all_nodes(&d),
            &settings(Method::Hg),
            k,
            &opts,
            None,
            NOTHING,
            2,
        );
        assert_eq!(hg.bytes, 4 * (14 + 8) + released + 8);
        assert_eq!(hg.noise_samples, groups.iter().sum::<u64>());
        let l1 = EstimateOptions {
            unattributed_fit: IsotonicFit::L1,
            ..opts
        };
        let hg1 = needs(
            &d,
            &all_nodes(&d),
            &settings(Method::Hg),
            k,
            &l1,
            None,
            NOTHING,
            1,
        );
        assert_eq!(hg1.bytes, 12 * 14 + released + 8);

        // Only measured levels count (the bottom-up baseline measures the leaves).
        let mut leaves_only = settings(Method::Hc);
        leaves_only[0] = None;
        leaves_only[1] = None;
        let leaves: Vec<NodeId> = d.hierarchy.level_nodes(d.hierarchy.leaf_level()).collect();
        let bu = needs(&d, &leaves, &leaves_only, k, &opts, None, NOTHING, 8);
        let leaf_released: u64 = [5u64, 3, 0, 5, 1]
            .iter()
            .map(|&g| 8 + 16 * g.min(HANDFUL))
            .sum();
        assert_eq!(bu.bytes, 5 * 32 * cells + leaf_released + 5);
        assert_eq!(bu.noise_samples, 5 * cells);
    }

    #[test]
    fn wls_runs_do_not_grow_with_k() {
        // A tail or hg measures a few values per region: the estimate follows them, and
        // the wls runs are capped per level (2^23), so beyond the cap K costs nothing more.
        let d = tiny();
        let tail = Method::HcTail(crate::estimate::Tail {
            above: 16,
            groups: crate::estimate::TailLength::Fixed(
                crate::estimate::TailGroups::new(50).unwrap(),
            ),
        });
        let at = |k| {
            needs(
                &d,
                &all_nodes(&d),
                &settings(tail),
                k,
                &EstimateOptions::default(),
                Some(Consistency::Wls),
                FITS,
                2,
            )
            .bytes
        };
        assert_eq!(at(10_000_000), at(100_000_000));
        assert!(at(100_000_000) < 1 << 30, "{}", at(100_000_000));
    }

    #[test]
    fn huge_plans_saturate_instead_of_overflowing() {
        let d = tiny();
        let n = needs(
            &d,
            &all_nodes(&d),
            &settings(Method::Hc),
            Size::MAX,
            &EstimateOptions::default(),
            Some(Consistency::Wls),
            FITS,
            usize::MAX,
        );
        assert!(n.bytes >= 32 * (u64::from(Size::MAX) + 1));
    }

    #[test]
    fn refusal_names_the_figures() {
        let d = tiny();
        let hc = settings(Method::Hc);
        let needs = needs(
            &d,
            &all_nodes(&d),
            &hc,
            100_000_000,
            &EstimateOptions::default(),
            Some(Consistency::Wls),
            FITS,
            2,
        );
        let available = Available {
            bytes: 4 << 30,
            source: "injected".into(),
        };
        let advice = advice(&hc, false);
        let err = check("this plan", needs.clone(), available, advice).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("not enough memory: this plan needs about "),
            "{msg}"
        );
        assert!(
            msg.contains("for the wls runs of 3 regions above the leaves"),
            "{msg}"
        );
        assert!(
            msg.contains("for the noisy vectors of 2 regions measured at once"),
            "{msg}"
        );
        assert!(
            msg.ends_with(
                "but only 4.0 GB is available (injected); no region was measured. To fit, \
                 lower max_size (K), measure small regions with method = \"hg\" or a tail or free memory"
            ),
            "{msg}"
        );
        // Enough memory: accepted.
        let plenty = Available {
            bytes: needs.bytes,
            source: "injected".into(),
        };
        assert!(check("this plan", needs, plenty, String::new()).is_ok());
        // Advice follows the plan.
        assert_eq!(
            super::advice(&settings(Method::Hg), false),
            "use method = \"hc\" where regions hold many groups or free memory"
        );
        assert_eq!(
            super::advice(&hc, true),
            "set max_size to a fixed bound (K), measure small regions with method = \"hg\" or a tail or free memory"
        );
    }

    #[test]
    fn the_tighter_of_machine_and_cgroup_is_available() {
        assert_eq!(choose_available(Some(5000), None).bytes, 5000);
        let c = choose_available(Some(5000), Some(4000));
        assert_eq!(c.bytes, 4000);
        assert!(c.source.contains("cgroup"), "{}", c.source);
        assert_eq!(choose_available(Some(3000), Some(4000)).bytes, 3000);
        assert_eq!(choose_available(None, Some(4000)).bytes, 4000);
        let assumed = choose_available(None, None);
        assert_eq!(assumed.bytes, ASSUMED_AVAILABLE);
        assert!(assumed.source.starts_with("assumed"), "{}", assumed.source);
        // On this machine sysinfo finds a figure.
        let found = available_memory();
        assert!(found.bytes > 0);
        assert!(!found.source.starts_with("assumed"), "{}", found.source);
    }

    #[test]
    fn memory_limits_parse() {
        assert_eq!(parse_limit("1024"), Some(1024));
        assert_eq!(parse_limit("8G"), Some(8 << 30));
        assert_eq!(parse_limit(" 512 m "), Some(512 << 20));
        assert_eq!(parse_limit("2T"), Some(2 << 40));
        assert_eq!(parse_limit("lots"), None);
        assert_eq!(parse_limit(""), None);
        assert_eq!(parse_limit("99999999999999999999G"), None);
    }

    #[test]
    fn bytes_for_people() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KB");
        assert_eq!(bytes(8 << 30), "8.0 GB");
        assert_eq!(bytes(u64::MAX), "16384.0 PB");
    }
}
