//! Collectives whose messages cannot be sent (a send refused by the
//! transport) over the in-memory simulator: the member that failed returns
//! the transport's error, the others are told by an abort instead of
//! waiting for ever (a hang passes the job's deadline and fails the test),
//! and the team stays usable and flushes (nothing of the failed collective is left in flight).

mod sim;

use conduit::client::{Client, CollOp, Seq};
use conduit::transport::sim::SimTransport;
use sim::Job;
use std::time::Duration;

type SimClient = Client<(), SimTransport>;

/// Rank 0's next message send is refused after a first broadcast (which begins the
/// exchange of the team's cache records) and, when `settled`, an allreduce
/// and a barrier (by then every member's cache is settled); every rank
/// then runs `run`. Each rank's outcome of it; the team must still
/// broadcast and flush afterwards.
fn first_send_fails(
    ranks: usize,
    settled: bool,
    run: impl Fn(&SimClient, &conduit::client::Team<'_, Seq, (), SimTransport>) -> Result<(), String>
        + Sync,
) -> Vec<Result<(), String>> {
    let mut job = Job::new(ranks);
    job.deadline = Duration::from_secs(60);
    let fabric = job.fabric();
    let (fabric, ended) = job.run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            let w = c.world().unwrap();
            // The first collective also exchanges the team's cache records.
            let mut b = [c.rank() as u8; 8];
            w.broadcast(0, &mut b).unwrap();
            if settled {
                assert_eq!(w.allreduce(CollOp::Sum, &[1u32]).unwrap(), [ranks as u32]);
            }
            c.barrier().unwrap();
            if c.rank() == 0 {
                fabric.set_faults(|f| f.refuse_send = Some((0, 1)));
            }
            let r = run(c, &w);
            // Usable afterwards: the next collective runs everywhere.
            let mut b = [c.rank() as u8 + 1; 8];
            w.broadcast(1, &mut b).unwrap();
            assert_eq!(b, [2; 8]);
            w.flush().unwrap();
            r
        },
    );
    assert_eq!(fabric.faults().refuse_send, None, "no send was refused");
    ended.into_iter().map(|e| e.value()).collect()
}

/// Rank 0 returns the transport's error and rank 1 the abort; the other
/// ranks either the abort or (where `run` checked it) the right result:
/// with the team's cache a member may have every contribution before the
/// abort arrives.
fn assert_failed(got: &[Result<(), String>]) {
    let own = got[0].as_ref().expect_err("rank 0 succeeded");
    assert!(own.contains("a simulated send failed"), "rank 0: {own}");
    for (r, g) in got.iter().enumerate().skip(1) {
        match g {
            Err(e) => assert!(
                e.contains("collective aborted by team rank 0")
                    && e.contains("a message could not be sent"),
                "rank {r}: {e}"
            ),
            Ok(()) => assert!(r > 1, "rank {r} succeeded without rank 0's data"),
        }
    }
}

/// The root of a broadcast cannot send: the other member, waiting for
/// the data, is aborted.
#[test]
fn a_broadcast_whose_root_cannot_send_fails_on_every_member() {
    let got = first_send_fails(2, true, |c, w| {
        let mut b = [7u8; 100];
        w.broadcast(0, &mut b).map_err(|e| e.to_string())?;
        assert_eq!(c.rank(), 1, "rank 0's broadcast should have failed");
        Ok(())
    });
    assert_failed(&got);
}

/// A reduction to all whose first message cannot leave rank 0: no member
/// waits for ever for rank 0's contribution.
#[test]
fn a_reduction_whose_first_message_cannot_be_sent_fails_on_every_member() {
    let got = first_send_fails(3, true, |_, w| {
        let sum = w
            .allreduce(CollOp::Sum, &[1u64; 4])
            .map_err(|e| e.to_string())?;
        assert_eq!(sum, [3; 4]);
        Ok(())
    });
    assert_failed(&got);
}

/// The failed post is rank 0's part of the members' agreement on the
/// team's cache, which the next collective waits for: that collective
/// fails on every member (rank 0's is not started, but still takes its
/// sequence number), and the team goes on without its cache.
#[test]
fn a_failure_in_the_cache_agreement_fails_the_next_collective_everywhere() {
    let got = first_send_fails(2, false, |_, w| {
        w.allreduce(CollOp::Sum, &[1u64; 4])
            .map(drop)
            .map_err(|e| e.to_string())
    });
    let own = got[0].as_ref().expect_err("rank 0 succeeded");
    assert!(own.contains("a simulated send failed"), "rank 0: {own}");
    let other = got[1].as_ref().expect_err("rank 1 succeeded");
    assert!(
        other.contains("collective aborted by team rank 0"),
        "rank 1: {other}"
    );
}

/// Rank 0's first message of a team's first collective is refused: the
/// exchange of the team's cache records (or the broadcast itself) fails
/// on rank 0 and is aborted elsewhere, where it may already be complete.
/// Whatever became of it on each member, the members keep numbering their
/// collectives alike: the next ones run everywhere with the right results.
#[test]
fn a_failure_in_the_first_collective_leaves_the_team_usable() {
    let mut job = Job::new(3);
    job.deadline = Duration::from_secs(60);
    let fabric = job.fabric();
    let (fabric, ended) = job.run::<Seq, _, _, _>(
        |_| (),
        |c: &SimClient| {
            let w = c.world().unwrap();
            c.barrier().unwrap();
            if c.rank() == 0 {
                fabric.set_faults(|f| f.refuse_send = Some((0, 1)));
            }
            let mut b = [c.rank() as u8; 8];
            let first = w.broadcast(0, &mut b).map_err(|e| e.to_string());
            // The next collectives may fail while the failure's aborts
            // arrive; the second after it runs everywhere.
            let mut later = Vec::new();
            for round in 0..4u32 {
                let r = w.allreduce(CollOp::Sum, &[round + 1]);
                later.push(r.map_err(|e| e.to_string()));
            }
            let mut b = [c.rank() as u8 + 1; 8];
            w.broadcast(2, &mut b).unwrap();
            assert_eq!(b, [3; 8]);
            w.flush().unwrap();
            (first, later)
        },
    );
    assert_eq!(fabric.faults().refuse_send, None, "no send was refused");
    let got: Vec<_> = ended.into_iter().map(|e| e.value()).collect();
    let own = got[0].0.as_ref().expect_err("rank 0's broadcast succeeded");
    assert!(own.contains("a simulated send failed"), "rank 0: {own}");
    // Every member agrees on which of the later allreduces ran, and those
    // that ran summed right.
    for round in 0..4 {
        let ok: Vec<bool> = got.iter().map(|(_, l)| l[round].is_ok()).collect();
        assert!(
            ok.iter().all(|&o| o == ok[0]),
            "allreduce {round}: {:?}",
            got.iter().map(|(_, l)| &l[round]).collect::<Vec<_>>()
        );
        for (_, l) in &got {
            if let Ok(v) = &l[round] {
                assert_eq!(v, &[3 * (round as u32 + 1)]);
            }
        }
    }
}
