//! Errors progress meets inside an operation that are not the operation's
//! own: a peer's malformed AM, an earlier send's error completion, a
//! handler's failure. The operation (an AM send waiting for a buffer, an
//! RMA transfer waiting for its completion, a barrier's message) carries on
//! to its end, so no message is left half-sent and no barrier step is
//! skipped; the error waits here and the next `poll` (or `block_until`)
//! reports it, one per call, oldest first (so do the errors a round of
//! progress meets after the one it returns).
//!
//! Fatal errors (the completion queue itself failed, a completion nobody
//! can account for) are not deferred: the operation cannot finish, so they
//! are returned at once (and where transfers are in flight, abort).

use super::progress::Fault;
use super::{Core, Progress};
use crate::client::error::Error;
use crate::sync::{Lock, Mode};
use crate::transport::Transport;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};

/// Most errors kept for later polls; beyond them errors are counted (and
/// the count reported at exit).
const KEPT: usize = 64;

/// The deferred errors, oldest first: each later poll returns one.
pub(crate) struct Deferred<M: Mode> {
    any: AtomicBool,
    errors: M::Lock<Kept>,
}

struct Kept {
    queue: VecDeque<Error>,
    dropped: u64,
}

impl<M: Mode> Deferred<M> {
    pub fn new() -> Self {
        Deferred {
            any: AtomicBool::new(false),
            errors: M::Lock::new(Kept {
                queue: VecDeque::new(),
                dropped: 0,
            }),
        }
    }

    /// Keep `e` for a later poll.
    pub fn put(&self, e: Error) {
        let mut k = self.errors.lock();
        if k.queue.len() < KEPT {
            tracing::debug!("deferred to a later poll: {}", e.report());
            k.queue.push_back(e);
            self.any.store(true, Ordering::Release);
        } else {
            k.dropped += 1;
            tracing::warn!(
                "more than {KEPT} errors wait for a poll; not kept: {}",
                e.report()
            );
        }
    }

    /// The oldest deferred error, if any (one atomic load when there is
    /// none).
    #[inline]
    pub fn take(&self) -> Option<Error> {
        if !self.any.load(Ordering::Acquire) {
            return None;
        }
        // Flag and queue change together under the lock.
        let mut k = self.errors.lock();
        let e = k.queue.pop_front();
        if k.queue.is_empty() {
            self.any.store(false, Ordering::Release);
        }
        e
    }

    /// How many errors were not kept (more than [`KEPT`] waited), and
    /// zero from then on.
    pub fn take_dropped(&self) -> u64 {
        std::mem::take(&mut self.errors.lock().dropped)
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Progress made while an operation waits: an error that is not fatal
    /// is deferred to the next poll, a fatal one returned.
    #[inline]
    pub(crate) fn progress_within(&self, set: usize, wait: Progress) -> Result<(), Error> {
        self.progress_deferring(set, wait).map_err(|e| *e)
    }

    /// Keep a round's returned error `e`, then the others it met, for
    /// later polls (in that order).
    #[cold]
    pub(crate) fn defer_round(&self, e: Error) {
        self.deferred.put(e);
        self.defer_further();
    }

    /// `progress_within` for the spinning waits, with the error boxed (see
    /// [`Fault`]).
    #[inline(always)]
    pub(crate) fn progress_deferring(&self, set: usize, wait: Progress) -> Result<(), Fault> {
        match self.progress(set, wait) {
            Ok(()) => Ok(()),
            Err(e) if !e.is_fatal() => {
                self.defer_round(*e);
                Ok(())
            }
            Err(e) => {
                self.defer_further();
                Err(e)
            }
        }
    }
}
