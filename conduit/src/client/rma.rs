//! One-sided communication into the ranks' segments.
//!
//! * Blocking: [`Client::put`], [`Client::get`] and the value forms
//!   [`Client::put_u64`], [`Client::get_u64`] return when the data is at its
//!   destination.
//! * Non-blocking with an event, and implicit (NBI) operations with a sync,
//!   live in an [`RmaScope`] ([`Client::rma_scope`]). Buffers an operation
//!   reads or writes after the call returns are borrowed for the scope's
//!   `'env` lifetime, and the scope completes every operation it started
//!   before it returns, so no buffer can be reused or freed while the
//!   network still uses it, even if an event is dropped unwaited.
//! * Local completion of puts, as GASNet-EX's `lc_opt`: the `*_now` forms
//!   take the source for the call only (it may be reused on return: FI_INJECT
//!   up to the inject limit, bounce buffers up to `GASNET_OFI_BBUF_THRESHOLD`,
//!   otherwise the call blocks until remote completion, counted as
//!   NB_PUT_INJECT / NB_PUT_BOUNCE / NB_PUT_BLOCK); the `*_deferred` forms
//!   borrow the source until the scope ends.
//!
//! Remote ranges are checked against the target's segment on the initiator:
//! an out-of-range or overflowing request is an error and sends nothing.
//! Transfers larger than the provider's `max_msg_size` are split.

use super::core::{Core, TAG_RMA};
use super::error::AmError;
use super::Client;
use rma::ops::{Implicit, OpId};
use rma::put_path::{PutCounts, PutLimits, PutPath};
use std::marker::PhantomData;

/// Which implicit operations a sync waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NbiSync {
    /// Implicit puts.
    Puts,
    /// Implicit gets.
    Gets,
    /// Both.
    All,
}

/// An explicit operation's completion event. Waiting (or testing it done)
/// consumes it; an event dropped unwaited is completed when its scope ends.
#[derive(Debug)]
#[must_use = "wait for the event, or let the scope complete it"]
pub struct Event<'env> {
    id: OpId,
    _env: PhantomData<&'env ()>,
}

/// A scope for non-blocking RMA; see the module documentation.
pub struct RmaScope<'c, 'env> {
    client: &'c mut Client,
    started: Vec<OpId>,
    _env: PhantomData<&'env mut &'env ()>,
}

impl std::fmt::Debug for RmaScope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RmaScope")
            .field("started", &self.started.len())
            .finish()
    }
}

/// A finished operation's outcome as the API reports it (the failing
/// completion's details were logged when it was read).
fn op_result(r: Result<(), ()>) -> Result<(), AmError> {
    r.map_err(|()| AmError::Completion {
        what: "an RMA transfer",
        err: 0,
        prov_errno: 0,
        text: "see the preceding log line".into(),
    })
}

enum Local {
    Write(*const u8),
    Read(*mut u8),
}

impl Core {
    /// Check `offset..offset+len` against `rank`'s segment; returns the
    /// remote address to use and the key.
    fn remote(&self, rank: usize, offset: usize, len: usize) -> Result<(u64, u64), AmError> {
        self.check_rank(rank)?;
        let info = *self.peers.get(rank).ok_or(AmError::NoSegment)?;
        let fits = offset
            .checked_add(len)
            .is_some_and(|e| e as u64 <= info.size);
        if !fits {
            return Err(AmError::OutOfSegment {
                rank,
                offset,
                len,
                size: info.size as usize,
            });
        }
        let addr = if self.mr_virt_addr {
            info.base + offset as u64
        } else {
            offset as u64
        };
        Ok((addr, info.key))
    }

    /// Post one transfer of `op`; -FI_EAGAIN is answered by draining the TX
    /// CQ and replies (no request handlers run here) and retrying.
    #[allow(clippy::too_many_arguments)]
    fn post(
        &mut self,
        op: OpId,
        rank: usize,
        local: Local,
        len: usize,
        raddr: u64,
        key: u64,
        inject: bool,
        desc: *mut libc::c_void,
    ) -> Result<(), AmError> {
        let ctx = (((op.index as usize) << 2) | TAG_RMA) as *mut libc::c_void;
        let to = self.addr(rank, 2);
        loop {
            let r = match local {
                Local::Write(src) => {
                    let mut flags = (ofi_sys::FI_DELIVERY_COMPLETE | ofi_sys::FI_COMPLETION) as u64;
                    if inject {
                        flags |= ofi_sys::FI_INJECT as u64;
                    }
                    // SAFETY: the source stays valid until this transfer
                    // completes (caller's contract: FI_INJECT copies it now,
                    // bounce buffers stay out of the pool until the
                    // completion, other sources are borrowed for the scope or
                    // the blocking call); the remote range was checked.
                    unsafe {
                        self.rma_ep
                            .write_msg(src, len, to, raddr, key, ctx, 0, flags)
                    }
                }
                // SAFETY: as above, for the destination of a read.
                Local::Read(dst) => unsafe {
                    self.rma_ep.read(dst, len, desc, to, raddr, key, ctx)
                },
            };
            match r {
                Ok(()) => break,
                Err(e) if e.is_again() => {
                    self.stats.eagain_retries += 1;
                    self.poll_replies()?;
                }
                Err(e) => return Err(e.into()),
            }
        }
        self.rma_posts += 1;
        if self.rma_posts % self.rma_poll_freq == 0 {
            self.poll_tx()?;
        }
        Ok(())
    }

    /// Start `op`'s transfers of `len` bytes between `local` and
    /// `rank`:`offset`, split at `max_msg_size`.
    fn start_transfers(
        &mut self,
        rank: usize,
        offset: usize,
        local: Local,
        len: usize,
        implicit: Implicit,
        inject: bool,
    ) -> Result<OpId, AmError> {
        let (raddr, key) = self.remote(rank, offset, len)?;
        let max = self.max_rma.max(1);
        let n = len.div_ceil(max).max(1);
        let op = self.ops.start(n as u32, implicit);
        for i in 0..n {
            let at = i * max;
            let chunk = (len - at).min(max);
            let l = match local {
                // SAFETY (both arms): `at` is below `len`, the length of the
                // caller's buffer, so the pointer stays inside it.
                Local::Write(p) => Local::Write(unsafe { p.add(at) }),
                Local::Read(p) => Local::Read(unsafe { p.add(at) }),
            };
            if let Err(e) = self.post(
                op,
                rank,
                l,
                chunk,
                raddr + at as u64,
                key,
                inject,
                std::ptr::null_mut(),
            ) {
                let rel = self.ops.cancel_transfers(op, (n - i) as u32);
                for b in rel.bbufs {
                    let _ = self.bbufs.reclaim(b);
                }
                return Err(e);
            }
        }
        Ok(op)
    }

    /// A put whose source may be reused when this returns (the hierarchy).
    fn put_now(
        &mut self,
        rank: usize,
        offset: usize,
        src: &[u8],
        implicit: Implicit,
    ) -> Result<(OpId, PutPath), AmError> {
        let path = self.put_limits.choose(src.len(), self.bbufs.available());
        let path = match path {
            PutPath::Bounce(n) => {
                let size = self.bbufs.buffer_size();
                // Copy the source out, keeping (address, offset, length,
                // index) of each buffer; the buffers stay out of the pool
                // until the operation's completion returns them.
                let copied: Option<Vec<(*const u8, usize, usize, u32)>> =
                    self.bbufs.try_get_many(n).map(|bufs| {
                        bufs.into_iter()
                            .enumerate()
                            .map(|(i, mut b)| {
                                let at = i * size;
                                let chunk = (src.len() - at).min(size);
                                b.as_mut_slice()[..chunk].copy_from_slice(&src[at..at + chunk]);
                                (b.as_ptr(), at, chunk, b.into_index())
                            })
                            .collect()
                    });
                match copied {
                    Some(copied) => {
                        let (raddr, key) = match self.remote(rank, offset, src.len()) {
                            Ok(x) => x,
                            Err(e) => {
                                for (_, _, _, b) in &copied {
                                    let _ = self.bbufs.reclaim(*b);
                                }
                                return Err(e);
                            }
                        };
                        let op = self.ops.start(n as u32, implicit);
                        for (_, _, _, b) in &copied {
                            self.ops.attach_bbuf(op, *b);
                        }
                        let desc = self
                            .bbuf_mr
                            .as_ref()
                            .map_or(std::ptr::null_mut(), |m| m.desc());
                        for (i, (p, at, chunk, _)) in copied.into_iter().enumerate() {
                            if let Err(e) = self.post(
                                op,
                                rank,
                                Local::Write(p),
                                chunk,
                                raddr + at as u64,
                                key,
                                false,
                                desc,
                            ) {
                                let rel = self.ops.cancel_transfers(op, (n - i) as u32);
                                for b in rel.bbufs {
                                    let _ = self.bbufs.reclaim(b);
                                }
                                return Err(e);
                            }
                        }
                        self.put_counts.count(PutPath::Bounce(n));
                        return Ok((op, PutPath::Bounce(n)));
                    }
                    None => PutPath::Block,
                }
            }
            p => p,
        };
        self.put_counts.count(path);
        let op = self.start_transfers(
            rank,
            offset,
            Local::Write(src.as_ptr()),
            src.len(),
            implicit,
            path == PutPath::Inject,
        )?;
        if path == PutPath::Block {
            self.wait_op_core(op)?;
        }
        Ok((op, path))
    }

    /// Wait for `op` with TX and reply progress only.
    fn wait_op_core(&mut self, op: OpId) -> Result<(), AmError> {
        loop {
            match self.ops.state(op) {
                Some(r) => return op_result(r),
                None => self.poll_replies()?,
            }
        }
    }
}

impl Client {
    /// The put-path counters (NB_PUT_INJECT, NB_PUT_BOUNCE, NB_PUT_BLOCK).
    pub fn put_counts(&self) -> PutCounts {
        self.core.put_counts.snapshot()
    }

    fn wait_op(&mut self, op: OpId) -> Result<(), AmError> {
        loop {
            match self.core.ops.state(op) {
                Some(r) => {
                    self.core.ops.retire(op);
                    return op_result(r);
                }
                None => self.poll()?,
            }
        }
    }

    /// The put-path limits in effect: RMA inject limit (capped at the
    /// provider's), bounce-buffer threshold and size.
    pub fn put_limits(&self) -> PutLimits {
        self.core.put_limits
    }

    /// Blocking put: returns when `src` is in `rank`'s segment at `offset`.
    pub fn put(&mut self, rank: usize, offset: usize, src: &[u8]) -> Result<(), AmError> {
        self.not_in_handler_rma("put")?;
        let inject = src.len() <= self.core.put_limits.inject;
        let op = self.core.start_transfers(
            rank,
            offset,
            Local::Write(src.as_ptr()),
            src.len(),
            Implicit::No,
            inject,
        )?;
        self.wait_op(op)
    }

    /// Blocking get: returns when `dst` holds `rank`'s bytes at `offset`.
    pub fn get(&mut self, rank: usize, offset: usize, dst: &mut [u8]) -> Result<(), AmError> {
        self.not_in_handler_rma("get")?;
        let op = self.core.start_transfers(
            rank,
            offset,
            Local::Read(dst.as_mut_ptr()),
            dst.len(),
            Implicit::No,
            false,
        )?;
        self.wait_op(op)
    }

    /// Blocking put of one value.
    pub fn put_u64(&mut self, rank: usize, offset: usize, value: u64) -> Result<(), AmError> {
        self.put(rank, offset, &value.to_ne_bytes())
    }

    /// Blocking get of one value.
    pub fn get_u64(&mut self, rank: usize, offset: usize) -> Result<u64, AmError> {
        let mut b = [0u8; 8];
        self.get(rank, offset, &mut b)?;
        Ok(u64::from_ne_bytes(b))
    }

    fn not_in_handler_rma(&self, what: &'static str) -> Result<(), AmError> {
        if self.core.in_handler {
            return Err(AmError::InHandler(what));
        }
        Ok(())
    }

    /// Run `f` with a scope for non-blocking and implicit RMA. Every
    /// operation started in the scope is complete when this returns (also
    /// when `f` returns an error).
    pub fn rma_scope<'env, T>(
        &mut self,
        f: impl FnOnce(&mut RmaScope<'_, 'env>) -> Result<T, AmError>,
    ) -> Result<T, AmError> {
        self.not_in_handler_rma("rma_scope")?;
        let mut scope = RmaScope {
            client: self,
            started: Vec::new(),
            _env: PhantomData,
        };
        let r = f(&mut scope);
        let done = scope.finish();
        let t = r?;
        done?;
        Ok(t)
    }
}

impl<'env> RmaScope<'_, 'env> {
    fn event(&mut self, id: OpId) -> Event<'env> {
        self.started.push(id);
        Event {
            id,
            _env: PhantomData,
        }
    }

    /// Non-blocking put whose source may be reused when this returns
    /// (`lc_opt` "now"): the put hierarchy.
    pub fn put_nb(
        &mut self,
        rank: usize,
        offset: usize,
        src: &[u8],
    ) -> Result<Event<'env>, AmError> {
        let (op, _) = self.client.core.put_now(rank, offset, src, Implicit::No)?;
        Ok(self.event(op))
    }

    /// Non-blocking put that reads `src` until the operation completes
    /// (`lc_opt` "deferred"): `src` stays borrowed for the scope.
    pub fn put_nb_deferred(
        &mut self,
        rank: usize,
        offset: usize,
        src: &'env [u8],
    ) -> Result<Event<'env>, AmError> {
        let op = self.client.core.start_transfers(
            rank,
            offset,
            Local::Write(src.as_ptr()),
            src.len(),
            Implicit::No,
            false,
        )?;
        Ok(self.event(op))
    }

    /// Non-blocking put with an explicit local-completion event: returns
    /// `(remote completion, local completion)`. libfabric signals local and
    /// remote completion together, so the local event completes with the
    /// operation (or at once when the data was copied out by the hierarchy).
    pub fn put_nb_lc(
        &mut self,
        rank: usize,
        offset: usize,
        src: &'env [u8],
    ) -> Result<(Event<'env>, Event<'env>), AmError> {
        let (op, _) = self.client.core.put_now(rank, offset, src, Implicit::No)?;
        let remote = self.event(op);
        let local = Event {
            id: op,
            _env: PhantomData,
        };
        Ok((remote, local))
    }

    /// Non-blocking get into `dst`, borrowed for the scope.
    pub fn get_nb(
        &mut self,
        rank: usize,
        offset: usize,
        dst: &'env mut [u8],
    ) -> Result<Event<'env>, AmError> {
        let op = self.client.core.start_transfers(
            rank,
            offset,
            Local::Read(dst.as_mut_ptr()),
            dst.len(),
            Implicit::No,
            false,
        )?;
        Ok(self.event(op))
    }

    /// Non-blocking put of one value (injected).
    pub fn put_nb_u64(
        &mut self,
        rank: usize,
        offset: usize,
        value: u64,
    ) -> Result<Event<'env>, AmError> {
        self.put_nb(rank, offset, &value.to_ne_bytes())
    }

    /// Implicit put, source reusable on return (the put hierarchy).
    pub fn put_nbi(&mut self, rank: usize, offset: usize, src: &[u8]) -> Result<(), AmError> {
        self.client
            .core
            .put_now(rank, offset, src, Implicit::Put)
            .map(|_| ())
    }

    /// Implicit put reading `src` until synced (borrowed for the scope).
    pub fn put_nbi_deferred(
        &mut self,
        rank: usize,
        offset: usize,
        src: &'env [u8],
    ) -> Result<(), AmError> {
        self.client
            .core
            .start_transfers(
                rank,
                offset,
                Local::Write(src.as_ptr()),
                src.len(),
                Implicit::Put,
                false,
            )
            .map(|_| ())
    }

    /// Implicit get into `dst` (borrowed for the scope).
    pub fn get_nbi(
        &mut self,
        rank: usize,
        offset: usize,
        dst: &'env mut [u8],
    ) -> Result<(), AmError> {
        self.client
            .core
            .start_transfers(
                rank,
                offset,
                Local::Read(dst.as_mut_ptr()),
                dst.len(),
                Implicit::Get,
                false,
            )
            .map(|_| ())
    }

    /// Wait for one event.
    pub fn wait(&mut self, ev: Event<'env>) -> Result<(), AmError> {
        self.client.wait_op(ev.id)
    }

    /// Poll once; `Ok(true)` (and the event consumed into `None`) when done.
    pub fn test(&mut self, ev: &mut Option<Event<'env>>) -> Result<bool, AmError> {
        let Some(e) = ev.as_ref() else {
            return Ok(true);
        };
        if self.client.core.ops.state(e.id).is_none() {
            self.client.poll()?;
        }
        match self.client.core.ops.state(e.id) {
            None => Ok(false),
            Some(_) => {
                let e = ev.take().expect("checked above");
                self.client.wait_op(e.id).map(|_| true)
            }
        }
    }

    /// Wait for every event.
    pub fn wait_all(&mut self, evs: Vec<Event<'env>>) -> Result<(), AmError> {
        let mut first_err = None;
        for e in evs {
            if let Err(x) = self.wait(e) {
                first_err.get_or_insert(x);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Wait until at least one of `evs` completed; completed entries become
    /// `None`. Returns how many completed.
    pub fn wait_some(&mut self, evs: &mut [Option<Event<'env>>]) -> Result<usize, AmError> {
        if evs.iter().all(|e| e.is_none()) {
            return Ok(0);
        }
        loop {
            let mut n = 0;
            for slot in evs.iter_mut() {
                if let Some(e) = slot {
                    if self.client.core.ops.state(e.id).is_some() {
                        let e = slot.take().expect("is some");
                        self.client.wait_op(e.id)?;
                        n += 1;
                    }
                }
            }
            if n > 0 {
                return Ok(n);
            }
            self.client.poll()?;
        }
    }

    /// Wait for the implicit operations of `which` started so far.
    pub fn sync_nbi(&mut self, which: NbiSync) -> Result<(), AmError> {
        loop {
            let (p, g) = self.client.core.ops.implicit_outstanding();
            let pending = match which {
                NbiSync::Puts => p,
                NbiSync::Gets => g,
                NbiSync::All => p + g,
            };
            if pending == 0 {
                return Ok(());
            }
            self.client.poll()?;
        }
    }

    /// Complete everything the scope started.
    fn finish(&mut self) -> Result<(), AmError> {
        let mut r = self.sync_nbi(NbiSync::All);
        for id in std::mem::take(&mut self.started) {
            if let Err(e) = self.client.wait_op(id) {
                r = r.and(Err(e));
            }
        }
        r
    }
}
