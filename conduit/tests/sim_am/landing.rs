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
/// nothing at the target), the next 32 do not. A failed landing write's
/// slot is voided at the target: its credits come back, so after the
/// failures Longs still go in one message (how many depends on when the
/// credits arrive). Before voids, the first 8 failures took the 8 slots
/// for good, and every later Long went put-then-send: none landed.
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
            c.on_request_short(H + 1, 0, |tok, _| tok.reply_short(H + 2, &[]).unwrap())
                .unwrap();
            c.on_reply_short(H + 2, 0, |tok, _| {
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
            // The voids reach rank 1 before this request (one queue), and
            // its credits rank 0 before the reply (one queue).
            if c.rank() == 0 {
                c.request_short(1, H + 1, &[]).unwrap();
                c.block_until(|| c.state().load(Ordering::Relaxed) == 1)
                    .unwrap();
            }
            c.barrier().unwrap();
            if c.rank() == 0 {
                c.state().store(0, Ordering::Relaxed);
                let before = c.stats().long_landed;
                for i in 20..52u32 {
                    let at = (i as usize % 40) * 24_576;
                    c.request_long(1, H, &[i], &pattern(i, LEN), at).unwrap();
                }
                landed_after = c.stats().long_landed - before;
            } else {
                c.block_until(|| c.state().load(Ordering::Relaxed) == 32)
                    .unwrap();
            }
            c.barrier().unwrap();
            let s = c.stats();
            (
                failed,
                landed_after,
                s.landing_voids_sent + s.long_landed,
                s.landing_voids_received + s.landings_received,
            )
        },
    );
    let got: Vec<_> = ended.into_iter().map(|e| e.value()).collect();
    // Per rank: Longs that failed, landed after the failures, slots this
    // rank took (voided or landed), slots handled here (voided or landed).
    let (failed, landed_after, taken, _) = got[0];
    let (_, _, _, handled) = got[1];
    assert_eq!(failed, 20, "every Long with a failed write reports it");
    assert!(
        landed_after > 0,
        "none of 32 Longs went in one message after the failures: {got:?}"
    );
    assert!(
        taken >= 8 + landed_after,
        "fewer than 8 landing writes failed: {got:?}"
    );
    assert_eq!(
        taken, handled,
        "every slot taken was freed at the target: {got:?}"
    );
}
