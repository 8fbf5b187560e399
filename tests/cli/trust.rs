//! Trust, round two (issue 23), through the real binary: each of the ten ways around
//! the guarantees that a second audit and an operator reproduced has a test here that
//! failed before and passes now (the TUI's race and labels are in `tests/tui_flow.rs`).

use std::io::BufRead;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use coco::release::ledger::Ledger;

use crate::common;
use common::cli::{
    COCO, coco, copy_sample, ok, plan_hc as plan, refused, release_quick as release, s, sample,
    text,
};

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// The content digest `coco ledger --json` shows for the first dataset.
fn content_of(home: &Path) -> String {
    let o = coco(&["ledger", "--json"], home);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["datasets"][0]["dataset"].as_str().unwrap().to_string()
}

/// Problem 1: a directory cap binds copies of its data (made before or after a draw);
/// `set-cap` takes only a dataset directory or a full lowercase digest and says what
/// it covers; a misplaced key in config.toml is an error naming its line.
#[test]
fn a_directory_cap_follows_its_data() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let a = copy_sample(&tmp.path().join("a"));
    let p04 = plan(tmp.path(), &a, "0.1,0.1,0.2", &home);
    let p02 = plan(tmp.path(), &a, "0.05,0.05,0.1", &home);
    let o = coco(&["ledger", "set-cap", &s(&a), "0.5"], &home);
    ok(&o);
    let t = text(&o);
    assert!(t.contains("CONFIDENTIAL"), "{t}");
    assert!(t.contains(&s(&std::fs::canonicalize(&a).unwrap())), "{t}");
    assert!(t.contains("its data wherever it is copied"), "{t}");
    // A copy made before any draw is covered by the data the cap recorded.
    let early = copy_sample(&tmp.path().join("early-copy"));
    let p06 = plan(tmp.path(), &a, "0.2,0.2,0.2", &home);
    refused(
        &release(&early, &p06, &tmp.path().join("r-early"), &home),
        4,
        "held the same data when the cap was set",
    );
    ok(&release(&a, &p04, &tmp.path().join("r0"), &home));
    // A copy made after: 0.4 spent on the data, 0.2 more is over the cap.
    let copy = copy_sample(&tmp.path().join("copy"));
    refused(
        &release(&copy, &p02, &tmp.path().join("r1"), &home),
        4,
        "0.4 already spent in 1 draw(s) + 0.2 for this one > cap 0.5",
    );
    // A hand-written directory cap (no data recorded with it) is bound to its data when
    // first read (issue 32), so it binds the copy.
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[caps]\n\"{}\" = 0.5\n",
            std::fs::canonicalize(&a).unwrap().display()
        ),
    )
    .unwrap();
    refused(
        &release(&copy, &p02, &tmp.path().join("r2"), &home),
        4,
        "which held the same data when the cap was set",
    );
    // Keys that could never bind.
    let digest = content_of(&home);
    for (key, says) in [
        (digest[..12].to_string(), "a digest of 12 hex digits"),
        (digest.to_uppercase(), "a digest in upper case"),
        (s(&tmp.path().join("nowhere")), "no such directory"),
        (
            s(&tmp.path().join("plan-a-0.1_0.1_0.2.toml")),
            "not a directory",
        ),
        (s(tmp.path()), "not a dataset coco can load"),
    ] {
        refused(&coco(&["ledger", "set-cap", &key, "1"], &home), 3, says);
    }
    let o = coco(&["ledger", "set-cap", &digest, "2"], &home);
    ok(&o);
    assert!(text(&o).contains("the data of 1 draw(s)"), "{}", text(&o));
    // A misplaced key: an error naming the file and line, for every command that
    // reads the caps.
    std::fs::write(
        home.join("config.toml"),
        "[caps]\n\"/data/census\" = 2\ndefault_cap = 4\n",
    )
    .unwrap();
    refused(
        &coco(&["ledger"], &home),
        3,
        "config.toml:3: [caps] key \"default_cap\": default_cap is not a dataset",
    );
    refused(
        &release(&a, &p02, &tmp.path().join("r3"), &home),
        3,
        "config.toml:3:",
    );
}

/// Problem 2: deleting or truncating the ledger no longer restores the budget: draws
/// stop until a backup is restored or the loss accepted with the documented command.
#[test]
fn a_lost_ledger_stops_draws_until_the_operator_acts() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = sample();
    let p = plan(tmp.path(), &data, "1/3,1/3,1/3", &home);
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), "default_cap = 1.5\n").unwrap();
    // First use, no ledger and no anchor: fine.
    ok(&release(&data, &p, &tmp.path().join("r0"), &home));
    assert_eq!(mode(&home.join("ledger.anchor")), 0o600);
    let ledger = home.join("ledger.jsonl");
    let good = std::fs::read_to_string(&ledger).unwrap();
    let first_line = format!("{}\n", good.lines().next().unwrap());
    for (what, bytes) in [("deleted", None), ("truncated", Some(first_line.clone()))] {
        match &bytes {
            None => std::fs::remove_file(&ledger).unwrap(),
            Some(b) => std::fs::write(&ledger, b).unwrap(),
        }
        let out = tmp.path().join(format!("r-{what}"));
        let o = release(&data, &p, &out, &home);
        refused(&o, 4, "coco ledger reanchor --accept-loss");
        assert!(text(&o).contains("its anchor"), "{what}: {}", text(&o));
        assert!(!out.exists());
        refused(&coco(&["ledger", "verify"], &home), 4, "anchor:");
        refused(&coco(&["ledger"], &home), 4, "reanchor");
    }
    // Without --accept-loss, reanchor refuses; a restored backup lets draws go on.
    refused(&coco(&["ledger", "reanchor"], &home), 4, "--accept-loss");
    std::fs::write(&ledger, &good).unwrap();
    ok(&coco(&["ledger", "verify"], &home));
    refused(
        &release(&data, &p, &tmp.path().join("r-over"), &home),
        4,
        "cap for this dataset would be exceeded",
    );
    // Accepting a loss is explicit and keeps the old anchor.
    std::fs::write(&ledger, &first_line).unwrap();
    let o = coco(&["ledger", "reanchor", "--accept-loss"], &home);
    ok(&o);
    assert!(text(&o).contains("loss accepted"), "{}", text(&o));
    let kept = std::fs::read_dir(&home)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("ledger.anchor.replaced-")
        })
        .count();
    assert_eq!(kept, 1);
    ok(&coco(&["ledger", "verify"], &home));
    // Upgrade (issue 32): a ledger an older coco kept, without an anchor, stops draws
    // until the operator adopts it with the explicit command, which says what it trusts.
    std::fs::write(&ledger, &good).unwrap();
    std::fs::remove_file(home.join("ledger.anchor")).unwrap();
    std::fs::write(home.join("config.toml"), "").unwrap();
    let out = tmp.path().join("r-upgrade");
    refused(&release(&data, &p, &out, &home), 4, "coco ledger adopt");
    assert!(!out.exists());
    let o = coco(&["ledger", "adopt"], &home);
    ok(&o);
    assert!(
        text(&o).contains("trusted to hold every draw"),
        "{}",
        text(&o)
    );
    ok(&release(&data, &p, &out, &home));
    assert!(home.join("ledger.anchor").exists());
}

/// Problem 3: a ledger whose lines were joined into one is not "repaired" by setting
/// it all aside: it stays refused, unchanged.
#[test]
fn joined_lines_are_not_a_torn_line() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = sample();
    let p = plan(tmp.path(), &data, "1/3,1/3,1/3", &home);
    ok(&release(&data, &p, &tmp.path().join("r0"), &home));
    let ledger = home.join("ledger.jsonl");
    let joined = std::fs::read_to_string(&ledger).unwrap().replace('\n', "");
    std::fs::write(&ledger, &joined).unwrap();
    refused(&coco(&["ledger", "repair"], &home), 4, "not repaired");
    assert_eq!(std::fs::read_to_string(&ledger).unwrap(), joined);
    assert!(!home.join("ledger.jsonl.torn").exists());
    refused(
        &release(&data, &p, &tmp.path().join("r1"), &home),
        4,
        "not a line cut short",
    );
}

/// Problem 4: the confidential dataset, a restructured copy of it, or data the ledger
/// records a draw from, is refused as a public proxy.
#[test]
fn confidential_data_is_not_a_proxy() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = copy_sample(&tmp.path().join("data"));
    let preview = |proxy: &Path| {
        coco(
            &[
                "preview",
                &s(&data),
                "--proxy",
                &s(proxy),
                "--trials",
                "1",
                "--seed",
                "1",
            ],
            &home,
        )
    };
    let o = preview(&data);
    refused(&o, 3, "it holds the confidential dataset's own data");
    assert!(
        !text(&o).contains("depends on public information only"),
        "{}",
        text(&o)
    );
    // The same data in another directory, with a size-0 group added: same population.
    let copy = copy_sample(&tmp.path().join("copy"));
    let mut groups = std::fs::read_to_string(copy.join("groups.csv")).unwrap();
    groups.push_str("H999999,0101,0\n");
    std::fs::write(copy.join("groups.csv"), groups).unwrap();
    refused(&preview(&copy), 3, "the same population key");
    // Other data with the same hierarchy, once drawn from: confidential too. (36
    // entities from the dataset: a proxy within 20 is refused as the dataset itself,
    // tests/cli/input_edges.rs.)
    let earlier = copy_sample(&tmp.path().join("earlier"));
    let groups = std::fs::read_to_string(earlier.join("groups.csv")).unwrap();
    std::fs::write(
        earlier.join("groups.csv"),
        groups.replacen("H000001,0101,4", "H000001,0101,40", 1),
    )
    .unwrap();
    let o = preview(&earlier);
    ok(&o);
    let p = plan(tmp.path(), &earlier, "1/3,1/3,1/3", &home);
    ok(&release(&earlier, &p, &tmp.path().join("r0"), &home));
    refused(
        &preview(&earlier),
        3,
        "the ledger records a draw from the same data",
    );
}

/// Problem 5: restructured copies of the same people are charged for the same budget.
#[test]
fn restructured_data_is_charged_as_the_same_people() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let original = copy_sample(&tmp.path().join("original"));
    let p = plan(tmp.path(), &original, "1/3,1/3,1/3", &home);
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), "default_cap = 1.5\n").unwrap();
    ok(&release(&original, &p, &tmp.path().join("r0"), &home));
    let groups = std::fs::read_to_string(sample().join("groups.csv")).unwrap();
    let hierarchy = std::fs::read_to_string(sample().join("hierarchy.csv")).unwrap();
    let variant = |name: &str, hierarchy: &str, groups: &str| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("hierarchy.csv"), hierarchy).unwrap();
        std::fs::write(dir.join("groups.csv"), groups).unwrap();
        dir
    };
    let rows: Vec<&str> = groups.lines().collect();
    // District 0101's groups: the second half moves to a new leaf 0199.
    let in_0101: Vec<usize> = (1..rows.len())
        .filter(|&i| rows[i].split(',').nth(1) == Some("0101"))
        .collect();
    let moved = &in_0101[in_0101.len() / 2..];
    let split_groups: String = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if moved.contains(&i) {
                format!("{}\n", r.replacen(",0101,", ",0199,", 1))
            } else {
                format!("{r}\n")
            }
        })
        .collect();
    // The leaf level dropped: groups in their province.
    let provinces: std::collections::BTreeSet<String> = hierarchy
        .lines()
        .skip(1)
        .map(|l| l.split(',').take(2).collect::<Vec<_>>().join(","))
        .collect();
    let provinces_csv: String = std::iter::once("country,province".to_string())
        .chain(provinces)
        .map(|l| format!("{l}\n"))
        .collect();
    let leafless_groups: String = std::iter::once("group_id,region,size".to_string())
        .chain(rows[1..].iter().map(|r| {
            let f: Vec<&str> = r.split(',').collect();
            format!("{},{},{}", f[0], &f[1][..2], f[2])
        }))
        .map(|l| format!("{l}\n"))
        .collect();
    // Province 04 alone, cut whole.
    let alone_hierarchy: String = hierarchy
        .lines()
        .enumerate()
        .filter(|(i, l)| *i == 0 || l.split(',').nth(1) == Some("04"))
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    let alone_groups: String = rows
        .iter()
        .enumerate()
        .filter(|(i, r)| *i == 0 || r.split(',').nth(1).is_some_and(|d| d.starts_with("04")))
        .map(|(_, r)| format!("{r}\n"))
        .collect();
    let cases = [
        (
            "an added empty leaf",
            variant("empty-leaf", &format!("{hierarchy}ARV,01,0198\n"), &groups),
        ),
        (
            "a group of size 0",
            variant("size-0", &hierarchy, &format!("{groups}H999999,0101,0\n")),
        ),
        (
            "a group of size 1",
            variant("size-1", &hierarchy, &format!("{groups}H999999,0101,1\n")),
        ),
        (
            "the leaf level dropped",
            variant("no-leaves", &provinces_csv, &leafless_groups),
        ),
        (
            "a leaf split in two",
            variant("split", &format!("{hierarchy}ARV,01,0199\n"), &split_groups),
        ),
        (
            "one entity more",
            variant(
                "one-more",
                &hierarchy,
                &groups.replacen("H000001,0101,4", "H000001,0101,5", 1),
            ),
        ),
        (
            "one province alone",
            variant("province", &alone_hierarchy, &alone_groups),
        ),
    ];
    for (what, dir) in cases {
        let levels = std::fs::read_to_string(dir.join("hierarchy.csv"))
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .split(',')
            .count();
        let budgets = if levels == 2 {
            "0.5,0.5"
        } else {
            "1/3,1/3,1/3"
        };
        let p = plan(tmp.path(), &dir, budgets, &home);
        let out = tmp.path().join(format!(
            "out-{}",
            dir.file_name().unwrap().to_string_lossy()
        ));
        let o = release(&dir, &p, &out, &home);
        assert_eq!(o.status.code(), Some(4), "{what}: {}", text(&o));
        assert!(
            text(&o).contains("1 already spent in 1 draw(s)"),
            "{what}: {}",
            text(&o)
        );
        assert!(!out.exists(), "{what}");
    }
    // Nothing computed from the data goes into the release: the population key is in
    // the ledger only.
    let d = coco::data::Dataset::load(&original).unwrap();
    let key = d.population_keys().key;
    let ledger = std::fs::read_to_string(home.join("ledger.jsonl")).unwrap();
    assert!(ledger.contains(&key));
    for entry in walk(&tmp.path().join("r0")) {
        let bytes = std::fs::read(&entry).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(&key[..16]), "{}", entry.display());
    }
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Problem 6 (the command line): a hand-set K is not `public-default`.
#[test]
fn a_hand_set_k_is_not_the_public_default() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = sample();
    let p = tmp.path().join("k.toml");
    let o = coco(
        &["plan", &s(&data), "--max-size", "2852", "--out", &s(&p)],
        &home,
    );
    ok(&o);
    assert!(text(&o).contains("K = 2852 set by hand"), "{}", text(&o));
    let plan = std::fs::read_to_string(&p).unwrap();
    assert!(plan.contains("tuning = \"public\""), "{plan}");
    // The file edited to claim the default: recorded as unknown.
    std::fs::write(
        &p,
        plan.replace("tuning = \"public\"", "tuning = \"public-default\""),
    )
    .unwrap();
    let out = tmp.path().join("r");
    let o = release(&data, &p, &out, &home);
    ok(&o);
    assert!(text(&o).contains("recorded as unknown"), "{}", text(&o));
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"tuning\": \"unknown\""), "{manifest}");
    // coco's default plan stays public-default.
    let d = tmp.path().join("d.toml");
    ok(&coco(&["plan", &s(&data), "--out", &s(&d)], &home));
    assert!(
        std::fs::read_to_string(&d)
            .unwrap()
            .contains("tuning = \"public-default\"")
    );
}

/// Problem 7: `coco verify` is anchored in the ledger: an edited manifest of a seeded
/// release with its marker deleted, a table changed and re-hashed, and paths outside
/// the release are all caught, and nothing outside the release is read.
#[test]
fn verify_is_anchored_in_the_ledger() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = sample();
    let p = plan(tmp.path(), &data, "1/3,1/3,1/3", &home);
    let out = tmp.path().join("seeded");
    ok(&coco(
        &[
            "release",
            &s(&data),
            "--config",
            &s(&p),
            "--out",
            &s(&out),
            "--seed",
            "7",
            "--not-private",
            "--replicates",
            "2",
        ],
        &home,
    ));
    // Made to look publishable: marker deleted, manifest edited.
    let marker = "NOT-PRIVATE-SEEDED-RELEASE.txt";
    std::fs::remove_file(out.join(marker)).unwrap();
    let mut m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    m["reproducible"] = false.into();
    m["for_publication"] = true.into();
    m["randomness"]["source"] = "os".into();
    m["randomness"].as_object_mut().unwrap().remove("seed");
    let outputs = m["outputs"].as_array_mut().unwrap();
    outputs.retain(|f| f["path"] != marker);
    std::fs::write(
        out.join("manifest.json"),
        serde_json::to_vec_pretty(&m).unwrap(),
    )
    .unwrap();
    let o = coco(&["verify", &s(&out)], &home);
    refused(&o, 6, "manifest.json was changed since it was written");
    assert!(text(&o).contains("a seeded release"), "{}", text(&o));
    assert!(
        text(&o).contains("keyed from the operating system"),
        "{}",
        text(&o)
    );

    // A wide table changed and re-hashed in the manifest disagrees with counts.csv.
    let out = tmp.path().join("r");
    ok(&release(&data, &p, &out, &home));
    let table = out.join("tables/2-district.csv");
    let t = std::fs::read_to_string(&table).unwrap();
    let line = t.lines().nth(1).unwrap().to_string();
    let mut cells: Vec<String> = line.split(',').map(str::to_string).collect();
    let n: u64 = cells[3].parse().unwrap();
    cells[3] = (n + 1).to_string();
    let k: u64 = cells[4].parse().unwrap();
    cells[4] = k.saturating_sub(1).to_string();
    std::fs::write(&table, t.replacen(&line, &cells.join(","), 1)).unwrap();
    let digest = {
        use sha2::{Digest, Sha256};
        Sha256::digest(std::fs::read(&table).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let mut m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    for f in m["outputs"].as_array_mut().unwrap() {
        if f["path"] == "tables/2-district.csv" {
            f["sha256"] = digest.clone().into();
        }
    }
    std::fs::write(
        out.join("manifest.json"),
        serde_json::to_vec_pretty(&m).unwrap(),
    )
    .unwrap();
    let o = coco(&["verify", &s(&out)], &home);
    refused(&o, 6, "tables/2-district.csv disagrees with counts.csv");
    assert!(
        !text(&o).contains("tables/2-district.csv: changed since"),
        "{}",
        text(&o)
    );

    // Paths outside the release, a symbolic link out, a device: refused unread, and
    // verify finishes (it read /dev/zero forever before).
    let out = tmp.path().join("r2");
    ok(&release(&data, &p, &out, &home));
    std::os::unix::fs::symlink("/etc/hostname", out.join("tables/link.csv")).unwrap();
    let mut m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let outputs = m["outputs"].as_array_mut().unwrap();
    for path in [
        "/dev/zero",
        "../seeded/counts.csv",
        "tables/link.csv",
        "/etc/hostname",
    ] {
        outputs.push(serde_json::json!({ "path": path, "sha256": "00" }));
    }
    std::fs::write(
        out.join("manifest.json"),
        serde_json::to_vec_pretty(&m).unwrap(),
    )
    .unwrap();
    let o = run_within(
        Command::new(COCO)
            .args(["verify", &s(&out), "--json"])
            .env("COCO_HOME", &home),
        Duration::from_secs(60),
    );
    assert_eq!(o.status.code(), Some(6), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let refused_paths: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["state"] == "refused")
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        refused_paths,
        [
            "/dev/zero",
            "../seeded/counts.csv",
            "tables/link.csv",
            "/etc/hostname"
        ]
    );
    // A manifest that is itself a link to a device is refused, not read.
    let out = tmp.path().join("r3");
    ok(&release(&data, &p, &out, &home));
    std::fs::remove_file(out.join("manifest.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", out.join("manifest.json")).unwrap();
    let o = run_within(
        Command::new(COCO)
            .args(["verify", &s(&out)])
            .env("COCO_HOME", &home),
        Duration::from_secs(60),
    );
    refused(&o, 3, "not a regular file");
}

/// Runs a command, killing it (and failing) if it takes longer than `limit`.
fn run_within(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Problem 8: names with a formula after `;`, format characters, or a no-break space
/// before `=` are refused at load with file:line:column.
#[test]
fn unsafe_text_in_any_locale_is_refused_at_load() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    for (i, (file, row, says)) in [
        ("names.csv", "ARV/01,x;=1+1;", "names.csv:3:2"),
        ("names.csv", "ARV/01,\u{a0}=1+1", "names.csv:3:2"),
        ("names.csv", "ARV/01,Nord\u{202e}mere", "names.csv:3:2"),
        ("names.csv", "ARV/01,a\u{200b}b", "names.csv:3:2"),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = copy_sample(&tmp.path().join(format!("d{i}")));
        let text_now = std::fs::read_to_string(dir.join(file)).unwrap();
        let lines: Vec<&str> = text_now.lines().collect();
        assert!(lines[2].starts_with("ARV/01,"));
        let mut changed: Vec<&str> = lines.clone();
        changed[2] = row;
        std::fs::write(dir.join(file), changed.join("\n") + "\n").unwrap();
        let o = coco(&["inspect", &s(&dir)], &home);
        refused(&o, 3, says);
        // The message escapes what it quotes: no raw format character on a terminal.
        assert!(!text(&o).contains('\u{202e}'), "{}", text(&o));
    }
    // A code holding a right-to-left override.
    let dir = copy_sample(&tmp.path().join("code"));
    let h = std::fs::read_to_string(dir.join("hierarchy.csv")).unwrap();
    std::fs::write(
        dir.join("hierarchy.csv"),
        h.replacen("ARV,01,0101", "ARV,01,01\u{202e}01", 1),
    )
    .unwrap();
    refused(&coco(&["inspect", &s(&dir)], &home), 3, "hierarchy.csv:2:3");
}

/// Problem 9: coco's files are private, an existing looser home is tightened (and the
/// operator told), a converted copy is private, terminal escapes in a directory name
/// are never echoed raw, and the ledger's text is labelled confidential.
#[test]
fn files_are_private_and_terminals_safe() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(home.join("config.toml"), "").unwrap();
    std::fs::set_permissions(
        home.join("config.toml"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let o = coco(&["ledger"], &home);
    ok(&o);
    assert!(
        text(&o).contains("was readable by others (mode 0755); now 0700"),
        "{}",
        text(&o)
    );
    assert_eq!(mode(&home), 0o700);
    assert_eq!(mode(&home.join("config.toml")), 0o600);
    // The converted copy of confidential data.
    let copy = tmp.path().join("converted");
    ok(&coco(
        &["convert", &s(&sample()), "--out", &s(&copy)],
        &home,
    ));
    assert_eq!(mode(&copy), 0o700);
    for f in walk(&copy) {
        assert_eq!(mode(&f), 0o600, "{}", f.display());
    }
    // A dataset directory named with a terminal escape.
    let evil = copy_sample(&tmp.path().join("data\u{1b}]0;owned\u{7}\u{1b}[2J"));
    let p = plan(tmp.path(), &evil, "1/3,1/3,1/3", &home);
    ok(&release(&evil, &p, &tmp.path().join("r"), &home));
    let o = coco(&["ledger"], &home);
    ok(&o);
    let t = text(&o);
    assert!(!t.contains('\u{1b}') && !t.contains('\u{7}'), "{t:?}");
    assert!(t.contains("\\u{1b}]0;owned"), "{t}");
    assert!(t.starts_with("CONFIDENTIAL"), "{t}");
    for file in [
        "ledger.jsonl",
        "ledger.lock",
        "ledger.anchor",
        "config.toml",
    ] {
        assert_eq!(mode(&home.join(file)), 0o600, "{file}");
    }
    // An error quoting the path escapes it too.
    let o = coco(&["inspect", &s(&tmp.path().join("gone\u{1b}[2J"))], &home);
    assert!(!text(&o).contains('\u{1b}'), "{:?}", text(&o));
}

/// Problem 10: `--out link/` is refused before drawing; a total ε above 20 needs
/// `--allow-large-epsilon` and is always warned of; a release waiting for another
/// coco's lock says so.
#[test]
fn the_edges_of_a_draw() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = sample();
    let p = plan(tmp.path(), &data, "1/3,1/3,1/3", &home);
    let target = tmp.path().join("target");
    std::fs::create_dir(&target).unwrap();
    std::os::unix::fs::symlink(&target, tmp.path().join("link")).unwrap();
    let o = release(
        &data,
        &p,
        &PathBuf::from(format!("{}/", s(&tmp.path().join("link")))),
        &home,
    );
    refused(&o, 3, "is a symbolic link");
    assert!(!home.join("ledger.jsonl").exists(), "nothing was drawn");
    assert!(std::fs::read_dir(&target).unwrap().next().is_none());

    let big = plan(tmp.path(), &data, "25,25,25", &home);
    let o = release(&data, &big, &tmp.path().join("big"), &home);
    refused(&o, 4, "--allow-large-epsilon");
    assert!(
        text(&o).contains("warning: total ε = 75 is above 20"),
        "{}",
        text(&o)
    );
    assert!(!home.join("ledger.jsonl").exists(), "nothing was drawn");
    let o = coco(
        &[
            "release",
            &s(&data),
            "--config",
            &s(&big),
            "--out",
            &s(&tmp.path().join("big")),
            "--allow-large-epsilon",
            "--replicates",
            "2",
        ],
        &home,
    );
    ok(&o);
    assert!(
        text(&o).contains("warning: total ε = 75 is above 20"),
        "{}",
        text(&o)
    );

    // Another coco holds the ledger: the release says it waits, then goes on.
    let ledger = Ledger::at(&home);
    let lock = ledger.lock().unwrap();
    let mut child = Command::new(COCO)
        .args([
            "release",
            &s(&data),
            "--config",
            &s(&p),
            "--replicates",
            "2",
            "--out",
        ])
        .arg(tmp.path().join("waited"))
        .env("COCO_HOME", &home)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    let said = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("a message while waiting");
    assert!(
        said.starts_with("waiting for the ledger: another coco session holds it (pid "),
        "{said}"
    );
    assert!(
        said.contains(&format!("pid {}", std::process::id())),
        "{said}"
    );
    drop(lock);
    let status = child.wait().unwrap();
    assert!(status.success());
    assert!(tmp.path().join("waited/manifest.json").exists());
}
