//! Intervals for any sum or share of a release's cells (`coco margins`): the number of
//! groups whose size is in a range, their share of all groups or of the occupied ones,
//! the mean size, per region of a level or over a set of its regions.
//!
//! Cell intervals cannot be added up: the consistency step makes the cells' errors
//! depend on each other (a parent's cells are its children's sums). So a sum gets an
//! interval of its own from the bootstrap that made the cells' ([`super::bootstrap`]):
//! the same replicates, with the statistic computed on each and its errors pooled like
//! `summary.csv`'s ([`super::summary`]). The replicates are those of the release: the
//! manifest publishes the bootstrap's key and replicate count, so a statistic that
//! `summary.csv` or `uncertainty.csv` publishes too gets exactly the interval those
//! files give it ([`super::Uncertainty::statistic`]). A set of regions is one
//! statistic whose errors are taken from each replicate's sum over the set.
//!
//! Everything here is post-processing of published tables: what it reads is a
//! [`Released`] (a draw, or a release read back from its files) and public data, and it
//! spends no ε.

use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap as HashMap;

use crate::data::{Hierarchy, LevelId, NodeId, PublicData};
use crate::release::plan::ReleasePlan;

use crate::histogram::{Count, HistRef, HistogramSet};

use super::summary::{Denominator, RegionSet, Request, SCALE, Stat, StatInterval};
use super::{
    BootstrapKey, Confidence, Released, Replicates, Rule, Uncertainty, UncertaintyError,
    UncertaintyOptions,
};

/// Which regions a statistic is asked of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Regions {
    /// Every region of the level, one row each.
    Each,
    /// The set taken together, one row.
    Set(Vec<NodeId>),
}

/// A statistic of a level's regions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    pub level: LevelId,
    pub stat: Stat,
    pub regions: Regions,
}

/// How the bootstrap is run: as the release ran it (its manifest's confidence, rule,
/// replicate count and key) for the intervals to be the release's.
#[derive(Clone, Debug)]
pub struct SumsOptions {
    pub confidence: Confidence,
    pub rule: Rule,
    pub replicates: u32,
    /// The release's runs of top replicates (its manifest's `uncertainty.top_runs`;
    /// none for a release written before coco drew them).
    pub top_runs: Vec<super::TopRun>,
    pub key: BootstrapKey,
}

/// What an answer is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    Region(NodeId),
    /// The regions of a [`Regions::Set`] taken together.
    Set {
        regions: usize,
    },
}

impl Subject {
    /// The region's display id, or a set's label in `coco margins`'s output:
    /// `(5 regions)`.
    pub fn label(self, hierarchy: &Hierarchy) -> String {
        match self {
            Subject::Region(id) => hierarchy.display_id(id),
            Subject::Set { regions: 1 } => "(1 region)".to_string(),
            Subject::Set { regions } => format!("({regions} regions)"),
        }
    }
}

/// One answer: a region (or a set of regions) and its statistic with its interval
/// (`None` where a share or mean of no groups is undefined).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub subject: Subject,
    pub interval: Option<StatInterval>,
}

/// Answers `queries` about `release`: per query, one [`Answer`] per region of the level
/// (in node order) or one for the set. One bootstrap serves every query.
pub fn margins(
    release: Released<'_>,
    plan: &ReleasePlan,
    public: PublicData<'_>,
    options: &SumsOptions,
    queries: &[Query],
) -> Result<Vec<Vec<Answer>>, UncertaintyError> {
    let mut request = Request::default();
    for q in queries {
        // A set's interval also takes in its regions' own ([`set_interval`]).
        request.stats.push(q.stat);
        if let Regions::Set(regions) = &q.regions {
            request.sets.push(RegionSet {
                regions: regions.clone(),
                stats: vec![q.stat],
            });
        }
    }
    let u = super::bootstrap(
        release,
        plan,
        public,
        &UncertaintyOptions {
            confidence: options.confidence,
            replicates: Replicates::Fixed(options.replicates),
            rule: options.rule,
            key: None,
            keep_replicates: false,
            bias: super::Bias::default(),
            top_replicates: super::TopReplicates::Runs(options.top_runs.clone()),
        },
        options.key,
        &request,
    )?;
    Ok(answers(&u, release, public, queries, &request))
}

fn answers(
    u: &Uncertainty,
    release: Released<'_>,
    public: PublicData<'_>,
    queries: &[Query],
    request: &Request,
) -> Vec<Vec<Answer>> {
    let h = public.hierarchy;
    let released = release.histograms();
    let mut set = 0;
    queries
        .iter()
        .map(|q| match &q.regions {
            Regions::Each => h
                .level_nodes(q.level)
                .map(|id| Answer {
                    subject: Subject::Region(id),
                    interval: u.statistic(
                        q.level.0,
                        q.stat,
                        released.get(id.index()),
                        public.groups(id),
                    ),
                })
                .collect(),
            Regions::Set(members) => {
                let (hist, groups) = request.sets[set].histogram(released, public);
                let interval =
                    set_interval(u, q, set, members, (hist.as_ref(), groups), release, public);
                set += 1;
                vec![Answer {
                    subject: Subject::Set {
                        regions: members.len(),
                    },
                    interval,
                }]
            }
        })
        .collect()
}

/// The interval of a set's statistic: its own errors over the replicates
/// ([`Uncertainty::set_statistic`]), widened to cover what its regions' own intervals
/// imply ([`members_imply`]). The replicates are centred on the released tables, so
/// they miss the estimator's bias, which a set's single value cannot average out as a
/// level's pool of regions does; the regions' intervals hold it.
fn set_interval(
    u: &Uncertainty,
    q: &Query,
    set: usize,
    members: &[NodeId],
    (hist, groups): (HistRef<'_>, Count),
    release: Released<'_>,
    public: PublicData<'_>,
) -> Option<StatInterval> {
    let level = q.level.0;
    let released = release.histograms();
    let widen = |stat: Stat, mut iv: StatInterval| {
        if let Some((lower, upper)) =
            members_imply(u, level, stat, members, released, public, iv.estimate)
        {
            let (min, max) = stat.range(groups, u.max_size());
            iv.lower = iv.lower.min(lower.clamp(min, iv.estimate));
            iv.upper = iv.upper.max(upper.clamp(iv.estimate, max.max(iv.estimate)));
        }
        iv
    };
    match q.stat {
        // A share over G: its count's interval over G.
        Stat::Share(range, Denominator::All) => {
            let count = Stat::Groups(range);
            widen(count, u.set_statistic(set, count, hist, groups)?).over(groups)
        }
        stat => Some(widen(stat, u.set_statistic(set, stat, hist, groups)?)),
    }
}

/// The interval around a set's value `x` that its regions' intervals imply: the set's
/// value is the sum of its regions' (a count), or their mean weighted by their
/// denominators (a share or mean: `Σ (D_i / D) v_i`), so its distance to each bound is
/// taken as the root sum of squares of the regions' weighted distances — their errors
/// as independent (regions are measured apart; the consistency step couples them
/// through their parents). `None` where the set's denominator is 0.
fn members_imply(
    u: &Uncertainty,
    level: usize,
    stat: Stat,
    members: &[NodeId],
    released: &HistogramSet,
    public: PublicData<'_>,
    x: i64,
) -> Option<(i64, i64)> {
    let denominator = |hist: HistRef<'_>, groups: Count| -> f64 {
        match stat {
            Stat::Groups(_) => 1.0,
            Stat::Share(_, d) | Stat::MeanSize(d) => match d {
                Denominator::All => groups as f64,
                Denominator::Occupied => hist
                    .pairs()
                    .iter()
                    .filter(|&&(s, _)| s >= 1)
                    .map(|&(_, c)| c as f64)
                    .sum(),
            },
        }
    };
    let total: f64 = match stat {
        Stat::Groups(_) => 1.0,
        _ => members
            .iter()
            .map(|&id| denominator(released.get(id.index()), public.groups(id)))
            .sum(),
    };
    if total <= 0.0 {
        return None;
    }
    let (mut down, mut up) = (0f64, 0f64);
    for &id in members {
        let (hist, g) = (released.get(id.index()), public.groups(id));
        let Some(iv) = u.statistic(level, stat, hist, g) else {
            continue;
        };
        let w = denominator(hist, g) / total;
        down += (w * (iv.estimate - iv.lower) as f64).powi(2);
        up += (w * (iv.upper - iv.estimate) as f64).powi(2);
    }
    Some((x - down.sqrt().ceil() as i64, x + up.sqrt().ceil() as i64))
}

/// A value of `stat` as `summary.csv` and `coco margins` write it: a count, or a
/// fixed-point share or mean with four decimals.
pub fn shown(stat: Stat, v: i64) -> String {
    if stat.is_count() {
        v.to_string()
    } else {
        let scale = SCALE as i64;
        format!("{}.{:04}", v / scale, v % scale)
    }
}

/// A regions file (`coco margins --regions FILE`) that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RegionsError {
    #[error("{path}: cannot be read: {problem}")]
    Io { path: PathBuf, problem: String },
    #[error(
        "{path}:{line}: region {region:?} is not a region of level {level}: expected a region as counts.csv spells it (e.g. {example})"
    )]
    Unknown {
        path: PathBuf,
        line: usize,
        region: String,
        level: String,
        example: String,
    },
    #[error(
        "{path}:{line}: region {region:?} is listed twice (first on line {first}): expected each region once"
    )]
    Twice {
        path: PathBuf,
        line: usize,
        region: String,
        first: usize,
    },
    #[error("{path}: no regions: expected one region of level {level} a line")]
    Empty { path: PathBuf, level: String },
}

/// The regions of `level` listed in the file at `path`: one a line as `counts.csv`
/// spells them (display ids); blank lines and lines starting with `#` are skipped.
pub fn read_regions(
    path: &Path,
    hierarchy: &Hierarchy,
    level: LevelId,
) -> Result<Vec<NodeId>, RegionsError> {
    let text = std::fs::read_to_string(path).map_err(|e| RegionsError::Io {
        path: path.to_path_buf(),
        problem: e.to_string(),
    })?;
    let level_name = hierarchy.level_name(level).to_string();
    let mut seen: HashMap<NodeId, usize> = HashMap::default();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let region = line.trim();
        if region.is_empty() || region.starts_with('#') {
            continue;
        }
        let id = hierarchy
            .find_display_id(region)
            .filter(|&id| hierarchy.node(id).level == level)
            .ok_or_else(|| RegionsError::Unknown {
                path: path.to_path_buf(),
                line: i + 1,
                region: region.to_string(),
                level: level_name.clone(),
                example: hierarchy
                    .level_nodes(level)
                    .next()
                    .map(|id| hierarchy.display_id(id))
                    .unwrap_or_default(),
            })?;
        if let Some(&first) = seen.get(&id) {
            return Err(RegionsError::Twice {
                path: path.to_path_buf(),
                line: i + 1,
                region: region.to_string(),
                first,
            });
        }
        seen.insert(id, i + 1);
        out.push(id);
    }
    if out.is_empty() {
        return Err(RegionsError::Empty {
            path: path.to_path_buf(),
            level: level_name,
        });
    }
    Ok(out)
}
