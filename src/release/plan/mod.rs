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
use crate::noise::Noise;
use crate::privacy::{Budget, Definition, Epsilon, EpsilonError, Loss, Ratio, Unit};

pub mod defaults;
pub mod tuning;

pub use tuning::{Tuning, TuningSource};

pub use crate::estimate::max_size::MAX_K;

/// Where the public bound `K` comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MaxSize {
    /// Set by the operator.
    Fixed(Size),
    /// Estimated privately with this budget (Kuo et al. §4.3, footnote).
    Estimate { budget: Loss },
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
    /// The level's budget: an ε or a ρ, as the plan's definition says, or none
    /// ([`LevelBudget::Unmeasured`]).
    budget: LevelBudget,
    method: Method,
    /// Held by the operator: the TUI's Budget screen rebalances only the levels not
    /// held when the total or another level changes (`held = true` in the plan file).
    /// An editing aid, not a measurement: it does not change what is drawn.
    held: bool,
    /// The line of its `[[level]]` header in the plan file (0 when built in code).
    line: usize,
}

impl PartialEq for LevelPlan {
    fn eq(&self, other: &LevelPlan) -> bool {
        self.name == other.name && self.budget == other.budget && self.method == other.method
    }
}

impl Eq for LevelPlan {}

impl LevelPlan {
    /// The level's name, as in hierarchy.csv's header.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The level's budget, in the plan's definition.
    pub fn budget(&self) -> &LevelBudget {
        &self.budget
    }

    /// The level's loss when it is measured; `None` for a level left unmeasured.
    pub fn loss(&self) -> Option<&Loss> {
        self.budget.loss()
    }

    /// Whether the level's regions get a noisy measurement.
    pub fn is_measured(&self) -> bool {
        self.budget.is_measured()
    }

    pub fn method(&self) -> Method {
        self.method
    }

    /// The line of its `[[level]]` header in the plan file (0 when built in code).
    pub fn line(&self) -> usize {
        self.line
    }

    /// Whether the operator holds the level's budget (see [`ReleasePlan::set_held`]).
    pub fn held(&self) -> bool {
        self.held
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
    /// The public proxy the plan was tuned on, when it was (provenance, like `tuning`).
    tuning_source: Option<TuningSource>,
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
            tuning_source: _,
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
    #[error(
        "K = {k}: expected a whole number from 1 to {}",
        crate::units::thousands(u128::from(MAX_K))
    )]
    MaxSize { k: Size },
    #[error("K estimated with {budget}: {reason}")]
    MaxSizeEpsilon { budget: String, reason: String },
    #[error("level {level:?}: {budget}: {reason}")]
    Epsilon {
        level: String,
        /// `ε = …` or `ρ = …`.
        budget: String,
        reason: String,
    },
    /// A plan is stated in one privacy definition: every level's budget and `K`'s.
    #[error(
        "{}: {budget}, in a plan whose first level is in {}: give every budget in one definition (epsilon for pure DP, rho for zCDP)",
        level.as_ref().map_or_else(|| "K's estimate".to_string(), |l| format!("level {l:?}")),
        expected.describe()
    )]
    MixedDefinitions {
        /// The level whose budget is in another definition; `None` for K's estimate.
        level: Option<String>,
        budget: String,
        expected: Definition,
    },
    #[error(
        "level {level:?}: a tail from L = {above} with K = {k}: expected L below K (the tail lists the groups of size L or more; tail.above below max_size)"
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
    /// The leaf level has nothing below it to estimate its regions from.
    #[error(
        "level {level:?}: {budget}: the leaf level must be measured (an unmeasured level is estimated from its children, and the leaves have none): give it a budget greater than 0"
    )]
    LeafUnmeasured { level: String, budget: String },
    #[error(
        "every level has budget 0 ({names}): nothing would be measured; give the leaf level at least a budget greater than 0"
    )]
    NothingMeasured { names: String },
}

impl PlanRuleError {
    /// The level the rule is about, by name, if any.
    pub fn level(&self) -> Option<&str> {
        match self {
            PlanRuleError::MixedDefinitions {
                level: Some(level), ..
            }
            | PlanRuleError::Epsilon { level, .. }
            | PlanRuleError::TailNotBelowK { level, .. }
            | PlanRuleError::TailAbove { level, .. }
            | PlanRuleError::TailGroups { level, .. }
            | PlanRuleError::LeafUnmeasured { level, .. } => Some(level),
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

impl ReleasePlan {
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
            MaxSize::Estimate { budget } => {
                Noise::for_loss(budget, crate::estimate::max_size::SENSITIVITY).map_err(|e| {
                    PlanRuleError::MaxSizeEpsilon {
                        budget: budget.labelled(),
                        reason: e.to_string(),
                    }
                })?;
                None
            }
        };
        let definition = self.definition();
        let mixed = |level: Option<String>, budget: &Loss| PlanRuleError::MixedDefinitions {
            level,
            budget: budget.labelled(),
            expected: definition,
        };
        if let MaxSize::Estimate { budget } = &self.max_size
            && budget.definition() != definition
        {
            return Err(mixed(None, budget));
        }
        if !self.levels.is_empty() && self.levels.iter().all(|l| !l.is_measured()) {
            return Err(PlanRuleError::NothingMeasured {
                names: self.level_names().join(", "),
            });
        }
        if let Some(leaf) = self.levels.last()
            && !leaf.is_measured()
        {
            return Err(PlanRuleError::LeafUnmeasured {
                level: leaf.name.clone(),
                budget: leaf.budget.labelled(),
            });
        }
        for level in &self.levels {
            if level.budget.definition() != definition {
                return Err(PlanRuleError::MixedDefinitions {
                    level: Some(level.name.clone()),
                    budget: level.budget.labelled(),
                    expected: definition,
                });
            }
            let Some(loss) = level.loss() else {
                continue;
            };
            Noise::for_loss(loss, level.method.sensitivity_norms()).map_err(|e| {
                PlanRuleError::Epsilon {
                    level: level.name.clone(),
                    budget: loss.labelled(),
                    reason: e.to_string(),
                }
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

    /// Sets one level's budget (in the plan's definition; see
    /// [`ReleasePlan::set_definition`] to change it).
    pub fn set_budget(
        &mut self,
        level: LevelId,
        budget: impl Into<LevelBudget>,
    ) -> Result<(), PlanRuleError> {
        let budget = budget.into();
        let i = self.level_index(level)?;
        self.edit(|p| p.levels[i].budget = budget)
    }

    /// Restates the plan in another definition, keeping every budget's value: `ε = 1/2`
    /// becomes `ρ = 1/2` (the TUI's toggle; the operator then sets the budgets).
    pub fn set_definition(&mut self, definition: Definition) -> Result<(), PlanRuleError> {
        self.edit(|p| {
            for l in &mut p.levels {
                l.budget = l.budget.restated(definition);
            }
            if let MaxSize::Estimate { budget } = &mut p.max_size {
                *budget = Loss::of(definition, &budget.amount());
            }
        })
    }

    /// The plan's privacy definition: its levels' (they all share one).
    pub fn definition(&self) -> Definition {
        self.levels
            .first()
            .map_or(Definition::Pure, |l| l.budget.definition())
    }

    /// Sets every level's budget at once, root first.
    pub fn set_budgets<B: Into<LevelBudget>>(
        &mut self,
        budgets: Vec<B>,
    ) -> Result<(), PlanRuleError> {
        let budgets: Vec<LevelBudget> = budgets.into_iter().map(Into::into).collect();
        if budgets.len() != self.levels.len() {
            return Err(PlanRuleError::LevelCount {
                given: budgets.len(),
                levels: self.levels.len(),
                names: self.level_names().join(", "),
            });
        }
        self.edit(|p| {
            for (l, e) in p.levels.iter_mut().zip(budgets) {
                l.budget = e;
            }
        })
    }

    /// Sets one level's method (with its tail, for `hc` with a tail).
    pub fn set_method(&mut self, level: LevelId, method: Method) -> Result<(), PlanRuleError> {
        let i = self.level_index(level)?;
        self.edit(|p| p.levels[i].method = method)
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

    pub fn max_size(&self) -> &MaxSize {
        &self.max_size
    }

    /// The levels, root first (after [`ReleasePlan::validate`], in hierarchy order).
    pub fn levels(&self) -> &[LevelPlan] {
        &self.levels
    }

    /// The plan of the top `depth` levels only (a hierarchy cut with
    /// [`crate::data::Hierarchy::truncated`]): the same rules for those levels. The
    /// margins of error draw the levels with few regions again under it.
    ///
    /// # Panics
    /// If `depth` is 0 or more than the plan's levels.
    pub fn truncated(&self, depth: usize) -> ReleasePlan {
        assert!((1..=self.levels.len()).contains(&depth));
        ReleasePlan {
            levels: self.levels[..depth].to_vec(),
            ..self.clone()
        }
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

    /// The public proxy the plan was tuned on (`tuning_source` in the plan file).
    pub fn tuning_source(&self) -> Option<&TuningSource> {
        self.tuning_source.as_ref()
    }

    /// Records the proxy the plan was tuned on.
    pub fn set_tuning_source(&mut self, source: Option<TuningSource>) {
        self.tuning_source = source;
    }

    /// Holds or releases one level's budget (an editing aid for the TUI; it changes
    /// nothing that is measured).
    pub fn set_held(&mut self, level: LevelId, held: bool) {
        if let Some(l) = self.levels.get_mut(level.0) {
            l.held = held;
        }
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

    /// The total budget, in the plan's definition: the measured levels' budgets plus
    /// the budget for estimating `K`, if any (sequential composition adds ε, and adds
    /// ρ; an unmeasured level charges nothing; see
    /// [`crate::release::pipeline::accounting::guarantee`]).
    pub fn total(&self) -> Option<Loss> {
        let k = match &self.max_size {
            MaxSize::Estimate { budget } => Some(budget),
            MaxSize::Fixed(_) => None,
        };
        Loss::sum(self.levels_total().iter().chain(k))
    }

    /// The measured levels' budgets summed (without `K`'s estimate); `None` when no
    /// level is measured, which the plan rules refuse.
    pub fn levels_total(&self) -> Option<Loss> {
        Loss::sum(self.levels.iter().filter_map(LevelPlan::loss))
    }

    /// The total ε of a pure plan (`None` for a zCDP plan).
    pub fn total_epsilon(&self) -> Option<Epsilon> {
        self.total().and_then(|t| t.as_pure().cloned())
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
        total: impl Into<Loss>,
        method: Method,
        max_size: MaxSize,
    ) -> Result<ReleasePlan, PlanRuleError> {
        let total: Loss = total.into();
        let definition = total.definition();
        let shares = allocate(&total.amount(), hierarchy.depth(), Allocation::Uniform)
            .iter()
            .map(|s| Loss::of(definition, s))
            .collect();
        Self::with_budgets(hierarchy, shares, method, max_size)
    }

    /// A plan with the given per-level budgets (root first) and one method everywhere.
    pub fn with_budgets(
        hierarchy: &Hierarchy,
        budgets: Vec<impl Into<LevelBudget>>,
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
            .map(|(name, budget)| LevelPlan {
                name: name.clone(),
                budget: budget.into(),
                method,
                held: false,
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
            tuning_source: None,
        };
        plan.check_rules()?;
        Ok(plan)
    }

    /// Noise samples each level costs: per region K+1 for `hc` and `naive`, G for
    /// `hg`, L + min(m, G) for `hc` with a tail (at most L + min(G, K + 1 − L) for an
    /// `auto` tail), none for a level left unmeasured; `groups` gives each region's
    /// public G.
    pub fn noise_samples(
        &self,
        hierarchy: &Hierarchy,
        groups: impl Fn(NodeId) -> Count,
        max_size: Size,
    ) -> Vec<u64> {
        self.levels
            .iter()
            .zip(hierarchy.levels())
            .map(|(l, level)| match l.is_measured() {
                false => 0,
                true => hierarchy
                    .level_nodes(level)
                    .map(|id| l.method.noise_samples(groups(id), max_size))
                    .fold(0u64, u64::saturating_add),
            })
            .collect()
    }
}

mod allocation;
mod level_budget;
mod toml;
pub use allocation::*;
pub use level_budget::LevelBudget;

#[cfg(test)]
mod tests;
