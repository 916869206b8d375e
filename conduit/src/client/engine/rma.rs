//! The one RMA path: every put, get and AM Long payload is planned
//! (`rma::plan`: checked range, chunks at `max_msg_size`), started as an
//! operation in the set's table (`rma::ops`), posted chunk by chunk with the
//! operation's slot as completion context, and finished by its completions.
//!
//! Soundness: an operation reads or writes memory the caller lent for its
//! duration. Whatever happens (a post failing part-way, an error from
//! progress while waiting), these functions return only once every posted
//! transfer of the operation is over. If that cannot be guaranteed (the
//! network can no longer report completions), the process aborts with a
//! message instead of returning.

use super::{Core, Progress};
use crate::client::error::{Error, RmaError};
use crate::sync::{Counter, Lock, Mode};
use crate::transport::{Context, PostError, Transport};
use ::rma::ops::{Implicit, OpId, TransferError};
use ::rma::plan::{chunks, Remote};
use ::rma::put_path::PutPath;
use std::sync::atomic::Ordering;

/// The local side of a transfer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Local {
    /// Source of a write.
    Write(*const u8),
    /// Destination of a read.
    Read(*mut u8),
}

impl Local {
    fn at(self, off: usize) -> Local {
        // `wrapping_add`: the offsets come from chunks of the caller's
        // buffer, so the result stays inside it; no dereference here.
        match self {
            Local::Write(p) => Local::Write(p.wrapping_add(off)),
            Local::Read(p) => Local::Read(p.wrapping_add(off)),
        }
    }
}

/// Abort: an operation may still write memory its caller is about to get
/// back, and the network cannot say when it stops.
#[cold]
pub(crate) fn abort_in_flight(rank: usize, e: &Error) -> ! {
    gex_env::eprintln_whole!(
        "ofi-conduit (rank {rank}): {}; an RMA transfer may still be using memory that \
         is about to be released, so the process aborts",
        e.report()
    );
    std::process::abort()
}

/// Owns a started operation until it is handed on: if the code that
/// started it returns early or unwinds (a handler panicking inside a
/// wait), the transfers not posted are counted failed and the posted ones
/// are waited for before the caller's buffer can go. A panic while it waits
/// aborts the process (a panic during unwinding does).
pub(super) struct InFlight<'a, M: Mode, T: Transport, S> {
    core: &'a Core<M, T, S>,
    set: usize,
    op: OpId,
    unposted: u32,
}

impl<'a, M: Mode, T: Transport, S> InFlight<'a, M, T, S> {
    /// Own `op` of set `set`, of which `unposted` transfers are not posted.
    pub(super) fn new(core: &'a Core<M, T, S>, set: usize, op: OpId, unposted: u32) -> Self {
        InFlight {
            core,
            set,
            op,
            unposted,
        }
    }

    /// One more transfer was posted.
    pub(super) fn posted(&mut self) {
        self.unposted -= 1;
    }

    /// Hand the operation on: the guard goes without its drop (it holds
    /// only a reference and numbers, so nothing is leaked; no call to the
    /// drop on the hot path).
    pub(super) fn disarm(self) -> OpId {
        let op = self.op;
        std::mem::forget(self);
        op
    }
}

impl<M: Mode, T: Transport, S> Drop for InFlight<'_, M, T, S> {
    fn drop(&mut self) {
        let why = TransferError {
            err: 0,
            prov_errno: 0,
            text: "not posted: the call that started it ended early".into(),
        };
        let rel = self.core.sets[self.set]
            .ops
            .lock()
            .cancel_transfers(self.op, self.unposted, why);
        self.core.give_bbufs(rel.bbufs);
        self.core.drain(self.set, self.op);
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Check `rank`'s range and give its remote address and key (set `set`).
    #[inline]
    pub fn remote(
        &self,
        set: usize,
        rank: usize,
        offset: usize,
        len: usize,
    ) -> Result<Remote, Error> {
        if rank >= self.size {
            return Err(am::Error::BadRank {
                rank,
                size: self.size,
            }
            .into());
        }
        Ok(self
            .own_segment()?
            .peer(set, rank)
            .remote(rank, offset, len, self.virt_addr)?)
    }

    /// Post one transfer; -FI_EAGAIN is answered by progress and a retry.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn post_chunk(
        &self,
        set: usize,
        rank: usize,
        local: Local,
        len: usize,
        remote: Remote,
        desc: Option<T::Desc>,
        op: OpId,
        inject: bool,
        wait: Progress,
    ) -> Result<(), Error> {
        let ctx = Context::Rma { slot: op.index };
        // Before the post: a handler of the round that panics leaves this
        // transfer not posted, which is what the caller's guard counts.
        self.count_rma_post(set);
        // SAFETY: the caller of start_transfer lends the local memory
        // until the operation is over (every entry point waits for it,
        // or keeps the memory borrowed by a scope that does); with
        // FI_INJECT the source is copied now; the remote range was
        // checked against the target's published segment.
        self.post_retry(set, wait, || unsafe {
            match local {
                Local::Write(src) => self
                    .tp
                    .write(set, rank, src, len, desc, remote, ctx, inject),
                Local::Read(dst) => self.tp.read(set, rank, dst, len, desc, remote, ctx),
            }
        })
    }

    /// Count one RMA post of set `set`; every `GASNET_OFI_RMA_POLL_FREQ`-th
    /// is preceded by one round of progress on the queues RMA completions
    /// arrive on (TX and replies: no request handlers), as GASNet's
    /// ofi-conduit polls its RMA transmit queue, so a long run of
    /// non-blocking operations does not leave its completions (and bounce
    /// buffers) waiting for the next sync. The round runs before the post,
    /// as `post_retry`'s rounds do: if one of its handlers panics, the
    /// transfer was not posted, which is what the caller's guard counts.
    /// (A relaxed load and store: two threads posting on one set at once
    /// may lose a count, which only delays a poll.)
    #[inline(always)]
    fn count_rma_post(&self, set: usize) {
        let s = &self.sets[set];
        let left = s.rma_posts_left.load(Ordering::Relaxed);
        if left > 1 {
            s.rma_posts_left.store(left - 1, Ordering::Relaxed);
        } else {
            s.rma_posts_left
                .store(self.cfg.rma.rma_poll_freq, Ordering::Relaxed);
            self.poll_after_posts(set);
        }
    }

    /// The round `count_rma_post` runs. Its errors wait for the next poll:
    /// they are not the post's, which goes ahead.
    #[cold]
    #[inline(never)]
    fn poll_after_posts(&self, set: usize) {
        self.sets[set].stats.rma_post_polls.add(1);
        if let Err(e) = self.progress(set, Progress::Replies) {
            self.defer_round(*e);
        }
    }

    /// Post with `post` until the provider takes it: -FI_EAGAIN (or no
    /// free entry) is answered by progress (`wait`) and a retry.
    #[inline]
    pub(super) fn post_retry(
        &self,
        set: usize,
        wait: Progress,
        mut post: impl FnMut() -> Result<(), PostError>,
    ) -> Result<(), Error> {
        loop {
            match post() {
                Ok(()) => return Ok(()),
                Err(PostError::Again) | Err(PostError::NoMemory) => {
                    self.sets[set].stats.eagain_retries.add(1);
                    self.progress_within(set, wait)?;
                }
                Err(PostError::Failed(e)) => return Err(e.into()),
            }
        }
    }

    /// Start an operation moving `len` bytes between `local` and `rank`'s
    /// segment at `offset`. `None` when nothing is in flight: zero bytes,
    /// or a transfer that completed within the call (a copy through shared
    /// memory, a get through the get bounce buffers). On an error nothing
    /// of the operation is still in flight.
    #[allow(clippy::too_many_arguments)]
    pub fn start_transfer(
        &self,
        set: usize,
        rank: usize,
        offset: usize,
        local: Local,
        len: usize,
        implicit: Implicit,
        inject: bool,
        wait: Progress,
    ) -> Result<Option<OpId>, Error> {
        if let Some(r) = self.copy_shared(set, rank, offset, local, len) {
            return r.map(|()| None);
        }
        self.start_provider_transfer(set, rank, offset, local, len, implicit, inject, wait)
    }

    /// [`Core::start_transfer`] after [`Core::copy_shared`] found that the
    /// shared-memory path does not reach `rank` (blocking puts and gets and
    /// `put_now` try the copy first themselves).
    #[allow(clippy::too_many_arguments)]
    fn start_provider_transfer(
        &self,
        set: usize,
        rank: usize,
        offset: usize,
        local: Local,
        len: usize,
        implicit: Implicit,
        inject: bool,
        wait: Progress,
    ) -> Result<Option<OpId>, Error> {
        let remote = self.remote(set, rank, offset, len)?;
        if let Local::Read(dst) = local {
            if let Some(r) = self.get_bounced(set, rank, remote, dst, len, wait) {
                return r.map(|()| None);
            }
        }
        let window = match local {
            Local::Read(_) => self.get_window_now(),
            Local::Write(_) => None,
        };
        let plan = chunks(
            len,
            window.map_or(self.max_rma, |w| w.piece().min(self.max_rma)),
        );
        let n = plan.len();
        if n == 0 {
            return Ok(None);
        }
        let op = self.sets[set].ops.lock().start(n as u32, implicit);
        let mut g = InFlight::new(self, set, op, n as u32);
        for c in plan {
            let r = Remote {
                addr: remote.addr + c.at as u64,
                key: remote.key,
            };
            // On an error `g` cancels what is left and waits for the rest.
            if let Some(w) = window {
                self.enter_get_window(set, rank, c.len, op, w, wait)?;
            }
            self.post_chunk(set, rank, local.at(c.at), c.len, r, None, op, inject, wait)?;
            g.unposted -= 1;
        }
        Ok(Some(g.disarm()))
    }

    /// Return bounce buffers to the pool (one the pool does not know is
    /// logged; the others still go back).
    pub(super) fn give_bbufs(&self, bufs: Vec<u32>) {
        if let Some(b) = &self.bounce {
            for i in bufs {
                if let Err(e) = b.pool.give(i) {
                    tracing::warn!("{e}");
                }
            }
        }
    }

    /// Progress until `op`'s transfers are all over, then free its slot
    /// without reporting its outcome (what a drop does: a guard, a scope,
    /// an owned handle); errors from progress wait for the next poll, a
    /// fatal one aborts.
    pub fn drain(&self, set: usize, op: OpId) {
        while self.sets[set].ops.lock().running(op) {
            if let Err(e) = self.progress_deferring(set, Progress::Full) {
                abort_in_flight(self.rank, &e);
            }
        }
        self.sets[set].ops.lock().retire(op);
    }

    /// Wait for `op` (if any) and free its slot. Returns the operation's
    /// failure; returns only once the operation is over. Other errors
    /// progress meets meanwhile wait for the next poll; a fatal one (the
    /// operation can no longer be completed) aborts.
    pub fn wait_op(
        &self,
        set: usize,
        op: Option<OpId>,
        wait: Progress,
        what: &'static str,
        dir: &'static str,
        rank: usize,
    ) -> Result<(), Error> {
        let Some(op) = op else {
            return Ok(());
        };
        let g = InFlight::new(self, set, op, 0);
        // The operation's completion arrives on the TX or the reply queue,
        // which every round reads: a full wait reads the request side
        // (peers' requests, which must still be served) every second
        // round only, so the rounds that can see the completion come
        // twice as often.
        let mut round = 0u32;
        while self.sets[set].ops.lock().running(op) {
            let what = match wait {
                Progress::Full if round & 1 == 1 => Progress::Replies,
                w => w,
            };
            round = round.wrapping_add(1);
            if let Err(e) = self.progress_deferring(set, what) {
                abort_in_flight(self.rank, &e);
            }
        }
        let op = g.disarm();
        let r = self.sets[set].ops.lock().retire(op).unwrap_or(Ok(()));
        r.map_err(|cause| {
            RmaError {
                op: what,
                dir,
                rank,
                cause,
            }
            .into()
        })
    }

    fn count_put(&self, set: usize, path: PutPath) {
        let st = &self.sets[set].stats;
        match path {
            PutPath::Inject => st.put_inject.add(1),
            PutPath::Bounce(_) => st.put_bounce.add(1),
            PutPath::Block => st.put_block.add(1),
            PutPath::Aggregate => st.put_aggregate.add(1),
        }
    }

    /// Blocking put: injected up to the inject limit, else written from
    /// `src` while this waits.
    pub fn put(&self, set: usize, rank: usize, offset: usize, src: &[u8]) -> Result<(), Error> {
        if let Some(r) = self.copy_shared(set, rank, offset, Local::Write(src.as_ptr()), src.len())
        {
            return r;
        }
        let path = self.put_limits.choose_blocking(src.len());
        self.count_put(set, path);
        let op = self.start_provider_transfer(
            set,
            rank,
            offset,
            Local::Write(src.as_ptr()),
            src.len(),
            Implicit::No,
            path == PutPath::Inject,
            Progress::Full,
        )?;
        self.wait_op(set, op, Progress::Full, "put", "to", rank)
    }

    /// Blocking get.
    pub fn get(&self, set: usize, rank: usize, offset: usize, dst: &mut [u8]) -> Result<(), Error> {
        // The shared-memory copy first, inline, as `put` does (through
        // `start_transfer` it costs a call of eight arguments).
        if let Some(r) =
            self.copy_shared(set, rank, offset, Local::Read(dst.as_mut_ptr()), dst.len())
        {
            return r;
        }
        let op = self.start_provider_transfer(
            set,
            rank,
            offset,
            Local::Read(dst.as_mut_ptr()),
            dst.len(),
            Implicit::No,
            false,
            Progress::Full,
        )?;
        self.wait_op(set, op, Progress::Full, "get", "from", rank)
    }

    /// A put whose source may be reused when this returns (`lc_opt` now):
    /// aggregated (implicit puts only), inject, bounce buffers, or a
    /// blocking write. Returns the operation
    /// still running (inject, bounce) or `None` (finished, or nothing).
    pub fn put_now(
        &self,
        set: usize,
        rank: usize,
        offset: usize,
        src: &[u8],
        implicit: Implicit,
    ) -> Result<Option<OpId>, Error> {
        let local = Local::Write(src.as_ptr());
        if let Some(r) = self.copy_shared(set, rank, offset, local, src.len()) {
            return r.map(|()| None);
        }
        // Free bounce buffers matter only above the inject limit (at or below it
        // a put is injected or aggregated); the count reads the pool's
        // shared head and tail.
        let free = if src.len() > self.put_limits.inject {
            self.bounce.as_ref().map_or(0, |b| b.pool.available())
        } else {
            0
        };
        let mut path = match implicit {
            Implicit::Put => self.put_limits.choose_implicit(src.len(), free),
            _ => self.put_limits.choose(src.len(), free),
        };
        if path == PutPath::Aggregate {
            self.put_aggregate(set, rank, offset, src)?;
            self.count_put(set, path);
            return Ok(None);
        }
        if let PutPath::Bounce(n) = path {
            match self.put_bounce(set, rank, offset, src, implicit, n)? {
                Some(op) => {
                    self.count_put(set, path);
                    return Ok(Some(op));
                }
                None => path = PutPath::Block,
            }
        }
        self.count_put(set, path);
        let op = self.start_provider_transfer(
            set,
            rank,
            offset,
            local,
            src.len(),
            implicit,
            path == PutPath::Inject,
            Progress::Full,
        )?;
        if path == PutPath::Block {
            self.wait_op(set, op, Progress::Full, "put", "to", rank)?;
            return Ok(None);
        }
        Ok(op)
    }
}
