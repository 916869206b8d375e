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

/// Rank r's element i for a reduction with `op`.
fn value(op: CollOp, dt: DType, r: usize, i: usize) -> f64 {
    let x = ((r * 7 + i * 3) % 11) as f64;
    match op {
        // 1 or 2: a float product of powers of two is exact in any
        // order (3s lose bits past 2^24 and make the tree's order show
        // at a few dozen ranks).
        CollOp::Prod => 1.0 + ((r + i) % 2) as f64,
        CollOp::Land | CollOp::Lor => ((r + i) % 3 == 0) as u8 as f64,
        CollOp::Min | CollOp::Max if !matches!(dt, DType::U32 | DType::U64) => x - 5.0,
        _ => x,
    }
}

fn fold<V: CollValue + std::fmt::Debug + PartialEq>(
    op: CollOp,
    n: usize,
    len: usize,
    make: impl Fn(usize, usize) -> V,
    comb: impl Fn(CollOp, V, V) -> V,
) -> Vec<V> {
    (0..len)
        .map(|i| (1..n).fold(make(0, i), |acc, r| comb(op, acc, make(r, i))))
        .collect()
}

macro_rules! int_comb {
    ($t:ty) => {
        |op: CollOp, a: $t, b: $t| -> $t {
            match op {
                CollOp::Sum => a.wrapping_add(b),
                CollOp::Prod => a.wrapping_mul(b),
                CollOp::Min => a.min(b),
                CollOp::Max => a.max(b),
                CollOp::Band => a & b,
                CollOp::Bor => a | b,
                CollOp::Bxor => a ^ b,
                CollOp::Land => ((a != 0) && (b != 0)) as $t,
                CollOp::Lor => ((a != 0) || (b != 0)) as $t,
            }
        }
    };
}

macro_rules! float_comb {
    ($t:ty) => {
        |op: CollOp, a: $t, b: $t| -> $t {
            match op {
                CollOp::Sum => a + b,
                CollOp::Prod => a * b,
                CollOp::Min => {
                    if b < a {
                        b
                    } else {
                        a
                    }
                }
                _ => {
                    if b > a {
                        b
                    } else {
                        a
                    }
                }
            }
        }
    };
}

const INT_OPS: [CollOp; 9] = [
    CollOp::Sum,
    CollOp::Prod,
    CollOp::Min,
    CollOp::Max,
    CollOp::Band,
    CollOp::Bor,
    CollOp::Bxor,
    CollOp::Land,
    CollOp::Lor,
];
const FLOAT_OPS: [CollOp; 4] = [CollOp::Sum, CollOp::Prod, CollOp::Min, CollOp::Max];

fn check_op<V: CollValue + std::fmt::Debug + PartialEq>(
    w: &T<'_>,
    op: CollOp,
    from: impl Fn(f64) -> V + Copy,
    comb: impl Fn(CollOp, V, V) -> V + Copy,
) -> Fallible<usize> {
    let (me, n) = (w.rank(), w.size());
    let mut checks = 0;
    for len in [3usize, 5000] {
        let make = |r: usize, i: usize| from(value(op, V::DTYPE, r, i));
        let mine: Vec<V> = (0..len).map(|i| make(me, i)).collect();
        let want = fold(op, n, len, make, comb);
        let all = w.allreduce(op, &mine)?;
        if all != want {
            return Err(fail(format!(
                "allreduce {op:?} on {:?} x{len}: got {:?}.., expected {:?}..",
                V::DTYPE,
                &all[..3.min(len)],
                &want[..3.min(len)]
            )));
        }
        let root = (len + op as usize) % n;
        let got = w.reduce(root, op, &mine)?;
        match got {
            Some(v) if me == root && v == want => {}
            None if me != root => {}
            other => {
                return Err(fail(format!(
                    "reduce {op:?} on {:?} x{len} to {root}: got {:?}",
                    V::DTYPE,
                    other.map(|v| v.len())
                )))
            }
        }
        checks += 1;
    }
    Ok(checks)
}

fn reduce(c: &Client) -> Fallible<String> {
    let w = c.world()?;
    let mut n = 0;
    for op in INT_OPS {
        n += check_op::<i32>(&w, op, |x| x as i32, int_comb!(i32))?;
        n += check_op::<u32>(&w, op, |x| x as u32, int_comb!(u32))?;
        n += check_op::<i64>(&w, op, |x| x as i64, int_comb!(i64))?;
        n += check_op::<u64>(&w, op, |x| x as u64, int_comb!(u64))?;
    }
    for op in FLOAT_OPS {
        n += check_op::<f32>(&w, op, |x| x as f32, float_comb!(f32))?;
        n += check_op::<f64>(&w, op, |x| x, float_comb!(f64))?;
    }
    Ok(format!(
        "ok: {n} reduce-to-one + reduce-to-all checks over 44 operator x type pairs exact"
    ))
}

type Mat = [u64; 4];

fn mat_mul(a: Mat, b: Mat) -> Mat {
    let m = |x: u64, y: u64| x.wrapping_mul(y);
    [
        m(a[0], b[0]).wrapping_add(m(a[1], b[2])),
        m(a[0], b[1]).wrapping_add(m(a[1], b[3])),
        m(a[2], b[0]).wrapping_add(m(a[3], b[2])),
        m(a[2], b[1]).wrapping_add(m(a[3], b[3])),
    ]
}

fn mat_of(r: usize, k: usize) -> Mat {
    let r = r as u64 + 2 + k as u64;
    [r, 1, 3, r * r + 1]
}

fn mats(b: &[u8]) -> Vec<Mat> {
    b.chunks_exact(32)
        .map(|c| {
            let mut m = [0u64; 4];
            for (i, w) in c.chunks_exact(8).enumerate() {
                m[i] = u64::from_ne_bytes(w.try_into().unwrap());
            }
            m
        })
        .collect()
}

/// The product of 2x2 u64 matrices (32-byte elements), not commutative.
fn product_op() -> Reduction {
    Reduction::User {
        op: UserOp {
            // Called on whole chunks: every element of `acc` and `other`.
            f: Arc::new(|acc: &mut [u8], other: &[u8]| {
                let prods: Vec<Mat> = mats(acc)
                    .into_iter()
                    .zip(mats(other))
                    .map(|(a, b)| mat_mul(a, b))
                    .collect();
                for (e, r) in acc.chunks_exact_mut(32).zip(prods) {
                    for (i, x) in r.iter().enumerate() {
                        e[i * 8..i * 8 + 8].copy_from_slice(&x.to_ne_bytes());
                    }
                }
            }),
            commutative: false,
        },
        elem_size: 32,
    }
}

/// This rank's `count` matrices.
fn my_matrices(me: usize, count: usize) -> Vec<u8> {
    (0..count)
        .flat_map(|k| mat_of(me, k).into_iter().flat_map(u64::to_ne_bytes))
        .collect()
}

/// The `count` products in rank order, computed locally.
fn rank_order_product(n: usize, count: usize) -> Vec<Mat> {
    (0..count)
        .map(|k| (1..n).fold(mat_of(0, k), |acc, r| mat_mul(acc, mat_of(r, k))))
        .collect()
}

/// An allreduce of the product of every rank's `count` matrices.
fn ordered_product(w: &T, count: usize) -> Fallible<Vec<Mat>> {
    let all = w
        .allreduce_nb(product_op(), my_matrices(w.rank(), count))?
        .wait()?
        .unwrap_or_default();
    Ok(mats(&all))
}

fn user(c: &Client) -> Fallible<String> {
    let w = c.world()?;
    let (me, n) = (w.rank(), w.size());
    let count = 600;
    let want = rank_order_product(n, count);
    let reverse: Vec<Mat> = (0..count)
        .map(|k| {
            (0..n - 1)
                .rev()
                .fold(mat_of(n - 1, k), |acc, r| mat_mul(acc, mat_of(r, k)))
        })
        .collect();
    if n > 1 && want == reverse {
        return Err(fail(
            "the test's matrices commute: the order would not show",
        ));
    }
    // 4 matrices (one small exchange) and 600 (several chunks).
    for count in [4, count] {
        if ordered_product(&w, count)? != rank_order_product(n, count) {
            return Err(fail(format!(
                "non-commutative allreduce of {count} matrices: not the product in rank order"
            )));
        }
    }
    let mine = my_matrices(me, count);
    let root = n - 1;
    let got = w.reduce_nb(root, product_op(), mine)?.wait()?;
    if me == root && got.as_deref().map(mats) != Some(want) {
        return Err(fail(
            "non-commutative reduce: not the product in rank order",
        ));
    }
    let sum = Reduction::User {
        op: UserOp {
            f: Arc::new(|acc: &mut [u8], other: &[u8]| {
                for (a, o) in acc.chunks_exact_mut(8).zip(other.chunks_exact(8)) {
                    let s = u64::from_ne_bytes(a.try_into().unwrap())
                        + u64::from_ne_bytes(o.try_into().unwrap());
                    a.copy_from_slice(&s.to_ne_bytes());
                }
            }),
            commutative: true,
        },
        elem_size: 8,
    };
    let s = w
        .allreduce_nb(sum, (me as u64 + 1).to_ne_bytes().to_vec())?
        .wait()?
        .unwrap_or_default();
    let want = (n * (n + 1) / 2) as u64;
    if s != want.to_ne_bytes() {
        return Err(fail(format!(
            "commutative user sum: got {s:?}, expected {want}"
        )));
    }
    Ok(format!(
        "ok: non-commutative user reduction of {count} 2x2 matrices equals the product in rank order (not the reverse); commutative user sum {want}"
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

fn cache(c: &Client) -> Fallible<String> {
    let w = c.world()?;
    let (n, me) = (w.size(), w.rank());
    let data = 32 * 4096;
    let mut checks = 0;
    for len in [8usize, 1000, 20_000, data, data + 8] {
        for root in [1 % n, 0] {
            let mut buf = vec![0u8; len];
            if me == root {
                buf = pattern(root, len);
            }
            w.broadcast(root, &mut buf)?;
            if buf != pattern(root, len) {
                return Err(fail(format!(
                    "broadcast of {len} B from {root}: wrong data"
                )));
            }
            let v: Vec<u64> = (0..len / 8).map(|i| (i * n + me) as u64).collect();
            let sum = w.allreduce(CollOp::Sum, &v)?;
            let want: Vec<u64> = (0..len / 8)
                .map(|i| (0..n).map(|r| (i * n + r) as u64).sum())
                .collect();
            if sum != want {
                return Err(fail(format!("allreduce of {len} B: wrong sum")));
            }
            checks += 2;
        }
    }
    // A user type wider than a slot: its chunks cannot go through slots.
    let wide = Reduction::User {
        op: UserOp {
            f: Arc::new(|acc: &mut [u8], other: &[u8]| {
                for (a, b) in acc.chunks_exact_mut(8).zip(other.chunks_exact(8)) {
                    let s = u64::from_ne_bytes(a.try_into().unwrap())
                        + u64::from_ne_bytes(b.try_into().unwrap());
                    a.copy_from_slice(&s.to_ne_bytes());
                }
            }),
            commutative: true,
        },
        elem_size: 6000,
    };
    let src: Vec<u8> = (0..1500u64)
        .flat_map(|i| (i + me as u64).to_ne_bytes())
        .collect();
    let got = w.allreduce_nb(wide, src)?.wait()?.unwrap_or_default();
    let ok = got.len() == 12_000
        && got.chunks_exact(8).enumerate().all(|(i, b)| {
            u64::from_ne_bytes(b.try_into().unwrap())
                == (0..n as u64).map(|r| i as u64 + r).sum::<u64>()
        });
    if !ok {
        return Err(fail("allreduce of 6000-byte user elements: wrong sum"));
    }
    checks += 1;
    // Small reductions to all in flight at once (more than the two board
    // buffers), a non-commutative one among them, waited in reverse order.
    let mut evs = Vec::new();
    for k in 0..6u64 {
        let ev = if k == 3 {
            w.allreduce_nb(product_op(), my_matrices(me, 2))?
        } else {
            let sum = Reduction::Builtin(CollOp::Sum, DType::U64);
            w.allreduce_nb(sum, (k * 100 + me as u64).to_ne_bytes().to_vec())?
        };
        evs.push((k, ev));
    }
    while let Some((k, ev)) = evs.pop() {
        let got = ev.wait()?.unwrap_or_default();
        let ok = if k == 3 {
            mats(&got) == rank_order_product(n, 2)
        } else {
            let want: u64 = (0..n as u64).map(|r| k * 100 + r).sum();
            got == want.to_ne_bytes()
        };
        if !ok {
            return Err(fail(format!(
                "reduction to all {k} of 6 in flight: wrong result"
            )));
        }
        checks += 1;
    }
    // Broadcasts of 1-64 KiB in flight at once (more than the two board
    // buffers where a team that shares memory posts them), from two roots,
    // waited in reverse order.
    let mut evs = Vec::new();
    for k in 0..5usize {
        let root = if k % 2 == 0 { 0 } else { 1 % n };
        let src = (me == root).then(|| pattern(root + 10 * k, 20_000));
        evs.push((k, root, w.broadcast_nb(root, 20_000, src)?));
    }
    while let Some((k, root, ev)) = evs.pop() {
        if ev.wait()? != Some(pattern(root + 10 * k, 20_000)) {
            return Err(fail(format!(
                "broadcast {k} of 5 in flight (20,000 B from {root}): wrong data"
            )));
        }
        checks += 1;
    }
    // Non-blocking, with the middle event dropped unwaited, then a flush.
    let a = w.broadcast_nb(0, 64, (me == 0).then(|| pattern(0, 64)))?;
    let max = Reduction::Builtin(CollOp::Max, DType::U32);
    let b = w.allreduce_nb(max, (me as u32).to_ne_bytes().to_vec())?;
    let sum = Reduction::Builtin(CollOp::Sum, DType::U64);
    let d = w.reduce_nb(n - 1, sum, 1u64.to_ne_bytes().to_vec())?;
    drop(b);
    w.flush()?;
    if a.wait()? != Some(pattern(0, 64)) {
        return Err(fail("non-blocking broadcast: wrong data"));
    }
    let r = d.wait()?;
    let want = (me == n - 1).then(|| (n as u64).to_ne_bytes().to_vec());
    if r != want {
        return Err(fail(format!(
            "non-blocking reduce gave {r:?}, expected {want:?}"
        )));
    }
    checks += 2;
    // On a team whose members share memory (at most 8), broadcasts of at
    // most 1 KiB go by the AM rings, not through the cache: the root's
    // copies into mapped caches do not grow.
    if n <= 8 && (0..n).all(|r| c.is_shared(r)) {
        for len in [8usize, 1024] {
            let before = c.stats().coll_cache_local;
            let mut buf = if me == 0 {
                pattern(7, len)
            } else {
                vec![0u8; len]
            };
            w.broadcast(0, &mut buf)?;
            let copies = c.stats().coll_cache_local - before;
            if buf != pattern(7, len) || copies != 0 {
                return Err(fail(format!(
                    "small broadcast of {len} B on a team that shares memory: wrong data or {copies} copies into caches"
                )));
            }
        }
    }
    checks += blocking_on_the_board(c, &w)?;
    let st = c.stats();
    Ok(format!(
        "ok: {checks} collectives inside and beyond the collective cache checked, an unwaited event flushed; COLL_CACHE_LOCAL={} COLL_CACHE_RMA={} COLL_BOARD={} COLL_BOARD_BCAST={} COLL_BOARD_NOW={}",
        st.coll_cache_local, st.coll_cache_rma, st.coll_board, st.coll_board_bcast, st.coll_board_now
    ))
}

/// Blocking reductions to all through the boards (a team that shares
/// memory) and broadcasts posted on the root's board run at once on a
/// member with nothing of the team in flight (`COLL_BOARD_NOW`); a
/// reduction runs as a collective on a member with a broadcast still
/// unwaited: the members cannot tell which way the others went.
/// Returns the collectives checked.
fn blocking_on_the_board(c: &Client, w: &T<'_>) -> Fallible<usize> {
    let (n, me) = (w.size(), w.rank());
    w.flush()?;
    let (board0, now0) = (c.stats().coll_board, c.stats().coll_board_now);
    for len in [8usize, 20_000] {
        let v: Vec<u64> = (0..len / 8).map(|i| (i * n + me) as u64).collect();
        let want: Vec<u64> = (0..len / 8)
            .map(|i| (0..n).map(|r| (i * n + r) as u64).sum())
            .collect();
        if w.allreduce(CollOp::Sum, &v)? != want {
            return Err(fail(format!(
                "blocking allreduce of {len} B with nothing in flight: wrong sum"
            )));
        }
    }
    let posts = c.stats().coll_board - board0;
    let now = c.stats().coll_board_now - now0;
    if now != posts {
        return Err(fail(format!(
            "2 blocking allreduces with nothing else in flight posted {posts} times on the board, {now} of them at once"
        )));
    }
    // A blocking broadcast posted on its root's board (20,000 bytes) runs
    // at once on every member, the root's post counted there.
    let (bcast0, now0) = (c.stats().coll_board_bcast, c.stats().coll_board_now);
    let root = 1 % n;
    let mut buf = if me == root {
        pattern(5, 20_000)
    } else {
        vec![0u8; 20_000]
    };
    w.broadcast(root, &mut buf)?;
    if buf != pattern(5, 20_000) {
        return Err(fail(
            "blocking broadcast of 20,000 B with nothing in flight: wrong data",
        ));
    }
    let bcasts = c.stats().coll_board_bcast - bcast0;
    let now = c.stats().coll_board_now - now0;
    let want = if me == root { (1, 1) } else { (0, 1) };
    if posts > 0 && (bcasts, now) != want {
        return Err(fail(format!(
            "blocking broadcast of 20,000 B from {root} with nothing in flight: {bcasts} posts as root, {now} run at once (expected {want:?})"
        )));
    }
    // Back-to-back blocking broadcasts from one root: it runs up to two
    // posts ahead of its readers, then waits for a buffer.
    for k in 0..6 {
        let mut buf = if me == 0 {
            pattern(20 + k, 20_000)
        } else {
            vec![0u8; 20_000]
        };
        w.broadcast(0, &mut buf)?;
        if buf != pattern(20 + k, 20_000) {
            return Err(fail(format!(
                "blocking broadcast {k} of 6 back to back (20,000 B): wrong data"
            )));
        }
    }
    // Rank 0 is the root of a broadcast by the AM rings, complete there at
    // once; it starts it well after the others, who find it still in
    // flight at the reduction and run that as a collective.
    if me == 0 {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let ev = w.broadcast_nb(0, 64, (me == 0).then(|| pattern(3, 64)))?;
    let now0 = c.stats().coll_board_now;
    let sum = w.allreduce(CollOp::Sum, &[me as u64 + 1])?;
    let ran_now = c.stats().coll_board_now - now0;
    if sum != [(n * (n + 1) / 2) as u64] {
        return Err(fail(format!(
            "blocking allreduce with a broadcast in flight: {sum:?}"
        )));
    }
    if ev.wait()? != Some(pattern(3, 64)) {
        return Err(fail(
            "broadcast in flight across a blocking allreduce: wrong data",
        ));
    }
    if posts > 0 && ran_now != u64::from(me == 0) {
        return Err(fail(format!(
            "blocking allreduce with a broadcast from rank 0 in flight: {ran_now} run at once here (rank 0, whose broadcast is complete, runs it at once; the others as a collective)"
        )));
    }
    // Members giving a blocking broadcast posted on the board different
    // lengths: each reader reports the root's length against its own and
    // acknowledges the post, the root completes, and the team goes on.
    // Checked where the team posts on the board (the line's COLL_BOARD is
    // then above 0); not counted, so the line's count of 45 is the same on
    // every path.
    if posts > 0 {
        let root = 1 % n;
        let len = if me == root { 20_000 } else { 10_000 };
        let mut buf = if me == root {
            pattern(9, len)
        } else {
            vec![0u8; len]
        };
        let r = w.broadcast(root, &mut buf);
        if me == root {
            r?;
        } else {
            expect_err(
                "a blocking broadcast whose root gives 20,000 B and this rank 10,000",
                r,
                &format!("chunk 0 from team rank {root} has 20000 bytes; expected 10000"),
            )?;
        }
        let sum = w.allreduce(CollOp::Sum, &[me as u64 + 1])?;
        if sum != [(n * (n + 1) / 2) as u64] {
            return Err(fail(format!(
                "allreduce after a broadcast with mismatched lengths: {sum:?}"
            )));
        }
    }
    Ok(11)
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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).cloned().unwrap_or_default();
    let count = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000usize);
    let c = tests::program::init("gex-coll");
    let r = match mode.as_str() {
        "bcast" => bcast(&c),
        "reduce" => reduce(&c),
        "user" => user(&c),
        "teams" => teams(&c),
        "bad" => bad(&c),
        "cache" => cache(&c),
        "lat" => sizes(args.get(3)).and_then(|s| lat(&c, count, &s)),
        _ => Err(fail(format!(
            "unknown mode {mode:?}: expected bcast, reduce, user, teams, bad, cache or lat <n>"
        ))),
    };
    tests::program::finish(&c, "gex-coll", &mode, r);
}
