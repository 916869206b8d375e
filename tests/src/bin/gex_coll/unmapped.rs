//! `unmapped`: a member of a team whose members share memory cannot map
//! the other members' collective caches (its descriptors run out: job rank
//! 1 lowers its limit so that only its own cache's memory file still
//! opens). The members agree on it before any uses the cache: every
//! member goes without the board (whose reads need every mapping) and
//! keeps the slots, so collectives complete with exact results where,
//! before, that member failed its first small reduction to all and the
//! others waited for ever. Needs 3 or more ranks of one host with the
//! shared-memory path on. Checks, per rank, the counters: no board post
//! on the team; the members that mapped every cache copy chunks into
//! them.

use crate::{pattern, T};
use conduit::client::{Client, CollOp};
use nix::sys::resource::{getrlimit, setrlimit, Resource};
use tests::{fail, Fallible};

/// Board posts of any kind, and slot copies, so far.
fn counters(c: &Client) -> (u64, u64) {
    let s = c.stats();
    (
        s.coll_board + s.coll_board_bcast + s.coll_board_now,
        s.coll_cache_local,
    )
}

/// Small and 4 KiB reductions to all and broadcasts from every root,
/// checked.
fn run(t: &T<'_>, round: usize) -> Fallible<()> {
    let n = t.size() as u64;
    let me = t.rank() as u64;
    let got = t.allreduce(CollOp::Sum, &[me + 1])?;
    if got != [n * (n + 1) / 2] {
        return Err(fail(format!("round {round}: allreduce summed {got:?}")));
    }
    let big: Vec<u64> = (0..512).map(|j| j * n + me).collect();
    let got = t.allreduce(CollOp::Max, &big)?;
    if got
        .iter()
        .enumerate()
        .any(|(j, &v)| v != j as u64 * n + n - 1)
    {
        return Err(fail(format!("round {round}: the 4 KiB allreduce is wrong")));
    }
    for root in 0..t.size() {
        for len in [8, 4096] {
            let want = pattern(root + round, len);
            let mut buf = if t.rank() == root {
                want.clone()
            } else {
                vec![0; len]
            };
            t.broadcast(root, &mut buf)?;
            if buf != want {
                return Err(fail(format!(
                    "round {round}: the {len} B broadcast from {root} is wrong"
                )));
            }
        }
    }
    Ok(())
}

pub fn unmapped(c: &Client) -> Fallible<String> {
    if c.size() < 3 {
        return Err(fail(format!(
            "unmapped needs 3 or more ranks, not {}",
            c.size()
        )));
    }
    let w = c.world()?;
    let t = w
        .split(Some(0), 0)?
        .ok_or_else(|| fail("the split gave no team"))?;
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    if c.rank() == 1 {
        // The lowest free descriptor number: with the limit just above
        // it, one more file opens (this rank's cache), then none.
        let lowest = std::os::fd::AsRawFd::as_raw_fd(&std::fs::File::open("/dev/null")?) as u64;
        setrlimit(Resource::RLIMIT_NOFILE, lowest + 1, hard)?;
    }
    let (board0, local0) = counters(c);
    for round in 0..3 {
        run(&t, round)?;
    }
    if c.rank() == 1 {
        setrlimit(Resource::RLIMIT_NOFILE, soft, hard)?;
    }
    for round in 3..6 {
        run(&t, round)?;
    }
    t.barrier()?;
    let (board1, local1) = counters(c);
    if board1 != board0 {
        return Err(fail(format!(
            "rank {}: {} board posts on a team whose rank 1 could not map the caches",
            c.rank(),
            board1 - board0
        )));
    }
    if local1 != local0 {
        return Err(fail(format!(
            "rank {}: {} chunks copied into the caches of a team whose rank 1 could not map them",
            c.rank(),
            local1 - local0
        )));
    }
    t.destroy()?;
    w.barrier()?;
    Ok("ok: a member that could not map the others' caches: the team went without its cache on every member, and 6 rounds of collectives were exact".into())
}
