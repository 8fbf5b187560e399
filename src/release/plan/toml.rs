//! The plan as TOML: reading it (every error names the file and line) and writing it
//! back, with each level's note as a comment.

use super::*;
use crate::wire::Named;

pub(crate) const TOP_KEYS: &str =
    "max_size, level, consistency, merge, hc_fit, hg_fit, tuning, tuning_source";
pub(crate) const LEVEL_KEYS: &str = "name, epsilon, rho, method, tail, held";

impl ReleasePlan {
    /// Reads and parses a plan file (not yet checked against a hierarchy).
    pub fn load(path: &Path) -> Result<ReleasePlan, PlanError> {
        let err = |line, kind| PlanError {
            file: path.to_path_buf(),
            line,
            kind,
        };
        let bytes = std::fs::read(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                err(None, PlanErrorKind::NotFound)
            } else {
                err(None, PlanErrorKind::Read(e))
            }
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            err(Some(line), PlanErrorKind::NotUtf8 { byte: bytes[at] })
        })?;
        Self::parse(&text, path)
    }

    /// Parses plan text; `file` is used in messages.
    pub fn parse(text: &str, file: &Path) -> Result<ReleasePlan, PlanError> {
        let err = |span: Option<std::ops::Range<usize>>, kind: PlanErrorKind| PlanError {
            file: file.to_path_buf(),
            line: span.map(|s| line_of(text, s.start)),
            kind,
        };
        let doc = Document::parse(text).map_err(|e| {
            err(
                e.span(),
                PlanErrorKind::Syntax(e.message().replace('\n', " ")),
            )
        })?;
        let root: &Table = doc.as_table();
        for (key, item) in root.iter() {
            if !TOP_KEYS.split(", ").any(|k| k == key) {
                return Err(err(
                    key_span(root, key).or(item.span()),
                    PlanErrorKind::UnknownKey {
                        key: key.to_string(),
                        expected: TOP_KEYS,
                    },
                ));
            }
        }
        let max_size = match root.get("max_size") {
            None => {
                return Err(err(
                    None,
                    PlanErrorKind::MissingKey {
                        key: "max_size",
                        what: "the public bound K on a group's size, e.g. max_size = 10000",
                    },
                ));
            }
            Some(item) => parse_max_size(text, item).map_err(|(span, kind)| err(span, kind))?,
        };
        let word = |key: &'static str,
                    expected: &'static str|
         -> Result<Option<(String, Span)>, PlanError> {
            match root.get(key) {
                None => Ok(None),
                Some(item) => match item.as_str() {
                    Some(s) => Ok(Some((s.to_string(), item.span()))),
                    None => Err(err(
                        item.span(),
                        PlanErrorKind::BadValue {
                            key,
                            found: raw(text, item),
                            expected,
                        },
                    )),
                },
            }
        };
        const CONSISTENCY: &str = "\"topdown\" or \"wls\"";
        let consistency = match word("consistency", CONSISTENCY)? {
            None => Consistency::default(),
            Some((s, span)) => Consistency::parse(&s).ok_or_else(|| {
                err(
                    span,
                    PlanErrorKind::BadValue {
                        key: "consistency",
                        found: format!("{s:?}"),
                        expected: CONSISTENCY,
                    },
                )
            })?,
        };
        const MERGE: &str = "\"weighted\" or \"average\"";
        let merge = match word("merge", MERGE)? {
            None => MergeRule::default(),
            Some((s, span)) => MergeRule::parse(&s).ok_or_else(|| {
                err(
                    span,
                    PlanErrorKind::BadValue {
                        key: "merge",
                        found: format!("{s:?}"),
                        expected: MERGE,
                    },
                )
            })?,
        };
        const TUNING: &str =
            "\"public-default\", \"public\", \"proxy\", \"confidential-previews\" or \"unknown\"";
        let tuning = match word("tuning", TUNING)? {
            None => Tuning::Unknown,
            Some((s, span)) => Tuning::parse(&s).ok_or_else(|| {
                err(
                    span,
                    PlanErrorKind::BadValue {
                        key: "tuning",
                        found: format!("{s:?}"),
                        expected: TUNING,
                    },
                )
            })?,
        };
        const SOURCE: &str = "the public proxy the plan was tuned on: \"synthetic\" or a proxy dataset's name, on one line";
        let tuning_source = match word("tuning_source", SOURCE)? {
            None => None,
            Some((s, span)) => Some(TuningSource::new(&s).ok_or_else(|| {
                err(
                    span,
                    PlanErrorKind::BadValue {
                        key: "tuning_source",
                        found: format!("{s:?}"),
                        expected: SOURCE,
                    },
                )
            })?),
        };
        let defaults = EstimateOptions::default();
        let mut fits = [defaults.cumulative_fit, defaults.unattributed_fit];
        for (slot, key) in fits.iter_mut().zip(["hc_fit", "hg_fit"]) {
            const FIT: &str = "\"l1\" or \"l2\"";
            if let Some((s, span)) = word(key, FIT)? {
                *slot = match s.as_str() {
                    "l1" => IsotonicFit::L1,
                    "l2" => IsotonicFit::L2,
                    _ => {
                        return Err(err(
                            span,
                            PlanErrorKind::BadValue {
                                key: if key == "hc_fit" { "hc_fit" } else { "hg_fit" },
                                found: format!("{s:?}"),
                                expected: FIT,
                            },
                        ));
                    }
                };
            }
        }
        let levels = match root.get("level") {
            None => Vec::new(),
            Some(item) => {
                let Some(tables) = item.as_array_of_tables() else {
                    return Err(err(
                        item.span(),
                        PlanErrorKind::BadValue {
                            key: "level",
                            found: raw(text, item),
                            expected: "[[level]] tables",
                        },
                    ));
                };
                let mut levels = Vec::with_capacity(tables.len());
                for table in tables.iter() {
                    levels.push(parse_level(text, table).map_err(|(span, kind)| err(span, kind))?);
                }
                levels
            }
        };
        let plan = ReleasePlan {
            max_size,
            levels,
            consistency,
            merge,
            hc_fit: fits[0],
            hg_fit: fits[1],
            tuning,
            tuning_source,
        };
        plan.check_rules().map_err(|rule| {
            let line = rule
                .level()
                .and_then(|name| plan.levels.iter().find(|l| l.name == name))
                .map(|l| l.line)
                .filter(|&l| l > 0);
            PlanError {
                file: file.to_path_buf(),
                line,
                kind: PlanErrorKind::Rule(rule),
            }
        })?;
        Ok(plan)
    }
    /// The plan as TOML text that [`ReleasePlan::parse`] reads back to the same plan.
    pub fn to_toml(&self) -> String {
        self.to_toml_with_notes(&[])
    }

    /// [`ReleasePlan::to_toml`] with `notes[i]` written as a comment above level `i`
    /// (e.g. why the level got its method).
    pub fn to_toml_with_notes(&self, notes: &[String]) -> String {
        let mut s = String::new();
        match &self.max_size {
            MaxSize::Fixed(k) => {
                let _ = writeln!(
                    s,
                    "max_size = {k}          # the public bound K on a group's size"
                );
            }
            MaxSize::Estimate { budget } => {
                let _ = writeln!(
                    s,
                    "max_size = {{ {} = {} }}  # estimate K privately with this budget",
                    budget.definition().budget_name(),
                    toml_budget(budget)
                );
            }
        }
        let defaults = EstimateOptions::default();
        let _ = writeln!(
            s,
            "consistency = \"{}\"    # \"wls\" (coco's) or \"topdown\" (Kuo et al. Algorithm 1)",
            self.consistency.name()
        );
        if self.merge != MergeRule::default() {
            let _ = writeln!(s, "merge = \"{}\"", self.merge.name());
        }
        if self.hc_fit != defaults.cumulative_fit {
            let _ = writeln!(s, "hc_fit = \"{}\"", fit_name(self.hc_fit));
        }
        if self.hg_fit != defaults.unattributed_fit {
            let _ = writeln!(s, "hg_fit = \"{}\"", fit_name(self.hg_fit));
        }
        if self.tuning != Tuning::Unknown {
            let _ = writeln!(
                s,
                "tuning = \"{}\"    # how the plan was chosen: {}",
                self.tuning,
                self.tuning.describe()
            );
        }
        if let Some(source) = &self.tuning_source {
            let _ = writeln!(
                s,
                "tuning_source = {}    # the public proxy it was tuned on",
                toml_string(source.as_str())
            );
        }
        for (i, level) in self.levels.iter().enumerate() {
            s.push('\n');
            if let Some(note) = notes.get(i) {
                for line in wrap_comment(note, 88) {
                    let _ = writeln!(s, "# {line}");
                }
            }
            let _ = write!(
                s,
                "[[level]]\nname = {}\n{} = {}\nmethod = \"{}\"\n",
                toml_string(&level.name),
                level.budget.definition().budget_name(),
                match &level.budget {
                    LevelBudget::Measured(loss) => toml_budget(loss),
                    LevelBudget::Unmeasured(_) =>
                        "\"0\"  # not measured: estimated from its children".to_string(),
                },
                level.method.name()
            );
            if level.held {
                let _ = writeln!(
                    s,
                    "held = true    # the operator holds this level's budget when rebalancing"
                );
            }
            if let Some(t) = level.method.tail() {
                let _ = match t.groups {
                    TailLength::Fixed(m) => writeln!(
                        s,
                        "tail = {{ above = {}, groups = {m} }}  # sizes below {} as cumulative counts, then the sizes of the {m} largest groups (same ε)",
                        t.above, t.above
                    ),
                    TailLength::Auto => writeln!(
                        s,
                        "tail = {{ above = {}, groups = \"auto\" }}  # sizes below {} as cumulative counts, then each region's groups of that size or more, as many as its noisy head says (same ε)",
                        t.above, t.above
                    ),
                };
            }
        }
        s
    }
}

impl ReleasePlan {
    /// The file `coco plan` writes: a header saying what the plan is, then the plan with
    /// `notes[i]` as a comment above level `i` (why coco chose the level's method).
    /// `options` are the flags that made the plan other than coco's default, as the
    /// operator gave them (none for the default). What the header claims follows the
    /// plan itself (its `tuning`, K, split of ε) and those options, so the header and
    /// the `tuning` key always say the same.
    pub fn to_plan_file(&self, options: &[String], notes: &[String]) -> String {
        let mut s = String::new();
        for line in wrap_comment(&self.header(options, !notes.is_empty()), 88) {
            let _ = writeln!(s, "# {line}");
        }
        s.push_str(&self.to_toml_with_notes(notes));
        s
    }

    /// The header's text (see [`ReleasePlan::to_plan_file`]).
    fn header(&self, options: &[String], reasons: bool) -> String {
        let even = self.levels.windows(2).all(|w| w[0].budget == w[1].budget);
        let split = if even {
            super::defaults::split_reason(self.levels.len(), self.definition())
        } else {
            format!(
                "{} is split over the levels as the operator chose.",
                self.definition().symbol()
            )
        };
        let methods = if reasons {
            "Each level's method and why are given above it."
        } else {
            "Each level's method was set by the options."
        };
        let k = match &self.max_size {
            MaxSize::Fixed(k) if *k == super::defaults::DEFAULT_MAX_SIZE => String::new(),
            MaxSize::Fixed(k) => format!(
                " K = {k} was set by hand: if it came from a confidential figure (coco inspect \
                 shows the largest true size), say so when releasing (coco release --tuned \
                 confidential)."
            ),
            MaxSize::Estimate { budget } => format!(
                " K is estimated privately when the release is drawn, with {budget} added \
                 to the levels' total."
            ),
        };
        let edit = "Edit freely: `coco preview --proxy synthetic` shows what a change costs on \
                    a public proxy, which keeps the tuning public; `coco preview` alone \
                    measures against the confidential data, and a plan tuned on that is \
                    recorded as \"confidential-previews\".";
        match self.tuning {
            Tuning::PublicDefault => format!(
                "coco's default plan, chosen from public information only: the hierarchy, \
                 each region's G and K. No group size was read and no preview was run, so \
                 choosing it spent no ε and it publishes nothing about the data (tuning = \
                 \"public-default\"). {split}{k} {methods} {edit}"
            ),
            Tuning::Public => format!(
                "A plan chosen by the operator from public information only, with coco \
                 plan's options {}: not coco's default plan. Its inputs are the hierarchy, \
                 each region's G and the options; no group size was read and no preview \
                 was run, so choosing it spent no ε and it publishes nothing about the data \
                 (tuning = \"public\"). {split}{k} {methods} {edit}",
                options.join(" ")
            ),
            t => format!(
                "A release plan (tuning = \"{t}\": {}).{k} {edit}",
                t.describe()
            ),
        }
    }
}

/// `text` on lines of at most `width` characters (words longer than that on their own
/// line), with line breaks replaced so each stays one comment line.
pub(crate) fn wrap_comment(text: &str, width: usize) -> Vec<String> {
    if text.split_whitespace().next().is_none() {
        return Vec::new();
    }
    crate::units::wrap_words(text, width, |_| 1, false)
}

pub(crate) fn fit_name(fit: IsotonicFit) -> &'static str {
    match fit {
        IsotonicFit::L1 => "l1",
        IsotonicFit::L2 => "l2",
    }
}

/// A budget as TOML: a bare decimal when it is exact and short enough for the reader
/// (17 significant digits), else a quoted fraction. Every budget the plan rules accept
/// (terms up to 10^18, what the noise can use) is read back exactly.
pub(crate) fn toml_budget(budget: &Loss) -> String {
    let e = budget.amount();
    let s = e.to_string();
    let fraction = || format!("\"{}/{}\"", e.numer(), e.denom());
    if s.contains('/') {
        format!("\"{s}\"")
    } else if Epsilon::parse(&s).is_err() {
        fraction()
    } else if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

pub(crate) fn toml_string(s: &str) -> String {
    toml_edit::Value::from(s).to_string().trim().to_string()
}

pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

pub(crate) fn key_span(table: &Table, key: &str) -> Option<std::ops::Range<usize>> {
    table.key(key).and_then(|k| k.span())
}

/// The value's text as written in the file.
pub(crate) fn raw(text: &str, item: &Item) -> String {
    let text = item
        .span()
        .and_then(|s| text.get(s))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| item.to_string().trim().to_string());
    one_line(&text)
}

/// A value for a one-line message: its first line, cut after 40 characters (a table
/// or an array can span many lines).
pub(crate) fn one_line(text: &str) -> String {
    const MAX: usize = 40;
    let first = text.lines().next().unwrap_or("");
    let cut: String = first.chars().take(MAX).collect();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// Where a value is in the plan's text, when known.
pub(crate) type Span = Option<std::ops::Range<usize>>;

pub(crate) type Located = (Span, PlanErrorKind);

pub(crate) fn parse_max_size(text: &str, item: &Item) -> Result<MaxSize, Located> {
    if let Some(table) = item.as_inline_table() {
        let mut budget = None;
        for (key, value) in table.iter() {
            let definition = match key {
                "epsilon" => Definition::Pure,
                "rho" => Definition::Zcdp,
                _ => {
                    return Err((
                        value.span(),
                        PlanErrorKind::UnknownKey {
                            key: key.to_string(),
                            expected: "epsilon or rho (max_size = { epsilon = 0.001 })",
                        },
                    ));
                }
            };
            if budget.is_some() {
                return Err((
                    value.span(),
                    PlanErrorKind::BadValue {
                        key: "max_size",
                        found: raw(text, item),
                        expected: "one budget: epsilon or rho, not both",
                    },
                ));
            }
            budget = Some(parse_budget(text, value, definition)?);
        }
        return match budget {
            Some(budget) => Ok(MaxSize::Estimate { budget }),
            None => Err((
                item.span(),
                PlanErrorKind::MissingKey {
                    key: "epsilon",
                    what: "max_size = { epsilon = 0.001 } estimates K with that budget",
                },
            )),
        };
    }
    let found = raw(text, item);
    match item.as_integer() {
        Some(k) if (1..=i64::from(MAX_K)).contains(&k) => Ok(MaxSize::Fixed(k as Size)),
        _ => Err((item.span(), PlanErrorKind::BadMaxSize { found })),
    }
}

/// A budget of `definition` (the value of an `epsilon` or a `rho` key), read from the
/// TOML text itself, never through a float.
pub(crate) fn parse_budget(
    text: &str,
    value: &Value,
    definition: Definition,
) -> Result<Loss, Located> {
    let raw = budget_text(text, value, definition)?;
    Loss::parse(definition, &raw).map_err(|e| (value.span(), PlanErrorKind::Epsilon(e)))
}

/// A level's budget: as [`parse_budget`], with an exact zero read as
/// [`LevelBudget::Unmeasured`].
pub(crate) fn parse_level_budget(
    text: &str,
    value: &Value,
    definition: Definition,
) -> Result<LevelBudget, Located> {
    let raw = budget_text(text, value, definition)?;
    LevelBudget::parse(definition, &raw).map_err(|e| (value.span(), PlanErrorKind::Epsilon(e)))
}

/// The text of a budget's value: a string's contents, or a number as written.
fn budget_text(text: &str, value: &Value, definition: Definition) -> Result<String, Located> {
    let span = value.span();
    match value {
        Value::String(s) => Ok(s.value().to_string()),
        Value::Float(_) | Value::Integer(_) => Ok(span
            .clone()
            .and_then(|s| text.get(s))
            .unwrap_or("")
            .trim()
            .replace('_', "")),
        other => Err((
            span,
            PlanErrorKind::BadValue {
                key: definition.budget_name(),
                found: one_line(other.to_string().trim()),
                expected: "a decimal >= 0 like 0.25 (0: the level is not measured) or a fraction string like \"1/3\"",
            },
        )),
    }
}

pub(crate) fn parse_level(text: &str, table: &Table) -> Result<LevelPlan, Located> {
    let line = table.span().map(|s| line_of(text, s.start)).unwrap_or(0);
    let table_span = table.span();
    for (key, item) in table.iter() {
        if !LEVEL_KEYS.split(", ").any(|k| k == key) {
            return Err((
                key_span(table, key).or(item.span()),
                PlanErrorKind::UnknownKey {
                    key: key.to_string(),
                    expected: LEVEL_KEYS,
                },
            ));
        }
    }
    let name = match table.get("name") {
        None => {
            return Err((
                table_span,
                PlanErrorKind::MissingKey {
                    key: "name",
                    what: "a level name from hierarchy.csv's header",
                },
            ));
        }
        Some(item) => match item.as_str() {
            Some(s) => s.to_string(),
            None => {
                return Err((
                    item.span(),
                    PlanErrorKind::BadValue {
                        key: "name",
                        found: raw(text, item),
                        expected: "a quoted level name",
                    },
                ));
            }
        },
    };
    let (definition, item) = match (table.get("epsilon"), table.get("rho")) {
        (None, None) => {
            return Err((
                table_span,
                PlanErrorKind::MissingKey {
                    key: "epsilon",
                    what: "the level's budget, e.g. epsilon = 0.25 or \"1/3\" (rho = \"1/10\" in a zCDP plan)",
                },
            ));
        }
        (Some(_), Some(item)) => {
            return Err((
                key_span(table, "rho").or(item.span()),
                PlanErrorKind::BadValue {
                    key: "rho",
                    found: raw(text, item),
                    expected: "one budget per level: epsilon (pure DP) or rho (zCDP), not both",
                },
            ));
        }
        (Some(item), None) => (Definition::Pure, item),
        (None, Some(item)) => (Definition::Zcdp, item),
    };
    let budget = match item.as_value() {
        Some(v) => parse_level_budget(text, v, definition)?,
        None => {
            return Err((
                item.span(),
                PlanErrorKind::BadValue {
                    key: definition.budget_name(),
                    found: raw(text, item),
                    expected: "a decimal > 0 or a fraction string",
                },
            ));
        }
    };
    const METHODS: &str = "\"hc\" (cumulative) or \"hg\" (unattributed)";
    let method = match table.get("method") {
        None => {
            return Err((
                table_span,
                PlanErrorKind::MissingKey {
                    key: "method",
                    what: "method = \"hc\" or \"hg\"",
                },
            ));
        }
        Some(item) => match item.as_str().and_then(Method::parse) {
            Some(m) => m,
            None => {
                return Err((
                    item.span(),
                    PlanErrorKind::BadValue {
                        key: "method",
                        found: raw(text, item),
                        expected: METHODS,
                    },
                ));
            }
        },
    };
    let method = match table.get("tail") {
        None => method,
        Some(item) => {
            let tail = parse_tail(text, item)?;
            if method != Method::Hc {
                return Err((
                    key_span(table, "tail").or(item.span()),
                    PlanErrorKind::BadValue {
                        key: "tail",
                        found: format!("{} with method = \"{}\"", raw(text, item), method.name()),
                        expected: "method = \"hc\" (the tail extends the cumulative histogram)",
                    },
                ));
            }
            Method::HcTail(tail)
        }
    };
    let held = match table.get("held") {
        None => false,
        Some(item) => item.as_bool().ok_or_else(|| {
            (
                item.span(),
                PlanErrorKind::BadValue {
                    key: "held",
                    found: raw(text, item),
                    expected: "held = true or false (whether the operator holds the level's budget)",
                },
            )
        })?,
    };
    Ok(LevelPlan {
        name,
        budget,
        method,
        held,
        line,
    })
}

pub(crate) const TAIL: &str = "tail = { above = 20, groups = 1000 } (or groups = \"auto\"): sizes below `above` as cumulative counts, groups of size `above` or more as the sorted sizes of the `groups` largest groups";

/// `tail = { above = L, groups = m }` (`groups` defaults to [`Tail::DEFAULT`]'s).
pub(crate) fn parse_tail(text: &str, item: &Item) -> Result<Tail, Located> {
    let bad = |found: String| {
        (
            item.span(),
            PlanErrorKind::BadValue {
                key: "tail",
                found,
                expected: TAIL,
            },
        )
    };
    let Some(table) = item.as_inline_table() else {
        return Err(bad(raw(text, item)));
    };
    let mut above = None;
    let mut groups = Tail::DEFAULT.groups;
    for (key, value) in table.iter() {
        let bad_number = |what: &'static str| {
            (
                value.span(),
                PlanErrorKind::BadValue {
                    key: if what == "above" {
                        "tail.above"
                    } else {
                        "tail.groups"
                    },
                    found: one_line(value.to_string().trim()),
                    expected: if what == "above" {
                        "a whole number from 0 to max_size − 1 (the largest size measured in the head is above − 1)"
                    } else {
                        "a whole number from 1 to 10000000 (how many of the largest groups are listed), or \"auto\" (each region's list sized from its own noisy head)"
                    },
                },
            )
        };
        match key {
            "above" => {
                above = Some(
                    value
                        .as_integer()
                        .filter(|n| (0..i64::from(MAX_K)).contains(n))
                        .ok_or_else(|| bad_number("above"))? as Size,
                )
            }
            "groups" => {
                groups = match value.as_str() {
                    Some("auto") => TailLength::Auto,
                    _ => value
                        .as_integer()
                        .and_then(|n| u32::try_from(n).ok())
                        .and_then(|n| TailGroups::new(n).ok())
                        .map(TailLength::Fixed)
                        .ok_or_else(|| bad_number("groups"))?,
                }
            }
            _ => {
                return Err((
                    value.span(),
                    PlanErrorKind::UnknownKey {
                        key: key.to_string(),
                        expected: "above, groups",
                    },
                ));
            }
        }
    }
    match above {
        Some(above) => Ok(Tail { above, groups }),
        None => Err((
            item.span(),
            PlanErrorKind::MissingKey {
                key: "tail.above",
                what: TAIL,
            },
        )),
    }
}
