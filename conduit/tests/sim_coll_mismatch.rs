//! Collectives whose members disagree (operand lengths, a user element
//! wider than a chunk, a broadcast root's bad source) over the in-memory
//! simulator: every member returns an error saying what is wrong, none
//! waits forever (a hang passes the job's deadline and aborts the test).

mod sim;

use conduit::client::{Client, CollOp, Reduction, UserOp};
use conduit::transport::sim::SimTransport;
use sim::Job;
use std::sync::Arc;
use std::time::Duration;

type SimClient = Client<(), SimTransport>;

/// Run `body` on 2 ranks; each rank's error text.
fn errors(body: impl Fn(&SimClient) -> Result<(), String> + Sync) -> Vec<String> {
    let mut job = Job::new(2);
    job.deadline = Duration::from_secs(30);
    let (_f, ended) = job.run::<conduit::client::Seq, _, _, _>(|_| (), |c: &SimClient| body(c));
    ended
        .into_iter()
        .enumerate()
        .map(|(r, e)| match e.value() {
            Ok(()) => panic!("rank {r} succeeded"),
            Err(s) => s,
        })
        .collect()
}

fn user(elem_size: usize) -> Reduction {
    Reduction::User {
        op: UserOp {
            f: Arc::new(|a: &mut [u8], b: &[u8]| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x = x.wrapping_add(*y);
                }
            }),
            commutative: true,
        },
        elem_size,
    }
}

fn assert_all(errs: &[String], want: &[&str]) {
    for (r, e) in errs.iter().enumerate() {
        for w in want {
            assert!(e.contains(w), "rank {r}: {e:?} lacks {w:?}");
        }
    }
}

#[test]
fn allreduce_lengths_across_one_chunk_fail_everywhere() {
    let errs = errors(|c| {
        let w = c.world().unwrap();
        let src = if c.rank() == 0 {
            vec![1u64; 1100]
        } else {
            vec![1u64]
        };
        let r = w
            .allreduce(CollOp::Sum, &src)
            .map(drop)
            .map_err(|e| e.to_string());
        // The team stays usable.
        assert_eq!(w.allreduce(CollOp::Sum, &[1u32]).unwrap(), [2]);
        r
    });
    assert_all(
        &errs,
        &["operands differ in length", "8800 bytes", "8 bytes"],
    );
}

#[test]
fn allreduce_nb_and_reduce_nb_lengths_differ() {
    // Whole chunks on both sides (2 vs 3 chunks of 8192): only the
    // header's last-chunk mark tells.
    for (a, b) in [(8192 * 2, 8192 * 3), (8, 8192 * 2), (24, 16)] {
        let errs = errors(|c| {
            let w = c.world().unwrap();
            let n = if c.rank() == 0 { a } else { b };
            let sum = Reduction::Builtin(CollOp::Sum, conduit::client::DType::U64);
            let r1 = w
                .allreduce_nb(sum.clone(), vec![1; n])
                .and_then(|e| e.wait())
                .map(drop)
                .map_err(|e| e.to_string());
            let r2 = w
                .reduce_nb(1, sum, vec![1; n])
                .and_then(|e| e.wait())
                .map(drop)
                .map_err(|e| e.to_string());
            // A leaf of the reduction to one is done once it has sent
            // (as in GASNet-EX): only the root, which detects, must fail.
            match (r1, r2) {
                (Err(x), Err(y)) => Err(format!("{x} | {y}")),
                (Err(x), Ok(())) if c.rank() == 0 => Err(x),
                other => panic!("rank {}: {other:?}", c.rank()),
            }
        });
        assert_all(&errs, &["operands differ in length"]);
    }
}

#[test]
fn user_element_wider_than_a_chunk_is_refused_at_the_start() {
    let errs = errors(|c| {
        let w = c.world().unwrap();
        let a = w.reduce_nb(0, user(16392), vec![1; 16392]).map(drop);
        let b = w.allreduce_nb(user(16392), vec![1; 16392]).map(drop);
        // Nothing was started: the team goes on.
        assert_eq!(w.allreduce(CollOp::Sum, &[1u32]).unwrap(), [2]);
        match (a, b) {
            (Err(x), Err(y)) => Err(format!("{x} | {y}")),
            other => panic!("{other:?}"),
        }
    });
    let one = "reduction element size elem_size = 16392 bytes exceeds the collective chunk \
               limit of 8192 bytes (GASNET_OFI_MAX_MEDIUM); use elements of at most 8192 bytes \
               or raise GASNET_OFI_MAX_MEDIUM";
    assert_eq!(errs, [format!("{one} | {one}"), format!("{one} | {one}")]);
}

#[test]
fn broadcast_root_with_a_bad_source_fails_every_member() {
    let errs = errors(|c| {
        let w = c.world().unwrap();
        let src = (c.rank() == 0).then(|| vec![0; 8]);
        let r = w
            .broadcast_nb(0, 4, src)
            .and_then(|e| e.wait())
            .map(drop)
            .map_err(|e| e.to_string());
        let mut v = [c.rank() as u8; 3];
        w.broadcast(1, &mut v).unwrap();
        assert_eq!(v, [1; 3]);
        r
    });
    // The root's own error, and the same text behind the abort.
    assert_eq!(
        errs[0],
        "source buffer of 8 bytes for a collective of 4 bytes"
    );
    assert_eq!(
        errs[1],
        format!("collective aborted by team rank 0: {}", errs[0])
    );
}

/// Operand lengths (in u64) of team ranks 0 and 1: within a chunk, across
/// chunks, across the shared-memory board's and the cache's sizes.
const PAIRS: [(usize, usize); 7] = [
    (1100, 1),
    (1, 2),
    (10, 300),
    (5000, 3000),
    (1, 100_000),
    (300, 10),
    (2, 1),
];

/// Run every pair of lengths through `what` (`allreduce`, `bcast` from
/// team rank 0, `reduce` to team rank 0) on 2 ranks, first as the team's
/// first collective, then after two barriers (so the shared-memory fast
/// paths may run it): every rank returns, the members that cannot finish
/// fail with "operands differ" (themselves or through an abort), a
/// broadcast's root and a reduction's leaf, which only send, return Ok,
/// and the team works afterwards on every rank.
fn lengths_differ(shm: bool, what: &'static str) {
    for warm in [false, true] {
        for (a, b) in PAIRS {
            let mut job = Job::new(2);
            if shm {
                job = job.vars(&[("GASNET_SUPERNODE_MAXSIZE", "0")]);
            }
            job.deadline = Duration::from_secs(30);
            let (_f, ended) = job.run::<conduit::client::Seq, _, _, _>(
                |_| (),
                |c: &SimClient| {
                    let w = c.world().unwrap();
                    if warm {
                        w.barrier().unwrap();
                        w.barrier().unwrap();
                    }
                    let n = if c.rank() == 0 { a } else { b };
                    let r = match what {
                        "allreduce" => w.allreduce(CollOp::Sum, &vec![1u64; n]).map(drop),
                        "bcast" => w.broadcast(0, &mut vec![1u8; n * 8]),
                        _ => w.reduce(0, CollOp::Sum, &vec![1u64; n]).map(drop),
                    };
                    let after = w.allreduce(CollOp::Sum, &[1u64]).map_err(|e| e.to_string());
                    (r.map_err(|e| e.to_string()), after)
                },
            );
            for (rank, e) in ended.into_iter().enumerate() {
                let case = format!("shm {shm} warm {warm} {what} {a}/{b} rank {rank}");
                let (r, after) = e.value();
                assert_eq!(after, Ok(vec![2]), "{case}: the team afterwards");
                let sends_only = rank != 0 && what == "reduce" || rank == 0 && what == "bcast";
                match r {
                    Ok(()) => assert!(sends_only, "{case}: succeeded"),
                    Err(e) => {
                        assert!(!sends_only, "{case}: {e}");
                        // The blocking board paths read every post whole
                        // and name the post's length.
                        let board =
                            e.contains("chunk 0 from team rank") && e.contains("; expected");
                        assert!(
                            e.contains("operands differ in length") || shm && warm && board,
                            "{case}: {e}"
                        );
                        assert!(
                            !e.contains("aborted") || e.contains("aborted by team rank"),
                            "{case}: {e}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn allreduce_lengths_differ_every_path() {
    lengths_differ(false, "allreduce");
    lengths_differ(true, "allreduce");
}

#[test]
fn broadcast_lengths_differ_every_path() {
    lengths_differ(false, "bcast");
    lengths_differ(true, "bcast");
}

#[test]
fn reduce_lengths_differ_every_path() {
    lengths_differ(false, "reduce");
    lengths_differ(true, "reduce");
}

/// Run `body` on 2 ranks sharing memory or not; each rank's result.
fn run2<R: Send + std::fmt::Debug>(shm: bool, body: impl Fn(&SimClient) -> R + Sync) -> Vec<R> {
    let mut job = Job::new(2);
    if shm {
        job = job.vars(&[("GASNET_SUPERNODE_MAXSIZE", "0")]);
    }
    job.deadline = Duration::from_secs(30);
    let (_f, ended) = job.run::<conduit::client::Seq, _, _, _>(|_| (), |c: &SimClient| body(c));
    ended.into_iter().map(|e| e.value()).collect()
}

#[test]
fn start_error_on_one_member_keeps_the_boards_going() {
    // Rank 0 posts its 2048 bytes on its board; rank 1's 2044 are refused
    // at the start (not a multiple of 8) but take the sequence number: it
    // still reads and acknowledges rank 0's post, so the posts two
    // collectives later do not wait for it forever.
    for shm in [true, false] {
        let got = run2(shm, |c| {
            let w = c.world().unwrap();
            w.allreduce(CollOp::Sum, &[1u64]).unwrap();
            w.barrier().unwrap();
            let n = if c.rank() == 0 { 2048 } else { 2044 };
            let sum = Reduction::Builtin(CollOp::Sum, conduit::client::DType::U64);
            let r = w
                .allreduce_nb(sum, vec![1; n])
                .and_then(|e| e.wait())
                .map(drop)
                .map_err(|e| e.to_string());
            let after: Vec<_> = (0..3)
                .map(|i| w.allreduce(CollOp::Sum, &vec![i as u64; 256]))
                .collect();
            (r, after)
        });
        for (rank, (r, after)) in got.into_iter().enumerate() {
            assert!(r.is_err(), "shm {shm} rank {rank}: {r:?}");
            for (i, a) in after.into_iter().enumerate() {
                assert_eq!(a.unwrap(), vec![2 * i as u64; 256], "shm {shm} rank {rank}");
            }
        }
    }
}

#[test]
fn failed_collective_with_more_chunks_than_slots_leaves_the_team_usable() {
    // The leaf's operand needs more cache chunks (17 of 8160 bytes with the
    // default 32 pages) than a sender has slots at the root (8). The root
    // fails at chunk 0; it still reads and credits the rest as chunks of a
    // dead collective, and a member that learns of the failure while some
    // are queued for slots drops them (`drop_queued`). Either way no slot
    // stays taken: the team's next collectives through the same slots
    // complete. A reduce (the leaf completes once it has sent everything)
    // and an allreduce (the leaf waits, and is aborted).
    for (shm, all) in [(false, false), (true, false), (false, true), (true, true)] {
        let got = run2(shm, |c| {
            let w = c.world().unwrap();
            // The first collective exchanges the cache records.
            w.allreduce(CollOp::Sum, &[1u64]).unwrap();
            w.allreduce(CollOp::Sum, &[1u64]).unwrap();
            let n = if c.rank() == 0 { 1 } else { 16_384 };
            let src = vec![1u64; n];
            let r = if all {
                w.allreduce(CollOp::Sum, &src).map(drop)
            } else {
                w.reduce(0, CollOp::Sum, &src).map(drop)
            };
            let r = r.map_err(|e| e.to_string());
            // The job's barrier: not a collective of the team, which would
            // have the root read its slots again.
            c.barrier().unwrap();
            w.barrier().unwrap();
            let after: Vec<_> = (0..3)
                .map(|i| w.allreduce(CollOp::Sum, &vec![i as u64; 1000]))
                .collect();
            (r, after)
        });
        for (rank, (r, after)) in got.into_iter().enumerate() {
            match (rank, all) {
                (1, false) => assert_eq!(r, Ok(()), "shm {shm}"),
                _ => assert!(
                    r.as_ref()
                        .is_err_and(|e| e.contains("operands differ in length")),
                    "shm {shm} allreduce {all} rank {rank}: {r:?}"
                ),
            }
            for (i, a) in after.into_iter().enumerate() {
                assert_eq!(
                    a.unwrap(),
                    vec![2 * i as u64; 1000],
                    "shm {shm} rank {rank}"
                );
            }
        }
    }
}
