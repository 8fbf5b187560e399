//! Shapes unlike coco's own generators, for the robustness corpus: datasets on which a
//! consistency step or a default plan tuned on `us-blocks` and `sample` could break.
//!
//! Each shape takes a `scale` (the number of regions grows with it) and draws from its
//! own ChaCha20 streams, so a seed and a scale give the same dataset on every machine.
//! `tests/library/robustness.rs` runs every shape at a small scale; `coco gen SHAPE` writes one
//! at scale 1.
//!
//! | shape | what it stresses |
//! |---|---|
//! | `group-quarters` | Poisson household sizes with rare group quarters of medium size (median 60, many just above a tail's `L = 20`) scattered over few blocks, and many empty blocks: biases of thousands of blocks that add up at the top |
//! | `dense` | dense large sizes (lognormal, median 120, up to 8,000): most groups above `L`, where a fixed tail saturates |
//! | `skewed` | one child holds 99% of its parent's groups at every level: a parent and its child measure nearly the same thing |
//! | `chain` | eight levels, most regions with one child: long chains of near-copies |
//! | `giant` | one group of 9,000 and one of 50,000 (above `K`) among households |
//! | `heavy-tail` | Pareto sizes (α = 1.2): groups at every scale up to 100,000 |
//! | `many-tiny` | thousands of regions of 0 to 3 groups under one parent |
//! | `sparse` | most regions empty, the others small: fits bounded by small `G` |
//! | `deep` | six levels, 2 to 4 children each, about 20,000 groups: households with a Pareto tail across `L = 20` and a few groups of 500 to 3,000 |
//! | `threshold` | seven levels, 1 to 5 children each: lognormal sizes (median 12) whose mass lies around `L = 20`, so the head and the tail split one bulk |

use crate::wire::Named;
use libm::{exp, log as ln};

use super::random::GenRng;
use super::{GenerateError, Generated, Groups};
use crate::histogram::{CountOfCounts, Size};

/// A shape of the robustness corpus (see the module docs).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
#[value(rename_all = "kebab-case")]
pub enum Shape {
    GroupQuarters,
    Dense,
    Skewed,
    Chain,
    Giant,
    HeavyTail,
    ManyTiny,
    Sparse,
    Deep,
    Threshold,
}

impl Shape {
    /// Draws the shape at `scale` (1 for `coco gen`; the number of regions grows with
    /// it, at least one region per level).
    pub fn build(self, seed: u64, scale: f64) -> Result<Generated, GenerateError> {
        if !(scale > 0.0 && scale <= 100.0) {
            return Err(GenerateError::BadScale { scale });
        }
        let count = |n: f64| ((n * scale).round() as usize).max(1);
        let mut b = Builder::new(self, seed);
        match self {
            Shape::GroupQuarters => {
                for s in 0..count(8.0) {
                    for c in 0..12 {
                        let mean = b.rng.uniform(2.0, 3.2);
                        for t in 0..4 {
                            for k in 0..40 {
                                let mut sizes = Vec::new();
                                if b.rng.unit() >= 0.45 {
                                    let n = 1 + poisson(&mut b.rng, 13.0);
                                    for _ in 0..n {
                                        sizes.push(households(&mut b.rng, mean, 15));
                                    }
                                }
                                if b.rng.unit() < 1.0 / 120.0 {
                                    sizes.push(lognormal(&mut b.rng, 60.0, 1.1).clamp(1, 5_000));
                                }
                                b.leaf(&[s, c, t, k], sizes);
                            }
                        }
                    }
                }
            }
            Shape::Dense => {
                for a in 0..count(4.0) {
                    for c in 0..5 {
                        let n = b.rng.between(2_000, 5_000);
                        let sizes = (0..n)
                            .map(|_| lognormal(&mut b.rng, 120.0, 1.3).clamp(1, 8_000))
                            .collect();
                        b.leaf(&[a, c], sizes);
                    }
                }
            }
            Shape::Skewed => {
                // Child 0 holds 99 parts to the others' 1/99 each, at every level.
                for s in 0..count(6.0) {
                    for c in 0..8 {
                        for k in 0..10 {
                            let big = [s, c, k].iter().filter(|&&i| i == 0).count() as i32;
                            let mean = 0.4 * 99f64.powi(big);
                            let n = poisson(&mut b.rng, mean);
                            let mut sizes: Vec<Size> =
                                (0..n).map(|_| households(&mut b.rng, 2.7, 15)).collect();
                            if b.rng.unit() < 0.05 {
                                sizes.push(lognormal(&mut b.rng, 60.0, 1.0).clamp(1, 5_000));
                            }
                            b.leaf(&[s, c, k], sizes);
                        }
                    }
                }
            }
            Shape::Chain => {
                let mut path = Vec::new();
                chain(&mut b, &mut path, 7, 60.0 * scale);
            }
            Shape::Giant => {
                for s in 0..count(6.0) {
                    for c in 0..30 {
                        let n = poisson(&mut b.rng, 300.0);
                        let mut sizes: Vec<Size> =
                            (0..n).map(|_| households(&mut b.rng, 2.4, 15)).collect();
                        if s == 3 % count(6.0) && c == 7 {
                            sizes.push(9_000);
                        }
                        if s == 1 % count(6.0) && c == 20 {
                            sizes.push(50_000);
                        }
                        b.leaf(&[s, c], sizes);
                    }
                }
            }
            Shape::HeavyTail => {
                for s in 0..count(5.0) {
                    for c in 0..20 {
                        let n = poisson(&mut b.rng, 800.0);
                        let sizes = (0..n)
                            .map(|_| {
                                // Pareto(α = 1.2) with scale 1: u^(−1/α).
                                let x = exp(-ln(1.0 - b.rng.unit()) / 1.2);
                                (x.floor() as Size).clamp(1, 100_000)
                            })
                            .collect();
                        b.leaf(&[s, c], sizes);
                    }
                }
            }
            Shape::ManyTiny => {
                for c in 0..count(4_000.0) {
                    let n = [0, 0, 1, 1, 2, 3][b.rng.below(6) as usize];
                    let sizes = (0..n).map(|_| households(&mut b.rng, 2.2, 4)).collect();
                    b.leaf(&[c], sizes);
                }
            }
            Shape::Sparse => {
                for s in 0..count(10.0) {
                    for c in 0..40 {
                        let sizes = if b.rng.unit() < 0.6 {
                            Vec::new()
                        } else {
                            let n = poisson(&mut b.rng, 25.0);
                            (0..n).map(|_| households(&mut b.rng, 2.0, 15)).collect()
                        };
                        b.leaf(&[s, c], sizes);
                    }
                }
            }
            Shape::Deep => {
                let mut path = Vec::new();
                branches(&mut b, &mut path, 5, (2, 4), &mut |b| {
                    let n = poisson(&mut b.rng, 85.0 * scale);
                    let mut sizes: Vec<Size> = (0..n)
                        .map(|_| {
                            if b.rng.unit() < 0.06 {
                                // Pareto(α = 1.5) from 8: groups across L = 20.
                                let x = 8.0 * exp(-ln(1.0 - b.rng.unit()) / 1.5);
                                (x.floor() as Size).min(400)
                            } else {
                                households(&mut b.rng, 2.5, 12)
                            }
                        })
                        .collect();
                    if b.rng.unit() < 0.03 {
                        sizes.push(b.rng.between(500, 3_000) as Size);
                    }
                    sizes
                });
            }
            Shape::Threshold => {
                let mut path = Vec::new();
                branches(&mut b, &mut path, 6, (1, 5), &mut |b| {
                    let n = poisson(&mut b.rng, 12.0 * scale);
                    (0..n)
                        .map(|_| lognormal(&mut b.rng, 12.0, 0.6).min(2_000))
                        .collect()
                });
            }
        }
        Ok(b.finish())
    }
}

/// The levels of each shape, root first.
fn levels(shape: Shape) -> &'static [&'static str] {
    match shape {
        Shape::GroupQuarters => &["nation", "state", "county", "tract", "block"],
        Shape::Dense => &["city", "borough", "zone"],
        Shape::Skewed => &["nation", "state", "county", "block"],
        Shape::Chain => &["l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7"],
        Shape::Giant | Shape::HeavyTail | Shape::Sparse => &["nation", "state", "county"],
        Shape::ManyTiny => &["nation", "area"],
        Shape::Deep => &["nation", "region", "state", "county", "tract", "block"],
        Shape::Threshold => &["l0", "l1", "l2", "l3", "l4", "l5", "l6"],
    }
}

/// Builds a dataset leaf by leaf: each leaf's path of child indices below the root.
struct Builder {
    shape: Shape,
    rng: GenRng,
    leaves: Vec<Vec<String>>,
    hists: Vec<CountOfCounts>,
}

impl Builder {
    fn new(shape: Shape, seed: u64) -> Self {
        Builder {
            shape,
            rng: GenRng::new(seed, 100 + shape as u64),
            leaves: Vec::new(),
            hists: Vec::new(),
        }
    }

    /// A leaf at `path` (indices below the root) with groups of `sizes`. Codes are the
    /// path's indices joined, e.g. `R.3.0.12`, so they are unique and sort in order.
    fn leaf(&mut self, path: &[usize], sizes: Vec<Size>) {
        let mut codes = vec!["R".to_string()];
        for &i in path {
            let parent = codes.last().expect("the root").clone();
            codes.push(format!("{parent}.{i:04}"));
        }
        self.leaves.push(codes);
        self.hists.push(CountOfCounts::from_sizes(sizes));
    }

    fn finish(self) -> Generated {
        let mut order: Vec<usize> = (0..self.leaves.len()).collect();
        order.sort_by(|&a, &b| self.leaves[a].cmp(&self.leaves[b]));
        let leaves = order.iter().map(|&i| self.leaves[i].clone()).collect();
        let hists = order.iter().map(|&i| self.hists[i].clone()).collect();
        Generated {
            level_names: levels(self.shape).iter().map(|s| s.to_string()).collect(),
            leaves,
            names: vec![(
                "R".into(),
                format!("{} (coco robustness shape)", self.shape.name()),
            )],
            groups: Groups::Histograms(hists),
        }
    }
}

/// A chain below `path` with `depth` more levels: one child mostly, sometimes two or
/// three; each leaf a town of households, one in five with a group quarters.
fn chain(b: &mut Builder, path: &mut Vec<usize>, depth: usize, town: f64) {
    if depth == 0 {
        let n = poisson(&mut b.rng, town);
        let mut sizes: Vec<Size> = (0..n).map(|_| households(&mut b.rng, 3.0, 15)).collect();
        if b.rng.unit() < 0.2 {
            sizes.push(lognormal(&mut b.rng, 40.0, 0.8).clamp(1, 5_000));
        }
        let p = path.clone();
        b.leaf(&p, sizes);
        return;
    }
    let children = [1, 1, 1, 2, 3][b.rng.below(5) as usize];
    for i in 0..children {
        path.push(i);
        chain(b, path, depth - 1, town);
        path.pop();
    }
}

/// A tree below `path` with `depth` more levels, each region with a uniform number of
/// children in `children` (inclusive); each leaf's groups drawn by `leaf`.
fn branches(
    b: &mut Builder,
    path: &mut Vec<usize>,
    depth: usize,
    children: (u64, u64),
    leaf: &mut impl FnMut(&mut Builder) -> Vec<Size>,
) {
    if depth == 0 {
        let sizes = leaf(b);
        let p = path.clone();
        b.leaf(&p, sizes);
        return;
    }
    let n = b.rng.between(children.0, children.1);
    for i in 0..n as usize {
        path.push(i);
        branches(b, path, depth - 1, children, leaf);
        path.pop();
    }
}

/// A household size: 1 + Poisson(mean − 1), at most `cap`.
fn households(rng: &mut GenRng, mean: f64, cap: Size) -> Size {
    (1 + poisson(rng, (mean - 1.0).max(0.0)) as Size).min(cap)
}

/// A lognormal size with the given median and log-scale σ (Irwin–Hall normal), rounded.
fn lognormal(rng: &mut GenRng, median: f64, sigma: f64) -> Size {
    let z = (0..12).map(|_| rng.unit()).sum::<f64>() - 6.0;
    exp(ln(median) + sigma * z)
        .round()
        .clamp(1.0, f64::from(u32::MAX)) as Size
}

/// A Poisson draw (Knuth's product of uniforms for small means, a rounded normal
/// beyond 30: the shapes need the spread, not the exact law).
fn poisson(rng: &mut GenRng, mean: f64) -> u64 {
    if mean <= 0.0 {
        return 0;
    }
    if mean > 30.0 {
        let z = (0..12).map(|_| rng.unit()).sum::<f64>() - 6.0;
        return (mean + mean.sqrt() * z).round().max(0.0) as u64;
    }
    let limit = exp(-mean);
    let mut k = 0;
    let mut p = rng.unit();
    while p > limit {
        k += 1;
        p *= rng.unit();
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::privacy::Diagnostic;

    #[test]
    fn every_shape_builds_a_valid_dataset_deterministically() {
        for shape in Shape::all().into_iter() {
            let g = shape.build(7, 0.25).unwrap();
            let d = g.to_dataset().unwrap();
            assert_eq!(d.hierarchy.depth(), levels(shape).len(), "{}", shape.name());
            let root = d
                .truth()
                .for_diagnostic(Diagnostic::Inspect)
                .node(crate::data::NodeId::ROOT)
                .groups();
            assert!(root > 0, "{}", shape.name());
            assert_eq!(
                shape.build(7, 0.25).unwrap().leaf_histograms(),
                g.leaf_histograms(),
                "{}",
                shape.name()
            );
        }
    }

    #[test]
    fn the_shapes_have_their_features() {
        let hist = |shape: Shape| {
            let d = shape.build(3, 1.0).unwrap().to_dataset().unwrap();
            d.truth()
                .for_diagnostic(Diagnostic::Inspect)
                .node(crate::data::NodeId::ROOT)
                .to_owned()
        };
        // Group quarters just above L = 20 exist, and most groups are households.
        let gq = hist(Shape::GroupQuarters);
        let above = |h: &CountOfCounts, s: Size| {
            h.pairs()
                .iter()
                .filter(|p| p.0 > s)
                .map(|p| p.1)
                .sum::<u64>()
        };
        assert!(above(&gq, 20) - above(&gq, 40) > 10, "{:?}", gq.pairs());
        // Dense: most groups above 20.
        let dense = hist(Shape::Dense);
        assert!(above(&dense, 20) * 10 > dense.groups() * 7);
        // Giant: a group of 50,000.
        assert_eq!(hist(Shape::Giant).max_size(), Some(50_000));
        assert!(hist(Shape::HeavyTail).max_size().unwrap() > 1_000);
    }
}
