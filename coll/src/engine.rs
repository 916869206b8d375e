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

use rustc_hash::FxHashMap as HashMap;

use crate::allreduce::Allreduce;
use crate::bcast::Broadcast;
use crate::flat::{self, FlatAllreduce};
use crate::msg::{Config, Msg};
use crate::op::Reduction;
use crate::rdb::RecursiveDoubling;
use crate::reduce::Reduce;
use crate::Error;

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

/// A collective in progress.
#[derive(Debug)]
enum Machine {
    Broadcast(Broadcast),
    Reduce(Reduce),
    Allreduce(Allreduce),
    Doubling(RecursiveDoubling),
    Flat(FlatAllreduce),
}

impl Machine {
    fn on_msg(
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

    fn is_done(&self) -> bool {
        match self {
            Machine::Broadcast(b) => b.is_done(),
            Machine::Reduce(r) => r.is_done(),
            Machine::Allreduce(a) => a.is_done(),
            Machine::Doubling(d) => d.is_done(),
            Machine::Flat(f) => f.is_done(),
        }
    }

    fn into_result(self) -> Option<Vec<u8>> {
        match self {
            Machine::Broadcast(b) => b.into_result(),
            Machine::Reduce(r) => r.into_result(),
            Machine::Allreduce(a) => a.into_result(),
            Machine::Doubling(d) => d.into_result(),
            Machine::Flat(f) => f.into_result(),
        }
    }
}

/// A message held for a collective not yet started here.
#[derive(Debug)]
struct Early {
    from: usize,
    phase: u8,
    chunk: u32,
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
    /// The first error a held message met when its collective started.
    held_error: Option<Error>,
    /// Small reductions to all may take the direct exchange.
    direct: bool,
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
            held_error: None,
            direct: false,
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
    /// caller outside the machines: the engine's blocking reduction to all
    /// through a board, which posts and reads there exactly what
    /// [`TeamColl::start_posted_allreduce`]'s collective would, so the
    /// other members cannot tell. Returns its sequence number; a message
    /// for it later is stale. Refused, taking nothing, when messages are
    /// held for it: it must then start here to meet them.
    pub fn start_outside(&mut self) -> Result<u32, Error> {
        let seq = self.next_seq;
        if self.holds(seq) {
            return Err(Error::HeldForOutside { seq });
        }
        self.next_seq = seq.wrapping_add(1);
        Ok(seq)
    }

    /// Start a collective: assigns the next sequence number and returns it
    /// with the messages to send (including any provoked by messages held
    /// for this sequence). A collective this rank's arguments make invalid
    /// consumes no sequence number. An error from a held message does not
    /// keep the collective's messages from being returned: it waits in
    /// [`TeamColl::take_error`].
    pub fn start(&mut self, op: CollOp) -> Result<(u32, Vec<Msg>), Error> {
        let (n, me, cfg) = (self.size, self.me, self.cfg);
        let (machine, mut out) = match op {
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
                if self.direct && flat::applies(n, src.len()) && src.len() <= cfg.max_chunk =>
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
        };
        let (seq, more) = self.install(machine);
        out.extend(more);
        Ok((seq, out))
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
        let b = Broadcast::posted(self.size, self.me, root, len, src)?;
        Ok(self.install(Machine::Broadcast(b)))
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
        let f = FlatAllreduce::posted(self.size, self.me, src, reduction)?;
        Ok(self.install(Machine::Flat(f)))
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
        let machine = self.active.entry(seq).or_insert(machine);
        for e in self.early.remove(&seq).unwrap_or_default() {
            match machine.on_msg(e.from, e.phase, e.chunk, &e.data) {
                Ok(more) => out.extend(more),
                Err(err) => {
                    self.held_error.get_or_insert(err);
                }
            }
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

    /// The first error a message held for a collective met when the
    /// collective started (its other messages were still returned by
    /// [`TeamColl::start`]).
    pub fn take_error(&mut self) -> Option<Error> {
        self.held_error.take()
    }

    /// Whether `seq` has not been started here yet.
    fn is_future(&self, seq: u32) -> bool {
        seq.wrapping_sub(self.next_seq) < 1 << 31
    }

    /// A message for collective `seq` arrived from team rank `from`:
    /// returns what to send. A message for a collective not yet started
    /// here is held (and an empty list returned); one for a retired
    /// collective is an error, as is whatever the collective rejects.
    pub fn on_msg(
        &mut self,
        seq: u32,
        from: usize,
        phase: u8,
        chunk: u32,
        data: &[u8],
    ) -> Result<Vec<Msg>, Error> {
        if from >= self.size {
            return Err(Error::RankOutsideTeam {
                rank: from,
                size: self.size,
            });
        }
        if let Some(m) = self.active.get_mut(&seq) {
            return m.on_msg(from, phase, chunk, data);
        }
        if !self.is_future(seq) {
            return Err(Error::StaleSequence { seq });
        }
        self.early.entry(seq).or_default().push(Early {
            from,
            phase,
            chunk,
            data: data.to_vec(),
        });
        Ok(Vec::new())
    }

    /// Whether collective `seq` is in progress here and complete.
    pub fn is_done(&self, seq: u32) -> bool {
        self.active.get(&seq).is_some_and(Machine::is_done)
    }

    /// Whether collective `seq` is in progress here as a reduction to all
    /// by direct exchange ([`crate::flat`]).
    pub fn is_flat(&self, seq: u32) -> bool {
        matches!(self.active.get(&seq), Some(Machine::Flat(_)))
    }

    /// Number of collectives started and not yet retired.
    pub fn in_progress(&self) -> usize {
        self.active.len()
    }

    /// Retire a complete collective and return its result: the data for a
    /// broadcast or reduction to all, the reduced data on a reduction's
    /// root, `None` on a reduction's other ranks. Errors when `seq` is not
    /// complete (or not held).
    pub fn take_result(&mut self, seq: u32) -> Result<Option<Vec<u8>>, Error> {
        if !self.is_done(seq) {
            return Err(Error::NotDone { seq });
        }
        let m = self.active.remove(&seq).expect("is_done found it");
        Ok(m.into_result())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bcast(root: usize, data: &[u8]) -> CollOp {
        CollOp::Broadcast {
            root,
            len: data.len(),
            src: Some(data.to_vec()),
        }
    }

    #[test]
    fn early_message_is_held_until_start() {
        let cfg = Config::default();
        let mut root = TeamColl::new(2, 0, cfg).unwrap();
        let mut leaf = TeamColl::new(2, 1, cfg).unwrap();
        let (s0, out) = root.start(bcast(0, b"hi")).unwrap();
        assert_eq!((s0, out.len()), (0, 1));
        assert!(root.is_done(0));
        assert_eq!(root.take_result(0), Ok(Some(b"hi".to_vec())));
        // The leaf has not started sequence 0 yet.
        assert!(leaf.on_msg(0, 0, 0, 0, &out[0].data).unwrap().is_empty());
        assert!(!leaf.is_done(0));
        assert_eq!(leaf.take_result(0), Err(Error::NotDone { seq: 0 }));
        let op = CollOp::Broadcast {
            root: 0,
            len: 2,
            src: None,
        };
        let (s, sent) = leaf.start(op).unwrap();
        assert_eq!((s, sent.len()), (0, 0));
        assert_eq!(leaf.take_result(0), Ok(Some(b"hi".to_vec())));
        // Sequence 0 is retired.
        assert_eq!(
            leaf.on_msg(0, 0, 0, 0, b"hi"),
            Err(Error::StaleSequence { seq: 0 })
        );
        assert_eq!(leaf.next_seq(), 1);
    }

    #[test]
    fn single_phase_rejects_phase_one() {
        let mut t = TeamColl::new(2, 1, Config::default()).unwrap();
        t.start(bcast(0, b"x")).unwrap();
        assert_eq!(
            t.on_msg(0, 0, 1, 0, b"x"),
            Err(Error::BadPhase {
                phase: 1,
                phases: 1
            })
        );
        assert!(matches!(
            t.on_msg(0, 5, 0, 0, b"x"),
            Err(Error::RankOutsideTeam { rank: 5, size: 2 })
        ));
    }

    #[test]
    fn a_collective_run_outside_takes_its_sequence_number() {
        let mut t = TeamColl::new(2, 1, Config::default()).unwrap();
        assert_eq!(t.start_outside(), Ok(0));
        assert_eq!((t.next_seq(), t.in_progress()), (1, 0));
        assert!(t.all_done());
        // Its number is spent: a message for it is stale.
        assert_eq!(
            t.on_msg(0, 0, 0, 0, b"x"),
            Err(Error::StaleSequence { seq: 0 })
        );
        // A message held for the next one keeps it from running outside.
        assert!(t.on_msg(1, 0, 0, 0, b"x").unwrap().is_empty());
        assert!(t.holds(1));
        assert_eq!(t.start_outside(), Err(Error::HeldForOutside { seq: 1 }));
        assert_eq!(t.next_seq(), 1);
        let (s, _) = t.start(bcast(0, b"x")).unwrap();
        assert_eq!(s, 1);
        assert!(!t.holds(1));
        assert_eq!(t.take_result(1), Ok(Some(b"x".to_vec())));
    }

    #[test]
    fn sequences_wrap() {
        let mut t = TeamColl::new(1, 0, Config::default()).unwrap();
        t.next_seq = u32::MAX;
        let (s, _) = t.start(bcast(0, b"a")).unwrap();
        assert_eq!(s, u32::MAX);
        assert_eq!(t.next_seq(), 0);
        assert!(t.is_future(0) && !t.is_future(u32::MAX));
    }
}
