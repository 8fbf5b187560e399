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
