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
