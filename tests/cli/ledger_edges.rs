//! The ledger's edges (issue 32, items 1, 2, 3 and 10b), through the real binary as an
//! adversarial operator tried them: another configuration directory in the
//! environment, a ledger without its anchor, an accepted loss, caps written by hand,
//! and `coco ledger`'s JSON against the shapes docs/data-contract.md documents.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common;
use common::cli::{
    COCO, coco, copy_sample, json_of, line_count, ok, plan_hc as plan, refused,
    release_quick as release, s, sample, text,
};

/// The user's directories as a cron job, `sudo` or a container sees them: no
/// `COCO_HOME`; `HOME`, `XDG_DATA_HOME` and `XDG_CONFIG_HOME` given.
struct UserDirs {
    home: PathBuf,
    data: PathBuf,
    config: PathBuf,
}

impl UserDirs {
    fn coco(&self, args: &[&str]) -> Output {
        Command::new(COCO)
            .args(args)
            .env_remove("COCO_HOME")
            .env("HOME", &self.home)
            .env("XDG_DATA_HOME", &self.data)
            .env("XDG_CONFIG_HOME", &self.config)
            .output()
            .unwrap()
    }

    fn release(&self, data: &Path, plan: &Path, out: &Path) -> Output {
        self.coco(&[
            "release",
            &s(data),
            "--config",
            &s(plan),
            "--out",
            &s(out),
            "--replicates",
            "2",
        ])
    }

    fn ledger(&self) -> PathBuf {
        self.data.join("coco/ledger.jsonl")
    }
}

/// Item 1: a changed XDG_CONFIG_HOME (what a cron job, `sudo`, a systemd unit or a
/// container does) no longer finds no cap and no anchor: the ledger's pointer leads to
/// its own, so a cap of 1.5 with ε 1 spent refuses a draw of ε 1. A changed data
/// directory finds an anchor of another ledger and is refused. Before: the second
/// release drew (ε spent 2).
#[test]
fn another_configuration_directory_still_finds_the_ledgers_caps_and_anchor() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = UserDirs {
        home: tmp.path().join("user"),
        data: tmp.path().join("data"),
        config: tmp.path().join("config"),
    };
    let data = copy_sample(&tmp.path().join("census"));
    let p1 = plan(
        tmp.path(),
        &data,
        "1/3,1/3,1/3",
        &tmp.path().join("plan-home"),
    );
    ok(&dirs.coco(&["ledger", "set-cap", &s(&data), "1.5"]));
    ok(&dirs.release(&data, &p1, &tmp.path().join("r1")));
    let before = line_count(&dirs.ledger());
    assert_eq!(before, 2);
    // The same user under another configuration directory.
    let cron = UserDirs {
        config: tmp.path().join("elsewhere"),
        ..dirs
    };
    let out = tmp.path().join("r2");
    let o = cron.release(&data, &p1, &out);
    refused(
        &o,
        4,
        "1 already spent in 1 draw(s) + 1 for this one > cap 1.5",
    );
    assert!(
        text(&o).contains(&s(&tmp.path().join("config/coco/config.toml"))),
        "{}",
        text(&o)
    );
    assert!(!out.exists());
    assert_eq!(line_count(&cron.ledger()), before, "nothing drawn");
    // `coco ledger` there shows the ledger's own caps and anchor.
    let shown = json_of(&cron.coco(&["ledger", "--json"]));
    assert_eq!(shown["anchor"]["state"], "holds", "{shown}");
    assert_eq!(shown["datasets"][0]["cap"]["cap"], "1.5", "{shown}");
    // A draw under the cap there goes on, and says where the caps were found.
    let p01 = plan(
        tmp.path(),
        &data,
        "0.1,0.1,0.1",
        &tmp.path().join("plan-home"),
    );
    let o = cron.release(&data, &p01, &tmp.path().join("r3"));
    ok(&o);
    assert!(
        text(&o).contains("this ledger's caps and anchor are in"),
        "{}",
        text(&o)
    );
    // Another data directory beside the same configuration: an anchor of another
    // ledger, refused.
    let moved = UserDirs {
        home: cron.home.clone(),
        data: tmp.path().join("other-data"),
        config: tmp.path().join("config"),
    };
    let out = tmp.path().join("r4");
    refused(&moved.release(&data, &p1, &out), 4, "belongs to the ledger");
    assert!(!out.exists());
    refused(
        &moved.coco(&["ledger", "verify"]),
        4,
        "belongs to the ledger",
    );
}

/// Item 1: a ledger with lines and no anchor is refused (exit 4), naming the explicit
/// upgrade command; `coco ledger adopt` says what it trusts and records it; then draws
/// go on. A truncated ledger whose anchor was deleted is refused the same way, and a
/// ledger and anchor both deleted beside the ledger's pointer are noticed. Before:
/// each was anchored (or started afresh) at the next draw, which went on.
#[test]
fn a_ledger_without_its_anchor_is_refused_until_adopted() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = sample();
    let p = plan(tmp.path(), &data, "1/3,1/3,1/3", &home);
    ok(&release(&data, &p, &tmp.path().join("r0"), &home));
    let ledger = home.join("ledger.jsonl");
    // A ledger an older coco kept: no anchor, no pointer (an older coco wrote none).
    std::fs::remove_file(home.join("ledger.anchor")).unwrap();
    match std::fs::remove_file(home.join("ledger.pointer")) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => panic!("{e}"),
        _ => {}
    }
    let out = tmp.path().join("r1");
    refused(&release(&data, &p, &out, &home), 4, "`coco ledger adopt`");
    assert!(!out.exists());
    assert_eq!(line_count(&ledger), 2);
    refused(&coco(&["ledger", "verify"], &home), 4, "has no anchor");
    let o = coco(&["ledger", "adopt"], &home);
    ok(&o);
    assert!(
        text(&o).contains("trusted to hold every draw"),
        "{}",
        text(&o)
    );
    let chain = std::fs::read_to_string(&ledger).unwrap();
    let adopted: serde_json::Value = serde_json::from_str(chain.lines().last().unwrap()).unwrap();
    assert_eq!(adopted["event"], "adopted", "{chain}");
    assert_eq!(adopted["trusted"], "ledger_as_is");
    assert_eq!(adopted["ledger_lines"], 2);
    ok(&release(&data, &p, &out, &home));
    let o = coco(&["ledger", "verify"], &home);
    ok(&o);
    assert!(text(&o).contains("ledger adopted on"), "{}", text(&o));
    // Truncated, and its anchor deleted: refused the same way.
    let text_before = std::fs::read_to_string(&ledger).unwrap();
    let first: String = text_before
        .lines()
        .take(1)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&ledger, &first).unwrap();
    std::fs::remove_file(home.join("ledger.anchor")).unwrap();
    let out = tmp.path().join("r2");
    refused(&release(&data, &p, &out, &home), 4, "`coco ledger adopt`");
    assert!(!out.exists());
    // Both deleted: the pointer left beside them says a ledger was kept here.
    std::fs::remove_file(&ledger).unwrap();
    refused(&release(&data, &p, &out, &home), 4, "were deleted");
    assert!(!out.exists());
    refused(&coco(&["ledger"], &home), 4, "were deleted");
}

/// Item 2: an accepted loss is a fact of the privacy record: written into the chain
/// (when, how many lines, the ε the old anchor knew of, who accepted it), shown by
/// `coco ledger`, `coco ledger verify` and `--json`, and its ε still counted, so a cap
/// of 1.5 with ε 1 spent before the loss refuses a draw of ε 1 after it. Before: the
/// loss left no trace and returned the budget.
#[test]
fn an_accepted_loss_is_recorded_shown_and_still_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = copy_sample(&tmp.path().join("census"));
    let p = plan(tmp.path(), &data, "1/3,1/3,1/3", &home);
    ok(&coco(&["ledger", "set-cap", &s(&data), "1.5"], &home));
    ok(&release(&data, &p, &tmp.path().join("r0"), &home));
    let ledger = home.join("ledger.jsonl");
    std::fs::remove_file(&ledger).unwrap();
    refused(
        &release(&data, &p, &tmp.path().join("r1"), &home),
        4,
        "reanchor --accept-loss",
    );
    let o = Command::new(COCO)
        .args(["ledger", "reanchor", "--accept-loss"])
        .env("COCO_HOME", &home)
        .env("USER", "auditor")
        .output()
        .unwrap();
    ok(&o);
    assert!(text(&o).contains("loss accepted on"), "{}", text(&o));
    // The chain has the loss line.
    let chain = std::fs::read_to_string(&ledger).unwrap();
    let loss: serde_json::Value = serde_json::from_str(chain.lines().last().unwrap()).unwrap();
    assert_eq!(loss["event"], "loss_accepted", "{chain}");
    assert_eq!(
        (
            loss["anchored_lines"].as_u64(),
            loss["ledger_lines"].as_u64()
        ),
        (Some(2), Some(0))
    );
    assert_eq!(loss["accepted_by"], "auditor");
    assert_eq!(
        loss["lost"][0]["epsilon"],
        serde_json::json!({"num": "1", "den": "1"})
    );
    assert_eq!(loss["lost"][0]["draws"], 1);
    // `coco ledger verify` reports it and stays ok.
    let o = coco(&["ledger", "verify"], &home);
    ok(&o);
    let t = text(&o);
    assert!(
        t.contains("loss accepted on")
            && t.contains("by auditor")
            && t.contains("ε 1 of 1 lost draw(s)")
            && t.contains("still counts as spent"),
        "{t}"
    );
    let v = json_of(&coco(&["ledger", "verify", "--json"], &home));
    assert_eq!(v["events"][0]["event"], "loss_accepted", "{v}");
    // `coco ledger` (text and JSON) shows the loss and the ε it still counts.
    let o = coco(&["ledger"], &home);
    ok(&o);
    assert!(
        text(&o).contains("by 1 draw(s) whose lines were lost, still counted"),
        "{}",
        text(&o)
    );
    let shown = json_of(&coco(&["ledger", "--json"], &home));
    assert_eq!(shown["events"][0]["event"], "loss_accepted", "{shown}");
    assert_eq!(shown["datasets"][0]["spent"], "1", "{shown}");
    assert_eq!(shown["datasets"][0]["lost_draws"], 1, "{shown}");
    // The cap still counts the lost ε.
    let out = tmp.path().join("r2");
    refused(
        &release(&data, &p, &out, &home),
        4,
        "1 already spent in 1 draw(s) + 1 for this one > cap 1.5",
    );
    assert!(!out.exists());
    // A copy of the data is charged for the lost draw too.
    let copy = copy_sample(&tmp.path().join("copy"));
    refused(&release(&copy, &p, &out, &home), 4, "1 already spent");
}

/// Item 3: caps written by hand go through `set-cap`'s checks when read: a directory
/// that does not exist is refused by every command that reads caps, naming
/// config.toml's line (exit 3); a directory cap is bound to its data's keys when first
/// read, so a copy made before any draw from that directory is covered. Before: the
/// first was accepted and never bound, the second bound only after a draw.
#[test]
fn caps_written_by_hand_are_checked_and_bound_as_set_cap_does() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = copy_sample(&tmp.path().join("census"));
    let p = plan(tmp.path(), &data, "1/3,1/3,1/3", &home);
    std::fs::create_dir_all(&home).unwrap();
    let config = home.join("config.toml");
    let nowhere = tmp.path().join("nowhere");
    std::fs::write(
        &config,
        format!("default_cap = 10\n[caps]\n\"{}\" = 1\n", s(&nowhere)),
    )
    .unwrap();
    let at = format!("{}:3: [caps] key", s(&config));
    let out = tmp.path().join("r0");
    refused(&release(&data, &p, &out, &home), 3, &at);
    assert!(!out.exists());
    refused(&coco(&["ledger"], &home), 3, &at);
    refused(&coco(&["ledger", "--json"], &home), 3, "no such directory");
    refused(&coco(&["ledger", "set-cap", &s(&data), "2"], &home), 3, &at);
    // A directory cap by hand, then a copy of its data before any draw: the copy is
    // covered, by the data the cap was bound to when first read.
    let census = std::fs::canonicalize(&data).unwrap();
    std::fs::write(
        &config,
        format!("# written by hand\n[caps]\n\"{}\" = 0.5\n", s(&census)),
    )
    .unwrap();
    let copy = copy_sample(&tmp.path().join("copy"));
    let o = release(&copy, &p, &out, &home);
    refused(&o, 4, "which held the same data when the cap was set");
    assert!(!out.exists());
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(
        written.starts_with("# written by hand\n")
            && written.contains("content = \"")
            && written.contains("population = \""),
        "{written}"
    );
}

/// Item 10b: every JSON `coco ledger` prints has the shape docs/data-contract.md
/// documents: each key it prints is documented, each key documented as always present
/// is there, every documented key is printed somewhere in this test (but the three it
/// names), and no Rust enum leaks (`"Ok"`, `"Err"` or a variant's name as a key). The
/// ledger's lines are checked against their tables too.
#[test]
fn ledger_json_matches_the_documented_shapes() {
    let mut shapes = Shapes::documented();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = copy_sample(&tmp.path().join("census"));
    let ledger = home.join("ledger.jsonl");
    // First use; caps of every kind; draws (one seeded, K estimated privately).
    shapes.ok("ledger", &coco(&["ledger", "--json"], &home));
    shapes.ok(
        "ledger-verify",
        &coco(&["ledger", "verify", "--json"], &home),
    );
    shapes.ok(
        "set-cap",
        &coco(&["ledger", "set-cap", &s(&data), "5", "--json"], &home),
    );
    let estimate = tmp.path().join("estimate.toml");
    ok(&coco(
        &[
            "plan",
            &s(&data),
            "--estimate-max-size",
            "0.01",
            "--out",
            &s(&estimate),
        ],
        &home,
    ));
    ok(&release(&data, &estimate, &tmp.path().join("r0"), &home));
    ok(&coco(
        &[
            "release",
            &s(&data),
            "--config",
            &s(&estimate),
            "--out",
            &s(&tmp.path().join("r1")),
            "--replicates",
            "2",
            "--seed",
            "1",
            "--not-private",
        ],
        &home,
    ));
    let shown = shapes.ok("ledger", &coco(&["ledger", "--json"], &home));
    let digest = shown["datasets"][0]["dataset"]
        .as_str()
        .unwrap()
        .to_string();
    shapes.ok(
        "set-cap",
        &coco(&["ledger", "set-cap", &digest, "4", "--json"], &home),
    );
    shapes.ok("reanchor", &coco(&["ledger", "reanchor", "--json"], &home));
    // A loss accepted, an anchor deleted and the ledger adopted.
    let full = std::fs::read_to_string(&ledger).unwrap();
    let kept: String = full.lines().take(2).map(|l| format!("{l}\n")).collect();
    std::fs::write(&ledger, kept).unwrap();
    shapes.printed("ledger", &coco(&["ledger", "--json"], &home), 4);
    shapes.ok(
        "reanchor",
        &coco(&["ledger", "reanchor", "--accept-loss", "--json"], &home),
    );
    std::fs::remove_file(home.join("ledger.anchor")).unwrap();
    shapes.printed("ledger", &coco(&["ledger", "--json"], &home), 4);
    shapes.printed(
        "ledger-verify",
        &coco(&["ledger", "verify", "--json"], &home),
        4,
    );
    shapes.ok("adopt", &coco(&["ledger", "adopt", "--json"], &home));
    shapes.ok("adopt", &coco(&["ledger", "adopt", "--json"], &home));
    let shown = shapes.ok("ledger", &coco(&["ledger", "--json"], &home));
    assert_eq!(shown["events"].as_array().map(Vec::len), Some(2), "{shown}");
    shapes.ok(
        "ledger-verify",
        &coco(&["ledger", "verify", "--json"], &home),
    );
    // The ledger's lines, as written.
    for line in std::fs::read_to_string(&ledger).unwrap().lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        let shape = if value.get("event").is_some() {
            "event-line"
        } else {
            "ledger-line"
        };
        shapes.value(shape, &value);
    }
    // A torn last line, and its repair.
    shapes.ok("repair", &coco(&["ledger", "repair", "--json"], &home));
    let mut torn = std::fs::OpenOptions::new()
        .append(true)
        .open(&ledger)
        .unwrap();
    std::io::Write::write_all(&mut torn, b"{\"v\":2,\"id\":\"ab").unwrap();
    drop(torn);
    shapes.printed(
        "ledger-verify",
        &coco(&["ledger", "verify", "--json"], &home),
        4,
    );
    shapes.ok("repair", &coco(&["ledger", "repair", "--json"], &home));
    // A line that is not one.
    let mut bad = std::fs::OpenOptions::new()
        .append(true)
        .open(&ledger)
        .unwrap();
    std::io::Write::write_all(&mut bad, b"x\n").unwrap();
    drop(bad);
    let shown = shapes.printed("ledger", &coco(&["ledger", "--json"], &home), 4);
    assert!(
        shown["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("not JSON"),
        "{shown}"
    );
    shapes.printed(
        "ledger-verify",
        &coco(&["ledger", "verify", "--json"], &home),
        4,
    );
    shapes.all_seen(&[
        // Tested in the library (`the_ledger_finds_its_own_caps_and_anchor`,
        // `older_anchors_are_read_and_event_lines_strictly`): a moved ledger, an anchor
        // of version 1 and lines of the format before version 2.
        ("event-line", "moved_from"),
        ("event-line", "uncounted"),
        ("event-line", "lost[].fingerprint"),
        // Printed by zCDP draws and (ε, δ) caps
        // (`ledger_json_of_zcdp_draws_matches_the_documented_shapes`).
        ("ledger-line", "definition"),
        ("ledger-line", "levels[].rho"),
        ("ledger-line", "max_size_rho"),
        ("ledger-line", "total_rho"),
        ("event-line", "lost[].zcdp_draws"),
        ("cap", "delta"),
    ]);
}

#[test]
fn ledger_json_of_zcdp_draws_matches_the_documented_shapes() {
    let mut shapes = Shapes::documented();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = copy_sample(&tmp.path().join("census"));
    let ledger = home.join("ledger.jsonl");
    let set = shapes.ok(
        "set-cap",
        &coco(
            &[
                "ledger",
                "set-cap",
                &s(&data),
                "--epsilon",
                "40",
                "--delta",
                "1e-10",
                "--json",
            ],
            &home,
        ),
    );
    assert_eq!(set["unit"], "epsilon_delta", "{set}");
    let plan = tmp.path().join("rho.toml");
    ok(&coco(
        &[
            "plan",
            &s(&data),
            "--rho",
            "1/2",
            "--estimate-max-size",
            "1/100",
            "--out",
            &s(&plan),
        ],
        &home,
    ));
    ok(&release(&data, &plan, &tmp.path().join("r0"), &home));
    ok(&release(&data, &plan, &tmp.path().join("r1"), &home));
    let shown = shapes.ok("ledger", &coco(&["ledger", "--json"], &home));
    assert_eq!(
        shown["datasets"][0]["cap"]["unit"], "epsilon_delta",
        "{shown}"
    );
    // The second draw lost, and the loss accepted: its ρ still counts.
    let full = std::fs::read_to_string(&ledger).unwrap();
    let kept: String = full.lines().take(2).map(|l| format!("{l}\n")).collect();
    std::fs::write(&ledger, kept).unwrap();
    let loss = shapes.ok(
        "reanchor",
        &coco(&["ledger", "reanchor", "--accept-loss", "--json"], &home),
    );
    assert_eq!(loss["loss"]["lost"][0]["zcdp_draws"], 1, "{loss}");
    let shown = shapes.ok("ledger", &coco(&["ledger", "--json"], &home));
    assert_eq!(shown["datasets"][0]["spent_rho"], "1.02", "{shown}");
    for line in std::fs::read_to_string(&ledger).unwrap().lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        let shape = if value.get("event").is_some() {
            "event-line"
        } else {
            "ledger-line"
        };
        shapes.value(shape, &value);
    }
    shapes.seen_all_of(&[
        ("ledger-line", "definition"),
        ("ledger-line", "levels[].rho"),
        ("ledger-line", "max_size_rho"),
        ("ledger-line", "total_rho"),
        ("event-line", "lost[].rho"),
        ("event-line", "lost[].zcdp_draws"),
        ("cap", "delta"),
        ("set-cap", "delta"),
    ]);
}

/// A documented key: whether it is always present, per instance of its parent.
#[derive(Debug)]
struct Key {
    always: bool,
}

/// The tables of docs/data-contract.md marked `<!-- json-shape: NAME -->` (NAME → key
/// path → key), and which keys the outputs checked so far printed. A path is dotted,
/// with `[]` after an array of objects; an exact ε (`{"num", "den"}`) and an array of
/// texts are single keys.
struct Shapes {
    tables: BTreeMap<String, BTreeMap<String, Key>>,
    seen: BTreeSet<(String, String)>,
}

impl Shapes {
    fn documented() -> Shapes {
        let doc = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/data-contract.md"),
        )
        .unwrap();
        let mut tables: BTreeMap<String, BTreeMap<String, Key>> = BTreeMap::new();
        let mut current: Option<String> = None;
        for line in doc.lines() {
            if let Some(name) = line
                .strip_prefix("<!-- json-shape: ")
                .and_then(|l| l.strip_suffix(" -->"))
            {
                current = Some(name.to_string());
                tables.insert(name.to_string(), BTreeMap::new());
                continue;
            }
            let Some(name) = &current else { continue };
            if !line.starts_with('|') {
                if !line.trim().is_empty() {
                    current = None;
                }
                continue;
            }
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let Some(key) = cells
                .get(1)
                .and_then(|c| c.strip_prefix('`'))
                .and_then(|c| c.strip_suffix('`'))
            else {
                continue;
            };
            let always = cells.get(2).is_some_and(|c| *c == "always");
            tables
                .get_mut(name)
                .unwrap()
                .insert(key.to_string(), Key { always });
        }
        for name in [
            "ledger",
            "ledger-verify",
            "repair",
            "reanchor",
            "adopt",
            "set-cap",
            "ledger-line",
            "event-line",
            "cap",
            "anchor",
        ] {
            assert!(
                tables.get(name).is_some_and(|t| !t.is_empty()),
                "docs/data-contract.md documents no shape {name:?}"
            );
        }
        Shapes {
            tables,
            seen: BTreeSet::new(),
        }
    }

    /// A command's JSON, which succeeded.
    fn ok(&mut self, shape: &str, o: &Output) -> serde_json::Value {
        self.printed(shape, o, 0)
    }

    /// A command's JSON, printed with exit status `code`.
    fn printed(&mut self, shape: &str, o: &Output, code: i32) -> serde_json::Value {
        assert_eq!(o.status.code(), Some(code), "{}", text(o));
        let value = json_of(o);
        self.value(shape, &value);
        no_enum_keys(&value, shape);
        value
    }

    fn value(&mut self, shape: &str, value: &serde_json::Value) {
        self.check(shape, "", value);
    }

    /// Checks the object `value` at `path` of `shape`: each of its keys documented,
    /// each key documented as always present there; then its values, nested shapes by
    /// their own table.
    fn check(&mut self, shape: &str, path: &str, value: &serde_json::Value) {
        let table = &self.tables[shape];
        let Some(object) = value.as_object() else {
            panic!("{shape}: {path:?} is not an object: {value}");
        };
        for (documented, k) in table {
            let (parent, last) = documented.rsplit_once('.').unwrap_or(("", documented));
            if k.always && parent == path {
                let key = last.trim_end_matches("[]");
                assert!(
                    object.contains_key(key),
                    "{shape}: {documented:?} is documented as always present, but missing in {value}"
                );
            }
        }
        let mut inner: Vec<(String, serde_json::Value)> = Vec::new();
        for (key, v) in object {
            let plain = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            let many = format!("{plain}[]");
            let objects = v
                .as_array()
                .is_some_and(|a| a.iter().any(serde_json::Value::is_object));
            let empty = v.as_array().is_some_and(Vec::is_empty);
            let documented = if objects || (empty && table.contains_key(&many)) {
                many
            } else {
                plain
            };
            assert!(
                table.contains_key(&documented),
                "{shape}: {documented:?} is not documented in docs/data-contract.md (in {value})"
            );
            inner.push((documented, v.clone()));
        }
        for (documented, v) in inner {
            self.seen.insert((shape.to_string(), documented.clone()));
            let nested = nested(shape, &documented);
            let mut one = |item: &serde_json::Value| match nested {
                Some(sub) => self.check(sub, "", item),
                None => self.check(shape, &documented, item),
            };
            match &v {
                serde_json::Value::Array(items) if items.iter().any(|i| i.is_object()) => {
                    items.iter().for_each(&mut one);
                }
                serde_json::Value::Object(_) if !is_exact(&v) => one(&v),
                _ => {}
            }
        }
    }

    /// Each of `keys` was printed by some output checked.
    fn seen_all_of(&self, keys: &[(&str, &str)]) {
        for (shape, key) in keys {
            assert!(
                self.seen.contains(&(shape.to_string(), key.to_string())),
                "{shape}: {key:?} was not printed"
            );
        }
    }

    /// Every documented key was printed by some output checked, but `unseen`.
    fn all_seen(&self, unseen: &[(&str, &str)]) {
        for (shape, table) in &self.tables {
            for key in table.keys() {
                let pair = (shape.clone(), key.clone());
                if unseen.contains(&(shape.as_str(), key.as_str())) {
                    assert!(
                        !self.seen.contains(&pair),
                        "{shape}: {key:?} was seen: take it off the list"
                    );
                } else {
                    assert!(
                        self.seen.contains(&pair),
                        "{shape}: {key:?} is documented but no output of this test printed it"
                    );
                }
            }
        }
    }
}

/// Where a shape holds another documented shape.
fn nested(shape: &str, path: &str) -> Option<&'static str> {
    Some(match (shape, path) {
        ("ledger", "entries[]") => "ledger-line",
        ("ledger" | "ledger-verify", "events[]") => "event-line",
        ("ledger", "datasets[].cap" | "datasets[].caps[]") => "cap",
        ("ledger" | "ledger-verify", "anchor") => "anchor",
        ("reanchor", "loss") | ("adopt", "adoption") => "event-line",
        _ => return None,
    })
}

/// An exact ε: `{"num": "…", "den": "…"}`.
fn is_exact(value: &serde_json::Value) -> bool {
    value.as_object().is_some_and(|o| {
        o.len() == 2
            && o.get("num").is_some_and(serde_json::Value::is_string)
            && o.get("den").is_some_and(serde_json::Value::is_string)
    })
}

/// No key is a Rust enum's wrapping (`Ok`, `Err`, or any key starting in upper case:
/// coco's keys are snake_case), and no value a variant's name.
fn no_enum_keys(value: &serde_json::Value, shape: &str) {
    match value {
        serde_json::Value::Object(o) => {
            for (k, v) in o {
                assert!(
                    !k.starts_with(|c: char| c.is_ascii_uppercase()),
                    "{shape}: a key {k:?} (a Rust enum's name?) in {value}"
                );
                no_enum_keys(v, shape);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| no_enum_keys(v, shape)),
        serde_json::Value::String(t) => assert!(
            !matches!(
                t.as_str(),
                "NothingToRepair" | "SetAsideTornTail" | "Ok" | "Err"
            ),
            "{shape}: a Rust enum's name {t:?} as a value"
        ),
        _ => {}
    }
}
