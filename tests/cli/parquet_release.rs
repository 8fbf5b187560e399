//! Releases in Parquet: `counts.parquet` holds the rows of `counts.csv` (and each
//! `tables/*.parquet` the rows of its CSV table), the manifest lists every file with
//! its digest, and `coco verify` checks the Parquet files (digests and content).

use std::fs;
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use coco::data::Dataset;
use coco::noise::NoiseSource;
use coco::privacy::Epsilon;
use coco::release::ledger::{Ledger, Tool};
use coco::release::outputs::export::{OutputFormat, WriteOptions};
use coco::release::outputs::verify::verify_release;
use coco::release::plan::{MaxSize, ReleasePlan};
use coco::release::transaction::{Reservation, ReserveOptions};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::common;
use crate::common::cli::{sha256_file, sha256_hex};

/// A release of the sample in `format`, drawn with OS randomness.
fn release(home: &Path, out: &Path, format: OutputFormat) -> Arc<Dataset> {
    let dataset = Arc::new(Dataset::load(&common::cli::sample()).unwrap());
    let plan = ReleasePlan::uniform(
        &dataset.hierarchy,
        Epsilon::parse("1").unwrap(),
        coco::estimate::Method::Hc,
        MaxSize::Fixed(1000),
    )
    .unwrap();
    let ledger = Ledger::at(home);
    let reserve = ReserveOptions {
        output: Some(out),
        ..Default::default()
    };
    let write = WriteOptions {
        format,
        ..Default::default()
    };
    Reservation::open(&ledger, dataset.clone(), plan, Tool::Release, reserve)
        .unwrap()
        .draw(&NoiseSource::from_os().unwrap(), &Default::default())
        .unwrap()
        .approve(out, &write)
        .unwrap();
    dataset
}

/// Every row of a Parquet file as text fields (strings as they are, integers in
/// decimal), with its column names.
fn parquet_rows(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let reader = ParquetRecordBatchReaderBuilder::try_new(fs::File::open(path).unwrap()).unwrap();
    let names = reader
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let mut rows = Vec::new();
    for batch in reader.build().unwrap() {
        let batch: RecordBatch = batch.unwrap();
        for r in 0..batch.num_rows() {
            rows.push(
                batch
                    .columns()
                    .iter()
                    .map(|c| {
                        if c.is_null(r) {
                            // Only summary.parquet has nulls: summary.csv's empty fields.
                            return String::new();
                        }
                        match c.data_type() {
                            arrow_schema::DataType::Utf8 => {
                                c.as_string::<i32>().value(r).to_string()
                            }
                            arrow_schema::DataType::Int64 => {
                                c.as_primitive::<Int64Type>().value(r).to_string()
                            }
                            arrow_schema::DataType::Decimal128(_, 4) => {
                                let v = c
                                    .as_primitive::<arrow_array::types::Decimal128Type>()
                                    .value(r);
                                format!("{}.{:04}", v / 10_000, v % 10_000)
                            }
                            t => panic!("unexpected column type {t}"),
                        }
                    })
                    .collect(),
            );
        }
    }
    (names, rows)
}

fn csv_rows(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let names = reader.headers().unwrap().iter().map(String::from).collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (names, rows)
}

fn listed(out: &Path) -> Vec<String> {
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    manifest["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn both_formats_hold_the_same_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("both");
    release(&tmp.path().join("home"), &out, OutputFormat::Both);
    let (names, rows) = parquet_rows(&out.join("counts.parquet"));
    assert_eq!(
        (names, rows.len() > 100),
        (csv_rows(&out.join("counts.csv")).0, true)
    );
    assert_eq!(rows, csv_rows(&out.join("counts.csv")).1);
    for level in ["0-country", "1-province", "2-district"] {
        let csv = csv_rows(&out.join(format!("tables/{level}.csv")));
        assert_eq!(
            parquet_rows(&out.join(format!("tables/{level}.parquet"))),
            csv
        );
    }
    assert_eq!(
        listed(&out),
        [
            "counts.csv",
            "tables/0-country.csv",
            "tables/1-province.csv",
            "tables/2-district.csv",
            "counts.parquet",
            "tables/0-country.parquet",
            "tables/1-province.parquet",
            "tables/2-district.parquet",
            // The margins of error, in the formats asked for, and the summary.
            "uncertainty.csv",
            "uncertainty.parquet",
            "summary.csv",
            "summary.parquet",
            // The wide tables' margins, in the formats asked for, and the codebook.
            "tables/0-country-margins.csv",
            "tables/1-province-margins.csv",
            "tables/2-district-margins.csv",
            "tables/0-country-margins.parquet",
            "tables/1-province-margins.parquet",
            "tables/2-district-margins.parquet",
            "README.txt",
        ]
    );
    // The margins' files hold the same rows in both formats.
    for file in [
        "uncertainty",
        "summary",
        "tables/0-country-margins",
        "tables/1-province-margins",
        "tables/2-district-margins",
    ] {
        assert_eq!(
            parquet_rows(&out.join(format!("{file}.parquet"))),
            csv_rows(&out.join(format!("{file}.csv"))),
            "{file}"
        );
    }
}

#[test]
fn a_parquet_release_verifies_and_tampering_is_caught() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let out = tmp.path().join("pq");
    let dataset = release(&home, &out, OutputFormat::Parquet);
    assert!(!out.join("counts.csv").exists());
    assert_eq!(
        listed(&out),
        [
            "counts.parquet",
            "tables/0-country.parquet",
            "tables/1-province.parquet",
            "tables/2-district.parquet",
            "uncertainty.parquet",
            "summary.parquet",
            "tables/0-country-margins.parquet",
            "tables/1-province-margins.parquet",
            "tables/2-district-margins.parquet",
            "README.txt",
        ]
    );
    let ledger = Ledger::at(&home);
    let v = verify_release(&out, &ledger, Some(&dataset)).unwrap();
    assert!(v.ok(), "{:?}", v.problems);
    let checked = v.dataset.as_ref().unwrap();
    assert!(checked.counts.is_none());
    assert!(checked.counts_parquet.as_ref().unwrap().passed());

    // Another release's counts.parquet (valid, of the same dataset): its digest differs.
    let other = tmp.path().join("other");
    release(&home, &other, OutputFormat::Parquet);
    let original = fs::read(out.join("counts.parquet")).unwrap();
    fs::copy(other.join("counts.parquet"), out.join("counts.parquet")).unwrap();
    let v = verify_release(&out, &ledger, Some(&dataset)).unwrap();
    assert!(
        v.problems
            .contains(&"counts.parquet: changed since it was written".to_string()),
        "{:?}",
        v.problems
    );

    // Content: rows that break the checks, with the manifest's digest made to match.
    let (_, mut rows) = parquet_rows(&out.join("counts.parquet"));
    rows[0][3] = (rows[0][3].parse::<i64>().unwrap() + 1).to_string();
    write_counts(&out.join("counts.parquet"), &rows);
    let digest = sha256_file(&out.join("counts.parquet"));
    let text = fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(text.contains(&sha256_hex(&original)));
    fs::write(
        out.join("manifest.json"),
        text.replace(&sha256_hex(&original), &digest),
    )
    .unwrap();
    let v = verify_release(&out, &ledger, Some(&dataset)).unwrap();
    assert!(
        v.problems
            .iter()
            .any(|p| p.starts_with("counts.parquet fails its checks against")),
        "{:?}",
        v.problems
    );
    assert!(
        !v.problems
            .iter()
            .any(|p| p.starts_with("counts.parquet: changed since")),
        "{:?}",
        v.problems
    );
    // The manifest re-hashed to match is itself caught by the ledger's digest of it, and
    // the tables no longer agree with the counts.
    assert!(
        v.problems
            .iter()
            .any(|p| p.starts_with("manifest.json was changed since it was written")),
        "{:?}",
        v.problems
    );
    assert!(
        v.problems
            .iter()
            .any(|p| p.starts_with("tables/0-country.parquet disagrees with counts.parquet")),
        "{:?}",
        v.problems
    );
    // A table tampered with.
    fs::write(out.join("tables/1-province.parquet"), b"not parquet").unwrap();
    let v = verify_release(&out, &ledger, None).unwrap();
    assert!(
        v.problems
            .contains(&"tables/1-province.parquet: changed since it was written".to_string()),
        "{:?}",
        v.problems
    );
}

/// Writes rows of `counts.parquet` (as text) back as coco's columns.
fn write_counts(path: &Path, rows: &[Vec<String>]) {
    use arrow_array::{ArrayRef, Int64Array, StringArray};
    let col = |i: usize| rows.iter().map(|r| r[i].clone()).collect::<Vec<_>>();
    let int = |i: usize| -> ArrayRef {
        Arc::new(Int64Array::from(
            col(i)
                .iter()
                .map(|v| v.parse::<i64>().unwrap())
                .collect::<Vec<_>>(),
        ))
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(col(0))),
        Arc::new(StringArray::from(col(1))),
        int(2),
        int(3),
    ];
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("level", arrow_schema::DataType::Utf8, false),
        arrow_schema::Field::new("region", arrow_schema::DataType::Utf8, false),
        arrow_schema::Field::new("size", arrow_schema::DataType::Int64, false),
        arrow_schema::Field::new("count", arrow_schema::DataType::Int64, false),
    ]));
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(fs::File::create(path).unwrap(), schema, None)
        .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// `coco inspect DIR --json` (which must succeed), without the keys in `drop`.
fn inspect_json(home: &Path, dir: &Path, drop: &[&str]) -> serde_json::Value {
    use common::cli::{coco, s, text};
    let o = coco(&["inspect", &s(dir), "--json"], home);
    assert!(o.status.success(), "{}", text(&o));
    let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let obj = v.as_object_mut().unwrap();
    for key in drop {
        obj.remove(*key);
    }
    v
}

/// Through the binary: `--format parquet` writes `counts.parquet` whose rows are the
/// `counts.csv` rows of a `--format both` release of the same (seeded) draw; `csv`
/// writes no Parquet; `coco convert` makes a dataset that inspects the same.
#[test]
fn the_command_line_writes_and_reads_parquet() {
    use common::cli::{coco, s, sample, text};
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let plan = tmp.path().join("plan.toml");
    let sample = sample();
    let o = coco(&["plan", &s(&sample), "--out", &s(&plan)], &home);
    assert!(o.status.success(), "{}", text(&o));
    let release = |name: &str, format: &str| {
        let out = tmp.path().join(name);
        let o = coco(
            &[
                "release",
                &s(&sample),
                "--config",
                &s(&plan),
                "--out",
                &s(&out),
                "--seed",
                "7",
                "--not-private",
                "--format",
                format,
            ],
            &home,
        );
        assert!(o.status.success(), "{}", text(&o));
        out
    };
    let pq = release("pq", "parquet");
    let both = release("both", "both");
    let csv = release("csv", "csv");
    assert!(!pq.join("counts.csv").exists());
    assert_eq!(
        parquet_rows(&pq.join("counts.parquet")),
        csv_rows(&both.join("counts.csv"))
    );
    assert_eq!(
        fs::read(both.join("counts.csv")).unwrap(),
        fs::read(csv.join("counts.csv")).unwrap()
    );
    assert!(!csv.join("counts.parquet").exists());
    assert!(!listed(&csv).iter().any(|f| f.ends_with(".parquet")));
    let o = coco(
        &[
            "release",
            &s(&sample),
            "--config",
            &s(&plan),
            "--out",
            &s(&tmp.path().join("x")),
            "--format",
            "xlsx",
        ],
        &home,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("[possible values: csv, parquet, both]"),
        "{}",
        text(&o)
    );

    let converted = tmp.path().join("households-pq");
    let o = coco(&["convert", &s(&sample), "--out", &s(&converted)], &home);
    assert!(o.status.success(), "{}", text(&o));
    let inspect = |dir: &Path| {
        let mut v = inspect_json(
            &home,
            dir,
            &["inputs", "fingerprint", "directory", "dataset"],
        );
        let obj = v.as_object_mut().unwrap();
        let form = obj["form_description"]
            .as_str()
            .unwrap()
            .replace(".parquet", ".csv");
        obj.insert("form_description".into(), form.into());
        v
    };
    assert_eq!(inspect(&sample), inspect(&converted));
    let o = coco(&["convert", &s(&sample), "--out", &s(&converted)], &home);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
}

/// The entities form (groups without sizes, one row per entity) end to end through the
/// binary: the sample rewritten in that form, converted to `groups.parquet` and
/// `entities.parquet`, inspects as the sample does, releases in both formats, verifies
/// against its directory, and spends on the same ledger key as the sample (one
/// content, whatever the form or format).
#[test]
fn the_entities_form_in_parquet_releases_end_to_end() {
    use common::cli::{coco, s, sample, text};
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let sample = sample();
    // The sample's groups as groups (group_id,region) and entities (entity_id,group_id).
    let entities_csv = tmp.path().join("entities-csv");
    fs::create_dir(&entities_csv).unwrap();
    for name in ["hierarchy.csv", "names.csv"] {
        fs::copy(sample.join(name), entities_csv.join(name)).unwrap();
    }
    let mut groups = csv::Writer::from_path(entities_csv.join("groups.csv")).unwrap();
    let mut entities = csv::Writer::from_path(entities_csv.join("entities.csv")).unwrap();
    groups.write_record(["group_id", "region"]).unwrap();
    entities.write_record(["entity_id", "group_id"]).unwrap();
    let mut next = 0u64;
    for row in csv::Reader::from_path(sample.join("groups.csv"))
        .unwrap()
        .records()
    {
        let row = row.unwrap();
        let (id, region, size) = (&row[0], &row[1], row[2].parse::<u64>().unwrap());
        groups.write_record([id, region]).unwrap();
        for _ in 0..size {
            next += 1;
            entities.write_record([&format!("p{next}"), id]).unwrap();
        }
    }
    groups.flush().unwrap();
    entities.flush().unwrap();
    drop((groups, entities));

    let converted = tmp.path().join("entities-pq");
    let o = coco(
        &["convert", &s(&entities_csv), "--out", &s(&converted)],
        &home,
    );
    assert!(o.status.success(), "{}", text(&o));
    let mut files: Vec<String> = fs::read_dir(&converted)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "entities.parquet",
            "groups.parquet",
            "hierarchy.csv",
            "names.csv"
        ]
    );

    // The same summary as the sample, apart from the files and the form's wording.
    let inspect = |dir: &Path| {
        inspect_json(
            &home,
            dir,
            &[
                "inputs",
                "fingerprint",
                "directory",
                "dataset",
                "form",
                "form_description",
            ],
        )
    };
    assert_eq!(inspect(&sample), inspect(&converted));
    assert_eq!(inspect(&entities_csv), inspect(&converted));
    let o = coco(&["inspect", &s(&converted)], &home);
    assert!(
        text(&o).contains("Groups form   groups.parquet + entities.parquet"),
        "{}",
        text(&o)
    );

    // Released, verified against its directory, and spent on the sample's key.
    let plan = tmp.path().join("plan.toml");
    let o = coco(&["plan", &s(&converted), "--out", &s(&plan)], &home);
    assert!(o.status.success(), "{}", text(&o));
    let out = tmp.path().join("release");
    let o = coco(
        &[
            "release",
            &s(&converted),
            "--config",
            &s(&plan),
            "--out",
            &s(&out),
            "--format",
            "both",
        ],
        &home,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        parquet_rows(&out.join("counts.parquet")),
        csv_rows(&out.join("counts.csv"))
    );
    let o = coco(&["verify", &s(&out), "--dataset", &s(&converted)], &home);
    assert!(o.status.success(), "{}", text(&o));
    let o = coco(&["verify", &s(&out), "--dataset", &s(&sample)], &home);
    assert!(
        text(&o).contains("same content"),
        "the sample holds the same content: {}",
        text(&o)
    );
    let o = coco(&["ledger", "--json"], &home);
    let ledger: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let datasets = ledger["datasets"].as_array().unwrap();
    assert_eq!(datasets.len(), 1, "{ledger}");
    let sample_key = inspect_json(&home, &sample, &[])["content_digest"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(datasets[0]["dataset"], sample_key.as_str());
    assert_eq!(datasets[0]["spent"], "1");
}
