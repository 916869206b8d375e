//! Non-blocking RMA that owns its local buffer: for a runtime that keeps
//! operations in flight across calls (in a queue, a future, a struct)
//! instead of inside one [`RmaScope`](super::RmaScope) closure.
//!
//! The buffer is a `Vec<u8>` moved into the [`OwnedRma`] handle: moving a
//! `Vec` moves its pointer, never its heap bytes, so the transfer keeps
//! reading or writing the same memory wherever the handle goes, and
//! nothing else can reach those bytes until the handle gives them back.
//! [`OwnedRma::wait`] returns the buffer once the operation is complete
//! (for a get, with the remote bytes in it). Dropping an unwaited handle
//! completes the operation first (the drop polls until it is over), then
//! frees the buffer. A handle passed to `std::mem::forget` never frees its
//! buffer, so the transfer can still use it safely; it also never retires
//! its operation, which stays counted as started (forgetting leaks both).
//!
//! The handle borrows the client (or endpoint) it was started on, so the
//! client outlives it. Errors met while waiting that are not the
//! operation's go to the next poll, as for every blocking wait; if the
//! network can no longer report completions the process aborts rather than
//! free a buffer a transfer may still use.

use super::engine::{Core, Local, Progress};
use super::error::Error;
use crate::sync::{Lock, Mode};
use crate::transport::Transport;
use rma::ops::{Implicit, OpId};

/// A non-blocking put or get with the local buffer it owns; see the module
/// documentation.
///
/// ```no_run
/// use conduit::client::Client;
/// use std::collections::VecDeque;
///
/// let c = Client::init().unwrap();
/// c.attach_segment(1 << 20).unwrap();
/// let peer = (c.rank() + 1) % c.size();
/// // Started now, completed later: the handles own their buffers.
/// let mut in_flight = VecDeque::new();
/// for i in 0..4 {
///     in_flight.push_back(c.put_nb_owned(peer, i * 4096, vec![i as u8; 4096]).unwrap());
/// }
/// while let Some(h) = in_flight.pop_front() {
///     let buf = h.wait().unwrap(); // complete: the buffer may be reused
///     assert_eq!(buf.len(), 4096);
/// }
/// c.barrier().unwrap();
/// ```
#[must_use = "wait for the operation (or drop the handle, which waits)"]
pub struct OwnedRma<'c, M: Mode, S, T: Transport> {
    core: &'c Core<M, T, S>,
    set: usize,
    /// `None` once complete and retired (or for zero bytes, or a transfer
    /// done at once through shared memory).
    op: Option<OpId>,
    get: bool,
    rank: usize,
    /// `Some` until [`OwnedRma::wait`] hands it back.
    buf: Option<Vec<u8>>,
}

impl<M: Mode, S, T: Transport> std::fmt::Debug for OwnedRma<'_, M, S, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedRma")
            .field("get", &self.get)
            .field("rank", &self.rank)
            .field("len", &self.buf.as_ref().map_or(0, Vec::len))
            .field("in_flight", &self.op.is_some())
            .finish()
    }
}

impl<'c, M: Mode, S, T: Transport> OwnedRma<'c, M, S, T> {
    /// Start a put of `src` to `offset` of `rank`'s segment (`get` false)
    /// or a get from there into `src` (`get` true).
    pub(crate) fn start(
        core: &'c Core<M, T, S>,
        set: usize,
        rank: usize,
        offset: usize,
        mut buf: Vec<u8>,
        get: bool,
    ) -> Result<Self, Error> {
        super::engine::not_in_handler(if get { "get_nb_owned" } else { "put_nb_owned" })?;
        let len = buf.len();
        let local = if get {
            Local::Read(buf.as_mut_ptr())
        } else {
            Local::Write(buf.as_ptr())
        };
        // On an error nothing of the operation is in flight (start_transfer's
        // contract), so `buf` may simply be dropped.
        let op = core.start_transfer(
            set,
            rank,
            offset,
            local,
            len,
            Implicit::No,
            false,
            Progress::Full,
        )?;
        Ok(OwnedRma {
            core,
            set,
            op,
            get,
            rank,
            buf: Some(buf),
        })
    }

    fn running(&self) -> bool {
        self.op
            .is_some_and(|op| self.core.sets[self.set].ops.lock().running(op))
    }

    /// Whether the operation is complete, polling once if it is not
    /// (`Ok(true)` also after a failure, which [`OwnedRma::wait`]
    /// returns). Errors: what the poll met.
    pub fn test(&self) -> Result<bool, Error> {
        if !self.running() {
            return Ok(true);
        }
        self.core.poll_api(self.set)?;
        Ok(!self.running())
    }

    /// Wait for the operation; the buffer back (for a get, holding the
    /// bytes read). Errors: the operation's failure (the buffer is freed
    /// then: what a failed get left in it is unspecified).
    pub fn wait(mut self) -> Result<Vec<u8>, Error> {
        super::engine::not_in_handler("OwnedRma::wait")?;
        if let Some(op) = self.op.take() {
            let (what, dir) = if self.get {
                ("get", "from")
            } else {
                ("put", "to")
            };
            // Returns only once the operation is over (aborting if it can
            // no longer complete), so the buffer is free afterwards.
            self.core
                .wait_op(self.set, Some(op), Progress::Full, what, dir, self.rank)?;
        }
        self.core.exit_if_requested()?;
        Ok(self.buf.take().expect("the buffer is handed back once"))
    }
}

impl<M: Mode, S, T: Transport> Drop for OwnedRma<'_, M, S, T> {
    /// Complete the operation before its buffer is freed (its outcome is
    /// not reported: [`OwnedRma::wait`] is the way to learn it).
    fn drop(&mut self) {
        if let Some(op) = self.op.take() {
            self.core.drain(self.set, op);
        }
    }
}
