//! The get bounce buffers (`GASNET_OFI_GET_BOUNCE=on`) over the simulator:
//! gets whose destination starts 1 to 63 bytes after the source within a
//! page, split into chunks at `max_msg_size`, under EAGAIN, delays and
//! reordering, by every get form; a chunk's failure is returned with the
//! provider's numbers, nothing is left touching the caller's buffer, and
//! every buffer goes back to the pool.

use super::sim::Job;
use super::{pattern, untouched, SimClient, SEG};
use conduit::client::{NbiSync, Seq};
use conduit::transport::sim::Faults;

/// A destination in `buf` for `len` bytes starting `skew` bytes after
/// segment offset `src` within a page (the segment is page-aligned).
fn at_skew(buf: &[u8], src: usize, skew: usize, len: usize) -> std::ops::Range<usize> {
    let want = (src + skew) % 4096;
    let at = (want + 4096 - buf.as_ptr() as usize % 4096) % 4096;
    assert!(at + len <= buf.len());
    at..at + len
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
                        let dst = &mut buf[r.clone()];
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
    assert_eq!((good, bounced), (3, 3));
    drop(fabric);
}
