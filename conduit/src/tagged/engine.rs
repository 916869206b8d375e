//! The tagged engine: contexts (an endpoint pair and its queue), the
//! request table each context's completions index, progress, and the
//! synchronous-send acknowledgements.

use super::error::TaggedError;
use crate::client::Error;
use crate::ofi::{
    rx_addr, CompletionQueue, CqRead, Domain, Endpoint, FiAddr, OfiError, TaggedEntry,
};
use crate::sync::{Counter, Lock, Mode};
use ofi_sys as sys;
use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use tagged::comm::CidSet;
use tagged::request::{decode_context, Part};
use tagged::{Kind, Layout, OpError, Requests, Status};

const FI_ETRUNC: i32 = ofi_sys::FI_ETRUNC as i32;
const FI_ECANCELED: i32 = ofi_sys::FI_ECANCELED as i32;
const FI_ENOMSG: i32 = ofi_sys::FI_ENOMSG as i32;

/// A communicator as this rank knows it.
#[derive(Debug)]
pub(crate) struct CommInfo {
    /// Its id (the tag's communicator field).
    pub cid: u32,
    /// This rank's rank in it.
    pub rank: u32,
    /// World ranks of its members, by communicator rank.
    pub members: Box<[u32]>,
    /// The context its traffic uses.
    pub ctx: usize,
}

impl CommInfo {
    /// World rank of member `r`, or the error naming the communicator's size.
    #[inline]
    pub fn world(&self, r: u32) -> Result<u32, TaggedError> {
        self.members
            .get(r as usize)
            .copied()
            .ok_or(TaggedError::Rank {
                rank: r,
                size: self.members.len() as u32,
            })
    }
}

/// One context: where a communicator's sends and receives go, and the queue
/// their completions come back on.
pub(crate) struct Ctx<M: Mode> {
    pub index: usize,
    pub tx: Endpoint,
    pub rx: Endpoint,
    pub cq: CompletionQueue,
    pub reqs: M::Lock<Requests>,
    /// The batch the queue is read into (`GASNET_OFI_PROGRESS_EVENT_CNT`
    /// entries), and the queue's try-lock.
    pub poll: M::Lock<Batch>,
    /// Receives the provider had no room for (`-FI_ENOMEM`), in the order
    /// they were started: posted as earlier ones finish, none before an
    /// earlier one, so matching order is kept.
    pub waiting: M::Lock<std::collections::VecDeque<Waiting>>,
    pub has_waiting: AtomicBool,
    /// Provider receive entries the application's receives may still take
    /// (the rest is kept for the conduit's own receives and probes).
    pub credits: std::sync::atomic::AtomicIsize,
}

/// Receive entries kept for the conduit's own receives, acknowledgement
/// waits and probes on providers whose receive queue is bounded.
pub(crate) const RESERVED_RX: usize = 32;

/// The receive entries a context's application receives may take: all
/// but [`RESERVED_RX`] of `rx_size` where the provider refuses receives
/// past it, else no limit (receives are posted until the provider refuses
/// one, then queued).
pub(crate) fn rx_budget(rx_size: usize, bounded: bool) -> isize {
    if bounded {
        rx_size.saturating_sub(RESERVED_RX).max(1) as isize
    } else {
        isize::MAX / 2
    }
}

/// A receive or probe waiting for room in the provider's receive queue.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Waiting {
    pub buf: usize,
    pub len: usize,
    pub src: FiAddr,
    pub bits: u64,
    pub ignore: u64,
    pub ctx: usize,
    pub flags: u64,
}

/// Room for one batch of completions.
pub(crate) struct Batch(Vec<MaybeUninit<TaggedEntry>>);

// SAFETY: the entries are plain data (their context pointer is a value the
// conduit encoded, never dereferenced), read and written only under the
// context's poll lock.
unsafe impl Send for Batch {}

/// Where new scalable-endpoint contexts come from.
pub(crate) struct SepParts {
    pub sep: Endpoint,
    pub domain: Domain,
    pub rx_ctx_bits: i32,
    pub cq_size: usize,
    /// Receive entries each context's application receives may take.
    pub budget: isize,
}

/// Counters tests and `GASNET_STATSFILE` can read.
#[derive(Debug, Default)]
pub struct TaggedStats<C: Counter> {
    /// Messages sent with `fi_tinject`.
    pub injects: C,
    /// Messages sent with `fi_tsend` (completion awaited).
    pub sends: C,
    /// Receives posted.
    pub recvs: C,
    /// Synchronous-send acknowledgements sent.
    pub acks: C,
    /// Probes (`FI_PEEK`).
    pub probes: C,
    /// Completions read.
    pub completions: C,
}

/// The engine.
pub(crate) struct Engine<M: Mode> {
    pub layout: Layout,
    pub rank: u32,
    pub size: u32,
    /// Largest message sent with `fi_tinject`.
    pub inject: usize,
    /// Whether a communicator's id picks its context.
    pub grouping: bool,
    pub ctxs: Box<[OnceLock<Ctx<M>>]>,
    /// Peers' addresses per regular endpoint (one row with a scalable
    /// endpoint, whose contexts are addressed through `fi_rx_addr`).
    pub addrs: Vec<Vec<FiAddr>>,
    pub sep: Option<SepParts>,
    pub create: std::sync::Mutex<()>,
    pub comms: M::Lock<HashMap<u32, Arc<CommInfo>>>,
    pub cids: M::Lock<CidSet>,
    acks: M::Lock<Vec<(usize, FiAddr, u64)>>,
    has_acks: AtomicBool,
    pub event_cnt: usize,
    pub stats: TaggedStats<M::Counter>,
    /// `(provider, version)` when a truncated receive breaks the
    /// provider's connection (see `open::truncation_defect`).
    pub truncation_defect: Option<(String, String)>,
}

impl<M: Mode> Engine<M> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        layout: Layout,
        rank: u32,
        size: u32,
        inject: usize,
        grouping: bool,
        ctxs: Box<[OnceLock<Ctx<M>>]>,
        addrs: Vec<Vec<FiAddr>>,
        sep: Option<SepParts>,
        event_cnt: usize,
    ) -> Self {
        Engine {
            cids: M::Lock::new(CidSet::new(layout.max_cid())),
            layout,
            rank,
            size,
            inject,
            grouping,
            ctxs,
            addrs,
            sep,
            create: std::sync::Mutex::new(()),
            comms: M::Lock::new(HashMap::new()),
            acks: M::Lock::new(Vec::new()),
            has_acks: AtomicBool::new(false),
            event_cnt,
            stats: TaggedStats::default(),
            truncation_defect: None,
        }
    }

    /// A context that exists.
    #[inline]
    pub fn ctx(&self, i: usize) -> &Ctx<M> {
        self.ctxs[i]
            .get()
            .unwrap_or_else(|| unreachable!("context {i} is created before use"))
    }

    /// The context for communicator id `cid`.
    pub fn ctx_for(&self, cid: u32) -> usize {
        if self.grouping {
            cid as usize % self.ctxs.len()
        } else {
            0
        }
    }

    /// Address of `world` rank's context `ctx`.
    #[inline]
    pub fn addr(&self, ctx: usize, world: u32) -> FiAddr {
        match &self.sep {
            Some(s) => rx_addr(self.addrs[0][world as usize], ctx as i32, s.rx_ctx_bits),
            None => self.addrs[ctx][world as usize],
        }
    }

    /// Create context `i` of the scalable endpoint if it does not exist.
    pub fn ensure_ctx(&self, i: usize) -> Result<(), Error> {
        if self.ctxs[i].get().is_some() {
            return Ok(());
        }
        let _g = self.create.lock().unwrap_or_else(|p| p.into_inner());
        if self.ctxs[i].get().is_some() {
            return Ok(());
        }
        let s = self
            .sep
            .as_ref()
            .unwrap_or_else(|| unreachable!("regular endpoints are all opened at start-up"));
        let c = open_sep_ctx::<M>(s, i, self.event_cnt)?;
        let _ = self.ctxs[i].set(c);
        tracing::debug!(ctx = i, "scalable-endpoint context created");
        Ok(())
    }

    /// Progress on every context: read each queue (under its try-lock) in
    /// batches until it is empty, then retry acknowledgements that could
    /// not be sent. True if anything was read.
    pub fn progress(&self) -> Result<bool, Error> {
        let mut seen = false;
        for c in self.ctxs.iter().filter_map(OnceLock::get) {
            seen |= self.progress_ctx(c)?;
        }
        if self.has_acks.load(Ordering::Relaxed) {
            self.retry_acks()?;
        }
        Ok(seen)
    }

    /// Progress on one context.
    #[inline]
    pub fn progress_ctx(&self, c: &Ctx<M>) -> Result<bool, Error> {
        let Some(mut buf) = c.poll.try_lock() else {
            return Ok(false);
        };
        let mut seen = false;
        loop {
            // SAFETY: the queue is read under its lock (the domain's
            // threading is FI_THREAD_SAFE for the multi-threaded client,
            // and the single-threaded one never calls concurrently).
            let n = match unsafe { c.cq.read_tagged(&mut buf.0[..]) } {
                Ok(CqRead::Entries(n)) => n,
                Ok(CqRead::Empty) => break,
                Ok(CqRead::Error) => {
                    seen = true;
                    self.on_error(c)?;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            seen = true;
            self.stats.completions.add(n as u64);
            // SAFETY: read_tagged initialised the first n entries.
            let got =
                unsafe { std::slice::from_raw_parts(buf.0.as_ptr().cast::<TaggedEntry>(), n) };
            let mut acks: Vec<(u64, u32)> = Vec::new();
            let mut released = 0isize;
            {
                let mut reqs = c.reqs.lock();
                for e in got {
                    self.on_entry(&mut reqs, e, &mut acks, &mut released);
                }
            }
            if released > 0 {
                c.credits.fetch_add(released, Ordering::AcqRel);
            }
            for (bits, src) in acks {
                self.send_ack(c.index, bits, src)?;
            }
            if n < buf.0.len() {
                break;
            }
        }
        drop(buf);
        if c.has_waiting.load(Ordering::Relaxed) {
            self.post_waiting(c)?;
        }
        Ok(seen)
    }

    #[inline]
    fn on_entry(
        &self,
        reqs: &mut Requests,
        e: &TaggedEntry,
        acks: &mut Vec<(u64, u32)>,
        released: &mut isize,
    ) {
        let Some((idx, part)) = decode_context(e.context() as u64) else {
            tracing::warn!(
                context = e.context(),
                "tagged completion with an unknown context"
            );
            return;
        };
        let kind = reqs.kind_at(idx);
        if let Some(Kind::Recv { counted: true, .. }) = kind {
            *released += 1;
        }
        let status = match (kind, part) {
            (Some(Kind::Recv { .. }), Part::Main) | (Some(Kind::Probe), Part::Main) => {
                let d = self.layout.decode(e.tag(), e.data());
                if d.sync && matches!(reqs.kind_at(idx), Some(Kind::Recv { .. })) {
                    acks.push((e.tag(), d.source));
                }
                Status {
                    source: d.source,
                    tag: d.tag,
                    len: e.len(),
                    size: e.len(),
                    ..Status::default()
                }
            }
            (Some(_), _) => Status::default(),
            (None, _) => {
                tracing::warn!(idx, "tagged completion for a request that is not pending");
                return;
            }
        };
        reqs.complete(idx, part, status);
    }

    fn on_error(&self, c: &Ctx<M>) -> Result<(), Error> {
        // SAFETY: as in progress_ctx (the poll lock is held by the caller).
        let Some(e) = (unsafe { c.cq.read_error() })? else {
            return Ok(());
        };
        let Some((idx, part)) = decode_context(e.context as u64) else {
            tracing::warn!(
                "tagged error completion with an unknown context: {}",
                e.text
            );
            return Ok(());
        };
        let mut ack = None;
        {
            let mut reqs = c.reqs.lock();
            let kind = reqs.kind_at(idx);
            if let Some(Kind::Recv { counted: true, .. }) = kind {
                self.release_credit(c);
            }
            let d = self.layout.decode(e.tag, e.data);
            match (kind, e.err) {
                (Some(Kind::Recv { cap, from, .. }), FI_ETRUNC) if part == Part::Main => {
                    let mut st = truncated_status(&d, &e, cap);
                    if self.layout.cq_data() {
                        // A directed receive's source is the one asked for
                        // (shm 2.x reports no CQ data in error entries).
                        if let Some(f) = from {
                            st.source = f;
                        } else if e.flags & sys::FI_REMOTE_CQ_DATA as u64 == 0 {
                            st.source = Status::UNKNOWN_SOURCE;
                        }
                    }
                    if d.sync && st.source != Status::UNKNOWN_SOURCE {
                        ack = Some((e.tag, st.source));
                    }
                    reqs.complete(idx, part, st);
                }
                (Some(Kind::Recv { .. }), FI_ECANCELED) => {
                    reqs.complete(
                        idx,
                        Part::Main,
                        Status {
                            cancelled: true,
                            ..Status::default()
                        },
                    );
                }
                (Some(_), _) => {
                    if e.err != FI_ENOMSG {
                        tracing::debug!(idx, err = e.err, "tagged operation failed: {}", e.text);
                    }
                    reqs.fail(
                        idx,
                        Err(OpError {
                            err: e.err,
                            prov_errno: e.prov_errno,
                            text: e.text.clone(),
                        }),
                    );
                }
                (None, _) => tracing::warn!(idx, "tagged error for no pending request: {}", e.text),
            }
        }
        if let Some((bits, src)) = ack {
            self.send_ack(c.index, bits, src)?;
        }
        Ok(())
    }

    /// Acknowledge a synchronous message with tag `bits` from communicator
    /// rank `src` (queued for the next progress if the provider is busy).
    fn send_ack(&self, ctx: usize, bits: u64, src: u32) -> Result<(), Error> {
        let cid = self.layout.cid_of(bits);
        let Some(info) = self.comms.lock().get(&cid).cloned() else {
            tracing::warn!(
                cid,
                "synchronous message on a communicator this rank does not know"
            );
            return Ok(());
        };
        let world = info.world(src)?;
        let ack = self.layout.ack_bits(cid, info.rank, bits);
        let addr = self.addr(ctx, world);
        self.stats.acks.add(1);
        // SAFETY: a zero-byte inject; threading as in progress_ctx.
        match unsafe { self.ctx(ctx).tx.tinject(&[], None, addr, ack) } {
            Ok(()) => Ok(()),
            Err(e) if e.is_again() => {
                self.acks.lock().push((ctx, addr, ack));
                self.has_acks.store(true, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    fn retry_acks(&self) -> Result<(), Error> {
        let pending = std::mem::take(&mut *self.acks.lock());
        self.has_acks.store(false, Ordering::Relaxed);
        let mut left = Vec::new();
        for (ctx, addr, bits) in pending {
            // SAFETY: as in send_ack.
            match unsafe { self.ctx(ctx).tx.tinject(&[], None, addr, bits) } {
                Ok(()) => {}
                Err(e) if e.is_again() => left.push((ctx, addr, bits)),
                Err(e) => return Err(e.into()),
            }
        }
        if !left.is_empty() {
            self.acks.lock().extend(left);
            self.has_acks.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Post an application's receive, or queue it behind others waiting
    /// for one of the provider's receive entries. The request's slot is
    /// started by the caller.
    ///
    /// # Safety
    /// As for [`Endpoint::trecvmsg`]: `w.buf..w.buf+w.len` stays valid until
    /// the request finishes.
    pub unsafe fn post_counted(&self, c: &Ctx<M>, w: Waiting) -> Result<(), Error> {
        {
            let mut q = c.waiting.lock();
            if !q.is_empty() || c.credits.fetch_sub(1, Ordering::AcqRel) <= 0 {
                if q.is_empty() {
                    c.credits.fetch_add(1, Ordering::AcqRel);
                }
                q.push_back(w);
                c.has_waiting.store(true, Ordering::Relaxed);
                return Ok(());
            }
        }
        // SAFETY: per this function's contract.
        match unsafe { post_waiting_one(c, &w) } {
            Ok(()) => Ok(()),
            Err(e) if e.is_again() || e.code == -(ofi_sys::FI_ENOMEM as i64) => {
                // The provider's queue is full: wait for a receive to
                // finish, behind any others waiting.
                c.credits.fetch_add(1, Ordering::AcqRel);
                c.waiting.lock().push_back(w);
                c.has_waiting.store(true, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                c.credits.fetch_add(1, Ordering::AcqRel);
                Err(e.into())
            }
        }
    }

    /// Post one of the conduit's own receives, a probe or an
    /// acknowledgement wait (from the reserve: retried while the provider
    /// has no room).
    ///
    /// # Safety
    /// As for [`Engine::post_counted`].
    pub unsafe fn post_reserved(&self, c: &Ctx<M>, w: Waiting) -> Result<(), Error> {
        loop {
            // SAFETY: per this function's contract.
            match self.post(c, || unsafe { post_waiting_one(c, &w) }) {
                Err(Error::Ofi(e)) if e.code == -(ofi_sys::FI_ENOMEM as i64) => {
                    self.progress_ctx(c)?;
                }
                r => return r,
            }
        }
    }

    /// A counted receive finished: its entry may go to a waiting one.
    pub fn release_credit(&self, c: &Ctx<M>) {
        c.credits.fetch_add(1, Ordering::AcqRel);
    }

    /// Post waiting receives, oldest first, while credits and the
    /// provider allow.
    fn post_waiting(&self, c: &Ctx<M>) -> Result<(), Error> {
        let mut q = c.waiting.lock();
        while let Some(w) = q.front().copied() {
            if c.credits.fetch_sub(1, Ordering::AcqRel) <= 0 {
                c.credits.fetch_add(1, Ordering::AcqRel);
                break;
            }
            // SAFETY: the receive's buffer stays valid until its request
            // finishes (post_counted's contract), which it has not.
            match unsafe { post_waiting_one(c, &w) } {
                Ok(()) => {
                    q.pop_front();
                }
                Err(e) if e.is_again() || e.code == -(ofi_sys::FI_ENOMEM as i64) => {
                    c.credits.fetch_add(1, Ordering::AcqRel);
                    break;
                }
                Err(e) => {
                    c.credits.fetch_add(1, Ordering::AcqRel);
                    return Err(e.into());
                }
            }
        }
        c.has_waiting.store(!q.is_empty(), Ordering::Relaxed);
        Ok(())
    }

    /// Take a receive that is still waiting to be posted out of the queue
    /// (a cancel): true if it was there.
    pub fn unqueue(&self, c: &Ctx<M>, ctx: usize) -> bool {
        let mut q = c.waiting.lock();
        let before = q.len();
        q.retain(|w| w.ctx != ctx);
        c.has_waiting.store(!q.is_empty(), Ordering::Relaxed);
        q.len() != before
    }

    /// Post with `post` until it is not refused with `-FI_EAGAIN`, making
    /// progress on the context in between.
    #[inline]
    pub fn post(
        &self,
        c: &Ctx<M>,
        mut post: impl FnMut() -> Result<(), OfiError>,
    ) -> Result<(), Error> {
        loop {
            match post() {
                Ok(()) => return Ok(()),
                Err(e) if e.is_again() => {
                    self.progress_ctx(c)?;
                    if self.has_acks.load(Ordering::Relaxed) {
                        self.retry_acks()?;
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// The status of a truncated receive of `cap` bytes. Providers fill the
/// error entry differently: `olen` is the overflow (libfabric's
/// definition) on most, while sockets and tcp;ofi_rxm's eager path put the
/// message's length in `len`, and some report 0 for both; the byte count
/// is the buffer's (libfabric writes the buffer in full) and the message's
/// size the largest the entry supports.
fn truncated_status(d: &tagged::Decoded, e: &crate::ofi::CqErrEntry, cap: usize) -> Status {
    Status {
        source: d.source,
        tag: d.tag,
        len: cap,
        size: e.len.max(cap + e.olen).max(cap),
        truncated: true,
        cancelled: false,
    }
}

/// `fi_trecvmsg` of a waiting receive.
///
/// # Safety
/// As for [`Endpoint::trecvmsg`].
unsafe fn post_waiting_one<M: Mode>(c: &Ctx<M>, w: &Waiting) -> Result<(), OfiError> {
    // SAFETY: per the caller's contract.
    unsafe {
        c.rx.trecvmsg(
            w.buf as *mut u8,
            w.len,
            w.src,
            w.bits,
            w.ignore,
            w.ctx,
            w.flags,
        )
    }
}

/// Open context `i` of a scalable endpoint: a TX and an RX context bound to
/// one new queue.
pub(super) fn open_sep_ctx<M: Mode>(
    s: &SepParts,
    i: usize,
    event_cnt: usize,
) -> Result<Ctx<M>, Error> {
    let cq = CompletionQueue::open_tagged(&s.domain, s.cq_size)?;
    let tx = s
        .sep
        .tx_context(i as i32, &s.domain)?
        .bind_cq(&cq, ofi_sys::FI_TRANSMIT as u64)?
        .enable()?;
    let rx = s
        .sep
        .rx_context(i as i32, &s.domain)?
        .bind_cq(&cq, ofi_sys::FI_RECV as u64)?
        .enable()?;
    Ok(new_ctx(i, tx, rx, cq, event_cnt, s.budget))
}

pub(super) fn new_ctx<M: Mode>(
    index: usize,
    tx: Endpoint,
    rx: Endpoint,
    cq: CompletionQueue,
    event_cnt: usize,
    budget: isize,
) -> Ctx<M> {
    Ctx {
        index,
        tx,
        rx,
        cq,
        reqs: M::Lock::new(Requests::new()),
        poll: M::Lock::new(Batch(vec![MaybeUninit::uninit(); event_cnt.max(1)])),
        waiting: M::Lock::new(std::collections::VecDeque::new()),
        has_waiting: AtomicBool::new(false),
        credits: std::sync::atomic::AtomicIsize::new(budget),
    }
}

impl<M: Mode> Engine<M> {
    /// Register the world communicator (id 0, every rank, context 0).
    pub(crate) fn register_world(&self) {
        let info = CommInfo {
            cid: 0,
            rank: self.rank,
            members: (0..self.size).collect(),
            ctx: 0,
        };
        self.comms.lock().insert(0, Arc::new(info));
    }
}
