//! Helpers for the terminal UI's tests: a runtime on a dataset, a seeded draw handed to
//! the app as the worker would, and a dataset of long names and wide numbers.

use std::path::{Path, PathBuf};
use std::time::Duration;

use coco::noise::NoiseSource;
use coco::release::ledger::{Ledger, Tool};
use coco::release::transaction::{Reservation, ReserveOptions};
use coco::tui::AppOptions;
use coco::tui::runtime::Runtime;
use coco::tui::screens::release::Busy;
use coco::tui::worker::{JobKind, Update, WorkerEvent};

/// How long background work may take before a test gives up.
pub const WAIT: Duration = Duration::from_secs(600);

/// The app on `dir`, loaded, with a temporary home (private, as coco makes it: a
/// looser one is tightened with a message, which `tests/tui/tui_flow.rs` checks) and
/// preview seed 1.
pub fn open(home: &Path, dir: PathBuf) -> Runtime {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(home, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut rt = Runtime::new(AppOptions {
        dataset: Some(dir),
        home: Some(home.to_path_buf()),
        preview_seed: Some(1),
    });
    assert!(rt.settle(WAIT), "loading did not finish");
    rt
}

/// A drawn release made through the release transaction with a seeded source (recorded
/// as pending in the test's ledger), delivered as the draw job would.
pub fn inject_draw(rt: &mut Runtime, home: &Path) {
    let session = rt.app.session.as_ref().expect("a dataset is open");
    let pending = Reservation::open(
        &Ledger::at(home),
        session.dataset.clone(),
        session.plan.clone(),
        Tool::Tui,
        ReserveOptions {
            allow_seeded: true,
            ..Default::default()
        },
    )
    .unwrap()
    .draw(&NoiseSource::seeded(7), &Default::default())
    .unwrap();
    // As if the operator had pressed d.
    rt.app.release.busy = Some(Busy::Drawing {
        progress: None,
        waiting: None,
        cancelled: false,
    });
    rt.app.receive(WorkerEvent {
        kind: JobKind::Draw,
        update: Update::Drawn(Ok(Box::new(pending))),
    });
}

/// The name frames showing a fixture's directory have in the snapshots.
pub const FIXTURES_SHOWN_AS: &str = "target/tui-test-fixtures";

/// Where fixtures are made: `/tmp/coco-fixture-XXXXXX`, outside the source tree and as
/// long as [`FIXTURES_SHOWN_AS`], so a frame naming it lays out (and wraps) exactly as
/// one naming `target/tui-test-fixtures`; [`as_in_snapshots`] puts that name back.
const FIXTURES_PREFIX: &str = "/tmp/coco-fixture-";

/// A fresh fixture directory `name` (removed when the returned guard drops).
pub fn fixture_dir(name: &str) -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::Builder::new()
        .prefix(&FIXTURES_PREFIX["/tmp/".len()..])
        .rand_bytes(FIXTURES_SHOWN_AS.len() - FIXTURES_PREFIX.len())
        .tempdir_in("/tmp")
        .unwrap();
    assert_eq!(
        root.path().as_os_str().len(),
        FIXTURES_SHOWN_AS.len(),
        "{}",
        root.path().display()
    );
    let dir = root.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    (root, dir)
}

/// `text` with every fixture directory named as the snapshots name it.
pub fn as_in_snapshots(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(FIXTURES_PREFIX) {
        let end = at + FIXTURES_SHOWN_AS.len();
        out.push_str(&rest[..at]);
        if rest.is_char_boundary(end) && end <= rest.len() {
            out.push_str(FIXTURES_SHOWN_AS);
            rest = &rest[end..];
        } else {
            out.push_str(FIXTURES_PREFIX);
            rest = &rest[at + FIXTURES_PREFIX.len()..];
        }
    }
    out.push_str(rest);
    out
}

/// A dataset of numbers too wide for fixed columns: regions of millions of groups, a
/// level named `neighborhood`, long region names. In a fixture directory (see
/// [`fixture_dir`]), so the frames (which name the directory) are the same on every run.
pub fn wide_numbers_dataset() -> (tempfile::TempDir, PathBuf) {
    let (root, dir) = fixture_dir("wide-numbers");
    std::fs::write(
        dir.join("hierarchy.csv"),
        "nation,state,neighborhood\nARV,01,0101\nARV,01,0102\nARV,02,0201\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("histograms.csv"),
        "region,size,count\n\
         0101,1,1234567\n0101,2,2345678\n0101,3,987654\n0101,9,123456\n\
         0102,1,654321\n0102,5,111111\n\
         0201,0,250000\n0201,2,3333333\n0201,12,100000\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("names.csv"),
        "region,name\nARV,Republic of Arvenia\n\
         ARV/01,Northmere and the Outer Skerries Autonomous Region\n\
         ARV/02,Calder Coast\n\
         ARV/01/0101,Kaarlö-Vessaport Metropolitan Neighborhood\n\
         ARV/01/0102,Harl\nARV/02/0201,Port Ansel and Environs\n",
    )
    .unwrap();
    (root, dir)
}
