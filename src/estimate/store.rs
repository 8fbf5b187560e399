//! The independent estimates of many regions, kept in arenas.
//!
//! A census release estimates 8 million blocks. One [`NodeEstimate`] per block would
//! hold three vectors per block (its histogram, its runs, its fit), a few hundred bytes
//! of allocations each; [`Estimates`] keeps each kind in one arena (a few dozen bytes
//! per block), and keeps only the kinds the caller needs ([`Keep`]): the release with
//! `wls` needs the fits, `topdown` the runs, a preview the histograms.

use super::{GroupRun, HeadBlock, NodeEstimate, NodeFit, StepRun};
use crate::histogram::{HistRef, HistogramSet};

/// Which parts of each estimate to keep. The default keeps none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Keep {
    /// The independent histogram `Ĥ`.
    pub histograms: bool,
    /// `Ĥg` with variances (the `topdown` step's input).
    pub runs: bool,
    /// The fit (the `wls` step's input).
    pub fits: bool,
}

impl Keep {
    pub const NONE: Keep = Keep {
        histograms: false,
        runs: false,
        fits: false,
    };
    pub const ALL: Keep = Keep {
        histograms: true,
        runs: true,
        fits: true,
    };
}

/// A node's fit, as kept in a [`FitSet`] (see [`NodeFit`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitRef<'a> {
    pub head: &'a [HeadBlock],
    pub from: u32,
    pub steps: &'a [StepRun],
    pub saturated: bool,
    pub noise_variance: f64,
    pub raw: &'a [i64],
}

impl FitRef<'_> {
    /// The Laplace scale of a step run's location (see [`NodeFit::step_scale`]).
    pub fn step_scale(&self, run: &StepRun) -> f64 {
        super::step_scale(self.noise_variance, run)
    }

    /// The listed groups above size `j` (see [`NodeFit::listed_above`]).
    pub fn listed_above(&self, j: usize) -> u64 {
        super::listed_above(self.steps, j)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct FitMeta {
    head_end: u64,
    step_end: u64,
    raw_end: u64,
    from: u32,
    present: bool,
    saturated: bool,
    noise_variance: f64,
}

/// The fits of many nodes: two arenas and one record per node.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FitSet {
    meta: Vec<FitMeta>,
    heads: Vec<HeadBlock>,
    steps: Vec<StepRun>,
    raws: Vec<i64>,
}

impl FitSet {
    pub fn len(&self) -> usize {
        self.meta.len()
    }

    pub fn is_empty(&self) -> bool {
        self.meta.is_empty()
    }

    pub fn push(&mut self, fit: Option<&NodeFit>) {
        let meta = match fit {
            Some(f) => {
                self.heads.extend_from_slice(&f.head);
                self.steps.extend_from_slice(&f.steps);
                self.raws.extend_from_slice(&f.raw);
                FitMeta {
                    head_end: self.heads.len() as u64,
                    step_end: self.steps.len() as u64,
                    raw_end: self.raws.len() as u64,
                    from: f.from,
                    present: true,
                    saturated: f.saturated,
                    noise_variance: f.noise_variance,
                }
            }
            None => FitMeta {
                head_end: self.heads.len() as u64,
                step_end: self.steps.len() as u64,
                raw_end: self.raws.len() as u64,
                from: 0,
                present: false,
                saturated: false,
                noise_variance: 0.0,
            },
        };
        self.meta.push(meta);
    }

    /// Node `i`'s fit, if its method has one.
    pub fn get(&self, i: usize) -> Option<FitRef<'_>> {
        let m = &self.meta[i];
        if !m.present {
            return None;
        }
        let (h0, s0, r0) = match i.checked_sub(1) {
            Some(p) => (
                self.meta[p].head_end,
                self.meta[p].step_end,
                self.meta[p].raw_end,
            ),
            None => (0, 0, 0),
        };
        Some(FitRef {
            head: &self.heads[h0 as usize..m.head_end as usize],
            from: m.from,
            steps: &self.steps[s0 as usize..m.step_end as usize],
            saturated: m.saturated,
            noise_variance: m.noise_variance,
            raw: &self.raws[r0 as usize..m.raw_end as usize],
        })
    }

    fn append(&mut self, other: FitSet) {
        let (h, s, r) = (
            self.heads.len() as u64,
            self.steps.len() as u64,
            self.raws.len() as u64,
        );
        self.heads.extend_from_slice(&other.heads);
        self.steps.extend_from_slice(&other.steps);
        self.raws.extend_from_slice(&other.raws);
        self.meta.extend(other.meta.into_iter().map(|mut m| {
            m.head_end += h;
            m.step_end += s;
            m.raw_end += r;
            m
        }));
    }

    fn bytes(&self) -> u64 {
        (self.meta.capacity() * std::mem::size_of::<FitMeta>()
            + self.heads.capacity() * std::mem::size_of::<HeadBlock>()
            + self.steps.capacity() * std::mem::size_of::<StepRun>()) as u64
    }
}

/// The runs of many nodes in one arena.
#[derive(Clone, Debug, PartialEq)]
struct RunSet {
    ends: Vec<u64>,
    runs: Vec<GroupRun>,
}

/// Independent estimates of a list of nodes (indexed by position in that list: by
/// [`crate::data::NodeId`] when the list is every node).
#[derive(Clone, Debug, PartialEq)]
pub struct Estimates {
    keep: Keep,
    len: usize,
    histograms: HistogramSet,
    runs: RunSet,
    fits: FitSet,
    /// Whether each node's tail was saturated.
    saturated: Vec<bool>,
    /// Whether each node was measured: a region of a level the plan left unmeasured
    /// holds an empty placeholder (no histogram, runs or fit), and the consistency step
    /// estimates it from its children.
    measured: Vec<bool>,
}

impl Estimates {
    pub fn new(keep: Keep) -> Self {
        Self {
            keep,
            len: 0,
            histograms: HistogramSet::new(),
            runs: RunSet {
                ends: Vec::new(),
                runs: Vec::new(),
            },
            fits: FitSet::default(),
            saturated: Vec::new(),
            measured: Vec::new(),
        }
    }

    /// Every part of each estimate (for tests and small datasets).
    pub fn from_vec(estimates: Vec<NodeEstimate>) -> Self {
        let mut out = Estimates::new(Keep::ALL);
        for e in estimates {
            out.push(e);
        }
        out
    }

    pub fn keep(&self) -> Keep {
        self.keep
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends one node's estimate, keeping what [`Keep`] says.
    pub fn push(&mut self, e: NodeEstimate) {
        self.measured.push(true);
        self.saturated
            .push(e.fit.as_ref().is_some_and(|f| f.saturated));
        if self.keep.histograms {
            self.histograms.push(e.histogram.as_ref());
        }
        if self.keep.runs {
            self.runs.runs.extend_from_slice(&e.runs);
            self.runs.ends.push(self.runs.runs.len() as u64);
        }
        if self.keep.fits {
            self.fits.push(e.fit.as_ref());
        }
        self.len += 1;
    }

    /// Appends a node that was not measured (its level's budget is 0): an empty place
    /// holder, so that estimates stay indexed by node.
    pub fn push_unmeasured(&mut self) {
        self.measured.push(false);
        self.saturated.push(false);
        if self.keep.histograms {
            self.histograms
                .push(crate::histogram::CountOfCounts::default().as_ref());
        }
        if self.keep.runs {
            self.runs.ends.push(self.runs.runs.len() as u64);
        }
        if self.keep.fits {
            self.fits.push(None);
        }
        self.len += 1;
    }

    /// Whether node `i` was measured (see [`Estimates::push_unmeasured`]).
    pub fn is_measured(&self, i: usize) -> bool {
        self.measured[i]
    }

    /// The parts one after the other. Each part is freed once copied.
    pub fn concat(keep: Keep, parts: Vec<Estimates>) -> Estimates {
        let mut out = Estimates::new(keep);
        let mut histograms = Vec::with_capacity(parts.len());
        for p in parts {
            debug_assert_eq!(p.keep, keep);
            out.len += p.len;
            out.saturated.extend_from_slice(&p.saturated);
            out.measured.extend_from_slice(&p.measured);
            histograms.push(p.histograms);
            let base = out.runs.runs.len() as u64;
            out.runs.runs.extend_from_slice(&p.runs.runs);
            out.runs.ends.extend(p.runs.ends.iter().map(|e| e + base));
            out.fits.append(p.fits);
        }
        if keep.histograms {
            out.histograms = HistogramSet::concat(histograms);
        }
        out
    }

    /// Node `i`'s independent histogram. Panics unless histograms are kept.
    pub fn histogram(&self, i: usize) -> HistRef<'_> {
        assert!(self.keep.histograms, "estimates kept without histograms");
        self.histograms.get(i)
    }

    /// Every node's independent histogram. Panics unless histograms are kept.
    pub fn histograms(&self) -> &HistogramSet {
        assert!(self.keep.histograms, "estimates kept without histograms");
        &self.histograms
    }

    /// Node `i`'s runs. Panics unless runs are kept.
    pub fn runs(&self, i: usize) -> &[GroupRun] {
        assert!(self.keep.runs, "estimates kept without runs");
        let start = i.checked_sub(1).map_or(0, |p| self.runs.ends[p]) as usize;
        &self.runs.runs[start..self.runs.ends[i] as usize]
    }

    /// Node `i`'s fit, if its method has one. Panics unless fits are kept.
    pub fn fit(&self, i: usize) -> Option<FitRef<'_>> {
        assert!(self.keep.fits, "estimates kept without fits");
        self.fits.get(i)
    }

    /// Whether every measured node has a fit (kept): an unmeasured node has none and
    /// needs none.
    pub fn all_fits(&self) -> bool {
        self.keep.fits && (0..self.len).all(|i| !self.measured[i] || self.fits.get(i).is_some())
    }

    /// Whether node `i`'s tail was saturated.
    pub fn saturated(&self, i: usize) -> bool {
        self.saturated[i]
    }

    /// The bytes held.
    pub fn memory_bytes(&self) -> u64 {
        self.histograms.memory_bytes()
            + (self.runs.ends.capacity() * 8
                + self.runs.runs.capacity() * std::mem::size_of::<GroupRun>()
                + self.saturated.capacity()) as u64
            + self.fits.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::CountOfCounts;

    fn estimate(sizes: &[u32], saturated: bool) -> NodeEstimate {
        let histogram = CountOfCounts::from_sizes(sizes.iter().copied());
        NodeEstimate {
            runs: histogram
                .pairs()
                .iter()
                .map(|&(size, count)| GroupRun {
                    size,
                    count,
                    variance: 1.0,
                })
                .collect(),
            fit: Some(NodeFit {
                head: vec![HeadBlock {
                    start: 0,
                    len: 3,
                    value: 1.5,
                }],
                from: 3,
                steps: histogram
                    .pairs()
                    .iter()
                    .map(|&(size, count)| StepRun {
                        size,
                        count: count as u32,
                        spread: 0.0,
                    })
                    .collect(),
                saturated,
                noise_variance: 2.0,
                raw: Vec::new(),
            }),
            histogram,
        }
    }

    #[test]
    fn arenas_give_back_what_was_pushed() {
        let all = vec![
            estimate(&[1, 1, 4], false),
            estimate(&[], false),
            estimate(&[7], true),
            NodeEstimate {
                fit: None,
                ..estimate(&[2], false)
            },
        ];
        let one = Estimates::from_vec(all.clone());
        let mut parts = vec![Estimates::new(Keep::ALL), Estimates::new(Keep::ALL)];
        for (i, e) in all.iter().enumerate() {
            parts[usize::from(i >= 1)].push(e.clone());
        }
        let two = Estimates::concat(Keep::ALL, parts);
        for est in [&one, &two] {
            assert_eq!(est.len(), 4);
            for (i, e) in all.iter().enumerate() {
                assert_eq!(est.histogram(i), e.histogram.as_ref());
                assert_eq!(est.runs(i), e.runs.as_slice());
                match (&e.fit, est.fit(i)) {
                    (Some(f), Some(r)) => {
                        assert_eq!(r.head, f.head.as_slice());
                        assert_eq!(r.steps, f.steps.as_slice());
                        assert_eq!(r.saturated, f.saturated);
                    }
                    (None, None) => {}
                    other => panic!("{other:?}"),
                }
                assert_eq!(
                    est.saturated(i),
                    e.fit.as_ref().is_some_and(|f| f.saturated)
                );
            }
            assert!(!est.all_fits());
        }
        let lean = Keep {
            histograms: false,
            runs: false,
            fits: true,
        };
        let mut only_fits = Estimates::new(lean);
        only_fits.push(all[0].clone());
        assert!(only_fits.all_fits());
        assert!(only_fits.memory_bytes() < one.memory_bytes());
    }
}
