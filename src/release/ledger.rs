//! The privacy-loss ledger: one JSON line per release drawn, append-only.
//!
//! It lives in coco's home: `$COCO_HOME` when set, else the user's data directory
//! (`directories`), e.g. `~/.local/share/coco/ledger.jsonl` on Linux. The same home holds
//! `config.toml`, where an operator may cap the total ε spent on a dataset:
//!
//! ```toml
//! default_cap = 4            # optional: applies to every dataset without its own cap
//! [caps]
//! "/data/census2030" = 2     # a dataset directory …
//! "5be0…c1" = "1/2"          # … or a dataset fingerprint (see `coco ledger`)
//! ```
//!
//! Appends hold an exclusive lock on `ledger.lock` for the whole release (cap check,
//! draw, write, append), write each line with one `write` on a file opened for appending,
//! and `fsync` it, so two processes never interleave, never both slip under a cap, and a
//! line that was reported written survives a crash. A reader skips (and reports) a torn
//! last line rather than failing.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use thiserror::Error;
use toml_edit::Document;

use crate::data::Dataset;
use crate::privacy::Epsilon;

pub const LEDGER_FILE: &str = "ledger.jsonl";
pub const CONFIG_FILE: &str = "config.toml";
const LOCK_FILE: &str = "ledger.lock";

#[derive(Debug, Error)]
pub enum LedgerError {
    #[error(
        "cannot find a home directory for coco's ledger; set COCO_HOME to a writable directory"
    )]
    NoHome,
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Config {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error(
        "the privacy budget cap for this dataset would be exceeded: {spent} already spent in {releases} release(s) + {requested} for this one > cap {cap} (set in {config}); nothing was drawn"
    )]
    CapExceeded {
        spent: String,
        releases: usize,
        requested: String,
        cap: String,
        config: PathBuf,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LedgerError + '_ {
    move |source| LedgerError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One level of a ledger entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerLevel {
    pub name: String,
    pub epsilon: String,
    pub method: String,
}

/// One release drawn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerEntry {
    pub id: String,
    /// UTC, RFC 3339.
    pub time: String,
    /// SHA-256 over the dataset's input files (see `Dataset::fingerprint`).
    pub dataset: String,
    pub dataset_dir: String,
    pub levels: Vec<LedgerLevel>,
    /// The budget spent on estimating `K`, if it was estimated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_size_epsilon: Option<String>,
    /// The whole draw's ε (exact text).
    pub total_epsilon: String,
    /// Where it was written (or was to be written).
    pub output: Option<String>,
    /// Whether a verified release was written there.
    pub written: bool,
    /// How the noise was seeded: `os` or `seeded`.
    pub randomness: String,
    /// What drew it: `release` (command line) or `tui`.
    pub tool: String,
    /// Why it was not written, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// A draw recorded before it was shown (TUI), not yet decided. A later line with the
    /// same id records the decision; alone, it means coco stopped before one was made.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
}

/// What `coco ledger` reports for one dataset.
#[derive(Clone, Debug, Serialize)]
pub struct DatasetSpend {
    pub dataset: String,
    pub dataset_dir: String,
    pub releases: usize,
    pub written: usize,
    pub spent: String,
    pub cap: Option<String>,
}

/// The ledger and configuration in one coco home.
#[derive(Clone, Debug)]
pub struct Ledger {
    home: PathBuf,
}

/// An exclusive lock on the ledger; released on drop.
pub struct LedgerLock {
    _file: File,
}

impl Ledger {
    /// The ledger in `$COCO_HOME`, or in the user's data directory.
    pub fn open_default() -> Result<Ledger, LedgerError> {
        Ok(Ledger { home: home_dir()? })
    }

    /// The ledger in a given home directory.
    pub fn at(home: impl Into<PathBuf>) -> Ledger {
        Ledger { home: home.into() }
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    pub fn path(&self) -> PathBuf {
        self.home.join(LEDGER_FILE)
    }

    pub fn config_path(&self) -> PathBuf {
        self.home.join(CONFIG_FILE)
    }

    fn ensure_home(&self) -> Result<(), LedgerError> {
        std::fs::create_dir_all(&self.home).map_err(io(&self.home))
    }

    /// Takes the exclusive lock (waits for another coco holding it).
    pub fn lock(&self) -> Result<LedgerLock, LedgerError> {
        self.ensure_home()?;
        let path = self.home.join(LOCK_FILE);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io(&path))?;
        file.lock().map_err(io(&path))?;
        Ok(LedgerLock { _file: file })
    }

    /// Appends one entry durably. Requires the lock.
    pub fn append(&self, _lock: &LedgerLock, entry: &LedgerEntry) -> Result<(), LedgerError> {
        let path = self.path();
        let existed = path.exists();
        let mut line = serde_json::to_string(entry).expect("ledger entries serialise");
        line.push('\n');
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&path)
            .map_err(io(&path))?;
        // A line torn by a crash of the machine must not swallow this one: end it first.
        let len = file.metadata().map_err(io(&path))?.len();
        if len > 0 {
            let mut last = [0u8];
            file.seek(SeekFrom::Start(len - 1))
                .and_then(|_| file.read_exact(&mut last))
                .map_err(io(&path))?;
            if last[0] != b'\n' {
                line.insert(0, '\n');
            }
        }
        file.write_all(line.as_bytes()).map_err(io(&path))?;
        file.sync_all().map_err(io(&path))?;
        if !existed {
            sync_dir(&self.home).map_err(io(&self.home))?;
        }
        Ok(())
    }

    /// Every readable entry, and the line numbers of lines that could not be read (a
    /// torn last line after a crash, or a hand edit).
    pub fn entries(&self) -> Result<(Vec<LedgerEntry>, Vec<usize>), LedgerError> {
        let path = self.path();
        let text = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((vec![], vec![])),
            Err(e) => return Err(io(&path)(e)),
        };
        let mut entries = Vec::new();
        let mut bad = Vec::new();
        for (i, line) in text.split(|&b| b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<LedgerEntry>(line) {
                Ok(e) => entries.push(e),
                Err(_) => bad.push(i + 1),
            }
        }
        Ok((entries, bad))
    }

    /// One entry per draw: the latest line of each id, in the order the draws were
    /// first recorded (a TUI draw has a pending line, then its decision), and the
    /// unreadable lines.
    pub fn draws(&self) -> Result<(Vec<LedgerEntry>, Vec<usize>), LedgerError> {
        let (entries, bad) = self.entries()?;
        let mut out: Vec<LedgerEntry> = Vec::with_capacity(entries.len());
        let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for e in entries {
            match at.get(&e.id) {
                Some(&i) => out[i] = e,
                None => {
                    at.insert(e.id.clone(), out.len());
                    out.push(e);
                }
            }
        }
        Ok((out, bad))
    }

    /// The total ε drawn on the dataset with this fingerprint, and how many draws.
    pub fn spent(&self, fingerprint: &str) -> Result<(Option<Epsilon>, usize), LedgerError> {
        let (entries, _) = self.draws()?;
        let mine: Vec<Epsilon> = entries
            .iter()
            .filter(|e| e.dataset == fingerprint)
            .filter_map(|e| Epsilon::parse(&e.total_epsilon).ok())
            .collect();
        Ok((Epsilon::sum(&mine), mine.len()))
    }

    /// The cap configured for a dataset, if any.
    pub fn cap(&self, dataset: &Dataset) -> Result<Option<Epsilon>, LedgerError> {
        let config = self.config()?;
        let fingerprint = dataset.fingerprint();
        let dir = std::fs::canonicalize(&dataset.dir).ok();
        for (key, cap) in &config.caps {
            if *key == fingerprint || (dir.is_some() && std::fs::canonicalize(key).ok() == dir) {
                return Ok(Some(cap.clone()));
            }
        }
        Ok(config.default_cap)
    }

    /// Refuses a draw of `requested` if it would take the dataset past its cap.
    pub fn check_cap(&self, dataset: &Dataset, requested: &Epsilon) -> Result<(), LedgerError> {
        let Some(cap) = self.cap(dataset)? else {
            return Ok(());
        };
        let (spent, releases) = self.spent(&dataset.fingerprint())?;
        let after = match &spent {
            Some(s) => s.add(requested),
            None => requested.clone(),
        };
        if after > cap {
            return Err(LedgerError::CapExceeded {
                spent: spent.map_or_else(|| "0".to_string(), |s| s.to_string()),
                releases,
                requested: requested.to_string(),
                cap: cap.to_string(),
                config: self.config_path(),
            });
        }
        Ok(())
    }

    /// Per-dataset totals, in order of first appearance.
    pub fn summary(&self) -> Result<Vec<DatasetSpend>, LedgerError> {
        let (entries, _) = self.draws()?;
        let config = self.config()?;
        let mut out: Vec<(DatasetSpend, Option<Epsilon>)> = Vec::new();
        for e in &entries {
            let eps = Epsilon::parse(&e.total_epsilon).ok();
            match out.iter_mut().find(|(d, _)| d.dataset == e.dataset) {
                Some((d, total)) => {
                    d.releases += 1;
                    d.written += usize::from(e.written);
                    *total = match (total.take(), eps) {
                        (Some(a), Some(b)) => Some(a.add(&b)),
                        (a, b) => a.or(b),
                    };
                }
                None => out.push((
                    DatasetSpend {
                        dataset: e.dataset.clone(),
                        dataset_dir: e.dataset_dir.clone(),
                        releases: 1,
                        written: usize::from(e.written),
                        spent: String::new(),
                        cap: None,
                    },
                    eps,
                )),
            }
        }
        Ok(out
            .into_iter()
            .map(|(mut d, total)| {
                d.spent = total.map_or_else(|| "0".into(), |t| t.to_string());
                d.cap = config
                    .caps
                    .iter()
                    .find(|(k, _)| *k == d.dataset || *k == d.dataset_dir)
                    .map(|(_, c)| c.to_string())
                    .or_else(|| config.default_cap.as_ref().map(Epsilon::to_string));
                d
            })
            .collect())
    }

    fn config(&self) -> Result<Config, LedgerError> {
        let path = self.config_path();
        match std::fs::read_to_string(&path) {
            Ok(text) => Config::parse(&text, &path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(io(&path)(e)),
        }
    }

    /// Sets (or replaces) the cap for a dataset directory or fingerprint in config.toml.
    pub fn set_cap(&self, key: &str, cap: &Epsilon) -> Result<(), LedgerError> {
        self.ensure_home()?;
        let path = self.config_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(io(&path)(e)),
        };
        Config::parse(&text, &path)?;
        let mut doc: toml_edit::DocumentMut = text.parse().expect("parsed above");
        if !doc.contains_table("caps") {
            doc["caps"] = toml_edit::table();
        }
        doc["caps"][key] = toml_edit::value(cap.to_string());
        let tmp = self.home.join(".config.toml.tmp");
        std::fs::write(&tmp, doc.to_string()).map_err(io(&tmp))?;
        File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        Ok(())
    }
}

#[derive(Clone, Debug, Default)]
struct Config {
    default_cap: Option<Epsilon>,
    caps: Vec<(String, Epsilon)>,
}

impl Config {
    fn parse(text: &str, path: &Path) -> Result<Config, LedgerError> {
        let err = |span: Option<std::ops::Range<usize>>, message: String| LedgerError::Config {
            path: path.to_path_buf(),
            line: span.map_or(1, |s| {
                text[..s.start.min(text.len())].matches('\n').count() + 1
            }),
            message,
        };
        let doc = Document::parse(text).map_err(|e| {
            err(
                e.span(),
                format!("not valid TOML: {}", e.message().replace('\n', " ")),
            )
        })?;
        let mut config = Config::default();
        let eps = |item: &toml_edit::Item| -> Result<Epsilon, LedgerError> {
            let raw = match item.as_str() {
                Some(s) => s.to_string(),
                None => item
                    .span()
                    .and_then(|s| text.get(s))
                    .unwrap_or("")
                    .trim()
                    .to_string(),
            };
            Epsilon::parse(&raw).map_err(|e| err(item.span(), e.to_string()))
        };
        for (key, item) in doc.as_table().iter() {
            match key {
                "default_cap" => config.default_cap = Some(eps(item)?),
                "caps" => {
                    let Some(table) = item.as_table() else {
                        return Err(err(
                            item.span(),
                            "caps must be a table: [caps] then \"dataset\" = epsilon".into(),
                        ));
                    };
                    for (k, v) in table.iter() {
                        config.caps.push((k.to_string(), eps(v)?));
                    }
                }
                other => {
                    return Err(err(
                        item.span(),
                        format!("unknown key {other:?}: expected default_cap or [caps]"),
                    ));
                }
            }
        }
        Ok(config)
    }
}

/// `$COCO_HOME`, or the user's data directory for coco.
pub fn home_dir() -> Result<PathBuf, LedgerError> {
    if let Some(home) = std::env::var_os("COCO_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    directories::ProjectDirs::from("org", "coco", "coco")
        .map(|d| d.data_dir().to_path_buf())
        .ok_or(LedgerError::NoHome)
}

/// `fsync` on a directory, so a new or renamed entry in it is durable.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// A fresh random identifier (16 hex digits) from the operating system.
pub fn new_id() -> String {
    use rand::TryRng;
    let mut bytes = [0u8; 8];
    if rand::rngs::SysRng.try_fill_bytes(&mut bytes).is_err() {
        // Still unique enough for an id: time and process.
        let t = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes = (t ^ u64::from(std::process::id()).rotate_left(32)).to_be_bytes();
    }
    crate::data::hex(&bytes)
}

/// `time` as RFC 3339 in UTC, to the second.
pub fn rfc3339(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn entry(dataset: &str, eps: &str, written: bool) -> LedgerEntry {
        LedgerEntry {
            id: new_id(),
            time: rfc3339(SystemTime::now()),
            dataset: dataset.into(),
            dataset_dir: "/d".into(),
            levels: vec![LedgerLevel {
                name: "nation".into(),
                epsilon: eps.into(),
                method: "hc".into(),
            }],
            max_size_epsilon: None,
            total_epsilon: eps.into(),
            output: Some("/out".into()),
            written,
            randomness: "os".into(),
            tool: "release".into(),
            note: None,
            pending: false,
        }
    }

    #[test]
    fn dates() {
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_305_600 + 3_723);
        assert_eq!(rfc3339(t), "2026-11-22T01:02:03Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn append_read_and_sum() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path().join("home"));
        assert_eq!(ledger.spent("abc").unwrap(), (None, 0));
        let lock = ledger.lock().unwrap();
        ledger.append(&lock, &entry("abc", "1/3", true)).unwrap();
        ledger.append(&lock, &entry("abc", "0.5", false)).unwrap();
        ledger.append(&lock, &entry("xyz", "1", true)).unwrap();
        drop(lock);
        let (spent, n) = ledger.spent("abc").unwrap();
        assert_eq!((spent.unwrap().to_string(), n), ("5/6".to_string(), 2));
        // A torn line is skipped and reported.
        let mut f = OpenOptions::new().append(true).open(ledger.path()).unwrap();
        f.write_all(b"{\"id\":\"tor").unwrap();
        let (entries, bad) = ledger.entries().unwrap();
        assert_eq!((entries.len(), bad), (3, vec![4]));
        // The next append starts a line of its own.
        let lock = ledger.lock().unwrap();
        ledger.append(&lock, &entry("xyz", "1", true)).unwrap();
        drop(lock);
        let (entries, bad) = ledger.entries().unwrap();
        assert_eq!((entries.len(), bad), (4, vec![4]));
        let summary = ledger.summary().unwrap();
        assert_eq!(summary.len(), 2);
        assert_eq!(
            (
                summary[0].releases,
                summary[0].written,
                summary[0].spent.as_str()
            ),
            (2, 1, "5/6")
        );
    }

    #[test]
    fn a_pending_draw_and_its_decision_count_once() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path().join("home"));
        let lock = ledger.lock().unwrap();
        let mut shown = entry("abc", "1/2", false);
        shown.pending = true;
        ledger.append(&lock, &shown).unwrap();
        let other = entry("abc", "1/4", true);
        ledger.append(&lock, &other).unwrap();
        // Killed before deciding: the pending draw alone counts.
        assert_eq!(ledger.spent("abc").unwrap().1, 2);
        let decided = LedgerEntry {
            pending: false,
            written: true,
            ..shown.clone()
        };
        ledger.append(&lock, &decided).unwrap();
        drop(lock);
        let (spent, n) = ledger.spent("abc").unwrap();
        assert_eq!((spent.unwrap().to_string(), n), ("0.75".to_string(), 2));
        let (draws, _) = ledger.draws().unwrap();
        assert_eq!(draws, vec![decided, other]);
        assert_eq!(ledger.entries().unwrap().0.len(), 3);
        let summary = ledger.summary().unwrap();
        assert_eq!((summary[0].releases, summary[0].written), (2, 2));
    }

    #[test]
    fn config_caps() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path());
        ledger
            .set_cap("abc", &Epsilon::parse("1/2").unwrap())
            .unwrap();
        ledger
            .set_cap("abc", &Epsilon::parse("2").unwrap())
            .unwrap();
        let config = ledger.config().unwrap();
        assert_eq!(
            config.caps,
            vec![("abc".to_string(), Epsilon::parse("2").unwrap())]
        );
        std::fs::write(
            ledger.config_path(),
            "default_cap = 3\n[caps]\nabc = 0.5\nbad = \"x\"\n",
        )
        .unwrap();
        let e = ledger.config().unwrap_err().to_string();
        assert!(e.ends_with("config.toml:4: ε \"x\" is not a number: expected a decimal like 0.25 or a fraction like \"1/3\""), "{e}");
        std::fs::write(ledger.config_path(), "defaultcap = 3\n").unwrap();
        assert!(
            ledger
                .config()
                .unwrap_err()
                .to_string()
                .contains("config.toml:1: unknown key \"defaultcap\"")
        );
    }
}
