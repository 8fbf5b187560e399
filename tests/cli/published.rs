//! What is published is private (issue 13, parts 1 and 2), through the real binary:
//! every file of a release directory is scanned for anything computed from the
//! confidential inputs without noise (each input file's SHA-256, the dataset
//! fingerprint of coco 0.1, the content digest that keys spending) and for the
//! operator's directory layout; that provenance is kept in the ledger instead. A
//! seeded release is refused unless asked for as not private, and then says so in its
//! file names, its manifest and its ledger line.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::common;
use common::cli::{COCO, coco, s, sample, text};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every file under `dir`, recursively, with its bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p, bytes));
            }
        }
    }
    out
}

/// The secrets of a dataset directory: what a published file must never hold.
fn secrets(dir: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (p, bytes) in files(dir) {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        found.push((format!("sha256 of {name}"), hex(&Sha256::digest(&bytes))));
    }
    let d = coco::data::Dataset::load(dir).unwrap();
    found.push(("coco 0.1's dataset fingerprint".into(), d.fingerprint()));
    found.push(("content digest".into(), d.content_digest()));
    // The hierarchy-independent spending key (issue 23) and its first-level regions'.
    let population = d.population_keys();
    found.push(("population key".into(), population.key));
    for (i, part) in population.parts.into_iter().enumerate() {
        found.push((
            format!("population key of region {i} of the first level"),
            part,
        ));
    }
    for f in &d.inputs {
        found.push((format!("recorded sha256 of {}", f.path), f.sha256.clone()));
    }
    found.push(("the dataset directory".into(), s(dir)));
    found.push((
        "the dataset directory, canonical".into(),
        s(&std::fs::canonicalize(dir).unwrap()),
    ));
    found
}

fn plan(tmp: &Path, data: &Path, home: &Path) -> PathBuf {
    let path = tmp.join("plan.toml");
    let o = coco(
        &["plan", &s(data), "--total", "1", "--out", &s(&path)],
        home,
    );
    assert!(o.status.success(), "{}", text(&o));
    path
}

fn assert_holds_none(release: &Path, secrets: &[(String, String)]) {
    let all = files(release);
    assert!(all.len() >= 3, "{all:?}");
    for (path, bytes) in &all {
        let content = String::from_utf8_lossy(bytes);
        for (what, secret) in secrets {
            for form in [secret.clone(), secret.to_uppercase()] {
                assert!(
                    !content.contains(&form),
                    "{} holds {what} ({secret})",
                    path.display()
                );
            }
            // Even a prefix of a digest, as a short fingerprint, is a fingerprint.
            if secret.len() == 64 {
                assert!(
                    !content.contains(&secret[..16]),
                    "{} holds a prefix of {what}",
                    path.display()
                );
            }
        }
    }
}

/// Problem 1: the manifest held `inputs[].sha256` and the dataset fingerprint, from
/// which an auditor who knew every record but one recovered that household's size. No
/// file of a release holds them now, in either input form; the ledger keeps them.
#[test]
fn no_published_file_holds_a_digest_of_the_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let taxi = tmp.path().join("taxi");
    let o = coco(&["gen", "taxi", "--out", &s(&taxi)], &home);
    assert!(o.status.success(), "{}", text(&o));
    for (i, data) in [sample(), taxi].into_iter().enumerate() {
        let secrets = secrets(&data);
        let p = plan(tmp.path(), &data, &home);
        let out = tmp.path().join(format!("release-{i}"));
        let o = coco(
            &[
                "release",
                &s(&data),
                "--config",
                &s(&p),
                "--out",
                &s(&out),
                "--json",
                // The margins' files are scanned too; two replicates make them.
                "--replicates",
                "2",
            ],
            &home,
        );
        assert!(o.status.success(), "{}", text(&o));
        assert_holds_none(&out, &secrets);
        // Nor does what `coco release` prints for scripts (it goes into logs).
        let printed = String::from_utf8_lossy(&o.stdout).into_owned();
        for (what, secret) in &secrets {
            assert!(!printed.contains(secret), "--json prints {what}");
        }
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(manifest["version"], 2);
        assert!(manifest.get("inputs").is_none());
        assert!(manifest.get("dataset").is_none());
        // The agency's provenance: in the ledger entry the manifest names.
        let id = manifest["ledger_entry"].as_str().unwrap();
        let ledger = coco(&["ledger", "--json"], &home);
        assert!(ledger.status.success(), "{}", text(&ledger));
        let ledger_text = String::from_utf8_lossy(&ledger.stdout);
        assert!(ledger_text.contains(id));
        let d = coco::data::Dataset::load(&data).unwrap();
        assert!(ledger_text.contains(&d.content_digest()));
        for f in &d.inputs {
            assert!(ledger_text.contains(&f.sha256), "{} in the ledger", f.path);
        }
    }
}

/// Problem 2: `--seed N` wrote a release like any other. It is refused by policy unless
/// asked for with `--not-private`, and then marked in the file names, the manifest and
/// the ledger.
#[test]
fn a_seeded_release_is_refused_unless_asked_for_and_then_unmistakable() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = sample();
    let p = plan(tmp.path(), &data, &home);
    let out = tmp.path().join("seeded");
    let args = |extra: &[&'static str]| {
        let mut a: Vec<String> = [
            "release",
            &s(&data),
            "--config",
            &s(&p),
            "--out",
            &s(&out),
            "--seed",
            "7",
        ]
        .iter()
        .map(|x| x.to_string())
        .collect();
        a.extend(extra.iter().map(|x| x.to_string()));
        a
    };
    let refused = Command::new(COCO)
        .args(args(&[]))
        .env("COCO_HOME", &home)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(4), "{}", text(&refused));
    assert!(text(&refused).contains("--not-private"));
    assert!(!out.exists());
    // --not-private without a seed is a usage error: it marks a seeded release only.
    let o = coco(
        &[
            "release",
            &s(&data),
            "--config",
            &s(&p),
            "--out",
            &s(&out),
            "--not-private",
        ],
        &home,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = Command::new(COCO)
        .args(args(&["--not-private"]))
        .env("COCO_HOME", &home)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).to_lowercase().contains("not private"),
        "{}",
        text(&o)
    );
    let marker = out.join("NOT-PRIVATE-SEEDED-RELEASE.txt");
    let note = std::fs::read_to_string(&marker).unwrap();
    assert!(note.contains("must never be published"));
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["reproducible"], true);
    assert_eq!(manifest["for_publication"], false);
    assert_eq!(manifest["randomness"]["source"], "seeded");
    assert!(
        manifest["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == "NOT-PRIVATE-SEEDED-RELEASE.txt")
    );
    let ledger = coco(&["ledger", "--json"], &home);
    let v: serde_json::Value = serde_json::from_slice(&ledger.stdout).unwrap();
    let text = v.to_string();
    assert!(text.contains("\"seeded\""), "{text}");
}

/// The provenance the manifest no longer carries is checked against the ledger:
/// `coco verify OUT [--dataset DIR]` (exit 0 when the release is what coco wrote and
/// the ledger records, 6 when not, 3 when OUT holds no manifest).
#[test]
fn coco_verify_checks_files_ledger_and_dataset() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = sample();
    let p = plan(tmp.path(), &data, &home);
    let out = tmp.path().join("r");
    let o = coco(
        &["release", &s(&data), "--config", &s(&p), "--out", &s(&out)],
        &home,
    );
    assert!(o.status.success(), "{}", text(&o));
    let verify = |args: &[&str], home: &Path| {
        let mut a = vec!["verify"];
        a.extend_from_slice(args);
        coco(&a, home)
    };
    // As written.
    let o = verify(&[&s(&out), "--dataset", &s(&data), "--json"], &home);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["problems"].as_array().unwrap().len(), 0, "{v}");
    assert_eq!(v["recorded"]["status"], "written");
    assert_eq!(v["dataset"]["same_content"], true);
    assert_eq!(v["dataset"]["same_inputs"], true);
    assert_eq!(v["dataset"]["counts"]["consistent"], true);
    let d = coco::data::Dataset::load(&data).unwrap();
    assert_eq!(v["recorded"]["dataset"]["content"], d.content_digest());
    // The same data in another form: same content, other files.
    let taxi = tmp.path().join("taxi");
    assert!(
        coco(&["gen", "taxi", "--out", &s(&taxi)], &home)
            .status
            .success()
    );
    let o = verify(&[&s(&out), "--dataset", &s(&taxi)], &home);
    assert_eq!(o.status.code(), Some(6), "{}", text(&o));
    assert!(text(&o).contains("holds other data than the release was drawn from"));
    // Another ledger: the draw is not there.
    let o = verify(&[&s(&out)], &tmp.path().join("other-home"));
    assert_eq!(o.status.code(), Some(6));
    assert!(text(&o).contains("is not in the ledger"), "{}", text(&o));
    // Moved: the ledger says where it was written.
    let moved = tmp.path().join("moved");
    std::fs::rename(&out, &moved).unwrap();
    let o = verify(&[&s(&moved)], &home);
    assert_eq!(o.status.code(), Some(6));
    assert!(text(&o).contains("moved or copied since"), "{}", text(&o));
    std::fs::rename(&moved, &out).unwrap();
    // A changed table and a file added.
    let table = out.join("tables/0-country.csv");
    let mut bytes = std::fs::read(&table).unwrap();
    bytes.extend(b"x\n");
    std::fs::write(&table, bytes).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let o = verify(&[&s(&out)], &home);
    assert_eq!(o.status.code(), Some(6));
    let t = text(&o);
    assert!(
        t.contains("tables/0-country.csv: changed since it was written"),
        "{t}"
    );
    assert!(t.contains("notes.txt: not listed in manifest.json"), "{t}");
    // No manifest: an input error naming the file.
    let o = verify(&[&s(&tmp.path().join("nothing"))], &home);
    assert_eq!(o.status.code(), Some(3));
    assert!(text(&o).contains("manifest.json: cannot read it"));
    // A seeded release never verifies as publishable.
    let seeded = tmp.path().join("seeded");
    let o = coco(
        &[
            "release",
            &s(&data),
            "--config",
            &s(&p),
            "--out",
            &s(&seeded),
            "--seed",
            "3",
            "--not-private",
        ],
        &home,
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = verify(&[&s(&seeded)], &home);
    assert_eq!(o.status.code(), Some(6));
    assert!(text(&o).contains("must never be published"));
}

/// `coco verify --dataset` reads a hand-edited `counts.csv` as `csv` reads it: a
/// malformed row is named by its line, a quoted line break is read as part of its
/// region (and fails the checks), and a file put back verifies again.
#[test]
fn coco_verify_names_what_is_wrong_in_an_edited_counts_csv() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = sample();
    let p = plan(tmp.path(), &data, &home);
    let out = tmp.path().join("r");
    let o = coco(
        &["release", &s(&data), "--config", &s(&p), "--out", &s(&out)],
        &home,
    );
    assert!(o.status.success(), "{}", text(&o));
    let verify = || coco(&["verify", &s(&out), "--dataset", &s(&data)], &home);
    let o = verify();
    assert!(o.status.success(), "{}", text(&o));
    let counts = out.join("counts.csv");
    let original = std::fs::read_to_string(&counts).unwrap();
    let lines: Vec<&str> = original.lines().collect();
    let edited = |lines: &[String]| {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&counts, text).unwrap();
    };
    let owned = |lines: &[&str]| lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();

    // A row of three fields on line 3.
    let mut short = owned(&lines);
    short.insert(2, "district,ARV/01/0101,1".into());
    edited(&short);
    let o = verify();
    assert_eq!(o.status.code(), Some(6), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("counts.csv: changed since it was written"),
        "{t}"
    );
    assert!(t.contains("counts.csv cannot be read as CSV"), "{t}");
    assert!(t.contains("line: 3"), "{t}");

    // A quoted line break in the region of the first row.
    let mut quoted = owned(&lines);
    let first: Vec<&str> = lines[1].split(',').collect();
    quoted[1] = format!("{},\"{}\nx\",{},{}", first[0], first[1], first[2], first[3]);
    edited(&quoted);
    let o = verify();
    assert_eq!(o.status.code(), Some(6), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("counts.csv fails its checks against"), "{t}");
    assert!(t.contains("unknown region \"ARV\\nx\""), "{t}");

    // Put back: verifies again.
    std::fs::write(&counts, &original).unwrap();
    let o = verify();
    assert!(o.status.success(), "{}", text(&o));
}
