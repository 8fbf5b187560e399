//! Merging a group's two size estimates, from the parent's and the child's measurement
//! (Kuo et al. §5.3).
//!
//! # Formula
//! Weighted (Eq. 5 and 6): with estimates `x_p, x_c` and variances `v_p, v_c`,
//! `x = (x_p/v_p + x_c/v_c) / (1/v_p + 1/v_c)` and `v = (1/v_p + 1/v_c)^−1`: the minimum
//! variance unbiased linear combination of two independent unbiased estimates.
//!
//! Average: `x = (x_p + x_c)/2`, `v = (v_p + v_c)/4`.
//!
//! The merged size is then rounded to the nearest integer and kept within `[0, K]`.
//!
//! # Citations
//! Kuo et al., PVLDB 2018, §5.3; Hay et al., PVLDB 2010, §4.

use serde::{Deserialize, Serialize};

use crate::histogram::Size;

/// How a parent's and a child's estimate of one group's size are combined.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum MergeRule {
    /// Inverse-variance weighting (Eq. 5 and 6); the paper's choice.
    #[default]
    Weighted,
    /// Plain averaging.
    Average,
}

impl MergeRule {
    /// The merged estimate and its variance.
    pub fn merge(
        self,
        parent: f64,
        parent_variance: f64,
        child: f64,
        child_variance: f64,
    ) -> (f64, f64) {
        match self {
            MergeRule::Average => (
                (parent + child) / 2.0,
                (parent_variance + child_variance) / 4.0,
            ),
            MergeRule::Weighted => {
                // Precision 1/v; a zero variance marks an exact estimate and a variance
                // that is not a positive number carries no information.
                let precision = |v: f64| {
                    if v == 0.0 {
                        f64::INFINITY
                    } else if v.is_finite() && v > 0.0 {
                        1.0 / v
                    } else {
                        0.0
                    }
                };
                let (wp, wc) = (precision(parent_variance), precision(child_variance));
                match (wp.is_infinite(), wc.is_infinite()) {
                    (true, true) => ((parent + child) / 2.0, 0.0),
                    (true, false) => (parent, 0.0),
                    (false, true) => (child, 0.0),
                    _ if wp + wc == 0.0 => ((parent + child) / 2.0, f64::INFINITY),
                    _ => ((parent * wp + child * wc) / (wp + wc), 1.0 / (wp + wc)),
                }
            }
        }
    }
}

/// Rounds a merged size to the nearest integer within `[0, k]`.
pub fn round_size(x: f64, k: Size) -> Size {
    if x.is_nan() {
        return 0;
    }
    x.round().clamp(0.0, f64::from(k)) as Size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_favours_the_precise_estimate() {
        let (x, v) = MergeRule::Weighted.merge(10.0, 1.0, 20.0, 4.0);
        assert!((x - 12.0).abs() < 1e-12);
        assert!((v - 0.8).abs() < 1e-12);
        let (x, v) = MergeRule::Average.merge(10.0, 1.0, 20.0, 4.0);
        assert_eq!((x, v), (15.0, 1.25));
        assert_eq!(MergeRule::Weighted.merge(3.0, 0.0, 9.0, 2.0), (3.0, 0.0));
        assert_eq!(
            MergeRule::Weighted.merge(3.0, f64::NAN, 9.0, 2.0),
            (9.0, 2.0)
        );
    }

    #[test]
    fn rounding_stays_in_range() {
        assert_eq!(round_size(2.5, 10), 3);
        assert_eq!(round_size(-0.7, 10), 0);
        assert_eq!(round_size(11.2, 10), 10);
        assert_eq!(round_size(f64::NAN, 10), 0);
        assert_eq!(round_size(f64::INFINITY, 10), 10);
    }
}
