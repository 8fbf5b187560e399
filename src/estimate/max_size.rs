//! Estimating the public bound K privately. (Being written.)

use crate::histogram::{CountOfCounts, Size};
use crate::noise::{NoiseError, NoiseStream};
use crate::privacy::Epsilon;

/// The estimated bound.
pub struct MaxSizeEstimate {
    pub max_size: Size,
}

pub fn estimate_max_size(
    root: &CountOfCounts,
    epsilon: &Epsilon,
    rng: &mut NoiseStream,
) -> Result<MaxSizeEstimate, NoiseError> {
    let _ = (root, epsilon, rng);
    todo!()
}
