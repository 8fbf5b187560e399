//! A release a data user can read: the codebook (`README.txt`) in every release, the
//! replicate tables (`--replicate-tables`) and the wide tables' margins
//! (`tables/<i>-<level>-margins.*`), each listed in the manifest and checked by
//! `coco verify`, through the real binary.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common::cli::{coco, ok, refused, s, sample, sha256_file, text};

/// The default plan of the sample, written in `tmp`.
fn plan(tmp: &Path, home: &Path) -> PathBuf {
    let path = tmp.join("plan.toml");
    ok(&coco(
        &["plan", &s(&sample()), "--total", "1", "--out", &s(&path)],
        home,
    ));
    path
}

/// `coco release` of the sample into `tmp/name` with `extra` (and two replicates
/// unless `extra` says how many, or asks for no margins).
fn release(tmp: &Path, home: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = tmp.join(name);
    let plan = plan(tmp, home);
    let mut args = vec![
        "release".to_string(),
        s(&sample()),
        "--config".into(),
        s(&plan),
        "--out".into(),
        s(&out),
    ];
    if !extra.contains(&"--replicates") && !extra.contains(&"--uncertainty") {
        args.extend(["--replicates".into(), "2".into()]);
    }
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&coco(&args, home));
    out
}

fn manifest(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap()
}

/// The paths `manifest.json` lists.
fn listed(out: &Path) -> Vec<String> {
    manifest(out)["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

/// Every file in `dir`, relative, `/`-separated.
fn on_disk(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy();
                out.insert(rel.replace('\\', "/"));
            }
        }
    }
    out
}

/// Writes `path`'s new digest into the manifest, as someone covering an edit would.
fn rehash(out: &Path, path: &str) {
    let digest = sha256_file(&out.join(path));
    let mut m = manifest(out);
    for f in m["outputs"].as_array_mut().unwrap() {
        if f["path"] == path {
            f["sha256"] = digest.clone().into();
        }
    }
    std::fs::write(
        out.join("manifest.json"),
        serde_json::to_vec_pretty(&m).unwrap(),
    )
    .unwrap();
}

/// The file names a codebook line names: the lines that start at column 0 and hold no
/// space (the file headings of its "Files" section).
fn named_files(codebook: &str) -> BTreeSet<String> {
    let files = codebook
        .split("Files\n-----\n")
        .nth(1)
        .expect("a Files section")
        .split("\n\n")
        .next()
        .unwrap();
    files
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.contains(' '))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_release_has_a_codebook_of_exactly_its_files() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    for (name, extra) in [
        ("csv", vec![]),
        ("parquet", vec!["--format", "parquet"]),
        ("both", vec!["--format", "both", "--replicate-tables"]),
        ("bare", vec!["--uncertainty", "none", "--measurements"]),
    ] {
        let out = release(tmp.path(), &home, name, &extra);
        let codebook = std::fs::read_to_string(out.join("README.txt"))
            .unwrap_or_else(|e| panic!("{name}: no README.txt: {e}"));
        // Listed with its digest like every file.
        let m = manifest(&out);
        let entry = m["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == "README.txt")
            .unwrap_or_else(|| panic!("{name}: the manifest does not list README.txt"));
        assert_eq!(entry["sha256"], sha256_file(&out.join("README.txt")));
        // It names exactly the files present (and nothing else).
        let present = on_disk(&out);
        assert_eq!(
            named_files(&codebook),
            present,
            "{name}: the codebook's files are not the directory's:\n{codebook}"
        );
        // The privacy statement as the manifest states it, size 0, the docs, the version
        // (words wrap at 88 columns: the text is compared with line breaks as spaces).
        let flat = codebook.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("Pure ε-differential privacy, total ε = 1 (each level: country ε = 1/3"),
            "{codebook}"
        );
        assert!(flat.contains("A group of size 0 is a group with no members"));
        assert!(flat.contains("docs/uncertainty.md") && flat.contains("docs/data-contract.md"));
        assert!(flat.contains(&format!("coco {}", m["coco_version"].as_str().unwrap())));
        assert_eq!(
            codebook.contains("Reading an interval"),
            name != "bare",
            "{name}: the intervals are explained exactly when there are margins"
        );
        let o = coco(&["verify", &s(&out)], &home);
        ok(&o);
    }

    // Edited, with the manifest's digest updated to cover the edit: verify names it.
    let out = tmp.path().join("csv");
    let edited = std::fs::read_to_string(out.join("README.txt"))
        .unwrap()
        .replace("total ε = 1", "total ε = 0.01");
    std::fs::write(out.join("README.txt"), edited).unwrap();
    rehash(&out, "README.txt");
    let o = coco(&["verify", &s(&out)], &home);
    refused(
        &o,
        6,
        "README.txt: not the codebook coco writes for this manifest.json",
    );
    // Edited without re-hashing: the digest says so.
    let out = tmp.path().join("parquet");
    std::fs::write(out.join("README.txt"), "hello\n").unwrap();
    let o = coco(&["verify", &s(&out)], &home);
    refused(&o, 6, "README.txt: changed since it was written");
}

/// The rows of a CSV file as maps of column name to field.
fn csv_rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    r.records()
        .map(|rec| {
            header
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(str::to_string))
                .collect()
        })
        .collect()
}

fn n(row: &BTreeMap<String, String>, column: &str) -> u64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{column}: {:?}", row[column]))
}

/// Each level's name and its regions with groups (`region` → G), from the wide tables.
fn regions_with_groups(out: &Path) -> Vec<(String, BTreeMap<String, u64>)> {
    manifest(out)["levels"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let name = l["name"].as_str().unwrap().to_string();
            let table = out.join(format!("tables/{i}-{name}.csv"));
            let regions = csv_rows(&table)
                .into_iter()
                .filter(|r| n(r, "groups") > 0)
                .map(|r| (r["region"].clone(), n(&r, "groups")))
                .collect();
            (name, regions)
        })
        .collect()
}

#[test]
fn replicate_tables_hold_every_replicate_of_every_region() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    // Without the flag, none.
    let plain = release(tmp.path(), &home, "plain", &[]);
    assert!(!listed(&plain).iter().any(|p| p.starts_with("replicates.")));
    assert!(!plain.join("replicates.csv").exists());
    // Refused with no margins to take them from, before anything is drawn.
    let draws = crate::common::cli::ledger_draws(&home);
    let o = coco(
        &[
            "release",
            &s(&sample()),
            "--config",
            &s(&plan(tmp.path(), &home)),
            "--out",
            &s(&tmp.path().join("none")),
            "--uncertainty",
            "none",
            "--replicate-tables",
        ],
        &home,
    );
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("--replicate-tables"), "{}", text(&o));
    assert_eq!(crate::common::cli::ledger_draws(&home), draws);

    let out = release(
        tmp.path(),
        &home,
        "rep",
        &[
            "--format",
            "both",
            "--replicate-tables",
            "--replicates",
            "3",
        ],
    );
    let m = manifest(&out);
    let r = m["uncertainty"]["replicates"].as_u64().unwrap();
    assert_eq!(r, 3);
    for f in ["replicates.csv", "replicates.parquet"] {
        assert!(listed(&out).contains(&f.to_string()), "{f} not listed");
    }
    let header = std::fs::read_to_string(out.join("replicates.csv")).unwrap();
    assert_eq!(
        header.lines().next(),
        Some("level,region,size,replicate,count")
    );
    // Every region with groups, every replicate a complete table of its G groups.
    let rows = csv_rows(&out.join("replicates.csv"));
    let mut sums: BTreeMap<(String, String, u64), u64> = BTreeMap::new();
    for row in &rows {
        let rep = n(row, "replicate");
        assert!((1..=r).contains(&rep), "{row:?}");
        assert!(n(row, "count") > 0, "only nonzero cells: {row:?}");
        *sums
            .entry((row["level"].clone(), row["region"].clone(), rep))
            .or_default() += n(row, "count");
    }
    let mut expected = BTreeMap::new();
    for (level, regions) in regions_with_groups(&out) {
        for (region, g) in regions {
            for rep in 1..=r {
                expected.insert((level.clone(), region.clone(), rep), g);
            }
        }
    }
    assert_eq!(sums, expected);
    ok(&coco(&["verify", &s(&out)], &home));

    // A count moved from one cell to another keeps the sizes' order, and verify still
    // finds the replicate's total off; a replicate numbered past R is refused too.
    let csv = std::fs::read_to_string(out.join("replicates.csv")).unwrap();
    let mut lines: Vec<String> = csv.lines().map(str::to_string).collect();
    let last = lines.len() - 1;
    let mut fields: Vec<String> = lines[last].split(',').map(str::to_string).collect();
    fields[4] = (fields[4].parse::<u64>().unwrap() + 1).to_string();
    lines[last] = fields.join(",");
    std::fs::write(out.join("replicates.csv"), lines.join("\n") + "\n").unwrap();
    rehash(&out, "replicates.csv");
    let o = coco(&["verify", &s(&out)], &home);
    refused(&o, 6, "replicates.csv: ");
    assert!(
        text(&o).contains("counts add up to"),
        "expected the total named: {}",
        text(&o)
    );
    fields[3] = (r + 1).to_string();
    lines[last] = fields.join(",");
    std::fs::write(out.join("replicates.csv"), lines.join("\n") + "\n").unwrap();
    rehash(&out, "replicates.csv");
    let o = coco(&["verify", &s(&out)], &home);
    refused(&o, 6, &format!("replicate {}: expected 1 to {r}", r + 1));
}

#[test]
fn the_wide_tables_margins_agree_with_uncertainty_and_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let out = release(tmp.path(), &home, "rel", &["--format", "both"]);
    let m = manifest(&out);
    assert!(m["max_size"].as_u64().unwrap() >= 7);
    // The intervals uncertainty.csv and summary.csv publish.
    let mut cells: BTreeMap<(String, String, u64), (u64, u64)> = BTreeMap::new();
    for row in csv_rows(&out.join("uncertainty.csv")) {
        cells.insert(
            (row["level"].clone(), row["region"].clone(), n(&row, "size")),
            (n(&row, "lower"), n(&row, "upper")),
        );
    }
    let mut seven: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
    for row in csv_rows(&out.join("summary.csv")) {
        seven.insert(
            (row["level"].clone(), row["region"].clone()),
            (
                n(&row, "groups_size_7_or_more_lower"),
                n(&row, "groups_size_7_or_more_upper"),
            ),
        );
    }
    let mut checked = 0;
    for (i, level) in m["levels"].as_array().unwrap().iter().enumerate() {
        let level = level["name"].as_str().unwrap();
        let table = csv_rows(&out.join(format!("tables/{i}-{level}.csv")));
        let file = format!("tables/{i}-{level}-margins.csv");
        assert!(listed(&out).contains(&file), "{file} not listed");
        assert!(listed(&out).contains(&format!("tables/{i}-{level}-margins.parquet")));
        let margins = csv_rows(&out.join(&file));
        assert_eq!(table.len(), margins.len(), "{file}: the table's rows");
        for (t, mg) in table.iter().zip(&margins) {
            assert_eq!(
                (&t["region"], &t["name"], &t["groups"]),
                (&mg["region"], &mg["name"], &mg["groups"])
            );
            let g = n(t, "groups");
            for j in 0..8 {
                let column = if j < 7 {
                    format!("size_{j}")
                } else {
                    "size_7_or_more".to_string()
                };
                let (value, lower, upper) = (
                    n(t, &column),
                    n(mg, &format!("{column}_lower")),
                    n(mg, &format!("{column}_upper")),
                );
                assert!(
                    lower <= value && value <= upper && upper <= g,
                    "{file}: {} {column}: {value} in [{lower}, {upper}], G = {g}",
                    t["region"]
                );
                let key = (level.to_string(), t["region"].clone());
                let published = if j < 7 {
                    cells
                        .get(&(key.0, key.1, j as u64))
                        .copied()
                        .unwrap_or((0, 0))
                } else if g > 0 {
                    seven[&key]
                } else {
                    (0, 0)
                };
                assert_eq!(
                    (lower, upper),
                    published,
                    "{file}: {} {column}: one number, one interval",
                    t["region"]
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked}");
    ok(&coco(&["verify", &s(&out)], &home));

    // A bound moved off its value, re-hashed: verify names it.
    let file = "tables/2-district-margins.csv";
    let text_before = std::fs::read_to_string(out.join(file)).unwrap();
    let mut lines: Vec<String> = text_before.lines().map(str::to_string).collect();
    let mut fields: Vec<String> = lines[1].split(',').map(str::to_string).collect();
    // size_1_upper (the 6th number after region and name): below its value.
    fields[6] = "0".into();
    lines[1] = fields.join(",");
    std::fs::write(out.join(file), lines.join("\n") + "\n").unwrap();
    rehash(&out, file);
    let o = coco(&["verify", &s(&out)], &home);
    refused(&o, 6, &format!("{file}: line 2"));
    assert!(text(&o).contains("size_1: ["), "{}", text(&o));
}

#[test]
fn a_zcdp_release_states_its_rho_and_the_epsilon_delta_it_implies() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let plan = tmp.path().join("rho.toml");
    ok(&coco(
        &["plan", &s(&sample()), "--rho", "1/2", "--out", &s(&plan)],
        &home,
    ));
    let out = tmp.path().join("rel");
    ok(&coco(
        &[
            "release",
            &s(&sample()),
            "--config",
            &s(&plan),
            "--out",
            &s(&out),
            "--replicates",
            "2",
        ],
        &home,
    ));
    let m = manifest(&out);
    let codebook = std::fs::read_to_string(out.join("README.txt")).unwrap();
    let eps = (m["privacy"]["epsilon_at_delta"].as_f64().unwrap() * 100.0).ceil() / 100.0;
    let said = format!("total ρ = {}", m["privacy"]["rho"].as_str().unwrap());
    // Words wrap at 88 columns: compare the text with its line breaks as spaces.
    let flat = codebook.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("ρ-zero-concentrated differential privacy (zCDP)"),
        "{codebook}"
    );
    assert!(flat.contains(&said), "{said}: {codebook}");
    assert!(
        flat.contains(&format!(
            "which implies (ε = {eps}, δ = 1e-10)-differential privacy"
        )),
        "{codebook}"
    );
    ok(&coco(&["verify", &s(&out)], &home));
}
