//! The simulated network's state, under the fabric's one lock.

use super::{Faults, SimCounts};
use crate::mem::Mapping;
use crate::transport::{Completion, Context, Ep, ErrorCompletion, PostError};
use std::collections::VecDeque;
use std::sync::Arc;

mod receive;
mod transmit;

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
