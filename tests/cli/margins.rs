//! `coco margins` through the binary, as a data user runs it: on a copy of a release
//! directory (nothing but its published files) with a home of its own (no ledger, no
//! dataset). Its estimates are the sums of `counts.csv`; a statistic `summary.csv` or
//! `uncertainty.csv` publishes too has the interval those files give it; bad input is
//! refused with a message naming what was wrong and a nonzero exit code.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::cli::{coco, ok, refused, s, sample, text};

/// A seeded release of the sample (coco's default plan) with 2 full replicates and top
/// replicates of the country and the provinces, copied file by file into a directory
/// of its own, as a data user downloads it.
fn downloaded(tmp: &Path) -> PathBuf {
    let home = tmp.join("operator");
    let plan = tmp.join("plan.toml");
    ok(&coco(
        &["plan", &s(&sample()), "--total", "1", "--out", &s(&plan)],
        &home,
    ));
    let out = tmp.join("release");
    ok(&coco(
        &[
            "release",
            &s(&sample()),
            "--config",
            &s(&plan),
            "--out",
            &s(&out),
            "--seed",
            "11",
            "--not-private",
            "--replicates",
            "2",
        ],
        &home,
    ));
    let copy = tmp.join("download");
    std::fs::create_dir_all(copy.join("tables")).unwrap();
    for dir in ["", "tables"] {
        for f in std::fs::read_dir(out.join(dir)).unwrap() {
            let f = f.unwrap();
            if f.file_type().unwrap().is_file() {
                std::fs::copy(f.path(), copy.join(dir).join(f.file_name())).unwrap();
            }
        }
    }
    copy
}

/// `coco margins RELEASE ARGS` with a fresh home (a data user's: no ledger).
fn margins(release: &Path, args: &[&str], tmp: &Path) -> Output {
    let mut all = vec!["margins", release.to_str().unwrap()];
    all.extend_from_slice(args);
    coco(&all, &tmp.join("data-user"))
}

fn rows(path_or_text: &str, from_file: bool) -> Vec<HashMap<String, String>> {
    let text = if from_file {
        std::fs::read_to_string(path_or_text).unwrap()
    } else {
        path_or_text.to_string()
    };
    let mut r = csv::Reader::from_reader(text.as_bytes());
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

/// `coco margins`'s rows, after checking its header.
fn answered(o: &Output) -> Vec<HashMap<String, String>> {
    ok(o);
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert!(
        out.starts_with("level,region,statistic,estimate,lower,upper\n"),
        "{out}"
    );
    rows(&out, false)
}

/// counts.csv: (level, region) → size → count.
fn counts(release: &Path) -> HashMap<(String, String), HashMap<u32, u64>> {
    let mut out: HashMap<(String, String), HashMap<u32, u64>> = HashMap::new();
    for r in rows(&s(&release.join("counts.csv")), true) {
        out.entry((r["level"].clone(), r["region"].clone()))
            .or_default()
            .insert(r["size"].parse().unwrap(), r["count"].parse().unwrap());
    }
    out
}

fn sum(hist: Option<&HashMap<u32, u64>>, from: u32, to: u32) -> u64 {
    hist.map_or(0, |h| {
        h.iter()
            .filter(|&(&s, _)| from <= s && s <= to)
            .map(|(_, &c)| c)
            .sum()
    })
}

fn number(v: &str) -> f64 {
    v.parse()
        .unwrap_or_else(|_| panic!("{v:?} is not a number"))
}

fn triple(r: &HashMap<String, String>, prefix: &str) -> [String; 3] {
    ["", "_lower", "_upper"].map(|suffix| r[&format!("{prefix}{suffix}")].clone())
}

#[test]
fn margins_answer_sums_and_shares_with_the_release_s_own_intervals() {
    let tmp = tempfile::tempdir().unwrap();
    let release = downloaded(tmp.path());
    let k: u32 = {
        let m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(release.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(
            m["uncertainty"]["seed"].as_str().map(str::len),
            Some(64),
            "the bootstrap key is published: {m}"
        );
        // With 2 full replicates the 6 provinces ask for 48 more draws and the country
        // for 98: two runs of top replicates, which `coco margins` must draw again.
        assert_eq!(
            m["uncertainty"]["top_runs"],
            serde_json::json!([
                {"levels": 2, "replicates": 48},
                {"levels": 1, "replicates": 50}
            ]),
            "{m}"
        );
        m["max_size"].as_u64().unwrap() as u32
    };
    let counts = counts(&release);
    let summary: HashMap<(String, String), HashMap<String, String>> =
        rows(&s(&release.join("summary.csv")), true)
            .into_iter()
            .map(|r| ((r["level"].clone(), r["region"].clone()), r))
            .collect();
    let cells: HashMap<(String, String, String), [String; 3]> =
        rows(&s(&release.join("uncertainty.csv")), true)
            .into_iter()
            .map(|r| {
                (
                    (r["level"].clone(), r["region"].clone(), r["size"].clone()),
                    [r["count"].clone(), r["lower"].clone(), r["upper"].clone()],
                )
            })
            .collect();
    for (i, level) in ["country", "province", "district"].into_iter().enumerate() {
        let regions = rows(&s(&release.join(format!("tables/{i}-{level}.csv"))), true);
        // One row per region of the level, in the tables' order.
        let each = |args: &[&str]| {
            let mut all = vec!["--level", level];
            all.extend_from_slice(args);
            let found = answered(&margins(&release, &all, tmp.path()));
            assert_eq!(found.len(), regions.len(), "{level} {args:?}");
            for (row, region) in found.iter().zip(&regions) {
                assert_eq!(row["level"], level);
                assert_eq!(row["region"], region["region"]);
                if row["estimate"].is_empty() {
                    // A share of no groups: undefined, and said so by empty fields.
                    assert_eq!(region["groups"], "0", "{row:?}");
                    assert_eq!((&*row["lower"], &*row["upper"]), ("", ""));
                    continue;
                }
                let (e, lo, up) = (
                    number(&row["estimate"]),
                    number(&row["lower"]),
                    number(&row["upper"]),
                );
                assert!(lo <= e && e <= up, "{row:?}");
            }
            found
        };
        let key = |r: &HashMap<String, String>| (r["level"].clone(), r["region"].clone());
        // A range: the sum of counts.csv's cells.
        for r in each(&["--sizes", "3..5"]) {
            assert_eq!(r["statistic"], "groups_size_3_to_5");
            assert_eq!(
                number(&r["estimate"]),
                sum(counts.get(&key(&r)), 3, 5) as f64
            );
        }
        // The same statistic as summary.csv's: the same interval.
        for r in each(&["--sizes", "2.."]) {
            assert_eq!(r["statistic"], "groups_size_2_or_more");
            let found = [
                r["estimate"].clone(),
                r["lower"].clone(),
                r["upper"].clone(),
            ];
            assert_eq!(found, triple(&summary[&key(&r)], "groups_size_2_or_more"));
        }
        for r in each(&["--sizes", "1.."]) {
            assert_eq!(r["statistic"], "occupied_groups");
            let found = [
                r["estimate"].clone(),
                r["lower"].clone(),
                r["upper"].clone(),
            ];
            assert_eq!(found, triple(&summary[&key(&r)], "occupied_groups"));
        }
        // One size is a cell: uncertainty.csv's interval; its share over G is that
        // interval over G (summary.csv's single_share).
        for r in each(&["--sizes", "1"]) {
            assert_eq!(r["statistic"], "groups_size_1");
            let (l, g) = key(&r);
            let cell = cells
                .get(&(l, g, "1".to_string()))
                .cloned()
                .unwrap_or_else(|| ["0", "0", "0"].map(String::from));
            let found = [
                r["estimate"].clone(),
                r["lower"].clone(),
                r["upper"].clone(),
            ];
            assert_eq!(found, cell, "{r:?}");
        }
        for r in each(&["--sizes", "1", "--share"]) {
            assert_eq!(r["statistic"], "single_share");
            let found = [
                r["estimate"].clone(),
                r["lower"].clone(),
                r["upper"].clone(),
            ];
            assert_eq!(found, triple(&summary[&key(&r)], "single_share"));
        }
        // A share of the occupied groups: named so, over the released occupied groups.
        for r in each(&["--sizes", "3..", "--share", "--occupied"]) {
            assert_eq!(r["statistic"], "share_size_3_or_more_of_occupied");
            if r["estimate"].is_empty() {
                continue;
            }
            let h = counts.get(&key(&r));
            let expected = sum(h, 3, k) as f64 / sum(h, 1, k) as f64;
            assert!(
                (number(&r["estimate"]) - expected).abs() <= 0.00005,
                "{r:?}"
            );
        }
    }

    // A set of regions: one row, the sum of their cells.
    let file = tmp.path().join("two.txt");
    std::fs::write(&file, "# two districts\nARV/01/0101\n\n  ARV/01/0102\n").unwrap();
    let found = answered(&margins(
        &release,
        &[
            "--level",
            "district",
            "--sizes",
            "3..5",
            "--regions",
            &s(&file),
        ],
        tmp.path(),
    ));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["region"], "(2 regions)");
    let both = ["ARV/01/0101", "ARV/01/0102"]
        .map(|r| sum(counts.get(&("district".into(), r.into())), 3, 5))
        .iter()
        .sum::<u64>();
    assert_eq!(number(&found[0]["estimate"]), both as f64);
    let (lo, up) = (number(&found[0]["lower"]), number(&found[0]["upper"]));
    assert!(
        lo <= both as f64 && both as f64 <= up && lo < up,
        "{found:?}"
    );
    // It takes in what the two regions' own intervals imply (root sum of squares of
    // their distances to their bounds), asked for alone.
    let each = answered(&margins(
        &release,
        &["--level", "district", "--sizes", "3..5"],
        tmp.path(),
    ));
    let (mut down, mut upward) = (0f64, 0f64);
    for r in each
        .iter()
        .filter(|r| ["ARV/01/0101", "ARV/01/0102"].contains(&r["region"].as_str()))
    {
        let (e, l, u) = (
            number(&r["estimate"]),
            number(&r["lower"]),
            number(&r["upper"]),
        );
        down += (e - l).powi(2);
        upward += (u - e).powi(2);
    }
    assert!(down > 0.0 && upward > 0.0, "{each:?}");
    assert!(lo <= both as f64 - down.sqrt().ceil(), "{found:?}");
    assert!(up >= both as f64 + upward.sqrt().ceil(), "{found:?}");
    let share = answered(&margins(
        &release,
        &[
            "--level",
            "district",
            "--sizes",
            "3..5",
            "--share",
            "--regions",
            &s(&file),
        ],
        tmp.path(),
    ));
    assert_eq!(share[0]["statistic"], "share_size_3_to_5");
    // Nothing was recorded anywhere: the data user's home holds no ledger.
    assert!(!tmp.path().join("data-user/ledger.jsonl").exists());
}

#[test]
fn bad_input_is_refused_with_what_was_wrong() {
    let tmp = tempfile::tempdir().unwrap();
    let release = downloaded(tmp.path());
    refused(
        &margins(
            &release,
            &["--level", "county", "--sizes", "2.."],
            tmp.path(),
        ),
        2,
        "--level: county: not a level of the release: expected one of country, province, district",
    );
    refused(
        &margins(
            &release,
            &["--level", "district", "--sizes", "5..2"],
            tmp.path(),
        ),
        2,
        "sizes 5..2: the lower end is above the upper end",
    );
    refused(
        &margins(
            &release,
            &["--level", "district", "--sizes", "three"],
            tmp.path(),
        ),
        2,
        "expected A..B",
    );
    refused(
        &margins(
            &release,
            &["--level", "district", "--sizes", "2", "--occupied"],
            tmp.path(),
        ),
        2,
        "--share",
    );
    let file = tmp.path().join("regions.txt");
    std::fs::write(&file, "ARV/01/0101\n# a comment\nARV/99/0101\n").unwrap();
    refused(
        &margins(
            &release,
            &[
                "--level",
                "district",
                "--sizes",
                "2..",
                "--regions",
                &s(&file),
            ],
            tmp.path(),
        ),
        3,
        &format!(
            "{}:3: region \"ARV/99/0101\" is not a region of level district",
            file.display()
        ),
    );
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    refused(
        &margins(
            &empty,
            &["--level", "district", "--sizes", "2.."],
            tmp.path(),
        ),
        3,
        "manifest.json: cannot be read",
    );
}

#[test]
fn the_command_is_listed_in_help_and_completions() {
    let tmp = tempfile::tempdir().unwrap();
    let help = coco(&["--help"], tmp.path());
    ok(&help);
    assert!(text(&help).contains("margins"), "{}", text(&help));
    let help = coco(&["margins", "--help"], tmp.path());
    ok(&help);
    for flag in ["--level", "--sizes", "--share", "--occupied", "--regions"] {
        assert!(text(&help).contains(flag), "{flag}: {}", text(&help));
    }
    let bash = coco(&["completions", "bash"], tmp.path());
    ok(&bash);
    assert!(text(&bash).contains("margins"));
}

/// `coco verify` checks summary.csv's new columns like the others, and reads a summary
/// written before them (a manifest without `uncertainty.seed`) with the first columns.
#[test]
fn verify_checks_the_occupied_columns_and_reads_older_summaries() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("operator");
    let plan = tmp.path().join("plan.toml");
    ok(&coco(
        &["plan", &s(&sample()), "--total", "1", "--out", &s(&plan)],
        &home,
    ));
    let out = tmp.path().join("release");
    ok(&crate::common::cli::release_quick(
        &sample(),
        &plan,
        &out,
        &home,
    ));
    ok(&coco(&["verify", &s(&out)], &home));

    // An occupied_groups estimate changed: named, with the value its histogram gives.
    let summary = out.join("summary.csv");
    let original = std::fs::read_to_string(&summary).unwrap();
    let mut lines: Vec<String> = original.lines().map(str::to_string).collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    let column = header.iter().position(|&c| c == "occupied_groups").unwrap();
    let mut fields: Vec<String> = lines[1].split(',').map(str::to_string).collect();
    let value: u64 = fields[column].parse().unwrap();
    fields[column] = (value + 1).to_string();
    lines[1] = fields.join(",");
    std::fs::write(&summary, lines.join("\n") + "\n").unwrap();
    refused(
        &coco(&["verify", &s(&out)], &home),
        6,
        &format!("occupied_groups is {}, expected {value}", value + 1),
    );

    // A summary of the first columns, under a manifest without the bootstrap key: no
    // problem with its header or rows (the edited manifest is found by its digest).
    let first: Vec<String> = original
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            f[..f.len() - 9].join(",")
        })
        .collect();
    std::fs::write(&summary, first.join("\n") + "\n").unwrap();
    let manifest = out.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    m["uncertainty"]
        .as_object_mut()
        .unwrap()
        .remove("seed")
        .unwrap();
    std::fs::write(&manifest, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    let o = coco(&["verify", &s(&out)], &home);
    assert!(!text(&o).contains("summary.csv: line"), "{}", text(&o));
    assert!(!text(&o).contains("occupied"), "{}", text(&o));
}
