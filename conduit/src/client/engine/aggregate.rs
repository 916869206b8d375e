//! Small implicit (NBI) puts, aggregated (`rma::aggregate`): each put of at
//! most `GASNET_OFI_PUT_AGGREGATE_LIMIT` bytes to a rank outside the
//! supernode is copied into that rank's open batch; a batch leaves as one
//! AM Medium to the packed-pieces handler (`H_VIS`, which checks every
//! piece against the target's segment, writes them in order and
//! acknowledges) when the next put would overflow it, and at every NBI
//! sync of puts. An NBI sync of puts returns once every batch sent before
//! it (its own flush included) is acknowledged, so the puts are in the
//! target's segment, as GASNet-EX requires of a sync.
//!
//! Batches belong to the endpoint set, not to a scope: a sync waits for
//! every batch of the set sent before it (in PAR mode also another
//! thread's), which may be more than its own puts but never fewer. A batch
//! is entered in the list of batches in flight in the same critical
//! section that takes it from the open ones, before it is sent: a sync on
//! another thread never sees a put neither open nor in flight (it did,
//! while the taker was still sending: 1 in 40 runs of `gex-rma threads 2
//! shared` read an 8-byte put's old bytes after the sync).
//!
//! A batch's failure (it could not be sent, or its target refused it) is
//! reported to the threads whose puts were in it, each by its own next
//! sync, as GASNet-EX's implicit operations are a thread's own: in PAR
//! mode every batch records the threads that put into it
//! ([`thread_key`]); a SEQ client has one thread and records none.

use super::vis::H_VIS;
use super::{Core, Progress};
use crate::client::error::{Error, RmaError};
use crate::sync::{Counter, Lock, Mode};
use crate::transport::{Side, Transport};
use ::rma::aggregate::{Aggregator, Batch};
use ::rma::ops::TransferError;
use am::send::Category;
use std::collections::VecDeque;

/// The threads whose puts a batch holds, by [`thread_key`]; empty for a
/// SEQ client (its one thread owns everything).
type Owners = Vec<u64>;

/// A batch sent and not yet acknowledged.
#[derive(Debug)]
struct Sent {
    seq: u64,
    /// Its reply slot (`Core::atomics.pending`).
    id: u32,
    rank: usize,
    owners: Owners,
}

/// What a sender needs of a batch entered in flight.
#[derive(Debug, Clone, Copy)]
struct Ticket {
    seq: u64,
    id: u32,
    rank: usize,
}

/// A failure not yet reported to every thread it concerns.
#[derive(Debug)]
struct Failure {
    /// The threads still to be told (empty: the SEQ client's).
    owners: Owners,
    error: RmaError,
}

/// One endpoint set's aggregation: the open batches (with, in PAR mode,
/// the threads that put into each), the batches in flight, and the
/// failures not yet reported by a sync.
#[derive(Debug)]
pub(crate) struct Aggregation {
    pub batches: Aggregator,
    /// Per rank, the threads with puts in its open batch (PAR mode only;
    /// empty otherwise).
    open_owners: Vec<Owners>,
    sent: VecDeque<Sent>,
    next_seq: u64,
    failed: Vec<Failure>,
}

impl Aggregation {
    pub fn new(batches: Aggregator) -> Self {
        Aggregation {
            batches,
            open_owners: Vec::new(),
            sent: VecDeque::new(),
            next_seq: 0,
            failed: Vec::new(),
        }
    }

    /// Record `me` as an owner of `rank`'s open batch (PAR mode).
    fn own(&mut self, rank: usize, me: u64) {
        if self.open_owners.len() <= rank {
            self.open_owners.resize_with(rank + 1, Vec::new);
        }
        let o = &mut self.open_owners[rank];
        if !o.contains(&me) {
            o.push(me);
        }
    }

    /// The owners of `rank`'s open batch, which is being taken.
    fn take_owners(&mut self, rank: usize) -> Owners {
        self.open_owners
            .get_mut(rank)
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// A failure of a batch owned by `owners`.
    fn fail(&mut self, owners: Owners, error: RmaError) {
        self.failed.push(Failure { owners, error });
    }

    /// Every failure `me` has not been told of, taken at once (a sync
    /// covers every batch sent before it): the oldest, the others dropped.
    /// Each thread is told of each failure once.
    fn take_failures(&mut self, me: u64) -> Option<RmaError> {
        let mut first = None;
        self.failed.retain_mut(|f| {
            if !(f.owners.is_empty() || f.owners.contains(&me)) {
                return true;
            }
            f.owners.retain(|&o| o != me);
            if first.is_none() {
                first = Some(f.error.clone());
            }
            !f.owners.is_empty()
        });
        first
    }
}

/// This thread's key among a batch's owners: a number unique in the
/// process for the thread's life (`ThreadId::as_u64` is unstable).
fn thread_key() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static KEY: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    KEY.with(|k| *k)
}

/// The calling thread's key, or 0 for a SEQ client (which records none).
fn me<M: Mode>() -> u64 {
    if M::PAR {
        thread_key()
    } else {
        0
    }
}

fn failure(rank: usize, text: String) -> RmaError {
    RmaError {
        op: "aggregated NBI put",
        dir: "to",
        rank,
        cause: TransferError {
            err: 0,
            prov_errno: 0,
            text,
        },
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Aggregate an implicit put (its path chosen by the caller): the range
    /// is checked now (an error writes nothing), the bytes are copied. A
    /// full batch this put displaced is sent now; if that send fails, the
    /// failure is about earlier puts and is kept for the next sync of
    /// each thread that put into the batch, while
    /// this put stays in the new batch and will be written, so it is not
    /// returned here (only a fatal error is: nothing will be written).
    pub(super) fn put_aggregate(
        &self,
        set: usize,
        rank: usize,
        offset: usize,
        src: &[u8],
    ) -> Result<(), Error> {
        self.remote(set, rank, offset, src.len())?;
        let full = {
            let mut agg = self.sets[set].agg.lock();
            let full = agg.batches.add(rank, offset, src);
            let full = full.map(|b| (self.reserve(&mut agg, rank), b));
            if M::PAR {
                agg.own(rank, thread_key());
            }
            full
        };
        match full.map(|(s, b)| self.send_batch(set, s, b)) {
            Some(Err(e)) if e.is_fatal() => {
                // Returned here in place of the batch's failure, which
                // this thread's next sync would report again.
                let _ = self.take_failure(set);
                Err(e)
            }
            _ => Ok(()),
        }
    }

    /// Enter a batch taken for `rank` in the list of batches in flight
    /// (with its acknowledgement slot and the threads that put into it),
    /// under the lock it was taken with.
    fn reserve(&self, agg: &mut Aggregation, rank: usize) -> Ticket {
        let owners = agg.take_owners(rank);
        let id = self.atomics.pending.lock().take();
        let seq = agg.next_seq;
        agg.next_seq += 1;
        agg.sent.push_back(Sent {
            seq,
            id,
            rank,
            owners,
        });
        Ticket { seq, id, rank }
    }

    /// Send `batch`, entered in flight as `s`. A batch that cannot be sent
    /// is a failure the next sync reports too (its puts came from earlier
    /// calls).
    fn send_batch(&self, set: usize, t: Ticket, batch: Batch) -> Result<(), Error> {
        let (payload, head) = batch.into_payload();
        let Ticket { id, rank, .. } = t;
        let r = self.send_am(
            set,
            Side::Request,
            rank,
            Category::Medium,
            H_VIS,
            &[id, head as u32],
            &payload,
            0,
            false,
            Progress::Full,
        );
        match r {
            Ok(_) => {
                self.sets[set].stats.put_batches.add(1);
                Ok(())
            }
            Err(e) => {
                let mut agg = self.sets[set].agg.lock();
                let owners = match agg.sent.iter().position(|x| x.seq == t.seq) {
                    Some(i) => agg.sent.remove(i).map(|x| x.owners).unwrap_or_default(),
                    // Not reached (the batch was entered under this lock):
                    // the sending thread is told.
                    None if M::PAR => vec![thread_key()],
                    None => Owners::new(),
                };
                self.atomics.pending.lock().cancel(id);
                let f = failure(rank, format!("its batch could not be sent: {}", e.report()));
                agg.fail(owners, f);
                Err(e)
            }
        }
    }

    /// Send every open batch of set `set`. A batch that cannot be sent is
    /// recorded as its owners' failure; a fatal error (a refused post) is
    /// also returned, to the thread that met it.
    fn flush_batches(&self, set: usize) -> Result<(), Error> {
        let open: Vec<(Ticket, Batch)> = {
            let mut agg = self.sets[set].agg.lock();
            if agg.batches.is_idle() {
                return Ok(());
            }
            let open = agg.batches.take_open();
            open.into_iter()
                .map(|(rank, b)| (self.reserve(&mut agg, rank), b))
                .collect()
        };
        let mut fatal = None;
        for (t, b) in open {
            match self.send_batch(set, t, b) {
                Err(e) if e.is_fatal() => {
                    fatal.get_or_insert(e);
                }
                _ => {}
            }
        }
        fatal.map_or(Ok(()), Err)
    }

    /// Collect the acknowledgements that came; whether a batch sent
    /// before `seq` is still unacknowledged.
    fn harvest(&self, set: usize, seq: u64) -> bool {
        let mut agg = self.sets[set].agg.lock();
        if agg.sent.is_empty() {
            return false;
        }
        let mut pending = self.atomics.pending.lock();
        let mut refused = Vec::new();
        agg.sent.retain_mut(|s| match pending.result(s.id) {
            Some((_, status)) => {
                if status != 0 {
                    refused.push((s.rank, std::mem::take(&mut s.owners)));
                }
                false
            }
            None => true,
        });
        drop(pending);
        for (rank, owners) in refused {
            let f = failure(
                rank,
                "the target refused a batch (a piece outside its segment)".into(),
            );
            agg.fail(owners, f);
        }
        agg.sent.front().is_some_and(|s| s.seq < seq)
    }

    /// The calling thread's failures not yet reported to it: the oldest
    /// (a fatal error met by the same call is returned in their place).
    fn take_failure(&self, set: usize) -> Result<(), Error> {
        match self.sets[set].agg.lock().take_failures(me::<M>()) {
            Some(f) => Err(f.into()),
            None => Ok(()),
        }
    }

    /// Whether no batch is open, in flight or failed unreported (one lock:
    /// every scope's end asks).
    fn aggregation_idle(&self, set: usize) -> bool {
        let agg = self.sets[set].agg.lock();
        agg.batches.is_idle() && agg.sent.is_empty() && agg.failed.is_empty()
    }

    /// An NBI sync of puts: send the open batches and wait until every
    /// batch sent so far is acknowledged; the first failure among them.
    pub fn sync_aggregated(&self, set: usize) -> Result<(), Error> {
        if self.aggregation_idle(set) {
            return Ok(());
        }
        let flushed = self.flush_batches(set);
        let seq = self.sets[set].agg.lock().next_seq;
        while self.harvest(set, seq) {
            self.progress_within(set, Progress::Full)?;
            self.exit_if_requested()?;
        }
        // A batch that could not be sent, or that its target refused, is
        // a failure of its owners: this thread's is taken (once).
        let failed = self.take_failure(set);
        flushed.and(failed)
    }

    /// A test of the NBI puts' batches: sends the open ones, polls once
    /// if some are unacknowledged; whether all are.
    pub fn test_aggregated(&self, set: usize) -> Result<bool, Error> {
        if let Err(e) = self.flush_batches(set) {
            // Fatal, met here: this thread's record of it is taken, so
            // that it is reported to this thread once.
            let _ = self.take_failure(set);
            return Err(e);
        }
        let seq = self.sets[set].agg.lock().next_seq;
        let mut busy = self.harvest(set, seq);
        if busy {
            self.poll_api(set)?;
            busy = self.harvest(set, seq);
        }
        self.take_failure(set)?;
        Ok(!busy)
    }
}
