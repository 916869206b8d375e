//! The registered collective cache (Open MPI coll/ofi's memory cache; the
//! protocol is in [`coll::cache`]): one block per team, allocated,
//! registered and published at the team's first collective, through which
//! the chunks of later collectives travel by one-sided RMA writes. A
//! member in this rank's supernode is written with memory copies through
//! its mapped block; any other through the provider (the chunk, then,
//! once that write is delivered, the slot's flag word).
//!
//! A collective takes the cache when its payload fits in the data cache
//! (`GASNET_OFI_COLL_CACHE_PAGES` pages) and the team's slots are at least
//! [`coll::cache::MIN_SLOT`] bytes; any other (and the team's first, which
//! runs while the members exchange their blocks' addresses) travels as
//! Active Messages. Every member decides the same way from the same facts.

use super::coll_board::BoardState;
use crate::mem::Mapping;
use ::rma::ops::OpId;
use ::rma::plan::SegmentInfo;
use coll::cache::{Layout, Slots, CREDIT_AT, RESERVED};
use coll::Msg;
use std::collections::VecDeque;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// Words each member publishes about its block: base, key, pid and memory
/// file, length.
pub(super) const RECORD_WORDS: usize = 4;

/// A peer's block.
pub(super) struct Peer {
    /// Its job rank.
    pub(super) job: usize,
    /// Base (for virtual addressing), length and key.
    pub(super) remote: SegmentInfo,
    /// Where it is mapped here, for a member of this supernode (this rank:
    /// its own block).
    pub(super) mapped: Option<*mut u8>,
    pub(super) _map: Option<Mapping>,
    /// Why a supernode member's block could not be mapped here.
    pub(super) unmapped: Option<String>,
    /// Chunks to it go through its cache (else as AMs).
    pub(super) cached: bool,
}

/// A chunk waiting for a free slot at its destination.
pub(super) struct Out {
    seq: u32,
    msg: Msg,
}

/// A transfer the provider may still be reading from, with its source.
pub(super) enum Pending {
    /// A chunk; once delivered its flag (message `m` in slot `j`) goes.
    Chunk {
        op: OpId,
        seq: u32,
        to: usize,
        j: usize,
        m: u64,
        _buf: Vec<u8>,
    },
    /// A flag or credit word.
    Word { op: OpId, _buf: Box<u64> },
}

/// What a member publishes about its block.
pub(super) type Record = [u64; RECORD_WORDS];

/// A team's block before its members' records are known.
///
/// Fields drop in order: the registrations close before the memory they
/// register is unmapped.
pub(crate) struct Block<R> {
    pub(super) layout: Layout,
    pub(super) regions: Vec<R>,
    pub(super) mem: Arc<Mapping>,
    pub(super) record: Record,
}

/// A team's cache in use.
///
/// Fields drop in order: the registrations close before the memory they
/// register is unmapped (a destroyed team's, or at the client's end).
pub(crate) struct Cache<R> {
    pub(super) layout: Layout,
    pub(super) _regions: Vec<R>,
    pub(super) mem: Arc<Mapping>,
    pub(super) me: usize,
    pub(super) peers: Vec<Peer>,
    pub(super) slots: Slots,
    pub(super) outq: Vec<VecDeque<Out>>,
    /// Control words to write: (team rank, offset in its block, value,
    /// the collective whose chunk a flag releases).
    pub(super) words: VecDeque<(usize, usize, u64, Option<u32>)>,
    pub(super) pending: Vec<Pending>,
    /// The board, on a team whose members all share memory with this rank
    /// and small enough for the direct exchange.
    pub(super) board: Option<BoardState>,
}

// SAFETY: the raw pointers address shared mappings owned by the cache (or
// by the team's block) for its whole life; access goes through atomics and
// copies into slots the protocol gives to one writer at a time.
unsafe impl<R: Send> Send for Cache<R> {}

/// The cache state of a team.
pub(crate) enum CacheState<R> {
    /// No collective yet.
    Unset,
    /// Not used (disabled, too many members for the data cache, or a team
    /// of one).
    Off,
    /// The members' records are being gathered by collective `seq`.
    Exchanging { seq: u32, block: Option<Block<R>> },
    /// The members agree by collective `seq` on what they made of the
    /// records (`None`: this rank could not make the cache).
    Agreeing {
        seq: u32,
        cache: Option<Box<Cache<R>>>,
    },
    /// In use.
    Ready(Box<Cache<R>>),
}

/// Largest broadcast that a team whose members share memory sends by the AM
/// rings rather than through its collective cache: measured 3 to 4 times
/// faster that way at 8 bytes on 4 ranks (docs/PERFORMANCE.md), where
/// 64 KiB is faster through the cache.
pub(super) const RING_BCAST_MAX: usize = coll::flat::FLAT_MAX_BYTES;

/// Largest team whose reductions to all of more than
/// [`coll::flat::FLAT_MAX_BYTES`] (up to the board's size) take the direct
/// exchange through the boards: each member reads and folds every other
/// member's contribution, `n - 1` times the payload, where the tree reads
/// it about twice.
pub(super) const DIRECT_BOARD_MAX_MEMBERS: usize = 8;

impl<R> CacheState<R> {
    /// The chunk size for a collective of `len` bytes (a broadcast when
    /// `bcast`) when it takes the cache. Broadcasts of at most
    /// [`RING_BCAST_MAX`] on a team with a board (its members share memory)
    /// do not: they go by the AM rings, every member deciding alike.
    pub fn chunk_for(&self, len: usize, bcast: bool) -> Option<usize> {
        match self {
            CacheState::Ready(c) if bcast && len <= RING_BCAST_MAX && c.board.is_some() => None,
            CacheState::Ready(c) if len <= c.layout.data_bytes() => Some(c.layout.max_chunk()),
            _ => None,
        }
    }

    /// Whether a broadcast of `len` bytes is posted on the root's board
    /// (a team whose members share memory, above the AM rings' size and
    /// within the board's): every member decides alike.
    pub fn posts_bcast(&self, len: usize) -> bool {
        matches!(self, CacheState::Ready(c)
            if c.board.is_some() && len > RING_BCAST_MAX && len <= c.layout.board_capacity())
    }

    /// Whether a reduction to all of `len` bytes is a direct exchange whose
    /// every member posts its contribution on its board (a team whose
    /// members share memory, of at most [`DIRECT_BOARD_MAX_MEMBERS`];
    /// above the size of the small direct exchange and within the
    /// board's): every member decides alike.
    pub fn posts_allreduce(&self, len: usize) -> bool {
        matches!(self, CacheState::Ready(c)
            if c.board.is_some()
                && c.peers.len() <= DIRECT_BOARD_MAX_MEMBERS
                && len > coll::flat::FLAT_MAX_BYTES
                && len <= c.layout.board_capacity())
    }

    /// Whether a reduction to all of `len` bytes goes through the boards
    /// (`direct`: the team's small reductions to all take the direct
    /// exchange): the larger ones that [`CacheState::posts_allreduce`]
    /// says, and the small direct exchanges that take the cache on a team
    /// with a board (which post there rather than in slots). Every member
    /// decides alike; `coll_start` checks it made the same choice.
    pub fn allreduce_on_board(&self, len: usize, direct: bool) -> bool {
        self.posts_allreduce(len)
            || matches!(self, CacheState::Ready(c)
                if c.board.is_some()
                    && direct
                    && coll::flat::applies(c.peers.len(), len)
                    && len <= c.layout.data_bytes()
                    && len <= c.layout.max_chunk())
    }

    /// Whether a chunk of collective `seq` still needs this rank: it waits
    /// for a slot, or its flag is not posted yet (its receiver would not
    /// see it if this rank stopped polling, e.g. to exit).
    pub fn queued(&self, seq: u32) -> bool {
        match self {
            CacheState::Ready(c) => {
                c.outq.iter().any(|q| q.iter().any(|o| o.seq == seq))
                    || c.pending
                        .iter()
                        .any(|p| matches!(p, Pending::Chunk { seq: s, .. } if *s == seq))
                    || c.words.iter().any(|w| w.3 == Some(seq))
                    || c.board.as_ref().is_some_and(|b| b.queued(seq))
            }
            _ => false,
        }
    }

    /// Drop the chunks of collective `seq` still waiting for a slot (it
    /// failed, or a member aborted it: nobody reads them).
    pub fn drop_queued(&mut self, seq: u32) {
        if let CacheState::Ready(c) = self {
            for q in &mut c.outq {
                q.retain(|o| o.seq != seq);
            }
        }
    }

    /// Whether the board has posts of other members to read
    /// ([`BoardState::reading`]).
    pub fn reading(&self) -> bool {
        matches!(self, CacheState::Ready(c) if c.board.as_ref().is_some_and(BoardState::reading))
    }

    /// Whether nothing of the cache is queued or in flight.
    pub fn idle(&self) -> bool {
        match self {
            CacheState::Ready(c) => {
                c.pending.is_empty()
                    && c.words.is_empty()
                    && c.outq.iter().all(|q| q.is_empty())
                    && c.board.as_ref().is_none_or(BoardState::idle)
            }
            _ => true,
        }
    }
}

/// A word of a shared mapping.
///
/// # Safety
/// `p` must be 8-byte aligned and inside a live mapping.
pub(super) unsafe fn word<'a>(p: *mut u8) -> &'a AtomicU64 {
    // SAFETY: caller's contract; AtomicU64 has u64's layout.
    unsafe { &*p.cast::<AtomicU64>() }
}

#[path = "coll_cache_transfer.rs"]
mod transfer;

// The credit words fit in a directory entry; the reserved region holds
// the layout's header.
const _: () =
    assert!(CREDIT_AT + 8 * coll::cache::DEPTH <= coll::cache::DIR_ENTRY && RESERVED >= 32);
