//! AM Long in one message (target-side reassembly, the reference's
//! future work): where the provider has remote CQ data, an AM Long goes as
//! one `fi_writemsg` with two remote pieces, the payload into its place in
//! the destination's segment and the Long's header into a *landing slot*
//! the destination keeps for the sender, with 8 bytes of remote CQ data
//! naming the slot. The destination's completion says both have arrived;
//! it decodes the header from the slot and runs the handler. No round trip
//! separates payload and header (put-then-send waits for the write's
//! delivery before it sends the header).
//!
//! Slots are credits. Each destination keeps [`SLOTS`] slots per sender
//! (per endpoint set and side); the sender takes them in order and may use
//! slot `seq % SLOTS` only while fewer than [`SLOTS`] are outstanding. The
//! destination frees a slot once its handler has returned (in any order)
//! and tells the sender how far the freed prefix reaches once half the
//! slots are free again, in one small message ([`Keeper::release`]). A
//! sender without a credit falls back to put-then-send: nothing waits for
//! a credit, so no cycle of ranks waiting on each other can form.
//!
//! This module holds the bookkeeping of both sides ([`Lender`] at the
//! sender, [`Keeper`] at the destination) and the CQ data's encoding; the
//! conduit posts and polls.

use crate::wire::{overhead, Kind, HEADER_LEN};
use crate::{Error, MAX_ARGS};

/// Slots a destination keeps per sender (per set and side).
pub const SLOTS: u32 = 8;
/// Bytes per slot: the largest Long header (8-byte header, length word,
/// 16 arguments, destination offset: 88 bytes) rounded up.
pub const SLOT_LEN: usize = 96;
/// Slots freed before the destination reports them.
const REPORT_EVERY: u32 = SLOTS / 2;
/// The CQ data's top byte: tells a landing from any other remote write.
const MAGIC: u64 = 0xA7;

/// Which slot an arrival names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Landed {
    /// The sender.
    pub src: u32,
    /// Request (else reply) side.
    pub is_request: bool,
    /// Slot index (`0..SLOTS`).
    pub slot: u32,
}

impl Landed {
    /// The remote CQ data that names this slot.
    pub fn encode(self) -> u64 {
        (MAGIC << 56)
            | ((self.is_request as u64) << 40)
            | ((self.slot as u64) << 32)
            | self.src as u64
    }

    /// The slot some remote CQ data names; an error for data no sender of
    /// this conduit writes (a foreign write, a corrupted completion).
    pub fn decode(data: u64, size: usize) -> Result<Landed, Error> {
        let bad = |why: &str| Error::BadLanding {
            data,
            why: why.to_string(),
        };
        if data >> 56 != MAGIC {
            return Err(bad("not a landing"));
        }
        let src = data as u32;
        let slot = ((data >> 32) & 0xff) as u32;
        if (src as usize) >= size {
            return Err(bad(&format!("sender {src} is not a rank of {size}")));
        }
        if slot >= SLOTS {
            return Err(bad(&format!("slot {slot} is not below {SLOTS}")));
        }
        if (data >> 41) & 0x7fff != 0 {
            return Err(bad("reserved bits set"));
        }
        Ok(Landed {
            src,
            is_request: (data >> 40) & 1 == 1,
            slot,
        })
    }
}

/// The length of the Long header in a slot that `landed` names, checked
/// against the landing (the header's own checks come with its decoding).
pub fn header_len(slot: &[u8; SLOT_LEN], landed: Landed) -> Result<usize, Error> {
    let bad = |why: String| Error::BadLanding {
        data: landed.encode(),
        why,
    };
    let b0 = slot[0];
    let nargs = ((b0 >> 2) & 0x1f) as usize;
    if b0 & 3 != 2 || nargs > MAX_ARGS {
        return Err(bad(format!(
            "the slot holds no Long header (first byte {b0:#04x})"
        )));
    }
    if (b0 & 0x80 != 0) != landed.is_request {
        return Err(bad("the header's side differs from the landing's".into()));
    }
    let src = u32::from_le_bytes([slot[4], slot[5], slot[6], slot[7]]);
    if src != landed.src {
        return Err(bad(format!("the header names rank {src} as its sender")));
    }
    const { assert!(HEADER_LEN <= SLOT_LEN) };
    Ok(overhead(Kind::Long, nargs))
}

/// Byte offset of `src`'s slot `slot` for endpoint set `set` and `side`
/// (0 requests, 1 replies) in a landing area of a job of `size` ranks.
pub fn slot_offset(set: usize, side: usize, size: usize, src: usize, slot: u32) -> usize {
    (((set * 2 + side) * size + src) * SLOTS as usize + slot as usize) * SLOT_LEN
}

/// Bytes of a landing area for `sets` endpoint sets and `size` ranks.
pub fn area_len(sets: usize, size: usize) -> usize {
    slot_offset(sets, 0, size, 0, 0)
}

/// The sender's side: credits per destination (one `Lender` per set and
/// side).
#[derive(Debug, Clone)]
pub struct Lender {
    /// Slots taken, per destination (wrapping).
    next: Vec<u32>,
    /// Slots the destination reported free, per destination (wrapping).
    freed: Vec<u32>,
}

impl Lender {
    /// Credits for `size` destinations, all slots free.
    pub fn new(size: usize) -> Lender {
        Lender {
            next: vec![0; size],
            freed: vec![0; size],
        }
    }

    /// Take the next slot of `dest`, if a credit is left.
    #[inline]
    pub fn take(&mut self, dest: usize) -> Option<u32> {
        let n = self.next[dest];
        if n.wrapping_sub(self.freed[dest]) >= SLOTS {
            return None;
        }
        self.next[dest] = n.wrapping_add(1);
        Some(n % SLOTS)
    }

    /// Give back the slot just taken from `dest`, whose write was not
    /// posted. Only under the same lock as the `take` (no other take in
    /// between).
    pub fn untake(&mut self, dest: usize) {
        self.next[dest] = self.next[dest].wrapping_sub(1);
    }

    /// `dest` reports its slots free up to `upto` (wrapping count). A
    /// report behind the last one is ignored (reports may arrive out of
    /// order); one beyond the slots taken is an error.
    pub fn credit(&mut self, dest: usize, upto: u32) -> Result<(), Error> {
        if dest >= self.next.len() {
            // A report naming a rank outside the job (a corrupt header).
            return Err(Error::BadCredit {
                src: dest as u32,
                upto,
                why: format!("rank {dest} is outside the job of {}", self.next.len()),
            });
        }
        let taken = self.next[dest].wrapping_sub(self.freed[dest]);
        let advance = upto.wrapping_sub(self.freed[dest]);
        if advance > SLOTS {
            // Behind the last report (wrapped), or nonsense.
            if self.freed[dest].wrapping_sub(upto) <= SLOTS {
                return Ok(());
            }
            return Err(Error::BadCredit {
                src: dest as u32,
                upto,
                why: "more than the slots a sender has".into(),
            });
        }
        if advance > taken {
            return Err(Error::BadCredit {
                src: dest as u32,
                upto,
                why: format!("only {taken} slots are in use"),
            });
        }
        self.freed[dest] = upto;
        Ok(())
    }

    /// Slots of `dest` in use (taken, not reported free).
    pub fn in_use(&self, dest: usize) -> u32 {
        self.next[dest].wrapping_sub(self.freed[dest])
    }
}

/// The destination's side: which slots of each sender hold a header not
/// yet handled (one `Keeper` per set and side).
#[derive(Debug, Clone)]
pub struct Keeper {
    /// Start of the freed prefix per sender (wrapping count).
    tail: Vec<u32>,
    /// Slots landed and not freed, per sender (bit per slot index).
    busy: Vec<u32>,
    /// Slots freed out of order, waiting for the prefix (bit per index).
    done: Vec<u32>,
    /// The freed prefix last reported, per sender.
    reported: Vec<u32>,
}

impl Keeper {
    /// Slots of `size` senders, all free.
    pub fn new(size: usize) -> Keeper {
        Keeper {
            tail: vec![0; size],
            busy: vec![0; size],
            done: vec![0; size],
            reported: vec![0; size],
        }
    }

    /// A header landed in `src`'s slot `slot`: an error if that slot is
    /// already busy (the sender overran its credits).
    pub fn landed(&mut self, src: usize, slot: u32) -> Result<(), Error> {
        let bit = 1u32 << slot;
        if self.busy[src] & bit != 0 || self.done[src] & bit != 0 {
            return Err(Error::BadLanding {
                data: Landed {
                    src: src as u32,
                    is_request: true,
                    slot,
                }
                .encode(),
                why: format!("slot {slot} of rank {src} is still in use"),
            });
        }
        self.busy[src] |= bit;
        Ok(())
    }

    /// `src`'s slot `slot` was handled: free it. Returns the count to
    /// report to `src` when enough slots are free since the last report.
    pub fn release(&mut self, src: usize, slot: u32) -> Option<u32> {
        let bit = 1u32 << slot;
        if self.busy[src] & bit == 0 {
            return None;
        }
        self.busy[src] &= !bit;
        self.done[src] |= bit;
        loop {
            let b = 1u32 << (self.tail[src] % SLOTS);
            if self.done[src] & b == 0 {
                break;
            }
            self.done[src] &= !b;
            self.tail[src] = self.tail[src].wrapping_add(1);
        }
        self.due(src)
    }

    /// `src` could not write its slot `slot` (the write was refused or
    /// completed in error; a failed transfer writes no completion at its
    /// target, so nothing landed there): free it as if handled, so the
    /// slots after it are reported free too. Returns the count to report
    /// to `src` when due. A slot that landed (its handler still to run) is
    /// left to its release. The sender voids only a slot it took and was
    /// not credited for, once.
    pub fn void(&mut self, src: usize, slot: u32) -> Result<Option<u32>, Error> {
        if slot >= SLOTS || src >= self.busy.len() {
            return Err(Error::BadVoid {
                src: src as u32,
                slot,
                why: format!(
                    "slots are 0..{SLOTS} and the job's ranks 0..{}",
                    self.busy.len()
                ),
            });
        }
        let bit = 1u32 << slot;
        if self.busy[src] & bit != 0 || self.done[src] & bit != 0 {
            return Ok(None);
        }
        self.busy[src] |= bit;
        Ok(self.release(src, slot))
    }

    /// The count to report to `src` now, if enough slots are free since
    /// the last report; marks it reported.
    fn due(&mut self, src: usize) -> Option<u32> {
        let t = self.tail[src];
        if t.wrapping_sub(self.reported[src]) >= REPORT_EVERY {
            self.reported[src] = t;
            return Some(t);
        }
        None
    }

    /// A report to `src` could not be sent: take it back so the next
    /// release (or [`Keeper::unreported`]) reports it again.
    pub fn unreport(&mut self, src: usize, was: u32) {
        if self.reported[src] == was {
            self.reported[src] = was.wrapping_sub(REPORT_EVERY.max(1));
        }
    }

    /// Senders with freed slots not reported yet, and the count to report
    /// (marked reported).
    pub fn unreported(&mut self) -> Vec<(usize, u32)> {
        let mut out = Vec::new();
        for src in 0..self.tail.len() {
            if self.tail[src] != self.reported[src] {
                self.reported[src] = self.tail[src];
                out.push((src, self.tail[src]));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
