//! `destroy [rounds]`: teams made, used and destroyed in a loop. Each
//! round splits the world twice (halves by parity, in reverse rank order,
//! and the whole), runs on both collectives that take the collective
//! cache (small and 4 KiB reductions to all, a 4 KiB broadcast) and drops
//! one non-blocking reduction unwaited, then destroys both; then splits a
//! team that runs one reduction only before
//! its destroy (in pairs, whose second member polls before it), and one
//! that runs none. The rank's
//! descriptor limit is lowered to 64 above what it holds, so teams that
//! kept their memory files would run out within the rounds; after the
//! rounds, the descriptors and mappings the rank holds must not have
//! grown (counted after the first rounds, once every connection a provider
//! makes on first use is made). Also: the world team cannot be destroyed, and a team retired
//! through a shared handle refuses later collectives.

use crate::{pattern, T};
use conduit::client::{Client, CollOp, Error, Reduction};
use nix::sys::resource::{getrlimit, setrlimit, Resource};
use tests::program::expect_err;
use tests::{fail, Fallible};

/// Descriptors this process holds.
fn fds() -> Fallible<usize> {
    Ok(std::fs::read_dir("/proc/self/fd")?.count())
}

/// Mappings this process holds.
fn maps() -> Fallible<usize> {
    Ok(std::fs::read_to_string("/proc/self/maps")?.lines().count())
}

/// Mappings a process may add without a team behind them (the allocator's
/// arenas, a provider's lazily mapped regions).
const MAPS_SLACK: usize = 8;

/// Rounds before the rank's descriptors and mappings are counted.
const WARM_UP: usize = 9;

/// Use `t` as a round does; `round` varies the data.
fn exercise(t: &T<'_>, round: usize) -> Fallible<()> {
    let me = t.rank() as u64;
    let n = t.size() as u64;
    let got = t.allreduce(CollOp::Sum, &[me + round as u64])?;
    let want = n * (n - 1) / 2 + n * round as u64;
    if got != [want] {
        return Err(fail(format!(
            "{t:?}: allreduce summed {got:?}, not [{want}]"
        )));
    }
    let big: Vec<u64> = (0..512).map(|j| j + me).collect();
    let got = t.allreduce(CollOp::Max, &big)?;
    if got.iter().enumerate().any(|(j, &v)| v != j as u64 + n - 1) {
        return Err(fail(format!("{t:?}: the 4 KiB allreduce is wrong")));
    }
    let root = round % t.size();
    let want = pattern(root + round, 4096);
    let mut buf = if t.rank() == root {
        want.clone()
    } else {
        vec![0; 4096]
    };
    t.broadcast(root, &mut buf)?;
    if buf != want {
        return Err(fail(format!(
            "{t:?}: the 4 KiB broadcast from {root} is wrong"
        )));
    }
    // Dropped unwaited: the destroy finishes it first.
    let reduction = Reduction::Builtin(CollOp::Bor, conduit::client::DType::U64);
    drop(t.allreduce_nb(reduction, (me << 3).to_ne_bytes().to_vec())?);
    Ok(())
}

pub fn destroy(c: &Client, rounds: usize) -> Fallible<String> {
    let me = c.rank();
    let n = c.size();
    let w = c.world()?;
    expect_err(
        "destroying the world team",
        c.world()?.destroy(),
        "the world team (GASNet-EX's primordial team) cannot be destroyed: only teams made by a split can",
    )?;
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    let limit = (fds()? as u64 + 64).min(soft);
    setrlimit(Resource::RLIMIT_NOFILE, limit, hard)?;
    let mut before = None;
    for round in 0..rounds {
        let half = w
            .split(Some(me as u32 % 2), (n - me) as u32)?
            .ok_or_else(|| fail("the split by parity gave no team"))?;
        let whole = w
            .split(Some(7), 0)?
            .ok_or_else(|| fail("the split of the whole gave no team"))?;
        exercise(&half, round)?;
        exercise(&whole, round)?;
        half.destroy()?;
        whole.destroy()?;
        // A team with one collective only, and one with none. In pairs
        // of job ranks, the second member polls a while before the
        // collective: the first member's chunks of the cache's record
        // exchange and of the reduction are held for it when it starts
        // them, so both complete at once and the exchange's end (and the
        // agreement that follows it) comes later there than elsewhere.
        let once = w
            .split(Some(me as u32 / 2), 0)?
            .ok_or_else(|| fail("the split in pairs gave no team"))?;
        if once.rank() == 1 {
            let until = std::time::Instant::now() + std::time::Duration::from_millis(2);
            while std::time::Instant::now() < until {
                c.poll()?;
            }
        }
        let got = once.allreduce(CollOp::Sum, &[1u32])?;
        if got != [once.size() as u32] {
            return Err(fail(format!("{once:?}: one allreduce summed {got:?}")));
        }
        once.destroy()?;
        w.split(Some(0), 0)?
            .ok_or_else(|| fail("the split of the whole gave no team"))?
            .destroy()?;
        // After every member was a broadcast's root of both teams (up to
        // 10 ranks): providers that connect on first use hold their
        // connections by then.
        if round == WARM_UP {
            before = Some((fds()?, maps()?));
        }
    }
    // Retired through a shared handle: its collectives are refused.
    let last = w
        .split(Some(0), 0)?
        .ok_or_else(|| fail("the last split gave no team"))?;
    exercise(&last, 0)?;
    last.retire()?;
    match last.allreduce(CollOp::Sum, &[1u32]) {
        Err(Error::NoTeam { .. }) => {}
        r => {
            return Err(fail(format!(
                "an allreduce on a retired team gave {r:?}, not Error::NoTeam"
            )))
        }
    }
    let (fd0, map0) = before.unwrap_or((fds()?, maps()?));
    let (fd1, map1) = (fds()?, maps()?);
    if fd1 > fd0 || map1 > map0 + MAPS_SLACK {
        return Err(fail(format!(
            "destroyed teams kept their resources: descriptors {fd0} -> {fd1}, mappings {map0} -> {map1} over {rounds} rounds"
        )));
    }
    w.barrier()?;
    Ok(format!(
        "ok: {rounds} rounds of four teams made, used and destroyed, descriptors and mappings kept level; the world team refused; a retired team refused"
    ))
}
