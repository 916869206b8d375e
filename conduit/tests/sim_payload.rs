//! What handlers receive as payloads, over the in-memory simulator: a Long
//! handler reads its payload in place through a `Payload` (a write to the
//! segment while it runs is seen, not assumed away), a Medium handler
//! widened to Longs gets a private copy that such a write cannot change,
//! and a Long handler widened to Mediums gets the Medium's buffer as a
//! slice.

mod sim;

use conduit::client::{Client, Handler, Seq, Widen};
use sim::Job;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

type SimClient = Client<Seen, conduit::transport::sim::SimTransport>;

#[derive(Default)]
struct Seen {
    /// This rank's segment base (a stand-in for a writer the handler
    /// cannot see: another rank's put, another thread).
    base: AtomicUsize,
    /// What each handler found.
    notes: Mutex<Vec<String>>,
}

const H_MED_WIDE: u8 = 210;
const H_LONG_WIDE: u8 = 211;
const LEN: usize = 300;
const AT: usize = 4096;

fn pattern(seed: u8) -> Vec<u8> {
    (0..LEN).map(|i| (i as u8).wrapping_mul(7) ^ seed).collect()
}

/// Overwrite `len` bytes of this rank's segment at `at`, as a concurrent
/// writer would.
fn scribble(st: &Seen, at: usize, len: usize) {
    let base = st.base.load(Ordering::Acquire) as *mut u8;
    // SAFETY: the segment (1 MiB) is mapped for the client's life and
    // at..at+len lies inside it; nothing holds a reference to these bytes
    // (handlers get copies or a `Payload`, which holds a pointer).
    unsafe { std::ptr::write_bytes(base.add(at), 0xee, len) };
}

fn widened(h: Handler<Seen>) -> Handler<Seen> {
    h.widened(Widen {
        either_side: false,
        medium_or_long: true,
        untyped: false,
    })
}

fn register(c: &SimClient) {
    let med = Handler::request_medium(1, |tok, a, p: &[u8]| {
        let st = tok.state();
        let before = p.to_vec();
        if let Some(at) = tok.long_offset() {
            scribble(st, at, p.len());
        }
        let kept = p == before.as_slice() && p == pattern(a[0] as u8).as_slice();
        st.notes.lock().unwrap().push(format!(
            "medium handler, long={}: kept={kept}",
            tok.long_offset().is_some()
        ));
    });
    c.register(H_MED_WIDE, widened(med)).unwrap();
    let long = Handler::request_long(1, |tok, a, p| {
        let st = tok.state();
        let landed = p.equals(&pattern(a[0] as u8));
        let note = match tok.long_offset() {
            Some(at) => {
                scribble(st, at, p.len());
                let mut head = [0u8; 4];
                let head_ok = p.read(0, &mut head).is_ok() && head == [0xee; 4];
                format!(
                    "long handler, long=true: landed={landed} in_segment={} sees_write={}",
                    p.is_in_segment(),
                    head_ok && p.to_vec() == vec![0xee; LEN]
                )
            }
            None => format!(
                "long handler, long=false: landed={landed} slice={}",
                p.as_slice() == Some(pattern(a[0] as u8).as_slice())
            ),
        };
        st.notes.lock().unwrap().push(note);
    });
    c.register(H_LONG_WIDE, widened(long)).unwrap();
}

#[test]
fn long_payloads_are_read_in_place_and_widened_mediums_get_copies() {
    let (_f, ended) = Job::new(2).run::<Seq, _, _, _>(
        |_| Seen::default(),
        |c: &SimClient| {
            register(c);
            c.attach_segment(1 << 20).unwrap();
            let base = c.segment().unwrap().as_ptr() as usize;
            c.state().base.store(base, Ordering::Release);
            c.barrier().unwrap();
            if c.rank() == 0 {
                c.request_long(1, H_MED_WIDE, &[1], &pattern(1), AT)
                    .unwrap();
                c.request_long(1, H_LONG_WIDE, &[2], &pattern(2), 2 * AT)
                    .unwrap();
                c.request_medium(1, H_LONG_WIDE, &[3], &pattern(3)).unwrap();
                // An empty Long: an empty payload, in the segment.
                c.request_long(1, H_LONG_WIDE, &[4], &[], 3 * AT).unwrap();
            } else {
                // A barrier does not imply that Active Messages sent before
                // it have run (GASNet-EX says the same): poll until all
                // four handlers have, with a deadline.
                let deadline = Instant::now() + Duration::from_secs(30);
                while c.state().notes.lock().unwrap().len() < 4 {
                    assert!(
                        Instant::now() < deadline,
                        "four handlers did not run in 30 s"
                    );
                    c.poll().unwrap();
                }
            }
            c.barrier().unwrap();
            c.state().notes.lock().unwrap().clone()
        },
    );
    let notes: Vec<Vec<String>> = ended.into_iter().map(|e| e.value()).collect();
    assert!(notes[0].is_empty(), "{notes:?}");
    // Sorted: a Long may go by RMA then a message, or inline, so the four
    // need not run in the order sent.
    let mut got = notes[1].clone();
    got.sort();
    assert_eq!(
        got,
        [
            "long handler, long=false: landed=true slice=true",
            "long handler, long=true: landed=false in_segment=true sees_write=false",
            "long handler, long=true: landed=true in_segment=true sees_write=true",
            "medium handler, long=true: kept=true",
        ]
    );
}
