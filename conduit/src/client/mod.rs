//! The client: what a runtime initialises in every rank to send Active
//! Messages, make progress, synchronise and exit.
//!
//! ```no_run
//! use conduit::client::{Client, Handler};
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use std::sync::Arc;
//!
//! let mut c = Client::init().expect("init");
//! let got = Arc::new(AtomicU64::new(0));
//! let g = got.clone();
//! c.register(200, Handler::request_short(1, move |_tok, args| {
//!     g.fetch_add(args[0] as u64, Ordering::Relaxed);
//! })).unwrap();
//! c.barrier().unwrap();
//! let next = (c.rank() + 1) % c.size();
//! c.request_short(next, 200, &[1]).unwrap();
//! c.block_until(|| got.load(Ordering::Relaxed) == 1).unwrap();
//! c.barrier().unwrap();
//! c.exit(0);
//! ```
//!
//! Single-threaded mode: every call takes `&mut self` and the domain runs
//! with FI_THREAD_DOMAIN, with no locks on the hot path. Handlers run inside
//! `poll` (and inside any call that waits); they get a [`Token`], never the
//! client, so they cannot poll, block or send requests; a request handler
//! may send one reply through its token.
//!
//! Exit: [`Client::exit`] ends every rank of the job with the given code
//! (collectively, by dissemination, within `GASNET_EXITTIMEOUT`). When
//! another rank exits, the next call into the client on this rank runs the
//! same exit and ends this process with that code: these are the two places
//! where the conduit ends the process, as GASNet's `gasnet_exit` does.
//! Dropping the client (returning from `main`) exits collectively with code
//! 0 and returns.

mod core;
mod error;
mod memory;
mod recv;
mod rma;
mod segment;
mod stats;
mod token;
mod wait;

pub use ::rma::put_path::{PutCounts, PutLimits};
pub use error::AmError;
pub use memory::MemoryUse;
pub use rma::{Event, NbiSync, RmaScope};
pub use segment::SegmentInfo;
pub use stats::AmStats;
pub use token::{Handler, LongFn, MediumFn, ShortFn, Token};
pub use wait::WaitMode;

use self::core::{poll_rx, Core, H_BARRIER, H_EXIT};
use self::recv::{RecvBuffers, Side};
use self::segment::Segment;
use self::token::HandlerFn;
use crate::config::Config;
use crate::ofi::{AddressVector, CompletionQueue, Domain, Endpoint, InfoList, MemoryRegion};
use crate::profile::Capabilities;
use crate::startup::{prepare, JobShape};
use am::barrier::{Barrier, Outcome};
use am::exit::ExitState;
use am::handlers::HandlerTable;
use am::pool::Pool;
use am::wire::{self, Kind};
use bootstrap::{Bootstrap, HostMap};
use gex_env::{EnvReader, ProcessEnv};
use ofi_sys as sys;
use std::mem::ManuallyDrop;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The requested key of the segment registration (requested-key providers).
const SEGMENT_KEY: u64 = 1;

/// A rank's handle on the job.
pub struct Client {
    core: ManuallyDrop<Core>,
    handlers_req: HandlerTable<HandlerFn>,
    boot: Arc<dyn Bootstrap>,
    cfg: Config,
    caps: Capabilities,
    closed: bool,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("rank", &self.core.rank)
            .field("size", &self.core.size)
            .field("provider", &self.caps.provider)
            .finish()
    }
}

fn boot_err(e: bootstrap::BootstrapError) -> AmError {
    AmError::Bootstrap(e.to_string())
}

/// Concatenate endpoint names with 2-byte length prefixes.
fn pack_names(names: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for n in names {
        out.extend_from_slice(&(n.len() as u16).to_le_bytes());
        out.extend_from_slice(n);
    }
    out
}

fn unpack_names(rank: usize, b: &[u8]) -> Result<Vec<Vec<u8>>, AmError> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < b.len() {
        if at + 2 > b.len() {
            break;
        }
        let len = u16::from_le_bytes([b[at], b[at + 1]]) as usize;
        at += 2;
        if at + len > b.len() {
            break;
        }
        out.push(b[at..at + len].to_vec());
        at += len;
    }
    if out.len() != 3 || at != b.len() {
        return Err(AmError::Bootstrap(format!(
            "rank {rank} sent malformed endpoint names ({} bytes)",
            b.len()
        )));
    }
    Ok(out)
}

impl Client {
    /// Initialise this rank (collective over the job): bootstrap from the
    /// launcher's environment (or a single-rank job), read the
    /// configuration, select the provider, open the endpoints, exchange
    /// names, post receive buffers, and end with a barrier.
    pub fn init() -> Result<Client, AmError> {
        bootstrap::reset_provider_signal_handlers();
        let boot: Arc<dyn Bootstrap> =
            Arc::from(bootstrap::bootstrap_from_env().map_err(boot_err)?);
        let env = ProcessEnv;
        let reader = EnvReader::quiet(&env);
        let cfg = Config::from_env(&reader)?;
        Self::init_with(boot, cfg, &reader)
    }

    /// Initialise over a given bootstrap and configuration.
    pub fn init_with(
        boot: Arc<dyn Bootstrap>,
        mut cfg: Config,
        reader: &EnvReader<'_>,
    ) -> Result<Client, AmError> {
        let (rank, size) = (boot.rank(), boot.size());
        let job = JobShape {
            rank,
            size,
            single_host: boot.hosts().nhosts() == 1,
        };
        let prepared = prepare(&cfg, reader, &job)?;
        let caps = prepared.caps().clone();
        if let Some((mode, count)) = prepared.receive_override {
            cfg.am.receive_buff_size = mode;
            if let Some(n) = count {
                cfg.am.num_receive_buffs = n;
            }
        }
        let entry =
            prepared.selected.info.first().ok_or_else(|| {
                AmError::Bootstrap("provider selection returned no fi_info".into())
            })?;
        let domain = Domain::open_entry(&entry)?;

        let wait_mode = WaitMode::resolve(
            cfg.general.wait_mode,
            boot.hosts().local_ranks().len(),
            wait::usable_cpus(),
        );
        tracing::debug!(?wait_mode, "wait mode");

        // Sizes.
        let max_medium = cfg.am.max_medium;
        let largest_am = wire::message_len(Kind::LongInline, am::MAX_ARGS, max_medium);
        cfg.check_receive_buff(largest_am)?;
        let recv_size = cfg.am.receive_buff_size.buffer_bytes(largest_am);
        let long_thresh = cfg.am.resolve_long_am_rma_thresh(largest_am);

        // CQs, AV, endpoints.
        let tx_cq = CompletionQueue::open(&domain, cfg.cq.tx_cq_size)?;
        let rx_req_cq = CompletionQueue::open(&domain, cfg.cq.rx_cq_size)?;
        let rx_rep_cq = CompletionQueue::open(&domain, cfg.cq.rx_cq_size)?;
        let av = AddressVector::open(&domain, caps.av_type, 3 * size)?;
        let msg_flags = if cfg.am.use_delivery_complete {
            sys::FI_DELIVERY_COMPLETE
        } else {
            sys::FI_INJECT_COMPLETE
        } as u64;
        let mut msg_info = InfoList::dup(&entry);
        msg_info.set_tx_op_flags(msg_flags);
        let mut rma_info = InfoList::dup(&entry);
        rma_info.set_tx_op_flags(sys::FI_DELIVERY_COMPLETE as u64);

        let mut tx_cqs = vec![tx_cq.clone()];
        let multi_recv = cfg.am.receive_buff_size.uses_multi_recv();
        let open_msg_ep = |rx: &CompletionQueue,
                           tx_cqs: &mut Vec<CompletionQueue>|
         -> Result<Endpoint, AmError> {
            let mut b = Endpoint::open_with(&domain, Some(&msg_info))?;
            let tx = if caps.multi_cq {
                let q = CompletionQueue::open(&domain, cfg.cq.tx_cq_size)?;
                tx_cqs.push(q.clone());
                q
            } else {
                tx_cqs[0].clone()
            };
            b = b.bind_cq(&tx, sys::FI_TRANSMIT as u64)?;
            b = b.bind_cq(rx, sys::FI_RECV as u64)?;
            b = b.bind_av(&av)?;
            let ep = b.enable()?;
            if multi_recv {
                ep.set_min_multi_recv(largest_am)?;
            }
            Ok(ep)
        };
        let req_ep = open_msg_ep(&rx_req_cq, &mut tx_cqs)?;
        let rep_ep = open_msg_ep(&rx_rep_cq, &mut tx_cqs)?;
        let rma_ep = {
            let b = Endpoint::open_with(&domain, Some(&rma_info))?;
            let tx = if caps.multi_cq {
                let q = CompletionQueue::open(&domain, cfg.cq.tx_cq_size)?;
                tx_cqs.push(q.clone());
                q
            } else {
                tx_cq.clone()
            };
            b.bind_cq(&tx, (sys::FI_TRANSMIT | sys::FI_RECV) as u64)?
                .bind_av(&av)?
                .enable()?
        };
        if caps.multi_cq {
            // The shared CQ opened first is unused when every endpoint has
            // its own.
            tx_cqs.remove(0);
        }

        // Names.
        let mine = pack_names(&[req_ep.name()?, rep_ep.name()?, rma_ep.name()?]);
        let all = boot.allgather(&mine).map_err(boot_err)?;
        let mut names = Vec::with_capacity(3 * size);
        for (r, b) in all.iter().enumerate() {
            names.extend(unpack_names(r, b)?);
        }
        let refs: Vec<&[u8]> = names.iter().map(|n| n.as_slice()).collect();
        let addrs = av.insert(&refs)?;
        let names_at_startup = names.iter().map(|n| n.len()).sum();

        // Receive buffers and send pools.
        let nbuf = cfg.am.num_receive_buffs;
        let rx = RecvBuffers::new(nbuf, recv_size, cfg.am.receive_buff_size).map_err(|e| {
            AmError::BadArgument(format!(
                "cannot map {nbuf} receive buffers of {recv_size} bytes: {e}"
            ))
        })?;
        let send_bytes = largest_am;
        let req_pool = Pool::new(
            cfg.am.num_initial_request_buffs,
            cfg.am.max_request_buffs,
            send_bytes,
        );
        let rep_pool = Pool::new(
            cfg.am.num_initial_reply_buffs,
            cfg.am.max_reply_buffs,
            send_bytes,
        );

        // Bounce buffers, registered once.
        let bbufs = bbuf::Pool::new(cfg.rma.num_bbufs, cfg.rma.bbuf_size).map_err(|e| {
            AmError::BadArgument(format!("GASNET_OFI_NUM_BBUFS/GASNET_OFI_BBUF_SIZE: {e}"))
        })?;
        let bbuf_mr = if bbufs.is_empty() {
            None
        } else {
            let (p, len) = bbufs.region();
            // SAFETY: the pool's mapping lives in core.bbufs, dropped after
            // core.bbuf_mr (field order).
            let mut mr = unsafe {
                MemoryRegion::register(
                    &domain,
                    p,
                    len,
                    (sys::FI_WRITE | sys::FI_READ) as u64,
                    SEGMENT_KEY + 1,
                )
            }?;
            if caps.mr_endpoint {
                mr.bind_and_enable(&rma_ep)?;
            }
            Some(mr)
        };
        let (rma_inject_limit, _) = cfg.rma.resolve_inject_limit(caps.inject_size);
        let put_limits = ::rma::put_path::PutLimits {
            inject: rma_inject_limit,
            bbuf_threshold: cfg.rma.bbuf_threshold,
            bbuf_size: cfg.rma.bbuf_size,
        };
        let mut core = Core {
            seg_mr: None,
            bbuf_mr,
            bbufs,
            ops: ::rma::ops::Ops::new(),
            put_limits,
            put_counts: Default::default(),
            rma_poll_freq: cfg.rma.rma_poll_freq.max(1),
            rma_posts: 0,
            req_ep,
            rep_ep,
            rma_ep,
            tx_cqs,
            rx_req_cq,
            rx_rep_cq,
            _av: av,
            _domain: domain.clone(),
            rx,
            req_pool,
            rep_pool,
            segment: None,
            rank,
            size,
            addrs,
            handlers_rep: Some(HandlerTable::new()),
            barrier: Barrier::new(rank, size),
            exit: ExitState::new(rank, size),
            exit_sends: Vec::new(),
            inject_limit: prepared.am_inject_limit,
            long_thresh,
            max_medium,
            max_rma: caps.max_msg_size,
            batch: cfg.cq.num_completions.clamp(1, 64),
            mr_virt_addr: caps.mr_virt_addr,
            peers: Vec::new(),
            stats: Default::default(),
            in_handler: false,
            scratch: vec![0; 256],
            idle: wait::Idle::new(wait_mode),
            names_at_startup,
            loopback: Default::default(),
        };
        for i in 0..nbuf {
            core.repost(i)?;
        }
        core.stats.reposts = 0;
        boot.barrier().map_err(boot_err)?;
        Ok(Client {
            core: ManuallyDrop::new(core),
            handlers_req: HandlerTable::new(),
            boot,
            cfg,
            caps,
            closed: false,
        })
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.core.rank
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.core.size
    }

    /// The bytes this rank's conduit allocated, by purpose (receive
    /// buffers, send pools, bounce buffers, address table, segment).
    pub fn memory_use(&self) -> MemoryUse {
        let c = &*self.core;
        MemoryUse {
            receive_buffers: c.rx.size * c.rx.ctxs.len(),
            request_buffers: c.req_pool.allocated() * c.req_pool.buffer_bytes(),
            reply_buffers: c.rep_pool.allocated() * c.rep_pool.buffer_bytes(),
            bounce_buffers: c.bbufs.len() * c.bbufs.buffer_size(),
            address_table: c.addrs.len() * std::mem::size_of::<crate::ofi::FiAddr>()
                + c.peers.len() * std::mem::size_of::<SegmentInfo>(),
            names_at_startup: c.names_at_startup,
            segment: c.segment.as_ref().map_or(0, |s| s.len()),
        }
    }

    /// How wait loops behave when a poll completes nothing (initially from
    /// `GASNET_WAIT_MODE`; GASNet's `gasnet_set_waitmode`).
    pub fn wait_mode(&self) -> WaitMode {
        self.core.idle.mode
    }

    /// Set how wait loops behave: [`WaitMode::Spin`] for dedicated cores,
    /// [`WaitMode::Yield`] when ranks share CPUs.
    pub fn set_wait_mode(&mut self, mode: WaitMode) {
        self.core.idle.mode = mode;
    }

    /// Which ranks share a host.
    pub fn hosts(&self) -> &HostMap {
        self.boot.hosts()
    }

    /// The provider capabilities in use.
    pub fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    /// The configuration in use.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Largest Medium payload (the least upper bound for requests and
    /// replies; `GASNET_OFI_MAX_MEDIUM`).
    pub fn max_medium(&self) -> usize {
        self.core.max_medium
    }

    /// Most arguments an AM carries.
    pub fn max_args(&self) -> usize {
        am::MAX_ARGS
    }

    /// The largest message that travels inline as an AM Long (bigger ones go
    /// by RMA, then the header).
    pub fn long_inline_threshold(&self) -> usize {
        self.core.long_thresh
    }

    /// Counters.
    pub fn stats(&self) -> AmStats {
        let mut s = self.core.stats;
        s.request_buffers = self.core.req_pool.allocated() as u64;
        s.reply_buffers = self.core.rep_pool.allocated() as u64;
        s.wait_yields = self.core.idle.yields;
        s
    }

    /// Register a handler at `index` (128..=255, or 0 for the highest free
    /// one). Returns the index used.
    pub fn register(&mut self, index: u8, handler: Handler) -> Result<u8, AmError> {
        let table_other_has = |t: &HandlerTable<HandlerFn>, i: u8| t.signature(i);
        // Request and reply handlers share one index space.
        if index != 0 {
            let other = if handler.sig.is_request {
                self.core
                    .handlers_rep
                    .as_ref()
                    .and_then(|t| table_other_has(t, index))
            } else {
                table_other_has(&self.handlers_req, index)
            };
            if let Some(existing) = other {
                return Err(am::handlers::RegisterError::Duplicate { index, existing }.into());
            }
        }
        let chosen = if index == 0 {
            // Highest index free in both tables.
            let free = (am::handlers::CLIENT_BASE..=255).rev().find(|&i| {
                self.handlers_req.signature(i).is_none()
                    && self
                        .core
                        .handlers_rep
                        .as_ref()
                        .is_some_and(|t| t.signature(i).is_none())
            });
            free.ok_or(am::handlers::RegisterError::Full)?
        } else {
            index
        };
        let table = if handler.sig.is_request {
            &mut self.handlers_req
        } else {
            self.core
                .handlers_rep
                .as_mut()
                .expect("reply table is present outside reply dispatch")
        };
        Ok(table.register(chosen, handler.sig, handler.f)?)
    }

    fn not_in_handler(&self, what: &'static str) -> Result<(), AmError> {
        if self.core.in_handler {
            return Err(AmError::InHandler(what));
        }
        Ok(())
    }

    /// Make progress: drain completions, run handlers, repost buffers. If
    /// the job is exiting, finish the exit (this does not return then).
    pub fn poll(&mut self) -> Result<(), AmError> {
        self.not_in_handler("poll")?;
        self.poll_inner()?;
        if self.core.exit.code().is_some() {
            self.finish_exit();
        }
        Ok(())
    }

    /// One round of progress: requests, then (in `poll_replies`) the TX
    /// CQ, replies and reposts. The TX CQ is read once per round.
    fn poll_inner(&mut self) -> Result<(), AmError> {
        let core = &mut *self.core;
        poll_rx(core, &mut self.handlers_req, Side::Request)?;
        core.poll_replies()
    }

    /// Poll until `cond()` holds.
    pub fn block_until(&mut self, mut cond: impl FnMut() -> bool) -> Result<(), AmError> {
        while !cond() {
            self.poll()?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn request(
        &mut self,
        dest: usize,
        kind: Kind,
        handler: u8,
        args: &[u32],
        payload: &[u8],
        dest_offset: Option<usize>,
        immediate: bool,
    ) -> Result<bool, AmError> {
        self.not_in_handler("sending a request")?;
        self.core
            .check_message(dest, kind, args, payload, dest_offset)?;
        if immediate
            && kind == Kind::Long
            && wire::message_len(Kind::LongInline, args.len(), payload.len())
                > self.core.long_thresh
        {
            // The RMA path would block for the write: an immediate Long
            // above the inline threshold is a no-op, as in the reference.
            return Ok(false);
        }
        let (kind, inline, plen) = self
            .core
            .long_plan(kind, dest, args, payload, dest_offset)?;
        loop {
            if self.core.try_send(
                Side::Request,
                dest,
                kind,
                handler,
                args,
                inline,
                plen,
                dest_offset,
            )? {
                return Ok(true);
            }
            if immediate {
                return Ok(false);
            }
            self.poll()?;
        }
    }

    /// Send an AM Short request.
    pub fn request_short(&mut self, dest: usize, handler: u8, args: &[u32]) -> Result<(), AmError> {
        self.request(dest, Kind::Short, handler, args, &[], None, false)
            .map(|_| ())
    }

    /// Send an AM Medium request; the payload is copied before return.
    pub fn request_medium(
        &mut self,
        dest: usize,
        handler: u8,
        args: &[u32],
        payload: &[u8],
    ) -> Result<(), AmError> {
        self.request(dest, Kind::Medium, handler, args, payload, None, false)
            .map(|_| ())
    }

    /// Send an AM Long request: the payload lands at `dest_offset` in
    /// `dest`'s segment before the handler runs there. The payload may be
    /// reused when the call returns.
    pub fn request_long(
        &mut self,
        dest: usize,
        handler: u8,
        args: &[u32],
        payload: &[u8],
        dest_offset: usize,
    ) -> Result<(), AmError> {
        self.request(
            dest,
            Kind::Long,
            handler,
            args,
            payload,
            Some(dest_offset),
            false,
        )
        .map(|_| ())
    }

    /// Like [`Client::request_short`], but returns `Ok(false)` instead of
    /// waiting when no send resource is free (immediate mode).
    pub fn try_request_short(
        &mut self,
        dest: usize,
        handler: u8,
        args: &[u32],
    ) -> Result<bool, AmError> {
        self.request(dest, Kind::Short, handler, args, &[], None, true)
    }

    /// Immediate-mode [`Client::request_medium`].
    pub fn try_request_medium(
        &mut self,
        dest: usize,
        handler: u8,
        args: &[u32],
        payload: &[u8],
    ) -> Result<bool, AmError> {
        self.request(dest, Kind::Medium, handler, args, payload, None, true)
    }

    /// Immediate-mode [`Client::request_long`] (a Long that would need the
    /// RMA path is always a no-op).
    pub fn try_request_long(
        &mut self,
        dest: usize,
        handler: u8,
        args: &[u32],
        payload: &[u8],
        dest_offset: usize,
    ) -> Result<bool, AmError> {
        self.request(
            dest,
            Kind::Long,
            handler,
            args,
            payload,
            Some(dest_offset),
            true,
        )
    }

    fn send_internal(&mut self, dest: usize, handler: u8, args: &[u32]) -> Result<(), AmError> {
        loop {
            if self.core.try_send(
                Side::Request,
                dest,
                Kind::Short,
                handler,
                args,
                &[],
                0,
                None,
            )? {
                return Ok(());
            }
            self.poll_inner()?;
        }
    }

    /// Start a barrier: named with `Some(id)`, anonymous with `None`.
    pub fn barrier_notify(&mut self, id: Option<u32>) -> Result<(), AmError> {
        self.not_in_handler("barrier_notify")?;
        if let Some(s) = self.core.barrier.notify(id)? {
            self.send_internal(s.dest, H_BARRIER, &s.args)?;
        }
        Ok(())
    }

    /// Poll once and report whether the notified barrier completed
    /// (`Err(BarrierMismatch)` when named barriers with different ids met).
    pub fn barrier_try(&mut self) -> Result<bool, AmError> {
        self.poll()?;
        let (sends, done) = self.core.barrier.advance()?;
        for s in sends {
            self.send_internal(s.dest, H_BARRIER, &s.args)?;
        }
        match done {
            None => Ok(false),
            Some(Outcome::Ok) => Ok(true),
            Some(Outcome::Mismatch) => Err(AmError::BarrierMismatch),
        }
    }

    /// Wait for the notified barrier.
    pub fn barrier_wait(&mut self) -> Result<(), AmError> {
        while !self.barrier_try()? {}
        Ok(())
    }

    /// An anonymous barrier (notify then wait).
    pub fn barrier(&mut self) -> Result<(), AmError> {
        self.barrier_notify(None)?;
        self.barrier_wait()
    }

    /// Allocate, register and publish this rank's segment of `size` bytes
    /// (collective; a multiple of the page size, at most what
    /// `GASNET_MAX_SEGSIZE` allows).
    pub fn attach_segment(&mut self, size: usize) -> Result<(), AmError> {
        self.not_in_handler("attach_segment")?;
        if self.core.segment.is_some() {
            return Err(AmError::BadArgument("a segment is already attached".into()));
        }
        let page = crate::config::host_page_size();
        if size == 0 || size % page != 0 {
            return Err(AmError::BadArgument(format!(
                "segment size {size} is not a positive multiple of the page size {page}"
            )));
        }
        let phys = crate::config::host_physical_memory().unwrap_or(u64::MAX);
        let on_host = self.boot.hosts().local_ranks().len().max(1);
        let limit = self.cfg.max_segsize.limit_bytes(phys, on_host);
        if size as u64 > limit {
            return Err(AmError::BadArgument(format!(
                "segment size {size} exceeds the limit of {limit} bytes set by GASNET_MAX_SEGSIZE={}",
                self.cfg.max_segsize
            )));
        }
        let mut seg = Segment::create(size, self.core.rank)
            .map_err(|e| AmError::BadArgument(format!("cannot map a {size}-byte segment: {e}")))?;
        let base = seg.ptr();
        // SAFETY: the segment mapping is kept in core.segment, which is
        // dropped after core.seg_mr (field order), so it outlives the MR.
        let mut mr = unsafe {
            MemoryRegion::register(
                &self.core._domain,
                base,
                size,
                (sys::FI_REMOTE_READ | sys::FI_REMOTE_WRITE | sys::FI_READ | sys::FI_WRITE) as u64,
                SEGMENT_KEY,
            )
        }?;
        if self.caps.mr_endpoint {
            mr.bind_and_enable(&self.core.rma_ep)?;
        }
        let info = SegmentInfo {
            base: base as u64,
            size: size as u64,
            key: mr.key(),
        };
        let all = self.boot.allgather(&info.to_bytes()).map_err(boot_err)?;
        let mut peers = Vec::with_capacity(all.len());
        for (r, b) in all.iter().enumerate() {
            peers.push(SegmentInfo::from_bytes(b).ok_or_else(|| {
                AmError::Bootstrap(format!("rank {r} published a malformed segment record"))
            })?);
        }
        self.core.seg_mr = Some(mr);
        self.core.segment = Some(seg);
        self.core.peers = peers;
        self.boot.barrier().map_err(boot_err)?;
        Ok(())
    }

    /// Base address (in its owner's address space) and size of `rank`'s
    /// segment.
    pub fn segment_info(&self, rank: usize) -> Result<SegmentInfo, AmError> {
        self.core.check_rank(rank)?;
        self.core.peers.get(rank).copied().ok_or(AmError::NoSegment)
    }

    fn local_range(&mut self, offset: usize, len: usize) -> Result<*mut u8, AmError> {
        let rank = self.core.rank;
        let seg = self.core.segment.as_mut().ok_or(AmError::NoSegment)?;
        if offset.checked_add(len).is_none_or(|e| e > seg.len()) {
            return Err(AmError::OutOfSegment {
                rank,
                offset,
                len,
                size: seg.len(),
            });
        }
        // SAFETY: inside the mapping (checked above).
        Ok(unsafe { seg.ptr().add(offset) })
    }

    /// Copy out of this rank's segment.
    pub fn segment_read(&mut self, offset: usize, out: &mut [u8]) -> Result<(), AmError> {
        let p = self.local_range(offset, out.len())?;
        // SAFETY: p..p+len is inside the segment; the copy does not overlap
        // `out`, which is process memory outside the segment or a distinct
        // range (a &mut cannot alias the segment, which no safe API lends).
        unsafe { std::ptr::copy_nonoverlapping(p, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// Copy into this rank's segment.
    pub fn segment_write(&mut self, offset: usize, data: &[u8]) -> Result<(), AmError> {
        let p = self.local_range(offset, data.len())?;
        // SAFETY: as in segment_read.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
        Ok(())
    }

    /// End the job: every rank exits with `code`. Does not return.
    pub fn exit(&mut self, code: i32) -> ! {
        self.core.request_exit(code);
        self.finish_exit()
    }

    /// The collective part of exit, then the process ends.
    fn finish_exit(&mut self) -> ! {
        let code = self.coordinate_exit();
        std::process::exit(code)
    }

    /// Coordinate the exit and close everything; returns the exit code.
    /// Falls back to the bootstrap's abort when coordination times out.
    fn coordinate_exit(&mut self) -> i32 {
        let code = self.core.exit.code().unwrap_or(0);
        if self.closed {
            return code;
        }
        let timeout = self.cfg.exit_timeout.for_job(self.core.size);
        let start = Instant::now();
        let deadline = start + timeout;
        let abort = |boot: &Arc<dyn Bootstrap>, why: String| -> ! {
            eprintln!(
                "ofi-conduit (rank {}): {why}; aborting the job",
                boot.rank()
            );
            boot.abort(code)
        };
        // 1. Tell the ranks at distances 1, 2, 4, ... and hear from every
        //    distance, while serving the fabric (exit messages received
        //    meanwhile may queue more sends).
        while !self.core.exit.coordinated() || !self.core.exit_sends.is_empty() {
            if let Some((dest, dist)) = self.core.exit_sends.pop() {
                let args = [code as u32, dist as u32];
                match self.core.try_send(
                    Side::Request,
                    dest,
                    Kind::Short,
                    H_EXIT,
                    &args,
                    &[],
                    0,
                    None,
                ) {
                    Ok(true) => {}
                    Ok(false) => self.core.exit_sends.push((dest, dist)),
                    Err(e) => abort(
                        &self.boot,
                        format!("exit message to rank {dest} failed: {e}"),
                    ),
                }
            }
            if Instant::now() > deadline {
                abort(
                    &self.boot,
                    format!(
                        "exit coordination timed out after {:.1} s",
                        timeout.as_secs_f64()
                    ),
                );
            }
            if let Err(e) = self.poll_inner() {
                tracing::warn!("during exit: {e}");
            }
        }
        // 2. Every rank is exiting. A bootstrap barrier (on a helper thread,
        //    while this one keeps the fabric progressing so that peers'
        //    last messages get through) makes sure nobody closes its
        //    endpoints while another still needs them.
        let boot = self.boot.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(boot.barrier());
        });
        loop {
            match rx.try_recv() {
                Ok(Ok(())) => break,
                Ok(Err(e)) => abort(&self.boot, format!("exit barrier failed: {e}")),
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    abort(&self.boot, "exit barrier thread ended".into())
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
            }
            if Instant::now() > deadline {
                abort(
                    &self.boot,
                    format!(
                        "exit barrier timed out after {:.1} s",
                        timeout.as_secs_f64()
                    ),
                );
            }
            let _ = self.poll_inner();
            std::thread::sleep(Duration::from_micros(50));
        }
        // 3. Drain our outstanding sends (at most a quarter of the timeout).
        let drain_until = Instant::now() + timeout / 4;
        while self.core.req_pool.in_flight() + self.core.rep_pool.in_flight() > 0
            && Instant::now() < drain_until
        {
            let _ = self.poll_inner();
        }
        self.write_stats();
        // 4. Close libfabric objects (ownership gives the order), then tell
        //    the launcher.
        self.closed = true;
        // SAFETY: `closed` guards against a second drop; nothing touches
        // core after this point (every entry point checks `closed` first or
        // ends the process).
        unsafe { ManuallyDrop::drop(&mut self.core) };
        if let Err(e) = self.boot.finalize(code) {
            tracing::warn!("bootstrap finalize: {e}");
        }
        code
    }

    fn write_stats(&self) {
        let Some(path) = &self.cfg.general.stats_file else {
            return;
        };
        let path = path.replace('%', &self.core.rank.to_string());
        let mut s = self.stats().report(self.core.rank);
        let pc = self.put_counts();
        s.push_str(&format!(
            "NB_PUT_INJECT {}\nNB_PUT_BOUNCE {}\nNB_PUT_BLOCK {}\n",
            pc.inject, pc.bounce, pc.block
        ));
        if let Err(e) = std::fs::write(&path, s) {
            eprintln!("ofi-conduit: cannot write GASNET_STATSFILE {path}: {e}");
        }
    }
}

impl Drop for Client {
    /// Returning from `main` without `exit`: a collective exit with code 0.
    /// If another rank exited with a non-zero code meanwhile, this process
    /// ends with that code.
    fn drop(&mut self) {
        if self.closed {
            return;
        }
        if std::thread::panicking() {
            // Unwinding: close without coordinating; the launcher sees the
            // rank fail and ends the job.
            self.closed = true;
            // SAFETY: guarded by `closed`.
            unsafe { ManuallyDrop::drop(&mut self.core) };
            return;
        }
        self.core.request_exit(0);
        let code = self.coordinate_exit();
        if code != 0 {
            std::process::exit(code);
        }
    }
}
