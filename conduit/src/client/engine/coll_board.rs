//! The board of a team's collective cache (protocol in
//! [`coll::cache::Board`]): on a team whose members all share memory with
//! this rank, a small reduction to all by direct exchange
//! ([`coll::flat`]) posts this rank's contribution once, in its own block,
//! and reads every other member's in place from their mapped blocks, where
//! the exchange over slots would write it into `n - 1` slots and wait for
//! as many credits; a broadcast of up to [`coll::cache::BOARD_BCAST_MAX`]
//! bytes ([`coll::Broadcast::posted`]) is posted once by its root and
//! read in place by every other member. Every member takes the board for
//! the same collectives:
//! the team, the operation and its length decide, and all are the same
//! everywhere.

use super::coll_cache::{word, Cache};
use super::Core;
use crate::client::error::Error;
use crate::sync::{Counter, Mode};
use crate::transport::Transport;
use coll::cache::{Board, Layout, BOARD_DATA_AT};
use coll::TeamColl;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;

/// Whether block `p` holds its owner's post of collective `seq`.
///
/// # Safety
/// `p` is a mapped collective-cache block laid out by `layout`.
pub(super) unsafe fn board_has(p: *mut u8, layout: &Layout, seq: u32) -> bool {
    // SAFETY: the flag word of buffer `seq % 2`, 8-aligned, in the block.
    unsafe { word(p.add(layout.board(Board::buffer(seq)))) }.load(Ordering::Acquire)
        == Board::flag(seq)
}

/// Whether block `p`'s buffer of collective `seq` holds a later
/// collective's post (its owner never posted `seq`: posting over it would
/// have waited for this rank's acknowledgement).
///
/// # Safety
/// As [`board_has`].
unsafe fn board_past(p: *mut u8, layout: &Layout, seq: u32) -> bool {
    // SAFETY: as board_has.
    let f = unsafe { word(p.add(layout.board(Board::buffer(seq)))) }.load(Ordering::Acquire);
    f != 0 && ((f - 1) as u32).wrapping_sub(seq).wrapping_sub(1) < 1 << 31
}

/// Member `from`'s post of collective `seq` in its block `p`, which
/// [`board_has`] saw: its data, or [`coll::Error::BadPost`] when its length
/// word claims more than a buffer holds (overwritten memory: never read
/// past the buffer).
///
/// # Safety
/// `p` is member `from`'s mapped block laid out by `layout`, holding its
/// post of `seq` (which it does not post over before this rank
/// acknowledges it with [`board_ack`]); the slice must not be used after
/// that acknowledgement.
pub(super) unsafe fn board_read<'a>(
    p: *mut u8,
    layout: &Layout,
    seq: u32,
    from: usize,
) -> Result<&'a [u8], coll::Error> {
    let max = layout.board_capacity();
    // SAFETY: the caller's contract; the length is checked against the
    // buffer's capacity before the slice is made.
    unsafe {
        let at = p.add(layout.board(Board::buffer(seq)));
        let len = word(at.add(8)).load(Ordering::Relaxed) as usize;
        if len > max {
            return Err(coll::Error::BadPost { from, len, max });
        }
        Ok(std::slice::from_raw_parts(at.add(BOARD_DATA_AT), len))
    }
}

/// [`board_read`] of a post that must hold exactly `expected` bytes (the
/// blocking fast paths, where every member gives the same length):
/// [`coll::Error::ChunkLength`] names the poster and both lengths.
///
/// # Safety
/// As [`board_read`].
pub(super) unsafe fn board_read_exact<'a>(
    p: *mut u8,
    layout: &Layout,
    seq: u32,
    from: usize,
    expected: usize,
) -> Result<&'a [u8], coll::Error> {
    // SAFETY: the caller's contract, which is board_read's.
    let data = unsafe { board_read(p, layout, seq, from) }?;
    if data.len() != expected {
        return Err(coll::Error::ChunkLength {
            chunk: 0,
            from,
            len: data.len(),
            expected,
        });
    }
    Ok(data)
}

/// Acknowledge, as team rank `me`, the post of collective `seq` in block
/// `p`: its poster may post over that buffer once every reader has.
///
/// # Safety
/// `p` is a mapped collective-cache block laid out by `layout`, and this
/// rank no longer reads its post of `seq`.
pub(super) unsafe fn board_ack(p: *mut u8, layout: &Layout, me: usize, seq: u32) {
    // SAFETY: this rank's acknowledgement word (8-aligned) in the block.
    unsafe { word(p.add(layout.board_ack(me, Board::buffer(seq)))) }
        .store(Board::flag(seq), Ordering::Release);
}

/// Collective `seq` failed here (or ran off the board): read and
/// acknowledge the posts of the members in `read` (a bit per team
/// rank) for it as they come, so that their posters may post over
/// them; a member that goes past `seq` without posting it is no longer
/// waited for.
pub(super) fn board_owe<R>(c: &mut Cache<R>, seq: u32, read: u64) {
    let me = c.me;
    if let Some(b) = c.board.as_mut() {
        match b.open.iter_mut().find(|o| o.0 == seq) {
            Some(o) => o.1 |= read & !(1 << me),
            None if read & !(1 << me) != 0 => b.open.push((seq, read & !(1 << me))),
            None => {}
        }
    }
}

/// This rank's side of a team's board.
#[derive(Default)]
pub(super) struct BoardState {
    board: Board,
    /// Contributions waiting for their buffer to be free, in order (and
    /// whether each is a broadcast's payload).
    waiting: VecDeque<(u32, Vec<u8>, bool)>,
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

    /// Whether posts of other members are still to read (a collective on
    /// the board in progress, or one that failed here, whose posts are
    /// still read and acknowledged so that their posters may go on).
    pub(super) fn reading(&self) -> bool {
        !self.open.is_empty()
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Collective `seq` takes the board: post `post` (at once, or once its
    /// buffer is free; a reduction to all posts every member's
    /// contribution, a broadcast only the root's payload) and read the
    /// posts of the members in `read` (a bit per team rank) as they come.
    pub(super) fn board_start(
        &self,
        c: &mut Cache<T::Region>,
        seq: u32,
        post: Option<&[u8]>,
        read: u64,
    ) -> Result<(), Error> {
        if let Some(p) = c.peers.iter().find(|p| p.mapped.is_none()) {
            return Err(Error::CollCacheUnmapped {
                rank: p.job,
                why: p.unmapped.clone().unwrap_or_default(),
            });
        }
        let (me, capacity) = (c.me, c.layout.board_capacity());
        let Some(b) = c.board.as_mut() else {
            return Ok(());
        };
        if let Some(p) = post.filter(|p| p.len() > capacity) {
            // The callers choose the board only for what fits.
            return Err(coll::Error::BadPost {
                from: me,
                len: p.len(),
                max: capacity,
            }
            .into());
        }
        if read != 0 {
            b.open.push((seq, read));
        }
        let Some(data) = post else {
            return Ok(());
        };
        // Posts go out in order: the queue first, then this one at once
        // if it may (no copy), else it waits with a copy of its own. A post
        // no other member reads from here on is a broadcast's (its root
        // reads nothing; a reduction to all reads every other member).
        let bcast = read == 0;
        self.board_post(c);
        let posted = c.board.as_ref().is_some_and(|b| b.waiting.is_empty())
            && self.board_try_post(c, seq, data, bcast);
        if !posted {
            if let Some(b) = c.board.as_mut() {
                b.waiting.push_back((seq, data.to_vec(), bcast));
            }
        }
        Ok(())
    }

    /// Post waiting contributions whose buffers every reader released.
    fn board_post(&self, c: &mut Cache<T::Region>) {
        loop {
            let Some(b) = c.board.as_mut() else {
                return;
            };
            let Some((seq, data, bcast)) = b.waiting.pop_front() else {
                return;
            };
            if !self.board_try_post(c, seq, &data, bcast) {
                if let Some(b) = c.board.as_mut() {
                    b.waiting.push_front((seq, data, bcast));
                }
                return;
            }
        }
    }

    /// Post `data` for collective `seq` (a broadcast's payload when
    /// `bcast`) if every reader released its buffer; whether it did.
    pub(super) fn board_try_post(
        &self,
        c: &mut Cache<T::Region>,
        seq: u32,
        data: &[u8],
        bcast: bool,
    ) -> bool {
        let base = c.mem.as_ptr();
        let (me, n, layout) = (c.me, c.peers.len(), c.layout);
        let Some(b) = c.board.as_mut() else {
            return false;
        };
        let buf = Board::buffer(seq);
        let acks = (0..n).filter(|&r| r != me).map(|r| {
            // SAFETY: an acknowledgement word (8-aligned) of this rank's
            // own block.
            unsafe { word(base.add(layout.board_ack(r, buf))) }.load(Ordering::Acquire)
        });
        if !b.board.may_post(seq, acks) {
            return false;
        }
        debug_assert!(data.len() <= layout.board_capacity());
        // SAFETY: buffer `buf` of this rank's own block, which every reader
        // has released; `data` fits (board_start and the blocking paths of
        // coll_now check it against the board's capacity first).
        unsafe {
            let at = base.add(layout.board(buf));
            word(at.add(8)).store(data.len() as u64, Ordering::Relaxed);
            std::ptr::copy_nonoverlapping(data.as_ptr(), at.add(BOARD_DATA_AT), data.len());
            word(at).store(Board::flag(seq), Ordering::Release);
        }
        b.board.posted(seq);
        self.sets[0].stats.coll_board.add(1);
        if bcast {
            self.sets[0].stats.coll_board_bcast.add(1);
        }
        true
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
            for (r, peer) in c.peers.iter().enumerate() {
                let Some(p) = peer.mapped.filter(|_| *unread & (1 << r) != 0) else {
                    continue;
                };
                // SAFETY: `p` is member r's mapped block; its board buffer
                // holds collective `seq` once the flag says so, and r does
                // not post over it before this rank acknowledges; the data
                // is not used after the acknowledgement.
                unsafe {
                    if !board_has(p, &layout, *seq) {
                        // A member past `seq` in that buffer never posted
                        // it (it took another path: a collective that
                        // failed here): nothing to read.
                        if board_past(p, &layout, *seq) {
                            *unread &= !(1 << r);
                        }
                        continue;
                    }
                    // Overwritten memory is reported (the collective then
                    // never completes).
                    let r = board_read(p, &layout, *seq, r)
                        .and_then(|data| colls.on_msg(*seq, r, 0, 0, data).map(drop));
                    if let Err(e) = r {
                        first.get_or_insert(Error::from(e));
                    }
                    board_ack(p, &layout, me, *seq);
                }
                *unread &= !(1 << r);
            }
        }
        b.open.retain(|o| o.1 != 0);
        first.map_or(Ok(()), Err)
    }

    /// Collective `seq` runs here by messages and is not complete: if a
    /// member posted it on its board (its operand's length took it there),
    /// fail it (`colls` queues the aborts) and acknowledge that post.
    /// Whether it did. Only while waiting: a few loads per member.
    pub(super) fn board_foreign(
        &self,
        c: &mut Cache<T::Region>,
        colls: &mut TeamColl,
        seq: u32,
    ) -> bool {
        let (me, layout) = (c.me, c.layout);
        let Some(b) = c.board.as_ref() else {
            return false;
        };
        // On the board here: its posts are read by board_poll.
        if b.open.iter().any(|o| o.0 == seq) {
            return false;
        }
        for (r, peer) in c.peers.iter().enumerate() {
            let Some(p) = peer.mapped.filter(|_| r != me) else {
                continue;
            };
            // SAFETY: member r's mapped block; its post of `seq` (when the
            // flag says so) stays until this rank acknowledges it, after
            // its length is read.
            unsafe {
                if !board_has(p, &layout, seq) {
                    continue;
                }
                let len = board_read(p, &layout, seq, r).map_or(0, <[u8]>::len);
                if !colls.fail_posted(seq, r, len) {
                    return false;
                }
                board_ack(p, &layout, me, seq);
            }
            let all = (1u64 << c.peers.len()) - 1;
            board_owe(c, seq, all & !(1 << r));
            return true;
        }
        false
    }
}
