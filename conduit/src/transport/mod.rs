//! The one boundary between the conduit's protocol logic and the network.
//!
//! The client engine (`crate::client`) decides what to post and what a
//! completion means, with the help of the sans-IO `am` and `rma` crates;
//! a [`Transport`] only posts and reports. Two implement it:
//!
//! * [`ofi::OfiTransport`]: libfabric, through the safe wrapper
//!   [`crate::ofi`];
//! * `sim::SimTransport` (cargo feature `sim`, used by the tests): a
//!   deterministic in-memory network whose ranks are threads of one
//!   process, which can answer any post with `-FI_EAGAIN`, reorder and
//!   delay completions, and fail operations with error completions.
//!
//! A rank has one or more *endpoint sets*: each serves AM requests, AM
//! replies and RMA ([`Ep`]) with their completion queues, as in GASNet's
//! ofi-conduit (the libfabric transport carries RMA on the reply endpoint).
//! Set `i` of one rank talks to set `i` of every other rank.
//!
//! Completion contexts are a [`Context`] encoded into the pointer-sized
//! value libfabric carries; the conduit never dereferences it (providers
//! that need `FI_CONTEXT` are refused at start-up).

mod completion;
pub mod ofi;
#[cfg(feature = "sim")]
pub mod sim;

use crate::client::Error;
use crate::mem::Mapping;
use crate::ofi::OfiError;
use rma::atomic::{AtomicType, Native};
use std::mem::MaybeUninit;
use std::sync::Arc;

pub use completion::{Completion, Context, Cq, Ep, ErrorCompletion, Polled, PostError, Side};

/// The facts about the network that the protocol logic needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// Provider name (`shm`, `tcp;ofi_rxm`, `sim`).
    pub provider: String,
    /// Largest message one operation moves.
    pub max_msg_size: usize,
    /// Remote addresses are virtual addresses (else offsets).
    pub mr_virt_addr: bool,
    /// Memory regions are bound to an endpoint (one registration per set).
    pub mr_endpoint: bool,
    /// Endpoints were opened with FI_ATOMIC.
    pub atomic: bool,
    /// Most pieces one RMA call moves (`iov_limit` and `rma_iov_limit`;
    /// at least 1).
    pub rma_iov_limit: usize,
    /// Writes can carry 8 bytes of remote CQ data (`cq_data_size` >= 8),
    /// reported in the target endpoint's receive queue.
    pub remote_cq_data: bool,
}

/// What the engine asks for when it opens the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenPlan {
    /// This rank and the job size.
    pub rank: usize,
    /// Ranks.
    pub size: usize,
    /// Endpoint sets.
    pub sets: usize,
    /// Receive buffers are posted with `FI_MULTI_RECV`, released when less
    /// than `min_multi_recv` bytes remain.
    pub multi_recv: bool,
    /// The largest AM (`FI_OPT_MIN_MULTI_RECV`).
    pub min_multi_recv: usize,
    /// The provider carries nothing between this rank and the others (every
    /// rank shares memory with it and nothing asks for the provider
    /// between such ranks): the address vector holds this rank's own
    /// endpoints only, so its size does not grow with the job (shm's holds
    /// at most 256 addresses).
    pub own_addresses_only: bool,
}

/// The buffers of one native atomic, kept in place by the initiator until
/// the atomic's completion: the operand, compare value and result (one
/// element each, in the first bytes) and the descriptors a provider may
/// keep pointers to.
#[derive(Debug, Default)]
#[repr(C, align(8))]
pub struct AtomicBufs {
    /// The operand (for a compare: the value written on a match).
    pub operand: [u8; 8],
    /// The compare value.
    pub compare: [u8; 8],
    /// The target's old value (fetch and compare).
    pub result: [u8; 8],
    /// libfabric's descriptors.
    pub io: crate::ofi::AtomicIo,
}

/// A memory region: registered memory that a region owns (an `Arc` of the
/// mapping), with its key and local descriptor.
pub trait Region: Send + Sync {
    /// The local descriptor type.
    type Desc: Copy;
    /// The remote key.
    fn key(&self) -> u64;
    /// The local descriptor, for operations whose local buffer lies here.
    fn desc(&self) -> Self::Desc;
    /// The memory.
    fn memory(&self) -> &Arc<Mapping>;
}

/// Access a registration grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Local source of writes (bounce buffers).
    LocalRead,
    /// Remote reads and writes, and local use (segments).
    Remote,
}

/// A network: endpoint sets, their queues, and memory registration.
///
/// Threading: a transport used by one thread only may be `!Sync`; a
/// multi-threaded client needs `Transport + Sync`, whose implementations
/// either run on a thread-safe provider or serialise calls themselves.
///
/// # Safety
/// The client reads completions it did not initialise: an implementation's
/// [`Transport::poll`] must have written the first `n` entries of `out`
/// when it returns `Ok(Polled::Completions(n))`, with `n <= out.len()`.
pub unsafe trait Transport: Send + 'static {
    /// The local memory descriptor (`fi_mr_desc`).
    type Desc: Copy;
    /// A memory region.
    type Region: Region<Desc = Self::Desc>;

    /// Facts fixed at start-up.
    fn facts(&self) -> &Facts;

    /// Entries of the transport's table of peer addresses (one
    /// `fi_addr_t` per endpoint of every rank, its own only where the
    /// shared-memory path carries everything); 0 where it keeps none.
    fn address_entries(&self) -> usize {
        0
    }

    /// Insert every rank's endpoint names (as [`Network::open`] produced
    /// them, indexed by rank).
    fn connect(&mut self, names: &[Vec<u8>]) -> Result<(), Error>;

    /// Keep `mem` alive at least as long as set `set`'s endpoints: buffers
    /// in it will be posted there.
    fn keep_alive(&mut self, set: usize, mem: Arc<Mapping>);

    /// Register `mem`: one region, or one per set when regions are bound to
    /// endpoints.
    fn register(&self, mem: &Arc<Mapping>, access: Access) -> Result<Vec<Self::Region>, Error>;

    /// Send `bytes` (copied before return, no completion) from set `set`
    /// to endpoint `ep` of `dest`'s set. It leaves from this set's `ep`, or
    /// from the other AM endpoint where the transport pairs them (the
    /// libfabric one, for a profile with `am_paired_endpoints`).
    fn inject(&self, set: usize, ep: Ep, bytes: &[u8], dest: usize) -> Result<(), PostError>;

    /// Send `len` bytes at `buf` from set `set` to endpoint `ep` of
    /// `dest`'s set (leaving as for [`Transport::inject`]).
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and unchanged until the completion
    /// carrying `ctx` has been read (from the TX queue or the reply queue,
    /// depending on the endpoint it left from).
    unsafe fn send(
        &self,
        set: usize,
        ep: Ep,
        buf: *const u8,
        len: usize,
        dest: usize,
        ctx: Context,
    ) -> Result<(), PostError>;

    /// Post a receive buffer on `ep` (with `FI_MULTI_RECV` when `multi`).
    ///
    /// # Safety
    /// `buf..buf+len` must lie in memory given to [`Transport::keep_alive`]
    /// for this set, and nothing may read or write it until the provider
    /// has released it (every completion of the post has been read).
    unsafe fn post_recv(
        &self,
        set: usize,
        ep: Ep,
        buf: *mut u8,
        len: usize,
        ctx: Context,
        multi: bool,
    ) -> Result<(), PostError>;

    /// RMA write of `len` bytes at `src` to `remote` at `dest` (delivery
    /// complete; with `inject`, `src` may be reused at return).
    ///
    /// # Safety
    /// Without `inject`, `src..src+len` must stay valid and unchanged until
    /// the completion carrying `ctx` has been read. `desc` must be the
    /// descriptor of a region holding the source, or `None`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn write(
        &self,
        set: usize,
        dest: usize,
        src: *const u8,
        len: usize,
        desc: Option<Self::Desc>,
        remote: rma::plan::Remote,
        ctx: Context,
        inject: bool,
    ) -> Result<(), PostError>;

    /// RMA read of `len` bytes at `remote` of `from` into `dst`.
    ///
    /// # Safety
    /// `dst..dst+len` must stay valid, and be neither read nor written by
    /// anyone else, until the completion carrying `ctx` has been read.
    #[allow(clippy::too_many_arguments)]
    unsafe fn read(
        &self,
        set: usize,
        from: usize,
        dst: *mut u8,
        len: usize,
        desc: Option<Self::Desc>,
        remote: rma::plan::Remote,
        ctx: Context,
    ) -> Result<(), PostError>;

    /// Whether the provider performs `native` on `ty` (through set
    /// `set`'s RMA endpoint). False unless the endpoints have FI_ATOMIC.
    fn atomic_valid(&self, _set: usize, _ty: AtomicType, _native: Native) -> bool {
        false
    }

    /// One element's atomic on `remote` at `dest`: `native` says the call
    /// and operation; `bufs` holds the operand (for a compare, the value
    /// written on a match), the compare value, the result and whatever the
    /// provider keeps until completion.
    ///
    /// # Safety
    /// `bufs` must stay valid and unmoved (its result written by no one
    /// else) until the completion carrying `ctx` has been read; the remote
    /// range must have been checked against the target's segment.
    #[allow(clippy::too_many_arguments)]
    unsafe fn atomic(
        &self,
        _set: usize,
        _dest: usize,
        _ty: AtomicType,
        _native: Native,
        _bufs: *mut AtomicBufs,
        _remote: rma::plan::Remote,
        _ctx: Context,
    ) -> Result<(), PostError> {
        Err(PostError::Failed(OfiError {
            call: "fi_atomic",
            code: -(ofi_sys::FI_ENOSYS as i64),
            text: "this transport has no native atomics".into(),
        }))
    }

    /// RMA of several pieces in one call (at most
    /// [`Facts::rma_iov_limit`]): written to (`write`) or read from `peer`.
    ///
    /// # Safety
    /// The local buffers and `v` must stay valid and in place (a read's
    /// buffers unaliased) until the completion carrying `ctx` has been
    /// read; the remote ranges must have been checked against the peer's
    /// segment.
    unsafe fn rma_vec(
        &self,
        _set: usize,
        _peer: usize,
        _write: bool,
        _v: &mut crate::ofi::RmaVec,
        _ctx: Context,
    ) -> Result<(), PostError> {
        Err(PostError::Failed(OfiError {
            call: "fi_writemsg",
            code: -(ofi_sys::FI_ENOSYS as i64),
            text: "this transport moves one piece per call".into(),
        }))
    }

    /// One write of the pieces of `v` from set `set` to endpoint `ep` of
    /// `dest` (leaving as for [`Transport::inject`]), carrying `data` as remote CQ data: the
    /// target's receive queue of that endpoint reports it as
    /// [`Context::Landed`] once every piece is in place. Completes locally
    /// as the endpoint's AM sends do.
    ///
    /// # Safety
    /// As for [`Transport::rma_vec`].
    unsafe fn write_landing(
        &self,
        _set: usize,
        _ep: Ep,
        _dest: usize,
        _v: &mut crate::ofi::RmaVec,
        _data: u64,
        _ctx: Context,
    ) -> Result<(), PostError> {
        Err(PostError::Failed(OfiError {
            call: "fi_writemsg",
            code: -(ofi_sys::FI_ENOSYS as i64),
            text: "this transport has no remote CQ data".into(),
        }))
    }

    /// Read up to `out.len()` completions of queue `cq` of set `set`.
    fn poll(
        &self,
        set: usize,
        cq: Cq,
        out: &mut [MaybeUninit<Completion>],
    ) -> Result<Polled, Error>;
}

/// Something that opens a [`Transport`] for one rank.
pub trait Network {
    /// What it opens.
    type Transport: Transport;
    /// Open the endpoint sets; returns the transport and this rank's
    /// endpoint names, to be gathered from every rank and given to
    /// [`Transport::connect`].
    fn open(self, plan: &OpenPlan) -> Result<(Self::Transport, Vec<u8>), Error>;
}

/// The first `n` completions of a buffer filled by [`Transport::poll`].
///
/// # Safety
/// The first `n` entries of `out` are initialised: `out` is what a
/// transport's `poll` filled and `n` what it returned in
/// `Polled::Completions(n)` (the contract of the unsafe trait
/// [`Transport`]).
#[inline]
pub(crate) unsafe fn filled(
    out: &[MaybeUninit<Completion>],
    n: usize,
) -> impl Iterator<Item = Completion> + '_ {
    out[..n].iter().map(|c| {
        // SAFETY: the first `n` entries are initialised (this function's
        // contract), and `out[..n]` panics rather than read past the end.
        unsafe { c.assume_init_read() }
    })
}
