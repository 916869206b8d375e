//! The libfabric transport: endpoint sets of two RDM endpoints (request;
//! reply, which carries RMA too) with a TX queue for the request endpoint
//! and a receive queue per AM side (the reply endpoint reports everything
//! to the reply queue), one address vector, memory registration. Where
//! the profile says `am_paired_endpoints`, AMs leave from the other side's
//! endpoint (`addr::sender`).
//!
//! Threading follows the [`DomainLock`]: [`Unsynced`] for the
//! single-threaded client (the transport is then not `Sync`, so calls can
//! never overlap), [`Synced`] for the multi-threaded one (FI_THREAD_SAFE
//! providers take no lock; providers whose profile asks for FI_THREAD_DOMAIN
//! in multi-threaded mode, psm2, get one lock around every call).

use crate::client::Error;
use crate::mem::Mapping;
use crate::ofi::{
    AddressVector, AtomicArgs, CompletionQueue, Domain, Endpoint, FiAddr, MemoryRegion, OfiError,
};
use crate::transport::{
    Access, AtomicBufs, Completion, Context, Cq, Ep, Facts, Polled, PostError, Side, Transport,
};
use ofi_sys as sys;
use rma::atomic::{AtomicType, Native};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

mod addr;
mod atomic_ops;
use atomic_ops::{call, datatype, fi_op};
mod flags;
mod lock;
mod open;
mod reading;
mod region;
use addr::{ep_index, lookup, Senders, EPS};

pub use lock::{DomainLock, Synced, Tally, Unsynced};
pub use open::OfiNetwork;
pub(crate) use open::{pack_names, unpack_names};
pub use region::{Desc, OfiRegion};

struct OfiSet {
    /// Request, reply (which RMA uses too).
    eps: [Endpoint; 2],
    /// The request endpoint's transmit completions.
    tx: CompletionQueue,
    /// Receive queues; the reply one also takes the reply endpoint's
    /// transmit completions (reply sends, RMA).
    rx: [CompletionQueue; 2],
}

/// The libfabric transport.
pub struct OfiTransport<L: DomainLock = Unsynced> {
    facts: Facts,
    /// The AM endpoints' completion flag (FI_INJECT_COMPLETE, or
    /// FI_DELIVERY_COMPLETE when AM sends are windowed).
    msg_completion: u64,
    /// The local endpoint a message to each peer endpoint leaves from:
    /// the other side's where the profile's `am_paired_endpoints` asks.
    senders: Senders,
    sets: Vec<OfiSet>,
    nsets: usize,
    /// Every rank's endpoints' addresses, `FI_ADDR_NOTAVAIL` for a rank
    /// outside the address vector (see `own_only`).
    addrs: Vec<FiAddr>,
    /// This rank.
    rank: usize,
    /// The address vector holds this rank's own endpoints only
    /// ([`OpenPlan::own_addresses_only`](crate::transport::OpenPlan)).
    own_only: bool,
    av: AddressVector,
    domain: Domain,
    next_key: AtomicU64,
    lock: L,
    /// Per set: operations posted with a transmit completion whose
    /// completion has not been read yet. While it is zero a round does not
    /// read the TX queue (each `fi_cq_read` of a shared queue drives the
    /// progress of every endpoint bound to it).
    pending: Box<[L::Tally]>,
    /// Per set: rounds in a row that skipped the TX queue; every
    /// `TX_IDLE_READ`th reads it anyway, so an error completion of an
    /// operation that asked for none is still reported.
    tx_idle: Box<[L::Tally]>,
    /// The peer endpoint RMA and atomics are addressed to: the request
    /// endpoint where the profile says `quiet_reply_queue` (its queue is
    /// read in every full round, so a peer's transfer that needs this
    /// rank's progress is served by it), the reply endpoint otherwise.
    rma_peer: Ep,
    /// The profile's `quiet_reply_queue`: a round reads the reply queue
    /// only while `reply_watch` says something can arrive there.
    quiet: bool,
    /// Per set, with `quiet`: posts of the reply endpoint that report a
    /// completion, less the reply queue's entries read (approximate: a
    /// reply read takes one too; only how often the queue is read
    /// depends on it).
    reply_watch: Box<[L::Tally]>,
    /// Per set, with `quiet`: reads of the reply queue since this set last
    /// sent a request (a reply can come only after one; many requests, a
    /// barrier's, get none, so a count of them would never fall to zero).
    since_request: Box<[L::Tally]>,
    /// Per set, with `quiet`: rounds in a row that skipped the reply queue.
    rx_idle: Box<[L::Tally]>,
}

/// With `quiet_reply_queue`, the reply queue is read every round for this
/// many rounds after a request was sent (a round trip takes a few to a
/// few tens of rounds)...
const REPLY_WINDOW: usize = 256;

/// ...and afterwards, while no post of the reply endpoint owes a
/// completion, once in this many rounds (a later reply still arrives).
const RX_IDLE_READ: usize = 16;

/// An idle round reads the TX queue once in this many.
const TX_IDLE_READ: usize = 64;

impl<L: DomainLock> std::fmt::Debug for OfiTransport<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OfiTransport")
            .field("provider", &self.facts.provider)
            .field("sets", &self.nsets)
            .finish()
    }
}

fn post_error(e: OfiError) -> PostError {
    if e.is_again() {
        PostError::Again
    } else if e.code == -(sys::FI_ENOMEM as i64) {
        PostError::NoMemory
    } else {
        PostError::Failed(e)
    }
}

/// Most completions read per queue per call: one chunk on the poll loop's
/// stack (a poll reads up to `GASNET_OFI_NUM_COMPLETIONS` in chunks; a
/// 64-entry chunk made the loop's frame 6 KiB and 8-byte puts 3% slower).
pub const MAX_BATCH: usize = 16;

impl<L: DomainLock> OfiTransport<L> {
    #[inline]
    fn addr(&self, rank: usize, set: usize, ep: Ep) -> Result<FiAddr, PostError> {
        lookup(&self.addrs, self.nsets, rank, set, ep)
    }

    #[inline]
    fn ep(&self, set: usize, ep: Ep) -> &Endpoint {
        &self.sets[set].eps[ep_index(ep)]
    }

    /// The index of the local endpoint a message to a peer's endpoint
    /// `ep` leaves from.
    #[inline(always)]
    fn from(&self, ep: Ep) -> usize {
        self.senders.index(ep)
    }

    /// A request about to go (to a peer's request endpoint) may draw a
    /// reply: the reply queue is read every round for `REPLY_WINDOW`
    /// rounds (with `quiet`).
    #[inline(always)]
    fn expect_reply(&self, set: usize, ep: Ep) {
        if self.quiet && ep == Ep::Request {
            self.since_request[set].set(0);
        }
    }

    /// Post an operation of the endpoint at `index` in its set that
    /// reports a completion, inside the domain lock. The request endpoint's
    /// (index 0) completions go to
    /// the TX queue: counted before the call (a completion may be read by
    /// another thread before the call returns), uncounted if the post
    /// fails. The reply endpoint's go to the reply queue: counted in
    /// `reply_watch` where the profile makes that queue quiet.
    #[inline(always)]
    fn counted(
        &self,
        set: usize,
        index: usize,
        post: impl FnOnce() -> Result<(), PostError>,
    ) -> Result<(), PostError> {
        // Counted before the call: its completion may be read by another
        // thread before the call returns.
        let tally = match index {
            0 => Some(&self.pending[set]),
            _ if self.quiet => Some(&self.reply_watch[set]),
            _ => None,
        };
        if let Some(t) = tally {
            t.add(1);
        }
        let r = {
            let _g = self.lock.enter();
            post()
        };
        if let (Some(t), true) = (tally, r.is_err()) {
            t.sub(1);
        }
        r
    }

    /// The domain.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }
}

// SAFETY: `poll` reports the count `fi_cq_read` returned into the
// slice it was given (at most its length), each entry converted and
// written before the count is returned (`read_queue`).
unsafe impl<L: DomainLock> Transport for OfiTransport<L> {
    type Desc = Desc;
    type Region = OfiRegion;

    fn facts(&self) -> &Facts {
        &self.facts
    }

    fn address_entries(&self) -> usize {
        self.addrs.len()
    }

    fn connect(&mut self, names: &[Vec<u8>]) -> Result<(), Error> {
        let per = EPS * self.nsets;
        if self.own_only {
            let b = names.get(self.rank).ok_or(Error::Published {
                rank: self.rank,
                what: "set of endpoint names",
            })?;
            let own = unpack_names(self.rank, per, b)?;
            let _g = self.lock.enter();
            let got = self.av.insert(&own)?;
            self.addrs = vec![sys::FI_ADDR_NOTAVAIL_VALUE; names.len() * per];
            self.addrs[self.rank * per..(self.rank + 1) * per].copy_from_slice(&got);
            return Ok(());
        }
        let mut all: Vec<&[u8]> = Vec::with_capacity(names.len() * per);
        for (r, b) in names.iter().enumerate() {
            all.extend(unpack_names(r, per, b)?);
        }
        let _g = self.lock.enter();
        self.addrs = self.av.insert(&all)?;
        Ok(())
    }

    fn keep_alive(&mut self, set: usize, mem: Arc<Mapping>) {
        for ep in &self.sets[set].eps {
            ep.hold(mem.clone());
        }
    }

    fn register(&self, mem: &Arc<Mapping>, access: Access) -> Result<Vec<OfiRegion>, Error> {
        let bits = match access {
            Access::LocalRead => sys::FI_WRITE | sys::FI_READ,
            Access::Remote => {
                sys::FI_REMOTE_READ | sys::FI_REMOTE_WRITE | sys::FI_READ | sys::FI_WRITE
            }
        } as u64;
        let _g = self.lock.enter();
        let mut out = Vec::new();
        let bound: Vec<Option<&Endpoint>> = if self.facts.mr_endpoint {
            self.sets
                .iter()
                .map(|s| Some(&s.eps[ep_index(Ep::Rma)]))
                .collect()
        } else {
            vec![None]
        };
        for ep in bound {
            let key = self.next_key.fetch_add(1, Ordering::Relaxed);
            out.push(MemoryRegion::register(
                &self.domain,
                mem.clone(),
                bits,
                key,
                ep,
            )?);
        }
        Ok(out)
    }

    #[inline]
    fn inject(&self, set: usize, ep: Ep, bytes: &[u8], dest: usize) -> Result<(), PostError> {
        let to = self.addr(dest, set, ep)?;
        self.expect_reply(set, ep);
        let _g = self.lock.enter();
        // SAFETY: calls are serialised as the domain's threading level
        // requires (the lock, or a transport that is not Sync); inject
        // copies the bytes before returning.
        unsafe { self.sets[set].eps[self.from(ep)].inject(bytes, to) }.map_err(post_error)
    }

    #[inline]
    unsafe fn send(
        &self,
        set: usize,
        ep: Ep,
        buf: *const u8,
        len: usize,
        dest: usize,
        ctx: Context,
    ) -> Result<(), PostError> {
        let to = self.addr(dest, set, ep)?;
        let from = self.from(ep);
        self.expect_reply(set, ep);
        self.counted(set, from, || {
            // SAFETY: buffer lifetime per this function's contract;
            // the closure runs inside the domain lock.
            unsafe {
                self.sets[set].eps[from].send(buf, len, to, ctx.encode() as *mut libc::c_void)
            }
            .map_err(post_error)
        })
    }

    #[inline]
    unsafe fn post_recv(
        &self,
        set: usize,
        ep: Ep,
        buf: *mut u8,
        len: usize,
        ctx: Context,
        multi: bool,
    ) -> Result<(), PostError> {
        let flags = if multi { sys::FI_MULTI_RECV as u64 } else { 0 };
        let _g = self.lock.enter();
        // SAFETY: buffer lifetime and exclusivity per this function's
        // contract (the memory is held by the endpoint); threading as in
        // inject.
        unsafe {
            self.ep(set, ep)
                .recv_msg(buf, len, ctx.encode() as *mut libc::c_void, flags)
        }
        .map_err(post_error)
    }

    #[inline]
    unsafe fn write(
        &self,
        set: usize,
        dest: usize,
        src: *const u8,
        len: usize,
        desc: Option<Desc>,
        remote: rma::plan::Remote,
        ctx: Context,
        inject: bool,
    ) -> Result<(), PostError> {
        let to = self.addr(dest, set, self.rma_peer)?;
        let mut flags = (sys::FI_DELIVERY_COMPLETE | sys::FI_COMPLETION) as u64;
        if inject {
            flags |= sys::FI_INJECT as u64;
        }
        let desc = desc.map_or(std::ptr::null_mut(), |d| d.0);
        self.counted(set, ep_index(Ep::Rma), || {
            // SAFETY: source lifetime per this function's contract (FI_INJECT
            // copies it now); the remote range was checked against the target's
            // segment by the caller; the closure runs inside the domain lock.
            unsafe {
                self.ep(set, Ep::Rma).write_msg(
                    src,
                    len,
                    desc,
                    to,
                    remote.addr,
                    remote.key,
                    ctx.encode() as *mut libc::c_void,
                    0,
                    flags,
                )
            }
            .map_err(post_error)
        })
    }

    #[inline]
    unsafe fn read(
        &self,
        set: usize,
        from: usize,
        dst: *mut u8,
        len: usize,
        desc: Option<Desc>,
        remote: rma::plan::Remote,
        ctx: Context,
    ) -> Result<(), PostError> {
        let src = self.addr(from, set, self.rma_peer)?;
        let desc = desc.map_or(std::ptr::null_mut(), |d| d.0);
        self.counted(set, ep_index(Ep::Rma), || {
            // SAFETY: destination lifetime per this function's contract;
            // the closure runs inside the domain lock.
            unsafe {
                self.ep(set, Ep::Rma).read_msg(
                    dst,
                    len,
                    desc,
                    src,
                    remote.addr,
                    remote.key,
                    ctx.encode() as *mut libc::c_void,
                    // A read's completion means its data is here; asking for
                    // FI_DELIVERY_COMPLETE as well (the endpoint's default
                    // for writes) makes shm route the read through the
                    // target's command queue instead of reading by CMA in
                    // the call (1 MiB: 91 instead of 168 us).
                    sys::FI_COMPLETION as u64,
                )
            }
            .map_err(post_error)
        })
    }

    fn atomic_valid(&self, set: usize, ty: AtomicType, native: Native) -> bool {
        if !self.facts.atomic {
            return false;
        }
        let _g = self.lock.enter();
        self.ep(set, Ep::Rma)
            .atomic_valid(call(native.call), datatype(ty), fi_op(native.op))
    }

    #[inline]
    unsafe fn atomic(
        &self,
        set: usize,
        dest: usize,
        ty: AtomicType,
        native: Native,
        bufs: *mut AtomicBufs,
        remote: rma::plan::Remote,
        ctx: Context,
    ) -> Result<(), PostError> {
        // SAFETY: the caller's buffers, valid until the completion.
        let (operand, compare, result, io) = unsafe {
            (
                (*bufs).operand.as_ptr(),
                (*bufs).compare.as_ptr(),
                (*bufs).result.as_mut_ptr(),
                std::ptr::addr_of_mut!((*bufs).io),
            )
        };
        let a = AtomicArgs {
            call: call(native.call),
            datatype: datatype(ty),
            op: fi_op(native.op),
            operand,
            compare,
            result,
            dest: self.addr(dest, set, self.rma_peer)?,
            addr: remote.addr,
            key: remote.key,
            context: ctx.encode() as *mut libc::c_void,
            flags: (sys::FI_DELIVERY_COMPLETE | sys::FI_COMPLETION) as u64,
        };
        self.counted(set, ep_index(Ep::Rma), || {
            // SAFETY: the buffers per this function's contract; the remote
            // element was checked against the target's segment by the caller;
            // the closure runs inside the domain lock.
            unsafe { self.ep(set, Ep::Rma).atomic(&a, io) }.map_err(post_error)
        })
    }

    unsafe fn rma_vec(
        &self,
        set: usize,
        peer: usize,
        write: bool,
        v: &mut crate::ofi::RmaVec,
        ctx: Context,
    ) -> Result<(), PostError> {
        let to = self.addr(peer, set, self.rma_peer)?;
        let flags = if write {
            (sys::FI_DELIVERY_COMPLETE | sys::FI_COMPLETION) as u64
        } else {
            sys::FI_COMPLETION as u64
        };
        self.counted(set, ep_index(Ep::Rma), || {
            // SAFETY: per this function's contract; the closure runs
            // inside the domain lock.
            unsafe {
                self.ep(set, Ep::Rma).rma_vec(
                    write,
                    v,
                    to,
                    ctx.encode() as *mut libc::c_void,
                    flags,
                )
            }
            .map_err(post_error)
        })
    }

    unsafe fn write_landing(
        &self,
        set: usize,
        ep: Ep,
        dest: usize,
        v: &mut crate::ofi::RmaVec,
        data: u64,
        ctx: Context,
    ) -> Result<(), PostError> {
        let to = self.addr(dest, set, ep)?;
        v.set_data(data);
        let flags = sys::FI_COMPLETION as u64 | sys::FI_REMOTE_CQ_DATA as u64 | self.msg_completion;
        let from = self.from(ep);
        self.expect_reply(set, ep);
        self.counted(set, from, || {
            // SAFETY: per this function's contract; the closure runs
            // inside the domain lock.
            unsafe {
                self.sets[set].eps[from].rma_vec(
                    true,
                    v,
                    to,
                    ctx.encode() as *mut libc::c_void,
                    flags,
                )
            }
            .map_err(post_error)
        })
    }

    #[inline(always)]
    fn poll(
        &self,
        set: usize,
        cq: Cq,
        out: &mut [MaybeUninit<Completion>],
    ) -> Result<Polled, Error> {
        let s = &self.sets[set];
        match cq {
            Cq::Rx(Side::Reply) if self.quiet => self.poll_quiet_reply(set, out),
            Cq::Rx(side) => self.read_queue(&s.rx[side.index()], true, out),
            Cq::Tx => self.poll_tx(set, out),
        }
    }
}
