//! Target `pshm_ring`: the memory of a shared-memory AM ring as a peer
//! process may have left it (`conduit::pshm::ring`).
//!
//! Input: 2 bytes choosing the capacity (a power of two, 16 B .. 4 KiB),
//! 8 bytes of tail, then the ring's data bytes (the rest, repeated or cut
//! to the capacity). The harness copies them into a fresh ring and reads
//! it as the consumer does, up to 64 records, then writes records as the
//! producer does into a fresh ring and reads them back.
//!
//! Checked besides "no panic":
//! * every record the consumer is handed lies inside the ring's data, and
//!   a length word that cannot be a record is reported, not followed;
//! * whatever the producer writes (records of the lengths the input
//!   names, wrapping around) the consumer reads back, in order and
//!   unchanged, and a full ring refuses a record rather than overwrite.

use conduit::mem::Mapping;
use conduit::pshm::ring::{footprint, record_len, Producer, Ring, HEADER};

/// Read `data` as ring memory and then as producer lengths.
pub fn run(data: &[u8]) {
    if data.len() < 10 {
        return;
    }
    let cap = 16usize << (u16::from_le_bytes([data[0], data[1]]) % 9);
    let tail = u64::from_le_bytes(data[2..10].try_into().unwrap_or([0; 8]));
    let body = &data[10..];
    consume(cap, tail, body);
    produce(cap, body);
}

fn fresh(cap: usize) -> (Mapping, Ring) {
    let m = Mapping::anonymous(footprint(cap)).expect("map a ring");
    // SAFETY: a fresh zeroed mapping of the ring's footprint, 128-aligned
    // (page-aligned), which outlives the ring (both are returned together
    // and dropped together).
    let r = unsafe { Ring::new(m.as_ptr(), cap) };
    (m, r)
}

fn consume(cap: usize, tail: u64, body: &[u8]) {
    let (m, r) = fresh(cap);
    let data_start = m.as_ptr() as usize + HEADER;
    // SAFETY: the header's first word and the data lie inside `m`; nothing
    // else uses the ring yet.
    unsafe {
        m.as_ptr().cast::<u64>().write(tail);
        for (i, b) in body
            .iter()
            .cycle()
            .take(if body.is_empty() { 0 } else { cap })
            .enumerate()
        {
            m.as_ptr().add(HEADER + i).write(*b);
        }
    }
    for _ in 0..64 {
        // SAFETY: this function is the ring's only consumer.
        match unsafe { r.peek() } {
            Ok(Some(rec)) => {
                let start = rec.ptr as usize;
                assert!(
                    start >= data_start && start + rec.len <= data_start + cap,
                    "a record of {} bytes at {:#x} leaves the data {:#x}+{cap}",
                    rec.len,
                    start,
                    data_start
                );
                // SAFETY: checked just above to lie inside the mapping.
                let bytes = unsafe { std::slice::from_raw_parts(rec.ptr, rec.len) };
                std::hint::black_box(bytes);
                // SAFETY: the latest peek, by this consumer.
                unsafe { r.release(rec) };
            }
            Ok(None) | Err(_) => break,
        }
    }
}

fn produce(cap: usize, body: &[u8]) {
    let (_m, r) = fresh(cap);
    let largest = ((cap - 8) / 2).saturating_sub(8);
    let mut p = Producer::default();
    let mut sent = std::collections::VecDeque::new();
    for (i, &b) in body.iter().enumerate() {
        let len = (b as usize) % (largest + 1);
        if record_len(len) * 2 + 8 > cap {
            continue;
        }
        let fill = (i as u8).wrapping_mul(31);
        // SAFETY: this function is the only producer, with its Producer;
        // the record fits the capacity (checked above).
        let ok = unsafe { r.push(&mut p, len, |buf| buf.fill(fill)) };
        if ok {
            sent.push_back((len, fill));
        }
        // Drain every other step, so the ring fills and wraps.
        if i % 2 == 1 || !ok {
            while let Some((len, fill)) = sent.pop_front() {
                // SAFETY: the only consumer.
                let rec = unsafe { r.peek() }
                    .expect("the producer's records are well formed")
                    .expect("a record the producer published");
                assert_eq!(rec.len, len);
                // SAFETY: the record lies inside the ring until released.
                let got = unsafe { std::slice::from_raw_parts(rec.ptr, rec.len) };
                assert!(got.iter().all(|&x| x == fill), "record bytes changed");
                // SAFETY: the latest peek, by this consumer.
                unsafe { r.release(rec) };
            }
            // SAFETY: the only consumer.
            assert!(unsafe { r.peek() }.expect("well formed").is_none());
        }
    }
}

/// Seeds: empty rings, rings with a record, a wrap marker, a bad length.
pub fn seeds() -> crate::Seeds {
    let ring = |cap_sel: u16, tail: u64, words: &[u64]| {
        let mut v = cap_sel.to_le_bytes().to_vec();
        v.extend_from_slice(&tail.to_le_bytes());
        for w in words {
            v.extend_from_slice(&w.to_le_bytes());
        }
        v
    };
    vec![
        ("empty-64".into(), ring(2, 0, &[0; 8])),
        ("one-record".into(), ring(4, 0, &[17, 1, 2, 0])),
        ("wrap".into(), ring(2, 48, &[9, 7, 0, 0, 0, 0, u64::MAX, 0])),
        ("bad-length".into(), ring(2, 0, &[1 << 40, 0])),
        ("lengths".into(), {
            let mut v = ring(5, 0, &[]);
            v.extend((0..200u8).map(|i| i.wrapping_mul(37)));
            v
        }),
    ]
}
