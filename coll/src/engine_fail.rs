//! How a team's collectives fail ([`TeamColl`]'s part): a collective that
//! fails here keeps its error for its wait and queues an abort to every
//! other member; an abort ends the wait of a collective not complete here
//! and is dropped (and reported, [`TeamColl::take_dropped_aborts`]) for
//! one that is.

use super::{Outside, TeamColl};
use crate::machine::Machine;
use crate::msg::{shape, Kind, Msg, SHAPE_LAST};
use crate::Error;

/// Most bytes of an abort message's reason.
const REASON_MAX: usize = 1024;

impl TeamColl {
    /// Install a machine just built, or handle why it could not be: an
    /// error of this rank's own data takes the sequence number and aborts
    /// the collective on the other members.
    pub(super) fn begin(
        &mut self,
        built: Result<(Machine, Vec<Msg>), Error>,
    ) -> Result<(u32, Vec<Msg>), Error> {
        match built {
            Ok((machine, mut out)) => {
                machine.stamp(&mut out);
                let (seq, more) = self.install(machine);
                if self.failed.contains_key(&seq) {
                    return Ok((seq, Vec::new()));
                }
                out.extend(more);
                Ok((seq, out))
            }
            Err(e) if rank_local(&e) => {
                self.start_failed(e.clone());
                Err(e)
            }
            Err(e) => Err(e),
        }
    }

    /// A collective this rank could not start for `err` (its caller gets
    /// the error, and no event to wait for): it still takes its sequence
    /// number, so the members keep numbering their collectives alike, and
    /// the other members' run of it is aborted. Returns the number.
    pub fn start_failed(&mut self, err: Error) -> u32 {
        let seq = self.next_seq;
        self.next_seq = seq.wrapping_add(1);
        self.fail(seq, err, true);
        self.failed.remove(&seq);
        self.dead.insert(seq);
        seq
    }

    /// An abort of collective `seq` from `from` (its payload the reason):
    /// when `end`, the collective fails with [`Error::Aborted`] (nobody is
    /// told: the sender told everyone); else it is complete here, and the
    /// abort is dropped and recorded ([`TeamColl::take_dropped_aborts`]),
    /// its sender having reported the error to its caller.
    pub(super) fn on_abort(&mut self, seq: u32, from: usize, data: &[u8], end: bool) {
        let reason = String::from_utf8_lossy(data).into_owned();
        if end {
            self.fail(seq, Error::Aborted { from, reason }, false);
        } else {
            self.dropped.push((seq, from, reason));
        }
    }

    /// Fail collective `seq` with `err` (its wait returns it); when `tell`,
    /// queue an abort to every other member.
    pub(super) fn fail(&mut self, seq: u32, err: Error, tell: bool) {
        self.active.remove(&seq);
        self.early.remove(&seq);
        if tell {
            self.queue_aborts(seq, &err);
        }
        self.failed.insert(seq, err);
    }

    /// Queue an abort of collective `seq` saying `err` to every other
    /// member.
    fn queue_aborts(&mut self, seq: u32, err: &Error) {
        let mut reason = err.to_string();
        let mut max = self.limit.map_or(REASON_MAX, |l| l.min(REASON_MAX));
        while max < reason.len() && !reason.is_char_boundary(max) {
            max -= 1;
        }
        reason.truncate(max);
        for to in (0..self.size).filter(|&r| r != self.me) {
            let data = reason.clone().into_bytes();
            let shape = shape(Kind::Abort, true);
            let (phase, chunk) = (0, 0);
            let m = Msg {
                to,
                phase,
                chunk,
                data,
                shape,
            };
            self.aborts.push((seq, m));
        }
    }

    /// This rank could not send a message of collective `seq` (the
    /// transport refused the post with `reason`): some member may wait for
    /// it for ever, so every other member is told by an abort, whatever
    /// became of the collective here (a member that forwards is often
    /// complete before its forwards are sent; a member for which the
    /// collective is complete drops the abort). A collective still in
    /// progress here fails with [`Error::SendFailed`]. Nothing happens for
    /// one that failed here already (its aborts were queued then) or was
    /// retired after failing.
    pub fn fail_sending(&mut self, seq: u32, reason: &str) {
        if self.failed.contains_key(&seq) || self.dead.contains(&seq) {
            return;
        }
        let err = Error::SendFailed {
            reason: reason.to_string(),
        };
        if self.active.get(&seq).is_some_and(|m| !m.is_done()) {
            self.fail(seq, err, true);
        } else {
            self.queue_aborts(seq, &err);
        }
    }

    /// Abort messages to send (each with its collective's sequence number):
    /// a collective that failed here ends the other members' waits for it.
    /// They must go even when the collective's chunks take another path.
    pub fn take_aborts(&mut self) -> Vec<(u32, Msg)> {
        std::mem::take(&mut self.aborts)
    }

    /// Whether collective `seq` failed here (its wait returns the error).
    pub fn has_failed(&self, seq: u32) -> bool {
        self.failed.contains_key(&seq)
    }

    /// Aborts dropped because their collective was complete here (a
    /// broadcast's root, a reduction's leaf): sequence, sender, reason.
    pub fn take_dropped_aborts(&mut self) -> Vec<(u32, usize, String)> {
        std::mem::take(&mut self.dropped)
    }

    /// Member `from` posted `len` bytes on its board for collective `seq`,
    /// which runs here by messages and is not complete: their operands
    /// differ. Fails it (the others are told); whether it did.
    pub fn fail_posted(&mut self, seq: u32, from: usize, len: usize) -> bool {
        let Some(m) = self.active.get(&seq).filter(|m| !m.is_done()) else {
            return false;
        };
        let e = Error::OperandsDiffer {
            me: self.me,
            ours: m.bytes(),
            from,
            theirs: Some(len),
            chunk: 0,
            chunk_len: len,
        };
        self.fail(seq, e, true);
        true
    }

    /// Collectives started here and not complete.
    pub fn unfinished(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .active
            .iter()
            .filter(|(_, m)| !m.is_done())
            .map(|(&s, _)| s)
            .collect();
        v.sort_unstable();
        v
    }
}

/// Why a chunk for the collective run outside the machines fails it: its
/// sender took another path, so its operand differs (or it runs another
/// kind of collective).
pub(super) fn outside_error(
    me: usize,
    o: Outside,
    from: usize,
    chunk: u32,
    shape: u8,
    len: usize,
) -> Error {
    match Kind::of_shape(shape) {
        Some(t) if t != o.kind && !(t.reduces_to_all() && o.kind.reduces_to_all()) => {
            Error::CollectiveMismatch {
                from,
                ours: o.kind.name(),
                theirs: t.name(),
            }
        }
        t => Error::OperandsDiffer {
            me,
            ours: o.len,
            from,
            theirs: t
                .is_some_and(|t| t.one_chunk() || (chunk == 0 && shape & SHAPE_LAST != 0))
                .then_some(len),
            chunk,
            chunk_len: len,
        },
    }
}

/// Whether a start error comes from this rank's own data (its operand's
/// length, a root's source), which the other members cannot tell.
fn rank_local(e: &Error) -> bool {
    matches!(
        e,
        Error::SourceLength { .. }
            | Error::MissingSource
            | Error::NotElementMultiple { .. }
            | Error::TooManyChunks { .. }
    )
}
