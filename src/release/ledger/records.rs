//! The ledger's record schema: one typed [`LedgerEntry`] per line, exact ε, and the small types it holds.

use super::*;

/// An ε or a ρ as an exact fraction of decimal strings, any size.
pub(crate) mod fraction {
    use super::*;
    use crate::privacy::budget::Unit;

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Fraction {
        pub num: String,
        pub den: String,
    }

    pub fn to<M: Unit>(e: &Budget<M>) -> Fraction {
        Fraction {
            num: e.numer().to_str_radix(10),
            den: e.denom().to_str_radix(10),
        }
    }

    pub fn from<M: Unit>(f: &Fraction) -> Result<Budget<M>, String> {
        let term = |s: &str| {
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| BigUint::parse_bytes(s.as_bytes(), 10))
                .flatten()
        };
        match (term(&f.num), term(&f.den)) {
            (Some(n), Some(d)) => Budget::<M>::from_parts(n, d).ok_or_else(|| {
                format!(
                    "{} {}/{} is not positive: expected a fraction of positive whole numbers",
                    M::SYMBOL,
                    f.num,
                    f.den
                )
            }),
            _ => Err(format!(
                "{} {{num: {:?}, den: {:?}}} is not a fraction of whole numbers",
                M::SYMBOL,
                cut(&f.num),
                cut(&f.den)
            )),
        }
    }

    pub mod option {
        use super::*;

        pub fn serialize<M: Unit, S: serde::Serializer>(
            e: &Option<Budget<M>>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            e.as_ref().map(to).serialize(s)
        }

        pub fn deserialize<'de, M: Unit, D: serde::Deserializer<'de>>(
            d: D,
        ) -> Result<Option<Budget<M>>, D::Error> {
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

/// A level of a draw: its name, its budget (an ε, or a ρ in a zCDP draw's line), its
/// method.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawLevel", into = "RawLevel")]
pub struct LevelRecord {
    pub name: String,
    pub budget: Loss,
    pub method: MethodKind,
    pub tail: Option<TailRecord>,
}

/// A level as its line writes it: `epsilon` or `rho`, exactly one.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLevel {
    name: String,
    #[serde(
        default,
        with = "fraction::option",
        skip_serializing_if = "Option::is_none"
    )]
    epsilon: Option<Epsilon>,
    #[serde(
        default,
        with = "fraction::option",
        skip_serializing_if = "Option::is_none"
    )]
    rho: Option<Rho>,
    method: MethodKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tail: Option<TailRecord>,
}

impl TryFrom<RawLevel> for LevelRecord {
    type Error = String;

    fn try_from(raw: RawLevel) -> Result<LevelRecord, String> {
        let budget = one_loss(raw.epsilon, raw.rho).map_err(|what| {
            format!(
                "level {:?} records {what}: expected its budget as epsilon or rho",
                cut(&raw.name)
            )
        })?;
        Ok(LevelRecord {
            name: raw.name,
            budget,
            method: raw.method,
            tail: raw.tail,
        })
    }
}

impl From<LevelRecord> for RawLevel {
    fn from(l: LevelRecord) -> RawLevel {
        let (epsilon, rho) = split_loss(Some(l.budget));
        RawLevel {
            name: l.name,
            epsilon,
            rho,
            method: l.method,
            tail: l.tail,
        }
    }
}

/// The loss of a pair of optional fields holding exactly one; what is wrong otherwise.
fn one_loss(epsilon: Option<Epsilon>, rho: Option<Rho>) -> Result<Loss, &'static str> {
    match (epsilon, rho) {
        (Some(e), None) => Ok(Loss::Pure(e)),
        (None, Some(r)) => Ok(Loss::Zcdp(r)),
        (Some(_), Some(_)) => Err("both an ε and a ρ"),
        (None, None) => Err("neither an ε nor a ρ"),
    }
}

/// A loss as the pair of optional fields a line writes.
fn split_loss(loss: Option<Loss>) -> (Option<Epsilon>, Option<Rho>) {
    match loss {
        Some(Loss::Pure(e)) => (Some(e), None),
        Some(Loss::Zcdp(r)) => (None, Some(r)),
        None => (None, None),
    }
}

impl LevelRecord {
    /// The level's budget: its ε, or its ρ in a zCDP draw.
    pub fn budget(&self) -> &Loss {
        &self.budget
    }

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

/// One line of the ledger about a draw. A pure draw's line is of format
/// [`LEDGER_VERSION`] (2) with `total_epsilon` and the levels' `epsilon`; a zCDP
/// draw's of [`ZCDP_LEDGER_VERSION`] (3) with `"definition": "zcdp"`, `total_rho`,
/// `max_size_rho` and the levels' `rho`. The reader refuses any mix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawEntry", into = "RawEntry")]
pub struct LedgerEntry {
    /// The line format: [`LEDGER_VERSION`] or [`ZCDP_LEDGER_VERSION`] (1 for lines read
    /// from the older format).
    pub v: u32,
    /// The draw's id: every line about one draw carries it.
    pub id: String,
    #[serde(with = "time::serde::rfc3339")]
    pub time: OffsetDateTime,
    pub dataset: DatasetRecord,
    pub levels: Vec<LevelRecord>,
    /// The budget spent on estimating `K`, if it was estimated (in the draw's
    /// measure).
    pub max_size: Option<Loss>,
    /// The whole draw's loss, exactly: its ε, or its ρ.
    pub total: Loss,
    pub status: Status,
    /// Where it was written (or was to be written).
    pub output: Option<String>,
    pub randomness: Randomness,
    pub tool: Tool,
    /// Why it was not written, or what the operator was told.
    pub note: Option<String>,
    /// How the plan was tuned (absent in lines written before coco recorded it).
    pub tuning: Option<Tuning>,
    /// On a `written` line: the SHA-256 of the release's `manifest.json`, so that
    /// `coco verify` can tell an edited manifest (absent in older lines).
    pub manifest_sha256: Option<String>,
    /// SHA-256 of the previous line's bytes ([`GENESIS`] for the first line); empty for
    /// lines of the older format, which were not chained.
    pub prev: String,
}

/// A line about a draw as it is written: `total_epsilon` or `total_rho` (exactly one,
/// as the version and `definition` say).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    v: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    definition: Option<Definition>,
    /// The draw's id: every line about one draw carries it.
    id: String,
    #[serde(with = "time::serde::rfc3339")]
    time: OffsetDateTime,
    dataset: DatasetRecord,
    levels: Vec<LevelRecord>,
    #[serde(
        default,
        with = "fraction::option",
        skip_serializing_if = "Option::is_none"
    )]
    max_size_epsilon: Option<Epsilon>,
    #[serde(
        default,
        with = "fraction::option",
        skip_serializing_if = "Option::is_none"
    )]
    max_size_rho: Option<Rho>,
    #[serde(
        default,
        with = "fraction::option",
        skip_serializing_if = "Option::is_none"
    )]
    total_epsilon: Option<Epsilon>,
    #[serde(
        default,
        with = "fraction::option",
        skip_serializing_if = "Option::is_none"
    )]
    total_rho: Option<Rho>,
    status: Status,
    /// Where it was written (or was to be written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output: Option<String>,
    randomness: Randomness,
    tool: Tool,
    /// Why it was not written, or what the operator was told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    /// How the plan was tuned (absent in lines written before coco recorded it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tuning: Option<Tuning>,
    /// On a `written` line: the SHA-256 of the release's `manifest.json`, so that
    /// `coco verify` can tell an edited manifest (absent in older lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    manifest_sha256: Option<String>,
    /// SHA-256 of the previous line's bytes ([`GENESIS`] for the first line); empty for
    /// lines of the older format, which were not chained.
    #[serde(default)]
    prev: String,
}

impl TryFrom<RawEntry> for LedgerEntry {
    type Error = String;

    /// Fails closed on any line whose measure is not stated one way: a version this
    /// coco does not know, both or neither of `total_epsilon` and `total_rho`, a
    /// version 3 line that is not `definition = zcdp` in ρ throughout, a version 1 or 2
    /// line with a ρ or a `definition`.
    fn try_from(raw: RawEntry) -> Result<LedgerEntry, String> {
        if raw.v == 0 || raw.v > ZCDP_LEDGER_VERSION {
            return Err(format!(
                "format version {} is not known to this coco (expected 1 to {ZCDP_LEDGER_VERSION})",
                raw.v
            ));
        }
        let total = one_loss(raw.total_epsilon, raw.total_rho).map_err(|what| {
            format!("the draw records {what} as its total (total_epsilon, total_rho): expected exactly one")
        })?;
        let max_size = match (raw.max_size_epsilon, raw.max_size_rho) {
            (None, None) => None,
            (e, r) => Some(one_loss(e, r).map_err(|what| {
                format!(
                    "the draw records {what} for K (max_size_epsilon, max_size_rho): expected one"
                )
            })?),
        };
        let expected = match raw.v {
            ZCDP_LEDGER_VERSION => {
                if raw.definition != Some(Definition::Zcdp) {
                    return Err(format!(
                        "a line of format version {ZCDP_LEDGER_VERSION} without \"definition\": \"zcdp\": expected a zCDP draw's line"
                    ));
                }
                Definition::Zcdp
            }
            v => {
                if let Some(d) = raw.definition {
                    return Err(format!(
                        "a line of format version {v} with \"definition\": \"{d}\": only lines of version {ZCDP_LEDGER_VERSION} state a definition"
                    ));
                }
                Definition::Pure
            }
        };
        let budgets = std::iter::once(&total)
            .chain(max_size.as_ref())
            .chain(raw.levels.iter().map(|l| &l.budget));
        if budgets.into_iter().any(|b| b.definition() != expected) {
            return Err(match expected {
                Definition::Pure => format!(
                    "a line of format version {} with a ρ: ρ is recorded only in lines of version {ZCDP_LEDGER_VERSION} (\"definition\": \"zcdp\")",
                    raw.v
                ),
                Definition::Zcdp => {
                    "a zCDP draw's line with an ε: every budget of a zCDP draw is a ρ".into()
                }
            });
        }
        Ok(LedgerEntry {
            v: raw.v,
            id: raw.id,
            time: raw.time,
            dataset: raw.dataset,
            levels: raw.levels,
            max_size,
            total,
            status: raw.status,
            output: raw.output,
            randomness: raw.randomness,
            tool: raw.tool,
            note: raw.note,
            tuning: raw.tuning,
            manifest_sha256: raw.manifest_sha256,
            prev: raw.prev,
        })
    }
}

impl From<LedgerEntry> for RawEntry {
    fn from(e: LedgerEntry) -> RawEntry {
        let (max_size_epsilon, max_size_rho) = split_loss(e.max_size);
        let definition = e.total.definition();
        let (total_epsilon, total_rho) = split_loss(Some(e.total));
        RawEntry {
            v: e.v,
            definition: (definition == Definition::Zcdp).then_some(definition),
            id: e.id,
            time: e.time,
            dataset: e.dataset,
            levels: e.levels,
            max_size_epsilon,
            max_size_rho,
            total_epsilon,
            total_rho,
            status: e.status,
            output: e.output,
            randomness: e.randomness,
            tool: e.tool,
            note: e.note,
            tuning: e.tuning,
            manifest_sha256: e.manifest_sha256,
            prev: e.prev,
        }
    }
}

impl LedgerEntry {
    /// The draw's loss, exactly: its ε, or its ρ.
    pub fn loss(&self) -> Loss {
        self.total.clone()
    }

    /// A line about a draw under `plan` on `dataset`, spending `spend.loss`, not yet
    /// chained (`prev` is set by [`Ledger::append`]).
    pub fn for_draw(
        dataset: &Dataset,
        plan: &ReleasePlan,
        spend: DrawSpend<'_>,
        status: Status,
        tool: Tool,
    ) -> LedgerEntry {
        let levels = match spend.levels {
            // A level left unmeasured spent nothing: the ledger lists what was spent.
            true => plan
                .levels()
                .iter()
                .filter_map(|l| l.loss().map(|budget| (l, budget)))
                .map(|(l, budget)| LevelRecord {
                    name: l.name().to_string(),
                    budget: budget.clone(),
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
            v: version_of(spend.loss.definition()),
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
            max_size: match &plan.max_size() {
                MaxSize::Estimate { budget } => Some(budget.clone()),
                MaxSize::Fixed(_) => None,
            },
            total: spend.loss.clone(),
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
    /// The draw's loss (its ε, or its ρ: the line's format follows it).
    pub loss: &'a Loss,
    pub randomness: Randomness,
    /// Whether the levels were measured (false when only `K` was estimated).
    pub levels: bool,
}

/// The format version of a draw's line in `definition`.
pub fn version_of(definition: Definition) -> u32 {
    match definition {
        Definition::Pure => LEDGER_VERSION,
        Definition::Zcdp => ZCDP_LEDGER_VERSION,
    }
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
