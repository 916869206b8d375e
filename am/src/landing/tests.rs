//! Unit tests of the landing slots: the CQ data's encoding, the slot
//! header checks, the slot layout and the credits of [`super::Lender`] and
//! [`super::Keeper`].

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
