//! The multi-receive patterns that broke real providers: a release that
//! completes before earlier messages in its buffer, -FI_ENOMEM for a
//! multi-receive post, and buffers recycled under a flood.

use super::sim::Job;
use super::{all_returned, exchange, Seen, SimClient};
use conduit::client::Seq;
use conduit::transport::sim::Faults;
use std::sync::atomic::{AtomicU64, Ordering};

/// The completion pattern of libfabric 1.17's tcp;ofi_rxm between hosts:
/// the message that releases a multi-receive buffer completes before
/// earlier messages placed in the same buffer, whose data arrives later.
/// Reposting on the release alone let new messages overwrite them
/// ("malformed AM ... 8208 bytes received for a message of 8 bytes").
#[test]
fn release_before_earlier_messages_is_not_reposted_early() {
    let (fabric, ended) = Job::new(3)
        .faults(Faults {
            early_release: true,
            max_delay: 2,
            ..Faults::default()
        })
        .vars(&[
            ("GASNET_OFI_NUM_RECEIVE_BUFFS", "4"),
            ("GASNET_OFI_RECEIVE_BUFF_SIZE", "32K"),
        ])
        .run::<Seq, _, _, _>(|_| Seen::default(), |c| exchange(c, 200));
    let lines = all_returned(ended);
    assert!(
        fabric.counts().early_releases > 10,
        "the pattern did not occur: {:?}",
        fabric.counts()
    );
    assert!(
        lines.iter().any(|l| !l.contains("early 0")),
        "the client did not see early releases: {lines:?}"
    );
}

/// libfabric 1.17's shm: a multi-receive post answers -FI_ENOMEM while
/// unexpected messages hold every receive entry; one post without
/// FI_MULTI_RECV drains one and lets the next multi-receive post through.
#[test]
fn no_memory_for_a_multi_receive_post_is_rescued() {
    let (fabric, ended) = Job::new(2)
        .faults(Faults {
            nomem_multi_posts: 40,
            ..Faults::default()
        })
        .vars(&[
            ("GASNET_OFI_NUM_RECEIVE_BUFFS", "2"),
            ("GASNET_OFI_RECEIVE_BUFF_SIZE", "32K"),
        ])
        .run::<Seq, _, _, _>(|_| Seen::default(), |c| exchange(c, 100));
    let lines = all_returned(ended);
    assert_eq!(fabric.faults().nomem_multi_posts, 0, "{lines:?}");
    assert!(lines.iter().any(|l| !l.contains("rescues 0")), "{lines:?}");
}

/// A flood to one rank through few small multi-receive buffers: every
/// buffer is released and reposted many times, nothing lost or duplicated.
#[test]
fn multi_receive_recycling_under_a_flood() {
    let (_f, ended) = Job::new(4)
        .faults(Faults {
            max_delay: 1,
            reorder: true,
            eagain_one_in: 17,
            ..Faults::default()
        })
        .vars(&[
            ("GASNET_OFI_NUM_RECEIVE_BUFFS", "2"),
            ("GASNET_OFI_RECEIVE_BUFF_SIZE", "16K"),
        ])
        .run::<Seq, _, _, _>(
            |_| AtomicU64::new(0),
            |c: &SimClient<AtomicU64>| {
                c.on_request_medium(210, 1, |tok, a, p| {
                    assert_eq!(p.len(), 100 + a[0] as usize % 900);
                    tok.state().fetch_add(1, Ordering::Relaxed);
                })
                .unwrap();
                c.barrier().unwrap();
                let n = 3000u32;
                if c.rank() != 0 {
                    for i in 0..n {
                        c.request_medium(0, 210, &[i], &vec![7u8; 100 + i as usize % 900])
                            .unwrap();
                    }
                } else {
                    let want = n as u64 * (c.size() as u64 - 1);
                    c.block_until(|| c.state().load(Ordering::Relaxed) == want)
                        .unwrap();
                }
                c.barrier().unwrap();
                c.stats().reposts
            },
        );
    let reposts = ended.into_iter().next().unwrap().value();
    assert!(reposts > 100, "rank 0 reposted only {reposts} buffers");
}

/// A message that fails after the provider placed it in a multi-receive
/// buffer (its error completion says where): its room is accounted like
/// a delivered message's, so the buffer is reposted once the rest of it is
/// consumed. Each of the two buffers takes one such failure in turn; had
/// either stayed out, the flood would stop (and the job pass its deadline).
#[test]
fn a_failed_message_in_a_multi_receive_buffer_does_not_strand_it() {
    let job = Job::new(2).vars(&[
        ("GASNET_OFI_NUM_RECEIVE_BUFFS", "2"),
        ("GASNET_OFI_RECEIVE_BUFF_SIZE", "16K"),
    ]);
    let fabric = job.fabric();
    let n = 2000u64;
    let (fabric, ended) = job.run::<Seq, _, _, _>(
        |_| AtomicU64::new(0),
        |c: &SimClient<AtomicU64>| {
            let f = fabric.clone();
            c.on_request_medium(211, 1, move |tok, _, p| {
                assert_eq!(p.len(), 1000);
                let got = tok.state().fetch_add(1, Ordering::Relaxed) + 1;
                // One failure now, another well after the first buffer
                // (16 messages) was due again.
                if got == 5 || got == 400 {
                    f.set_faults(|x| x.fail_placed = 1);
                }
            })
            .unwrap();
            c.barrier().unwrap();
            let mut errors = Vec::new();
            if c.rank() == 1 {
                for i in 0..n {
                    c.request_medium(0, 211, &[i as u32], &[9u8; 1000]).unwrap();
                }
            } else {
                while c.state().load(Ordering::Relaxed) < n - 2 {
                    if let Err(e) = c.poll() {
                        errors.push(e.report());
                    }
                }
            }
            c.barrier().unwrap();
            (c.state().load(Ordering::Relaxed), errors, c.stats().reposts)
        },
    );
    assert_eq!(fabric.faults().fail_placed, 0);
    let (got, errors, reposts) = ended.into_iter().next().unwrap().value();
    assert_eq!(got, n - 2, "{errors:?}");
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors
            .iter()
            .all(|e| e.contains("simulated failure of a received message")),
        "{errors:?}"
    );
    assert!(reposts > 100, "rank 0 reposted only {reposts} buffers");
}
