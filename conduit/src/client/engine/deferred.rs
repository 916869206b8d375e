//! Errors progress meets inside an operation that are not the operation's
//! own: a peer's malformed AM, an earlier send's error completion, a
//! handler's failure. The operation (an AM send waiting for a buffer, an
//! RMA transfer waiting for its completion, a barrier's message) carries on
//! to its end, so no message is left half-sent and no barrier step is
//! skipped; the error waits here and the next `poll` (or `block_until`)
//! reports it.
//!
//! Fatal errors (the completion queue itself failed, a completion nobody
//! can account for) are not deferred: the operation cannot finish, so they
//! are returned at once (and where transfers are in flight, abort).

use super::progress::Fault;
use super::{Core, Progress};
use crate::client::error::Error;
use crate::sync::{Lock, Mode};
use crate::transport::Transport;
use std::sync::atomic::{AtomicBool, Ordering};

/// The first deferred error (later ones are logged).
pub(crate) struct Deferred<M: Mode> {
    any: AtomicBool,
    first: M::Lock<Option<Error>>,
}

impl<M: Mode> Deferred<M> {
    pub fn new() -> Self {
        Deferred {
            any: AtomicBool::new(false),
            first: M::Lock::new(None),
        }
    }

    /// Keep `e` for the next poll.
    pub fn put(&self, e: Error) {
        let mut first = self.first.lock();
        if first.is_none() {
            tracing::debug!("deferred to the next poll: {}", e.report());
            *first = Some(e);
            self.any.store(true, Ordering::Release);
        } else {
            tracing::warn!("further error before the next poll: {}", e.report());
        }
    }

    /// The deferred error, if any (one atomic load when there is none).
    #[inline]
    pub fn take(&self) -> Option<Error> {
        if !self.any.load(Ordering::Acquire) {
            return None;
        }
        // Flag and value change together under the lock.
        let mut first = self.first.lock();
        self.any.store(false, Ordering::Release);
        first.take()
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Progress made while an operation waits: an error that is not fatal
    /// is deferred to the next poll, a fatal one returned.
    #[inline]
    pub(crate) fn progress_within(&self, set: usize, wait: Progress) -> Result<(), Error> {
        self.progress_deferring(set, wait).map_err(|e| *e)
    }

    /// `progress_within` for the spinning waits, with the error boxed (see
    /// [`Fault`]).
    #[inline(always)]
    pub(crate) fn progress_deferring(&self, set: usize, wait: Progress) -> Result<(), Fault> {
        match self.progress(set, wait) {
            Ok(()) => Ok(()),
            Err(e) if !e.is_fatal() => {
                self.deferred.put(*e);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}
