//! The plan coco proposes before the operator has chosen anything, made from public
//! information only: the hierarchy, each region's group count `G` and the public bound
//! `K`. Nothing here reads a group's size, so choosing this plan spends no ε and
//! publishes nothing about the data.
//!
//! # The rule
//! * **ε** is split evenly over the levels (the plan's total, `1` unless given). No
//!   public figure says which level matters more, and every level above the leaves is
//!   worth measuring: a region measured with its own share of ε beats the sum of its
//!   descendants' estimates (bottom-up) when it has many of them, and the leaves pay for
//!   it (the README's accuracy tables).
//! * **Method**: `hc` with a tail sized from each region's own noisy head at every level
//!   ([`TailLength::Auto`](crate::estimate::TailLength::Auto)), `L = min(20, K − 1)`: the
//!   head holds the sizes households and most groups have; each region then lists as
//!   many of its larger groups as its noisy head says there are, with a margin that runs
//!   out with probability 10⁻⁶, or, where that would cost more noise samples than the
//!   rest of the cumulative histogram, measures the rest of it instead (dense large
//!   sizes, such as taxis' trips). Both are chosen after the head is measured, from its
//!   noisy output, at no extra ε ([`crate::estimate::tail::auto_rest`] has the proof). So
//!   the default never runs out of listed positions, whatever the shape of the data,
//!   and no public figure about how many groups are large is needed.
//! * Where `K ≤ L + 1` the head alone covers every size: plain `hc` (`K + 1` cells).
//!
//! Each level's choice comes with its reason, written into the plan's comments and
//! shown by `coco plan` and the TUI's Budget screen. The plan is marked
//! `tuning = "public-default"` ([`Tuning`]): the ledger and the manifest of a release
//! drawn with it say it was chosen from public information only.

use super::tuning::Tuning;
use super::{Allocation, MaxSize, PlanRuleError, ReleasePlan, allocate};
use crate::data::Dataset;
use crate::data::{Hierarchy, NodeId};
use crate::estimate::{Method, Tail};
use crate::histogram::{Count, Size};
use crate::privacy::{Loss, Ratio};

/// One level's default and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelDefault {
    pub method: Method,
    /// One sentence, for a plan comment or a table cell.
    pub reason: String,
}

/// The public default plan and each level's reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicDefault {
    pub plan: ReleasePlan,
    pub levels: Vec<LevelDefault>,
}

impl PublicDefault {
    /// The plan as TOML with each level's reason as a comment above it, and a header
    /// saying where the plan came from and how ε is split.
    pub fn to_toml(&self) -> String {
        let notes: Vec<String> = self.levels.iter().map(|l| l.reason.clone()).collect();
        self.plan.to_plan_file(&[], &notes)
    }
}

/// Why the default splits ε as it does, for `levels` levels (see the module docs).
pub fn split_reason(levels: usize, definition: crate::privacy::Definition) -> String {
    let symbol = definition.symbol();
    if levels <= 1 {
        return format!("All of {symbol} goes to the single level.");
    }
    format!(
        "{symbol} is split evenly over the {levels} levels: no public figure says which matters more, \
         and a region measured with its own share beats the sum of its descendants' estimates \
         (bottom-up) when it has many of them; the leaves pay for it."
    )
}

impl PublicDefault {
    /// The tuning label of the default plan.
    pub fn tuning(&self) -> Tuning {
        self.plan.tuning()
    }
}

/// The default tail under `K`: groups of size 20 or more listed, each region's list sized from its own
/// noisy head ([`crate::estimate::tail::TailLength::Auto`]).
pub fn default_tail(k: Option<Size>) -> Tail {
    Tail::AUTO.below(k)
}

/// The default method of one level (see the module documentation) and its reason,
/// from the median and the largest `G` of its regions.
pub fn level_default(median: Count, largest: Count, k: Option<Size>) -> LevelDefault {
    let tail = default_tail(k);
    if let Some(k) = k
        && k <= Tail::AUTO.above + 1
    {
        return LevelDefault {
            method: Method::Hc,
            reason: format!(
                "hc: K = {k} is small, so the cumulative histogram's {} cells cover every size",
                u64::from(k) + 1
            ),
        };
    }
    LevelDefault {
        method: Method::HcTail(tail),
        reason: format!(
            "hc + tail: regions hold a median of {} groups (the largest {}); sizes below {} \
             as cumulative counts; each region then lists its groups of size {} or more, as \
             many as its noisy head says there are (with a margin), or measures the rest of \
             the cumulative counts where that costs fewer noise samples (no extra ε)",
            group_number(median),
            group_number(largest),
            tail.above,
            tail.above,
        ),
    }
}

/// The public default plan for `hierarchy` with total ε `total` and `max_size`.
pub fn public_default(
    hierarchy: &Hierarchy,
    groups: impl Fn(NodeId) -> Count,
    total: impl Into<Loss>,
    max_size: MaxSize,
) -> Result<PublicDefault, PlanRuleError> {
    let total: Loss = total.into();
    let k = max_size.bound();
    let levels: Vec<LevelDefault> = hierarchy
        .levels()
        .map(|level| {
            let g: Vec<Count> = hierarchy.level_nodes(level).map(&groups).collect();
            level_default(median(&g), g.iter().copied().max().unwrap_or(0), k)
        })
        .collect();
    let budgets: Vec<Loss> = allocate(&total.amount(), hierarchy.depth(), Allocation::Uniform)
        .iter()
        .map(|b| Loss::of(total.definition(), b))
        .collect();
    let mut plan = ReleasePlan::with_budgets(hierarchy, budgets, Method::Hc, max_size)?;
    for (i, l) in levels.iter().enumerate() {
        plan.set_method(crate::data::LevelId(i), l.method)?;
    }
    plan.set_tuning(Tuning::PublicDefault);
    Ok(PublicDefault { plan, levels })
}

/// Whether `plan` is coco's public default for its own total and `K`: ε split evenly
/// and each level's default method. A plan file that says `tuning = "public-default"`
/// and is not was edited after coco wrote it.
pub fn is_public_default(
    plan: &ReleasePlan,
    hierarchy: &Hierarchy,
    groups: impl Fn(NodeId) -> Count,
) -> bool {
    let Some(total) = plan.levels_total() else {
        return false;
    };
    public_default(hierarchy, groups, &total, plan.max_size().clone())
        .is_ok_and(|d| d.plan.levels() == plan.levels())
}

/// The median of `values` (the lower middle one), 0 for none.
pub fn median(values: &[Count]) -> Count {
    if values.is_empty() {
        return 0;
    }
    let mut v = values.to_vec();
    let mid = (v.len() - 1) / 2;
    *v.select_nth_unstable(mid).1
}

/// A whole number with thousands separators.
fn group_number(n: u64) -> String {
    crate::inspect::thousands(u128::from(n))
}

/// Qardaji et al.'s geometric ratio for a hierarchy: the cube root of its mean branching
/// factor, to two decimals (public: the hierarchy only).
pub fn geometric_ratio(hierarchy: &Hierarchy) -> Ratio {
    let internal = hierarchy
        .nodes()
        .iter()
        .filter(|n| !n.is_leaf())
        .count()
        .max(1);
    let branching = (hierarchy.len() - 1) as f64 / internal as f64;
    let r = branching.max(1.0).cbrt();
    Ratio::parse(&format!("{r:.2}")).unwrap_or_else(|_| Ratio::from_ratio(1, 1).expect("1"))
}

/// The K of coco's default plan (`coco plan` without `--max-size`, the plan the TUI
/// opens with).
pub const DEFAULT_MAX_SIZE: Size = 10_000;

/// Whether `plan` is coco's public default for `dataset` at its own levels' total: ε
/// split evenly, each level's default method, K = [`DEFAULT_MAX_SIZE`] fixed, and the
/// default consistency step, merge rule and fits. Only such a plan is `public-default`:
/// a K set by hand (say, the largest true size `coco inspect` shows) is not coco's
/// default, whatever the levels say.
pub fn is_coco_default(plan: &ReleasePlan, dataset: &Dataset) -> bool {
    let Some(total) = plan.levels_total() else {
        return false;
    };
    public_default(
        &dataset.hierarchy,
        |id| dataset.groups(id),
        &total,
        MaxSize::Fixed(DEFAULT_MAX_SIZE),
    )
    .is_ok_and(|d| d.plan == *plan)
}

/// The label a plan file's `tuning` earns: `public-default` only for coco's default
/// ([`is_coco_default`]); a plan that says so and is not (edited after coco wrote it)
/// is `unknown`.
pub fn checked(plan: &ReleasePlan, dataset: &Dataset) -> Tuning {
    match plan.tuning() {
        Tuning::PublicDefault if !is_coco_default(plan, dataset) => Tuning::Unknown,
        t => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::TailLength;
    use crate::privacy::Epsilon;

    #[test]
    fn default_tails_are_sized_from_the_head() {
        assert_eq!(default_tail(Some(10_000)), Tail::AUTO);
        assert_eq!(default_tail(Some(10_000)).groups, TailLength::Auto);
        assert_eq!(default_tail(Some(10_000)).above, 20);
        assert_eq!(default_tail(Some(12)).above, 11);
    }

    #[test]
    fn small_k_gets_plain_hc_and_every_level_a_reason() {
        let d = level_default(5, 9, Some(21));
        assert_eq!(d.method, Method::Hc);
        assert!(d.reason.contains("K = 21"), "{}", d.reason);
        let d = level_default(5, 9, Some(10_000));
        assert_eq!(d.method, Method::HcTail(Tail::AUTO));
        assert!(
            d.reason.contains("median of 5 groups (the largest 9)"),
            "{}",
            d.reason
        );
        assert!(d.reason.contains("noisy head"), "{}", d.reason);
        assert_eq!(median(&[300_000, 2_500_000, 7]), 300_000);
        assert_eq!(median(&[4, 1]), 1);
    }

    #[test]
    fn the_default_plan_reads_back_with_its_comments() {
        let d = crate::data::Dataset::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households"),
        )
        .unwrap();
        let one = Epsilon::from_ratio(1, 1).unwrap();
        let p = public_default(
            &d.hierarchy,
            |id| d.groups(id),
            &one,
            MaxSize::Fixed(10_000),
        )
        .unwrap();
        let text = p.to_toml();
        let back = ReleasePlan::parse(&text, std::path::Path::new("plan.toml")).unwrap();
        assert_eq!(back, p.plan);
        assert_eq!(back.tuning(), Tuning::PublicDefault);
        assert!(is_public_default(&back, &d.hierarchy, |id| d.groups(id)));
        let mut edited = back.clone();
        edited
            .set_budget(crate::data::LevelId(2), &Epsilon::parse("0.5").unwrap())
            .unwrap();
        assert!(!is_public_default(&edited, &d.hierarchy, |id| d.groups(id)));
        assert!(
            text.starts_with("# coco's default plan, chosen from public information only"),
            "{text}"
        );
        // Each reason is written as comment lines above its level.
        let unwrapped = text.replace("\n# ", "\u{1}").replace("\u{1}", " ");
        for l in &p.levels {
            assert!(
                unwrapped.contains(&format!(" {}\n[[level]]", l.reason)),
                "{text}"
            );
        }
        assert_eq!(back.total_epsilon(), Some(one));
    }
}
