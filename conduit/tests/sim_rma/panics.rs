//! Panics and RMA scopes: a panic inside a scope, and a handler's panic
//! while the scope finishes, complete the scope's transfers before the
//! buffers are back in the caller's hands.

use super::sim::Job;
use super::{pattern, untouched, SimClient, SEG};
use conduit::client::{Client, Seq};
use conduit::transport::sim::{Faults, SimTransport};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A panic inside a scope: the get is still in flight (delayed
/// completions) when the closure unwinds; the scope completes it before the
/// buffer is back in the caller's hands, and nothing touches it afterwards.
#[test]
fn a_panic_inside_a_scope_completes_its_transfers() {
    let (fabric, ended) = Job::new(2)
        .faults(Faults {
            max_delay: 40,
            ..Faults::default()
        })
        .max_msg(1024)
        .run::<Seq, _, _, _>(
            |_| (),
            |c: &SimClient| {
                c.attach_segment(SEG).unwrap();
                c.segment_write(0, &pattern(c.rank() + 10, 65536)).unwrap();
                c.barrier().unwrap();
                let mut buf = vec![0u8; 65536];
                let r = catch_unwind(AssertUnwindSafe(|| {
                    c.rma_scope(|s| {
                        let _in_flight = s.get_nb(1 - c.rank(), 0, &mut buf)?;
                        panic!("boom inside the scope");
                        #[allow(unreachable_code)]
                        Ok(())
                    })
                }));
                assert!(r.is_err(), "the panic went through");
                buf
            },
        );
    for (me, e) in ended.into_iter().enumerate() {
        let buf = e.value();
        untouched(&fabric, me, &buf);
        assert_eq!(
            buf,
            pattern(1 - me + 10, 65536),
            "rank {me}: the get finished before the unwind left the scope"
        );
    }
}

/// A handler panics while the scope finishes (in a wait for one of its
/// operations): the unwind still completes every other operation of the
/// scope before the buffers are back in the caller's hands. The AM that
/// panics is sent while the scope's gets are in flight; when it happens to
/// arrive only after they completed, the attempt is repeated.
#[test]
fn a_handler_panic_while_the_scope_finishes() {
    use std::sync::atomic::{AtomicU32, Ordering::*};
    const ATTEMPTS: u32 = 6;
    let posted = AtomicU32::new(0);
    let sent = AtomicU32::new(0);
    let job = Job::new(2)
        .faults(Faults {
            max_delay: 40,
            ..Faults::default()
        })
        .max_msg(512);
    let fabric = job.fabric();
    let (_, ended) = job.run::<Seq, _, _, _>(
        |_| AtomicU32::new(0),
        |c: &Client<AtomicU32, SimTransport>| {
            c.on_request_short(230, 0, |tok, _| {
                tok.state().fetch_add(1, SeqCst);
                panic!("handler panics on purpose");
            })
            .unwrap();
            c.attach_segment(SEG).unwrap();
            c.segment_write(0, &pattern(c.rank() + 50, 65536)).unwrap();
            c.barrier().unwrap();
            let mut inside = 0;
            let mut bufs = vec![vec![0u8; 8192]; 8];
            for attempt in 1..=ATTEMPTS {
                if c.rank() == 1 {
                    while posted.load(Acquire) < attempt {
                        std::thread::yield_now();
                    }
                    c.request_short(0, 230, &[]).unwrap();
                    sent.store(attempt, Release);
                    continue;
                }
                let r = catch_unwind(AssertUnwindSafe(|| {
                    c.rma_scope(|s| {
                        for (k, b) in bufs.iter_mut().enumerate() {
                            s.get_nbi(1, k * 8192, b)?;
                        }
                        posted.store(attempt, Release);
                        while sent.load(Acquire) < attempt {
                            std::thread::yield_now();
                        }
                        Ok(())
                    })
                }));
                for b in &bufs {
                    untouched(&fabric, 0, b);
                }
                if r.is_err() {
                    inside += 1;
                }
                // The handler ran in the scope, or runs now.
                while c.state().load(SeqCst) < attempt {
                    let _ = catch_unwind(AssertUnwindSafe(|| c.poll()));
                }
            }
            inside
        },
    );
    let inside = ended.into_iter().next().unwrap().value();
    assert!(
        inside > 0,
        "in {ATTEMPTS} attempts the AM never arrived while the scope finished"
    );
}
