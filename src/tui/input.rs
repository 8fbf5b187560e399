//! A one-line text field: what the operator types for an ε, a path, a search; and the
//! paths typed in it, resolved and completed.
//!
//! Editing is [`tui_input`]'s (maintained, grapheme- and width-aware: a wide character
//! takes two cells and the cursor lands after it): characters, word movement, and the
//! readline deletions `ctrl-w`, `ctrl-u`, `ctrl-k`. This module adds what coco's fields
//! need around it: where the cursor is drawn, and paths.

use std::path::{Path, PathBuf};

use tui_input::{Input, InputRequest};

/// Text and a cursor.
#[derive(Clone, Debug, Default)]
pub struct TextField {
    input: Input,
}

impl PartialEq for TextField {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text() && self.cursor() == other.cursor()
    }
}

impl Eq for TextField {}

/// An edit of a text field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    Insert(char),
    Backspace,
    Delete,
    Left,
    Right,
    Home,
    End,
    WordLeft,
    WordRight,
    /// The word before the cursor (`ctrl-w`).
    DeleteWord,
    /// Everything before the cursor (`ctrl-u`).
    DeleteToStart,
    /// Everything from the cursor on (`ctrl-k`).
    DeleteToEnd,
}

impl TextField {
    /// A field holding `text`, with the cursor at its end.
    pub fn with_text(text: impl Into<String>) -> TextField {
        TextField {
            input: Input::new(text.into()),
        }
    }

    pub fn text(&self) -> &str {
        self.input.value()
    }

    /// The cursor, in characters from the start.
    pub fn cursor(&self) -> usize {
        self.input.cursor()
    }

    /// The cursor, in terminal cells from the start (a wide character takes two).
    pub fn cursor_column(&self) -> usize {
        self.input.visual_cursor()
    }

    /// How many cells to scroll the text so that the cursor shows in `width` cells.
    pub fn scroll(&self, width: usize) -> usize {
        self.input.visual_scroll(width)
    }

    pub fn set(&mut self, text: impl Into<String>) {
        *self = TextField::with_text(text);
    }

    pub fn edit(&mut self, edit: Edit) {
        let request = match edit {
            Edit::Insert(c) => InputRequest::InsertChar(c),
            Edit::Backspace => InputRequest::DeletePrevChar,
            Edit::Delete => InputRequest::DeleteNextChar,
            Edit::Left => InputRequest::GoToPrevChar,
            Edit::Right => InputRequest::GoToNextChar,
            Edit::Home => InputRequest::GoToStart,
            Edit::End => InputRequest::GoToEnd,
            Edit::WordLeft => InputRequest::GoToPrevWord,
            Edit::WordRight => InputRequest::GoToNextWord,
            Edit::DeleteWord => InputRequest::DeletePrevWord,
            Edit::DeleteToStart => InputRequest::DeleteFromStart,
            Edit::DeleteToEnd => InputRequest::DeleteTillEnd,
        };
        self.input.handle(request);
    }

    pub fn insert(&mut self, c: char) {
        self.edit(Edit::Insert(c));
    }
}

/// Where a typed path points: `~` and `~/…` are the home directory, a relative path is
/// taken from `base` (the directory coco was started in), and `.` and `..` are
/// resolved in the text (without following links), so the operator sees the path that
/// will be used.
pub fn resolve_path(text: &str, base: &Path) -> PathBuf {
    let text = text.trim();
    let expanded = expand_home(text);
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        base.join(expanded)
    };
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push(part);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// `~` and `~/…` with the home directory in place of `~`.
fn expand_home(text: &str) -> PathBuf {
    let home = || directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf());
    match text.strip_prefix('~') {
        Some("") => home().unwrap_or_else(|| PathBuf::from(text)),
        Some(rest) if rest.starts_with('/') => match home() {
            Some(h) => h.join(rest.trim_start_matches('/')),
            None => PathBuf::from(text),
        },
        _ => PathBuf::from(text),
    }
}

/// A completion of a typed path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The text completed to the longest prefix the candidates share (a lone directory
    /// gets a trailing `/`).
    pub text: String,
    /// The names that could follow, when more than one (sorted).
    pub candidates: Vec<String>,
}

/// Completes the last component of a typed path, read against `base` for a relative
/// path and with `~` as the home directory; the text keeps the form it was typed in.
/// `None` when nothing matches.
pub fn complete_path(text: &str, base: &Path) -> Option<Completion> {
    let (dir, prefix) = match text.rfind('/') {
        Some(i) => (&text[..=i], &text[i + 1..]),
        None => ("", text),
    };
    let read_from = if dir.is_empty() {
        base.to_path_buf()
    } else {
        resolve_path(dir, base)
    };
    let mut names: Vec<(String, bool)> = std::fs::read_dir(read_from)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let is_dir = e.file_type().ok()?.is_dir()
                || std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir());
            (name.starts_with(prefix) && !(prefix.is_empty() && name.starts_with('.')))
                .then_some((name, is_dir))
        })
        .collect();
    names.sort();
    let first = names.first()?;
    let mut common = first.0.clone();
    for (n, _) in &names[1..] {
        let shared = common
            .chars()
            .zip(n.chars())
            .take_while(|(a, b)| a == b)
            .count();
        common = common.chars().take(shared).collect();
    }
    let slash = if names.len() == 1 && first.1 { "/" } else { "" };
    Some(Completion {
        text: format!("{dir}{common}{slash}"),
        candidates: if names.len() > 1 {
            names
                .into_iter()
                .map(|(n, d)| if d { format!("{n}/") } else { n })
                .collect()
        } else {
            Vec::new()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(text: &str, edits: &[Edit]) -> TextField {
        let mut f = TextField::with_text(text);
        for &e in edits {
            f.edit(e);
        }
        f
    }

    #[test]
    fn editing_works_on_characters_not_bytes() {
        use Edit::*;
        let mut f = typed("ε=1", &[Left, Left, Backspace]);
        assert_eq!(f.text(), "=1");
        f.insert('é');
        assert_eq!(f.text(), "é=1");
        f.edit(End);
        f.edit(Backspace);
        f.insert('2');
        f.edit(Home);
        f.edit(Delete);
        assert_eq!(f.text(), "=2");
        for _ in 0..3 {
            f.edit(Right);
        }
        assert_eq!(f.cursor(), 2);
    }

    #[test]
    fn wide_characters_put_the_cursor_after_them() {
        // "東京" takes four cells: the cursor is drawn at cell 4 + the ASCII after it.
        let mut f = TextField::with_text("東京/ab");
        assert_eq!((f.cursor(), f.cursor_column()), (5, 7));
        f.edit(Edit::Home);
        f.edit(Edit::Right);
        assert_eq!((f.cursor(), f.cursor_column()), (1, 2));
        f.insert('x');
        assert_eq!(f.text(), "東x京/ab");
        assert_eq!(f.cursor_column(), 3);
        // In a field 4 cells wide the text scrolls by whole characters to show it.
        f.edit(Edit::End);
        assert!(f.cursor_column() - f.scroll(4) <= 4);
    }

    #[test]
    fn words_move_and_delete_like_readline() {
        use Edit::*;
        let f = typed("coco plan us-blocks", &[WordLeft]);
        assert_eq!(f.cursor(), "coco plan us-".len());
        let f = typed("coco plan us-blocks", &[WordLeft, WordLeft, WordLeft]);
        assert_eq!(f.cursor(), "coco ".len());
        let f = typed("coco plan us", &[Home, WordRight]);
        assert_eq!(f.cursor(), "coco ".len());
        assert_eq!(typed("data/us blocks", &[DeleteWord]).text(), "data/us ");
        let f = typed("data/us blocks", &[WordLeft, DeleteToStart]);
        assert_eq!((f.text(), f.cursor()), ("blocks", 0));
        assert_eq!(
            typed("data/us blocks", &[WordLeft, DeleteToEnd]).text(),
            "data/us "
        );
        assert_eq!(typed("Vessa Kaarlö", &[DeleteWord]).text(), "Vessa ");
    }

    #[test]
    fn paths_resolve_from_the_start_directory_and_home() {
        let base = Path::new("/work/start");
        assert_eq!(
            resolve_path("plan.toml", base),
            PathBuf::from("/work/start/plan.toml")
        );
        assert_eq!(
            resolve_path("../x/./plan.toml", base),
            PathBuf::from("/work/x/plan.toml")
        );
        assert_eq!(resolve_path("/abs/p", base), PathBuf::from("/abs/p"));
        if let Some(home) = directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf()) {
            assert_eq!(resolve_path("~/p.toml", base), home.join("p.toml"));
            assert_eq!(resolve_path("~", base), home);
        }
        // Only a leading "~/" is the home directory.
        assert_eq!(
            resolve_path("~x/p", base),
            PathBuf::from("/work/start/~x/p")
        );
    }

    #[test]
    fn paths_complete_to_the_common_prefix() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("households")).unwrap();
        std::fs::create_dir(d.path().join("housing")).unwrap();
        std::fs::write(d.path().join("notes.txt"), "").unwrap();
        let base = format!("{}/", d.path().display());
        let elsewhere = Path::new("/");
        let done = |t: &str| complete_path(t, elsewhere).map(|c| c.text);
        assert_eq!(done(&format!("{base}ho")).unwrap(), format!("{base}hous"));
        assert_eq!(
            complete_path(&format!("{base}ho"), elsewhere)
                .unwrap()
                .candidates,
            vec!["households/", "housing/"]
        );
        assert_eq!(
            done(&format!("{base}househ")).unwrap(),
            format!("{base}households/")
        );
        assert_eq!(
            done(&format!("{base}n")).unwrap(),
            format!("{base}notes.txt")
        );
        assert_eq!(done(&format!("{base}zz")), None);
        // Relative to the start directory, kept relative.
        assert_eq!(
            complete_path("househ", d.path()).unwrap().text,
            "households/"
        );
        assert_eq!(
            complete_path("households/../no", d.path()).unwrap().text,
            "households/../notes.txt"
        );
    }
}
