//! The engine under the client: state per endpoint set, start-up, and the
//! glue between the sans-IO protocol logic (`am`, `rma`) and a
//! [`Transport`]. Generic over the threading [`Mode`], the transport and
//! the client's state type; the public types in `crate::client` are thin
//! views on it.
//!
//! Locks (cells in single-threaded mode) are held only for short
//! bookkeeping, never across a handler call or a call back into the
//! engine; completion queues are polled under a try-lock, so a thread that
//! finds one busy moves on.

mod aggregate;
mod api;
mod atomic;
mod barrier;
mod barrier_thread;
mod coll;
mod coll_board;
mod coll_cache;
mod coll_exchange;
mod coll_now;
mod deferred;
mod dispatch;
pub(crate) mod exit;
mod get_bounce;
mod get_window;
mod handler_scope;
mod landing;
mod lanes;
mod progress;
mod put_bounce;
mod receive;
mod replies;
mod rma;
mod segment;
mod send;
mod shared;
mod undelivered;
mod vis;

pub(crate) use exit::end_process;
pub(crate) use handler_scope::{client_handler, in_handler, not_in_handler, HandlerScope};
pub(crate) use progress::Progress;
pub(crate) use rma::{abort_in_flight, Local};
pub(crate) use segment::SegmentState;
pub(crate) use vis::Dir;

use super::error::Error;
use super::stats::{AmStats, SetStats};
use super::token::HandlerFn;
use super::wait::{Idle, WaitMode};
use crate::boot::Bootstrap;
use crate::config::Config;
use crate::mem::{page_size, Mapping};
use crate::profile::Capabilities;
use crate::sync::{Lock, Mode};
use crate::transport::{Access, Network, OpenPlan, Side, Transport};
use ::rma::ops::Ops;
use ::rma::put_path::PutLimits;
use am::barrier::Barrier;
use am::exit::ExitState;
use am::handlers::HandlerTable;
use am::pool::Pool;
use am::recv::{RecvAccounting, RecvMode};
use am::send::SendLimits;
use am::wire::{self, Kind};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// Internal handler: barrier round (Short request, 4 args).
pub(crate) const H_BARRIER: u8 = 1;
/// Internal handler: exit (Short request, 2 args: code, distance).
pub(crate) const H_EXIT: u8 = 2;

/// Most AMs to self queued before a send waits for a poll to drain them.
pub(crate) const LOOPBACK_MAX: usize = 1024;

/// One endpoint set's state: receive buffers and their accounting, send
/// buffers, RMA operations, loopback queues, poll try-locks, counters.
pub(crate) struct EpSet<M: Mode> {
    pub index: usize,
    /// Receive buffers: the request side's first, then the reply side's.
    pub recv_mem: Arc<Mapping>,
    pub recv_size: usize,
    pub rx: [M::Lock<RecvAccounting>; 2],
    pub rx_first: [usize; 2],
    /// Send buffers of the request and reply pools (`max` each, touched
    /// only when first used).
    pub send_mem: [Arc<Mapping>; 2],
    pub send_bytes: usize,
    pub pools: [M::Lock<Pool>; 2],
    pub ops: M::Lock<Ops>,
    /// Small implicit puts gathered per target.
    pub agg: M::Lock<aggregate::Aggregation>,
    /// Messages waiting for their handler, per side: AMs to self, and
    /// what a panicking handler left of its batch.
    pub queue: [M::Lock<VecDeque<receive::Queued>>; 2],
    /// Poll try-locks: TX, request receives, reply receives.
    pub cq: [M::Lock<()>; 3],
    pub stats: SetStats<M::Counter>,
    /// Owned by an endpoint handle.
    pub owned: AtomicBool,
    /// RMA posts of this set (`Core::post_chunk`) left before the next
    /// poll of the queues their completions arrive on; starts at, and is
    /// reset to, `GASNET_OFI_RMA_POLL_FREQ` (the client's `cfg`).
    pub rma_posts_left: AtomicUsize,
}

impl<M: Mode> EpSet<M> {
    /// Start of receive buffer `buf` of `side`.
    #[inline]
    pub fn recv_ptr(&self, side: Side, buf: u32) -> Option<*mut u8> {
        let slot = self.rx_first[side.index()] + buf as usize;
        self.recv_mem.range(slot * self.recv_size, self.recv_size)
    }

    /// Start of send buffer `buf` of `side`'s pool.
    #[inline]
    pub fn send_ptr(&self, side: Side, buf: u32) -> Option<*mut u8> {
        self.send_mem[side.index()].range(buf as usize * self.send_bytes, self.send_bytes)
    }
}

/// Bounce buffers (the put pool, and the get bounce buffers): the pool's
/// bookkeeping, the registered mapping (one region, or one per set on
/// endpoint-bound providers).
pub(crate) struct Bounce<R> {
    /// Which buffers are free; buffer `i` at `pool.offset(i)` of `mem`.
    pub pool: bbuf::Pool,
    /// The mapping's registration.
    pub regions: Vec<R>,
    /// The buffers' memory (page-aligned).
    pub mem: Arc<Mapping>,
}

impl<R> Bounce<R> {
    /// Map `pool`'s region (`what` names it in an error) and register it
    /// for local use as an RMA source or destination.
    pub(crate) fn new<T: Transport<Region = R>>(
        tp: &T,
        pool: bbuf::Pool,
        what: &'static str,
    ) -> Result<Bounce<R>, Error> {
        let mem = Arc::new(
            Mapping::anonymous(pool.region_len())
                .map_err(|e| Error::map(what, pool.region_len(), e))?,
        );
        let regions = tp.register(&mem, Access::LocalRead)?;
        Ok(Bounce { pool, regions, mem })
    }
}

/// Exit bookkeeping.
pub(crate) struct ExitCoord<M: Mode> {
    /// Set once an exit began (checked on every call).
    pub started: AtomicBool,
    pub state: M::Lock<ExitState>,
    pub sends: M::Lock<Vec<(usize, usize)>>,
    /// The thread that runs the exit took this.
    pub leader: AtomicBool,
    /// A protocol error (a peer's malformed AM) was met before this rank
    /// ran the exit: it exits with a failure code even if the job's is 0.
    pub failed: AtomicBool,
}

/// What start-up decided besides the network.
pub(crate) struct Params<S> {
    pub boot: Arc<dyn Bootstrap>,
    pub cfg: Config,
    pub caps: Option<Capabilities>,
    pub sets: usize,
    pub state: S,
    pub wait_mode: WaitMode,
    /// Largest AM injected (capped at the provider's inject size).
    pub am_inject_limit: usize,
    /// Largest RMA write injected.
    pub rma_inject_limit: usize,
    /// How the process ends after a collective exit.
    pub end: fn(i32) -> !,
}

/// The engine.
pub(crate) struct Core<M: Mode, T: Transport, S> {
    pub tp: T,
    pub sets: Box<[EpSet<M>]>,
    pub handlers: HandlerTable<HandlerFn<S>>,
    pub state: S,
    pub rank: usize,
    pub size: usize,
    pub limits: SendLimits,
    pub put_limits: PutLimits,
    pub batch: usize,
    pub max_rma: usize,
    pub virt_addr: bool,
    pub segment: OnceLock<SegmentState<T::Region>>,
    /// An `attach_segment` is running (a second, concurrent one is refused:
    /// the two would publish mappings the other then drops).
    pub attaching: std::sync::atomic::AtomicBool,
    /// The AM Long landing area (set with the segment, where used).
    pub landing: OnceLock<landing::Landing<M, T::Region>>,
    pub bounce: Option<Bounce<T::Region>>,
    /// The get bounce buffers, where `GASNET_OFI_GET_BOUNCE` turned them on.
    pub get_bounce: Option<Bounce<T::Region>>,
    /// The window on gets in flight per peer (`GASNET_OFI_GET_WINDOW`).
    pub get_window: Option<::rma::ops::GetWindow>,
    /// Huge pages for a segment no supernode peer maps (`segment.rs`).
    pub segment_hugepages: bool,
    pub barrier: M::Lock<Barrier>,
    /// The barrier's messages not sent yet (`barrier::send_unsent`).
    pub barrier_unsent: M::Lock<VecDeque<am::barrier::Send>>,
    /// Errors met inside operations, for the next poll.
    pub deferred: deferred::Deferred<M>,
    pub exit: ExitCoord<M>,
    pub boot: Arc<dyn Bootstrap>,
    pub cfg: Config,
    pub caps: Option<Capabilities>,
    pub idle: Idle<M::Counter>,
    pub names_at_startup: usize,
    /// The smallest segment limit over the job, in bytes.
    pub global_segment_limit: u64,
    pub end: fn(i32) -> !,
    /// Tagged messaging, when the client was started with it.
    pub tagged: OnceLock<crate::tagged::engine::Engine<M>>,
    /// The shared-memory path to the ranks of this supernode.
    pub pshm: Option<crate::pshm::Shared<M>>,
    /// Every rank's neighbourhood (supernode) index.
    pub nbrhds: crate::pshm::Neighbourhoods,
    /// The provider's address vector holds this rank's own endpoints only
    /// ([`OpenPlan::own_addresses_only`]): it reaches no other rank.
    pub own_addresses_only: bool,
    /// Atomics by AM waiting for replies; whether a native domain exists.
    pub atomics: atomic::AtomicState<M>,
    /// Teams and their collectives.
    pub coll: coll::CollState<M, T::Region>,
}

fn new_set<M: Mode, T: Transport>(
    tp: &mut T,
    index: usize,
    cfg: &Config,
    recv_size: usize,
    send_bytes: usize,
    batches: ::rma::aggregate::Aggregator,
) -> Result<EpSet<M>, Error> {
    let nbuf = cfg.am.num_receive_buffs.max(2);
    let nreq = nbuf.div_ceil(2);
    let nrep = nbuf - nreq;
    let mode = if cfg.am.receive_buff_size.uses_multi_recv() {
        RecvMode::Multi
    } else {
        RecvMode::PerMessage
    };
    let recv_mem = Arc::new(Mapping::anonymous(nbuf * recv_size).map_err(|e| {
        Error::map(
            "AM receive buffers (GASNET_OFI_NUM_RECEIVE_BUFFS x GASNET_OFI_RECEIVE_BUFF_SIZE)",
            nbuf * recv_size,
            e,
        )
    })?);
    let max = [cfg.am.max_request_buffs, cfg.am.max_reply_buffs];
    let mut send_mem = Vec::new();
    for m in max {
        let bytes = m.max(1) * send_bytes;
        send_mem.push(Arc::new(
            Mapping::anonymous(bytes).map_err(|e| Error::map("AM send buffers", bytes, e))?,
        ));
    }
    tp.keep_alive(index, recv_mem.clone());
    for m in &send_mem {
        tp.keep_alive(index, m.clone());
    }
    let [req_mem, rep_mem]: [Arc<Mapping>; 2] = send_mem
        .try_into()
        .unwrap_or_else(|_| unreachable!("two pools"));
    Ok(EpSet {
        index,
        recv_mem,
        recv_size,
        rx: [
            M::Lock::new(RecvAccounting::new(nreq, recv_size, mode)),
            M::Lock::new(RecvAccounting::new(nrep, recv_size, mode)),
        ],
        rx_first: [0, nreq],
        send_mem: [req_mem, rep_mem],
        send_bytes,
        pools: [
            M::Lock::new(Pool::new(cfg.am.num_initial_request_buffs, max[0])),
            M::Lock::new(Pool::new(cfg.am.num_initial_reply_buffs, max[1])),
        ],
        ops: M::Lock::new(Ops::new()),
        agg: M::Lock::new(aggregate::Aggregation::new(batches)),
        queue: [M::Lock::new(VecDeque::new()), M::Lock::new(VecDeque::new())],
        cq: [M::Lock::new(()), M::Lock::new(()), M::Lock::new(())],
        stats: SetStats::default(),
        owned: AtomicBool::new(false),
        rma_posts_left: AtomicUsize::new(cfg.rma.rma_poll_freq),
    })
}

/// Whether the provider carries nothing between this rank and any other:
/// every rank is in this rank's supernode (AMs through the rings, RMA and
/// `auto` atomics by copies and CPU atomics through the mappings), and
/// neither `GASNET_OFI_ATOMICS=native` nor `GASNET_OFI_COLL_RMA=on` asks
/// for the provider between them. Tagged messaging has endpoints and an
/// address vector of its own.
fn provider_idle_within<M: Mode>(pshm: Option<&crate::pshm::Shared<M>>, cfg: &Config) -> bool {
    use crate::config::extended::CollRma;
    use crate::config::AtomicsMode;
    pshm.is_some_and(|sh| sh.all_local)
        && cfg.extended.atomics != AtomicsMode::Native
        && cfg.extended.coll_rma != CollRma::On
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Whether the provider can carry transfers to `rank` (its address
    /// vector holds it).
    pub(super) fn provider_reaches(&self, rank: usize) -> bool {
        !self.own_addresses_only || rank == self.rank
    }

    /// Start-up (collective over the job): open the network, exchange
    /// endpoint names, set up buffers, post receives, end with a barrier.
    pub fn init<N: Network<Transport = T>>(net: N, p: Params<S>) -> Result<Self, Error> {
        let (rank, size) = (p.boot.rank(), p.boot.size());
        let cfg = p.cfg;
        let max_medium = cfg.am.max_medium;
        let largest_am = wire::message_len(Kind::LongInline, am::MAX_ARGS, max_medium);
        cfg.check_receive_buff(|m| wire::message_len(Kind::LongInline, am::MAX_ARGS, m))?;
        let recv_size = wire::align_up(cfg.am.receive_buff_size.buffer_bytes(largest_am));
        let (long_thresh, _) = cfg.am.resolve_long_am_rma_thresh(largest_am);
        let sets = p.sets;
        // The supernode first: when it holds every rank, the provider's
        // address vector needs none of the others' endpoints.
        let (pshm, nbrhds) = crate::pshm::Shared::setup(&*p.boot, &cfg, sets, largest_am)?;
        if cfg.pshm.enabled() {
            // Every member has mapped the others' memory before any opens
            // the network: a rank that then fails to open it cannot make
            // another's mapping fail (the same value on every rank, or
            // setup refused it everywhere).
            p.boot.barrier()?;
        }
        let plan = OpenPlan {
            rank,
            size,
            sets,
            multi_recv: cfg.am.receive_buff_size.uses_multi_recv(),
            min_multi_recv: largest_am,
            own_addresses_only: provider_idle_within(pshm.as_ref(), &cfg),
        };
        if plan.own_addresses_only {
            tracing::debug!(
                "every rank shares memory with rank {rank}: the provider's address vector holds its own {} endpoints only",
                2 * sets
            );
        }
        let (mut tp, mine) = net.open(&plan)?;
        // Each rank's segment limit travels with its endpoint names (for
        // the job's smallest, GASNet's gasnet_getMaxGlobalSegmentSize).
        let limit = segment::limit_bytes(&cfg, &*p.boot);
        let mut record = limit.to_le_bytes().to_vec();
        record.extend_from_slice(&mine);
        let mut all = p.boot.allgather(&record)?;
        let mut global_segment_limit = limit;
        for (r, rec) in all.iter_mut().enumerate() {
            let Some((head, _)) = rec.split_first_chunk::<8>() else {
                return Err(bootstrap::BootstrapError::Protocol(format!(
                    "rank {r}'s start-up record has {} bytes, fewer than its 8-byte segment limit",
                    rec.len()
                ))
                .into());
            };
            global_segment_limit = global_segment_limit.min(u64::from_le_bytes(*head));
            rec.drain(..8);
        }
        let names_at_startup = all.iter().map(|n| n.len()).sum();
        tp.connect(&all)?;
        drop(all);
        let facts = tp.facts().clone();
        let offloaded = crate::profile::lookup(&facts.provider).rma_offloaded == Some(true);
        let aggregate = cfg.rma.resolve_put_aggregate(offloaded);
        let batches =
            ::rma::aggregate::Aggregator::new(size, aggregate, max_medium).map_err(|e| {
                crate::config::ConfigError::Conflict(gex_env::EnvError::new(
                    crate::config::rma::PUT_AGGREGATE_LIMIT,
                    &aggregate.to_string(),
                    format!("a size that fits GASNET_OFI_MAX_MEDIUM ({e})"),
                ))
            })?;
        let mut set_vec = Vec::with_capacity(sets);
        for i in 0..sets {
            let b = batches.clone();
            set_vec.push(new_set::<M, T>(&mut tp, i, &cfg, recv_size, largest_am, b)?);
        }
        let bounce = if cfg.rma.num_bbufs > 0 {
            let pool = bbuf::Pool::new(cfg.rma.num_bbufs, cfg.rma.bbuf_size, page_size())?;
            Some(Bounce::new(
                &tp,
                pool,
                "bounce buffers (GASNET_OFI_NUM_BBUFS x GASNET_OFI_BBUF_SIZE)",
            )?)
        } else {
            None
        };
        let get_bounce = get_bounce::new_get_bounce(&tp, &cfg, &facts)?;
        let get_window = ::rma::ops::GetWindow::new(
            cfg.rma
                .resolve_get_window(crate::profile::lookup(&facts.provider).get_window),
        );
        let segment_hugepages = segment::segment_hugepages(&cfg, &facts.provider);
        let core = Core {
            limits: SendLimits {
                rank,
                size,
                inject_limit: p.am_inject_limit,
                long_inline_limit: long_thresh,
                max_medium,
            },
            put_limits: PutLimits {
                inject: p.rma_inject_limit,
                bbuf_threshold: cfg.rma.bbuf_threshold,
                bbuf_size: cfg.rma.bbuf_size,
                aggregate,
            },
            batch: cfg
                .cq
                .num_completions
                .clamp(1, crate::config::cq::NUM_COMPLETIONS_MAX),
            max_rma: facts.max_msg_size.max(1),
            virt_addr: facts.mr_virt_addr,
            tp,
            sets: set_vec.into_boxed_slice(),
            handlers: HandlerTable::new(),
            state: p.state,
            rank,
            size,
            segment: OnceLock::new(),
            attaching: std::sync::atomic::AtomicBool::new(false),
            landing: OnceLock::new(),
            bounce,
            get_bounce,
            get_window,
            segment_hugepages,
            barrier: M::Lock::new(Barrier::new(rank, size)),
            barrier_unsent: M::Lock::new(VecDeque::new()),
            deferred: deferred::Deferred::new(),
            exit: ExitCoord {
                started: AtomicBool::new(false),
                state: M::Lock::new(ExitState::new(rank, size)),
                sends: M::Lock::new(Vec::new()),
                leader: AtomicBool::new(false),
                failed: AtomicBool::new(false),
            },
            boot: p.boot,
            cfg,
            caps: p.caps,
            idle: Idle::new(p.wait_mode),
            names_at_startup,
            global_segment_limit,
            end: p.end,
            tagged: OnceLock::new(),
            pshm,
            nbrhds,
            own_addresses_only: plan.own_addresses_only,
            atomics: atomic::AtomicState::new(),
            coll: coll::CollState::new(),
        };
        for s in core.sets.iter() {
            for side in [Side::Request, Side::Reply] {
                core.repost(s, side, false).map_err(|e| *e)?;
            }
        }
        core.boot.barrier()?;
        Ok(core)
    }

    /// Whether an exit began.
    #[inline]
    pub fn exiting(&self) -> bool {
        self.exit.started.load(Ordering::Acquire)
    }

    /// Counters summed over the sets.
    pub fn stats(&self) -> AmStats {
        let mut s = AmStats::default();
        for set in self.sets.iter() {
            set.stats.add_to(&mut s);
            for side in 0..2 {
                let rx = set.rx[side].lock();
                let c = rx.counts();
                // Each buffer's first post is not a repost.
                s.reposts += c.posts.saturating_sub(rx.len() as u64);
                s.rescue_posts += c.rescues;
                s.early_releases += c.early_releases;
            }
            s.request_buffers += set.pools[0].lock().allocated() as u64;
            s.reply_buffers += set.pools[1].lock().allocated() as u64;
        }
        s.wait_yields = crate::sync::Counter::get(&self.idle.yields);
        s
    }
}
