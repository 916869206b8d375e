//! Non-blocking and implicit RMA, scoped.
//!
//! * Buffers an operation reads or writes after the call returns are
//!   borrowed for the scope's `'env` lifetime, and the scope completes every
//!   operation it started before its borrows end: when the closure returns
//!   (`Ok` or `Err`), and, through `Drop`, when it panics. Waiting goes on
//!   through errors that progress reports (they are returned afterwards);
//!   if the network can no longer report completions, the process aborts
//!   rather than return. So leaking an [`Event`], returning early or
//!   unwinding can never free a buffer the network still uses (the shape of
//!   rsmpi's request scopes and `std::thread::scope`).
//! * Local completion of puts, as GASNet-EX's `lc_opt`: the plain forms
//!   take the source for the call only (it may be reused on return: FI_INJECT
//!   up to the inject limit, bounce buffers up to
//!   `GASNET_OFI_BBUF_THRESHOLD`, otherwise the call blocks until remote
//!   completion, counted as NB_PUT_INJECT / NB_PUT_BOUNCE / NB_PUT_BLOCK);
//!   the `*_deferred` forms borrow the source until the scope ends.
//!   Implicit puts of at most `GASNET_OFI_PUT_AGGREGATE_LIMIT` bytes to
//!   ranks outside the supernode are copied into one message per target
//!   instead (NB_PUT_AGGREGATE), sent when full and at the NBI sync of
//!   puts, which returns once the targets acknowledged them.
//!
//! Remote ranges are checked against the target's segment on the initiator:
//! an out-of-range or overflowing request is an error and sends nothing.
//! Transfers larger than the provider's `max_msg_size` are split.

use super::engine::{abort_in_flight, Core, Local, Progress};
use super::error::Error;
use crate::sync::{Lock, Mode};
use crate::transport::Transport;
use rma::ops::{Implicit, OpId};
use std::marker::PhantomData;

/// Which implicit operations a sync waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NbiSync {
    /// Implicit puts.
    Puts,
    /// Implicit gets.
    Gets,
    /// Both.
    All,
}

#[derive(Debug, Clone, Copy)]
struct Tracked {
    /// The endpoint set whose operation table holds `op`: an event may be
    /// waited in a scope of another set (or on another thread), and its
    /// slot number means nothing in that set's table.
    set: usize,
    op: OpId,
    what: &'static str,
    dir: &'static str,
    rank: usize,
}

/// An explicit operation's completion event. Waiting (or testing it done)
/// consumes it; an event dropped unwaited is completed when its scope ends.
#[derive(Debug)]
#[must_use = "wait for the event, or let the scope complete it"]
pub struct Event<'env> {
    t: Option<Tracked>,
    _env: PhantomData<&'env ()>,
}

/// A scope for non-blocking RMA; see the module documentation.
pub struct RmaScope<'c, 'env, M: Mode, S, T: Transport> {
    core: &'c Core<M, T, S>,
    set: usize,
    started: Vec<Tracked>,
    _env: PhantomData<&'env mut &'env ()>,
}

impl<M: Mode, S, T: Transport> std::fmt::Debug for RmaScope<'_, '_, M, S, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RmaScope")
            .field("started", &self.started.len())
            .finish()
    }
}

/// Run `f` in a scope on set `set`.
pub(crate) fn run<'env, R, M: Mode, S, T: Transport>(
    core: &Core<M, T, S>,
    set: usize,
    f: impl FnOnce(&mut RmaScope<'_, 'env, M, S, T>) -> Result<R, Error>,
) -> Result<R, Error> {
    let mut scope = RmaScope {
        core,
        set,
        started: Vec::new(),
        _env: PhantomData,
    };
    let r = f(&mut scope);
    let done = scope.finish();
    let t = r?;
    done?;
    core.exit_if_requested()?;
    Ok(t)
}

impl<M: Mode, S, T: Transport> Drop for RmaScope<'_, '_, M, S, T> {
    /// Reached with operations outstanding only when the closure unwinds:
    /// complete them before the borrowed buffers go (a second panic here
    /// aborts the process, which is also sound).
    fn drop(&mut self) {
        for t in std::mem::take(&mut self.started) {
            self.core.drain(self.set, t.op);
        }
    }
}

impl<'env, M: Mode, S, T: Transport> RmaScope<'_, 'env, M, S, T> {
    fn track(&mut self, op: Option<OpId>, what: &'static str, rank: usize) -> Option<Tracked> {
        let t = op.map(|op| Tracked {
            set: self.set,
            op,
            what,
            dir: if what == "get" { "from" } else { "to" },
            rank,
        });
        if let Some(t) = t {
            self.started.push(t);
        }
        t
    }

    fn event(&mut self, op: Option<OpId>, what: &'static str, rank: usize) -> Event<'env> {
        Event {
            t: self.track(op, what, rank),
            _env: PhantomData,
        }
    }

    /// Non-blocking put whose source may be reused when this returns
    /// (`lc_opt` "now"): the put hierarchy.
    pub fn put_nb(&mut self, rank: usize, offset: usize, src: &[u8]) -> Result<Event<'env>, Error> {
        let op = self
            .core
            .put_now(self.set, rank, offset, src, Implicit::No)?;
        Ok(self.event(op, "put", rank))
    }

    /// Non-blocking put that reads `src` until the operation completes
    /// (`lc_opt` "deferred"): `src` stays borrowed for the scope.
    pub fn put_nb_deferred(
        &mut self,
        rank: usize,
        offset: usize,
        src: &'env [u8],
    ) -> Result<Event<'env>, Error> {
        let op = self.core.start_transfer(
            self.set,
            rank,
            offset,
            Local::Write(src.as_ptr()),
            src.len(),
            Implicit::No,
            false,
            Progress::Full,
        )?;
        Ok(self.event(op, "put", rank))
    }

    /// Non-blocking put with a local-completion event as well (GASNet-EX's
    /// `lc_opt` event): the local event is complete when the source may be
    /// reused, which the put hierarchy makes true at return.
    pub fn put_nb_lc(
        &mut self,
        rank: usize,
        offset: usize,
        src: &'env [u8],
    ) -> Result<(Event<'env>, Event<'env>), Error> {
        let remote = self.put_nb(rank, offset, src)?;
        Ok((
            remote,
            Event {
                t: None,
                _env: PhantomData,
            },
        ))
    }

    /// Non-blocking get into `dst`, borrowed for the scope.
    pub fn get_nb(
        &mut self,
        rank: usize,
        offset: usize,
        dst: &'env mut [u8],
    ) -> Result<Event<'env>, Error> {
        let op = self.core.start_transfer(
            self.set,
            rank,
            offset,
            Local::Read(dst.as_mut_ptr()),
            dst.len(),
            Implicit::No,
            false,
            Progress::Full,
        )?;
        Ok(self.event(op, "get", rank))
    }

    /// Non-blocking put of one value (injected when the provider allows).
    pub fn put_nb_u64(
        &mut self,
        rank: usize,
        offset: usize,
        value: u64,
    ) -> Result<Event<'env>, Error> {
        self.put_nb(rank, offset, &value.to_ne_bytes())
    }

    /// Implicit put, source reusable on return (the put hierarchy).
    pub fn put_nbi(&mut self, rank: usize, offset: usize, src: &[u8]) -> Result<(), Error> {
        let op = self
            .core
            .put_now(self.set, rank, offset, src, Implicit::Put)?;
        self.track(op, "put", rank);
        Ok(())
    }

    /// Implicit put reading `src` until synced (borrowed for the scope).
    pub fn put_nbi_deferred(
        &mut self,
        rank: usize,
        offset: usize,
        src: &'env [u8],
    ) -> Result<(), Error> {
        let op = self.core.start_transfer(
            self.set,
            rank,
            offset,
            Local::Write(src.as_ptr()),
            src.len(),
            Implicit::Put,
            false,
            Progress::Full,
        )?;
        self.track(op, "put", rank);
        Ok(())
    }

    /// Implicit get into `dst` (borrowed for the scope).
    pub fn get_nbi(
        &mut self,
        rank: usize,
        offset: usize,
        dst: &'env mut [u8],
    ) -> Result<(), Error> {
        let op = self.core.start_transfer(
            self.set,
            rank,
            offset,
            Local::Read(dst.as_mut_ptr()),
            dst.len(),
            Implicit::Get,
            false,
            Progress::Full,
        )?;
        self.track(op, "get", rank);
        Ok(())
    }

    /// Non-blocking get of `len` bytes at `offset` of `rank`'s segment into
    /// this rank's own segment at `local_offset`: GASNet's get whose
    /// destination lies in the local segment (a copy between two global
    /// addresses, as UPC++'s `copy` makes). The destination is shared
    /// memory rather than a borrowed buffer, so gets in flight may target
    /// the same range, as puts from several ranks may: what it holds
    /// before the event completes is unspecified, and afterwards it holds
    /// the last transfer to complete. A destination outside this rank's
    /// segment is refused and nothing is sent.
    pub fn get_nb_to_segment(
        &mut self,
        rank: usize,
        offset: usize,
        local_offset: usize,
        len: usize,
    ) -> Result<Event<'env>, Error> {
        let op = self.get_to_segment(rank, offset, local_offset, len, Implicit::No)?;
        Ok(self.event(op, "get", rank))
    }

    /// Implicit get into this rank's own segment: [`Self::get_nb_to_segment`]
    /// completed by [`Self::sync_nbi`] of gets.
    pub fn get_nbi_to_segment(
        &mut self,
        rank: usize,
        offset: usize,
        local_offset: usize,
        len: usize,
    ) -> Result<(), Error> {
        let op = self.get_to_segment(rank, offset, local_offset, len, Implicit::Get)?;
        self.track(op, "get", rank);
        Ok(())
    }

    fn get_to_segment(
        &mut self,
        rank: usize,
        offset: usize,
        local_offset: usize,
        len: usize,
        implicit: Implicit,
    ) -> Result<Option<OpId>, Error> {
        // A range error names this rank, whose segment the destination
        // misses.
        let dst = self.core.own_segment()?.range(local_offset, len)?;
        // The destination is this rank's segment mapping, which the core
        // holds for the client's life (longer than any scope); remote ranks
        // write it anyway, so no Rust reference covers it.
        self.core.start_transfer(
            self.set,
            rank,
            offset,
            Local::Read(dst),
            len,
            implicit,
            false,
            Progress::Full,
        )
    }

    /// Whether `t` is still running, in its own set's table.
    fn running(&self, t: &Tracked) -> bool {
        self.core.sets[t.set].ops.lock().running(t.op)
    }

    /// Wait for `t` (through progress errors, which are returned after),
    /// retire it and stop tracking it. An event started in a scope of
    /// another endpoint set is waited there (progress on its set, as
    /// GASNet-EX lets any thread wait for any event); the scope that
    /// started it still tracks it, and finds it retired at its end.
    fn complete(&mut self, t: Tracked) -> Result<(), Error> {
        self.started.retain(|x| !(x.set == t.set && x.op == t.op));
        self.core
            .wait_op(t.set, Some(t.op), Progress::Full, t.what, t.dir, t.rank)
    }

    /// Wait for one event.
    pub fn wait(&mut self, ev: Event<'env>) -> Result<(), Error> {
        match ev.t {
            Some(t) => self.complete(t),
            None => Ok(()),
        }
    }

    /// Poll once if needed; `Ok(true)` (and the event consumed into
    /// `None`) when it is done.
    pub fn test(&mut self, ev: &mut Option<Event<'env>>) -> Result<bool, Error> {
        let Some(e) = ev.as_ref() else {
            return Ok(true);
        };
        if let Some(t) = e.t {
            if self.running(&t) {
                self.core.poll_api(t.set)?;
                if self.running(&t) {
                    return Ok(false);
                }
            }
        }
        let e = ev.take().expect("checked above");
        self.wait(e).map(|_| true)
    }

    /// Wait for every event (all are complete when this returns; the first
    /// failure is returned).
    pub fn wait_all(&mut self, evs: Vec<Event<'env>>) -> Result<(), Error> {
        let mut first = None;
        for e in evs {
            if let Err(x) = self.wait(e) {
                first.get_or_insert(x);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Wait until at least one of `evs` completed; completed entries become
    /// `None`. Returns how many completed.
    pub fn wait_some(&mut self, evs: &mut [Option<Event<'env>>]) -> Result<usize, Error> {
        if evs.iter().all(|e| e.is_none()) {
            return Ok(0);
        }
        loop {
            let mut n = 0;
            let mut first = None;
            for slot in evs.iter_mut() {
                let done = match slot {
                    Some(Event { t: Some(t), .. }) => !self.running(t),
                    Some(Event { t: None, .. }) => true,
                    None => false,
                };
                if done {
                    let e = slot.take().expect("is some");
                    if let Err(x) = self.wait(e) {
                        first.get_or_insert(x);
                    }
                    n += 1;
                }
            }
            if let Some(e) = first {
                return Err(e);
            }
            if n > 0 {
                return Ok(n);
            }
            self.core.poll_api(self.set)?;
            // Events of other endpoint sets complete by their sets' progress.
            let mut polled: Vec<usize> = Vec::new();
            for e in evs.iter().flatten() {
                if let Some(t) = e.t.filter(|t| t.set != self.set) {
                    if !polled.contains(&t.set) {
                        polled.push(t.set);
                        self.core.poll_api(t.set)?;
                    }
                }
            }
        }
    }

    /// Wait for this scope's implicit operations of `which` started so far
    /// (the first failure among them is returned once all are over).
    pub fn sync_nbi(&mut self, which: NbiSync) -> Result<(), Error> {
        let wanted = |k: Implicit| match which {
            NbiSync::Puts => k == Implicit::Put,
            NbiSync::Gets => k == Implicit::Get,
            NbiSync::All => k != Implicit::No,
        };
        let mine: Vec<Tracked> = {
            let ops = self.core.sets[self.set].ops.lock();
            self.started
                .iter()
                .filter(|t| ops.kind(t.op).is_some_and(wanted))
                .copied()
                .collect()
        };
        // Each stays tracked until all are over (a handler's panic in a
        // wait leaves the rest to the scope's drop); a completed one is
        // retired, and waiting for it again is a no-op.
        let mut first = None;
        for t in &mine {
            if let Err(e) =
                self.core
                    .wait_op(t.set, Some(t.op), Progress::Full, t.what, t.dir, t.rank)
            {
                first.get_or_insert(e);
            }
        }
        // `mine` is a subsequence of `started`, in order: one pass.
        let mut k = 0;
        self.started.retain(|x| {
            let done = mine.get(k).is_some_and(|t| t.op == x.op);
            k += usize::from(done);
            !done
        });
        if which != NbiSync::Gets {
            if let Err(e) = self.core.sync_aggregated(self.set) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Complete everything the scope started; the first failure is
    /// returned once all are over.
    fn finish(&mut self) -> Result<(), Error> {
        // Each stays tracked until all are over, as in `sync_nbi`.
        let mut first = None;
        for i in 0..self.started.len() {
            let t = self.started[i];
            match self
                .core
                .wait_op(t.set, Some(t.op), Progress::Full, t.what, t.dir, t.rank)
            {
                Ok(()) => {}
                Err(e) if e.is_fatal() => abort_in_flight(self.core.rank, &e),
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        self.started.clear();
        // Aggregated implicit puts: copied already, so nothing borrows;
        // complete them as the scope promises.
        if let Err(e) = self.core.sync_aggregated(self.set) {
            first.get_or_insert(e);
        }
        first.map_or(Ok(()), Err)
    }
}
