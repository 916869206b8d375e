//! Sending an Active Message: the path comes from `am::send`, this module
//! carries it out (loopback queue, inject, or a pooled send buffer; for a
//! Long above the inline limit, the payload's RMA write first).

use super::receive::Queued;
use super::{Core, EpSet, Progress, LOOPBACK_MAX};
use crate::client::error::Error;
use crate::client::stats::kind_index;
use crate::sync::{Counter, Lock, Mode};
use crate::transport::{Context, PostError, Side, Transport};
use ::rma::ops::Implicit;
use am::send::{Category, LongPath, Plan, Request, Route};
use am::wire;
use std::cell::RefCell;

/// Messages up to this size are encoded on the stack before an inject.
const STACK_MSG: usize = 128;

/// What `plan_other` decided.
enum Other {
    /// Send this plan's message.
    Send(Plan),
    /// Sent already (a Long in one message).
    Sent,
    /// Immediate mode, and the send would block.
    Blocked,
}

thread_local! {
    /// Encoding space for larger injected messages.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Send an AM from `side`'s endpoint of set `set`. Returns `Ok(false)`
    /// only in immediate mode, when no send resource was free now (or a
    /// Long would need its RMA write). Waits make `wait` progress.
    #[allow(clippy::too_many_arguments)]
    pub fn send_am(
        &self,
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
        if let Some(sh) = &self.pshm {
            if let Some(index) = sh.peer(dest).filter(|_| dest != self.rank) {
                return self.send_shared(
                    sh,
                    index,
                    set,
                    side,
                    dest,
                    category,
                    handler,
                    args,
                    payload,
                    dest_offset,
                    immediate,
                    wait,
                );
            }
        }
        if category == Category::Short
            && args.len() <= am::MAX_ARGS
            && dest < self.limits.size
            && dest != self.rank
        {
            if let Some(sent) = self.inject_short(set, side, dest, handler, args) {
                return sent;
            }
        }
        let quick = self.limits.plan_injected(
            dest,
            category,
            side == Side::Request,
            handler,
            args.len(),
            payload.len(),
        );
        let s = &self.sets[set];
        let plan = match quick {
            Some(p) => p,
            None => {
                match self.plan_other(
                    set,
                    side,
                    dest,
                    category,
                    handler,
                    args,
                    payload,
                    dest_offset,
                    immediate,
                    wait,
                )? {
                    Other::Send(p) => p,
                    Other::Sent => return Ok(true),
                    Other::Blocked => return Ok(false),
                }
            }
        };
        if self.try_send(s, side, dest, &plan, args, payload, dest_offset)? {
            Self::count_sent(s, side, plan.header.kind);
            return Ok(true);
        }
        if immediate {
            return Ok(false);
        }
        self.send_waiting(set, side, dest, &plan, args, payload, dest_offset, wait)
    }

    /// The common message over the provider: a Short to another rank of
    /// the job, injected with no plan (`plan_injected` would decide the
    /// same: its header and length follow from the count alone). `None`
    /// when it does not fit the provider's inject limit or the provider
    /// takes no more now: the caller goes the general way (which plans,
    /// retries and waits).
    #[inline(always)]
    fn inject_short(
        &self,
        set: usize,
        side: Side,
        dest: usize,
        handler: u8,
        args: &[u32],
    ) -> Option<Result<bool, Error>> {
        const MAX_SHORT: usize = wire::message_len(wire::Kind::Short, am::MAX_ARGS, 0);
        let len = wire::message_len(wire::Kind::Short, args.len(), 0);
        if len > self.limits.inject_limit {
            return None;
        }
        // The same literal as `send_shared`'s: built through a shared
        // helper it cost the ring path 25 instructions a send (callgrind).
        let header = wire::Header {
            kind: wire::Kind::Short,
            nargs: args.len() as u8,
            is_request: side == Side::Request,
            handler,
            src: self.rank as u32,
        };
        let mut b = [0u8; MAX_SHORT];
        wire::encode_into(&mut b, &header, args, None, 0, &[]);
        let s = &self.sets[set];
        let r = self.tp.inject(s.index, side.ep(), &b[..len], dest);
        match Self::inject_outcome(s, r) {
            Ok(true) => {
                Self::count_sent(s, side, wire::Kind::Short);
                Some(Ok(true))
            }
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// The plan of what `plan_injected` leaves (Longs, messages to self,
    /// buffered sends, bad requests). A Long above the inline limit goes
    /// here in one message where the destination keeps a landing slot for
    /// it ([`Other::Sent`]), else its payload is written here first.
    /// [`Other::Blocked`]: an immediate Long that would block (a no-op, as
    /// in the reference; in one message it is sent when a slot is free and
    /// the provider takes the write at once).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn plan_other(
        &self,
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
    ) -> Result<Other, Error> {
        let long_target = (category == Category::Long).then(|| {
            let size = self
                .segment
                .get()
                .filter(|_| dest < self.size)
                .map(|g| g.peer(set, dest).size);
            (dest_offset, size)
        });
        let plan = self.limits.plan(&Request {
            dest,
            category,
            is_request: side == Side::Request,
            handler,
            nargs: args.len(),
            payload_len: payload.len(),
            long_target,
        })?;
        let s = &self.sets[set];
        match plan.long {
            Some(LongPath::Rma) => {
                if self.send_landing(
                    set,
                    side,
                    dest,
                    &plan,
                    args,
                    payload,
                    dest_offset,
                    immediate,
                    wait,
                )? {
                    Self::count_sent(s, side, plan.header.kind);
                    return Ok(Other::Sent);
                }
                if immediate {
                    // Put-then-send waits for the write's delivery.
                    return Ok(Other::Blocked);
                }
                self.write_long_payload(set, dest, dest_offset, payload, wait)?;
                s.stats.long_rma.add(1);
            }
            Some(LongPath::Inline) => s.stats.long_inline.add(1),
            Some(LongPath::Copy) | None => {}
        }
        Ok(Other::Send(plan))
    }

    /// Count a message of `kind` sent from `side` of set `s`.
    #[inline(always)]
    pub(super) fn count_sent(s: &EpSet<M>, side: Side, kind: wire::Kind) {
        let sent = if side == Side::Request {
            &s.stats.requests_sent
        } else {
            &s.stats.replies_sent
        };
        sent[kind_index(kind)].add(1);
    }

    /// What an inject's answer means: sent (`Ok(true)`, counted), refused
    /// for now (`Ok(false)`, counted as a retry), or an error.
    #[inline(always)]
    fn inject_outcome(s: &EpSet<M>, r: Result<(), PostError>) -> Result<bool, Error> {
        match r {
            Ok(()) => {
                s.stats.injected.add(1);
                Ok(true)
            }
            Err(PostError::Again) | Err(PostError::NoMemory) => {
                s.stats.eagain_retries.add(1);
                Ok(false)
            }
            Err(PostError::Failed(e)) => Err(e.into()),
        }
    }

    /// No send resource was free: make progress until one is. Whatever
    /// else progress meets waits for the next poll: this message is sent (a
    /// barrier step or a Long's header after its payload must not be
    /// dropped half-way).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn send_waiting(
        &self,
        set: usize,
        side: Side,
        dest: usize,
        plan: &Plan,
        args: &[u32],
        payload: &[u8],
        dest_offset: usize,
        wait: Progress,
    ) -> Result<bool, Error> {
        let s = &self.sets[set];
        loop {
            self.progress_within(set, wait)?;
            if wait == Progress::Full {
                // A peer's exit: nobody may receive this any more.
                self.exit_if_requested()?;
            }
            if self.try_send(s, side, dest, plan, args, payload, dest_offset)? {
                Self::count_sent(s, side, plan.header.kind);
                return Ok(true);
            }
        }
    }

    /// A Long's payload, written into `dest`'s segment before its header
    /// is sent. The payload is borrowed for this call, which returns only
    /// once the write is over.
    fn write_long_payload(
        &self,
        set: usize,
        dest: usize,
        offset: usize,
        payload: &[u8],
        wait: Progress,
    ) -> Result<(), Error> {
        // `start_transfer` tries the shared-memory copy first.
        let op = self.start_transfer(
            set,
            dest,
            offset,
            super::Local::Write(payload.as_ptr()),
            payload.len(),
            Implicit::No,
            false,
            wait,
        )?;
        self.wait_op(set, op, wait, "AM Long payload write", "to", dest)
    }

    /// One attempt; `Ok(false)` when it would block (no buffer, a full
    /// loopback queue, or -FI_EAGAIN).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn try_send(
        &self,
        s: &EpSet<M>,
        side: Side,
        dest: usize,
        plan: &Plan,
        args: &[u32],
        payload: &[u8],
        dest_offset: usize,
    ) -> Result<bool, Error> {
        let inline: &[u8] = if plan.payload_inline { payload } else { &[] };
        let off = (plan.header.kind == wire::Kind::Long
            || plan.header.kind == wire::Kind::LongInline)
            .then_some(dest_offset as u64);
        match plan.route {
            // Only `send_shared` plans the shared route.
            Route::Shared => Err(Error::Pshm(format!(
                "an AM to rank {dest} was planned through shared memory outside the shared path"
            ))),
            Route::Loopback => {
                let mut q = s.queue[side.index()].lock();
                if q.len() >= LOOPBACK_MAX {
                    return Ok(false);
                }
                let mut m = Vec::new();
                wire::encode(&mut m, &plan.header, args, off, payload.len(), inline);
                q.push_back(Queued::Loopback(m));
                s.stats.loopback.add(1);
                Ok(true)
            }
            Route::Inject => {
                let r = if plan.len <= STACK_MSG {
                    let mut b = [0u8; STACK_MSG];
                    wire::encode_into(&mut b, &plan.header, args, off, payload.len(), inline);
                    self.tp.inject(s.index, side.ep(), &b[..plan.len], dest)
                } else {
                    SCRATCH.with(|sc| {
                        let mut sc = sc.borrow_mut();
                        if sc.len() < plan.len {
                            sc.resize(plan.len, 0);
                        }
                        encode_plan(&mut sc, plan, args, off, payload, inline);
                        self.tp.inject(s.index, side.ep(), &sc[..plan.len], dest)
                    })
                };
                Self::inject_outcome(s, r)
            }
            Route::Buffered => {
                let pool = &s.pools[side.index()];
                let Some(buf) = pool.lock().take() else {
                    return Ok(false);
                };
                let Some(p) = s.send_ptr(side, buf) else {
                    pool.lock().give(buf);
                    return Err(Error::UnknownContext {
                        value: Context::Send { side, buf }.encode(),
                    });
                };
                // SAFETY: buffer `buf` lies in the pool's mapping (checked by
                // send_ptr) and belongs to this call alone until its send
                // completes: the pool hands each index to one taker, and it
                // comes back only through the completion below.
                let bytes = unsafe { std::slice::from_raw_parts_mut(p, s.send_bytes) };
                encode_plan(bytes, plan, args, off, payload, inline);
                // SAFETY: the buffer stays untouched until the completion
                // carrying this context returns it to the pool, and the
                // mapping is held by the set's endpoints.
                let r = unsafe {
                    self.tp.send(
                        s.index,
                        side.ep(),
                        p,
                        plan.len,
                        dest,
                        Context::Send { side, buf },
                    )
                };
                match r {
                    Ok(()) => {
                        s.stats.sent_from_buffer.add(1);
                        Ok(true)
                    }
                    Err(e) => {
                        pool.lock().give(buf);
                        match e {
                            PostError::Again | PostError::NoMemory => {
                                s.stats.eagain_retries.add(1);
                                Ok(false)
                            }
                            PostError::Failed(e) => Err(e.into()),
                        }
                    }
                }
            }
        }
    }
}

/// `wire::encode_into` for a planned message, with the inline payload
/// copied by the conduit's own copy (`crate::copy`, which avoids glibc's
/// slow case between 4 KiB-aliased buffers); returns the message length.
#[inline(always)]
pub(super) fn encode_plan(
    out: &mut [u8],
    plan: &Plan,
    args: &[u32],
    off: Option<u64>,
    payload: &[u8],
    inline: &[u8],
) -> usize {
    wire::encode_into_with(
        out,
        &plan.header,
        args,
        off,
        payload.len(),
        inline,
        crate::copy::copy_slice,
    )
}
