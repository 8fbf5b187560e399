//! `coco inspect` through the real binary: text, JSON, and a dataset with an error.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::cli::COCO;

/// `coco ARGS` (inspect keeps no ledger).
fn coco(args: &[&str]) -> Output {
    Command::new(COCO)
        .args(args)
        .output()
        .expect("the coco binary runs")
}

/// Two states, three counties (one without groups), nine groups, with names.
fn small_dataset(dir: &Path) {
    fs::write(
        dir.join("hierarchy.csv"),
        "nation,state,county\nUS,06,06037\nUS,06,06001\nUS,01,01001\n",
    )
    .unwrap();
    fs::write(
        dir.join("names.csv"),
        "region,name\nUS/06,California\n06037,Los Angeles County\n",
    )
    .unwrap();
    fs::write(
        dir.join("groups.csv"),
        "group_id,region,size\n\
         1,06037,2\n2,06037,1\n3,06037,4\n4,06037,1\n5,06037,12\n\
         6,01001,3\n7,01001,1\n8,01001,1\n9,01001,2\n",
    )
    .unwrap();
}

#[test]
fn inspect_prints_an_aligned_confidential_summary() {
    let dir = tempfile::tempdir().unwrap();
    small_dataset(dir.path());
    let out = coco(&["inspect", dir.path().to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    let name = dir.path().file_name().unwrap().to_str().unwrap();
    assert!(text.starts_with(&format!("Dataset {name} ({})\n", dir.path().display())));
    assert!(text.contains("CONFIDENTIAL"));
    assert!(text.contains("Groups form   groups.csv (group_id,region,size)\n"));
    assert!(text.contains("Root US: 9 groups, 27 entities, largest group 12, 5 distinct sizes\n"));
    assert!(text.contains(
        "  level   nodes  empty  groups  entities  max size  distinct sizes\n\
         \x20 nation      1      0       9        27        12               5\n\
         \x20 state       2      0       9        27        12               5\n\
         \x20 county      3      1       9        27        12               5\n"
    ));
    assert!(text.contains(
        "  state\n\
         \x20   id     name        groups  entities  max size\n\
         \x20   US/06  California       5        20        12\n\
         \x20   US/01                   4         7         3\n"
    ));
    assert!(text.contains(
        "  county\n\
         \x20   id           name                groups  entities  max size\n\
         \x20   US/06/06037  Los Angeles County       5        20        12\n\
         \x20   US/01/01001                           4         7         3\n\
         \x20   US/06/06001                           0         0         -\n"
    ));
}

#[test]
fn inspect_json_has_the_same_figures() {
    let dir = tempfile::tempdir().unwrap();
    small_dataset(dir.path());
    let out = coco(&["inspect", dir.path().to_str().unwrap(), "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["confidential"], true);
    assert_eq!(v["form"], "group_sizes");
    let files: Vec<&str> = v["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["hierarchy.csv", "names.csv", "groups.csv"]);
    assert_eq!(v["inputs"][0]["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(v["root"]["groups"], 9);
    assert_eq!(v["root"]["entities"], 27);
    assert_eq!(v["root"]["max_size"], 12);
    assert_eq!(v["root"]["distinct_sizes"], 5);
    let county = &v["levels"][2];
    assert_eq!(county["name"], "county");
    assert_eq!(county["nodes"], 3);
    assert_eq!(county["empty_nodes"], 1);
    assert_eq!(county["largest"][0]["id"], "US/06/06037");
    assert_eq!(county["largest"][0]["name"], "Los Angeles County");
    assert_eq!(county["largest"][2]["max_size"], serde_json::Value::Null);
}

#[test]
fn a_bad_dataset_fails_with_one_line_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    small_dataset(dir.path());
    fs::write(
        dir.path().join("groups.csv"),
        "group_id,region,size\n1,06037,2\n2,06037,two\n",
    )
    .unwrap();
    for json in [false, true] {
        let mut args = vec!["inspect", dir.path().to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let out = coco(&args);
        assert!(!out.status.success());
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(
            stderr,
            format!(
                "error: {}: size \"two\" is not a whole number: expected an integer from 0 to 4294967295\n",
                format_args!("{}:3:3", dir.path().join("groups.csv").display())
            )
        );
    }
}
