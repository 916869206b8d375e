//! The multi-threaded client over the simulator: several threads per rank
//! sending AMs (with replies) and doing RMA to every rank at once, sharing
//! the client's endpoint or each owning one; every message exactly once,
//! every byte checked.

mod sim;

use conduit::client::{Par, ParClient};
use conduit::transport::sim::{Faults, SimTransport};
use sim::Job;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

const THREADS: usize = 3;
const MSGS: u32 = 300;
const BLOCK: usize = 4096;

/// Per rank: what arrived from (source rank, source thread), and the
/// replies each of this rank's threads got.
struct Seen {
    got: Mutex<Vec<Vec<u32>>>,
    replies: Vec<AtomicU64>,
    per_endpoint: Vec<AtomicU64>,
}

impl Seen {
    fn new(ranks: usize) -> Seen {
        Seen {
            got: Mutex::new(vec![Vec::new(); ranks * THREADS]),
            replies: (0..THREADS).map(|_| AtomicU64::new(0)).collect(),
            per_endpoint: (0..=THREADS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

type C = ParClient<Seen, SimTransport>;

fn block(src: usize, t: usize, dest: usize) -> Vec<u8> {
    (0..BLOCK)
        .map(|i| (i ^ (src * 31 + t * 7 + dest)) as u8)
        .collect()
}

/// One thread's work through `ep` (the client's endpoint 0 or its own).
macro_rules! work {
    ($ep:expr, $c:expr, $t:expr) => {{
        let (ep, c, t) = ($ep, $c, $t);
        let (me, n) = (c.rank(), c.size());
        for seq in 0..MSGS {
            for d in 0..n {
                ep.request_short(d, 200, &[(me * THREADS + t) as u32, seq])
                    .unwrap();
            }
        }
        for d in 0..n {
            let at = (me * THREADS + t) * BLOCK;
            let b = block(me, t, d);
            ep.put(d, at, &b).unwrap();
            let mut back = vec![0u8; BLOCK];
            ep.get(d, at, &mut back).unwrap();
            assert_eq!(back, b, "rank {me} thread {t}: block at rank {d}");
        }
        let want = MSGS as u64 * n as u64;
        ep.block_until(|| c.state().replies[t].load(Ordering::Relaxed) == want)
            .unwrap();
    }};
}

fn job(c: &C, own_endpoints: bool) -> u64 {
    c.on_request_short(200, 2, |tok, a| {
        let st = tok.state();
        st.got.lock().unwrap()[a[0] as usize].push(a[1]);
        st.per_endpoint[tok.endpoint()].fetch_add(1, Ordering::Relaxed);
        tok.reply_short(201, &[a[0] % THREADS as u32]).unwrap();
    })
    .unwrap();
    c.on_reply_short(201, 1, |tok, a| {
        tok.state().replies[a[0] as usize].fetch_add(1, Ordering::Relaxed);
    })
    .unwrap();
    c.attach_segment(1 << 20).unwrap();
    c.barrier().unwrap();
    let n = c.size();
    std::thread::scope(|sc| {
        for t in 0..THREADS {
            sc.spawn(move || {
                if own_endpoints {
                    let ep = c.endpoint(t + 1).unwrap();
                    work!(&ep, c, t);
                    // Keep serving this endpoint until every rank's thread
                    // t has delivered everything here.
                    let want = (MSGS as usize * n) as u64;
                    ep.block_until(|| {
                        c.state().per_endpoint[t + 1].load(Ordering::Relaxed) == want
                    })
                    .unwrap();
                } else {
                    work!(c, c, t);
                }
            });
        }
        // The main thread serves endpoint 0 too.
        let want = (MSGS as usize * n * THREADS) as u64;
        c.block_until(|| {
            c.state()
                .got
                .lock()
                .unwrap()
                .iter()
                .map(|v| v.len() as u64)
                .sum::<u64>()
                == want
        })
        .unwrap();
    });
    let got = c.state().got.lock().unwrap();
    for (k, v) in got.iter().enumerate() {
        let mut v = v.clone();
        v.sort();
        assert_eq!(
            v,
            (0..MSGS).collect::<Vec<_>>(),
            "rank {}: messages from source thread {k}",
            c.rank()
        );
    }
    c.state().per_endpoint[0].load(Ordering::Relaxed)
}

#[test]
fn threads_share_the_endpoint() {
    let (_f, ended) = Job::new(3)
        .faults(Faults {
            eagain_one_in: 7,
            max_delay: 2,
            reorder: true,
            ..Faults::default()
        })
        .run::<Par, _, _, _>(|_| Seen::new(3), |c: &C| job(c, false));
    for e in ended {
        assert_eq!(
            e.value(),
            (MSGS as usize * 3 * THREADS) as u64,
            "everything arrived on endpoint 0"
        );
    }
}

#[test]
fn each_thread_owns_an_endpoint() {
    let (_f, ended) = Job::new(3)
        .faults(Faults {
            eagain_one_in: 7,
            max_delay: 2,
            reorder: true,
            ..Faults::default()
        })
        .endpoints(THREADS + 1)
        .run::<Par, _, _, _>(|_| Seen::new(3), |c: &C| job(c, true));
    for e in ended {
        assert_eq!(e.value(), 0, "nothing arrived on endpoint 0");
    }
}

#[test]
fn an_endpoint_has_one_owner() {
    let (_f, ended) = Job::new(1).endpoints(3).run::<Par, _, _, _>(
        |_| Seen::new(1),
        |c: &C| {
            let a = c.endpoint(1).unwrap();
            let twice = c.endpoint(1).unwrap_err().to_string();
            let zero = c.endpoint(0).unwrap_err().to_string();
            let none = c.endpoint(3).unwrap_err().to_string();
            drop(a);
            let again = c.endpoint(1).map(|e| e.index());
            (twice, zero, none, again.ok())
        },
    );
    let (twice, zero, none, again) = ended.into_iter().next().unwrap().value();
    assert_eq!(
        twice,
        "endpoint 1 is already owned by another handle (one thread owns an endpoint at a time)"
    );
    assert_eq!(
        zero,
        "endpoint 0 is the client's own, used by any thread through the client itself, and cannot be owned; endpoints 1 to 2 can be owned"
    );
    assert!(
        none.starts_with("endpoint 3 does not exist; this client has 3"),
        "{none}"
    );
    assert_eq!(again, Some(1));
}

/// A failed batch of aggregated implicit puts is reported to the thread
/// whose puts it held, also when another thread's sync sent it: thread A
/// puts (its batch stays open), thread B (no puts of its own) syncs, which
/// sends A's batch, and that send is refused. B's sync returns the refused
/// post it met (fatal: the endpoint refused it) and B's next sync nothing;
/// a thread C with no puts, syncing then, is told nothing; A's next sync
/// reports its batch's failure, once (before, B's sync took it and A's
/// returned Ok); later puts of A arrive.
/// Sends on its channel when dropped.
struct Release(std::sync::mpsc::Sender<()>);

impl Drop for Release {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

#[test]
fn a_failed_batch_is_reported_to_the_thread_that_put() {
    use conduit::client::NbiSync;
    use std::sync::mpsc::channel;
    let job = Job::new(2);
    let fabric = job.fabric();
    let (_f, ended) = job.run::<Par, _, _, _>(
        |_| (),
        |c: &ParClient<(), SimTransport>| {
            c.attach_segment(1 << 16).unwrap();
            c.barrier().unwrap();
            let mut got = (Vec::new(), Vec::new());
            if c.rank() == 0 {
                let (to_b, b_waits) = channel::<()>();
                let (to_a, a_waits) = channel::<()>();
                std::thread::scope(|sc| {
                    let fabric = &fabric;
                    let a = sc.spawn(move || {
                        let mut r = Vec::new();
                        c.rma_scope(|s| {
                            for i in 0..10 {
                                s.put_nbi(1, i * 8, &[i as u8; 8])?;
                            }
                            to_b.send(()).unwrap();
                            a_waits.recv().unwrap();
                            r.push(s.sync_nbi(NbiSync::Puts).map_err(|e| e.report()));
                            r.push(s.sync_nbi(NbiSync::Puts).map_err(|e| e.report()));
                            for i in 0..10 {
                                s.put_nbi(1, 4096 + i * 8, &[i as u8 + 50; 8])?;
                            }
                            r.push(s.sync_nbi(NbiSync::Puts).map_err(|e| e.report()));
                            Ok(())
                        })
                        .unwrap();
                        r
                    });
                    let b = sc.spawn(move || {
                        // A goes on when B is done, also if B panics.
                        let _release = Release(to_a);
                        b_waits.recv().unwrap();
                        fabric.set_faults(|f| f.refuse_send = Some((0, 1)));
                        let mut r = Vec::new();
                        let end = c.rma_scope(|s| {
                            r.push(s.sync_nbi(NbiSync::Puts).map_err(|e| e.report()));
                            r.push(s.sync_nbi(NbiSync::Puts).map_err(|e| e.report()));
                            Ok(())
                        });
                        r.push(end.map_err(|e| e.report()));
                        // A thread with no puts, syncing after the failure.
                        let other = std::thread::scope(|sc| {
                            sc.spawn(|| {
                                c.rma_scope(|s| s.sync_nbi(NbiSync::Puts))
                                    .map_err(|e| e.report())
                            })
                            .join()
                            .unwrap()
                        });
                        r.push(other);
                        r
                    });
                    got = (a.join().unwrap(), b.join().unwrap());
                });
            }
            c.barrier().unwrap();
            if c.rank() == 1 {
                let mut b = vec![0u8; 80];
                c.segment_read(4096, &mut b).unwrap();
                for i in 0..10 {
                    assert_eq!(b[i * 8..i * 8 + 8], [i as u8 + 50; 8], "put {i}");
                }
            }
            (got, c.stats().put_batches)
        },
    );
    let ((a, b), batches) = ended.into_iter().next().unwrap().value();
    assert!(batches > 0, "the puts were not aggregated");
    assert_eq!(b.len(), 4);
    let e = b[0].as_ref().expect_err("thread B's refused post");
    assert!(e.starts_with("a simulated send failed"), "{e}");
    assert_eq!(b[1], Ok(()), "thread B was told twice");
    assert_eq!(b[2], Ok(()), "thread B's scope was told again");
    assert_eq!(b[3], Ok(()), "thread C was told of thread A's failure");
    assert_eq!(a.len(), 3);
    let e = a[0]
        .as_ref()
        .expect_err("thread A was not told of its failed batch");
    assert!(
        e.starts_with("aggregated NBI put to rank 1 failed")
            && e.contains("its batch could not be sent: a simulated send failed"),
        "{e}"
    );
    assert_eq!(a[1], Ok(()), "reported twice");
    assert_eq!(a[2], Ok(()));
}

/// Two threads of one rank attaching its segment at once: one attaches
/// (with the other ranks), the other is refused at once by name instead of
/// entering the collective too (before, both entered it, and the one that
/// lost a later step dropped a mapping the other had published). Rank 1
/// attaches only once rank 0's refused call has returned, so the calls
/// overlap whatever the timing.
#[test]
fn a_second_concurrent_attach_is_refused() {
    use std::sync::atomic::AtomicBool;
    let refused = AtomicBool::new(false);
    let (_f, ended) = Job::new(2).run::<Par, _, _, _>(
        |_| (),
        |c: &ParClient<(), SimTransport>| {
            let mut got = Vec::new();
            if c.rank() == 0 {
                std::thread::scope(|sc| {
                    let calls: Vec<_> = (0..2)
                        .map(|_| {
                            sc.spawn(|| {
                                let r = c.attach_segment(1 << 16).map_err(|e| e.to_string());
                                if r.is_err() {
                                    refused.store(true, Ordering::Release);
                                }
                                r
                            })
                        })
                        .collect();
                    got = calls.into_iter().map(|t| t.join().unwrap()).collect();
                });
            } else {
                while !refused.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
                c.attach_segment(1 << 16).unwrap();
            }
            c.barrier().unwrap();
            // The segment works: each rank puts into the other's.
            let peer = 1 - c.rank();
            c.put(peer, 64, &[c.rank() as u8 + 7; 8]).unwrap();
            c.barrier().unwrap();
            let mut b = [0u8; 8];
            c.segment_read(64, &mut b).unwrap();
            assert_eq!(b, [peer as u8 + 7; 8], "rank {}", c.rank());
            got
        },
    );
    let mut got = ended.into_iter().next().unwrap().value();
    got.sort();
    assert_eq!(
        got,
        [
            Ok(()),
            Err("attach_segment is already running on another thread of this rank (it is collective: one call per rank)".to_string())
        ]
    );
}
