//! The split-phase dissemination barrier (`am::barrier`) over AM Short on
//! the first endpoint set.

use super::progress::Fault;
use super::{Core, Progress, H_BARRIER};
use crate::client::error::Error;
use crate::sync::{Lock, Mode};
use crate::transport::{Side, Transport};
use am::barrier::{Outcome, Value};
use am::send::Category;
use std::collections::VecDeque;

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    fn send_barrier(&self, dest: usize, args: &[u32; 4]) -> Result<(), Error> {
        self.send_am(
            0,
            Side::Request,
            dest,
            Category::Short,
            H_BARRIER,
            args,
            &[],
            0,
            false,
            Progress::Full,
        )
        .map(|_| ())
    }

    /// Send the barrier's messages not sent yet, in order. A send that
    /// waits for a buffer runs handlers; one that panics unwinds out of the
    /// send before the message is posted, and the message goes back to the
    /// front of the queue (`Unsent`), so the next barrier call sends it: the
    /// barrier's state has moved on, and without it the peer would wait for
    /// ever.
    fn send_unsent(&self) -> Result<(), Error> {
        loop {
            let Some(msg) = self.barrier_unsent.lock().pop_front() else {
                return Ok(());
            };
            let mut u = Unsent {
                queue: &self.barrier_unsent,
                msg: Some(msg),
            };
            let r = self.send_barrier(msg.dest, &msg.args);
            if r.is_ok() {
                u.msg = None;
            }
            r?;
        }
    }

    /// Start a barrier with this rank's contribution: named or anonymous
    /// ([`Value::new`]) or forcing a mismatch ([`Value::forced_mismatch`]).
    pub fn barrier_notify(&self, v: Value) -> Result<(), Error> {
        let send = self.barrier.lock().notify_with(v)?;
        if let Some(s) = send {
            self.barrier_unsent.lock().push_back(s);
        }
        self.send_unsent()
    }

    /// Wait for the notified barrier. Errors progress meets meanwhile that
    /// are not the barrier's wait for the next poll (the barrier's own
    /// messages are sent whatever else happens).
    ///
    /// The loop is the one a rank spins in while a peer measures against
    /// it (and, over a provider whose RMA needs the target's progress,
    /// while its segment is written): each round is one progress round and
    /// a few loads, with errors passed boxed ([`Fault`]).
    pub fn barrier_wait(&self) -> Result<(), Error> {
        self.barrier_wait_fault().map_err(|e| *e)
    }

    fn barrier_wait_fault(&self) -> Result<(), Fault> {
        loop {
            self.progress_deferring(0, Progress::Full)?;
            self.exit_if_requested()?;
            // A collective's error is not the barrier's: for the next poll.
            if self.coll_pending() {
                if let Err(e) = self.coll_advance() {
                    self.deferred.put(e);
                }
            }
            if self.barrier_step()? {
                return Ok(());
            }
        }
    }

    /// After a poll: whether the notified barrier completed.
    pub fn barrier_advance(&self) -> Result<bool, Error> {
        self.barrier_step().map_err(|e| *e)
    }

    #[inline]
    fn barrier_step(&self) -> Result<bool, Fault> {
        let (sends, done) = self.barrier.lock().advance().map_err(Error::from)?;
        if !sends.is_empty() {
            self.barrier_unsent.lock().extend(sends);
        }
        // Also what an earlier call left unsent.
        self.send_unsent()?;
        Self::outcome(done)
    }

    fn outcome(done: Option<Outcome>) -> Result<bool, Fault> {
        match done {
            None => Ok(false),
            Some(Outcome::Ok) => Ok(true),
            Some(Outcome::Mismatch) => Err(Box::new(Error::BarrierMismatch)),
        }
    }
}

/// A barrier message taken from the queue to be sent: put back at the
/// front when dropped still holding it (the send failed or unwound).
struct Unsent<'a, L: Lock<VecDeque<am::barrier::Send>>> {
    queue: &'a L,
    msg: Option<am::barrier::Send>,
}

impl<L: Lock<VecDeque<am::barrier::Send>>> Drop for Unsent<'_, L> {
    fn drop(&mut self) {
        if let Some(m) = self.msg.take() {
            self.queue.lock().push_front(m);
        }
    }
}
