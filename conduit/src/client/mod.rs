//! The client: what a runtime initialises in every rank to send Active
//! Messages, move data with RMA, synchronise and exit.
//!
//! ```no_run
//! use conduit::client::{Client, Options};
//! use std::sync::atomic::{AtomicU64, Ordering};
//!
//! // Typed per-client state that handlers reach through their token.
//! #[derive(Default)]
//! struct Counts {
//!     got: AtomicU64,
//! }
//!
//! let c = Client::init_with(Options::new(Counts::default())).expect("init");
//! c.on_request_short(200, 1, |tok, args| {
//!     tok.state().got.fetch_add(args[0] as u64, Ordering::Relaxed);
//! }).unwrap();
//! c.barrier().unwrap();
//! let next = (c.rank() + 1) % c.size();
//! c.request_short(next, 200, &[1]).unwrap();
//! c.block_until(|| c.state().got.load(Ordering::Relaxed) == 1).unwrap();
//! c.barrier().unwrap();
//! c.exit(0);
//! ```
//!
//! Two threading modes share one engine (GASNet's SEQ and PAR):
//!
//! * [`Client`]: one thread. It takes no locks (its internal cells are
//!   checked flags) and is not `Sync`.
//! * [`ParClient`]: any number of threads at once (`Sync`, `&self`
//!   methods), on an FI_THREAD_SAFE domain (or FI_THREAD_DOMAIN plus one
//!   lock where the provider's profile says so). Completion queues are
//!   polled under try-locks; handlers run on whichever thread polls. With
//!   several endpoint sets ([`Options::endpoints`]), a thread can own one
//!   ([`ParClient::endpoint`]) so threads need not share queues.
//!
//! Handlers run inside `poll` (and inside any call that waits); they get a
//! [`Token`], never the client, so they cannot poll, block or send
//! requests; a request handler may send one reply through its token.
//!
//! Exit: [`ClientOf::exit`] ends every rank of the job with the given code
//! (collectively, by dissemination, within `GASNET_EXITTIMEOUT`). When
//! another rank exits, the next call into the client on this rank runs the
//! same exit and ends this process with that code: these are the two places
//! where the conduit ends the process, as GASNet's `gasnet_exit` does.
//! Dropping the client (returning from `main`) exits collectively with code
//! 0, closes the network in ownership order, and returns.

mod api;
mod atomic;
pub(crate) mod engine;
mod error;
mod handlers;
mod init;
mod memory;
mod neighbourhood;
mod owned;
mod payload;
mod raw;
mod scope;
mod segment;
mod stats;
mod statsfile;
mod team;
mod token;
mod vis;
mod wait;

pub use am::handlers::Widen;
pub use atomic::{AtomicDomain, AtomicImpl, AtomicOp, AtomicType, AtomicValue, OpSet};
pub use error::{Error, RmaError};
pub use init::{Options, MAX_ENDPOINT_SETS};
pub use memory::MemoryUse;
pub use owned::OwnedRma;
pub use payload::Payload;
pub use raw::{RawLocal, RawOp};
pub use rma::plan::SegmentInfo;
pub use rma::put_path::{PutCounts, PutLimits};
pub use scope::{Event, NbiSync, RmaScope};
pub use segment::Segment;
pub use stats::AmStats;
pub use team::{mat2, CollEvent, CollOp, CollValue, DType, Reduction, Team, UserOp};
pub use token::{Handler, LongFn, MediumFn, ShortFn, Token, UntypedFn};
pub use wait::WaitMode;

pub use crate::sync::{Mode, Par, Seq};

use self::engine::Core;
use crate::boot::HostMap;
use crate::config::Config;
use crate::profile::Capabilities;
use crate::sync::Lock;
use crate::transport::ofi::{OfiTransport, Synced, Unsynced};
use crate::transport::Transport;
use am::barrier::Value;
use std::mem::ManuallyDrop;
use std::sync::atomic::Ordering;

/// Whether the calling thread is running an AM handler now. The calls
/// that poll, block or send requests (barriers, RMA, requests, polls)
/// refuse there with [`Error::InHandler`], as GASNet-EX forbids them in
/// handlers; a layer above (the C API) can ask first to name its own call.
pub fn in_handler() -> bool {
    engine::in_handler()
}

/// A rank's handle on the job, in threading mode `M`, with handler state
/// `S`, over transport `T`. Use the aliases [`Client`] and [`ParClient`].
pub struct ClientOf<M: Mode, S, T: Transport> {
    pub(crate) core: ManuallyDrop<Core<M, T, S>>,
}

/// The single-threaded client (over libfabric unless `T` says otherwise).
pub type Client<S = (), T = OfiTransport<Unsynced>> = ClientOf<Seq, S, T>;

/// The multi-threaded client.
///
/// ```no_run
/// use conduit::client::{Options, ParClient};
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// // Two threads, each with an endpoint set of its own (plus the client's).
/// let c = ParClient::init_with(Options::new(AtomicU64::new(0)).endpoints(3)).unwrap();
/// c.on_request_short(200, 0, |tok, _| {
///     tok.state().fetch_add(1, Ordering::Relaxed);
/// })
/// .unwrap();
/// c.barrier().unwrap();
/// std::thread::scope(|s| {
///     for t in 0..2 {
///         let c = &c;
///         s.spawn(move || {
///             let ep = c.endpoint(t + 1).unwrap();
///             for d in 0..c.size() {
///                 ep.request_short(d, 200, &[]).unwrap();
///             }
///             let want = 2 * c.size() as u64;
///             ep.block_until(|| c.state().load(Ordering::Relaxed) >= want).unwrap();
///         });
///     }
/// });
/// c.barrier().unwrap();
/// ```
pub type ParClient<S = (), T = OfiTransport<Synced>> = ClientOf<Par, S, T>;

impl<M: Mode, S, T: Transport> std::fmt::Debug for ClientOf<M, S, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("mode", &M::NAME)
            .field("rank", &self.core.rank)
            .field("size", &self.core.size)
            .field("provider", &self.core.tp.facts().provider)
            .finish()
    }
}

/// A thread's own endpoint set of a multi-threaded client (from
/// [`ParClient::endpoint`]): AMs and RMA issued here use that set's
/// endpoints and queues, and reach the same set of every other rank.
/// Released when dropped.
pub struct Endpoint<'c, M: Mode, S, T: Transport> {
    core: &'c Core<M, T, S>,
    set: usize,
}

impl<M: Mode, S, T: Transport> std::fmt::Debug for Endpoint<'_, M, S, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint").field("set", &self.set).finish()
    }
}

impl<M: Mode, S, T: Transport> Drop for Endpoint<'_, M, S, T> {
    fn drop(&mut self) {
        self.core.sets[self.set]
            .owned
            .store(false, Ordering::Release);
    }
}

impl<M: Mode, S, T: Transport> ClientOf<M, S, T> {
    #[inline]
    fn core(&self) -> &Core<M, T, S> {
        &self.core
    }

    #[inline]
    fn set(&self) -> usize {
        0
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.core.rank
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.core.size
    }

    /// Which ranks share a host.
    pub fn hosts(&self) -> &HostMap {
        self.core.boot.hosts()
    }

    /// The provider in use (`shm`, `tcp;ofi_rxm`, ...).
    pub fn provider(&self) -> &str {
        &self.core.tp.facts().provider
    }

    /// The provider capabilities in use (`None` over the simulator).
    pub fn capabilities(&self) -> Option<&Capabilities> {
        self.core.caps.as_ref()
    }

    /// The configuration in use.
    pub fn config(&self) -> &Config {
        &self.core.cfg
    }

    /// The client's state (given at init; handlers reach it with
    /// [`Token::state`]).
    pub fn state(&self) -> &S {
        &self.core.state
    }

    /// Endpoint sets this client has.
    pub fn endpoints(&self) -> usize {
        self.core.sets.len()
    }

    /// Largest Medium payload (`GASNET_OFI_MAX_MEDIUM`).
    pub fn max_medium(&self) -> usize {
        self.core.limits.max_medium
    }

    /// The largest AM Long payload this conduit accepts (`i32::MAX`, as
    /// GASNet-EX's `gex_AM_MaxRequestLong` bounds it; a Long's payload is
    /// written by RMA, split as the provider needs). A given Long must
    /// also fit at its destination in the target's segment, or it fails
    /// with an error naming the range.
    pub fn max_long(&self) -> usize {
        i32::MAX as usize
    }

    /// Most arguments an AM carries.
    pub fn max_args(&self) -> usize {
        am::MAX_ARGS
    }

    /// The largest AM Long (arguments and payload) packed into one message
    /// with its header (`GASNET_OFI_LONG_AM_RMA_THRESH`); a bigger one
    /// travels in one RMA write carrying the header as remote CQ data
    /// where the provider allows (`GASNET_OFI_LONG_AM_WRITEDATA`), else as
    /// an RMA write of the payload followed by the header.
    pub fn long_inline_threshold(&self) -> usize {
        self.core.limits.long_inline_limit
    }

    /// Counters, summed over the endpoint sets.
    pub fn stats(&self) -> AmStats {
        self.core.stats()
    }

    /// The put-path counters (NB_PUT_INJECT, NB_PUT_BOUNCE, NB_PUT_BLOCK,
    /// NB_PUT_AGGREGATE).
    pub fn put_counts(&self) -> PutCounts {
        self.core.put_counts()
    }

    /// The put-path limits in effect: RMA inject limit (capped at the
    /// provider's), bounce-buffer threshold and size.
    pub fn put_limits(&self) -> PutLimits {
        self.core.put_limits
    }

    /// Whether gets through the provider whose destination starts 1 to 63
    /// bytes after the source within a page go through the get bounce
    /// buffers (`GASNET_OFI_GET_BOUNCE`, resolved at start-up).
    pub fn bounces_gets(&self) -> bool {
        self.core.get_bounce.is_some()
    }

    /// The get window in effect (`GASNET_OFI_GET_WINDOW`, else the provider
    /// profile's): bytes of gets through the provider in flight from one
    /// peer at most; 0: no limit.
    pub fn get_window(&self) -> usize {
        self.core.get_window.map_or(0, |w| w.limit())
    }

    /// Bytes of gets from `rank` charged to its get window and not yet
    /// given back, summed over this rank's endpoint sets (each has its own
    /// window). 0 once every get is over; more than is really in flight
    /// while completions wait to be read.
    pub fn get_window_held(&self, rank: usize) -> u64 {
        self.core
            .sets
            .iter()
            .map(|s| s.ops.lock().window_in_flight(rank))
            .sum()
    }

    /// The bytes this rank's conduit allocated, by purpose.
    pub fn memory_use(&self) -> MemoryUse {
        memory::memory_use(&self.core)
    }

    /// How wait loops behave when a poll completes nothing (initially from
    /// `GASNET_WAIT_MODE`; GASNet's `gasnet_set_waitmode`).
    pub fn wait_mode(&self) -> WaitMode {
        self.core.idle.mode()
    }

    /// Set how wait loops behave: [`WaitMode::Spin`] for dedicated cores,
    /// [`WaitMode::Yield`] when ranks share CPUs.
    pub fn set_wait_mode(&self, mode: WaitMode) {
        self.core.idle.set_mode(mode);
    }

    /// Start a barrier: named with `Some(id)`, anonymous with `None`.
    pub fn barrier_notify(&self, id: Option<u32>) -> Result<(), Error> {
        engine::not_in_handler("barrier_notify")?;
        self.core.barrier_notify(Value::new(id))
    }

    /// Start a barrier that ends in `Err(BarrierMismatch)` on every rank,
    /// whatever the others notify (GASNet's `GASNET_BARRIERFLAG_MISMATCH`);
    /// the barrier after it is unaffected.
    pub fn barrier_notify_mismatch(&self) -> Result<(), Error> {
        engine::not_in_handler("barrier_notify")?;
        self.core.barrier_notify(Value::forced_mismatch())
    }

    /// Poll once and report whether the notified barrier completed
    /// (`Err(BarrierMismatch)` when named barriers with different ids met).
    pub fn barrier_try(&self) -> Result<bool, Error> {
        engine::not_in_handler("barrier_try")?;
        self.core.poll_api(0)?;
        self.core.barrier_advance()
    }

    /// Wait for the notified barrier. An error met meanwhile that is not
    /// the barrier's (a peer's malformed AM, an earlier send's failure) does
    /// not interrupt it: the next [`poll`](Self::poll) reports it.
    pub fn barrier_wait(&self) -> Result<(), Error> {
        engine::not_in_handler("barrier_wait")?;
        self.core.barrier_wait()
    }

    /// The id the last completed barrier agreed on, `None` when every rank
    /// was anonymous (GASNet's `gasnet_barrier_result`).
    pub fn barrier_result(&self) -> Option<u32> {
        self.core.barrier.lock().result()
    }

    /// An anonymous barrier (notify then wait).
    ///
    /// As in GASNet-EX, a barrier synchronises ranks, not messages: an
    /// Active Message sent before it may still be on its way, and its
    /// handler may not have run, when every rank has left it (puts and
    /// gets completed before it are complete). Wait for what handlers
    /// record, with [`block_until`](Self::block_until), before reading it.
    pub fn barrier(&self) -> Result<(), Error> {
        self.barrier_notify(None)?;
        self.barrier_wait()
    }

    /// Allocate, register and publish this rank's segment of `size` bytes
    /// (collective; a multiple of the page size, at most what
    /// `GASNET_MAX_SEGSIZE` allows). One call per rank: a second call
    /// returns [`Error::SegmentAttached`], and one made while another
    /// thread's call is running [`Error::SegmentAttaching`].
    pub fn attach_segment(&self, size: usize) -> Result<(), Error> {
        engine::not_in_handler("attach_segment")?;
        self.core.attach_segment(size)
    }

    /// The largest segment [`attach_segment`](Self::attach_segment)
    /// accepts on this rank (`GASNET_MAX_SEGSIZE` over this host's memory
    /// and ranks), in whole pages: GASNet's `gasnet_getMaxLocalSegmentSize`.
    pub fn max_segment_size(&self) -> usize {
        self.core.segment_limit()
    }

    /// The smallest [`max_segment_size`](Self::max_segment_size) of any
    /// rank of the job (found at start-up): a segment of this size can be
    /// attached everywhere. GASNet's `gasnet_getMaxGlobalSegmentSize`.
    pub fn max_global_segment_size(&self) -> usize {
        self.core.global_segment_limit()
    }

    /// Base address (in its owner's address space), size and key of
    /// `rank`'s segment.
    pub fn segment_info(&self, rank: usize) -> Result<SegmentInfo, Error> {
        self.core.segment_info(rank)
    }

    /// This rank's segment, as memory.
    pub fn segment(&self) -> Result<Segment<'_>, Error> {
        let s = self.core.own_segment()?;
        Ok(Segment::new(&s.mem, s.len(), s.rank()))
    }

    /// Copy out of this rank's segment.
    pub fn segment_read(&self, offset: usize, out: &mut [u8]) -> Result<(), Error> {
        self.segment()?.read(offset, out)
    }

    /// Copy into this rank's segment.
    pub fn segment_write(&self, offset: usize, data: &[u8]) -> Result<(), Error> {
        self.segment()?.write(offset, data)
    }

    /// A description of every endpoint set's state right now (sends and
    /// RMA operations in flight, receive buffers posted and waiting): what
    /// to print when a wait takes too long.
    pub fn diagnostics(&self) -> String {
        self.core.diagnostics()
    }

    /// End the job: every rank exits with `code`. Does not return.
    pub fn exit(&self, code: i32) -> ! {
        self.core.exit_process(code)
    }
}

impl<S, T: Transport + Sync> ClientOf<Par, S, T> {
    /// Own endpoint set `index` (1.. for threads; 0 is the client's own,
    /// shared by every thread that uses the client directly) until the
    /// handle is dropped.
    pub fn endpoint(&self, index: usize) -> Result<Endpoint<'_, Par, S, T>, Error> {
        let count = self.core.sets.len();
        let set = self
            .core
            .sets
            .get(index)
            .ok_or(Error::NoEndpoint { index, count })?;
        if index == 0 {
            return Err(Error::EndpointZero { count });
        }
        if set.owned.swap(true, Ordering::AcqRel) {
            return Err(Error::EndpointOwned { index });
        }
        Ok(Endpoint {
            core: &self.core,
            set: index,
        })
    }
}

impl<'c, M: Mode, S, T: Transport> Endpoint<'c, M, S, T> {
    #[inline]
    fn core(&self) -> &'c Core<M, T, S> {
        self.core
    }

    #[inline]
    fn set(&self) -> usize {
        self.set
    }

    /// Which endpoint set this is.
    pub fn index(&self) -> usize {
        self.set
    }
}

api::communication_api!([M: Mode, S, T: Transport] ClientOf<M, S, T>);
api::communication_api!(['c, M: Mode, S, T: Transport] Endpoint<'c, M, S, T>);

impl<M: Mode, S, T: Transport> Drop for ClientOf<M, S, T> {
    /// Returning from `main` without `exit`: a collective exit with code 0,
    /// then the network is closed in ownership order. If another rank
    /// exited with a non-zero code meanwhile, this process ends with that
    /// code (and with 1 after a protocol error the exit overtook).
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Unwinding: close without coordinating; the launcher sees the
            // rank fail and ends the job.
            // SAFETY: the core is dropped once, here, and never used again.
            unsafe { ManuallyDrop::drop(&mut self.core) };
            return;
        }
        let code = self.core.run_exit(0);
        let boot = self.core.boot.clone();
        let end = self.core.end;
        // SAFETY: the core is dropped once, here, and never used again.
        unsafe { ManuallyDrop::drop(&mut self.core) };
        engine::exit::flush_output();
        if let Err(e) = boot.finalize(code) {
            tracing::warn!("bootstrap finalize: {e}");
        }
        if code != 0 {
            end(code);
        }
    }
}
