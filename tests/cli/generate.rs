//! `coco gen`: determinism, the committed sample, the us-counties recipe, and the data
//! contract of the files written.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::common;

use coco::generate::household_sizes::SizeModel;
use coco::generate::us_counties::{OUTLIER_MAX_SIZE, OUTLIERS, UsCounties};
use coco::generate::{GenerateError, Preset, generate};

const US_HOUSEHOLDS: u64 = 121_948_702;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn committed_sample() -> PathBuf {
    manifest_dir().join("sample-data/households")
}

/// Generates `preset` into a fresh directory and returns (tempdir guard, dataset dir).
fn generated(preset: Preset, seed: u64) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("data");
    generate(preset, &out, seed).unwrap();
    (tmp, out)
}

fn file_names(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

#[test]
fn committed_sample_is_what_seed_1_generates() {
    let (_tmp, out) = generated(Preset::Sample, 1);
    let committed = committed_sample();
    assert_eq!(
        file_names(&out),
        file_names(&committed),
        "regenerate with: rm -r sample-data/households && cargo run -- gen sample --out sample-data/households"
    );
    for name in file_names(&out) {
        let fresh = fs::read(out.join(&name)).unwrap();
        let old = fs::read(committed.join(&name)).unwrap();
        assert!(
            fresh == old,
            "{name} differs from the committed sample; regenerate with: \
             rm -r sample-data/households && cargo run -- gen sample --out sample-data/households"
        );
    }
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    for preset in [Preset::Sample, Preset::UsCounties, Preset::Taxi] {
        let (_a, a) = generated(preset, 7);
        let (_b, b) = generated(preset, 7);
        let (_c, c) = generated(preset, 8);
        let data = match preset {
            Preset::Sample => "groups.csv",
            _ => "histograms.csv",
        };
        for name in file_names(&a) {
            assert_eq!(
                fs::read(a.join(&name)).unwrap(),
                fs::read(b.join(&name)).unwrap(),
                "{preset:?} {name}"
            );
        }
        assert_ne!(
            fs::read(a.join(data)).unwrap(),
            fs::read(c.join(data)).unwrap(),
            "{preset:?}: seeds 7 and 8 gave the same {data}"
        );
        // The geography does not depend on the seed.
        assert_eq!(
            fs::read(a.join("hierarchy.csv")).unwrap(),
            fs::read(c.join("hierarchy.csv")).unwrap()
        );
    }
}

#[test]
fn refuses_occupied_targets_and_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();

    let file = tmp.path().join("a-file");
    fs::write(&file, "keep me").unwrap();
    let err = generate(Preset::Sample, &file, 1).unwrap_err();
    assert!(matches!(err, GenerateError::NotADirectory { .. }), "{err}");
    assert!(err.to_string().contains("a-file"), "{err}");
    assert_eq!(fs::read_to_string(&file).unwrap(), "keep me");

    let full = tmp.path().join("full");
    fs::create_dir(&full).unwrap();
    fs::write(full.join("x.txt"), "x").unwrap();
    let err = generate(Preset::Sample, &full, 1).unwrap_err();
    assert!(matches!(err, GenerateError::NotEmpty { .. }), "{err}");
    assert!(err.to_string().contains("full"), "{err}");
    assert_eq!(file_names(&full), BTreeSet::from(["x.txt".to_string()]));

    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let report = generate(Preset::Sample, &empty, 1).unwrap();
    assert_eq!(report.dir, empty);
    assert_eq!(
        file_names(&empty),
        BTreeSet::from(["groups.csv", "hierarchy.csv", "names.csv"].map(String::from))
    );

    let nested = tmp.path().join("new/deeper/us");
    let report = generate(Preset::UsCounties, &nested, 1).unwrap();
    assert_eq!(
        report.files,
        ["hierarchy.csv", "histograms.csv", "names.csv"]
    );
    assert_eq!(report.groups, US_HOUSEHOLDS + OUTLIERS as u64);
    assert_eq!((report.leaves, report.nodes), (3220, 1 + 52 + 3220));
    assert!(report.max_size.unwrap() <= OUTLIER_MAX_SIZE);
    assert!(report.entities > 300_000_000);

    // No temporary directory is left beside any target.
    assert_eq!(
        file_names(tmp.path()),
        BTreeSet::from(["a-file", "empty", "full", "new"].map(String::from))
    );
    assert_eq!(
        file_names(&tmp.path().join("new/deeper")),
        BTreeSet::from(["us".to_string()])
    );
}

/// Each leaf's (size → count), by leaf code.
type LeafHistograms = HashMap<String, BTreeMap<u32, u64>>;

/// Checks everything the data contract says about a dataset directory; returns the
/// leaf paths and histograms.
fn check_contract(dir: &Path) -> (Vec<Vec<String>>, LeafHistograms) {
    // hierarchy.csv: one root, unique leaves, codes without '/', sorted by path.
    let (levels, paths) = read_csv(&dir.join("hierarchy.csv"));
    assert_eq!(levels.len(), 3);
    assert!(!paths.is_empty());
    assert!(paths.iter().all(|p| p.len() == levels.len()));
    assert!(paths.iter().all(|p| p[0] == paths[0][0]), "one root");
    assert!(
        paths
            .iter()
            .flatten()
            .all(|c| !c.is_empty() && !c.contains('/'))
    );
    assert!(
        paths.windows(2).all(|w| w[0] < w[1]),
        "sorted by path, unique"
    );
    let leaves: HashSet<&str> = paths.iter().map(|p| p[2].as_str()).collect();
    assert_eq!(leaves.len(), paths.len(), "leaf codes unique");

    let mut hists = LeafHistograms::new();
    if dir.join("groups.csv").exists() {
        assert!(!dir.join("histograms.csv").exists(), "exactly one form");
        let (header, rows) = read_csv(&dir.join("groups.csv"));
        assert_eq!(header, ["group_id", "region", "size"]);
        let keys: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r[1].as_str(), r[0].as_str()))
            .collect();
        assert!(
            keys.windows(2).all(|w| w[0] < w[1]),
            "sorted by region then id"
        );
        let ids: HashSet<&str> = rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(ids.len(), rows.len(), "group ids unique");
        for r in &rows {
            assert!(leaves.contains(r[1].as_str()), "unknown region {}", r[1]);
            let size: u32 = r[2].parse().unwrap();
            *hists
                .entry(r[1].clone())
                .or_default()
                .entry(size)
                .or_default() += 1;
        }
    } else {
        let (header, rows) = read_csv(&dir.join("histograms.csv"));
        assert_eq!(header, ["region", "size", "count"]);
        let mut prev: Option<(String, u32)> = None;
        for r in &rows {
            assert!(leaves.contains(r[0].as_str()), "unknown region {}", r[0]);
            let size: u32 = r[1].parse().unwrap();
            let count: u64 = r[2].parse().unwrap();
            assert!(count > 0, "zero count written for {} size {size}", r[0]);
            let key = (r[0].clone(), size);
            if let Some(p) = &prev {
                assert!(p < &key, "histograms not sorted or repeated at {key:?}");
            }
            hists.entry(r[0].clone()).or_default().insert(size, count);
            prev = Some(key);
        }
    }

    // names.csv: display ids of existing nodes, in path order.
    let (header, names) = read_csv(&dir.join("names.csv"));
    assert_eq!(header, ["region", "name"]);
    let mut display_ids: BTreeSet<String> = BTreeSet::new();
    for p in &paths {
        for l in 1..=p.len() {
            display_ids.insert(p[..l].join("/"));
        }
    }
    let ids: Vec<Vec<&str>> = names.iter().map(|n| n[0].split('/').collect()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "names in path order");
    for n in &names {
        assert!(
            display_ids.contains(&n[0]),
            "names.csv: unknown region {}",
            n[0]
        );
        assert!(!n[1].is_empty());
    }
    assert_eq!(names.len(), display_ids.len(), "every region is named");
    (paths, hists)
}

#[test]
fn sample_follows_the_contract_and_has_the_intended_shape() {
    let dir = committed_sample();
    let (paths, hists) = check_contract(&dir);
    let (levels, _) = read_csv(&dir.join("hierarchy.csv"));
    assert_eq!(levels, ["country", "province", "district"]);
    let provinces: BTreeSet<&str> = paths.iter().map(|p| p[1].as_str()).collect();
    assert_eq!(provinces.len(), 6);
    assert_eq!(paths.len(), 60);

    // Some districts have no groups at all but are in the hierarchy.
    let empty: Vec<&str> = paths
        .iter()
        .map(|p| p[2].as_str())
        .filter(|c| !hists.contains_key(*c))
        .collect();
    assert_eq!(empty, ["0403", "0503", "0603"]);

    let mut root: BTreeMap<u32, u64> = BTreeMap::new();
    for h in hists.values() {
        for (&s, &c) in h {
            *root.entry(s).or_default() += c;
        }
    }
    let groups: u64 = root.values().sum();
    assert!((40_000..=60_000).contains(&groups), "{groups} groups");
    let vacant = root[&0] as f64 / groups as f64;
    assert!((0.08..=0.12).contains(&vacant), "vacant share {vacant}");
    let households: u64 = root.range(1..).map(|(_, c)| c).sum();
    let small: u64 = root.range(1..=7).map(|(_, c)| c).sum();
    assert!(small as f64 > 0.99 * households as f64);
    let peak = root.range(1..).max_by_key(|&(_, c)| c).unwrap().0;
    assert!(*peak == 1 || *peak == 2, "peak at size {peak}");
    assert!(root.range(8..100).count() >= 2, "a tail beyond 7");
    let big: Vec<u32> = root.range(1000..).map(|(&s, _)| s).collect();
    assert_eq!(big.len(), 7, "the group quarters: {big:?}");
    assert!(big.iter().all(|&s| s <= 4000));

    // District sizes span more than an order of magnitude.
    let sizes: Vec<u64> = hists.values().map(|h| h.values().sum()).collect();
    let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
    assert!(max / min >= 50, "districts from {min} to {max} groups");

    // Ids: H and six digits for housing units, GQ and four for group quarters.
    let (_, rows) = read_csv(&dir.join("groups.csv"));
    let gq: Vec<&Vec<String>> = rows.iter().filter(|r| r[0].starts_with("GQ")).collect();
    assert_eq!(gq.len(), 7);
    assert!(
        gq.iter()
            .all(|r| r[0].len() == 6 && r[2].parse::<u32>().unwrap() >= 1000)
    );
    assert!(
        rows.iter()
            .filter(|r| !r[0].starts_with("GQ"))
            .all(|r| r[0].len() == 7 && r[0].starts_with('H'))
    );

    // Small enough to commit.
    let bytes: u64 = file_names(&dir)
        .iter()
        .map(|f| fs::metadata(dir.join(f)).unwrap().len())
        .sum();
    assert!(bytes < 3_000_000, "{bytes} bytes");

    // Names with a comma are quoted and read back intact; UTF-8 survives.
    let (_, names) = read_csv(&dir.join("names.csv"));
    let names: HashMap<&str, &str> = names
        .iter()
        .map(|n| (n[0].as_str(), n[1].as_str()))
        .collect();
    assert_eq!(names["ARV"], "Republic of Arvenia");
    assert_eq!(names["ARV/01/0107"], "Brenn, Upper");
    assert_eq!(names["ARV/02/0209"], "Saint-Évre");
}

/// The ACS table, read independently of the generator: geoid → (population, households).
fn acs() -> BTreeMap<String, (u64, u64)> {
    let (header, rows) = read_csv(&manifest_dir().join("assets/us_counties_acs2019.csv"));
    assert_eq!(header[4], "geoid");
    rows.iter()
        .map(|r| (r[4].clone(), (r[6].parse().unwrap(), r[7].parse().unwrap())))
        .collect()
}

#[test]
fn us_counties_files_follow_the_recipe() {
    let (_tmp, dir) = generated(Preset::UsCounties, 1);
    let (paths, hists) = check_contract(&dir);
    let (levels, _) = read_csv(&dir.join("hierarchy.csv"));
    assert_eq!(levels, ["nation", "state", "county"]);
    assert_eq!(paths.len(), 3220);
    assert!(
        paths
            .iter()
            .all(|p| p[0] == "US" && p[1].len() == 2 && p[2].len() == 5)
    );
    assert!(paths.iter().all(|p| p[2].starts_with(&p[1])));
    let states: BTreeSet<&str> = paths.iter().map(|p| p[1].as_str()).collect();
    assert_eq!(states.len(), 52);
    assert!(
        states.contains("11") && states.contains("72"),
        "DC and Puerto Rico"
    );

    let acs = acs();
    assert_eq!(acs.values().map(|v| v.1).sum::<u64>(), US_HOUSEHOLDS);
    let mut total = 0u64;
    let mut excess = 0u64;
    for p in &paths {
        let groups: u64 = hists.get(&p[2]).map_or(0, |h| h.values().sum());
        let households = acs[&p[2]].1;
        // Each county keeps its households and may have received outliers.
        assert!(groups >= households, "{}: {groups} < {households}", p[2]);
        assert!(groups - households <= OUTLIERS as u64);
        excess += groups - households;
        total += groups;
    }
    assert_eq!(excess, OUTLIERS as u64);
    assert_eq!(total, US_HOUSEHOLDS + OUTLIERS as u64);

    let (_, names) = read_csv(&dir.join("names.csv"));
    let names: HashMap<&str, &str> = names
        .iter()
        .map(|n| (n[0].as_str(), n[1].as_str()))
        .collect();
    assert_eq!(names["US"], "United States");
    assert_eq!(names["US/06"], "California");
    assert_eq!(names["US/06/06037"], "Los Angeles County");
    assert_eq!(names["US/35/35013"], "Doña Ana County");
}

#[test]
fn us_counties_sizes_follow_the_model() {
    let acs = acs();
    let us = UsCounties::draw(1).unwrap();
    assert_eq!(us.counties.len(), 3220);
    assert_eq!(us.outliers.len(), OUTLIERS);
    assert!(
        us.outliers
            .iter()
            .all(|&(_, s)| (1..=OUTLIER_MAX_SIZE).contains(&s))
    );

    let mut checked_big = 0;
    for (c, h) in us.counties.iter().zip(&us.households) {
        let (population, households) = acs[&c.geoid];
        assert_eq!((c.population, c.households), (population, households));
        assert_eq!(h.groups(), households, "{}", c.geoid);
        assert!(
            h.pairs().first().is_none_or(|&(s, _)| s >= 1),
            "no empty households"
        );
        let target = population as f64 / households as f64;
        let mean = h.entities() as f64 / households as f64;
        // The sample mean of N sizes has standard deviation σ/√N: 5σ bounds (the seed
        // is fixed; a correct generator fails one of the 3,220 with probability ~0.002).
        let sd = (SizeModel::fit_mean(target).unwrap().variance() / households as f64).sqrt();
        assert!(
            (mean - target).abs() < 5.0 * sd,
            "{}: mean {mean} vs {target}",
            c.geoid
        );
        if households >= 100_000 {
            assert!(
                (mean - target).abs() < 0.02,
                "{}: mean {mean} vs {target}",
                c.geoid
            );
            checked_big += 1;
        }
    }
    assert!(checked_big > 200, "{checked_big} big counties");

    // Nationally the tail beyond 7 continues roughly geometrically.
    let root = coco::histogram::CountOfCounts::sum(us.households.iter());
    assert_eq!(root.groups(), US_HOUSEHOLDS);
    let (c6, c7, c8, c9) = (root.count(6), root.count(7), root.count(8), root.count(9));
    assert!(c7 < c6 && c8 < c7 && c9 < c8);
    assert!(root.max_size().unwrap() < 40, "households stay small");
    let with_outliers = coco::histogram::CountOfCounts::sum(us.county_histograms().iter());
    assert_eq!(with_outliers.groups(), US_HOUSEHOLDS + OUTLIERS as u64);
}

#[test]
fn generated_data_builds_a_dataset_in_memory() {
    let data = Preset::UsCounties.build(3).unwrap();
    let dataset = data.to_dataset().unwrap();
    let h = &dataset.hierarchy;
    assert_eq!(h.len(), 1 + 52 + 3220);
    assert_eq!(dataset.groups(h.root()), US_HOUSEHOLDS + OUTLIERS as u64);
    let ca = h.find("US/06").unwrap();
    assert_eq!(h.name(ca), Some("California"));
    let la = h.find("06037").unwrap();
    assert_eq!(h.name(la), Some("Los Angeles County"));
    assert_eq!(
        dataset
            .truth()
            .for_diagnostic(coco::privacy::Diagnostic::Oracle)
            .node(la),
        data.leaf_histograms()[data.leaves.iter().position(|p| p[2] == "06037").unwrap()].as_ref()
    );

    let sample = Preset::Sample.build(1).unwrap().to_dataset().unwrap();
    assert_eq!(sample.hierarchy.len(), 1 + 6 + 60);
    let reserve = sample.hierarchy.find("0403").unwrap();
    assert_eq!(sample.groups(reserve), 0);
}

// ---------------------------------------------------------------------------------
// us-blocks: the nation down to its blocks, at a small scale here (the full scale is
// measured in the README, not tested).

use common::cli::{coco as coco_cmd, gen_us_blocks as us_blocks};

#[test]
fn us_blocks_has_the_shape_of_the_census_geography() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("blocks");
    us_blocks(&dir, "0.01", "1");
    let (levels, paths) = read_csv(&dir.join("hierarchy.csv"));
    assert_eq!(levels, ["nation", "state", "county", "tract", "block"]);
    // Codes: GEOID-like, nested, unique blocks.
    for p in &paths {
        assert_eq!(p[0], "US");
        assert_eq!(p[1].len(), 2);
        assert!(p[2].len() == 5 && p[2].starts_with(&p[1]), "{p:?}");
        assert!(p[3].len() == 11 && p[3].starts_with(&p[2]), "{p:?}");
        assert!(p[4].len() == 15 && p[4].starts_with(&p[3]), "{p:?}");
        assert!(
            p.iter()
                .skip(1)
                .all(|c| c.bytes().all(|b| b.is_ascii_digit()))
        );
    }
    let blocks: HashSet<&str> = paths.iter().map(|p| p[4].as_str()).collect();
    assert_eq!(blocks.len(), paths.len(), "block codes unique");
    let tracts: HashSet<&str> = paths.iter().map(|p| p[3].as_str()).collect();
    // About 80,000 blocks and at least one tract per county at a hundredth.
    assert!(
        (70_000..95_000).contains(&paths.len()),
        "{} blocks",
        paths.len()
    );
    assert!(
        (3_220..4_500).contains(&tracts.len()),
        "{} tracts",
        tracts.len()
    );
    // Groups per block and county.
    let (header, rows) = read_csv(&dir.join("histograms.csv"));
    assert_eq!(header, ["region", "size", "count"]);
    let county_of: HashMap<&str, &str> = paths
        .iter()
        .map(|p| (p[4].as_str(), p[2].as_str()))
        .collect();
    let mut per_block: HashMap<&str, u64> = HashMap::new();
    let mut per_county: HashMap<&str, u64> = HashMap::new();
    let mut large = 0;
    for r in &rows {
        let count: u64 = r[2].parse().unwrap();
        let size: u64 = r[1].parse().unwrap();
        *per_block.entry(r[0].as_str()).or_default() += count;
        *per_county.entry(county_of[r[0].as_str()]).or_default() += count;
        if size >= 100 {
            large += count;
        }
    }
    let empty = paths.len() - per_block.len();
    let share = empty as f64 / paths.len() as f64;
    assert!((0.25..=0.5).contains(&share), "empty share {share}");
    // A few group quarters of hundreds to thousands of members.
    assert!((50..400).contains(&large), "{large} groups of 100 or more");
    // Each county keeps its scaled households (plus its group quarters, if any).
    for (geoid, (_, households)) in acs() {
        let scaled = if households == 0 {
            0
        } else {
            ((households as f64 * 0.01).round() as u64).max(1)
        };
        let got = per_county.get(geoid.as_str()).copied().unwrap_or(0);
        assert!(
            got >= scaled && got <= scaled + 20,
            "{geoid}: {got} groups for {scaled} households"
        );
    }
    // Households are a dozen per populated block on average.
    let populated_mean = per_block.values().sum::<u64>() as f64 / per_block.len() as f64;
    assert!((12.0..40.0).contains(&populated_mean), "{populated_mean}");
}

#[test]
fn us_blocks_is_deterministic_and_scaled() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("c"),
    );
    us_blocks(&a, "0.002", "5");
    us_blocks(&b, "0.002", "5");
    us_blocks(&c, "0.002", "6");
    for name in ["hierarchy.csv", "histograms.csv", "names.csv"] {
        assert_eq!(
            fs::read(a.join(name)).unwrap(),
            fs::read(b.join(name)).unwrap(),
            "{name}"
        );
    }
    assert_ne!(
        fs::read(a.join("histograms.csv")).unwrap(),
        fs::read(c.join("histograms.csv")).unwrap()
    );
    // Bad scales and a scale for another preset are refused, with nothing written.
    let home = tmp.path().join("home");
    for (args, says) in [
        (
            vec!["gen", "us-blocks", "--scale", "0"],
            "expected a share of the households above 0",
        ),
        (vec!["gen", "us-blocks", "--scale", "1.5"], "at most 1"),
        (
            vec!["gen", "taxi", "--scale", "0.5"],
            "--scale applies to us-blocks only",
        ),
    ] {
        let out = tmp.path().join("refused");
        let mut all = args.clone();
        all.extend(["--out", out.to_str().unwrap()]);
        let o = coco_cmd(&all, &home);
        assert!(!o.status.success());
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(says),
            "{args:?}"
        );
        assert!(!out.exists());
    }
}

/// gen → plan → release → checks at a hundredth of the nation, with the plan `coco plan`
/// writes from public figures (hc + tail at every level, `wls`), as the README shows.
#[test]
fn us_blocks_releases_end_to_end() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir = tmp.path().join("blocks");
    us_blocks(&dir, "0.01", "1");
    let d = dir.to_str().unwrap();
    let inspect = coco_cmd(&["inspect", d, "--json"], &home);
    assert!(inspect.status.success());
    let plan = tmp.path().join("plan.toml");
    let o = coco_cmd(&["plan", d, "--out", plan.to_str().unwrap()], &home);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Every level gets hc + tail and says why, in the plan and in the table.
    let text = std::fs::read_to_string(&plan).unwrap();
    assert_eq!(text.matches("tail = { above = 20").count(), 5, "{text}");
    assert_eq!(
        text.matches("# hc + tail: regions hold a median of")
            .count(),
        5,
        "{text}"
    );
    assert!(text.contains("consistency = \"wls\""), "{text}");
    let table = String::from_utf8_lossy(&o.stderr);
    assert!(table.contains("why (public figures only"), "{table}");
    let out = tmp.path().join("release");
    let o = coco_cmd(
        &[
            "release",
            d,
            "--config",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--json",
            // The margins are written and verified; their intervals are tested in
            // the library's uncertainty.rs.
            "--replicates",
            "2",
        ],
        &home,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for check in [
        "integral",
        "nonnegative",
        "group_totals",
        "consistent",
        "within_max_size",
    ] {
        assert_eq!(v["checks"][check], true, "{check}");
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert!(
        manifest.to_string().contains("\"wls\""),
        "the consistency step that ran: {manifest}"
    );
    let o = coco_cmd(&["verify", out.to_str().unwrap(), "--dataset", d], &home);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(out.join("tables/4-block.csv").exists());
}

/// Bad input at scale still gets one clear line: a block code repeated late in the file
/// names both lines, and a repeated (region, size) row of histograms.csv its first line.
#[test]
fn us_blocks_bad_rows_at_scale_get_one_clear_message() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir = tmp.path().join("blocks");
    us_blocks(&dir, "0.01", "1");
    let hierarchy = dir.join("hierarchy.csv");
    let text = std::fs::read_to_string(&hierarchy).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let late = lines.len() - 1000;
    let code = lines[10].rsplit(',').next().unwrap().to_string();
    lines[late] = lines[10];
    std::fs::write(&hierarchy, lines.join("\n") + "\n").unwrap();
    let o = coco_cmd(&["inspect", dir.to_str().unwrap()], &home);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "hierarchy.csv:{}:5: leaf code \"{code}\" is already on line 11",
            late + 1
        )),
        "{err}"
    );
    // Restore the hierarchy; repeat a histograms row instead.
    std::fs::write(&hierarchy, &text).unwrap();
    let histograms = dir.join("histograms.csv");
    let text = std::fs::read_to_string(&histograms).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let late = lines.len() - 1000;
    lines.insert(late, lines[late - 1]);
    std::fs::write(&histograms, lines.join("\n") + "\n").unwrap();
    let o = coco_cmd(&["inspect", dir.to_str().unwrap()], &home);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("histograms.csv:{}:1: region ", late + 1))
            && err.contains(&format!(
                "is already on line {late}: expected each (region, size) pair at most once"
            )),
        "{err}"
    );
}
