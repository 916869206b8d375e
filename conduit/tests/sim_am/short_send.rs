//! A Short to another rank goes to the provider's inject without a plan
//! (`Core::inject_short`) only when it fits the AM inject limit; past the
//! limit, with the limit at 0, and after the provider refused an inject,
//! it takes the planned path, and every Short is sent and counted once.

use super::sim::{Ended, Job};
use conduit::client::{AmStats, Error, Seq};
use conduit::transport::sim::Faults;
use std::sync::atomic::{AtomicU64, Ordering};

const H_FEW: u8 = 220;
const H_MANY: u8 = 221;
const H_ACK: u8 = 222;
const N: u32 = 40;

/// What rank 1 received (argument sums, checked against what was sent)
/// and rank 0's acknowledgements.
#[derive(Default)]
struct Got {
    few: AtomicU64,
    many: AtomicU64,
    acks: AtomicU64,
}

/// Rank 0 sends `N` Shorts of 2 arguments (16 bytes on the wire) and `N`
/// of 16 (72 bytes, above the simulator's 64-byte inject limit); rank 1
/// acknowledges each with a Short reply. Returns rank 0's counters around
/// the sends and rank 1's received sums.
fn run(vars: &[(&'static str, &'static str)], faults: Faults) -> (AmStats, AmStats, u64, u64) {
    let (_f, ended) = Job::new(2).vars(vars).faults(faults).run::<Seq, _, _, _>(
        |_| Got::default(),
        |c| -> Result<(AmStats, AmStats, u64, u64), Error> {
            c.on_request_short(H_FEW, 2, |tok, a| {
                tok.state()
                    .few
                    .fetch_add(u64::from(a[0]) + u64::from(a[1]), Ordering::Relaxed);
                tok.reply_short(H_ACK, &[]).unwrap();
            })?;
            c.on_request_short(H_MANY, 16, |tok, a| {
                let s: u64 = a.iter().map(|&x| u64::from(x)).sum();
                tok.state().many.fetch_add(s, Ordering::Relaxed);
                tok.reply_short(H_ACK, &[]).unwrap();
            })?;
            c.on_reply_short(H_ACK, 0, |tok, _| {
                tok.state().acks.fetch_add(1, Ordering::Relaxed);
            })?;
            c.barrier()?;
            let st = c.state();
            let before = c.stats();
            if c.rank() == 0 {
                for i in 0..N {
                    c.request_short(1, H_FEW, &[i, 1])?;
                    let many: Vec<u32> = (0..16).map(|k| i + k).collect();
                    c.request_short(1, H_MANY, &many)?;
                }
                c.block_until(|| st.acks.load(Ordering::Relaxed) == 2 * u64::from(N))?;
            }
            let after = c.stats();
            c.barrier()?;
            Ok((
                before,
                after,
                st.few.load(Ordering::Relaxed),
                st.many.load(Ordering::Relaxed),
            ))
        },
    );
    let mut ended = ended.into_iter();
    let (Some(Ended::Returned(Ok((b0, a0, _, _)))), Some(Ended::Returned(Ok((_, _, few, many))))) =
        (ended.next(), ended.next())
    else {
        panic!("a rank did not return its counters");
    };
    (b0, a0, few, many)
}

/// What every run must show: each Short arrived once with its arguments,
/// and was counted as sent once.
fn check_delivery(what: &str, before: &AmStats, after: &AmStats, few: u64, many: u64) {
    let n = u64::from(N);
    assert_eq!(
        few,
        (0..n).map(|i| i + 1).sum::<u64>(),
        "{what}: 2-argument Shorts"
    );
    assert_eq!(
        many,
        (0..n).map(|i| 16 * i + 120).sum::<u64>(),
        "{what}: 16-argument Shorts"
    );
    assert_eq!(
        after.requests_sent[0] - before.requests_sent[0],
        2 * n,
        "{what}: Shorts counted as sent"
    );
}

#[test]
fn shorts_within_the_inject_limit_are_injected_the_rest_buffered() {
    let (b, a, few, many) = run(&[], Faults::default());
    check_delivery("default", &b, &a, few, many);
    let n = u64::from(N);
    assert_eq!(a.injected - b.injected, n, "2-argument Shorts injected");
    assert_eq!(
        a.sent_from_buffer - b.sent_from_buffer,
        n,
        "16-argument Shorts (72 bytes) from send buffers"
    );
}

#[test]
fn with_the_inject_limit_at_zero_no_short_is_injected() {
    let (b, a, few, many) = run(&[("GASNET_OFI_AM_INJECT_LIMIT", "0")], Faults::default());
    check_delivery("limit 0", &b, &a, few, many);
    assert_eq!(a.injected - b.injected, 0);
    assert_eq!(a.sent_from_buffer - b.sent_from_buffer, 2 * u64::from(N));
}

#[test]
fn a_refused_inject_is_retried_and_counted_once() {
    let (b, a, few, many) = run(
        &[],
        Faults {
            eagain_one_in: 2,
            ..Faults::default()
        },
    );
    check_delivery("EAGAIN", &b, &a, few, many);
    assert!(
        a.eagain_retries > b.eagain_retries,
        "no post was refused: {} -> {}",
        b.eagain_retries,
        a.eagain_retries
    );
}
