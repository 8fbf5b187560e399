//! Keys to actions: the defaults in `assets/keymap.toml` (embedded), overridable by a
//! `keymap.toml` in coco's configuration directory (`~/.config/coco/` on Linux,
//! `$COCO_HOME` when set; one beside the ledger, where older versions read it, still
//! works).
//!
//! The file has one table per [`Context`]; in each, an action name maps to a list of
//! keys (`quit = ["q", "ctrl-c"]`). An override lists only what it changes: a binding
//! replaces that action's keys, and a key it binds is taken from any other action of the
//! same section. An override that cannot be read leaves the defaults in force, and the
//! app shows why (file, line and what was expected).

use std::fmt;
use std::path::{Path, PathBuf};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use thiserror::Error;
use toml_edit::Document;

use super::action::{Action, Context};

/// The default keymap, as shipped.
pub const DEFAULT_KEYMAP: &str = include_str!("../../assets/keymap.toml");

/// The override file's name in coco's home.
pub const KEYMAP_FILE: &str = "keymap.toml";

/// One key with its modifiers, normalised so that a typed `+` matches `"+"` whatever
/// the terminal reports about Shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
}

impl Key {
    pub fn new(code: KeyCode, modifiers: KeyModifiers) -> Key {
        let mut modifiers =
            modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        let code = match code {
            KeyCode::Tab if modifiers.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
            other => other,
        };
        // The character already says whether Shift was held; BackTab is Shift-Tab.
        if matches!(code, KeyCode::Char(_) | KeyCode::BackTab) {
            modifiers.remove(KeyModifiers::SHIFT);
        }
        Key { code, modifiers }
    }

    pub fn from_event(event: &KeyEvent) -> Key {
        Key::new(event.code, event.modifiers)
    }

    /// Parses `q`, `?`, `enter`, `ctrl-c`, `shift-tab`, `f5`, …
    pub fn parse(text: &str) -> Result<Key, String> {
        let mut rest = text;
        let mut modifiers = KeyModifiers::NONE;
        loop {
            let lower = rest.to_ascii_lowercase();
            let prefix = [
                ("ctrl-", KeyModifiers::CONTROL),
                ("alt-", KeyModifiers::ALT),
                ("shift-", KeyModifiers::SHIFT),
            ]
            .into_iter()
            .find(|(p, _)| lower.starts_with(p) && rest.len() > p.len());
            match prefix {
                Some((p, m)) => {
                    modifiers |= m;
                    rest = &rest[p.len()..];
                }
                None => break,
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => {
                if modifiers.contains(KeyModifiers::SHIFT) && c.is_ascii_alphabetic() {
                    KeyCode::Char(c.to_ascii_uppercase())
                } else {
                    KeyCode::Char(c)
                }
            }
            (None, _) => return Err("an empty key".to_string()),
            _ => named_key(&rest.to_ascii_lowercase()).ok_or_else(|| {
                format!(
                    "unknown key {text:?}: expected a character or one of enter, esc, tab, \
                     backtab, space, backspace, delete, insert, up, down, left, right, home, \
                     end, pageup, pagedown, f1 to f12, optionally after ctrl-, alt- or shift-"
                )
            })?,
        };
        Ok(Key::new(code, modifiers))
    }
}

fn named_key(name: &str) -> Option<KeyCode> {
    Some(match name {
        "enter" | "return" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "tab" => KeyCode::Tab,
        "backtab" => KeyCode::BackTab,
        "space" => KeyCode::Char(' '),
        "backspace" => KeyCode::Backspace,
        "delete" | "del" => KeyCode::Delete,
        "insert" => KeyCode::Insert,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" => KeyCode::PageUp,
        "pagedown" => KeyCode::PageDown,
        f if f.starts_with('f') => {
            let n: u8 = f[1..].parse().ok()?;
            if (1..=12).contains(&n) {
                KeyCode::F(n)
            } else {
                return None;
            }
        }
        _ => return None,
    })
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            f.write_str("ctrl-")?;
        }
        if self.modifiers.contains(KeyModifiers::ALT) {
            f.write_str("alt-")?;
        }
        if self.modifiers.contains(KeyModifiers::SHIFT) {
            f.write_str("shift-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("enter"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::BackTab => f.write_str("shift-tab"),
            KeyCode::Backspace => f.write_str("backspace"),
            KeyCode::Delete => f.write_str("delete"),
            KeyCode::Insert => f.write_str("insert"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::Home => f.write_str("home"),
            KeyCode::End => f.write_str("end"),
            KeyCode::PageUp => f.write_str("pageup"),
            KeyCode::PageDown => f.write_str("pagedown"),
            KeyCode::F(n) => write!(f, "f{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// A keymap file that cannot be used.
#[derive(Debug, Error)]
#[error("{}{}: {message}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct KeymapError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

/// One action's keys in one section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    pub action: Action,
    pub keys: Vec<Key>,
}

/// Every section's bindings, in the order of the default file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keymap {
    sections: Vec<(Context, Vec<Binding>)>,
}

impl Default for Keymap {
    fn default() -> Self {
        let sections = parse(DEFAULT_KEYMAP, Path::new("assets/keymap.toml"))
            .expect("the shipped keymap is valid (tested)");
        Keymap {
            sections: sections
                .into_iter()
                .map(|(c, b)| (c, b.into_iter().map(|(b, _)| b).collect()))
                .collect(),
        }
    }
}

impl Keymap {
    /// The defaults with the override in the first of `dirs` that holds one (the
    /// configuration directory, then where older versions kept it). A bad override
    /// gives the defaults and the reason, for the app to show.
    pub fn load(dirs: &[&Path]) -> (Keymap, Option<String>) {
        let defaults = Keymap::default();
        let Some(path) = dirs
            .iter()
            .map(|d| d.join(KEYMAP_FILE))
            .find(|p| p.exists())
        else {
            return (defaults, None);
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (defaults, None),
            Err(e) => {
                return (
                    defaults,
                    Some(format!(
                        "{}: cannot read: {e}; using the default keys",
                        path.display()
                    )),
                );
            }
        };
        match defaults.with_override(&text, &path) {
            Ok(k) => (k, None),
            Err(e) => (defaults, Some(format!("{e}; using the default keys"))),
        }
    }

    /// These bindings changed by an override file's text.
    pub fn with_override(&self, text: &str, file: &Path) -> Result<Keymap, KeymapError> {
        let mut out = self.clone();
        for (context, bindings) in parse(text, file)? {
            let section = &mut out
                .sections
                .iter_mut()
                .find(|(c, _)| *c == context)
                .expect("every context has a default section")
                .1;
            for (binding, line) in bindings {
                if !section.iter().any(|b| b.action == binding.action) {
                    let expected: Vec<&str> = section.iter().map(|b| b.action.name()).collect();
                    return Err(KeymapError {
                        file: file.to_path_buf(),
                        line: Some(line),
                        message: format!(
                            "action {:?} has no meaning in [{}]: expected one of {}",
                            binding.action.name(),
                            context.name(),
                            expected.join(", ")
                        ),
                    });
                }
                for other in section.iter_mut() {
                    other.keys.retain(|k| !binding.keys.contains(k));
                }
                let slot = section
                    .iter_mut()
                    .find(|b| b.action == binding.action)
                    .expect("checked above");
                slot.keys = binding.keys;
            }
        }
        Ok(out)
    }

    /// The action bound to `key` in `context`, if any.
    pub fn action(&self, context: Context, key: Key) -> Option<Action> {
        self.bindings(context)
            .iter()
            .find(|b| b.keys.contains(&key))
            .map(|b| b.action)
    }

    /// The bindings of one section, in file order.
    pub fn bindings(&self, context: Context) -> &[Binding] {
        self.sections
            .iter()
            .find(|(c, _)| *c == context)
            .map(|(_, b)| b.as_slice())
            .unwrap_or(&[])
    }

    /// The first key of an action in a section (for the hint bar).
    pub fn first_key(&self, context: Context, action: Action) -> Option<Key> {
        self.bindings(context)
            .iter()
            .find(|b| b.action == action)
            .and_then(|b| b.keys.first().copied())
    }

    /// The first key of an action as text for a sentence ("press r"), or "(unbound)".
    pub fn key(&self, context: Context, action: Action) -> String {
        self.first_key(context, action)
            .map_or_else(|| "(unbound)".to_string(), |k| k.to_string())
    }

    /// Every key of an action in a section, joined for display (`q/ctrl-c`).
    pub fn keys_text(&self, context: Context, action: Action) -> String {
        self.bindings(context)
            .iter()
            .find(|b| b.action == action)
            .map(|b| {
                b.keys
                    .iter()
                    .map(Key::to_string)
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default()
    }
}

type Parsed = Vec<(Context, Vec<(Binding, usize)>)>;

fn parse(text: &str, file: &Path) -> Result<Parsed, KeymapError> {
    let err = |offset: Option<usize>, message: String| KeymapError {
        file: file.to_path_buf(),
        line: offset.map(|o| line_of(text, o)),
        message,
    };
    let doc = Document::parse(text).map_err(|e| {
        err(
            e.span().map(|s| s.start),
            format!("not valid TOML: {}", e.message()),
        )
    })?;
    let mut out: Parsed = Vec::new();
    for (name, item) in doc.as_table().iter() {
        let key_at = doc
            .as_table()
            .key(name)
            .and_then(|k| k.span())
            .map(|s| s.start);
        let Some(context) = Context::from_name(name) else {
            let expected: Vec<&str> = Context::ALL.iter().map(|c| c.name()).collect();
            return Err(err(
                key_at,
                format!(
                    "unknown section [{name}]: expected one of {}",
                    expected.join(", ")
                ),
            ));
        };
        let Some(table) = item.as_table() else {
            return Err(err(
                key_at,
                format!(
                    "{name} is not a section: expected [{name}] with action = [\"key\", …] lines"
                ),
            ));
        };
        let mut bindings = Vec::new();
        for (action_name, value) in table.iter() {
            let at = table
                .key(action_name)
                .and_then(|k| k.span())
                .map(|s| s.start);
            let Some(action) = Action::from_name(action_name) else {
                return Err(err(
                    at,
                    format!("unknown action {action_name:?} in [{name}]"),
                ));
            };
            let strings: Vec<&str> = match value.as_value() {
                Some(v) if v.is_str() => vec![v.as_str().expect("a string")],
                Some(v) if v.is_array() => {
                    let array = v.as_array().expect("an array");
                    let mut keys = Vec::with_capacity(array.len());
                    for element in array.iter() {
                        match element.as_str() {
                            Some(s) => keys.push(s),
                            None => {
                                return Err(err(
                                    at,
                                    format!(
                                        "{action_name} = {}: expected a list of key names like [\"q\", \"ctrl-c\"]",
                                        value.to_string().trim()
                                    ),
                                ));
                            }
                        }
                    }
                    keys
                }
                _ => {
                    return Err(err(
                        at,
                        format!(
                            "{action_name} = {}: expected a list of key names like [\"q\", \"ctrl-c\"]",
                            value.to_string().trim()
                        ),
                    ));
                }
            };
            let keys = strings
                .iter()
                .map(|s| Key::parse(s).map_err(|m| err(at, format!("{action_name}: {m}"))))
                .collect::<Result<Vec<_>, _>>()?;
            bindings.push((Binding { action, keys }, at.map_or(0, |o| line_of(text, o))));
        }
        out.push((context, bindings));
    }
    Ok(out)
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> Key {
        Key::parse(s).unwrap()
    }

    #[test]
    fn keys_parse_and_normalise() {
        assert_eq!(key("q"), Key::new(KeyCode::Char('q'), KeyModifiers::NONE));
        assert_eq!(
            key("ctrl-c"),
            Key::new(KeyCode::Char('c'), KeyModifiers::CONTROL)
        );
        assert_eq!(
            key("shift-tab"),
            Key::new(KeyCode::BackTab, KeyModifiers::NONE)
        );
        assert_eq!(key("backtab"), key("shift-tab"));
        assert_eq!(key("shift-k"), key("K"));
        assert_eq!(key("-"), Key::new(KeyCode::Char('-'), KeyModifiers::NONE));
        assert_eq!(
            key("ctrl--"),
            Key::new(KeyCode::Char('-'), KeyModifiers::CONTROL)
        );
        assert_eq!(key("F5"), Key::new(KeyCode::F(5), KeyModifiers::NONE));
        assert_eq!(
            key("space"),
            Key::new(KeyCode::Char(' '), KeyModifiers::NONE)
        );
        // A terminal reports '+' with Shift held; the binding "+" still matches.
        assert_eq!(Key::new(KeyCode::Char('+'), KeyModifiers::SHIFT), key("+"));
        assert!(Key::parse("f13").is_err());
        assert!(Key::parse("hyper-x").unwrap_err().contains("unknown key"));
        assert!(Key::parse("").is_err());
        assert_eq!(key("ctrl-c").to_string(), "ctrl-c");
        assert_eq!(key("backtab").to_string(), "shift-tab");
    }

    #[test]
    fn the_default_keymap_binds_every_context_without_clashes() {
        let k = Keymap::default();
        for &c in Context::ALL {
            let bindings = k.bindings(c);
            assert!(!bindings.is_empty(), "[{}] is empty", c.name());
            let mut seen = Vec::new();
            for b in bindings {
                assert!(
                    !b.keys.is_empty(),
                    "{} in [{}] has no key",
                    b.action,
                    c.name()
                );
                for key in &b.keys {
                    assert!(!seen.contains(key), "{key} twice in [{}]", c.name());
                    seen.push(*key);
                }
            }
        }
        assert_eq!(k.action(Context::Global, key("q")), Some(Action::Quit));
        assert_eq!(
            k.action(Context::Budget, key("K")),
            Some(Action::EstimateMaxSize)
        );
        assert_eq!(
            k.action(Context::Budget, key("k")),
            Some(Action::SetMaxSize)
        );
        assert_eq!(k.keys_text(Context::Global, Action::Quit), "q");
        // Ctrl-C interrupts (exit status 130) everywhere but in a text field, which it
        // cancels.
        assert_eq!(
            k.action(Context::Global, key("ctrl-c")),
            Some(Action::Interrupt)
        );
        assert_eq!(
            k.action(Context::Input, key("ctrl-c")),
            Some(Action::Cancel)
        );
        assert_eq!(
            k.action(Context::Input, key("ctrl-w")),
            Some(Action::DeleteWord)
        );
    }

    #[test]
    fn an_override_rebinds_and_takes_keys_from_other_actions() {
        let k = Keymap::default()
            .with_override(
                "[hierarchy]\nup = [\"up\", \"k\"]\nsearch = \"n\"\n",
                Path::new("keymap.toml"),
            )
            .unwrap();
        assert_eq!(k.action(Context::Hierarchy, key("k")), Some(Action::Up));
        assert_eq!(k.action(Context::Hierarchy, key("n")), Some(Action::Search));
        // "n" was next-match's only key: next-match is now unbound, "/" no longer searches.
        assert_eq!(k.action(Context::Hierarchy, key("/")), None);
        assert_eq!(k.first_key(Context::Hierarchy, Action::NextMatch), None);
        // Other sections are untouched.
        assert_eq!(k.action(Context::Preview, key("/")), Some(Action::Search));
    }

    #[test]
    fn bad_overrides_say_where_and_what() {
        let d = Keymap::default();
        let e = |text: &str| {
            d.with_override(text, Path::new("/home/x/keymap.toml"))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            e("[global]\nquit = [\"q\"]\n\n[budgett]\n"),
            "/home/x/keymap.toml:4: unknown section [budgett]: expected one of global, dataset, \
             hierarchy, budget, preview, tradeoff, release, help, input, picker, confirm"
        );
        assert_eq!(
            e("[global]\nquitt = [\"q\"]\n"),
            "/home/x/keymap.toml:2: unknown action \"quitt\" in [global]"
        );
        assert!(e("[global]\ndraw = [\"d\"]\n").starts_with(
            "/home/x/keymap.toml:2: action \"draw\" has no meaning in [global]: expected one of quit, help,"
        ));
        assert!(
            e("[global]\nquit = [\"hyper-q\"]\n")
                .starts_with("/home/x/keymap.toml:2: quit: unknown key \"hyper-q\"")
        );
        assert_eq!(
            e("[global]\nquit = 3\n"),
            "/home/x/keymap.toml:2: quit = 3: expected a list of key names like [\"q\", \"ctrl-c\"]"
        );
        assert!(e("[global\n").starts_with("/home/x/keymap.toml:1: not valid TOML"));
    }

    #[test]
    fn load_reads_the_home_override_and_falls_back_with_a_message() {
        let home = tempfile::tempdir().unwrap();
        let (k, warning) = Keymap::load(&[home.path()]);
        assert_eq!(k, Keymap::default());
        assert_eq!(warning, None);
        std::fs::write(home.path().join(KEYMAP_FILE), "[global]\nquit = [\"x\"]\n").unwrap();
        let (k, warning) = Keymap::load(&[home.path()]);
        assert_eq!(k.action(Context::Global, key("x")), Some(Action::Quit));
        assert_eq!(warning, None);
        std::fs::write(home.path().join(KEYMAP_FILE), "[global]\nquit = [\"x\"\n").unwrap();
        let (k, warning) = Keymap::load(&[home.path()]);
        assert_eq!(k, Keymap::default());
        let warning = warning.unwrap();
        assert!(warning.contains("keymap.toml:"), "{warning}");
        assert!(warning.ends_with("; using the default keys"), "{warning}");
    }

    #[test]
    fn the_configuration_directory_comes_before_the_old_place() {
        let config = tempfile::tempdir().unwrap();
        let old = tempfile::tempdir().unwrap();
        std::fs::write(old.path().join(KEYMAP_FILE), "[global]\nquit = [\"x\"]\n").unwrap();
        let (k, _) = Keymap::load(&[config.path(), old.path()]);
        assert_eq!(k.action(Context::Global, key("x")), Some(Action::Quit));
        std::fs::write(
            config.path().join(KEYMAP_FILE),
            "[global]\nquit = [\"z\"]\n",
        )
        .unwrap();
        let (k, _) = Keymap::load(&[config.path(), old.path()]);
        assert_eq!(k.action(Context::Global, key("z")), Some(Action::Quit));
        assert_eq!(k.action(Context::Global, key("x")), None);
    }
}
