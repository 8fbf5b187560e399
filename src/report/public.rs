//! The public report's sections, from a release's published files only
//! ([`ReleaseFacts`]): what was released, the privacy definition and the budget per
//! level, the plan and its reasons, the consistency step, the checks, what the margins
//! of error mean, and for every level its largest region's counts with their
//! intervals, the distribution of the intervals' widths and the summary statistics.

use crate::consistency::Consistency;
use crate::data::LevelId;
use crate::histogram::Count;
use crate::privacy::Definition;
use crate::release::outputs::manifest::{Manifest, PrivacyLevel};
use crate::release::plan::Tuning;
use crate::release::plan::defaults::{level_default, median, split_reason};

use super::chart::{self, Bar, Labels, number};
use super::html::{Kind, escape, table};
use super::release_files::{LevelFacts, ReleaseFacts};

/// What a level's budget says in the report: `ε = 1/3`, `ρ = 1/8`, or, for a level
/// left unmeasured (`"measured": false`, its budget written as `"0"`), that it was not
/// measured.
pub fn level_budget(level: &PrivacyLevel) -> String {
    let unmeasured = "not measured: estimated from its children";
    if !level.measured {
        return unmeasured.into();
    }
    match (&level.epsilon, &level.rho) {
        (Some(e), _) if is_zero(e) => unmeasured.into(),
        (_, Some(r)) if is_zero(r) => unmeasured.into(),
        (Some(e), _) => format!("ε = {e}"),
        (_, Some(r)) => format!("ρ = {r}"),
        (None, None) => "not stated in the manifest".into(),
    }
}

/// An exact budget's text that means zero (`0`, `0/3`, `0.0`).
fn is_zero(text: &str) -> bool {
    let numerator = text.split('/').next().unwrap_or(text);
    !numerator.is_empty() && numerator.chars().all(|c| c == '0' || c == '.')
}

/// The sections of the public report, in order.
pub fn sections(facts: &ReleaseFacts, kind: Kind) -> String {
    let mut out = String::new();
    out.push_str(&header(facts, kind));
    out.push_str(&released(facts));
    out.push_str(&privacy(&facts.published.manifest));
    out.push_str(&plan(facts));
    out.push_str(&consistency(&facts.published.manifest));
    out.push_str(&checks(&facts.published.manifest));
    out.push_str(&margins(&facts.published.manifest));
    for (i, level) in facts.levels.iter().enumerate() {
        out.push_str(&level_section(facts, i, level));
    }
    out
}

fn header(facts: &ReleaseFacts, kind: Kind) -> String {
    let m = &facts.published.manifest;
    let what = match kind {
        Kind::Public => {
            "This report is built from the release's published files only (manifest.json, the \
             level tables, the counts, uncertainty.csv, summary.csv); like them, it may be published."
        }
        Kind::Internal => {
            "This internal report adds to the public report of the release (the sections up to \
             the levels' charts) what only the agency may see: the ledger and the previews. \
             CONFIDENTIAL: never publish it; <code>coco report</code> without --internal writes \
             the public one."
        }
    };
    let names: Vec<&str> = facts.levels.iter().map(|l| l.name.as_str()).collect();
    format!(
        "<header id=\"top\">\n<h1>Count-of-counts release: report</h1>\n<p class=\"note\">A release \
         made by coco {} on {} ({} levels: {}). {what}</p>\n</header>\n",
        escape(&m.coco_version),
        escape(&m.created),
        facts.levels.len(),
        escape(&names.join(", "))
    )
}

fn released(facts: &ReleaseFacts) -> String {
    let m = &facts.published.manifest;
    let rows: Vec<Vec<String>> = facts
        .levels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            vec![
                escape(&l.name),
                number(l.regions as f64, 0),
                crate::units::thousands(l.groups),
                escape(
                    &m.privacy
                        .levels
                        .get(i)
                        .map_or_else(|| "not stated in the manifest".into(), level_budget),
                ),
                escape(&facts.published.plan.level(LevelId(i)).method().label()),
            ]
        })
        .collect();
    format!(
        "<section id=\"released\">\n<h2>What was released</h2>\n<p>For every region of every level, \
         how many groups have each size (0 to K = {}): the count-of-counts. The hierarchy and each \
         region's number of groups are public and published exactly; the counts are noisy. Every \
         region's counts add up to its number of groups, and a region's counts are the sums of its \
         children's.</p>\n{}</section>\n",
        number(f64::from(m.max_size), 0),
        table(
            "Levels, from the top",
            &["level", "regions", "groups (public)", "budget", "method"],
            &rows
        )
    )
}

fn privacy(m: &Manifest) -> String {
    let p = &m.privacy;
    let guarantee = match p.definition {
        Definition::Pure => format!(
            "Pure ε-differential privacy with total ε = {}.",
            escape(p.epsilon.as_deref().unwrap_or(&m.total_epsilon_exact))
        ),
        Definition::Zcdp => format!(
            "ρ-zero-concentrated differential privacy with total ρ = {}, which implies \
             (ε = {}, δ = {})-differential privacy.",
            escape(p.rho.as_deref().unwrap_or("(not stated)")),
            number(p.epsilon_at_delta, 4),
            escape(&format!("{:e}", p.delta))
        ),
    };
    let rows: Vec<Vec<String>> = p
        .levels
        .iter()
        .map(|l| vec![escape(&l.name), escape(&level_budget(l))])
        .collect();
    format!(
        "<section id=\"privacy\">\n<h2>Privacy</h2>\n<p>{guarantee} {}</p>\n<p>What is protected: {}. \
         Public, and published exactly: {}.</p>\n<p>Randomness: {}; {}.</p>\n{}</section>\n",
        escape(&p.description),
        escape(&p.unit),
        escape(&p.public),
        escape(&m.randomness.generator),
        escape(&m.randomness.sampler),
        table(
            &format!("The budget per level ({})", p.definition.symbol()),
            &["level", "budget"],
            &rows
        )
    )
}

fn plan(facts: &ReleaseFacts) -> String {
    let m = &facts.published.manifest;
    let p = &facts.published;
    let tuning = m.tuning.unwrap_or(Tuning::Unknown);
    let mut out = format!(
        "<section id=\"plan\">\n<h2>The plan and its reasons</h2>\n<p>How the plan was chosen \
         (<code>tuning = \"{}\"</code>): {}.</p>\n",
        escape(crate::wire::Named::name(tuning)),
        escape(tuning.describe())
    );
    let mut rows = Vec::new();
    for (i, level) in facts.levels.iter().enumerate() {
        let method = p.plan.level(LevelId(i)).method();
        let reason = if tuning == Tuning::PublicDefault {
            // The default's reason, from the same public figures `coco plan` used: each
            // region's G and K.
            let g: Vec<Count> = p
                .hierarchy
                .level_nodes(LevelId(i))
                .map(|n| p.groups[n.index()])
                .collect();
            let d = level_default(
                median(&g),
                g.iter().copied().max().unwrap_or(0),
                Some(m.max_size),
            );
            if d.method == method {
                d.reason
            } else {
                "changed from coco's default".into()
            }
        } else {
            "chosen by the operator (the plan records no reason)".into()
        };
        rows.push(vec![
            escape(&level.name),
            escape(&method.label()),
            format!("<span class=\"text\">{}</span>", escape(&reason)),
        ]);
    }
    if tuning == Tuning::PublicDefault {
        out.push_str(&format!(
            "<p>{}</p>\n",
            escape(&split_reason(facts.levels.len(), m.privacy.definition))
        ));
    }
    out.push_str(&table(
        "Each level's method and why",
        &["level", "method", "why"],
        &rows,
    ));
    out.push_str("</section>\n");
    out
}

fn consistency(m: &Manifest) -> String {
    let what = match m.consistency {
        Consistency::Wls => {
            "wls: each level's noisy estimates are weighed against each other by their \
             variances, so that every region's counts equal the sums of its children's and add \
             up to its public number of groups; the result is then made integral and \
             nonnegative"
        }
        Consistency::TopDown => {
            "topdown (Kuo et al., Algorithm 1): from the top down, each region's counts are split \
             among its children by matching their groups, so that every region's counts equal \
             the sums of its children's and add up to its public number of groups"
        }
    };
    format!(
        "<section id=\"consistency\">\n<h2>The consistency step</h2>\n<p>{}. It is \
         post-processing of the noisy measurements: it spends no privacy budget.</p>\n</section>\n",
        escape(what)
    )
}

fn checks(m: &Manifest) -> String {
    let c = &m.checks;
    let rows: Vec<Vec<String>> = [
        ("integral", "every count is a whole number", c.integral),
        ("nonnegative", "every count is 0 or more", c.nonnegative),
        (
            "group totals",
            "each region's counts add up to its public number of groups",
            c.group_totals,
        ),
        (
            "consistent",
            "each region's counts are the sums of its children's",
            c.consistent,
        ),
        (
            "within K",
            "no size above the public bound K",
            c.within_max_size,
        ),
    ]
    .into_iter()
    .map(|(name, what, ok)| {
        vec![
            escape(name),
            format!("<span class=\"text\">{}</span>", escape(what)),
            if ok {
                "<span class=\"ok\">passed</span>".into()
            } else {
                "<span class=\"failed\">FAILED</span>".into()
            },
        ]
    })
    .collect();
    format!(
        "<section id=\"checks\">\n<h2>Checks</h2>\n<p>coco checked the released tables before \
         writing them; <code>coco verify</code> checks the files again against the manifest.</p>\n{}</section>\n",
        table(
            "The release's checks",
            &["check", "what it says", "result"],
            &rows
        )
    )
}

/// The confidence of the margins as a percentage (`90%`).
fn percent(m: &Manifest) -> String {
    m.uncertainty
        .as_ref()
        .map_or("90".into(), |u| number(u.confidence * 100.0, 1))
        + "%"
}

fn margins(m: &Manifest) -> String {
    let pct = percent(m);
    let replicates = m.uncertainty.as_ref().map_or_else(
        || "0 bootstrap replicates".to_string(),
        |u| u.replicates_phrase(),
    );
    format!(
        "<section id=\"margins\">\n<h2>What the margins of error mean</h2>\n<p>Every released count \
         is an estimate: noise was added to protect privacy. Beside each count, the release gives a \
         {pct} interval, from a lower to an upper bound, for the true count. The intervals were \
         computed from the published tables alone, from {replicates}: the \
         release's noise drawn again, as many times, to see how far the estimates move. Over many \
         cells, about {pct} of such intervals hold the true count: that share is the intervals' \
         coverage, and coco's documentation reports it as measured. A count whose interval is \
         narrow is precise; a wide one says the figure could well be some way off.</p>\n<p>An \
         interval is about one cell (one region, one group size). The consistency step makes the \
         cells of a region add up to its public number of groups and to its children's counts, so \
         the errors of different cells depend on each other: adding the bounds of several cells \
         does not give an interval for their sum. For a sum or a share of cells (say, households \
         of 3 to 5 persons, or several regions together), use <code>coco margins</code> on the \
         release, or the statistics of <code>summary.csv</code>, which have their own \
         intervals.</p>\n</section>\n"
    )
}

fn level_section(facts: &ReleaseFacts, i: usize, level: &LevelFacts) -> String {
    let m = &facts.published.manifest;
    let pct = percent(m);
    let budget = m
        .privacy
        .levels
        .get(i)
        .map_or_else(|| "not stated in the manifest".into(), level_budget);
    let region = escape(&level.largest_id);
    let mut out = format!(
        "<section class=\"level\" id=\"level-{i}\">\n<h2>Level {}: {}</h2>\n<p>{} region(s), {} \
         groups; budget: {}; method: {}. The charts show its largest region, {region}, with {} \
         groups (public).</p>\n",
        i + 1,
        escape(&level.name),
        number(level.regions as f64, 0),
        crate::units::thousands(level.groups),
        escape(&budget),
        escape(&facts.published.plan.level(LevelId(i)).method().label()),
        number(level.largest_groups as f64, 0),
    );
    // Every size from 0 on, on a uniform axis; a size not listed is released 0 with the
    // interval [0, 0] (docs/uncertainty.md).
    let last = level.cells.iter().map(|c| c.size).max().unwrap_or(0);
    let shown_to = last.min(CHART_SIZES - 1);
    let bars: Vec<Bar> = (0..=shown_to)
        .map(|size| {
            let cell = level.cells.iter().find(|c| c.size == size);
            let (count, lower, upper) = cell.map_or((0, 0, 0), |c| (c.count, c.lower, c.upper));
            Bar {
                label: size.to_string(),
                value: count as f64,
                interval: Some((lower as f64, upper as f64)),
            }
        })
        .collect();
    let beyond: Vec<&super::release_files::Cell> =
        level.cells.iter().filter(|c| c.size > shown_to).collect();
    out.push_str(&format!(
        "<h3>Released counts of {region}, with their margins of error</h3>\n"
    ));
    let title = format!(
        "Groups of each size in {}, the largest region of level {}, with {pct} intervals",
        level.largest_id, level.name
    );
    let description = format!(
        "A bar per group size from 0 to {shown_to} for {}: its height is the released \
         number of groups of that size, the line over it its {pct} interval. The table below \
         gives the same figures.",
        level.largest_id
    );
    out.push_str(&chart::bars(
        &Labels {
            id: &format!("level-{i}-counts"),
            title: &title,
            description: &description,
            x: "size",
            y: "groups",
        },
        &bars,
        0,
    ));
    if !beyond.is_empty() {
        let rows: Vec<Vec<String>> = beyond
            .iter()
            .map(|c| {
                vec![
                    c.size.to_string(),
                    number(c.count as f64, 0),
                    number(c.lower as f64, 0),
                    number(c.upper as f64, 0),
                ]
            })
            .collect();
        out.push_str(&format!(
            "<p>Sizes above {shown_to} do not fit the chart's width ({CHART_SIZES} sizes at most); \
             uncertainty.csv lists {} of them for {region}, {} groups released there:</p>\n{}",
            beyond.len(),
            number(beyond.iter().map(|c| c.count as f64).sum(), 0),
            table(
                &format!("Sizes above {shown_to} in {}", level.largest_id),
                &["size", "groups", "lower", "upper"],
                &rows
            )
        ));
    }
    out.push_str("<h3>How wide the intervals are</h3>\n");
    out.push_str(&width_histogram(i, level, &pct));
    out.push_str(&format!("<h3>Summary statistics of {region}</h3>\n"));
    if level.summary.is_empty() {
        out.push_str("<p>summary.csv has no row for this region.</p>\n");
    } else {
        let rows: Vec<Vec<String>> = level
            .summary
            .iter()
            .map(|s| {
                vec![
                    escape(&s.name),
                    escape(&s.estimate),
                    escape(&s.lower),
                    escape(&s.upper),
                ]
            })
            .collect();
        out.push_str(&table(
            &format!("Statistics of {} with {pct} intervals (summary.csv; every region of the level is there)", level.largest_id),
            &["statistic", "estimate", "lower", "upper"],
            &rows,
        ));
    }
    out.push_str("</section>\n");
    out
}

/// At most this many sizes in a level's chart of counts: at the drawing's 720 units,
/// about 7 a bar, the least that shows a bar and its interval apart from its neighbours.
const CHART_SIZES: u64 = 100;

/// At most this many bars in the widths' histogram: wider ranges are binned.
const WIDTH_BINS: u64 = 24;

fn width_histogram(i: usize, level: &LevelFacts, pct: &str) -> String {
    let max = level.widths.iter().copied().max().unwrap_or(0);
    let bin = (max + 1).div_ceil(WIDTH_BINS).max(1);
    let bins = (max / bin + 1) as usize;
    let mut counts = vec![0u64; bins];
    for &w in &level.widths {
        counts[(w / bin) as usize] += 1;
    }
    let bars: Vec<Bar> = counts
        .iter()
        .enumerate()
        .map(|(b, &n)| {
            let lo = b as u64 * bin;
            Bar {
                label: if bin == 1 {
                    lo.to_string()
                } else {
                    format!("{lo}–{}", lo + bin - 1)
                },
                value: n as f64,
                interval: None,
            }
        })
        .collect();
    let title = format!(
        "Widths of the {pct} intervals of level {} (upper − lower, in groups)",
        level.name
    );
    let description = format!(
        "A histogram of the widths of the intervals of every cell listed in uncertainty.csv for \
         level {} ({} cells): how many cells have an interval of each width. Cells not listed \
         have the interval [0, 0]. The table below gives the same figures.",
        level.name,
        level.widths.len()
    );
    chart::bars(
        &Labels {
            id: &format!("level-{i}-widths"),
            title: &title,
            description: &description,
            x: "width",
            y: "cells",
        },
        &bars,
        0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(epsilon: Option<&str>, rho: Option<&str>) -> PrivacyLevel {
        PrivacyLevel {
            name: "district".into(),
            epsilon: epsilon.map(str::to_string),
            rho: rho.map(str::to_string),
            measured: true,
        }
    }

    #[test]
    fn a_level_without_budget_is_said_to_be_estimated_from_its_children() {
        for l in [
            level(Some("0"), None),
            level(None, Some("0")),
            level(Some("0/1"), None),
        ] {
            assert_eq!(
                level_budget(&l),
                "not measured: estimated from its children"
            );
        }
        assert_eq!(level_budget(&level(Some("1/3"), None)), "ε = 1/3");
        assert_eq!(level_budget(&level(Some("0.25"), None)), "ε = 0.25");
        assert_eq!(level_budget(&level(None, Some("1/8"))), "ρ = 1/8");
    }
}
