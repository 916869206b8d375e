//! `gex-tagged all`'s `idle` step: while no tagged operation is pending,
//! the client's progress (`poll`, an AM barrier) reads the tagged queues
//! one round in 16 (`TaggedStats::idle_reads`), every round while one is
//! pending, and often enough that a flood sent meanwhile, more than the
//! provider queues for an idle receiver, still arrives whole and in order.

use super::checks::{check, World};
use conduit::client::Client;
use tests::{fail, Fallible};

/// Polls per measure: 100 reads of the tagged queues when idle.
const POLLS: u64 = 1600;
/// Messages rank 0 sends to rank 1 while rank 1 waits in an AM barrier:
/// more than the shm provider takes in for a receiver that does not read
/// its queue, so rank 0's sends complete only if the barrier's progress
/// reads rank 1's tagged queue now and then (with no read while nothing
/// is pending, rank 0 waited in `send` for ever in 3 runs of 3 on
/// libfabric 2.1's shm; over tcp the kernel's buffers take them all).
/// The providers tested buffer unexpected messages without bound once
/// read; where a provider does not, a standard send may block until its
/// receive is posted (as MPI allows) and this step would too.
const FLOOD: usize = 5000;
const TAG_PENDING: u32 = 77;
const TAG_FLOOD: u32 = 78;

/// The step; its summary.
pub(crate) fn idle(c: &Client, w: &World) -> Fallible<String> {
    let st = c.tagged_stats().ok_or_else(|| fail("no stats"))?;
    let (me, n) = (w.rank(), w.size());
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    c.barrier()?;
    // Sends of earlier steps may still owe completions (small sends from
    // copies on udp;ofi_rxd wait for its acknowledgement), and the round
    // after an inject reads the queues too: such polls are no idle reads.
    // So a batch of polls has at most one idle read in 16, and once
    // nothing is left exactly that.
    let mut batches = Vec::new();
    loop {
        let before = st.idle_reads.get();
        for _ in 0..POLLS {
            c.poll()?;
        }
        let idle = st.idle_reads.get() - before;
        batches.push(idle);
        check(idle <= POLLS / 16, || {
            format!(
                "idle: {POLLS} polls read the tagged queues {idle} times as idle reads, more than one in 16"
            )
        })?;
        if idle == POLLS / 16 {
            break;
        }
        check(batches.len() < 100, || {
            format!(
                "idle: in 100 batches of {POLLS} polls with no tagged operation started, never {} idle reads (one in 16): {batches:?}",
                POLLS / 16
            )
        })?;
    }
    // A receive pending: every poll reads the queues, none is an idle read.
    let mut got = [0u8; 4];
    let out = me.to_le_bytes();
    let (pending_reads, st1) = w.scope(|s| {
        let r = s.irecv(w, &mut got, Some(prev), Some(TAG_PENDING))?;
        let before = st.idle_reads.get();
        for _ in 0..POLLS {
            c.poll()?;
        }
        let reads = st.idle_reads.get() - before;
        // Nobody sends before everyone has measured.
        c.barrier()?;
        let q = s.isend(w, &out, next, TAG_PENDING)?;
        s.wait(q)?;
        Ok::<_, conduit::client::Error>((reads, s.wait(r)?))
    })?;
    check(pending_reads == 0, || {
        format!(
            "idle: {pending_reads} idle reads while a receive was pending (every round must read)"
        )
    })?;
    check(u32::from_le_bytes(got) == prev && st1.len == 4, || {
        format!("idle: the pending receive got {got:?} ({st1:?}) from rank {prev}")
    })?;
    // Rank 0 floods rank 1, which waits in an AM barrier with nothing
    // tagged pending; rank 0 joins the barrier once its sends are done.
    if me == 0 {
        for i in 0..FLOOD {
            w.send(&(i as u32).to_le_bytes(), 1, TAG_FLOOD)?;
        }
    }
    c.barrier()?;
    if me == 1 {
        for i in 0..FLOOD {
            let mut m = [0u8; 4];
            let st = w.recv(&mut m, Some(0), Some(TAG_FLOOD))?;
            check(u32::from_le_bytes(m) as usize == i && st.len == 4, || {
                format!(
                    "idle: flood message {i} received as {} ({st:?})",
                    u32::from_le_bytes(m)
                )
            })?;
        }
    }
    c.barrier()?;
    Ok(format!(
        "tagged queues read 1 poll in 16 when idle (every poll while pending; {FLOOD} sent to a rank in an AM barrier)"
    ))
}
