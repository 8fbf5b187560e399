//! The `us-counties` preset: Kuo et al.'s partially synthetic housing data on the real
//! geography of the United States, nation `US` → 52 states (50, DC and Puerto Rico,
//! two-digit FIPS codes) → 3,220 counties (five-digit GEOIDs).
//!
//! Each county keeps its real number of households `N` and average household size
//! `μ = population / households` (U.S. Census Bureau, ACS 2019 5-year estimates,
//! embedded from `assets/us_counties_acs2019.csv`; see `assets/SOURCES.md`). The
//! population includes people in group quarters, so `μ` slightly overstates the size
//! of the households themselves; the recipe takes it as given.
//!
//! Per county, the `N` household sizes are one multinomial draw from [`SizeModel`]
//! fitted to `μ` by bisection: 1 + Poisson(λ) on sizes 1..=7, continued beyond 7 by
//! the geometric tail `E[count(k)] = E[count(7)]·r^(k−7)`, `r = E[count(7)]/E[count(6)]`,
//! drawn with sequential exact binomials until no household is left (BTPE for large
//! means, inversion for small; see [`super::binomial`]). The county therefore keeps
//! exactly its `N` households and its expected mean size is exactly `μ`; the tail is
//! carved out of the households rather than added on top of them.
//!
//! Then [`OUTLIERS`] group quarters of size uniform in `1..=`[`OUTLIER_MAX_SIZE`] go
//! to counties drawn with probability proportional to their households (as Kuo et
//! al. assign groups to counties "proportional to county size"). A county's number of
//! groups is its households plus the outliers it received; the nation has
//! 121,948,702 + 50 groups.
//!
//! # Citations
//! Kuo et al., PVLDB 11(11), 2018, §6.1, "Partially synthetic housing".

use crate::histogram::{CountOfCounts, Size};

use super::household_sizes::SizeModel;
use super::random::{GenRng, cumulative};
use super::{GenerateError, Generated, Groups};

const ASSET_NAME: &str = "assets/us_counties_acs2019.csv";
const ASSET: &str = include_str!("../../assets/us_counties_acs2019.csv");
const HEADER: [&str; 8] = [
    "state_fips",
    "state_abbr",
    "state_name",
    "county_fips",
    "geoid",
    "county_name",
    "population",
    "households",
];

pub const NATION_CODE: &str = "US";
pub const NATION_NAME: &str = "United States";
pub const LEVELS: [&str; 3] = ["nation", "state", "county"];

/// Group-quarters outliers added to the households (Kuo et al. §6.1).
pub const OUTLIERS: usize = 50;
pub const OUTLIER_MAX_SIZE: Size = 10_000;

/// Stream 0 places the outliers; county `i` (in GEOID order) uses stream `1 + i`.
const OUTLIER_STREAM: u64 = 0;

/// One county of the embedded ACS table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct County {
    pub state_fips: String,
    pub state_abbr: String,
    pub state_name: String,
    /// Five-digit GEOID: state FIPS followed by the county FIPS.
    pub geoid: String,
    pub name: String,
    pub population: u64,
    pub households: u64,
    /// Line in the asset file, for messages.
    pub line: u64,
}

impl County {
    /// `population / households`, the target mean household size.
    pub fn mean_size(&self) -> Option<f64> {
        (self.households > 0).then(|| self.population as f64 / self.households as f64)
    }
}

/// The counties of the embedded ACS table, sorted by GEOID.
pub fn counties() -> Result<Vec<County>, GenerateError> {
    let bad = |line: u64, message: String| GenerateError::Asset {
        file: ASSET_NAME,
        line,
        message,
    };
    let mut reader = csv::Reader::from_reader(ASSET.as_bytes());
    let header = reader.headers().map_err(|e| bad(1, e.to_string()))?;
    if header.iter().ne(HEADER) {
        return Err(bad(
            1,
            format!("expected header {}, found {:?}", HEADER.join(","), header),
        ));
    }
    let mut out: Vec<County> = Vec::with_capacity(3220);
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            bad(line, e.to_string())
        })?;
        let line = record.position().map_or(0, |p| p.line());
        let number = |i: usize| {
            record[i].parse::<u64>().map_err(|_| {
                bad(
                    line,
                    format!(
                        "{} must be a whole number, found {:?}",
                        HEADER[i], &record[i]
                    ),
                )
            })
        };
        let county = County {
            state_fips: record[0].to_string(),
            state_abbr: record[1].to_string(),
            state_name: record[2].to_string(),
            geoid: record[4].to_string(),
            name: record[5].to_string(),
            population: number(6)?,
            households: number(7)?,
            line,
        };
        if county.geoid != format!("{}{}", &record[0], &record[3]) {
            return Err(bad(
                line,
                format!(
                    "geoid {:?} is not state_fips {:?} followed by county_fips {:?}",
                    county.geoid, &record[0], &record[3]
                ),
            ));
        }
        if county.households > 0 && county.population < county.households {
            return Err(bad(
                line,
                format!(
                    "population {} is below households {}: expected at least one person per household",
                    county.population, county.households
                ),
            ));
        }
        out.push(county);
    }
    out.sort_by(|a, b| a.geoid.cmp(&b.geoid));
    if let Some(w) = out.windows(2).find(|w| w[0].geoid == w[1].geoid) {
        return Err(bad(
            w[1].line,
            format!("geoid {} appears twice", w[1].geoid),
        ));
    }
    Ok(out)
}

/// The drawn data with its parts kept apart, for checks and experiments.
#[derive(Clone, Debug)]
pub struct UsCounties {
    /// Sorted by GEOID.
    pub counties: Vec<County>,
    /// The households of each county (same order), sizes ≥ 1.
    pub households: Vec<CountOfCounts>,
    /// The group-quarters outliers: (index into `counties`, size).
    pub outliers: Vec<(usize, Size)>,
}

impl UsCounties {
    /// Draws the data for `seed`.
    pub fn draw(seed: u64) -> Result<Self, GenerateError> {
        let counties = counties()?;
        let households = counties
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let Some(mean) = c.mean_size() else {
                    return Ok(CountOfCounts::new());
                };
                let model = SizeModel::fit_mean(mean).map_err(|e| GenerateError::Asset {
                    file: ASSET_NAME,
                    line: c.line,
                    message: e.to_string(),
                })?;
                let mut rng = GenRng::new(seed, 1 + i as u64);
                Ok(
                    CountOfCounts::from_pairs(model.draw(c.households, &mut rng))
                        .expect("the model draws each size once"),
                )
            })
            .collect::<Result<Vec<_>, GenerateError>>()?;
        let mut rng = GenRng::new(seed, OUTLIER_STREAM);
        let cum = cumulative(counties.iter().map(|c| c.households));
        let mut outliers = Vec::with_capacity(OUTLIERS);
        for _ in 0..OUTLIERS {
            let Some(county) = rng.weighted_index(&cum) else {
                break; // no households anywhere
            };
            let size = rng.between(1, u64::from(OUTLIER_MAX_SIZE)) as Size;
            outliers.push((county, size));
        }
        Ok(Self {
            counties,
            households,
            outliers,
        })
    }

    /// Each county's groups: households plus its outliers.
    pub fn county_histograms(&self) -> Vec<CountOfCounts> {
        let mut out = self.households.clone();
        for &(county, size) in &self.outliers {
            out[county].add(&CountOfCounts::from_sizes([size]));
        }
        out
    }

    /// As a dataset in the `histograms.csv` form, with state and county names.
    pub fn into_generated(self) -> Generated {
        let histograms = self.county_histograms();
        let (leaves, names) = super::three_level_geography(
            (NATION_CODE, NATION_NAME),
            self.counties.iter().map(|c| {
                (
                    c.state_fips.as_str(),
                    c.state_name.as_str(),
                    c.geoid.as_str(),
                    c.name.as_str(),
                )
            }),
        );
        Generated {
            level_names: LEVELS.iter().map(|s| s.to_string()).collect(),
            leaves,
            names,
            groups: Groups::Histograms(histograms),
        }
    }
}

/// Draws the `us-counties` dataset for `seed`.
pub fn generate(seed: u64) -> Result<Generated, GenerateError> {
    Ok(UsCounties::draw(seed)?.into_generated())
}
