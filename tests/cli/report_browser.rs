//! Both reports of the README's first release in a real browser: headless Chromium (the
//! Debian package `chromium`) prints each to PDF, one run per report, with its console
//! on standard error, every host name resolving nowhere and a network log. Checked:
//! no console message (a blocked load, a script, a CSS error all write one), no request
//! from the page other than the file itself, the PDF's text holds every section (and
//! CONFIDENTIAL on every page of the internal report), and the public report, page and
//! PDF, holds no confidential figure. A companion run on a page that breaks the rules
//! proves the checks can fail.
//!
//! Without `chromium` (or `pdftotext`, from poppler-utils) these tests fail, naming the
//! packages, unless `COCO_SKIP_BROWSER=1` asks to skip them (each then says so on
//! standard error), as the tmux tests do with `COCO_SKIP_TMUX`; `.ci/run` installs both
//! and unsets the opt-out.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::report::FirstRelease;

/// Whether `test` is skipped for want of a browser: never when chromium and pdftotext
/// run; without them the test fails, unless the developer opts out with
/// `COCO_SKIP_BROWSER=1`.
fn skip_without_browser(test: &str) -> bool {
    let runs = |program: &str, arg: &str| {
        Command::new(program)
            .arg(arg)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if runs("chromium", "--version") && runs("pdftotext", "-v") {
        return false;
    }
    assert!(
        std::env::var_os("COCO_SKIP_BROWSER").is_some_and(|v| v == "1"),
        "{test} needs chromium and pdftotext, which are not both installed: install them \
         (apt-get install chromium poppler-utils), or set COCO_SKIP_BROWSER=1 to skip the \
         tests that render the reports in a browser"
    );
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("SKIPPED {test}: chromium or pdftotext is not installed and COCO_SKIP_BROWSER=1\n")
            .as_bytes(),
    );
    true
}

/// What one headless Chromium run saw of a page.
struct Rendered {
    /// The console's messages (Chromium's log lines `INFO:CONSOLE`).
    console: Vec<String>,
    /// Every URL the page asked for (the network log's requests whose initiator is the
    /// page, not the browser's own services).
    requests: Vec<String>,
    /// The PDF's text, one entry per page.
    pages: Vec<String>,
}

/// Prints `page` to PDF in headless Chromium, in a profile of its own under `work`.
/// `text` with every run of white space made one space.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn render(page: &Path, work: &Path) -> Rendered {
    let name = page.file_stem().unwrap().to_string_lossy().into_owned();
    let pdf = work.join(format!("{name}.pdf"));
    let net = work.join(format!("{name}-net.json"));
    let o = Command::new("chromium")
        .args([
            "--headless",
            // As root (CI containers), Chromium runs only without its sandbox.
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--no-first-run",
            "--disable-default-apps",
            "--enable-logging=stderr",
            "--v=0",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--no-pdf-header-footer",
        ])
        .arg(format!(
            "--user-data-dir={}",
            work.join(format!("{name}-profile")).display()
        ))
        .arg(format!("--log-net-log={}", net.display()))
        .arg(format!("--print-to-pdf={}", pdf.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        o.status.success() && pdf.exists(),
        "chromium failed: {stderr}"
    );
    let console = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    let log: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&net).expect("the network log")).unwrap();
    let mut requests: Vec<String> = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| {
            let p = &e["params"];
            let initiator = p["initiator"].as_str()?;
            // The browser's own services say "not an origin"; the page's requests name it.
            (initiator != "not an origin").then(|| p["url"].as_str().unwrap_or("").to_string())
        })
        .collect();
    requests.sort();
    requests.dedup();
    let text = Command::new("pdftotext")
        .args(["-layout"])
        .arg(&pdf)
        .arg("-")
        .output()
        .unwrap();
    assert!(text.status.success());
    let pages: Vec<String> = String::from_utf8_lossy(&text.stdout)
        .split('\u{c}')
        .filter(|p| !p.trim().is_empty())
        .map(str::to_string)
        .collect();
    Rendered {
        console,
        requests,
        pages,
    }
}

/// The page's requests: only the page itself, as a file.
fn assert_nothing_leaves(r: &Rendered, page: &Path) {
    for url in &r.requests {
        assert!(
            url.starts_with("file://")
                && url.ends_with(&*page.file_name().unwrap().to_string_lossy()),
            "the page asked for {url}"
        );
    }
    assert!(r.console.is_empty(), "console: {:#?}", r.console);
}

#[test]
fn both_reports_render_in_chromium_without_a_request_or_a_console_message() {
    let test = "both_reports_render_in_chromium_without_a_request_or_a_console_message";
    if skip_without_browser(test) {
        return;
    }
    let r = FirstRelease::new();
    let work = r.tmp.path().join("browser");
    std::fs::create_dir_all(&work).unwrap();

    let public = render(&r.public, &work);
    assert_nothing_leaves(&public, &r.public);
    assert!(public.pages.len() > 3, "{} pages", public.pages.len());
    let text = public.pages.join("\n");
    for heading in [
        "Count-of-counts release: report",
        "What was released",
        "Privacy",
        "The plan and its reasons",
        "The consistency step",
        "Checks",
        "What the margins of error mean",
        "Level 1: country",
        "Level 2: province",
        "Level 3: district",
        "Released counts of ARV/03/0301, with their margins of error",
        "How wide the intervals are",
        "Summary statistics of ARV/03/0301",
    ] {
        assert!(text.contains(heading), "the public PDF lacks {heading:?}");
    }
    assert!(!text.contains("CONFIDENTIAL"));
    // Each level starts a page.
    for level in ["Level 1: country", "Level 2: province", "Level 3: district"] {
        assert!(
            public
                .pages
                .iter()
                .any(|p| p.trim_start().starts_with(level)),
            "{level} does not start a page"
        );
    }
    let html = r.public_html();
    // A table cell may wrap in print ("98.5 ±" above "17.5"): figures are looked for
    // in the text with every run of white space made one space.
    let spaced = flat(&text);
    for figure in r.confidential_figures() {
        assert!(
            !spaced.contains(&figure) && !html.contains(&figure),
            "{figure:?}"
        );
    }

    let internal = render(&r.internal, &work);
    assert_nothing_leaves(&internal, &r.internal);
    let text = internal.pages.join("\n");
    for heading in [
        "CONFIDENTIAL: the ledger's history of this dataset",
        "CONFIDENTIAL: the preview",
        "CONFIDENTIAL: why this plan",
    ] {
        assert!(text.contains(heading), "the internal PDF lacks {heading:?}");
    }
    for (i, page) in internal.pages.iter().enumerate() {
        assert!(
            page.matches("CONFIDENTIAL").count() >= 2,
            "page {} of {} of the internal report: {page}",
            i + 1,
            internal.pages.len()
        );
    }
    let spaced = flat(&text);
    for figure in r.confidential_figures() {
        assert!(
            spaced.contains(&figure),
            "the internal PDF lacks {figure:?}"
        );
    }
}

#[test]
fn the_browser_checks_catch_a_page_that_loads_from_the_network_or_logs() {
    let test = "the_browser_checks_catch_a_page_that_loads_from_the_network_or_logs";
    if skip_without_browser(test) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let page: PathBuf = work.path().join("leaky.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><head><title>x</title></head><body><p>x</p>\
         <img src=\"https://example.com/a.png\" alt=\"\"><script>console.error('boom')</script>\
         </body></html>",
    )
    .unwrap();
    let r = render(&page, work.path());
    assert!(
        r.requests.iter().any(|u| u == "https://example.com/a.png"),
        "{:?}",
        r.requests
    );
    assert!(
        r.console.iter().any(|l| l.contains("boom")),
        "{:?}",
        r.console
    );
}
