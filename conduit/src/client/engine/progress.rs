//! Progress: read completion queues, run handlers, recycle buffers.
//!
//! Each queue is read under its try-lock; the batch read is handled after
//! the lock is dropped, so handlers run with no lock held (in multi-threaded
//! mode other threads may read the next batch meanwhile). Every completion
//! of a batch is accounted for even when one of them reports an error: the
//! first error is returned after the whole batch.

use super::{Core, EpSet, HandlerScope, H_BARRIER, H_EXIT};
use crate::client::error::Error;
use crate::client::stats::kind_index;
use crate::client::token::{HandlerFn, Replier, Token};
use crate::sync::{Counter, Lock, Mode};
use crate::transport::ofi::MAX_BATCH;
use crate::transport::{
    filled, Completion, Context, Cq, ErrorCompletion, Polled, PostError, Side, Transport,
};
use am::dispatch::Delivery;
use am::recv::{Arrival, PostAs, Refusal};
use am::send::Category;
use am::wire::{Kind, Message};
use std::mem::MaybeUninit;

/// How much progress a wait may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Progress {
    /// Everything: requests (their handlers run), sends, replies, reposts.
    Full,
    /// No request handlers: sends, replies and reposts. What a rank may do
    /// while it waits to send a reply (reply handlers cannot send, so no
    /// cycle of ranks waiting on each other can form).
    Replies,
}

/// Keep the first error.
#[inline]
fn keep(first: &mut Option<Error>, r: Result<(), Error>) {
    if let Err(e) = r {
        if first.is_none() {
            *first = Some(e);
        } else {
            tracing::debug!("further error in the same poll: {e}");
        }
    }
}

const FI_ECANCELED: i32 = ofi_sys::FI_ECANCELED as i32;

/// Marks a delivered message consumed when dropped (also if its handler
/// panics), so its buffer can be reposted.
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

/// A request handler's reply path: the reply endpoint of the set the
/// request came in on, waiting (if it must) with reply-only progress.
struct ReplyPath<'a, M: Mode, T: Transport, S> {
    core: &'a Core<M, T, S>,
    set: usize,
}

impl<M: Mode, T: Transport, S> Replier for ReplyPath<'_, M, T, S> {
    fn reply(
        &self,
        dest: usize,
        category: Category,
        handler: u8,
        args: &[u32],
        payload: &[u8],
        dest_offset: usize,
    ) -> Result<(), Error> {
        self.core
            .send_am(
                self.set,
                Side::Reply,
                dest,
                category,
                handler,
                args,
                payload,
                dest_offset,
                false,
                Progress::Replies,
            )
            .map(|_| ())
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// One round of progress on set `set`; progress on set 0 (the client's
    /// own) also serves every set no thread owns right now, so an endpoint
    /// whose thread is done still completes its sends and answers its
    /// peers. The TX queue is read once per round.
    pub fn progress(&self, set: usize, what: Progress) -> Result<(), Error> {
        let r = self.progress_set(set, what);
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

    fn progress_set(&self, set: usize, what: Progress) -> Result<(), Error> {
        let s = &self.sets[set];
        let mut first = None;
        let mut seen = 0usize;
        if what == Progress::Full {
            keep(&mut first, self.poll_rx(s, Side::Request, &mut seen));
        }
        keep(&mut first, self.poll_tx(s, &mut seen));
        keep(&mut first, self.poll_rx(s, Side::Reply, &mut seen));
        keep(&mut first, self.repost(s, Side::Request));
        keep(&mut first, self.repost(s, Side::Reply));
        self.idle.after_poll(seen > 0);
        first.map_or(Ok(()), Err)
    }

    fn poll_rx(&self, s: &EpSet<M>, side: Side, seen: &mut usize) -> Result<(), Error> {
        let mut first = None;
        // AMs to self first: those queued now (a request handler may queue
        // a reply to self, which the reply side runs).
        let lb = {
            let mut q = s.loopback[side.index()].lock();
            (!q.is_empty()).then(|| std::mem::take(&mut *q))
        };
        if let Some(lb) = lb {
            *seen += lb.len();
            s.stats.completions.add(lb.len() as u64);
            for m in lb {
                keep(&mut first, self.dispatch(s.index, side, &m));
            }
        }
        let mut raw = [MaybeUninit::<Completion>::uninit(); MAX_BATCH];
        let polled = {
            let Some(_g) = s.cq[1 + side.index()].try_lock() else {
                return first.map_or(Ok(()), Err);
            };
            self.tp.poll(s.index, Cq::Rx(side), &mut raw[..self.batch])
        };
        match polled? {
            Polled::Empty => {}
            Polled::Completions(n) => {
                *seen += n;
                s.stats.cq_reads.add(1);
                s.stats.completions.add(n as u64);
                for c in filled(&raw, n) {
                    keep(&mut first, self.on_recv(s, side, c));
                }
            }
            Polled::Error(e) => {
                *seen += 1;
                keep(&mut first, self.on_recv_error(s, side, e));
            }
        }
        first.map_or(Ok(()), Err)
    }

    fn on_recv(&self, s: &EpSet<M>, side: Side, c: Completion) -> Result<(), Error> {
        let Context::Recv { buf } = c.ctx else {
            return Err(Error::UnknownContext {
                value: c.ctx.encode(),
            });
        };
        let base = s
            .recv_ptr(side, buf)
            .ok_or(am::Error::UnknownReceiveBuffer { index: buf })?;
        let offset = (!c.buf.is_null()).then(|| (c.buf as usize).wrapping_sub(base as usize));
        let arrival = s.rx[side.index()]
            .lock()
            .arrived(buf, offset, c.len, c.released)?;
        let Some(a) = arrival else {
            return Ok(());
        };
        let consume = Consume {
            set: s,
            side,
            buf,
            a,
        };
        // SAFETY: `arrived` checked that a.offset..a.offset+a.len lies in
        // receive buffer `buf`, whose bytes the provider reported complete;
        // the buffer is not posted again before `consume` is dropped (after
        // the handler returned), so nothing writes these bytes meanwhile.
        let bytes = unsafe { std::slice::from_raw_parts(base.add(a.offset), a.len) };
        let r = self.dispatch(s.index, side, bytes);
        drop(consume);
        r
    }

    fn on_recv_error(&self, s: &EpSet<M>, side: Side, e: ErrorCompletion) -> Result<(), Error> {
        if let Some(Context::Recv { buf }) = e.ctx {
            // The failed post is over (a single post always; a
            // multi-receive post when the flag says so).
            s.rx[side.index()]
                .lock()
                .arrived(buf, None, 0, e.released)?;
        }
        if self.exiting() && e.err == FI_ECANCELED {
            return Ok(());
        }
        tracing::warn!("receive completion error: {}", e.text);
        Err(Error::Receive(e.transfer_error()))
    }

    fn poll_tx(&self, s: &EpSet<M>, seen: &mut usize) -> Result<(), Error> {
        let mut raw = [MaybeUninit::<Completion>::uninit(); MAX_BATCH];
        let polled = {
            let Some(_g) = s.cq[0].try_lock() else {
                return Ok(());
            };
            self.tp.poll(s.index, Cq::Tx, &mut raw[..self.batch])?
        };
        match polled {
            Polled::Empty => Ok(()),
            Polled::Completions(n) => {
                *seen += n;
                s.stats.cq_reads.add(1);
                s.stats.completions.add(n as u64);
                let mut first = None;
                for c in filled(&raw, n) {
                    keep(&mut first, self.tx_done(s, c.ctx, Ok(())));
                }
                first.map_or(Ok(()), Err)
            }
            Polled::Error(e) => {
                *seen += 1;
                let Some(ctx) = e.ctx else {
                    return Err(Error::UnknownContext { value: 0 });
                };
                let r = self.tx_done(s, ctx, Err(e.transfer_error()));
                match r {
                    Err(Error::Send(_)) if self.exiting() && e.err == FI_ECANCELED => Ok(()),
                    Err(x) => {
                        tracing::warn!("send completion error: {}", e.text);
                        Err(x)
                    }
                    Ok(()) => Ok(()),
                }
            }
        }
    }

    /// A send or RMA transfer finished. RMA failures go to their operation
    /// (its waiter reports them); AM send failures are returned.
    #[inline]
    fn tx_done(
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
                if let Some(b) = &self.bounce {
                    for i in rel.bbufs {
                        b.pool.give(i)?;
                    }
                }
                Ok(())
            }
            Context::Recv { .. } => Err(Error::UnknownContext {
                value: ctx.encode(),
            }),
        }
    }

    /// Post the buffers of `side` that wait for a post. After a multi-receive
    /// post answered "no memory", the same buffer is posted at once without
    /// FI_MULTI_RECV (`am::recv`'s rescue post).
    pub(super) fn repost(&self, s: &EpSet<M>, side: Side) -> Result<(), Error> {
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

    /// Decode and run one message that arrived on `side` of set `set`.
    pub(super) fn dispatch(&self, set: usize, side: Side, bytes: &[u8]) -> Result<(), Error> {
        let seg = self.segment.get();
        let delivery = am::dispatch::classify(
            &self.handlers,
            bytes,
            side == Side::Request,
            seg.map(|g| g.len()),
        )?;
        let cm = match delivery {
            Delivery::Internal(msg) => return self.internal(&msg),
            Delivery::Client(cm) => cm,
        };
        if self.exiting() {
            // Client handlers are disabled while the job exits.
            return Ok(());
        }
        let h = cm.msg.header;
        let s = &self.sets[set];
        let received = if h.is_request {
            &s.stats.requests_received
        } else {
            &s.stats.replies_received
        };
        received[kind_index(h.kind)].add(1);
        let payload: &[u8] = match (h.kind, cm.long, seg) {
            (Kind::Medium, _, _) => cm.msg.payload,
            (Kind::LongInline, Some((off, len)), Some(g)) => {
                g.copy_in(off, cm.msg.payload)?;
                // SAFETY: classify checked off..off+len against the segment.
                unsafe { g.slice(off, len) }
            }
            // SAFETY: as above.
            (Kind::Long, Some((off, len)), Some(g)) => unsafe { g.slice(off, len) },
            _ => &[],
        };
        let replier = ReplyPath { core: self, set };
        let mut tok = Token {
            src: h.src as usize,
            handler: h.handler,
            endpoint: set,
            long_offset: cm.long.map(|(o, _)| o),
            state: &self.state,
            replier: (side == Side::Request).then_some(&replier as &dyn Replier),
            replied: false,
            exit_code: None,
        };
        {
            let _in = HandlerScope::enter();
            let args = cm.args.as_slice();
            match cm.handler {
                HandlerFn::Short(f) => f(&mut tok, args),
                HandlerFn::Medium(f) | HandlerFn::Long(f) => f(&mut tok, args, payload),
            }
        }
        if let Some(code) = tok.exit_code {
            self.request_exit(code);
        }
        Ok(())
    }

    /// The conduit's own messages.
    fn internal(&self, msg: &Message<'_>) -> Result<(), Error> {
        let h = msg.header;
        match h.handler {
            H_BARRIER if h.kind == Kind::Short && h.nargs == 4 && h.is_request => {
                let a = [msg.arg(0), msg.arg(1), msg.arg(2), msg.arg(3)];
                self.barrier.lock().on_message(h.src, a)?;
                Ok(())
            }
            H_EXIT if h.kind == Kind::Short && h.nargs == 2 && h.is_request => {
                let (code, dist) = (msg.arg(0) as i32, msg.arg(1));
                if !self.exit.state.lock().heard(dist as usize) {
                    return Err(am::Error::MalformedExit {
                        src: h.src,
                        handler: h.handler,
                        distance: dist,
                    }
                    .into());
                }
                self.request_exit(code);
                Ok(())
            }
            _ => Err(am::Error::Unregistered {
                src: h.src,
                index: h.handler,
            }
            .into()),
        }
    }
}
