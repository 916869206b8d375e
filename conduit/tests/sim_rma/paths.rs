//! Every RMA path under EAGAIN, delays and reordering, with completions on
//! the TX queue and on the reply queue, and small NBI puts aggregated or
//! not.

use super::sim::Job;
use super::{pattern, SimClient, SEG};
use conduit::client::{NbiSync, Seq};
use conduit::transport::sim::Faults;

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
                // different path per destination (its own segment by the
                // deferred NB put, a copy: a transfer within a rank never
                // reaches the provider; the next rank by the blocking put).
                for d in 0..n {
                    let at = me * (SEG / n);
                    match (d + 3 - me) % 3 {
                        1 => c.put(d, at, &mine).unwrap(),
                        2 => c
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
/// path the puts to the other ranks took (those to itself are copies).
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
                assert_eq!(pc.inject + pc.bounce + pc.block, 6000, "{pc:?}");
            } else {
                assert_eq!(pc.aggregate, 6000, "{pc:?}");
                // Several batches per target: a batch holds one Medium.
                assert!(batches > 3 && batches < 100, "{batches} batches");
            }
        }
    }
}

/// An aggregated batch of NBI puts whose send is refused: the sync that
/// sends it returns the failure once; the next sync (nothing failed since)
/// returns Ok, and later puts land. (The failure was kept for the next
/// sync as well, which reported it a second time.)
#[test]
fn a_refused_batch_is_reported_by_one_sync() {
    let job = Job::new(2);
    let fabric = job.fabric();
    let (_f, ended) = job.run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            c.attach_segment(SEG).unwrap();
            c.barrier().unwrap();
            let mut got = Vec::new();
            if c.rank() == 0 {
                c.rma_scope(|s| {
                    for i in 0..10 {
                        s.put_nbi(1, i * 8, &pattern(i, 8))?;
                    }
                    fabric.set_faults(|f| f.refuse_send = Some((0, 1)));
                    got.push(s.sync_nbi(NbiSync::Puts).map_err(|e| e.report()));
                    got.push(s.sync_nbi(NbiSync::Puts).map_err(|e| e.report()));
                    for i in 0..10 {
                        s.put_nbi(1, 4096 + i * 8, &pattern(i + 50, 8))?;
                    }
                    got.push(s.sync_nbi(NbiSync::Puts).map_err(|e| e.report()));
                    Ok(())
                })
                .unwrap();
            }
            c.barrier().unwrap();
            if c.rank() == 1 {
                let mut b = vec![0u8; 80];
                c.segment_read(4096, &mut b).unwrap();
                for i in 0..10 {
                    assert_eq!(b[i * 8..i * 8 + 8], pattern(i + 50, 8)[..], "put {i}");
                }
            }
            (got, c.stats().put_batches)
        },
    );
    let (got, batches) = ended.into_iter().next().unwrap().value();
    assert!(batches > 0, "the puts were not aggregated");
    assert_eq!(got.len(), 3);
    let e = got[0]
        .as_ref()
        .expect_err("the refused batch was not reported");
    assert!(e.contains("a simulated send failed"), "{e}");
    assert_eq!(got[1], Ok(()), "reported twice");
    assert_eq!(got[2], Ok(()));
}

/// Two batches (to ranks 1 and 2) both refused in one sync: that sync
/// reports the failure and the next sync, with no puts between, none
/// (every failure a sync meets is reported by it, not left for a later
/// one); later puts arrive.
#[test]
fn two_refused_batches_are_reported_by_one_sync() {
    let job = Job::new(3);
    let fabric = job.fabric();
    let (_f, ended) = job.run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            c.attach_segment(SEG).unwrap();
            c.barrier().unwrap();
            let mut got = Vec::new();
            if c.rank() == 0 {
                c.rma_scope(|s| {
                    for i in 0..10 {
                        s.put_nbi(1, i * 8, &pattern(i, 8))?;
                        s.put_nbi(2, i * 8, &pattern(i, 8))?;
                    }
                    fabric.set_faults(|f| {
                        f.refuse_send = Some((0, 1));
                        f.refuse_more = 1;
                    });
                    got.push(s.sync_nbi(NbiSync::Puts).map_err(|e| e.report()));
                    got.push(s.sync_nbi(NbiSync::Puts).map_err(|e| e.report()));
                    for d in 1..3 {
                        s.put_nbi(d, 4096, &pattern(d + 50, 8))?;
                    }
                    got.push(s.sync_nbi(NbiSync::Puts).map_err(|e| e.report()));
                    Ok(())
                })
                .unwrap();
            }
            c.barrier().unwrap();
            if c.rank() > 0 {
                let mut b = vec![0u8; 8];
                c.segment_read(4096, &mut b).unwrap();
                assert_eq!(b, pattern(c.rank() + 50, 8), "rank {}", c.rank());
            }
            (got, fabric.counts().failed)
        },
    );
    let (got, failed) = ended.into_iter().next().unwrap().value();
    assert_eq!(failed, 2, "both batch sends were not refused");
    assert_eq!(got.len(), 3);
    let e = got[0]
        .as_ref()
        .expect_err("the refused batches were not reported");
    assert!(e.contains("a simulated send failed"), "{e}");
    assert_eq!(got[1], Ok(()), "a failure was left for a later sync");
    assert_eq!(got[2], Ok(()));
}
