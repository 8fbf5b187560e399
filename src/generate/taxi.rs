//! The `taxi` preset: a dense, shallow hierarchy shaped like the paper's NYC taxi data.
//!
//! Kuo et al. §6.1 use 2013 Manhattan taxi trips: a group is a taxi in a neighbourhood
//! and its size is the number of pick-ups it made there; the hierarchy is Manhattan →
//! upper/lower → 28 neighbourhoods, with 360,872 groups and 3,128 distinct sizes. That
//! data is not redistributable, so this preset draws a synthetic city with the same
//! shape: root `CITY` → halves `N`, `S` → 14 neighbourhoods each (`N01`…`S14`).
//!
//! Each neighbourhood has between 9,000 and 17,000 taxis (uniform) and a popularity
//! factor (log-uniform between 0.25 and 3); a taxi's pick-ups there are
//! `max(1, round(a × popularity))` with activity `a` log-normal (median 200, σ = 1.1
//! on the log scale, by the Irwin–Hall approximation of the normal: the sum of 12
//! uniforms minus 6), capped at 6,000. Sizes are therefore dense from 1 into the
//! thousands, unlike the household data: the regime where the cumulative estimator
//! and the hierarchy matter most.

use super::random::GenRng;
use super::{GenerateError, Generated, Groups};
use crate::histogram::{CountOfCounts, Size};
use libm::{exp, log as ln};

pub const LEVELS: [&str; 3] = ["city", "half", "neighbourhood"];
const NEIGHBOURHOODS_PER_HALF: usize = 14;
const TAXIS: (u64, u64) = (9_000, 17_000);
const POPULARITY: (f64, f64) = (0.25, 3.0);
const MEDIAN_ACTIVITY: f64 = 200.0;
const LOG_SIGMA: f64 = 1.1;
pub const MAX_PICKUPS: Size = 6_000;

/// A standard normal draw by the Irwin–Hall approximation (portable: no `cos`/`sqrt`).
fn normal(rng: &mut GenRng) -> f64 {
    (0..12).map(|_| rng.unit()).sum::<f64>() - 6.0
}

/// Draws the taxi dataset for `seed`.
pub fn generate(seed: u64) -> Result<Generated, GenerateError> {
    let mut regions: Vec<(&str, String, String, String)> = Vec::new();
    let mut hists = Vec::new();
    for (h, (half, half_name)) in [("N", "North"), ("S", "South")].into_iter().enumerate() {
        for i in 0..NEIGHBOURHOODS_PER_HALF {
            let stream = 1 + (h * NEIGHBOURHOODS_PER_HALF + i) as u64;
            let mut rng = GenRng::new(seed, stream);
            let taxis = rng.between(TAXIS.0, TAXIS.1);
            let popularity = exp(rng.uniform(ln(POPULARITY.0), ln(POPULARITY.1)));
            let base = ln(MEDIAN_ACTIVITY);
            let sizes = (0..taxis).map(|_| {
                let a = exp(base + LOG_SIGMA * normal(&mut rng));
                ((a * popularity).round() as Size).clamp(1, MAX_PICKUPS)
            });
            hists.push(CountOfCounts::from_sizes(sizes));
            regions.push((
                half,
                format!("{half_name} half"),
                format!("{half}{:02}", i + 1),
                format!("{half_name} neighbourhood {}", i + 1),
            ));
        }
    }
    let (leaves, names) = super::three_level_geography(
        ("CITY", "Taxi City"),
        regions
            .iter()
            .map(|(p, pn, c, n)| (*p, pn.as_str(), c.as_str(), n.as_str())),
    );
    Ok(Generated {
        level_names: LEVELS.iter().map(|s| s.to_string()).collect(),
        leaves,
        names,
        groups: Groups::Histograms(hists),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_taxi_sized() {
        let g = generate(1).unwrap();
        let d = g.to_dataset().unwrap();
        assert_eq!(d.hierarchy.len(), 1 + 2 + 28);
        let root = d
            .truth()
            .for_diagnostic(crate::privacy::Diagnostic::Inspect)
            .node(crate::data::NodeId::ROOT);
        assert!((28 * 9_000..=28 * 17_000).contains(&root.groups()));
        // Dense: over a thousand distinct sizes, reaching into the thousands.
        assert!(root.distinct_sizes() > 1_000, "{}", root.distinct_sizes());
        assert!(root.max_size().unwrap() > 2_000);
        assert_eq!(generate(1).unwrap().leaf_histograms(), g.leaf_histograms());
        assert_ne!(generate(2).unwrap().leaf_histograms(), g.leaf_histograms());
    }
}
