//! The batch commands' text output: aligned tables for a terminal. The core builds the
//! reports ([`Summary`], [`PreviewReport`], [`Frontier`]); how they read on a terminal
//! is decided here, as the TUI decides how they look on its screens.

use std::fmt::Write;

use coco::histogram::Size;
use coco::inspect::{Summary, thousands};
use coco::preview::{PreviewReport, Stat, fmt_num};
use coco::privacy::Rounding;
use coco::tradeoff::{Frontier, PreviewData};

/// Rows of cells as aligned columns separated by two spaces, each as wide as its
/// widest cell; `right` marks the right-aligned (numeric) columns. With `header`, the
/// first row is a header followed by a rule of dashes.
pub fn table(rows: &[Vec<String>], right: impl Fn(usize) -> bool, header: bool) -> String {
    let mut s = String::new();
    let Some(first) = rows.first() else { return s };
    let widths: Vec<usize> = (0..first.len())
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |x| x.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (i, row) in rows.iter().enumerate() {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                if right(c) {
                    format!("{cell:>w$}", w = widths[c])
                } else {
                    format!("{cell:<w$}", w = widths[c])
                }
            })
            .collect();
        let _ = writeln!(s, "{}", line.join("  ").trim_end());
        if header && i == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            let _ = writeln!(s, "{}", rule.join("  "));
        }
    }
    s
}

/// What a preview shows for the independent estimate of a level left unmeasured.
const NOT_MEASURED: &str = "not measured";

fn stat(s: &Stat) -> String {
    s.text()
}

/// Budgets held exactly, root first, as short decimals (`--json` keeps them exact); 0
/// for a level left unmeasured.
fn short_budgets<U: coco::privacy::Unit>(budgets: &[Option<coco::privacy::Budget<U>>]) -> String {
    budgets
        .iter()
        .map(|b| b.as_ref().map_or_else(|| "0".to_string(), short_epsilon))
        .collect::<Vec<_>>()
        .join(" / ")
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

fn label(id: &str, name: Option<&str>) -> String {
    match name {
        Some(name) => format!("{id} ({name})"),
        None => id.to_string(),
    }
}

fn size(s: Option<Size>) -> String {
    s.map_or_else(|| "-".to_string(), |s| thousands(s.into()))
}

/// `coco preview`'s report: the errors per level as a table, then its warnings. `data`
/// is what the trials ran on: every figure is labelled as the confidential data's or
/// as the public proxy's, never one as the other.
pub fn preview(report: &PreviewReport, data: &PreviewData) -> String {
    let (truth, label) = match data {
        PreviewData::Confidential => ("the truth", "CONFIDENTIAL"),
        PreviewData::Proxy { .. } => (
            "the proxy's true counts",
            "PUBLIC PROXY, not the confidential data",
        ),
    };
    let symbol = report
        .total
        .as_ref()
        .map_or("ε", |t| t.definition().symbol());
    let mut s = String::new();
    let _ = writeln!(s, "{}\n", report.notice);
    let _ = writeln!(
        s,
        "dataset {}   total {} = {}   K = {}{}   {} trial(s), {}",
        report.dataset,
        symbol,
        report
            .total
            .as_ref()
            .map_or_else(String::new, |t| short_epsilon(&t.amount())),
        coco::units::thousands(u128::from(report.max_size)),
        if report.max_size_estimated {
            " (estimated, last trial)"
        } else {
            ""
        },
        report.trials,
        report.randomness
    );
    let _ = writeln!(
        s,
        "\nmean per-node earth mover's distance to {truth} (± standard error over trials)\n"
    );
    let variants: Vec<String> = report
        .levels
        .first()
        .map(|l| l.consistent.iter().map(|v| v.variant.clone()).collect())
        .unwrap_or_default();
    let mut header = vec![
        "level".to_string(),
        "nodes".into(),
        symbol.into(),
        "method".into(),
        "independent".into(),
    ];
    header.extend(variants.iter().map(|v| format!("consistent: {v}")));
    header.push("bottom-up".into());
    header.push("omniscient ref.".into());
    let mut rows: Vec<Vec<String>> = vec![header];
    for l in &report.levels {
        let mut row = vec![
            l.level.clone(),
            l.nodes.to_string(),
            l.budget
                .loss()
                .map_or_else(|| "0".to_string(), |b| short_epsilon(&b.amount())),
            l.method.clone(),
            // A level left unmeasured has no independent estimate (nor a reference for
            // the measurement it did not get).
            l.independent
                .as_ref()
                .map_or_else(|| NOT_MEASURED.to_string(), stat),
        ];
        row.extend(l.consistent.iter().map(|v| stat(&v.emd)));
        row.push(stat(&l.bottom_up));
        row.push(
            l.omniscient
                .map_or_else(|| NOT_MEASURED.to_string(), fmt_num),
        );
        rows.push(row);
    }
    s.push_str(&table(&rows, |c| c != 0 && c != 3, true));
    if report.levels.iter().any(|l| l.mae_per_cell.is_some()) {
        let _ = writeln!(
            s,
            "\nwhat a reader of the released tables sees, cell by cell (the plan's consistent release against {truth}; docs/glossary.md):\n"
        );
        let mut rows = vec![vec![
            "level".to_string(),
            "abs. error per cell".into(),
            "groups in the wrong size cell".into(),
        ]];
        for l in &report.levels {
            rows.push(vec![
                l.level.clone(),
                l.mae_per_cell.as_ref().map_or_else(|| "–".into(), stat),
                l.relative_error
                    .as_ref()
                    .map_or_else(|| "–".into(), percent),
            ]);
        }
        s.push_str(&table(&rows, |c| c != 0, true));
    }
    let leaning: Vec<String> = report
        .levels
        .iter()
        .filter_map(|l| {
            l.own_weight.map(|w| {
                format!(
                    "{} {:.0}% (the variance model alone: {:.0}%)",
                    l.level,
                    w.own * 100.0,
                    w.model * 100.0
                )
            })
        })
        .collect();
    if !leaning.is_empty() {
        let _ = writeln!(
            s,
            "\nweight of each level's own measurement in its consistent estimate (public: from the noisy measurements): {}",
            leaning.join("; ")
        );
    }
    let covered: Vec<String> = report
        .levels
        .iter()
        .filter_map(|l| {
            l.coverage.map(|c| {
                format!(
                    "{} {} (mean width {}, mean abs. error {})",
                    l.level,
                    percent(&c.share),
                    fmt_num(c.mean_width),
                    fmt_num(c.mean_error)
                )
            })
        })
        .collect();
    if let Some(c) = report.levels.iter().find_map(|l| l.coverage) {
        let _ = writeln!(
            s,
            "\nshare of cells whose {:.0}% margin of error covered {truth} ({} bootstrap replicate{} per trial; {label}): {}",
            c.confidence * 100.0,
            c.replicates,
            if c.replicates == 1 { "" } else { "s" },
            covered.join("; ")
        );
    }
    for note in &report.notes {
        let _ = writeln!(s, "\nwarning: {note}");
    }
    s
}

/// A share over trials as a percentage, with its standard error from two trials.
pub fn percent(share: &Stat) -> String {
    if share.trials < 2 {
        format!("{:.1}%", share.mean * 100.0)
    } else {
        format!("{:.1}% ± {:.1}", share.mean * 100.0, share.se * 100.0)
    }
}

/// `coco preview --sweep`'s search: the frontier over the leaves' share, the current
/// plan and the recommendation, and why.
pub fn frontier(f: &Frontier) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}\n", f.notice);
    // Plans another clearly beat after the first round ran no more trials.
    let cut = |i: usize| f.candidates.get(i).is_some_and(|c| c.trials < f.trials);
    let first_round = f
        .candidates
        .iter()
        .map(|c| c.trials)
        .min()
        .unwrap_or(f.trials);
    let dropped = (0..f.candidates.len()).filter(|&i| cut(i)).count();
    let _ = writeln!(
        s,
        "frontier at total {} = {} ({} trial(s) per plan{}; ± one standard error): mean per-node EMD per level\n",
        f.symbol(),
        short_epsilon(&f.total_epsilon),
        f.trials,
        if dropped > 0 {
            format!(", † {first_round}")
        } else {
            String::new()
        }
    );
    let held = f.held_levels();
    if !held.is_empty() {
        let _ = writeln!(
            s,
            "held levels keep the plan's budget in every plan searched ({}); the others share the rest, and no plan leaves a level unmeasured\n",
            held.join(", ")
        );
    }
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header = vec!["leaf share".to_string(), "budgets (root first)".into()];
    header.extend(f.levels.iter().cloned());
    rows.push(header);
    for (k, p) in f.points.iter().enumerate() {
        let mark = if f.point_candidates.get(k).is_some_and(|&i| cut(i)) {
            " †"
        } else {
            ""
        };
        let mut row = vec![
            format!("{:.0}%{mark}", p.x * 100.0),
            short_budgets(&p.budgets),
        ];
        row.extend(p.consistent.iter().map(stat));
        rows.push(row);
    }
    let mut bu = vec![
        "bottom-up".to_string(),
        format!(
            "0 / … / {} ({})",
            short_epsilon(&f.total_epsilon),
            f.bottom_up_method
        ),
    ];
    bu.extend(f.bottom_up.iter().map(stat));
    rows.push(bu);
    s.push_str(&table(&rows, |c| c >= 2, true));
    if dropped > 0 {
        let _ = writeln!(
            s,
            "† after {first_round} trials another plan was better at every level by more than {} standard errors: it ran no more trials ({dropped} of {} plans)",
            coco::tradeoff::DROP_SE,
            f.candidates.len()
        );
    }
    let front = f
        .recommendation
        .as_ref()
        .map(|r| r.candidate)
        .into_iter()
        .chain(f.current)
        .collect::<Vec<_>>();
    let _ = writeln!(
        s,
        "\nsearched {} plans (each level's method and the leaves' share); the current plan and the recommendation:\n",
        f.candidates.len()
    );
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header = vec![
        "plan".to_string(),
        "budgets (root first)".into(),
        "methods".into(),
    ];
    header.extend(f.levels.iter().cloned());
    rows.push(header);
    let mut seen = Vec::new();
    for i in front {
        if seen.contains(&i) {
            continue;
        }
        seen.push(i);
        let c = &f.candidates[i];
        let what = match (
            f.current == Some(i),
            f.recommendation.as_ref().is_some_and(|r| r.candidate == i),
        ) {
            (true, true) => "current = recommended *",
            (true, false) => "current",
            _ => "recommended *",
        };
        let mut row = vec![
            what.to_string(),
            short_budgets(&c.budgets),
            c.methods.join(", "),
        ];
        row.extend(c.consistent.iter().map(stat));
        rows.push(row);
    }
    s.push_str(&table(&rows, |c| c >= 3, true));
    let cells: Vec<usize> = seen
        .iter()
        .copied()
        .filter(|&i| f.candidates[i].mae_per_cell.iter().any(Option::is_some))
        .collect();
    if !cells.is_empty() {
        let _ = writeln!(
            s,
            "\nthe same plans cell by cell: mean absolute error per cell / share of a region's groups in the wrong size cell\n"
        );
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut header = vec!["plan".to_string()];
        header.extend(f.levels.iter().cloned());
        rows.push(header);
        for i in cells {
            let c = &f.candidates[i];
            let mut row = vec![
                if f.recommendation.as_ref().is_some_and(|r| r.candidate == i) {
                    "recommended *".to_string()
                } else {
                    "current".to_string()
                },
            ];
            row.extend(c.mae_per_cell.iter().zip(&c.relative_error).map(|(m, r)| {
                format!(
                    "{} / {}",
                    m.as_ref().map_or_else(|| "–".into(), |m| fmt_num(m.mean)),
                    r.as_ref()
                        .map_or_else(|| "–".into(), |r| format!("{:.1}%", r.mean * 100.0))
                )
            }));
            rows.push(row);
        }
        s.push_str(&table(&rows, |c| c >= 1, true));
    }
    match (&f.recommendation, &f.verdict) {
        (Some(r), _) => {
            let ratios = r.ratio_texts();
            let _ = writeln!(
                s,
                "\nrecommended (*): budgets {}, methods {} — {}; error vs bottom-up per level: {}",
                short_budgets(&r.budgets),
                r.methods.join(", "),
                r.reason,
                ratios.join(", ")
            );
        }
        (None, Some(v)) => {
            let _ = writeln!(s, "\n{v}");
        }
        (None, None) => {}
    }
    s
}

/// `coco inspect`'s summary: aligned columns, thousands separators.
pub fn summary(summary: &Summary) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "Dataset {} ({})\n",
        summary.dataset, summary.directory
    ));
    out.push_str(
        "CONFIDENTIAL: computed from the true data; do not publish this summary.\n\
         The hierarchy and the group counts (G) are public; entities and group sizes are not.\n\n",
    );

    let files: Vec<Vec<String>> = summary
        .inputs
        .iter()
        .map(|f| {
            vec![
                f.path.clone(),
                format!("{} bytes", thousands(f.bytes.into())),
                format!("sha256 {}…", &f.sha256[..f.sha256.len().min(16)]),
            ]
        })
        .collect();
    out.push_str(&format!("Groups form   {}\n", summary.form_description));
    let files = table(&files, |c| c == 1, false);
    for (i, line) in files.lines().enumerate() {
        let label = if i == 0 { "Input files" } else { "" };
        out.push_str(&format!("{label:<14}{line}\n"));
    }
    out.push_str(&format!(
        "Ledger key    {}… (content digest: ε spending is keyed by it)\n",
        &summary.content_digest[..summary.content_digest.len().min(12)]
    ));
    out.push_str(&format!(
        "Fingerprint   {}… (the exact input bytes)\n\n",
        &summary.fingerprint[..summary.fingerprint.len().min(16)]
    ));

    let r = &summary.root;
    out.push_str(&format!(
        "Root {}: {} groups, {} entities, largest group {}, {} distinct sizes\n\n",
        label(&r.id, r.name.as_deref()),
        thousands(r.groups.into()),
        thousands(r.entities),
        size(r.max_size),
        thousands(r.distinct_sizes as u128),
    ));

    out.push_str("Levels\n");
    let rows: Vec<Vec<String>> = summary
        .levels
        .iter()
        .map(|l| {
            vec![
                l.name.clone(),
                thousands(l.nodes as u128),
                thousands(l.empty_nodes as u128),
                thousands(l.groups.into()),
                thousands(l.entities),
                size(l.max_size),
                thousands(l.distinct_sizes as u128),
            ]
        })
        .collect();
    let header = [
        "level",
        "nodes",
        "empty",
        "groups",
        "entities",
        "max size",
        "distinct sizes",
    ];
    let rows: Vec<Vec<String>> = std::iter::once(header.map(String::from).to_vec())
        .chain(rows)
        .collect();
    out.push_str(&indent(&table(&rows, |c| c > 0, false)));

    let below_root = summary.levels.iter().skip(1).filter(|l| l.nodes > 0);
    let mut first = true;
    for level in below_root {
        if first {
            out.push_str("\nLargest nodes by groups (G)\n");
            first = false;
        }
        let shown = level.largest.len();
        if shown < level.nodes {
            out.push_str(&format!(
                "  {} (top {shown} of {})\n",
                level.name,
                thousands(level.nodes as u128)
            ));
        } else {
            out.push_str(&format!("  {}\n", level.name));
        }
        let named = level.largest.iter().any(|n| n.name.is_some());
        let header: &[&str] = if named {
            &["id", "name", "groups", "entities", "max size"]
        } else {
            &["id", "groups", "entities", "max size"]
        };
        let rows: Vec<Vec<String>> =
            std::iter::once(header.iter().map(|h| h.to_string()).collect())
                .chain(level.largest.iter().map(|n| {
                    let mut row = vec![n.id.clone()];
                    if named {
                        row.push(n.name.clone().unwrap_or_default());
                    }
                    row.extend([
                        thousands(n.groups.into()),
                        thousands(n.entities),
                        size(n.max_size),
                    ]);
                    row
                }))
                .collect();
        let names = usize::from(named);
        out.push_str(&indent(&indent(&table(&rows, |c| c > names, false))));
    }
    out
}

/// A budget (an ε or a ρ) as a short decimal for reading (`≈` when rounded); `--json` keeps the exact text.
fn short_epsilon<U: coco::privacy::Unit>(e: &coco::privacy::Budget<U>) -> String {
    e.short(Rounding::Nearest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_columns() {
        let rows = |cells: &[[&str; 2]]| -> Vec<Vec<String>> {
            cells.iter().map(|r| r.map(String::from).to_vec()).collect()
        };
        let plain = rows(&[["id", "n"], ["a", "1"], ["long", "1,000"]]);
        assert_eq!(
            table(&plain, |c| c == 1, false),
            "id        n\na         1\nlong  1,000\n"
        );
        assert_eq!(
            table(&plain, |c| c == 1, true),
            "id        n\n----  -----\na         1\nlong  1,000\n"
        );
        // A left-aligned last column leaves no trailing spaces.
        let names = rows(&[["1", "a"], ["1,000", "long"]]);
        assert_eq!(table(&names, |c| c == 0, false), "    1  a\n1,000  long\n");
        assert_eq!(table(&[], |_| true, true), "");
    }

    #[test]
    fn summary_of_the_sample() {
        let dataset = coco::data::Dataset::load(&crate::cli::sample_dir()).unwrap();
        let text = summary(&Summary::of(&dataset));
        assert!(text.contains("CONFIDENTIAL"));
        assert!(text.contains(
            "Root ARV (Republic of Arvenia): 47,513 groups, 123,921 entities, largest group 3,406, 19 distinct sizes"
        ));
        assert!(
            text.contains("  level     nodes  empty  groups  entities  max size  distinct sizes\n")
        );
    }
}
