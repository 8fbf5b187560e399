use super::*;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};

fn app() -> App {
    let home = tempfile::tempdir().unwrap();
    App::new(AppOptions {
        dataset: None,
        home: Some(home.path().to_path_buf()),
        preview_seed: None,
    })
}

#[test]
fn screens_cycle_both_ways() {
    let mut a = app();
    update(&mut a, Action::PrevScreen);
    assert_eq!(a.screen, Screen::Release);
    update(&mut a, Action::NextScreen);
    update(&mut a, Action::NextScreen);
    assert_eq!(a.screen, Screen::Hierarchy);
    update(&mut a, Action::ScreenTradeoff);
    assert_eq!(a.screen, Screen::Tradeoff);
}

#[test]
fn keys_go_to_the_overlay_first_and_characters_are_typed() {
    let mut a = app();
    let q = Key::new(KeyCode::Char('q'), KeyModifiers::NONE);
    assert_eq!(a.action_for(q), Some(Action::Quit));
    update(&mut a, Action::OpenDataset);
    assert_eq!(a.action_for(q), Some(Action::Insert('q')));
    let esc = Key::new(KeyCode::Esc, KeyModifiers::NONE);
    assert_eq!(a.action_for(esc), Some(Action::Cancel));
    for c in "some/dir".chars() {
        update(&mut a, Action::Insert(c));
    }
    update(&mut a, Action::Submit);
    assert!(a.overlay.is_none());
    // Relative to the directory coco started in, and said so.
    let want = a.start_dir.join("some/dir");
    assert!(matches!(&a.load, LoadState::Loading { dir, .. } if *dir == want));
    assert!(matches!(
        a.outbox.as_slice(),
        [Command::Start(Job::Load { .. })]
    ));
}

/// Loading says how much of all the input files is read, and the time left at the
/// pace so far, from sizes known before it starts.
#[test]
fn loading_tells_its_share_of_every_input_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hierarchy.csv"), vec![b'x'; 300]).unwrap();
    std::fs::write(dir.path().join("groups.csv"), vec![b'x'; 700]).unwrap();
    std::fs::write(dir.path().join("notes.txt"), vec![b'x'; 5_000]).unwrap();
    let mut a = app();
    a.open(dir.path().to_path_buf());
    let progress = |file: &str, bytes_read, bytes_total| WorkerEvent {
        kind: JobKind::Load,
        update: Update::LoadProgress(crate::data::LoadProgress {
            file: file.into(),
            bytes_read,
            bytes_total,
        }),
    };
    let share = |a: &App| match &a.load {
        LoadState::Loading { step, read, .. } => {
            assert_eq!(read.total, 1_000, "only the files loading reads");
            read.share(step)
        }
        other => panic!("{other:?}"),
    };
    a.receive(progress("hierarchy.csv", 150, 300));
    assert!((share(&a) - 0.15).abs() < 1e-12);
    a.receive(progress("hierarchy.csv", 300, 300));
    a.receive(progress("groups.csv", 350, 700));
    assert!((share(&a) - 0.65).abs() < 1e-12);
    let LoadState::Loading { step, read, .. } = &a.load else {
        unreachable!()
    };
    let text =
        super::super::ui::loading_text(dir.path(), std::time::Duration::from_secs(13), step, read);
    assert!(
        text.contains("13 s · 65% of the 1,000 bytes read · about 7.0 s left at this pace"),
        "{text}"
    );
    a.receive(WorkerEvent {
        kind: JobKind::Load,
        update: Update::LoadSummarising,
    });
    assert_eq!(share(&a), 1.0);
}

#[test]
fn loading_shows_the_bytes_read() {
    let mut a = app();
    a.open(PathBuf::from("somewhere"));
    a.receive(WorkerEvent {
        kind: JobKind::Load,
        update: Update::LoadProgress(crate::data::LoadProgress {
            file: "groups.csv".into(),
            bytes_read: 356_371,
            bytes_total: 712_742,
        }),
    });
    let rt_text = {
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 12)).unwrap();
        terminal.draw(|f| super::super::ui::render(f, &a)).unwrap();
        super::super::runtime::buffer_text(terminal.backend().buffer())
    };
    assert!(rt_text.contains("Loading somewhere"), "{rt_text}");
    assert!(
        rt_text.contains("groups.csv: 356,371 of 712,742 bytes"),
        "{rt_text}"
    );
    a.receive(WorkerEvent {
        kind: JobKind::Load,
        update: Update::Loaded(Err("somewhere: not a directory".into())),
    });
    assert_eq!(
        a.load,
        LoadState::Failed {
            dir: PathBuf::from("somewhere"),
            message: "somewhere: not a directory".into()
        }
    );
}

#[test]
fn without_a_dataset_screen_keys_explain_what_to_do() {
    let mut a = app();
    a.screen = Screen::Budget;
    update(&mut a, Action::EpsilonUp);
    assert_eq!(
        a.message,
        Some((
            Tone::Warning,
            "no dataset is open: press o to open one".into()
        ))
    );
}
