//! Randomness and exact integer noise.
//!
//! * [`NoiseSource`]: the cryptographically secure generator behind every measurement,
//!   keyed from the operating system (`getrandom`) or, for tests and previews only, from
//!   a seed. How it was keyed ([`Randomness`]) is recorded with every result.
//! * [`NoiseStream`]: one independent ChaCha20 stream per measurement, so that every
//!   node draws its own noise whatever order the nodes are processed in (and in
//!   parallel), and a seeded run is reproducible.
//! * [`DiscreteLaplace`]: the two-sided geometric distribution of Kuo et al.
//!   Definition 3, sampled exactly with integer arithmetic: by table inversion with lazy
//!   exact comparison ([`inversion`], on rigorous bounds from [`exact_exp`]), or by the
//!   reference sampler of Canonne, Kamath and Steinke ([`cks`]) for very large scales.
//! * [`DiscreteGaussian`]: the discrete Gaussian `N_Z(0, σ²)` for an exact rational
//!   [`Sigma2`] (for ρ-zCDP), sampled exactly by Canonne, Kamath and Steinke's rejection
//!   from the discrete Laplace, its acceptance coin decided on rigorous integer bounds
//!   ([`gaussian_acceptance`]).

pub mod cks;
pub mod discrete_gaussian;
pub mod discrete_laplace;
pub mod exact_exp;
pub mod gaussian_acceptance;
pub mod inversion;
pub mod mechanism;
pub mod streams;

pub use discrete_gaussian::{DiscreteGaussian, Sigma2};
pub use discrete_laplace::{DiscreteLaplace, NoiseError};
pub use mechanism::{MechanismKind, Noise, Sensitivity};
pub use streams::{Purpose, StreamId, Subkey};

use rand::rngs::{ChaCha20Rng, SysRng};
use rand::{Rng, SeedableRng, TryRng};
use serde::{Deserialize, Serialize};

/// How the noise of a result was drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum Randomness {
    /// A fresh 256-bit key from the operating system: the only kind fit to publish.
    Os,
    /// Derived from a seed: reproducible, for tests and previews, never for publication.
    Seeded { seed: u64 },
}

impl Randomness {
    pub fn is_reproducible(self) -> bool {
        matches!(self, Randomness::Seeded { .. })
    }

    pub fn describe(self) -> String {
        match self {
            Randomness::Os => "ChaCha20 keyed from the operating system".to_string(),
            Randomness::Seeded { seed } => {
                format!("ChaCha20 keyed from seed {seed} (reproducible, not for publication)")
            }
        }
    }
}

/// The key of a run's noise. Streams derived from it are independent.
#[derive(Clone, Copy)]
pub struct NoiseSource {
    key: [u8; 32],
    randomness: Randomness,
}

impl std::fmt::Debug for NoiseSource {
    // Never print the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NoiseSource")
            .field("randomness", &self.randomness)
            .finish_non_exhaustive()
    }
}

/// The operating system could not provide randomness.
#[derive(Debug, thiserror::Error)]
#[error("the operating system's random number generator failed: {0}")]
pub struct OsRandomnessError(String);

impl NoiseSource {
    /// A fresh key from the operating system.
    pub fn from_os() -> Result<Self, OsRandomnessError> {
        let mut key = [0u8; 32];
        SysRng
            .try_fill_bytes(&mut key)
            .map_err(|e| OsRandomnessError(e.to_string()))?;
        Ok(Self {
            key,
            randomness: Randomness::Os,
        })
    }

    /// A key derived from `seed`: reproducible, for tests and previews only.
    pub fn seeded(seed: u64) -> Self {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        Self {
            key,
            randomness: Randomness::Seeded { seed },
        }
    }

    /// An independent source for a sub-run (a preview trial, the margins of error, a
    /// replicate): same kind of key, new value ([`Subkey`]). For a seeded source the
    /// result is reproducible.
    pub fn derive(&self, sub: Subkey) -> NoiseSource {
        let mut rng = ChaCha20Rng::from_seed(self.key);
        rng.set_stream(sub.stream());
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        Self {
            key,
            randomness: self.randomness,
        }
    }

    pub fn randomness(&self) -> Randomness {
        self.randomness
    }

    /// The key itself, for the one key coco publishes: the margins' bootstrap key
    /// ([`crate::release::margins::BootstrapKey`]), a key of its own (derived, or fresh
    /// from the operating system) whose noise post-processes the published tables. A
    /// run's own key is never published: anyone holding it could subtract its noise.
    pub(crate) fn key_bytes(&self) -> [u8; 32] {
        self.key
    }

    /// A source from a published key (the margins' bootstrap re-run from a release
    /// directory, [`crate::release::margins::BootstrapKey`]).
    pub(crate) fn from_key(key: [u8; 32], randomness: Randomness) -> Self {
        Self { key, randomness }
    }

    /// The stream for one measurement ([`Purpose::node`]). Distinct ids give
    /// independent streams.
    pub fn stream(&self, id: StreamId) -> NoiseStream {
        let mut rng = ChaCha20Rng::from_seed(self.key);
        rng.set_stream(id.number());
        NoiseStream { rng }
    }
}

/// A ChaCha20 stream: the only generator measurements accept.
pub struct NoiseStream {
    rng: ChaCha20Rng,
}

impl TryRng for NoiseStream {
    type Error = std::convert::Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(self.rng.next_u32())
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(self.rng.next_u64())
    }

    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        self.rng.fill_bytes(dst);
        Ok(())
    }
}

impl rand::TryCryptoRng for NoiseStream {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a = NoiseSource::seeded(7);
        let b = NoiseSource::seeded(7);
        let m = Purpose::Measure;
        let x: Vec<u64> = (0..4).map(|_| a.stream(m.index(3)).next_u64()).collect();
        assert!(x.windows(2).all(|w| w[0] == w[1]));
        assert_eq!(
            a.stream(m.index(3)).next_u64(),
            b.stream(m.index(3)).next_u64()
        );
        assert_ne!(
            a.stream(m.index(3)).next_u64(),
            a.stream(m.index(4)).next_u64()
        );
        assert_ne!(
            a.stream(m.index(3)).next_u64(),
            a.stream(Purpose::BottomUp.index(3)).next_u64()
        );
        assert_ne!(
            a.derive(Subkey::Trial(0)).stream(m.index(0)).next_u64(),
            a.derive(Subkey::Trial(1)).stream(m.index(0)).next_u64()
        );
        assert_ne!(
            a.derive(Subkey::Trial(0)).stream(m.index(0)).next_u64(),
            a.derive(Subkey::Replicate(0)).stream(m.index(0)).next_u64()
        );
        assert_eq!(
            a.derive(Subkey::Trial(5)).randomness(),
            Randomness::Seeded { seed: 7 }
        );
    }

    #[test]
    fn os_keys_differ() {
        let a = NoiseSource::from_os().unwrap();
        let b = NoiseSource::from_os().unwrap();
        assert_eq!(a.randomness(), Randomness::Os);
        assert_ne!(
            a.stream(Purpose::Test.index(0)).next_u64(),
            b.stream(Purpose::Test.index(0)).next_u64()
        );
        assert!(!format!("{a:?}").contains("key:"));
    }
}
