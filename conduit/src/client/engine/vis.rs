//! Vector, indexed and strided transfers (GASNet-EX's VIS), planned by
//! `rma::vis` into contiguous pieces and moved by one of three paths:
//!
//! * a target whose segment is mapped here: a memory copy per piece;
//! * many small pieces put to another host: packed into AM Mediums whose
//!   handler scatters them into the target's segment and acknowledges;
//! * otherwise: RMA calls of up to the provider's iov limit pieces each
//!   (`fi_writemsg` / `fi_readmsg` with several iovs), pieces longer than
//!   one transfer going alone.

use super::rma::{InFlight, Local};
use super::{Core, Progress};
use crate::client::error::Error;
use crate::ofi::RmaVec;
use crate::sync::{Counter, Lock, Mode};
use crate::transport::{Context, Side, Transport};
use ::rma::ops::Implicit;
use ::rma::vis::{Piece, Walk};
use am::send::Category;

/// Internal handler: packed pieces to scatter (Medium request, 2 args:
/// request id, length of the encoded piece list that starts the payload).
pub(crate) const H_VIS: u8 = 6;
/// Internal handler: its acknowledgement (Short reply, 2 args: request id,
/// 0 when written, 1 when refused).
pub(crate) const H_VIS_ACK: u8 = 7;

/// Pieces of at most this many bytes, on average, are packed.
const PACK_PIECE: usize = 256;
/// Bound on one piece's encoding (three varints) in a packed message.
const PIECE_CODE: usize = 30;
/// Pieces planned and moved at a time: a window's plan takes about 24
/// bytes a piece and its RMA batches about 64 more, so a transfer of any
/// number of pieces holds at most a few MB of them.
const VIS_WINDOW: usize = 1 << 16;

/// The packed messages sent and not yet acknowledged: if the sender
/// returns early (an error, an unwind), their acknowledgements free their
/// reply slots when they come.
struct Acks<'a, M: Mode, T: Transport, S> {
    core: &'a Core<M, T, S>,
    ids: Vec<u32>,
    done: usize,
}

impl<M: Mode, T: Transport, S> Drop for Acks<'_, M, T, S> {
    fn drop(&mut self) {
        let mut pending = self.core.atomics.pending.lock();
        for &id in &self.ids[self.done..] {
            pending.abandon(id);
        }
    }
}

/// Which way a VIS transfer goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dir {
    /// Local to remote.
    Put,
    /// Remote to local.
    Get,
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Move `walk`'s pieces between `local` (lent for the call) and
    /// `rank`'s segment, a window of at most `VIS_WINDOW` pieces at a time
    /// (each window in place before the next is planned). Returns when
    /// every piece is in place.
    pub(crate) fn vis(
        &self,
        set: usize,
        rank: usize,
        dir: Dir,
        local: *mut u8,
        mut walk: Walk<'_>,
    ) -> Result<(), Error> {
        if walk.is_empty() {
            return Ok(());
        }
        // A supernode member's segment, or this rank's own (a copy also
        // with the shared-memory path off, as for contiguous transfers).
        if let Some(r) = self.mapped_range(rank, 0, 0) {
            let base = r?;
            while let Some(plan) = walk.next_window(VIS_WINDOW) {
                for p in plan.pieces() {
                    // SAFETY: the walk checked every piece against the
                    // target's segment (mapped here from `base`) and the
                    // caller's local span, whose pieces are valid memory
                    // (the span itself may cover several allocations: the
                    // raw entry points, hence `wrapping_add`).
                    unsafe {
                        let (l, r) = (local.wrapping_add(p.local), base.add(p.remote));
                        match dir {
                            Dir::Put => crate::copy::copy_bytes(l, r, p.len),
                            Dir::Get => crate::copy::copy_bytes(r, l, p.len),
                        }
                    }
                }
            }
            super::shared::copied_fence(dir == Dir::Put);
            // RMA_SHARED counts copies through the shared-memory path only (a
            // copy within this rank with the path off is not one).
            if self.pshm.is_some() {
                self.sets[set].stats.shared_rma.add(1);
            }
            return Ok(());
        }
        let limit = self.tp.facts().rma_iov_limit;
        while let Some(plan) = walk.next_window(VIS_WINDOW) {
            let pieces = plan.pieces();
            if dir == Dir::Put
                && pieces.len() > limit
                && plan.total_bytes() / pieces.len() <= PACK_PIECE
            {
                self.vis_packed_put(set, rank, local, pieces)?;
            } else {
                self.vis_rma(set, rank, dir, local, pieces)?;
            }
        }
        Ok(())
    }

    fn vis_rma(
        &self,
        set: usize,
        rank: usize,
        dir: Dir,
        local: *mut u8,
        pieces: &[Piece],
    ) -> Result<(), Error> {
        let limit = self.tp.facts().rma_iov_limit.max(1);
        let (small, big): (Vec<&Piece>, Vec<&Piece>) =
            pieces.iter().partition(|p| p.len <= self.max_rma);
        for p in big {
            // Inside the caller's buffer (the plan checked); no dereference.
            let l = local.wrapping_add(p.local);
            let (at, what, dirn) = match dir {
                Dir::Put => (Local::Write(l), "VIS put", "to"),
                Dir::Get => (Local::Read(l), "VIS get", "from"),
            };
            let op = self.start_transfer(
                set,
                rank,
                p.remote,
                at,
                p.len,
                Implicit::No,
                false,
                Progress::Full,
            )?;
            self.wait_op(set, op, Progress::Full, what, dirn, rank)?;
        }
        if small.is_empty() {
            return Ok(());
        }
        // Batches of at most `limit` pieces and `max_rma` bytes; a batch of
        // one piece is a plain transfer (so a transport without multi-iov
        // RMA serves every plan).
        let mut batches: Vec<Vec<&Piece>> = Vec::new();
        let mut bytes = 0usize;
        for p in small {
            match batches.last_mut() {
                Some(b) if b.len() < limit && bytes + p.len <= self.max_rma => {
                    b.push(p);
                    bytes += p.len;
                }
                _ => {
                    batches.push(vec![p]);
                    bytes = p.len;
                }
            }
        }
        let mut vecs: Vec<RmaVec> = Vec::with_capacity(batches.len());
        for b in batches.iter().filter(|b| b.len() > 1) {
            let mut v = RmaVec::new();
            for p in b.iter() {
                let r = self.remote(set, rank, p.remote, p.len)?;
                // Inside the caller's buffer, as the plan checked.
                v.push(local.wrapping_add(p.local), p.len, r.addr, r.key);
            }
            vecs.push(v);
        }
        let n = batches.len() as u32;
        let op = self.sets[set].ops.lock().start(n, Implicit::No);
        // Declared after `vecs`: dropped (draining the operation) first.
        let mut g = InFlight::new(self, set, op, n);
        let ctx = Context::Rma { slot: op.index };
        for b in batches.iter().filter(|b| b.len() == 1) {
            let p = b[0];
            let remote = self.remote(set, rank, p.remote, p.len)?;
            // Inside the caller's buffer, as the plan checked.
            let l = local.wrapping_add(p.local);
            let at = match dir {
                Dir::Put => Local::Write(l),
                Dir::Get => Local::Read(l),
            };
            self.post_chunk(
                set,
                rank,
                at,
                p.len,
                remote,
                None,
                op,
                false,
                Progress::Full,
            )?;
            g.posted();
        }
        for v in vecs.iter_mut() {
            // SAFETY: the caller lends `local` for the call; `v` stays in
            // place in `vecs` until the operation is over (`wait_op`, or `g`
            // on an early return); ranges checked above.
            self.post_retry(set, Progress::Full, || unsafe {
                self.tp.rma_vec(set, rank, dir == Dir::Put, v, ctx)
            })?;
            g.posted();
            self.sets[set].stats.vis_iov_calls.add(1);
        }
        let op = g.disarm();
        let (what, dirn) = match dir {
            Dir::Put => ("VIS put", "to"),
            Dir::Get => ("VIS get", "from"),
        };
        self.wait_op(set, Some(op), Progress::Full, what, dirn, rank)
    }

    fn vis_packed_put(
        &self,
        set: usize,
        rank: usize,
        local: *const u8,
        pieces: &[Piece],
    ) -> Result<(), Error> {
        let max = self.cfg.am.max_medium;
        let mut acks = Acks {
            core: self,
            ids: Vec::new(),
            done: 0,
        };
        let mut at = 0;
        while at < pieces.len() {
            // Take pieces while their data and encodings fit one Medium.
            let mut end = at;
            let mut bytes = 10;
            while end < pieces.len() && bytes + PIECE_CODE + pieces[end].len <= max {
                bytes += PIECE_CODE + pieces[end].len;
                end += 1;
            }
            if end == at {
                // A piece too large to pack: it goes by RMA.
                self.vis_rma(set, rank, Dir::Put, local as *mut u8, &pieces[at..at + 1])?;
                at += 1;
                continue;
            }
            let mut data = Vec::new();
            let mut rebased = Vec::with_capacity(end - at);
            for p in &pieces[at..end] {
                // SAFETY: a piece of the caller's local side, as the plan
                // checked (`wrapping_add`: see `vis`).
                let src = unsafe { std::slice::from_raw_parts(local.wrapping_add(p.local), p.len) };
                rebased.push(Piece {
                    local: data.len(),
                    remote: p.remote,
                    len: p.len,
                });
                data.extend_from_slice(src);
            }
            let mut payload = ::rma::vis::encode(&rebased);
            let header = payload.len() as u32;
            payload.extend_from_slice(&data);
            let id = self.atomics.pending.lock().take();
            self.sets[set].stats.vis_packed.add(1);
            if let Err(e) = self.send_am(
                set,
                Side::Request,
                rank,
                Category::Medium,
                H_VIS,
                &[id, header],
                &payload,
                0,
                false,
                Progress::Full,
            ) {
                self.atomics.pending.lock().cancel(id);
                return Err(e);
            }
            acks.ids.push(id);
            at = end;
        }
        let mut refused = false;
        while acks.done < acks.ids.len() {
            let (_, status) = self.await_reply(set, acks.ids[acks.done])?;
            acks.done += 1;
            refused |= status != 0;
        }
        if refused {
            return Err(am::Error::MalformedInternal {
                src: rank as u32,
                handler: H_VIS_ACK,
                what: "the target refused packed VIS pieces",
            }
            .into());
        }
        Ok(())
    }

    /// The target side of a packed put: check every piece, write them,
    /// acknowledge.
    pub(super) fn on_vis_put(
        &self,
        set: usize,
        src: usize,
        args: [u32; 2],
        payload: &[u8],
    ) -> Result<(), Error> {
        // Every piece is checked before any is written (peer input).
        let ok = self
            .own_segment()
            .and_then(|seg| {
                ::rma::vis::apply_packed(payload, args[1] as usize, seg.len(), |at, b| {
                    seg.copy_in(at, b)
                })
            })
            // Debug, not warn: the initiator reports the refusal as its
            // error, and a faulty peer could otherwise flood the log.
            .inspect_err(|e| {
                tracing::debug!(
                    "rank {}: packed put from rank {src} refused: {}",
                    self.rank,
                    e.report()
                )
            })
            .is_ok();
        self.send_am(
            set,
            Side::Reply,
            src,
            Category::Short,
            H_VIS_ACK,
            &[args[0], (!ok) as u32],
            &[],
            0,
            false,
            Progress::Replies,
        )
        .map(|_| ())
    }

    /// The initiator side: an acknowledgement for its waiter.
    pub(super) fn on_vis_ack(&self, src: usize, args: [u32; 2]) -> Result<(), Error> {
        if self.atomics.pending.lock().reply(args[0], 0, args[1]) {
            Ok(())
        } else {
            Err(am::Error::MalformedInternal {
                src: src as u32,
                handler: H_VIS_ACK,
                what: "an acknowledgement of VIS pieces this rank did not send",
            }
            .into())
        }
    }
}
