//! `par-split [rounds]`: teams split at the same time by two threads of a
//! rank ([`ParClient`]). On 3 or more ranks, X is every rank but 2, Y
//! every rank but 1 and Z every rank but 0; each round, Z's members first
//! split Z a few times (their team id proposals move ahead of rank 0's),
//! then every member of X and of Y splits it, X and Y on two threads at
//! once where a rank is in both, and runs an allreduce on the new team,
//! checked exactly. Two teams made at once on a rank must not share an id
//! (the other members would hang, or a team's chunks reach the other).

use conduit::client::{CollOp, Mode, ParClient, Team};
use conduit::transport::Transport;
use tests::{fail, Fallible};

/// Split `t` whole and check an allreduce on the new team: every member
/// adds its bit.
fn split_and_sum<M: Mode, S, T: Transport>(
    name: &str,
    t: &Team<'_, M, S, T>,
    me: usize,
) -> Fallible<()> {
    let n = t
        .split(Some(0), 0)?
        .ok_or_else(|| fail(format!("the split of {name} gave no team")))?;
    let want: u64 = (0..t.size())
        .map(|r| 1u64 << t.to_job(r).unwrap_or(63))
        .sum();
    let got = n.allreduce(CollOp::Sum, &[1u64 << me])?;
    if got != [want] {
        return Err(fail(format!(
            "the team split from {name} ({n:?}) summed {got:?}, not [{want}]"
        )));
    }
    Ok(())
}

pub fn par_split(c: &ParClient, rounds: usize) -> Fallible<String> {
    let me = c.rank();
    if c.size() < 3 {
        return Err(fail(format!(
            "par-split needs 3 or more ranks, not {}",
            c.size()
        )));
    }
    let w = c.world()?;
    let x = w.split((me != 2).then_some(0), 0)?;
    let y = w.split((me != 1).then_some(0), 0)?;
    let z = w.split((me != 0).then_some(0), 0)?;
    for _ in 0..rounds {
        if let Some(z) = &z {
            for _ in 0..3 {
                z.split(Some(0), 0)?;
            }
        }
        w.barrier()?;
        let (rx, ry) = std::thread::scope(|s| {
            let tx = x.as_ref().map(|x| s.spawn(|| split_and_sum("X", x, me)));
            let ty = y.as_ref().map(|y| s.spawn(|| split_and_sum("Y", y, me)));
            let join = |h: Option<std::thread::ScopedJoinHandle<'_, Fallible<()>>>| {
                h.map_or(Ok(()), |h| {
                    h.join()
                        .unwrap_or_else(|_| Err(fail("a splitting thread panicked".to_string())))
                })
            };
            (join(tx), join(ty))
        });
        rx?;
        ry?;
    }
    Ok(format!(
        "ok: {rounds} rounds of two teams split at once on two threads, every new team's allreduce exact"
    ))
}
