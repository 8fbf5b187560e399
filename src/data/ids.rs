//! Group and entity ids in memory proportional to their number, not their text.
//!
//! Ids are arbitrary strings, and a file may hold tens of millions of them, so they are
//! never stored. Instead:
//!
//! * **Duplicate detection** ([`IdHashes`]) keeps one 64-bit xxh3 hash per id (8 bytes
//!   each), sorts them once the file is read, and treats a repeated hash only as a
//!   suspicion: the file is read a second time, keeping the real ids whose hash is
//!   suspect, and a duplicate is reported only if two real ids are equal. A hash
//!   collision between different ids (about one chance in 370,000 for 10 million ids)
//!   therefore costs a second read, never a false error. The second read happens only
//!   when some hash repeats, so a valid file is read once.
//! * **Entity → group lookup** ([`GroupIndex`]) keeps both 64-bit halves of each group
//!   id's 128-bit xxh3 hash (16 bytes per group) and a map from the low half to the
//!   group's number (about 16 more); a match must agree on both halves. Groups whose
//!   low halves coincide are confirmed as in [`IdHashes`] and then looked up by their
//!   real ids. An entity's unknown group id could be taken for a known one only if its
//!   full 128-bit hash equalled that group's: with 10^7 groups and 10^8 entities, a
//!   chance below 10^-23. Entities are usually listed group by group, so the group
//!   after the last one found is tried first, reading memory in order.
//!
//! The hashes use fixed seeds, so loading is deterministic. Crafted ids that collide
//! only make the second read longer.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;

use rayon::slice::ParallelSliceMut;
use xxhash_rust::xxh3::{xxh3_64, xxh3_128};

use super::csv_input::shown;
use super::load::{LoadError, LoadProgress};
use super::table::TableFile;

/// A key that is already a uniform hash and needs no hashing again.
#[derive(Default)]
pub(crate) struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type PrehashedMap<V> = HashMap<u64, V, BuildHasherDefault<Prehashed>>;

/// A duplicate id, confirmed on the real ids.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Duplicate {
    /// The id, cut for display.
    pub id: String,
    pub first_line: u64,
    pub line: u64,
    /// 0-based field index of the id column.
    pub column: usize,
}

/// The 64-bit hashes of the ids of one column.
#[derive(Default)]
pub(crate) struct IdHashes {
    hashes: Vec<u64>,
}

impl IdHashes {
    pub fn push(&mut self, id: &[u8]) {
        self.hashes.push(xxh3_64(id));
    }

    /// The hashes seen more than once: each a duplicate id or a collision.
    pub fn repeated(mut self) -> HashSet<u64> {
        self.hashes.par_sort_unstable();
        self.hashes
            .windows(2)
            .filter(|w| w[0] == w[1])
            .map(|w| w[0])
            .collect()
    }

    /// Confirms on the real ids: the first duplicate in file order (the one whose
    /// second occurrence comes first), if any. Reads the file again only when some
    /// hash repeats.
    pub fn find_duplicate(
        self,
        dir: &Path,
        name: &'static str,
        column: usize,
    ) -> Result<Option<Duplicate>, LoadError> {
        let suspects = self.repeated();
        if suspects.is_empty() {
            return Ok(None);
        }
        let mut quiet = |_: LoadProgress| std::ops::ControlFlow::Continue(());
        let mut f = TableFile::open(dir, name, "", &mut quiet)?;
        let mut seen: HashMap<Vec<u8>, u64> = HashMap::new();
        while f.next_row()? {
            let id = f.field(column);
            if !suspects.contains(&xxh3_64(id)) {
                continue;
            }
            if let Some(&first_line) = seen.get(id) {
                return Ok(Some(Duplicate {
                    id: shown(id),
                    first_line,
                    line: f.line(),
                    column,
                }));
            }
            seen.insert(id.to_vec(), f.line());
        }
        Ok(None)
    }
}

/// Group ids → group numbers (0, 1, … in file order), for the entities form.
#[derive(Default)]
pub(crate) struct GroupIndex {
    /// Low half of the 128-bit hash, per group number.
    lows: Vec<u64>,
    /// High half of the 128-bit hash, per group number.
    high: Vec<u64>,
    /// Low half → group number, or [`Self::SHARED`].
    by_low: PrehashedMap<u32>,
    /// Low halves that more than one group has.
    shared: HashSet<u64>,
    /// Real ids → group numbers, for the groups whose low half is shared.
    exact: HashMap<Box<[u8]>, u32>,
}

impl GroupIndex {
    const SHARED: u32 = u32::MAX;
    /// The most groups the index holds (one number is reserved).
    pub const MAX_GROUPS: usize = u32::MAX as usize;

    pub fn len(&self) -> usize {
        self.high.len()
    }

    fn halves(id: &[u8]) -> (u64, u64) {
        let h = xxh3_128(id);
        (h as u64, (h >> 64) as u64)
    }

    /// Adds the next group; the caller keeps `len() < MAX_GROUPS`.
    pub fn push(&mut self, id: &[u8]) {
        let (low, high) = Self::halves(id);
        self.lows.push(low);
        self.high.push(high);
    }

    /// Once all groups are in: builds the index (sized once, so it never rehashes),
    /// confirms suspected duplicates on the real ids (reading the file again only if
    /// some low half is shared) and prepares exact lookups for shared low halves.
    pub fn seal(
        &mut self,
        dir: &Path,
        name: &'static str,
        column: usize,
    ) -> Result<Option<Duplicate>, LoadError> {
        let mut by_low =
            PrehashedMap::with_capacity_and_hasher(self.lows.len(), Default::default());
        let mut shared: HashSet<u64> = HashSet::new();
        for (number, &low) in self.lows.iter().enumerate() {
            if by_low.insert(low, number as u32).is_some() {
                shared.insert(low);
            }
        }
        self.by_low = by_low;
        if shared.is_empty() {
            return Ok(None);
        }
        let mut quiet = |_: LoadProgress| std::ops::ControlFlow::Continue(());
        let mut f = TableFile::open(dir, name, "", &mut quiet)?;
        let mut lines: HashMap<Box<[u8]>, u64> = HashMap::new();
        let mut number: u32 = 0;
        while f.next_row()? {
            let id = f.field(column);
            let (low, _) = Self::halves(id);
            if shared.contains(&low) {
                if let Some(&first_line) = lines.get(id) {
                    return Ok(Some(Duplicate {
                        id: shown(id),
                        first_line,
                        line: f.line(),
                        column,
                    }));
                }
                lines.insert(id.into(), f.line());
                self.exact.insert(id.into(), number);
            }
            number += 1;
        }
        for &low in &shared {
            self.by_low.insert(low, Self::SHARED);
        }
        self.shared = shared;
        Ok(None)
    }

    /// The number of the group with this id (once sealed). `guess` is tried first:
    /// entities usually come in the order of their groups, and checking the guess
    /// reads memory in order where the index would read it at random.
    pub fn get(&self, id: &[u8], guess: Option<u32>) -> Option<u32> {
        let (low, high) = Self::halves(id);
        if let Some(n) = guess
            && self.lows.get(n as usize) == Some(&low)
            && self.high[n as usize] == high
            && (self.shared.is_empty() || !self.shared.contains(&low))
        {
            return Some(n);
        }
        match *self.by_low.get(&low)? {
            Self::SHARED => self.exact.get(id).copied(),
            n => (self.high[n as usize] == high).then_some(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_hashes_are_found() {
        let mut ids = IdHashes::default();
        for id in ["a", "b", "c", "b", "d", "a"] {
            ids.push(id.as_bytes());
        }
        let rep = ids.repeated();
        assert_eq!(rep.len(), 2);
        assert!(rep.contains(&xxh3_64(b"a")) && rep.contains(&xxh3_64(b"b")));
    }

    #[test]
    fn group_index_confirms_matches_with_the_high_half() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("g.csv"), "group_id\ng1\ng2\ng3\n").unwrap();
        let mut index = GroupIndex::default();
        for id in ["g1", "g2", "g3"] {
            index.push(id.as_bytes());
        }
        assert_eq!(index.seal(dir.path(), "g.csv", 0).unwrap(), None);
        assert_eq!(index.get(b"g2", None), Some(1));
        assert_eq!(index.get(b"g2", Some(1)), Some(1));
        assert_eq!(index.get(b"g2", Some(2)), Some(1));
        assert_eq!(index.get(b"g2", Some(7)), Some(1));
        assert_eq!(index.get(b"g4", Some(2)), None);
        // A foreign id whose low half is planted on a group's slot must not match it.
        let (low, _) = GroupIndex::halves(b"zz");
        index.by_low.insert(low, 0);
        assert_eq!(index.get(b"zz", None), None);
    }

    #[test]
    fn colliding_low_halves_fall_back_to_real_ids() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("g.csv"), "group_id\nx\ny\nz\n").unwrap();
        let mut index = GroupIndex::default();
        for id in ["x", "y", "z"] {
            index.push(id.as_bytes());
        }
        // Simulate a collision: "z" gets the low half of "x" (its high half differs).
        let (lx, _) = GroupIndex::halves(b"x");
        index.lows[2] = lx;
        assert_eq!(index.seal(dir.path(), "g.csv", 0).unwrap(), None);
        assert_eq!(index.by_low.get(&lx), Some(&GroupIndex::SHARED));
        assert_eq!(index.get(b"x", Some(0)), Some(0));
        assert_eq!(index.get(b"y", Some(0)), Some(1));
        assert_eq!(index.get(b"w", None), None);
        assert_eq!(index.exact.get(b"x".as_slice()), Some(&0));
    }

    #[test]
    fn group_index_reports_real_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("g.csv"), "group_id\nx\ny\nx\n").unwrap();
        let mut index = GroupIndex::default();
        for id in ["x", "y", "x"] {
            index.push(id.as_bytes());
        }
        let dup = index.seal(dir.path(), "g.csv", 0).unwrap().unwrap();
        assert_eq!((dup.id.as_str(), dup.first_line, dup.line), ("x", 2, 4));
    }

    #[test]
    fn suspected_duplicates_are_confirmed_on_real_ids() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("g.csv"), "id\nx\ny\nx\n").unwrap();
        let mut ids = IdHashes::default();
        for id in ["x", "y", "x"] {
            ids.push(id.as_bytes());
        }
        let dup = ids.find_duplicate(dir.path(), "g.csv", 0).unwrap().unwrap();
        assert_eq!(
            dup,
            Duplicate {
                id: "x".into(),
                first_line: 2,
                line: 4,
                column: 0
            }
        );
        // A repeated hash of different ids (a simulated collision) is no duplicate.
        let ids = IdHashes {
            hashes: vec![xxh3_64(b"x"), xxh3_64(b"x"), xxh3_64(b"y")],
        };
        std::fs::write(dir.path().join("h.csv"), "id\nx\ny\n").unwrap();
        assert_eq!(ids.find_duplicate(dir.path(), "h.csv", 0).unwrap(), None);
    }
}
