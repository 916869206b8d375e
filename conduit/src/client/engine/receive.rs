//! The receive side: read a receive queue, account each message to its
//! buffer, run the handlers, post the buffers again.
//!
//! Every message of a batch is accounted to its buffer while the queue's
//! try-lock is held. A multi-receive buffer's release may come in the next
//! batch, read by another thread, and is placed after the messages already
//! accounted: so a buffer is never posted again while a message read before
//! its release still waits for its handler. Handlers run after the lock is
//! dropped. A handler that panics leaves the rest of its batch queued for
//! the next poll (on any thread), and so does one that ends the job from
//! inside (`undelivered`): nothing read from a queue is lost.

use super::progress::{keep, Fault};
use super::undelivered::Undelivered;
use super::{Core, EpSet};
use crate::client::error::Error;
use crate::sync::{Counter, Lock, Mode};
use crate::transport::ofi::MAX_BATCH;
use crate::transport::{
    filled, Completion, Context, Cq, ErrorCompletion, Polled, PostError, Side, Transport,
};
use am::recv::{Arrival, PostAs, RecvAccounting, Refusal};
use arrayvec::ArrayVec;
use std::cell::Cell;
use std::mem::MaybeUninit;

const FI_ECANCELED: i32 = ofi_sys::FI_ECANCELED as i32;

/// A message waiting for its handler.
pub(crate) enum Queued {
    /// An AM this rank sent itself (encoded).
    Loopback(Vec<u8>),
    /// A received message, accounted to receive buffer `buf` (which stays
    /// posted-or-held until the message is consumed).
    Received { buf: u32, a: Arrival },
    /// An AM Long that landed in one message (its remote CQ data).
    Landed(u64),
}

/// What a receive completion brought.
#[derive(Clone, Copy)]
pub(super) enum Got {
    /// A message in receive buffer `.0`.
    Msg(u32, Arrival),
    /// A landing (remote CQ data).
    Landed(u64),
}

impl Got {
    pub(super) fn queued(self) -> Queued {
        match self {
            Got::Msg(buf, a) => Queued::Received { buf, a },
            Got::Landed(d) => Queued::Landed(d),
        }
    }
}

/// Marks a delivered message consumed when dropped (also if its handler
/// panics), so its buffer can be posted again.
struct Consume<'a, M: Mode> {
    set: &'a EpSet<M>,
    side: Side,
    buf: u32,
    a: Arrival,
}

impl<M: Mode> Drop for Consume<'_, M> {
    fn drop(&mut self) {
        self.set.rx[self.side.index()]
            .lock()
            .consumed(self.buf, self.a);
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Run what is queued for `side` (AMs to self, and what a panicking
    /// handler left), then read one batch of `side`'s receive queue. What
    /// a spinning wait meets most (nothing queued, an empty queue) stays
    /// inline; the rest is out of line.
    #[inline(always)]
    pub(super) fn poll_rx(&self, s: &EpSet<M>, side: Side, seen: &mut usize) -> Result<(), Fault> {
        let mut first = None;
        if !s.queue[side.index()].lock().is_empty() {
            self.run_queued(s, side, seen, &mut first);
        }
        let mut raw = [MaybeUninit::<Completion>::uninit(); MAX_BATCH];
        let want = self.batch.min(MAX_BATCH);
        if self.read_chunk(s, side, &mut raw, want, seen, &mut first) && self.batch > want {
            self.read_more(s, side, &mut raw, self.batch - want, seen, &mut first);
        }
        first.map_or(Ok(()), Err)
    }

    /// Read up to `want` completions of `side`'s queue under its try-lock
    /// and handle them; returns whether the chunk came back full (the
    /// queue may hold more).
    #[inline(always)]
    fn read_chunk(
        &self,
        s: &EpSet<M>,
        side: Side,
        raw: &mut [MaybeUninit<Completion>; MAX_BATCH],
        want: usize,
        seen: &mut usize,
        first: &mut Option<Fault>,
    ) -> bool {
        let Some(g) = s.cq[1 + side.index()].try_lock() else {
            return false;
        };
        match self.tp.poll(s.index, Cq::Rx(side), &mut raw[..want]) {
            Ok(Polled::Empty) => false,
            Ok(Polled::Completions(n)) => {
                // SAFETY: `poll` (of the unsafe trait Transport) wrote the
                // first `n` entries.
                unsafe { self.on_batch(s, side, g, raw, n, seen, first) };
                n == want
            }
            Ok(Polled::Error(e)) => {
                drop(g);
                *seen += 1;
                keep(first, self.on_recv_error(s, side, e));
                false
            }
            Err(e) => {
                keep(first, Err(e));
                false
            }
        }
    }

    /// After a full chunk: read further chunks of `side`'s queue, up to
    /// `left` completions in all (`GASNET_OFI_NUM_COMPLETIONS` per poll;
    /// the chunk on the stack is small: a large frame on the poll loop
    /// costs latency).
    #[inline(never)]
    fn read_more(
        &self,
        s: &EpSet<M>,
        side: Side,
        raw: &mut [MaybeUninit<Completion>; MAX_BATCH],
        mut left: usize,
        seen: &mut usize,
        first: &mut Option<Fault>,
    ) {
        while left > 0 {
            let want = left.min(MAX_BATCH);
            if !self.read_chunk(s, side, raw, want, seen, first) {
                return;
            }
            left -= want;
        }
    }

    /// Run the messages queued for `side`: as many as it holds now (a
    /// request handler may queue a reply to self, which the reply side
    /// runs, or a request to self, which the next poll runs), each taken
    /// from the queue only when its turn comes, so what a handler that
    /// never returns (a panic, an exit) leaves behind stays queued.
    #[inline(never)]
    pub(super) fn run_queued(
        &self,
        s: &EpSet<M>,
        side: Side,
        seen: &mut usize,
        first: &mut Option<Fault>,
    ) {
        let n = s.queue[side.index()].lock().len();
        *seen += n;
        for _ in 0..n {
            let Some(m) = s.queue[side.index()].lock().pop_front() else {
                break;
            };
            keep(first, self.deliver(s, side, m));
        }
    }

    /// A batch of `n` receive completions: account every message to its
    /// buffer while `guard` (the queue's try-lock) is held, then drop it
    /// and run the handlers.
    ///
    /// # Safety
    /// The first `n` entries of `raw` are initialised (what a transport's
    /// `poll` reported).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    unsafe fn on_batch<G>(
        &self,
        s: &EpSet<M>,
        side: Side,
        guard: G,
        raw: &[MaybeUninit<Completion>],
        n: usize,
        seen: &mut usize,
        first: &mut Option<Fault>,
    ) {
        *seen += n;
        s.stats.cq_reads.add(1);
        s.stats.completions.add(n as u64);
        if n == 1 {
            // One message (what latency-bound traffic reads): nothing else
            // of the batch waits behind its handler, so no guard is needed.
            // SAFETY: this function's contract (n == 1 entry written).
            let c = unsafe { raw[0].assume_init_read() };
            let m = self.account(s, side, &mut s.rx[side.index()].lock(), c);
            drop(guard);
            match m {
                Ok(Some(g)) => keep(first, self.deliver(s, side, g.queued())),
                Ok(None) => {}
                Err(e) => keep(first, Err(e)),
            }
            return;
        }
        let mut batch = ArrayVec::<Got, MAX_BATCH>::new();
        {
            let mut rx = s.rx[side.index()].lock();
            // SAFETY: this function's contract.
            for c in unsafe { filled(raw, n) } {
                match self.account(s, side, &mut rx, c) {
                    Ok(Some(m)) => batch.push(m),
                    Ok(None) => {}
                    Err(e) => keep(first, Err(e)),
                }
            }
        }
        drop(guard);
        Undelivered {
            set: s,
            side,
            items: &batch,
            next: Cell::new(0),
        }
        .each(|g| keep(first, self.deliver(s, side, g.queued())));
    }

    /// Account a receive completion to its buffer: the message to deliver,
    /// if it carries one.
    fn account(
        &self,
        s: &EpSet<M>,
        side: Side,
        rx: &mut RecvAccounting,
        c: Completion,
    ) -> Result<Option<Got>, Error> {
        let buf = match c.ctx {
            Context::Recv { buf } => buf,
            Context::Landed => return Ok(Some(Got::Landed(c.data))),
            // A transport may report the reply endpoint's sends and RMA
            // transfers on the reply queue (the libfabric one does).
            Context::Rma { .. } | Context::Send { .. } => {
                self.tx_done(s, c.ctx, Ok(()))?;
                return Ok(None);
            }
        };
        let Some(base) = s.recv_ptr(side, buf) else {
            return Err(am::Error::UnknownReceiveBuffer { index: buf }.into());
        };
        let offset = (!c.buf.is_null()).then(|| (c.buf as usize).wrapping_sub(base as usize));
        Ok(rx
            .arrived(buf, offset, c.len, c.released)?
            .map(|a| Got::Msg(buf, a)))
    }

    /// Run one queued message's handler.
    fn deliver(&self, s: &EpSet<M>, side: Side, m: Queued) -> Result<(), Error> {
        match m {
            Queued::Loopback(bytes) => {
                s.stats.completions.add(1);
                self.dispatch(s.index, side, &bytes)
            }
            Queued::Landed(data) => self.deliver_landed(s.index, side, data),
            Queued::Received { buf, a } => {
                let consume = Consume {
                    set: s,
                    side,
                    buf,
                    a,
                };
                let Some(base) = s.recv_ptr(side, buf) else {
                    return Err(am::Error::UnknownReceiveBuffer { index: buf }.into());
                };
                // SAFETY: `arrived` checked that a.offset..a.offset+a.len
                // lies in receive buffer `buf`, whose bytes the provider
                // reported complete; the message was accounted to the
                // buffer before any later release of it was read (under
                // the queue's try-lock), so the buffer is not posted again
                // before `consume` is dropped, after the handler returned:
                // nothing writes these bytes meanwhile.
                let bytes = unsafe { std::slice::from_raw_parts(base.add(a.offset), a.len) };
                let r = self.dispatch(s.index, side, bytes);
                drop(consume);
                r
            }
        }
    }

    fn on_recv_error(&self, s: &EpSet<M>, side: Side, e: ErrorCompletion) -> Result<(), Error> {
        if let Some(Context::Rma { .. } | Context::Send { .. }) = e.ctx {
            // A send or RMA transfer reported on this queue failed (RMA
            // failures go to their operation, send failures are returned).
            return self.tx_error(s, e);
        }
        if let Some(Context::Recv { buf }) = e.ctx {
            // The failed post is over (a single post always; a
            // multi-receive post when the flag says so). Bytes the
            // provider says it placed in a multi-receive buffer count as a
            // message consumed at once: the buffer is reposted only once
            // every byte before its release point is accounted for.
            let placed = e.placed.and_then(|(addr, len)| {
                let base = s.recv_ptr(side, buf)? as usize;
                Some((addr.wrapping_sub(base), len))
            });
            // A placement the accounting refuses (outside the buffer: a
            // provider reporting the message's length, not what it
            // placed) ends the post as one without a placement would.
            let mut rx = s.rx[side.index()].lock();
            let accounted = placed.is_some_and(|(offset, len)| {
                match rx.arrived(buf, Some(offset), len, e.released) {
                    Ok(Some(a)) => {
                        rx.consumed(buf, a);
                        true
                    }
                    Ok(None) => true,
                    Err(why) => {
                        tracing::debug!("a failed receive's placement is not accounted: {why}");
                        false
                    }
                }
            });
            if !accounted {
                rx.arrived(buf, None, 0, e.released)?;
            }
        }
        if self.exiting() && e.err == FI_ECANCELED {
            return Ok(());
        }
        tracing::warn!("receive completion error: {}", e.text);
        Err(Error::Receive(e.transfer_error()))
    }

    /// Post the buffers of `side` that wait for a post (the check that
    /// none does stays inline). In a `busy` round (one that received or
    /// completed something) they wait for an idle round unless half of the
    /// buffers are out: a post costs the provider's locks and queue work,
    /// and a round that just received a reply is on its requester's path
    /// to the next request, while an idle round spins anyway.
    #[inline(always)]
    pub(super) fn repost(&self, s: &EpSet<M>, side: Side, busy: bool) -> Result<(), Fault> {
        {
            let a = s.rx[side.index()].lock();
            if a.nothing_to_post() || (busy && !a.post_due()) {
                return Ok(());
            }
        }
        Ok(self.post_waiting(s, side)?)
    }

    /// Post the buffers that wait. After a multi-receive post answered "no
    /// memory", the same buffer is posted at once without FI_MULTI_RECV
    /// (`am::recv`'s rescue post).
    #[inline(never)]
    fn post_waiting(&self, s: &EpSet<M>, side: Side) -> Result<(), Error> {
        let rx = &s.rx[side.index()];
        let mut rescued = false;
        loop {
            let next = {
                let mut a = rx.lock();
                if a.nothing_to_post() {
                    return Ok(());
                }
                a.next_post()
            };
            let Some((buf, how)) = next else {
                return Ok(());
            };
            let Some(p) = s.recv_ptr(side, buf) else {
                return Err(am::Error::UnknownReceiveBuffer { index: buf }.into());
            };
            // SAFETY: the buffer lies in the set's receive mapping, which
            // every endpoint of the set holds until it is closed; the
            // accounting hands each buffer to one poster and nothing reads
            // it before its completions arrive.
            let r = unsafe {
                self.tp.post_recv(
                    s.index,
                    side.ep(),
                    p,
                    s.recv_size,
                    Context::Recv { buf },
                    how == PostAs::Multi,
                )
            };
            match r {
                Ok(()) => rx.lock().posted_ok(buf, how),
                Err(PostError::Again) => {
                    rx.lock().refused(buf, Refusal::Again);
                    s.stats.eagain_retries.add(1);
                    return Ok(());
                }
                Err(PostError::NoMemory) => {
                    rx.lock().refused(buf, Refusal::NoMemory);
                    s.stats.eagain_retries.add(1);
                    if how == PostAs::Single || rescued {
                        return Ok(());
                    }
                    rescued = true;
                }
                Err(PostError::Failed(e)) => {
                    rx.lock().refused(buf, Refusal::Again);
                    return Err(e.into());
                }
            }
        }
    }
}
