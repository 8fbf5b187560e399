//! Loading datasets: one case per class of error, each asserting the exact rendered
//! message (file, line, column, what was found, what was expected), and the valid
//! inputs the data contract accepts.

use std::fs;
use std::path::Path;

use coco::data::{Dataset, GroupsForm, LoadProgress, NodeId};
use coco::histogram::CountOfCounts;
use sha2::{Digest, Sha256};

const HIERARCHY: &str = "nation,state,county\nUS,A,a1\nUS,A,a2\nUS,B,b1\n";

/// Writes `files` into a fresh directory and loads it.
fn load(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Result<Dataset, coco::data::LoadError>) {
    let dir = tempfile::tempdir().unwrap();
    for (name, contents) in files {
        fs::write(dir.path().join(name), contents).unwrap();
    }
    let result = Dataset::load(dir.path());
    (dir, result)
}

fn with_hierarchy<'a>(files: &[(&'a str, &'a [u8])]) -> Vec<(&'a str, &'a [u8])> {
    let mut all = vec![("hierarchy.csv", HIERARCHY.as_bytes())];
    all.extend_from_slice(files);
    all
}

/// The rendered error, with the temporary directory written as `{dir}`.
fn error_of(files: &[(&str, &[u8])]) -> String {
    let (dir, result) = load(files);
    let err = result.expect_err("the dataset should be rejected");
    err.to_string()
        .replace(&dir.path().display().to_string(), "{dir}")
}

struct Case {
    name: &'static str,
    files: Vec<(&'static str, &'static [u8])>,
    expected: &'static str,
}

fn case(
    name: &'static str,
    files: &[(&'static str, &'static str)],
    expected: &'static str,
) -> Case {
    Case {
        name,
        files: files.iter().map(|&(n, c)| (n, c.as_bytes())).collect(),
        expected,
    }
}

fn groups(rows: &'static str) -> (&'static str, &'static str) {
    ("groups.csv", rows)
}

fn cases() -> Vec<Case> {
    let h = ("hierarchy.csv", HIERARCHY);
    vec![
        // Missing files and forms.
        case(
            "no hierarchy.csv",
            &[groups("group_id,region,size\n")],
            "{dir}/hierarchy.csv: file not found: every dataset needs hierarchy.csv, one row per \
             leaf region with its codes from the root down",
        ),
        case(
            "no groups file",
            &[h],
            "{dir}: no groups file: expected groups.csv (group_id,region,size), groups.csv \
             (group_id,region) with entities.csv (entity_id,group_id), or histograms.csv \
             (region,size,count) (each also as .parquet, with the same columns)",
        ),
        case(
            "entities.csv without groups.csv",
            &[h, ("entities.csv", "entity_id,group_id\n")],
            "{dir}/groups.csv: file not found: entities.csv needs groups.csv (group_id,region) \
             beside it, saying which region each group is in",
        ),
        case(
            "histograms.csv and groups.csv",
            &[
                h,
                groups("group_id,region,size\n"),
                ("histograms.csv", "region,size,count\n"),
            ],
            "{dir}: more than one groups form: found groups.csv and histograms.csv; expected \
             exactly one of groups.csv (group_id,region,size), groups.csv (group_id,region) with \
             entities.csv (entity_id,group_id), or histograms.csv (region,size,count)",
        ),
        case(
            "histograms.csv and entities.csv",
            &[
                h,
                ("entities.csv", "entity_id,group_id\n"),
                ("histograms.csv", "region,size,count\n"),
            ],
            "{dir}: more than one groups form: found entities.csv and histograms.csv; expected \
             exactly one of groups.csv (group_id,region,size), groups.csv (group_id,region) with \
             entities.csv (entity_id,group_id), or histograms.csv (region,size,count)",
        ),
        case(
            "groups.csv with sizes and entities.csv",
            &[
                h,
                groups("region,size,group_id\n"),
                ("entities.csv", "entity_id,group_id\n"),
            ],
            "{dir}/groups.csv:1: more than one groups form: found groups.csv with a size column, \
             and entities.csv; expected exactly one of groups.csv (group_id,region,size), \
             groups.csv (group_id,region) with entities.csv (entity_id,group_id), or \
             histograms.csv (region,size,count)",
        ),
        // Empty files and headers.
        case(
            "empty hierarchy.csv",
            &[("hierarchy.csv", ""), groups("group_id,region,size\n")],
            "{dir}/hierarchy.csv: file is empty (0 bytes): expected a header row naming the levels \
             from the root down, e.g. nation,state,county",
        ),
        case(
            "empty groups.csv",
            &[h, groups("")],
            "{dir}/groups.csv: file is empty (0 bytes): expected a header row naming the columns \
             group_id,region,size",
        ),
        case(
            "blank lines only",
            &[h, ("histograms.csv", "\n\r\n\n")],
            "{dir}/histograms.csv: no header row, only blank lines: expected a header row naming \
             the columns region,size,count",
        ),
        case(
            "misspelt column",
            &[h, groups("group_id,region,sise\n")],
            "{dir}/groups.csv:1: wrong header \"group_id,region,sise\": unexpected column \"sise\", \
             missing column \"size\"; expected the columns group_id,region,size (in any order)",
        ),
        case(
            "missing size column",
            &[h, groups("group_id,region\ng1,a1\n")],
            "{dir}/groups.csv:1: wrong header \"group_id,region\": missing column \"size\" (a \
             groups.csv without sizes needs entities.csv beside it); expected the columns \
             group_id,region,size (in any order)",
        ),
        case(
            "duplicated column",
            &[h, ("histograms.csv", "region,size,count,size\n")],
            "{dir}/histograms.csv:1: wrong header \"region,size,count,size\": column \"size\" \
             appears twice; expected the columns region,size,count (in any order)",
        ),
        case(
            "extra column",
            &[h, groups("group_id,region,size,weight\n")],
            "{dir}/groups.csv:1: wrong header \"group_id,region,size,weight\": unexpected column \
             \"weight\"; expected the columns group_id,region,size (in any order)",
        ),
        case(
            "entities.csv header",
            &[
                h,
                groups("group_id,region\n"),
                ("entities.csv", "person,group_id\n"),
            ],
            "{dir}/entities.csv:1: wrong header \"person,group_id\": unexpected column \"person\", \
             missing column \"entity_id\"; expected the columns entity_id,group_id (in any order)",
        ),
        // Rows.
        case(
            "too many fields",
            &[h, groups("group_id,region,size\ng1,a1,1\ng2,a1,3,9\n")],
            "{dir}/groups.csv:3: row has 4 fields: expected 3 (group_id,region,size)",
        ),
        case(
            "a single field",
            &[h, ("histograms.csv", "region,size,count\na1\n")],
            "{dir}/histograms.csv:2: row has 1 field: expected 3 (region,size,count)",
        ),
        case(
            "too few fields in hierarchy.csv",
            &[
                ("hierarchy.csv", "nation,state,county\nUS,A\n"),
                groups("group_id,region,size\n"),
            ],
            "{dir}/hierarchy.csv:2: row has 2 fields: expected 3 (nation,state,county)",
        ),
        case(
            "negative size",
            &[
                h,
                groups(
                    "group_id,region,size\ng1,a1,1\ng2,a1,1\ng3,a1,1\ng4,a1,1\ng5,a1,1\ng6,a1,1\n\
                     g7,a1,1\ng8,a1,1\ng9,a1,1\ng10,a1,1\ng11,a1,-4\n",
                ),
            ],
            "{dir}/groups.csv:12:3: size \"-4\" is not a whole number: expected an integer from 0 \
             to 4294967295",
        ),
        case(
            "fractional size",
            &[h, groups("group_id,region,size\ng1,a1,2.5\n")],
            "{dir}/groups.csv:2:3: size \"2.5\" is not a whole number: expected an integer from 0 \
             to 4294967295",
        ),
        case(
            "empty size",
            &[h, groups("size,group_id,region\n,g1,a1\n")],
            "{dir}/groups.csv:2:1: size \"\" is not a whole number: expected an integer from 0 to \
             4294967295",
        ),
        case(
            "size above u32",
            &[h, groups("group_id,region,size\ng1,a1,4294967296\n")],
            "{dir}/groups.csv:2:3: size \"4294967296\" is too large: expected an integer from 0 \
             to 4294967295",
        ),
        case(
            "size above u32 in histograms.csv",
            &[
                h,
                (
                    "histograms.csv",
                    "region,size,count\na1,99999999999999999999999,1\n",
                ),
            ],
            "{dir}/histograms.csv:2:2: size \"99999999999999999999999\" is too large: expected an \
             integer from 0 to 4294967295",
        ),
        case(
            "negative count",
            &[h, ("histograms.csv", "region,size,count\na1,1,-1\n")],
            "{dir}/histograms.csv:2:3: count \"-1\" is not a whole number: expected an integer \
             from 0 to 18446744073709551615",
        ),
        case(
            "count above u64",
            &[
                h,
                (
                    "histograms.csv",
                    "region,size,count\na1,1,18446744073709551616\n",
                ),
            ],
            "{dir}/histograms.csv:2:3: count \"18446744073709551616\" is too large: expected an \
             integer from 0 to 18446744073709551615",
        ),
        case(
            "counts summing past 10^12",
            &[
                h,
                (
                    "histograms.csv",
                    "region,size,count\na1,1,999999999999\nb1,1,2\n",
                ),
            ],
            "{dir}/histograms.csv:3:3: the counts add up to more than 1000000000000 groups: \
             expected at most 10^12 groups in the dataset (a bound that keeps every count exact through the release's arithmetic)",
        ),
        case(
            "duplicate group_id",
            &[
                h,
                groups("group_id,region,size\ng1,a1,1\ng2,a2,1\ng1,b1,2\n"),
            ],
            "{dir}/groups.csv:4:1: group_id \"g1\" is already on line 2: expected each group once",
        ),
        case(
            "duplicate group_id in the entities form",
            &[
                h,
                groups("group_id,region\nx,a1\ny,a1\nx,a2\n"),
                ("entities.csv", "entity_id,group_id\n"),
            ],
            "{dir}/groups.csv:4:1: group_id \"x\" is already on line 2: expected each group once",
        ),
        case(
            "duplicate leaf code",
            &[
                (
                    "hierarchy.csv",
                    "nation,state,county\nUS,A,a1\nUS,A,a2\nUS,B,a1\n",
                ),
                groups("group_id,region,size\n"),
            ],
            "{dir}/hierarchy.csv:4:3: leaf code \"a1\" is already on line 2: expected each leaf \
             region once (leaf codes are unique across the file)",
        ),
        case(
            "unknown region",
            &[h, groups("group_id,region,size\ng1,zz,1\n")],
            "{dir}/groups.csv:2:2: region \"zz\" is not in hierarchy.csv: expected the code of a \
             county (a leaf)",
        ),
        case(
            "region differing by case",
            &[h, ("histograms.csv", "region,size,count\nA1,1,1\n")],
            "{dir}/histograms.csv:2:1: region \"A1\" is not in hierarchy.csv: expected the code of \
             a county (a leaf); codes are case-sensitive, and hierarchy.csv has \"a1\"",
        ),
        case(
            "region of a non-leaf",
            &[
                h,
                groups("group_id,region\ng1,B\n"),
                ("entities.csv", "entity_id,group_id\n"),
            ],
            "{dir}/groups.csv:2:2: region \"B\" is a state in hierarchy.csv, not a leaf: expected \
             the code of a county",
        ),
        case(
            "two roots",
            &[
                ("hierarchy.csv", "nation,state,county\nUS,A,a1\nCA,B,b1\n"),
                groups("group_id,region,size\n"),
            ],
            "{dir}/hierarchy.csv:3:1: root code \"CA\" differs from \"US\" on line 2: expected one \
             root, the same code in the first column of every row",
        ),
        case(
            "slash in a code",
            &[
                ("hierarchy.csv", "nation,state,county\nUS,A/B,a1\n"),
                groups("group_id,region,size\n"),
            ],
            "{dir}/hierarchy.csv:2:2: code \"A/B\" contains '/': expected codes without '/', \
             which separates codes in display ids",
        ),
        case(
            "empty code",
            &[
                ("hierarchy.csv", "nation,state,county\nUS, ,a1\n"),
                groups("group_id,region,size\n"),
            ],
            "{dir}/hierarchy.csv:2:2: empty state code: expected a code in every column",
        ),
        case(
            "duplicate level names",
            &[
                ("hierarchy.csv", "nation,state,state\nUS,A,a1\n"),
                groups("group_id,region,size\n"),
            ],
            "{dir}/hierarchy.csv:1:3: level name \"state\" is already column 2: expected each \
             level named once",
        ),
        case(
            "empty level name",
            &[
                ("hierarchy.csv", "nation,,county\nUS,A,a1\n"),
                groups("group_id,region,size\n"),
            ],
            "{dir}/hierarchy.csv:1:2: empty level name: expected a name in every column of the \
             header (e.g. nation,state,county)",
        ),
        case(
            "hierarchy without rows",
            &[
                ("hierarchy.csv", "nation,state,county\n"),
                groups("group_id,region,size\n"),
            ],
            "{dir}/hierarchy.csv: no regions: the file has a header but no rows; expected one row \
             per leaf region",
        ),
        case(
            "entity in an unknown group",
            &[
                h,
                groups("group_id,region\ng1,a1\n"),
                ("entities.csv", "entity_id,group_id\np1,g1\np2,g9\n"),
            ],
            "{dir}/entities.csv:3:2: group_id \"g9\" is not in groups.csv: expected the group_id \
             of a row of groups.csv",
        ),
        case(
            "duplicate entity_id",
            &[
                h,
                groups("group_id,region\ng1,a1\ng2,a2\n"),
                ("entities.csv", "entity_id,group_id\np1,g1\np2,g1\np1,g2\n"),
            ],
            "{dir}/entities.csv:4:1: entity_id \"p1\" is already on line 2: expected each entity \
             once, in one group",
        ),
        case(
            "duplicate (region, size)",
            &[
                h,
                (
                    "histograms.csv",
                    "region,size,count\na1,2,5\nb1,2,1\na1,3,1\na1,2,0\n",
                ),
            ],
            "{dir}/histograms.csv:5:1: region \"a1\" with size 2 is already on line 2: expected \
             each (region, size) pair at most once",
        ),
        case(
            "names.csv: unknown region",
            &[
                h,
                groups("group_id,region,size\n"),
                ("names.csv", "region,name\nUS/C,Carolina\n"),
            ],
            "{dir}/names.csv:2:1: region \"US/C\" is not in hierarchy.csv: expected a display id \
             such as \"US/A\" or a leaf code",
        ),
        case(
            "names.csv: region named twice",
            &[
                h,
                groups("group_id,region,size\n"),
                (
                    "names.csv",
                    "region,name\nUS/A/a1,First\nUS,Nation\na1,Again\n",
                ),
            ],
            "{dir}/names.csv:4:1: region \"a1\" (US/A/a1) already has a name on line 2: expected \
             at most one name per region",
        ),
        case(
            "names.csv: empty name",
            &[
                h,
                groups("group_id,region,size\n"),
                ("names.csv", "name,region\n  ,US/A\n"),
            ],
            "{dir}/names.csv:2:1: empty name for region \"US/A\": expected a display name (leave \
             the region out of names.csv to give it none)",
        ),
        case(
            "names.csv: wrong header",
            &[
                h,
                groups("group_id,region,size\n"),
                ("names.csv", "id,name\n"),
            ],
            "{dir}/names.csv:1: wrong header \"id,name\": unexpected column \"id\", missing column \
             \"region\"; expected the columns region,name (in any order)",
        ),
    ]
}

#[test]
fn each_error_class_has_its_exact_message() {
    let mut failures = Vec::new();
    for c in cases() {
        let got = error_of(&c.files);
        if got != c.expected {
            failures.push(format!(
                "{}:\n  expected {}\n  got      {}",
                c.name, c.expected, got
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn invalid_utf8_names_line_and_column() {
    let got = error_of(&with_hierarchy(&[(
        "groups.csv",
        b"group_id,region,size\ng1,a1,1\ng2,a\xff1,1\n",
    )]));
    assert_eq!(
        got,
        "{dir}/groups.csv:3:2: invalid UTF-8 (byte 0xff at byte 2 of the field): expected UTF-8 text (save the file as UTF-8)"
    );
    let got = error_of(&[
        ("hierarchy.csv", b"nation,st\xc3ate\nUS,A\n"),
        ("groups.csv", b"group_id,region,size\n"),
    ]);
    assert_eq!(
        got,
        "{dir}/hierarchy.csv:1:2: invalid UTF-8 (byte 0xc3 at byte 3 of the field): expected UTF-8 text (save the file as UTF-8)"
    );
}

#[test]
fn a_huge_line_is_not_echoed() {
    let mut rows = b"group_id,region,size\ng1,a1,".to_vec();
    rows.extend(std::iter::repeat_n(b'7', 1_000_000));
    rows.extend_from_slice(b",x\n");
    let got = error_of(&with_hierarchy(&[("groups.csv", &rows)]));
    assert_eq!(
        got,
        "{dir}/groups.csv:2: row has 4 fields: expected 3 (group_id,region,size)"
    );
    // A huge value is shown cut.
    let mut rows = b"group_id,region,size\ng1,".to_vec();
    rows.extend(std::iter::repeat_n(b'z', 1_000_000));
    rows.extend_from_slice(b",1\n");
    let got = error_of(&with_hierarchy(&[("groups.csv", &rows)]));
    assert_eq!(
        got,
        format!(
            "{{dir}}/groups.csv:2:2: a field of {} bytes: expected at most 1024 bytes in a field \
             (codes, names and numbers are short)",
            1_000_000
        )
    );
}

#[test]
fn missing_or_wrong_directory() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let err = Dataset::load(&missing).unwrap_err();
    assert_eq!(err.file, missing);
    assert_eq!(
        err.to_string(),
        format!(
            "{}: directory not found: expected a dataset directory holding hierarchy.csv and a \
             groups file",
            missing.display()
        )
    );
    let file = dir.path().join("file");
    fs::write(&file, "x").unwrap();
    assert_eq!(
        Dataset::load(&file).unwrap_err().to_string(),
        format!(
            "{}: not a directory: expected a dataset directory holding hierarchy.csv and a groups file",
            file.display()
        )
    );
}

#[test]
fn error_fields_are_structured() {
    let (dir, result) = load(&with_hierarchy(&[(
        "groups.csv",
        b"group_id,region,size\ng1,a1,x\n",
    )]));
    let err = result.unwrap_err();
    assert_eq!(err.file, dir.path().join("groups.csv"));
    assert_eq!((err.line, err.column), (Some(2), Some(3)));
    assert!(matches!(
        err.kind,
        coco::data::LoadErrorKind::NotInteger { column: "size", .. }
    ));
}

// ---- Valid inputs ----

fn ok(files: &[(&str, &[u8])]) -> Dataset {
    let (_dir, result) = load(files);
    result.unwrap_or_else(|e| panic!("should load: {e}"))
}

fn leaf(d: &Dataset, display_id: &str) -> CountOfCounts {
    d.truth()
        .for_diagnostic(coco::privacy::Diagnostic::Oracle)
        .node(d.hierarchy.find(display_id).unwrap())
        .to_owned()
}

fn hist(pairs: &[(u32, u64)]) -> CountOfCounts {
    CountOfCounts::from_pairs(pairs.iter().copied()).unwrap()
}

#[test]
fn the_three_forms_give_the_same_histograms() {
    let sizes = with_hierarchy(&[(
        "groups.csv",
        b"group_id,region,size\nh1,a1,2\nh2,a1,0\nh3,a1,2\nh4,b1,3\nh5,a1,1\n",
    )]);
    let entities = with_hierarchy(&[
        (
            "groups.csv",
            b"region,group_id\na1,h1\na1,h2\na1,h3\nb1,h4\na1,h5\n",
        ),
        (
            "entities.csv",
            b"group_id,entity_id\nh1,p1\nh4,p2\nh1,p3\nh3,p4\nh4,p5\nh3,p6\nh5,p7\nh4,p8\n",
        ),
    ]);
    let histograms = with_hierarchy(&[(
        "histograms.csv",
        b"region,size,count\na1,0,1\na1,1,1\na1,2,2\nb1,3,1\na2,5,0\n",
    )]);
    let a = ok(&sizes);
    let b = ok(&entities);
    let c = ok(&histograms);
    assert_eq!(a.form, GroupsForm::GroupSizes);
    assert_eq!(b.form, GroupsForm::Entities);
    assert_eq!(c.form, GroupsForm::Histograms);
    assert_eq!(leaf(&a, "US/A/a1"), hist(&[(0, 1), (1, 1), (2, 2)]));
    assert_eq!(leaf(&a, "US/B/b1"), hist(&[(3, 1)]));
    assert!(leaf(&a, "US/A/a2").is_empty());
    assert_eq!(a.groups(NodeId::ROOT), 5);
    for d in [&b, &c] {
        assert_eq!(d.hierarchy, a.hierarchy);
        assert_eq!(
            d.truth().for_diagnostic(coco::privacy::Diagnostic::Oracle),
            a.truth().for_diagnostic(coco::privacy::Diagnostic::Oracle)
        );
        assert_eq!(d.public().groups, a.public().groups);
    }
}

#[test]
fn bom_crlf_quotes_spaces_and_blank_lines_are_accepted() {
    let hierarchy =
        b"\xef\xbb\xbfnation,\"state\",county\r\nUS,A,a1\r\n\"US\", A ,\"a,2\"\r\n\r\n\r\n";
    let d = ok(&[
        ("hierarchy.csv", hierarchy),
        (
            "groups.csv",
            b"\xef\xbb\xbf group_id , region ,size\r\n\"g\"\"1\",a1, 3 \r\n\r\n\"g\n2\",\"a,2\",\"4\"\r\n\n\n",
        ),
    ]);
    assert_eq!(d.hierarchy.level_names(), ["nation", "state", "county"]);
    assert_eq!(leaf(&d, "US/A/a1"), hist(&[(3, 1)]));
    assert_eq!(leaf(&d, "US/A/a,2"), hist(&[(4, 1)]));
    // The BOM still counts in the digest and size.
    assert_eq!(d.inputs[0].bytes, hierarchy.len() as u64);
    let digest: String = Sha256::digest(hierarchy)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(d.inputs[0].sha256, digest);
}

#[test]
fn lines_of_spaces_are_skipped_like_empty_lines() {
    let d = ok(&with_hierarchy(&[(
        "groups.csv",
        b"group_id,region,size\n   \ng1,a1,2\n\t\n  \n",
    )]));
    assert_eq!(leaf(&d, "US/A/a1"), hist(&[(2, 1)]));
}

#[test]
fn a_line_number_after_a_quoted_line_break_is_the_file_line() {
    let got = error_of(&with_hierarchy(&[(
        "groups.csv",
        b"group_id,region,size\n\"multi\nline\",a1,1\ng2,a1,x\n",
    )]));
    assert_eq!(
        got,
        "{dir}/groups.csv:4:3: size \"x\" is not a whole number: expected an integer from 0 to 4294967295"
    );
}

#[test]
fn header_only_groups_give_a_dataset_without_groups() {
    let d = ok(&with_hierarchy(&[("groups.csv", b"group_id,region,size")]));
    assert!(
        d.truth()
            .for_diagnostic(coco::privacy::Diagnostic::Oracle)
            .all()
            .iter()
            .all(|h| h.is_empty())
    );
    assert_eq!(d.groups(NodeId::ROOT), 0);
    let d = ok(&with_hierarchy(&[
        ("groups.csv", b"group_id,region\n"),
        ("entities.csv", b"entity_id,group_id\n"),
    ]));
    assert_eq!(d.groups(NodeId::ROOT), 0);
}

#[test]
fn leaf_codes_are_case_sensitive() {
    let d = ok(&[
        ("hierarchy.csv", b"nation,county\nUS,06A\nUS,06a\n"),
        (
            "groups.csv",
            b"group_id,region,size\n1,06A,1\n2,06a,2\n3,06a,2\n",
        ),
    ]);
    assert_eq!(leaf(&d, "US/06A"), hist(&[(1, 1)]));
    assert_eq!(leaf(&d, "US/06a"), hist(&[(2, 2)]));
}

#[test]
fn a_group_without_entities_has_size_zero() {
    let d = ok(&with_hierarchy(&[
        ("groups.csv", b"group_id,region\ng1,a1\ng2,a1\n"),
        ("entities.csv", b"entity_id,group_id\np1,g2\n"),
    ]));
    assert_eq!(leaf(&d, "US/A/a1"), hist(&[(0, 1), (1, 1)]));
}

#[test]
fn names_are_applied_and_listed_as_inputs() {
    let d = ok(&with_hierarchy(&[
        ("groups.csv", b"group_id,region,size\n"),
        (
            "names.csv",
            b"region,name\nUS,United States\nUS/B,State B\nb1,County b1\n",
        ),
    ]));
    let name = |id: &str| {
        d.hierarchy
            .name(d.hierarchy.find(id).unwrap())
            .map(str::to_string)
    };
    assert_eq!(name("US").as_deref(), Some("United States"));
    assert_eq!(name("US/B").as_deref(), Some("State B"));
    assert_eq!(name("US/B/b1").as_deref(), Some("County b1"));
    assert_eq!(name("US/A"), None);
    let files: Vec<&str> = d.inputs.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(files, ["hierarchy.csv", "names.csv", "groups.csv"]);
}

#[test]
fn inputs_carry_sizes_and_sha256_in_a_fixed_order() {
    let groups = b"group_id,region\ng1,a1\n".as_slice();
    let entities = b"entity_id,group_id\np1,g1\n".as_slice();
    let (dir, result) = load(&with_hierarchy(&[
        ("entities.csv", entities),
        ("groups.csv", groups),
    ]));
    let d = result.unwrap();
    let expected: Vec<(String, String, u64)> = [
        ("hierarchy.csv", HIERARCHY.as_bytes()),
        ("groups.csv", groups),
        ("entities.csv", entities),
    ]
    .iter()
    .map(|(name, bytes)| {
        let digest: String = Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        (name.to_string(), digest, bytes.len() as u64)
    })
    .collect();
    let got: Vec<(String, String, u64)> = d
        .inputs
        .iter()
        .map(|f| (f.path.clone(), f.sha256.clone(), f.bytes))
        .collect();
    assert_eq!(got, expected);
    assert_eq!(d.dir, dir.path());
    assert_eq!(
        Dataset::load(dir.path()).unwrap().fingerprint(),
        d.fingerprint()
    );
}

#[test]
fn progress_reaches_each_files_size() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("hierarchy.csv"), HIERARCHY).unwrap();
    let mut rows = String::from("group_id,region,size\n");
    for i in 0..600_000 {
        rows.push_str(&format!("g{i},a{},{}\n", 1 + i % 2, i % 7));
    }
    fs::write(dir.path().join("groups.csv"), &rows).unwrap();
    let mut reports: Vec<LoadProgress> = Vec::new();
    let d = Dataset::load_with_progress(dir.path(), &mut |p| reports.push(p)).unwrap();
    assert_eq!(d.groups(NodeId::ROOT), 600_000);
    let groups: Vec<&LoadProgress> = reports.iter().filter(|p| p.file == "groups.csv").collect();
    // The file is a few MB: a report at the start, at least one on the way, one at the end.
    assert!(groups.len() >= 3, "{groups:?}");
    assert!(
        groups
            .windows(2)
            .all(|w| w[0].bytes_read <= w[1].bytes_read)
    );
    let last = groups.last().unwrap();
    assert_eq!(
        (last.bytes_read, last.bytes_total),
        (rows.len() as u64, rows.len() as u64)
    );
}

#[test]
fn large_sizes_and_a_single_level_hierarchy() {
    let d = ok(&[
        ("hierarchy.csv", b"nation\nUS\n"),
        (
            "groups.csv",
            b"group_id,region,size\n1,US,4294967295\n2,US,300\n3,US,300\n4,US,7\n",
        ),
    ]);
    assert_eq!(
        d.truth()
            .for_diagnostic(coco::privacy::Diagnostic::Oracle)
            .node(NodeId::ROOT),
        hist(&[(7, 1), (300, 2), (4_294_967_295, 1)]).as_ref()
    );
}

#[test]
fn unused_leaf_has_empty_histogram_in_every_form() {
    let d = ok(&with_hierarchy(&[(
        "histograms.csv",
        b"region,size,count\na1,1,1\n",
    )]));
    assert!(leaf(&d, "US/B/b1").is_empty());
    assert!(leaf(&d, "US/B").is_empty());
    assert_eq!(d.groups(d.hierarchy.find("US/A").unwrap()), 1);
}

#[test]
fn dataset_path_is_kept() {
    let (dir, result) = load(&with_hierarchy(&[(
        "groups.csv",
        b"group_id,region,size\n",
    )]));
    assert_eq!(result.unwrap().dir, dir.path());
    assert!(Path::new(&dir.path().join("groups.csv")).exists());
}

mod no_panic {
    use super::*;
    use proptest::prelude::*;

    /// Short texts over the bytes that matter to CSV and to the checks: separators,
    /// quotes, line ends, spaces, '/', digits, a minus, letters, a BOM and invalid UTF-8.
    fn text() -> impl Strategy<Value = Vec<u8>> {
        let pieces: Vec<&'static [u8]> = vec![
            b",",
            b"\"",
            b"\n",
            b"\r\n",
            b" ",
            b"/",
            b"0",
            b"1",
            b"7",
            b"-",
            b"a1",
            b"A",
            b"b1",
            b"US",
            b"\xef\xbb\xbf",
            b"\xff",
            b"4294967296",
            b"18446744073709551615",
            b"group_id",
            b"region",
            b"size",
            b"count",
            b"entity_id",
            b"name",
        ];
        proptest::collection::vec(proptest::sample::select(pieces), 0..40)
            .prop_map(|parts| parts.concat())
    }

    fn header_then(header: &'static str) -> impl Strategy<Value = Vec<u8>> {
        text().prop_map(move |body| [header.as_bytes(), &body].concat())
    }

    proptest! {
        #![proptest_config(crate::common::proptest_config(200))]

        /// Whatever the bytes, loading returns a dataset or an error naming a file in
        /// the directory; it never panics.
        #[test]
        fn arbitrary_files_never_panic(
            hierarchy in prop_oneof![text(), header_then("nation,state,county\nUS,A,a1\n")],
            groups in prop_oneof![text(), header_then("group_id,region,size\n")],
            entities in prop_oneof![text(), header_then("entity_id,group_id\n")],
            histograms in prop_oneof![text(), header_then("region,size,count\n")],
            names in text(),
            which in 0u8..32,
        ) {
            let mut files: Vec<(&str, &[u8])> = vec![("hierarchy.csv", &hierarchy)];
            for (bit, name, bytes) in [
                (1, "groups.csv", &groups),
                (2, "entities.csv", &entities),
                (4, "histograms.csv", &histograms),
                (8, "names.csv", &names),
            ] {
                if which & bit != 0 {
                    files.push((name, bytes));
                }
            }
            let (dir, result) = load(&files);
            if let Err(e) = result {
                prop_assert!(e.file.starts_with(dir.path()));
                prop_assert!(!e.to_string().contains('\n'));
            }
        }

        /// Rows over a valid hierarchy: histograms built from random valid rows equal
        /// the same data given as group sizes.
        #[test]
        fn group_sizes_and_histograms_agree(
            rows in proptest::collection::vec((0usize..3, 0u32..6), 0..40)
        ) {
            let leaves = ["a1", "a2", "b1"];
            let mut groups = String::from("group_id,region,size\n");
            let mut counts = std::collections::BTreeMap::new();
            for (i, &(leaf, size)) in rows.iter().enumerate() {
                groups.push_str(&format!("g{i},{},{size}\n", leaves[leaf]));
                *counts.entry((leaves[leaf], size)).or_insert(0u64) += 1;
            }
            let mut histograms = String::from("count,region,size\n");
            for ((leaf, size), count) in &counts {
                histograms.push_str(&format!("{count},{leaf},{size}\n"));
            }
            let a = ok(&with_hierarchy(&[("groups.csv", groups.as_bytes())]));
            let b = ok(&with_hierarchy(&[("histograms.csv", histograms.as_bytes())]));
            prop_assert_eq!(a.truth().for_diagnostic(coco::privacy::Diagnostic::Oracle), b.truth().for_diagnostic(coco::privacy::Diagnostic::Oracle));
            prop_assert_eq!(a.groups(NodeId::ROOT), rows.len() as u64);
        }
    }
}

#[test]
fn a_cancelled_load_stops_at_the_next_report() {
    // Cancelled after the first progress report: nothing more is read and the error
    // says so (the TUI's esc while a dataset loads).
    let mut rows = String::from("group_id,region,size\n");
    for i in 0..400_000 {
        rows.push_str(&format!("g{i},A,{}\n", 1 + i % 7));
    }
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("hierarchy.csv"), "nation,state\nN,A\n").unwrap();
    fs::write(dir.path().join("groups.csv"), rows).unwrap();
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let mut reports = Vec::new();
    let err = Dataset::load_cancellable(dir.path(), &cancel, &mut |p: LoadProgress| {
        reports.push(p);
        cancel.store(true, std::sync::atomic::Ordering::Relaxed);
    })
    .unwrap_err();
    assert!(
        matches!(err.kind, coco::data::LoadErrorKind::Cancelled),
        "{err}"
    );
    assert!(err.to_string().ends_with("loading was cancelled"), "{err}");
    assert!(
        reports.iter().all(|p| p.bytes_read < p.bytes_total),
        "{reports:?}"
    );
    // Not cancelled: the same files load.
    let fresh = std::sync::atomic::AtomicBool::new(false);
    assert!(Dataset::load_cancellable(dir.path(), &fresh, &mut |_| {}).is_ok());
}
