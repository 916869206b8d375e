//! A lane: one slot in shared memory per ordered pair of ranks of a
//! supernode, carrying one small request at a time and its answer,
//! written in place of the request.
//!
//! Through two rings a round trip moves two cache lines between the CPUs
//! (the request's record, then the reply's), and each write lands on a
//! line the other side holds; through a lane it moves one line back and
//! forth (`conduit/examples/shm_floor.rs` measures both). The sender writes
//! the message after the state word and publishes the word; the receiver
//! copies the message out, runs the handler and writes the answer into
//! the same slot: the reply, when the handler replied with a Short, or a
//! word saying the slot is free again (the handler sent no reply, or sent
//! it through the rings). The sender uses the lane again only once it
//! read the answer, so each side writes the slot only while the other
//! waits for it.
//!
//! Layout (`LANE_BYTES`, 128-byte aligned, so two lanes never share a pair
//! of adjacent lines): the state word, then up to [`LANE_MESSAGE`] bytes of
//! one encoded message. The state word holds the request's sequence number
//! (32 bits, counting from 1 per pair, wrapping), the message length and
//! what the slot holds; 0 is a lane never used. The writer stores the word
//! with release after the message bytes, the reader loads it with acquire
//! before reading them.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Bytes of one lane in the receiver's inbox.
pub const LANE_BYTES: usize = 128;
/// Largest message a lane carries.
pub const LANE_MESSAGE: usize = LANE_BYTES - 8;

const REQUEST: u64 = 1;
const REPLY: u64 = 2;
const DONE: u64 = 3;

#[inline(always)]
const fn state(seq: u32, kind: u64, len: usize) -> u64 {
    ((seq as u64) << 32) | ((len as u64) << 8) | kind
}

/// A state word that no step of the protocol could have written: the
/// shared memory was overwritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corrupt {
    /// The word.
    pub word: u64,
    /// The sequence number the reader expected.
    pub seq: u32,
}

impl std::fmt::Display for Corrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the lane's state word {:#x} fits no step of request {} (the shared memory was overwritten)",
            self.word, self.seq
        )
    }
}

/// What the sender of request `seq` finds in its lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Not answered yet.
    Pending,
    /// A reply of this many bytes is in the slot.
    Reply(usize),
    /// Answered without a reply in the slot: the lane is free.
    Done,
}

/// A view of one lane. The memory must outlive every view (the mapping is
/// held by whoever holds the view).
#[derive(Debug, Clone, Copy)]
pub struct Lane {
    base: *mut u8,
}

// SAFETY: an address into shared memory; the protocol (one writer at a
// time, handed over by release stores of the state word) makes concurrent
// use sound, and the callers give each lane one sender and one receiver.
unsafe impl Send for Lane {}
// SAFETY: as above.
unsafe impl Sync for Lane {}

impl Lane {
    /// The lane at `base`.
    ///
    /// # Safety
    /// `base..base+LANE_BYTES` must be mapped, writable, 8-byte aligned and
    /// zeroed when the lane is first used, for as long as the view is used.
    pub unsafe fn new(base: *mut u8) -> Lane {
        debug_assert_eq!(base as usize % 8, 0);
        Lane { base }
    }

    #[inline(always)]
    fn word(&self) -> &AtomicU64 {
        // SAFETY: the first 8 bytes, aligned, inside the mapping (`new`'s
        // contract); only ever accessed atomically.
        unsafe { AtomicU64::from_ptr(self.base.cast()) }
    }

    #[inline(always)]
    fn bytes(&self) -> *mut u8 {
        // SAFETY: inside the lane (`new`'s contract).
        unsafe { self.base.add(8) }
    }

    /// Write request `seq` of `len` bytes (`fill` writes them) and publish
    /// it.
    ///
    /// # Safety
    /// The caller is the lane's one sender, the lane is free (never used,
    /// or the answer to the previous request was read), `seq` follows the
    /// previous request's, and `len <= LANE_MESSAGE`.
    #[inline(always)]
    pub unsafe fn send(&self, seq: u32, len: usize, fill: impl FnOnce(&mut [u8])) {
        debug_assert!(len <= LANE_MESSAGE);
        // SAFETY: the receiver reads none of the bytes before the release
        // store below, and wrote its last answer before the sender read it.
        unsafe { self.put(len, fill) };
        self.word()
            .store(state(seq, REQUEST, len), Ordering::Release);
    }

    /// Write a message of `len` bytes (`fill` writes them) after the state
    /// word: built in this thread's stack, then copied in a few wide stores
    /// of a fixed size. The other side polls this line, and each narrow
    /// store of an encoder writing in place can find the line taken back by
    /// that read and need it again: written in place, the same-host round
    /// trip measured 1.3-1.9x the rings' instead of 0.87x
    /// (docs/PERFORMANCE.md, "Requests answered in place").
    ///
    /// # Safety
    /// The other side reads none of the bytes until the state word's next
    /// release store, and this side may write them (see the callers).
    #[inline(always)]
    unsafe fn put(&self, len: usize, fill: impl FnOnce(&mut [u8])) {
        let mut b = [0u8; LANE_MESSAGE];
        fill(&mut b[..len]);
        // The state word's line holds 56 message bytes.
        let n = if len <= 56 { 56 } else { LANE_MESSAGE };
        // SAFETY: n bytes after the state word lie inside the lane; `b`
        // is this thread's; the caller's contract makes the write race-free.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), self.bytes(), n) };
    }

    /// The length of request `seq` when it has arrived. A word that is
    /// neither that request nor what the lane held before it (nothing, the
    /// previous request, taken but not answered yet, or its answer) is
    /// reported.
    ///
    /// # Safety
    /// The caller is the lane's one receiver and took every request before
    /// `seq` (answered, or with its handler still running: an exit from
    /// inside it polls again).
    #[inline(always)]
    pub unsafe fn request(&self, seq: u32) -> Result<Option<usize>, Corrupt> {
        let w = self.word().load(Ordering::Acquire);
        let head = w & !0xff00;
        if head == state(seq, REQUEST, 0) {
            let len = ((w >> 8) & 0xff) as usize;
            return if len <= LANE_MESSAGE {
                Ok(Some(len))
            } else {
                Err(Corrupt { word: w, seq })
            };
        }
        let prev = seq.wrapping_sub(1);
        let kind = w & 0xff;
        let earlier =
            w == 0 || ((w >> 32) as u32 == prev && matches!(kind, REQUEST | REPLY | DONE));
        if earlier {
            Ok(None)
        } else {
            Err(Corrupt { word: w, seq })
        }
    }

    /// What the lane holds for request `seq`, which this side sent.
    ///
    /// # Safety
    /// The caller is the lane's one sender and sent `seq` last.
    #[inline(always)]
    pub unsafe fn answer(&self, seq: u32) -> Result<Answer, Corrupt> {
        let w = self.word().load(Ordering::Acquire);
        let len = ((w >> 8) & 0xff) as usize;
        if (w >> 32) as u32 == seq {
            match w & 0xff {
                REQUEST => return Ok(Answer::Pending),
                REPLY if len <= LANE_MESSAGE => return Ok(Answer::Reply(len)),
                DONE if len == 0 => return Ok(Answer::Done),
                _ => {}
            }
        }
        Err(Corrupt { word: w, seq })
    }

    /// Copy the message of `len` bytes (from [`Lane::request`] or
    /// [`Answer::Reply`]) into `out`.
    ///
    /// # Safety
    /// The caller read that length from the state word (acquire) and the
    /// other side does not write the lane until this side answers or sends.
    #[inline(always)]
    pub unsafe fn read(&self, len: usize, out: &mut [u8; LANE_MESSAGE]) {
        let len = len.min(LANE_MESSAGE);
        // SAFETY: len bytes inside the lane, not written by the other side
        // now (contract); `out` is this process's memory.
        unsafe { std::ptr::copy_nonoverlapping(self.bytes(), out.as_mut_ptr(), len) };
    }

    /// Answer request `seq` with a reply of `len` bytes (`fill` writes
    /// them).
    ///
    /// # Safety
    /// The caller is the lane's one receiver, read request `seq` out of the
    /// lane and has not answered it; `len <= LANE_MESSAGE`.
    #[inline(always)]
    pub unsafe fn reply(&self, seq: u32, len: usize, fill: impl FnOnce(&mut [u8])) {
        debug_assert!(len <= LANE_MESSAGE);
        // SAFETY: the sender reads none of the bytes before the release
        // store below and writes none until it has read it.
        unsafe { self.put(len, fill) };
        self.word().store(state(seq, REPLY, len), Ordering::Release);
    }

    /// Answer request `seq` without a reply in the lane: it is free again.
    ///
    /// # Safety
    /// As for [`Lane::reply`].
    #[inline(always)]
    pub unsafe fn done(&self, seq: u32) {
        self.word().store(state(seq, DONE, 0), Ordering::Release);
    }
}

/// A rank's lanes in single-threaded mode, by supernode member index: the
/// lane each peer writes in this rank's inbox, the lane this rank writes in
/// each peer's, and where each stands (this rank's own index has lanes it
/// never uses).
///
/// The methods' contract: one thread at a time uses this rank's lanes (the
/// client's single-threaded mode), so the relaxed atomics below are plain
/// loads and stores of this process's memory.
pub struct Lanes {
    pairs: Box<[Pair]>,
    /// How many requests await their answer.
    open_count: AtomicUsize,
}

/// This rank and one member: both lanes and where each stands (together,
/// so a round's look at a peer touches one line of this process).
struct Pair {
    /// The lane the peer writes requests into (this rank's inbox).
    inbound: Lane,
    /// The lane this rank writes requests into (the peer's inbox).
    outbound: Lane,
    /// Sequence number of the last request read from the peer.
    in_seq: AtomicU32,
    /// Of the last request sent to it.
    out_seq: AtomicU32,
    /// Whether that request awaits its answer.
    open: AtomicBool,
}

impl Lanes {
    /// Lanes from their views, by member index.
    pub fn new(inbound: Vec<Lane>, outbound: Vec<Lane>) -> Lanes {
        debug_assert_eq!(inbound.len(), outbound.len());
        Lanes {
            pairs: inbound
                .into_iter()
                .zip(outbound)
                .map(|(inbound, outbound)| Pair {
                    inbound,
                    outbound,
                    in_seq: AtomicU32::new(0),
                    out_seq: AtomicU32::new(0),
                    open: AtomicBool::new(false),
                })
                .collect(),
            open_count: AtomicUsize::new(0),
        }
    }

    /// Members (this rank's index included).
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether there are no members (never, for a supernode's lanes).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Send a request of `len` bytes (`fill` writes them) to member `i`
    /// through its lane; `false` (nothing written) while the previous
    /// request to `i` awaits its answer.
    ///
    /// # Safety
    /// The struct's contract (one thread); `i` is a peer's index, not this
    /// rank's; `len <= LANE_MESSAGE`.
    #[inline(always)]
    pub unsafe fn try_send(&self, i: usize, len: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        let p = &self.pairs[i];
        if p.open.load(Ordering::Relaxed) {
            return false;
        }
        let seq = p.out_seq.load(Ordering::Relaxed).wrapping_add(1);
        p.out_seq.store(seq, Ordering::Relaxed);
        p.open.store(true, Ordering::Relaxed);
        self.open_count.store(
            self.open_count.load(Ordering::Relaxed) + 1,
            Ordering::Relaxed,
        );
        // SAFETY: this rank is the lane's one sender (its lane in the
        // peer's inbox, one thread by the contract), the lane is free (no
        // request open), seq follows the last.
        unsafe { p.outbound.send(seq, len, fill) };
        true
    }

    /// Whether any request awaits its answer.
    #[inline(always)]
    pub fn any_open(&self) -> bool {
        self.open_count.load(Ordering::Relaxed) != 0
    }

    /// The answer to the request open to member `i`, if it came; once
    /// this says so, the lane is free again (a reply in it is read by
    /// [`Lanes::read_reply`] before the next request to `i`). `Ok(None)`:
    /// no request open, or not answered yet.
    ///
    /// # Safety
    /// The struct's contract.
    #[inline(always)]
    pub unsafe fn answer(&self, i: usize) -> Result<Option<Answer>, Corrupt> {
        let p = &self.pairs[i];
        if !p.open.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let seq = p.out_seq.load(Ordering::Relaxed);
        // SAFETY: this rank sent `seq` last, through its one sender.
        match unsafe { p.outbound.answer(seq) } {
            Ok(Answer::Pending) => Ok(None),
            r => {
                // Answered, or lost with the lane's memory (then no longer
                // awaited, so the error is reported once).
                p.open.store(false, Ordering::Relaxed);
                self.open_count.store(
                    self.open_count.load(Ordering::Relaxed) - 1,
                    Ordering::Relaxed,
                );
                r.map(Some)
            }
        }
    }

    /// Copy the reply of `len` bytes that [`Lanes::answer`] found from
    /// member `i` into `out`.
    ///
    /// # Safety
    /// The struct's contract; `answer(i)` just returned `Reply(len)` and no
    /// request was sent to `i` since.
    #[inline(always)]
    pub unsafe fn read_reply(&self, i: usize, len: usize, out: &mut [u8; LANE_MESSAGE]) {
        // SAFETY: the receiver answered; it writes the lane no more until
        // this rank sends again.
        unsafe { self.pairs[i].outbound.read(len, out) };
    }

    /// The sequence number and length of a new request from member `i`,
    /// if one came.
    ///
    /// # Safety
    /// The struct's contract; every earlier request from `i` was taken
    /// (by [`Lanes::take_request`]).
    #[inline(always)]
    pub unsafe fn request(&self, i: usize) -> Result<Option<(u32, usize)>, Corrupt> {
        let p = &self.pairs[i];
        let seq = p.in_seq.load(Ordering::Relaxed).wrapping_add(1);
        // SAFETY: this rank is the lane's one receiver and answered every
        // request before `seq` (the contract of `take_request`).
        // A corrupt word is reported on every read, as a ring's is.
        Ok(unsafe { p.inbound.request(seq) }?.map(|len| (seq, len)))
    }

    /// Take the request [`Lanes::request`] found from member `i`: copy it
    /// into `out`; it must be answered (through [`Lanes::inbound`]) before
    /// the next request from `i` is taken.
    ///
    /// # Safety
    /// The struct's contract; `request(i)` just returned `(seq, len)`.
    #[inline(always)]
    pub unsafe fn take_request(
        &self,
        i: usize,
        seq: u32,
        len: usize,
        out: &mut [u8; LANE_MESSAGE],
    ) {
        let p = &self.pairs[i];
        // SAFETY: the request is published; the sender writes the lane no
        // more until this rank answers.
        unsafe { p.inbound.read(len, out) };
        p.in_seq.store(seq, Ordering::Relaxed);
    }

    /// The lane member `i` sends its requests through, to answer one.
    #[inline(always)]
    pub fn inbound(&self, i: usize) -> &Lane {
        &self.pairs[i].inbound
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::Mapping;

    fn lane() -> (Mapping, Lane) {
        let m = Mapping::anonymous(LANE_BYTES).unwrap();
        // SAFETY: a fresh zeroed mapping of a lane's size.
        let l = unsafe { Lane::new(m.as_ptr()) };
        (m, l)
    }

    #[test]
    fn a_request_and_its_answers_in_place() {
        let (_m, l) = lane();
        let mut out = [0u8; LANE_MESSAGE];
        // SAFETY: this test is both the lane's one sender and its one
        // receiver, taking the steps in the protocol's order.
        unsafe {
            assert_eq!(l.request(1), Ok(None));
            l.send(1, 3, |b| b.copy_from_slice(b"abc"));
            assert_eq!(l.answer(1), Ok(Answer::Pending));
            assert_eq!(l.request(1), Ok(Some(3)));
            l.read(3, &mut out);
            assert_eq!(&out[..3], b"abc");
            l.reply(1, LANE_MESSAGE, |b| b.fill(7));
            assert_eq!(l.request(2), Ok(None));
            assert_eq!(l.answer(1), Ok(Answer::Reply(LANE_MESSAGE)));
            l.read(LANE_MESSAGE, &mut out);
            assert!(out.iter().all(|&b| b == 7));
            l.send(2, 0, |_| {});
            assert_eq!(l.request(2), Ok(Some(0)));
            l.done(2);
            assert_eq!(l.answer(2), Ok(Answer::Done));
            assert_eq!(l.request(3), Ok(None));
            // Sequence numbers wrap.
            l.send(3, 8, |b| b.fill(1));
            l.done(3);
            let (_m2, w) = lane();
            w.send(u32::MAX, 8, |b| b.fill(1));
            assert_eq!(w.request(u32::MAX), Ok(Some(8)));
            w.done(u32::MAX);
            assert_eq!(w.request(0), Ok(None));
            w.send(0, 8, |b| b.fill(2));
            assert_eq!(w.request(0), Ok(Some(8)));
        }
    }

    #[test]
    fn words_no_step_could_write_are_reported() {
        let (m, l) = lane();
        // SAFETY: the state word, written here with no other user.
        let word = unsafe { AtomicU64::from_ptr(m.as_ptr().cast()) };
        // (word, refused by the receiver of request 1, by its sender)
        let bad = [
            (state(5, REQUEST, 0), true, true),
            (state(1, REQUEST, LANE_MESSAGE + 1), true, false),
            (state(1, REPLY, LANE_MESSAGE + 1), true, true),
            (state(0, 9, 0), true, true),
            (state(1, DONE, 8), true, true),
            (u64::MAX, true, true),
        ];
        for (w, rx, tx) in bad {
            word.store(w, Ordering::Relaxed);
            // SAFETY: as in the test above.
            let (r, a) = unsafe { (l.request(1), l.answer(1)) };
            assert_eq!(r.is_err(), rx, "request {w:#x}");
            assert_eq!(a.is_err(), tx, "answer {w:#x}");
        }
        // Request 1 taken, its handler still running (an exit from inside
        // it polls again): nothing new, not corrupt.
        word.store(state(1, REQUEST, 8), Ordering::Relaxed);
        // SAFETY: as above.
        assert_eq!(unsafe { l.request(2) }, Ok(None));
        word.store(state(2, REPLY, 0), Ordering::Relaxed);
        // SAFETY: as above.
        let e = unsafe { l.request(2) }.unwrap_err();
        assert_eq!(
            e.to_string(),
            "the lane's state word 0x200000002 fits no step of request 2 (the shared memory was overwritten)"
        );
    }

    #[test]
    fn two_threads_pass_requests_and_replies_in_order() {
        let (_m, l) = lane();
        let n = 20_000u32;
        let t = std::thread::spawn(move || {
            let mut out = [0u8; LANE_MESSAGE];
            for seq in 1..=n {
                // SAFETY: this thread is the lane's one receiver.
                unsafe {
                    let len = loop {
                        if let Some(len) = l.request(seq).unwrap() {
                            break len;
                        }
                    };
                    assert_eq!(len, 4);
                    l.read(len, &mut out);
                    let v = u32::from_le_bytes(out[..4].try_into().unwrap());
                    assert_eq!(v, seq * 3);
                    if seq % 3 == 0 {
                        l.done(seq);
                    } else {
                        l.reply(seq, 4, |b| b.copy_from_slice(&(v + 1).to_le_bytes()));
                    }
                }
            }
        });
        let mut out = [0u8; LANE_MESSAGE];
        for seq in 1..=n {
            // SAFETY: this thread is the lane's one sender; each request
            // waits for the previous answer.
            unsafe {
                l.send(seq, 4, |b| b.copy_from_slice(&(seq * 3).to_le_bytes()));
                let a = loop {
                    match l.answer(seq).unwrap() {
                        Answer::Pending => continue,
                        a => break a,
                    }
                };
                if seq % 3 == 0 {
                    assert_eq!(a, Answer::Done);
                } else {
                    assert_eq!(a, Answer::Reply(4));
                    l.read(4, &mut out);
                    assert_eq!(
                        u32::from_le_bytes(out[..4].try_into().unwrap()),
                        seq * 3 + 1
                    );
                }
            }
        }
        t.join().unwrap();
    }
}
