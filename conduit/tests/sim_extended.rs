//! The extended API over the in-memory simulator, under -FI_EAGAIN,
//! delays and reordering: atomics by Active Message (the simulator has no
//! native atomics, so `auto` takes them), VIS (packed small pieces,
//! single-piece transfers, and two pieces per transfer where the simulator
//! is made to carry them) and
//! collectives (recursive doubling, the broadcast tree, a split).

mod sim;

use conduit::client::{AtomicImpl, AtomicOp, Client, CollOp, Seq};
use conduit::transport::sim::{Faults, SimTransport};
use sim::Job;

type SimClient = Client<(), SimTransport>;

fn faults() -> Faults {
    Faults {
        eagain_one_in: 5,
        max_delay: 3,
        reorder: true,
        ..Faults::default()
    }
}

#[test]
fn atomics_by_am_sum_exactly_and_a_lock_holds() {
    let (_f, ended) = Job::new(3).faults(faults()).run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            c.attach_segment(1 << 16).unwrap();
            let ad = c
                .atomic_domain::<u64>(&[
                    AtomicOp::Fadd,
                    AtomicOp::Fcas,
                    AtomicOp::Set,
                    AtomicOp::Get,
                ])
                .unwrap();
            assert_eq!(ad.implementation(), AtomicImpl::ActiveMessage);
            for _ in 0..500 {
                ad.fetch_add(0, 8, 1).unwrap();
            }
            // A compare-and-swap lock around a plain counter at rank 1.
            for _ in 0..50 {
                while ad.compare_swap(2, 0, 0, c.rank() as u64 + 1).unwrap() != 0 {}
                let v = c.get_u64(1, 64).unwrap();
                c.put_u64(1, 64, v + 1).unwrap();
                ad.set(2, 0, 0).unwrap();
            }
            c.barrier().unwrap();
            (ad.get(0, 8).unwrap(), c.get_u64(1, 64).unwrap())
        },
    );
    for e in ended {
        assert_eq!(e.value(), (1500, 150));
    }
}

#[test]
fn vis_packed_and_single_piece_paths() {
    for (packed, _) in vis_paths(Job::new(3)) {
        assert!(packed > 0, "small pieces were packed");
    }
}

/// With two pieces per transfer (the simulator's `remote_cq_data`), the
/// pieces that are not packed go two at a time (`rma_vec`).
#[test]
fn vis_two_pieces_per_transfer() {
    let mut job = Job::new(3);
    job.sim.remote_cq_data = true;
    for (_, iov_calls) in vis_paths(job) {
        assert!(iov_calls > 0, "no transfer of several pieces");
    }
}

/// Indexed puts and gets of small pieces, strided ones of 4 KiB rows, to
/// the next rank; each rank's counts of packed pieces and of transfers of
/// several pieces.
fn vis_paths(job: Job) -> Vec<(u64, u64)> {
    let (_f, ended) = job.faults(faults()).run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            c.attach_segment(1 << 20).unwrap();
            c.barrier().unwrap();
            let peer = (c.rank() + 1) % c.size();
            let src: Vec<u8> = (0..64 * 1024).map(|i| (i * 31 + c.rank()) as u8).collect();
            // 400 pieces of 8 bytes: packed into AMs.
            let so: Vec<usize> = (0..400).map(|k| k * 16).collect();
            let d: Vec<usize> = (0..400).map(|k| 100_000 + k * 24).collect();
            c.put_indexed(peer, &d, 8, &src, &so, 8).unwrap();
            let mut back = vec![0u8; src.len()];
            c.get_indexed(peer, &mut back, &so, 8, &d, 8).unwrap();
            for &o in &so {
                assert_eq!(back[o..o + 8], src[o..o + 8]);
            }
            // 8 rows of 4 KiB: single-piece transfers (two at a time
            // where a transfer takes two).
            c.put_strided(peer, 300_000, &[8192], &src, 0, &[4096], 4096, &[8])
                .unwrap();
            let mut rows = vec![0u8; src.len()];
            c.get_strided(peer, &mut rows, 0, &[4096], 300_000, &[8192], 4096, &[8])
                .unwrap();
            assert_eq!(rows[..8 * 4096], src[..8 * 4096]);
            c.barrier().unwrap();
            // What the previous rank put here is its pattern.
            let from = (c.rank() + c.size() - 1) % c.size();
            let theirs: Vec<u8> = (0..8 * 4096).map(|i| (i * 31 + from) as u8).collect();
            let mut mine = vec![0u8; 8 * 4096];
            c.get_strided(
                c.rank(),
                &mut mine,
                0,
                &[4096],
                300_000,
                &[8192],
                4096,
                &[8],
            )
            .unwrap();
            assert_eq!(mine, theirs);
            let s = c.stats();
            (s.vis_packed, s.vis_iov_calls)
        },
    );
    ended.into_iter().map(|e| e.value()).collect()
}

#[test]
fn collectives_and_a_split() {
    collectives_and_a_split_with(&[]);
}

/// The same with every chunk after each team's first collective written
/// into the members' collective caches by RMA (flags after delivered
/// chunks, credits back), under the same faults.
#[test]
fn collectives_through_the_collective_cache() {
    collectives_and_a_split_with(&[("GASNET_OFI_COLL_RMA", "on")]);
}

fn collectives_and_a_split_with(vars: &[(&'static str, &'static str)]) {
    let by_rma = !vars.is_empty();
    let (_f, ended) = Job::new(5).faults(faults()).vars(vars).run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            let w = c.world().unwrap();
            let (me, n) = (c.rank(), c.size());
            let s = w.allreduce(CollOp::Sum, &[me as u64, 1]).unwrap();
            assert_eq!(s, [(n * (n - 1) / 2) as u64, n as u64]);
            let mut buf = vec![0u8; 50_000];
            if me == 1 {
                buf.iter_mut()
                    .enumerate()
                    .for_each(|(i, b)| *b = (i % 251) as u8);
            }
            w.broadcast(1, &mut buf).unwrap();
            assert!(buf.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
            let big: Vec<u32> = (0..5000).map(|i| (i + me) as u32).collect();
            let m = w.reduce(0, CollOp::Max, &big).unwrap();
            if me == 0 {
                let m = m.unwrap();
                assert!(m.iter().enumerate().all(|(i, &v)| v == (i + n - 1) as u32));
            }
            for round in 0..20u64 {
                let s = w.allreduce(CollOp::Sum, &[round + me as u64]).unwrap();
                assert_eq!(s, [n as u64 * round + (n * (n - 1) / 2) as u64]);
            }
            w.flush().unwrap();
            assert_eq!(
                c.stats().coll_cache_rma > 0,
                by_rma,
                "chunks through the cache"
            );
            let half = w.split(Some(me as u32 % 2), 0).unwrap().unwrap();
            let hs = half.allreduce(CollOp::Sum, &[1u32]).unwrap();
            let hs2 = half.allreduce(CollOp::Sum, &[2u32]).unwrap();
            assert_eq!(hs2[0], 2 * hs[0]);
            hs[0]
        },
    );
    let sizes: Vec<u32> = ended.into_iter().map(|e| e.value()).collect();
    assert_eq!(sizes, [3, 2, 3, 2, 3]);
}
