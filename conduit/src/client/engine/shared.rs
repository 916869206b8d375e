//! The shared-memory path in the engine (see [`crate::pshm`]): AMs to the
//! ranks of this supernode go into their rings, the rings sent to this rank
//! are read by progress, and RMA with a supernode rank is a memory copy.

use super::progress::{keep, Fault};
use super::{Core, Local, Progress};
use crate::client::error::Error;
use crate::copy::copy_bytes;
use crate::pshm::ring::{Record, Ring};
use crate::pshm::Shared;
use crate::sync::{Counter, Lock, Mode};
use crate::transport::{Side, Transport};
use am::send::{Category, LongPath, Plan, Request};
use am::wire::Header;
use am::wire::{self, Kind};
use std::cell::Cell;

/// A read of an inbox in progress on this thread: its lock, and the ring
/// record whose handler runs now. Reads nest (a handler's call into the
/// client may read another inbox), innermost first through `outer`.
///
/// A handler that ends the job (`gasnet_exit`, [`Core::exit_process`])
/// never returns to the read that called it, which still holds the inbox's
/// try-lock and the record: the exit must read that inbox for its peers'
/// exit messages. [`abandon_reads`] releases the records and marks the
/// reads abandoned, and a later read of the same inbox on this thread goes
/// ahead without the lock (this thread is still the one consumer).
struct Reading {
    lock: *const (),
    ring: Cell<*const Ring>,
    rec: Cell<Option<Record>>,
    abandoned: Cell<bool>,
    outer: *const Reading,
}

thread_local! {
    /// This thread's innermost [`Reading`] (null when none).
    static READING: Cell<*const Reading> = const { Cell::new(std::ptr::null()) };
}

/// Whether an abandoned read on this thread holds the inbox `lock`.
fn abandoned_by_this_thread(lock: *const ()) -> bool {
    let mut p = READING.with(Cell::get);
    while !p.is_null() {
        // SAFETY: the chain holds readings of frames still on this
        // thread's stack (each `Enter` unlinks its own before returning).
        let r = unsafe { &*p };
        if r.lock == lock && r.abandoned.get() {
            return true;
        }
        p = r.outer;
    }
    false
}

/// Release the ring records whose handlers run on this thread and mark
/// their reads abandoned: for an exit from inside a handler, which never
/// returns to them (see [`Reading`]). Returns whether a record was
/// released: its bytes, which the handlers' payloads still point into,
/// are the producer's again, so the caller must never return or unwind
/// into those handlers ([`NeverResume`]).
pub(crate) fn abandon_reads() -> bool {
    let mut released = false;
    let mut p = READING.with(Cell::get);
    while !p.is_null() {
        // SAFETY: as in `abandoned_by_this_thread`.
        let r = unsafe { &*p };
        if !r.abandoned.replace(true) {
            if let Some(rec) = r.rec.take() {
                // SAFETY: `rec` is `ring`'s latest peek, by this thread,
                // the ring's one consumer; its handler never resumes.
                unsafe { (*r.ring.get()).release(rec) }
                released = true;
            }
        }
        p = r.outer;
    }
    released
}

/// Held by an exit from inside a handler whose ring record
/// [`abandon_reads`] released, across the rest of the exit: the process
/// must end there. Ending it normally never drops this; an unwind (a
/// panic in the exit, or an `end` that unwinds, as a test's may) would
/// return into handlers whose payloads point into bytes a peer may be
/// rewriting, so the drop aborts instead.
pub(crate) struct NeverResume;

impl Drop for NeverResume {
    fn drop(&mut self) {
        gex_env::eprintln_whole!(
            "ofi-conduit: an exit from inside a handler unwound after releasing the \
             handler's shared-memory message; aborting"
        );
        std::process::abort();
    }
}

/// Links a [`Reading`] into this thread's chain until dropped.
struct Enter<'a>(&'a Reading);

impl<'a> Enter<'a> {
    #[inline]
    fn new(r: &'a Reading) -> Self {
        READING.with(|c| c.set(r));
        Enter(r)
    }
}

impl Drop for Enter<'_> {
    #[inline]
    fn drop(&mut self) {
        READING.with(|c| c.set(self.0.outer));
    }
}

/// Releases the record being handled when dropped: after its handler
/// returned, or while the handler's panic unwinds (the message counts as
/// consumed); not when an exit abandoned the read and released it.
struct Release<'a>(&'a Reading);

impl Drop for Release<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some(rec) = self.0.rec.take() {
            // SAFETY: `rec` is the ring's latest peek, by this consumer
            // (the inbox try-lock, or an abandoned read's, is held around
            // the whole read).
            unsafe { (*self.0.ring.get()).release(rec) }
        }
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Send an AM to `dest`, member `index` of this supernode and another
    /// rank than this one (the caller looked it up), through its ring.
    /// Same contract as `send_am`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn send_shared(
        &self,
        sh: &Shared<M>,
        index: usize,
        set: usize,
        side: Side,
        dest: usize,
        category: Category,
        handler: u8,
        args: &[u32],
        payload: &[u8],
        dest_offset: usize,
        immediate: bool,
        wait: Progress,
    ) -> Result<bool, Error> {
        debug_assert!(dest < self.limits.size && dest != self.rank);
        if category == Category::Short && args.len() <= am::MAX_ARGS {
            // The common message: its header and length need no plan
            // (`plan_shared_small` would decide the same: the peer is
            // another rank of the job, and the count is within bounds).
            let header = Header {
                kind: Kind::Short,
                nargs: args.len() as u8,
                is_request: side == Side::Request,
                handler,
                src: self.rank as u32,
            };
            if side == Side::Request
                && handler >= am::handlers::CLIENT_BASE
                && self.send_in_lane(sh, index, set, &header, args)
            {
                return Ok(true);
            }
            let len = wire::message_len(Kind::Short, args.len(), 0);
            return self.push_shared(
                sh,
                index,
                set,
                side,
                len,
                immediate,
                wait,
                |buf| {
                    wire::encode_into(buf, &header, args, None, 0, &[]);
                },
                Kind::Short,
                false,
            );
        }
        let plan = match self.limits.plan_shared_small(
            dest,
            category,
            side == Side::Request,
            handler,
            args.len(),
            payload.len(),
        ) {
            Some(p) => p,
            None => self.plan_shared_other(
                set,
                side,
                dest,
                category,
                handler,
                args,
                payload,
                dest_offset,
            )?,
        };
        let long_dst = if plan.long == Some(LongPath::Copy) && !payload.is_empty() {
            match sh.segment_range(dest, dest_offset, payload.len()) {
                Some(r) => Some(r?),
                None => return Err(Error::NoSegment),
            }
        } else {
            None
        };
        let inline: &[u8] = if plan.payload_inline { payload } else { &[] };
        let off =
            matches!(plan.header.kind, Kind::Long | Kind::LongInline).then_some(dest_offset as u64);
        self.push_shared(
            sh,
            index,
            set,
            side,
            plan.len,
            immediate,
            wait,
            |buf| {
                if let Some(dst) = long_dst {
                    // SAFETY: `dst..dst+len` lies in `dest`'s segment as
                    // mapped here (segment_range checked it); the payload
                    // is the caller's slice. `copy` allows overlap.
                    unsafe { copy_bytes(payload.as_ptr(), dst, payload.len()) };
                }
                super::send::encode_plan(buf, &plan, args, off, payload, inline);
            },
            plan.header.kind,
            plan.long.is_some(),
        )
    }

    /// Push a message of `len` bytes, written by `fill` (called once, when
    /// there is room), into peer `index`'s ring, waiting with `wait`
    /// progress while the ring is full (unless `immediate`); counts it as
    /// a message of `kind` (`long`: its payload was copied into the
    /// peer's segment).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn push_shared(
        &self,
        sh: &Shared<M>,
        index: usize,
        set: usize,
        side: Side,
        len: usize,
        immediate: bool,
        wait: Progress,
        mut fill: impl FnMut(&mut [u8]),
        kind: Kind,
        long: bool,
    ) -> Result<bool, Error> {
        loop {
            if sh.push(set, side, index, len, &mut fill) {
                let s = &self.sets[set];
                Self::count_sent(s, side, kind);
                s.stats.shared_sent.add(1);
                if long {
                    s.stats.shared_rma.add(1);
                }
                return Ok(true);
            }
            if immediate {
                return Ok(false);
            }
            self.progress_within(set, wait)?;
            if wait == Progress::Full {
                // A peer's exit: nobody may receive this any more.
                self.exit_if_requested()?;
            }
        }
    }

    /// The shared plan of what `plan_shared_small` leaves (Longs, bad
    /// requests).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn plan_shared_other(
        &self,
        set: usize,
        side: Side,
        dest: usize,
        category: Category,
        handler: u8,
        args: &[u32],
        payload: &[u8],
        dest_offset: usize,
    ) -> Result<Plan, Error> {
        let long_target = (category == Category::Long).then(|| {
            let size = self.segment.get().map(|g| g.peer(set, dest).size);
            (dest_offset, size)
        });
        Ok(self.limits.plan_shared(&Request {
            dest,
            category,
            is_request: side == Side::Request,
            handler,
            nargs: args.len(),
            payload_len: payload.len(),
            long_target,
        })?)
    }

    /// Read the rings sent to this rank for `set` and `side` and run their
    /// handlers; nothing is read when another thread is reading them.
    #[inline(always)]
    pub(super) fn poll_shared(
        &self,
        sh: &Shared<M>,
        set: usize,
        side: Side,
        seen: &mut usize,
    ) -> Result<(), Fault> {
        let (rings, lock) = sh.inbox(set, side);
        // SAFETY: in single-threaded mode the one thread is the rings'
        // consumer in this process (a handler's nested poll is the same
        // thread); in multi-threaded mode the check waits for the lock
        // (`drain_shared`).
        if !M::PAR && rings.iter().all(|r| unsafe { r.is_empty() }) {
            return Ok(());
        }
        self.drain_shared(rings, lock, set, side, seen)
    }

    /// At most a batch of messages from each ring; handlers run on the
    /// bytes in place, and a record is released once its handler returned.
    #[inline(never)]
    fn drain_shared(
        &self,
        rings: &[Ring],
        lock: &M::Lock<()>,
        set: usize,
        side: Side,
        seen: &mut usize,
    ) -> Result<(), Fault> {
        let lock_addr = (lock as *const M::Lock<()>).cast::<()>();
        // Held to the end of the drain (dropped after `_enter` and
        // `reading`): this thread is the rings' one consumer.
        let consumer = lock.try_lock();
        if consumer.is_none() && !abandoned_by_this_thread(lock_addr) {
            return Ok(());
        }
        // SAFETY: the try-lock (or this thread's abandoned read, which
        // holds it) makes this thread the rings' one consumer.
        if M::PAR && rings.iter().all(|r| unsafe { r.is_empty() }) {
            return Ok(());
        }
        let reading = Reading {
            lock: lock_addr,
            ring: Cell::new(std::ptr::null()),
            rec: Cell::new(None),
            abandoned: Cell::new(false),
            outer: READING.with(Cell::get),
        };
        let _enter = Enter::new(&reading);
        let mut first = None;
        for ring in rings {
            reading.ring.set(ring);
            for _ in 0..self.batch {
                // SAFETY: the try-lock (or an abandoned read of this
                // thread's that holds it) makes this thread the rings' one
                // consumer in this process, and only this rank reads its
                // inbox.
                let rec = match unsafe { ring.peek() } {
                    Ok(Some(rec)) => rec,
                    Ok(None) => break,
                    Err(e) => {
                        keep(&mut first, Err(Error::Pshm(e.to_string())));
                        break;
                    }
                };
                *seen += 1;
                reading.rec.set(Some(rec));
                let release = Release(&reading);
                // SAFETY: the record's bytes stay untouched by the producer
                // until `release` drops, or until an exit from inside its
                // handler releases it (`abandon_reads`), after which the
                // handler never resumes (`NeverResume`).
                let bytes = unsafe { std::slice::from_raw_parts(rec.ptr, rec.len) };
                keep(&mut first, self.dispatch(set, side, bytes));
                drop(release);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Where `offset..offset + len` of `rank`'s segment is mapped here:
    /// a member of this supernode's (the shared-memory path), or this
    /// rank's own (whether or not the path is on); `Some(Err)` for a range
    /// outside the segment, `None` when only the provider reaches it.
    #[inline]
    pub(super) fn mapped_range(
        &self,
        rank: usize,
        offset: usize,
        len: usize,
    ) -> Option<Result<*mut u8, Error>> {
        if let Some(r) = self
            .pshm
            .as_ref()
            .and_then(|sh| sh.segment_range(rank, offset, len))
        {
            return Some(r);
        }
        if rank != self.rank {
            return None;
        }
        Some(self.own_segment().and_then(|g| g.range(offset, len)))
    }

    /// A put or get with `rank`'s segment done as a copy, when `rank` is in
    /// this supernode or is this rank (also with the shared-memory path
    /// off: a transfer within a rank is a copy whatever the settings, so
    /// overlapping ranges behave alike everywhere): `Some(Ok)` once the
    /// bytes are copied, `Some(Err)` for a range outside its segment,
    /// `None` when the provider must move them.
    ///
    /// Always inlined: out of line (its four callers left it so) a blocking
    /// 8-byte put through shared memory took 13 ns and a get 11 ns on an
    /// AMD EPYC machine, inlined 6 and 5 ns, and 8-byte NBI puts and gets
    /// ran 28% and 40% faster (docs/PERFORMANCE.md, "Same-host copies
    /// inlined").
    #[inline(always)]
    pub(super) fn copy_shared(
        &self,
        set: usize,
        rank: usize,
        offset: usize,
        local: Local,
        len: usize,
    ) -> Option<Result<(), Error>> {
        let p = match self.mapped_range(rank, offset, len)? {
            Ok(p) => p,
            Err(e) => return Some(Err(e)),
        };
        // SAFETY: `p..p+len` is inside `rank`'s segment as mapped here
        // (checked); the local side is the caller's memory, lent for the
        // call (every entry point's contract, as for a provider transfer).
        // `copy` allows overlap (a rank copying within its own segment).
        unsafe {
            match local {
                Local::Write(src) => copy_bytes(src, p, len),
                Local::Read(dst) => copy_bytes(p, dst, len),
            }
        }
        copied_fence(matches!(local, Local::Write(_)));
        // RMA_SHARED counts copies through the shared-memory path only (a
        // copy within this rank with the path off is not one).
        if self.pshm.is_some() {
            self.sets[set].stats.shared_rma.add(1);
        }
        Some(Ok(()))
    }

    /// One round when every rank of the job is in this supernode: nothing
    /// can arrive through the provider's AM queues and nothing is sent
    /// through them, so only the rings and the loopback queues are read.
    #[inline(always)]
    pub(super) fn progress_shared_only(
        &self,
        sh: &Shared<M>,
        set: usize,
        what: Progress,
    ) -> Result<(), Fault> {
        let s = &self.sets[set];
        let mut first = None;
        let mut seen = 0usize;
        if what == Progress::Full {
            keep(&mut first, self.poll_lane_requests(sh, set, &mut seen));
            keep(
                &mut first,
                self.poll_shared(sh, set, Side::Request, &mut seen),
            );
            if !s.queue[0].lock().is_empty() {
                self.run_queued(s, Side::Request, &mut seen, &mut first);
            }
        }
        keep(&mut first, self.poll_lane_answers(sh, set, &mut seen));
        keep(
            &mut first,
            self.poll_shared(sh, set, Side::Reply, &mut seen),
        );
        if !s.queue[1].lock().is_empty() {
            self.run_queued(s, Side::Reply, &mut seen, &mut first);
        }
        self.idle.after_poll(seen > 0);
        first.map_or(Ok(()), Err)
    }
}

/// The ordering a completed shared-memory copy owes later accesses, as
/// GASNet's `gasneti_sync_writes` / `gasneti_sync_reads`: after a put's
/// copy (`put`), a release fence, so a later put (a flag another rank
/// polls) is not seen before these bytes; after a get's copy, an acquire
/// fence, so later reads are not served before it (a flag got, then the
/// data it guards). On x86 both only stop the compiler from moving
/// accesses across them; weaker CPUs need the instruction.
#[inline(always)]
pub(super) fn copied_fence(put: bool) {
    use std::sync::atomic::{fence, Ordering};
    if put {
        fence(Ordering::Release);
    } else {
        fence(Ordering::Acquire);
    }
}
