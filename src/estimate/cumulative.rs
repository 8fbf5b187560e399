//! The cumulative-histogram estimator `Hc` (Kuo et al. §4.3). (Being written.)

use super::{GroupRun, IsotonicFit, NodeEstimate};
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

pub fn estimate(noisy: &[i64], groups: Count, epsilon: &Epsilon, fit: IsotonicFit) -> NodeEstimate {
    let _ = (
        noisy,
        groups,
        epsilon,
        fit,
        GroupRun {
            size: 0,
            count: 0,
            variance: 0.0,
        },
    );
    todo!()
}
