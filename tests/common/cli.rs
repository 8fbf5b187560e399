//! Running the real `coco` binary with its own `COCO_HOME` (ledger and caps).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const COCO: &str = env!("CARGO_BIN_EXE_coco");

/// The bundled sample dataset.
pub fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households")
}

/// `coco ARGS` with `COCO_HOME=home`.
pub fn coco(args: &[&str], home: &Path) -> Output {
    Command::new(COCO)
        .args(args)
        .env("COCO_HOME", home)
        .output()
        .unwrap()
}

/// Standard output then standard error, as text.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A path as an argument.
pub fn s(p: &Path) -> String {
    p.display().to_string()
}

/// `coco gen us-blocks --out dir --scale scale --seed seed` (its home beside `dir`).
pub fn gen_us_blocks(dir: &Path, scale: &str, seed: &str) {
    let o = coco(
        &[
            "gen",
            "us-blocks",
            "--out",
            dir.to_str().unwrap(),
            "--scale",
            scale,
            "--seed",
            seed,
        ],
        &dir.with_extension("home"),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A copy of the sample in `dir`.
pub fn copy_sample(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    for f in ["hierarchy.csv", "groups.csv", "names.csv"] {
        std::fs::copy(sample().join(f), dir.join(f)).unwrap();
    }
    dir.to_path_buf()
}

/// A plan with `hc` at every level (whose memory grows with K) and these budgets (root
/// first), written in `tmp`.
pub fn plan_hc(tmp: &Path, data: &Path, budgets: &str, home: &Path) -> PathBuf {
    let path = tmp.join(format!(
        "plan-{}-{}.toml",
        data.file_name().unwrap().to_string_lossy(),
        budgets.replace(['/', ','], "_")
    ));
    let o = coco(
        &[
            "plan",
            &s(data),
            "--budgets",
            budgets,
            "--method",
            "hc",
            "--out",
            &s(&path),
        ],
        home,
    );
    assert!(o.status.success(), "{}", text(&o));
    path
}

/// A release with margins of error from two replicates (the intervals are tested in
/// `published.rs` and the library's `uncertainty.rs`; the tests using this one test
/// the draw around them).
pub fn release_quick(data: &Path, plan: &Path, out: &Path, home: &Path) -> Output {
    coco(
        &[
            "release",
            &s(data),
            "--config",
            &s(plan),
            "--out",
            &s(out),
            "--replicates",
            "2",
        ],
        home,
    )
}

/// Asserts `o` succeeded, showing what it said otherwise.
pub fn ok(o: &Output) {
    assert!(o.status.success(), "{}", text(o));
}

/// Asserts `o` exited with `code` and said `says`.
pub fn refused(o: &Output, code: i32, says: &str) {
    assert_eq!(o.status.code(), Some(code), "{}", text(o));
    assert!(text(o).contains(says), "expected {says:?} in: {}", text(o));
}

/// Standard output as JSON, or a failure showing what was said.
pub fn json_of(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

/// The SHA-256 of `bytes`, in lowercase hex (as coco writes digests).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The SHA-256 of the file at `path`, in lowercase hex.
pub fn sha256_file(path: &Path) -> String {
    sha256_hex(&std::fs::read(path).unwrap())
}

/// How many lines the file at `path` holds (0 when it does not exist): a ledger's lines,
/// counted without reading them (a test that damages the ledger counts them too).
pub fn line_count(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// How many lines the ledger in `home` holds (0 when there is none).
pub fn ledger_lines(home: &Path) -> usize {
    line_count(&home.join("ledger.jsonl"))
}

/// The ledger's size in bytes (0 when there is none): grows with any append, even one
/// cut short.
pub fn ledger_bytes(home: &Path) -> u64 {
    std::fs::metadata(home.join("ledger.jsonl")).map_or(0, |m| m.len())
}

/// The number of draws the ledger in `home` records (none when it does not exist),
/// read fail-closed.
pub fn ledger_draws(home: &Path) -> usize {
    coco::release::ledger::Ledger::at(home)
        .read_strict()
        .expect("an intact ledger")
        .draws()
        .len()
}
