//! `gex-tagged all`.

use super::probes::{mprobe, probes, ssend, truncation};
use conduit::client::{Client, Error};
use conduit::tagged::{Comm, Status, TaggedError};
use tests::{fail, Fallible};

pub(crate) type World<'c> =
    Comm<'c, conduit::client::Seq, (), conduit::transport::ofi::OfiTransport>;

pub(crate) fn pattern(seed: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|j| {
            ((j as u32).wrapping_mul(2_654_435_761) >> 7 ^ seed.wrapping_mul(131) ^ j as u32) as u8
        })
        .collect()
}

pub(crate) fn check(cond: bool, what: impl FnOnce() -> String) -> Fallible<()> {
    if cond {
        Ok(())
    } else {
        Err(fail(what()))
    }
}

/// Every check, in order; one summary line.
pub fn all(c: &Client) -> Fallible<String> {
    let w = c.tagged_world()?;
    let layout = c.tagged_layout().ok_or_else(|| fail("no layout"))?;
    let trace = std::env::var_os("GEX_TAGGED_TRACE").is_some();
    // GEX_TAGGED_STEPS=a,b runs only the named steps (for investigation).
    let only = std::env::var("GEX_TAGGED_STEPS")
        .ok()
        .filter(|s| !s.is_empty());
    let run = |name: &str| {
        let yes = only
            .as_deref()
            .is_none_or(|o| o.split(',').any(|s| s == name));
        if yes && trace {
            gex_env::eprintln_whole!("gex-tagged: rank {}: {name}", w.rank());
        }
        yes
    };
    let mut done: Vec<String> = Vec::new();
    if run("sizes") {
        sizes(&w)?;
        done.push("sizes 0 B..16 MiB checked".into());
    }
    if run("wildcards") {
        wildcards(&w)?;
        done.push("wildcards".into());
    }
    if run("ordering") {
        let flood = ordering(&w)?;
        done.push(format!("{flood} messages in order"));
    }
    if run("probes") {
        probes(&w)?;
        done.push("probe/iprobe".into());
    }
    if run("mprobe") {
        // tcp before libfabric 1.19 loses the connection after a
        // truncation: the truncating claim waits for the last step there.
        let core = c.provider().split(';').next().unwrap_or_default();
        let truncate = !(core == "tcp" && conduit::ofi::runtime_version() < (1, 19));
        match mprobe(&w, truncate) {
            Ok(()) => done.push("matched probe (FI_CLAIM)".into()),
            Err(e) => match e.downcast_ref::<Error>() {
                Some(Error::Tagged(TaggedError::ClaimUnsupported { .. })) => {
                    done.push(format!("matched probe refused: {e}"))
                }
                _ => return Err(e),
            },
        }
    }
    if run("ssend") {
        let waited = ssend(&w)?;
        done.push(format!(
            "ssend waited {:.2} s for a late receive",
            waited.as_secs_f64()
        ));
    }
    if run("outstanding") {
        outstanding(&w)?;
        done.push("1000 outstanding operations".into());
    }
    if run("any-some-test") {
        any_some_test(&w)?;
        done.push("wait-any/some/test".into());
    }
    if run("isolation") {
        isolation(&w)?;
        done.push("dup/split isolation".into());
    }
    if run("raw") {
        super::raw::raw(c, &w)?;
        done.push("raw receives".into());
    }
    if run("idle") {
        done.push(super::idle::idle(c, &w)?);
    }
    if run("cancel") {
        cancel(&w)?;
        done.push("cancel".into());
    }
    // Last: on tcp;ofi_rxm before libfabric 1.19 a truncation breaks the
    // connection, and the conduit reports that defect instead.
    if run("truncation") {
        done.push(truncation(c.provider(), &w)?);
    }
    if done.is_empty() {
        return Err(fail(format!(
            "GEX_TAGGED_STEPS={:?} names no step (sizes, wildcards, ordering, probes, mprobe, ssend, \
             truncation, outstanding, any-some-test, isolation, raw, idle, cancel)",
            only.unwrap_or_default()
        )));
    }
    let st = c.tagged_stats().ok_or_else(|| fail("no stats"))?;
    Ok(format!(
        "ok: tag mode {} on {} ranks; {} (injects {}, sends {}, copied {}, receives {}, acks {}, probes {}, send-window waits {})",
        layout.mode,
        w.size(),
        done.join(", "),
        st.injects.get(),
        st.sends.get(),
        st.copied.get(),
        st.recvs.get(),
        st.acks.get(),
        st.probes.get(),
        st.send_window_waits.get()
    ))
}

const SIZES: [usize; 12] = [
    0,
    1,
    7,
    8,
    63,
    1024,
    4095,
    65_536,
    100_003,
    1 << 20,
    4 << 20,
    16 << 20,
];

/// A ring at each size: send to the next rank, receive from the previous.
fn sizes(w: &World) -> Fallible<()> {
    let (me, n) = (w.rank(), w.size());
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    for (i, &len) in SIZES.iter().enumerate() {
        let out = pattern(me * 1000 + i as u32, len);
        let mut got = vec![0u8; len];
        let st = w.scope(|s| {
            let r = s.irecv(w, &mut got, Some(prev), Some(i as u32))?;
            let q = s.isend(w, &out, next, i as u32)?;
            s.wait(q)?;
            s.wait(r)
        })?;
        check(
            st.source == prev && st.tag == i as u32 && st.len == len && !st.truncated,
            || format!("size {len}: status {st:?}"),
        )?;
        check(got == pattern(prev * 1000 + i as u32, len), || {
            format!("size {len}: data differ")
        })?;
    }
    Ok(())
}

/// Every rank but 0 sends to 0 with tag 10 + rank; rank 0 receives them all
/// with wildcard source and tag.
fn wildcards(w: &World) -> Fallible<()> {
    let (me, n) = (w.rank(), w.size());
    if me == 0 {
        let mut seen = vec![false; n as usize];
        for _ in 1..n {
            let mut b = [0u8; 4];
            let st = w.recv(&mut b, None, None)?;
            let src = u32::from_le_bytes(b);
            check(
                st.source == src && st.tag == 10 + src && st.len == 4 && !seen[src as usize],
                || format!("wildcard receive: {st:?} payload {src}"),
            )?;
            seen[src as usize] = true;
        }
    } else {
        w.send(&me.to_le_bytes(), 0, 10 + me)?;
    }
    if std::env::var_os("GEX_TAGGED_TRACE").is_some() {
        gex_env::eprintln_whole!("gex-tagged: rank {me}: wildcards received, barrier");
    }
    w.barrier()?;
    Ok(())
}

/// A flood of messages with one tag to the next rank, matched in the
/// order sent by receives posted beforehand (a wildcard tag, mixed sizes:
/// injected and not); then every other rank's flood to rank 0, received
/// with a wildcard source: each sender's messages in its order.
fn ordering(w: &World) -> Fallible<usize> {
    let (n_msgs, big) = flood_shape()?;
    #[allow(non_snake_case)]
    let (N, BIG) = (n_msgs, big);
    let (me, n) = (w.rank(), w.size());
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    let out: Vec<Vec<u8>> = (0..N)
        .map(|i| {
            let mut m = (i as u32).to_le_bytes().to_vec();
            if i % 10 == 0 {
                m.resize(BIG, 7);
            }
            m
        })
        .collect();
    let mut got = vec![vec![0u8; BIG]; N];
    let statuses = w.scope(|s| {
        let mut reqs = Vec::with_capacity(2 * N);
        for g in got.iter_mut() {
            reqs.push(s.irecv(w, g, Some(prev), None)?);
        }
        w.barrier()?;
        for m in &out {
            reqs.push(s.isend(w, m, next, 5)?);
        }
        Ok::<_, conduit::client::Error>(s.wait_all(reqs))
    })?;
    for (i, st) in statuses.into_iter().take(N).enumerate() {
        let st = st?;
        let seq = u32::from_le_bytes([got[i][0], got[i][1], got[i][2], got[i][3]]) as usize;
        let want = if i % 10 == 0 { BIG } else { 4 };
        check(seq == i && st.len == want && st.tag == 5, || {
            format!("flood: receive {i} matched message {seq} ({st:?})")
        })?;
    }
    if std::env::var_os("GEX_TAGGED_TRACE").is_some() {
        gex_env::eprintln_whole!("gex-tagged: rank {me}: the ring flood arrived");
    }
    w.barrier()?;
    let mut from0 = vec![[0u8; 4]; if me == 0 { N * (n as usize - 1) } else { 0 }];
    let statuses = w.scope(|s| {
        let mut reqs = Vec::new();
        for g in from0.iter_mut() {
            reqs.push(s.irecv(w, g, None, Some(6))?);
        }
        w.barrier()?;
        if me != 0 {
            for m in &out {
                reqs.push(s.isend(w, &m[..4], 0, 6)?);
            }
        }
        Ok::<_, conduit::client::Error>(s.wait_all(reqs))
    })?;
    if me == 0 {
        let mut next_of = vec![0usize; n as usize];
        for (k, st) in statuses.into_iter().enumerate() {
            let st = st?;
            let i = u32::from_le_bytes(from0[k]) as usize;
            check(i == next_of[st.source as usize], || {
                format!(
                    "from rank {}: message {i} where {} was due",
                    st.source, next_of[st.source as usize]
                )
            })?;
            next_of[st.source as usize] += 1;
        }
    }
    w.barrier()?;
    Ok(N * n as usize + N * (n as usize - 1))
}

/// The flood's messages per rank and the size of every tenth:
/// `GEX_TAGGED_FLOOD=<messages>,<bytes>` (default 2000,3000).
fn flood_shape() -> Fallible<(usize, usize)> {
    let Ok(v) = std::env::var("GEX_TAGGED_FLOOD") else {
        return Ok((2000, 3000));
    };
    let bad = || {
        fail(format!(
            "GEX_TAGGED_FLOOD={v:?}: expected <messages>,<bytes> with messages >= 1 and bytes >= 4"
        ))
    };
    let (a, b) = v.split_once(',').ok_or_else(bad)?;
    let (n, big) = (a.trim().parse::<usize>(), b.trim().parse::<usize>());
    match (n, big) {
        (Ok(n), Ok(big)) if n >= 1 && big >= 4 => Ok((n, big)),
        _ => Err(bad()),
    }
}

/// 1,000 receives and 1,000 sends outstanding, completed by one wait-all.
fn outstanding(w: &World) -> Fallible<()> {
    const N: usize = 1000;
    let (me, n) = (w.rank(), w.size());
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    let out: Vec<[u8; 8]> = (0..N)
        .map(|i| ((me as u64) << 32 | i as u64).to_le_bytes())
        .collect();
    let mut got = vec![[0u8; 8]; N];
    w.scope(|s| {
        let mut reqs = Vec::with_capacity(2 * N);
        for (i, g) in got.iter_mut().enumerate() {
            reqs.push(s.irecv(w, g, Some(prev), Some(i as u32))?);
        }
        for (i, o) in out.iter().enumerate().rev() {
            reqs.push(s.isend(w, o, next, i as u32)?);
        }
        for r in s.wait_all(reqs) {
            r?;
        }
        Ok::<(), conduit::client::Error>(())
    })?;
    for (i, g) in got.iter().enumerate() {
        check(
            u64::from_le_bytes(*g) == (prev as u64) << 32 | i as u64,
            || format!("outstanding {i}: data differ"),
        )?;
    }
    w.barrier()?;
    Ok(())
}

/// wait-any, wait-some and test.
fn any_some_test(w: &World) -> Fallible<()> {
    let (me, n) = (w.rank(), w.size());
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    let mut bufs = [[0u8; 4]; 3];
    let mut late = [0u8; 4];
    w.scope(|s| {
        let mut reqs = Vec::new();
        for (i, b) in bufs.iter_mut().enumerate() {
            reqs.push(s.irecv(w, b, Some(prev), Some(200 + i as u32))?);
        }
        // Only tag 201 is sent first (the barrier: every rank has sent
        // it, and none has sent the others yet): wait-any must name it.
        w.send(&1u32.to_le_bytes(), next, 201)?;
        w.barrier()?;
        let (i, st) = s
            .wait_any(&mut reqs)
            .ok_or_else(|| fail("wait-any: nothing"))?;
        let st = st?;
        check(i == 1 && st.tag == 201, || {
            format!("wait-any gave {i} {st:?}")
        })?;
        // The others are sent once every rank's wait-any has returned.
        w.barrier()?;
        w.send(&0u32.to_le_bytes(), next, 200)?;
        w.send(&2u32.to_le_bytes(), next, 202)?;
        let mut done = 0;
        while !reqs.is_empty() {
            for (_, st) in s.wait_some(&mut reqs) {
                st?;
                done += 1;
            }
        }
        check(done == 2, || format!("wait-some finished {done} of 2"))?;
        let mut r = s.irecv(w, &mut late, Some(prev), Some(203))?;
        let early = s.test(r);
        r = match early {
            Ok(st) => return Err(fail(format!("test: done before the send: {st:?}"))),
            Err(r) => r,
        };
        w.send(&3u32.to_le_bytes(), next, 203)?;
        loop {
            match s.test(r) {
                Ok(st) => {
                    st?;
                    break;
                }
                Err(again) => r = again,
            }
        }
        Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
    })?;
    for (i, b) in bufs.iter().enumerate() {
        check(u32::from_le_bytes(*b) == i as u32, || {
            format!("wait-any/some buffer {i}")
        })?;
    }
    w.barrier()?;
    Ok(())
}

/// The same tag on the world, a dup and two splits never cross-matches:
/// sent in the order split, dup, world and received in the opposite order.
fn isolation(w: &World) -> Fallible<()> {
    let (me, n) = (w.rank(), w.size());
    let dup = w.dup()?;
    let half = w
        .split(Some(me % 2), -(me as i32))?
        .ok_or_else(|| fail("split: no communicator"))?;
    let none = w.split(None, 0)?;
    check(none.is_none(), || {
        "split with no colour gave a communicator".into()
    })?;
    check(
        dup.id() != w.id() && half.id() != dup.id() && half.id() != w.id(),
        || format!("ids: world {} dup {} split {}", w.id(), dup.id(), half.id()),
    )?;
    // In the split, ranks are ordered by key = -world rank: reversed.
    let members: Vec<u32> = (0..n).filter(|r| r % 2 == me % 2).rev().collect();
    check(
        half.size() == members.len() as u32 && half.world_rank(half.rank())? == me,
        || format!("split: rank {} of {}", half.rank(), half.size()),
    )?;
    let hnext = (half.rank() + 1) % half.size();
    let hprev = (half.rank() + half.size() - 1) % half.size();
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    half.send(b"split", hnext, 5)?;
    dup.send(b"dup", next, 5)?;
    w.send(b"world", next, 5)?;
    let mut b = [0u8; 8];
    let st = w.recv(&mut b, None, Some(5))?;
    check(&b[..st.len] == b"world" && st.source == prev, || {
        format!("world got {:?}", &b[..st.len])
    })?;
    let st = dup.recv(&mut b, None, None)?;
    check(&b[..st.len] == b"dup" && st.source == prev, || {
        format!("dup got {:?}", &b[..st.len])
    })?;
    let st = half.recv(&mut b, None, Some(5))?;
    check(&b[..st.len] == b"split" && st.source == hprev, || {
        format!("split got {:?}", &b[..st.len])
    })?;
    half.free()?;
    let (stale, dup_id) = (dup.clone(), dup.id());
    dup.free()?;
    // A freed id is reused.
    let again = w.dup()?;
    check(again.id() <= 2, || {
        format!("id after frees: {}", again.id())
    })?;
    // A clone of a freed communicator is refused, not sent on the new
    // one that may have its id.
    tests::program::expect_err(
        "send on a freed communicator's clone",
        stale.send(b"stale", next, 5),
        &format!("communicator {dup_id} was freed (Comm::free); its clones may not be used"),
    )?;
    tests::program::expect_err(
        "receive on a freed communicator's clone",
        stale.recv(&mut b, None, None),
        &format!("communicator {dup_id} was freed (Comm::free); its clones may not be used"),
    )?;
    again.free()?;
    w.barrier()?;
    Ok(())
}

/// A receive never matched is cancelled.
fn cancel(w: &World) -> Fallible<()> {
    let mut b = [0u8; 4];
    let st: Status = w.scope(|s| {
        let r = s.irecv(w, &mut b, None, Some(999))?;
        s.cancel(&r);
        s.wait(r)
    })?;
    check(st.cancelled, || format!("cancelled receive: {st:?}"))?;
    w.barrier()?;
    Ok(())
}
