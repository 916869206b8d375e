//! The registered collective cache of Open MPI's coll/ofi component, sans
//! IO: its layout, the header of a message in it, and the per-peer slot
//! bookkeeping that lets a rank write into a peer's cache with one-sided
//! RMA and never overwrite a message the peer has not read.
//!
//! One block per team and rank, allocated and registered at once (as the
//! coll/ofi notes describe):
//!
//! * **reserved** ([`RESERVED`] bytes): a header naming the layout, so a
//!   mismatch between members is caught;
//! * **directory** (one [`DIR_ENTRY`]-byte entry per team member): the
//!   member's published cache (base, key, memory file), and the *credit*
//!   words where the member reports which of this rank's messages it has
//!   read;
//! * **data** (`GASNET_OFI_COLL_CACHE_PAGES` pages): [`DEPTH`] slots per
//!   sending member, each a [`SLOT_HEADER`] and up to
//!   [`Layout::max_chunk`] bytes of one chunk;
//! * **board** (two [`BOARD_BUF`]-byte buffers): where a member of a team
//!   that shares memory posts its contribution to a small reduction to
//!   all ([`crate::flat`]) for every other member to read in place
//!   ([`Board`]).
//!
//! Protocol for one message from `s` to `r` (message numbers count from 1
//! per ordered pair; message `m` uses slot `(m - 1) % DEPTH`):
//!
//! 1. `s` may use the slot once `r` has credited the slot's previous
//!    message (`m - DEPTH`), or at once for the first `DEPTH` messages;
//! 2. `s` writes the header's fields and the chunk into the slot, waits
//!    until that write is delivered, then writes the slot's *flag* word
//!    with `m` (within a host: a copy, then a release store);
//! 3. `r` sees the flag equal to the message number it expects next from
//!    `s`, reads the chunk, and writes `m` into its credit word for that
//!    slot in `s`'s directory entry.
//!
//! Per slot there is at most one flag write and one credit write in flight,
//! so no late write can overwrite a newer value.

use crate::Error;

/// Slots per ordered pair of members (messages in flight between them).
pub const DEPTH: usize = 8;
/// Bytes of the reserved region.
pub const RESERVED: usize = 64;
/// Bytes of one directory entry.
pub const DIR_ENTRY: usize = 128;
/// Offset of the credit words within a directory entry.
pub const CREDIT_AT: usize = 32;
/// Offset of the board acknowledgements within a directory entry (one
/// word per board buffer, after the credit words).
pub const BOARD_ACK_AT: usize = CREDIT_AT + 8 * DEPTH;
/// Bytes of a board buffer beyond the data it holds: the flag word and the
/// length word, and what keeps buffers whole cache lines.
pub const BOARD_HEADER: usize = 64;
/// Offset of a post's data in its board buffer, right after the flag and
/// length words: the first 48 bytes share the flag's cache line, so a
/// reader's one miss on the flag brings a small post whole.
pub const BOARD_DATA_AT: usize = 16;
/// Bytes of one board buffer of a team that does not share memory (its
/// board is not used): header and the largest direct-exchange
/// contribution.
pub const BOARD_BUF: usize = BOARD_HEADER + crate::flat::FLAT_MAX_BYTES;
/// Largest broadcast a team whose members share memory posts on its root's
/// board for the others to read in place (one copy in, one copy out per
/// reader, where the slots cost the root a copy per child and a tree of
/// forwarding hops); its board buffers hold this much.
pub const BOARD_BCAST_MAX: usize = 64 * 1024;
/// Bytes of a slot's header (flag word, then the message's fields).
pub const SLOT_HEADER: usize = 32;
/// Smallest useful slot: below this a team's cache is not used.
pub const MIN_SLOT: usize = 128;
/// Magic number at the start of the reserved region.
pub const MAGIC: u64 = 0x6765_782d_636f_6c6c; // "gex-coll"

/// Where everything lies in one member's cache block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    members: usize,
    data: usize,
    slot: usize,
    /// Bytes of one board buffer, header included.
    board_buf: usize,
}

impl Layout {
    /// The layout for a team of `members` with `data` bytes of data cache:
    /// `None` when the slots would be smaller than [`MIN_SLOT`] (the team
    /// then does without the cache).
    pub fn new(members: usize, data: usize) -> Option<Layout> {
        let per = members.checked_mul(DEPTH)?;
        let slot = (data / per.max(1)) / 64 * 64;
        (slot >= MIN_SLOT && members > 0).then_some(Layout {
            members,
            data,
            slot,
            board_buf: BOARD_BUF,
        })
    }

    /// [`Layout::new`] with board buffers of `board` bytes of data (at
    /// least [`crate::flat::FLAT_MAX_BYTES`]; rounded up to 64), for a team
    /// whose members share memory. Every member must pass the same.
    pub fn with_board(members: usize, data: usize, board: usize) -> Option<Layout> {
        let board = board
            .max(crate::flat::FLAT_MAX_BYTES)
            .checked_next_multiple_of(64)?;
        Layout::new(members, data).map(|l| Layout {
            board_buf: BOARD_HEADER + board,
            ..l
        })
    }

    /// Bytes of data one board buffer holds.
    pub fn board_capacity(&self) -> usize {
        self.board_buf - BOARD_HEADER
    }

    /// Members of the team.
    pub fn members(&self) -> usize {
        self.members
    }

    /// Bytes of the data cache.
    pub fn data_bytes(&self) -> usize {
        self.data
    }

    /// Bytes of one slot, header included.
    pub fn slot_bytes(&self) -> usize {
        self.slot
    }

    /// Largest chunk one slot carries.
    pub fn max_chunk(&self) -> usize {
        self.slot - SLOT_HEADER
    }

    /// Offset of the directory entry of member `peer`.
    pub fn dir_entry(&self, peer: usize) -> usize {
        RESERVED + peer * DIR_ENTRY
    }

    /// Offset of the credit word where `peer` reports reading this rank's
    /// messages in slot `j` of `peer`'s cache.
    pub fn credit(&self, peer: usize, j: usize) -> usize {
        self.dir_entry(peer) + CREDIT_AT + 8 * j
    }

    /// Offset of the data region.
    pub fn data_at(&self) -> usize {
        RESERVED + self.members * DIR_ENTRY
    }

    /// Offset of slot `j` for messages from member `sender`.
    pub fn slot(&self, sender: usize, j: usize) -> usize {
        self.data_at() + (sender * DEPTH + j) * self.slot
    }

    /// Offset of board buffer `b` (0 or 1).
    pub fn board(&self, b: usize) -> usize {
        self.data_at() + self.members * DEPTH * self.slot + b * self.board_buf
    }

    /// Offset of the word where member `reader` reports the last post it
    /// read from board buffer `b` of this rank.
    pub fn board_ack(&self, reader: usize, b: usize) -> usize {
        self.dir_entry(reader) + BOARD_ACK_AT + 8 * b
    }

    /// Bytes of the whole block (before rounding to pages).
    pub fn total(&self) -> usize {
        self.board(2)
    }

    /// The reserved region's contents: magic, members, slot size, board
    /// buffer size.
    pub fn reserved(&self) -> [u8; 32] {
        let mut b = [0u8; 32];
        b[0..8].copy_from_slice(&MAGIC.to_le_bytes());
        b[8..16].copy_from_slice(&(self.members as u64).to_le_bytes());
        b[16..24].copy_from_slice(&(self.slot as u64).to_le_bytes());
        b[24..32].copy_from_slice(&(self.board_buf as u64).to_le_bytes());
        b
    }
}

/// The fields a slot carries besides its flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotHeader {
    /// The collective's sequence number on the team.
    pub seq: u32,
    /// Phase (see [`crate::Msg::phase`]).
    pub phase: u8,
    /// The chunk's [`crate::Msg::shape`].
    pub shape: u8,
    /// Chunk index.
    pub chunk: u32,
    /// Chunk bytes that follow the header.
    pub len: u32,
}

impl SlotHeader {
    /// Bytes 8..32 of the slot (what follows the flag word).
    pub fn encode(&self) -> [u8; SLOT_HEADER - 8] {
        let mut b = [0u8; SLOT_HEADER - 8];
        b[0..4].copy_from_slice(&self.seq.to_le_bytes());
        b[4] = self.phase;
        b[5] = self.shape;
        b[8..12].copy_from_slice(&self.chunk.to_le_bytes());
        b[12..16].copy_from_slice(&self.len.to_le_bytes());
        b
    }

    /// Decode bytes 8..32 of a slot whose chunk may hold at most
    /// `max_chunk` bytes.
    pub fn decode(b: &[u8], from: usize, max_chunk: usize) -> Result<SlotHeader, Error> {
        let w = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        if b.len() < SLOT_HEADER - 8 {
            return Err(Error::BadSlot {
                from,
                len: b.len(),
                max: SLOT_HEADER - 8,
            });
        }
        let h = SlotHeader {
            seq: w(0),
            phase: b[4],
            shape: b[5],
            chunk: w(8),
            len: w(12),
        };
        if h.len as usize > max_chunk {
            return Err(Error::BadSlot {
                from,
                len: h.len as usize,
                max: max_chunk,
            });
        }
        Ok(h)
    }
}

/// Message numbering and slot credits of one member towards every other.
#[derive(Debug, Clone)]
pub struct Slots {
    /// Next message number to send to each member.
    out_next: Vec<u64>,
    /// Next message number expected from each member.
    in_next: Vec<u64>,
}

impl Slots {
    /// For a team of `members`.
    pub fn new(members: usize) -> Slots {
        Slots {
            out_next: vec![1; members],
            in_next: vec![1; members],
        }
    }

    /// The message number and slot of the next message to `to`, if the
    /// slot is free; `credit(j)` reads the credit word of slot `j` for `to`
    /// (what `to` last reported reading there). Does not consume it: call
    /// [`Slots::sent`] once the message is on its way.
    pub fn next_out(&self, to: usize, credit: impl Fn(usize) -> u64) -> Option<(u64, usize)> {
        let m = self.out_next[to];
        let j = ((m - 1) % DEPTH as u64) as usize;
        let free = m <= DEPTH as u64 || credit(j) == m - DEPTH as u64;
        free.then_some((m, j))
    }

    /// The message [`Slots::next_out`] gave for `to` was written.
    pub fn sent(&mut self, to: usize) {
        self.out_next[to] += 1;
    }

    /// The message number and slot expected next from `from`.
    pub fn next_in(&self, from: usize) -> (u64, usize) {
        let m = self.in_next[from];
        (m, ((m - 1) % DEPTH as u64) as usize)
    }

    /// The message [`Slots::next_in`] gave for `from` was read.
    pub fn read(&mut self, from: usize) {
        self.in_next[from] += 1;
    }
}

/// A member's board: the contributions of reductions to all by direct
/// exchange, posted in its own block and read in place by the others.
///
/// Collective `seq` uses buffer `seq % 2`; its flag word says `seq + 1`
/// once the contribution is there. Every reader then stores `seq + 1` in
/// its acknowledgement word for that buffer (in the poster's directory),
/// and the buffer is posted again only once every reader has acknowledged
/// the post it holds. A member finishes collective `seq` only after
/// reading every post of `seq`, so in a loop of blocking collectives the
/// buffer of `seq + 2` is always free.
#[derive(Debug, Clone, Default)]
pub struct Board {
    /// The collective each buffer last held.
    posted: [Option<u32>; 2],
}

impl Board {
    /// The buffer of collective `seq`.
    pub fn buffer(seq: u32) -> usize {
        (seq % 2) as usize
    }

    /// The flag (and acknowledgement) value of collective `seq`.
    pub fn flag(seq: u32) -> u64 {
        seq as u64 + 1
    }

    /// Whether collective `seq` may be posted now: `ack(reader)` reads
    /// the acknowledgement word of each other member for its buffer.
    pub fn may_post(&self, seq: u32, readers: impl Iterator<Item = u64>) -> bool {
        let mut readers = readers;
        match self.posted[Board::buffer(seq)] {
            None => true,
            Some(prev) => readers.all(|a| a == Board::flag(prev)),
        }
    }

    /// Collective `seq` was posted.
    pub fn posted(&mut self, seq: u32) {
        self.posted[Board::buffer(seq)] = Some(seq);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// A poster and two readers on a board, posts running ahead of the
    /// readers (non-blocking collectives): a buffer is never posted over
    /// before both have read it, and each reads every post once.
    #[test]
    fn a_board_buffer_is_not_posted_over_before_every_reader_read_it() {
        let mut board = Board::default();
        let mut flag = [0u64; 2];
        let mut acks = [[0u64; 2]; 2];
        let mut next_post = 0u32;
        let mut next_read = [0u32; 2];
        let mut reads = [Vec::new(), Vec::new()];
        for step in 0..400u32 {
            if next_post < 100
                && board.may_post(next_post, acks.iter().map(|a| a[Board::buffer(next_post)]))
            {
                let b = Board::buffer(next_post);
                for (r, a) in acks.iter().enumerate() {
                    if flag[b] != 0 {
                        assert_eq!(
                            a[b], flag[b],
                            "buffer {b} posted over before reader {r} read it"
                        );
                    }
                }
                flag[b] = Board::flag(next_post);
                board.posted(next_post);
                next_post += 1;
            }
            // Reader r reads every (r + 2)-th step, in collective order.
            for r in 0..2 {
                if step % (r as u32 + 2) == 0 {
                    let s = next_read[r];
                    let b = Board::buffer(s);
                    if flag[b] == Board::flag(s) {
                        reads[r].push(s);
                        acks[r][b] = Board::flag(s);
                        next_read[r] += 1;
                    }
                }
            }
        }
        for r in reads {
            assert_eq!(r, (0..100).collect::<Vec<_>>());
        }
    }

    #[test]
    fn layout_offsets() {
        let l = Layout::new(4, 32 * 4096).unwrap();
        // 4 senders x 8 slots share 128 KiB.
        assert_eq!(l.slot_bytes(), 4096);
        assert_eq!(l.max_chunk(), 4096 - 32);
        assert_eq!(l.dir_entry(0), 64);
        assert_eq!(l.credit(2, 1), 64 + 2 * 128 + 32 + 8);
        assert_eq!(l.data_at(), 64 + 4 * 128);
        assert_eq!(l.slot(3, 1), l.data_at() + 25 * 4096);
        assert_eq!(l.board(0), l.data_at() + 32 * 4096);
        assert_eq!(l.board(1), l.board(0) + BOARD_BUF);
        assert_eq!(l.board_ack(2, 1), l.dir_entry(2) + 96 + 8);
        assert_eq!(l.total(), l.board(0) + 2 * BOARD_BUF);
        const { assert!(BOARD_ACK_AT + 16 <= DIR_ENTRY) };
        // Too many members for the data cache, or none.
        assert_eq!(Layout::new(256, 32 * 4096), None);
        assert_eq!(Layout::new(4, 0), None);
        assert_eq!(Layout::new(0, 4096), None);
        assert!(Layout::new(128, 32 * 4096).is_some());
        // A shared team's board holds a broadcast.
        let b = Layout::with_board(4, 32 * 4096, BOARD_BCAST_MAX).unwrap();
        assert_eq!(b.board_capacity(), BOARD_BCAST_MAX);
        assert_eq!(b.board(1), b.board(0) + BOARD_HEADER + BOARD_BCAST_MAX);
        assert_eq!(b.total(), l.total() + 2 * (BOARD_BCAST_MAX - 1024));
        assert_eq!(l.board_capacity(), 1024);
        assert_eq!(Layout::with_board(4, 32 * 4096, 100).unwrap(), l);
    }

    #[test]
    fn header_round_trip_and_checks() {
        let h = SlotHeader {
            seq: 7,
            phase: 1,
            shape: 0,
            chunk: 3,
            len: 100,
        };
        let b = h.encode();
        assert_eq!(SlotHeader::decode(&b, 2, 100), Ok(h));
        assert_eq!(
            SlotHeader::decode(&b, 2, 99).unwrap_err().to_string(),
            "a collective cache slot from team rank 2 claims 100 bytes; at most 99 fit"
        );
    }

    /// A sender and a receiver exchanging through the slots with writes
    /// that land late: the sender never reuses a slot the receiver has not
    /// read, and every message arrives once, in order.
    #[test]
    fn slots_never_overwrite_unread_messages() {
        let mut tx = Slots::new(2);
        let mut rx = Slots::new(2);
        let mut slot_flag = [0u64; DEPTH];
        let mut credit = [0u64; DEPTH];
        let mut in_flight: VecDeque<(usize, u64)> = VecDeque::new();
        let mut got = Vec::new();
        let mut sent = 0u64;
        for step in 0..1000u64 {
            // Send as long as a slot is free.
            while sent < 300 {
                let Some((m, j)) = tx.next_out(1, |j| credit[j]) else {
                    break;
                };
                assert!(slot_flag[j] == 0 || credit[j] == slot_flag[j], "overwrite");
                slot_flag[j] = m;
                tx.sent(1);
                sent += 1;
            }
            // The receiver reads every few steps; credits land one step late.
            if step % 3 == 0 {
                loop {
                    let (m, j) = rx.next_in(0);
                    if slot_flag[j] != m {
                        break;
                    }
                    got.push(m);
                    rx.read(0);
                    in_flight.push_back((j, m));
                }
            } else if let Some((j, m)) = in_flight.pop_front() {
                credit[j] = m;
            }
        }
        assert_eq!(got, (1..=300).collect::<Vec<_>>());
    }
}
