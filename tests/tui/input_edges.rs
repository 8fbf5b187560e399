//! Issue 32, item 5, in the TUI: a dataset whose region names read alike opens with a
//! warning on the message line (the batch commands' side is in
//! `tests/cli/input_edges.rs`).

use coco::tui::app::Tone;

use crate::common;

#[test]
fn look_alike_names_are_warned_of_on_opening() {
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().join("alike");
    common::cli::copy_sample(&dir);
    let names = std::fs::read_to_string(dir.join("names.csv")).unwrap();
    std::fs::write(
        dir.join("names.csv"),
        names.replacen("ARV/01/0102,Harl", "ARV/01/0102,OSTWICK", 1),
    )
    .unwrap();
    let rt = common::tui::open(home.path(), dir);
    let (tone, text) = rt.app.message.clone().expect("a message");
    assert_eq!(tone, Tone::Warning, "{text}");
    assert!(
        text.starts_with("labels of one parent's regions read alike")
            && text.contains("names \"Ostwick\" (ARV/01/0101, names.csv:4) and \"OSTWICK\""),
        "{text}"
    );
    // The sample itself opens with the usual line.
    let rt = common::tui::open(home.path(), common::cli::sample());
    let (tone, text) = rt.app.message.clone().expect("a message");
    assert_eq!(tone, Tone::Info, "{text}");
    assert!(text.starts_with("opened "), "{text}");
}
