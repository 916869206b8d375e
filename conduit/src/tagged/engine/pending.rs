//! Whether the tagged queues can have work: what lets the client's
//! progress leave them unread (issue 15 item 4, "progress that touches
//! only what can have work").
//!
//! Every round of the client's progress (an AM wait, a barrier, an RMA
//! wait, `poll`) used to read every tagged context's queue as well as the
//! AM queues and rings: one more `fi_cq_read` per round once tagged
//! messaging was opened, which on libfabric 2.1's shm took an empty round
//! from 9 to 35 ns on the same-host path and from 36 to 63 ns through the
//! provider, and the AM round trip up with it. A context's queue yields
//! completions only for operations it has pending (receives, probes,
//! sends awaiting their completion, acknowledgements to retry, receives
//! waiting for room), so while none is pending a round of the client's
//! progress reads the tagged queues only every [`IDLE_EVERY`]th time (per
//! thread). The reads serve the provider too: with manual progress it
//! moves unexpected messages, connection requests and an injected
//! message's bytes it could not write at once only inside a read of the
//! queue. So the round after an inject (a send or an acknowledgement) reads
//! them, and the periodic read keeps a peer's eager sends moving while
//! this rank does other work (without it, a flood into a rank waiting in an
//! AM barrier hung over 2.1's shm). Tagged calls and waits read their
//! contexts themselves, every round.
//!
//! Each context keeps its table's pending count in an atomic, stored when
//! it changed at an unlock of the table ([`Ctx::reqs`]'s guard), so the
//! check takes no lock. A stale read (another thread just started an
//! operation) costs at most the rounds until the next periodic read; that
//! thread's own waits read its context anyway.

use super::{Ctx, Engine};
use crate::sync::{Counter, Lock, Mode};
use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use tagged::Requests;

/// Rounds of the client's progress per read of the tagged queues while no
/// tagged operation is pending (as a tagged wait runs the client's whole
/// progress every `FULL_EVERY`th round).
pub(crate) const IDLE_EVERY: u32 = 16;

thread_local! {
    /// This thread's rounds of the client's progress since it last read
    /// the tagged queues with nothing pending.
    static IDLE_ROUNDS: Cell<u32> = const { Cell::new(0) };
}

/// The request table, locked; its unlock stores the pending count in the
/// context's `pending` (while the lock is still held, so the stores are in
/// the order of the table's changes).
struct Reqs<'a, G: DerefMut<Target = Requests>> {
    guard: G,
    pending: &'a AtomicUsize,
}

impl<G: DerefMut<Target = Requests>> Deref for Reqs<'_, G> {
    type Target = Requests;
    fn deref(&self) -> &Requests {
        &self.guard
    }
}

impl<G: DerefMut<Target = Requests>> DerefMut for Reqs<'_, G> {
    fn deref_mut(&mut self) -> &mut Requests {
        &mut self.guard
    }
}

impl<G: DerefMut<Target = Requests>> Drop for Reqs<'_, G> {
    #[inline]
    fn drop(&mut self) {
        // Stored only when it changed: waits and tests lock the table
        // often, and other threads read the line every round.
        let p = self.guard.pending();
        if self.pending.load(Ordering::Relaxed) != p {
            self.pending.store(p, Ordering::Relaxed);
        }
    }
}

impl<M: Mode> Ctx<M> {
    /// The context's request table, locked.
    #[inline]
    pub(crate) fn reqs(&self) -> impl DerefMut<Target = Requests> + '_ {
        Reqs {
            guard: self.requests.lock(),
            pending: &self.pending,
        }
    }

    /// Whether the context's queue can owe completions: requests pending
    /// or receives waiting for room.
    #[inline]
    fn owes_completions(&self) -> bool {
        self.pending.load(Ordering::Relaxed) > 0 || self.has_waiting.load(Ordering::Relaxed)
    }
}

impl<M: Mode> Engine<M> {
    /// Whether some context can owe completions or an acknowledgement
    /// waits to be sent again.
    #[inline]
    pub(crate) fn owes_completions(&self) -> bool {
        self.has_acks.load(Ordering::Relaxed)
            || self
                .ctxs
                .iter()
                .filter_map(OnceLock::get)
                .any(Ctx::owes_completions)
    }

    /// A message was injected: the next round of the client's progress
    /// reads the tagged queues, in case the provider holds its bytes.
    #[inline]
    pub(crate) fn note_inject(&self) {
        if !self.injected.load(Ordering::Relaxed) {
            self.injected.store(true, Ordering::Relaxed);
        }
    }

    /// Whether this round of the client's progress should read the tagged
    /// queues: always while something is owed, once after an inject, else
    /// every [`IDLE_EVERY`]th round of this thread (counted in
    /// `TaggedStats::idle_reads`).
    #[inline]
    pub(crate) fn due(&self) -> bool {
        if self.owes_completions() {
            return true;
        }
        if self.injected.load(Ordering::Relaxed) {
            self.injected.store(false, Ordering::Relaxed);
            return true;
        }
        let idle = IDLE_ROUNDS.with(|n| {
            let v = n.get() + 1;
            n.set(if v >= IDLE_EVERY { 0 } else { v });
            v >= IDLE_EVERY
        });
        if idle {
            self.stats.idle_reads.add(1);
        }
        idle
    }
}
