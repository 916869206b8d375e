//! The board of a team's collective cache (protocol in
//! [`coll::cache::Board`]): on a team whose members all share memory with
//! this rank, a small reduction to all by direct exchange
//! ([`coll::flat`]) posts this rank's contribution once, in its own block,
//! and reads every other member's in place from their mapped blocks, where
//! the exchange over slots would write it into `n - 1` slots and wait for
//! as many credits. Every member takes the board for the same collectives:
//! the team, the operation and its length decide, and all are the same
//! everywhere.

use super::coll_cache::{word, Cache};
use super::Core;
use crate::client::error::Error;
use crate::sync::{Counter, Mode};
use crate::transport::Transport;
use coll::cache::{Board, BOARD_HEADER};
use coll::TeamColl;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;

/// This rank's side of a team's board.
#[derive(Default)]
pub(super) struct BoardState {
    board: Board,
    /// Contributions waiting for their buffer to be free, in order.
    waiting: VecDeque<(u32, Vec<u8>)>,
    /// Collectives in progress on the board, with the members (bit per
    /// team rank) whose posts are still to read.
    open: Vec<(u32, u64)>,
}

impl BoardState {
    /// Whether this rank's post of collective `seq` waits for a buffer.
    pub(super) fn queued(&self, seq: u32) -> bool {
        self.waiting.iter().any(|w| w.0 == seq)
    }

    /// Whether nothing waits to be posted.
    pub(super) fn idle(&self) -> bool {
        self.waiting.is_empty()
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Collective `seq` takes the board: post `src` (at once, or once its
    /// buffer is free) and read the others' posts as they come.
    pub(super) fn board_start(
        &self,
        c: &mut Cache<T::Region>,
        seq: u32,
        src: Vec<u8>,
    ) -> Result<(), Error> {
        if let Some(p) = c.peers.iter().find(|p| p.mapped.is_none()) {
            return Err(Error::CollCacheUnmapped { rank: p.job });
        }
        let me = c.me;
        let Some(b) = c.board.as_mut() else {
            return Ok(());
        };
        // A board exists only on teams of at most FLAT_MAX_MEMBERS (8).
        let all = (1u64 << c.peers.len()) - 1;
        b.open.push((seq, all & !(1 << me)));
        b.waiting.push_back((seq, src));
        self.board_post(c);
        Ok(())
    }

    /// Post waiting contributions whose buffers every reader released.
    fn board_post(&self, c: &mut Cache<T::Region>) {
        let base = c.mem.as_ptr();
        let (me, n, layout) = (c.me, c.peers.len(), c.layout);
        let Some(b) = c.board.as_mut() else {
            return;
        };
        while let Some((seq, src)) = b.waiting.front() {
            let (seq, buf) = (*seq, Board::buffer(*seq));
            let acks = (0..n).filter(|&r| r != me).map(|r| {
                // SAFETY: an acknowledgement word (8-aligned) of this
                // rank's own block.
                unsafe { word(base.add(layout.board_ack(r, buf))) }.load(Ordering::Acquire)
            });
            if !b.board.may_post(seq, acks) {
                return;
            }
            // SAFETY: buffer `buf` of this rank's own block, which every
            // reader has released; the contribution fits (FLAT_MAX_BYTES).
            unsafe {
                let at = base.add(layout.board(buf));
                word(at.add(8)).store(src.len() as u64, Ordering::Relaxed);
                std::ptr::copy_nonoverlapping(src.as_ptr(), at.add(BOARD_HEADER), src.len());
                word(at).store(Board::flag(seq), Ordering::Release);
            }
            b.board.posted(seq);
            b.waiting.pop_front();
            self.sets[0].stats.coll_board.add(1);
        }
    }

    /// Read the posts that arrived for this rank's open board collectives
    /// and feed them to `colls`; post what waits.
    pub(super) fn board_poll(
        &self,
        c: &mut Cache<T::Region>,
        colls: &mut TeamColl,
    ) -> Result<(), Error> {
        self.board_post(c);
        let (me, layout) = (c.me, c.layout);
        let Some(b) = c.board.as_mut() else {
            return Ok(());
        };
        let mut first = None;
        for (seq, unread) in b.open.iter_mut() {
            let buf = Board::buffer(*seq);
            for (r, peer) in c.peers.iter().enumerate() {
                let Some(p) = peer.mapped.filter(|_| *unread & (1 << r) != 0) else {
                    continue;
                };
                // SAFETY: `p` is member r's mapped block; its board buffer
                // holds collective `seq` once the flag says so, and r does
                // not post over it before this rank acknowledges.
                unsafe {
                    let at = p.add(layout.board(buf));
                    if word(at).load(Ordering::Acquire) != Board::flag(*seq) {
                        continue;
                    }
                    let len = word(at.add(8)).load(Ordering::Relaxed) as usize;
                    let len = len.min(coll::flat::FLAT_MAX_BYTES);
                    let data = std::slice::from_raw_parts(at.add(BOARD_HEADER), len);
                    if let Err(e) = colls.on_msg(*seq, r, 0, 0, data) {
                        first.get_or_insert(Error::from(e));
                    }
                    word(p.add(layout.board_ack(me, buf)))
                        .store(Board::flag(*seq), Ordering::Release);
                }
                *unread &= !(1 << r);
            }
        }
        b.open.retain(|o| o.1 != 0);
        first.map_or(Ok(()), Err)
    }
}
