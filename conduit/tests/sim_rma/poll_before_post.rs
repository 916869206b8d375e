//! `GASNET_OFI_RMA_POLL_FREQ=1`, the round of progress before every RMA
//! post: an error that round meets waits for the next poll, and a reply
//! handler's panic in it leaves no transfer half-accounted.

use super::sim::Job;
use super::{pattern, untouched, SimClient, SEG};
use conduit::client::{NbiSync, Seq};
use conduit::transport::sim::Faults;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
