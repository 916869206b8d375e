//! The tagged engine: contexts (an endpoint pair and its queue), the
//! request table each context's completions index, progress, and the
//! synchronous-send acknowledgements.

use super::error::TaggedError;
use super::spill::Spill;
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

mod completion;
mod pending;
mod post;

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
    /// Freed (`Comm::free`): a clone of the handle may not use it (its id
    /// may already name another communicator).
    pub freed: AtomicBool,
}

impl CommInfo {
    /// A communicator's record, not freed.
    pub fn new(cid: u32, rank: u32, members: Box<[u32]>, ctx: usize) -> Self {
        CommInfo {
            cid,
            rank,
            members,
            ctx,
            freed: AtomicBool::new(false),
        }
    }

    /// Refuse a freed communicator.
    #[inline(always)]
    pub fn live(&self) -> Result<(), TaggedError> {
        if self.freed.load(Ordering::Relaxed) {
            return Err(TaggedError::Freed { cid: self.cid });
        }
        Ok(())
    }

    /// World rank of member `r`, or the error naming the communicator's size.
    #[inline]
    pub fn world(&self, r: u32) -> Result<u32, TaggedError> {
        // `let ... else`, not `ok_or`: the error is built only when returned.
        let Some(&w) = self.members.get(r as usize) else {
            return Err(TaggedError::Rank {
                rank: r,
                size: self.members.len() as u32,
            });
        };
        Ok(w)
    }
}

/// One context: where a communicator's sends and receives go, and the queue
/// their completions come back on.
pub(crate) struct Ctx<M: Mode> {
    pub index: usize,
    pub tx: Endpoint,
    pub rx: Endpoint,
    pub cq: CompletionQueue,
    /// The request table, reached through [`Ctx::reqs`] (which keeps
    /// `pending` in step).
    requests: M::Lock<Requests>,
    /// The table's pending requests as of its last unlock: what a round
    /// of the client's progress reads, without the lock, to tell whether
    /// this context can owe completions (`pending`).
    pending: std::sync::atomic::AtomicUsize,
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
    /// `fi_tsend`s posted whose completion has not been read, counted only
    /// under a send window (`Engine::send_window`). It may dip below zero
    /// for a moment: another thread can read a send's completion before
    /// the posting thread counts it.
    pub sends_in_flight: std::sync::atomic::AtomicIsize,
    /// The copies detached sends (small sends where injects are off) are sent from, by
    /// request slot. Declared after the endpoints, so a copy outlives the
    /// endpoint that may still be sending it.
    pub copies: M::Lock<Vec<Option<Box<[u8]>>>>,
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
    /// The second iov that takes a truncated message's excess (a receive
    /// on a provider that cannot truncate, `super::spill`).
    pub spill: Option<&'static Spill>,
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
    /// Messages sent with `fi_tsend` from a copy, finished at return
    /// (`copy_small`, where injects are off).
    pub copied: C,
    /// Receives posted.
    pub recvs: C,
    /// Synchronous-send acknowledgements sent.
    pub acks: C,
    /// Probes (`FI_PEEK`).
    pub probes: C,
    /// Completions read.
    pub completions: C,
    /// Rounds of progress a send waited for room in the profile's send
    /// window (`tagged_send_window`).
    pub send_window_waits: C,
    /// Rounds of the client's progress (not of a tagged call) that read
    /// the tagged queues with no tagged operation pending: one in every
    /// `IDLE_EVERY` (16) of a thread's rounds; the others leave the queues
    /// unread.
    pub idle_reads: C,
}

/// The engine.
pub(crate) struct Engine<M: Mode> {
    pub layout: Layout,
    pub rank: u32,
    pub size: u32,
    /// Largest message a (non-synchronous) send finishes at return: with
    /// `fi_tinject`, or from a copy where injects are off (the send path
    /// picked with `copy_small`, see `Engine::new`).
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
    /// A message was injected since the client's progress last read the
    /// tagged queues (`pending.rs`).
    injected: AtomicBool,
    pub event_cnt: usize,
    pub stats: TaggedStats<M::Counter>,
    /// `(provider, version)` when a truncated receive breaks the
    /// provider's connection (see `open::truncation_defect`).
    pub truncation_defect: Option<(String, String)>,
    /// `(provider, why)` when matched probe is refused (the profile's
    /// `tagged_no_claim`).
    pub no_claim: Option<(String, String)>,
    /// Error entries carry the remote CQ data without `FI_REMOTE_CQ_DATA`
    /// in their flags (the profile's `tagged_err_data_unflagged`): a
    /// truncated receive's source is read from the data all the same.
    pub err_data_unflagged: bool,
    /// Receives carry the spill iov (shm from 1.19: `super::spill`).
    pub spill: Option<&'static Spill>,
    /// The send and receive paths picked for the layout and endpoints.
    pub paths: super::paths::Paths<M>,
    /// `fi_rx_addr`'s context bits with a scalable endpoint (else 0).
    pub rx_ctx_bits: i32,
    /// Most `fi_tsend`s in flight per context (the profile's
    /// `tagged_send_window`); `isize::MAX`: no window, nothing counted.
    pub send_window: isize,
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
        facts: super::paths::PathFacts,
    ) -> Self {
        let paths = super::paths::Paths::pick(facts);
        let rx_ctx_bits = sep.as_ref().map_or(0, |s| s.rx_ctx_bits);
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
            injected: AtomicBool::new(false),
            event_cnt,
            stats: TaggedStats::default(),
            truncation_defect: None,
            no_claim: None,
            err_data_unflagged: false,
            spill: None,
            paths,
            rx_ctx_bits,
            send_window: isize::MAX,
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
        requests: M::Lock::new(Requests::new()),
        pending: std::sync::atomic::AtomicUsize::new(0),
        poll: M::Lock::new(Batch(vec![MaybeUninit::uninit(); event_cnt.max(1)])),
        waiting: M::Lock::new(std::collections::VecDeque::new()),
        has_waiting: AtomicBool::new(false),
        credits: std::sync::atomic::AtomicIsize::new(budget),
        sends_in_flight: std::sync::atomic::AtomicIsize::new(0),
        copies: M::Lock::new(Vec::new()),
    }
}

impl<M: Mode> Engine<M> {
    /// Register the world communicator (id 0, every rank, context 0).
    pub(crate) fn register_world(&self) {
        let info = CommInfo::new(0, self.rank, (0..self.size).collect(), 0);
        self.comms.lock().insert(0, Arc::new(info));
    }
}
