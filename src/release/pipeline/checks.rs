//! The structural checks every release must pass before it is written (Kuo et al. §3,
//! Problem 1): integral, nonnegative counts; each node's total equals its public number
//! of groups; each parent equals the sum of its children at every size; no size above
//! `K`.
//!
//! The same checks on rows as they are published (text or Parquet parsed back) are
//! [`crate::release::outputs::read_back`]'s, so the integrality and nonnegativity checks
//! test the written file, not a type.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::data::{NodeId, PublicData};
use crate::histogram::{Histograms, Size};

/// The outcome of the checks. A release is written only when [`Checks::passed`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checks {
    /// Every count is a whole number.
    pub integral: bool,
    /// Every count is ≥ 0.
    pub nonnegative: bool,
    /// Each node's counts add up to its public number of groups.
    pub group_totals: bool,
    /// Each parent equals the sum of its children, size by size.
    pub consistent: bool,
    /// No size above the public bound `K`.
    pub within_max_size: bool,
    /// What failed, for the operator (empty when everything passed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

impl Checks {
    /// Every check passed, nothing reported yet: what a checker starts from.
    pub fn all_passed() -> Checks {
        Checks {
            integral: true,
            nonnegative: true,
            group_totals: true,
            consistent: true,
            within_max_size: true,
            problems: vec![],
        }
    }

    pub fn passed(&self) -> bool {
        self.integral
            && self.nonnegative
            && self.group_totals
            && self.consistent
            && self.within_max_size
    }

    pub(crate) fn fail(&mut self, problem: String) {
        // Keep the report readable on a badly broken release.
        if self.problems.len() < 20 {
            self.problems.push(problem);
        }
    }
}

/// Checks released histograms (indexed by [`NodeId`]) against the public data. Regions
/// are checked in parallel; each parent is compared with the sum of its children
/// without building either as a histogram of its own.
pub fn check_release<H: Histograms + ?Sized>(
    public: PublicData<'_>,
    histograms: &H,
    max_size: Size,
) -> Checks {
    let mut checks = Checks::all_passed();
    let h = public.hierarchy;
    if histograms.regions() != h.len() {
        checks.group_totals = false;
        checks.consistent = false;
        checks.fail(format!(
            "{} histograms for {} regions",
            histograms.regions(),
            h.len()
        ));
        return checks;
    }
    /// What failed at one region: (totals, above K, sums), in node order.
    type Failure = (NodeId, bool, Option<Size>, bool);
    let failures: Vec<Failure> = (0..h.len() as u32)
        .into_par_iter()
        .with_min_len(4096)
        .map_init(Vec::new, |scratch, i| {
            let id = NodeId(i);
            let node = h.node(id);
            let hist = histograms.hist(id.index());
            let totals = hist.groups() != public.groups(id);
            let above = hist.max_size().filter(|&m| m > max_size);
            let sums = !node.is_leaf() && {
                crate::data::sum_into(node.children().map(|c| histograms.hist(c.index())), scratch);
                scratch.as_slice() != hist.pairs()
            };
            (id, totals, above, sums)
        })
        .filter(|&(_, totals, above, sums)| totals || above.is_some() || sums)
        .collect();
    for (id, totals, above, sums) in failures {
        if totals {
            checks.group_totals = false;
            checks.fail(format!(
                "{}: {} groups released, {} in the public counts",
                h.display_id(id),
                histograms.hist(id.index()).groups(),
                public.groups(id)
            ));
        }
        if let Some(m) = above {
            checks.within_max_size = false;
            checks.fail(format!(
                "{}: size {m} above the bound K = {max_size}",
                h.display_id(id)
            ));
        }
        if sums {
            checks.consistent = false;
            checks.fail(format!(
                "{}: differs from the sum of its children",
                h.display_id(id)
            ));
        }
    }
    checks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tests::tiny;
    use crate::histogram::CountOfCounts;
    use crate::release::outputs::read_back::check_counts;

    #[test]
    fn the_truth_passes() {
        let d = tiny();
        let checks = check_release(
            d.public(),
            d.truth()
                .for_diagnostic(crate::privacy::Diagnostic::Oracle)
                .all(),
            40,
        );
        assert!(checks.passed(), "{checks:?}");
        // Above K fails.
        let checks = check_release(
            d.public(),
            d.truth()
                .for_diagnostic(crate::privacy::Diagnostic::Oracle)
                .all(),
            39,
        );
        assert!(!checks.within_max_size && checks.group_totals && checks.consistent);
    }

    #[test]
    fn detects_broken_releases() {
        let d = tiny();
        let mut hists = d
            .truth()
            .for_diagnostic(crate::privacy::Diagnostic::Oracle)
            .all()
            .to_vec();
        // Move a group from size 1 to size 2 in leaf a1 only: the totals hold, the sums break.
        let a1 = d.hierarchy.find("US/A/a1").unwrap();
        let old = hists[a1.index()].clone();
        let moved = old
            .pairs()
            .iter()
            .map(|&(s, c)| if s == 1 { (s, c - 1) } else { (s, c) })
            .chain([(2, 1)]);
        hists[a1.index()] = CountOfCounts::from_pairs_summing(moved).unwrap();
        let checks = check_release(d.public(), &hists, 40);
        assert!(checks.group_totals && !checks.consistent, "{checks:?}");
        // Drop a group: the totals break too.
        hists[a1.index()] = CountOfCounts::from_pairs(old.pairs()[1..].iter().copied()).unwrap();
        let checks = check_release(d.public(), &hists, 40);
        assert!(!checks.group_totals && !checks.consistent);
        assert!(!checks.problems.is_empty());
    }

    #[test]
    fn text_rows() {
        let d = tiny();
        let h = &d.hierarchy;
        let mut rows: Vec<[String; 4]> = Vec::new();
        for (i, node) in h.nodes().iter().enumerate() {
            for &(s, c) in d
                .truth()
                .for_diagnostic(crate::privacy::Diagnostic::Oracle)
                .all()
                .get(i)
                .pairs()
            {
                rows.push([
                    h.level_name(node.level).into(),
                    h.display_id(NodeId(i as u32)),
                    s.to_string(),
                    c.to_string(),
                ]);
            }
        }
        let as_refs = |rows: &[[String; 4]]| -> Vec<[String; 4]> { rows.to_vec() };
        let check = |rows: &[[String; 4]]| {
            let owned = as_refs(rows);
            check_counts(
                d.public(),
                owned
                    .iter()
                    .map(|r| [r[0].as_str(), r[1].as_str(), r[2].as_str(), r[3].as_str()]),
                40,
            )
        };
        assert!(check(&rows).passed());
        let mut bad = rows.clone();
        bad[0][3] = "2.5".into();
        assert!(!check(&bad).integral);
        let mut bad = rows.clone();
        bad[0][3] = "-1".into();
        assert!(!check(&bad).nonnegative);
        let mut bad = rows.clone();
        bad.pop();
        let c = check(&bad);
        assert!(!c.passed() && !c.group_totals);
    }
}
