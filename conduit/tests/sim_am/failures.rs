//! Failures around AMs: send and reply-send error completions reported, a
//! peer's exit in the middle of a barrier, and bad sends refused with
//! nothing sent.

use super::sim::{Ended, Job};
use super::SimClient;
use conduit::client::{Error, Seq};
use conduit::transport::sim::Faults;
use std::time::{Duration, Instant};

#[test]
fn send_error_completions_are_reported() {
    let (_f, ended) = Job::new(2).run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient<()>| {
            c.on_request_medium(220, 0, |_, _, _| {}).unwrap();
            c.barrier().unwrap();
            let r = if c.rank() == 0 {
                // Mediums of this size go from a send buffer (not injected),
                // so they have completions that can fail.
                // Failing sends are set up by the test below through the
                // fabric; here: the first two sends of rank 0.
                let mut first = None;
                for _ in 0..4 {
                    if let Err(e) = c
                        .request_medium(1, 220, &[], &[1u8; 500])
                        .and_then(|_| c.poll())
                    {
                        first.get_or_insert(e.report());
                    }
                }
                for _ in 0..100 {
                    if let Err(e) = c.poll() {
                        first.get_or_insert(e.report());
                    }
                }
                first
            } else {
                None
            };
            c.barrier().unwrap();
            r
        },
    );
    // Without injected failures nothing fails.
    assert_eq!(ended.into_iter().next().unwrap().value(), None);
    let (fabric, ended) = Job::new(2)
        .faults(Faults {
            fail_sends: 1,
            ..Faults::default()
        })
        .run::<Seq, _, _, _>(
            |_| (),
            |c: &SimClient<()>| {
                c.on_request_medium(220, 0, |_, _, _| {}).unwrap();
                let mut first = None;
                if c.rank() == 0 {
                    for _ in 0..4 {
                        if let Err(e) = c.request_medium(1, 220, &[], &[1u8; 500]) {
                            first.get_or_insert(e.report());
                        }
                    }
                    for _ in 0..100 {
                        if let Err(e) = c.poll() {
                            first.get_or_insert(e.report());
                        }
                    }
                }
                first
            },
        );
    let got = ended.into_iter().next().unwrap().value();
    assert_eq!(fabric.faults().fail_sends, 0);
    let text = got.expect("the failed send was not reported");
    assert!(
        text.starts_with("an AM send failed: simulated failure of a send (err 5,"),
        "{text}"
    );
}

/// A reply send that fails, reported on the reply queue (where the
/// libfabric transport reports the reply endpoint's sends): the replying
/// rank's next poll returns the failure with the provider's numbers.
#[test]
fn a_failed_reply_send_is_reported_from_the_reply_queue() {
    let job = Job::new(2).faults(Faults {
        tx_on_reply: true,
        ..Faults::default()
    });
    let fabric = job.fabric();
    let (fabric, ended) = job.run::<Seq, _, _, _>(
        |_| (),
        move |c: &SimClient<()>| {
            let f = fabric.clone();
            c.on_request_short(221, 0, move |tok, _| {
                f.set_faults(|x| x.fail_sends = 1);
                tok.reply_medium(222, &[], &[3u8; 500]).unwrap();
            })
            .unwrap();
            c.on_reply_medium(222, 0, |_, _, _| {}).unwrap();
            c.barrier().unwrap();
            let mut first = None;
            if c.rank() == 0 {
                c.request_short(1, 221, &[]).unwrap();
            } else {
                // Until the failure is reported (rank 0's request may come
                // late: its thread may not have run since the barrier).
                let deadline = Instant::now() + Duration::from_secs(30);
                while Instant::now() < deadline {
                    if let Err(e) = c.poll() {
                        first.get_or_insert(e.report());
                        break;
                    }
                }
            }
            first
        },
    );
    assert_eq!(fabric.faults().fail_sends, 0);
    let got = ended.into_iter().nth(1).unwrap().value();
    let text = got.expect("the failed reply send was not reported");
    assert!(
        text.starts_with("an AM send failed: simulated failure of a send (err 5,"),
        "{text}"
    );
}

/// A peer exits while the others wait in a barrier: every rank ends with
/// the peer's code (collective exit), none hangs.
#[test]
fn a_peer_exit_in_the_middle_of_a_barrier() {
    let (_f, ended) = Job::new(4).run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient<()>| {
            c.barrier().unwrap();
            if c.rank() == 2 {
                c.exit(7);
            }
            // The others enter a barrier rank 2 never joins.
            let r = c.barrier();
            format!("barrier returned {r:?}")
        },
    );
    for (r, e) in ended.iter().enumerate() {
        assert!(matches!(e, Ended::Exited(7)), "rank {r}: {e:?}");
    }
}

/// Bad input through the whole client (not only the planner).
#[test]
fn bad_sends_are_refused_and_nothing_is_sent() {
    let (_f, ended) = Job::new(2).run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient<()>| {
            let e = c.request_short(5, 200, &[]).unwrap_err();
            assert_eq!(e.to_string(), "rank 5 is not in the job (size 2)");
            let e = c.request_long(1, 200, &[], &[0; 4], 0).unwrap_err();
            assert!(matches!(e, Error::Am(_)), "{e:?}");
            assert_eq!(
                e.to_string(),
                "rank 1 has no segment attached (call attach_segment first)"
            );
            c.stats().requests_sent
        },
    );
    for e in ended {
        assert_eq!(e.value(), [0, 0, 0]);
    }
}
