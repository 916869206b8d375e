//! AM Longs in one message (`am::landing`: payload and header in one write
//! with remote CQ data) over the simulator's writes with CQ data, and what
//! a failed landing write leaves behind.

use super::sim::Job;
use super::{pattern, SimClient};
use conduit::client::Seq;
use std::sync::atomic::{AtomicU64, Ordering};

const H: u8 = 230;
const LEN: usize = 20_000;

/// Rank 0's first 20 Longs to rank 1 fail (each Long's first RMA write
/// reports an error; a failed write with CQ data writes nothing and shows
/// nothing at the target), the next 16 do not. A failed landing write's
/// slot is voided at the target: its credits come back, so after the
/// failures Longs still go in one message. (Before voids, the 8 slots
/// stayed in use after 8 failures, and every later Long went
/// put-then-send.)
#[test]
fn failed_landing_writes_do_not_keep_their_slots() {
    let mut job = Job::new(2);
    job.sim.remote_cq_data = true;
    let fabric = job.fabric();
    let (_f, ended) = job.run::<Seq, _, _, _>(
        |_| AtomicU64::new(0),
        |c: &SimClient<AtomicU64>| {
            c.on_request_long(H, 1, |tok, a, p| {
                assert!(p.equals(&pattern(a[0], LEN)), "Long {} corrupt", a[0]);
                tok.state().fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
            c.attach_segment(1 << 20).unwrap();
            c.barrier().unwrap();
            let mut failed = 0;
            let mut landed_after = 0;
            if c.rank() == 0 {
                for i in 0..20u32 {
                    fabric.set_faults(|f| f.fail_rma = 1);
                    let at = (i as usize % 40) * 24_576;
                    if c.request_long(1, H, &[i], &pattern(i, LEN), at).is_err() {
                        failed += 1;
                    }
                }
            }
            // The voids reach rank 1, its credits rank 0.
            c.barrier().unwrap();
            if c.rank() == 0 {
                let before = c.stats().long_landed;
                for i in 20..36u32 {
                    let at = (i as usize % 40) * 24_576;
                    c.request_long(1, H, &[i], &pattern(i, LEN), at).unwrap();
                }
                landed_after = c.stats().long_landed - before;
            } else {
                c.block_until(|| c.state().load(Ordering::Relaxed) == 16)
                    .unwrap();
            }
            c.barrier().unwrap();
            let s = c.stats();
            (
                failed,
                landed_after,
                s.landing_voids_sent,
                s.landing_voids_received,
            )
        },
    );
    let got: Vec<_> = ended.into_iter().map(|e| e.value()).collect();
    let (failed, landed_after, voids_sent, _) = got[0];
    let (_, _, _, voids_received) = got[1];
    assert_eq!(failed, 20, "every Long with a failed write reports it");
    assert!(
        landed_after >= 8,
        "only {landed_after} of 16 Longs went in one message after the failures: {got:?}"
    );
    assert!(voids_sent > 0, "no landing write failed: {got:?}");
    assert_eq!(voids_sent, voids_received, "{got:?}");
}
