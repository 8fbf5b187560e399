//! A one-line text field: what the operator types for an ε, a path, a search.

/// Text and a cursor (a character index).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextField {
    text: String,
    cursor: usize,
}

impl TextField {
    /// A field holding `text`, with the cursor at its end.
    pub fn with_text(text: impl Into<String>) -> TextField {
        let text = text.into();
        let cursor = text.chars().count();
        TextField { text, cursor }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor, in characters from the start.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn set(&mut self, text: impl Into<String>) {
        *self = TextField::with_text(text);
    }

    fn byte_at(&self, chars: usize) -> usize {
        self.text
            .char_indices()
            .nth(chars)
            .map_or(self.text.len(), |(i, _)| i)
    }

    pub fn insert(&mut self, c: char) {
        let at = self.byte_at(self.cursor);
        self.text.insert(at, c);
        self.cursor += 1;
    }

    pub fn backspace(&mut self) {
        if self.cursor > 0 {
            self.cursor -= 1;
            let at = self.byte_at(self.cursor);
            self.text.remove(at);
        }
    }

    pub fn delete(&mut self) {
        if self.cursor < self.text.chars().count() {
            let at = self.byte_at(self.cursor);
            self.text.remove(at);
        }
    }

    pub fn left(&mut self) {
        self.cursor = self.cursor.saturating_sub(1);
    }

    pub fn right(&mut self) {
        self.cursor = (self.cursor + 1).min(self.text.chars().count());
    }

    pub fn home(&mut self) {
        self.cursor = 0;
    }

    pub fn end(&mut self) {
        self.cursor = self.text.chars().count();
    }
}

/// Completes a path to the longest prefix shared by the entries it could name; a
/// directory gets a trailing `/`. Returns `None` when nothing matches.
pub fn complete_path(text: &str) -> Option<String> {
    let (dir, prefix) = match text.rfind('/') {
        Some(i) => (&text[..=i], &text[i + 1..]),
        None => ("", text),
    };
    let read_from = if dir.is_empty() { "." } else { dir };
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
    Some(format!("{dir}{common}{slash}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editing_works_on_characters_not_bytes() {
        let mut f = TextField::with_text("ε=1");
        assert_eq!(f.cursor(), 3);
        f.left();
        f.left();
        f.backspace();
        assert_eq!(f.text(), "=1");
        f.insert('é');
        assert_eq!(f.text(), "é=1");
        f.end();
        f.backspace();
        f.insert('2');
        f.home();
        f.delete();
        assert_eq!(f.text(), "=2");
        f.right();
        f.right();
        f.right();
        assert_eq!(f.cursor(), 2);
    }

    #[test]
    fn paths_complete_to_the_common_prefix() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("households")).unwrap();
        std::fs::create_dir(d.path().join("housing")).unwrap();
        std::fs::write(d.path().join("notes.txt"), "").unwrap();
        let base = format!("{}/", d.path().display());
        assert_eq!(
            complete_path(&format!("{base}ho")).unwrap(),
            format!("{base}hous")
        );
        assert_eq!(
            complete_path(&format!("{base}househ")).unwrap(),
            format!("{base}households/")
        );
        assert_eq!(
            complete_path(&format!("{base}n")).unwrap(),
            format!("{base}notes.txt")
        );
        assert_eq!(complete_path(&format!("{base}zz")), None);
    }
}
