//! How a total budget is split over the levels.

use super::*;

/// How a total budget is split over the levels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Allocation {
    /// Equal shares (the paper).
    Uniform,
    /// Each level gets `ratio` times its parent's share (Qardaji et al. §3.5 use the
    /// cube root of the branching factor, so lower levels get more).
    Geometric { ratio: Ratio },
}

/// Splits `total` (an ε or a ρ) over `levels` levels, root first. Shares are exact and
/// sum to `total` exactly: geometric shares above the leaves are rounded down to six
/// significant digits (readable budgets) and the leaves get the rest.
pub fn allocate<M: Unit>(
    total: &Budget<M>,
    levels: usize,
    allocation: Allocation,
) -> Vec<Budget<M>> {
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
            let mut weights: Vec<Ratio> = Vec::with_capacity(levels);
            let one = Ratio::from_ratio(1, 1).expect("1 is positive");
            weights.push(one);
            for l in 1..levels {
                let prev = &weights[l - 1];
                weights.push(prev.mul_big(&ratio));
            }
            let sum = Ratio::sum(&weights).expect("non-empty");
            let mut shares: Vec<Budget<M>> = Vec::with_capacity(levels);
            for w in &weights[..levels - 1] {
                let exact = total.scaled(&w.div_big(&sum));
                shares.push(exact.round_down_significant(6));
            }
            let used = Budget::sum(&shares);
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
