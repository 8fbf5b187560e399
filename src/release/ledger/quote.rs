//! What a ledger line holds, quoted in a message: cut short, so that a line of
//! megabytes never becomes a message of megabytes.

/// At most 60 characters of `s`, then `…`: a field (an id, a time, a digest).
pub(crate) fn cut(s: &str) -> String {
    cut_to(s, 60)
}

/// At most 200 characters of `s`, then `…`: a reader's whole complaint.
pub(crate) fn cut_long(s: &str) -> String {
    cut_to(s, 200)
}

fn cut_to(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
