//! The bundled sample: the Republic of Arvenia, a fictional country of six provinces
//! and sixty districts, committed under `sample-data/households/` (seed 1).
//!
//! The geography and the names are fixed (`assets/sample_country.csv`, each district
//! with a kind); everything counted is drawn from the seed. Per district, with
//! parameters drawn uniformly from its kind's ranges (the number of housing units
//! log-uniformly, so district sizes span two orders of magnitude):
//!
//! | kind    | housing units | mean household size | vacant |
//! |---------|---------------|---------------------|--------|
//! | capital | 6,000–9,000   | 2.0–2.3             | 6–10%  |
//! | urban   | 1,500–4,000   | 2.1–2.5             | 6–10%  |
//! | town    | 500–1,500     | 2.4–2.8             | 9–13%  |
//! | rural   | 150–600       | 2.7–3.3             | 11–17% |
//! | remote  | 20–150        | 2.9–3.6             | 15–25% |
//! | empty   | none          |                     |        |
//!
//! Vacant units (size 0) are Binomial(units, vacancy rate); the occupied ones take
//! sizes from [`SizeModel`] fitted to the district's mean (mostly 1–7 with a peak at
//! 2, and a geometric tail beyond 7). Then [`GROUP_QUARTERS`] group quarters
//! (dormitories, prisons, barracks) of uniform size in [`GROUP_QUARTERS_SIZES`] go to
//! inhabited districts with probability proportional to their housing units. The
//! empty districts (a glacier, a marsh reserve, uninhabited islands) have no groups and
//! appear only in `hierarchy.csv`.
//!
//! Household ids (`H000001`…) are numbered district by district and assigned to the
//! district's sizes in a random order; group quarters are `GQ0001`…

use std::ops::RangeInclusive;

use crate::histogram::Size;

use super::household_sizes::SizeModel;
use super::random::{GenRng, cumulative};
use super::{GenerateError, Generated, Groups};
use libm::{exp, log as ln};

const ASSET_NAME: &str = "assets/sample_country.csv";
const ASSET: &str = include_str!("../../assets/sample_country.csv");

pub const COUNTRY_CODE: &str = "ARV";
pub const COUNTRY_NAME: &str = "Republic of Arvenia";
pub const LEVELS: [&str; 3] = ["country", "province", "district"];

/// How many group quarters, and their sizes.
pub const GROUP_QUARTERS: usize = 7;
pub const GROUP_QUARTERS_SIZES: RangeInclusive<Size> = 1_000..=4_000;

/// Stream 0 places the group quarters; district `i` (in file order) uses stream `1 + i`.
const GROUP_QUARTERS_STREAM: u64 = 0;

/// What kind of place a district is, which sets the ranges its parameters are drawn
/// from (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Capital,
    Urban,
    Town,
    Rural,
    Remote,
    Empty,
}

struct KindParameters {
    units: (f64, f64),
    mean_size: (f64, f64),
    vacancy: (f64, f64),
}

impl Kind {
    fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "capital" => Kind::Capital,
            "urban" => Kind::Urban,
            "town" => Kind::Town,
            "rural" => Kind::Rural,
            "remote" => Kind::Remote,
            "empty" => Kind::Empty,
            _ => return None,
        })
    }

    fn parameters(self) -> Option<KindParameters> {
        let (units, mean_size, vacancy) = match self {
            Kind::Capital => ((6000.0, 9000.0), (2.0, 2.3), (0.06, 0.10)),
            Kind::Urban => ((1500.0, 4000.0), (2.1, 2.5), (0.06, 0.10)),
            Kind::Town => ((500.0, 1500.0), (2.4, 2.8), (0.09, 0.13)),
            Kind::Rural => ((150.0, 600.0), (2.7, 3.3), (0.11, 0.17)),
            Kind::Remote => ((20.0, 150.0), (2.9, 3.6), (0.15, 0.25)),
            Kind::Empty => return None,
        };
        Some(KindParameters {
            units,
            mean_size,
            vacancy,
        })
    }
}

/// One district of the asset file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct District {
    pub province: String,
    pub province_name: String,
    pub code: String,
    pub name: String,
    pub kind: Kind,
}

/// The districts of the embedded asset, in file order (sorted by province, district).
pub fn districts() -> Result<Vec<District>, GenerateError> {
    let bad = |line: u64, message: String| GenerateError::Asset {
        file: ASSET_NAME,
        line,
        message,
    };
    let mut reader = csv::Reader::from_reader(ASSET.as_bytes());
    let mut out: Vec<District> = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            bad(line, e.to_string())
        })?;
        let line = record.position().map_or(0, |p| p.line());
        if record.len() != 5 {
            return Err(bad(
                line,
                format!("expected 5 fields, found {}", record.len()),
            ));
        }
        let kind = Kind::parse(&record[4])
            .ok_or_else(|| bad(line, format!("unknown district kind {:?}", &record[4])))?;
        let district = District {
            province: record[0].to_string(),
            province_name: record[1].to_string(),
            code: record[2].to_string(),
            name: record[3].to_string(),
            kind,
        };
        if let Some(prev) = out.last()
            && (prev.province.as_str(), prev.code.as_str())
                >= (district.province.as_str(), district.code.as_str())
        {
            return Err(bad(line, "districts must be sorted and unique".into()));
        }
        out.push(district);
    }
    Ok(out)
}

/// Draws the sample dataset for `seed`.
pub fn generate(seed: u64) -> Result<Generated, GenerateError> {
    let districts = districts()?;

    // Per district: housing unit sizes (0 = vacant), in a random order.
    let mut sizes: Vec<Vec<Size>> = Vec::with_capacity(districts.len());
    let mut units: Vec<u64> = Vec::with_capacity(districts.len());
    for (i, d) in districts.iter().enumerate() {
        let mut rng = GenRng::new(seed, 1 + i as u64);
        let Some(k) = d.kind.parameters() else {
            sizes.push(Vec::new());
            units.push(0);
            continue;
        };
        let n_units = exp(rng.uniform(ln(k.units.0), ln(k.units.1))).round() as u64;
        let mean = rng.uniform(k.mean_size.0, k.mean_size.1);
        let vacancy = rng.uniform(k.vacancy.0, k.vacancy.1);
        let vacant = super::binomial::binomial(&mut rng, n_units, vacancy);
        let model = SizeModel::fit_mean(mean).map_err(|e| GenerateError::Asset {
            file: ASSET_NAME,
            // The header is line 1 and districts hold no line breaks.
            line: i as u64 + 2,
            message: e.to_string(),
        })?;
        let mut s: Vec<Size> = Vec::with_capacity(n_units as usize);
        s.resize(vacant as usize, 0);
        for (size, count) in model.draw(n_units - vacant, &mut rng) {
            s.extend(std::iter::repeat_n(size, count as usize));
        }
        rng.shuffle(&mut s);
        sizes.push(s);
        units.push(n_units);
    }

    // Group quarters, proportional to housing units (never in an empty district).
    let mut rng = GenRng::new(seed, GROUP_QUARTERS_STREAM);
    let cum = cumulative(units.iter().copied());
    let mut quarters: Vec<(usize, Size)> = Vec::with_capacity(GROUP_QUARTERS);
    for _ in 0..GROUP_QUARTERS {
        let Some(district) = rng.weighted_index(&cum) else {
            break; // nowhere inhabited to put them
        };
        let size = rng.between(
            u64::from(*GROUP_QUARTERS_SIZES.start()),
            u64::from(*GROUP_QUARTERS_SIZES.end()),
        ) as Size;
        quarters.push((district, size));
    }
    // Numbered in district order; within a district, in the order drawn.
    quarters.sort_by_key(|&(d, _)| d);

    let mut groups: Vec<Vec<(String, Size)>> = vec![Vec::new(); districts.len()];
    for (q, &(d, size)) in quarters.iter().enumerate() {
        groups[d].push((format!("GQ{:04}", q + 1), size));
    }
    let mut next_id = 1usize;
    for (d, s) in sizes.into_iter().enumerate() {
        for size in s {
            groups[d].push((format!("H{next_id:06}"), size));
            next_id += 1;
        }
        // "GQ…" sorts before "H…", and each family is numbered in order.
        debug_assert!(groups[d].windows(2).all(|w| w[0].0 < w[1].0));
    }

    let (leaves, names) = super::three_level_geography(
        (COUNTRY_CODE, COUNTRY_NAME),
        districts.iter().map(|d| {
            (
                d.province.as_str(),
                d.province_name.as_str(),
                d.code.as_str(),
                d.name.as_str(),
            )
        }),
    );
    Ok(Generated {
        level_names: LEVELS.iter().map(|s| s.to_string()).collect(),
        leaves,
        names,
        groups: Groups::Sizes(groups),
    })
}
