//! `event-sets`: an event started in a scope on one endpoint set and
//! waited (or tested, or waited among others) in a scope on another set
//! of a multi-threaded client. Each rank gets 4 MiB from the next rank
//! into its own segment and checks the bytes as soon as the wait or test
//! says the get is complete, while the scope that started it is still
//! open (its end would complete it anyway). An event used to be looked up
//! in the waiting scope's set, where its slot number names another
//! operation or none: the wait returned before the data was there, or
//! panicked on a slot that set never had.

use conduit::client::ParClient;
use tests::{fail, Fallible};

const LEN: usize = 4 << 20;
/// Scratch bytes after the two areas (set 1's first put lands there).
const SCRATCH: usize = 4096;

fn pattern(rank: usize, round: usize) -> Vec<u8> {
    (0..LEN)
        .map(|j| ((j.wrapping_mul(40503) >> 5) ^ (rank * 7) ^ (round * 13)) as u8)
        .collect()
}

/// How the other set's scope learns that the get completed.
#[derive(Clone, Copy, Debug)]
enum How {
    /// Started on set 0, `wait` in set 1's scope.
    Wait,
    /// Started on set 1, `test` until true in set 0's scope.
    Test,
    /// Started on set 1, `wait_some` in set 0's scope.
    WaitSome,
}

pub fn event_sets(c: &ParClient<()>) -> Fallible<String> {
    let (me, n) = (c.rank(), c.size());
    let peer = (me + 1) % n;
    c.attach_segment(2 * LEN + SCRATCH)?;
    let mut checked = 0usize;
    for round in 0..6 {
        // Source at [0, LEN) (this round's pattern), destination at
        // [LEN, 2 LEN) (cleared); every rank ready before anyone gets.
        c.segment_write(0, &pattern(me, round))?;
        c.segment_write(LEN, &vec![0u8; LEN])?;
        c.barrier()?;
        // Set 1 is owned only while this round uses it: an owned set is
        // served only by its owner's polls, and the barriers poll set 0
        // (which serves the sets no thread owns), so a peer's transfers
        // to it complete while this rank waits in a barrier.
        if round == 0 {
            // Set 1's table gets a slot of its own (retired), as a
            // thread's endpoint would have; the barrier lets every rank
            // serve the others' puts before set 1 is owned again.
            let ep = c.endpoint(1)?;
            ep.rma_scope(|s| {
                let e = s.put_nb(peer, 2 * LEN, &[1u8; 8])?;
                s.wait(e)
            })?;
            drop(ep);
            c.barrier()?;
        }
        let ep = c.endpoint(1)?;
        let how = [How::Wait, How::Test, How::WaitSome][round % 3];
        let read_now = || -> Result<Vec<u8>, conduit::client::Error> {
            let mut got = vec![0u8; LEN];
            c.segment_read(LEN, &mut got)?;
            Ok(got)
        };
        let got = match how {
            How::Wait => c.rma_scope(|s0| {
                let ev = s0.get_nb_to_segment(peer, 0, LEN, LEN)?;
                ep.rma_scope(|s1| s1.wait(ev))?;
                read_now()
            })?,
            How::Test => ep.rma_scope(|s1| {
                let ev = s1.get_nb_to_segment(peer, 0, LEN, LEN)?;
                c.rma_scope(|s0| {
                    let mut e = Some(ev);
                    while !s0.test(&mut e)? {}
                    Ok(())
                })?;
                read_now()
            })?,
            How::WaitSome => ep.rma_scope(|s1| {
                let ev = s1.get_nb_to_segment(peer, 0, LEN, LEN)?;
                c.rma_scope(|s0| {
                    let mut evs = [Some(ev)];
                    while s0.wait_some(&mut evs)? == 0 {}
                    Ok(())
                })?;
                read_now()
            })?,
        };
        let want = pattern(peer, round);
        if let Some(j) = (0..LEN).find(|&j| got[j] != want[j]) {
            return Err(fail(format!(
                "round {round} ({how:?} on the other set): the get from rank {peer} was reported complete with byte {j} of {LEN} not yet there"
            )));
        }
        checked += LEN;
        drop(ep);
        // No rank rewrites its source while a peer may still read it.
        c.barrier()?;
    }
    Ok(format!(
        "ok: 6 gets of 4 MiB started on one endpoint set and waited, tested or waited among others on the other, {checked} bytes checked on rank 0 at once"
    ))
}
