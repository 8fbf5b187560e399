//! `coco report` through the real binary, from the README's first release: the public
//! report (self-contained, every section, every chart with its table and text
//! alternative, nothing confidential), the internal one (the ledger, a saved preview
//! and a saved search, CONFIDENTIAL throughout), where they may be written, `coco
//! verify` refusing a release directory that holds an internal report, and the
//! ledger read fail-closed. The same reports in a real browser: `report_browser.rs`.

use std::path::{Path, PathBuf};

use crate::common::cli::{coco, s, sample, text};

/// The README's first release (a plan from public figures, one draw) and both reports:
/// the public one, and the internal one with a preview of the confidential data.
pub struct FirstRelease {
    pub tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub release: PathBuf,
    pub public: PathBuf,
    pub internal: PathBuf,
    /// The confidential preview the internal report shows (`coco preview --json`).
    pub preview: PathBuf,
}

impl FirstRelease {
    pub fn new() -> FirstRelease {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let plan = tmp.path().join("plan.toml");
        let release = tmp.path().join("my-release");
        let ok = |args: &[&str]| {
            let o = coco(args, &home);
            assert!(o.status.success(), "coco {args:?}: {}", text(&o));
            o
        };
        ok(&["plan", &s(&sample()), "--out", &s(&plan)]);
        ok(&[
            "release",
            &s(&sample()),
            "--config",
            &s(&plan),
            "--out",
            &s(&release),
        ]);
        let preview = tmp.path().join("preview.json");
        let o = ok(&[
            "preview",
            &s(&sample()),
            "--config",
            &s(&plan),
            "--trials",
            "2",
            "--json",
        ]);
        std::fs::write(&preview, &o.stdout).unwrap();
        let public = tmp.path().join("my-release-report.html");
        let o = ok(&["report", &s(&release), "--out", &s(&public)]);
        assert!(text(&o).contains("the public report"), "{}", text(&o));
        let internal = tmp.path().join("internal.html");
        let o = ok(&[
            "report",
            &s(&release),
            "--internal",
            "--preview",
            &s(&preview),
            "--out",
            &s(&internal),
        ]);
        assert!(text(&o).contains("CONFIDENTIAL"), "{}", text(&o));
        FirstRelease {
            tmp,
            home,
            release,
            public,
            internal,
            preview,
        }
    }

    pub fn public_html(&self) -> String {
        std::fs::read_to_string(&self.public).unwrap()
    }

    pub fn internal_html(&self) -> String {
        std::fs::read_to_string(&self.internal).unwrap()
    }

    /// Figures only the agency may see: the confidential preview's errors as the
    /// internal report writes them, the ledger's dataset digest and directory, and
    /// COCO_HOME. Each must be in the internal report (else the search for it proves
    /// nothing) and none in the public one.
    pub fn confidential_figures(&self) -> Vec<String> {
        let preview: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&self.preview).unwrap()).unwrap();
        let mut figures = Vec::new();
        for level in preview["levels"].as_array().unwrap() {
            for e in [
                &level["independent"],
                &level["bottom_up"],
                &level["consistent"][0]["emd"],
            ] {
                let (mean, se) = (e["mean"].as_f64().unwrap(), e["se"].as_f64().unwrap());
                figures.push(format!("{} ± {}", two(mean), two(se)));
            }
        }
        let ledger = coco(&["ledger", "--json"], &self.home);
        let ledger: serde_json::Value = serde_json::from_slice(&ledger.stdout).unwrap();
        let dataset = &ledger["datasets"][0];
        figures.push(dataset["dataset"].as_str().unwrap().to_string());
        figures.push(self.home.display().to_string());
        figures
    }
}

/// A figure as the reports write it with two decimals (trailing zeros dropped).
fn two(v: f64) -> String {
    let t = format!("{v:.2}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The structure of a page: its headings, the ids of its sections and figures, and the
/// header row of each table (not the figures, which change with every draw). The table
/// of sizes beyond a chart's width is left out: whether the noise puts a group there
/// changes from draw to draw.
pub fn structure(html: &str) -> String {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        rest = &rest[i..];
        let tag_end = rest.find('>').unwrap_or(rest.len());
        let tag = &rest[..tag_end];
        let inner = |name: &str| {
            let close = format!("</{name}>");
            let end = rest.find(&close).unwrap_or(tag_end);
            strip_tags(&rest[tag_end + 1..end])
        };
        for h in ["h1", "h2", "h3"] {
            if tag.starts_with(&format!("<{h}")) {
                out.push(format!("{h} {}", inner(h)));
            }
        }
        if tag.starts_with("<section") || tag.starts_with("<figure") || tag.starts_with("<header") {
            let id = tag
                .split("id=\"")
                .nth(1)
                .and_then(|t| t.split('"').next())
                .unwrap_or("");
            out.push(format!(
                "{} #{id}",
                &tag[1..].split(' ').next().unwrap_or("")
            ));
        }
        if tag.starts_with("<caption") {
            out.push(format!("  caption {}", inner("caption")));
        }
        if tag.starts_with("<thead") {
            let end = rest.find("</thead>").unwrap();
            let cells: Vec<String> = rest[..end]
                .split("<th ")
                .skip(1)
                .map(|c| strip_tags(&format!("<th {c}")))
                .collect();
            out.push(format!("  columns {}", cells.join(" | ")));
        }
        rest = &rest[1..];
    }
    // Drop the conditional table of sizes beyond the chart (its caption and columns).
    let mut kept = Vec::new();
    let mut skip = 0;
    for line in out {
        if line.starts_with("  caption Sizes above") {
            skip = 1;
            continue;
        }
        if skip > 0 {
            skip -= 1;
            continue;
        }
        kept.push(line);
    }
    kept.join("\n")
}

fn strip_tags(s: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in s.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every `<svg>` of a page: its opening tag.
pub fn svgs(html: &str) -> Vec<&str> {
    html.match_indices("<svg")
        .map(|(i, _)| &html[i..i + html[i..].find('>').unwrap()])
        .collect()
}

/// What a self-contained page must be: its own CSP, no script, no URL to load, every
/// chart sized with a text alternative and followed by its table.
pub fn assert_self_contained(html: &str) {
    assert!(html.contains(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    ));
    let lower = html.to_lowercase();
    for forbidden in [
        "<script",
        "http:",
        "https:",
        "src=",
        "@import",
        "url(",
        "<link",
        "<iframe",
        "<img",
        "<object",
        "<embed",
        "@font-face",
        "//",
    ] {
        assert!(!lower.contains(forbidden), "the page holds {forbidden:?}");
    }
    // Links go to the page's own sections only.
    for (i, _) in html.match_indices("href=\"") {
        assert!(html[i + 6..].starts_with('#'), "{}", &html[i..i + 40]);
    }
    let svgs = svgs(html);
    assert!(!svgs.is_empty());
    for svg in &svgs {
        assert!(svg.contains("role=\"img\""), "{svg}");
        assert!(svg.contains("aria-labelledby="), "{svg}");
        for attr in ["width=\"", "height=\""] {
            let v: f64 = svg
                .split(attr)
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(v > 0.0, "{svg}");
        }
        let vb: Vec<f64> = svg
            .split("viewBox=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .split(' ')
            .map(|x| x.parse().unwrap())
            .collect();
        assert!(vb.len() == 4 && vb[2] > 0.0 && vb[3] > 0.0, "{svg}");
    }
    // Every figure: a drawing with its title and desc, then its table.
    let figures: Vec<&str> = html
        .split("<figure")
        .skip(1)
        .map(|f| &f[..f.find("</figure>").unwrap()])
        .collect();
    assert_eq!(figures.len(), svgs.len());
    for f in figures {
        assert!(f.contains("<title id=") && f.contains("<desc id="), "{f}");
        let svg_end = f.find("</svg>").unwrap();
        assert!(
            f[svg_end..].contains("<table>"),
            "a chart without its table: {f}"
        );
    }
}

#[test]
fn the_public_report_of_the_first_release_is_self_contained_and_says_what_was_released() {
    let r = FirstRelease::new();
    let html = r.public_html();
    assert_self_contained(&html);
    assert!(html.contains("<meta name=\"coco-report\" content=\"public\">"));
    for id in [
        "released",
        "privacy",
        "plan",
        "consistency",
        "checks",
        "margins",
        "level-0",
        "level-1",
        "level-2",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "no section {id}");
    }
    // Each level: its largest region's counts with intervals, the widths, the summary.
    for i in 0..3 {
        for figure in ["counts", "widths"] {
            assert!(html.contains(&format!("<figure id=\"level-{i}-{figure}\">")));
        }
    }
    for text in [
        "Pure ε-differential privacy with total ε = 1.",
        "<th scope=\"row\" class=\"text\">district</th><td>ε = 1/3</td>",
        "tuning = \"public-default\"",
        "hc + tail: regions hold a median of 358 groups (the largest 6,336)",
        "wls: ",
        "<span class=\"ok\">passed</span>",
        "coco 0.1.0",
        "90% interval",
        "bootstrap replicates",
        "coverage",
        "<code>coco margins</code>",
        "Statistics of ARV/03 with 90% intervals",
        "mean_size",
    ] {
        assert!(html.contains(text), "no {text:?}");
    }
    assert_eq!(html.matches("<span class=\"ok\">passed</span>").count(), 5);
    assert!(!html.contains("CONFIDENTIAL"));
    let internal = r.internal_html();
    for figure in r.confidential_figures() {
        assert!(
            internal.contains(&figure),
            "the internal report lacks {figure:?}"
        );
        assert!(
            !html.contains(&figure),
            "the public report holds {figure:?}"
        );
    }
    insta::assert_snapshot!("public_report_structure", structure(&html));
    // The release verifies with its report beside it.
    let o = coco(&["verify", &s(&r.release)], &r.home);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn the_internal_report_adds_the_ledger_and_the_previews_and_says_confidential_throughout() {
    let r = FirstRelease::new();
    let html = r.internal_html();
    assert_self_contained(&html);
    assert!(html.contains("<meta name=\"coco-report\" content=\"internal\">"));
    assert!(html.contains("<title>CONFIDENTIAL"));
    // A banner, a mark at the top and the bottom of the screen, and in print the page
    // margins' mark and a watermark on every page.
    assert!(
        html.matches("CONFIDENTIAL — internal to the agency")
            .count()
            >= 3
    );
    assert!(html.contains("@top-center { content: \"CONFIDENTIAL"));
    assert!(html.contains("@bottom-center { content: \"CONFIDENTIAL"));
    assert!(html.contains("<div class=\"confidential-watermark\""));
    for id in ["ledger", "preview", "why", "ledger-spent", "preview-errors"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "no {id}");
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(r.release.join("manifest.json")).unwrap()).unwrap();
    let draw = manifest["ledger_entry"].as_str().unwrap();
    assert!(html.contains(&format!("{draw}</td>")), "the draw's line");
    assert!(html.contains("1 (this release)"));
    assert!(html.contains("No cap is set on this dataset"));
    insta::assert_snapshot!("internal_report_structure", structure(&html));

    // A cap is drawn against; a saved search shows every plan compared, the frontier
    // and the recommendation.
    let o = coco(&["ledger", "set-cap", &s(&sample()), "3"], &r.home);
    assert!(o.status.success(), "{}", text(&o));
    let search = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/sweep.json");
    let out = r.tmp.path().join("search.html");
    let o = coco(
        &[
            "report",
            &s(&r.release),
            "--internal",
            "--preview",
            &s(&search),
            "--out",
            &s(&out),
        ],
        &r.home,
    );
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    assert_self_contained(&html);
    assert!(html.contains("The cap that binds: ε = 3."));
    assert!(html.contains("<polyline class=\"ref\""), "the cap's line");
    for l in 0..3 {
        assert!(html.contains(&format!("<figure id=\"search-{l}-plans\">")));
        assert!(html.contains(&format!("<figure id=\"search-{l}-frontier\">")));
    }
    assert!(html.contains("#6 (recommended)") && html.contains("#1 (current)"));
    assert!(html.contains("The search recommended budgets 0.25, 0.25, 0.5"));
}

#[test]
fn a_previews_error_per_cell_and_relative_error_are_shown_when_the_file_has_them() {
    let r = FirstRelease::new();
    let mut preview: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&r.preview).unwrap()).unwrap();
    for level in preview["levels"].as_array_mut().unwrap() {
        level["mae_per_cell"] = serde_json::json!({"mean": 12.345, "se": 0.5});
        level["relative_error"] = serde_json::json!({"mean": 0.0123, "se": 0.001});
    }
    let with = r.tmp.path().join("with.json");
    std::fs::write(&with, serde_json::to_vec(&preview).unwrap()).unwrap();
    let out = r.tmp.path().join("with.html");
    let o = coco(
        &[
            "report",
            &s(&r.release),
            "--internal",
            "--preview",
            &s(&with),
            "--out",
            &s(&out),
        ],
        &r.home,
    );
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("mean abs. error per cell") && html.contains("12.35 ± 0.5"));
    assert!(html.contains("relative error") && html.contains("0.01 ± 0"));
    // Without them (a preview saved by a coco before they existed), no such columns.
    for level in preview["levels"].as_array_mut().unwrap() {
        let level = level.as_object_mut().unwrap();
        level.remove("mae_per_cell");
        level.remove("relative_error");
    }
    let without = r.tmp.path().join("without.json");
    std::fs::write(&without, serde_json::to_vec(&preview).unwrap()).unwrap();
    let out = r.tmp.path().join("without.html");
    let o = coco(
        &[
            "report",
            &s(&r.release),
            "--internal",
            "--preview",
            &s(&without),
            "--out",
            &s(&out),
        ],
        &r.home,
    );
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(!html.contains("mean abs. error per cell"));
}

#[test]
fn a_report_is_refused_inside_a_release_directory_and_verify_refuses_an_internal_one_there() {
    let r = FirstRelease::new();
    for (args, words) in [
        (vec!["--internal"], "an internal report is CONFIDENTIAL"),
        (
            vec![],
            "coco verify refuses a file the manifest does not list",
        ),
    ] {
        for out in [
            r.release.join("report.html"),
            r.release.join("tables/report.html"),
        ] {
            let mut all = vec![
                "report",
                r.release.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ];
            all.extend(args.iter().copied());
            let o = coco(&all, &r.home);
            assert_eq!(o.status.code(), Some(4), "{}", text(&o));
            assert!(
                text(&o).contains("inside the release directory"),
                "{}",
                text(&o)
            );
            assert!(text(&o).contains(words), "{}", text(&o));
            assert!(!out.exists());
        }
    }
    // Copied in by hand, an internal report makes verify fail, named as such.
    std::fs::copy(&r.internal, r.release.join("board.html")).unwrap();
    let o = coco(&["verify", &s(&r.release)], &r.home);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("board.html: an internal report of coco (CONFIDENTIAL"),
        "{}",
        text(&o)
    );
    std::fs::remove_file(r.release.join("board.html")).unwrap();
    // A public one is not listed either: verify refuses it too (publish it beside).
    std::fs::copy(&r.public, r.release.join("report.html")).unwrap();
    let o = coco(&["verify", &s(&r.release)], &r.home);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("report.html: not listed in manifest.json"),
        "{}",
        text(&o)
    );
}

#[test]
fn the_internal_report_reads_the_ledger_fail_closed_and_the_public_one_never_reads_it() {
    let r = FirstRelease::new();
    let ledger = r.home.join("ledger.jsonl");
    let mut lines = std::fs::read_to_string(&ledger).unwrap();
    lines.push_str("{not a ledger line}\n");
    std::fs::write(&ledger, lines).unwrap();
    let out = r.tmp.path().join("again.html");
    let o = coco(
        &["report", &s(&r.release), "--internal", "--out", &s(&out)],
        &r.home,
    );
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(text(&o).contains("ledger.jsonl"), "{}", text(&o));
    assert!(!out.exists());
    // The public report reads the published files only: a broken ledger (or none) does
    // not matter to it.
    let o = coco(
        &["report", &s(&r.release), "--out", &s(&out)],
        &r.tmp.path().join("no-home"),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        !r.tmp.path().join("no-home").exists(),
        "no ledger home was made"
    );
}

#[test]
fn a_preview_file_that_is_not_a_preview_is_refused_naming_it() {
    let r = FirstRelease::new();
    let bad = r.tmp.path().join("bad.json");
    std::fs::write(&bad, r#"{"levels": 3}"#).unwrap();
    let out = r.tmp.path().join("x.html");
    let o = coco(
        &[
            "report",
            &s(&r.release),
            "--internal",
            "--preview",
            &s(&bad),
            "--out",
            &s(&out),
        ],
        &r.home,
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("bad.json") && text(&o).contains("coco preview"),
        "{}",
        text(&o)
    );
    let o = coco(
        &[
            "report",
            &s(&r.tmp.path().join("nowhere")),
            "--out",
            &s(&out),
        ],
        &r.home,
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("manifest.json"), "{}", text(&o));
}

/// A release written in Parquet only gets the same report as its CSV twin (its margins
/// read from `uncertainty.parquet` and `summary.parquet`); a release written without
/// margins of error is refused with a message that says so.
#[test]
fn a_parquet_release_gets_the_same_report_and_one_without_margins_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let plan = tmp.path().join("plan.toml");
    let ok = |args: &[&str]| {
        let o = coco(args, &home);
        assert!(o.status.success(), "coco {args:?}: {}", text(&o));
    };
    ok(&["plan", &s(&sample()), "--out", &s(&plan)]);
    let both = tmp.path().join("both");
    ok(&[
        "release",
        &s(&sample()),
        "--config",
        &s(&plan),
        "--out",
        &s(&both),
        "--format",
        "both",
        "--seed",
        "5",
        "--not-private",
    ]);
    // The same draw in Parquet only: the Parquet files of the CSV-and-Parquet release,
    // with a manifest listing them alone, is what --format parquet writes.
    let parquet = tmp.path().join("parquet");
    ok(&[
        "release",
        &s(&sample()),
        "--config",
        &s(&plan),
        "--out",
        &s(&parquet),
        "--format",
        "parquet",
        "--seed",
        "5",
        "--not-private",
    ]);
    assert!(!parquet.join("uncertainty.csv").exists());
    let report = |release: &Path, name: &str| {
        let out = tmp.path().join(name);
        ok(&["report", &s(release), "--out", &s(&out)]);
        std::fs::read_to_string(out).unwrap()
    };
    let from_csv = report(&both, "both.html");
    let from_parquet = report(&parquet, "parquet.html");
    // The two pages differ only where they name their release directory and its files.
    let mask = |html: &str, dir: &str| html.replace(dir, "RELEASE");
    let (a, b) = (mask(&from_csv, "both"), mask(&from_parquet, "parquet"));
    let strip = |html: &str| -> Vec<String> {
        html.lines()
            .filter(|l| !l.contains(".csv") && !l.contains(".parquet") && !l.contains("format"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(strip(&a), strip(&b));
    assert!(
        from_parquet.contains("<td>"),
        "the Parquet release's report has tables"
    );

    let none = tmp.path().join("none");
    ok(&[
        "release",
        &s(&sample()),
        "--config",
        &s(&plan),
        "--out",
        &s(&none),
        "--uncertainty",
        "none",
    ]);
    let o = coco(
        &[
            "report",
            &s(&none),
            "--out",
            &s(&tmp.path().join("none.html")),
        ],
        &home,
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("no margins of error"), "{}", text(&o));
    assert!(!tmp.path().join("none.html").exists());
}
