//! The page around a report's sections: escaping, the head (styles, the content
//! security policy, the report's kind), the CONFIDENTIAL marks of an internal report.
//!
//! Everything a report needs is in the file: the styles are inline, the charts are
//! inline SVG, and the page's own Content-Security-Policy allows nothing else (no
//! script, no font, no image other than `data:`, no connection), so that a browser
//! opening it offline, or a reviewer's mail client, loads nothing from anywhere.

/// The content security policy every report carries in a `<meta>`.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'";

/// The `<meta name="coco-report">` that says which kind a report is: `coco verify`
/// refuses a release directory holding an HTML file whose content says `internal`.
pub use crate::release::outputs::verify::REPORT_KIND_META as KIND_META;

/// Which report a page is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Built from the published files only: publishable with them.
    Public,
    /// Adds what only the agency may see (the ledger, confidential previews).
    Internal,
}

impl Kind {
    /// The content of the page's [`KIND_META`].
    pub fn name(self) -> &'static str {
        match self {
            Kind::Public => "public",
            Kind::Internal => "internal",
        }
    }
}

/// Text for HTML content or a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The words every page of an internal report carries, on screen and in print.
pub const CONFIDENTIAL: &str =
    "CONFIDENTIAL — internal to the agency: ledger and confidential diagnostics; never publish";

/// The styles. Print: each level starts a page, no figure, table row or paragraph is
/// cut, and an internal report's mark is `position: fixed`, which a browser repeats on
/// every printed page (with room kept for it by the page margins).
const STYLE: &str = r#"
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
  margin: 0 auto; max-width: 60rem; padding: 1rem 1.5rem 3rem; color: #1a1a1a; background: #fff;
  line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.3rem; border-bottom: 1px solid #bbb; padding-bottom: 0.2rem; margin-top: 2rem; }
h3 { font-size: 1.05rem; margin-top: 1.4rem; }
table { border-collapse: collapse; margin: 0.6rem 0 1rem; font-size: 0.85rem; }
th, td { border: 1px solid #ccc; padding: 0.15rem 0.45rem; text-align: right; vertical-align: top; }
th { background: #f0f0f0; }
td.text, th.text, td:has(> span.text) { text-align: left; }
/* A figure and its margin ("57.3 ± 4.53") never wrap apart. */
td:not(.text):not(:has(> span.text)) { white-space: nowrap; }
caption { caption-side: top; text-align: left; font-weight: 600; padding-bottom: 0.2rem; }
figure { margin: 1rem 0; }
figcaption { font-size: 0.85rem; color: #333; }
svg { display: block; max-width: 100%; height: auto; }
svg text { font-family: inherit; font-size: 11px; fill: #222; }
.bar { fill: #4a78b5; }
.bar.alt { fill: #d08a2c; }
.interval { stroke: #111; stroke-width: 1.2; }
.axis { stroke: #555; stroke-width: 1; }
.grid { stroke: #e3e3e3; stroke-width: 1; }
.line { fill: none; stroke-width: 2; }
.cap { stroke: #b22; stroke-width: 1.5; stroke-dasharray: 6 4; }
.ref { stroke: #666; stroke-width: 1.5; stroke-dasharray: 4 3; fill: none; }
.note { font-size: 0.9rem; color: #333; }
.ok { color: #176b2c; }
.failed { color: #a11; font-weight: 600; }
.confidential-banner { border: 3px solid #a11; color: #a11; font-weight: 700; padding: 0.5rem 0.8rem;
  margin: 0.5rem 0 1rem; text-align: center; }
.confidential-mark { position: fixed; left: 0; right: 0; background: #a11; color: #fff;
  font-weight: 700; font-size: 0.8rem; text-align: center; padding: 0.15rem; z-index: 10; }
.confidential-mark.top { top: 0; }
.confidential-mark.bottom { bottom: 0; }
.confidential-watermark { display: none; }
body.internal { padding-top: 2rem; padding-bottom: 2.5rem; }
@page { margin: 1.6cm 1.4cm; }
@media print {
  body { max-width: none; padding: 0; font-size: 10pt; }
  body.internal { padding: 0; }
  section.level, section.confidential { break-before: page; }
  svg, figcaption, tr, p, li, .confidential-banner { break-inside: avoid; }
  svg { break-after: avoid; }
  h2, h3 { break-after: avoid; }
  .confidential-mark { display: none; }
  .confidential-watermark { display: block; position: fixed; top: 45%; left: 0; right: 0;
    text-align: center; font-size: 64pt; font-weight: 700; color: rgba(170, 17, 17, 0.12);
    transform: rotate(-30deg); z-index: -1; }
  .confidential-banner { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"#;

/// An internal report's printed pages: the mark in the page's margin boxes, above and
/// below every page's content (where a browser draws page margin boxes), beside the
/// watermark that [`STYLE`] repeats on every page in any browser.
const INTERNAL_PRINT: &str = r#"
@page {
  @top-center { content: "CONFIDENTIAL — internal to the agency; never publish"; color: #a11;
    font-weight: 700; font-size: 9pt; }
  @bottom-center { content: "CONFIDENTIAL — page " counter(page) " of " counter(pages); color: #a11;
    font-weight: 700; font-size: 9pt; }
}
"#;

/// A whole page: `title`, the report's `kind` and its `body` (already HTML).
pub fn page(kind: Kind, title: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + STYLE.len() + 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str(&format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{CONTENT_SECURITY_POLICY}\">\n"
    ));
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!(
        "<meta name=\"{KIND_META}\" content=\"{}\">\n",
        kind.name()
    ));
    out.push_str("<meta name=\"generator\" content=\"coco\">\n");
    let shown_title = match kind {
        Kind::Public => escape(title),
        Kind::Internal => format!("CONFIDENTIAL — {}", escape(title)),
    };
    out.push_str(&format!("<title>{shown_title}</title>\n"));
    let extra = match kind {
        Kind::Public => "",
        Kind::Internal => INTERNAL_PRINT,
    };
    out.push_str(&format!("<style>{STYLE}{extra}</style>\n</head>\n"));
    match kind {
        Kind::Public => out.push_str("<body class=\"public\">\n"),
        Kind::Internal => {
            out.push_str("<body class=\"internal\">\n");
            for place in ["top", "bottom"] {
                out.push_str(&format!(
                    "<div class=\"confidential-mark {place}\" aria-hidden=\"true\">{}</div>\n",
                    escape(CONFIDENTIAL)
                ));
            }
            out.push_str(&format!(
                "<div class=\"confidential-watermark\" aria-hidden=\"true\">CONFIDENTIAL</div>\n\
                 <div class=\"confidential-banner\" role=\"note\">{}</div>\n",
                escape(CONFIDENTIAL)
            ));
        }
    }
    out.push_str(body);
    out.push_str("\n</body>\n</html>\n");
    out
}

/// A table: `caption`, header cells and rows of cells (already escaped or HTML). The
/// first column is text (left-aligned), the rest figures.
pub fn table(caption: &str, header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = String::from("<table>\n");
    if !caption.is_empty() {
        out.push_str(&format!("<caption>{}</caption>\n", escape(caption)));
    }
    out.push_str("<thead><tr>");
    for (i, h) in header.iter().enumerate() {
        let class = if i == 0 { " class=\"text\"" } else { "" };
        out.push_str(&format!("<th scope=\"col\"{class}>{}</th>", escape(h)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            if i == 0 {
                out.push_str(&format!("<th scope=\"row\" class=\"text\">{cell}</th>"));
            } else {
                out.push_str(&format!("<td>{cell}</td>"));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_html_reads_as_markup() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn an_internal_page_says_confidential_three_times_and_names_its_kind() {
        let p = page(Kind::Internal, "t", "<p>x</p>");
        assert_eq!(p.matches(CONFIDENTIAL).count(), 3, "{p}");
        assert!(p.contains("<meta name=\"coco-report\" content=\"internal\">"));
        let p = page(Kind::Public, "t", "<p>x</p>");
        assert!(!p.contains("CONFIDENTIAL"));
        assert!(p.contains("<meta name=\"coco-report\" content=\"public\">"));
    }
}
