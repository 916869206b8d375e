//! The get bounce buffers (`GASNET_OFI_GET_BOUNCE=on`) over the simulator:
//! gets whose destination starts 1 to 63 bytes after the source within a
//! page, split into chunks at `max_msg_size`, under EAGAIN, delays and
//! reordering, by every get form; a chunk's failure is returned with the
//! provider's numbers, nothing is left touching the caller's buffer, and
//! every buffer goes back to the pool.

use super::sim::Job;
use super::{pattern, untouched, SimClient, SEG};
use conduit::client::{NbiSync, Par, ParClient, Seq};
use conduit::transport::sim::{Faults, SimTransport};

/// A destination in `buf` for `len` bytes starting `skew` bytes after
/// segment offset `src` within a page (the segment is page-aligned).
fn at_skew(buf: &[u8], src: usize, skew: usize, len: usize) -> std::ops::Range<usize> {
    let want = (src + skew) % 4096;
    let at = (want + 4096 - buf.as_ptr() as usize % 4096) % 4096;
    assert!(at + len <= buf.len());
    at..at + len
}

/// Get `dst.len()` bytes at `src` of `peer`'s segment by form `form`:
/// blocking, NB waited, NBI synced.
pub(super) fn get_by(c: &SimClient, form: usize, peer: usize, src: usize, dst: &mut [u8]) {
    match form {
        0 => c.get(peer, src, dst).unwrap(),
        1 => c
            .rma_scope(|s| {
                let e = s.get_nb(peer, src, dst)?;
                s.wait(e)
            })
            .unwrap(),
        _ => c
            .rma_scope(|s| {
                s.get_nbi(peer, src, dst)?;
                s.sync_nbi(NbiSync::Gets)
            })
            .unwrap(),
    }
}

#[test]
fn bounced_gets_under_eagain_delay_and_reordering() {
    let (_f, ended) = Job::new(2)
        .faults(Faults {
            eagain_one_in: 3,
            max_delay: 3,
            reorder: true,
            ..Faults::default()
        })
        .max_msg(4096)
        .vars(&[("GASNET_OFI_GET_BOUNCE", "on")])
        .run::<Seq, _, _, _>(
            |_| (),
            |c: &SimClient| {
                c.attach_segment(SEG).unwrap();
                let (me, peer) = (c.rank(), 1 - c.rank());
                c.segment_write(0, &pattern(me + 5, SEG)).unwrap();
                c.barrier().unwrap();
                let theirs = pattern(peer + 5, SEG);
                let mut buf = vec![0u8; 80_000];
                let mut eligible = 0;
                for (len, src, skew) in [
                    (4096, 0, 16),
                    (10_000, 40, 8),
                    (70_001, 4096 + 100, 63),
                    (70_001, 200, 1),
                    (9000, 0, 64),
                    (9000, 0, 0),
                    (4095, 0, 16),
                ] {
                    for form in 0..3 {
                        buf.fill(0xA5);
                        let r = at_skew(&buf, src, skew, len);
                        get_by(c, form, peer, src, &mut buf[r.clone()]);
                        assert_eq!(
                            &buf[r.clone()],
                            &theirs[src..src + len],
                            "form {form}, {len} bytes at skew {skew}"
                        );
                        assert!(buf[..r.start].iter().all(|&b| b == 0xA5));
                        assert!(buf[r.end..].iter().all(|&b| b == 0xA5));
                        if (1..64).contains(&skew) && len >= 4096 {
                            eligible += 1;
                        }
                    }
                }
                c.barrier().unwrap();
                (eligible, c.stats().get_bounce)
            },
        );
    for e in ended {
        assert_eq!(e.value(), (12, 12));
    }
}

/// Each of the first five bounced gets fails in one of its chunks (the
/// pool has four buffers: a buffer kept by a failed get would send the
/// fifth and later gets around the bounce path); each returns the
/// failure, and the following gets all bounce and arrive.
#[test]
fn failed_bounced_gets_report_their_error_and_give_their_buffer_back() {
    let job = Job::new(2)
        .faults(Faults {
            max_delay: 4,
            reorder: true,
            ..Faults::default()
        })
        .max_msg(2048)
        .vars(&[("GASNET_OFI_GET_BOUNCE", "on")]);
    let fabric = job.fabric();
    let (fabric, ended) = job.run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            c.attach_segment(SEG).unwrap();
            c.segment_write(0, &pattern(c.rank() + 9, 65536)).unwrap();
            c.barrier().unwrap();
            let mut buf = vec![0u8; 20_000];
            let mut failures = Vec::new();
            let mut good = 0;
            if c.rank() == 0 {
                let want = pattern(10, 65536);
                for k in 0..8 {
                    if k < 5 {
                        fabric.set_faults(|f| f.fail_rma = 1);
                    }
                    let r = at_skew(&buf, 0, 16, 9000);
                    match c.get(1, 0, &mut buf[r.clone()]) {
                        Err(e) => failures.push(e.report()),
                        Ok(()) => {
                            assert_eq!(&buf[r], &want[..9000], "get {k}");
                            good += 1;
                        }
                    }
                    untouched(&fabric, 0, &buf);
                }
            }
            c.barrier().unwrap();
            (failures, good, c.stats().get_bounce)
        },
    );
    let (failures, good, bounced) = ended.into_iter().next().unwrap().value();
    assert_eq!(failures.len(), 5, "{failures:?}");
    for e in &failures {
        assert!(
            e.starts_with("get from rank 1 failed: simulated failure of an RMA read (err 5"),
            "{e}"
        );
    }
    // Every get was started through the buffers, the failed ones too.
    assert_eq!((good, bounced), (3, 8));
    drop(fabric);
}

/// Chunks of the full 256 KiB (messages of up to 1 MiB) and the copy-out
/// with non-temporal stores (gets of 256 KiB or more), every get form.
#[test]
fn large_bounced_gets_in_full_chunks() {
    let (_f, ended) = Job::new(2)
        .faults(Faults {
            eagain_one_in: 5,
            max_delay: 2,
            reorder: true,
            ..Faults::default()
        })
        .max_msg(1 << 20)
        .vars(&[("GASNET_OFI_GET_BOUNCE", "on")])
        .run::<Seq, _, _, _>(
            |_| (),
            |c: &SimClient| {
                c.attach_segment(SEG).unwrap();
                let (me, peer) = (c.rank(), 1 - c.rank());
                c.segment_write(0, &pattern(me + 3, SEG)).unwrap();
                c.barrier().unwrap();
                let theirs = pattern(peer + 3, SEG);
                let mut buf = vec![0u8; 700_000];
                for (form, (len, src, skew)) in
                    [(600_001, 24, 16), (262_144, 0, 8), (300_000, 4000, 40)]
                        .into_iter()
                        .enumerate()
                {
                    buf.fill(0xA5);
                    let r = at_skew(&buf, src, skew, len);
                    get_by(c, form, peer, src, &mut buf[r.clone()]);
                    assert!(
                        buf[r.clone()] == theirs[src..src + len],
                        "form {form}: {len} bytes at skew {skew} differ"
                    );
                    assert!(buf[..r.start].iter().all(|&b| b == 0xA5));
                    assert!(buf[r.end..].iter().all(|&b| b == 0xA5));
                }
                c.barrier().unwrap();
                c.stats().get_bounce
            },
        );
    for e in ended {
        assert_eq!(e.value(), 3);
    }
}

/// Multi-threaded: six threads of each rank get at the slow offset at
/// once; with four buffers some gets find none free and go directly.
/// Every byte arrives, and every buffer is back at the end (a get after
/// the threads bounce).
#[test]
fn threads_share_the_buffers() {
    const THREADS: usize = 6;
    const GETS: usize = 20;
    let (_f, ended) = Job::new(2)
        .faults(Faults {
            max_delay: 3,
            reorder: true,
            ..Faults::default()
        })
        .max_msg(4096)
        .vars(&[("GASNET_OFI_GET_BOUNCE", "on")])
        .run::<Par, _, _, _>(
            |_| (),
            |c: &ParClient<(), SimTransport>| {
                c.attach_segment(SEG).unwrap();
                let (me, peer) = (c.rank(), 1 - c.rank());
                c.segment_write(0, &pattern(me + 21, SEG)).unwrap();
                c.barrier().unwrap();
                let theirs = pattern(peer + 21, SEG);
                std::thread::scope(|sc| {
                    for t in 0..THREADS {
                        let theirs = &theirs;
                        sc.spawn(move || {
                            let mut buf = vec![0u8; 30_000];
                            for k in 0..GETS {
                                let src = (t * GETS + k) * 1000;
                                let r = at_skew(&buf, src, 16, 12_000);
                                c.get(peer, src, &mut buf[r.clone()]).unwrap();
                                assert!(buf[r] == theirs[src..src + 12_000], "thread {t} get {k}");
                            }
                        });
                    }
                });
                let before = c.stats().get_bounce;
                let mut buf = vec![0u8; 30_000];
                let r = at_skew(&buf, 0, 16, 12_000);
                c.get(peer, 0, &mut buf[r.clone()]).unwrap();
                assert!(buf[r] == theirs[..12_000]);
                c.barrier().unwrap();
                (before, c.stats().get_bounce - before)
            },
        );
    for e in ended {
        let (threads, after) = e.value();
        assert!(
            threads > 0 && threads <= (THREADS * GETS) as u64,
            "{threads}"
        );
        assert_eq!(after, 1);
    }
}
