//! The unattributed-histogram estimator `Hg` (Kuo et al. §4.2). (Being written.)

use super::{IsotonicFit, NodeEstimate};
use crate::histogram::{Count, CountOfCounts, Size};
use crate::noise::{NoiseError, NoiseStream};
use crate::privacy::Epsilon;

pub fn measure(
    truth: &CountOfCounts,
    groups: Count,
    k: Size,
    epsilon: &Epsilon,
    rng: &mut NoiseStream,
) -> Result<Vec<i32>, NoiseError> {
    let _ = (truth, groups, k, epsilon, rng);
    todo!()
}

pub fn estimate(
    noisy: &[i32],
    groups: Count,
    k: Size,
    epsilon: &Epsilon,
    fit: IsotonicFit,
) -> NodeEstimate {
    let _ = (noisy, groups, k, epsilon, fit);
    todo!()
}
