//! What the internal report adds to the public one, for the agency only: the ledger's
//! history of the dataset against its cap, and, from a saved preview or search, each
//! compared plan's error per level, the search's frontier and why this plan.

use crate::release::outputs::manifest::Manifest;
use crate::release::plan::Tuning;

use super::chart::{self, Bar, Labels, Line, number};
use super::html::{escape, table};
use super::ledger_history::LedgerHistory;
use super::preview_file::{Estimate, Preview, PreviewFile, Search};
use super::public::level_budget;

/// The internal sections, in order.
pub fn sections(
    manifest: &Manifest,
    ledger: &LedgerHistory,
    preview: Option<&PreviewFile>,
) -> String {
    let mut out = ledger_section(ledger);
    match preview {
        Some(PreviewFile::Preview(p)) => out.push_str(&preview_section(p)),
        Some(PreviewFile::Search(s)) => out.push_str(&search_section(s)),
        None => {}
    }
    out.push_str(&why(manifest, preview));
    out
}

fn estimate(e: Option<&Estimate>) -> String {
    e.map_or(String::new(), |e| {
        format!("{} ± {}", number(e.mean, 2), number(e.se, 2))
    })
}

fn ledger_section(h: &LedgerHistory) -> String {
    let rows: Vec<Vec<String>> = h
        .draws
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let mark = if d.id == h.this_draw {
                " (this release)"
            } else {
                ""
            };
            vec![
                format!("{}{mark}", i + 1),
                escape(&d.time),
                escape(&d.id),
                escape(d.status),
                escape(&d.loss),
                number(d.spent_after, 4),
                escape(&d.tuning),
                escape(&d.output),
            ]
        })
        .collect();
    let cap_text = match &h.cap {
        Some((cap, _)) => format!("The cap that binds: {}.", escape(cap)),
        None => "No cap is set on this dataset (<code>coco ledger set-cap</code> sets one).".into(),
    };
    let mut lines = vec![Line {
        name: format!("{} spent", h.symbol),
        points: h
            .draws
            .iter()
            .enumerate()
            .map(|(i, d)| ((i + 1) as f64, d.spent_after))
            .collect(),
        reference: false,
    }];
    if let Some((_, Some(cap))) = &h.cap {
        lines.push(Line {
            name: "cap".into(),
            points: (1..=h.draws.len()).map(|i| (i as f64, *cap)).collect(),
            reference: true,
        });
    }
    let title = format!(
        "{} spent on this dataset after each draw{}",
        h.symbol,
        if h.cap.is_some() {
            ", against its cap"
        } else {
            ""
        }
    );
    let description = format!(
        "A line of what the ledger records as spent on the dataset after each of its {} draw(s), \
         every draw counted whether or not it was published{}. The table below gives the same figures.",
        h.draws.len(),
        if lines.len() > 1 {
            "; the dashed line is the cap"
        } else {
            ""
        }
    );
    format!(
        "<section class=\"confidential\" id=\"ledger\">\n<h2>CONFIDENTIAL: the ledger's history of \
         this dataset</h2>\n<p>Every draw of the dataset this release was drawn from, as the \
         privacy-loss ledger records it (read and checked as <code>coco ledger</code> reads it). \
         Ledger: {}; dataset: {} (content digest {}). Spent so far: {} {}. {cap_text}</p>\n{}{}</section>\n",
        escape(&h.ledger.display().to_string()),
        escape(&h.dataset_dir),
        escape(&h.dataset),
        h.symbol,
        escape(&h.spent),
        chart::lines(
            &Labels {
                id: "ledger-spent",
                title: &title,
                description: &description,
                x: "draw",
                y: h.symbol,
            },
            &lines,
            4
        ),
        table(
            "Draws of this dataset",
            &[
                "draw",
                "time",
                "id",
                "status",
                "budget",
                "spent after",
                "tuning",
                "written to"
            ],
            &rows
        ),
    )
}

fn preview_section(p: &Preview) -> String {
    let with_mae = p.levels.iter().any(|l| l.mae_per_cell.is_some());
    let with_relative = p.levels.iter().any(|l| l.relative_error.is_some());
    let mut header = vec![
        "level",
        "budget",
        "method",
        "independent",
        "consistent",
        "bottom-up",
        "omniscient",
    ];
    if with_mae {
        header.push("mean abs. error per cell");
    }
    if with_relative {
        header.push("relative error");
    }
    let rows: Vec<Vec<String>> = p
        .levels
        .iter()
        .map(|l| {
            let budget = match (&l.epsilon, &l.rho) {
                (Some(e), _) => format!("ε = {e}"),
                (_, Some(r)) => format!("ρ = {r}"),
                _ => String::new(),
            };
            let mut row = vec![
                escape(&l.level),
                escape(&budget),
                escape(l.method.as_deref().unwrap_or("")),
                estimate(l.independent.as_ref()),
                estimate(l.consistent.first().map(|v| &v.emd)),
                estimate(l.bottom_up.as_ref()),
                l.omniscient.map_or(String::new(), |o| number(o, 2)),
            ];
            if with_mae {
                row.push(estimate(l.mae_per_cell.as_ref()));
            }
            if with_relative {
                row.push(estimate(l.relative_error.as_ref()));
            }
            row
        })
        .collect();
    let bars: Vec<Bar> = p
        .levels
        .iter()
        .flat_map(|l| {
            [
                ("independent", l.independent),
                ("consistent", l.consistent.first().map(|v| v.emd)),
                ("bottom-up", l.bottom_up),
            ]
            .into_iter()
            .filter_map(move |(name, e)| {
                e.map(|e| Bar {
                    label: format!("{} {name}", l.level),
                    value: e.mean,
                    interval: Some(((e.mean - 2.0 * e.se).max(0.0), e.mean + 2.0 * e.se)),
                })
            })
        })
        .collect();
    format!(
        "<section class=\"confidential\" id=\"preview\">\n<h2>CONFIDENTIAL: the preview</h2>\n\
         <p>{}</p>\n<p>Errors per level over {} trial(s), measured on {}: the mean EMD (groups moved \
         to reach the truth) ± its standard error. <i>consistent</i> is what the release publishes; \
         <i>bottom-up</i> puts the whole budget on the leaves and sums them.</p>\n{}{}</section>\n",
        escape(&p.notice),
        p.trials.map_or("?".into(), |t| t.to_string()),
        escape(&p.data.describe()),
        chart::bars(
            &Labels {
                id: "preview-errors",
                title: "Mean error per level of each estimate (EMD, with ± 2 standard errors)",
                description: "A bar per level and estimate: the preview's mean EMD over its trials, \
                              with a line of two standard errors either side. The table below gives \
                              the figures.",
                x: "level and estimate",
                y: "EMD",
            },
            &bars,
            2
        ),
        table("The preview's errors per level", &header, &rows),
    )
}

fn search_section(s: &Search) -> String {
    let recommended = s.recommendation.as_ref().and_then(|r| r.candidate);
    let mut header = vec!["plan", "origin", "leaves' share", "budgets", "methods"];
    let level_headers: Vec<String> = s.levels.iter().map(|l| format!("{l} error")).collect();
    header.extend(level_headers.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = s
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut marks = Vec::new();
            if s.current == Some(i) {
                marks.push("current");
            }
            if recommended == Some(i) {
                marks.push("recommended");
            }
            let mut row = vec![
                if marks.is_empty() {
                    format!("#{}", i + 1)
                } else {
                    format!("#{} ({})", i + 1, marks.join(", "))
                },
                escape(&c.origin),
                number(c.x, 3),
                escape(&c.budgets.join(", ")),
                escape(&c.methods.join(", ")),
            ];
            row.extend(c.consistent.iter().map(|e| estimate(Some(e))));
            row
        })
        .collect();
    let mut out = format!(
        "<section class=\"confidential\" id=\"search\">\n<h2>CONFIDENTIAL: the plans compared</h2>\n\
         <p>{}</p>\n<p>The search compared {} plan(s) on {} over {} trial(s): for each, the mean \
         EMD of what the release would publish at every level ± its standard error.</p>\n{}",
        escape(&s.notice),
        s.candidates.len(),
        escape(&s.data.describe()),
        s.trials.map_or("?".into(), |t| t.to_string()),
        table("Every plan compared", &header, &rows)
    );
    for (l, level) in s.levels.iter().enumerate() {
        let bars: Vec<Bar> = s
            .candidates
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                c.consistent.get(l).map(|e| Bar {
                    label: format!("#{}", i + 1),
                    value: e.mean,
                    interval: Some(((e.mean - 2.0 * e.se).max(0.0), e.mean + 2.0 * e.se)),
                })
            })
            .collect();
        out.push_str(&format!("<h3>Level {level}</h3>\n"));
        out.push_str(&chart::bars(
            &Labels {
                id: &format!("search-{l}-plans"),
                title: &format!("Error of level {level} under each compared plan (EMD, ± 2 standard errors)"),
                description: &format!(
                    "A bar per compared plan (numbered as in the table above): the mean EMD of \
                     level {level}, with two standard errors either side. The table below gives the figures."
                ),
                x: "plan",
                y: "EMD",
            },
            &bars,
            2,
        ));
        let mut lines = vec![Line {
            name: "consistent".into(),
            points: s
                .points
                .iter()
                .filter_map(|p| p.consistent.get(l).map(|e| (p.x, e.mean)))
                .collect(),
            reference: false,
        }];
        if let Some(b) = s.bottom_up.get(l) {
            lines.push(Line {
                name: "bottom-up".into(),
                points: s.points.iter().map(|p| (p.x, b.mean)).collect(),
                reference: true,
            });
        }
        out.push_str(&chart::lines(
            &Labels {
                id: &format!("search-{l}-frontier"),
                title: &format!("The trade-off frontier at level {level}: error against the leaves' share of the budget"),
                description: &format!(
                    "A line of the mean EMD of level {level} for each split of the budget the \
                     search drew (the leaves' share on the x axis); the dashed line is bottom-up's \
                     error. The table below gives the figures."
                ),
                x: "leaves' share",
                y: "EMD",
            },
            &lines,
            2,
        ));
    }
    out.push_str("</section>\n");
    out
}

fn why(m: &Manifest, preview: Option<&PreviewFile>) -> String {
    let tuning = m.tuning.unwrap_or(Tuning::Unknown);
    let budgets: Vec<String> = m.privacy.levels.iter().map(level_budget).collect();
    let methods: Vec<String> = m
        .levels
        .iter()
        .map(|l| {
            let kind = crate::wire::Named::name(l.method);
            match &l.tail {
                Some(t) => format!("{kind}+tail≥{}", t.above),
                None => kind.to_string(),
            }
        })
        .collect();
    let mut out = format!(
        "<section class=\"confidential\" id=\"why\">\n<h2>CONFIDENTIAL: why this plan</h2>\n<p>The \
         release's plan was {} (<code>tuning = \"{}\"</code>); each level's reason is under \
         <a href=\"#plan\">the plan and its reasons</a>. Its budgets: {}; its methods: {}.</p>\n",
        escape(tuning.describe()),
        escape(crate::wire::Named::name(tuning)),
        escape(&budgets.join(", ")),
        escape(&methods.join(", "))
    );
    match preview {
        Some(PreviewFile::Search(s)) => match &s.recommendation {
            Some(r) => out.push_str(&format!(
                "<p>The search recommended budgets {} with methods {} ({}){}.</p>\n",
                escape(&r.budgets.join(", ")),
                escape(&r.methods.join(", ")),
                escape(&r.reason),
                if r.is_current {
                    ": the plan the search started from"
                } else {
                    ", not the plan the search started from"
                }
            )),
            None => out.push_str("<p>The search made no recommendation.</p>\n"),
        },
        Some(PreviewFile::Preview(_)) => out.push_str(
            "<p>The preview above measured this plan's errors; it compares no other plan.</p>\n",
        ),
        None => out.push_str(
            "<p>No preview or search was given (<code>--preview FILE.json</code>).</p>\n",
        ),
    }
    out.push_str("</section>\n");
    out
}
