//! What a code, a name or a level name may hold: they are published in `counts.csv` and
//! the wide tables, which the public opens in spreadsheets.
//!
//! - No control characters (NUL, tab, line breaks, …): a code or name is one line of
//!   printable text, and a line break inside one would break every line-based reader.
//! - No leading `=`, `+`, `-` or `@`: a spreadsheet runs such a cell as a formula when
//!   the published CSV is opened (CSV/formula injection). coco rejects such text at load
//!   rather than altering it on output, so what is published is exactly what was loaded.
//!   The same after a `;` or a `,` (spreadsheets set to a locale whose list separator
//!   is `;` split `x;=1+1` into two cells, the second a formula) and after any spaces,
//!   Unicode ones included (a no-break space before `=` is not trimmed by every reader).
//! - No Unicode format characters (general category Cf: right-to-left override,
//!   zero-width space, soft hyphen, …): they make a published name read as another, or
//!   hide what follows.
//! - No other invisible characters ([`is_invisible`]): Unicode's default-ignorable code
//!   points (the `Default_Ignorable_Code_Point` property of `DerivedCoreProperties.txt`,
//!   Unicode 16.0.0: characters a renderer shows as nothing, such as variation selectors,
//!   the combining grapheme joiner and the Hangul fillers) and letters and symbols that
//!   are drawn blank ([`BLANK_FILLERS`], U+2800 BRAILLE PATTERN BLANK). `"Ostwick\u{3164}"`
//!   beside `"Ostwick"` would publish two rows that read the same.
//! - At most [`MAX_FIELD_BYTES`] bytes in any field of any input file (checked by the
//!   CSV reader), so one runaway field cannot hold the whole file.

/// The longest field accepted in any input file, in bytes.
pub const MAX_FIELD_BYTES: usize = 1024;

/// The characters a spreadsheet reads as the start of a formula.
pub const FORMULA_STARTS: [char; 4] = ['=', '+', '-', '@'];

/// What a formula start follows where a spreadsheet may begin a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// Spaces at the start of the text (a no-break space, …).
    Spaces,
    /// A `;` (the list separator of many locales) and perhaps spaces.
    Semicolon,
    /// A `,` and perhaps spaces.
    Comma,
}

impl std::fmt::Display for After {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            After::Spaces => "spaces at the start",
            After::Semicolon => "a ';'",
            After::Comma => "a ','",
        })
    }
}

/// Why a text cannot be a code, a name or a level name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextProblem {
    /// A control character (`U+0000`–`U+001F`, `U+007F`–`U+009F`) at this 1-based
    /// character position.
    Control { at: usize, char: char },
    /// Begins with a character a spreadsheet reads as a formula.
    Formula { first: char },
    /// A formula start after spaces or a list separator, at this 1-based character
    /// position.
    FormulaAfter {
        at: usize,
        first: char,
        after: After,
    },
    /// A Unicode format character (category Cf) at this 1-based character position.
    Format { at: usize, char: char },
    /// Another invisible character ([`is_invisible`]: default-ignorable, or drawn blank)
    /// at this 1-based character position.
    Invisible { at: usize, char: char },
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
            TextProblem::FormulaAfter { at, first, after } => write!(
                f,
                "holds '{first}' at character {at} after {after}, which a spreadsheet can run as a formula when the published tables are opened (in a locale whose list separator is ';', or after spaces it does not trim): expected no = + - or @ at the start of the text or after a ';' or ',' and spaces (rename it in the input)"
            ),
            TextProblem::Format { at, char } => write!(
                f,
                "holds an invisible Unicode format character (U+{:04X}{} at character {at}), which can make a published name read as another: expected visible text only (rename it in the input)",
                *char as u32,
                format_name(*char)
            ),
            TextProblem::Invisible { at, char } => write!(
                f,
                "holds an invisible character (U+{:04X}{} at character {at}: {}), which can make a published name read as another: expected visible text only (rename it in the input)",
                *char as u32,
                invisible_name(*char),
                if BLANK_FILLERS.contains(char) {
                    "a character drawn blank"
                } else {
                    "a default-ignorable code point, which renderers show as nothing"
                }
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

/// `text` with every control character (C0, DEL, C1: a terminal escape begins with
/// one), every Unicode format character (right-to-left override, zero-width space, …)
/// and every other invisible character ([`is_invisible`]) written as `\u{…}`, for
/// printing text coco did not write (directory names, ledger fields) on a terminal.
/// Borrows when there is nothing to escape.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| c.is_control() || is_format(c) || is_invisible(c);
    if !text.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether `c` is a Unicode format character (general category Cf, Unicode 15.1).
pub fn is_format(c: char) -> bool {
    matches!(c as u32,
        0x00AD
        | 0x0600..=0x0605
        | 0x061C
        | 0x06DD
        | 0x070F
        | 0x0890..=0x0891
        | 0x08E2
        | 0x180E
        | 0x200B..=0x200F
        | 0x202A..=0x202E
        | 0x2060..=0x2064
        | 0x2066..=0x206F
        | 0xFEFF
        | 0xFFF9..=0xFFFB
        | 0x110BD
        | 0x110CD
        | 0x13430..=0x1343F
        | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A
        | 0xE0001
        | 0xE0020..=0xE007F)
}

/// Characters that are letters or symbols, not format characters, yet are drawn as
/// blank space: the four Hangul fillers (default-ignorable too, listed here because
/// they are the usual way to hide a difference), U+2800 BRAILLE PATTERN BLANK
/// (a Braille cell with no dot, category So) and U+1D159 MUSICAL SYMBOL NULL NOTEHEAD.
pub const BLANK_FILLERS: [char; 6] = [
    '\u{115F}',
    '\u{1160}',
    '\u{2800}',
    '\u{3164}',
    '\u{FFA0}',
    '\u{1D159}',
];

/// Whether `c` is a default-ignorable code point: the `Default_Ignorable_Code_Point`
/// property of Unicode 16.0.0's `DerivedCoreProperties.txt` (which the standard
/// recommends rendering as nothing when it is not supported). The ranges are the file's,
/// reserved code points included (they are ignorable by definition, so a later version
/// that assigns them keeps them invisible); a test compares them with the property's
/// ranges as the Unicode Character Database gives them
/// (`tests/fixtures/unicode/default-ignorable-16.0.0.txt`).
pub fn is_default_ignorable(c: char) -> bool {
    matches!(c as u32,
        0x00AD
        | 0x034F
        | 0x061C
        | 0x115F..=0x1160
        | 0x17B4..=0x17B5
        | 0x180B..=0x180F
        | 0x200B..=0x200F
        | 0x202A..=0x202E
        | 0x2060..=0x206F
        | 0x3164
        | 0xFE00..=0xFE0F
        | 0xFEFF
        | 0xFFA0
        | 0xFFF0..=0xFFF8
        | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A
        | 0xE0000..=0xE0FFF)
}

/// Whether `c` is invisible in a published name: default-ignorable
/// ([`is_default_ignorable`]) or drawn blank ([`BLANK_FILLERS`]).
pub fn is_invisible(c: char) -> bool {
    is_default_ignorable(c) || BLANK_FILLERS.contains(&c)
}

fn invisible_name(c: char) -> String {
    let name = match c {
        '\u{034F}' => "COMBINING GRAPHEME JOINER",
        '\u{115F}' => "HANGUL CHOSEONG FILLER",
        '\u{1160}' => "HANGUL JUNGSEONG FILLER",
        '\u{17B4}' => "KHMER VOWEL INHERENT AQ",
        '\u{17B5}' => "KHMER VOWEL INHERENT AA",
        '\u{2800}' => "BRAILLE PATTERN BLANK",
        '\u{3164}' => "HANGUL FILLER",
        '\u{FFA0}' => "HALFWIDTH HANGUL FILLER",
        '\u{1D159}' => "MUSICAL SYMBOL NULL NOTEHEAD",
        '\u{FE00}'..='\u{FE0F}' => {
            return format!(" VARIATION SELECTOR-{}", c as u32 - 0xFE00 + 1);
        }
        '\u{E0100}'..='\u{E01EF}' => {
            return format!(" VARIATION SELECTOR-{}", c as u32 - 0xE0100 + 17);
        }
        _ => return String::new(),
    };
    format!(" {name}")
}

fn format_name(c: char) -> &'static str {
    match c {
        '\u{00AD}' => " soft hyphen",
        '\u{200B}' => " zero-width space",
        '\u{200C}' => " zero-width non-joiner",
        '\u{200D}' => " zero-width joiner",
        '\u{200E}' => " left-to-right mark",
        '\u{200F}' => " right-to-left mark",
        '\u{202A}' => " left-to-right embedding",
        '\u{202B}' => " right-to-left embedding",
        '\u{202C}' => " pop directional formatting",
        '\u{202D}' => " left-to-right override",
        '\u{202E}' => " right-to-left override",
        '\u{2060}' => " word joiner",
        '\u{2066}' => " left-to-right isolate",
        '\u{2067}' => " right-to-left isolate",
        '\u{2068}' => " first strong isolate",
        '\u{2069}' => " pop directional isolate",
        '\u{FEFF}' => " zero-width no-break space",
        _ => "",
    }
}

/// Checks a code, a name or a level name (already trimmed).
pub fn check_label(text: &str) -> Result<(), TextProblem> {
    if let Some((i, c)) = text.chars().enumerate().find(|(_, c)| c.is_control()) {
        return Err(TextProblem::Control { at: i + 1, char: c });
    }
    if let Some((i, c)) = text.chars().enumerate().find(|&(_, c)| is_format(c)) {
        return Err(TextProblem::Format { at: i + 1, char: c });
    }
    if let Some((i, c)) = text.chars().enumerate().find(|&(_, c)| is_invisible(c)) {
        return Err(TextProblem::Invisible { at: i + 1, char: c });
    }
    if let Some(first) = text.chars().next()
        && FORMULA_STARTS.contains(&first)
    {
        return Err(TextProblem::Formula { first });
    }
    // A formula start where a cell may begin: after spaces at the start, or after a
    // list separator and spaces.
    let mut after = Some(After::Spaces);
    for (i, c) in text.chars().enumerate() {
        match c {
            ';' => after = Some(After::Semicolon),
            ',' => after = Some(After::Comma),
            c if c.is_whitespace() => {}
            c if FORMULA_STARTS.contains(&c) => {
                if let Some(after) = after {
                    return Err(TextProblem::FormulaAfter {
                        at: i + 1,
                        first: c,
                        after,
                    });
                }
            }
            _ => after = None,
        }
    }
    Ok(())
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

    /// Issue 23: formulas after a list separator or Unicode spaces, and invisible
    /// format characters, are refused; ordinary punctuation is not.
    #[test]
    fn formulas_in_other_locales_and_format_characters() {
        assert_eq!(
            check_label("x;=1+1;"),
            Err(TextProblem::FormulaAfter {
                at: 3,
                first: '=',
                after: After::Semicolon
            })
        );
        assert!(matches!(
            check_label("a, -3"),
            Err(TextProblem::FormulaAfter {
                at: 4,
                first: '-',
                ..
            })
        ));
        assert!(matches!(
            check_label("\u{a0}=1+1"),
            Err(TextProblem::FormulaAfter {
                at: 2,
                first: '=',
                ..
            })
        ));
        assert!(matches!(
            check_label("\u{2003}@x"),
            Err(TextProblem::FormulaAfter { at: 2, .. })
        ));
        assert_eq!(
            check_label("abc\u{202e}fed"),
            Err(TextProblem::Format {
                at: 4,
                char: '\u{202e}'
            })
        );
        assert!(
            check_label("a\u{200b}b")
                .unwrap_err()
                .to_string()
                .contains("U+200B zero-width space at character 2")
        );
        for ok in [
            "Saint-Denis",
            "a;b",
            "1,5",
            "x; y",
            "Île-de-France",
            "a - b",
            "a, b",
        ] {
            assert_eq!(check_label(ok), Ok(()), "{ok}");
        }
        assert_eq!(escape_controls("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        assert_eq!(escape_controls("plain"), "plain");
        assert_eq!(escape_controls("x\u{202e}"), "x\\u{202e}");
    }

    /// Issue 32: invisible characters that are not format characters are refused too,
    /// each named with its position.
    #[test]
    fn invisible_characters_are_refused() {
        for (c, name) in [
            ('\u{3164}', "U+3164 HANGUL FILLER"),
            ('\u{115F}', "U+115F HANGUL CHOSEONG FILLER"),
            ('\u{FE0F}', "U+FE0F VARIATION SELECTOR-16"),
            ('\u{034F}', "U+034F COMBINING GRAPHEME JOINER"),
            ('\u{17B4}', "U+17B4 KHMER VOWEL INHERENT AQ"),
            ('\u{2800}', "U+2800 BRAILLE PATTERN BLANK"),
        ] {
            let text = format!("Ostwick{c}");
            let problem = check_label(&text).unwrap_err();
            assert_eq!(problem, TextProblem::Invisible { at: 8, char: c });
            let message = problem.to_string();
            assert!(
                message.contains(&format!("{name} at character 8")),
                "{message}"
            );
            assert_eq!(
                escape_controls(&text),
                format!("Ostwick\\u{{{:x}}}", c as u32)
            );
        }
        // Visible text with marks and other scripts passes.
        for ok in ["Ho\u{0302}tel", "\u{d55c}\u{ad6d}", "\u{2801}"] {
            assert_eq!(check_label(ok), Ok(()), "{ok}");
        }
    }

    /// The table of default-ignorable code points is Unicode's: compared, code point by
    /// code point, with the property's ranges in the Unicode Character Database's own
    /// format (the fixture says where they come from).
    #[test]
    fn default_ignorables_are_unicodes() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/unicode/default-ignorable-16.0.0.txt");
        let text = std::fs::read_to_string(&path).unwrap();
        let mut listed = vec![false; 0x11_0000];
        for line in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        {
            let (range, property) = line.split_once(';').unwrap();
            assert_eq!(property.trim(), "Default_Ignorable_Code_Point", "{line}");
            let hex = |t: &str| u32::from_str_radix(t.trim(), 16).unwrap();
            let (lo, hi) = match range.split_once("..") {
                Some((a, b)) => (hex(a), hex(b)),
                None => (hex(range), hex(range)),
            };
            for cp in lo..=hi {
                listed[cp as usize] = true;
            }
        }
        assert!(
            listed.iter().filter(|&&x| x).count() > 4000,
            "the file lists the planes' tags"
        );
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            assert_eq!(
                is_default_ignorable(c),
                listed[c as usize],
                "U+{:04X}",
                c as u32
            );
        }
    }
}
