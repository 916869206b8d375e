//! In-flight RMA operations: a slab indexed by the completion context, so a
//! completion finds its operation without a search. An operation may span
//! several libfabric transfers (chunks above `max_msg_size`, one write per
//! bounce buffer); it completes when all of them have, and keeps the first
//! failing transfer's error until its owner (a blocking call, an event, or
//! the scope of an implicit operation) retires it. Ids carry the slot's
//! generation, so a stale id can never observe a reused slot. The table
//! also keeps each peer's get window (`window`).

mod window;
#[cfg(test)]
mod window_props;

pub use window::GetWindow;

/// Which implicit (NBI) counter an operation belongs to, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Implicit {
    /// An explicit-event operation (or a blocking one).
    No,
    /// Counted in the NBI puts.
    Put,
    /// Counted in the NBI gets.
    Get,
}

/// A handle on an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpId {
    /// Slot index (what travels in the completion context).
    pub index: u32,
    /// Generation of the slot when the operation started.
    pub gen: u32,
}

/// Why a transfer failed: the error completion's numbers and text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text} (err {err}, provider errno {prov_errno})")]
pub struct TransferError {
    /// libfabric error number (positive `FI_E*`), or 0 when the transfer
    /// was never posted.
    pub err: i32,
    /// The provider's own error number.
    pub prov_errno: i32,
    /// `fi_cq_strerror`'s text (or why it was not posted).
    pub text: String,
}

#[derive(Debug, Default)]
struct Slot {
    gen: u32,
    busy: bool,
    remaining: u32,
    error: Option<TransferError>,
    implicit: Option<Implicit>,
    bbufs: Vec<u32>,
    charge: Option<window::Charge>,
}

/// What a finished transfer releases.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Released {
    /// Bounce buffers to return to their pool.
    pub bbufs: Vec<u32>,
    /// The implicit counter decremented, when the whole operation finished.
    pub implicit_done: Option<Implicit>,
}

/// The operation table.
#[derive(Debug, Default)]
pub struct Ops {
    slots: Vec<Slot>,
    free: Vec<u32>,
    nbi_puts: usize,
    nbi_gets: usize,
    in_flight: usize,
    /// Each peer's get window (indexed by rank, grown on first use).
    window: Vec<window::PeerWindow>,
}

impl Ops {
    /// An empty table.
    pub fn new() -> Ops {
        Ops::default()
    }

    /// Start an operation of `transfers` transfers (at least one).
    pub fn start(&mut self, transfers: u32, implicit: Implicit) -> OpId {
        debug_assert!(transfers > 0);
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
        s.error = None;
        s.implicit = Some(implicit);
        s.bbufs.clear();
        s.charge = None;
        match implicit {
            Implicit::Put => self.nbi_puts += 1,
            Implicit::Get => self.nbi_gets += 1,
            Implicit::No => {}
        }
        self.in_flight += 1;
        OpId { index, gen: s.gen }
    }

    /// Bounce buffer `b` is used by `op`; it is released with the
    /// operation's last transfer.
    pub fn attach_bbuf(&mut self, op: OpId, b: u32) {
        self.slots[op.index as usize].bbufs.push(b);
    }

    /// `n` of `op`'s announced transfers were not posted (a post failed
    /// with `why`): account them as failed.
    pub fn cancel_transfers(&mut self, op: OpId, n: u32, why: TransferError) -> Released {
        let mut rel = Released::default();
        for _ in 0..n {
            // An unposted transfer gives nothing back to the get window
            // (it may never have been charged); the operation's last
            // completion gives back all it holds.
            let r = self.end_transfer(op.index, Err(why.clone()), false);
            rel.bbufs.extend(r.bbufs);
            rel.implicit_done = rel.implicit_done.or(r.implicit_done);
        }
        rel
    }

    /// A transfer of the operation in slot `index` completed. Unknown or
    /// idle slots are ignored.
    pub fn complete_transfer(&mut self, index: u32, result: Result<(), TransferError>) -> Released {
        self.end_transfer(index, result, true)
    }

    /// A transfer ended: completed (`posted`), or cancelled before it was
    /// posted.
    fn end_transfer(
        &mut self,
        index: u32,
        result: Result<(), TransferError>,
        posted: bool,
    ) -> Released {
        let Some(s) = self.slots.get_mut(index as usize) else {
            return Released::default();
        };
        if !s.busy || s.remaining == 0 {
            return Released::default();
        }
        if let Err(e) = result {
            s.error.get_or_insert(e);
        }
        s.remaining -= 1;
        if let Some(c) = &mut s.charge {
            // What is surely over; the last gives back the rest, so an
            // operation leaves nothing charged.
            let r = c.release(s.remaining == 0, posted);
            let w = &mut self.window[c.rank()].held;
            *w = w.saturating_sub(r);
            if s.remaining == 0 {
                s.charge = None;
            }
        }
        if s.remaining > 0 {
            return Released::default();
        }
        self.in_flight -= 1;
        let bbufs = std::mem::take(&mut s.bbufs);
        let implicit_done = match s.implicit.unwrap_or(Implicit::No) {
            Implicit::No => None,
            Implicit::Put => {
                self.nbi_puts -= 1;
                Some(Implicit::Put)
            }
            Implicit::Get => {
                self.nbi_gets -= 1;
                Some(Implicit::Get)
            }
        };
        Released {
            bbufs,
            implicit_done,
        }
    }

    /// Whether operation `op` finished: `Some(Ok)`, `Some(Err)` if a
    /// transfer failed, `None` while running. A retired id reads as
    /// finished.
    pub fn state(&self, op: OpId) -> Option<Result<(), TransferError>> {
        let s = &self.slots[op.index as usize];
        if s.gen != op.gen || !s.busy {
            return Some(Ok(()));
        }
        if s.remaining > 0 {
            return None;
        }
        Some(match &s.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        })
    }

    /// Whether `op` is still running.
    pub fn running(&self, op: OpId) -> bool {
        let s = &self.slots[op.index as usize];
        s.gen == op.gen && s.busy && s.remaining > 0
    }

    /// Release a finished explicit operation's slot, returning its outcome.
    pub fn retire(&mut self, op: OpId) -> Option<Result<(), TransferError>> {
        let state = self.state(op)?;
        let s = &mut self.slots[op.index as usize];
        if s.gen == op.gen && s.busy {
            s.busy = false;
            s.error = None;
            self.free.push(op.index);
        }
        Some(state)
    }

    /// Implicit puts and gets still in flight.
    pub fn implicit_outstanding(&self) -> (usize, usize) {
        (self.nbi_puts, self.nbi_gets)
    }

    /// The kind of a running or finished, not yet retired, operation.
    pub fn kind(&self, op: OpId) -> Option<Implicit> {
        let s = &self.slots[op.index as usize];
        (s.gen == op.gen && s.busy).then(|| s.implicit.unwrap_or(Implicit::No))
    }

    /// Operations whose transfers are still in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A transfer error with text `t` (the window's tests use it too).
    pub(super) fn err(t: &str) -> TransferError {
        TransferError {
            err: 5,
            prov_errno: 7,
            text: t.into(),
        }
    }

    #[test]
    fn explicit_op_completes_after_all_transfers() {
        let mut t = Ops::new();
        let op = t.start(3, Implicit::No);
        t.attach_bbuf(op, 7);
        assert_eq!(t.state(op), None);
        assert_eq!(t.complete_transfer(op.index, Ok(())), Released::default());
        t.complete_transfer(op.index, Ok(()));
        assert_eq!(t.in_flight(), 1);
        let r = t.complete_transfer(op.index, Ok(()));
        assert_eq!(r.bbufs, vec![7]);
        assert_eq!(t.in_flight(), 0);
        assert_eq!(t.state(op), Some(Ok(())));
        assert_eq!(t.retire(op), Some(Ok(())));
        // The slot is reused with a new generation; the old id stays done.
        let op2 = t.start(1, Implicit::No);
        assert_eq!(op2.index, op.index);
        assert_ne!(op2.gen, op.gen);
        assert_eq!(t.state(op), Some(Ok(())));
        assert_eq!(t.state(op2), None);
    }

    #[test]
    fn the_first_failure_is_kept_with_its_numbers() {
        let mut t = Ops::new();
        let c = t.start(2, Implicit::No);
        t.complete_transfer(c.index, Err(err("remote access error")));
        t.complete_transfer(c.index, Err(err("second")));
        let e = t.retire(c).unwrap().unwrap_err();
        assert_eq!(
            e.to_string(),
            "remote access error (err 5, provider errno 7)"
        );
    }

    #[test]
    fn implicit_counters_and_failures() {
        let mut t = Ops::new();
        let a = t.start(1, Implicit::Put);
        let b = t.start(2, Implicit::Get);
        assert_eq!(t.implicit_outstanding(), (1, 1));
        assert_eq!(
            t.complete_transfer(a.index, Ok(())).implicit_done,
            Some(Implicit::Put)
        );
        assert_eq!(t.implicit_outstanding(), (0, 1));
        t.complete_transfer(b.index, Err(err("x")));
        assert_eq!(
            t.complete_transfer(b.index, Ok(())).implicit_done,
            Some(Implicit::Get)
        );
        assert_eq!(t.implicit_outstanding(), (0, 0));
        // Implicit operations keep their outcome until retired.
        assert_eq!(t.kind(b), Some(Implicit::Get));
        assert_eq!(t.retire(a), Some(Ok(())));
        assert_eq!(t.retire(b).unwrap().unwrap_err().text, "x");
        assert_eq!(t.kind(b), None);
        // Stray completions are ignored.
        assert_eq!(t.complete_transfer(999, Ok(())), Released::default());
    }

    #[test]
    fn cancel_unposted_transfers() {
        let mut t = Ops::new();
        let op = t.start(4, Implicit::Put);
        t.complete_transfer(op.index, Ok(()));
        let r = t.cancel_transfers(op, 3, err("not posted"));
        assert_eq!(r.implicit_done, Some(Implicit::Put));
        assert_eq!(t.implicit_outstanding(), (0, 0));
        assert_eq!(t.in_flight(), 0);
        assert_eq!(t.retire(op).unwrap().unwrap_err().text, "not posted");
    }
}
