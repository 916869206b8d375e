//! How much one poll reads: at most `GASNET_OFI_NUM_COMPLETIONS`
//! completions of a queue, the rest in the next poll.

use super::sim::{Ended, Job};
use super::H_SHORT;
use conduit::client::{Error, Seq};
use std::sync::atomic::{AtomicU64, Ordering};

/// State of `one_poll_reads_up_to_num_completions`.
#[derive(Default)]
struct Count {
    got: AtomicU64,
    /// Rank 0 left the first barrier (its barrier wait polls, and would
    /// run handlers of Shorts sent before).
    ready: std::sync::atomic::AtomicBool,
    sent: std::sync::atomic::AtomicBool,
}

/// One poll reads at most `GASNET_OFI_NUM_COMPLETIONS` completions of a
/// queue, in chunks (the chunk on the stack is smaller than the setting's
/// maximum), and the next poll reads the rest: 50 Shorts waiting, a
/// setting of 40, so 40 handlers run in the first poll and 10 in the next.
#[test]
fn one_poll_reads_up_to_num_completions() {
    let shared = std::sync::Arc::new(Count::default());
    let (_f, ended) = Job::new(2)
        .vars(&[("GASNET_OFI_NUM_COMPLETIONS", "40")])
        .run::<Seq, _, _, _>(
            |_| shared.clone(),
            |c| -> Result<(u64, u64), Error> {
                c.on_request_short(H_SHORT, 0, |tok, _| {
                    tok.state().got.fetch_add(1, Ordering::Relaxed);
                })?;
                c.barrier()?;
                let st = c.state();
                if c.rank() == 1 {
                    while !st.ready.load(Ordering::Acquire) {
                        std::thread::yield_now();
                    }
                    for _ in 0..50 {
                        c.request_short(0, H_SHORT, &[])?;
                    }
                    st.sent.store(true, Ordering::Release);
                    return Ok((0, 0));
                }
                st.ready.store(true, Ordering::Release);
                while !st.sent.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
                c.poll()?;
                let first = st.got.load(Ordering::Relaxed);
                c.poll()?;
                Ok((first, st.got.load(Ordering::Relaxed)))
            },
        );
    let mut ended = ended.into_iter();
    match ended.next() {
        Some(Ended::Returned(Ok(r))) => {
            assert_eq!(r, (40, 50), "handlers run after one poll, two polls")
        }
        _ => panic!("rank 0 did not return its counts"),
    }
}
