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

use super::vis::H_VIS;
use super::{Core, Progress};
use crate::client::error::{Error, RmaError};
use crate::sync::{Counter, Lock, Mode};
use crate::transport::{Side, Transport};
use ::rma::aggregate::{Aggregator, Batch};
use ::rma::ops::TransferError;
use am::send::Category;
use std::collections::VecDeque;

/// A batch sent and not yet acknowledged.
#[derive(Debug, Clone, Copy)]
struct Sent {
    seq: u64,
    /// Its reply slot (`Core::atomics.pending`).
    id: u32,
    rank: usize,
}

/// One endpoint set's aggregation: the open batches, the batches in
/// flight, and the first failure not yet reported by a sync.
#[derive(Debug)]
pub(crate) struct Aggregation {
    pub batches: Aggregator,
    sent: VecDeque<Sent>,
    next_seq: u64,
    failed: Option<RmaError>,
}

impl Aggregation {
    pub fn new(batches: Aggregator) -> Self {
        Aggregation {
            batches,
            sent: VecDeque::new(),
            next_seq: 0,
            failed: None,
        }
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
    /// failure is about earlier puts and is kept for the next sync, while
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
            full.map(|b| (self.reserve(&mut agg, rank), b))
        };
        match full.map(|(s, b)| self.send_batch(set, s, b)) {
            Some(Err(e)) if e.is_fatal() => Err(e),
            _ => Ok(()),
        }
    }

    /// Enter a batch taken for `rank` in the list of batches in flight
    /// (with its acknowledgement slot), under the lock it was taken with.
    fn reserve(&self, agg: &mut Aggregation, rank: usize) -> Sent {
        let id = self.atomics.pending.lock().take();
        let seq = agg.next_seq;
        agg.next_seq += 1;
        let s = Sent { seq, id, rank };
        agg.sent.push_back(s);
        s
    }

    /// Send `batch`, entered in flight as `s`. A batch that cannot be sent
    /// is a failure the next sync reports too (its puts came from earlier
    /// calls).
    fn send_batch(&self, set: usize, s: Sent, batch: Batch) -> Result<(), Error> {
        let (payload, head) = batch.into_payload();
        let Sent { id, rank, .. } = s;
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
                agg.sent.retain(|x| x.seq != s.seq);
                self.atomics.pending.lock().cancel(id);
                let f = failure(rank, format!("its batch could not be sent: {}", e.report()));
                agg.failed.get_or_insert(f);
                Err(e)
            }
        }
    }

    /// Send every open batch of set `set`; the first failure.
    fn flush_batches(&self, set: usize) -> Result<(), Error> {
        let open: Vec<(Sent, Batch)> = {
            let mut agg = self.sets[set].agg.lock();
            if agg.batches.is_idle() {
                return Ok(());
            }
            let open = agg.batches.take_open();
            open.into_iter()
                .map(|(rank, b)| (self.reserve(&mut agg, rank), b))
                .collect()
        };
        let mut first = None;
        for (s, b) in open {
            if let Err(e) = self.send_batch(set, s, b) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Collect the acknowledgements that came; whether a batch sent
    /// before `seq` is still unacknowledged.
    fn harvest(&self, set: usize, seq: u64) -> bool {
        let mut agg = self.sets[set].agg.lock();
        if agg.sent.is_empty() {
            return false;
        }
        let mut pending = self.atomics.pending.lock();
        let mut refused = None;
        agg.sent.retain(|s| match pending.result(s.id) {
            Some((_, status)) => {
                if status != 0 {
                    refused.get_or_insert(s.rank);
                }
                false
            }
            None => true,
        });
        drop(pending);
        if let Some(rank) = refused {
            let f = failure(
                rank,
                "the target refused a batch (a piece outside its segment)".into(),
            );
            agg.failed.get_or_insert(f);
        }
        agg.sent.front().is_some_and(|s| s.seq < seq)
    }

    fn take_failure(&self, set: usize) -> Result<(), Error> {
        match self.sets[set].agg.lock().failed.take() {
            Some(f) => Err(f.into()),
            None => Ok(()),
        }
    }

    /// Whether no batch is open, in flight or failed unreported (one lock:
    /// every scope's end asks).
    fn aggregation_idle(&self, set: usize) -> bool {
        let agg = self.sets[set].agg.lock();
        agg.batches.is_idle() && agg.sent.is_empty() && agg.failed.is_none()
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
        // A batch that could not be sent is kept as a failure too: taken
        // either way, so that it is reported once.
        let failed = self.take_failure(set);
        flushed.and(failed)
    }

    /// A test of the NBI puts' batches: sends the open ones, polls once
    /// if some are unacknowledged; whether all are.
    pub fn test_aggregated(&self, set: usize) -> Result<bool, Error> {
        if let Err(e) = self.flush_batches(set) {
            // Kept as a failure too: reported once, here.
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
