//! RMA over the in-memory simulator: every path under faults, error
//! completions with their numbers, and soundness: on every way out of a
//! call or scope (normal return, an error met during a wait, a post
//! failing part-way through a split transfer, a failure while the scope
//! finishes, a panic inside the scope, a handler's panic while the scope
//! finishes) no transfer is left that could still read or write the
//! caller's buffer.

mod sim;

use conduit::client::{Client, Error, NbiSync, Seq};
use conduit::transport::sim::{Faults, SimFabric, SimTransport};
use sim::Job;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

type SimClient = Client<(), SimTransport>;

const SEG: usize = 1 << 20;

fn pattern(seed: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i * 7 + seed * 13 + (i >> 9)) as u8)
        .collect()
}

/// No queued transfer of `rank` touches `buf`.
fn untouched(fabric: &SimFabric, rank: usize, buf: &[u8]) {
    let (a, b) = (buf.as_ptr() as usize, buf.as_ptr() as usize + buf.len());
    for (p, len) in fabric.pending(rank) {
        assert!(
            p + len <= a || p >= b,
            "a transfer of {len} bytes at {p:#x} still uses the caller's buffer {a:#x}..{b:#x}"
        );
    }
}

/// Each rank fills its segment with its pattern; everyone reads every other
/// rank's segment back by every path, with RMA completions reported on the
/// TX queue and on the reply queue (as the libfabric transport does).
#[test]
fn every_path_under_eagain_delay_and_reordering() {
    every_path(false);
    every_path(true);
}

fn every_path(tx_on_reply: bool) {
    let (_f, ended) = Job::new(3)
        .faults(Faults {
            eagain_one_in: 4,
            max_delay: 3,
            reorder: true,
            tx_on_reply,
            ..Faults::default()
        })
        .max_msg(4096)
        .run::<Seq, _, _, _>(
            |_| (),
            |c: &SimClient| {
                c.attach_segment(SEG).unwrap();
                let (me, n) = (c.rank(), c.size());
                let mine = pattern(me, SEG / n);
                // Each rank writes its slice of every segment, by a
                // different path per destination.
                for d in 0..n {
                    let at = me * (SEG / n);
                    match d % 3 {
                        0 => c.put(d, at, &mine).unwrap(),
                        1 => c
                            .rma_scope(|s| {
                                for (k, ch) in mine.chunks(1000).enumerate() {
                                    s.put_nbi(d, at + k * 1000, ch)?;
                                }
                                s.sync_nbi(NbiSync::Puts)
                            })
                            .unwrap(),
                        _ => c
                            .rma_scope(|s| {
                                let e = s.put_nb_deferred(d, at, &mine)?;
                                s.wait(e)
                            })
                            .unwrap(),
                    }
                }
                c.barrier().unwrap();
                for src in 0..n {
                    let want = pattern(src, SEG / n);
                    for d in 0..n {
                        let mut got = vec![0u8; want.len()];
                        if (src + d) % 2 == 0 {
                            c.get(d, src * (SEG / n), &mut got).unwrap();
                        } else {
                            c.rma_scope(|s| {
                                let (a, b) = got.split_at_mut(want.len() / 2);
                                let e = s.get_nb(d, src * (SEG / n), a)?;
                                s.get_nbi(d, src * (SEG / n) + want.len() / 2, b)?;
                                s.wait(e)?;
                                s.sync_nbi(NbiSync::Gets)
                            })
                            .unwrap();
                        }
                        assert_eq!(
                            got, want,
                            "rank {me}: rank {d}'s copy of rank {src}'s slice"
                        );
                    }
                }
                c.put_counts()
            },
        );
    for e in ended {
        let pc = e.value();
        assert!(pc.block > 0, "{pc:?}");
    }
}

/// Small NBI puts, aggregated per target (the default limit) or not
/// (limit 0), under EAGAIN, delays and reordering: every rank writes
/// 3,000 puts of 1..=48 bytes into each rank's segment (itself included)
/// and syncs, the data is exact everywhere, and the counters say which
/// path the puts took.
#[test]
fn small_nbi_puts_aggregated_or_not_under_faults() {
    for limit in ["256", "0"] {
        let (_f, ended) = Job::new(3)
            .faults(Faults {
                eagain_one_in: 5,
                max_delay: 3,
                reorder: true,
                ..Faults::default()
            })
            .vars(&[("GASNET_OFI_PUT_AGGREGATE_LIMIT", limit)])
            .run::<Seq, _, _, _>(
                |_| (),
                |c: &SimClient| {
                    c.attach_segment(SEG).unwrap();
                    let (me, n) = (c.rank(), c.size());
                    let slice = SEG / n;
                    let len = |i: usize| 1 + (i * 7) % 48;
                    // Rank `src`'s 3,000 puts, laid end to end from the
                    // start of `b`, are all there.
                    let check = |b: &[u8], src: usize, what: &str| {
                        let mut at = 0;
                        for i in 0..3000 {
                            let want = pattern(src * 7 + i, len(i));
                            assert_eq!(b[at..at + len(i)], want[..], "rank {me}: put {i} {what}");
                            at += len(i);
                        }
                    };
                    c.rma_scope(|s| {
                        for d in 0..n {
                            let mut at = me * slice;
                            for i in 0..3000 {
                                s.put_nbi(d, at, &pattern(me * 7 + i, len(i)))?;
                                at += len(i);
                            }
                        }
                        s.sync_nbi(NbiSync::Puts)
                    })
                    .unwrap();
                    // Synced: in place at every target now (read back
                    // before any other message could have pushed them).
                    for d in 0..n {
                        let mut back = vec![0u8; 3000 * 48];
                        c.get(d, me * slice, &mut back).unwrap();
                        check(&back, me, &format!("to rank {d}, read back after the sync"));
                    }
                    c.barrier().unwrap();
                    let mut mine = vec![0u8; SEG];
                    c.segment_read(0, &mut mine).unwrap();
                    for src in 0..n {
                        check(&mine[src * slice..], src, &format!("of rank {src}"));
                    }
                    (c.put_counts(), c.stats().put_batches)
                },
            );
        for e in ended {
            let (pc, batches) = e.value();
            if limit == "0" {
                assert_eq!((pc.aggregate, batches), (0, 0), "{pc:?}");
                assert_eq!(pc.inject + pc.bounce + pc.block, 9000, "{pc:?}");
            } else {
                assert_eq!(pc.aggregate, 9000, "{pc:?}");
                // Several batches per target: a batch holds one Medium.
                assert!(batches > 3 && batches < 100, "{batches} batches");
            }
        }
    }
}

#[test]
fn rma_error_completions_keep_their_numbers() {
    let (_f, ended) = Job::new(2).run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            c.attach_segment(SEG).unwrap();
            c.barrier().unwrap();
            let r = if c.rank() == 0 {
                // Fail the next RMA transfer (set by the test through the
                // fabric before this rank's put: see below).
                Some(c.put(1, 0, &[1u8; 200]))
            } else {
                None
            };
            r.map(|r| r.map_err(|e| (e.to_string(), matches!(&e, Error::Rma(x) if x.err() == 5))))
        },
    );
    assert_eq!(ended.into_iter().next().unwrap().value(), Some(Ok(())));
    for tx_on_reply in [false, true] {
        failed_put_reports_its_numbers(tx_on_reply);
    }
}

/// A put whose transfer fails reports the provider's numbers, wherever the
/// transport reports the failure.
fn failed_put_reports_its_numbers(tx_on_reply: bool) {
    let (_f, ended) = Job::new(2)
        .faults(Faults {
            fail_rma: 1,
            tx_on_reply,
            ..Faults::default()
        })
        .run::<Seq, _, _, _>(
            |_| (),
            |c: &SimClient| {
                c.attach_segment(SEG).unwrap();
                if c.rank() == 0 {
                    let e = c.put(1, 0, &[1u8; 200]).unwrap_err();
                    let Error::Rma(r) = &e else {
                        panic!("not an RMA error: {e:?}")
                    };
                    assert_eq!((r.err(), r.prov_errno(), r.rank, r.op), (5, 0, 1, "put"));
                    Some(e.report())
                } else {
                    None
                }
            },
        );
    assert_eq!(
        ended.into_iter().next().unwrap().value().unwrap(),
        "put to rank 1 failed: simulated failure of an RMA write (err 5, provider errno 0)"
    );
}

/// A panic inside a scope: the get is still in flight (delayed
/// completions) when the closure unwinds; the scope completes it before the
/// buffer is back in the caller's hands, and nothing touches it afterwards.
#[test]
fn a_panic_inside_a_scope_completes_its_transfers() {
    let (fabric, ended) = Job::new(2)
        .faults(Faults {
            max_delay: 40,
            ..Faults::default()
        })
        .max_msg(1024)
        .run::<Seq, _, _, _>(
            |_| (),
            |c: &SimClient| {
                c.attach_segment(SEG).unwrap();
                c.segment_write(0, &pattern(c.rank() + 10, 65536)).unwrap();
                c.barrier().unwrap();
                let mut buf = vec![0u8; 65536];
                let r = catch_unwind(AssertUnwindSafe(|| {
                    c.rma_scope(|s| {
                        let _in_flight = s.get_nb(1 - c.rank(), 0, &mut buf)?;
                        panic!("boom inside the scope");
                        #[allow(unreachable_code)]
                        Ok(())
                    })
                }));
                assert!(r.is_err(), "the panic went through");
                buf
            },
        );
    for (me, e) in ended.into_iter().enumerate() {
        let buf = e.value();
        untouched(&fabric, me, &buf);
        assert_eq!(
            buf,
            pattern(1 - me + 10, 65536),
            "rank {me}: the get finished before the unwind left the scope"
        );
    }
}

/// An error met during a wait: while rank 0 waits for its get, rank 1
/// sends it an AM for a handler nobody registered. The get carries on to
/// its end (and returns its own result); the next poll reports the peer's
/// error. Nothing writes the buffer after the get returned.
#[test]
fn an_error_met_while_waiting_leaves_the_transfer_whole() {
    // Rank 0 starts its get once rank 1's bad AM is on its way.
    let sent = std::sync::atomic::AtomicBool::new(false);
    let (fabric, ended) = Job::new(2)
        .faults(Faults {
            max_delay: 30,
            ..Faults::default()
        })
        .max_msg(512)
        .run::<Seq, _, _, _>(
            |_| (),
            |c: &SimClient| {
                c.attach_segment(SEG).unwrap();
                c.segment_write(0, &pattern(c.rank() + 20, 32768)).unwrap();
                c.barrier().unwrap();
                if c.rank() == 1 {
                    c.request_short(0, 250, &[]).unwrap();
                    sent.store(true, Ordering::Release);
                    return (None, Vec::new(), None);
                }
                while !sent.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
                let mut buf = vec![0u8; 32768];
                let r = c.get(1, 0, &mut buf).map_err(|e| e.to_string());
                // The bad AM arrived during the get (the delay keeps the
                // get's 64 transfers in flight for many polls) or arrives
                // now.
                let mut later = None;
                for _ in 0..1000 {
                    if let Err(e) = c.poll() {
                        later = Some(e.to_string());
                        break;
                    }
                }
                (Some(r), buf, later)
            },
        );
    let (r, buf, later) = ended.into_iter().next().unwrap().value();
    untouched(&fabric, 0, &buf);
    assert_eq!(r.unwrap(), Ok(()), "the get's own result");
    assert_eq!(buf, pattern(21, 32768), "the get's bytes");
    assert_eq!(
        later.as_deref(),
        Some("received an AM from rank 1 for handler index 250 with no associated handler registered")
    );
}

/// A get split into 64 transfers whose 10th post fails: the call returns
/// the error once the 9 posted transfers are over; nothing of it remains.
#[test]
fn a_post_failing_part_way_through_a_split_transfer() {
    let job = Job::new(2)
        .faults(Faults {
            max_delay: 20,
            ..Faults::default()
        })
        .max_msg(1024);
    let fabric = job.fabric();
    let (fabric, ended) = job.run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            c.attach_segment(SEG).unwrap();
            c.segment_write(0, &pattern(c.rank() + 30, 65536)).unwrap();
            c.barrier().unwrap();
            let mut buf = vec![0u8; 65536];
            let r = if c.rank() == 0 {
                fabric.set_faults(|f| f.fail_post = Some((0, 10)));
                Some(c.get(1, 0, &mut buf).map_err(|e| e.report()))
            } else {
                None
            };
            (r, buf)
        },
    );
    let (r, buf) = ended.into_iter().next().unwrap().value();
    untouched(&fabric, 0, &buf);
    assert_eq!(
        r.unwrap(),
        Err("a simulated post failed: -5 (Input/output error)".into())
    );
    // The nine posted chunks landed before the call returned; the rest was
    // never posted.
    let want = pattern(31, 65536);
    assert_eq!(buf[..9 * 1024], want[..9 * 1024]);
    assert!(buf[9 * 1024..].iter().all(|&b| b == 0));
}

/// A transfer fails while the scope finishes (the other operations
/// complete, the failure is returned with its numbers, nothing remains).
#[test]
fn a_failure_while_the_scope_finishes() {
    let job = Job::new(2)
        .faults(Faults {
            max_delay: 10,
            reorder: true,
            ..Faults::default()
        })
        .max_msg(2048);
    let fabric = job.fabric();
    let (fabric, ended) = job.run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            c.attach_segment(SEG).unwrap();
            c.segment_write(0, &pattern(c.rank() + 40, 65536)).unwrap();
            c.barrier().unwrap();
            let mut bufs = vec![vec![0u8; 8192]; 8];
            let r = if c.rank() == 0 {
                fabric.set_faults(|f| f.fail_rma = 1);
                let r = c.rma_scope(|s| {
                    for (k, b) in bufs.iter_mut().enumerate() {
                        s.get_nbi(1, k * 8192, b)?;
                    }
                    // Returning now leaves the scope's end to wait for them.
                    Ok(())
                });
                Some(r.map_err(|e| e.report()))
            } else {
                None
            };
            (r, bufs)
        },
    );
    let (r, bufs) = ended.into_iter().next().unwrap().value();
    for b in &bufs {
        untouched(&fabric, 0, b);
    }
    let e = r.unwrap().unwrap_err();
    assert!(
        e.starts_with("get from rank 1 failed: simulated failure of an RMA read (err 5"),
        "{e}"
    );
    // Every other transfer completed.
    let want = pattern(41, 65536);
    let good = bufs
        .iter()
        .enumerate()
        .filter(|(k, b)| b[..] == want[k * 8192..(k + 1) * 8192])
        .count();
    assert!(good >= 7, "only {good} of 8 blocks arrived");
}

/// A handler panics while the scope finishes (in a wait for one of its
/// operations): the unwind still completes every other operation of the
/// scope before the buffers are back in the caller's hands. The AM that
/// panics is sent while the scope's gets are in flight; when it happens to
/// arrive only after they completed, the attempt is repeated.
#[test]
fn a_handler_panic_while_the_scope_finishes() {
    use std::sync::atomic::{AtomicU32, Ordering::*};
    const ATTEMPTS: u32 = 6;
    let posted = AtomicU32::new(0);
    let sent = AtomicU32::new(0);
    let job = Job::new(2)
        .faults(Faults {
            max_delay: 40,
            ..Faults::default()
        })
        .max_msg(512);
    let fabric = job.fabric();
    let (_, ended) = job.run::<Seq, _, _, _>(
        |_| AtomicU32::new(0),
        |c: &Client<AtomicU32, SimTransport>| {
            c.on_request_short(230, 0, |tok, _| {
                tok.state().fetch_add(1, SeqCst);
                panic!("handler panics on purpose");
            })
            .unwrap();
            c.attach_segment(SEG).unwrap();
            c.segment_write(0, &pattern(c.rank() + 50, 65536)).unwrap();
            c.barrier().unwrap();
            let mut inside = 0;
            let mut bufs = vec![vec![0u8; 8192]; 8];
            for attempt in 1..=ATTEMPTS {
                if c.rank() == 1 {
                    while posted.load(Acquire) < attempt {
                        std::thread::yield_now();
                    }
                    c.request_short(0, 230, &[]).unwrap();
                    sent.store(attempt, Release);
                    continue;
                }
                let r = catch_unwind(AssertUnwindSafe(|| {
                    c.rma_scope(|s| {
                        for (k, b) in bufs.iter_mut().enumerate() {
                            s.get_nbi(1, k * 8192, b)?;
                        }
                        posted.store(attempt, Release);
                        while sent.load(Acquire) < attempt {
                            std::thread::yield_now();
                        }
                        Ok(())
                    })
                }));
                for b in &bufs {
                    untouched(&fabric, 0, b);
                }
                if r.is_err() {
                    inside += 1;
                }
                // The handler ran in the scope, or runs now.
                while c.state().load(SeqCst) < attempt {
                    let _ = catch_unwind(AssertUnwindSafe(|| c.poll()));
                }
            }
            inside
        },
    );
    let inside = ended.into_iter().next().unwrap().value();
    assert!(
        inside > 0,
        "in {ATTEMPTS} attempts the AM never arrived while the scope finished"
    );
}

/// Registers request handler `request`, which replies to handler `reply`
/// and then sets `replied`.
fn replies_with(c: &SimClient, request: u8, reply: u8, replied: &Arc<AtomicBool>) {
    let flag = replied.clone();
    c.on_request_short(request, 0, move |tok, _| {
        tok.reply_short(reply, &[]).unwrap();
        flag.store(true, Ordering::Release);
    })
    .unwrap();
}

/// Rank 0 sends request `request` to rank 1 and returns once rank 1's
/// handler has replied, so the reply is waiting in rank 0's queues (no
/// poll of rank 0 read it); rank 1 polls until it replied. True on rank 0,
/// the rank that goes on.
fn reply_waiting(c: &SimClient, request: u8, replied: &AtomicBool) -> bool {
    if c.rank() == 1 {
        while !replied.load(Ordering::Acquire) {
            c.poll().unwrap();
        }
        return false;
    }
    c.request_short(1, request, &[]).unwrap();
    while !replied.load(Ordering::Acquire) {
        std::thread::yield_now();
    }
    true
}

/// `GASNET_OFI_RMA_POLL_FREQ=1`: every RMA post is preceded by a round of
/// progress on the TX and reply queues. An error that round meets (here a
/// reply for a handler rank 0 never registered, already waiting when the
/// first put is posted) is not the put's: every put is accounted as
/// posted and completes, the scope returns its own result, and the next
/// poll reports the error, once.
#[test]
fn an_error_met_by_the_poll_after_a_post_waits_for_the_next_poll() {
    let replied = Arc::new(AtomicBool::new(false));
    let (_f, ended) = Job::new(2)
        .vars(&[
            ("GASNET_OFI_RMA_POLL_FREQ", "1"),
            ("GASNET_OFI_PUT_AGGREGATE_LIMIT", "0"),
        ])
        .run::<Seq, _, _, _>(
            |_| (),
            |c: &SimClient| {
                c.attach_segment(SEG).unwrap();
                replies_with(c, 223, 224, &replied);
                c.barrier().unwrap();
                if !reply_waiting(c, 223, &replied) {
                    return None;
                }
                let r = c
                    .rma_scope(|s| {
                        for i in 0..2000 {
                            s.put_nbi(1, i * 8, &pattern(i, 8))?;
                        }
                        s.sync_nbi(NbiSync::Puts)
                    })
                    .map_err(|e| e.to_string());
                let mut errors = Vec::new();
                for _ in 0..1000 {
                    if let Err(e) = c.poll() {
                        errors.push(e.to_string());
                    }
                }
                let mut back = vec![0u8; 2000 * 8];
                c.get(1, 0, &mut back).unwrap();
                Some((r, errors, back, c.stats().rma_post_polls))
            },
        );
    let (r, errors, back, polls) = ended.into_iter().next().unwrap().value().unwrap();
    assert_eq!(r, Ok(()), "the scope's own result");
    assert_eq!(
        errors,
        ["received an AM from rank 1 for handler index 224 with no associated handler registered"],
        "reported once, by a later poll"
    );
    for i in 0..2000 {
        assert_eq!(back[i * 8..i * 8 + 8], pattern(i, 8)[..], "put {i}");
    }
    assert!(polls >= 2000, "a round for every post: {polls}");
}

/// `GASNET_OFI_RMA_POLL_FREQ=1`, and the round of progress before an RMA
/// post runs a reply handler that panics: the panic leaves the scope with
/// every transfer it posted over (the round runs before the post, so a
/// transfer is either posted and accounted or not posted at all), and
/// nothing writes the buffers afterwards.
#[test]
fn a_reply_handler_panic_in_the_round_before_a_post() {
    let replied = Arc::new(AtomicBool::new(false));
    let job = Job::new(2)
        .faults(Faults {
            max_delay: 40,
            ..Faults::default()
        })
        .max_msg(512)
        .vars(&[("GASNET_OFI_RMA_POLL_FREQ", "1")]);
    let fabric = job.fabric();
    let (_, ended) = job.run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            replies_with(c, 225, 226, &replied);
            c.on_reply_short(226, 0, |_, _| panic!("reply handler panics on purpose"))
                .unwrap();
            c.attach_segment(SEG).unwrap();
            c.segment_write(0, &pattern(c.rank() + 60, 65536)).unwrap();
            c.barrier().unwrap();
            if !reply_waiting(c, 225, &replied) {
                return None;
            }
            let mut bufs = vec![vec![0u8; 8192]; 8];
            let r = catch_unwind(AssertUnwindSafe(|| {
                c.rma_scope(|s| {
                    for (k, b) in bufs.iter_mut().enumerate() {
                        s.get_nbi(1, k * 8192, b)?;
                    }
                    s.sync_nbi(NbiSync::Gets)
                })
            }));
            for b in &bufs {
                untouched(&fabric, 0, b);
            }
            Some(r.is_err())
        },
    );
    let panicked = ended.into_iter().next().unwrap().value();
    assert_eq!(
        panicked,
        Some(true),
        "the reply handler's panic left the scope"
    );
}
