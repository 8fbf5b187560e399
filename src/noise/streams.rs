//! Which stream of a key each draw of noise takes, and which key each sub-run takes:
//! one type owns both, so no two measurements can share noise by accident.
//!
//! A [`super::NoiseSource`] is a 256-bit ChaCha20 key; ChaCha20 gives every key 2⁶⁴
//! independent streams, named by a 64-bit stream number. coco uses that number in two
//! disjoint ranges:
//!
//! - **Measurement streams**, below 2⁴⁸: [`Purpose`] in bits 40–47, the region's
//!   [`NodeId`](crate::data::NodeId) (or a test's index) in bits 0–31. One stream per
//!   measured region and purpose.
//! - **Derived keys**, at and above 2⁶³: a [`Subkey`] names a sub-run (a preview trial, the
//!   margins of error, one of their bootstrap replicates); its key is the first 32
//!   bytes of the stream `2⁶⁴ − 1 − (kind · 2³² + index)` of the parent key.
//!
//! # Why no two draws share noise
//! The map from ([`Purpose`], index) to a stream number is injective: the purpose's tag
//! and the index occupy separate bits, and every tag is distinct ([`Purpose::tag`]). The
//! map from a [`Subkey`] to its stream number is injective the same way, and its range
//! (≥ 2⁶³) is disjoint from the measurements' (< 2⁴⁸). So under one key, two different
//! purposes, regions or sub-runs never read the same stream; under two different keys
//! (a key and a key derived from it, or two derived keys) ChaCha20's streams are
//! independent as long as the keys differ, which they do except with probability
//! 2⁻²⁵⁶. `tests::encodings_are_injective_and_disjoint` checks the encodings at every
//! tag and at the ends of every index range, and decodes random values back.
//!
//! Every stream coco draws goes through [`Purpose::stream`] or [`Subkey`]: the stream
//! number's field is private, so no caller picks a number by hand.
//!
//! # Citations
//! Bernstein, *ChaCha, a variant of Salsa20*, 2008 (the 64-bit nonce used as the stream
//! number); the `rand_chacha` crate's `set_stream`.

use crate::data::NodeId;

/// Why a stream is drawn: one stream per purpose and region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Purpose {
    /// A region's measurement in a release or a preview trial.
    Measure,
    /// A region's measurement for the bottom-up baseline of a preview trial.
    BottomUp,
    /// The noisy maximum that estimates the bound `K` (the root only).
    MaxSize,
    /// A region's measurement in a bootstrap replicate of the margins of error.
    Replicate,
    /// Tests, benchmarks and the privacy audit: numbered streams of their own, never
    /// those of a release.
    Test,
}

impl Purpose {
    /// Every purpose, for tests that walk them all.
    pub const ALL: [Purpose; 5] = [
        Purpose::Measure,
        Purpose::BottomUp,
        Purpose::MaxSize,
        Purpose::Replicate,
        Purpose::Test,
    ];

    /// The purpose's tag in bits 40–47 of its streams' numbers. The first three keep
    /// the numbers earlier versions used (a seeded release draws the same noise).
    const fn tag(self) -> u64 {
        match self {
            Purpose::Measure => 0,
            Purpose::BottomUp => 1,
            Purpose::MaxSize => 2,
            Purpose::Replicate => 3,
            Purpose::Test => 0xff,
        }
    }

    /// The stream of region `node` for this purpose.
    pub fn node(self, node: NodeId) -> StreamId {
        self.index(node.0)
    }

    /// The stream numbered `index` for this purpose (a test's trial, a benchmark).
    pub fn index(self, index: u32) -> StreamId {
        StreamId((self.tag() << TAG_SHIFT) | u64::from(index))
    }
}

/// A sub-run with a key of its own, derived from its parent's ([`super::NoiseSource::derive`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Subkey {
    /// Preview trial `t`: its measurements, its baseline and its margins of error.
    Trial(u32),
    /// The margins of error of a release (or of a preview trial): apart from the
    /// release's own key, so the bootstrap never replays the release's noise.
    Margins,
    /// Bootstrap replicate `r`, under the margins' key.
    Replicate(u32),
    /// Trial `i` of a test or the privacy audit.
    Test(u32),
}

impl Subkey {
    /// The stream number whose first 32 bytes are the derived key. Trials keep the
    /// numbers earlier versions used (`2⁶⁴ − 1 − t`).
    pub(super) const fn stream(self) -> u64 {
        let (kind, index) = match self {
            Subkey::Trial(t) => (0u64, t),
            Subkey::Margins => (1, 0),
            Subkey::Replicate(r) => (2, r),
            Subkey::Test(i) => (3, i),
        };
        u64::MAX - ((kind << 32) | index as u64)
    }
}

/// Where a purpose's tag starts in a stream number.
const TAG_SHIFT: u32 = 40;

/// One measurement's stream number: made only by [`Purpose`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamId(u64);

impl StreamId {
    /// The ChaCha20 stream number.
    pub(super) fn number(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    /// The purpose and index a measurement stream number encodes.
    fn decode_stream(n: u64) -> Option<(Purpose, u32)> {
        let tag = n >> TAG_SHIFT;
        let rest = n & ((1 << TAG_SHIFT) - 1);
        let purpose = Purpose::ALL.into_iter().find(|p| p.tag() == tag)?;
        Some((purpose, u32::try_from(rest).ok()?))
    }

    /// The sub-run a derived key's stream number encodes.
    fn decode_subkey(n: u64) -> Option<Subkey> {
        let v = u64::MAX - n;
        let (kind, index) = (v >> 32, (v & 0xffff_ffff) as u32);
        match kind {
            0 => Some(Subkey::Trial(index)),
            1 if index == 0 => Some(Subkey::Margins),
            2 => Some(Subkey::Replicate(index)),
            3 => Some(Subkey::Test(index)),
            _ => None,
        }
    }

    fn subkeys(index: u32) -> [Subkey; 4] {
        [
            Subkey::Trial(index),
            Subkey::Margins,
            Subkey::Replicate(index),
            Subkey::Test(index),
        ]
    }

    #[test]
    fn encodings_are_injective_and_disjoint() {
        let ends = [0, 1, 2, u32::MAX / 2, u32::MAX - 1, u32::MAX];
        let mut seen = HashSet::new();
        for p in Purpose::ALL {
            for &i in &ends {
                let n = p.index(i).number();
                assert!(
                    n < 1 << 48,
                    "{p:?} {i}: {n:#x} leaves the measurement range"
                );
                assert_eq!(decode_stream(n), Some((p, i)));
                assert!(seen.insert(n), "{p:?} {i} shares stream {n:#x}");
            }
        }
        for &i in &ends {
            for s in subkeys(i) {
                let n = s.stream();
                assert!(n >= 1 << 63, "{s:?}: {n:#x} is in the measurement range");
                assert_eq!(decode_subkey(n), Some(s));
                // `Margins` has no index: it is met once per value of `i`.
                if seen.insert(n) {
                    continue;
                }
                assert_eq!(s, Subkey::Margins, "{s:?} shares stream {n:#x}");
            }
        }
        // Tags are distinct and fit their 8 bits.
        let tags: HashSet<u64> = Purpose::ALL.iter().map(|p| p.tag()).collect();
        assert_eq!(tags.len(), Purpose::ALL.len());
        assert!(tags.iter().all(|&t| t < 256));
    }

    proptest! {
        #[test]
        fn streams_decode_back(p in 0..Purpose::ALL.len(), i in any::<u32>()) {
            let p = Purpose::ALL[p];
            prop_assert_eq!(decode_stream(p.index(i).number()), Some((p, i)));
            prop_assert_eq!(p.node(NodeId(i)), p.index(i));
        }

        #[test]
        fn subkeys_decode_back(k in 0..4usize, i in any::<u32>()) {
            let s = subkeys(i)[k];
            prop_assert_eq!(decode_subkey(s.stream()), Some(s));
        }
    }
}
