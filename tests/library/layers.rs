//! The library's modules form layers without cycles (docs/README.md): among the
//! top-level modules, and among `release`'s (`plan`, `ledger`, `pipeline`, `margins`,
//! `outputs`, `transaction`) and `release::outputs`'s. Read from the source: each file's
//! `crate::…` paths and `super::…` paths outside comments and test modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a source file: `src/release/outputs/export.rs` is
/// `["release", "outputs", "export"]`; a `mod.rs` is its directory's module.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix("src").unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|p| p == "mod" || p == "lib" || p == "main")
    {
        parts.pop();
    }
    parts
}

/// The code of a file without comments and without its test module (a trailing
/// `#[cfg(test)] mod …` block, and files named `*tests.rs`).
fn code_of(file: &Path) -> String {
    let name = file.file_name().unwrap().to_string_lossy();
    if name.ends_with("tests.rs") {
        return String::new();
    }
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The modules named after `prefix` in `code` (`crate::release::plan::X` with prefix
/// `crate::release::` gives `plan`).
fn names_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().last();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

/// A cycle of `graph`, if it has one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(node) {
            Some(1) => {
                let start = path.iter().position(|n| n == node).unwrap();
                let mut c = path[start..].to_vec();
                c.push(node.to_string());
                return Some(c);
            }
            Some(2) => return None,
            _ => {}
        }
        state.insert(node.to_string(), 1);
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if let Some(c) = visit(node, graph, &mut state, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

/// The dependencies among the children of module `parent` (`[]`: the top level).
fn graph_under(parent: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    let prefix = format!(
        "crate::{}",
        parent.iter().map(|p| format!("{p}::")).collect::<String>()
    );
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let module = module_of(&file);
        if module.len() <= parent.len() || module[..parent.len()] != *parent {
            continue;
        }
        let me = module[parent.len()].clone();
        let code = code_of(&file);
        let mut deps = names_after(&code, &prefix);
        // `super::x` from a direct child of `parent` (a file of its own, or the
        // `mod.rs` of a directory) names a sibling.
        let depth = module.len() - parent.len();
        let is_dir_module = file.ends_with("mod.rs");
        if depth == 1 && !is_dir_module {
            deps.extend(names_after(&code, "super::"));
        }
        if depth == 2 && !is_dir_module {
            deps.extend(names_after(&code, "super::super::"));
        }
        deps.remove(&me);
        graph.entry(me).or_default().extend(deps);
    }
    let known: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| known.contains(d));
    }
    graph
}

/// The terminal UI's `app` (its state and `update`) hands each action and each result
/// of background work to the screen or controller it concerns, which reads and changes
/// the `App`: the Elm architecture's update, the only edges allowed against the layers.
/// Any other cycle in `tui` fails.
const UPDATE_DISPATCH: &[(&str, &str)] = &[("app", "screens"), ("app", "proxy")];

/// Every module of the crate that is a directory (`[]`: the crate itself).
fn directory_modules() -> Vec<Vec<String>> {
    fn walk(dir: &Path, module: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(module.clone());
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        entries.sort();
        for sub in entries {
            module.push(sub.file_name().unwrap().to_string_lossy().into_owned());
            walk(&sub, module, out);
            module.pop();
        }
    }
    let mut out = Vec::new();
    walk(Path::new("src"), &mut Vec::new(), &mut out);
    out
}

#[test]
fn the_modules_form_layers_without_cycles() {
    let parents = directory_modules();
    // The crate, `release` and its layers, `data`, `tui` and the rest: every directory.
    for must in [
        &[][..],
        &["release"][..],
        &["release", "outputs"][..],
        &["data"][..],
        &["tui"][..],
    ] {
        assert!(
            parents.iter().any(|p| p == must),
            "{must:?} is not a directory module"
        );
    }
    let mut cycles = Vec::new();
    for parent in &parents {
        let parent: Vec<&str> = parent.iter().map(String::as_str).collect();
        let parent = &parent[..];
        let mut graph = graph_under(parent);
        for (module, dispatches_to) in UPDATE_DISPATCH {
            if parent == ["tui"] {
                graph.get_mut(*module).unwrap().remove(*dispatches_to);
            }
        }
        if let Some(c) = cycle(&graph) {
            cycles.push(format!(
                "a cycle among the modules of {}: {}",
                if parent.is_empty() {
                    "the crate".to_string()
                } else {
                    parent.join("::")
                },
                c.join(" → ")
            ));
        }
    }
    assert!(cycles.is_empty(), "{}", cycles.join("\n"));
}

#[test]
fn the_check_sees_a_cycle() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("c".into());
    assert!(cycle(&graph).is_none());
    graph.entry("c".into()).or_default().insert("a".into());
    assert_eq!(cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
    assert_eq!(
        names_after(
            "use crate::release::plan::X; x::crate::release::no",
            "crate::release::"
        ),
        BTreeSet::from(["plan".to_string()])
    );
}
