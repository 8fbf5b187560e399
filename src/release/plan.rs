//! The release plan: the public bound `K`, and per level an exact ε and a method.
//!
//! Written as TOML (the release configuration of the README's data contract):
//!
//! ```toml
//! max_size = 10000        # the public bound K on a group's size
//! [[level]]
//! name = "nation"         # a level name from hierarchy.csv's header, each level once, root first
//! epsilon = 0.2           # decimal > 0, or a fraction string like "1/3"
//! method = "hc"           # "hc" (cumulative) or "hg" (unattributed)
//! ```
//!
//! Extensions: `max_size = { epsilon = 0.001 }` estimates `K` privately with that budget
//! (charged to every region, like a measurement of the root); top-level `consistency`
//! (`"wls"`, the default, or `"topdown"`), `merge` (`"weighted"` or `"average"`, for
//! `topdown`), `hc_fit` and `hg_fit` (`"l1"` or `"l2"`), and a per-level
//! `method = "naive"` for comparisons, and `tuning` (how the plan was chosen:
//! `"public-default"`, `"public"`, `"proxy"`, `"confidential-previews"`; absent reads as
//! `"unknown"`; see [`Tuning`]), which the ledger and the manifest record.
//!
//! Numbers are read from the TOML text itself, never through a float, so `epsilon = 0.1`
//! is exactly 1/10. Every error names the file and line.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use thiserror::Error;
use toml_edit::{Document, Item, Table, Value};

use crate::consistency::{Consistency, ConsistencyOptions, MergeRule};
use crate::data::{Hierarchy, LevelId, NodeId};
use crate::estimate::tail::MAX_GROUPS;
use crate::estimate::{EstimateOptions, IsotonicFit, Method, Tail, TailGroups, TailLength};
use crate::histogram::{Count, Size};
use crate::privacy::{Epsilon, EpsilonError};

pub use super::tuning::Tuning;

/// The largest `K` accepted: a cumulative histogram has `K + 1` cells per region.
pub const MAX_K: Size = 100_000_000;

/// Where the public bound `K` comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MaxSize {
    /// Set by the operator.
    Fixed(Size),
    /// Estimated privately with this budget (Kuo et al. §4.3, footnote).
    Estimate { epsilon: Epsilon },
}

impl MaxSize {
    /// `K` when it is fixed.
    pub fn bound(&self) -> Option<Size> {
        match self {
            MaxSize::Fixed(k) => Some(*k),
            MaxSize::Estimate { .. } => None,
        }
    }
}

/// One level's budget and method. Two levels are equal when their name, ε and method
/// are: where a level was read from does not change the plan.
#[derive(Clone, Debug)]
pub struct LevelPlan {
    name: String,
    epsilon: Epsilon,
    method: Method,
    /// The line of its `[[level]]` header in the plan file (0 when built in code).
    line: usize,
}

impl PartialEq for LevelPlan {
    fn eq(&self, other: &LevelPlan) -> bool {
        self.name == other.name && self.epsilon == other.epsilon && self.method == other.method
    }
}

impl Eq for LevelPlan {}

impl LevelPlan {
    /// The level's name, as in hierarchy.csv's header.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn epsilon(&self) -> &Epsilon {
        &self.epsilon
    }

    pub fn method(&self) -> Method {
        self.method
    }

    /// The line of its `[[level]]` header in the plan file (0 when built in code).
    pub fn line(&self) -> usize {
        self.line
    }
}

/// A complete release plan, valid by construction: every constructor (the TOML reader,
/// [`ReleasePlan::uniform`], [`ReleasePlan::with_budgets`]) and every edit (`set_…`)
/// checks the same rules ([`ReleasePlan::check_rules`]), and an edit that would break one
/// is refused and leaves the plan as it was. The CLI's flags and the TUI's editor build
/// and change plans only through these, so a plan coco accepts is one it can save and
/// load again.
///
/// Two plans are equal when they measure and post-process alike: how they were tuned
/// ([`ReleasePlan::tuning`]) is provenance and is not compared.
#[derive(Clone, Debug)]
pub struct ReleasePlan {
    max_size: MaxSize,
    levels: Vec<LevelPlan>,
    consistency: Consistency,
    merge: MergeRule,
    hc_fit: IsotonicFit,
    hg_fit: IsotonicFit,
    /// How the plan was tuned (provenance, not a rule: see [`Tuning`]).
    tuning: Tuning,
}

impl PartialEq for ReleasePlan {
    fn eq(&self, other: &Self) -> bool {
        let ReleasePlan {
            max_size,
            levels,
            consistency,
            merge,
            hc_fit,
            hg_fit,
            tuning: _,
        } = self;
        *max_size == other.max_size
            && *levels == other.levels
            && *consistency == other.consistency
            && *merge == other.merge
            && *hc_fit == other.hc_fit
            && *hg_fit == other.hg_fit
    }
}

impl Eq for ReleasePlan {}

/// A plan that breaks one of the plan model's rules: what and where.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum PlanRuleError {
    #[error("K = {k}: expected a whole number from 1 to {MAX_K}")]
    MaxSize { k: Size },
    #[error("K estimated with ε = {epsilon}: {reason}")]
    MaxSizeEpsilon { epsilon: String, reason: String },
    #[error("level {level:?}: ε = {epsilon}: {reason}")]
    Epsilon {
        level: String,
        epsilon: String,
        reason: String,
    },
    #[error(
        "level {level:?}: a tail above L = {above} with K = {k}: expected L below K (the tail holds the sizes above L; tail.above below max_size)"
    )]
    TailNotBelowK { level: String, above: Size, k: Size },
    #[error("level {level:?}: a tail above L = {above}: expected L from 0 to {}", MAX_K - 1)]
    TailAbove { level: String, above: Size },
    /// Raised where a level's `m` is typed as a number ([`tail_groups`]): a [`Tail`]
    /// holds a [`TailGroups`], in range by construction.
    #[error(
        "level {level:?}: a tail of {groups} groups: expected a whole number from 1 to {MAX_GROUPS}"
    )]
    TailGroups { level: String, groups: u32 },
    #[error("{given} budget(s) for {levels} level(s) ({names}): give one ε per level, root first")]
    LevelCount {
        given: usize,
        levels: usize,
        names: String,
    },
    #[error("no level {index}: the plan has {levels} level(s)")]
    NoSuchLevel { index: usize, levels: usize },
}

impl PlanRuleError {
    /// The level the rule is about, by name, if any.
    pub fn level(&self) -> Option<&str> {
        match self {
            PlanRuleError::Epsilon { level, .. }
            | PlanRuleError::TailNotBelowK { level, .. }
            | PlanRuleError::TailAbove { level, .. }
            | PlanRuleError::TailGroups { level, .. } => Some(level),
            _ => None,
        }
    }
}

/// A level's `m` typed as a number (the TUI's Budget screen): the [`TailGroups`], or
/// the plan model's [`PlanRuleError::TailGroups`] naming the level.
pub fn tail_groups(level: &str, groups: u32) -> Result<TailGroups, PlanRuleError> {
    TailGroups::new(groups).map_err(|e| PlanRuleError::TailGroups {
        level: level.to_string(),
        groups: e.groups,
    })
}

/// A plan file that cannot be used: where, and what is wrong.
#[derive(Debug, Error)]
#[error("{}{}: {kind}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct PlanError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub kind: PlanErrorKind,
}

#[derive(Debug, Error)]
pub enum PlanErrorKind {
    #[error("cannot read the file: {0}")]
    Read(std::io::Error),
    #[error(
        "file not found: expected a release plan (TOML), e.g. one written by `coco plan DIR --out plan.toml`"
    )]
    NotFound,
    #[error("invalid UTF-8 (byte 0x{byte:02x}): expected UTF-8 text (save the file as UTF-8)")]
    NotUtf8 { byte: u8 },
    #[error("not valid TOML: {0}")]
    Syntax(String),
    #[error("unknown key {key:?}: expected one of {expected}")]
    UnknownKey { key: String, expected: &'static str },
    #[error("missing key {key:?} ({what})")]
    MissingKey {
        key: &'static str,
        what: &'static str,
    },
    #[error("{key} = {found}: expected {expected}")]
    BadValue {
        key: &'static str,
        found: String,
        expected: &'static str,
    },
    #[error("{0}")]
    Epsilon(#[from] EpsilonError),
    #[error("max_size = {found}: expected a whole number from 1 to {MAX_K}")]
    BadMaxSize { found: String },
    #[error("no [[level]] tables: the plan needs one per level of the hierarchy ({expected})")]
    NoLevels { expected: String },
    #[error("level {name:?} appears twice (first at line {first_line})")]
    DuplicateLevel { name: String, first_line: usize },
    #[error("level {name:?} is not in the hierarchy: expected one of {expected}")]
    UnknownLevel { name: String, expected: String },
    #[error("level {name:?} is missing: every level needs an ε and a method ({expected})")]
    MissingLevel { name: String, expected: String },
    #[error("level {name:?} is out of order: list levels root first ({expected})")]
    LevelOrder { name: String, expected: String },
    #[error("{0}")]
    Rule(#[from] PlanRuleError),
}

const TOP_KEYS: &str = "max_size, level, consistency, merge, hc_fit, hg_fit, tuning";
const LEVEL_KEYS: &str = "name, epsilon, method, tail";

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

    /// The rules every plan keeps, whatever built or changed it: `K` from 1 to
    /// [`MAX_K`] (or estimated with a usable ε), every level's ε usable by its method's
    /// noise, every tail's `L` below `K` (its group count is in range by its type,
    /// [`TailGroups`]).
    pub fn check_rules(&self) -> Result<(), PlanRuleError> {
        let k = match &self.max_size {
            MaxSize::Fixed(k) => {
                if !(1..=MAX_K).contains(k) {
                    return Err(PlanRuleError::MaxSize { k: *k });
                }
                Some(*k)
            }
            MaxSize::Estimate { epsilon } => {
                crate::noise::DiscreteLaplace::new(crate::estimate::max_size::SENSITIVITY, epsilon)
                    .map_err(|e| PlanRuleError::MaxSizeEpsilon {
                        epsilon: epsilon.to_string(),
                        reason: e.to_string(),
                    })?;
                None
            }
        };
        for level in &self.levels {
            crate::noise::DiscreteLaplace::new(level.method.sensitivity(), &level.epsilon)
                .map_err(|e| PlanRuleError::Epsilon {
                    level: level.name.clone(),
                    epsilon: level.epsilon.to_string(),
                    reason: e.to_string(),
                })?;
            if let Some(t) = level.method.tail() {
                if t.above >= MAX_K {
                    return Err(PlanRuleError::TailAbove {
                        level: level.name.clone(),
                        above: t.above,
                    });
                }
                if let Some(k) = k
                    && t.above >= k
                {
                    return Err(PlanRuleError::TailNotBelowK {
                        level: level.name.clone(),
                        above: t.above,
                        k,
                    });
                }
            }
        }
        Ok(())
    }

    /// Applies `change` to a copy, checks the rules and keeps the copy only if they
    /// hold: a refused edit leaves the plan as it was.
    fn edit(&mut self, change: impl FnOnce(&mut ReleasePlan)) -> Result<(), PlanRuleError> {
        let mut next = self.clone();
        change(&mut next);
        next.check_rules()?;
        *self = next;
        Ok(())
    }

    fn level_index(&self, level: LevelId) -> Result<usize, PlanRuleError> {
        if level.0 < self.levels.len() {
            Ok(level.0)
        } else {
            Err(PlanRuleError::NoSuchLevel {
                index: level.0,
                levels: self.levels.len(),
            })
        }
    }

    /// Sets one level's ε.
    pub fn set_epsilon(&mut self, level: LevelId, epsilon: Epsilon) -> Result<(), PlanRuleError> {
        let i = self.level_index(level)?;
        self.edit(|p| p.levels[i].epsilon = epsilon)
    }

    /// Sets every level's ε at once, root first.
    pub fn set_budgets(&mut self, budgets: Vec<Epsilon>) -> Result<(), PlanRuleError> {
        if budgets.len() != self.levels.len() {
            return Err(PlanRuleError::LevelCount {
                given: budgets.len(),
                levels: self.levels.len(),
                names: self.level_names().join(", "),
            });
        }
        self.edit(|p| {
            for (l, e) in p.levels.iter_mut().zip(budgets) {
                l.epsilon = e;
            }
        })
    }

    /// Sets one level's method (with its tail, for `hc` with a tail).
    pub fn set_method(&mut self, level: LevelId, method: Method) -> Result<(), PlanRuleError> {
        let i = self.level_index(level)?;
        self.edit(|p| p.levels[i].method = method)
    }

    /// Sets the method of every level.
    pub fn set_method_everywhere(&mut self, method: Method) -> Result<(), PlanRuleError> {
        self.edit(|p| {
            for l in &mut p.levels {
                l.method = method;
            }
        })
    }

    /// Sets where `K` comes from.
    pub fn set_max_size(&mut self, max_size: MaxSize) -> Result<(), PlanRuleError> {
        self.edit(|p| p.max_size = max_size)
    }

    pub fn set_consistency(&mut self, consistency: Consistency) {
        self.consistency = consistency;
    }

    pub fn set_merge(&mut self, merge: MergeRule) {
        self.merge = merge;
    }

    /// The isotonic fits of `hc` and `hg` measurements.
    pub fn set_fits(&mut self, hc_fit: IsotonicFit, hg_fit: IsotonicFit) {
        self.hc_fit = hc_fit;
        self.hg_fit = hg_fit;
    }

    pub fn max_size(&self) -> &MaxSize {
        &self.max_size
    }

    /// The levels, root first (after [`ReleasePlan::validate`], in hierarchy order).
    pub fn levels(&self) -> &[LevelPlan] {
        &self.levels
    }

    fn level_names(&self) -> Vec<&str> {
        self.levels.iter().map(|l| l.name.as_str()).collect()
    }

    pub fn consistency(&self) -> Consistency {
        self.consistency
    }

    pub fn merge(&self) -> MergeRule {
        self.merge
    }

    pub fn hc_fit(&self) -> IsotonicFit {
        self.hc_fit
    }

    /// How the plan was tuned (see [`Tuning`]).
    pub fn tuning(&self) -> Tuning {
        self.tuning
    }

    /// Records how the plan was tuned; no rule depends on it.
    pub fn set_tuning(&mut self, tuning: Tuning) {
        self.tuning = tuning;
    }

    pub fn hg_fit(&self) -> IsotonicFit {
        self.hg_fit
    }

    /// Checks the plan against the hierarchy: every level exactly once, root first.
    pub fn validate(&self, hierarchy: &Hierarchy, file: &Path) -> Result<(), PlanError> {
        let expected = hierarchy.level_names().join(", ");
        let err = |line: Option<usize>, kind| PlanError {
            file: file.to_path_buf(),
            line: line.filter(|&l| l > 0),
            kind,
        };
        if self.levels.is_empty() {
            return Err(err(None, PlanErrorKind::NoLevels { expected }));
        }
        for (i, level) in self.levels.iter().enumerate() {
            if let Some(first) = self.levels[..i].iter().find(|l| l.name == level.name) {
                return Err(err(
                    Some(level.line),
                    PlanErrorKind::DuplicateLevel {
                        name: level.name.clone(),
                        first_line: first.line,
                    },
                ));
            }
            if hierarchy.level_by_name(&level.name).is_none() {
                return Err(err(
                    Some(level.line),
                    PlanErrorKind::UnknownLevel {
                        name: level.name.clone(),
                        expected: expected.clone(),
                    },
                ));
            }
        }
        for name in hierarchy.level_names() {
            if !self.levels.iter().any(|l| &l.name == name) {
                return Err(err(
                    None,
                    PlanErrorKind::MissingLevel {
                        name: name.clone(),
                        expected: expected.clone(),
                    },
                ));
            }
        }
        for (level, name) in self.levels.iter().zip(hierarchy.level_names()) {
            if &level.name != name {
                return Err(err(
                    Some(level.line),
                    PlanErrorKind::LevelOrder {
                        name: level.name.clone(),
                        expected: expected.clone(),
                    },
                ));
            }
        }
        Ok(())
    }

    /// Total ε: the levels' budgets plus the budget for estimating `K`, if any
    /// (sequential composition; see [`crate::privacy::guarantee`]).
    pub fn total_epsilon(&self) -> Option<Epsilon> {
        let k = match &self.max_size {
            MaxSize::Estimate { epsilon } => Some(epsilon),
            MaxSize::Fixed(_) => None,
        };
        Epsilon::sum(self.levels.iter().map(|l| &l.epsilon).chain(k))
    }

    /// The plan for level `level` (after [`ReleasePlan::validate`], levels are in
    /// hierarchy order).
    pub fn level(&self, level: LevelId) -> &LevelPlan {
        &self.levels[level.0]
    }

    pub fn consistency_options(&self) -> ConsistencyOptions {
        ConsistencyOptions {
            merge: self.merge,
            projection_fit: self.hc_fit,
            run_budget: crate::consistency::wls::RunBudget::UNBOUNDED,
            checked: true,
        }
    }

    pub fn estimate_options(&self) -> EstimateOptions {
        EstimateOptions {
            keep_raw: true,
            cumulative_fit: self.hc_fit,
            unattributed_fit: self.hg_fit,
        }
    }

    /// A uniform plan: `total` split evenly over the levels, one method everywhere.
    pub fn uniform(
        hierarchy: &Hierarchy,
        total: &Epsilon,
        method: Method,
        max_size: MaxSize,
    ) -> Result<ReleasePlan, PlanRuleError> {
        let shares = allocate(total, hierarchy.depth(), Allocation::Uniform);
        Self::with_budgets(hierarchy, shares, method, max_size)
    }

    /// A plan with the given per-level budgets (root first) and one method everywhere.
    pub fn with_budgets(
        hierarchy: &Hierarchy,
        budgets: Vec<Epsilon>,
        method: Method,
        max_size: MaxSize,
    ) -> Result<ReleasePlan, PlanRuleError> {
        if budgets.len() != hierarchy.depth() {
            return Err(PlanRuleError::LevelCount {
                given: budgets.len(),
                levels: hierarchy.depth(),
                names: hierarchy.level_names().join(", "),
            });
        }
        let levels = hierarchy
            .level_names()
            .iter()
            .zip(budgets)
            .map(|(name, epsilon)| LevelPlan {
                name: name.clone(),
                epsilon,
                method,
                line: 0,
            })
            .collect();
        let defaults = EstimateOptions::default();
        let plan = ReleasePlan {
            max_size,
            levels,
            consistency: Consistency::default(),
            merge: MergeRule::default(),
            hc_fit: defaults.cumulative_fit,
            hg_fit: defaults.unattributed_fit,
            tuning: Tuning::Unknown,
        };
        plan.check_rules()?;
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
            MaxSize::Estimate { epsilon } => {
                let _ = writeln!(
                    s,
                    "max_size = {{ epsilon = {} }}  # estimate K privately with this budget",
                    toml_epsilon(epsilon)
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
        for (i, level) in self.levels.iter().enumerate() {
            s.push('\n');
            if let Some(note) = notes.get(i) {
                for line in wrap_comment(note, 88) {
                    let _ = writeln!(s, "# {line}");
                }
            }
            let _ = write!(
                s,
                "[[level]]\nname = {}\nepsilon = {}\nmethod = \"{}\"\n",
                toml_string(&level.name),
                toml_epsilon(&level.epsilon),
                level.method.name()
            );
            if let Some(t) = level.method.tail() {
                let _ = match t.groups {
                    TailLength::Fixed(m) => writeln!(
                        s,
                        "tail = {{ above = {}, groups = {m} }}  # sizes above {} as the {m} largest groups' sorted sizes (same ε)",
                        t.above, t.above
                    ),
                    TailLength::Auto => writeln!(
                        s,
                        "tail = {{ above = {}, groups = \"auto\" }}  # sizes from {} on as each region's listed groups, as many as its noisy head says (same ε)",
                        t.above, t.above
                    ),
                };
            }
        }
        s
    }

    /// Noise samples each level costs: per region K+1 for `hc` and `naive`, G for
    /// `hg`, L + min(m, G) for `hc` with a tail (at most L + min(G, K + 1 − L) for an
    /// `auto` tail); `groups` gives each region's public G.
    pub fn noise_samples(
        &self,
        hierarchy: &Hierarchy,
        groups: impl Fn(NodeId) -> Count,
        max_size: Size,
    ) -> Vec<u64> {
        self.levels
            .iter()
            .zip(hierarchy.levels())
            .map(|(l, level)| {
                hierarchy
                    .level_nodes(level)
                    .map(|id| l.method.noise_samples(groups(id), max_size))
                    .fold(0u64, u64::saturating_add)
            })
            .collect()
    }
}

/// `text` on lines of at most `width` characters (words longer than that on their own
/// line), with line breaks replaced so each stays one comment line.
pub(crate) fn wrap_comment(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

fn fit_name(fit: IsotonicFit) -> &'static str {
    match fit {
        IsotonicFit::L1 => "l1",
        IsotonicFit::L2 => "l2",
    }
}

/// An ε as TOML: a bare decimal when it is exact and short enough for the reader
/// (17 significant digits), else a quoted fraction. Every ε the plan rules accept
/// (terms up to 10^18, what the noise can use) is read back exactly.
fn toml_epsilon(e: &Epsilon) -> String {
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

fn toml_string(s: &str) -> String {
    toml_edit::Value::from(s).to_string().trim().to_string()
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

fn key_span(table: &Table, key: &str) -> Option<std::ops::Range<usize>> {
    table.key(key).and_then(|k| k.span())
}

/// The value's text as written in the file.
fn raw(text: &str, item: &Item) -> String {
    let text = item
        .span()
        .and_then(|s| text.get(s))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| item.to_string().trim().to_string());
    one_line(&text)
}

/// A value for a one-line message: its first line, cut after 40 characters (a table
/// or an array can span many lines).
fn one_line(text: &str) -> String {
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
type Span = Option<std::ops::Range<usize>>;

type Located = (Span, PlanErrorKind);

fn parse_max_size(text: &str, item: &Item) -> Result<MaxSize, Located> {
    if let Some(table) = item.as_inline_table() {
        let mut epsilon = None;
        for (key, value) in table.iter() {
            if key != "epsilon" {
                return Err((
                    value.span(),
                    PlanErrorKind::UnknownKey {
                        key: key.to_string(),
                        expected: "epsilon (max_size = { epsilon = 0.001 })",
                    },
                ));
            }
            epsilon = Some(parse_epsilon(text, value)?);
        }
        return match epsilon {
            Some(epsilon) => Ok(MaxSize::Estimate { epsilon }),
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

fn parse_epsilon(text: &str, value: &Value) -> Result<Epsilon, Located> {
    let span = value.span();
    let parsed = match value {
        Value::String(s) => Epsilon::parse(s.value()),
        Value::Float(_) | Value::Integer(_) => {
            let raw_text = span
                .clone()
                .and_then(|s| text.get(s))
                .unwrap_or("")
                .trim()
                .replace('_', "");
            Epsilon::parse(&raw_text)
        }
        other => {
            return Err((
                span,
                PlanErrorKind::BadValue {
                    key: "epsilon",
                    found: one_line(other.to_string().trim()),
                    expected: "a decimal > 0 like 0.25 or a fraction string like \"1/3\"",
                },
            ));
        }
    };
    parsed.map_err(|e| (span, PlanErrorKind::Epsilon(e)))
}

fn parse_level(text: &str, table: &Table) -> Result<LevelPlan, Located> {
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
    let epsilon = match table.get("epsilon") {
        None => {
            return Err((
                table_span,
                PlanErrorKind::MissingKey {
                    key: "epsilon",
                    what: "the level's budget, e.g. epsilon = 0.25 or \"1/3\"",
                },
            ));
        }
        Some(item) => match item.as_value() {
            Some(v) => parse_epsilon(text, v)?,
            None => {
                return Err((
                    item.span(),
                    PlanErrorKind::BadValue {
                        key: "epsilon",
                        found: raw(text, item),
                        expected: "a decimal > 0 or a fraction string",
                    },
                ));
            }
        },
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
    Ok(LevelPlan {
        name,
        epsilon,
        method,
        line,
    })
}

const TAIL: &str = "tail = { above = 20, groups = 1000 } (or groups = \"auto\"): sizes above `above` measured as the sorted sizes of the `groups` largest groups";

/// `tail = { above = L, groups = m }` (`groups` defaults to [`Tail::DEFAULT`]'s).
fn parse_tail(text: &str, item: &Item) -> Result<Tail, Located> {
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

/// How a total budget is split over the levels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Allocation {
    /// Equal shares (the paper).
    Uniform,
    /// Each level gets `ratio` times its parent's share (Qardaji et al. §3.5 use the
    /// cube root of the branching factor, so lower levels get more).
    Geometric { ratio: Epsilon },
}

/// Splits `total` over `levels` levels, root first. Shares are exact and sum to
/// `total` exactly: geometric shares above the leaves are rounded down to six
/// significant digits (readable budgets) and the leaves get the rest.
pub fn allocate(total: &Epsilon, levels: usize, allocation: Allocation) -> Vec<Epsilon> {
    assert!(levels > 0, "a hierarchy has at least one level");
    match allocation {
        Allocation::Uniform => (0..levels)
            .map(|_| {
                total
                    .mul_ratio(1, levels as u64)
                    .expect("a positive share of a positive total")
            })
            .collect(),
        Allocation::Geometric { ratio } => {
            // Weights r^0 .. r^(L-1), share_l = total × r^l / Σ r^i.
            let mut weights: Vec<Epsilon> = Vec::with_capacity(levels);
            let one = Epsilon::from_ratio(1, 1).expect("1 is positive");
            weights.push(one);
            for l in 1..levels {
                let prev = &weights[l - 1];
                weights.push(prev.mul_big(&ratio));
            }
            let sum = Epsilon::sum(&weights).expect("non-empty");
            let mut shares: Vec<Epsilon> = Vec::with_capacity(levels);
            for w in &weights[..levels - 1] {
                let exact = total.mul_big(w).div_big(&sum);
                shares.push(exact.round_down_significant(6));
            }
            let used = Epsilon::sum(&shares);
            let rest = match used {
                None => total.clone(),
                Some(u) => total
                    .checked_sub(&u)
                    .expect("rounded-down shares leave a positive rest"),
            };
            shares.push(rest);
            shares
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tests::tiny;

    fn parse(text: &str) -> Result<ReleasePlan, PlanError> {
        ReleasePlan::parse(text, Path::new("plan.toml"))
    }

    const GOOD: &str = r#"max_size = 100  # K
[[level]]
name = "nation"
epsilon = 0.1
method = "hc"

[[level]]
name = "state"
epsilon = "1/3"
method = "hg"

[[level]]
name = "county"
epsilon = 0.3333333333333333
method = "hc"
"#;

    #[test]
    fn parses_the_contract_example() {
        let plan = parse(GOOD).unwrap();
        assert_eq!(plan.max_size, MaxSize::Fixed(100));
        assert_eq!(plan.levels.len(), 3);
        assert_eq!(plan.levels[0].epsilon, Epsilon::from_ratio(1, 10).unwrap());
        assert_eq!(plan.levels[1].epsilon, Epsilon::from_ratio(1, 3).unwrap());
        assert_eq!(plan.levels[2].epsilon.to_string(), "0.3333333333333333");
        assert_eq!(plan.levels[1].method, Method::Hg);
        assert_eq!(plan.levels[1].line, 7);
        plan.validate(&tiny().hierarchy, Path::new("plan.toml"))
            .unwrap();
        let total = plan.total_epsilon().unwrap();
        assert_eq!(
            total,
            Epsilon::parse("0.1")
                .unwrap()
                .add(&Epsilon::parse("1/3").unwrap())
                .add(&Epsilon::parse("0.3333333333333333").unwrap())
        );
        // Round trip through text.
        let again = parse(&plan.to_toml()).unwrap();
        assert_eq!(
            again
                .levels
                .iter()
                .map(|l| (&l.name, &l.epsilon, l.method))
                .collect::<Vec<_>>(),
            plan.levels
                .iter()
                .map(|l| (&l.name, &l.epsilon, l.method))
                .collect::<Vec<_>>()
        );
        assert_eq!(again.max_size, plan.max_size);
    }

    #[test]
    fn extensions() {
        let text = "max_size = { epsilon = 0.001 }\nconsistency = \"topdown\"\nmerge = \"average\"\nhc_fit = \"l2\"\n[[level]]\nname = \"nation\"\nepsilon = 1\nmethod = \"naive\"\n";
        let plan = parse(text).unwrap();
        assert_eq!(
            plan.max_size,
            MaxSize::Estimate {
                epsilon: Epsilon::from_ratio(1, 1000).unwrap()
            }
        );
        assert_eq!(plan.merge, MergeRule::Average);
        assert_eq!(plan.hc_fit, IsotonicFit::L2);
        assert_eq!(plan.levels[0].method, Method::Naive);
        assert_eq!(
            plan.total_epsilon().unwrap(),
            Epsilon::parse("1.001").unwrap()
        );
        let again = parse(&plan.to_toml()).unwrap();
        assert_eq!(
            again,
            ReleasePlan {
                levels: again.levels.clone(),
                ..plan.clone()
            }
        );
    }

    #[test]
    fn tuning_is_read_written_and_defaults_to_unknown() {
        let text = "max_size = 100\n[[level]]\nname = \"nation\"\nepsilon = 1\nmethod = \"hc\"\n";
        let mut plan = parse(text).unwrap();
        assert_eq!(plan.tuning(), Tuning::Unknown);
        assert!(!plan.to_toml().contains("tuning"));
        for t in Tuning::ALL {
            plan.set_tuning(t);
            assert_eq!(parse(&plan.to_toml()).unwrap().tuning(), t);
        }
        let m = parse(&format!("tuning = \"confidential\"\n{text}"))
            .unwrap_err()
            .to_string();
        assert!(
            m.starts_with("plan.toml:1: tuning = \"confidential\": expected \"public-default\""),
            "{m}"
        );
    }

    #[test]
    fn tails() {
        let text = GOOD.replace(
            "epsilon = 0.1\nmethod = \"hc\"",
            "epsilon = 0.1\nmethod = \"hc\"\ntail = { above = 20, groups = 500 }",
        );
        let plan = parse(&text).unwrap();
        assert_eq!(
            plan.levels[0].method,
            Method::HcTail(Tail {
                above: 20,
                groups: TailLength::Fixed(TailGroups::new(500).unwrap())
            })
        );
        assert_eq!(parse(&plan.to_toml()).unwrap().levels, {
            let mut l = plan.levels.clone();
            // Lines differ after rewriting; compare the rest.
            for (a, b) in l.iter_mut().zip(&parse(&plan.to_toml()).unwrap().levels) {
                a.line = b.line;
            }
            l
        });
        // `groups` has a default.
        let plan = parse(&GOOD.replace(
            "method = \"hc\"\n\n[[level]]\nname = \"state\"",
            "method = \"hc\"\ntail = { above = 7 }\n\n[[level]]\nname = \"state\"",
        ))
        .unwrap();
        assert_eq!(
            plan.levels[0].method,
            Method::HcTail(Tail {
                above: 7,
                groups: Tail::DEFAULT.groups
            })
        );
        let with = |tail: &str| {
            message(&GOOD.replace(
                "epsilon = 0.1\nmethod = \"hc\"",
                &format!("epsilon = 0.1\nmethod = \"hc\"\n{tail}"),
            ))
        };
        assert_eq!(
            with("tail = { above = 100 }"),
            "plan.toml:2: level \"nation\": a tail above L = 100 with K = 100: expected L below K (the tail holds the sizes above L; tail.above below max_size)"
        );
        assert!(
            with("tail = { groups = 5 }").starts_with("plan.toml:6: missing key \"tail.above\"")
        );
        assert!(
            with("tail = { above = 5, groups = 0 }").starts_with(
                "plan.toml:6: tail.groups = 0: expected a whole number from 1 to 10000000"
            ),
            "{}",
            with("tail = { above = 5, groups = 0 }")
        );
        assert!(
            with("tail = { above = -1 }")
                .starts_with("plan.toml:6: tail.above = -1: expected a whole number from 0")
        );
        assert!(
            with("tail = { above = 5, size = 2 }").starts_with("plan.toml:6: unknown key \"size\"")
        );
        assert!(
            with("tail = 20").starts_with("plan.toml:6: tail = 20: expected tail = { above = 20")
        );
        let m = message(&GOOD.replace("method = \"hg\"", "method = \"hg\"\ntail = { above = 5 }"));
        assert_eq!(
            m,
            "plan.toml:11: tail = { above = 5 } with method = \"hg\": expected method = \"hc\" (the tail extends the cumulative histogram)"
        );
    }

    fn message(text: &str) -> String {
        match parse(text) {
            Err(e) => e.to_string(),
            Ok(plan) => plan
                .validate(&tiny().hierarchy, Path::new("plan.toml"))
                .unwrap_err()
                .to_string(),
        }
    }

    #[test]
    fn errors_name_the_line() {
        let m = message(&GOOD.replace("method = \"hg\"", "method = \"hx\""));
        assert_eq!(
            m,
            "plan.toml:10: method = \"hx\": expected \"hc\" (cumulative) or \"hg\" (unattributed)"
        );
        let m = message(&GOOD.replace("epsilon = 0.1", "epsilon = -0.1"));
        assert!(
            m.starts_with("plan.toml:4: ε \"-0.1\" is not positive"),
            "{m}"
        );
        let m = message(&GOOD.replace("epsilon = 0.1", "epsilon = 0"));
        assert!(m.starts_with("plan.toml:4: ε \"0\" is not positive"), "{m}");
        let m = message(&GOOD.replace("epsilon = 0.1", "epsilon = nan"));
        assert!(
            m.starts_with("plan.toml:4: ε \"nan\" is not a number"),
            "{m}"
        );
        let m = message(&GOOD.replace("epsilon = 0.1", "epsilon = inf"));
        assert!(
            m.starts_with("plan.toml:4: ε \"inf\" is not a number"),
            "{m}"
        );
        let m = message(&GOOD.replace("epsilon = 0.1", "epsilon = 1e-300"));
        assert!(
            m.starts_with("plan.toml:4: ε \"1e-300\" is out of range"),
            "{m}"
        );
        let m = message(&GOOD.replace("epsilon = 0.1", "epsilon = \"1/0\""));
        assert!(
            m.starts_with("plan.toml:4: ε \"1/0\" has a zero denominator"),
            "{m}"
        );
        let m = message(&GOOD.replace("epsilon = 0.1", "epsilon = 0.1\nepsilom = 2"));
        assert!(m.starts_with("plan.toml:5: unknown key \"epsilom\""), "{m}");
        let m = message(&GOOD.replace("max_size = 100", "max_size = 0"));
        assert_eq!(
            m,
            "plan.toml:1: max_size = 0: expected a whole number from 1 to 100000000"
        );
        let m = message(&GOOD.replace("max_size = 100", "max_size = 100000001"));
        assert!(m.starts_with("plan.toml:1: max_size = 100000001"), "{m}");
        let m = message(&GOOD.replace("max_size = 100  # K", "maxsize = 100"));
        assert!(m.starts_with("plan.toml:1: unknown key \"maxsize\""), "{m}");
        let m = message(&GOOD.replace("name = \"state\"", "name = \"nation\""));
        assert_eq!(
            m,
            "plan.toml:7: level \"nation\" appears twice (first at line 2)"
        );
        let m = message(&GOOD.replace("name = \"state\"", "name = \"province\""));
        assert_eq!(
            m,
            "plan.toml:7: level \"province\" is not in the hierarchy: expected one of nation, state, county"
        );
        let cut = GOOD.split("[[level]]\nname = \"county\"").next().unwrap();
        let m = message(cut);
        assert_eq!(
            m,
            "plan.toml: level \"county\" is missing: every level needs an ε and a method (nation, state, county)"
        );
        let swapped = GOOD
            .replace("name = \"nation\"", "name = \"X\"")
            .replace("name = \"state\"", "name = \"nation\"")
            .replace("name = \"X\"", "name = \"state\"");
        assert!(message(&swapped).starts_with("plan.toml:2: level \"state\" is out of order"));
        let m = message("max_size = 5\n[[level]\n");
        assert!(m.starts_with("plan.toml:2: not valid TOML"), "{m}");
        let m = message("max_size = 5\n");
        assert!(m.contains("no [[level]] tables"), "{m}");
        let m = message("[[level]]\nname = \"nation\"\nepsilon = 1\nmethod = \"hc\"\n");
        assert!(m.contains("missing key \"max_size\""), "{m}");
    }

    #[test]
    fn allocations_sum_exactly() {
        let total = Epsilon::parse("1").unwrap();
        let u = allocate(&total, 3, Allocation::Uniform);
        assert_eq!(u, vec![Epsilon::from_ratio(1, 3).unwrap(); 3]);
        let g = allocate(
            &total,
            3,
            Allocation::Geometric {
                ratio: Epsilon::parse("2").unwrap(),
            },
        );
        assert_eq!(Epsilon::sum(&g).unwrap(), total);
        assert_eq!(g[0].to_string(), "0.142857");
        assert_eq!(g[1].to_string(), "0.285714");
        assert_eq!(g[2].to_string(), "0.571429");
        let third = Epsilon::parse("1/3").unwrap();
        let g = allocate(
            &third,
            4,
            Allocation::Geometric {
                ratio: Epsilon::parse("1.26").unwrap(),
            },
        );
        assert_eq!(Epsilon::sum(&g).unwrap(), third);
        assert!(g.iter().all(Epsilon::within_text_bounds));
        assert!(g.windows(2).all(|w| w[0] < w[1]));
    }
}
