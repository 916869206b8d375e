//! Non-blocking RMA with owned buffers (`put_nb_owned`, `get_nb_owned`):
//! data exact under faults whether each handle is waited, tested or
//! dropped; a dropped handle leaves no transfer on its freed buffer; a
//! forgotten one holds up nothing.

use super::sim::Job;
use super::{pattern, SimClient, SEG};
use conduit::client::{OwnedRma, Seq};
use conduit::transport::sim::{Faults, SimTransport};
use std::collections::VecDeque;

type Owned<'c> = OwnedRma<'c, Seq, (), SimTransport>;

/// Each rank puts its slice into every segment and reads every slice back
/// from every rank, all with owned buffers kept in queues across calls,
/// under EAGAIN, delays and reordering with transfers split at 4 KiB. Puts
/// to even ranks are waited, to odd ranks dropped (the drop completes
/// them); gets are waited, one of them by testing until done.
#[test]
fn owned_puts_and_gets_are_exact_under_faults() {
    let (_f, ended) = Job::new(3)
        .faults(Faults {
            eagain_one_in: 4,
            max_delay: 3,
            reorder: true,
            ..Faults::default()
        })
        .max_msg(4096)
        .run::<Seq, _, _, _>(
            |_| (),
            |c: &SimClient| {
                c.attach_segment(SEG).unwrap();
                let (me, n) = (c.rank(), c.size());
                let part = SEG / n;
                let mut puts: VecDeque<(usize, Owned<'_>)> = (0..n)
                    .map(|d| (d, c.put_nb_owned(d, me * part, pattern(me, part)).unwrap()))
                    .collect();
                while let Some((d, h)) = puts.pop_front() {
                    if d % 2 == 0 {
                        assert_eq!(
                            h.wait().unwrap(),
                            pattern(me, part),
                            "the source comes back"
                        );
                    } else {
                        drop(h);
                    }
                }
                c.barrier().unwrap();
                let mut gets = VecDeque::new();
                for src in 0..n {
                    for d in 0..n {
                        let h = c.get_nb_owned(d, src * part, vec![0u8; part]).unwrap();
                        gets.push_back((src, d, h));
                    }
                }
                let mut tested = false;
                while let Some((src, d, h)) = gets.pop_front() {
                    if !tested {
                        tested = true;
                        while !h.test().unwrap() {}
                    }
                    let got = h.wait().unwrap();
                    assert!(
                        got == pattern(src, part),
                        "rank {me}: rank {d}'s copy of rank {src}'s slice differs"
                    );
                }
                c.barrier().unwrap();
            },
        );
    for e in ended {
        e.value();
    }
}

/// A get handle dropped while its transfer waits in the network (delayed
/// completions, 64 pieces): the drop returns only once nothing in flight
/// uses the buffer it then frees. Then a forgotten handle: its buffer is
/// never freed, its transfer completes, and the barrier and the exit after
/// it are not held up.
#[test]
fn a_dropped_owned_get_leaves_nothing_on_its_buffer() {
    let job = Job::new(2)
        .faults(Faults {
            max_delay: 40,
            ..Faults::default()
        })
        .max_msg(1024);
    let fabric = job.fabric();
    let (_f, ended) = job.run::<Seq, _, _, _>(
        |_| (),
        move |c: &SimClient| {
            c.attach_segment(SEG).unwrap();
            c.segment_write(0, &pattern(c.rank() + 10, 65536)).unwrap();
            c.barrier().unwrap();
            let buf = vec![0u8; 65536];
            // Where the bytes are (the Vec moves into the handle, they do
            // not).
            let (lo, len) = (buf.as_ptr() as usize, buf.len());
            let h = c.get_nb_owned(1 - c.rank(), 0, buf).unwrap();
            let d = format!("{h:?}");
            assert!(d.contains("in_flight: true"), "{d}");
            let on_buf = |v: Vec<(usize, usize)>| {
                v.into_iter()
                    .filter(|&(p, l)| p < lo + len && p + l > lo)
                    .count()
            };
            assert!(
                on_buf(fabric.pending(c.rank())) > 0,
                "the get waits in the network"
            );
            drop(h);
            assert_eq!(
                on_buf(fabric.pending(c.rank())),
                0,
                "a transfer still uses the dropped buffer at {lo:#x}"
            );
            let h = c.get_nb_owned(1 - c.rank(), 0, vec![0u8; 65536]).unwrap();
            std::mem::forget(h);
            c.barrier().unwrap();
        },
    );
    for e in ended {
        e.value();
    }
}
