//! How often the intervals covered the truth: a CONFIDENTIAL diagnostic for the
//! operator (previews, tests), never published. The caller opens the truth with a
//! named [`crate::privacy::Diagnostic`].

use crate::data::{NodeId, PublicData, TrueHistograms};
use crate::histogram::{HistogramSet, Size};
use crate::release::pipeline::draw::Draw;

use super::Uncertainty;

/// One level's coverage over its occupied cells (a true or a released count above 0):
/// those whose interval (`[0, 0]` if unlisted) holds the true count (sizes above `K`
/// top-coded to `K`, as released). Cells empty in both are left out: the tail's zone
/// lists many of them at `[0, 1]`, and counting them would flatter the figure.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LevelCoverage {
    pub cells: u64,
    pub covered: u64,
    /// Sum of the widths `upper − lower`.
    pub width: u64,
    /// Sum of the absolute errors of the released counts.
    pub error: u64,
}

impl LevelCoverage {
    pub fn share(&self) -> Option<f64> {
        (self.cells > 0).then(|| self.covered as f64 / self.cells as f64)
    }
}

/// Per level, the coverage of `u`'s intervals of `release` against `truth`.
/// CONFIDENTIAL: it compares with the true data.
pub fn coverage(
    release: &Draw,
    u: &Uncertainty,
    public: PublicData<'_>,
    truth: &TrueHistograms,
) -> Vec<LevelCoverage> {
    coverage_of(release.histograms(), u, public, truth)
}

/// [`coverage`] of released histograms (a preview trial's).
pub(crate) fn coverage_of(
    released: &HistogramSet,
    u: &Uncertainty,
    public: PublicData<'_>,
    truth: &TrueHistograms,
) -> Vec<LevelCoverage> {
    let h = public.hierarchy;
    let mut out = vec![LevelCoverage::default(); h.depth()];
    for i in 0..h.len() {
        let id = NodeId(i as u32);
        let level = h.node(id).level.0;
        let released = released.get(i);
        let cells = u.region(level, released, public.groups(id));
        // The release estimates the histogram with sizes above K top-coded to K: so is
        // the truth it is compared with.
        let t = truth.node(id).top_coded(u.max_size());
        let t = t.as_ref();
        let mut sizes: Vec<Size> = cells.iter().map(|c| c.size).collect();
        sizes.extend(t.pairs().iter().map(|&(s, _)| s));
        sizes.sort_unstable();
        sizes.dedup();
        let o = &mut out[level];
        for size in sizes {
            let truth = t.count(size);
            let (count, lower, upper) = match cells.binary_search_by_key(&size, |c| c.size) {
                Ok(j) => (cells[j].count, cells[j].lower, cells[j].upper),
                Err(_) => (released.count(size), 0, 0),
            };
            if truth == 0 && count == 0 {
                continue;
            }
            o.cells += 1;
            o.covered += u64::from(lower <= truth && truth <= upper);
            o.width += upper - lower;
            o.error += count.abs_diff(truth);
        }
    }
    out
}
