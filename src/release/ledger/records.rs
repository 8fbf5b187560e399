//! The ledger's record schema: one typed [`LedgerEntry`] per line, exact ε, and the small types it holds.

use super::*;

/// ε as an exact fraction of decimal strings, any size.
pub(crate) mod fraction {
    use super::*;

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Fraction {
        pub num: String,
        pub den: String,
    }

    pub fn to(e: &Epsilon) -> Fraction {
        Fraction {
            num: e.numer().to_str_radix(10),
            den: e.denom().to_str_radix(10),
        }
    }

    pub fn from(f: &Fraction) -> Result<Epsilon, String> {
        let term = |s: &str| {
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| BigUint::parse_bytes(s.as_bytes(), 10))
                .flatten()
        };
        match (term(&f.num), term(&f.den)) {
            (Some(n), Some(d)) => Epsilon::from_parts(n, d).ok_or_else(|| {
                format!(
                    "ε {}/{} is not positive: expected a fraction of positive whole numbers",
                    f.num, f.den
                )
            }),
            _ => Err(format!(
                "ε {{num: {:?}, den: {:?}}} is not a fraction of whole numbers",
                cut(&f.num),
                cut(&f.den)
            )),
        }
    }

    pub fn serialize<S: serde::Serializer>(e: &Epsilon, s: S) -> Result<S::Ok, S::Error> {
        to(e).serialize(s)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Epsilon, D::Error> {
        let f = Fraction::deserialize(d)?;
        from(&f).map_err(serde::de::Error::custom)
    }

    pub mod option {
        use super::*;

        pub fn serialize<S: serde::Serializer>(
            e: &Option<Epsilon>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            e.as_ref().map(to).serialize(s)
        }

        pub fn deserialize<'de, D: serde::Deserializer<'de>>(
            d: D,
        ) -> Result<Option<Epsilon>, D::Error> {
            Option::<Fraction>::deserialize(d)?
                .map(|f| from(&f).map_err(serde::de::Error::custom))
                .transpose()
        }
    }
}

/// Where a draw stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Drawn and recorded before anyone saw it; no decision recorded yet. Alone, it
    /// means coco stopped before one was made. Its ε counts as spent.
    Pending,
    /// A verified release was written to `output`.
    Written,
    /// Not written (refused by the checks, or writing failed). Its ε is spent.
    NotWritten,
    /// Discarded by the operator (or coco quit with it undecided). Its ε is spent.
    Discarded,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Written => "written",
            Status::NotWritten => "not written",
            Status::Discarded => "discarded",
        }
    }
}

/// What drew a release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    /// `coco release`.
    Release,
    /// The terminal UI.
    Tui,
}

pub use crate::estimate::MethodKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TailRecord {
    /// `L`.
    pub above: Size,
    /// `m` (a number, or `"auto"`). Absent in lines written before the ledger recorded
    /// it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<TailLength>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelRecord {
    pub name: String,
    #[serde(with = "fraction")]
    pub epsilon: Epsilon,
    pub method: MethodKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<TailRecord>,
}

impl LevelRecord {
    pub fn label(&self) -> String {
        let m = match self.method {
            MethodKind::Hc => "hc",
            MethodKind::Hg => "hg",
            MethodKind::Naive => "naive",
        };
        match self.tail {
            Some(t) => format!("{m}+tail≥{}", t.above),
            None => m.to_string(),
        }
    }
}

/// An input file and its SHA-256: provenance for the agency (confidential, never
/// published).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputRecord {
    pub path: String,
    pub sha256: String,
}

/// Which dataset a draw was made on. Confidential: the digests are noise-free functions
/// of the data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetRecord {
    /// [`Dataset::content_digest`]; absent in lines written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// SHA-256 over the input files' digests (how older lines keyed spending).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The directory it was loaded from, canonical when it could be resolved.
    pub dir: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<InputRecord>,
    /// The population key and its first-level regions' keys
    /// ([`crate::data::population`]); absent in lines written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub population: Option<PopulationRecord>,
}

impl DatasetRecord {
    /// The key `coco ledger` groups by and shows: the content digest, else the
    /// fingerprint.
    pub fn key(&self) -> &str {
        self.content
            .as_deref()
            .or(self.fingerprint.as_deref())
            .unwrap_or("")
    }
}

/// One line of the ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LedgerEntry {
    /// The line format: [`LEDGER_VERSION`] (1 for lines read from the older format).
    pub v: u32,
    /// The draw's id: every line about one draw carries it.
    pub id: String,
    #[serde(with = "time::serde::rfc3339")]
    pub time: OffsetDateTime,
    pub dataset: DatasetRecord,
    pub levels: Vec<LevelRecord>,
    /// The budget spent on estimating `K`, if it was estimated.
    #[serde(
        default,
        with = "fraction::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_size_epsilon: Option<Epsilon>,
    /// The whole draw's ε, exactly.
    #[serde(with = "fraction")]
    pub total_epsilon: Epsilon,
    pub status: Status,
    /// Where it was written (or was to be written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    pub randomness: Randomness,
    pub tool: Tool,
    /// Why it was not written, or what the operator was told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// How the plan was tuned (absent in lines written before coco recorded it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuning: Option<Tuning>,
    /// On a `written` line: the SHA-256 of the release's `manifest.json`, so that
    /// `coco verify` can tell an edited manifest (absent in older lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_sha256: Option<String>,
    /// SHA-256 of the previous line's bytes ([`GENESIS`] for the first line); empty for
    /// lines of the older format, which were not chained.
    #[serde(default)]
    pub prev: String,
}

impl LedgerEntry {
    /// A line about a draw under `plan` on `dataset`, spending `epsilon`, not yet
    /// chained (`prev` is set by [`Ledger::append`]).
    pub fn for_draw(
        dataset: &Dataset,
        plan: &ReleasePlan,
        spend: DrawSpend<'_>,
        status: Status,
        tool: Tool,
    ) -> LedgerEntry {
        let levels = match spend.levels {
            true => plan
                .levels()
                .iter()
                .map(|l| LevelRecord {
                    name: l.name().to_string(),
                    epsilon: l
                        .budget()
                        .as_pure()
                        .expect("the ledger records pure plans only (Reservation::open)")
                        .clone(),
                    method: MethodKind::of(l.method()),
                    tail: l.method().tail().map(|t| TailRecord {
                        above: t.above,
                        groups: Some(t.groups),
                    }),
                })
                .collect(),
            false => Vec::new(),
        };
        let population = dataset.population_keys();
        LedgerEntry {
            v: LEDGER_VERSION,
            id: spend.id.to_string(),
            time: now(),
            dataset: DatasetRecord {
                content: Some(dataset.content_digest()),
                fingerprint: Some(dataset.fingerprint()),
                dir: canonical_dir(&dataset.dir),
                inputs: dataset
                    .inputs
                    .iter()
                    .map(|f| InputRecord {
                        path: f.path.clone(),
                        sha256: f.sha256.clone(),
                    })
                    .collect(),
                population: Some(PopulationRecord {
                    key: population.key,
                    parts: population.parts,
                }),
            },
            levels,
            max_size_epsilon: match &plan.max_size() {
                MaxSize::Estimate { budget } => budget.as_pure().cloned(),
                MaxSize::Fixed(_) => None,
            },
            total_epsilon: spend.epsilon.clone(),
            status,
            output: None,
            randomness: spend.randomness,
            tool,
            note: None,
            tuning: Some(plan.tuning()),
            manifest_sha256: None,
            prev: String::new(),
        }
    }
}

/// What a ledger line about a draw spends.
#[derive(Clone, Copy, Debug)]
pub struct DrawSpend<'a> {
    pub id: &'a str,
    pub epsilon: &'a Epsilon,
    pub randomness: Randomness,
    /// Whether the levels were measured (false when only `K` was estimated).
    pub levels: bool,
}

/// The time now, to the second, in UTC.
pub fn now() -> OffsetDateTime {
    let t = OffsetDateTime::now_utc();
    t.replace_nanosecond(0).unwrap_or(t)
}

/// `time` as RFC 3339, e.g. `2026-11-23T19:50:00Z`.
pub fn format_time(time: OffsetDateTime) -> String {
    time.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| time.to_string())
}

/// The directory as the ledger records it: canonical, else absolute.
pub fn canonical_dir(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string()
}
