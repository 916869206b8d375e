//! The simulated network's state, under the fabric's one lock.

use super::{failure, Faults, SimCounts};
use crate::mem::Mapping;
use crate::transport::{Completion, Context, Ep, ErrorCompletion, PostError, Side};
use std::collections::VecDeque;
use std::sync::Arc;

/// A completion waiting in a queue (addresses as numbers: the state moves
/// between threads).
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    ctx: Context,
    len: usize,
    buf: usize,
    released: bool,
    /// Remote CQ data ([`Context::Landed`]).
    data: u64,
    err: Option<ErrorCompletion>,
}

impl Entry {
    fn ok(ctx: Context, len: usize, buf: usize, released: bool) -> Entry {
        Entry {
            ctx,
            len,
            buf,
            released,
            data: 0,
            err: None,
        }
    }

    fn failed(e: ErrorCompletion) -> Entry {
        Entry {
            ctx: e.ctx.unwrap_or(Context::Rma { slot: u32::MAX }),
            len: 0,
            buf: 0,
            released: e.released,
            data: 0,
            err: Some(e),
        }
    }

    fn into_result(self) -> Result<Completion, ErrorCompletion> {
        match self.err {
            Some(e) => Err(e),
            None => Ok(Completion {
                ctx: self.ctx,
                len: self.len,
                buf: self.buf as *const u8,
                released: self.released,
                data: self.data,
            }),
        }
    }
}

/// A posted receive buffer.
#[derive(Debug, Clone)]
pub(crate) struct Posted {
    pub addr: usize,
    pub len: usize,
    pub ctx: Context,
    pub multi: bool,
    /// Bytes carved so far (multi-receive).
    pub used: usize,
}

/// What a queued transfer does.
#[derive(Debug)]
pub(crate) enum TxKind {
    Send {
        dest: usize,
        ep: Ep,
        src: usize,
    },
    Write {
        dest: usize,
        src: usize,
        /// Injected writes carry their bytes.
        data: Option<Vec<u8>>,
        remote: rma::plan::Remote,
    },
    Read {
        from: usize,
        dst: usize,
        remote: rma::plan::Remote,
    },
    /// A write (or read) of several pieces at once; a write with
    /// `landed` carries remote CQ data, reported to `dest`'s receive queue
    /// of that endpoint once every piece is in place.
    Pieces {
        dest: usize,
        write: bool,
        /// Local address, length, remote range.
        pieces: Vec<(usize, usize, rma::plan::Remote)>,
        landed: Option<(Ep, u64)>,
    },
}

/// A queued transfer.
#[derive(Debug)]
pub(crate) struct TxOp {
    pub kind: TxKind,
    pub len: usize,
    pub ctx: Context,
    pub delay: u32,
}

/// A message placed in a receive buffer whose data and completion are not
/// delivered yet.
#[derive(Debug)]
struct Placed {
    entry: Entry,
    data: Vec<u8>,
    delay: u32,
}

#[derive(Debug, Default)]
struct SetState {
    inbound: [VecDeque<Vec<u8>>; 2],
    posted: [VecDeque<Posted>; 2],
    placed: [Vec<Placed>; 2],
    rx_ready: [VecDeque<Entry>; 2],
    tx_queue: Vec<TxOp>,
    tx_ready: VecDeque<Entry>,
}

#[derive(Debug, Default)]
struct RankState {
    open: bool,
    sets: Vec<SetState>,
    held: Vec<Arc<Mapping>>,
}

#[derive(Debug)]
struct Reg {
    key: u64,
    rank: usize,
    mem: Arc<Mapping>,
}

/// The whole network.
#[derive(Debug)]
pub(crate) struct Fabric {
    pub faults: Faults,
    pub counts: SimCounts,
    ranks: Vec<RankState>,
    regions: Vec<Reg>,
    rngs: Vec<u64>,
    min_multi: usize,
}

fn side_of(ep: Ep) -> usize {
    match ep {
        Ep::Reply => 1,
        _ => 0,
    }
}

impl Fabric {
    pub fn new(ranks: usize, seed: u64) -> Fabric {
        Fabric {
            faults: Faults::default(),
            counts: SimCounts::default(),
            ranks: (0..ranks).map(|_| RankState::default()).collect(),
            regions: Vec::new(),
            rngs: (0..ranks)
                .map(|r| (seed ^ 0x9e37_79b9_7f4a_7c15).wrapping_mul(r as u64 + 1) | 1)
                .collect(),
            min_multi: 0,
        }
    }

    /// xorshift64 of `rank`.
    fn rand(&mut self, rank: usize) -> u64 {
        let x = &mut self.rngs[rank];
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    fn delay(&mut self, rank: usize) -> u32 {
        let m = self.faults.max_delay;
        if m == 0 {
            0
        } else {
            (self.rand(rank) % (m as u64 + 1)) as u32
        }
    }

    fn shuffle<T>(&mut self, rank: usize, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.rand(rank) % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }

    pub fn open(&mut self, rank: usize, sets: usize, min_multi: usize) {
        let r = &mut self.ranks[rank];
        r.open = true;
        r.sets = (0..sets).map(|_| SetState::default()).collect();
        self.min_multi = self.min_multi.max(min_multi);
    }

    pub fn close(&mut self, rank: usize) {
        let r = &mut self.ranks[rank];
        r.open = false;
        r.sets.clear();
        r.held.clear();
        self.regions.retain(|g| g.rank != rank);
    }

    pub fn keep_alive(&mut self, rank: usize, _set: usize, mem: Arc<Mapping>) {
        self.ranks[rank].held.push(mem);
    }

    pub fn register(&mut self, rank: usize, mem: Arc<Mapping>) -> u64 {
        let key = 0x5100 + self.regions.len() as u64 + 1000 * rank as u64;
        self.regions.push(Reg { key, rank, mem });
        key
    }

    /// `Faults::refuse_send`: refuse this send of `rank` if it is the one.
    pub fn maybe_refuse_send(&mut self, rank: usize) -> Result<(), PostError> {
        match self.faults.refuse_send {
            Some((r, 1)) if r == rank => {
                if self.faults.refuse_more > 0 {
                    self.faults.refuse_more -= 1;
                } else {
                    self.faults.refuse_send = None;
                }
                self.counts.failed += 1;
                Err(PostError::Failed(crate::ofi::OfiError::new(
                    "a simulated send",
                    -(ofi_sys::FI_EIO as i64),
                )))
            }
            Some((r, n)) if r == rank => {
                self.faults.refuse_send = Some((r, n - 1));
                Ok(())
            }
            _ => Ok(()),
        }
    }

    pub fn maybe_again(&mut self, rank: usize) -> Result<(), PostError> {
        match self.faults.fail_post {
            Some((r, 1)) if r == rank => {
                self.faults.fail_post = None;
                self.counts.failed += 1;
                return Err(PostError::Failed(crate::ofi::OfiError::new(
                    "a simulated post",
                    -(ofi_sys::FI_EIO as i64),
                )));
            }
            Some((r, n)) if r == rank => self.faults.fail_post = Some((r, n - 1)),
            _ => {}
        }
        let n = self.faults.eagain_one_in;
        if n > 0 && self.rand(rank) % n as u64 == 0 {
            self.counts.eagain += 1;
            return Err(PostError::Again);
        }
        Ok(())
    }

    /// A message reaches `dest`'s endpoint (dropped if `dest` is gone).
    pub fn deliver(&mut self, _src: usize, dest: usize, set: usize, ep: Ep, bytes: Vec<u8>) {
        if let Some(s) = self
            .ranks
            .get_mut(dest)
            .filter(|r| r.open)
            .and_then(|r| r.sets.get_mut(set))
        {
            s.inbound[side_of(ep)].push_back(bytes);
        }
    }

    pub fn queue_tx(&mut self, rank: usize, set: usize, mut op: TxOp) {
        op.delay = self.delay(rank);
        let read = matches!(op.kind, TxKind::Read { .. });
        self.ranks[rank].sets[set].tx_queue.push(op);
        if read {
            let queued: usize = self.ranks[rank]
                .sets
                .iter()
                .flat_map(|s| &s.tx_queue)
                .filter(|o| matches!(o.kind, TxKind::Read { .. }))
                .map(|o| o.len)
                .sum();
            let m = &mut self.counts.max_read_bytes_queued;
            *m = (*m).max(queued as u64);
        }
    }

    pub fn post(&mut self, rank: usize, set: usize, ep: Ep, p: Posted) {
        self.ranks[rank].sets[set].posted[side_of(ep)].push_back(p);
    }

    /// The local memory `rank`'s queued transfers would still use.
    pub fn pending(&self, rank: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for s in &self.ranks[rank].sets {
            for op in &s.tx_queue {
                match &op.kind {
                    TxKind::Send { src, .. } => out.push((*src, op.len)),
                    TxKind::Write {
                        src, data: None, ..
                    } => out.push((*src, op.len)),
                    TxKind::Write { .. } => {}
                    TxKind::Read { dst, .. } => out.push((*dst, op.len)),
                    TxKind::Pieces { pieces, .. } => {
                        out.extend(pieces.iter().map(|&(local, len, _)| (local, len)))
                    }
                }
            }
        }
        out
    }

    fn region(
        &self,
        rank: usize,
        remote: rma::plan::Remote,
        len: usize,
        virt: bool,
    ) -> Option<*mut u8> {
        let g = self
            .regions
            .iter()
            .find(|g| g.rank == rank && g.key == remote.key)?;
        let off = if virt {
            (remote.addr as usize).checked_sub(g.mem.as_ptr() as usize)?
        } else {
            remote.addr as usize
        };
        g.mem.range(off, len)
    }

    fn execute(&mut self, rank: usize, set: usize, op: TxOp, virt: bool) -> Entry {
        match op.kind {
            TxKind::Send { dest, ep, src } => {
                if self.faults.fail_sends > 0 {
                    self.faults.fail_sends -= 1;
                    self.counts.failed += 1;
                    return Entry::failed(failure(op.ctx, false, "a send"));
                }
                // SAFETY: the engine keeps a send's buffer valid until its
                // completion, which is generated below.
                let bytes =
                    unsafe { std::slice::from_raw_parts(src as *const u8, op.len) }.to_vec();
                self.deliver(rank, dest, set, ep, bytes);
                Entry::ok(op.ctx, 0, 0, false)
            }
            TxKind::Write {
                dest,
                src,
                data,
                remote,
            } => {
                if self.faults.fail_rma > 0 {
                    self.faults.fail_rma -= 1;
                    self.counts.failed += 1;
                    return Entry::failed(failure(op.ctx, false, "an RMA write"));
                }
                let Some(to) = self.region(dest, remote, op.len, virt) else {
                    return Entry::failed(failure(op.ctx, false, "an RMA write outside a region"));
                };
                match data {
                    // SAFETY: `to` lies in a registered mapping (checked by
                    // region), kept alive by the table.
                    Some(d) => unsafe { std::ptr::copy(d.as_ptr(), to, op.len) },
                    // SAFETY: as above; the source is valid until this
                    // transfer's completion (the engine's contract).
                    None => unsafe { std::ptr::copy(src as *const u8, to, op.len) },
                }
                Entry::ok(op.ctx, 0, 0, false)
            }
            TxKind::Pieces {
                dest,
                write,
                pieces,
                landed,
            } => {
                // A failed transfer is reported here only: nothing is
                // moved and the target sees no completion.
                if self.faults.fail_rma > 0 {
                    self.faults.fail_rma -= 1;
                    self.counts.failed += 1;
                    return Entry::failed(failure(op.ctx, false, "a transfer of several pieces"));
                }
                let mut at = Vec::with_capacity(pieces.len());
                for &(_, len, remote) in &pieces {
                    let Some(p) = self.region(dest, remote, len, virt) else {
                        return Entry::failed(failure(
                            op.ctx,
                            false,
                            "a transfer of several pieces outside a region",
                        ));
                    };
                    at.push(p);
                }
                for (&(local, len, _), p) in pieces.iter().zip(at) {
                    // SAFETY: as for Write and Read: `p` lies in a
                    // registered mapping (checked), the local piece is
                    // valid and untouched by the engine until this
                    // transfer's completion.
                    unsafe {
                        if write {
                            std::ptr::copy(local as *const u8, p, len)
                        } else {
                            std::ptr::copy(p, local as *mut u8, len)
                        }
                    };
                }
                if let Some((ep, data)) = landed {
                    if let Some(s) = self
                        .ranks
                        .get_mut(dest)
                        .filter(|r| r.open)
                        .and_then(|r| r.sets.get_mut(set))
                    {
                        s.rx_ready[side_of(ep)].push_back(Entry {
                            data,
                            ..Entry::ok(Context::Landed, 0, 0, false)
                        });
                    }
                }
                Entry::ok(op.ctx, 0, 0, false)
            }
            TxKind::Read { from, dst, remote } => {
                if self.faults.fail_rma > 0 {
                    self.faults.fail_rma -= 1;
                    self.counts.failed += 1;
                    return Entry::failed(failure(op.ctx, false, "an RMA read"));
                }
                let Some(at) = self.region(from, remote, op.len, virt) else {
                    return Entry::failed(failure(op.ctx, false, "an RMA read outside a region"));
                };
                // SAFETY: `at` lies in a registered mapping (checked); the
                // destination is valid and untouched until this transfer's
                // completion (the engine's contract).
                unsafe { std::ptr::copy(at, dst as *mut u8, op.len) };
                Entry::ok(op.ctx, 0, 0, false)
            }
        }
    }

    pub fn poll_tx(
        &mut self,
        rank: usize,
        set: usize,
        max: usize,
        virt: bool,
    ) -> Vec<Result<Completion, ErrorCompletion>> {
        let Some(s) = self.ranks[rank].sets.get_mut(set) else {
            return Vec::new();
        };
        let mut due = Vec::new();
        let mut i = 0;
        while i < s.tx_queue.len() {
            if s.tx_queue[i].delay == 0 {
                due.push(s.tx_queue.remove(i));
            } else {
                s.tx_queue[i].delay -= 1;
                i += 1;
            }
        }
        if self.faults.reorder {
            self.shuffle(rank, &mut due);
        }
        let on_reply = self.faults.tx_on_reply;
        let paired = self.faults.am_paired;
        for op in due {
            let e = self.execute(rank, set, op, virt);
            let s = &mut self.ranks[rank].sets[set];
            match e.ctx {
                Context::Send {
                    side: Side::Request,
                    ..
                } if paired => s.rx_ready[Side::Reply.index()].push_back(e),
                Context::Send {
                    side: Side::Reply, ..
                } if paired => s.tx_ready.push_back(e),
                Context::Rma { .. }
                | Context::Send {
                    side: Side::Reply, ..
                } if on_reply => s.rx_ready[Side::Reply.index()].push_back(e),
                _ => s.tx_ready.push_back(e),
            }
        }
        take(&mut self.ranks[rank].sets[set].tx_ready, max)
    }

    pub fn poll_rx(
        &mut self,
        rank: usize,
        set: usize,
        side: Side,
        max: usize,
    ) -> Vec<Result<Completion, ErrorCompletion>> {
        let k = side.index();
        let min_multi = self.min_multi;
        // Match waiting messages to posted buffers.
        loop {
            let Some(s) = self.ranks[rank].sets.get_mut(set) else {
                return Vec::new();
            };
            if s.inbound[k].is_empty() || s.posted[k].is_empty() {
                break;
            }
            let msg = s.inbound[k].pop_front().unwrap_or_default();
            let p = s.posted[k].front_mut().expect("checked non-empty");
            let multi = p.multi;
            let (entry, done) = if multi {
                let off = p.used;
                if msg.len() > p.len - off {
                    let e = failure(p.ctx, true, "a message larger than the buffer's rest");
                    s.posted[k].pop_front();
                    s.rx_ready[k].push_back(Entry::failed(e));
                    continue;
                }
                p.used += msg.len();
                let released = p.len - p.used < min_multi;
                (
                    Entry::ok(p.ctx, msg.len(), p.addr + off, released),
                    released,
                )
            } else {
                let len = msg.len().min(p.len);
                (Entry::ok(p.ctx, len, p.addr, false), true)
            };
            if done {
                s.posted[k].pop_front();
            }
            let delay = self.delay(rank);
            let s = &mut self.ranks[rank].sets[set];
            if multi && self.faults.fail_placed > 0 {
                self.faults.fail_placed -= 1;
                self.counts.failed += 1;
                let mut e = failure(entry.ctx, entry.released, "a received message");
                e.placed = Some((entry.buf, entry.len));
                s.placed[k].push(Placed {
                    entry: Entry::failed(e),
                    data: Vec::new(),
                    delay,
                });
                continue;
            }
            let early = self.faults.early_release && entry.released;
            if early {
                let ctx = entry.ctx;
                let mut earlier = false;
                for pl in s.placed[k].iter_mut().filter(|pl| pl.entry.ctx == ctx) {
                    pl.delay = pl.delay.max(1);
                    earlier = true;
                }
                if earlier {
                    self.counts.early_releases += 1;
                }
            }
            if self.faults.bare_release && entry.released {
                // The message without the flag, then the release alone,
                // both due together (the release never overtakes it).
                let release = Entry::ok(entry.ctx, 0, 0, true);
                s.placed[k].push(Placed {
                    entry: Entry {
                        released: false,
                        ..entry
                    },
                    data: msg,
                    delay,
                });
                s.placed[k].push(Placed {
                    entry: release,
                    data: Vec::new(),
                    delay,
                });
                continue;
            }
            s.placed[k].push(Placed {
                entry,
                data: msg,
                delay: if early { 0 } else { delay },
            });
        }
        // Deliver what is due: the data first, then the completion.
        let s = &mut self.ranks[rank].sets[set];
        let mut due = Vec::new();
        let mut i = 0;
        while i < s.placed[k].len() {
            if s.placed[k][i].delay == 0 {
                due.push(s.placed[k].remove(i));
            } else {
                s.placed[k][i].delay -= 1;
                i += 1;
            }
        }
        if self.faults.reorder && !self.faults.early_release {
            self.shuffle(rank, &mut due);
        }
        for pl in due {
            if pl.entry.err.is_some() {
                // A failed receive (`fail_placed`): no data, no delivery.
                self.ranks[rank].sets[set].rx_ready[k].push_back(pl.entry);
                continue;
            }
            // SAFETY: the buffer was posted by this rank's engine, which
            // keeps its memory alive (keep_alive) and does not touch it
            // until this completion is delivered; the placement lies inside
            // the posted length (checked when carved).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    pl.data.as_ptr(),
                    pl.entry.buf as *mut u8,
                    pl.entry.len,
                )
            };
            self.counts.delivered += 1;
            self.ranks[rank].sets[set].rx_ready[k].push_back(pl.entry);
        }
        take(&mut self.ranks[rank].sets[set].rx_ready[k], max)
    }
}

/// Up to `max` completions from the head of `q`: an error completion alone
/// (what `fi_cq_read` reports as -FI_EAVAIL), else successes up to the next
/// error.
fn take(q: &mut VecDeque<Entry>, max: usize) -> Vec<Result<Completion, ErrorCompletion>> {
    let mut out = Vec::new();
    if q.front().is_some_and(|e| e.err.is_some()) {
        out.extend(q.pop_front().map(Entry::into_result));
        return out;
    }
    while out.len() < max && q.front().is_some_and(|e| e.err.is_none()) {
        out.extend(q.pop_front().map(Entry::into_result));
    }
    out
}
