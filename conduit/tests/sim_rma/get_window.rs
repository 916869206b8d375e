//! The get window (`GASNET_OFI_GET_WINDOW`) over the simulator: floods of
//! gets by every form, some larger than the window (split into pieces of
//! a quarter of it), under EAGAIN, delays and reordering, never have more
//! than the window's bytes of reads queued, and arrive whole; without the
//! window the same flood queues more; a flood refills the window in
//! bursts (once a get is refused room, gets go only with at most a quarter
//! in flight, and after one goes the next ones at once); failed transfers
//! give their bytes back, so the gets after them still go.

use super::get_bounce::get_by;
use super::sim::Job;
use super::{pattern, SimClient, SEG};
use conduit::client::{NbiSync, Seq};
use conduit::transport::sim::Faults;

const WINDOW: usize = 64 << 10;

/// A flood of 24 implicit gets of `len` bytes from `peer` into disjoint
/// parts of `buf`, one sync; then each part is checked.
fn flood(c: &SimClient, peer: usize, len: usize, buf: &mut [u8], theirs: &[u8]) {
    let n = 24;
    assert!(n * len <= buf.len());
    buf.fill(0);
    c.rma_scope(|s| {
        for (i, part) in buf.chunks_mut(len).take(n).enumerate() {
            s.get_nbi(peer, (i * 997) % (SEG - len), part)?;
        }
        s.sync_nbi(NbiSync::Gets)
    })
    .unwrap();
    for (i, part) in buf.chunks(len).take(n).enumerate() {
        let at = (i * 997) % (SEG - len);
        assert!(part == &theirs[at..at + len], "get {i} of {len} bytes");
    }
    assert_eq!(c.get_window_held(peer), 0, "after a flood of {len} bytes");
}

/// A 2-rank job with a `GASNET_OFI_GET_WINDOW` setting in `vars`,
/// delays, reordering and, unless `eagain_one_in` is 0, EAGAIN.
fn window_job(eagain_one_in: u32, vars: &'static [(&'static str, &'static str)]) -> Job {
    Job::new(2)
        .faults(Faults {
            eagain_one_in,
            max_delay: 3,
            reorder: true,
            ..Faults::default()
        })
        .max_msg(48 << 10)
        .vars(vars)
}

/// Attach the segment, fill it with this rank's pattern (`seed` + rank),
/// and wait for the peer to have done the same.
fn fill_segment(c: &SimClient, seed: usize) {
    c.attach_segment(SEG).unwrap();
    c.segment_write(0, &pattern(c.rank() + seed, SEG)).unwrap();
    c.barrier().unwrap();
}

/// Run the floods and single gets under `vars`; give each rank's
/// `GET_WINDOW_WAITS` and the most read bytes one rank had queued.
fn run(vars: &'static [(&'static str, &'static str)]) -> (Vec<u64>, u64) {
    let job = window_job(4, vars);
    let (fabric, ended) = job.run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            fill_segment(c, 11);
            let peer = 1 - c.rank();
            let theirs = pattern(peer + 11, SEG);
            let mut buf = vec![0u8; 24 * 100_000];
            for len in [1000, 20_000, 40_000, 100_000] {
                flood(c, peer, len, &mut buf, &theirs);
            }
            // One get of each form larger than the window.
            for form in 0..3 {
                let len = 150_001 + form;
                buf.fill(0);
                get_by(c, form, peer, 7, &mut buf[..len]);
                assert!(buf[..len] == theirs[7..7 + len], "form {form}");
                assert_eq!(c.get_window_held(peer), 0, "form {form}");
            }
            c.barrier().unwrap();
            c.stats().get_window_waits
        },
    );
    let waits = ended.into_iter().map(|e| e.value()).collect();
    (waits, fabric.counts().max_read_bytes_queued)
}

#[test]
fn gets_keep_to_the_window_and_arrive_whole() {
    let (waits, most) = run(&[("GASNET_OFI_GET_WINDOW", "64K")]);
    assert!(most <= WINDOW as u64, "{most} bytes of reads queued");
    assert!(
        most > (WINDOW / 2) as u64,
        "only {most} bytes queued at most"
    );
    for w in waits {
        assert!(w > 0, "no get waited for the window");
    }
}

#[test]
fn without_the_window_the_same_flood_queues_more() {
    let (waits, most) = run(&[("GASNET_OFI_GET_WINDOW", "0")]);
    assert!(most > WINDOW as u64, "{most} bytes of reads queued");
    assert_eq!(waits, vec![0, 0]);
}

/// A flood of 24 gets of a quarter of the window each (delays and
/// reordering, no EAGAIN): the first four go at once; once one is refused,
/// a get goes only with at most a quarter of the window in flight, and the
/// two after it then fit without waiting, so at most one get in three
/// waits ((24 - 4) / 3, rounded up: 7). Refilled one get per completion,
/// as before 2026-12-05, 11 of them waited here; some must wait (the
/// simulated reads take several rounds of progress: 5 do). The reads
/// queued never pass the window.
#[test]
fn a_flood_refills_the_window_in_bursts() {
    let job = window_job(0, &[("GASNET_OFI_GET_WINDOW", "64K")]);
    let (fabric, ended) = job.run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            fill_segment(c, 5);
            let mut waits = 0;
            if c.rank() == 0 {
                let theirs = pattern(6, SEG);
                let mut buf = vec![0u8; 24 * (WINDOW / 4)];
                let before = c.stats().get_window_waits;
                flood(c, 1, WINDOW / 4, &mut buf, &theirs);
                waits = c.stats().get_window_waits - before;
            }
            c.barrier().unwrap();
            waits
        },
    );
    let waits = ended.into_iter().next().unwrap().value();
    assert!((1..=7).contains(&waits), "{waits} of 24 gets waited");
    let most = fabric.counts().max_read_bytes_queued;
    assert!(most <= WINDOW as u64, "{most} bytes of reads queued");
}

/// Failed transfers inside windowed floods, by error completions and by
/// posts that fail (a transfer charged, then not posted): each flood
/// returns the failure, nothing stays charged, and the next flood
/// completes with its data.
#[test]
fn failed_gets_give_their_window_back() {
    let job = window_job(0, &[("GASNET_OFI_GET_WINDOW", "64K")]);
    let fabric = job.fabric();
    let (_fabric, ended) = job.run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            fill_segment(c, 2);
            let mut failed = 0;
            if c.rank() == 0 {
                let theirs = pattern(3, SEG);
                let mut buf = vec![0u8; 24 * 60_000];
                for k in 0..6 {
                    if k % 2 == 0 {
                        fabric.set_faults(|f| f.fail_rma = 3);
                    } else {
                        fabric.set_faults(|f| f.fail_post = Some((0, 3 + k as u32)));
                    }
                    let r = c.rma_scope(|s| {
                        for part in buf.chunks_mut(60_000) {
                            s.get_nbi(1, 0, part)?;
                        }
                        s.sync_nbi(NbiSync::Gets)
                    });
                    let e = r.expect_err("transfers failed");
                    assert!(e.report().contains("simulated"), "{k}: {}", e.report());
                    assert_eq!(c.get_window_held(1), 0, "after failure {k}");
                    fabric.set_faults(|f| {
                        f.fail_rma = 0;
                        f.fail_post = None
                    });
                    flood(c, 1, 60_000, &mut buf, &theirs);
                    failed += 1;
                }
            }
            c.barrier().unwrap();
            failed
        },
    );
    assert_eq!(ended.into_iter().next().unwrap().value(), 6);
}
