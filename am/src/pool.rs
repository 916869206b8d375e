//! Outbound AM buffers, by index: a pool that starts with an initial number
//! of buffers and grows one at a time on demand up to a maximum
//! (`GASNET_OFI_NUM_INITIAL_{REQUEST,REPLY}_BUFFS`,
//! `GASNET_OFI_MAX_{REQUEST,REPLY}_BUFFS`). The memory behind the indices
//! belongs to the conduit (one reservation of `max` buffers whose pages are
//! touched only when a buffer is first used); a buffer is named by its
//! index while in flight (the send's completion context carries it).

/// The pool's bookkeeping.
#[derive(Debug)]
pub struct Pool {
    free: Vec<u32>,
    allocated: u32,
    max: u32,
    grown: u64,
}

impl Pool {
    /// `initial` buffers, growing to at most `max`.
    pub fn new(initial: usize, max: usize) -> Pool {
        let max = max.min(u32::MAX as usize) as u32;
        let initial = (initial.min(max as usize)) as u32;
        Pool {
            // Handed out lowest index first.
            free: (0..initial).rev().collect(),
            allocated: initial,
            max,
            grown: 0,
        }
    }

    /// A free buffer's index, growing the pool if allowed; `None` when all
    /// `max` buffers are in flight.
    #[inline]
    pub fn take(&mut self) -> Option<u32> {
        if let Some(i) = self.free.pop() {
            return Some(i);
        }
        if self.allocated < self.max {
            self.allocated += 1;
            self.grown += 1;
            return Some(self.allocated - 1);
        }
        None
    }

    /// Give a buffer back.
    #[inline]
    pub fn give(&mut self, index: u32) {
        debug_assert!(index < self.allocated && !self.free.contains(&index));
        self.free.push(index);
    }

    /// Buffers allocated so far (initial plus grown).
    pub fn allocated(&self) -> usize {
        self.allocated as usize
    }

    /// The most buffers the pool may hold.
    pub fn max(&self) -> usize {
        self.max as usize
    }

    /// Buffers added on demand after start-up.
    pub fn grown(&self) -> u64 {
        self.grown
    }

    /// Buffers in flight.
    pub fn in_flight(&self) -> usize {
        self.allocated as usize - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_on_demand_to_the_maximum() {
        let mut p = Pool::new(2, 4);
        assert_eq!(p.allocated(), 2);
        let got: Vec<u32> = (0..4).map(|_| p.take().unwrap()).collect();
        assert_eq!(got, vec![0, 1, 2, 3]);
        assert_eq!(p.allocated(), 4);
        assert_eq!(p.grown(), 2);
        assert!(p.take().is_none());
        p.give(got[3]);
        assert_eq!(p.in_flight(), 3);
        assert_eq!(p.take(), Some(got[3]));
    }

    #[test]
    fn initial_above_max_is_capped() {
        let p = Pool::new(10, 3);
        assert_eq!((p.allocated(), p.max()), (3, 3));
    }
}
