//! Per-team bookkeeping of collectives: sequence numbers, the machines in
//! progress, and messages that arrive before this rank starts their
//! collective.
//!
//! Every member starts the collectives of a team in the same order (as
//! MPI and GASNet-EX require), so the `i`-th collective a rank starts on a
//! team has the same sequence number (`i` modulo 2³², wrapping) everywhere,
//! and the engine tags each message with it. A message whose sequence this
//! rank has not reached yet is held until it starts that collective.
//! Sequences within 2³¹ after the next one to be assigned count as not yet
//! started; those before it as started (and, if no longer held, retired).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::bcast::Broadcast;
use crate::flat::FlatAllreduce;
use crate::machine::Machine;
use crate::msg::{Config, Kind, Msg};
use crate::op::Reduction;
use crate::Error;
use fail::outside_error;

/// A collective to start, with this rank's arguments.
#[derive(Debug, Clone)]
pub enum CollOp {
    /// Broadcast `len` bytes from `root`; `src` is the data on the root
    /// (`None` elsewhere).
    Broadcast {
        /// Root team rank.
        root: usize,
        /// Bytes broadcast (single-valued).
        len: usize,
        /// The data, on the root.
        src: Option<Vec<u8>>,
    },
    /// Reduce every rank's `src` to `root`.
    ReduceToOne {
        /// Root team rank.
        root: usize,
        /// This rank's contribution.
        src: Vec<u8>,
        /// The operator.
        reduction: Reduction,
    },
    /// Reduce every rank's `src` to every rank.
    ReduceToAll {
        /// This rank's contribution.
        src: Vec<u8>,
        /// The operator.
        reduction: Reduction,
    },
}

/// A message held for a collective not yet started here.
#[derive(Debug)]
struct Early {
    from: usize,
    phase: u8,
    chunk: u32,
    shape: u8,
    data: Vec<u8>,
}

/// One rank's collectives on one team.
#[derive(Debug)]
pub struct TeamColl {
    size: usize,
    me: usize,
    cfg: Config,
    next_seq: u32,
    active: HashMap<u32, Machine>,
    early: HashMap<u32, Vec<Early>>,
    /// Collectives that failed here, with the error their wait returns.
    failed: HashMap<u32, Error>,
    /// Failed collectives retired (or refused at the start): messages
    /// still arriving for them are dropped.
    dead: HashSet<u32>,
    /// Abort messages to send, by sequence ([`TeamColl::take_aborts`]).
    aborts: Vec<(u32, Msg)>,
    /// The largest message the transport carries, if it limits them
    /// ([`TeamColl::set_chunk_limit`]).
    limit: Option<usize>,
    /// Small reductions to all may take the direct exchange.
    direct: bool,
    /// The collective run outside the machines, while it runs
    /// ([`TeamColl::start_outside`]).
    outside: Option<Outside>,
    /// Aborts dropped: for collectives complete here (sequence, sender,
    /// reason; [`TeamColl::take_dropped_aborts`]).
    dropped: Vec<(u32, usize, String)>,
}

/// A collective run outside the machines: what its messages are checked
/// against.
#[derive(Debug, Clone, Copy)]
struct Outside {
    seq: u32,
    kind: Kind,
    len: usize,
}

impl TeamColl {
    /// Collectives on a team of `size` ranks, as team rank `me`, shaped by
    /// `cfg` (which must be the same on every member).
    pub fn new(size: usize, me: usize, cfg: Config) -> Result<TeamColl, Error> {
        if size == 0 {
            return Err(Error::EmptyTeam);
        }
        if me >= size {
            return Err(Error::RankOutsideTeam { rank: me, size });
        }
        if cfg.fanout == 0 {
            return Err(Error::ZeroFanout);
        }
        if cfg.max_chunk == 0 {
            return Err(Error::ZeroChunk);
        }
        Ok(TeamColl {
            size,
            me,
            cfg,
            next_seq: 0,
            active: HashMap::default(),
            early: HashMap::default(),
            failed: HashMap::default(),
            dead: HashSet::default(),
            aborts: Vec::new(),
            limit: None,
            direct: false,
            outside: None,
            dropped: Vec::new(),
        })
    }

    /// Let small reductions to all take the direct exchange
    /// ([`crate::flat`]); every member must say the same. The engine does
    /// so for a team whose members share memory, where a step costs a
    /// store and a load; over a network, recursive doubling's fewer
    /// messages win.
    pub fn set_direct_exchange(&mut self, on: bool) {
        self.direct = on;
    }

    /// The largest message the transport carries (the conduit's
    /// `GASNET_OFI_MAX_MEDIUM`; the same on every member). Chunks hold at
    /// least one element, so a reduction whose element is larger is
    /// refused at its start ([`Error::ElemTooLarge`]); without a limit a
    /// chunk may exceed `cfg.max_chunk` by up to one element.
    pub fn set_chunk_limit(&mut self, limit: usize) {
        self.limit = Some(limit);
    }

    /// The sequence number the next [`TeamColl::start`] will assign.
    pub fn next_seq(&self) -> u32 {
        self.next_seq
    }

    /// Whether small reductions to all take the direct exchange
    /// ([`TeamColl::set_direct_exchange`]).
    pub fn direct_exchange(&self) -> bool {
        self.direct
    }

    /// Whether messages are held for collective `seq`, not started here.
    pub fn holds(&self, seq: u32) -> bool {
        self.early.contains_key(&seq)
    }

    /// Count collective [`TeamColl::next_seq`] as started and run by the
    /// caller outside the machines: the engine's blocking collectives
    /// through a board, which post and read there exactly what
    /// [`TeamColl::start_posted_allreduce`]'s or
    /// [`TeamColl::start_posted_bcast`]'s collective would, so the other
    /// members cannot tell. `kind` and `len` are this rank's algorithm
    /// and operand. Returns its sequence number. Until
    /// [`TeamColl::end_outside`], a chunk for it (a member that took
    /// another path: its operand differs) or an abort fails it
    /// ([`TeamColl::has_failed`], [`TeamColl::take_result`]); later a
    /// message for it is stale. Refused, taking nothing, when messages
    /// are held for it: it must then start here to meet them.
    pub fn start_outside(&mut self, kind: Kind, len: usize) -> Result<u32, Error> {
        let seq = self.next_seq;
        if self.holds(seq) {
            return Err(Error::HeldForOutside { seq });
        }
        self.next_seq = seq.wrapping_add(1);
        self.outside = Some(Outside { seq, kind, len });
        Ok(seq)
    }

    /// The collective run outside ([`TeamColl::start_outside`]) is over
    /// here.
    pub fn end_outside(&mut self) {
        self.outside = None;
    }

    /// Start a collective: assigns the next sequence number and returns it
    /// with the messages to send (including any provoked by messages held
    /// for this sequence). A collective this rank's arguments make invalid
    /// consumes no sequence number when every member can tell (a bad
    /// operator, an element larger than a chunk); one only this rank can
    /// tell (its operand's length, a root's source) consumes it and fails
    /// the collective for the other members too ([`TeamColl::take_aborts`]).
    /// An error from a held message fails the collective: its wait
    /// ([`TeamColl::take_result`]) returns it.
    pub fn start(&mut self, op: CollOp) -> Result<(u32, Vec<Msg>), Error> {
        self.check_elem(&op)?;
        let built = Machine::build(op, self.size, self.me, self.cfg, self.direct);
        self.begin(built)
    }

    /// Refuse a reduction whose element exceeds the chunk limit (every
    /// member sees the same element size and limit).
    fn check_elem(&self, op: &CollOp) -> Result<(), Error> {
        if let CollOp::ReduceToOne { reduction, .. } | CollOp::ReduceToAll { reduction, .. } = op {
            let elem_size = reduction.elem_size();
            if let Some(max) = self.limit.filter(|&max| elem_size > max) {
                return Err(Error::ElemTooLarge { elem_size, max });
            }
        }
        Ok(())
    }

    /// Start a broadcast ([`CollOp::Broadcast`]) whose root posts the whole
    /// payload once for every other member to read in place (a board in
    /// memory the team shares; [`Broadcast::posted`]); every member must
    /// choose this for the same collective. The root's data is
    /// [`TeamColl::posted_data`]; the others get it as chunk 0 from the
    /// root through [`TeamColl::on_msg`]. Returns the sequence number and
    /// any messages provoked by ones held for it (none for this shape).
    pub fn start_posted_bcast(&mut self, op: CollOp) -> Result<(u32, Vec<Msg>), Error> {
        let CollOp::Broadcast { root, len, src } = op else {
            return Err(Error::WrongShape);
        };
        let src = if self.me == root { src } else { None };
        let b = Broadcast::posted(self.size, self.me, root, len, src);
        self.begin(b.map(|b| (Machine::Broadcast(b), Vec::new())))
    }

    /// Start a reduction to all ([`CollOp::ReduceToAll`]) by direct
    /// exchange whose every member posts its contribution once for the
    /// others to read in place ([`FlatAllreduce::posted`]); every member
    /// must choose this for the same collective. This rank's contribution
    /// is [`TeamColl::posted_data`]; the others' arrive through
    /// [`TeamColl::on_msg`] (phase 0, chunk 0, from their team rank).
    pub fn start_posted_allreduce(&mut self, op: CollOp) -> Result<(u32, Vec<Msg>), Error> {
        let CollOp::ReduceToAll { src, reduction } = op else {
            return Err(Error::WrongShape);
        };
        self.check_elem(&CollOp::ReduceToAll {
            src: Vec::new(),
            reduction: reduction.clone(),
        })?;
        let f = FlatAllreduce::posted(self.size, self.me, src, reduction);
        self.begin(f.map(|f| (Machine::Flat(f), Vec::new())))
    }

    /// What this rank posts for collective `seq`: a posted broadcast's
    /// payload on its root ([`TeamColl::start_posted_bcast`]), this rank's
    /// contribution to a posted reduction to all
    /// ([`TeamColl::start_posted_allreduce`]); `None` otherwise.
    pub fn posted_data(&self, seq: u32) -> Option<&[u8]> {
        match self.active.get(&seq) {
            Some(Machine::Broadcast(b)) if b.is_done() => Some(b.data()),
            Some(Machine::Flat(f)) => f.own(),
            _ => None,
        }
    }

    /// Give `machine` the next sequence number and feed it the messages
    /// held for that number; returns the number and what they provoked.
    fn install(&mut self, machine: Machine) -> (u32, Vec<Msg>) {
        let mut out = Vec::new();
        let seq = self.next_seq;
        self.next_seq = seq.wrapping_add(1);
        if !self.dead.is_empty() {
            // A number reused after 2^32 collectives.
            self.dead.remove(&seq);
        }
        self.active.insert(seq, machine);
        for e in self.early.remove(&seq).unwrap_or_default() {
            out.extend(self.deliver(seq, e.from, e.phase, e.chunk, e.shape, &e.data));
        }
        (seq, out)
    }

    /// [`TeamColl::start`] with chunks of at most `max_chunk` bytes for
    /// this collective (every member must choose the same).
    pub fn start_chunked(
        &mut self,
        op: CollOp,
        max_chunk: usize,
    ) -> Result<(u32, Vec<Msg>), Error> {
        if max_chunk == 0 {
            return Err(Error::ZeroChunk);
        }
        let saved = self.cfg.max_chunk;
        self.cfg.max_chunk = max_chunk;
        let r = self.start(op);
        self.cfg.max_chunk = saved;
        r
    }

    /// Whether every collective started here is complete (results may be
    /// waiting to be taken).
    pub fn all_done(&self) -> bool {
        self.active.values().all(Machine::is_done)
    }

    /// Feed a message to active collective `seq`: what to send. An abort
    /// fails it (without telling anyone: its sender told everyone); so
    /// does any error of the chunk, and then the other members are told.
    fn deliver(
        &mut self,
        seq: u32,
        from: usize,
        phase: u8,
        chunk: u32,
        shape: u8,
        data: &[u8],
    ) -> Vec<Msg> {
        let Some(m) = self.active.get_mut(&seq) else {
            return Vec::new();
        };
        if Kind::of_shape(shape) == Some(Kind::Abort) {
            // Complete here (a broadcast's root, a reduction's leaf): its
            // result stands.
            let end = !m.is_done();
            self.on_abort(seq, from, data, end);
            return Vec::new();
        }
        match m.deliver(self.me, from, phase, chunk, shape, data) {
            Ok(out) => out,
            Err(e) => {
                self.fail(seq, e, true);
                Vec::new()
            }
        }
    }

    /// Whether `seq` has not been started here yet.
    fn is_future(&self, seq: u32) -> bool {
        seq.wrapping_sub(self.next_seq) < 1 << 31
    }

    /// A message for collective `seq` arrived from team rank `from`:
    /// returns what to send. A message for a collective not yet started
    /// here is held (and an empty list returned); one for a retired
    /// collective is an error. One the collective rejects fails it: its
    /// wait returns the error, and the other members are told
    /// ([`TeamColl::take_aborts`]). The message carries no header
    /// ([`TeamColl::on_msg_shaped`] with shape 0).
    pub fn on_msg(
        &mut self,
        seq: u32,
        from: usize,
        phase: u8,
        chunk: u32,
        data: &[u8],
    ) -> Result<Vec<Msg>, Error> {
        self.on_msg_shaped(seq, from, phase, chunk, 0, data)
    }

    /// [`TeamColl::on_msg`] for a message with its header's
    /// [`Msg::shape`]: a chunk from a member whose operand has another
    /// length fails the collective with [`Error::OperandsDiffer`], and an
    /// abort ends it with [`Error::Aborted`]. Messages for a collective
    /// that failed are dropped.
    pub fn on_msg_shaped(
        &mut self,
        seq: u32,
        from: usize,
        phase: u8,
        chunk: u32,
        shape: u8,
        data: &[u8],
    ) -> Result<Vec<Msg>, Error> {
        if from >= self.size {
            return Err(Error::RankOutsideTeam {
                rank: from,
                size: self.size,
            });
        }
        if self.active.contains_key(&seq) {
            return Ok(self.deliver(seq, from, phase, chunk, shape, data));
        }
        // A sequence number in the future is not one of these (after 2^32
        // collectives a number is reused: its early chunks are held).
        if !self.is_future(seq) && (self.failed.contains_key(&seq) || self.dead.contains(&seq)) {
            return Ok(Vec::new());
        }
        let abort = Kind::of_shape(shape) == Some(Kind::Abort);
        if let Some(o) = self.outside.filter(|o| o.seq == seq) {
            if abort {
                self.on_abort(seq, from, data, true);
            } else {
                let e = outside_error(self.me, o, from, chunk, shape, data.len());
                self.fail(seq, e, true);
            }
            return Ok(Vec::new());
        }
        if !self.is_future(seq) {
            if abort {
                // Complete and retired here: nothing to end.
                self.on_abort(seq, from, data, false);
                return Ok(Vec::new());
            }
            return Err(Error::StaleSequence { seq });
        }
        self.early.entry(seq).or_default().push(Early {
            from,
            phase,
            chunk,
            shape,
            data: data.to_vec(),
        });
        Ok(Vec::new())
    }

    /// Whether collective `seq` is in progress here and complete.
    pub fn is_done(&self, seq: u32) -> bool {
        self.active.get(&seq).is_some_and(Machine::is_done) || self.failed.contains_key(&seq)
    }

    /// Whether collective `seq` is in progress here as a reduction to all
    /// by direct exchange ([`crate::flat`]).
    pub fn is_flat(&self, seq: u32) -> bool {
        matches!(self.active.get(&seq), Some(Machine::Flat(_)))
    }

    /// Number of collectives started and not yet retired.
    pub fn in_progress(&self) -> usize {
        self.active.len() + self.failed.len()
    }

    /// Retire a complete collective and return its result: the data for a
    /// broadcast or reduction to all, the reduced data on a reduction's
    /// root, `None` on a reduction's other ranks. Errors when `seq` is not
    /// complete (or not held), and with the error of a collective that
    /// failed.
    pub fn take_result(&mut self, seq: u32) -> Result<Option<Vec<u8>>, Error> {
        if let Some(e) = self.failed.remove(&seq) {
            self.dead.insert(seq);
            return Err(e);
        }
        if !self.is_done(seq) {
            return Err(Error::NotDone { seq });
        }
        let m = self.active.remove(&seq).expect("is_done found it");
        Ok(m.into_result())
    }
}

#[path = "engine_fail.rs"]
mod fail;

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
