//! The population key: a spending key that does not depend on the hierarchy.
//!
//! The content digest ([`Dataset::content_digest`]) keys spending by the leaves'
//! count-of-counts, so it follows the same data through another groups form, row order,
//! codes or names, but not through a change of the hierarchy: an added empty leaf, a
//! leaf split in two or the leaf level dropped give another digest for the same
//! people. The population key is computed from the **root's** count-of-counts without
//! its groups of size 0: the multiset of the sizes of every non-empty group, which none
//! of those changes touch.
//!
//! # What it matches
//! A dataset's [`PopulationKeys`] match a recorded key when the recorded one is
//! - its own key: the same non-empty groups under any hierarchy (empty leaves or groups
//!   of size 0 added or removed, leaves split or merged, levels added or dropped, codes
//!   and names changed);
//! - the key of a neighbour: one entity more or fewer in one group, including a group
//!   of size 1 added or removed (the privacy unit of Kuo et al.: such datasets are
//!   protected by the same ε, so their spending adds up);
//! - the key of one region of the first level below its root (up to [`MAX_PARTS`]
//!   regions), or its key is one such region's of the recorded dataset: a province
//!   released alone, cut whole from a dataset, and that dataset;
//! - the same with one entity more or fewer on either side, since a part is a dataset
//!   like any other and its neighbours are protected by the same ε: a province cut out
//!   with one entity added or removed matches the recorded whole (its key is a
//!   neighbour of one of the whole's recorded parts), and a whole one entity away from
//!   a recorded province's whole matches that province (one of its parts is a
//!   neighbour of the recorded key). In all, with `N(x)` the keys one entity or less
//!   from `x`, a dataset `D` matches a recorded line `R` when `R ∈ N(D)`, `R ∈ N(p)`
//!   for a part `p` of `D`, or `N(D)` holds a recorded part of `R`: the relation is
//!   symmetric, so which of the two was drawn first does not matter.
//!
//! # What it cannot match
//! Two entities or more apart (a chain of one-entity edits is matched one step at a
//! time only); a subset that is not one whole region of the first level below the root,
//! give or take one entity (a county alone, two provinces of five, a province with one
//! household moved); data merged with other data. A key is a digest: it says "the
//! same", never "close".
//!
//! # Construction
//! Each `(size, count)` pair of the root (size ≥ 1) is hashed with SHA-256 and the
//! 256-bit values are added modulo 2^256 (a multiset hash: the sum does not depend on
//! the order); the key is the SHA-256 of that sum. A neighbour changes at most four
//! pairs, so the keys of all `2 × distinct sizes + 1` neighbours cost one addition each,
//! whatever the number of groups; the same for each first-level part.
//!
//! Like the content digest it is a noise-free function of the confidential data: it is
//! kept in the agency's ledger only, never in a published file.

use std::collections::HashSet;

use sha2::{Digest, Sha256};

use super::{Dataset, NodeId, hex};
use crate::histogram::{Count, Size};
use crate::privacy::Diagnostic;

/// Regions of the first level below the root whose keys are kept (a province released
/// alone is matched to its country): above this many, none are (the ledger line would
/// grow with the hierarchy).
pub const MAX_PARTS: usize = 1_000;

/// A dataset's population key, the keys of its neighbours and of its first-level
/// regions. Confidential (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PopulationKeys {
    /// The key of the whole population.
    pub key: String,
    /// The keys of the regions of the first level below the root (none when the
    /// hierarchy has one level, or more than [`MAX_PARTS`] such regions); regions
    /// without an entity are left out.
    pub parts: Vec<String>,
    /// `key` and the keys of every dataset one entity away.
    near: HashSet<String>,
    /// The `parts` and the keys of every dataset one entity away from one of them.
    parts_near: HashSet<String>,
}

impl PopulationKeys {
    /// The keys a ledger line recorded: matched exactly (a neighbour's key cannot be
    /// computed from a digest).
    pub fn recorded(key: &str, parts: &[String]) -> PopulationKeys {
        PopulationKeys {
            key: key.to_string(),
            parts: parts.to_vec(),
            near: HashSet::from([key.to_string()]),
            parts_near: parts.iter().cloned().collect(),
        }
    }

    /// Whether a dataset recorded with population key `key` and first-level keys
    /// `parts` holds the same population as this one, give or take one entity, or one
    /// of its first-level regions does, or it holds one of the recorded one's (see the
    /// module documentation).
    pub fn matches(&self, key: &str, parts: &[String]) -> bool {
        self.names(key) || parts.iter().any(|p| self.near.contains(p))
    }

    /// Whether a key alone (a cap's key) names this population or one of its
    /// first-level regions, give or take one entity.
    pub fn names(&self, key: &str) -> bool {
        self.near.contains(key) || self.parts_near.contains(key)
    }

    /// How many keys [`PopulationKeys::names`] compares a key with: the whole's and its
    /// parts', each with its neighbours'.
    pub fn neighbours(&self) -> usize {
        self.near.len() + self.parts_near.len()
    }
}

/// A 256-bit number, little-endian limbs, added modulo 2^256.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sum([u64; 4]);

impl Sum {
    fn add(self, o: Sum) -> Sum {
        let mut out = [0u64; 4];
        let mut carry = false;
        for (i, limb) in out.iter_mut().enumerate() {
            let (a, c1) = self.0[i].overflowing_add(o.0[i]);
            let (b, c2) = a.overflowing_add(u64::from(carry));
            *limb = b;
            carry = c1 || c2;
        }
        Sum(out)
    }

    fn sub(self, o: Sum) -> Sum {
        let mut out = [0u64; 4];
        let mut borrow = false;
        for (i, limb) in out.iter_mut().enumerate() {
            let (a, b1) = self.0[i].overflowing_sub(o.0[i]);
            let (b, b2) = a.overflowing_sub(u64::from(borrow));
            *limb = b;
            borrow = b1 || b2;
        }
        Sum(out)
    }

    fn key(self) -> String {
        let mut h = Sha256::new();
        h.update(b"coco population key v1\0");
        for limb in self.0 {
            h.update(limb.to_le_bytes());
        }
        hex(&h.finalize())
    }
}

/// The hash of one pair; `count = 0` (no group of that size) hashes to zero.
fn pair(size: Size, count: Count) -> Sum {
    if count == 0 || size == 0 {
        return Sum::default();
    }
    let mut h = Sha256::new();
    h.update(b"coco population pair v1\0");
    h.update(u64::from(size).to_le_bytes());
    h.update(count.to_le_bytes());
    let d = h.finalize();
    let mut limbs = [0u64; 4];
    for (i, limb) in limbs.iter_mut().enumerate() {
        *limb = u64::from_le_bytes(d[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    }
    Sum(limbs)
}

/// The multiset sum of a histogram's non-empty sizes.
fn sum_of(pairs: &[(Size, Count)]) -> Sum {
    pairs
        .iter()
        .fold(Sum::default(), |acc, &(s, c)| acc.add(pair(s, c)))
}

/// The population key of a histogram's pairs (sorted by size).
pub fn key_of(pairs: &[(Size, Count)]) -> String {
    sum_of(pairs).key()
}

/// The key and the keys of every histogram one entity away from `pairs` (sorted by
/// size): one group one larger or one smaller, a group of size 1 added or removed.
fn near_keys(pairs: &[(Size, Count)]) -> HashSet<String> {
    let total = sum_of(pairs);
    let count_at = |s: Size| -> Count {
        pairs
            .binary_search_by_key(&s, |p| p.0)
            .map_or(0, |i| pairs[i].1)
    };
    // One group moves from size `from` to size `to` (0 is "no group": ignored).
    let moved = |from: Size, to: Size| -> Sum {
        let (cf, ct) = (count_at(from), count_at(to));
        total
            .sub(pair(from, cf))
            .add(pair(from, cf.saturating_sub(1)))
            .sub(pair(to, ct))
            .add(pair(to, ct + 1))
    };
    let mut near = HashSet::with_capacity(2 * pairs.len() + 2);
    near.insert(total.key());
    // A new group of size 1 (an entity in an empty or a new group).
    near.insert(moved(0, 1).key());
    for &(s, c) in pairs {
        if s == 0 || c == 0 {
            continue;
        }
        if let Some(up) = s.checked_add(1) {
            near.insert(moved(s, up).key());
        }
        near.insert(moved(s, s - 1).key());
    }
    near
}

impl Dataset {
    /// The population key, its neighbours' and the first-level regions' keys (see the
    /// module documentation). Confidential: for the agency's ledger only.
    pub fn population_keys(&self) -> PopulationKeys {
        let truth = self.truth().for_diagnostic(Diagnostic::Provenance);
        let root = truth.node(NodeId::ROOT).pairs();
        let h = &self.hierarchy;
        let part_pairs: Vec<&[(Size, Count)]> =
            if h.depth() > 1 && h.level_len(super::LevelId(1)) <= MAX_PARTS {
                h.level_nodes(super::LevelId(1))
                    .map(|id| truth.node(id).pairs())
                    .filter(|p| p.iter().any(|&(s, c)| s > 0 && c > 0))
                    .collect()
            } else {
                Vec::new()
            };
        PopulationKeys {
            key: key_of(root),
            parts: part_pairs.iter().map(|p| key_of(p)).collect(),
            near: near_keys(root),
            parts_near: part_pairs.iter().flat_map(|p| near_keys(p)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::CountOfCounts;

    fn pairs(sizes: &[Size]) -> Vec<(Size, Count)> {
        CountOfCounts::from_sizes(sizes.iter().copied())
            .pairs()
            .to_vec()
    }

    #[test]
    fn empty_groups_and_order_do_not_change_the_key() {
        assert_eq!(
            key_of(&pairs(&[1, 2, 2, 5])),
            key_of(&pairs(&[0, 5, 2, 0, 1, 2]))
        );
        assert_ne!(key_of(&pairs(&[1, 2, 2, 5])), key_of(&pairs(&[1, 2, 3, 5])));
        assert_ne!(key_of(&pairs(&[1, 2, 2])), key_of(&pairs(&[1, 2])));
    }

    /// The neighbours' keys by the sum's arithmetic are the keys of the neighbours
    /// built and hashed from scratch, and nothing else.
    #[test]
    fn neighbour_keys_are_the_keys_of_the_neighbours() {
        let base: Vec<Size> = vec![0, 1, 1, 2, 3, 3, 3, 7, 40];
        let mut expected = HashSet::new();
        expected.insert(key_of(&pairs(&base)));
        let mut with_one = base.clone();
        with_one.push(1);
        expected.insert(key_of(&pairs(&with_one)));
        for i in 0..base.len() {
            for delta in [-1i64, 1] {
                let s = i64::from(base[i]) + delta;
                if s < 0 {
                    continue;
                }
                let mut n = base.clone();
                n[i] = s as Size;
                expected.insert(key_of(&pairs(&n)));
            }
        }
        assert_eq!(near_keys(&pairs(&base)), expected);
        // Two entities away is not near.
        let mut two = base.clone();
        two[3] += 2;
        assert!(!near_keys(&pairs(&base)).contains(&key_of(&pairs(&two))));
    }

    #[test]
    fn sums_wrap_both_ways() {
        let max = Sum([u64::MAX; 4]);
        let one = Sum([1, 0, 0, 0]);
        assert_eq!(max.add(one), Sum::default());
        assert_eq!(Sum::default().sub(one), max);
        let x = pair(3, 9);
        assert_eq!(x.add(max).sub(max), x);
    }

    /// A dataset of provinces (each a list of districts' group sizes) under one root.
    fn provinces(provinces: &[&[&[Size]]]) -> Dataset {
        use crate::data::{GroupsForm, Hierarchy};
        let mut rows = Vec::new();
        let mut leaves = Vec::new();
        for (p, districts) in provinces.iter().enumerate() {
            for (d, sizes) in districts.iter().enumerate() {
                rows.push(vec!["R".to_string(), format!("p{p}"), format!("d{p}{d}")]);
                leaves.push(CountOfCounts::from_sizes(sizes.iter().copied()));
            }
        }
        let names = vec!["root".into(), "province".into(), "district".into()];
        let h = Hierarchy::from_leaf_paths(names, &rows).unwrap();
        Dataset::from_leaf_histograms(
            std::path::PathBuf::new(),
            h,
            GroupsForm::Histograms,
            vec![],
            leaves,
        )
    }

    /// Whether a draw recorded from `recorded` counts against `d`, and the other way
    /// round (the relation is symmetric, so both must agree).
    fn charged(d: &Dataset, recorded: &Dataset) -> bool {
        let (a, b) = (d.population_keys(), recorded.population_keys());
        let one = a.matches(&b.key, &b.parts);
        assert_eq!(one, b.matches(&a.key, &a.parts), "not symmetric");
        one
    }

    /// Issue 32: a first-level part matches the whole it was cut from give or take one
    /// entity on either side, whichever was drawn first; two entities apart it does not.
    #[test]
    fn parts_match_their_wholes_give_or_take_one_entity() {
        let north: &[&[Size]] = &[&[1, 2, 2, 4], &[3, 3, 0]];
        let south: &[&[Size]] = &[&[1, 1, 5], &[2, 6]];
        let whole = provinces(&[north, south]);
        let alone = provinces(&[north]);
        // North with one entity more or fewer, and two more.
        let plus: &[&[Size]] = &[&[1, 2, 2, 5], &[3, 3, 0]];
        let minus: &[&[Size]] = &[&[1, 2, 2, 4], &[3, 2, 0]];
        let new_group: &[&[Size]] = &[&[1, 2, 2, 4, 1], &[3, 3, 0]];
        let plus_two: &[&[Size]] = &[&[1, 2, 2, 6], &[3, 3, 0]];
        // Matched before: the part itself, either way.
        assert!(charged(&alone, &whole));
        for changed in [plus, minus, new_group] {
            // A province cut out with one entity added or removed, and the whole drawn.
            assert!(charged(&provinces(&[changed]), &whole));
            // The whole with one entity more or fewer in the province, and the
            // province drawn alone.
            assert!(charged(&provinces(&[changed, south]), &alone));
        }
        // Two entities apart: not the same data.
        assert!(!charged(&provinces(&[plus_two]), &whole));
        assert!(!charged(&provinces(&[plus_two, south]), &alone));
        // One entity in the province and one in the whole elsewhere: the province alone
        // still matches the whole's part (it is a part of it exactly).
        let south_plus: &[&[Size]] = &[&[1, 1, 6], &[2, 6]];
        assert!(charged(&alone, &provinces(&[north, south_plus])));
        // A key alone (a cap's) names a part give or take one entity.
        let keys = whole.population_keys();
        assert!(keys.names(&provinces(&[plus]).population_keys().key));
        assert!(!keys.names(&provinces(&[plus_two]).population_keys().key));
    }
}
