//! What a code, a name or a level name may hold: they are published in `counts.csv` and
//! the wide tables, which the public opens in spreadsheets.
//!
//! - No control characters (NUL, tab, line breaks, …): a code or name is one line of
//!   printable text, and a line break inside one would break every line-based reader.
//! - No leading `=`, `+`, `-` or `@`: a spreadsheet runs such a cell as a formula when
//!   the published CSV is opened (CSV/formula injection). coco rejects such text at load
//!   rather than altering it on output, so what is published is exactly what was loaded.
//! - At most [`MAX_FIELD_BYTES`] bytes in any field of any input file (checked by the
//!   CSV reader), so one runaway field cannot hold the whole file.

/// The longest field accepted in any input file, in bytes.
pub const MAX_FIELD_BYTES: usize = 1024;

/// The characters a spreadsheet reads as the start of a formula.
pub const FORMULA_STARTS: [char; 4] = ['=', '+', '-', '@'];

/// Why a text cannot be a code, a name or a level name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextProblem {
    /// A control character (`U+0000`–`U+001F`, `U+007F`–`U+009F`) at this 1-based
    /// character position.
    Control { at: usize, char: char },
    /// Begins with a character a spreadsheet reads as a formula.
    Formula { first: char },
}

impl std::fmt::Display for TextProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TextProblem::Control { at, char } => write!(
                f,
                "holds a control character ({} at character {at}): expected one line of printable text (no NUL, tab or line break)",
                describe(*char)
            ),
            TextProblem::Formula { first } => write!(
                f,
                "begins with '{first}', which a spreadsheet runs as a formula when the published tables are opened: expected text that does not begin with = + - or @ (rename it in the input)"
            ),
        }
    }
}

fn describe(c: char) -> String {
    let name = match c {
        '\0' => " NUL",
        '\t' => " tab",
        '\n' => " line feed",
        '\r' => " carriage return",
        _ => "",
    };
    format!("U+{:04X}{name}", c as u32)
}

/// Checks a code, a name or a level name (already trimmed).
pub fn check_label(text: &str) -> Result<(), TextProblem> {
    if let Some((i, c)) = text.chars().enumerate().find(|(_, c)| c.is_control()) {
        return Err(TextProblem::Control { at: i + 1, char: c });
    }
    match text.chars().next() {
        Some(first) if FORMULA_STARTS.contains(&first) => Err(TextProblem::Formula { first }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(check_label("US"), Ok(()));
        assert_eq!(check_label("Île-de-France"), Ok(()));
        assert_eq!(check_label("a-b"), Ok(()));
        assert_eq!(check_label(""), Ok(()));
        assert_eq!(
            check_label("=1+1"),
            Err(TextProblem::Formula { first: '=' })
        );
        assert_eq!(
            check_label("@SUM(A1)"),
            Err(TextProblem::Formula { first: '@' })
        );
        assert_eq!(check_label("-3"), Err(TextProblem::Formula { first: '-' }));
        assert_eq!(check_label("+3"), Err(TextProblem::Formula { first: '+' }));
        assert_eq!(
            check_label("a\0b"),
            Err(TextProblem::Control { at: 2, char: '\0' })
        );
        assert_eq!(
            check_label("a\nb"),
            Err(TextProblem::Control { at: 2, char: '\n' })
        );
        assert!(
            check_label("a\rb")
                .unwrap_err()
                .to_string()
                .contains("U+000D carriage return at character 2")
        );
    }
}
