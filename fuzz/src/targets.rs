//! One function per fuzz target. Each feeds arbitrary bytes to one of coco's readers
//! (or arbitrary noisy measurements to the consistency step) and panics only on a bug:
//!
//! * a reader returns a value or an error, never panics, and its error is one line
//!   naming the file;
//! * a dataset that loads is consistent (parents are the sums of their children);
//! * a plan that validates writes back to TOML that parses to the same plan;
//! * every consistency step turns any estimates the estimators can produce into a
//!   release that passes [`check_release`].
//!
//! The loader reads directories, so the dataset targets write the bytes into a scratch
//! directory of their own (in `/dev/shm` when it exists) and load it.
//!
//! This file is also compiled into `tests/library/fuzz_regressions.rs`, which replays the
//! committed corpora (seeds and kept crashers) through exactly this code.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use coco::consistency::{self, Consistency, ConsistencyOptions, MergeRule};
use coco::data::{Dataset, GroupsForm, Hierarchy, LoadError, NodeId};
use coco::estimate::{self, EstimateOptions, IsotonicFit, Method, NodeMeasurement, Noisy};
use coco::histogram::{CountOfCounts, Size};
use coco::privacy::Epsilon;
use coco::release::ledger::Ledger;
use coco::release::pipeline::checks::check_release;
use coco::release::pipeline::draw as run;
use coco::release::pipeline::resources;
use coco::release::plan::ReleasePlan;

const HIERARCHY: &[u8] = b"nation,state,county\nUS,A,a1\nUS,A,a2\nUS,B,b1\nUS,B,b2\n";
const GROUPS: &[u8] = b"group_id,region,size\ng1,a1,1\ng2,a2,3\ng3,b1,2\n";
const ALL_FILES: [&str; 6] = [
    "hierarchy.csv",
    "groups.csv",
    "entities.csv",
    "histograms.csv",
    "names.csv",
    "plan.toml",
];

/// A scratch directory for this process (and thread), in memory where possible.
fn scratch() -> PathBuf {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    let base = BASE.get_or_init(|| {
        let shm = Path::new("/dev/shm");
        let root = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        root.join(format!("coco-fuzz-{}", std::process::id()))
    });
    let dir = base.join(format!("{:?}", std::thread::current().id()).replace(['(', ')'], ""));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// Removes this thread's scratch directory (the regression tests call it when done).
pub fn cleanup() {
    let _ = std::fs::remove_dir_all(scratch());
}

/// Writes exactly `files` into the scratch directory, removing the others.
fn write_files(files: &[(&str, &[u8])]) -> PathBuf {
    let dir = scratch();
    for name in ALL_FILES {
        if !files.iter().any(|(f, _)| *f == name) {
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).expect("write scratch file");
    }
    dir
}

/// Splits at the first zero byte: the bytes before and after it.
fn split(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

/// Loads `files`; checks that an error is one line naming a file of the dataset, and
/// that a dataset is consistent.
fn load_and_check(files: &[(&str, &[u8])]) -> Option<Dataset> {
    let dir = write_files(files);
    match Dataset::load(&dir) {
        Ok(d) => {
            let k = d
                .truth()
                .for_diagnostic(coco::privacy::Diagnostic::Oracle)
                .node(NodeId::ROOT)
                .max_size()
                .unwrap_or(0);
            let checks = check_release(
                d.public(),
                d.truth()
                    .for_diagnostic(coco::privacy::Diagnostic::Oracle)
                    .all(),
                k,
            );
            assert!(
                checks.passed(),
                "a loaded dataset is inconsistent: {checks:?}"
            );
            Some(d)
        }
        Err(e) => {
            check_load_error(&e, &dir);
            None
        }
    }
}

fn check_load_error(e: &LoadError, dir: &Path) {
    let message = e.to_string();
    assert!(
        !message.contains('\n'),
        "a message on two lines: {message:?}"
    );
    assert!(e.file.starts_with(dir), "the error names {:?}", e.file);
    assert!(
        message.starts_with(&e.file.display().to_string()),
        "the message does not start with the file: {message:?}"
    );
    if let Some(line) = e.line {
        assert!(line >= 1, "line {line}");
    }
    if let Some(column) = e.column {
        assert!(e.line.is_some() && column >= 1, "column {column}");
    }
}

/// `hierarchy.csv` is the input; no groups.
pub fn hierarchy(data: &[u8]) {
    load_and_check(&[
        ("hierarchy.csv", data),
        ("groups.csv", b"group_id,region,size\n"),
    ]);
}

/// `groups.csv` with sizes is the input.
pub fn group_sizes(data: &[u8]) {
    load_and_check(&[("hierarchy.csv", HIERARCHY), ("groups.csv", data)]);
}

/// `groups.csv` (before the first zero byte) and `entities.csv` (after it).
pub fn entities(data: &[u8]) {
    let (groups, entities) = split(data);
    load_and_check(&[
        ("hierarchy.csv", HIERARCHY),
        ("groups.csv", groups),
        ("entities.csv", entities),
    ]);
}

/// `histograms.csv` is the input.
pub fn histograms(data: &[u8]) {
    load_and_check(&[("hierarchy.csv", HIERARCHY), ("histograms.csv", data)]);
}

/// `names.csv` is the input.
pub fn names(data: &[u8]) {
    load_and_check(&[
        ("hierarchy.csv", HIERARCHY),
        ("groups.csv", GROUPS),
        ("names.csv", data),
    ]);
}

fn fixed_dataset() -> &'static Dataset {
    static DATASET: OnceLock<Dataset> = OnceLock::new();
    DATASET.get_or_init(|| {
        let dir = write_files(&[("hierarchy.csv", HIERARCHY), ("groups.csv", GROUPS)]);
        Dataset::load(&dir).expect("the fixed dataset loads")
    })
}

/// A release plan (TOML) is the input: read, checked against a fixed hierarchy, and
/// when valid written back and read again.
pub fn plan(data: &[u8]) {
    let dataset = fixed_dataset();
    let dir = write_files(&[("plan.toml", data)]);
    let path = dir.join("plan.toml");
    let plan = match ReleasePlan::load(&path) {
        Ok(p) => p,
        Err(e) => {
            let m = e.to_string();
            assert!(
                !m.contains('\n') && m.starts_with(&path.display().to_string()),
                "{m:?}"
            );
            return;
        }
    };
    if let Err(e) = plan.validate(&dataset.hierarchy, &path) {
        let m = e.to_string();
        assert!(
            !m.contains('\n') && m.starts_with(&path.display().to_string()),
            "{m:?}"
        );
        return;
    }
    let total = plan.total_epsilon().expect("a valid plan has levels");
    let again = ReleasePlan::parse(&plan.to_toml(), &path).expect("a written plan parses");
    again
        .validate(&dataset.hierarchy, &path)
        .expect("a written plan validates");
    assert_eq!(again.total_epsilon(), Some(total));
    assert_eq!(again.max_size(), plan.max_size());
    assert_eq!(
        (
            again.consistency(),
            again.merge(),
            again.hc_fit(),
            again.hg_fit()
        ),
        (
            plan.consistency(),
            plan.merge(),
            plan.hc_fit(),
            plan.hg_fit()
        )
    );
    for (a, b) in again.levels().iter().zip(plan.levels()) {
        assert_eq!(
            (&a.name(), a.budget(), a.method()),
            (&b.name(), b.budget(), b.method())
        );
    }
    // What a run computes before it measures anything.
    let settings = run::plan_settings(&plan);
    let k = match plan.max_size() {
        coco::release::plan::MaxSize::Fixed(k) => *k,
        coco::release::plan::MaxSize::Estimate { .. } => 1,
    };
    let needs = resources::plan_needs(
        dataset,
        &settings,
        k,
        &plan.estimate_options(),
        plan.consistency(),
        resources::Kept {
            histograms: false,
            runs: true,
            fits: true,
        },
    );
    assert!(needs.bytes > 0);
}

/// `ledger.jsonl` (before the first zero byte) and `config.toml` (after it) in a home:
/// read, summed and checked against a cap.
pub fn ledger(data: &[u8]) {
    let (lines, config) = split(data);
    let home = scratch().join("home");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::write(home.join("ledger.jsonl"), lines).expect("ledger");
    std::fs::write(home.join("config.toml"), config).expect("config");
    let ledger = Ledger::at(&home);
    let dataset = fixed_dataset();
    let identity = coco::release::ledger::DatasetIdentity::of(dataset);
    let Ok(read) = ledger.read() else { return };
    let _ = ledger.summary(&read);
    let _ = read.spent(&identity);
    let _ = ledger.verify();
    // Fail closed: a draw goes on only over a ledger with no defect at all.
    match ledger.read_strict() {
        Ok(strict) => {
            assert!(strict.problems.is_empty() && strict.torn_tail.is_none());
            let total_lines = lines
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .count();
            assert_eq!(strict.lines.len(), total_lines, "every line was read");
        }
        Err(e) => {
            assert!(e.is_policy(), "{e}");
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }
    let half = coco::privacy::Loss::Pure(Epsilon::from_ratio(1, 2).expect("1/2"));
    match ledger.check_cap(&read, &identity, &half) {
        Ok(_) => {}
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
    }
}

/// Reads the fuzzer's bytes as small numbers.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    /// A value in `0..n`.
    fn below(&mut self, n: u8) -> u8 {
        self.byte() % n
    }

    /// A noisy value around `center`: mostly small noise, sometimes extreme.
    fn noisy(&mut self, center: i64) -> i64 {
        match self.below(16) {
            0 => i64::MAX - i64::from(self.byte()),
            1 => i64::MIN + i64::from(self.byte()),
            2 => i64::from(i32::MAX) + i64::from(self.byte()),
            3 => center.saturating_add(i64::from(self.byte() as i8) * 1_000_000),
            _ => center.saturating_add(i64::from(self.byte() as i8)),
        }
    }
}

/// A small hierarchy, group counts and noisy measurements of every node from the
/// bytes; every consistency step must give a release that passes the checks.
pub fn consistency(data: &[u8]) {
    let mut b = Bytes { data, at: 0 };
    let depth = 1 + usize::from(b.below(3));
    let names: Vec<String> = (0..depth).map(|l| format!("L{l}")).collect();
    let mut paths: Vec<Vec<String>> = vec![vec!["R".into()]];
    for _ in 1..depth {
        let mut deeper = Vec::new();
        for p in &paths {
            for c in 0..1 + b.below(3) {
                let mut q = p.clone();
                q.push(format!("{}-{c}", p.last().expect("non-empty")));
                deeper.push(q);
            }
        }
        paths = deeper;
    }
    let h = Hierarchy::from_leaf_paths(names, &paths).expect("a valid hierarchy");
    let k: Size = 1 + Size::from(b.below(12));
    let leaves: Vec<CountOfCounts> = (0..h.level_len(h.leaf_level()))
        .map(|_| {
            let groups = b.below(6);
            CountOfCounts::from_sizes((0..groups).map(|_| Size::from(b.below(20))))
        })
        .collect();
    let dataset =
        Dataset::from_leaf_histograms(PathBuf::new(), h, GroupsForm::Histograms, vec![], leaves);
    let h = &dataset.hierarchy;
    let epsilons = ["1", "1/3", "0.01", "1e-9"];
    let options = EstimateOptions {
        cumulative_fit: if b.below(2) == 0 {
            IsotonicFit::L1
        } else {
            IsotonicFit::L2
        },
        unattributed_fit: if b.below(2) == 0 {
            IsotonicFit::L1
        } else {
            IsotonicFit::L2
        },
        keep_raw: true,
    };
    let level_methods: Vec<(Method, Epsilon)> = h
        .levels()
        .map(|_| {
            let tail = Method::HcTail(coco::estimate::Tail {
                above: Size::from(b.below(8)).min(k.saturating_sub(1)),
                groups: coco::estimate::TailLength::Fixed(
                    coco::estimate::TailGroups::new(u32::from(b.below(6)) + 1)
                        .expect("1 to 6 groups"),
                ),
            });
            let method = [Method::Hc, Method::Hg, Method::Naive, tail][usize::from(b.below(4))];
            let epsilon = Epsilon::parse(epsilons[usize::from(b.below(4))]).expect("ε");
            (method, epsilon)
        })
        .collect();
    let estimates: Vec<estimate::NodeEstimate> = (0..h.len() as u32)
        .map(NodeId)
        .map(|id| {
            let (method, epsilon) = level_methods[h.node(id).level.0].clone();
            let groups = dataset.groups(id);
            let exact = estimate::true_vector(
                method,
                dataset
                    .truth()
                    .for_diagnostic(coco::privacy::Diagnostic::Oracle)
                    .node(id),
                groups,
                k,
            );
            let noisy = match method {
                Method::Hc => Noisy::Cumulative(exact.iter().map(|&v| b.noisy(v)).collect()),
                Method::Naive => Noisy::Naive(exact.iter().map(|&v| b.noisy(v)).collect()),
                Method::HcTail(t) => {
                    let mut head: Vec<i64> = exact.iter().map(|&v| b.noisy(v)).collect();
                    let top = head.split_off(t.above.min(k) as usize);
                    Noisy::CumulativeTail { head, top }
                }
                Method::Hg => Noisy::Unattributed(
                    exact
                        .iter()
                        .map(|&v| b.noisy(v).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
                        .collect(),
                ),
            };
            let m = NodeMeasurement::assumed(id, method, epsilon.into(), groups, k, noisy);
            estimate::estimate(&m, &options)
        })
        .collect();
    let merge = if b.below(2) == 0 {
        MergeRule::Weighted
    } else {
        MergeRule::Average
    };
    let estimates = estimate::Estimates::from_vec(estimates);
    for step in [Consistency::TopDown, Consistency::Wls] {
        let consistency_options = ConsistencyOptions {
            merge,
            projection_fit: options.cumulative_fit,
            ..ConsistencyOptions::default()
        };
        let consistent = consistency::make_consistent(
            step,
            h,
            &estimates,
            dataset.public().groups,
            k,
            &consistency_options,
        )
        .unwrap_or_else(|e| panic!("{step:?} failed on valid estimates: {e}"));
        let checks = check_release(dataset.public(), &consistent.histograms, k);
        assert!(checks.passed(), "{step:?}: {checks:?}");
    }
}
