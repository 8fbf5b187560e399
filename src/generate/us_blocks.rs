//! The `us-blocks` preset: the nation down to its blocks, nation `US` → 52 states →
//! 3,220 counties → tracts → blocks, built from the real county household totals of
//! `us-counties` (ACS 2019, see [`super::us_counties`]), in the `histograms.csv` form.
//!
//! At `scale` `s` (0 < s ≤ 1) each county keeps `round(s · N)` of its `N` households (at
//! least one if it has any), and the geography scales with them so that its shape
//! stays that of the 2020 Census: about [`HOUSEHOLDS_PER_TRACT`] households per tract
//! (at least one tract per county) and [`HOUSEHOLDS_PER_BLOCK`] per block on average,
//! counting the empty ones (122 million households in 8.1 million blocks). At scale 1
//! that is about 81,000 tracts and 8 million blocks; at 0.01, 3,220 tracts (one per
//! county at least) and 80,000 blocks.
//!
//! Within a tract, each block is empty with probability [`EMPTY_SHARE`]; the tract's
//! households go to the others by one multinomial draw with Pareto(α =
//! [`BLOCK_WEIGHT_ALPHA`]) weights, so populated blocks hold a dozen households on
//! average with a long tail, and a few more end up empty. A tract's households are
//! split among its tracts the same way with weights uniform in [0.5, 1.5]. Household
//! sizes are drawn per block from the county's size model (the `us-counties` recipe:
//! 1 + Poisson fitted to the county's mean, with a geometric tail). A share
//! [`GQ_SHARE`] of blocks also holds one group quarters of a size log-uniform in
//! [`GQ_MIN_SIZE`]..=[`GQ_MAX_SIZE`] (dormitories, prisons, nursing homes).
//!
//! Codes are GEOID-like and unique: state FIPS (2 digits), county GEOID (5), tract GEOID
//! (11: the county's and a 6-digit tract number), block GEOID (15: the tract's and a
//! 4-digit block number whose first digit is the block group). Names: the nation,
//! states and counties by their real names, tracts as "Census Tract N"; blocks are
//! unnamed.
//!
//! The files are written county by county as they are drawn (memory follows one
//! county, never the nation), into a temporary directory renamed into place at the
//! end. Deterministic: county `i` (in GEOID order) draws from its own stream `1 + i`, so
//! the same seed and scale give the same files, byte for byte, on every platform
//! (portable `ln`/`exp`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::data::GroupsForm;
use crate::histogram::{Count, CountOfCounts, Size};

use super::binomial::binomial;
use super::household_sizes::SizeModel;
use super::random::GenRng;
use super::us_counties::{County, NATION_CODE, NATION_NAME, counties};
use super::{GenerateError, GenerateReport};
use libm::{exp, log as ln};

pub const LEVELS: [&str; 5] = ["nation", "state", "county", "tract", "block"];
/// Households per tract, on average (2020: 122 million in 84,000 tracts; fewer here as
/// each county's last tract is rounded).
pub const HOUSEHOLDS_PER_TRACT: f64 = 1_500.0;
/// Households per block, on average over all blocks (2020: 122 million in 8.1 million).
pub const HOUSEHOLDS_PER_BLOCK: f64 = 15.0;
/// The chance that a block is empty before households are dealt out.
pub const EMPTY_SHARE: f64 = 0.35;
/// The tail index of the populated blocks' weights.
pub const BLOCK_WEIGHT_ALPHA: f64 = 1.5;
/// The share of blocks holding one group quarters.
pub const GQ_SHARE: f64 = 0.002;
pub const GQ_MIN_SIZE: Size = 100;
pub const GQ_MAX_SIZE: Size = 5_000;
/// The most blocks a tract may have (the 4-digit block number, first digit 1–9).
const MAX_BLOCKS_PER_TRACT: u64 = 9_000;

/// What the generator was asked for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    pub seed: u64,
    /// The share of each county's households kept, in (0, 1].
    pub scale: f64,
}

impl Options {
    pub fn check(&self) -> Result<(), GenerateError> {
        if self.scale > 0.0 && self.scale <= 1.0 {
            Ok(())
        } else {
            Err(GenerateError::BadScale { scale: self.scale })
        }
    }
}

/// The scaled number of households of a county.
pub fn scaled_households(county: &County, scale: f64) -> u64 {
    if county.households == 0 {
        return 0;
    }
    ((county.households as f64 * scale).round() as u64).max(1)
}

/// Splits `n` over `weights` by one multinomial draw (sequential binomials).
fn multinomial(n: u64, weights: &[f64], rng: &mut GenRng) -> Vec<u64> {
    let mut rest: f64 = weights.iter().sum();
    let mut remaining = n;
    // The last positive weight takes what is left, so no unit is lost to rounding.
    let last = weights.iter().rposition(|&w| w > 0.0);
    let mut out = Vec::with_capacity(weights.len());
    for (i, &w) in weights.iter().enumerate() {
        let c = match last {
            Some(l) if i == l => remaining,
            Some(l) if i < l && remaining > 0 && w > 0.0 && rest > 0.0 => {
                binomial(rng, remaining, (w / rest).clamp(0.0, 1.0))
            }
            _ => 0,
        };
        out.push(c);
        remaining -= c;
        rest -= w;
    }
    out
}

/// Totals as the files are written, for the report.
#[derive(Default)]
struct Totals {
    groups: u64,
    entities: u128,
    leaves: usize,
    empty_leaves: usize,
    tracts: usize,
    max_size: Option<Size>,
    group_quarters: u64,
}

struct Writers {
    hierarchy: BufWriter<File>,
    histograms: BufWriter<File>,
    names: csv::Writer<BufWriter<File>>,
}

/// One county: its tracts and blocks, appended to the files.
fn write_county(
    state_code: &str,
    county: &County,
    households: u64,
    rng: &mut GenRng,
    w: &mut Writers,
    totals: &mut Totals,
) -> Result<(), std::io::Error> {
    let model = SizeModel::fit_mean(county.mean_size().unwrap_or(1.0))
        .unwrap_or_else(|_| SizeModel::with_lambda(0.0));
    let tracts = ((households as f64 / HOUSEHOLDS_PER_TRACT).round() as u64).max(1);
    let tract_weights: Vec<f64> = (0..tracts).map(|_| rng.uniform(0.5, 1.5)).collect();
    let per_tract = multinomial(households, &tract_weights, rng);
    for (t, &tract_households) in per_tract.iter().enumerate() {
        totals.tracts += 1;
        // Tract numbers as the Census writes them: 0001.00 → "000100".
        let tract = format!("{}{:04}00", county.geoid, t + 1);
        w.names.write_record([
            format!("{NATION_CODE}/{state_code}/{}/{tract}", county.geoid),
            format!("Census Tract {}", t + 1),
        ])?;
        let blocks = ((tract_households as f64 / HOUSEHOLDS_PER_BLOCK).round() as u64)
            .clamp(1, MAX_BLOCKS_PER_TRACT);
        let mut weights: Vec<f64> = (0..blocks)
            .map(|_| {
                if rng.unit() < EMPTY_SHARE {
                    0.0
                } else {
                    // Pareto(α): u^(−1/α), u in (0, 1].
                    exp(-ln(1.0 - rng.unit()) / BLOCK_WEIGHT_ALPHA)
                }
            })
            .collect();
        if tract_households > 0 && weights.iter().all(|&x| x == 0.0) {
            weights[0] = 1.0;
        }
        let per_block = multinomial(tract_households, &weights, rng);
        for (b, &n) in per_block.iter().enumerate() {
            let block = format!("{tract}{}{:03}", 1 + b / 1000, b % 1000);
            writeln!(
                w.hierarchy,
                "{NATION_CODE},{state_code},{},{tract},{block}",
                county.geoid
            )?;
            totals.leaves += 1;
            let mut hist = if n > 0 {
                CountOfCounts::from_pairs(model.draw(n as Count, rng))
                    .expect("the model draws each size once, increasing")
            } else {
                CountOfCounts::new()
            };
            if rng.unit() < GQ_SHARE {
                let size = exp(rng.uniform(ln(f64::from(GQ_MIN_SIZE)), ln(f64::from(GQ_MAX_SIZE))))
                    .round() as Size;
                hist.add(&CountOfCounts::from_sizes([
                    size.clamp(GQ_MIN_SIZE, GQ_MAX_SIZE)
                ]));
                totals.group_quarters += 1;
            }
            if hist.is_empty() {
                totals.empty_leaves += 1;
            }
            for &(size, count) in hist.pairs() {
                writeln!(w.histograms, "{block},{size},{count}")?;
            }
            totals.groups += hist.groups();
            totals.entities += hist.entities();
            totals.max_size = totals.max_size.max(hist.max_size());
        }
    }
    Ok(())
}

/// What `us-blocks` wrote, beyond the common report.
#[derive(Clone, Debug)]
pub struct BlocksReport {
    pub report: GenerateReport,
    pub tracts: usize,
    pub empty_blocks: usize,
    pub group_quarters: u64,
}

/// Writes the `us-blocks` dataset into `out` (created; must be empty or absent),
/// reporting `(counties done, counties)` as it goes.
pub fn write(
    out: &Path,
    options: Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<BlocksReport, GenerateError> {
    options.check()?;
    super::write::check_target(out)?;
    let counties = counties()?;
    let tmp = super::write::temp_dir_beside(out)?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| GenerateError::Io { path, source }
    };
    let create = |name: &str| -> Result<BufWriter<File>, GenerateError> {
        let path = tmp.path.join(name);
        let file = File::create(&path).map_err(io(&path))?;
        Ok(BufWriter::with_capacity(1 << 20, file))
    };
    let mut w = Writers {
        hierarchy: create("hierarchy.csv")?,
        histograms: create("histograms.csv")?,
        names: csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(create("names.csv")?),
    };
    let names_path = tmp.path.join("names.csv");
    let write_err = |e: std::io::Error| GenerateError::Io {
        path: tmp.path.clone(),
        source: e,
    };
    writeln!(w.hierarchy, "{}", LEVELS.join(",")).map_err(write_err)?;
    writeln!(w.histograms, "region,size,count").map_err(write_err)?;
    w.names
        .write_record(["region", "name"])
        .and_then(|_| w.names.write_record([NATION_CODE, NATION_NAME]))
        .map_err(|source| GenerateError::Csv {
            path: names_path.clone(),
            source,
        })?;
    let mut totals = Totals::default();
    let mut last_state = String::new();
    for (i, county) in counties.iter().enumerate() {
        if county.state_fips != last_state {
            w.names
                .write_record([
                    format!("{NATION_CODE}/{}", county.state_fips),
                    county.state_name.clone(),
                ])
                .map_err(|source| GenerateError::Csv {
                    path: names_path.clone(),
                    source,
                })?;
            last_state = county.state_fips.clone();
        }
        w.names
            .write_record([
                format!("{NATION_CODE}/{}/{}", county.state_fips, county.geoid),
                county.name.clone(),
            ])
            .map_err(|source| GenerateError::Csv {
                path: names_path.clone(),
                source,
            })?;
        let mut rng = GenRng::new(options.seed, 1 + i as u64);
        let households = scaled_households(county, options.scale);
        write_county(
            &county.state_fips,
            county,
            households,
            &mut rng,
            &mut w,
            &mut totals,
        )
        .map_err(write_err)?;
        progress(i + 1, counties.len());
    }
    for (name, file) in [
        ("hierarchy.csv", w.hierarchy),
        ("histograms.csv", w.histograms),
        (
            "names.csv",
            w.names
                .into_inner()
                .map_err(|e| write_err(std::io::Error::other(e.to_string())))?,
        ),
    ] {
        let path = tmp.path.join(name);
        let file = file.into_inner().map_err(|e| io(&path)(e.into_error()))?;
        file.sync_all().map_err(io(&path))?;
    }
    super::write::commit(tmp, out)?;
    // Nation, states and counties, then the tracts and blocks.
    let states = {
        let mut s: Vec<&str> = counties.iter().map(|c| c.state_fips.as_str()).collect();
        s.dedup();
        s.len()
    };
    Ok(BlocksReport {
        report: GenerateReport {
            dir: out.to_path_buf(),
            groups: totals.groups,
            leaves: totals.leaves,
            nodes: 1 + states + counties.len() + totals.tracts + totals.leaves,
            entities: totals.entities,
            max_size: totals.max_size,
            form: GroupsForm::Histograms,
            files: vec![
                "hierarchy.csv".into(),
                "histograms.csv".into(),
                "names.csv".into(),
            ],
        },
        tracts: totals.tracts,
        empty_blocks: totals.empty_leaves,
        group_quarters: totals.group_quarters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multinomial_keeps_every_unit() {
        let mut rng = GenRng::new(1, 0);
        for n in [0, 1, 7, 1000, 123_456] {
            let split = multinomial(n, &[0.0, 1.0, 2.5, 0.0, 0.5], &mut rng);
            assert_eq!(split.iter().sum::<u64>(), n);
            assert_eq!((split[0], split[3]), (0, 0), "zero weights get nothing");
        }
    }

    #[test]
    fn scales_are_checked() {
        for bad in [0.0, -1.0, 1.5, f64::NAN] {
            assert!(
                Options {
                    seed: 1,
                    scale: bad
                }
                .check()
                .is_err()
            );
        }
        assert!(
            Options {
                seed: 1,
                scale: 1.0
            }
            .check()
            .is_ok()
        );
    }
}
