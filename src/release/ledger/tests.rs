use super::*;
use crate::estimate::Method;

/// A nation of two counties: `a` with groups of `sizes` and one of 5 (so that no
/// dataset here is within one entity of a county of another: each county alone is a
/// part the ledger matches give or take one entity), `b` with groups of 1 and 2.
fn dataset(sizes: &[u32]) -> Dataset {
    use crate::data::{GroupsForm, Hierarchy};
    use crate::histogram::CountOfCounts;
    let h = Hierarchy::from_leaf_paths(
        vec!["nation".into(), "county".into()],
        &[vec!["N".into(), "a".into()], vec!["N".into(), "b".into()]],
    )
    .unwrap();
    Dataset::from_leaf_histograms(
        PathBuf::new(),
        h,
        GroupsForm::Histograms,
        vec![],
        vec![
            CountOfCounts::from_sizes(sizes.iter().copied().chain([5])),
            CountOfCounts::from_sizes([1, 2]),
        ],
    )
}

fn entry(d: &Dataset, eps: &str, status: Status) -> LedgerEntry {
    let plan = ReleasePlan::uniform(
        &d.hierarchy,
        &Epsilon::parse(eps).unwrap(),
        Method::Hc,
        crate::release::plan::MaxSize::Fixed(100),
    )
    .unwrap();
    let id = new_id();
    LedgerEntry::for_draw(
        d,
        &plan,
        DrawSpend {
            id: &id,
            loss: &Loss::Pure(plan.total_epsilon().unwrap()),
            randomness: Randomness::Os,
            levels: true,
        },
        status,
        Tool::Release,
    )
}

#[test]
fn append_read_and_sum_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path().join("home"));
    let d = dataset(&[1, 1, 3]);
    let id = DatasetIdentity::of(&d);
    let lock = ledger.lock().unwrap();
    // Totals beyond what an operator may type are kept exactly.
    for eps in ["0.30000000000000004", "1/3", "0.12345678901234567"] {
        ledger
            .append(&lock, entry(&d, eps, Status::Written))
            .unwrap();
    }
    drop(lock);
    let read = ledger.read_strict().unwrap();
    let spent = read.spent(&id);
    let expected = Epsilon::parse_unbounded("0.30000000000000004")
        .unwrap()
        .add(&Epsilon::parse("1/3").unwrap())
        .add(&Epsilon::parse("0.12345678901234567").unwrap());
    assert_eq!(spent.epsilon.unwrap(), expected);
    assert_eq!(spent.draws, 3);
    // Another dataset is not charged.
    assert_eq!(read.spent(&DatasetIdentity::of(&dataset(&[5]))).draws, 0);
}

#[test]
fn the_content_key_ignores_codes_and_order() {
    use crate::data::{GroupsForm, Hierarchy};
    use crate::histogram::CountOfCounts;
    let a = dataset(&[1, 1, 3]);
    let h = Hierarchy::from_leaf_paths(
        vec!["country".into(), "district".into()],
        &[vec!["X".into(), "q".into()], vec!["X".into(), "p".into()]],
    )
    .unwrap();
    let b = Dataset::from_leaf_histograms(
        PathBuf::new(),
        h,
        GroupsForm::GroupSizes,
        vec![],
        vec![
            CountOfCounts::from_sizes([2, 1]),
            CountOfCounts::from_sizes([3, 1, 1, 5]),
        ],
    );
    assert_eq!(a.content_digest(), b.content_digest());
    assert_ne!(a.content_digest(), dataset(&[1, 1, 4]).content_digest());
}

#[test]
fn every_defect_but_a_torn_tail_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path());
    let d = dataset(&[1]);
    let lock = ledger.lock().unwrap();
    for _ in 0..3 {
        ledger
            .append(&lock, entry(&d, "1", Status::Written))
            .unwrap();
    }
    let good = std::fs::read_to_string(ledger.path()).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    // An edited ε: the line still parses, the chain breaks at the next line.
    let edited = good.replacen("\"num\":\"1\"", "\"num\":\"0\"", 1);
    std::fs::write(ledger.path(), &edited).unwrap();
    let e = ledger.read_strict().unwrap_err().to_string();
    assert!(
        e.contains("ledger.jsonl:1: not a ledger entry: ε 0/2 is not positive"),
        "{e}"
    );
    let edited = good.replacen("\"num\":\"1\"", "\"num\":\"2\"", 1);
    std::fs::write(ledger.path(), &edited).unwrap();
    let e = ledger.read_strict().unwrap_err().to_string();
    assert!(
        e.contains("ledger.jsonl:2: the hash chain is broken"),
        "{e}"
    );
    // A removed line.
    std::fs::write(ledger.path(), format!("{}\n{}\n", lines[0], lines[2])).unwrap();
    assert!(
        ledger
            .read_strict()
            .unwrap_err()
            .to_string()
            .contains(":2: the hash chain")
    );
    // A stray byte.
    std::fs::write(ledger.path(), format!("{}\nx\n{}\n", lines[0], lines[1])).unwrap();
    let e = ledger.read_strict().unwrap_err();
    assert!(e.is_policy());
    assert!(e.to_string().contains("ledger.jsonl:2: not JSON"), "{e}");
    // After an unreadable line, the next one chains to that line as it is (so the
    // message names its real digest), and every line is counted once.
    let read = ledger.read().unwrap();
    assert_eq!(read.line_count, 3);
    assert_eq!(read.problems.len(), 2);
    assert!(read.problems[1].message.contains(&cut(&sha256_hex(b"x"))));
    assert_eq!(ledger.verify().unwrap().lines, 3);
    // Non-ASCII text in a field is read, not sliced.
    std::fs::write(
        ledger.path(),
        format!("{}\n", lines[0].replacen("\"dir\":\"", "\"dir\":\"é/", 1)),
    )
    .unwrap();
    assert!(ledger.read().unwrap().problems.is_empty());
    // … but it holds fewer lines than the anchor records: draws stop.
    assert!(matches!(
        ledger.read_strict(),
        Err(LedgerError::AnchorLost { anchored: 3, .. })
    ));
    // A torn last line: readers go on, draws stop until it is repaired.
    std::fs::write(ledger.path(), format!("{good}{{\"v\":2,\"id\":\"ab")).unwrap();
    let read = ledger.read().unwrap();
    assert_eq!((read.lines.len(), read.torn_tail), (3, Some(4)));
    assert!(matches!(
        ledger.read_strict(),
        Err(LedgerError::TornTail { line: 4, .. })
    ));
    assert!(
        ledger
            .append(&lock, entry(&d, "1", Status::Written))
            .is_err()
    );
    drop(lock);
    assert!(matches!(
        ledger.repair().unwrap(),
        Repair::SetAsideTornTail { line: 4, .. }
    ));
    assert_eq!(std::fs::read_to_string(ledger.path()).unwrap(), good);
    assert!(ledger.read_strict().is_ok());
    assert!(matches!(ledger.repair().unwrap(), Repair::NothingToRepair));
    // Anything else is not repaired.
    std::fs::write(ledger.path(), format!("x\n{good}")).unwrap();
    assert!(matches!(
        ledger.repair(),
        Err(LedgerError::NotRepairable { .. })
    ));
}

#[test]
fn a_pending_draw_and_its_decision_count_once() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path());
    let d = dataset(&[1]);
    let id = DatasetIdentity::of(&d);
    let lock = ledger.lock().unwrap();
    let shown = entry(&d, "1/2", Status::Pending);
    ledger.append(&lock, shown.clone()).unwrap();
    ledger
        .append(&lock, entry(&d, "1/4", Status::Written))
        .unwrap();
    assert_eq!(ledger.read().unwrap().spent(&id).draws, 2);
    let decided = LedgerEntry {
        status: Status::Discarded,
        ..shown.clone()
    };
    ledger.append(&lock, decided.clone()).unwrap();
    let read = ledger.read_strict().unwrap();
    let spent = read.spent(&id);
    assert_eq!((spent.text(), spent.draws), ("0.75".to_string(), 2));
    assert_eq!(read.draws()[0].status, Status::Discarded);
    // A second decision is a defect: the line is written, then the ledger refuses.
    ledger.append(&lock, decided).unwrap();
    let e = ledger.read_strict().unwrap_err().to_string();
    assert!(
        e.contains(":4: draw") && e.contains("was already decided"),
        "{e}"
    );
}

#[test]
fn a_pending_draw_reads_as_awaiting_while_its_session_runs_and_counts_as_pending() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path());
    let d = dataset(&[1]);
    let id = DatasetIdentity::of(&d);
    let lock = ledger.lock().unwrap();
    ledger
        .append(&lock, entry(&d, "1/4", Status::Written))
        .unwrap();
    let stale = entry(&d, "1/8", Status::Pending);
    ledger.append(&lock, stale.clone()).unwrap();
    let live = entry(&d, "1/2", Status::Pending);
    ledger.append(&lock, live.clone()).unwrap();
    let read = ledger.read().unwrap();
    let spent = read.spent(&id);
    assert_eq!(spent.text(), "0.875");
    assert_eq!(spent.pending, Some(Epsilon::parse("5/8").unwrap()));
    // The session holding the lock awaits its decision on the last line; an older
    // pending line is a session that stopped.
    assert!(ledger.held_elsewhere());
    assert!(
        ledger
            .describe(&read, &live)
            .starts_with("pending: drawn, awaiting the operator's decision")
    );
    assert!(
        ledger
            .describe(&read, &stale)
            .starts_with("pending: drawn, no decision recorded (the session stopped")
    );
    drop(lock);
    assert!(!ledger.held_elsewhere());
    assert!(
        ledger
            .describe(&read, &live)
            .contains("the session stopped before deciding")
    );
    assert_eq!(
        ledger.describe(&read, read.draws()[0]),
        read.draws()[0].note.clone().unwrap_or_default()
    );
}

#[test]
fn the_strictest_matching_cap_binds() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path());
    let data_dir = tempfile::tempdir().unwrap();
    let mut d = dataset(&[1]);
    d.dir = data_dir.path().to_path_buf();
    let id = DatasetIdentity::of(&d);
    ledger
        .set_cap(
            &CapKey::Digest(id.content.clone()),
            &CapLimit::Epsilon(Epsilon::parse("4").unwrap()),
            None,
        )
        .unwrap();
    ledger
        .set_cap(
            &CapKey::Directory(id.dir.clone()),
            &CapLimit::Epsilon(Epsilon::parse("0.5").unwrap()),
            Some((&id.content, &d.population_keys().key)),
        )
        .unwrap();
    std::fs::write(
        ledger.config_path(),
        format!(
            "default_cap = 0.1\n{}",
            std::fs::read_to_string(ledger.config_path()).unwrap()
        ),
    )
    .unwrap();
    let read = ledger.read().unwrap();
    let status = ledger.cap_status(&read, &id).unwrap();
    assert_eq!(
        status.caps.len(),
        2,
        "the default does not apply: {status:?}"
    );
    assert_eq!(status.binding().unwrap().cap.value(), "0.5");
    assert!(matches!(
        status.binding().unwrap().source,
        CapSource::Directory { .. }
    ));
    let e = ledger
        .check_cap(&read, &id, &Loss::Pure(Epsilon::parse("1").unwrap()))
        .unwrap_err();
    assert!(
        e.to_string().contains("cap 0.5 (the cap on directory"),
        "{e}"
    );
    // A dataset without a cap of its own gets the default.
    let other = DatasetIdentity::of(&dataset(&[9]));
    let status = ledger.cap_status(&read, &other).unwrap();
    assert_eq!(status.binding().unwrap().source, CapSource::Default);
}

#[test]
fn caps_in_an_older_versions_place_still_bind_and_move_on_the_next_set() {
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let config_home = config.path().join("coco");
    let ledger = Ledger::with_config(data.path(), &config_home);
    let a = DatasetIdentity::of(&dataset(&[1]));
    let b = DatasetIdentity::of(&dataset(&[2]));
    // An older version wrote config.toml beside the ledger.
    std::fs::write(
        data.path().join(CONFIG_FILE),
        format!("default_cap = 3\n[caps]\n\"{}\" = 0.5\n", a.content),
    )
    .unwrap();
    let read = ledger.read().unwrap();
    let cap = |id: &DatasetIdentity| {
        ledger
            .cap_status(&read, id)
            .unwrap()
            .binding()
            .map(|r| r.cap.value())
    };
    assert_eq!(cap(&a).as_deref(), Some("0.5"));
    assert_eq!(cap(&b).as_deref(), Some("3"));
    // Setting a cap writes the new place, carrying the old settings over.
    ledger
        .set_cap(
            &CapKey::Digest(b.content.clone()),
            &CapLimit::Epsilon(Epsilon::parse("2").unwrap()),
            None,
        )
        .unwrap();
    assert_eq!(ledger.config_path(), config_home.join(CONFIG_FILE));
    let text = std::fs::read_to_string(ledger.config_path()).unwrap();
    assert!(
        text.contains("default_cap = 3") && text.contains(&a.content),
        "{text}"
    );
    assert_eq!(cap(&a).as_deref(), Some("0.5"));
    assert_eq!(cap(&b).as_deref(), Some("2"));
    // Both files are read: a looser cap in the new one never lifts the old one's.
    ledger
        .set_cap(
            &CapKey::Digest(a.content.clone()),
            &CapLimit::Epsilon(Epsilon::parse("9").unwrap()),
            None,
        )
        .unwrap();
    assert_eq!(cap(&a).as_deref(), Some("0.5"));
    std::fs::remove_file(data.path().join(CONFIG_FILE)).unwrap();
    assert_eq!(cap(&a).as_deref(), Some("9"));
}

#[test]
fn older_lines_are_read_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path());
    let fp = "ab".repeat(32);
    let line = format!(
        r#"{{"id":"0123456789abcdef","time":"2026-11-22T01:02:03Z","dataset":"{fp}","dataset_dir":"/d","levels":[{{"name":"n","epsilon":"0.30000000000000004","method":"hc+tail>20"}}],"total_epsilon":"1.00000000000000004","output":null,"written":true,"randomness":"seeded (7)","tool":"release"}}"#
    );
    std::fs::write(ledger.path(), format!("{line}\n")).unwrap();
    let read = ledger.read().unwrap();
    assert!(read.problems.is_empty());
    let e = &read.lines[0];
    assert_eq!(
        e.total,
        Loss::Pure(Epsilon::parse_unbounded("1.00000000000000004").unwrap())
    );
    assert_eq!(e.status, Status::Written);
    assert_eq!(e.randomness, Randomness::Seeded { seed: 7 });
    assert_eq!(
        e.levels[0].tail,
        Some(TailRecord {
            above: 20,
            groups: None
        })
    );
    // An older coco kept no anchor: adopted explicitly, then a chained line may follow;
    // an old-format line may not follow a chained one.
    assert!(matches!(ledger.adopt().unwrap(), Adopted::Adopted { .. }));
    let lock = ledger.lock().unwrap();
    ledger
        .append(&lock, entry(&dataset(&[1]), "1", Status::Written))
        .unwrap();
    assert!(ledger.read_strict().is_ok());
    let mut f = OpenOptions::new().append(true).open(ledger.path()).unwrap();
    f.write_all(format!("{}\n", line.replace("0123456789abcdef", "fedcba9876543210")).as_bytes())
        .unwrap();
    let e = ledger.read_strict().unwrap_err().to_string();
    assert!(
        e.contains(":4: a line in the old format after chained lines"),
        "{e}"
    );
}

#[test]
fn tails_are_recorded_as_numbers_and_checked_on_reading() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path().join("home"));
    let d = dataset(&[1, 1, 3]);
    let tail = crate::estimate::Tail::DEFAULT;
    let plan = ReleasePlan::uniform(
        &d.hierarchy,
        &Epsilon::parse("1").unwrap(),
        Method::HcTail(tail),
        crate::release::plan::MaxSize::Fixed(100),
    )
    .unwrap();
    let id = new_id();
    let e = LedgerEntry::for_draw(
        &d,
        &plan,
        DrawSpend {
            id: &id,
            loss: &Loss::Pure(plan.total_epsilon().unwrap()),
            randomness: Randomness::Os,
            levels: true,
        },
        Status::Written,
        Tool::Release,
    );
    let lock = ledger.lock().unwrap();
    ledger.append(&lock, e).unwrap();
    drop(lock);
    let text = std::fs::read_to_string(ledger.path()).unwrap();
    assert_eq!(
        text.matches(r#""method":"hc","tail":{"above":20,"groups":1000}}"#)
            .count(),
        2,
        "{text}"
    );
    let read = ledger.read_strict().unwrap();
    for level in &read.lines[0].levels {
        assert_eq!(
            level.tail,
            Some(TailRecord {
                above: 20,
                groups: Some(TailLength::Fixed(crate::estimate::TailGroups::DEFAULT))
            })
        );
    }
    // Read back, the line is written again byte for byte.
    let mut again = serde_json::to_string(&read.lines[0]).unwrap();
    again.push('\n');
    assert_eq!(again, text);
    // coco never writes m out of range: such a line is a defect.
    std::fs::write(
        ledger.path(),
        text.replacen(r#""groups":1000"#, r#""groups":0"#, 1),
    )
    .unwrap();
    let e = ledger.read_strict().unwrap_err().to_string();
    assert!(
        e.contains(
            ":1: not a ledger entry: a tail of 0 groups: expected a whole number from 1 to 10000000"
        ),
        "{e}"
    );
}

#[test]
fn files_are_private() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path().join("home"));
    let lock = ledger.lock().unwrap();
    ledger
        .append(&lock, entry(&dataset(&[1]), "1", Status::Written))
        .unwrap();
    ledger
        .set_cap(
            &CapKey::Digest("ab".repeat(32)),
            &CapLimit::Epsilon(Epsilon::parse("1").unwrap()),
            None,
        )
        .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for name in [
            LEDGER_FILE,
            LOCK_FILE,
            CONFIG_FILE,
            ANCHOR_FILE,
            POINTER_FILE,
        ] {
            let mode = std::fs::metadata(ledger.home().join(name))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{name}");
        }
    }
}

#[test]
fn config_caps() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path());
    let key = "ab".repeat(32);
    let digest = CapKey::Digest(key.clone());
    ledger
        .set_cap(
            &digest,
            &CapLimit::Epsilon(Epsilon::parse("1/2").unwrap()),
            None,
        )
        .unwrap();
    ledger
        .set_cap(
            &digest,
            &CapLimit::Epsilon(Epsilon::parse("2").unwrap()),
            None,
        )
        .unwrap();
    let config = ledger.config_text_caps();
    assert_eq!(config, vec![(key.clone(), "2".to_string())]);
    std::fs::write(
        ledger.config_path(),
        format!("default_cap = 3\n[caps]\n\"{key}\" = 0.5\n\"/d\" = \"x\"\n"),
    )
    .unwrap();
    let e = ledger.config_text_error();
    assert!(e.ends_with("config.toml:4: ε \"x\" is not a number: expected a decimal like 0.25 or a fraction like \"1/3\""), "{e}");
    std::fs::write(ledger.config_path(), "defaultcap = 3\n").unwrap();
    assert!(
        ledger
            .config_text_error()
            .contains("config.toml:1: unknown key \"defaultcap\"")
    );
}

/// Issue 23: a key that could never bind is an error naming its line: a shortened
/// or upper-case digest, a relative path, `default_cap` written below `[caps]`, a
/// directory cap's table with an unknown field.
#[test]
fn config_keys_are_read_strictly() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path());
    let full = "ab".repeat(32);
    for (text, line, expected) in [
        (
            "[caps]\n\"/d\" = 1\ndefault_cap = 4\n".to_string(),
            3,
            "default_cap is not a dataset: it belongs above the [caps] line",
        ),
        (
            format!("[caps]\n\"{}\" = 1\n", &full[..12]),
            2,
            "a digest of 12 hex digits: expected all 64",
        ),
        (
            format!("[caps]\n\"{}\" = 1\n", full.to_uppercase()),
            2,
            "a digest in upper case",
        ),
        (
            "[caps]\n\"some/dir\" = 1\n".to_string(),
            2,
            "neither a dataset directory (an absolute path) nor a digest",
        ),
        (
            "[caps]\n\"/d\" = { epsilon = 1, colour = \"red\" }\n".to_string(),
            2,
            "unknown field \"colour\"",
        ),
        (
            format!(
                "[caps]\n\"/d\" = {{ epsilon = 1, content = \"{}\" }}\n",
                &full[..10]
            ),
            2,
            "content \"abababab",
        ),
    ] {
        std::fs::write(ledger.config_path(), &text).unwrap();
        let e = ledger.config_text_error();
        assert!(
            e.contains(&format!("config.toml:{line}:")) && e.contains(expected),
            "{text}: {e}"
        );
    }
    // The table a directory cap is written as reads back.
    std::fs::write(
        ledger.config_path(),
        format!("[caps]\n\"/d\" = {{ epsilon = \"1/2\", content = \"{full}\", population = \"{full}\" }}\n"),
    )
    .unwrap();
    assert_eq!(
        ledger.config_text_caps(),
        vec![("/d".to_string(), "0.5".to_string())]
    );
}

/// The bundled sample copied into `dir`, loaded from there.
fn sample_in(dir: &Path) -> Dataset {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households");
    for f in ["hierarchy.csv", "groups.csv", "names.csv"] {
        std::fs::copy(sample.join(f), dir.join(f)).unwrap();
    }
    Dataset::load(dir).unwrap()
}

/// Issue 23: a directory cap covers the data the ledger recorded for that directory
/// and the data it held when the cap was set, wherever that data is copied. Issue 32: a
/// directory cap written by hand is bound to its data when first read, so a copy made
/// before any draw is covered; one that can match nothing is refused, naming its line.
#[test]
fn a_directory_cap_follows_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path().join("home"));
    let a_dir = tempfile::tempdir().unwrap();
    let b_dir = tempfile::tempdir().unwrap();
    let a = sample_in(a_dir.path());
    let mut copy = a.clone();
    copy.dir = b_dir.path().to_path_buf();
    let (ia, ib) = (DatasetIdentity::of(&a), DatasetIdentity::of(&copy));
    // Set with the data's keys: the copy is covered before any draw.
    let keys = a.population_keys();
    ledger
        .set_cap(
            &CapKey::Directory(ia.dir.clone()),
            &CapLimit::Epsilon(Epsilon::parse("0.5").unwrap()),
            Some((&ia.content, &keys.key)),
        )
        .unwrap();
    let rule = |id: &DatasetIdentity| {
        let read = ledger.read().unwrap();
        ledger
            .cap_status(&read, id)
            .unwrap()
            .binding()
            .map(CapRule::describe)
    };
    assert!(rule(&ia).unwrap().starts_with("the cap on directory"));
    assert!(
        rule(&ib)
            .unwrap()
            .contains("which held the same data when the cap was set"),
        "{:?}",
        rule(&ib)
    );
    // Written by hand, without the data: bound to it when first read, and written
    // back, so the copy is covered before any draw.
    std::fs::write(
        ledger.config_path(),
        format!("# by hand\n[caps]\n\"{}\" = 0.5 # the census\n", ia.dir),
    )
    .unwrap();
    assert!(
        rule(&ib)
            .unwrap()
            .contains("which held the same data when the cap was set"),
        "{:?}",
        rule(&ib)
    );
    let text = std::fs::read_to_string(ledger.config_path()).unwrap();
    assert!(
        text.starts_with("# by hand\n") && text.contains(&format!("content = \"{}\"", ia.content)),
        "{text}"
    );
    // A directory that holds no dataset, or none at all: refused, naming the line.
    let gone = dir.path().join("gone");
    for (key, why) in [
        (s_of(dir.path()), "not a dataset coco can load"),
        (s_of(&gone), "no such directory"),
    ] {
        std::fs::write(
            ledger.config_path(),
            format!("default_cap = 9\n[caps]\n\"{key}\" = 0.5\n"),
        )
        .unwrap();
        let e = ledger.config_text_error();
        assert!(
            e.contains("config.toml:3: [caps] key") && e.contains(why),
            "{e}"
        );
    }
    // … unless the ledger records draws from it: its cap then covers their data
    // wherever it is copied.
    let mut drawn = dataset(&[1, 2, 3]);
    drawn.dir = gone.clone();
    let mut elsewhere = drawn.clone();
    elsewhere.dir = b_dir.path().to_path_buf();
    let lock = ledger.lock().unwrap();
    ledger
        .append(&lock, entry(&drawn, "0.4", Status::Written))
        .unwrap();
    drop(lock);
    let read = ledger.read().unwrap();
    let status = ledger
        .cap_status(&read, &DatasetIdentity::of(&elsewhere))
        .unwrap();
    assert!(
        status
            .binding()
            .unwrap()
            .describe()
            .contains("for which the ledger records the same data"),
        "{status:?}"
    );
    // The copy's spending includes the original's, by content.
    assert_eq!(status.spent.text(), "0.4");
    let e = ledger
        .check_cap(
            &read,
            &DatasetIdentity::of(&elsewhere),
            &Loss::Pure(Epsilon::parse("0.2").unwrap()),
        )
        .unwrap_err();
    assert!(e.is_policy(), "{e}");
}

fn s_of(p: &Path) -> String {
    p.display().to_string()
}

/// Issue 23: restructured copies of the same people are charged for each other's
/// draws by the population key; other data is not.
#[test]
fn spending_follows_the_population_across_hierarchies() {
    use crate::data::{GroupsForm, Hierarchy};
    use crate::histogram::CountOfCounts;
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path());
    // Two provinces, two leaves each.
    let h = Hierarchy::from_leaf_paths(
        vec!["n".into(), "p".into(), "l".into()],
        &[
            vec!["N".into(), "A".into(), "a1".into()],
            vec!["N".into(), "A".into(), "a2".into()],
            vec!["N".into(), "B".into(), "b1".into()],
            vec!["N".into(), "B".into(), "b2".into()],
        ],
    )
    .unwrap();
    let leaves = |l: Vec<Vec<u32>>| -> Vec<CountOfCounts> {
        l.into_iter().map(CountOfCounts::from_sizes).collect()
    };
    let d = Dataset::from_leaf_histograms(
        PathBuf::new(),
        h.clone(),
        GroupsForm::GroupSizes,
        vec![],
        leaves(vec![vec![1, 2], vec![3, 0], vec![2, 2, 5], vec![1]]),
    );
    let lock = ledger.lock().unwrap();
    ledger
        .append(&lock, entry(&d, "1", Status::Written))
        .unwrap();
    drop(lock);
    let read = ledger.read_strict().unwrap();
    let charged = |x: &Dataset| read.spent(&DatasetIdentity::of(x)).draws;
    let flat = |sizes: Vec<Vec<u32>>| {
        let names: Vec<String> = (0..sizes.len()).map(|i| format!("x{i}")).collect();
        let h = Hierarchy::from_leaf_paths(
            vec!["n".into(), "l".into()],
            &names
                .iter()
                .map(|c| vec!["N".to_string(), c.clone()])
                .collect::<Vec<_>>(),
        )
        .unwrap();
        Dataset::from_leaf_histograms(
            PathBuf::new(),
            h,
            GroupsForm::GroupSizes,
            vec![],
            leaves(sizes),
        )
    };
    // The leaf level dropped (provinces as leaves), a leaf split, an empty leaf, a
    // group of size 0 or 1 more, one entity more: charged.
    assert_eq!(charged(&flat(vec![vec![1, 2, 3, 0], vec![2, 2, 5, 1]])), 1);
    assert_eq!(
        charged(&flat(vec![
            vec![1],
            vec![2],
            vec![3, 0],
            vec![2, 2, 5, 1],
            vec![]
        ])),
        1
    );
    assert_eq!(
        charged(&flat(vec![vec![1, 2, 3, 0, 0], vec![2, 2, 5, 1]])),
        1
    );
    assert_eq!(charged(&flat(vec![vec![1, 2, 3, 1], vec![2, 2, 5, 1]])), 1);
    assert_eq!(charged(&flat(vec![vec![1, 2, 3], vec![2, 3, 5, 1]])), 1);
    // One province alone: charged (a first-level region, cut whole).
    assert_eq!(charged(&flat(vec![vec![2, 2, 5], vec![1]])), 1);
    // Two entities more, or another population: not.
    assert_eq!(charged(&flat(vec![vec![1, 2, 3, 0], vec![2, 2, 7, 1]])), 0);
    assert_eq!(charged(&flat(vec![vec![9, 9], vec![4]])), 0);
}

/// Issue 23: a ledger deleted, truncated or replaced by an older copy stops draws
/// until the operator restores it or accepts the loss. Issue 32: the loss is written
/// into the chain and its ε still counted; a ledger with no anchor is refused until
/// adopted.
#[test]
fn a_lost_ledger_is_noticed_by_its_anchor() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path());
    let d = dataset(&[1]);
    let lock = ledger.lock().unwrap();
    // First use: no ledger, no anchor.
    assert_eq!(ledger.read_checked().unwrap().1, AnchorState::Fresh);
    for _ in 0..3 {
        ledger
            .append(&lock, entry(&d, "1", Status::Written))
            .unwrap();
    }
    drop(lock);
    let good = std::fs::read(ledger.path()).unwrap();
    assert_eq!(
        ledger.read_checked().unwrap().1,
        AnchorState::Holds {
            anchored: 3,
            lines: 3
        }
    );
    // Deleted, or its last line removed: refused, naming the command.
    let older: Vec<u8> = {
        let text = String::from_utf8(good.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        format!("{}\n{}\n", lines[0], lines[1]).into_bytes()
    };
    for bytes in [Vec::new(), older.clone()] {
        std::fs::write(ledger.path(), &bytes).unwrap();
        let e = ledger.read_strict().unwrap_err();
        assert!(e.is_policy());
        assert!(
            e.to_string().contains("coco ledger reanchor --accept-loss"),
            "{e}"
        );
    }
    std::fs::remove_file(ledger.path()).unwrap();
    assert!(matches!(
        ledger.read_strict(),
        Err(LedgerError::AnchorLost { .. })
    ));
    // Another chain of the same length put in its place.
    let other = Ledger::at(dir.path().join("other"));
    let lock = other.lock().unwrap();
    for _ in 0..3 {
        other
            .append(&lock, entry(&d, "1", Status::Written))
            .unwrap();
    }
    drop(lock);
    std::fs::copy(other.path(), ledger.path()).unwrap();
    assert!(
        ledger
            .read_strict()
            .unwrap_err()
            .to_string()
            .contains("is not the line anchored")
    );
    // Restored from a backup: draws go on; reanchor without --accept-loss refuses
    // a loss.
    std::fs::write(ledger.path(), &older).unwrap();
    assert!(matches!(
        ledger.reanchor(false),
        Err(LedgerError::AnchorLost { .. })
    ));
    std::fs::write(ledger.path(), &good).unwrap();
    assert!(ledger.read_strict().is_ok());
    assert!(matches!(
        ledger.reanchor(false).unwrap(),
        Reanchored::InAgreement { lines: 3 }
    ));
    // Accepting the loss keeps the old anchor and writes the loss into the chain,
    // with the ε the lost line spent: still counted.
    std::fs::write(ledger.path(), &older).unwrap();
    let Reanchored::Replaced {
        lines,
        anchored,
        kept,
        loss,
    } = ledger.reanchor(true).unwrap()
    else {
        panic!("replaced")
    };
    assert_eq!((lines, anchored), (3, 3));
    assert!(kept.exists());
    assert_eq!(loss.ledger_lines, 2);
    assert_eq!(loss.lost.len(), 1);
    assert_eq!(
        (
            loss.lost[0].epsilon.clone().unwrap().to_string(),
            loss.lost[0].draws
        ),
        ("1".to_string(), 1)
    );
    let read = ledger.read_strict().unwrap();
    assert_eq!(read.events.len(), 1);
    let spent = read.spent(&DatasetIdentity::of(&d));
    assert_eq!(
        (spent.text(), spent.draws, spent.lost_draws),
        ("3".to_string(), 3, 1)
    );
    // The new anchor knows the lost ε too: a second loss does not forget the first.
    let with_loss = std::fs::read(ledger.path()).unwrap();
    let first_two: Vec<u8> = {
        let text = String::from_utf8(with_loss.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        format!("{}\n{}\n", lines[0], lines[1]).into_bytes()
    };
    std::fs::write(ledger.path(), &first_two).unwrap();
    let Reanchored::Replaced { loss, .. } = ledger.reanchor(true).unwrap() else {
        panic!("replaced")
    };
    assert_eq!(loss.lost[0].epsilon.clone().unwrap().to_string(), "1");
    assert_eq!(
        ledger
            .read_strict()
            .unwrap()
            .spent(&DatasetIdentity::of(&d))
            .text(),
        "3"
    );
    // No anchor beside a ledger of lines (an older coco's, or the anchor deleted):
    // refused until adopted, explicitly.
    std::fs::remove_file(ledger.anchor_path()).unwrap();
    let lock = ledger.lock().unwrap();
    assert!(matches!(
        ledger.read_checked(),
        Err(LedgerError::AnchorMissing { lines: 3, .. })
    ));
    assert!(
        ledger
            .append(&lock, entry(&d, "1", Status::Written))
            .unwrap_err()
            .to_string()
            .contains("coco ledger adopt")
    );
    drop(lock);
    let Adopted::Adopted { adoption, .. } = ledger.adopt().unwrap() else {
        panic!("adopted")
    };
    assert_eq!(
        (adoption.trusted, adoption.ledger_lines),
        (Trusted::LedgerAsIs, 3)
    );
    assert_eq!(
        ledger.read_checked().unwrap().1,
        AnchorState::Holds {
            anchored: 4,
            lines: 4
        }
    );
    assert!(matches!(
        ledger.adopt().unwrap(),
        Adopted::NothingToAdopt { lines: 4 }
    ));
    let lock = ledger.lock().unwrap();
    // An anchor one line behind (coco stopped between the line and its anchor).
    ledger
        .write_anchor(1, &ledger.read().unwrap().line_hashes[0], Vec::new())
        .unwrap();
    assert_eq!(
        ledger.read_checked().unwrap().1,
        AnchorState::Holds {
            anchored: 1,
            lines: 4
        }
    );
    // An unreadable anchor stops draws too.
    std::fs::write(ledger.anchor_path(), "{").unwrap();
    assert!(matches!(
        ledger.read_strict(),
        Err(LedgerError::AnchorUnreadable { .. })
    ));
    drop(lock);
}

/// Issue 23: only a line cut short is torn: lines joined into one are a defect
/// `repair` refuses, and so is a cut anchored line.
#[test]
fn only_a_line_cut_short_is_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path());
    let d = dataset(&[1]);
    let lock = ledger.lock().unwrap();
    for _ in 0..2 {
        ledger
            .append(&lock, entry(&d, "1", Status::Written))
            .unwrap();
    }
    drop(lock);
    let good = std::fs::read_to_string(ledger.path()).unwrap();
    let joined = good.replace('\n', "");
    std::fs::write(ledger.path(), &joined).unwrap();
    let read = ledger.read().unwrap();
    assert_eq!(read.torn_tail, None);
    assert!(
        read.problems[0].message.contains("not a line cut short"),
        "{:?}",
        read.problems
    );
    assert!(matches!(
        ledger.repair(),
        Err(LedgerError::NotRepairable { .. })
    ));
    assert_eq!(std::fs::read_to_string(ledger.path()).unwrap(), joined);
    // The last anchored line cut: not torn, the ledger was truncated.
    std::fs::write(ledger.path(), &good[..good.len() - 10]).unwrap();
    let e = ledger.repair().unwrap_err().to_string();
    assert!(e.contains("truncated, not torn"), "{e}");
    // A line cut inside a character is torn.
    std::fs::write(
        ledger.path(),
        format!("{good}{{\"v\":2,\"dir\":\"\u{e9}")
            .as_bytes()
            .split_last()
            .unwrap()
            .1,
    )
    .unwrap();
    assert!(ledger.read().unwrap().torn_tail.is_some());
    assert!(matches!(
        ledger.repair().unwrap(),
        Repair::SetAsideTornTail { line: 3, .. }
    ));
}

/// Issue 32: a ledger finds its own caps and anchor through its pointer, whatever the
/// environment says of the configuration directory; an anchor of another ledger, a
/// moved home and a deleted ledger and anchor are refused; a move is adopted only when
/// the anchor finds every line.
#[test]
fn the_ledger_finds_its_own_caps_and_anchor() {
    let root = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(root.path()).unwrap();
    let data = root.join("data");
    let (c1, c2) = (root.join("config1"), root.join("config2"));
    let d = dataset(&[1]);
    let id = DatasetIdentity::of(&d);
    let eps = |t: &str| Epsilon::parse(t).unwrap();
    let first = Ledger::with_config(&data, &c1);
    assert_eq!(first.place(), &Place::Environment);
    first
        .set_cap(
            &CapKey::Digest(id.content.clone()),
            &CapLimit::Epsilon(eps("1.5")),
            None,
        )
        .unwrap();
    // Setting a cap records where the caps are: the pointer, and an anchor of no lines.
    assert!(first.pointer_path().exists() && first.anchor_path().exists());
    assert_eq!(
        first.read_checked().unwrap().1,
        AnchorState::Holds {
            anchored: 0,
            lines: 0
        }
    );
    let lock = first.lock().unwrap();
    first
        .append(&lock, entry(&d, "1", Status::Written))
        .unwrap();
    drop(lock);
    // Another configuration directory in the environment: the ledger's own are used,
    // the operator is told, and caps found in both apply.
    let second = Ledger::with_config(&data, &c2);
    assert_eq!(second.config_home(), c1.as_path());
    assert!(second.place_note().unwrap().contains("config2"));
    let read = second.read_strict().unwrap();
    assert!(second.check_cap(&read, &id, &Loss::Pure(eps("1"))).is_err());
    std::fs::create_dir_all(&c2).unwrap();
    std::fs::write(c2.join(CONFIG_FILE), "default_cap = 0.25\n").unwrap();
    let other = DatasetIdentity::of(&dataset(&[7]));
    let status = second.cap_status(&read, &other).unwrap();
    assert_eq!(
        status.binding().unwrap().cap,
        CapLimit::Epsilon(eps("0.25"))
    );
    assert_eq!(status.binding().unwrap().file, c2.join(CONFIG_FILE));
    // Another data directory beside the same configuration: the anchor is another
    // ledger's.
    let elsewhere = Ledger::with_config(root.join("data2"), &c1);
    let e = elsewhere.read_strict().unwrap_err();
    assert!(matches!(e, LedgerError::Misplaced { .. }), "{e}");
    assert!(e.to_string().contains("belongs to the ledger"), "{e}");
    assert!(e.is_policy());
    // The home moved: its pointer names the ledger it was written beside.
    std::fs::rename(&data, root.join("data3")).unwrap();
    let moved = Ledger::with_config(root.join("data3"), &c1);
    assert!(matches!(moved.place(), Place::Moved { .. }));
    let e = moved.read_strict().unwrap_err().to_string();
    assert!(
        e.contains("moved or copied") && e.contains("coco ledger adopt"),
        "{e}"
    );
    let Adopted::Adopted { adoption, .. } = moved.adopt().unwrap() else {
        panic!("adopted")
    };
    assert_eq!(adoption.trusted, Trusted::CheckedByAnchor);
    assert_eq!(
        adoption.moved_from.as_deref(),
        Some(data.join(LEDGER_FILE).to_str().unwrap())
    );
    let moved = Ledger::with_config(root.join("data3"), &c1);
    assert!(moved.read_strict().is_ok());
    // A move that lost lines is not adopted: the loss is reanchor's.
    let text = std::fs::read_to_string(moved.path()).unwrap();
    std::fs::rename(root.join("data3"), root.join("data4")).unwrap();
    let lost = Ledger::with_config(root.join("data4"), &c1);
    std::fs::write(lost.path(), text.lines().next().unwrap().to_string() + "\n").unwrap();
    assert!(matches!(lost.adopt(), Err(LedgerError::AnchorLost { .. })));
    std::fs::write(lost.path(), &text).unwrap();
    assert!(matches!(lost.adopt().unwrap(), Adopted::Adopted { .. }));
    // The ledger and its anchor both deleted, the pointer left: evidence of deletion.
    let lost = Ledger::with_config(root.join("data4"), &c1);
    assert!(lost.read_strict().is_ok());
    std::fs::remove_file(lost.path()).unwrap();
    std::fs::remove_file(lost.anchor_path()).unwrap();
    let e = lost.read_strict().unwrap_err();
    assert!(matches!(e, LedgerError::LedgerGone { .. }), "{e}");
    assert!(e.is_policy());
}

/// Issue 32: an anchor of version 1 (an older coco) is read, and the next append
/// writes version 2; event lines are read strictly and chained.
#[test]
fn older_anchors_are_read_and_event_lines_strictly() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path());
    let d = dataset(&[1]);
    let lock = ledger.lock().unwrap();
    ledger
        .append(&lock, entry(&d, "1", Status::Written))
        .unwrap();
    let head = ledger.read().unwrap().line_hashes[0].clone();
    std::fs::write(
        ledger.anchor_path(),
        format!(r#"{{"v":1,"lines":1,"head":"{head}","time":"2026-11-22T01:02:03Z"}}"#),
    )
    .unwrap();
    assert!(ledger.read_strict().is_ok());
    ledger
        .append(&lock, entry(&d, "1", Status::Written))
        .unwrap();
    let anchor = ledger.read_anchor().unwrap().unwrap();
    // Anchors are now written in version 3, with the ρ of every key (ε²/2 per draw).
    assert_eq!(anchor.v, 3);
    let spent = anchor.spent.unwrap();
    assert_eq!(spent[0].epsilon.clone().unwrap().to_string(), "2");
    assert_eq!(spent[0].rho.clone().unwrap().to_string(), "1");
    // A version 2 anchor without its spending is not one coco wrote.
    std::fs::write(
        ledger.anchor_path(),
        format!(r#"{{"v":2,"lines":1,"head":"{head}","time":"2026-11-22T01:02:03Z"}}"#),
    )
    .unwrap();
    assert!(matches!(
        ledger.read_anchor(),
        Err(LedgerError::AnchorUnreadable { .. })
    ));
    drop(lock);
    // An event line with a field coco never writes, of another version, or of a kind
    // it does not know: a defect.
    let good = std::fs::read_to_string(ledger.path()).unwrap();
    let prev = sha256_hex(good.lines().last().unwrap().as_bytes());
    let adopted = format!(
        r#"{{"v":3,"event":"adopted","id":"ab12","time":"2026-11-22T01:02:03Z","ledger_lines":2,"trusted":"ledger_as_is","prev":"{prev}"}}"#
    );
    std::fs::write(ledger.path(), format!("{good}{adopted}\n")).unwrap();
    let read = ledger.read().unwrap();
    assert!(read.problems.is_empty(), "{:?}", read.problems);
    assert_eq!(read.events.len(), 1);
    for (bad, says) in [
        (
            adopted.replace("\"ledger_lines\"", "\"colour\":1,\"ledger_lines\""),
            "unknown field",
        ),
        (adopted.replace("\"v\":3", "\"v\":2"), "format version 2"),
        (
            adopted.replace("\"adopted\"", "\"forgotten\""),
            "not known to this coco",
        ),
        (adopted.replace(&prev, GENESIS), "the hash chain is broken"),
    ] {
        std::fs::write(ledger.path(), format!("{good}{bad}\n")).unwrap();
        let read = ledger.read().unwrap();
        assert!(
            read.problems
                .first()
                .is_some_and(|p| p.line == 3 && p.message.contains(says)),
            "{says}: {:?}",
            read.problems
        );
    }
}

/// A zCDP draw's line on `d`, of total ρ = `rho`.
fn zcdp_entry(d: &Dataset, rho: &str, status: Status) -> LedgerEntry {
    let plan = ReleasePlan::uniform(
        &d.hierarchy,
        Epsilon::parse("1").unwrap(),
        Method::Hc,
        crate::release::plan::MaxSize::Fixed(100),
    )
    .unwrap();
    let mut e = LedgerEntry::for_draw(
        d,
        &plan,
        DrawSpend {
            id: &new_id(),
            loss: &Loss::Zcdp(Rho::parse(rho).unwrap()),
            randomness: Randomness::Os,
            levels: false,
        },
        status,
        Tool::Release,
    );
    e.levels = vec![LevelRecord {
        name: "nation".into(),
        budget: Loss::Zcdp(Rho::parse(rho).unwrap()),
        method: MethodKind::Hc,
        tail: None,
    }];
    e
}

#[test]
fn zcdp_lines_are_version_3_in_rho_and_pure_lines_stay_version_2() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path());
    let d = dataset(&[1]);
    let lock = ledger.lock().unwrap();
    let pure = ledger
        .append(&lock, entry(&d, "1", Status::Written))
        .unwrap();
    let zcdp = ledger
        .append(&lock, zcdp_entry(&d, "1/4", Status::Written))
        .unwrap();
    drop(lock);
    assert_eq!((pure.v, zcdp.v), (LEDGER_VERSION, ZCDP_LEDGER_VERSION));
    let text = std::fs::read_to_string(ledger.path()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains(r#""v":2,"id""#) && !lines[0].contains("rho"));
    assert!(!lines[0].contains("definition"));
    assert!(lines[1].contains(r#""v":3,"definition":"zcdp""#));
    assert!(lines[1].contains(r#""total_rho":{"num":"1","den":"4"}"#));
    assert!(!lines[1].contains("epsilon"));
    let read = ledger.read_strict().unwrap();
    assert_eq!(read.lines[1].loss(), Loss::Zcdp(Rho::parse("1/4").unwrap()));
    // Spending: the pure ε alone, and ρ = 1/2 (ε = 1) + 1/4.
    let spent = read.spent(&DatasetIdentity::of(&d));
    assert_eq!(spent.epsilon.unwrap().to_string(), "1");
    assert_eq!(spent.rho.unwrap().to_string(), "0.75");
    assert_eq!((spent.draws, spent.zcdp_draws), (2, 1));
}

#[test]
fn lines_that_mix_measures_are_refused_with_their_line() {
    let d = dataset(&[1]);
    let mut pure = serde_json::to_string(&entry(&d, "1", Status::Written)).unwrap();
    let zcdp = serde_json::to_string(&zcdp_entry(&d, "1/4", Status::Written)).unwrap();
    let bad = [
        (
            zcdp.replace(r#""definition":"zcdp","#, ""),
            "without \"definition\"",
        ),
        (
            zcdp.replace(
                r#""total_rho":"#,
                r#""total_epsilon":{"num":"1","den":"1"},"total_rho":"#,
            ),
            "both an ε and a ρ",
        ),
        (
            zcdp.replace(r#""total_rho":{"num":"1","den":"4"},"#, ""),
            "neither an ε nor a ρ",
        ),
        (
            zcdp.replace(r#""v":3"#, r#""v":2"#),
            "version 2 with \"definition\"",
        ),
        (
            pure.replace(r#""total_epsilon":"#, r#""total_rho":"#),
            "version 2 with a ρ",
        ),
        (
            zcdp.replace(
                r#""rho":{"num":"1","den":"4"},"method""#,
                r#""epsilon":{"num":"1","den":"4"},"method""#,
            ),
            "with an ε",
        ),
        (
            zcdp.replace(r#""v":3"#, r#""v":4"#),
            "format version 4 is not known",
        ),
    ];
    pure.push('\n');
    for (line, says) in bad {
        let read = parse_ledger(format!("{pure}{line}\n").as_bytes());
        let p = read
            .problems
            .iter()
            .find(|p| p.line == 2)
            .unwrap_or_else(|| panic!("{line}: {:?}", read.problems));
        assert!(p.message.contains(says), "{says}: {}", p.message);
    }
}

#[test]
fn a_version_2_anchor_counts_rho_as_the_square_of_the_sum() {
    let k: KeySpend =
        serde_json::from_str(r#"{"content":"ab","epsilon":{"num":"3","den":"2"},"draws":2}"#)
            .unwrap();
    // Two draws whose ε sum to 3/2: at least (3/2)²/2 = 9/8 of ρ, whatever the split.
    assert_eq!(k.rho_spent().unwrap().to_string(), "1.125");
    let lost = spending::lost_between(std::slice::from_ref(&k), &[]);
    assert_eq!(lost[0].rho.clone().unwrap().to_string(), "1.125");
    let none: KeySpend = serde_json::from_str(r#"{"content":"ab","draws":2}"#).unwrap();
    assert!(none.check().is_err());
}

#[test]
fn caps_in_rho_and_epsilon_delta_refuse_what_their_unit_says() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::at(dir.path().join("home"));
    let d = dataset(&[1]);
    let id = DatasetIdentity::of(&d);
    let lock = ledger.lock().unwrap();
    ledger
        .append(&lock, entry(&d, "1", Status::Written))
        .unwrap();
    drop(lock);
    let read = ledger.read_strict().unwrap();
    let rho = |t: &str| Loss::Zcdp(Rho::parse(t).unwrap());
    let pure = |t: &str| Loss::Pure(Epsilon::parse(t).unwrap());
    let digest = CapKey::Digest(id.content.clone());
    // ρ cap 3/4: ε = 1 counted as ρ = 1/2; 1/4 more fits, 1/4 + anything does not.
    ledger
        .set_cap(&digest, &CapLimit::Rho(Rho::parse("3/4").unwrap()), None)
        .unwrap();
    assert!(ledger.check_cap(&read, &id, &rho("1/4")).is_ok());
    assert!(ledger.check_cap(&read, &id, &rho("0.2500001")).is_err());
    // ε = 1/√2 would be ρ = 1/4: still a pure draw counted by its ρ.
    assert!(ledger.check_cap(&read, &id, &pure("0.7")).is_ok());
    assert!(ledger.check_cap(&read, &id, &pure("0.71")).is_err());
    // An ε cap refuses any zCDP draw, whatever its size.
    ledger
        .set_cap(
            &digest,
            &CapLimit::Epsilon(Epsilon::parse("100").unwrap()),
            None,
        )
        .unwrap();
    let e = ledger
        .check_cap(&read, &id, &rho("1/1000000"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("a pure-ε cap cannot account a ρ-zCDP draw"),
        "{e}"
    );
    assert!(ledger.check_cap(&read, &id, &pure("99")).is_ok());
    // (ε, δ): pure draws by their sum; a ρ by its conversion.
    ledger
        .set_cap(
            &digest,
            &CapLimit::EpsilonDelta {
                epsilon: Epsilon::parse("3").unwrap(),
                delta: 1e-10,
            },
            None,
        )
        .unwrap();
    assert!(ledger.check_cap(&read, &id, &pure("2")).is_ok());
    assert!(ledger.check_cap(&read, &id, &pure("2.01")).is_err());
    // ρ = 1/2 + 1/100 is stated at ε ≈ 6.9 > 3.
    assert!(ledger.check_cap(&read, &id, &rho("1/100")).is_err());
    // A config by hand: a ρ default and a table that is not one limit.
    std::fs::write(ledger.config_path(), "default_cap = { rho = \"1/8\" }\n").unwrap();
    let status = ledger.cap_status(&read, &id).unwrap();
    assert_eq!(status.binding().unwrap().cap.unit(), "rho");
    assert!(status.shown_in_rho());
    for bad in [
        "default_cap = { rho = \"1\", epsilon = \"1\" }\n",
        "default_cap = { delta = 1e-10 }\n",
        "default_cap = { epsilon = \"1\", delta = 2.0 }\n",
    ] {
        std::fs::write(ledger.config_path(), bad).unwrap();
        let e = ledger.config_text_error();
        assert!(e.contains("config.toml:1:"), "{bad}: {e}");
    }
}
