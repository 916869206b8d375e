//! The collectives in progress, as [`crate::TeamColl`] holds them: one
//! enum over the machines, with what the engine needs to stamp and check
//! message headers ([`crate::msg::Msg::shape`]).
//!
//! A header names the sender's algorithm and marks its last chunk of a
//! phase. A receiver whose operand has another length runs another
//! algorithm or chunking: the kind differs, the last chunk comes at another
//! index, or a chunk has another length. Whichever comes first, it is
//! reported as [`Error::OperandsDiffer`] (or [`Error::CollectiveMismatch`]
//! for another kind of collective), never left to wait.

use crate::allreduce::Allreduce;
use crate::bcast::Broadcast;
use crate::engine::CollOp;
use crate::flat::{self, FlatAllreduce};
use crate::msg::{shape, Config, Kind, Msg, SHAPE_LAST};
use crate::rdb::RecursiveDoubling;
use crate::reduce::Reduce;
use crate::Error;

/// A collective in progress.
#[derive(Debug)]
pub(crate) enum Machine {
    Broadcast(Broadcast),
    Reduce(Reduce),
    Allreduce(Allreduce),
    Doubling(RecursiveDoubling),
    Flat(FlatAllreduce),
}

impl Machine {
    /// The machine of collective `op` on a team of `n` as rank `me` (with
    /// the direct exchange for small reductions to all when `direct`), and
    /// its first messages.
    pub(crate) fn build(
        op: CollOp,
        n: usize,
        me: usize,
        cfg: Config,
        direct: bool,
    ) -> Result<(Machine, Vec<Msg>), Error> {
        Ok(match op {
            CollOp::Broadcast { root, len, src } => {
                let src = if me == root { src } else { None };
                let (b, out) = Broadcast::new(n, me, root, len, src, cfg)?;
                (Machine::Broadcast(b), out)
            }
            CollOp::ReduceToOne {
                root,
                src,
                reduction,
            } => {
                let (r, out) = Reduce::new(n, me, root, src, reduction, cfg.max_chunk)?;
                (Machine::Reduce(r), out)
            }
            // Small payloads on small teams, any operator: one direct
            // exchange.
            CollOp::ReduceToAll { src, reduction }
                if direct && flat::applies(n, src.len()) && src.len() <= cfg.max_chunk =>
            {
                let (f, out) = FlatAllreduce::new(n, me, &src, reduction)?;
                (Machine::Flat(f), out)
            }
            // Commutative operators on one chunk: recursive doubling
            // (log2 n exchanges instead of a tree up and down).
            CollOp::ReduceToAll { src, reduction }
                if reduction.commutative() && src.len() <= cfg.max_chunk =>
            {
                let (d, out) = RecursiveDoubling::new(n, me, &src, reduction)?;
                (Machine::Doubling(d), out)
            }
            CollOp::ReduceToAll { src, reduction } => {
                let (a, out) = Allreduce::new(n, me, src, reduction, cfg)?;
                (Machine::Allreduce(a), out)
            }
        })
    }

    pub(crate) fn on_msg(
        &mut self,
        from: usize,
        phase: u8,
        chunk: u32,
        data: &[u8],
    ) -> Result<Vec<Msg>, Error> {
        match self {
            Machine::Allreduce(a) => a.on_msg(from, phase, chunk, data),
            Machine::Doubling(d) => d.on_msg(from, phase, chunk, data),
            Machine::Flat(f) => f.on_msg(from, phase, chunk, data),
            _ if phase != 0 => Err(Error::BadPhase { phase, phases: 1 }),
            Machine::Broadcast(b) => b.on_msg(from, chunk, data),
            Machine::Reduce(r) => r.on_msg(from, chunk, data),
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        match self {
            Machine::Broadcast(b) => b.is_done(),
            Machine::Reduce(r) => r.is_done(),
            Machine::Allreduce(a) => a.is_done(),
            Machine::Doubling(d) => d.is_done(),
            Machine::Flat(f) => f.is_done(),
        }
    }

    pub(crate) fn into_result(self) -> Option<Vec<u8>> {
        match self {
            Machine::Broadcast(b) => b.into_result(),
            Machine::Reduce(r) => r.into_result(),
            Machine::Allreduce(a) => a.into_result(),
            Machine::Doubling(d) => d.into_result(),
            Machine::Flat(f) => f.into_result(),
        }
    }

    /// The algorithm, as headers name it.
    pub(crate) fn kind(&self) -> Kind {
        match self {
            Machine::Broadcast(_) => Kind::Broadcast,
            Machine::Reduce(_) => Kind::Reduce,
            Machine::Allreduce(_) => Kind::Allreduce,
            Machine::Doubling(_) => Kind::Doubling,
            Machine::Flat(_) => Kind::Flat,
        }
    }

    /// Bytes of this rank's operand (a broadcast's length).
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Machine::Broadcast(b) => b.chunking().len(),
            Machine::Reduce(r) => r.chunking().len(),
            Machine::Allreduce(a) => a.bytes(),
            Machine::Doubling(d) => d.bytes(),
            Machine::Flat(f) => f.bytes(),
        }
    }

    /// Chunks of phase `phase` (0 for a phase it does not have).
    fn chunks(&self, phase: u8) -> u32 {
        match self {
            Machine::Broadcast(b) => b.chunking().count(),
            Machine::Reduce(r) => r.chunking().count(),
            Machine::Allreduce(a) => a.chunks(phase),
            Machine::Doubling(_) | Machine::Flat(_) => 1,
        }
    }

    /// Stamp this machine's header on outgoing messages.
    pub(crate) fn stamp(&self, msgs: &mut [Msg]) {
        let kind = self.kind();
        for m in msgs {
            m.shape = shape(kind, m.chunk.checked_add(1) == Some(self.chunks(m.phase)));
        }
    }

    /// Check a chunk's header against this machine (a `shape` of 0 says
    /// nothing and passes).
    fn check_shape(
        &self,
        me: usize,
        from: usize,
        phase: u8,
        chunk: u32,
        shape: u8,
        len: usize,
    ) -> Result<(), Error> {
        if shape == 0 {
            return Ok(());
        }
        let ours = self.kind();
        let theirs = Kind::of_shape(shape);
        if theirs != Some(ours) {
            return Err(match theirs {
                Some(t) if t.reduces_to_all() && ours.reduces_to_all() => {
                    self.operands_differ(me, from, chunk, shape, len)
                }
                _ => Error::CollectiveMismatch {
                    from,
                    ours: ours.name(),
                    theirs: theirs.map_or("an unknown algorithm", Kind::name),
                },
            });
        }
        let count = self.chunks(phase);
        if chunk < count && (shape & SHAPE_LAST != 0) != (chunk + 1 == count) {
            return Err(self.operands_differ(me, from, chunk, shape, len));
        }
        Ok(())
    }

    /// [`Error::OperandsDiffer`] for a chunk of `len` bytes that does not
    /// fit this rank's operand.
    fn operands_differ(&self, me: usize, from: usize, chunk: u32, shape: u8, len: usize) -> Error {
        let kind = Kind::of_shape(shape).unwrap_or(self.kind());
        let whole = kind.one_chunk() || (chunk == 0 && shape & SHAPE_LAST != 0);
        Error::OperandsDiffer {
            me,
            ours: self.bytes(),
            from,
            theirs: whole.then_some(len),
            chunk,
            chunk_len: len,
        }
    }

    /// Feed a chunk with its header: what to send, or why the collective
    /// fails (a chunk that does not fit this rank's operand is reported as
    /// [`Error::OperandsDiffer`]).
    pub(crate) fn deliver(
        &mut self,
        me: usize,
        from: usize,
        phase: u8,
        chunk: u32,
        shape: u8,
        data: &[u8],
    ) -> Result<Vec<Msg>, Error> {
        self.check_shape(me, from, phase, chunk, shape, data.len())?;
        match self.on_msg(from, phase, chunk, data) {
            Ok(mut out) => {
                self.stamp(&mut out);
                Ok(out)
            }
            Err(
                Error::ChunkLength { .. }
                | Error::ChunkOutOfRange { .. }
                | Error::LengthMismatch { .. },
            ) => Err(self.operands_differ(me, from, chunk, shape, data.len())),
            Err(e) => Err(e),
        }
    }
}
