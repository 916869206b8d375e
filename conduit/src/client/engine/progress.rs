//! Progress: one round over an endpoint set's completion queues.
//!
//! Each queue is read under its try-lock (a thread that finds a queue busy
//! moves on); what a batch asks for is done after the lock is dropped, so
//! handlers run with no lock held. Every completion of a batch is accounted
//! for even when one of them reports an error: the first error is returned
//! after the whole batch. The receive side is in `receive`, the handlers'
//! side in `dispatch`.

use super::{Core, EpSet};
use crate::client::error::Error;
use crate::sync::{Counter, Lock, Mode};
use crate::transport::ofi::MAX_BATCH;
use crate::transport::{filled, Completion, Context, Cq, Polled, Side, Transport};
use std::mem::MaybeUninit;

/// How much progress a wait may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Progress {
    /// Everything: requests (their handlers run), sends, replies, reposts.
    Full,
    /// No request handlers: sends, replies and reposts. What a rank may do
    /// while it waits to send a reply (reply handlers cannot send, so no
    /// cycle of ranks waiting on each other can form); also every second
    /// round of a full wait for one RMA operation (`wait_op`), whose
    /// completion only the TX and reply queues report.
    Replies,
}

/// An error met in a round of progress, boxed: the round's functions pass
/// `Result<(), Fault>` (one word, returned in a register) rather than the
/// 120-byte [`Error`], which a spinning wait would otherwise copy through
/// stack slots several times per round (measured: the poll loop's own
/// share of a provider round trip halves).
pub(crate) type Fault = Box<Error>;

/// Keep the first error.
#[inline(always)]
pub(super) fn keep<E: Into<Fault>>(first: &mut Option<Fault>, r: Result<(), E>) {
    if let Err(e) = r {
        keep_err(first, e.into());
    }
}

#[cold]
#[inline(never)]
fn keep_err(first: &mut Option<Fault>, e: Fault) {
    if first.is_none() {
        *first = Some(e);
    } else {
        // Returned by a later poll: the round that returns `first` moves
        // it to the deferred errors (`Core::progress`).
        FURTHER.with(|f| f.borrow_mut().push(e));
    }
}

thread_local! {
    /// Errors of this thread's current round of progress after its first.
    static FURTHER: std::cell::RefCell<Vec<Fault>> = const { std::cell::RefCell::new(Vec::new()) };
}

const FI_ECANCELED: i32 = ofi_sys::FI_ECANCELED as i32;

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// One round of progress on set `set`; progress on set 0 (the client's
    /// own) also serves every set no thread owns right now, so an endpoint
    /// whose thread is done still completes its sends and answers its
    /// peers. The TX queue is read at most once per round (the transport
    /// skips it while no post of the set owes a completion).
    ///
    /// A round that returns an error may have met more: its caller deals
    /// with the one returned, then calls [`Core::defer_further`] for the
    /// others (in that order, so later polls return them after it).
    #[inline]
    pub fn progress(&self, set: usize, what: Progress) -> Result<(), Fault> {
        let r = self.progress_set(set, what);
        if let Some(t) = self.tagged.get() {
            let mut first = None;
            keep(&mut first, r);
            // Only while a tagged operation is pending, else now and then
            // (`tagged::engine::pending`).
            if t.due() {
                keep(&mut first, t.progress().map(|_| ()));
            }
            if set == 0 && self.sets.len() > 1 {
                for (i, s) in self.sets.iter().enumerate().skip(1) {
                    if !s.owned.load(std::sync::atomic::Ordering::Acquire) {
                        keep(&mut first, self.progress_set(i, what));
                    }
                }
            }
            return first.map_or(Ok(()), Err);
        }
        if set == 0 && self.sets.len() > 1 {
            let mut first = None;
            keep(&mut first, r);
            for (i, s) in self.sets.iter().enumerate().skip(1) {
                if !s.owned.load(std::sync::atomic::Ordering::Acquire) {
                    keep(&mut first, self.progress_set(i, what));
                }
            }
            return first.map_or(Ok(()), Err);
        }
        r
    }

    /// The errors the last round on this thread met after the one it
    /// returned, kept for later polls (nothing a poll meets is dropped).
    #[cold]
    #[inline(never)]
    pub(crate) fn defer_further(&self) {
        for e in FURTHER.with(|f| std::mem::take(&mut *f.borrow_mut())) {
            self.deferred.put(*e);
        }
    }

    #[inline(always)]
    fn progress_set(&self, set: usize, what: Progress) -> Result<(), Fault> {
        let shared = self.pshm.as_ref();
        if let Some(sh) = shared.filter(|sh| {
            sh.all_local
                && !self
                    .atomics
                    .provider_in_use
                    .load(std::sync::atomic::Ordering::Relaxed)
        }) {
            return self.progress_shared_only(sh, set, what);
        }
        let s = &self.sets[set];
        let mut first = None;
        let mut seen = 0usize;
        if what == Progress::Full {
            if let Some(sh) = shared {
                keep(&mut first, self.poll_lane_requests(sh, set, &mut seen));
                keep(
                    &mut first,
                    self.poll_shared(sh, set, Side::Request, &mut seen),
                );
            }
            keep(&mut first, self.poll_rx(s, Side::Request, &mut seen));
        }
        keep(&mut first, self.poll_tx(s, &mut seen));
        if let Some(sh) = shared {
            keep(&mut first, self.poll_lane_answers(sh, set, &mut seen));
            keep(
                &mut first,
                self.poll_shared(sh, set, Side::Reply, &mut seen),
            );
        }
        keep(&mut first, self.poll_rx(s, Side::Reply, &mut seen));
        let busy = seen > 0;
        keep(&mut first, self.repost(s, Side::Request, busy));
        keep(&mut first, self.repost(s, Side::Reply, busy));
        if self.landing.get().is_some_and(|l| l.unsent(set)) {
            self.flush_credits(set);
        }
        self.idle.after_poll(seen > 0);
        first.map_or(Ok(()), Err)
    }

    #[inline(always)]
    fn poll_tx(&self, s: &EpSet<M>, seen: &mut usize) -> Result<(), Fault> {
        let mut raw = [MaybeUninit::<Completion>::uninit(); MAX_BATCH];
        let want = self.batch.min(MAX_BATCH);
        let polled = {
            let Some(_g) = s.cq[0].try_lock() else {
                return Ok(());
            };
            self.tp.poll(s.index, Cq::Tx, &mut raw[..want])?
        };
        match polled {
            Polled::Empty => Ok(()),
            // SAFETY: `poll` (of the unsafe trait Transport) wrote the
            // first `n` entries.
            polled => unsafe { self.on_tx(s, polled, &mut raw, want, seen) },
        }
    }

    /// Transmit completions (or an error completion) read; a full chunk
    /// is followed by further reads, up to `GASNET_OFI_NUM_COMPLETIONS` in
    /// all (the chunk on the stack is small: a large frame on the poll
    /// loop costs latency).
    ///
    /// # Safety
    /// For `Polled::Completions(n)`, the first `n` entries of `raw` are
    /// initialised.
    #[inline(never)]
    unsafe fn on_tx(
        &self,
        s: &EpSet<M>,
        mut polled: Polled,
        raw: &mut [MaybeUninit<Completion>; MAX_BATCH],
        want: usize,
        seen: &mut usize,
    ) -> Result<(), Fault> {
        let mut first = None;
        let mut left = self.batch;
        loop {
            match polled {
                Polled::Empty => break,
                Polled::Completions(n) => {
                    *seen += n;
                    s.stats.cq_reads.add(1);
                    s.stats.completions.add(n as u64);
                    // SAFETY: this function's contract (for the first
                    // chunk), `poll`'s for the others.
                    for c in unsafe { filled(raw, n) } {
                        keep(&mut first, self.tx_done(s, c.ctx, Ok(())));
                    }
                    left = left.saturating_sub(n);
                    if n < want || left == 0 {
                        break;
                    }
                }
                Polled::Error(e) => {
                    *seen += 1;
                    keep(&mut first, self.tx_error(s, e));
                    break;
                }
            }
            let Some(_g) = s.cq[0].try_lock() else {
                break;
            };
            match self.tp.poll(s.index, Cq::Tx, &mut raw[..want.min(left)]) {
                Ok(p) => polled = p,
                Err(e) => {
                    keep(&mut first, Err(e));
                    break;
                }
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// An error completion on the transmit queue.
    pub(super) fn tx_error(
        &self,
        s: &EpSet<M>,
        e: crate::transport::ErrorCompletion,
    ) -> Result<(), Error> {
        let Some(ctx) = e.ctx else {
            return Err(Error::UnknownContext { value: 0 });
        };
        match self.tx_done(s, ctx, Err(e.transfer_error())) {
            Err(Error::Send(_)) if self.exiting() && e.err == FI_ECANCELED => Ok(()),
            Err(x) => {
                tracing::warn!("send completion error: {}", e.text);
                Err(x)
            }
            Ok(()) => Ok(()),
        }
    }

    /// A send or RMA transfer finished. RMA failures go to their operation
    /// (its waiter reports them); AM send failures are returned.
    #[inline]
    pub(super) fn tx_done(
        &self,
        s: &EpSet<M>,
        ctx: Context,
        result: Result<(), ::rma::ops::TransferError>,
    ) -> Result<(), Error> {
        match ctx {
            Context::Send { side, buf } => {
                s.pools[side.index()].lock().give(buf);
                result.map_err(Error::Send)
            }
            Context::Rma { slot } => {
                let rel = s.ops.lock().complete_transfer(slot, result);
                self.give_bbufs(rel.bbufs);
                Ok(())
            }
            Context::Recv { .. } | Context::Landed => Err(Error::UnknownContext {
                value: ctx.encode(),
            }),
        }
    }
}
