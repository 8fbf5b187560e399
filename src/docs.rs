//! The manual in `docs/` tested against what it describes, so it cannot drift: the
//! glossary holds [`crate::glossary::GLOSSARY`] word for word, `docs/tui.md`'s key table
//! is the shipped keymap, its captures are the snapshot tests' frames, every relative
//! link of the README and `docs/` leads to a file and heading, and every source file
//! they name exists. The module docs are held to the same: the crate's files they name
//! exist, and the published files they describe are those `docs/data-contract.md`
//! names.
//!
//! Each generated part sits between two HTML comments (invisible in the rendered page).
//! A test that finds a difference fails and says so; `COCO_UPDATE_DOCS=1 cargo test
//! --lib docs` rewrites those parts from the code instead (and nothing else).

use std::path::PathBuf;

fn doc_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(doc_path(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Tests run on several threads, and two of them may rewrite the same page
/// (`docs/tui.md`): each read-compare-write holds this lock.
static REWRITE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Checks that the file `name` holds `wanted` between `start` and the first `end` after
/// it, or rewrites it with `COCO_UPDATE_DOCS` set.
fn check_between(name: &str, start: &str, end: &str, wanted: &str) {
    let _one_at_a_time = REWRITE.lock().unwrap_or_else(|e| e.into_inner());
    let doc = read(name);
    let from = doc
        .find(start)
        .map(|s| s + start.len())
        .unwrap_or_else(|| panic!("{name}: expected {start:?}"));
    let to = doc[from..]
        .find(end)
        .map(|e| from + e)
        .unwrap_or_else(|| panic!("{name}: expected {end:?} after {start:?}"));
    if doc[from..to] == *wanted {
        return;
    }
    if std::env::var_os("COCO_UPDATE_DOCS").is_some() {
        // Written beside and renamed, so that a test reading the page meanwhile (the
        // links) sees it whole.
        let updated = format!("{}{wanted}{}", &doc[..from], &doc[to..]);
        let fresh = doc_path(&format!("{name}.rewritten"));
        std::fs::write(&fresh, updated)
            .and_then(|()| std::fs::rename(&fresh, doc_path(name)))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    } else {
        panic!(
            "{name} differs from the code between {start:?} and {end:?}: run \
             COCO_UPDATE_DOCS=1 cargo test --lib docs to rewrite that part"
        );
    }
}

#[test]
fn the_glossary_page_holds_every_entry() {
    check_between(
        "docs/glossary.md",
        "<!-- glossary: generated from src/glossary.rs -->\n",
        "<!-- end of glossary -->\n",
        &format!("\n{}", crate::glossary::markdown()),
    );
}

/// The README and every page of `docs/`, by their path from the crate's root.
fn pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(doc_path("docs"))
        .expect("docs/")
        .map(|e| {
            e.expect("docs/ entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// Pages other work writes, which the manual may link to before they exist. A link to
/// one of them is checked like any other as soon as the file is there.
const WRITTEN_ELSEWHERE: &[&str] = &["docs/development.md", "docs/uncertainty.md"];

/// The anchor GitHub gives a heading: lower case, spaces to hyphens, and every other
/// character but letters, digits, `-` and `_` dropped (`## The search: methods and the
/// split of ε` → `the-search-methods-and-the-split-of-ε`).
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// A page without its fenced code blocks: the text whose links, headings and code spans
/// mean something.
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut kept = String::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

/// The anchors of a page's headings.
fn anchors(text: &str) -> Vec<String> {
    prose(text)
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| anchor(l.trim_start_matches('#')))
        .collect()
}

/// `a/b/../c` → `a/c`, for a link's target from the page that holds it.
fn resolve(page: &str, target: &str) -> String {
    let mut parts: Vec<&str> = page.split('/').collect();
    parts.pop();
    for part in target.split('/') {
        match part {
            "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// Every relative link of the manual (`[text](target)` outside code) leads to a file
/// of the crate, and a `#anchor` to a heading of that page.
#[test]
fn the_manuals_links_lead_somewhere() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        for line in prose(&read(&page)).lines() {
            let mut rest = line;
            while let Some(i) = rest.find("](") {
                rest = &rest[i + 2..];
                let Some(end) = rest.find(')') else { break };
                let link = &rest[..end];
                rest = &rest[end..];
                if link.contains("://") || link.starts_with("mailto:") {
                    continue;
                }
                let (file, fragment) = link.split_once('#').unwrap_or((link, ""));
                let target = if file.is_empty() {
                    page.clone()
                } else {
                    resolve(&page, file)
                };
                checked += 1;
                if !doc_path(&target).exists() {
                    if !WRITTEN_ELSEWHERE.contains(&target.as_str()) {
                        broken.push(format!("{page}: {link}: no file {target}"));
                    }
                    continue;
                }
                if !fragment.is_empty() && !anchors(&read(&target)).iter().any(|a| a == fragment) {
                    broken.push(format!(
                        "{page}: {link}: no heading #{fragment} in {target}"
                    ));
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// Where the crate's own files live: a code span starting with one of these names a file.
const ROOTS: &[&str] = &[
    "src/",
    "tests/",
    "benches/",
    "assets/",
    "fuzz/",
    "sample-data/",
];

/// The files of the crate named in the code spans of `text` that do not exist, and how
/// many were checked.
fn missing_files(text: &str) -> (Vec<String>, usize) {
    let mut missing = Vec::new();
    let mut checked = 0;
    for (i, span) in text.split('`').enumerate() {
        // The odd pieces between backquotes are code spans.
        if i % 2 == 0 || !ROOTS.iter().any(|r| span.starts_with(r)) {
            continue;
        }
        // `tests/snapshots/NAME.snap`, `src/estimate/{a,b}.rs`, `src/…`: patterns, not
        // files.
        if span.contains(['{', '*', '<', '…']) || span.chars().any(|c| c.is_ascii_uppercase()) {
            continue;
        }
        let path = span.split([' ', ':']).next().unwrap_or(span);
        checked += 1;
        if !doc_path(path).exists() {
            missing.push(path.to_string());
        }
    }
    (missing, checked)
}

/// Every file of the crate the manual names in code spans (`src/…`, `tests/…`,
/// `benches/…`, `assets/…`, `fuzz/…`, `sample-data/…`) exists, so that moving or
/// renaming one cannot leave the manual pointing at nothing.
#[test]
fn the_files_the_manual_names_exist() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let (m, n) = missing_files(&prose(&read(&page)));
        missing.extend(m.into_iter().map(|p| format!("{page}: {p}")));
        checked += n;
    }
    assert!(checked > 50, "only {checked} paths found");
    assert!(
        missing.is_empty(),
        "the manual names files that do not exist:\n{}",
        missing.join("\n")
    );
}

/// Every source file of the crate, by its path from the crate's root.
fn source_files() -> Vec<String> {
    fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("a source directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).expect("under the root");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let root = doc_path("");
    let mut out = Vec::new();
    walk(&doc_path("src"), &root, &mut out);
    out.sort();
    out
}

/// The text of a source file's doc comments (`//!` and `///`), one comment line a line.
fn doc_comments(source: &str) -> String {
    let mut out = String::new();
    for line in source.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("//!").or_else(|| t.strip_prefix("///")) {
            out.push_str(rest);
            out.push('\n');
        }
    }
    out
}

/// The module docs hold to the same rule as the manual: every file of the crate they
/// name in a code span exists.
#[test]
fn the_files_module_docs_name_exist() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for file in source_files() {
        let (m, n) = missing_files(&doc_comments(&read(&file)));
        missing.extend(m.into_iter().map(|p| format!("{file}: {p}")));
        checked += n;
    }
    assert!(checked > 10, "only {checked} paths found");
    assert!(
        missing.is_empty(),
        "doc comments name files that do not exist:\n{}",
        missing.join("\n")
    );
}

/// The published and input files module docs name (`counts.csv`, `tables/<i>-<level>.csv`,
/// `manifest.json` …, in code spans) are the files the data contract (and the margins'
/// page it links to) names: a doc comment cannot describe a file by a name the contract
/// does not promise.
#[test]
fn the_files_module_docs_describe_are_in_the_contract() {
    const KINDS: &[&str] = &[".csv", ".parquet", ".json", ".jsonl", ".toml", ".txt"];
    // The contract, and the page that documents the margins' files it links to.
    let contract = prose(&read("docs/data-contract.md")) + &prose(&read("docs/uncertainty.md"));
    let promised: std::collections::BTreeSet<&str> = contract
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s)
        .collect();
    let mut unknown = Vec::new();
    let mut checked = 0;
    for file in source_files() {
        for (i, span) in doc_comments(&read(&file)).split('`').enumerate() {
            let name = span.trim();
            if i % 2 == 0
                || !KINDS.iter().any(|k| name.ends_with(k))
                || name.contains([' ', '=', '(', '"', '*', ':'])
                || ROOTS.iter().any(|r| name.starts_with(r))
                || name.starts_with('.')
            {
                continue;
            }
            checked += 1;
            // A file in a directory named by a placeholder (`dir/names.csv`) or in
            // coco's home (`~/.local/share/coco/ledger.jsonl`): its name is what counts.
            let base = match name.rsplit_once('/') {
                Some((d, base)) if d == "dir" || d.starts_with('~') => base,
                _ => name,
            };
            let in_contract = promised.contains(base);
            if !in_contract {
                unknown.push(format!("{file}: {name}"));
            }
        }
    }
    assert!(checked > 20, "only {checked} file names found");
    assert!(
        unknown.is_empty(),
        "doc comments name files docs/data-contract.md does not:\n{}",
        unknown.join("\n")
    );
}

#[cfg(feature = "tui")]
mod tui {
    use super::*;
    use crate::tui::action::Context;
    use crate::tui::keymap::Keymap;

    /// How `docs/tui.md` heads each section of the keymap.
    fn title(c: Context) -> &'static str {
        match c {
            Context::Global => "Everywhere",
            Context::Dataset => "1 Dataset",
            Context::Hierarchy => "2 Hierarchy",
            Context::Budget => "3 Budget",
            Context::Preview => "4 Preview",
            Context::Tradeoff => "5 Trade-off",
            Context::Release => "6 Release",
            Context::Help => "The help (`?`)",
            Context::Input => "Text fields",
            Context::Picker => "The dataset picker (`o`)",
            Context::Confirm => "Questions",
        }
    }

    /// The default keymap as Markdown: a table per section, in the order of
    /// `assets/keymap.toml`, with the keys as the help shows them and the action's
    /// name for a `keymap.toml` of one's own.
    fn key_tables() -> String {
        let keymap = Keymap::default();
        let mut s = String::from("\n");
        for &context in Context::ALL {
            s.push_str(&format!(
                "**{}** (`[{}]`)\n\n| keys | action | what it does |\n|---|---|---|\n",
                title(context),
                context.name()
            ));
            for b in keymap.bindings(context) {
                let keys: Vec<String> = b.keys.iter().map(|k| format!("`{k}`")).collect();
                s.push_str(&format!(
                    "| {} | `{}` | {} |\n",
                    keys.join(" "),
                    b.action.name(),
                    b.action.description()
                ));
            }
            s.push('\n');
        }
        s
    }

    #[test]
    fn the_key_table_is_the_default_keymap() {
        check_between(
            "docs/tui.md",
            "<!-- keys: generated from assets/keymap.toml -->\n",
            "<!-- end of keys -->\n",
            &key_tables(),
        );
    }

    /// Every capture in `docs/tui.md` (a text block after `<!-- capture: NAME -->`) is
    /// the snapshot `tests/tui/snapshots/NAME.snap` as the snapshot tests last accepted it.
    #[test]
    fn the_captures_are_the_snapshot_tests_frames() {
        const MARK: &str = "<!-- capture: ";
        let name = "docs/tui.md";
        let doc = read(name);
        let mut found = 0;
        let mut at = 0;
        while let Some(i) = doc[at..].find(MARK) {
            let i = at + i + MARK.len();
            let snap = &doc[i..i + doc[i..].find(" -->").expect("a capture marker ends")];
            let text = read(&format!("tests/tui/snapshots/{snap}.snap"));
            let frame = text
                .splitn(3, "---\n")
                .nth(2)
                .unwrap_or_else(|| panic!("{snap}.snap: no insta header"));
            let start = format!("{MARK}{snap} -->\n```text\n");
            check_between(name, &start, "```\n<!-- end of capture -->", frame);
            found += 1;
            at = i;
        }
        assert!(found >= 4, "{name}: {found} captures");
    }
}
