//! The structural checks every release must pass before it is written (Kuo et al. §3,
//! Problem 1): integral, nonnegative counts; each node's total equals its public number
//! of groups; each parent equals the sum of its children at every size; no size above
//! `K`.
//!
//! [`check_counts`] verifies rows as they will be published (text parsed back), so the
//! integrality and nonnegativity checks test the written file, not a type.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::data::{NodeId, PublicData};
use crate::histogram::{Count, CountOfCounts, HistogramSet, Histograms, Size};

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

    fn fail(&mut self, problem: String) {
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

/// Checks published rows `(level, region, size, count)` as text, the form they are
/// written in: every count must parse as a nonnegative integer, every region and level
/// must exist, then the histograms they describe are checked with [`check_release`].
/// The rows are read once, as they come (a file can be streamed through): memory
/// follows the cells, not the text. Rows of one region are expected together (as
/// `counts.csv` writes them); a region found again later is reported.
pub fn check_counts<S: AsRef<str>>(
    public: PublicData<'_>,
    rows: impl IntoIterator<Item = [S; 4]>,
    max_size: Size,
) -> Checks {
    let mut checker = CountChecker::new(public);
    for row in rows {
        checker.push(&row);
    }
    checker.finish(max_size)
}

/// One published row of `counts.csv` or `counts.parquet`, as read: the level and the
/// region as text, the size and the count as written (text, or typed integers).
pub(crate) trait CountRow {
    fn level(&self) -> &str;
    fn region(&self) -> &str;
    /// The size, or `None` where it is not a whole number from 0 to `Size::MAX`.
    fn size(&self) -> Option<Size>;
    /// The count as a whole number (of any sign), or `None` where it is not one.
    fn count(&self) -> Option<i128>;
    /// The size and the count as they read, for messages.
    fn size_text(&self) -> String;
    fn count_text(&self) -> String;
}

impl<S: AsRef<str>> CountRow for [S; 4] {
    fn level(&self) -> &str {
        self[0].as_ref()
    }
    fn region(&self) -> &str {
        self[1].as_ref()
    }
    fn size(&self) -> Option<Size> {
        self[2].as_ref().parse().ok()
    }
    fn count(&self) -> Option<i128> {
        self[3].as_ref().parse().ok()
    }
    fn size_text(&self) -> String {
        self[2].as_ref().to_string()
    }
    fn count_text(&self) -> String {
        self[3].as_ref().to_string()
    }
}

/// [`check_counts`] a row at a time, for rows of any form ([`CountRow`]): text rows
/// of `counts.csv`, typed rows of `counts.parquet`, the same checks and messages.
pub(crate) struct CountChecker<'a> {
    gathered: CountRows<'a>,
    /// The region of the last row and its node.
    current: Option<(String, Option<NodeId>)>,
}

impl<'a> CountChecker<'a> {
    pub(crate) fn new(public: PublicData<'a>) -> Self {
        Self {
            gathered: CountRows::new(public),
            current: None,
        }
    }

    pub(crate) fn push(&mut self, row: &impl CountRow) {
        let h = self.gathered.public.hierarchy;
        let gathered = &mut self.gathered;
        let (level, region) = (row.level(), row.region());
        let id = match &mut self.current {
            Some((name, id)) if name == region => *id,
            current => {
                let before = current
                    .as_ref()
                    .and_then(|(name, id)| id.map(|id| (name.as_str(), id)));
                let id = super::counts_in::find_region(h, region, before);
                match current {
                    Some((name, slot)) => {
                        name.clear();
                        name.push_str(region);
                        *slot = id;
                    }
                    None => *current = Some((region.to_string(), id)),
                }
                if let Some(id) = id
                    && !gathered.start_run(id)
                {
                    gathered.checks.consistent = false;
                    gathered
                        .checks
                        .fail(format!("{region}: its rows are not together"));
                    gathered.runs.push((id, gathered.cells.len()));
                }
                id
            }
        };
        let checks = &mut gathered.checks;
        let Some(id) = id else {
            checks.group_totals = false;
            checks.fail(format!("unknown region {region:?}"));
            return;
        };
        if h.level_name(h.node(id).level) != level {
            checks.consistent = false;
            checks.fail(format!("{region}: listed at level {level:?}"));
        }
        let count_value = match row.count() {
            Some(c) if c < 0 => {
                checks.nonnegative = false;
                checks.fail(format!(
                    "{region} size {}: negative count {}",
                    row.size_text(),
                    row.count_text()
                ));
                return;
            }
            Some(c) => match Count::try_from(c) {
                Ok(c) => c,
                Err(_) => {
                    checks.group_totals = false;
                    checks.fail(format!(
                        "{region} size {}: count {} out of range",
                        row.size_text(),
                        row.count_text()
                    ));
                    return;
                }
            },
            None => {
                checks.integral = false;
                checks.fail(format!(
                    "{region} size {}: count {:?} is not a whole number",
                    row.size_text(),
                    row.count_text()
                ));
                return;
            }
        };
        let Some(size_value) = row.size() else {
            checks.integral = false;
            checks.fail(format!(
                "{region}: size {:?} is not a whole number",
                row.size_text()
            ));
            return;
        };
        gathered.cells.push((size_value, count_value));
    }

    pub(crate) fn finish(self, max_size: Size) -> Checks {
        self.gathered.finish(max_size)
    }

    /// [`CountChecker::finish`], with the histograms the rows describe (in node
    /// order), to compare with what was written.
    pub(crate) fn finish_with_histograms(self, max_size: Size) -> (Checks, HistogramSet) {
        self.gathered.finish_with_histograms(max_size)
    }
}

/// The rows of a `counts.csv` gathered for [`check_counts`], as they are read: each
/// region's run of cells, and what failed on the way.
pub(crate) struct CountRows<'a> {
    public: PublicData<'a>,
    checks: Checks,
    /// Each region's rows, as read: runs of (node, first cell).
    runs: Vec<(NodeId, usize)>,
    cells: Vec<(Size, Count)>,
    seen: Vec<bool>,
}

impl<'a> CountRows<'a> {
    pub(crate) fn new(public: PublicData<'a>) -> Self {
        Self {
            public,
            checks: Checks::all_passed(),
            runs: Vec::new(),
            cells: Vec::new(),
            seen: vec![false; public.hierarchy.len()],
        }
    }

    /// Starts the run of rows of region `id`, whose rows are to follow. Returns false,
    /// and starts nothing, when the region had rows before (its rows are not together).
    pub(crate) fn start_run(&mut self, id: NodeId) -> bool {
        if std::mem::replace(&mut self.seen[id.index()], true) {
            return false;
        }
        self.runs.push((id, self.cells.len()));
        true
    }

    /// Adds cells `(size, count)` of valid rows to the current run.
    pub(crate) fn extend_cells(&mut self, cells: &[(Size, Count)]) {
        self.cells.extend_from_slice(cells);
    }

    /// Checks the histograms the rows describe ([`check_release`]) and returns all that
    /// failed.
    pub(crate) fn finish(self, max_size: Size) -> Checks {
        self.finish_with_histograms(max_size).0
    }

    /// [`CountRows::finish`], with the histograms the rows describe.
    pub(crate) fn finish_with_histograms(self, max_size: Size) -> (Checks, HistogramSet) {
        let Self {
            public,
            mut checks,
            runs,
            cells,
            seen,
        } = self;
        let h = public.hierarchy;
        drop(seen);
        // In node order; a region's sizes must be strictly increasing.
        let mut order: Vec<usize> = (0..runs.len()).collect();
        if !runs.windows(2).all(|w| w[0].0 < w[1].0) {
            order.sort_unstable_by_key(|&r| runs[r].0);
        }
        let mut histograms = HistogramSet::with_capacity(h.len(), cells.len());
        let mut next = order.iter().peekable();
        for i in 0..h.len() as u32 {
            match next.peek() {
                Some(&&r) if runs[r].0 == NodeId(i) => {
                    next.next();
                    let end = runs.get(r + 1).map_or(cells.len(), |&(_, s)| s);
                    let run = &cells[runs[r].1..end];
                    if run.windows(2).all(|w| w[0].0 < w[1].0) {
                        histograms.push_sorted_pairs(run.iter().copied().filter(|p| p.1 > 0));
                    } else {
                        match CountOfCounts::from_pairs(run.iter().copied()) {
                            Ok(hist) => histograms.push(hist.as_ref()),
                            Err(e) => {
                                checks.consistent = false;
                                checks.fail(format!("{}: {e}", h.display_id(NodeId(i))));
                                histograms.push_sorted_pairs(std::iter::empty());
                            }
                        }
                    }
                }
                _ => histograms.push_sorted_pairs(std::iter::empty()),
            }
            // A region listed twice was reported above; its later rows are ignored.
            while next.peek().is_some_and(|&&r| runs[r].0 == NodeId(i)) {
                next.next();
            }
        }
        drop(cells);
        let structural = check_release(public, &histograms, max_size);
        checks.group_totals &= structural.group_totals;
        checks.consistent &= structural.consistent;
        checks.within_max_size &= structural.within_max_size;
        for p in structural.problems {
            checks.fail(p);
        }
        (checks, histograms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tests::tiny;

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
