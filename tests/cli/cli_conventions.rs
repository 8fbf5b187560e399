//! The command's conventions: shell completions and manual pages generated from its
//! arguments, and settings in the user's configuration directory.

use crate::common;

use common::cli::{coco, text};

#[test]
fn completions_are_printed_for_each_shell() {
    let home = tempfile::tempdir().unwrap();
    for (shell, mark) in [
        ("bash", "complete -F _coco"),
        ("zsh", "#compdef coco"),
        ("fish", "complete -c coco"),
    ] {
        let o = coco(&["completions", shell], home.path());
        assert!(o.status.success(), "{shell}: {}", text(&o));
        let script = String::from_utf8(o.stdout).unwrap();
        assert!(script.contains(mark), "{shell}: {script}");
        // Every command and a nested one are offered.
        for word in ["release", "preview", "set-cap", "config"] {
            assert!(script.contains(word), "{shell} lacks {word}");
        }
    }
    // The bash script is valid bash.
    let o = coco(&["completions", "bash"], home.path());
    let file = home.path().join("coco.bash");
    std::fs::write(&file, &o.stdout).unwrap();
    let status = std::process::Command::new("bash")
        .arg("-n")
        .arg(&file)
        .status()
        .expect("bash runs (it checks the completion script)");
    assert!(status.success(), "bash -n rejects the completion script");
    let o = coco(&["completions", "tcsh"], home.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn the_manual_page_lists_the_commands_and_exit_codes() {
    let home = tempfile::tempdir().unwrap();
    let o = coco(&["man"], home.path());
    assert!(o.status.success(), "{}", text(&o));
    let page = String::from_utf8(o.stdout).unwrap();
    assert!(
        page.starts_with(".ie") || page.contains(".TH coco 1"),
        "{page}"
    );
    for word in ["release", "preview", "ledger", "Exit codes"] {
        assert!(page.contains(word), "the page lacks {word}");
    }
    let dir = home.path().join("man");
    let o = coco(&["man", "--out", &common::cli::s(&dir)], home.path());
    assert!(o.status.success(), "{}", text(&o));
    for page in ["coco.1", "coco-release.1", "coco-ledger-set-cap.1"] {
        assert!(dir.join(page).is_file(), "{page} missing");
    }
}
