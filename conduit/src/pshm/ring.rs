//! A single-producer, single-consumer ring of variable-length records in
//! shared memory: how an Active Message travels from one rank of a host to
//! another.
//!
//! Layout at `base` (128-byte aligned): the consumer's `tail` (bytes ever
//! consumed) on its own cache line, then `cap` bytes of data (a power of
//! two). A record is an 8-byte word holding its length plus one, then the
//! bytes, padded to 8. The word after the newest record is always 0 (the
//! producer writes that terminator before it publishes the record), so the
//! consumer finds a new record by reading the word at its tail: 0 means
//! empty. A record that would cross the end of the data is written at
//! offset 0 and a wrap marker is published where it would have started.
//!
//! Only the record's own cache line moves from producer to consumer for a
//! small message: the producer keeps its head and a copy of the tail in
//! process memory ([`Producer`]) and reads the shared tail only when its copy
//! says the ring is full.
//!
//! The producer writes a record's bytes and its terminator, then publishes
//! the length word with a release store; the consumer reads it with an
//! acquire load, so everything written before (the record, and a Long's
//! payload copied into the receiver's segment) is visible to it. The
//! consumer releases a record (a release store of `tail`) only once its
//! handler returned, so the handler reads the bytes in place.
//!
//! Capacity: `cap` is at least twice the largest record plus a word, so a
//! record always fits into an empty ring, wrap and terminator included.

use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes before the data: the tail's cache line and a spare one (adjacent
/// lines are fetched in pairs).
pub const HEADER: usize = 128;
/// Record length word.
const WORD: usize = 8;
/// A length word meaning "continue at offset 0".
const WRAP: u64 = u64::MAX;

/// Space a record of `len` bytes takes.
#[inline]
pub const fn record_len(len: usize) -> usize {
    WORD + len.next_multiple_of(WORD)
}

/// Bytes of shared memory a ring of `cap` data bytes takes.
#[inline]
pub const fn footprint(cap: usize) -> usize {
    HEADER + cap
}

/// The smallest data capacity for records of at most `record` bytes (as
/// [`record_len`] gives): two records and a terminator.
#[inline]
pub const fn min_capacity(record: usize) -> usize {
    2 * record + WORD
}

/// The data capacity for messages of at most `largest` bytes and at least
/// `want` bytes of data: a power of two of at least [`min_capacity`].
pub fn capacity(largest: usize, want: usize) -> usize {
    min_capacity(record_len(largest))
        .max(want)
        .next_power_of_two()
}

/// A view of one ring in shared memory. Copying the view does not copy the
/// ring; the memory must outlive every view (the mapping is held by whoever
/// holds the view).
#[derive(Debug, Clone, Copy)]
pub struct Ring {
    base: *mut u8,
    cap: usize,
}

// SAFETY: a Ring is an address into shared memory whose protocol (atomic
// length words and tail, single producer and single consumer enforced by
// the callers' locks) is what makes concurrent use sound, not the thread.
unsafe impl Send for Ring {}
// SAFETY: as above.
unsafe impl Sync for Ring {}

/// The producer's side of a ring, in the producer's memory: where the next
/// record goes, and the tail as last read.
#[derive(Debug, Default, Clone, Copy)]
pub struct Producer {
    head: u64,
    tail: u64,
}

/// A length word that cannot be a record of this ring: its memory was
/// written by something other than the ring's protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corrupt {
    /// Data offset of the word.
    pub at: usize,
    /// The word.
    pub word: u64,
    /// The ring's data bytes.
    pub cap: usize,
}

impl std::fmt::Display for Corrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the word {:#x} at offset {} of a {}-byte ring is no record (or the tail is misaligned): the shared memory was overwritten",
            self.word, self.at, self.cap
        )
    }
}

/// A record the consumer holds until it calls [`Ring::release`].
#[derive(Debug, Clone, Copy)]
pub struct Record {
    /// Where the record's bytes start.
    pub ptr: *const u8,
    /// Its length.
    pub len: usize,
    /// The tail after it.
    next: u64,
}

impl Ring {
    /// The ring at `base` with `cap` data bytes.
    ///
    /// # Safety
    /// `base..base+footprint(cap)` must be mapped, writable, 128-byte
    /// aligned and zeroed when the ring is first used (a fresh mapping), for
    /// as long as the view is used; `cap` a power of two, at least 16.
    pub unsafe fn new(base: *mut u8, cap: usize) -> Ring {
        debug_assert!(cap.is_power_of_two() && cap >= 2 * WORD);
        debug_assert_eq!(base as usize % 64, 0);
        Ring { base, cap }
    }

    #[inline(always)]
    fn tail(&self) -> &AtomicU64 {
        // SAFETY: the first 8 bytes of the header, aligned and inside the
        // mapping (`new`'s contract); only ever accessed atomically.
        unsafe { AtomicU64::from_ptr(self.base.cast()) }
    }

    /// The length word at data offset `pos` (8-aligned, below `cap`).
    #[inline(always)]
    fn word(&self, pos: usize) -> &AtomicU64 {
        debug_assert!(pos % WORD == 0 && pos < self.cap);
        // SAFETY: inside the data and 8-aligned; length words are only
        // accessed atomically while they can be read by the consumer (a
        // record's bytes are written plainly only while the consumer
        // cannot reach them).
        unsafe { AtomicU64::from_ptr(self.data(pos).cast()) }
    }

    #[inline(always)]
    fn data(&self, pos: usize) -> *mut u8 {
        // SAFETY: pos < cap (masked by the callers): inside the data.
        unsafe { self.base.add(HEADER + pos) }
    }

    /// Whether nothing is waiting (a consumer's cheap check).
    ///
    /// # Safety
    ///
    /// The caller is the ring's one consumer (as for [`Ring::peek`]): the
    /// word read is at the consumer's own tail, which the producer writes
    /// only atomically; read with another thread's tail (stale once that
    /// thread consumed and the producer wrapped round), it could be the
    /// body of a record the producer is writing plainly, a data race.
    #[inline(always)]
    pub unsafe fn is_empty(&self) -> bool {
        let pos = (self.tail().load(Ordering::Relaxed) as usize) & (self.cap - 1);
        // A misaligned tail is no position of a record: not empty, so that
        // `peek` reports it.
        pos % WORD == 0 && self.word(pos).load(Ordering::Acquire) == 0
    }

    /// Append a record of `len` bytes, written by `fill`; `false` when the
    /// ring has no room now (nothing written).
    ///
    /// # Safety
    /// The caller is the ring's only producer for the duration, with the
    /// ring's one [`Producer`] (a lock in multi-threaded mode, one producer
    /// process per ring); `min_capacity(record_len(len)) <= cap`.
    #[inline]
    pub unsafe fn push(&self, p: &mut Producer, len: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        let rec = record_len(len);
        debug_assert!(min_capacity(rec) <= self.cap);
        let mask = self.cap - 1;
        let pos = (p.head as usize) & mask;
        let to_end = self.cap - pos;
        let wrap = rec > to_end;
        let used = if wrap { to_end + rec } else { rec };
        // Free bytes; a tail the consumer could not have written (ahead of
        // the head, or a whole ring behind) counts as no room, never as a
        // wrapped-around amount.
        let free = |tail: u64| {
            p.head
                .checked_sub(tail)
                .and_then(|used| self.cap.checked_sub(used as usize))
                .unwrap_or(0)
        };
        if free(p.tail) < used + WORD {
            p.tail = self.tail().load(Ordering::Acquire);
            if free(p.tail) < used + WORD {
                return false;
            }
        }
        let at = if wrap { 0 } else { pos };
        // SAFETY: `at..at+rec` and the terminator word after it are free
        // space (checked above, the consumer has released them) inside the
        // data; the consumer reads none of it before the length word's
        // release store below.
        unsafe { fill(std::slice::from_raw_parts_mut(self.data(at + WORD), len)) };
        self.word((at + rec) & mask).store(0, Ordering::Relaxed);
        self.word(at).store(len as u64 + 1, Ordering::Release);
        if wrap {
            // The consumer waits at `pos` (it holds 0): send it to 0.
            self.word(pos).store(WRAP, Ordering::Release);
        }
        p.head += used as u64;
        true
    }

    /// The oldest record not released, if any (following a wrap marker).
    /// A length word that cannot describe a record inside the ring (a
    /// record past its end, a wrap marker not followed by a record) is
    /// reported, not followed: no slice ever leaves the ring's memory.
    ///
    /// # Safety
    /// The caller is the ring's only consumer until it releases the record
    /// (a try-lock per ring set); the record's bytes stay valid until then.
    #[inline]
    pub unsafe fn peek(&self) -> Result<Option<Record>, Corrupt> {
        let mut tail = self.tail().load(Ordering::Relaxed);
        let mut pos = (tail as usize) & (self.cap - 1);
        if pos % WORD != 0 {
            return Err(Corrupt {
                at: pos,
                word: tail,
                cap: self.cap,
            });
        }
        let mut w = self.word(pos).load(Ordering::Acquire);
        if w == 0 {
            return Ok(None);
        }
        if w == WRAP {
            // Counters wrap (a corrupted tail near the top must not panic).
            tail = tail.wrapping_add((self.cap - pos) as u64);
            pos = 0;
            // A wrap marker is published after the record at 0.
            w = self.word(0).load(Ordering::Acquire);
        }
        // A record's bytes end inside the data: pos + 8 + len <= cap.
        let room = (self.cap - pos - WORD) as u64;
        if w == 0 || w == WRAP || w - 1 > room {
            return Err(Corrupt {
                at: pos,
                word: w,
                cap: self.cap,
            });
        }
        let len = (w - 1) as usize;
        Ok(Some(Record {
            ptr: self.data(pos + WORD),
            len,
            next: tail.wrapping_add(record_len(len) as u64),
        }))
    }

    /// Give `r`'s space back to the producer.
    ///
    /// # Safety
    /// `r` came from this ring's latest `peek` by the same consumer.
    #[inline]
    pub unsafe fn release(&self, r: Record) {
        self.tail().store(r.next, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::Mapping;

    fn ring(cap: usize) -> (Mapping, Ring) {
        PRODUCER.with(|p| p.set(Producer::default()));
        let m = Mapping::anonymous(footprint(cap)).unwrap();
        // SAFETY: a fresh zeroed mapping of the footprint.
        let r = unsafe { Ring::new(m.as_ptr(), cap) };
        (m, r)
    }

    thread_local! {
        static PRODUCER: std::cell::Cell<Producer> = const {
            std::cell::Cell::new(Producer { head: 0, tail: 0 })
        };
    }

    fn push(r: &Ring, msg: &[u8]) -> bool {
        PRODUCER.with(|c| {
            let mut p = c.get();
            // SAFETY: one producer (this thread, with its one Producer);
            // records within the capacity.
            let ok = unsafe { r.push(&mut p, msg.len(), |b| b.copy_from_slice(msg)) };
            c.set(p);
            ok
        })
    }

    fn pop(r: &Ring) -> Option<Vec<u8>> {
        // SAFETY: one consumer (this test).
        unsafe {
            let rec = r.peek().unwrap()?;
            let v = std::slice::from_raw_parts(rec.ptr, rec.len).to_vec();
            r.release(rec);
            Some(v)
        }
    }

    #[test]
    fn records_come_out_in_order_across_wraps() {
        let (_m, r) = ring(256);
        let mut next_in = 0u32;
        let mut next_out = 0u32;
        for round in 0..2000usize {
            let len = 1 + (round * 7) % 100;
            while push(&r, &vec![next_in as u8; len]) {
                next_in += 1;
                if next_in % 3 == 0 {
                    break;
                }
            }
            while let Some(v) = pop(&r) {
                assert!(v.iter().all(|&b| b == next_out as u8), "record {next_out}");
                next_out += 1;
            }
            // SAFETY: this test's thread is the ring's one consumer.
            assert!(unsafe { r.is_empty() });
        }
        assert_eq!(next_in, next_out);
        assert!(next_in > 1000);
    }

    #[test]
    fn a_full_ring_refuses_and_the_largest_record_fits_when_empty() {
        let cap = capacity(100, 0);
        assert_eq!(cap, 256);
        assert_eq!(min_capacity(record_len(100)), 2 * 112 + 8);
        let (_m, r) = ring(cap);
        // Fill, then drain one at a time: the largest record always goes in
        // once the ring is empty, whatever the position.
        for shift in 0..40 {
            assert!(push(&r, &vec![1; 1 + shift]));
            assert!(pop(&r).is_some());
            let mut n = 0;
            while push(&r, &[2; 100]) {
                n += 1;
            }
            assert!((1..=2).contains(&n), "{n}");
            while pop(&r).is_some() {}
            assert!(push(&r, &[3; 100]));
            assert_eq!(pop(&r).unwrap(), vec![3; 100]);
        }
    }

    #[test]
    fn a_length_word_past_the_end_is_reported_not_followed() {
        let (m, r) = ring(256);
        assert!(push(&r, &[7; 16]));
        assert_eq!(pop(&r).unwrap(), vec![7; 16]);
        // The next record's word (at 24) says 300 bytes: past the end.
        // SAFETY: inside the test's mapping (header + 24).
        unsafe { m.as_ptr().add(HEADER + 24).cast::<u64>().write(301) };
        // SAFETY: one consumer (this test).
        let e = unsafe { r.peek() }.unwrap_err();
        assert_eq!(
            e,
            Corrupt {
                at: 24,
                word: 301,
                cap: 256
            }
        );
        assert!(e.to_string().contains("no record"), "{e}");
        // A wrap marker followed by nothing (a zero word at 0).
        // SAFETY: as above (the words at 0 and 24).
        unsafe {
            m.as_ptr().add(HEADER).cast::<u64>().write(0);
            m.as_ptr().add(HEADER + 24).cast::<u64>().write(u64::MAX);
        }
        // SAFETY: one consumer (this test).
        assert!(unsafe { r.peek() }.is_err());
        // A misaligned tail is reported too, and is not "empty".
        // SAFETY: the tail word of the test's ring.
        unsafe { m.as_ptr().cast::<u64>().write(27) };
        // SAFETY: this test's thread is the ring's one consumer.
        assert!(!unsafe { r.is_empty() });
        // SAFETY: one consumer (this test).
        assert_eq!(unsafe { r.peek() }.unwrap_err().at, 27);
        // SAFETY: as above.
        unsafe { m.as_ptr().cast::<u64>().write(24) };
        // The largest record that fits at 24 is accepted.
        // SAFETY: as above.
        unsafe {
            m.as_ptr()
                .add(HEADER + 24)
                .cast::<u64>()
                .write(256 - 24 - 8 + 1)
        };
        // SAFETY: one consumer (this test).
        assert_eq!(unsafe { r.peek() }.unwrap().unwrap().len, 256 - 24 - 8);
    }

    #[test]
    fn two_threads_pass_every_record_once() {
        let (m, r) = ring(4096);
        let total = 200_000u64;
        let producer = std::thread::spawn(move || {
            let mut i = 0u64;
            while i < total {
                let len = 8 + (i as usize % 5) * 8;
                let ok = push(&r, &{
                    let mut v = vec![0u8; len];
                    v[..8].copy_from_slice(&i.to_le_bytes());
                    v
                });
                if ok {
                    i += 1;
                } else {
                    std::hint::spin_loop();
                }
            }
        });
        let mut want = 0u64;
        while want < total {
            if let Some(v) = pop(&r) {
                assert_eq!(u64::from_le_bytes(v[..8].try_into().unwrap()), want);
                assert_eq!(v.len(), 8 + (want as usize % 5) * 8);
                want += 1;
            }
        }
        producer.join().unwrap();
        // SAFETY: this test's thread is the ring's one consumer.
        assert!(unsafe { r.is_empty() });
        drop(m);
    }
}
