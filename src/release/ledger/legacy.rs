//! Lines of the format before version 2 (no `v`), read exactly and mapped to today's records.

use super::*;

/// A ledger line of the format before version 2.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LegacyEntry {
    id: String,
    time: String,
    dataset: String,
    dataset_dir: String,
    levels: Vec<LegacyLevel>,
    #[serde(default)]
    max_size_epsilon: Option<String>,
    total_epsilon: String,
    output: Option<String>,
    written: bool,
    randomness: String,
    tool: String,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    pending: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LegacyLevel {
    name: String,
    epsilon: String,
    method: String,
}

impl LegacyEntry {
    pub(crate) fn convert(self) -> Result<LedgerEntry, String> {
        let eps = |what: &str, text: &str| {
            Epsilon::parse_unbounded(text).map_err(|e| format!("{what}: {e}"))
        };
        let time =
            OffsetDateTime::parse(&self.time, &time::format_description::well_known::Rfc3339)
                .map_err(|_| format!("time {:?} is not an RFC 3339 time", cut(&self.time)))?;
        if self.dataset.len() != 64 || !self.dataset.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "dataset {:?} is not a SHA-256 fingerprint (64 hex digits)",
                cut(&self.dataset)
            ));
        }
        let levels = self
            .levels
            .iter()
            .map(|l| {
                let (method, tail) = match l.method.as_str() {
                    "hc" => (MethodKind::Hc, None),
                    "hg" => (MethodKind::Hg, None),
                    "naive" => (MethodKind::Naive, None),
                    other => match other.strip_prefix("hc+tail>").map(str::parse::<Size>) {
                        Some(Ok(above)) => (
                            MethodKind::Hc,
                            Some(TailRecord {
                                above,
                                groups: None,
                            }),
                        ),
                        _ => return Err(format!("method {:?} is not a method", cut(other))),
                    },
                };
                Ok(LevelRecord {
                    name: l.name.clone(),
                    budget: Loss::Pure(eps("level ε", &l.epsilon)?),
                    method,
                    tail,
                })
            })
            .collect::<Result<_, String>>()?;
        let randomness = match self.randomness.as_str() {
            "os" => Randomness::Os,
            other => match other
                .strip_prefix("seeded (")
                .and_then(|s| s.strip_suffix(')'))
                .map(str::parse::<u64>)
            {
                Some(Ok(seed)) => Randomness::Seeded { seed },
                _ => return Err(format!("randomness {:?} is not known", cut(other))),
            },
        };
        let tool = match self.tool.as_str() {
            "release" => Tool::Release,
            "tui" => Tool::Tui,
            other => return Err(format!("tool {:?} is not known", cut(other))),
        };
        Ok(LedgerEntry {
            v: 1,
            id: self.id,
            time,
            dataset: DatasetRecord {
                content: None,
                fingerprint: Some(self.dataset.to_ascii_lowercase()),
                dir: self.dataset_dir,
                inputs: Vec::new(),
                population: None,
            },
            levels,
            max_size: self
                .max_size_epsilon
                .map(|e| eps("max_size_epsilon", &e).map(Loss::Pure))
                .transpose()?,
            total: Loss::Pure(eps("total_epsilon", &self.total_epsilon)?),
            status: match (self.pending, self.written) {
                (true, _) => Status::Pending,
                (false, true) => Status::Written,
                (false, false) => Status::NotWritten,
            },
            output: self.output,
            randomness,
            tool,
            note: self.note,
            tuning: None,
            manifest_sha256: None,
            prev: String::new(),
        })
    }
}
