//! RMA errors: error completions with the provider's numbers, an error
//! met during a wait, a post failing part-way through a split transfer and
//! a failure while the scope finishes; none leaves a transfer that could
//! still touch the caller's buffer.

use super::sim::Job;
use super::{pattern, untouched, SimClient, SEG};
use conduit::client::{Error, Seq};
use conduit::transport::sim::Faults;
use std::sync::atomic::Ordering;

#[test]
fn rma_error_completions_keep_their_numbers() {
    let (_f, ended) = Job::new(2).run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            c.attach_segment(SEG).unwrap();
            c.barrier().unwrap();
            let r = if c.rank() == 0 {
                // Fail the next RMA transfer (set by the test through the
                // fabric before this rank's put: see below).
                Some(c.put(1, 0, &[1u8; 200]))
            } else {
                None
            };
            r.map(|r| r.map_err(|e| (e.to_string(), matches!(&e, Error::Rma(x) if x.err() == 5))))
        },
    );
    assert_eq!(ended.into_iter().next().unwrap().value(), Some(Ok(())));
    for tx_on_reply in [false, true] {
        failed_put_reports_its_numbers(tx_on_reply);
    }
}

/// A put whose transfer fails reports the provider's numbers, wherever the
/// transport reports the failure.
fn failed_put_reports_its_numbers(tx_on_reply: bool) {
    let (_f, ended) = Job::new(2)
        .faults(Faults {
            fail_rma: 1,
            tx_on_reply,
            ..Faults::default()
        })
        .run::<Seq, _, _, _>(
            |_| (),
            |c: &SimClient| {
                c.attach_segment(SEG).unwrap();
                if c.rank() == 0 {
                    let e = c.put(1, 0, &[1u8; 200]).unwrap_err();
                    let Error::Rma(r) = &e else {
                        panic!("not an RMA error: {e:?}")
                    };
                    assert_eq!((r.err(), r.prov_errno(), r.rank, r.op), (5, 0, 1, "put"));
                    Some(e.report())
                } else {
                    None
                }
            },
        );
    assert_eq!(
        ended.into_iter().next().unwrap().value().unwrap(),
        "put to rank 1 failed: simulated failure of an RMA write (err 5, provider errno 0)"
    );
}

/// An error met during a wait: while rank 0 waits for its get, rank 1
/// sends it an AM for a handler nobody registered. The get carries on to
/// its end (and returns its own result); the next poll reports the peer's
/// error. Nothing writes the buffer after the get returned.
#[test]
fn an_error_met_while_waiting_leaves_the_transfer_whole() {
    // Rank 0 starts its get once rank 1's bad AM is on its way.
    let sent = std::sync::atomic::AtomicBool::new(false);
    let (fabric, ended) = Job::new(2)
        .faults(Faults {
            max_delay: 30,
            ..Faults::default()
        })
        .max_msg(512)
        .run::<Seq, _, _, _>(
            |_| (),
            |c: &SimClient| {
                c.attach_segment(SEG).unwrap();
                c.segment_write(0, &pattern(c.rank() + 20, 32768)).unwrap();
                c.barrier().unwrap();
                if c.rank() == 1 {
                    c.request_short(0, 250, &[]).unwrap();
                    sent.store(true, Ordering::Release);
                    return (None, Vec::new(), None);
                }
                while !sent.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
                let mut buf = vec![0u8; 32768];
                let r = c.get(1, 0, &mut buf).map_err(|e| e.to_string());
                // The bad AM arrived during the get (the delay keeps the
                // get's 64 transfers in flight for many polls) or arrives
                // now.
                let mut later = None;
                for _ in 0..1000 {
                    if let Err(e) = c.poll() {
                        later = Some(e.to_string());
                        break;
                    }
                }
                (Some(r), buf, later)
            },
        );
    let (r, buf, later) = ended.into_iter().next().unwrap().value();
    untouched(&fabric, 0, &buf);
    assert_eq!(r.unwrap(), Ok(()), "the get's own result");
    assert_eq!(buf, pattern(21, 32768), "the get's bytes");
    assert_eq!(
        later.as_deref(),
        Some("received an AM from rank 1 for handler index 250 with no associated handler registered")
    );
}

/// A get split into 64 transfers whose 10th post fails: the call returns
/// the error once the 9 posted transfers are over; nothing of it remains.
#[test]
fn a_post_failing_part_way_through_a_split_transfer() {
    let job = Job::new(2)
        .faults(Faults {
            max_delay: 20,
            ..Faults::default()
        })
        .max_msg(1024);
    let fabric = job.fabric();
    let (fabric, ended) = job.run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            c.attach_segment(SEG).unwrap();
            c.segment_write(0, &pattern(c.rank() + 30, 65536)).unwrap();
            c.barrier().unwrap();
            let mut buf = vec![0u8; 65536];
            let r = if c.rank() == 0 {
                fabric.set_faults(|f| f.fail_post = Some((0, 10)));
                Some(c.get(1, 0, &mut buf).map_err(|e| e.report()))
            } else {
                None
            };
            (r, buf)
        },
    );
    let (r, buf) = ended.into_iter().next().unwrap().value();
    untouched(&fabric, 0, &buf);
    assert_eq!(
        r.unwrap(),
        Err("a simulated post failed: -5 (Input/output error)".into())
    );
    // The nine posted chunks landed before the call returned; the rest was
    // never posted.
    let want = pattern(31, 65536);
    assert_eq!(buf[..9 * 1024], want[..9 * 1024]);
    assert!(buf[9 * 1024..].iter().all(|&b| b == 0));
}

/// A transfer fails while the scope finishes (the other operations
/// complete, the failure is returned with its numbers, nothing remains).
#[test]
fn a_failure_while_the_scope_finishes() {
    let job = Job::new(2)
        .faults(Faults {
            max_delay: 10,
            reorder: true,
            ..Faults::default()
        })
        .max_msg(2048);
    let fabric = job.fabric();
    let (fabric, ended) = job.run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            c.attach_segment(SEG).unwrap();
            c.segment_write(0, &pattern(c.rank() + 40, 65536)).unwrap();
            c.barrier().unwrap();
            let mut bufs = vec![vec![0u8; 8192]; 8];
            let r = if c.rank() == 0 {
                fabric.set_faults(|f| f.fail_rma = 1);
                let r = c.rma_scope(|s| {
                    for (k, b) in bufs.iter_mut().enumerate() {
                        s.get_nbi(1, k * 8192, b)?;
                    }
                    // Returning now leaves the scope's end to wait for them.
                    Ok(())
                });
                Some(r.map_err(|e| e.report()))
            } else {
                None
            };
            (r, bufs)
        },
    );
    let (r, bufs) = ended.into_iter().next().unwrap().value();
    for b in &bufs {
        untouched(&fabric, 0, b);
    }
    let e = r.unwrap().unwrap_err();
    assert!(
        e.starts_with("get from rank 1 failed: simulated failure of an RMA read (err 5"),
        "{e}"
    );
    // Every other transfer completed.
    let want = pattern(41, 65536);
    let good = bufs
        .iter()
        .enumerate()
        .filter(|(k, b)| b[..] == want[k * 8192..(k + 1) * 8192])
        .count();
    assert!(good >= 7, "only {good} of 8 blocks arrived");
}
