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
mod tests {
    use super::*;

    #[test]
    fn a_credit_naming_a_rank_outside_the_job_is_refused() {
        let mut l = Lender::new(2);
        match l.credit(5, 1) {
            Err(Error::BadCredit {
                src: 5,
                upto: 1,
                why,
            }) => {
                assert_eq!(why, "rank 5 is outside the job of 2")
            }
            other => panic!("{other:?}"),
        }
        assert!(l.credit(1, 0).is_ok());
    }

    #[test]
    fn cq_data_round_trips_and_foreign_data_is_refused() {
        let l = Landed {
            src: 70_000,
            is_request: false,
            slot: 7,
        };
        assert_eq!(Landed::decode(l.encode(), 70_001).unwrap(), l);
        let e = Landed::decode(l.encode(), 70_000).unwrap_err();
        assert!(
            e.to_string()
                .contains("sender 70000 is not a rank of 70000"),
            "{e}"
        );
        assert!(Landed::decode(42, 4).is_err());
        let bad_slot = (MAGIC << 56) | (9u64 << 32);
        assert!(Landed::decode(bad_slot, 4)
            .unwrap_err()
            .to_string()
            .contains("slot 9"));
    }

    #[test]
    fn a_slot_holds_a_checked_long_header() {
        use crate::wire::{encode_into, Header};
        let l = Landed {
            src: 3,
            is_request: true,
            slot: 1,
        };
        let h = Header {
            kind: Kind::Long,
            nargs: 16,
            is_request: true,
            handler: 200,
            src: 3,
        };
        let mut slot = [0u8; SLOT_LEN];
        let args = [7u32; 16];
        encode_into(&mut slot, &h, &args, Some(4096), 1 << 20, &[]);
        let n = header_len(&slot, l).unwrap();
        assert!(n <= SLOT_LEN);
        let m = crate::wire::decode(&slot[..n]).unwrap();
        assert_eq!((m.dest_offset, m.payload_len), (Some(4096), 1 << 20));
        let other = Landed { src: 4, ..l };
        assert!(header_len(&slot, other)
            .unwrap_err()
            .to_string()
            .contains("rank 3"));
        let reply = Landed {
            is_request: false,
            ..l
        };
        assert!(header_len(&slot, reply).is_err());
        assert!(header_len(&[0u8; SLOT_LEN], l).is_err());
    }

    #[test]
    fn slots_do_not_overlap() {
        let (sets, size) = (2, 3);
        let mut seen = std::collections::BTreeSet::new();
        for set in 0..sets {
            for side in 0..2 {
                for src in 0..size {
                    for slot in 0..SLOTS {
                        let o = slot_offset(set, side, size, src, slot);
                        assert!(o + SLOT_LEN <= area_len(sets, size));
                        assert!(seen.insert(o));
                    }
                }
            }
        }
    }

    #[test]
    fn a_sender_stops_at_its_credits_and_resumes_after_a_report() {
        let mut l = Lender::new(2);
        let mut k = Keeper::new(2);
        let mut reports = Vec::new();
        for i in 0..SLOTS {
            let s = l.take(1).unwrap();
            assert_eq!(s, i);
            k.landed(0, s).unwrap();
        }
        assert_eq!(l.take(1), None, "no credit left");
        assert!(l.take(0).is_some(), "other destinations unaffected");
        // Freed out of order: nothing reported until the prefix moves.
        for s in (0..SLOTS).rev() {
            if let Some(r) = k.release(0, s) {
                reports.push(r);
            }
        }
        assert_eq!(reports, vec![SLOTS]);
        l.credit(1, SLOTS).unwrap();
        assert_eq!(l.in_use(1), 0);
        assert_eq!(l.take(1), Some(0));
    }

    #[test]
    fn bad_credits_and_overruns_are_errors() {
        let mut l = Lender::new(1);
        l.take(0).unwrap();
        assert!(l
            .credit(0, 2)
            .unwrap_err()
            .to_string()
            .contains("only 1 slots"));
        l.credit(0, 1).unwrap();
        l.credit(0, 0).unwrap(); // an old report, ignored
        assert_eq!(l.in_use(0), 0);
        assert!(l.credit(0, 1 << 20).is_err());
        let s = l.take(0).unwrap();
        l.untake(0);
        assert_eq!(
            (l.take(0), l.in_use(0)),
            (Some(s), 1),
            "the slot given back is taken again"
        );
        let mut k = Keeper::new(1);
        k.landed(0, 3).unwrap();
        assert!(k.landed(0, 3).is_err());
    }

    #[test]
    fn an_unsent_report_is_sent_again() {
        let mut k = Keeper::new(1);
        for s in 0..REPORT_EVERY {
            k.landed(0, s).unwrap();
        }
        let mut r = None;
        for s in 0..REPORT_EVERY {
            r = r.or(k.release(0, s));
        }
        let r = r.unwrap();
        k.unreport(0, r);
        assert_eq!(k.unreported(), vec![(0, r)]);
        assert!(k.unreported().is_empty());
    }

    /// A slot whose write failed is voided by its sender: the slots after
    /// it are reported free once handled, as if it had been; a void of a
    /// slot that landed is left to the slot's release.
    #[test]
    fn a_voided_slot_frees_the_slots_after_it() {
        let mut l = Lender::new(1);
        let mut k = Keeper::new(1);
        let taken: Vec<u32> = (0..SLOTS).map(|_| l.take(0).unwrap()).collect();
        assert_eq!(l.take(0), None);
        // Slot 0's write failed; the others landed and were handled.
        let mut report = None;
        for &s in &taken[1..] {
            k.landed(0, s).unwrap();
            report = report.or(k.release(0, s));
        }
        assert_eq!(report, None, "slot 0 holds the prefix back");
        assert_eq!(k.void(0, 0), Ok(Some(SLOTS)));
        l.credit(0, SLOTS).unwrap();
        assert_eq!(l.in_use(0), 0);
        // Landed and not handled: left to its release.
        let s = l.take(0).unwrap();
        k.landed(0, s).unwrap();
        assert_eq!(k.void(0, s), Ok(None));
        assert_eq!(k.release(0, s), None);
        let bad = |src: usize, slot: u32| k.clone().void(src, slot).unwrap_err().to_string();
        assert_eq!(
            bad(0, SLOTS),
            "rank 0 voided landing slot 8, which cannot be: slots are 0..8 and the job's ranks 0..1"
        );
        assert_eq!(
            bad(1, 0),
            "rank 1 voided landing slot 0, which cannot be: slots are 0..8 and the job's ranks 0..1"
        );
    }

    proptest::proptest! {
        /// Whatever CQ data and slot bytes a peer (or a broken provider)
        /// produces, decoding never panics, and a slot accepted as a Long
        /// header is one the wire decoder reads within the slot.
        #[test]
        fn any_landing_is_checked(data in proptest::num::u64::ANY, size in 1usize..100_000, bytes in proptest::collection::vec(proptest::num::u8::ANY, SLOT_LEN)) {
            let Ok(l) = Landed::decode(data, size) else { return Ok(()) };
            proptest::prop_assert!((l.src as usize) < size && l.slot < SLOTS);
            let slot: [u8; SLOT_LEN] = bytes.try_into().unwrap();
            if let Ok(n) = header_len(&slot, l) {
                proptest::prop_assert!(n <= SLOT_LEN);
                if let Ok(m) = crate::wire::decode(&slot[..n]) {
                    proptest::prop_assert_eq!(m.header.kind, Kind::Long);
                    proptest::prop_assert_eq!(m.header.src, l.src);
                }
            }
        }

        /// Any interleaving of takes, landings in any order and releases
        /// never lets a sender reuse a busy slot, and every slot comes
        /// back.
        #[test]
        fn credits_never_overrun(ops in proptest::collection::vec(0u8..4, 1..400)) {
            let mut l = Lender::new(1);
            let mut k = Keeper::new(1);
            let mut in_flight: Vec<u32> = Vec::new();
            for op in ops {
                match op {
                    0 | 1 => {
                        if let Some(s) = l.take(0) {
                            k.landed(0, s).unwrap();
                            in_flight.push(s);
                        } else {
                            proptest::prop_assert_eq!(l.in_use(0), SLOTS);
                        }
                    }
                    _ => {
                        if !in_flight.is_empty() {
                            let i = (op as usize * 7) % in_flight.len();
                            let s = in_flight.swap_remove(i);
                            if let Some(r) = k.release(0, s) {
                                l.credit(0, r).unwrap();
                            }
                        }
                    }
                }
            }
            for s in in_flight.drain(..) {
                if let Some(r) = k.release(0, s) {
                    l.credit(0, r).unwrap();
                }
            }
            for (_, r) in k.unreported() {
                l.credit(0, r).unwrap();
            }
            proptest::prop_assert_eq!(l.in_use(0), 0);
        }
    }
}
