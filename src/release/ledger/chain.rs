//! Reading the ledger: every line parsed fail-closed, the hash chain and the ids checked, a torn last line told apart.

use super::events::parse_event;
pub(crate) use super::quote::{cut, cut_long};
use super::spending::{KeySpend, Spending};
use super::*;

/// A value cut to a readable length for a message.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// One problem found in the ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub line: usize,
    pub message: String,
}

/// A line about the ledger itself, and where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventAt {
    /// Its line number.
    pub line: usize,
    pub event: LedgerEvent,
}

/// The ledger as read: every line, and the defects found.
#[derive(Clone, Debug, Default)]
pub struct LedgerRead {
    /// Every readable line about a draw, in order.
    pub lines: Vec<LedgerEntry>,
    /// Every readable line about the ledger itself (losses accepted, adoptions), in
    /// order.
    pub events: Vec<EventAt>,
    /// Lines that are wrong (unreadable, chain broken, ids that disagree): any of them
    /// stops every draw.
    pub problems: Vec<Problem>,
    /// The line number of a torn last line, if the file ends in one.
    pub torn_tail: Option<usize>,
    /// How many lines the file holds (readable or not).
    pub line_count: usize,
    /// The SHA-256 of each line's bytes (readable or not), in order: what the anchor
    /// compares.
    pub(crate) line_hashes: Vec<String>,
    /// The hash the next line chains to.
    pub(crate) next_prev: String,
    /// Whether the file is empty or ends with a line break.
    ends_with_newline: bool,
}

impl LedgerRead {
    /// One entry per draw: the latest line of each id, in the order the draws were
    /// first recorded.
    pub fn draws(&self) -> Vec<&LedgerEntry> {
        let mut out: Vec<&LedgerEntry> = Vec::with_capacity(self.lines.len());
        let mut at: HashMap<&str, usize> = HashMap::new();
        for e in &self.lines {
            match at.get(e.id.as_str()) {
                Some(&i) => out[i] = e,
                None => {
                    at.insert(&e.id, out.len());
                    out.push(e);
                }
            }
        }
        out
    }

    /// Whether a draw may be made on top of this ledger: nothing wrong, no torn tail.
    pub fn fail_closed(&self, path: &Path) -> Result<(), LedgerError> {
        if let Some(p) = self.problems.first() {
            return Err(LedgerError::Corrupt {
                path: path.to_path_buf(),
                line: p.line,
                problem: p.message.clone(),
            });
        }
        if let Some(line) = self.torn_tail {
            return Err(LedgerError::TornTail {
                path: path.to_path_buf(),
                line,
            });
        }
        Ok(())
    }

    /// The ε spent on a dataset: every draw whose line matches it by content, by
    /// directory or (older lines) by fingerprint, and every lost spending an accepted
    /// loss records that matches it the same way.
    pub fn spent(&self, identity: &DatasetIdentity) -> Spend {
        let mine: Vec<&LedgerEntry> = self
            .draws()
            .into_iter()
            .filter(|e| identity.matches(&e.dataset))
            .collect();
        let lost: Vec<&KeySpend> = self.lost().filter(|k| k.matches(identity)).collect();
        let rhos: Vec<Rho> = mine
            .iter()
            .map(|e| e.total.to_rho())
            .chain(lost.iter().filter_map(|k| k.rho_spent()))
            .collect();
        Spend {
            epsilon: Epsilon::sum(
                mine.iter()
                    .filter_map(|e| e.total.as_pure())
                    .chain(lost.iter().filter_map(|k| k.epsilon.as_ref())),
            ),
            rho: Rho::sum(rhos.iter()),
            draws: mine.len() + lost.iter().map(|k| k.draws).sum::<usize>(),
            zcdp_draws: mine
                .iter()
                .filter(|e| e.total.definition() == Definition::Zcdp)
                .count()
                + lost.iter().map(|k| k.zcdp_draws).sum::<usize>(),
            pending: Epsilon::sum(
                mine.iter()
                    .filter(|e| e.status == Status::Pending)
                    .filter_map(|e| e.total.as_pure()),
            ),
            lost: Epsilon::sum(lost.iter().filter_map(|k| k.epsilon.as_ref())),
            lost_draws: lost.iter().map(|k| k.draws).sum(),
        }
    }

    /// The spending accepted losses record as lost (and still spent).
    pub fn lost(&self) -> impl Iterator<Item = &KeySpend> {
        self.events.iter().flat_map(|e| e.event.lost())
    }

    /// Every dataset the ledger records spending on, as its lines record it: each
    /// draw's, then each lost spending's (once per directory).
    pub fn records(&self) -> Vec<DatasetRecord> {
        self.draws()
            .into_iter()
            .map(|e| e.dataset.clone())
            .chain(self.lost().flat_map(KeySpend::records))
            .collect()
    }

    /// The running spending per dataset key that the anchor records.
    pub fn spending(&self) -> Vec<KeySpend> {
        self.spending_by_key().into_keys()
    }

    /// [`LedgerRead::spending`], to add a line to.
    pub(crate) fn spending_by_key(&self) -> Spending {
        let mut spending = Spending::default();
        for e in &self.lines {
            spending.add_draw(e);
        }
        for k in self.lost() {
            spending.add(k.clone());
        }
        spending
    }
}

/// A line of the chain as it is appended: a draw's, or one about the ledger itself.
pub(crate) trait Link: Serialize {
    /// Sets `prev`.
    fn chain_to(&mut self, prev: String);
    /// Adds what the line spends (or records as lost) to the running spending.
    fn count(&self, spending: &mut Spending);
}

impl Link for LedgerEntry {
    fn chain_to(&mut self, prev: String) {
        self.prev = prev;
    }

    fn count(&self, spending: &mut Spending) {
        spending.add_draw(self);
    }
}

impl Link for LedgerEvent {
    fn chain_to(&mut self, prev: String) {
        self.set_prev(prev);
    }

    fn count(&self, spending: &mut Spending) {
        for k in self.lost() {
            spending.add(k.clone());
        }
    }
}

/// One line as read: a draw's, or one about the ledger itself.
pub(crate) enum Line {
    Draw(Box<LedgerEntry>),
    Event(LedgerEvent),
}

/// Parses the ledger's bytes. Never fails: problems are collected.
pub(crate) fn parse_ledger(bytes: &[u8]) -> LedgerRead {
    let mut read = LedgerRead {
        next_prev: GENESIS.to_string(),
        ends_with_newline: bytes.is_empty() || bytes.ends_with(b"\n"),
        ..LedgerRead::default()
    };
    let mut segments: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    if bytes.ends_with(b"\n") || bytes.is_empty() {
        segments.pop();
    }
    let last = segments.len();
    read.line_count = last;
    let mut chained = false;
    // id → (index of its first line, the latest status).
    let mut ids: HashMap<String, usize> = HashMap::new();
    for (i, raw) in segments.iter().enumerate() {
        let line = i + 1;
        let problem = |message: String| Problem { line, message };
        let parsed = parse_line(raw);
        read.line_hashes.push(sha256_hex(raw));
        let entry = match parsed {
            Ok(Line::Draw(e)) => *e,
            Ok(Line::Event(event)) => {
                if event.prev() != read.next_prev {
                    read.problems.push(problem(format!(
                        "the hash chain is broken: this line follows a line whose SHA-256 is {}, but records {} (a line before it was changed, removed or inserted)",
                        cut(&read.next_prev),
                        cut(event.prev())
                    )));
                }
                chained = true;
                read.next_prev = sha256_hex(raw);
                read.events.push(EventAt { line, event });
                continue;
            }
            Err(message) => {
                if line == last && !read.ends_with_newline && looks_torn(raw) {
                    read.torn_tail = Some(line);
                } else if line == last && !read.ends_with_newline {
                    read.problems.push(problem(format!(
                        "{message}; the last line has no line break but is not a line cut short (it holds more than one line's text, or text coco never writes), so it is not a torn line `coco ledger repair` could set aside"
                    )));
                } else {
                    read.problems.push(problem(message));
                }
                // The next line chains to this one as it is, readable or not.
                read.next_prev = sha256_hex(raw);
                continue;
            }
        };
        if entry.v >= 2 {
            if entry.prev != read.next_prev {
                read.problems.push(problem(format!(
                    "the hash chain is broken: this line follows a line whose SHA-256 is {}, but records {} (a line before it was changed, removed or inserted)",
                    cut(&read.next_prev),
                    cut(&entry.prev)
                )));
            }
            chained = true;
        } else if chained {
            read.problems.push(problem(
                "a line in the old format after chained lines (written by an older coco, or by hand)"
                    .into(),
            ));
        }
        read.next_prev = sha256_hex(raw);
        if let Some(&first) = ids.get(&entry.id) {
            let earlier: &LedgerEntry = &read.lines[first];
            let latest = read
                .lines
                .iter()
                .rev()
                .find(|e| e.id == entry.id)
                .expect("seen");
            if latest.status != Status::Pending {
                read.problems.push(problem(format!(
                    "draw {} was already decided ({}) and has another line",
                    entry.id,
                    latest.status.label()
                )));
            } else if earlier.total != entry.total
                || earlier.dataset.content != entry.dataset.content
                || earlier.dataset.fingerprint != entry.dataset.fingerprint
            {
                read.problems.push(problem(format!(
                    "draw {} has lines that disagree on its dataset or its loss (ε or ρ)",
                    entry.id
                )));
            }
        } else {
            ids.insert(entry.id.clone(), read.lines.len());
        }
        read.lines.push(entry);
    }
    read
}

/// Whether an unreadable last line without a line break is a line cut short (coco
/// stopped while appending it): its text is the beginning of a JSON value, cut inside a
/// character at worst. Lines joined into one, or any complete text that is not an
/// entry, are not.
pub(crate) fn looks_torn(raw: &[u8]) -> bool {
    let text = match std::str::from_utf8(raw) {
        Ok(t) => t,
        // Cut inside the last character.
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&raw[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return false,
    };
    match serde_json::from_str::<serde_json::Value>(text) {
        Err(e) => e.is_eof(),
        Ok(_) => false,
    }
}

/// One line: a draw's in the current format (with `v`) or the older one, or one about
/// the ledger itself (with `event`).
pub(crate) fn parse_line(raw: &[u8]) -> Result<Line, String> {
    let text = std::str::from_utf8(raw).map_err(|e| {
        format!(
            "not UTF-8 (invalid byte at column {}): expected one JSON object per line",
            e.valid_up_to() + 1
        )
    })?;
    if text.trim().is_empty() {
        return Err("an empty line: expected one JSON object per line".into());
    }
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        format!(
            "not JSON ({}): expected one JSON object per line",
            cut(&e.to_string())
        )
    })?;
    if value.get("event").is_some() {
        return parse_event(value).map(Line::Event);
    }
    let entry = match value.get("v") {
        Some(_) => serde_json::from_value::<LedgerEntry>(value)
            .map_err(|e| format!("not a ledger entry: {}", cut_long(&e.to_string())))?,
        None => serde_json::from_value::<LegacyEntry>(value)
            .map_err(|e| format!("not a ledger entry: {}", cut_long(&e.to_string())))?
            .convert()?,
    };
    if entry.v == 0 || entry.v > ZCDP_LEDGER_VERSION {
        return Err(format!(
            "format version {} is not known to this coco (expected 1 to {ZCDP_LEDGER_VERSION})",
            entry.v
        ));
    }
    if entry.id.is_empty()
        || entry.id.len() > 64
        || !entry.id.bytes().all(|b| b.is_ascii_alphanumeric())
    {
        return Err(format!("id {:?} is not a draw id", cut(&entry.id)));
    }
    Ok(Line::Draw(Box::new(entry)))
}
