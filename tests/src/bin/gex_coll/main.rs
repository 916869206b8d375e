//! Teams and collectives conformance program, run under `gasnetrun-ofi`.
//! Usage: `gex-coll <mode>`:
//!
//! * `bcast`: broadcast from every root at sizes 0 B .. 4 MiB, data checked
//!   on every rank (the fan-out is `GASNET_OFI_COLL_FANOUT`).
//! * `reduce`: reduce to every root and reduce to all, for every built-in
//!   operator x type, on short and multi-chunk vectors, checked exactly
//!   against a fold computed locally.
//! * `user`: a non-commutative user operator (2x2 u64 matrix product) whose
//!   result depends on the order, checked against the serial product in
//!   rank order (on 4 matrices, one small exchange, and on 600, several
//!   chunks); a commutative user operator (sum).
//! * `teams`: split into odd and even ranks; both teams run broadcasts and
//!   reductions at the same time, with world collectives in flight too;
//!   rank translation checked.
//! * `bad`: a root outside the team, an operator not valid for the type,
//!   a rank with no colour: each refused with its message.
//! * `cache`: collectives inside the registered collective cache (one
//!   slot, several slots, the whole data cache) and beyond it, blocking
//!   and non-blocking, a user type wider than a slot; an event dropped
//!   unwaited, then a flush; six small reductions to all in flight at
//!   once; blocking reductions to all run at once and as collectives
//!   while another member still has one in flight; prints the cache counters (`COLL_CACHE_LOCAL`,
//!   `COLL_CACHE_RMA`, `COLL_BOARD`, `COLL_BOARD_BCAST`, `COLL_BOARD_NOW`).
//! * `destroy [rounds]`: teams made, used and destroyed in a loop under a
//!   lowered descriptor limit; the rank's descriptors and mappings must
//!   not grow (see `destroy.rs`).
//! * `unmapped`: a member cannot map the other members' collective
//!   caches; the team agrees to go without its board (see `unmapped.rs`).
//! * `par-split [rounds]`: a multi-threaded client whose threads split
//!   teams at the same time; every new team's allreduce checked (3 or
//!   more ranks; see `par_split.rs`).
//! * `lat <n> [sizes]`: broadcast and allreduce latency at 8 B and 64 KiB,
//!   or at the comma-separated byte counts `sizes` (multiples of 8; median
//!   of 5 rounds of n).
//!
//! Rank 0 prints one summary line; errors print `gex-coll: rank R: ...`
//! and end the job with code 1.

#![forbid(unsafe_code)]

use conduit::client::{Client, CollOp, CollValue, DType, Reduction, Team, UserOp};
use std::sync::Arc;
use std::time::Instant;
use tests::program::expect_err;
use tests::{fail, Fallible};

mod cache;
mod destroy;
mod par_split;
mod reduce;
mod unmapped;
mod user;

use cache::cache;
use reduce::reduce;
use user::user;

type T<'c> = Team<'c, conduit::client::Seq, (), conduit::transport::ofi::OfiTransport>;

fn pattern(root: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|j| (j.wrapping_mul(31) ^ root.wrapping_mul(97) ^ (j >> 8)) as u8)
        .collect()
}

const SIZES: [usize; 10] = [
    0,
    1,
    7,
    8191,
    8192,
    8193,
    65536 + 3,
    300_000,
    1 << 20,
    4 << 20,
];

fn bcast(c: &Client) -> Fallible<String> {
    let w = c.world()?;
    let mut n = 0;
    for &len in &SIZES {
        for root in 0..w.size() {
            let mut buf = if w.rank() == root {
                pattern(root, len)
            } else {
                vec![0xee; len]
            };
            w.broadcast(root, &mut buf)?;
            if buf != pattern(root, len) {
                let at = buf
                    .iter()
                    .zip(pattern(root, len))
                    .position(|(a, b)| *a != b);
                return Err(fail(format!(
                    "broadcast of {len} bytes from {root}: wrong data at byte {at:?}"
                )));
            }
            n += 1;
        }
    }
    Ok(format!(
        "ok: {n} broadcasts of 0 B..4 MiB from every root checked (fan-out {})",
        c.config().extended.coll_fanout
    ))
}

fn teams(c: &Client) -> Fallible<String> {
    let w = c.world()?;
    let (me, n) = (w.rank(), w.size());
    let half = w
        .split(Some(me as u32 % 2), (n - me) as u32)?
        .ok_or_else(|| fail("split gave no team"))?;
    // Keys run backwards: team rank 0 is the highest job rank of the colour.
    let mut mine: Vec<usize> = (0..n).filter(|r| r % 2 == me % 2).collect();
    mine.reverse();
    if half.members() != mine {
        return Err(fail(format!(
            "members {:?}, expected {mine:?}",
            half.members()
        )));
    }
    for (t, &j) in mine.iter().enumerate() {
        if half.to_job(t)? != j || half.to_team(j) != Some(t) {
            return Err(fail(format!(
                "rank translation of team rank {t} / job rank {j}"
            )));
        }
    }
    if half.to_team((me + 1) % n).is_some() && n > 1 {
        return Err(fail("a rank of the other colour translated into this team"));
    }
    let mut rounds = 0;
    for round in 0..20usize {
        // World and team collectives in flight together.
        let wev = w.allreduce_nb(
            Reduction::Builtin(CollOp::Sum, DType::U64),
            (me as u64).to_ne_bytes().to_vec(),
        )?;
        let root = round % half.size();
        let len = 1000 + round * 5000;
        let src = (half.rank() == root).then(|| pattern(round + me % 2, len));
        let bev = half.broadcast_nb(root, len, src)?;
        let sum = half.allreduce(CollOp::Sum, &[me as u64, 1])?;
        let got = bev.wait()?.unwrap_or_default();
        let want_sum: u64 = mine.iter().map(|&r| r as u64).sum();
        if got != pattern(round + me % 2, len) || sum != [want_sum, mine.len() as u64] {
            return Err(fail(format!("team collectives wrong in round {round}")));
        }
        let total = wev.wait()?.unwrap_or_default();
        if total != ((n * (n - 1) / 2) as u64).to_ne_bytes() {
            return Err(fail(format!("world allreduce wrong in round {round}")));
        }
        rounds += 1;
    }
    half.barrier()?;
    Ok(format!(
        "ok: odd and even teams ran {rounds} rounds of broadcast + allreduce concurrently with world allreduces; rank translation checked"
    ))
}

fn bad(c: &Client) -> Fallible<String> {
    let w = c.world()?;
    let n = w.size();
    let mut buf = [0u8; 8];
    expect_err(
        "a broadcast root outside the team",
        w.broadcast(n, &mut buf),
        &format!("team rank {n} is outside a team of size {n}"),
    )?;
    expect_err(
        "a team rank outside the team",
        w.to_job(n + 3),
        &format!("team rank {} is outside a team of size {n}", n + 3),
    )?;
    expect_err(
        "bit-wise and on f64",
        w.allreduce(CollOp::Band, &[1.0f64]),
        "reduction operator Band is not valid for data type F64 (bit-wise and logical operators take integer types only)",
    )?;
    // Rank 0 gives no colour: it is in no team; the others are.
    let t = w.split((w.rank() != 0).then_some(1), 0)?;
    match (&t, w.rank()) {
        (None, 0) => {}
        (Some(t), r) if r != 0 && t.size() == n - 1 && t.to_team(0).is_none() => {
            let s = t.allreduce(CollOp::Sum, &[1u32])?;
            if s != [(n - 1) as u32] {
                return Err(fail(format!("the team without rank 0 summed {s:?}")));
            }
        }
        _ => return Err(fail(format!("split with no colour on rank 0 gave {t:?}"))),
    }
    // The world still works after the refused calls.
    let s = w.allreduce(CollOp::Sum, &[1u32])?;
    if s != [n as u32] {
        return Err(fail(format!("world sum {s:?}")));
    }
    Ok("ok: 4 bad requests refused (root outside, rank outside, band on f64, no colour)".into())
}

fn lat(c: &Client, count: usize, sizes: &[usize]) -> Fallible<String> {
    let w = c.world()?;
    let mut out = Vec::new();
    for &len in sizes {
        let mut rounds_b = Vec::new();
        let mut rounds_a = Vec::new();
        let mut buf = vec![1u8; len];
        let elems = vec![1u64; len / 8];
        for _ in 0..count / 10 + 1 {
            w.broadcast(0, &mut buf)?;
            w.allreduce(CollOp::Sum, &elems)?;
        }
        for _ in 0..5 {
            w.barrier()?;
            let t = Instant::now();
            for _ in 0..count {
                w.broadcast(0, &mut buf)?;
            }
            rounds_b.push(t.elapsed().as_secs_f64() * 1e6 / count as f64);
            w.barrier()?;
            let t = Instant::now();
            for _ in 0..count {
                w.allreduce(CollOp::Sum, &elems)?;
            }
            rounds_a.push(t.elapsed().as_secs_f64() * 1e6 / count as f64);
        }
        rounds_b.sort_by(f64::total_cmp);
        rounds_a.sort_by(f64::total_cmp);
        out.push(format!(
            "{len} B broadcast {:.2} us allreduce {:.2} us",
            rounds_b[2], rounds_a[2]
        ));
    }
    Ok(format!("ok: {} (median of 5 x {count})", out.join(", ")))
}

/// `lat`'s sizes: the default 8 B and 64 KiB, or a comma-separated list
/// of byte counts that are positive multiples of 8.
fn sizes(arg: Option<&String>) -> Fallible<Vec<usize>> {
    let Some(arg) = arg else {
        return Ok(vec![8, 65536]);
    };
    arg.split(',')
        .map(|s| match s.trim().parse::<usize>() {
            Ok(n) if n > 0 && n % 8 == 0 => Ok(n),
            _ => Err(fail(format!(
                "lat: size {s:?} of {arg:?}: expected byte counts that are positive multiples of 8, comma-separated"
            ))),
        })
        .collect()
}

/// A broadcast as the job's first communication, then the segment's
/// attach, as GASNet-EX's testreduce does (it broadcasts its seed before
/// attaching): a rank done with the broadcast waits in the attach for
/// peers whose sends still need its progress (ofi_rxm sets up a connection
/// only while both sides poll), so the attach must serve the network while
/// it waits (on tcp;ofi_rxm with 4 ranks it hung in most runs).
fn before_attach(c: &Client) -> Fallible<String> {
    let w = c.world()?;
    let want = pattern(7, 4);
    let mut buf = if w.rank() == 0 {
        want.clone()
    } else {
        vec![0xee; 4]
    };
    w.broadcast(0, &mut buf)?;
    if buf != want {
        return Err(fail("the broadcast before the attach delivered wrong data"));
    }
    // Then 1 MiB from the last rank, in many chunks: a member done with it
    // may still owe its children chunks, which it forwards only while it
    // moves its collectives on, in the attach too.
    let root = w.size() - 1;
    let big = pattern(root, 1 << 20);
    let mut buf = if w.rank() == root {
        big.clone()
    } else {
        vec![0xee; 1 << 20]
    };
    w.broadcast(root, &mut buf)?;
    if buf != big {
        return Err(fail(
            "the 1 MiB broadcast before the attach delivered wrong data",
        ));
    }
    c.attach_segment(1 << 20)?;
    w.barrier()?;
    Ok("ok: a broadcast as the first communication and one of 1 MiB, then the attach".into())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).cloned().unwrap_or_default();
    if mode == "par-split" {
        let c = conduit::client::ParClient::init(1).unwrap_or_else(|e| {
            gex_env::eprintln_whole!("gex-coll: {}", e.report());
            std::process::exit(1);
        });
        let r = tests::program::count_arg(&args, 2, 20).and_then(|n| par_split::par_split(&c, n));
        tests::program::finish(&c, "gex-coll", &mode, r);
        return;
    }
    let c = tests::program::init("gex-coll");
    let r = match mode.as_str() {
        "bcast" => bcast(&c),
        "reduce" => reduce(&c),
        "user" => user(&c),
        "teams" => teams(&c),
        "bad" => bad(&c),
        "cache" => cache(&c),
        "attach" => before_attach(&c),
        "unmapped" => unmapped::unmapped(&c),
        "destroy" => {
            tests::program::count_arg(&args, 2, 300).and_then(|n| destroy::destroy(&c, n))
        }
        "lat" => tests::program::count_arg(&args, 2, 1000)
            .and_then(|n| sizes(args.get(3)).and_then(|s| lat(&c, n, &s))),
        _ => Err(fail(format!(
            "unknown mode {mode:?}: expected bcast, reduce, user, teams, bad, cache, attach, destroy [rounds], unmapped, par-split [rounds] or lat <n>"
        ))),
    };
    tests::program::finish(&c, "gex-coll", &mode, r);
}
