//! In-flight RMA operations: a slab indexed by the completion context, so a
//! completion finds its operation without a search. An operation may span
//! several libfabric transfers (chunks above `max_msg_size`, one write per
//! bounce buffer); it completes when all of them have. Events name an
//! operation by index and generation, so a stale event can never observe a
//! reused slot.

/// Which implicit (NBI) counter an operation belongs to, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Implicit {
    /// An explicit-event operation.
    No,
    /// Counted in the NBI puts.
    Put,
    /// Counted in the NBI gets.
    Get,
}

/// A handle on an explicit operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpId {
    /// Slot index (what travels in the completion context).
    pub index: u32,
    /// Generation of the slot when the operation started.
    pub gen: u32,
}

#[derive(Debug, Default)]
struct Slot {
    gen: u32,
    busy: bool,
    remaining: u32,
    failed: bool,
    implicit: Option<Implicit>,
    bbufs: Vec<u32>,
}

/// What a finished transfer releases.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Released {
    /// Bounce buffers to return to their pool.
    pub bbufs: Vec<u32>,
    /// The implicit counter to decrement, when the whole operation finished.
    pub implicit_done: Option<Implicit>,
}

/// The operation table.
#[derive(Debug, Default)]
pub struct Ops {
    slots: Vec<Slot>,
    free: Vec<u32>,
    nbi_puts: usize,
    nbi_gets: usize,
}

impl Ops {
    /// An empty table.
    pub fn new() -> Ops {
        Ops::default()
    }

    /// Start an operation of `transfers` transfers.
    pub fn start(&mut self, transfers: u32, implicit: Implicit) -> OpId {
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot::default());
                (self.slots.len() - 1) as u32
            }
        };
        let s = &mut self.slots[index as usize];
        s.gen = s.gen.wrapping_add(1);
        s.busy = true;
        s.remaining = transfers;
        s.failed = false;
        s.implicit = Some(implicit);
        s.bbufs.clear();
        match implicit {
            Implicit::Put => self.nbi_puts += 1,
            Implicit::Get => self.nbi_gets += 1,
            Implicit::No => {}
        }
        OpId { index, gen: s.gen }
    }

    /// Note that transfer of `op` uses bounce buffer `b` (returned when that
    /// transfer completes... or with the operation: here, with the op).
    pub fn attach_bbuf(&mut self, op: OpId, b: u32) {
        self.slots[op.index as usize].bbufs.push(b);
    }

    /// Fewer transfers than announced were posted (a post failed): adjust.
    pub fn cancel_transfers(&mut self, op: OpId, n: u32) -> Released {
        let mut rel = Released::default();
        for _ in 0..n {
            let r = self.complete_transfer(op.index, true);
            rel.bbufs.extend(r.bbufs);
            rel.implicit_done = rel.implicit_done.or(r.implicit_done);
        }
        rel
    }

    /// A transfer of the operation in slot `index` completed (with an error
    /// when `failed`). Unknown or idle slots are ignored.
    pub fn complete_transfer(&mut self, index: u32, failed: bool) -> Released {
        let Some(s) = self.slots.get_mut(index as usize) else {
            return Released::default();
        };
        if !s.busy || s.remaining == 0 {
            return Released::default();
        }
        s.failed |= failed;
        s.remaining -= 1;
        if s.remaining > 0 {
            return Released::default();
        }
        let bbufs = std::mem::take(&mut s.bbufs);
        let implicit = s.implicit.take().unwrap_or(Implicit::No);
        let implicit_done = match implicit {
            Implicit::No => None,
            k => {
                // Implicit operations have no event: free the slot now.
                s.busy = false;
                self.free.push(index);
                match k {
                    Implicit::Put => self.nbi_puts -= 1,
                    _ => self.nbi_gets -= 1,
                }
                Some(k)
            }
        };
        Released {
            bbufs,
            implicit_done,
        }
    }

    /// Whether explicit operation `op` finished: `Some(Ok)`, `Some(Err)` if a
    /// transfer failed, `None` while running. A stale id reads as finished.
    pub fn state(&self, op: OpId) -> Option<Result<(), ()>> {
        let s = &self.slots[op.index as usize];
        if s.gen != op.gen || !s.busy {
            return Some(Ok(()));
        }
        if s.remaining > 0 {
            return None;
        }
        Some(if s.failed { Err(()) } else { Ok(()) })
    }

    /// Release a finished explicit operation's slot.
    pub fn retire(&mut self, op: OpId) {
        let s = &mut self.slots[op.index as usize];
        if s.gen == op.gen && s.busy && s.remaining == 0 {
            s.busy = false;
            self.free.push(op.index);
        }
    }

    /// Outstanding implicit puts and gets.
    pub fn implicit_outstanding(&self) -> (usize, usize) {
        (self.nbi_puts, self.nbi_gets)
    }

    /// Operations whose transfers are still in flight.
    pub fn in_flight(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| s.busy && s.remaining > 0)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_op_completes_after_all_transfers() {
        let mut t = Ops::new();
        let op = t.start(3, Implicit::No);
        t.attach_bbuf(op, 7);
        assert_eq!(t.state(op), None);
        assert_eq!(t.complete_transfer(op.index, false), Released::default());
        t.complete_transfer(op.index, false);
        let r = t.complete_transfer(op.index, false);
        assert_eq!(r.bbufs, vec![7]);
        assert_eq!(t.state(op), Some(Ok(())));
        t.retire(op);
        // The slot is reused with a new generation; the old id stays done.
        let op2 = t.start(1, Implicit::No);
        assert_eq!(op2.index, op.index);
        assert_ne!(op2.gen, op.gen);
        assert_eq!(t.state(op), Some(Ok(())));
        assert_eq!(t.state(op2), None);
    }

    #[test]
    fn implicit_counters_and_failures() {
        let mut t = Ops::new();
        let a = t.start(1, Implicit::Put);
        let b = t.start(2, Implicit::Get);
        assert_eq!(t.implicit_outstanding(), (1, 1));
        assert_eq!(
            t.complete_transfer(a.index, false).implicit_done,
            Some(Implicit::Put)
        );
        assert_eq!(t.implicit_outstanding(), (0, 1));
        t.complete_transfer(b.index, true);
        assert_eq!(
            t.complete_transfer(b.index, false).implicit_done,
            Some(Implicit::Get)
        );
        assert_eq!(t.implicit_outstanding(), (0, 0));
        let c = t.start(2, Implicit::No);
        t.complete_transfer(c.index, true);
        t.complete_transfer(c.index, false);
        assert_eq!(t.state(c), Some(Err(())));
        // Stray completions are ignored.
        assert_eq!(t.complete_transfer(999, false), Released::default());
    }

    #[test]
    fn cancel_unposted_transfers() {
        let mut t = Ops::new();
        let op = t.start(4, Implicit::Put);
        t.complete_transfer(op.index, false);
        let r = t.cancel_transfers(op, 3);
        assert_eq!(r.implicit_done, Some(Implicit::Put));
        assert_eq!(t.implicit_outstanding(), (0, 0));
        assert_eq!(t.in_flight(), 0);
    }
}
