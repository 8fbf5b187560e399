//! A third privacy audit's edges (issue 32, items 4, 9 and 10a), through the real
//! binary as an adversarial operator would try them:
//!
//! - `coco verify` reads back every published file, not only its digest: an edited
//!   `summary.csv` or `summary.parquet` (an estimate moved inside its interval) and an
//!   edited `measurements.jsonl` (ε changed, a line removed, a vector cut short, the K
//!   probe's ε changed), each re-hashed in the manifest, fail verify — naming the file,
//!   the line or row and what was expected — where the ledger at hand does not hold the
//!   draw (another `COCO_HOME`), so that no ledger vouches for the manifest;
//! - `coco release --out MISSING/x` is refused before anything is drawn or recorded;
//! - `coco preview --coverage` labels its figures as the confidential data's or as the
//!   public proxy's, in text and in JSON.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use sha2::{Digest, Sha256};

use crate::common;
use common::cli::{coco, s, sample, text};

/// A release of the sample in both formats with its margins (two replicates) and its
/// noisy measurements, under `plan`.
pub(crate) fn release(home: &Path, plan: &Path, out: &Path) -> PathBuf {
    let o = coco(
        &[
            "release",
            &s(&sample()),
            "--config",
            &s(plan),
            "--out",
            &s(out),
            "--format",
            "both",
            "--measurements",
            "--replicates",
            "2",
        ],
        home,
    );
    assert!(o.status.success(), "{}", text(&o));
    out.to_path_buf()
}

/// coco's default plan for the sample: `hc` with `auto` tails at every level.
fn default_plan(tmp: &Path, home: &Path) -> PathBuf {
    let path = tmp.join("plan.toml");
    let o = coco(&["plan", &s(&sample()), "--out", &s(&path)], home);
    assert!(o.status.success(), "{}", text(&o));
    path
}

/// A plan with every kind of measurement: `K` estimated privately (a probe line),
/// `hg`, `naive`, and `hc` with a fixed tail.
fn every_method_plan(tmp: &Path) -> PathBuf {
    let path = tmp.join("every-method.toml");
    std::fs::write(
        &path,
        r#"max_size = { epsilon = "1/100" }
consistency = "topdown"

[[level]]
name = "country"
epsilon = "1/3"
method = "hg"

[[level]]
name = "province"
epsilon = "1/3"
method = "naive"

[[level]]
name = "district"
epsilon = "1/3"
method = "hc"
tail = { above = 10, groups = 50 }
"#,
    )
    .unwrap();
    path
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A copy of `release` at `to` with `edit` applied, every digest in its manifest made to
/// match its files again (as an operator covering an edit would).
pub(crate) fn edited(release: &Path, to: &Path, edit: impl FnOnce(&Path)) -> PathBuf {
    copy_dir(release, to);
    edit(to);
    let path = to.join("manifest.json");
    let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for f in m["outputs"].as_array_mut().unwrap() {
        let bytes = std::fs::read(to.join(f["path"].as_str().unwrap())).unwrap();
        let digest: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        f["sha256"] = digest.into();
    }
    std::fs::write(&path, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    to.to_path_buf()
}

/// `coco verify OUT --json` with the ledger of `home`: its exit code and problems.
pub(crate) fn verify(out: &Path, home: &Path) -> (Output, Vec<String>) {
    let o = coco(&["verify", &s(out), "--json"], home);
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    let problems = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    (o, problems)
}

/// The problems besides the one every copy verified with another ledger has: its draw
/// is not in that ledger.
fn beyond_the_ledger(problems: &[String]) -> Vec<String> {
    problems
        .iter()
        .filter(|p| !p.contains("is not in the ledger"))
        .cloned()
        .collect()
}

/// Verify with another ledger exits 6 and finds, besides the missing draw, exactly
/// problems of which one holds every text of `says`.
pub(crate) fn refused_for(out: &Path, other_home: &Path, says: &[&str]) -> Vec<String> {
    let (o, problems) = verify(out, other_home);
    assert_eq!(o.status.code(), Some(6), "{}", text(&o));
    let found = beyond_the_ledger(&problems);
    assert!(
        found.iter().any(|p| says.iter().all(|s| p.contains(s))),
        "expected a problem saying {says:?}, found {found:#?}"
    );
    found
}

/// The JSON lines of `measurements.jsonl`, edited by `edit`, written back.
pub(crate) fn edit_measurements(out: &Path, edit: impl FnOnce(&mut Vec<serde_json::Value>)) {
    let path = out.join("measurements.jsonl");
    let mut lines: Vec<serde_json::Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    edit(&mut lines);
    let text: String = lines
        .iter()
        .map(|l| format!("{}\n", serde_json::to_string(l).unwrap()))
        .collect();
    std::fs::write(&path, text).unwrap();
}

/// The index of the first line of level `level` in `lines`.
fn first_of(lines: &[serde_json::Value], level: &str) -> usize {
    lines
        .iter()
        .position(|l| l["kind"] == "region" && l["level"] == level)
        .unwrap()
}

/// Problem 4: `summary.csv` and `summary.parquet` were checked by their digest only. An
/// estimate moved by one inside its interval, re-hashed, verified where the ledger at
/// hand does not hold the draw; each estimate is now recomputed from the counts.
#[test]
fn an_edited_summary_is_found_without_the_ledger() {
    let tmp = tempfile::tempdir().unwrap();
    let (home, other) = (tmp.path().join("home"), tmp.path().join("other-home"));
    let plan = default_plan(tmp.path(), &home);
    let r = release(&home, &plan, &tmp.path().join("r"));
    // As written: it verifies with its ledger, and with another one only the missing
    // draw is a problem.
    let (o, problems) = verify(&r, &home);
    assert!(o.status.success(), "{problems:?}");
    let (_, problems) = verify(&r, &other);
    assert_eq!(beyond_the_ledger(&problems), Vec::<String>::new());
    assert_eq!(problems.len(), 1, "{problems:?}");

    // summary.csv: the first estimate below its upper bound, raised by one.
    let mut changed = None;
    let e = edited(&r, &tmp.path().join("csv"), |out| {
        let path = out.join("summary.csv");
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        'rows: for (i, line) in lines.iter_mut().enumerate().skip(1) {
            let mut f: Vec<String> = line.split(',').map(str::to_string).collect();
            // The first statistic: groups of size 2 or more (an integer).
            let (x, upper): (u64, u64) = (f[3].parse().unwrap(), f[5].parse().unwrap());
            if x < upper {
                f[3] = (x + 1).to_string();
                *line = f.join(",");
                changed = Some((i + 1, f[1].clone(), x));
                break 'rows;
            }
        }
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    });
    let (line, region, x) = changed.expect("an estimate below its upper bound");
    refused_for(
        &e,
        &other,
        &[
            &format!("summary.csv: line {line}: "),
            &region,
            &format!("groups_size_2_or_more is {}, expected {x}", x + 1),
        ],
    );

    // summary.parquet: the same edit in its Parquet form.
    let mut changed = None;
    let e = edited(&r, &tmp.path().join("parquet"), |out| {
        let path = out.join("summary.parquet");
        let reader =
            ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&path).unwrap()).unwrap();
        let schema = reader.schema().clone();
        let mut batches: Vec<RecordBatch> = reader.build().unwrap().map(|b| b.unwrap()).collect();
        let estimate = schema.index_of("groups_size_2_or_more").unwrap();
        let upper = schema.index_of("groups_size_2_or_more_upper").unwrap();
        let mut row = 0;
        for batch in &mut batches {
            if changed.is_some() {
                break;
            }
            let xs = batch.column(estimate).as_primitive::<Int64Type>();
            let ups = batch.column(upper).as_primitive::<Int64Type>();
            let Some(i) = (0..batch.num_rows()).find(|&i| xs.value(i) < ups.value(i)) else {
                row += batch.num_rows();
                continue;
            };
            let region = batch.column(1).as_string::<i32>().value(i).to_string();
            changed = Some((row + i + 1, region, xs.value(i)));
            let mut values: Vec<i64> = xs.values().to_vec();
            values[i] += 1;
            let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
            columns[estimate] = Arc::new(Int64Array::from(values));
            *batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
        }
        let mut w = parquet::arrow::ArrowWriter::try_new(
            std::fs::File::create(&path).unwrap(),
            schema,
            None,
        )
        .unwrap();
        for b in &batches {
            w.write(b).unwrap();
        }
        w.close().unwrap();
    });
    let (row, region, x) = changed.expect("an estimate below its upper bound");
    let found = refused_for(
        &e,
        &other,
        &[
            &format!("summary.parquet: row {row}: "),
            &region,
            &format!("groups_size_2_or_more is {}, expected {x}", x + 1),
        ],
    );
    // Read against counts.parquet, its own form: summary.csv is untouched and fine.
    assert!(
        !found.iter().any(|p| p.starts_with("summary.csv")),
        "{found:?}"
    );
}

/// Problem 4: `measurements.jsonl` was checked by its digest only. Its ε changed to 100
/// (with the scale to match), a line removed, a vector cut short, re-hashed: each is
/// found against the manifest's plan and the tables' regions, naming the line. A vector
/// zeroed with its length intact is not (the values are noisy draws: any are possible;
/// docs/uncertainty.md says so).
#[test]
fn an_edited_measurements_file_is_found_without_the_ledger() {
    let tmp = tempfile::tempdir().unwrap();
    let (home, other) = (tmp.path().join("home"), tmp.path().join("other-home"));
    let plan = default_plan(tmp.path(), &home);
    let r = release(&home, &plan, &tmp.path().join("r"));
    let (o, problems) = verify(&r, &home);
    assert!(o.status.success(), "{problems:?}");

    // ε = 100 on one district's line, its scale made to agree.
    let mut at = None;
    let e = edited(&r, &tmp.path().join("epsilon"), |out| {
        edit_measurements(out, |lines| {
            let i = first_of(lines, "district") + 3;
            lines[i]["epsilon"] = "100".into();
            lines[i]["scale"] = 0.01.into();
            at = Some((i + 1, lines[i]["region"].as_str().unwrap().to_string()));
        })
    });
    let (line, region) = at.unwrap();
    refused_for(
        &e,
        &other,
        &[
            &format!("measurements.jsonl: line {line}: region {region} of level district"),
            "ε is \"100\", expected 1/3",
        ],
    );

    // A district's line removed: that region has none.
    let mut removed = None;
    let e = edited(&r, &tmp.path().join("removed"), |out| {
        edit_measurements(out, |lines| {
            let i = first_of(lines, "district") + 5;
            removed = Some((i + 1, lines[i]["region"].as_str().unwrap().to_string()));
            lines.remove(i);
        })
    });
    let (line, region) = removed.unwrap();
    refused_for(
        &e,
        &other,
        &[
            &format!("measurements.jsonl: no line for region {region} of level district"),
            &format!("line {line} is region "),
        ],
    );

    // A vector cut short: one district's head loses its last value.
    let mut cut = None;
    let e = edited(&r, &tmp.path().join("cut"), |out| {
        edit_measurements(out, |lines| {
            let i = first_of(lines, "district");
            let head = lines[i]["head"].as_array_mut().unwrap();
            let n = head.len();
            head.pop();
            cut = Some((i + 1, n));
        })
    });
    let (line, n) = cut.unwrap();
    refused_for(
        &e,
        &other,
        &[
            &format!("measurements.jsonl: line {line}: "),
            &format!("\"head\" holds {} values, expected {n}", n - 1),
        ],
    );

    // The documented limit: a vector zeroed, its length intact, is a possible draw (the
    // tail's `top`: zeroing an auto tail's head changes the length it gives the top,
    // and is found).
    let e = edited(&r, &tmp.path().join("zeroed"), |out| {
        edit_measurements(out, |lines| {
            let i = first_of(lines, "district");
            for v in lines[i]["top"].as_array_mut().unwrap() {
                *v = 0.into();
            }
        })
    });
    let (_, problems) = verify(&e, &other);
    assert_eq!(beyond_the_ledger(&problems), Vec::<String>::new());
}

/// The same for the other measurements: the K probe's ε changed, an `hg` vector one
/// value short, a `naive` line given another sensitivity, a fixed tail's `top` one
/// value long.
#[test]
fn every_kind_of_measurement_is_read_back() {
    let tmp = tempfile::tempdir().unwrap();
    let (home, other) = (tmp.path().join("home"), tmp.path().join("other-home"));
    let plan = every_method_plan(tmp.path());
    let r = release(&home, &plan, &tmp.path().join("r"));
    let (o, problems) = verify(&r, &home);
    assert!(o.status.success(), "{problems:?}");
    let e = edited(&r, &tmp.path().join("edited"), |out| {
        edit_measurements(out, |lines| {
            assert_eq!(lines[0]["kind"], "max_size_probe");
            lines[0]["epsilon"] = "1".into();
            lines[0]["scale"] = 1.0.into();
            let country = first_of(lines, "country");
            lines[country]["hg"].as_array_mut().unwrap().pop();
            let province = first_of(lines, "province");
            lines[province]["sensitivity"] = 1.into();
            let district = first_of(lines, "district");
            lines[district]["top"]
                .as_array_mut()
                .unwrap()
                .push(10.into());
        })
    });
    let found = refused_for(
        &e,
        &other,
        &[
            "measurements.jsonl: line 1: the K probe's ε is 1, expected 0.01",
            "max_size_epsilon",
        ],
    );
    for says in [
        "line 2: region ARV of level country: \"hg\" holds 47512 values, expected 47513",
        "of level province: sensitivity is 1, expected 2",
        "of level district: \"top\" holds 51 values, expected 50",
    ] {
        assert!(
            found.iter().any(|p| p.contains(says)),
            "{says:?} in {found:#?}"
        );
    }
}

/// Problem 9: `coco release --out MISSING/x` created the missing directories, wrote the
/// release and spent ε, while the data contract refuses a parent that is not a writable
/// directory. It is refused now (exit 3, naming the path and what was expected) before
/// anything is drawn or recorded, and nothing is created; so is a parent that is a file.
#[test]
fn a_release_under_a_missing_parent_is_refused_before_any_draw() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let plan = default_plan(tmp.path(), &home);
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    for (out, says) in [
        (tmp.path().join("missing/deeper/x"), "does not exist"),
        (file.join("x"), "not a directory"),
    ] {
        let o = coco(
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
        );
        assert_eq!(o.status.code(), Some(3), "{}", text(&o));
        let t = text(&o);
        assert!(t.contains(&s(&out)), "{t}");
        assert!(t.contains(says), "{t}");
        assert!(!out.exists());
    }
    assert!(!tmp.path().join("missing").exists());
    // No draw was recorded: the ledger holds no line.
    let ledger = home.join("ledger.jsonl");
    let lines = std::fs::read_to_string(&ledger).unwrap_or_default();
    assert_eq!(lines.lines().count(), 0, "{lines}");
    // An existing parent still takes a new release directory.
    let o = coco(
        &[
            "release",
            &s(&sample()),
            "--config",
            &s(&plan),
            "--out",
            &s(&tmp.path().join("fine")),
            "--replicates",
            "2",
        ],
        &home,
    );
    assert!(o.status.success(), "{}", text(&o));
}

/// Problem 10a: `coco preview --proxy synthetic --coverage` called the proxy's coverage
/// CONFIDENTIAL. Every label says what the figures were measured on: the public proxy's
/// are labelled PUBLIC PROXY and never CONFIDENTIAL, the confidential data's
/// CONFIDENTIAL and never PUBLIC PROXY, in text and in JSON.
#[test]
fn preview_labels_say_what_the_figures_were_measured_on() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = s(&sample());
    let preview = |extra: &[&str]| {
        let mut args = vec![
            "preview",
            data.as_str(),
            "--coverage",
            "--trials",
            "2",
            "--seed",
            "1",
        ];
        args.extend_from_slice(extra);
        let o = coco(&args, &home);
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8(o.stdout).unwrap()
    };

    let proxy = preview(&["--proxy", "synthetic"]);
    assert!(proxy.starts_with("PUBLIC PROXY: "), "{proxy}");
    assert!(!proxy.contains("CONFIDENTIAL"), "{proxy}");
    assert!(
        proxy.contains("earth mover's distance to the proxy's true counts"),
        "{proxy}"
    );
    assert!(
        proxy.contains("covered the proxy's true counts (")
            && proxy.contains("per trial; PUBLIC PROXY, not the confidential data): "),
        "{proxy}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&preview(&["--proxy", "synthetic", "--json"])).unwrap();
    assert!(
        json["notice"]
            .as_str()
            .unwrap()
            .starts_with("PUBLIC PROXY: ")
    );
    assert_eq!(json["data"]["kind"], "proxy");
    assert!(json["levels"][0]["coverage"].is_object(), "{json}");
    assert!(!json.to_string().contains("CONFIDENTIAL"), "{json}");

    let confidential = preview(&[]);
    assert!(confidential.starts_with("CONFIDENTIAL"), "{confidential}");
    assert!(!confidential.contains("PUBLIC PROXY"), "{confidential}");
    assert!(
        confidential.contains("earth mover's distance to the truth")
            && confidential.contains("covered the truth (")
            && confidential.contains("per trial; CONFIDENTIAL): "),
        "{confidential}"
    );
    let json: serde_json::Value = serde_json::from_str(&preview(&["--json"])).unwrap();
    assert!(json["notice"].as_str().unwrap().starts_with("CONFIDENTIAL"));
    assert_eq!(json["data"]["kind"], "confidential");
    assert!(json["levels"][0]["coverage"].is_object(), "{json}");
    assert!(!json.to_string().contains("PUBLIC PROXY"), "{json}");
}
