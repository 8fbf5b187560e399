//! Issue 32 (a third privacy audit, part 1) through the real binary: invisible
//! characters and look-alike labels, the plan file's header, proxies near the data,
//! first-level parts and their neighbours. Each test failed on the code before the
//! fix. (The TUI's timings file is tested in `tests/tui/tui_tmux.rs`.)

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common;
use common::cli::{coco, copy_sample, ok, refused, s, sample, text};

fn fixture(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bad")
        .join(case)
}

/// Item 5: each of the six invisible code points the audit found passing is refused
/// at load, naming file:line:column and the code point.
#[test]
fn invisible_characters_are_refused_at_load() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    for (case, at, code_point) in [
        ("invisible-hangul-filler", "names.csv:3:2", "U+3164"),
        ("invisible-choseong-filler", "hierarchy.csv:3:3", "U+115F"),
        (
            "invisible-variation-selector",
            "hierarchy.csv:4:2",
            "U+FE0F",
        ),
        ("invisible-grapheme-joiner", "hierarchy.csv:1:2", "U+034F"),
        ("invisible-khmer-vowel", "names.csv:2:2", "U+17B4"),
        ("invisible-braille-blank", "names.csv:3:2", "U+2800"),
    ] {
        let o = coco(&["inspect", &s(&fixture(case))], &home);
        refused(&o, 3, &format!("{case}/{at}: "));
        refused(
            &o,
            3,
            &format!("holds an invisible character ({code_point} "),
        );
        assert!(o.stdout.is_empty(), "{case}: {}", text(&o));
    }
    // The issue's own case: "Ostwick" + U+3164 beside "Ostwick".
    let data = copy_sample(&tmp.path().join("filler"));
    let names = std::fs::read_to_string(data.join("names.csv")).unwrap();
    std::fs::write(
        data.join("names.csv"),
        names.replacen("ARV/01/0102,Harl", "ARV/01/0102,Ostwick\u{3164}", 1),
    )
    .unwrap();
    let o = coco(&["inspect", &s(&data)], &home);
    refused(&o, 3, "filler/names.csv:5:2: name \"Ostwick\\u{3164}\"");
    assert!(!text(&o).contains('\u{3164}'), "{}", text(&o));
}

/// Item 5: two names of one parent that look the same once normalised are warned of
/// by `coco inspect` and `coco release` (the load goes on).
#[test]
fn look_alike_names_are_warned_of() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = copy_sample(&tmp.path().join("alike"));
    let names = std::fs::read_to_string(data.join("names.csv")).unwrap();
    // Upper case, and full-width letters: both read as "Ostwick".
    std::fs::write(
        data.join("names.csv"),
        names
            .replacen("ARV/01/0102,Harl", "ARV/01/0102,OSTWICK", 1)
            .replacen(
                "ARV/01/0103,Kettlemoor",
                "ARV/01/0103,\u{ff2f}\u{ff53}\u{ff54}\u{ff57}\u{ff49}\u{ff43}\u{ff4b}",
                1,
            ),
    )
    .unwrap();
    let o = coco(&["inspect", &s(&data)], &home);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.contains(
            "names \"Ostwick\" (ARV/01/0101, names.csv:4) and \"OSTWICK\" (ARV/01/0102, names.csv:5) under ARV/01 (they differ at character 2: U+0073 against U+0053)"
        ),
        "{err}"
    );
    assert!(
        err.contains("and \"\u{ff2f}\u{ff53}\u{ff54}\u{ff57}\u{ff49}\u{ff43}\u{ff4b}\" (ARV/01/0103, names.csv:6)"),
        "{err}"
    );
    assert_eq!(err.matches("warning: ").count(), 1, "{err}");
    // Codes too: a district code differing by case from its sibling's.
    let codes = copy_sample(&tmp.path().join("codes"));
    for (f, pattern) in [
        ("hierarchy.csv", "ARV,01,{}"),
        ("groups.csv", ",{},"),
        ("names.csv", "ARV/01/{},"),
    ] {
        let mut t = std::fs::read_to_string(codes.join(f)).unwrap();
        for (from, to) in [("0102", "01O2"), ("0103", "01o2")] {
            t = t.replace(&pattern.replace("{}", from), &pattern.replace("{}", to));
        }
        std::fs::write(codes.join(f), t).unwrap();
    }
    let o = coco(&["inspect", &s(&codes)], &home);
    ok(&o);
    assert!(
        text(&o).contains("codes \"01O2\" (ARV/01/01O2) and \"01o2\" (ARV/01/01o2) under ARV/01"),
        "{}",
        text(&o)
    );
    // The release says it too, and is written.
    let plan = tmp.path().join("plan.toml");
    ok(&coco(&["plan", &s(&data), "--out", &s(&plan)], &home));
    let out = tmp.path().join("r");
    let o = coco(
        &[
            "release",
            &s(&data),
            "--config",
            &s(&plan),
            "--out",
            &s(&out),
            "--replicates",
            "2",
        ],
        &home,
    );
    ok(&o);
    assert!(
        text(&o).contains("warning: labels of one parent's regions read alike"),
        "{}",
        text(&o)
    );
    // The sample itself reads clearly.
    let o = coco(&["inspect", &s(&sample())], &home);
    ok(&o);
    assert!(o.stderr.is_empty(), "{}", text(&o));
}

/// Item 6: for every option of `coco plan` that changes the plan's label, what the
/// header above the plan claims is what the plan holds: the label (the header's and the
/// `tuning` key's agree), whether it is coco's default, the options given, K, the split
/// of ε and whether each level's method comes with coco's reason. The plan is read back
/// by the library, independently of the header's text.
#[test]
fn the_plan_header_says_what_the_plan_is() {
    use coco::release::plan::tuning::Tuning;
    use coco::release::plan::{MaxSize, ReleasePlan};
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = sample();
    let cases: [&[&str]; 10] = [
        &[],
        &["--total", "2"],
        &["--max-size", "10000"],
        &["--max-size", "2852"],
        &["--estimate-max-size", "0.1"],
        &["--allocation", "geometric"],
        &["--allocation", "geometric", "--ratio", "2"],
        &["--budgets", "0.2,0.3,0.5"],
        &["--method", "hg"],
        &["--tail", "30", "--tail-groups", "40", "--max-size", "500"],
    ];
    for (i, options) in cases.iter().enumerate() {
        let path = tmp.path().join(format!("plan-{i}.toml"));
        let mut args = vec!["plan".to_string(), s(&data)];
        args.extend(options.iter().map(|o| o.to_string()));
        args.extend(["--out".into(), s(&path)]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(&coco(&args, &home));
        let file = std::fs::read_to_string(&path).unwrap();
        let header: String = file
            .lines()
            .take_while(|l| l.starts_with('#'))
            .map(|l| l.trim_start_matches('#').trim())
            .collect::<Vec<_>>()
            .join(" ");
        let plan = ReleasePlan::load(&path).unwrap();
        let case = format!("coco plan {}:\n{header}", options.join(" "));
        // The label, said once in the header and once as the key.
        let label = plan.tuning();
        assert!(
            header.contains(&format!("(tuning = \"{label}\")")),
            "{case}"
        );
        assert_eq!(header.matches("tuning = \"").count(), 1, "{case}");
        let default = options.is_empty()
            || *options == ["--total", "2"]
            || *options == ["--max-size", "10000"];
        assert_eq!(label == Tuning::PublicDefault, default, "{case}");
        assert_eq!(label == Tuning::Public, !default, "{case}");
        assert_eq!(header.starts_with("coco's default plan"), default, "{case}");
        if !default {
            assert!(header.contains("not coco's default plan"), "{case}");
            // The options that made it so, as given.
            for flag in options.iter().filter(|o| o.starts_with("--")) {
                assert!(header.contains(*flag), "{flag}: {case}");
            }
        }
        // Nothing in `coco plan` reads a group size.
        assert!(
            header.to_lowercase().contains("no group size was read"),
            "{case}"
        );
        // K.
        match plan.max_size() {
            MaxSize::Fixed(10_000) => assert!(!header.contains("K = "), "{case}"),
            MaxSize::Fixed(k) => {
                assert!(
                    header.contains(&format!("K = {k} was set by hand")),
                    "{case}"
                )
            }
            MaxSize::Estimate { budget } => assert!(
                header.contains(&format!(
                    "K is estimated privately when the release is drawn, with {budget}"
                )),
                "{case}"
            ),
        }
        // The split of ε.
        let levels = plan.levels();
        let even = levels.windows(2).all(|w| w[0].budget() == w[1].budget());
        assert_eq!(header.contains("ε is split evenly"), even, "{case}");
        assert_eq!(
            header.contains("ε is split over the levels as the operator chose"),
            !even,
            "{case}"
        );
        // Each level's method: with coco's reason above it, or set by the options.
        let reasons = file
            .lines()
            .collect::<Vec<_>>()
            .windows(2)
            .filter(|w| w[1] == "[[level]]" && w[0].starts_with('#'))
            .count();
        let by_coco = reasons == levels.len();
        assert!(reasons == 0 || by_coco, "{case}");
        assert_eq!(
            header.contains("Each level's method and why are given above it"),
            by_coco,
            "{case}"
        );
        assert_eq!(
            header.contains("Each level's method was set by the options"),
            !by_coco,
            "{case}"
        );
    }
}

/// `coco preview DATA --proxy PROXY` (one trial).
fn preview_on(data: &Path, proxy: &Path, home: &Path) -> Output {
    coco(
        &[
            "preview",
            &s(data),
            "--proxy",
            &s(proxy),
            "--trials",
            "1",
            "--seed",
            "1",
        ],
        home,
    )
}

/// A copy of the sample in `tmp/name` with group H000001 (size 4) of size `size`.
fn sample_with_first_group(tmp: &Path, name: &str, size: u32) -> PathBuf {
    let dir = copy_sample(&tmp.join(name));
    let groups = std::fs::read_to_string(dir.join("groups.csv")).unwrap();
    assert!(groups.contains("\nH000001,0101,4\n"));
    std::fs::write(
        dir.join("groups.csv"),
        groups.replacen("\nH000001,0101,4\n", &format!("\nH000001,0101,{size}\n"), 1),
    )
    .unwrap();
    dir
}

/// Item 7: a proxy that is the dataset with one group changed by two (two entities,
/// which the population key does not match) is refused as the dataset itself, naming
/// the proxy, the distance and the bound and nothing else about the data (exit code
/// 3); up to 20 entities apart is refused, 21 and more accepted.
#[test]
fn a_proxy_near_the_data_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = sample();
    let near = sample_with_first_group(tmp.path(), "near", 6);
    let o = preview_on(&data, &near, &home);
    refused(
        &o,
        3,
        &format!(
            "proxy {}: it is 2 entities from the confidential dataset",
            near.display()
        ),
    );
    refused(&o, 3, "a proxy at most 20 apart is the confidential data");
    let stderr = String::from_utf8_lossy(&o.stderr);
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    let err = errors[0];
    // No figure of the data but the distance and the bound: no size, no count.
    let digits: Vec<String> = err
        .replace(&near.display().to_string(), "")
        .split(|c: char| !c.is_ascii_digit())
        .filter(|d| !d.is_empty())
        .map(String::from)
        .collect();
    assert_eq!(digits, ["2", "20"], "{err}");
    assert!(o.stdout.is_empty(), "{}", text(&o));
    // The bound, both sides.
    let at = sample_with_first_group(tmp.path(), "at", 24);
    refused(&preview_on(&data, &at, &home), 3, "it is 20 entities from");
    let past = sample_with_first_group(tmp.path(), "past", 25);
    ok(&preview_on(&data, &past, &home));
    // A proxy far from the data: another draw of the sample's generator.
    let other = tmp.path().join("other");
    ok(&coco(
        &["gen", "sample", "--out", &s(&other), "--seed", "2"],
        &home,
    ));
    let o = preview_on(&data, &other, &home);
    ok(&o);
    assert!(text(&o).contains("PUBLIC PROXY"), "{}", text(&o));
}

/// The sample's province 04 alone (its root and districts), as files.
fn province_04(groups: &str, hierarchy: &str) -> (String, String) {
    let h: String = hierarchy
        .lines()
        .enumerate()
        .filter(|(i, l)| *i == 0 || l.split(',').nth(1) == Some("04"))
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    let g: String = groups
        .lines()
        .enumerate()
        .filter(|(i, r)| *i == 0 || r.split(',').nth(1).is_some_and(|d| d.starts_with("04")))
        .map(|(_, r)| format!("{r}\n"))
        .collect();
    (h, g)
}

/// Item 7: a draw recorded on the whole counts against province 04 cut out with one
/// entity more, and the other way round; and the same with the entity on the side drawn
/// first. Each variant is released under a cap of 1.5 after a draw of ε = 1 on the
/// other: refused (exit code 4) with the draw counted.
#[test]
fn a_part_and_its_whole_are_charged_give_or_take_one_entity() {
    let tmp = tempfile::tempdir().unwrap();
    let groups = std::fs::read_to_string(sample().join("groups.csv")).unwrap();
    let hierarchy = std::fs::read_to_string(sample().join("hierarchy.csv")).unwrap();
    // One entity more in province 04: a new group of size 1 in district 0401.
    let plus_one = format!("{groups}H999999,0401,1\n");
    let write = |name: &str, (h, g): (String, String)| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("hierarchy.csv"), h).unwrap();
        std::fs::write(dir.join("groups.csv"), g).unwrap();
        dir
    };
    let whole = write("whole", (hierarchy.clone(), groups.clone()));
    let whole_plus = write("whole-plus", (hierarchy.clone(), plus_one.clone()));
    let part = write("part", province_04(&groups, &hierarchy));
    let part_plus = write("part-plus", province_04(&plus_one, &hierarchy));
    let release = |dir: &Path, home: &Path| {
        let levels = std::fs::read_to_string(dir.join("hierarchy.csv"))
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .split(',')
            .count();
        assert_eq!(levels, 3);
        let p = common::cli::plan_hc(tmp.path(), dir, "1/3,1/3,1/3", home);
        let out = tmp.path().join(format!(
            "out-{}-{}",
            dir.file_name().unwrap().to_string_lossy(),
            home.file_name().unwrap().to_string_lossy()
        ));
        (common::cli::release_quick(dir, &p, &out, home), out)
    };
    for (i, (first, then, what)) in [
        (
            &whole,
            &part_plus,
            "the province plus one entity after the whole",
        ),
        (
            &part,
            &whole_plus,
            "the whole plus one entity after the province",
        ),
        (
            &part_plus,
            &whole,
            "the whole after the province plus one entity",
        ),
        (
            &whole_plus,
            &part,
            "the province after the whole plus one entity",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let home = tmp.path().join(format!("home{i}"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("config.toml"), "default_cap = 1.5\n").unwrap();
        let (o, _) = release(first, &home);
        ok(&o);
        let (o, out) = release(then, &home);
        assert_eq!(o.status.code(), Some(4), "{what}: {}", text(&o));
        assert!(
            text(&o).contains("1 already spent in 1 draw(s)"),
            "{what}: {}",
            text(&o)
        );
        assert!(!out.exists(), "{what}");
    }
    // Two entities apart is not matched: the province with a group of size 2 added is
    // released after the whole.
    let home = tmp.path().join("home-far");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), "default_cap = 1.5\n").unwrap();
    let plus_two = write(
        "part-plus-two",
        province_04(&format!("{groups}H999999,0401,2\n"), &hierarchy),
    );
    ok(&release(&whole, &home).0);
    ok(&release(&plus_two, &home).0);
}
