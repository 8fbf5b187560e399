//! Datasets with their groups tables in Parquet: the same checks and messages as the
//! CSV forms (positions as data rows and column names), the Parquet-only problems
//! (column types, nulls, both formats at once, a file that is not Parquet), and a
//! converted dataset that loads with the same summary as its CSV original.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, Int8Array, Int32Array, Int64Array, RecordBatch, StringArray, UInt16Array, UInt64Array,
};
use arrow_schema::{Field, Schema};
use coco::data::{Dataset, GroupsForm};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

use crate::common;

const HIERARCHY: &str = "nation,state,county\nUS,A,a1\nUS,A,a2\nUS,B,b1\n";

fn strings(values: &[&str]) -> ArrayRef {
    Arc::new(StringArray::from(values.to_vec()))
}

fn int64(values: &[i64]) -> ArrayRef {
    Arc::new(Int64Array::from(values.to_vec()))
}

/// Writes a Parquet file of these columns, in row groups of `row_group` rows.
fn write_parquet(path: &Path, columns: Vec<(&str, ArrayRef)>, row_group: usize) {
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|(name, a)| Field::new(*name, a.data_type().clone(), a.null_count() > 0))
            .collect::<Vec<_>>(),
    ));
    let batch =
        RecordBatch::try_new(schema.clone(), columns.into_iter().map(|c| c.1).collect()).unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(row_group))
        .build();
    let mut w = ArrowWriter::try_new(fs::File::create(path).unwrap(), schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// A dataset directory with `hierarchy.csv` and a Parquet table `name`; the rendered
/// load error (the directory written as `{dir}`), or the dataset.
fn load_with(
    name: &str,
    columns: Vec<(&str, ArrayRef)>,
    extra: &[(&str, &str)],
) -> Result<Dataset, String> {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("hierarchy.csv"), HIERARCHY).unwrap();
    for (n, text) in extra {
        fs::write(dir.path().join(n), text).unwrap();
    }
    write_parquet(&dir.path().join(name), columns, 2);
    Dataset::load(dir.path()).map_err(|e| {
        e.to_string()
            .replace(&dir.path().display().to_string(), "{dir}")
    })
}

fn error_with(name: &str, columns: Vec<(&str, ArrayRef)>) -> String {
    load_with(name, columns, &[]).expect_err("the dataset should be rejected")
}

#[test]
fn parquet_tables_load_like_their_csv_twins() {
    let g = load_with(
        "groups.parquet",
        vec![
            ("group_id", strings(&["g1", "g2", "g3", "g4"])),
            ("region", strings(&["a1", "a1", " b1 ", "a2"])),
            ("size", Arc::new(Int32Array::from(vec![2, 3, 0, 2]))),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(g.form, GroupsForm::GroupSizes);
    assert_eq!(g.inputs[1].path, "groups.parquet");
    assert_eq!(
        g.form_description(),
        "groups.parquet (group_id,region,size)"
    );
    // Column order is free; integers of any width; integer ids.
    let h = load_with(
        "histograms.parquet",
        vec![
            ("count", Arc::new(UInt16Array::from(vec![1, 1, 1, 1]))),
            ("size", Arc::new(Int8Array::from(vec![2, 3, 2, 0]))),
            ("region", strings(&["a1", "a1", "a2", "b1"])),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(g.content_digest(), h.content_digest());
    let e = load_with(
        "groups.parquet",
        vec![
            ("group_id", Arc::new(UInt64Array::from(vec![7, 8, 9, 10]))),
            ("region", strings(&["a1", "a1", "b1", "a2"])),
        ],
        &[(
            "entities.csv",
            "entity_id,group_id\n1,7\n2,7\n3,8\n4,8\n5,8\n6,10\n7,10\n",
        )],
    )
    .unwrap();
    assert_eq!(e.form, GroupsForm::Entities);
    assert_eq!(e.content_digest(), g.content_digest());
}

#[test]
fn parquet_problems_name_the_file_row_and_column() {
    #[allow(clippy::type_complexity)]
    let cases: Vec<(&str, Vec<(&str, ArrayRef)>, &str)> = vec![
        (
            "wrong type",
            vec![
                ("group_id", strings(&["g1"])),
                ("region", strings(&["a1"])),
                ("size", strings(&["2"])),
            ],
            "{dir}/groups.parquet: column size is Utf8: expected an integer (of any width, signed or unsigned)",
        ),
        (
            "a number for a code",
            vec![
                ("group_id", strings(&["g1"])),
                ("region", int64(&[1])),
                ("size", int64(&[2])),
            ],
            "{dir}/groups.parquet: column region is Int64: expected a string (codes are text: a number would lose leading zeros)",
        ),
        (
            "null",
            vec![
                ("group_id", strings(&["g1", "g2", "g3"])),
                ("region", strings(&["a1", "a1", "a2"])),
                (
                    "size",
                    Arc::new(Int64Array::from(vec![Some(1), Some(2), None])),
                ),
            ],
            "{dir}/groups.parquet: row 3, column size: size is null: expected a value in every row",
        ),
        (
            "missing column",
            vec![("group_id", strings(&["g1"])), ("region", strings(&["a1"]))],
            "{dir}/groups.parquet: wrong header \"group_id,region\": missing column \"size\" (a groups.parquet without sizes needs entities.parquet or entities.csv beside it); expected the columns group_id,region,size (in any order)",
        ),
        (
            "unknown region in the second row group",
            vec![
                ("group_id", strings(&["g1", "g2", "g3", "g4", "g5"])),
                ("region", strings(&["a1", "a1", "b1", "a2", "zz"])),
                ("size", int64(&[1, 2, 3, 4, 5])),
            ],
            "{dir}/groups.parquet: row 5, column region: region \"zz\" is not in hierarchy.csv: expected the code of a county (a leaf)",
        ),
        (
            "negative size",
            vec![
                ("group_id", strings(&["g1", "g2"])),
                ("region", strings(&["a1", "a1"])),
                ("size", Arc::new(Int32Array::from(vec![1, -4]))),
            ],
            "{dir}/groups.parquet: row 2, column size: size \"-4\" is not a whole number: expected an integer from 0 to 4294967295",
        ),
        (
            "size above u32",
            vec![
                ("group_id", strings(&["g1"])),
                ("region", strings(&["a1"])),
                ("size", int64(&[4_294_967_296])),
            ],
            "{dir}/groups.parquet: row 1, column size: size \"4294967296\" is too large: expected an integer from 0 to 4294967295",
        ),
        (
            "duplicate integer ids",
            vec![
                ("group_id", int64(&[7, 8, 9, 8])),
                ("region", strings(&["a1", "a1", "a2", "b1"])),
                ("size", int64(&[1, 2, 3, 4])),
            ],
            "{dir}/groups.parquet: row 4, column group_id: group_id \"8\" is already on row 2: expected each group once",
        ),
        (
            "region not a leaf",
            vec![
                ("group_id", strings(&["g1"])),
                ("region", strings(&["A"])),
                ("size", int64(&[1])),
            ],
            "{dir}/groups.parquet: row 1, column region: region \"A\" is a state in hierarchy.csv, not a leaf: expected the code of a county",
        ),
    ];
    for (name, columns, expected) in cases {
        assert_eq!(error_with("groups.parquet", columns), expected, "{name}");
    }
    assert_eq!(
        error_with(
            "histograms.parquet",
            vec![
                ("region", strings(&["a1", "a2", "a1"])),
                ("size", int64(&[1, 1, 1])),
                ("count", int64(&[3, 4, 5])),
            ],
        ),
        "{dir}/histograms.parquet: row 3, column region: region \"a1\" with size 1 is already on row 1: expected each (region, size) pair at most once"
    );
    assert_eq!(
        error_with(
            "histograms.parquet",
            vec![
                ("region", strings(&["a1", "a2"])),
                ("size", int64(&[1, 1])),
                ("count", Arc::new(UInt64Array::from(vec![u64::MAX, 1]))),
            ],
        ),
        "{dir}/histograms.parquet: row 1, column count: the counts add up to more than 1000000000000 groups: expected at most 10^12 groups in the dataset (a bound that keeps every count exact through the release's arithmetic)"
    );
}

#[test]
fn a_table_twice_or_not_parquet_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("hierarchy.csv"), HIERARCHY).unwrap();
    fs::write(d.join("groups.csv"), "group_id,region,size\ng1,a1,1\n").unwrap();
    write_parquet(
        &d.join("groups.parquet"),
        vec![
            ("group_id", strings(&["g1"])),
            ("region", strings(&["a1"])),
            ("size", int64(&[1])),
        ],
        10,
    );
    let shown = |e: coco::data::LoadError| e.to_string().replace(&d.display().to_string(), "{dir}");
    assert_eq!(
        shown(Dataset::load(d).unwrap_err()),
        "{dir}: both groups.csv and groups.parquet: expected the table once, in one of the two formats (remove one)"
    );
    fs::remove_file(d.join("groups.csv")).unwrap();
    fs::write(d.join("groups.parquet"), "group_id,region,size\ng1,a1,1\n").unwrap();
    let e = shown(Dataset::load(d).unwrap_err());
    assert!(
        e.starts_with("{dir}/groups.parquet: not a readable Parquet file: "),
        "{e}"
    );
    fs::write(d.join("groups.parquet"), "").unwrap();
    assert_eq!(
        shown(Dataset::load(d).unwrap_err()),
        "{dir}/groups.parquet: not a readable Parquet file: the file is empty (0 bytes)"
    );
    fs::remove_file(d.join("groups.parquet")).unwrap();
    write_parquet(
        &d.join("histograms.parquet"),
        vec![
            ("region", strings(&["a1"])),
            ("size", int64(&[1])),
            ("count", int64(&[1])),
        ],
        10,
    );
    fs::write(d.join("groups.csv"), "group_id,region,size\ng1,a1,1\n").unwrap();
    assert!(
        shown(Dataset::load(d).unwrap_err()).starts_with(
            "{dir}: more than one groups form: found groups.csv and histograms.parquet;"
        )
    );
}

/// Every CSV row check gives the same message for the Parquet twin of the file: the
/// same text after the position, at the same row.
#[test]
fn csv_and_parquet_twins_fail_the_same_way() {
    let groups = [
        "group_id,region,size\ng1,a1,2\ng2,A1,3\n",
        "group_id,region,size\ng1,a1,2\ng2,US,3\n",
        "group_id,region,size\ng1,a1,2\ng2,a2,3\ng1,b1,1\n",
        "group_id,region,size\ng1,a1,2\ng2,nowhere,3\n",
    ];
    let histograms = [
        "region,size,count\na1,2,3\na2,1,1\na1,2,4\n",
        "region,size,count\na1,2,3\nb1,7,999999999999999999\na2,1,2\n",
        "region,size,count\na1,2,3\nb1,4294967296,1\n",
    ];
    let cases = groups
        .iter()
        .map(|t| ("groups", *t))
        .chain(histograms.iter().map(|t| ("histograms", *t)));
    for (table, text) in cases {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("hierarchy.csv"), HIERARCHY).unwrap();
        fs::write(d.join(format!("{table}.csv")), text).unwrap();
        let csv = Dataset::load(d).unwrap_err();
        // The twin: the same rows, numbers as integers.
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        let columns: Vec<(&str, ArrayRef)> = header
            .iter()
            .enumerate()
            .map(|(i, &name)| {
                let values: Vec<&str> = rows.iter().map(|r| r[i]).collect();
                let column = if matches!(name, "size" | "count") {
                    int64(
                        &values
                            .iter()
                            .map(|v| v.parse().unwrap())
                            .collect::<Vec<_>>(),
                    )
                } else {
                    strings(&values)
                };
                (name, column)
            })
            .collect();
        fs::remove_file(d.join(format!("{table}.csv"))).unwrap();
        write_parquet(&d.join(format!("{table}.parquet")), columns, 2);
        let parquet = Dataset::load(d).unwrap_err();
        // "line L" of the CSV is "row L - 1" of its twin.
        let csv_kind = csv.kind.to_string();
        let csv_kind = match csv_kind.split_once("on line ") {
            Some((before, after)) => {
                let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
                let row = digits.parse::<u64>().unwrap() - 1;
                format!("{before}on row {row}{}", &after[digits.len()..])
            }
            None => csv_kind,
        };
        assert_eq!(csv_kind, parquet.kind.to_string(), "{text}");
        // Line L of the CSV is data row L - 1.
        assert_eq!(csv.line.map(|l| l - 1), parquet.line, "{text}");
        assert_eq!(csv.column, parquet.column, "{text}");
    }
}

/// `coco convert`'s library: the sample dataset in Parquet loads with the same
/// summary as the CSV original, apart from file names, sizes and digests.
#[test]
fn a_converted_dataset_inspects_as_its_original() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("households");
    let src = common::cli::sample();
    let converted = coco::convert::to_parquet(&src, &out).unwrap();
    assert_eq!(
        converted.files,
        ["hierarchy.csv", "names.csv", "groups.parquet"]
    );
    assert!(!out.join("groups.csv").exists());
    let original = Dataset::load(&src).unwrap();
    let twin = Dataset::load(&out).unwrap();
    let summary = |d: &Dataset| {
        let mut v = serde_json::to_value(coco::inspect::Summary::of(d)).unwrap();
        let o = v.as_object_mut().unwrap();
        // Names, sizes and digests of the files, and where they are.
        for key in [
            "inputs",
            "fingerprint",
            "directory",
            "dataset",
            "form_description",
        ] {
            assert!(o.remove(key).is_some(), "{key}");
        }
        v
    };
    assert_eq!(summary(&original), summary(&twin));
    assert_eq!(original.content_digest(), twin.content_digest());
    assert_eq!(
        twin.form_description(),
        original
            .form_description()
            .replace("groups.csv", "groups.parquet")
    );
    let names: Vec<&str> = twin.inputs.iter().map(|i| i.path.as_str()).collect();
    assert_eq!(names, ["hierarchy.csv", "names.csv", "groups.parquet"]);
    // Converting again into the same place is refused.
    assert!(coco::convert::to_parquet(&src, &out).is_err());
}
