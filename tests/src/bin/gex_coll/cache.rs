//! `gex-coll cache`: collectives inside and beyond the registered
//! collective cache, and on the boards.

use super::*;
use crate::user::{mats, my_matrices, product_op, rank_order_product};

pub(super) fn cache(c: &Client) -> Fallible<String> {
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
    let wide = super::user::u64_sum(6000);
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
