//! RMA on raw pointers, for foreign-language bindings (the C API).
//!
//! [`RmaScope`](super::RmaScope) ties every in-flight operation's buffer to
//! a Rust borrow. A C program has no borrows: GASNet-EX's contract is that
//! the caller keeps a buffer alive (and, for a get, unread) until the
//! operation's event completes or `gex_NBI_Wait` syncs it. These calls take
//! that contract as an `unsafe fn` precondition and hand back a [`RawOp`]
//! the binding keeps until it waits for it.
//!
//! An operation that is never waited for stays in the engine's table; it
//! is completed (not abandoned) when the client exits.

use super::engine::{Local, Progress};
use super::{ClientOf, Error};
use crate::sync::{Lock, Mode};
use crate::transport::Transport;
use rma::ops::{Implicit, OpId};

/// An operation started on raw pointers; wait for it with
/// [`ClientOf::raw_wait`] (or test it with [`ClientOf::raw_test`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawOp {
    op: OpId,
    what: &'static str,
    rank: usize,
}

impl RawOp {
    fn dir(&self) -> &'static str {
        if self.what == "get" {
            "from"
        } else {
            "to"
        }
    }
}

/// When a raw put's source may be reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawLocal {
    /// On return (GASNet-EX's `GEX_EVENT_NOW`): injected, copied to bounce
    /// buffers, or waited for.
    Now,
    /// Once the operation completes (`GEX_EVENT_DEFER`).
    Deferred,
}

impl<M: Mode, S, T: Transport> ClientOf<M, S, T> {
    /// Start a put of `len` bytes from `src` to `offset` in `rank`'s
    /// segment; `implicit` counts it among the NBI puts. `Ok(None)` when
    /// nothing is left in flight (zero bytes, or already complete).
    ///
    /// # Safety
    ///
    /// `src` must be valid for reads of `len` bytes for the call and, with
    /// [`RawLocal::Deferred`], until the returned operation has been waited
    /// for (or tested complete).
    pub unsafe fn raw_put(
        &self,
        rank: usize,
        offset: usize,
        src: *const u8,
        len: usize,
        local: RawLocal,
        implicit: bool,
    ) -> Result<Option<RawOp>, Error> {
        super::engine::not_in_handler("put")?;
        let implicit = if implicit {
            Implicit::Put
        } else {
            Implicit::No
        };
        let op = match local {
            RawLocal::Now => {
                let src: &[u8] = if len == 0 {
                    &[]
                } else {
                    // SAFETY: the caller guarantees `src` is readable for
                    // `len` bytes during the call; put_now reads it only
                    // before it returns (inject, bounce copy, or a wait).
                    unsafe { std::slice::from_raw_parts(src, len) }
                };
                self.core.put_now(0, rank, offset, src, implicit)?
            }
            RawLocal::Deferred => self.core.start_transfer(
                0,
                rank,
                offset,
                Local::Write(src),
                len,
                implicit,
                false,
                Progress::Full,
            )?,
        };
        Ok(op.map(|op| RawOp {
            op,
            what: "put",
            rank,
        }))
    }

    /// Start a get of `len` bytes from `offset` in `rank`'s segment into
    /// `dst`; `implicit` counts it among the NBI gets.
    ///
    /// # Safety
    ///
    /// `dst` must be valid for writes of `len` bytes, and not read or
    /// written by anything else, until the returned operation has been
    /// waited for (or tested complete); when none is returned, the get
    /// completed within the call.
    pub unsafe fn raw_get(
        &self,
        rank: usize,
        offset: usize,
        dst: *mut u8,
        len: usize,
        implicit: bool,
    ) -> Result<Option<RawOp>, Error> {
        super::engine::not_in_handler("get")?;
        let implicit = if implicit {
            Implicit::Get
        } else {
            Implicit::No
        };
        let op = self.core.start_transfer(
            0,
            rank,
            offset,
            Local::Read(dst),
            len,
            implicit,
            false,
            Progress::Full,
        )?;
        Ok(op.map(|op| RawOp {
            op,
            what: "get",
            rank,
        }))
    }

    /// Whether `op` is over (polls once if it is not). An operation tested
    /// over must still be passed to [`raw_wait`](Self::raw_wait), which
    /// then returns at once with its result.
    pub fn raw_test(&self, op: &RawOp) -> Result<bool, Error> {
        if !self.core.sets[0].ops.lock().running(op.op) {
            return Ok(true);
        }
        self.core.poll_api(0)?;
        Ok(!self.core.sets[0].ops.lock().running(op.op))
    }

    /// The implicit puts that took no operation (aggregated ones): with
    /// `wait`, sync them (`Ok(true)` once they are in their targets'
    /// segments); without, send what is gathered, poll once, and say
    /// whether they are.
    pub fn raw_nbi_puts(&self, wait: bool) -> Result<bool, Error> {
        if wait {
            self.core.sync_aggregated(0).map(|()| true)
        } else {
            self.core.test_aggregated(0)
        }
    }

    /// Wait for `op` and release it; returns its failure, if it failed.
    pub fn raw_wait(&self, op: RawOp) -> Result<(), Error> {
        self.core
            .wait_op(0, Some(op.op), Progress::Full, op.what, op.dir(), op.rank)
    }
}
