//! The receive path's guarantees over the simulator: a buffer released by
//! a completion of its own while another thread still holds an earlier
//! message of it, a handler that panics in the middle of a batch, and an
//! error that arrives while an operation waits.

mod sim;

use conduit::client::{ClientOf, Error, Par, Seq};
use conduit::sync::Mode;
use conduit::transport::sim::{Faults, SimTransport};
use sim::Job;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

const H_MED: u8 = 200;

/// What rank 0 saw: per source, the sequence numbers, and payloads that
/// did not match their pattern.
struct Seen {
    got: Mutex<Vec<Vec<u32>>>,
    bad: AtomicU64,
    panicked: AtomicBool,
}

impl Seen {
    fn new(ranks: usize) -> Seen {
        Seen {
            got: Mutex::new(vec![Vec::new(); ranks]),
            bad: AtomicU64::new(0),
            panicked: AtomicBool::new(false),
        }
    }

    fn total(&self) -> usize {
        self.got.lock().unwrap().iter().map(Vec::len).sum()
    }

    /// Every source's sequence numbers are exactly `0..n`.
    fn check(&self, n: u32) {
        for (src, v) in self.got.lock().unwrap().iter().enumerate().skip(1) {
            let mut v = v.clone();
            v.sort();
            assert_eq!(v, (0..n).collect::<Vec<_>>(), "messages from rank {src}");
        }
        assert_eq!(self.bad.load(Ordering::Relaxed), 0, "corrupt payloads");
    }
}

fn payload(src: usize, seq: u32) -> Vec<u8> {
    let len = 200 + (seq as usize * 37) % 1800;
    (0..len).map(|i| (i ^ src ^ seq as usize) as u8).collect()
}

type C<M> = ClientOf<M, Seen, SimTransport>;

/// Ranks 1.. each send `n` Mediums to rank 0.
fn flood<M: Mode>(c: &C<M>, n: u32) {
    let me = c.rank();
    for seq in 0..n {
        c.request_medium(0, H_MED, &[seq], &payload(me, seq))
            .unwrap();
    }
}

/// A receive buffer's release comes as a completion of its own. In
/// multi-threaded mode two threads poll rank 0's one request queue; the
/// handler sometimes sleeps, so one thread often still holds messages of a
/// buffer (read, not yet handled) when the other reads the buffer's
/// release. The buffer must not be posted again before those messages are
/// handled: every message arrives once, with its bytes intact.
#[test]
fn a_release_read_by_another_thread_waits_for_the_messages_before_it() {
    const N: u32 = 1500;
    let (fabric, ended) = Job::new(3)
        .faults(Faults {
            bare_release: true,
            ..Faults::default()
        })
        .vars(&[
            ("GASNET_OFI_NUM_RECEIVE_BUFFS", "4"),
            ("GASNET_OFI_RECEIVE_BUFF_SIZE", "16K"),
            ("GASNET_OFI_NUM_COMPLETIONS", "4"),
        ])
        .run::<Par, _, _, _>(
            |r| Seen::new(if r == 0 { 3 } else { 0 }),
            |c: &C<Par>| {
                c.on_request_medium(H_MED, 1, |tok, a, p| {
                    let st = tok.state();
                    if p != payload(tok.source(), a[0]).as_slice() {
                        st.bad.fetch_add(1, Ordering::Relaxed);
                    }
                    if a[0] % 16 == 0 {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    st.got.lock().unwrap()[tok.source()].push(a[0]);
                })
                .unwrap();
                c.barrier().unwrap();
                if c.rank() == 0 {
                    let want = N as usize * (c.size() - 1);
                    std::thread::scope(|sc| {
                        for _ in 0..2 {
                            sc.spawn(|| c.block_until(|| c.state().total() >= want).unwrap());
                        }
                    });
                    c.state().check(N);
                } else {
                    flood(c, N);
                }
                c.barrier().unwrap();
            },
        );
    for e in ended {
        e.value();
    }
    assert!(
        fabric.counts().delivered > 3000,
        "the flood did not happen: {:?}",
        fabric.counts()
    );
}

/// A handler panics on one message in the middle of a batch; the poll that
/// ran it unwinds (the application catches it). The rest of the batch is
/// handled by the next poll: nothing read from the queue is lost.
fn panic_in_a_batch<M: Mode>() {
    const N: u32 = 400;
    let (_f, ended) = Job::new(2)
        .vars(&[("GASNET_OFI_NUM_COMPLETIONS", "64")])
        .run::<M, _, _, _>(
            |_| Seen::new(2),
            |c: &C<M>| {
                c.on_request_medium(H_MED, 1, |tok, a, p| {
                    let st = tok.state();
                    if p != payload(tok.source(), a[0]).as_slice() {
                        st.bad.fetch_add(1, Ordering::Relaxed);
                    }
                    st.got.lock().unwrap()[tok.source()].push(a[0]);
                    if a[0] == N / 2 && !st.panicked.swap(true, Ordering::Relaxed) {
                        panic!("handler panics on purpose");
                    }
                })
                .unwrap();
                c.barrier().unwrap();
                let mut caught = 0;
                if c.rank() == 0 {
                    // Let the whole flood arrive, so that batches are full.
                    std::thread::sleep(Duration::from_millis(200));
                    while c.state().total() < N as usize {
                        match catch_unwind(AssertUnwindSafe(|| c.poll())) {
                            Ok(r) => r.unwrap(),
                            Err(_) => caught += 1,
                        }
                    }
                    c.state().check(N);
                } else {
                    flood(c, N);
                }
                c.barrier().unwrap();
                caught
            },
        );
    assert_eq!(ended.into_iter().next().unwrap().value(), 1, "one panic");
}

#[test]
fn a_panicking_handler_loses_no_message() {
    panic_in_a_batch::<Seq>();
}

#[test]
fn a_panicking_handler_loses_no_message_multi_threaded() {
    panic_in_a_batch::<Par>();
}

/// A peer's AM to an unregistered handler arrives while rank 0 waits in a
/// barrier: the barrier completes (its messages are sent whatever else
/// happens), and the next poll reports the peer's error, once.
#[test]
fn an_error_met_in_a_barrier_waits_for_the_next_poll() {
    let (_f, ended) = Job::new(2).run::<Seq, _, _, _>(
        |_| (),
        |c: &ClientOf<Seq, (), SimTransport>| {
            if c.rank() == 1 {
                c.request_short(0, 250, &[1]).unwrap();
                c.barrier().unwrap();
                c.barrier().unwrap();
                return (String::new(), String::new());
            }
            c.barrier().expect("the barrier completes");
            let first = match c.poll() {
                Err(e @ Error::Am(_)) => e.to_string(),
                other => format!("{other:?}"),
            };
            let second = format!("{:?}", c.poll());
            c.barrier().unwrap();
            (first, second)
        },
    );
    let (first, second) = ended.into_iter().next().unwrap().value();
    assert!(first.contains("250"), "{first}");
    assert_eq!(second, "Ok(())");
}

/// A handler panics while the barrier's own message waits to be sent (the
/// send answers -FI_EAGAIN and, while it waits, runs handlers): the panic
/// unwinds out of `barrier_notify` with the message unsent, and the
/// retried wait sends it, so the barrier completes on both ranks. Before,
/// the message was lost with the barrier's state already moved on, and the
/// peer waited for ever (found by a runtime author's review: 6 of 8 jobs
/// hung over tcp;ofi_rxm).
fn panic_in_a_barrier_send<M: Mode>() {
    const ROUNDS: u32 = 40;
    const H_PANIC: u8 = 201;
    let mut job = Job::new(2).faults(Faults {
        eagain_one_in: 2,
        ..Faults::default()
    });
    job.deadline = Duration::from_secs(30);
    // Messages handled, and whether the handler panics (only inside the
    // rounds' barriers, which catch it).
    let (_f, ended) = job.run::<M, _, _, _>(
        |_| (AtomicU64::new(0), AtomicBool::new(false)),
        |c: &ClientOf<M, (AtomicU64, AtomicBool), SimTransport>| {
            c.on_request_short(H_PANIC, 1, |tok, _| {
                tok.state().0.fetch_add(1, Ordering::Relaxed);
                if tok.state().1.load(Ordering::Relaxed) {
                    panic!("handler panics on purpose");
                }
            })
            .unwrap();
            c.barrier().unwrap();
            let mut in_notify = 0;
            for round in 0..ROUNDS {
                if c.rank() == 0 {
                    c.request_short(1, H_PANIC, &[round]).unwrap();
                    c.barrier().unwrap();
                    continue;
                }
                // The request is there before the barrier's send waits.
                std::thread::sleep(Duration::from_millis(2));
                c.state().1.store(true, Ordering::Relaxed);
                if catch_unwind(AssertUnwindSafe(|| c.barrier_notify(None))).is_err() {
                    in_notify += 1;
                }
                loop {
                    match catch_unwind(AssertUnwindSafe(|| c.barrier_wait())) {
                        Ok(r) => break r.unwrap(),
                        Err(_) => continue,
                    }
                }
                c.state().1.store(false, Ordering::Relaxed);
            }
            c.barrier().unwrap();
            if c.rank() == 1 {
                assert_eq!(c.state().0.load(Ordering::Relaxed), u64::from(ROUNDS));
            }
            in_notify
        },
    );
    let v: Vec<u32> = ended.into_iter().map(|e| e.value()).collect();
    assert!(
        v[1] > 0,
        "no panic happened inside barrier_notify's send: the test tests nothing"
    );
}

#[test]
fn a_panic_while_a_barrier_message_waits_loses_no_barrier_message() {
    panic_in_a_barrier_send::<Seq>();
}

#[test]
fn a_panic_while_a_barrier_message_waits_loses_no_barrier_message_multi_threaded() {
    panic_in_a_barrier_send::<Par>();
}

/// Two malformed AMs from a peer read in one poll (an unregistered handler,
/// a wrong argument count): the poll returns the first error and the next
/// poll the second; neither is dropped (the second used to be, logged at
/// debug level only).
#[test]
fn two_errors_met_in_one_poll_are_returned_by_two_polls() {
    let (_f, ended) = Job::new(2).run::<Seq, _, _, _>(
        |_| (),
        |c: &ClientOf<Seq, (), SimTransport>| {
            // Registered with 2 arguments on rank 1, 1 on rank 0: rank 1's
            // send passes its own checks.
            let nargs = if c.rank() == 0 { 1 } else { 2 };
            c.on_request_short(200, nargs, |_, _| {}).unwrap();
            c.barrier().unwrap();
            if c.rank() == 1 {
                c.request_short(0, 250, &[1]).unwrap();
                c.request_short(0, 200, &[1, 2]).unwrap();
                c.barrier().unwrap();
                return Vec::new();
            }
            // Both are there before the first poll.
            std::thread::sleep(Duration::from_millis(100));
            let polls: Vec<String> = (0..3)
                .map(|_| match c.poll() {
                    Err(e @ Error::Am(_)) => e.to_string(),
                    other => format!("{other:?}"),
                })
                .collect();
            c.barrier().unwrap();
            polls
        },
    );
    let polls = ended.into_iter().next().unwrap().value();
    assert!(polls[0].contains("handler index 250"), "{polls:?}");
    assert!(polls[1].contains("2 arguments"), "{polls:?}");
    assert_eq!(polls[2], "Ok(())", "{polls:?}");
}
