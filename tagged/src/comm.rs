//! Communicators: which ids are in use on this rank (and the agreement on a
//! new one), and the membership of a split.

use std::collections::BTreeSet;

/// Communicator ids in use on this rank. Id 0 is the world's.
///
/// A new id is agreed collectively, as Open MPI does: every member proposes
/// its lowest free id at or above a start, all take the largest proposal,
/// and if that id is free on every member it is taken; otherwise the
/// agreement starts again above it. [`CidSet::lowest_free_from`] and
/// [`CidSet::is_free`] are the two local questions of that loop.
#[derive(Debug, Clone)]
pub struct CidSet {
    used: BTreeSet<u32>,
    max: u32,
}

impl CidSet {
    /// An empty set of ids up to `max` (the layout's largest), with the
    /// world's id 0 taken.
    pub fn new(max: u32) -> CidSet {
        let mut used = BTreeSet::new();
        used.insert(0);
        CidSet { used, max }
    }
    /// The lowest id at or above `start` not in use here; `max + 1` (as a
    /// `u64`, never a valid id) when there is none.
    pub fn lowest_free_from(&self, start: u64) -> u64 {
        let mut c = start;
        while c <= self.max as u64 && self.used.contains(&(c as u32)) {
            c += 1;
        }
        c.min(self.max as u64 + 1)
    }
    /// `cid` is a valid id not in use here.
    pub fn is_free(&self, cid: u64) -> bool {
        cid <= self.max as u64 && !self.used.contains(&(cid as u32))
    }
    /// Mark `cid` in use.
    pub fn take(&mut self, cid: u32) {
        self.used.insert(cid);
    }
    /// Free `cid` (a communicator was freed).
    pub fn release(&mut self, cid: u32) {
        if cid != 0 {
            self.used.remove(&cid);
        }
    }
    /// The largest id.
    pub fn max(&self) -> u32 {
        self.max
    }
    /// Ids in use.
    pub fn in_use(&self) -> usize {
        self.used.len()
    }
}

/// The members of the new communicator of a split, given every parent
/// member's colour (`None`: MPI_UNDEFINED, no new communicator) and key,
/// indexed by parent rank: parent ranks of `me`'s colour ordered by key,
/// then by parent rank. `None` when `me`'s colour is `None`.
pub fn split_members(entries: &[(Option<u32>, i32)], me: usize) -> Option<Vec<usize>> {
    let colour = entries.get(me)?.0?;
    let mut m: Vec<usize> = (0..entries.len())
        .filter(|&r| entries[r].0 == Some(colour))
        .collect();
    m.sort_by_key(|&r| (entries[r].1, r));
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_free_and_release() {
        let mut s = CidSet::new(4);
        assert_eq!(s.lowest_free_from(0), 1);
        s.take(1);
        s.take(2);
        assert_eq!(s.lowest_free_from(0), 3);
        assert_eq!(s.lowest_free_from(2), 3);
        s.release(1);
        assert_eq!(s.lowest_free_from(0), 1);
        s.take(1);
        s.take(3);
        s.take(4);
        assert_eq!(s.lowest_free_from(0), 5, "exhausted: max + 1");
        assert!(!s.is_free(5));
        s.release(0);
        assert!(!s.is_free(0), "the world's id is never freed");
    }

    /// The agreement loop over several members' sets ends on an id free on
    /// all of them.
    #[test]
    fn agreement_finds_a_common_free_id() {
        let mut sets = [CidSet::new(100), CidSet::new(100), CidSet::new(100)];
        for c in [1, 2, 5] {
            sets[0].take(c);
        }
        for c in [3, 4] {
            sets[1].take(c);
        }
        sets[2].take(6);
        let mut start = 0;
        let agreed = loop {
            let p = sets
                .iter()
                .map(|s| s.lowest_free_from(start))
                .max()
                .unwrap();
            if sets.iter().all(|s| s.is_free(p)) {
                break p;
            }
            start = p + 1;
        };
        assert_eq!(agreed, 7);
    }

    #[test]
    fn split_orders_by_key_then_rank() {
        let e = [
            (Some(1), 5),
            (Some(0), 0),
            (Some(1), 2),
            (None, 0),
            (Some(1), 2),
        ];
        assert_eq!(split_members(&e, 0), Some(vec![2, 4, 0]));
        assert_eq!(split_members(&e, 1), Some(vec![1]));
        assert_eq!(split_members(&e, 3), None);
    }
}
