//! Resource guards: the memory and noise samples a plan needs, checked against the
//! memory available before anything is allocated, so that a plan too large for the
//! machine is refused with the figures instead of being killed half-way.
//!
//! The estimate counts what is certain to be allocated, from public values only (the
//! hierarchy, `G` per region, `K`, the plan):
//!
//! * **Measuring, per region processed at once** (one per worker thread, the regions
//!   with the largest needs): `hc` and `naive` hold `K + 1` noisy cells of 8 bytes and
//!   the isotonic fit's scratch (a heap and the running medians, 8 bytes per cell each,
//!   and 8 more for the naive projection's sort); `hg` holds `G` noisy sizes of 4 bytes,
//!   and with the L1 fit 8 more bytes per group of scratch.
//! * **The released histograms**: two sparse histograms per region (the independent
//!   estimate and the consistent release), 16 bytes per distinct size, at most
//!   `min(G, K + 1)` sizes each.
//! * **`wls`**: `K + 1` real targets of 8 bytes for every region, which briefly coexist
//!   with their chunked solution (twice that), and per region projected at once the
//!   target in fixed point and the fit's scratch (24 bytes per cell).
//!
//! Isotonic blocks and variance runs kept per region are not counted: they hold one
//! entry per distinct fitted value, a handful per region in practice.
//!
//! The memory available is `MemAvailable` from `/proc/meminfo`, lowered to the room
//! left under a cgroup (v2) memory limit when there is one; where neither can be read,
//! coco assumes [`ASSUMED_AVAILABLE`] and says so.
//!
//! # Formula
//! With `T` worker threads, `W(v)` the measuring need of region `v`
//! (`32·(K+1)` for `hc`, `40·(K+1)` for `naive`, `4·G_v` or `12·G_v` for `hg`):
//! `bytes = Σ_{T largest} W(v) + 32·Σ_v min(G_v, K+1)
//!        + [wls] (16·n·(K+1) + 24·T·(K+1))`.
//! Noise samples: `K + 1` per `hc` or `naive` region, `G_v` per `hg` region, one for a
//! private `K`.

use std::path::Path;

use thiserror::Error;

use super::run::LevelSetting;
use crate::consistency::Consistency;
use crate::data::{Dataset, NodeId};
use crate::estimate::{EstimateOptions, IsotonicFit, Method};
use crate::histogram::{Count, Size};

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
    /// E.g. "MemAvailable in /proc/meminfo".
    pub source: String,
}

/// A run refused for lack of memory.
#[derive(Debug, Error, PartialEq, Eq)]
#[error(
    "not enough memory: {what} needs about {} ({}) but only {} is available ({}); no region was measured. To fit, {advice}",
    bytes(needs.bytes),
    parts(&needs.parts),
    bytes(available.bytes),
    available.source
)]
pub struct ResourceError {
    /// What was refused ("this plan", "the bottom-up baseline").
    pub what: &'static str,
    pub needs: Needs,
    pub available: Available,
    /// What the operator can change, e.g. "lower max_size (K) or free memory".
    pub advice: String,
}

/// The measuring need of one region (see the module's formula).
fn working_bytes(method: Method, groups: Count, k: Size, options: &EstimateOptions) -> u64 {
    let cells = u64::from(k) + 1;
    match method {
        Method::Hc => 32 * cells,
        // The head's cells and the listed groups, fitted as Hg (L1 needs 12 bytes per
        // value), and the steps the consistency step keeps.
        Method::HcTail(t) => {
            let n = t.positions(groups) as u64;
            32 * (u64::from(t.above.min(k)) + 1) + 28 * n
        }
        Method::Naive => 40 * cells,
        Method::Hg => match options.unattributed_fit {
            IsotonicFit::L1 => groups.saturating_mul(12),
            IsotonicFit::L2 => groups.saturating_mul(4),
        },
    }
}

/// The needs of measuring the regions `nodes` with their levels' settings under `K`,
/// with `threads` regions at once, then making them consistent with `consistency`
/// (`None` when no consistency step follows, as for the bottom-up baseline).
pub fn needs(
    dataset: &Dataset,
    nodes: &[NodeId],
    settings: &[Option<LevelSetting>],
    max_size: Size,
    options: &EstimateOptions,
    consistency: Option<Consistency>,
    threads: usize,
) -> Needs {
    let h = &dataset.hierarchy;
    let cells = u64::from(max_size) + 1;
    let mut working: Vec<u64> = Vec::with_capacity(nodes.len());
    let mut samples: u64 = 0;
    let mut sparse: u64 = 0;
    let mut all_hc = true;
    for &id in nodes {
        let Some(setting) = &settings[h.node(id).level.0] else {
            continue;
        };
        let g = dataset.groups(id);
        working.push(working_bytes(setting.method, g, max_size, options));
        samples = samples.saturating_add(setting.method.noise_samples(g, max_size));
        sparse = sparse.saturating_add(32u64.saturating_mul(g.min(cells)));
        all_hc &= setting.method.is_cumulative();
    }
    working.sort_unstable_by_key(|&w| std::cmp::Reverse(w));
    let at_once = threads.max(1).min(working.len());
    let measuring: u64 = working[..at_once]
        .iter()
        .fold(0u64, |a, &b| a.saturating_add(b));
    let mut parts = vec![
        (
            format!(
                "{} for the noisy vectors of {at_once} region{} measured at once",
                bytes(measuring),
                if at_once == 1 { "" } else { "s" }
            ),
            measuring,
        ),
        (
            format!("{} for the released histograms", bytes(sparse)),
            sparse,
        ),
    ];
    // wls runs only when every region is measured with hc; otherwise topdown does.
    if consistency == Some(Consistency::Wls) && all_hc {
        let n = nodes.len() as u64;
        let wls = 16u64
            .saturating_mul(n)
            .saturating_mul(cells)
            .saturating_add(24u64.saturating_mul(at_once as u64).saturating_mul(cells));
        parts.push((
            format!("{} for the wls targets of {n} regions", bytes(wls)),
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

/// Refuses `needs` when it exceeds `available`.
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
        });
    }
    Ok(())
}

/// What an operator can change in a plan to need less memory, as a phrase.
/// `k_estimated`: `K` comes from a private estimate rather than the plan.
pub fn advice(
    settings: &[Option<LevelSetting>],
    consistency: Option<Consistency>,
    k_estimated: bool,
) -> String {
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
    if consistency == Some(Consistency::Wls) && methods().all(Method::is_cumulative) {
        options.push("use consistency = \"topdown\"".to_string());
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
    let meminfo = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_available(&text));
    let cgroup = cgroup_room(Path::new("/sys/fs/cgroup"));
    match (meminfo, cgroup) {
        (Some(m), Some(c)) if c < m => Available {
            bytes: c,
            source: "the room left under the cgroup's memory.max".into(),
        },
        (Some(m), _) => Available {
            bytes: m,
            source: "MemAvailable in /proc/meminfo".into(),
        },
        (None, Some(c)) => Available {
            bytes: c,
            source: "the room left under the cgroup's memory.max".into(),
        },
        (None, None) => Available {
            bytes: ASSUMED_AVAILABLE,
            source: format!(
                "assumed: /proc/meminfo could not be read, so coco assumes {}",
                bytes(ASSUMED_AVAILABLE)
            ),
        },
    }
}

/// `MemAvailable` (in kB in the file) in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut words = line["MemAvailable:".len()..].split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => value.checked_mul(1024),
        Some(_) => None,
    }
}

/// `memory.max − memory.current` of the cgroup (v2) coco runs in, when limited.
fn cgroup_room(root: &Path) -> Option<u64> {
    let read = |name: &str| std::fs::read_to_string(root.join(name)).ok();
    let max: u64 = read("memory.max")?.trim().parse().ok()?; // "max" means no limit
    let current: u64 = read("memory.current")?.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

/// The needs of a whole plan's measurements and consistency step under `K`.
pub fn plan_needs(
    dataset: &Dataset,
    settings: &[Option<LevelSetting>],
    max_size: Size,
    options: &EstimateOptions,
    consistency: Consistency,
) -> Needs {
    let all: Vec<NodeId> = (0..dataset.hierarchy.len() as u32).map(NodeId).collect();
    needs(
        dataset,
        &all,
        settings,
        max_size,
        options,
        Some(consistency),
        rayon::current_num_threads(),
    )
}

/// Bytes for people: `512 B`, `1.5 KB`, `12.3 GB` (powers of 1024).
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KB", "MB", "GB", "TB", "PB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

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
                epsilon: Epsilon::parse("1").unwrap(),
            });
            3
        ]
    }

    fn all_nodes(d: &Dataset) -> Vec<NodeId> {
        (0..d.hierarchy.len() as u32).map(NodeId).collect()
    }

    #[test]
    fn the_estimate_follows_the_formula() {
        // tiny(): 8 regions; G = 14 (root), 8 and 6 (states), 5, 3, 0, 5, 1 (counties).
        let d = tiny();
        let groups: Vec<u64> = (0..8).map(|i| d.groups(NodeId(i))).collect();
        assert_eq!(groups, [14, 8, 6, 5, 3, 0, 5, 1]);
        let opts = EstimateOptions::default();
        let k: Size = 1000;
        let cells = 1001u64;
        let sparse: u64 = 32 * groups.iter().map(|&g| g.min(cells)).sum::<u64>();

        let hc = needs(
            &d,
            &all_nodes(&d),
            &settings(Method::Hc),
            k,
            &opts,
            Some(Consistency::TopDown),
            2,
        );
        assert_eq!(hc.bytes, 2 * 32 * cells + sparse);
        assert_eq!(hc.noise_samples, 8 * cells);

        let wls = needs(
            &d,
            &all_nodes(&d),
            &settings(Method::Hc),
            k,
            &opts,
            Some(Consistency::Wls),
            2,
        );
        assert_eq!(
            wls.bytes,
            2 * 32 * cells + sparse + 16 * 8 * cells + 24 * 2 * cells
        );
        assert_eq!(wls.parts[0].1, 16 * 8 * cells + 24 * 2 * cells);
        assert!(
            wls.parts[0].0.contains("wls targets of 8 regions"),
            "{:?}",
            wls.parts
        );

        let naive = needs(
            &d,
            &all_nodes(&d),
            &settings(Method::Naive),
            k,
            &opts,
            Some(Consistency::Wls),
            3,
        );
        // wls falls back to topdown for naive plans: no targets.
        assert_eq!(naive.bytes, 3 * 40 * cells + sparse);

        // hg: the largest regions at once, 4 bytes per group with L2, 12 with L1.
        let hg = needs(&d, &all_nodes(&d), &settings(Method::Hg), k, &opts, None, 2);
        assert_eq!(hg.bytes, 4 * (14 + 8) + sparse);
        assert_eq!(hg.noise_samples, groups.iter().sum::<u64>());
        let l1 = EstimateOptions {
            unattributed_fit: IsotonicFit::L1,
            ..opts
        };
        let hg1 = needs(&d, &all_nodes(&d), &settings(Method::Hg), k, &l1, None, 1);
        assert_eq!(hg1.bytes, 12 * 14 + sparse);

        // Only measured levels count (the bottom-up baseline measures the leaves).
        let mut leaves_only = settings(Method::Hc);
        leaves_only[0] = None;
        leaves_only[1] = None;
        let leaves: Vec<NodeId> = d.hierarchy.level_nodes(d.hierarchy.leaf_level()).collect();
        let bu = needs(&d, &leaves, &leaves_only, k, &opts, None, 8);
        let leaf_sparse: u64 = 32 * [5u64, 3, 0, 5, 1].iter().sum::<u64>();
        assert_eq!(bu.bytes, 5 * 32 * cells + leaf_sparse);
        assert_eq!(bu.noise_samples, 5 * cells);
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
            usize::MAX,
        );
        assert!(n.bytes >= 16 * 8 * (u64::from(Size::MAX) + 1));
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
            2,
        );
        let available = Available {
            bytes: 4 << 30,
            source: "injected".into(),
        };
        let advice = advice(&hc, Some(Consistency::Wls), false);
        let err = check("this plan", needs.clone(), available, advice).unwrap_err();
        let msg = err.to_string();
        assert_eq!(
            msg,
            "not enough memory: this plan needs about 22.4 GB (16.4 GB for the wls targets of \
             8 regions, 6.0 GB for the noisy vectors of 2 regions measured at once, 1.3 KB for \
             the released histograms) but only 4.0 GB is available (injected); no region was \
             measured. To fit, lower max_size (K), use consistency = \"topdown\" or free memory"
        );
        // Enough memory: accepted.
        let plenty = Available {
            bytes: needs.bytes,
            source: "injected".into(),
        };
        assert!(check("this plan", needs, plenty, String::new()).is_ok());
        // Advice follows the plan.
        assert_eq!(
            super::advice(&settings(Method::Hg), Some(Consistency::Wls), false),
            "use method = \"hc\" where regions hold many groups or free memory"
        );
        assert_eq!(
            super::advice(&hc, None, true),
            "set max_size to a fixed bound (K) or free memory"
        );
    }

    #[test]
    fn reads_meminfo_and_cgroup_limits() {
        let meminfo =
            "MemTotal:       24000000 kB\nMemFree:         1000 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(mem_available(meminfo), Some(20_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: x kB\n"), None);
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(cgroup_room(dir.path()), None);
        std::fs::write(dir.path().join("memory.max"), "max\n").unwrap();
        std::fs::write(dir.path().join("memory.current"), "1000\n").unwrap();
        assert_eq!(cgroup_room(dir.path()), None);
        std::fs::write(dir.path().join("memory.max"), "5000\n").unwrap();
        assert_eq!(cgroup_room(dir.path()), Some(4000));
        // On this machine some figure is always found.
        assert!(available_memory().bytes > 0);
    }

    #[test]
    fn bytes_for_people() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KB");
        assert_eq!(bytes(8 << 30), "8.0 GB");
        assert_eq!(bytes(u64::MAX), "16384.0 PB");
    }
}
