//! The plan coco proposes before the operator has chosen anything, made from public
//! information only: the hierarchy, each region's group count `G` and the public bound
//! `K`. Nothing here reads a group's size, so choosing this plan spends no ε and
//! publishes nothing about the data.
//!
//! # The rule
//! * **ε** is split evenly over the levels (the plan's total, `1` unless given). No
//!   public figure says which level matters more, and every level above the leaves is
//!   worth measuring: a region measured with its own share of ε beats the sum of its
//!   descendants' estimates (bottom-up) when it has many of them. On the bundled
//!   sample (ε = 1, 20 trials, seeds 1–3) the consistent release is well below
//!   bottom-up at the country (50–57 against 127–137) and the province (28–31 against
//!   35–39), and pays for it at the districts (20.5 against 7.6); giving the leaves
//!   half or more lowers the districts' error but brings the provinces to bottom-up's
//!   (at 60% on the leaves, 36–38 against 37), which no public figure could have told.
//! * **Method**: `hc` with a tail at every level, `L = min(20, K − 1)` (the head holds
//!   the sizes households and most groups have; larger groups, such as group quarters,
//!   are listed) and `m` = the larger of 1,000 and 1% of the largest `G` of the level
//!   (so that the tail lists at least 1% of every region's groups and a region
//!   saturates only if more than 1% of its groups are larger than `L`). On coco's
//!   census-scale benchmark (`gen us-blocks`, ε = 0.2 per level) this beat `hg` at
//!   every level, blocks of a dozen households included (mean EMD 13.4 against 22.0
//!   at the blocks, 43 against 463 at the tracts), and plain `hc` at the top (the
//!   README's county tables).
//! * Where `K ≤ L + 1` the head alone covers every size: plain `hc` (`K + 1` cells).
//!
//! Each level's choice comes with its reason, written into the plan's comments and
//! shown by `coco plan` and the TUI's Budget screen. The plan is marked
//! `tuning = "public-default"` ([`Tuning`]): the ledger and the manifest of a release
//! drawn with it say it was chosen from public information only.

use super::plan::{Allocation, MaxSize, PlanRuleError, ReleasePlan, allocate};
use super::tuning::Tuning;
use crate::data::{Hierarchy, NodeId};
use crate::estimate::{Method, Tail, TailGroups};
use crate::histogram::{Count, Size};
use crate::privacy::Epsilon;

/// The fewest groups a default tail lists (the TUI's default tail).
pub const MIN_TAIL_GROUPS: TailGroups = Tail::DEFAULT.groups;

/// The share of the level's largest region's groups a default tail lists: 1 in 100.
pub const TAIL_SHARE: u64 = 100;

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
        let mut s = String::new();
        let header = format!(
            "coco's default plan, chosen from public information only: the hierarchy, each \
             region's G and K. No group size was read and no preview was run, so choosing it \
             spent no ε and it publishes nothing about the data (tuning = \"public-default\"). \
             {} Each level's method and why are given above it. Edit freely: `coco preview \
             --proxy synthetic` shows what a change costs on a public proxy, which keeps the \
             tuning public; `coco preview` alone measures against the confidential data, and a \
             plan tuned on that is recorded as \"confidential-previews\".",
            if self
                .plan
                .levels()
                .windows(2)
                .all(|w| w[0].epsilon() == w[1].epsilon())
            {
                split_reason(self.plan.levels().len())
            } else {
                "ε is split over the levels as the operator chose (coco plan's flags).".into()
            }
        );
        for line in super::plan::wrap_comment(&header, 88) {
            s.push_str(&format!("# {line}\n"));
        }
        s.push_str(&self.plan.to_toml_with_notes(&notes));
        s
    }
}

/// Why the default splits ε as it does, for `levels` levels (see the module docs).
pub fn split_reason(levels: usize) -> String {
    if levels <= 1 {
        return "All of ε goes to the single level.".into();
    }
    format!(
        "ε is split evenly over the {levels} levels: no public figure says which matters more, \
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

/// The default tail of a level whose largest region holds `largest` groups, under `K`.
pub fn default_tail(largest: Count, k: Option<Size>) -> Tail {
    let share = TailGroups::saturating(largest.div_ceil(TAIL_SHARE));
    Tail {
        above: Tail::DEFAULT.above,
        groups: share.max(MIN_TAIL_GROUPS),
    }
    .below(k)
}

/// The default method of one level (see the module documentation) and its reason,
/// from the median and the largest `G` of its regions.
pub fn level_default(median: Count, largest: Count, k: Option<Size>) -> LevelDefault {
    let tail = default_tail(largest, k);
    if let Some(k) = k
        && k <= Tail::DEFAULT.above + 1
    {
        return LevelDefault {
            method: Method::Hc,
            reason: format!(
                "hc: K = {k} is small, so the cumulative histogram's {} cells cover every size",
                u64::from(k) + 1
            ),
        };
    }
    let why_m = if tail.groups == MIN_TAIL_GROUPS {
        "coco's least"
    } else if tail.groups == TailGroups::MAX {
        "the most a tail may list"
    } else {
        "1% of the largest region's"
    };
    LevelDefault {
        method: Method::HcTail(tail),
        reason: format!(
            "hc + tail: regions hold a median of {} groups (the largest {}); sizes up to {} \
             as cumulative counts, larger ones listed among each region's {} largest groups \
             ({why_m})",
            group_number(median),
            group_number(largest),
            tail.above,
            group_number(tail.groups.into()),
        ),
    }
}

/// The public default plan for `hierarchy` with total ε `total` and `max_size`.
pub fn public_default(
    hierarchy: &Hierarchy,
    groups: impl Fn(NodeId) -> Count,
    total: &Epsilon,
    max_size: MaxSize,
) -> Result<PublicDefault, PlanRuleError> {
    let k = max_size.bound();
    let levels: Vec<LevelDefault> = hierarchy
        .levels()
        .map(|level| {
            let g: Vec<Count> = hierarchy.level_nodes(level).map(&groups).collect();
            level_default(median(&g), g.iter().copied().max().unwrap_or(0), k)
        })
        .collect();
    let budgets = allocate(total, hierarchy.depth(), Allocation::Uniform);
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
    let Some(total) = Epsilon::sum(plan.levels().iter().map(|l| l.epsilon())) else {
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
pub fn geometric_ratio(hierarchy: &Hierarchy) -> Epsilon {
    let internal = hierarchy
        .nodes()
        .iter()
        .filter(|n| !n.is_leaf())
        .count()
        .max(1);
    let branching = (hierarchy.len() - 1) as f64 / internal as f64;
    let r = branching.max(1.0).cbrt();
    Epsilon::parse(&format!("{r:.2}")).unwrap_or_else(|_| Epsilon::from_ratio(1, 1).expect("1"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails_list_a_share_of_the_largest_region() {
        assert_eq!(default_tail(0, Some(10_000)).groups.get(), 1_000);
        assert_eq!(default_tail(15, Some(10_000)).groups.get(), 1_000);
        assert_eq!(
            default_tail(122_000_000, Some(10_000)).groups.get(),
            1_220_000
        );
        assert_eq!(default_tail(u64::MAX, None).groups, TailGroups::MAX);
        assert_eq!(default_tail(10, Some(10_000)).above, 20);
        assert_eq!(default_tail(10, Some(12)).above, 11);
    }

    #[test]
    fn small_k_gets_plain_hc_and_every_level_a_reason() {
        let d = level_default(5, 9, Some(21));
        assert_eq!(d.method, Method::Hc);
        assert!(d.reason.contains("K = 21"), "{}", d.reason);
        let d = level_default(5, 9, Some(10_000));
        assert!(matches!(d.method, Method::HcTail(_)));
        assert!(
            d.reason.contains("1,000 largest groups (coco's least)"),
            "{}",
            d.reason
        );
        assert!(
            d.reason.contains("median of 5 groups (the largest 9)"),
            "{}",
            d.reason
        );
        assert_eq!(median(&[300_000, 2_500_000, 7]), 300_000);
        assert_eq!(median(&[4, 1]), 1);
        let d = level_default(300_000, 2_500_000, Some(10_000));
        assert!(
            d.reason
                .contains("25,000 largest groups (1% of the largest region's)"),
            "{}",
            d.reason
        );
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
            .set_epsilon(crate::data::LevelId(2), Epsilon::parse("0.5").unwrap())
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
