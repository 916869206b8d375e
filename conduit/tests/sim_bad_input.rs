//! Bad application input refused with its message, over the in-memory
//! simulator: AMs to the conduit's own handler indices (a request, and a
//! reply from a handler), endpoint counts outside what a client may ask
//! for, and range errors of this rank's own segment, which name this rank;
//! the job's segment limit found at start-up.
//! Also what a Long of no bytes gives its handler: where it was sent.

mod sim;

use bootstrap::local::LocalBootstrap;
use conduit::client::{Client, ClientOf, Options, Seq, MAX_ENDPOINT_SETS};
use conduit::transport::sim::{SimConfig, SimFabric, SimTransport};
use sim::Job;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

type SimClient = Client<Notes, SimTransport>;

/// What handlers saw.
#[derive(Default)]
struct Notes {
    lines: Mutex<Vec<String>>,
    done: AtomicUsize,
}

const SEG: usize = 1 << 16;
const RESERVED: &str =
    "AM to handler index 2: indices 0..=127 are the conduit's; a client sends to its handlers at 128..=255";

/// Index 2 is the conduit's exit handler: a client's request to it, or a
/// reply to index 4 (the conduit's atomic replies), is refused at the
/// sender with nothing sent; the job goes on and ends normally.
#[test]
fn a_client_cannot_send_to_the_conduits_handlers() {
    let (_f, ended) = Job::new(2).run::<Seq, _, _, _>(
        |_| Notes::default(),
        |c: &SimClient| {
            c.on_request_short(200, 0, |tok, _| {
                let r = tok.reply_short(4, &[12345, 0, 0, 0]);
                let line = r.map_err(|e| e.to_string()).err().unwrap_or_default();
                tok.state().lines.lock().unwrap().push(line);
                tok.state().done.fetch_add(1, Ordering::Release);
            })
            .unwrap();
            c.barrier().unwrap();
            let sent = c.request_short(1 - c.rank(), 2, &[7, 1]);
            c.request_short(1 - c.rank(), 200, &[]).unwrap();
            c.block_until(|| c.state().done.load(Ordering::Acquire) == 1)
                .unwrap();
            let reply = c.state().lines.lock().unwrap().clone();
            (sent.map_err(|e| e.to_string()), reply)
        },
    );
    for e in ended {
        let (sent, reply) = e.value();
        assert_eq!(sent, Err(RESERVED.to_string()));
        assert_eq!(
            reply,
            ["AM to handler index 4: indices 0..=127 are the conduit's; a client sends to its handlers at 128..=255"]
        );
    }
}

/// `Options::endpoints` outside 1..=256 fails the init with its message
/// (0 was taken as 1; a huge count overflowed).
#[test]
fn endpoint_counts_outside_the_range_are_refused() {
    for n in [0, MAX_ENDPOINT_SETS + 1, usize::MAX] {
        let fabric = SimFabric::new(SimConfig {
            ranks: 1,
            ..SimConfig::default()
        });
        let boot = LocalBootstrap::group(1).pop().unwrap();
        let o = Options::new(())
            .endpoints(n)
            .bootstrap(Arc::new(boot))
            .config(sim::config(&[]))
            .end_with(sim::end_thread);
        let r = ClientOf::<Seq, (), SimTransport>::init_sim(fabric.network(0), o);
        assert_eq!(
            r.err().map(|e| e.to_string()),
            Some(format!(
                "Options::endpoints({n}): a client has 1 to 256 endpoint sets"
            ))
        );
    }
}

/// Ranks that ask for different numbers of endpoint sets are refused at
/// start-up on every rank, naming both counts, with the shared-memory path
/// on (a rank with more sets wrote past a peer's rings) and off.
#[test]
fn ranks_with_different_endpoint_counts_are_refused() {
    for maxsize in ["0", "1"] {
        let fabric = SimFabric::new(SimConfig {
            ranks: 2,
            ..SimConfig::default()
        });
        let boots = LocalBootstrap::group(2);
        let got: Vec<Option<String>> = std::thread::scope(|sc| {
            let handles: Vec<_> = boots
                .into_iter()
                .enumerate()
                .map(|(r, boot)| {
                    let fabric = &fabric;
                    sc.spawn(move || {
                        let o = Options::new(())
                            .endpoints(2 - r)
                            .bootstrap(Arc::new(boot))
                            .config(sim::config(&[("GASNET_SUPERNODE_MAXSIZE", maxsize)]))
                            .end_with(sim::end_thread);
                        ClientOf::<Seq, (), SimTransport>::init_sim(fabric.network(r), o)
                            .err()
                            .map(|e| e.to_string())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let want = |r: usize| {
            Some(format!(
                "rank {r} opened {} endpoint set(s) but rank {} opened {}: every rank of the \
                 job must ask for the same number of endpoints",
                2 - r,
                1 - r,
                1 + r
            ))
        };
        assert_eq!(
            got,
            vec![want(0), want(1)],
            "GASNET_SUPERNODE_MAXSIZE={maxsize}"
        );
    }
}

/// A range outside this rank's segment, by every local view, names this
/// rank (not `usize::MAX`).
#[test]
fn range_errors_of_the_own_segment_name_this_rank() {
    let (_f, ended) = Job::new(2).run::<Seq, _, _, _>(
        |_| Notes::default(),
        |c: &SimClient| {
            c.attach_segment(SEG).unwrap();
            let mut b = [0u8; 8];
            let seg = c.segment().unwrap();
            [
                c.segment_read(SEG, &mut b).map_err(|e| e.to_string()),
                c.segment_write(SEG - 4, &b).map_err(|e| e.to_string()),
                seg.read(SEG, &mut b).map_err(|e| e.to_string()),
                seg.atomic_u64(SEG).map(|_| ()).map_err(|e| e.to_string()),
            ]
            .map(|r| r.err().unwrap_or_default())
        },
    );
    for (rank, e) in ended.into_iter().enumerate() {
        let got = e.value();
        assert_eq!(
            got[0],
            format!("8 bytes at offset {SEG} do not fit in the {SEG}-byte segment of rank {rank}")
        );
        assert_eq!(
            got[1],
            format!(
                "8 bytes at offset {} do not fit in the {SEG}-byte segment of rank {rank}",
                SEG - 4
            )
        );
        assert_eq!(got[2], got[0]);
        assert!(
            got[3].ends_with(&format!("segment of rank {rank}")),
            "{}",
            got[3]
        );
    }
}

/// A Long of no bytes: its handler's payload is empty and points where it
/// was sent, in this rank's segment or not (what a C handler gets as its
/// buffer, as GASNet-EX promises dest_addr unchecked for no bytes).
#[test]
fn an_empty_long_points_where_it_was_sent() {
    for vars in [
        &[("GASNET_SUPERNODE_MAXSIZE", "1")][..],
        &[("GASNET_SUPERNODE_MAXSIZE", "0")][..],
        // Every non-empty Long by RMA: an empty one still goes inline.
        &[
            ("GASNET_SUPERNODE_MAXSIZE", "1"),
            ("GASNET_OFI_LONG_AM_RMA_THRESH", "0"),
        ][..],
    ] {
        empty_longs(vars);
    }
}

/// [`an_empty_long_points_where_it_was_sent`] under `vars`.
fn empty_longs(vars: &'static [(&'static str, &'static str)]) {
    const AT: usize = 1000;
    let job = Job::new(2).vars(vars);
    let (_f, ended) = job.run::<Seq, _, _, _>(
        |_| Notes::default(),
        |c: &SimClient| {
            c.on_request_long(201, 0, |tok, _, p| {
                let line = format!(
                    "{} {:#x} {:?}",
                    p.len(),
                    p.as_ptr() as usize,
                    tok.long_offset()
                );
                tok.state().lines.lock().unwrap().push(line);
                tok.state().done.fetch_add(1, Ordering::Release);
            })
            .unwrap();
            c.attach_segment(SEG).unwrap();
            c.barrier().unwrap();
            // In the segment, past its end, and an offset that wraps
            // around (a C caller's dest_addr below the segment).
            let offsets = [AT, SEG + 4096, 0usize.wrapping_sub(4096)];
            for at in offsets {
                c.request_long(1 - c.rank(), 201, &[], &[], at).unwrap();
            }
            c.block_until(|| c.state().done.load(Ordering::Acquire) == offsets.len())
                .unwrap();
            let base = c.segment().unwrap().as_ptr() as usize;
            let got = c.state().lines.lock().unwrap().clone();
            let want: Vec<String> = offsets
                .iter()
                .map(|&at| format!("0 {:#x} Some({at})", base.wrapping_add(at)))
                .collect();
            (got, want)
        },
    );
    for e in ended {
        let (got, want) = e.value();
        assert_eq!(got, want, "{vars:?}");
    }
}

/// The job's segment limit (`max_global_segment_size`, exchanged at
/// start-up) is what every rank may attach: here `GASNET_MAX_SEGSIZE`
/// on every rank, so each rank's own limit too; a segment of that size
/// attaches and one page more is refused with its message.
#[test]
fn the_job_segment_limit_is_what_every_rank_may_attach() {
    let (_f, ended) = Job::new(3)
        .vars(&[("GASNET_MAX_SEGSIZE", "1M")])
        .run::<Seq, _, _, _>(
            |_| Notes::default(),
            |c: &SimClient| {
                let (global, local) = (c.max_global_segment_size(), c.max_segment_size());
                let over = c
                    .attach_segment(global + 4096)
                    .map_err(|e| e.to_string())
                    .err();
                c.attach_segment(global).unwrap();
                (global, local, over)
            },
        );
    for e in ended {
        let (global, local, over) = e.value();
        assert_eq!((global, local), (1 << 20, 1 << 20));
        assert_eq!(
            over.as_deref(),
            Some("segment size 1052672 exceeds the limit of 1048576 bytes set by GASNET_MAX_SEGSIZE=1M")
        );
    }
}
