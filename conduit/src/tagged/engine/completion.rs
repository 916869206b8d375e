//! Progress: reading a context's queue, completing requests from its
//! entries and error entries, and the synchronous-send acknowledgements.

use super::*;
use crate::tagged::claim::ClaimSlot;

const FI_ETRUNC: i32 = ofi_sys::FI_ETRUNC as i32;
const FI_ECANCELED: i32 = ofi_sys::FI_ECANCELED as i32;
const FI_ENOMSG: i32 = ofi_sys::FI_ENOMSG as i32;

impl<M: Mode> Engine<M> {
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

    /// Progress on one context, compiled with (`LEN`) or without the
    /// sender's length in the CQ data (picked at start-up, `Paths`).
    #[inline]
    pub(crate) fn progress_ctx_as<const LEN: bool>(&self, c: &Ctx<M>) -> Result<bool, Error> {
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
            let (mut released, mut sent) = (0isize, 0isize);
            {
                let mut reqs = c.reqs();
                for e in got {
                    if let Some(idx) =
                        self.on_entry::<LEN>(&mut reqs, e, &mut acks, &mut released, &mut sent)
                    {
                        // A detached send is over: its copy goes.
                        free_copy(c, idx);
                    }
                }
            }
            if released > 0 {
                c.credits.fetch_add(released, Ordering::AcqRel);
            }
            if sent > 0 {
                self.sends_done(c, sent);
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
    fn on_entry<const LEN: bool>(
        &self,
        reqs: &mut Requests,
        e: &TaggedEntry,
        acks: &mut Vec<(u64, u32)>,
        released: &mut isize,
        sent: &mut isize,
    ) -> Option<u32> {
        // SAFETY: the completion is of one of this engine's operations,
        // not finished before this entry is handled.
        let Some((idx, part)) = decode_context(unsafe { ClaimSlot::request_context(e.context()) })
        else {
            tracing::warn!(
                context = e.context(),
                "tagged completion with an unknown context"
            );
            return None;
        };
        let kind = reqs.kind_at(idx);
        match kind {
            Some(Kind::Recv { counted: true, .. }) => *released += 1,
            Some(Kind::Send { .. } | Kind::SyncSend { .. } | Kind::Detached { .. })
                if part == Part::Main =>
            {
                *sent += 1
            }
            _ => {}
        }
        let status = match (kind, part) {
            (Some(Kind::Recv { .. }), Part::Main) | (Some(Kind::Probe), Part::Main) => {
                let mut d = self.layout.decode(e.tag(), e.data());
                if let Some(Kind::Recv { from: Some(f), .. }) = kind {
                    // The source travels in CQ data, and this entry has
                    // none (shm 2.x's discard of a claimed message): the
                    // source asked for or claimed, not rank 0.
                    if self.layout.cq_data() && e.flags() & sys::FI_REMOTE_CQ_DATA as u64 == 0 {
                        d.source = f;
                    }
                }
                if d.sync && matches!(reqs.kind_at(idx), Some(Kind::Recv { .. })) {
                    acks.push((e.tag(), d.source));
                }
                let size = sent_len::<LEN>(e).unwrap_or(e.len()).max(e.len());
                // A receive with the spill iov may have placed more than
                // its buffer holds: the rest went to the spill.
                let placed = match kind {
                    Some(Kind::Recv { cap, .. }) if e.len() > cap => {
                        if let Some(s) = self.spill {
                            s.written(e.len() - cap);
                        }
                        cap
                    }
                    _ => e.len(),
                };
                Status {
                    source: d.source,
                    tag: d.tag,
                    len: placed,
                    size,
                    // A probe reports the size; only a receive truncates.
                    truncated: size > placed && matches!(kind, Some(Kind::Recv { .. })),
                    ..Status::default()
                }
            }
            (Some(_), _) => Status::default(),
            (None, _) => {
                tracing::warn!(idx, "tagged completion for a request that is not pending");
                return None;
            }
        };
        reqs.complete(idx, part, status);
        matches!(kind, Some(Kind::Detached { .. })).then_some(idx)
    }

    fn on_error(&self, c: &Ctx<M>) -> Result<(), Error> {
        // SAFETY: as in progress_ctx (the poll lock is held by the caller).
        let Some(e) = (unsafe { c.cq.read_error() })? else {
            return Ok(());
        };
        // SAFETY: as in on_entry.
        let Some((idx, part)) =
            decode_context(unsafe { ClaimSlot::request_context(e.context as usize) })
        else {
            tracing::warn!(
                "tagged error completion with an unknown context: {}",
                e.text
            );
            return Ok(());
        };
        let mut ack = None;
        {
            let mut reqs = c.reqs();
            let kind = reqs.kind_at(idx);
            match kind {
                Some(Kind::Recv { counted: true, .. }) => self.release_credit(c),
                Some(Kind::Send { .. } | Kind::SyncSend { .. } | Kind::Detached { .. })
                    if part == Part::Main =>
                {
                    self.sends_done(c, 1)
                }
                _ => {}
            }
            let d = self.layout.decode(e.tag, e.data);
            match (kind, e.err) {
                (Some(Kind::Recv { cap, from, .. }), FI_ETRUNC) if part == Part::Main => {
                    let mut st = truncated_status(&d, &e, cap);
                    if self.layout.cq_data() {
                        // A directed receive's source is the one asked for
                        // (shm 2.x reports no CQ data in error entries;
                        // sockets reports it, unflagged, for a message that
                        // arrived before its receive).
                        if let Some(f) = from {
                            st.source = f;
                        } else if e.flags & sys::FI_REMOTE_CQ_DATA as u64 == 0
                            && !self.err_data_unflagged
                        {
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
                (Some(Kind::Detached { len }), _) => {
                    // Nobody waits for it: the next tagged call reports it.
                    let cause = OpError {
                        err: e.err,
                        prov_errno: e.prov_errno,
                        text: format!("{len} bytes: {}", e.text),
                    };
                    // The copy goes before the slot is given back (under
                    // the lock, as on success): once free, the slot and its
                    // place in `copies` may be another thread's.
                    free_copy(c, idx);
                    reqs.fail(idx, Err(cause.clone()));
                    drop(reqs);
                    return Err(TaggedError::Op {
                        op: "a tagged send (from a copy, finished at return)",
                        cause,
                    }
                    .into());
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
            Ok(()) => {
                self.note_inject();
                Ok(())
            }
            Err(e) if e.is_again() => {
                // The flag changes under the queue's lock, as in
                // retry_acks: a retry that emptied the queue cannot clear
                // it after this push.
                let mut q = self.acks.lock();
                q.push((ctx, addr, ack));
                self.has_acks.store(true, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    pub(super) fn retry_acks(&self) -> Result<(), Error> {
        let pending = {
            let mut q = self.acks.lock();
            self.has_acks.store(false, Ordering::Relaxed);
            std::mem::take(&mut *q)
        };
        let mut left = Vec::new();
        let mut failed = None;
        for (ctx, addr, bits) in pending {
            if failed.is_some() {
                // Kept for the next retry: an error on one does not drop
                // the others.
                left.push((ctx, addr, bits));
                continue;
            }
            // SAFETY: as in send_ack.
            match unsafe { self.ctx(ctx).tx.tinject(&[], None, addr, bits) } {
                Ok(()) => {}
                Err(e) if e.is_again() => left.push((ctx, addr, bits)),
                Err(e) => failed = Some(e),
            }
        }
        if !left.is_empty() {
            let mut q = self.acks.lock();
            q.extend(left);
            self.has_acks.store(true, Ordering::Relaxed);
        }
        failed.map_or(Ok(()), |e| Err(e.into()))
    }
}

/// Drop the copy a detached send in slot `idx` was sent from.
fn free_copy<M: Mode>(c: &Ctx<M>, idx: u32) {
    if let Some(copy) = c.copies.lock().get_mut(idx as usize) {
        copy.take();
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

/// The length the sender put in the CQ data (`LEN`), if any.
#[inline(always)]
fn sent_len<const LEN: bool>(e: &TaggedEntry) -> Option<usize> {
    (LEN && e.flags() & sys::FI_REMOTE_CQ_DATA as u64 != 0).then(|| (e.data() >> 32) as usize)
}
