//! The naive estimator (Kuo et al. §4.1). (Being written.)

use super::NodeEstimate;
use crate::histogram::{Count, CountOfCounts, Size};
use crate::noise::{NoiseError, NoiseStream};
use crate::privacy::Epsilon;

pub fn measure(
    truth: &CountOfCounts,
    k: Size,
    epsilon: &Epsilon,
    rng: &mut NoiseStream,
) -> Result<Vec<i64>, NoiseError> {
    let _ = (truth, k, epsilon, rng);
    todo!()
}

pub fn estimate(noisy: &[i64], groups: Count, epsilon: &Epsilon) -> NodeEstimate {
    let _ = (noisy, groups, epsilon);
    todo!()
}
