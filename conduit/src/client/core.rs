//! The engine under the client: endpoints, CQs, buffers, send paths,
//! completion handling and message dispatch.
//!
//! Three RDM endpoints as in the reference: requests and replies have their
//! own endpoints and receive CQs, so a rank that waits to send a reply only
//! drains the TX CQ and replies (whose handlers cannot send anything): no
//! cycle of ranks waiting on each other's requests can form. The third
//! endpoint carries RMA (FI_DELIVERY_COMPLETE).

use super::error::AmError;
use super::recv::{RecvBuffers, RecvCtx, Side};
use super::segment::{Segment, SegmentInfo};
use super::stats::AmStats;
use super::token::{HandlerFn, Token};
use crate::ofi::{
    AddressVector, CompletionQueue, CqEntry, CqRead, Domain, Endpoint, FiAddr, MemoryRegion,
};
use am::barrier::Barrier;
use am::exit::ExitState;
use am::handlers::{Category, HandlerTable, Signature};
use am::pool::{Buf, Pool};
use am::wire::{self, Header, Kind};
use std::sync::atomic::{AtomicU8, Ordering};

/// Internal handler: barrier round (Short request, 4 args).
pub(crate) const H_BARRIER: u8 = 1;
/// Internal handler: exit (Short request, 2 args: code, distance).
pub(crate) const H_EXIT: u8 = 2;

const TAG_MASK: usize = 3;
const TAG_REQ_BUF: usize = 0;
const TAG_REP_BUF: usize = 1;
const TAG_WAIT: usize = 2;
pub(crate) const TAG_RMA: usize = 3;

/// Most completions read per CQ per poll.
const MAX_BATCH: usize = 64;

pub(crate) struct Core {
    // libfabric objects first: they are closed before the memory below,
    // which the provider may still reference until then. The segment MR
    // holds the RMA endpoint, so it closes before it.
    pub seg_mr: Option<MemoryRegion>,
    pub bbuf_mr: Option<MemoryRegion>,
    pub req_ep: Endpoint,
    pub rep_ep: Endpoint,
    pub rma_ep: Endpoint,
    pub tx_cqs: Vec<CompletionQueue>,
    pub rx_req_cq: CompletionQueue,
    pub rx_rep_cq: CompletionQueue,
    pub _av: AddressVector,
    pub _domain: Domain,
    // Memory handed to the provider.
    pub rx: RecvBuffers,
    pub req_pool: Pool,
    pub rep_pool: Pool,
    pub segment: Option<Segment>,
    pub bbufs: bbuf::Pool,
    // State.
    pub rank: usize,
    pub size: usize,
    pub addrs: Vec<FiAddr>,
    pub handlers_rep: Option<HandlerTable<HandlerFn>>,
    pub barrier: Barrier,
    pub exit: ExitState,
    pub exit_sends: Vec<(usize, usize)>,
    pub inject_limit: usize,
    pub long_thresh: usize,
    pub max_medium: usize,
    pub max_rma: usize,
    pub batch: usize,
    pub mr_virt_addr: bool,
    pub peers: Vec<SegmentInfo>,
    pub stats: AmStats,
    pub in_handler: bool,
    pub scratch: Vec<u8>,
    // RMA.
    pub ops: ::rma::ops::Ops,
    pub put_limits: ::rma::put_path::PutLimits,
    pub put_counts: ::rma::put_path::PutCounters,
    pub rma_poll_freq: usize,
    pub rma_posts: usize,
    /// Empty-poll tracking for the wait mode.
    pub idle: super::wait::Idle,
    /// Bytes of endpoint names gathered at start-up (for memory_use).
    pub names_at_startup: usize,
    /// AMs this rank sent to itself, waiting for the next poll
    /// (`[request, reply]`): delivered without the provider.
    pub loopback: [std::collections::VecDeque<Vec<u8>>; 2],
}

/// Most AMs to self queued before a send waits for a poll to drain them.
const LOOPBACK_MAX: usize = 1024;

fn kind_index(k: Kind) -> usize {
    match k {
        Kind::Short => 0,
        Kind::Medium => 1,
        Kind::Long | Kind::LongInline => 2,
    }
}

impl Core {
    /// Address of `rank`'s endpoint `ep` (0 request, 1 reply, 2 RMA).
    #[inline]
    pub(crate) fn addr(&self, rank: usize, ep: usize) -> FiAddr {
        self.addrs[3 * rank + ep]
    }

    pub fn check_rank(&self, rank: usize) -> Result<(), AmError> {
        if rank >= self.size {
            return Err(AmError::BadRank {
                rank,
                size: self.size,
            });
        }
        Ok(())
    }

    /// Check an outgoing AM's shape.
    pub fn check_message(
        &self,
        dest: usize,
        kind: Kind,
        args: &[u32],
        payload: &[u8],
        dest_offset: Option<usize>,
    ) -> Result<(), AmError> {
        self.check_rank(dest)?;
        if args.len() > am::MAX_ARGS {
            return Err(AmError::TooManyArgs { nargs: args.len() });
        }
        match kind {
            Kind::Medium if payload.len() > self.max_medium => Err(AmError::MediumTooLarge {
                len: payload.len(),
                max: self.max_medium,
            }),
            Kind::Long | Kind::LongInline => {
                let info = self.peers.get(dest).ok_or(AmError::NoSegment)?;
                let off = dest_offset.unwrap_or(0);
                let fits = off
                    .checked_add(payload.len())
                    .is_some_and(|end| end as u64 <= info.size)
                    && payload.len() <= u32::MAX as usize;
                if !fits {
                    return Err(AmError::OutOfSegment {
                        rank: dest,
                        offset: off,
                        len: payload.len(),
                        size: info.size as usize,
                    });
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// One attempt to send. `Ok(false)`: would block (no buffer, or
    /// -FI_EAGAIN); the caller makes progress and retries.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn try_send(
        &mut self,
        side: Side,
        dest: usize,
        kind: Kind,
        handler: u8,
        args: &[u32],
        inline: &[u8],
        payload_len: usize,
        dest_offset: Option<usize>,
    ) -> Result<bool, AmError> {
        let is_request = side == Side::Request;
        let header = Header {
            kind,
            nargs: args.len() as u8,
            is_request,
            handler,
            src: self.rank as u32,
        };
        let len = wire::message_len(kind, args.len(), inline.len());
        if dest == self.rank {
            // To self: queued and run by the next poll, as a received
            // message would be. Some providers lose messages an endpoint
            // sends to itself under load (udp;ofi_rxd, sockets), and the
            // fabric has nothing to add here.
            let q = &mut self.loopback[if is_request { 0 } else { 1 }];
            if q.len() >= LOOPBACK_MAX {
                return Ok(false);
            }
            let mut m = vec![0u8; len];
            let off = dest_offset.map(|o| o as u64);
            wire::encode_into(&mut m, &header, args, off, payload_len, inline);
            q.push_back(m);
            self.stats.loopback += 1;
            self.count_sent(is_request, kind);
            return Ok(true);
        }
        let ep_index = if is_request { 0 } else { 1 };
        let to = self.addr(dest, ep_index);
        let off = dest_offset.map(|o| o as u64);
        if len <= self.inject_limit {
            if self.scratch.len() < len {
                self.scratch.resize(len, 0);
            }
            wire::encode_into(&mut self.scratch, &header, args, off, payload_len, inline);
            let ep = if is_request {
                &self.req_ep
            } else {
                &self.rep_ep
            };
            // SAFETY: single-threaded client (FI_THREAD_DOMAIN); inject copies
            // the bytes before returning.
            match unsafe { ep.inject(&self.scratch[..len], to) } {
                Ok(()) => {
                    self.stats.injected += 1;
                    self.count_sent(is_request, kind);
                    Ok(true)
                }
                Err(e) if e.is_again() => {
                    self.stats.eagain_retries += 1;
                    Ok(false)
                }
                Err(e) => Err(e.into()),
            }
        } else {
            let (pool, tag) = if is_request {
                (&mut self.req_pool, TAG_REQ_BUF)
            } else {
                (&mut self.rep_pool, TAG_REP_BUF)
            };
            let Some(idx) = pool.take() else {
                return Ok(false);
            };
            let buf = pool.buf(idx);
            wire::encode_into(buf.bytes_mut(), &header, args, off, payload_len, inline);
            let ptr = buf.as_ptr();
            let ctx = (pool.context(idx) as usize | tag) as *mut libc::c_void;
            let ep = if is_request {
                &self.req_ep
            } else {
                &self.rep_ep
            };
            // SAFETY: the buffer belongs to the pool, which the client keeps
            // until its endpoints are closed, and stays out of the free list
            // until this send's completion returns it; single-threaded.
            match unsafe { ep.send(ptr, len, to, ctx) } {
                Ok(()) => {
                    self.stats.sent_from_buffer += 1;
                    self.count_sent(is_request, kind);
                    Ok(true)
                }
                Err(e) => {
                    let pool = if is_request {
                        &mut self.req_pool
                    } else {
                        &mut self.rep_pool
                    };
                    pool.give(idx);
                    if e.is_again() {
                        self.stats.eagain_retries += 1;
                        Ok(false)
                    } else {
                        Err(e.into())
                    }
                }
            }
        }
    }

    fn count_sent(&mut self, is_request: bool, kind: Kind) {
        let c = if is_request {
            &mut self.stats.requests_sent
        } else {
            &mut self.stats.replies_sent
        };
        c[kind_index(kind)] += 1;
    }

    /// Send a reply (from a request handler): waits for resources by
    /// draining only the TX CQ and the reply side.
    pub fn send_reply(
        &mut self,
        dest: usize,
        kind: Kind,
        handler: u8,
        args: &[u32],
        payload: &[u8],
        dest_offset: Option<usize>,
    ) -> Result<(), AmError> {
        self.check_message(dest, kind, args, payload, dest_offset)?;
        let (kind, inline, plen) = self.long_plan(kind, dest, args, payload, dest_offset)?;
        loop {
            if self.try_send(
                Side::Reply,
                dest,
                kind,
                handler,
                args,
                inline,
                plen,
                dest_offset,
            )? {
                return Ok(());
            }
            self.poll_replies()?;
        }
    }

    /// For Long: decide inline or RMA; for RMA, write the payload now (the
    /// header follows once the write completed). Returns the kind to send,
    /// the inline bytes and the payload length for the header.
    pub fn long_plan<'p>(
        &mut self,
        kind: Kind,
        dest: usize,
        args: &[u32],
        payload: &'p [u8],
        dest_offset: Option<usize>,
    ) -> Result<(Kind, &'p [u8], usize), AmError> {
        match kind {
            Kind::Long => {
                if dest == self.rank
                    || wire::message_len(Kind::LongInline, args.len(), payload.len())
                        <= self.long_thresh
                {
                    self.stats.long_inline += 1;
                    Ok((Kind::LongInline, payload, payload.len()))
                } else {
                    self.rma_write_blocking(dest, dest_offset.unwrap_or(0), payload)?;
                    self.stats.long_rma += 1;
                    Ok((Kind::Long, &[], payload.len()))
                }
            }
            Kind::Medium => Ok((Kind::Medium, payload, payload.len())),
            k => Ok((k, &[], 0)),
        }
    }

    /// Write `data` to `offset` in `dest`'s segment and wait for its
    /// completion (FI_DELIVERY_COMPLETE on the RMA endpoint: delivered at the
    /// target). Progress meanwhile drains the TX CQ and the reply side.
    pub fn rma_write_blocking(
        &mut self,
        dest: usize,
        offset: usize,
        data: &[u8],
    ) -> Result<(), AmError> {
        let info = *self.peers.get(dest).ok_or(AmError::NoSegment)?;
        let key = info.key;
        let mut done_bytes = 0;
        while done_bytes < data.len() {
            let n = (data.len() - done_bytes).min(self.max_rma.max(1));
            let off = (offset + done_bytes) as u64;
            let raddr = if self.mr_virt_addr {
                info.base + off
            } else {
                off
            };
            // A heap flag the completion sets; leaked (never dangling) if we
            // must give up before the completion arrives.
            let flag: *mut AtomicU8 = Box::into_raw(Box::new(AtomicU8::new(0)));
            let ctx = (flag as usize | TAG_WAIT) as *mut libc::c_void;
            let src = data[done_bytes..].as_ptr();
            loop {
                // SAFETY: `data` outlives this loop, which waits for the
                // completion below; the target range was checked against the
                // peer's segment; single-threaded.
                match unsafe {
                    self.rma_ep.write(
                        src,
                        n,
                        std::ptr::null_mut(),
                        self.addr(dest, 2),
                        raddr,
                        key,
                        ctx,
                    )
                } {
                    Ok(()) => break,
                    Err(e) if e.is_again() => {
                        self.stats.eagain_retries += 1;
                        self.poll_replies()?;
                    }
                    Err(e) => {
                        // SAFETY: the write was not posted; we own the flag.
                        drop(unsafe { Box::from_raw(flag) });
                        return Err(e.into());
                    }
                }
            }
            loop {
                // SAFETY: flag stays allocated until we free it below.
                let state = unsafe { (*flag).load(Ordering::Acquire) };
                if state != 0 {
                    // SAFETY: the completion has been processed; nothing
                    // refers to the flag any more.
                    drop(unsafe { Box::from_raw(flag) });
                    if state == 2 {
                        return Err(AmError::Completion {
                            what: "AM Long payload write",
                            err: 0,
                            prov_errno: 0,
                            text: "see the preceding log line".into(),
                        });
                    }
                    break;
                }
                self.poll_replies()?;
            }
            done_bytes += n;
        }
        Ok(())
    }

    /// Drain the TX CQ(s): return send buffers to their pools and mark
    /// waited-for operations complete.
    pub fn poll_tx(&mut self) -> Result<(), AmError> {
        let mut entries = [std::mem::MaybeUninit::<CqEntry>::uninit(); MAX_BATCH];
        for q in 0..self.tx_cqs.len() {
            // SAFETY: single-threaded client (FI_THREAD_DOMAIN).
            match unsafe { self.tx_cqs[q].read_uninit(&mut entries[..self.batch]) }? {
                CqRead::Empty => {}
                CqRead::Entries(n) => {
                    self.stats.cq_reads += 1;
                    self.stats.completions += n as u64;
                    // SAFETY: n is what read_uninit reported.
                    let done = unsafe { CompletionQueue::entries(&entries, n) };
                    for e in done {
                        self.tx_done(e.context() as usize, false);
                    }
                }
                CqRead::Error => {
                    // SAFETY: as above.
                    if let Some(err) = unsafe { self.tx_cqs[q].read_error() }? {
                        self.tx_done(err.context as usize, true);
                        let exiting = self.exit.code().is_some();
                        let canceled = err.err == ofi_sys::FI_ECANCELED as i32;
                        if !(exiting && canceled) {
                            tracing::warn!("send completion error: {}", err.text);
                            return Err(AmError::Completion {
                                what: "an AM send or RMA write",
                                err: err.err,
                                prov_errno: err.prov_errno,
                                text: err.text,
                            });
                        }
                    }
                }
            }
        }
        Ok(())
    }

    #[inline]
    fn tx_done(&mut self, ctx: usize, failed: bool) {
        let ptr = ctx & !TAG_MASK;
        if ptr == 0 && ctx & TAG_MASK != TAG_RMA {
            return;
        }
        match ctx & TAG_MASK {
            TAG_REQ_BUF => {
                // SAFETY: the context was made by Pool::context on req_pool.
                let i = unsafe { Pool::index_of(ptr as *const Buf) };
                self.req_pool.give(i);
            }
            TAG_REP_BUF => {
                // SAFETY: the context was made by Pool::context on rep_pool.
                let i = unsafe { Pool::index_of(ptr as *const Buf) };
                self.rep_pool.give(i);
            }
            TAG_RMA => {
                let released = self.ops.complete_transfer((ctx >> 2) as u32, failed);
                for b in released.bbufs {
                    let _ = self.bbufs.reclaim(b);
                }
            }
            TAG_WAIT => {
                // SAFETY: a flag allocated by rma_write_blocking, freed only
                // after it sees this store.
                unsafe {
                    (*(ptr as *const AtomicU8)).store(if failed { 2 } else { 1 }, Ordering::Release)
                };
            }
            _ => {}
        }
    }

    /// TX CQ, reply receives and reposts: the progress a reply sender may
    /// make without running request handlers.
    pub fn poll_replies(&mut self) -> Result<(), AmError> {
        self.poll_tx()?;
        let mut handlers = self
            .handlers_rep
            .take()
            .expect("reply handlers are only taken during reply dispatch, which cannot nest");
        let r = poll_rx(self, &mut handlers, Side::Reply);
        self.handlers_rep = Some(handlers);
        r?;
        self.repost_pending()?;
        self.idle.after_poll(self.stats.completions);
        Ok(())
    }

    /// Post buffer `i` again (or queue it for a retry on -FI_EAGAIN).
    pub fn repost(&mut self, i: usize) -> Result<(), AmError> {
        let ep = match self.rx.ctxs[i].side {
            Side::Request => &self.req_ep,
            Side::Reply => &self.rep_ep,
        };
        if self.rx.post(i, ep)? {
            self.stats.reposts += 1;
        } else {
            self.stats.eagain_retries += 1;
            self.rx.retry.push(i);
        }
        Ok(())
    }

    /// Retry reposts that returned -FI_EAGAIN.
    pub fn repost_pending(&mut self) -> Result<(), AmError> {
        if self.rx.retry.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.rx.retry);
        for i in pending {
            self.repost(i)?;
        }
        Ok(())
    }

    /// Start exiting with `code` (first code wins): queue the exit messages.
    pub fn request_exit(&mut self, code: i32) {
        let sends = self.exit.begin(code);
        self.exit_sends.extend(sends);
    }

    /// The segment bytes `offset..offset+len` of this rank, checked.
    fn segment_range(&mut self, src: u32, offset: usize, len: usize) -> Result<*mut u8, AmError> {
        let seg = self.segment.as_mut().ok_or(AmError::NoSegment)?;
        let fits = offset.checked_add(len).is_some_and(|e| e <= seg.len());
        if !fits {
            return Err(AmError::Wire(wire::WireError::Length {
                src,
                handler: 0,
                why: format!(
                    "Long payload of {len} bytes at offset {offset} falls outside this rank's {}-byte segment",
                    seg.len()
                ),
            }));
        }
        // SAFETY: offset..offset+len is inside the mapping (checked above).
        Ok(unsafe { seg.ptr().add(offset) })
    }

    fn internal(&mut self, msg: &wire::Message<'_>) -> Result<(), AmError> {
        let h = msg.header;
        let unregistered = || {
            AmError::Dispatch(am::handlers::DispatchError::Unregistered {
                src: h.src,
                index: h.handler,
            })
        };
        match h.handler {
            H_BARRIER if h.kind == Kind::Short && h.nargs == 4 && h.is_request => {
                let a = [msg.arg(0), msg.arg(1), msg.arg(2), msg.arg(3)];
                self.barrier.on_message(h.src, a)?;
                Ok(())
            }
            H_EXIT if h.kind == Kind::Short && h.nargs == 2 && h.is_request => {
                let (code, dist) = (msg.arg(0) as i32, msg.arg(1) as usize);
                if !self.exit.heard(dist) {
                    return Err(AmError::Wire(wire::WireError::Length {
                        src: h.src,
                        handler: h.handler,
                        why: format!("exit message with impossible distance {dist}"),
                    }));
                }
                self.request_exit(code);
                Ok(())
            }
            _ => Err(unregistered()),
        }
    }
}

/// Read up to one batch from a receive CQ and dispatch each message.
pub(crate) fn poll_rx(
    core: &mut Core,
    handlers: &mut HandlerTable<HandlerFn>,
    side: Side,
) -> Result<(), AmError> {
    // AMs to self first (at most those queued now: a handler may queue a
    // reply to self, which the reply side runs).
    let q = if side == Side::Request { 0 } else { 1 };
    for _ in 0..core.loopback[q].len() {
        let Some(m) = core.loopback[q].pop_front() else {
            break;
        };
        core.stats.completions += 1;
        dispatch(core, handlers, &m, side)?;
    }
    let mut raw = [std::mem::MaybeUninit::<CqEntry>::uninit(); MAX_BATCH];
    let cq = match side {
        Side::Request => &core.rx_req_cq,
        Side::Reply => &core.rx_rep_cq,
    };
    // SAFETY: single-threaded client (FI_THREAD_DOMAIN).
    let n = match unsafe { cq.read_uninit(&mut raw[..core.batch]) }? {
        CqRead::Empty => return Ok(()),
        CqRead::Entries(n) => n,
        CqRead::Error => {
            // SAFETY: as above.
            let err = unsafe { cq.read_error() }?;
            return match err {
                Some(e) if core.exit.code().is_some() && e.err == ofi_sys::FI_ECANCELED as i32 => {
                    Ok(())
                }
                Some(e) => Err(AmError::Completion {
                    what: "an AM receive",
                    err: e.err,
                    prov_errno: e.prov_errno,
                    text: e.text,
                }),
                None => Ok(()),
            };
        }
    };
    core.stats.cq_reads += 1;
    core.stats.completions += n as u64;
    // SAFETY: n is what read_uninit reported.
    let entries = unsafe { CompletionQueue::entries(&raw, n) };
    for e in entries {
        // SAFETY: receive contexts are &RecvCtx of core.rx, which lives as
        // long as core.
        let i = unsafe { (*(e.context() as *const RecvCtx)).index };
        if !e.is_empty() {
            let start = if core.rx.multi_recv {
                e.buf() as *const u8
            } else {
                core.rx.ptr(i) as *const u8
            };
            if !core.rx.contains(i, start, e.len()) {
                return Err(AmError::Completion {
                    what: "an AM receive",
                    err: 0,
                    prov_errno: 0,
                    text: format!(
                        "the provider reported {} bytes outside receive buffer {i}",
                        e.len()
                    ),
                });
            }
            // SAFETY: the range is inside receive buffer i (checked), which
            // is not reposted until after this message's handler returned.
            let bytes = unsafe { std::slice::from_raw_parts(start, e.len()) };
            dispatch(core, handlers, bytes, side)?;
        }
        let released = !core.rx.multi_recv || e.flags() & ofi_sys::FI_MULTI_RECV as u64 != 0;
        if released {
            if !core.rx.posted[i] {
                // Reposting now would hand the provider one buffer twice.
                return Err(AmError::Completion {
                    what: "an AM receive",
                    err: 0,
                    prov_errno: 0,
                    text: format!("the provider released receive buffer {i}, which was not posted"),
                });
            }
            core.rx.posted[i] = false;
            core.repost(i)?;
        }
    }
    Ok(())
}

/// Decode and run one message.
fn dispatch(
    core: &mut Core,
    handlers: &mut HandlerTable<HandlerFn>,
    bytes: &[u8],
    side: Side,
) -> Result<(), AmError> {
    let msg = wire::decode(bytes)?;
    let h = msg.header;
    if h.handler < am::handlers::CLIENT_BASE {
        return core.internal(&msg);
    }
    if core.exit.code().is_some() {
        // Client handlers are disabled while the job exits.
        return Ok(());
    }
    let category = match h.kind {
        Kind::Short => Category::Short,
        Kind::Medium => Category::Medium,
        Kind::Long | Kind::LongInline => Category::Long,
    };
    let sig = Signature {
        category,
        is_request: h.is_request,
        nargs: h.nargs,
    };
    // A request on the reply endpoint (or the reverse) cannot match the
    // table of this side: report it as what it claims to be.
    let sig_for_lookup = Signature {
        is_request: side == Side::Request,
        ..sig
    };
    if sig_for_lookup != sig {
        return Err(AmError::Dispatch(am::handlers::DispatchError::Mismatch {
            src: h.src,
            index: h.handler,
            got: sig,
            want: sig_for_lookup,
        }));
    }
    let f = handlers.dispatch(h.handler, sig, h.src)?;
    let mut args = [0u32; am::MAX_ARGS];
    for (i, a) in args.iter_mut().enumerate().take(h.nargs as usize) {
        *a = msg.arg(i);
    }
    let args = &args[..h.nargs as usize];
    // Long: find (and for inline Long, fill) the payload's place first.
    let long: Option<(usize, *const u8)> = match h.kind {
        Kind::Long | Kind::LongInline => {
            let off = msg.dest_offset.unwrap_or(0) as usize;
            let p = core.segment_range(h.src, off, msg.payload_len)?;
            if h.kind == Kind::LongInline {
                // SAFETY: p..p+len is inside this rank's segment (checked);
                // the source is the received message.
                unsafe {
                    std::ptr::copy_nonoverlapping(msg.payload.as_ptr(), p, msg.payload.len())
                };
            }
            Some((off, p as *const u8))
        }
        _ => None,
    };
    let received = if h.is_request {
        &mut core.stats.requests_received
    } else {
        &mut core.stats.replies_received
    };
    received[kind_index(h.kind)] += 1;
    core.in_handler = true;
    let is_request = side == Side::Request;
    let mut token = Token {
        src: h.src as usize,
        handler: h.handler,
        long_offset: long.map(|(o, _)| o),
        core: if is_request { Some(&mut *core) } else { None },
        replied: false,
        exit_code: None,
    };
    match f {
        HandlerFn::Short(f) => f(&mut token, args),
        HandlerFn::Medium(f) => f(&mut token, args, msg.payload),
        HandlerFn::Long(f) => {
            let (_, p) = long.unwrap_or((0, std::ptr::null()));
            let payload: &[u8] = if msg.payload_len == 0 || p.is_null() {
                &[]
            } else {
                // SAFETY: p..p+payload_len is inside this rank's segment,
                // which lives as long as core; the handler's view ends when
                // it returns.
                unsafe { std::slice::from_raw_parts(p, msg.payload_len) }
            };
            f(&mut token, args, payload)
        }
    }
    let exit_code = token.exit_code;
    core.in_handler = false;
    if let Some(code) = exit_code {
        core.request_exit(code);
    }
    Ok(())
}
