//! Coverage of `coco margins`'s intervals for sums and shares, measured like the cells'
//! (`uncertainty.rs`): seeded releases of the sample and of robustness shapes, the
//! library function the command calls ([`sums::margins`]) for several size ranges and
//! shares, per region of every level and over sets of regions, compared with the truth
//! (a confidential diagnostic, here an oracle).
//!
//! A value counts where it says something: a count whose truth or estimate is above 0
//! (a true 0 estimated 0 with the interval `[0, 0]` would pad the score), a share or
//! mean defined for the truth and the release.

use coco::data::{Dataset, LevelId, NodeId};
use coco::generate::shapes::Shape;
use coco::histogram::{CountOfCounts, Size};
use coco::noise::NoiseSource;
use coco::privacy::{Definition, Diagnostic};
use coco::release::margins::summary::{Denominator, SizeRange, Stat};
use coco::release::margins::sums::{self, Query, Regions, Subject, SumsOptions};
use coco::release::margins::{BootstrapKey, Confidence, Rule};
use coco::release::pipeline::draw as run;
use coco::release::plan::defaults;
use coco::release::plan::{MaxSize, ReleasePlan};
use coco::wire::Named;

/// Seeded releases per dataset.
const TRIALS: u64 = 2;
/// Bootstrap replicates per release (a release's `auto` draws up to 100; fewer keep the
/// test short, and coverage is measured with what a small release would get).
const REPLICATES: u32 = 40;
/// The least share of a level's values (per region, and over sets of regions) an
/// interval at 90% must cover.
const MIN_COVERAGE: f64 = 0.85;
/// Regions per set.
const SET_SIZE: usize = 4;
/// Sets per level and release, at most.
const MAX_SETS: usize = 8;

#[derive(Clone, Copy, Debug, Default)]
struct Score {
    values: u64,
    covered: u64,
    /// Summed widths and absolute errors of the counts (not the shares).
    width: f64,
    error: f64,
}

impl Score {
    fn add(&mut self, covered: bool) {
        self.values += 1;
        self.covered += u64::from(covered);
    }

    fn coverage(self) -> f64 {
        self.covered as f64 / self.values.max(1) as f64
    }
}

fn plan(d: &Dataset, k: Size) -> ReleasePlan {
    let total = crate::robustness::budget(d, Definition::Pure);
    defaults::public_default(&d.hierarchy, |id| d.groups(id), total, MaxSize::Fixed(k))
        .unwrap()
        .plan
}

fn datasets() -> Vec<(String, Dataset, Size)> {
    let mut out = vec![(
        "sample".to_string(),
        Dataset::load(std::path::Path::new("sample-data/households")).unwrap(),
        10_000,
    )];
    for (shape, scale, k) in [
        (Shape::GroupQuarters, 0.25, 1_000),
        (Shape::Skewed, 0.25, 1_000),
        (Shape::HeavyTail, 0.25, 10_000),
        (Shape::Sparse, 0.5, 100),
    ] {
        let g = shape.build(7, scale).unwrap();
        out.push((shape.name().to_string(), g.to_dataset().unwrap(), k));
    }
    out
}

/// The statistics asked of every level: ranges in the head, across and above the tail
/// threshold `L` (where the level has one), and shares over `G` and over occupied
/// groups.
fn statistics(p: &ReleasePlan, level: usize, k: Size) -> Vec<Stat> {
    let range = |text: &str| SizeRange::parse(text, k).unwrap();
    let mut out = vec![
        Stat::Groups(range("1")),
        Stat::Groups(range("2..4")),
        Stat::Groups(range("3..")),
        Stat::Groups(range("7..")),
        Stat::Share(range("1"), Denominator::All),
        Stat::Share(range("2..4"), Denominator::All),
        Stat::Share(range("3.."), Denominator::Occupied),
    ];
    if let Some(t) = p.levels()[level].method().tail() {
        out.push(Stat::Groups(range(&format!("{}..", t.above))));
    }
    out
}

/// Per level, the scores of the regions' values and of the sets' values, over the
/// trials, for dataset `d`.
fn measure(d: &Dataset, k: Size) -> Vec<(Score, Score)> {
    let h = &d.hierarchy;
    let p = plan(d, k);
    let truth = d.truth().for_diagnostic(Diagnostic::Oracle);
    let mut scores = vec![(Score::default(), Score::default()); h.depth()];
    for t in 0..TRIALS {
        let key = NoiseSource::seeded(1 + t);
        let draw = run::draw(d, &p, &key, &Default::default()).unwrap();
        let mut queries = Vec::new();
        for level in h.levels() {
            let regions: Vec<NodeId> = h
                .level_nodes(level)
                .filter(|&id| d.groups(id) > 0)
                .collect();
            let sets: Vec<Vec<NodeId>> = if regions.len() >= 2 {
                regions
                    .chunks(SET_SIZE.min(regions.len()))
                    .filter(|c| c.len() >= 2)
                    .take(MAX_SETS)
                    .map(<[NodeId]>::to_vec)
                    .collect()
            } else {
                Vec::new()
            };
            for stat in statistics(&p, level.0, k) {
                queries.push(Query {
                    level,
                    stat,
                    regions: Regions::Each,
                });
                for set in &sets {
                    queries.push(Query {
                        level,
                        stat,
                        regions: Regions::Set(set.clone()),
                    });
                }
            }
        }
        let answers = sums::margins(
            (&draw).into(),
            &p,
            d.public(),
            &SumsOptions {
                confidence: Confidence::DEFAULT,
                rule: Rule::default(),
                replicates: REPLICATES,
                top_runs: Vec::new(),
                key: BootstrapKey::of_run(&key),
            },
            &queries,
        )
        .unwrap();
        for (q, answers) in queries.iter().zip(answers) {
            let LevelId(level) = q.level;
            let (score, ids): (&mut Score, Vec<NodeId>) = match &q.regions {
                Regions::Each => (&mut scores[level].0, Vec::new()),
                Regions::Set(ids) => (&mut scores[level].1, ids.clone()),
            };
            for a in answers {
                let members = match a.subject {
                    Subject::Region(id) => vec![id],
                    Subject::Set { .. } => ids.clone(),
                };
                let true_hist = CountOfCounts::sum(
                    members
                        .iter()
                        .map(|&id| truth.node(id).top_coded(k))
                        .collect::<Vec<_>>()
                        .iter()
                        .map(CountOfCounts::as_ref),
                );
                let groups = members.iter().map(|&id| d.groups(id)).sum();
                let (Some(x), Some(iv)) = (q.stat.of(true_hist.as_ref(), groups), a.interval)
                else {
                    continue;
                };
                if q.stat.is_count() && x == 0 && iv.estimate == 0 {
                    continue;
                }
                score.add(iv.lower <= x && x <= iv.upper);
                if q.stat.is_count() {
                    score.width += (iv.upper - iv.lower) as f64;
                    score.error += (iv.estimate - x).abs() as f64;
                }
            }
        }
    }
    scores
}

#[test]
fn sums_and_shares_are_covered_at_every_level() {
    let mut failures = Vec::new();
    for (name, d, k) in datasets() {
        let scores = measure(&d, k);
        for (level, (regions, sets)) in scores.iter().enumerate() {
            let level_name = d.hierarchy.level_name(LevelId(level));
            eprintln!(
                "{name:>15} {level_name:>10}: regions {:.3} of {:>5} (width/error {:.1}), sets {:.3} of {:>4} (width/error {:.1})",
                regions.coverage(),
                regions.values,
                regions.width / regions.error.max(1.0),
                sets.coverage(),
                sets.values,
                sets.width / sets.error.max(1.0),
            );
            for (what, s) in [("regions", regions), ("sets of regions", sets)] {
                if s.values > 0 && s.coverage() < MIN_COVERAGE {
                    failures.push(format!(
                        "{name} {level_name} {what}: {:.3} of {} values covered",
                        s.coverage(),
                        s.values
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
