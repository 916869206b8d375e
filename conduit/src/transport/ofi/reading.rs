//! Reading the completion queues: the TX queue only when something can
//! be in it, entries converted to [`Completion`]s (AM receives, landings
//! of remote writes with CQ data, sends and RMA), error entries.

use super::{
    flags, DomainLock, OfiTransport, Tally, MAX_BATCH, REPLY_WINDOW, RX_IDLE_READ, TX_IDLE_READ,
};
use crate::client::Error;
use crate::ofi::{CompletionQueue, CqEntry, CqRead};
use crate::transport::{Completion, Context, ErrorCompletion, Polled};
use ofi_sys as sys;
use std::mem::MaybeUninit;

/// An idle round of a queue that nothing is expected in: skip it, except
/// every `every`th such round (counted in `idle`), which reads it anyway.
#[inline(always)]
fn skip_idle(idle: &impl Tally, every: usize) -> bool {
    let n = idle.get() + 1;
    if n < every {
        idle.set(n);
        return true;
    }
    idle.set(0);
    false
}

impl<L: DomainLock> OfiTransport<L> {
    /// The TX queue of set `set`, unless nothing can be in it.
    #[inline(always)]
    pub(super) fn poll_tx(
        &self,
        set: usize,
        out: &mut [MaybeUninit<Completion>],
    ) -> Result<Polled, Error> {
        let s = &self.sets[set];
        if self.pending[set].get() == 0 && skip_idle(&self.tx_idle[set], TX_IDLE_READ) {
            return Ok(Polled::Empty);
        }
        let r = self.read_queue(&s.tx, false, out);
        match &r {
            Ok(Polled::Empty) => {}
            Ok(Polled::Completions(k)) => self.pending[set].sub(*k),
            Ok(Polled::Error(_)) => self.pending[set].sub(1),
            Err(_) => {}
        }
        r
    }

    /// The reply queue of set `set` with the profile's
    /// `quiet_reply_queue`: read while something can arrive there (a
    /// completion of a reply-endpoint post, a reply within `REPLY_WINDOW`
    /// reads of the last request sent), else once in `RX_IDLE_READ`
    /// rounds.
    #[inline(always)]
    pub(super) fn poll_quiet_reply(
        &self,
        set: usize,
        out: &mut [MaybeUninit<Completion>],
    ) -> Result<Polled, Error> {
        let w = &self.reply_watch[set];
        let since = &self.since_request[set];
        let n = since.get();
        if n < REPLY_WINDOW {
            since.set(n + 1);
        } else if w.get() == 0 && skip_idle(&self.rx_idle[set], RX_IDLE_READ) {
            return Ok(Polled::Empty);
        }
        let r = self.read_queue(&self.sets[set].rx[1], true, out);
        match &r {
            Ok(Polled::Completions(k)) => w.sub(*k),
            Ok(Polled::Error(_)) => w.sub(1),
            _ => {}
        }
        r
    }

    fn convert(raw: &CqEntry, rx: bool) -> Result<Completion, Error> {
        // AM receives carry no CQ data: a receive-queue entry with CQ
        // data (or flagged as a remote write) is a landing. shm 2.1 flags
        // it FI_REMOTE_CQ_DATA only, 1.17 adds FI_RMA | FI_REMOTE_WRITE.
        // The reply queue also takes the reply endpoint's own sends and
        // writes, whose completions some providers (sockets) flag with the
        // operation's FI_REMOTE_CQ_DATA: a local operation's flag (FI_SEND,
        // FI_WRITE, FI_READ) says it is not a landing.
        if rx && flags::landed(raw.flags()) {
            return Self::convert_landed(raw);
        }
        let v = raw.context() as usize;
        let Some(ctx) = Context::decode(v) else {
            return Err(Error::UnknownContext { value: v });
        };
        Ok(Completion {
            ctx,
            len: if rx { raw.len() } else { 0 },
            buf: if rx {
                raw.buf() as *const u8
            } else {
                std::ptr::null()
            },
            released: rx && raw.flags() & sys::FI_MULTI_RECV as u64 != 0,
            data: 0,
        })
    }

    /// A remote write reported in a receive queue: only writes with CQ
    /// data (landings) generate one; an entry flagged a remote write
    /// without CQ data is reported as an unknown context.
    #[cold]
    fn convert_landed(raw: &CqEntry) -> Result<Completion, Error> {
        if raw.flags() & sys::FI_REMOTE_CQ_DATA as u64 == 0 {
            return Err(Error::UnknownContext {
                value: raw.context() as usize,
            });
        }
        Ok(Completion {
            ctx: Context::Landed,
            len: 0,
            buf: std::ptr::null(),
            released: false,
            data: raw.data(),
        })
    }

    /// Read up to `out.len()` completions of `q`. The empty case (what a
    /// spinning wait sees most) stays inline; the rest is out of line.
    #[inline(always)]
    pub(super) fn read_queue(
        &self,
        q: &CompletionQueue,
        rx: bool,
        out: &mut [MaybeUninit<Completion>],
    ) -> Result<Polled, Error> {
        let mut raw = [MaybeUninit::<CqEntry>::uninit(); MAX_BATCH];
        let n = out.len().min(MAX_BATCH);
        let _g = self.lock.enter();
        // SAFETY: the domain lock serialises calls where the provider needs
        // it (FI_THREAD_DOMAIN); the client polls each queue from one
        // thread at a time (its per-queue try-lock).
        match unsafe { q.read_uninit(&mut raw[..n]) }? {
            CqRead::Empty => Ok(Polled::Empty),
            // SAFETY: k is what read_uninit reported.
            CqRead::Entries(k) => unsafe { Self::convert_all(&raw, k, rx, out) },
            CqRead::Error => Self::read_error(q),
        }
    }

    /// Convert the `k` entries read into `out`.
    ///
    /// # Safety
    /// The first `k` entries of `raw` were written by `fi_cq_read`.
    #[inline(never)]
    unsafe fn convert_all(
        raw: &[MaybeUninit<CqEntry>],
        k: usize,
        rx: bool,
        out: &mut [MaybeUninit<Completion>],
    ) -> Result<Polled, Error> {
        // SAFETY: this function's contract.
        let got = unsafe { CompletionQueue::entries(raw, k) };
        for (o, e) in out.iter_mut().zip(got) {
            o.write(Self::convert(e, rx)?);
        }
        Ok(Polled::Completions(k))
    }

    /// The error completion at the head of `q` (the caller holds the
    /// domain lock).
    #[cold]
    fn read_error(q: &CompletionQueue) -> Result<Polled, Error> {
        // SAFETY: as in read_queue, whose lock the caller still holds.
        match unsafe { q.read_error() }? {
            None => Ok(Polled::Empty),
            Some(e) => Ok(Polled::Error(ErrorCompletion {
                ctx: Context::decode(e.context as usize),
                err: e.err,
                prov_errno: e.prov_errno,
                text: e.text,
                released: e.flags & sys::FI_MULTI_RECV as u64 != 0,
                // A truncated message reports its whole length and the
                // part that did not fit (ofi_rxm): what was placed is
                // the difference.
                placed: (!e.buf.is_null() && e.len > e.olen)
                    .then_some((e.buf as usize, e.len - e.olen)),
            })),
        }
    }
}
