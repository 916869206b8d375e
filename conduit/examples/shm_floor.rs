//! The floor under the same-host AM round trip on this machine: two threads
//! on two CPUs pass (1) a flag in one cache line, (2) flags in two cache
//! lines (each thread writes one and reads the other, as a request and a
//! reply through two rings do), (3) 24-byte records through two of the
//! conduit's shared-memory rings (`conduit::pshm::ring`, no AM code), and
//! (4) a request and its reply written into the same 64-byte slot, the
//! slots marching through 1024 lines (what replies written in place of
//! their request would cost), beside (5) the same march with the reply in
//! a second array of slots (two rings), and (6) 16-byte requests answered
//! in place through one of the conduit's lanes (`conduit::pshm::lane`, no
//! AM code: what the same-host AM Short round trip moves). Prints the
//! median round trip of each over `--reps` runs.
//!
//! `cargo run --release -p conduit --example shm_floor [iters] [reps]`

use conduit::mem::Mapping;
use conduit::pshm::lane::{Answer, Lane, LANE_BYTES, LANE_MESSAGE};
use conduit::pshm::ring::{footprint, Producer, Ring};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

#[repr(align(128))]
struct Line(AtomicU64);

/// Round trips through flags `a` (there) and `b` (back), in µs.
fn flags(a: &'static AtomicU64, b: &'static AtomicU64, iters: u64) -> f64 {
    a.store(0, Ordering::SeqCst);
    b.store(0, Ordering::SeqCst);
    let t = std::thread::spawn(move || {
        for i in 1..=iters {
            while a.load(Ordering::Acquire) != i {}
            b.store(i, Ordering::Release);
        }
    });
    let start = Instant::now();
    for i in 1..=iters {
        a.store(i, Ordering::Release);
        while b.load(Ordering::Acquire) != i {}
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / iters as f64;
    t.join().expect("the echo thread");
    us
}

/// Round trips of 24-byte records through two rings, in µs.
fn rings(iters: u64) -> f64 {
    let cap = 65536;
    let m = Mapping::anonymous(2 * footprint(cap)).expect("map the rings");
    // SAFETY: two fresh zeroed rings inside `m`, which outlives both
    // threads (joined below); each ring has one producer and one consumer.
    let (there, back) = unsafe {
        (
            Ring::new(m.as_ptr(), cap),
            Ring::new(m.as_ptr().add(footprint(cap)), cap),
        )
    };
    let t = std::thread::spawn(move || {
        let mut p = Producer::default();
        for _ in 0..iters {
            // SAFETY: this thread is `there`'s only consumer and `back`'s
            // only producer.
            unsafe {
                let r = loop {
                    if let Ok(Some(r)) = there.peek() {
                        break r;
                    }
                };
                there.release(r);
                while !back.push(&mut p, 24, |b| b[0] = 1) {}
            }
        }
    });
    let mut p = Producer::default();
    let start = Instant::now();
    for _ in 0..iters {
        // SAFETY: this thread is `there`'s only producer and `back`'s only
        // consumer.
        unsafe {
            while !there.push(&mut p, 24, |b| b[0] = 1) {}
            let r = loop {
                if let Ok(Some(r)) = back.peek() {
                    break r;
                }
            };
            back.release(r);
        }
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / iters as f64;
    t.join().expect("the echo thread");
    us
}

/// Round trips of 16-byte requests answered in place by 16-byte replies
/// through one lane, in µs.
fn lane(iters: u64) -> f64 {
    let m = Mapping::anonymous(LANE_BYTES).expect("map the lane");
    // SAFETY: a fresh zeroed lane inside `m`, which outlives both threads
    // (joined below); one thread sends, the other receives.
    let l = unsafe { Lane::new(m.as_ptr()) };
    let t = std::thread::spawn(move || {
        let mut buf = [0u8; LANE_MESSAGE];
        for seq in 1..=iters as u32 {
            // SAFETY: this thread is the lane's one receiver and answers
            // each request before it looks for the next.
            unsafe {
                let len = loop {
                    if let Ok(Some(len)) = l.request(seq) {
                        break len;
                    }
                };
                l.read(len, &mut buf);
                l.reply(seq, 16, |b| b.copy_from_slice(&buf[..16]));
            }
        }
    });
    let mut buf = [0u8; LANE_MESSAGE];
    let start = Instant::now();
    for seq in 1..=iters as u32 {
        // SAFETY: this thread is the lane's one sender and sends only once
        // the previous request was answered.
        unsafe {
            l.send(seq, 16, |b| b.fill(seq as u8));
            loop {
                if let Ok(Answer::Reply(len)) = l.answer(seq) {
                    l.read(len, &mut buf);
                    break;
                }
            }
        }
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / iters as f64;
    t.join().expect("the echo thread");
    us
}

/// A 64-byte slot: a request word and a reply word.
#[repr(C, align(64))]
struct Slot {
    req: AtomicU64,
    rep: AtomicU64,
}

/// Round trips marching through `there` (requests) and `back` (replies;
/// the same slots when they are the same array), in µs.
fn march(there: &'static [Slot], back: &'static [Slot], iters: u64) -> f64 {
    for s in there.iter().chain(back) {
        s.req.store(0, Ordering::SeqCst);
        s.rep.store(0, Ordering::SeqCst);
    }
    let n = there.len() as u64;
    let t = std::thread::spawn(move || {
        for i in 1..=iters {
            let k = (i % n) as usize;
            while there[k].req.load(Ordering::Acquire) != i {}
            back[k].rep.store(i, Ordering::Release);
        }
    });
    let start = Instant::now();
    for i in 1..=iters {
        let k = (i % n) as usize;
        there[k].req.store(i, Ordering::Release);
        while back[k].rep.load(Ordering::Acquire) != i {}
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / iters as f64;
    t.join().expect("the echo thread");
    us
}

fn slots(n: usize) -> &'static [Slot] {
    Box::leak(
        (0..n)
            .map(|_| Slot {
                req: AtomicU64::new(0),
                rep: AtomicU64::new(0),
            })
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let iters: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let reps: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let one: &'static [AtomicU64; 2] = Box::leak(Box::new([AtomicU64::new(0), AtomicU64::new(0)]));
    let two: &'static [Line; 2] =
        Box::leak(Box::new([Line(AtomicU64::new(0)), Line(AtomicU64::new(0))]));
    let (s1, s2, s3) = (slots(1024), slots(1024), slots(1024));
    let (mut a, mut b, mut c, mut d, mut e, mut f) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    for _ in 0..reps.max(1) {
        a.push(flags(&one[0], &one[1], iters));
        b.push(flags(&two[0].0, &two[1].0, iters));
        c.push(rings(iters));
        d.push(march(s1, s1, iters));
        e.push(march(s2, s3, iters));
        f.push(lane(iters));
    }
    println!("round trip, median of {} x {iters} (us):", reps.max(1));
    println!("  flags in one cache line   {:.3}", median(a));
    println!("  flags in two cache lines  {:.3}", median(b));
    println!("  two shared-memory rings   {:.3}", median(c));
    println!("  replies in place, march   {:.3}", median(d));
    println!("  two slot arrays, march    {:.3}", median(e));
    println!("  a lane, replies in place  {:.3}", median(f));
}
