//! Dissemination barrier over AM Short, split-phase, with named and
//! anonymous barriers and mismatch detection (GASNet's AMDISSEM).
//!
//! In round `k` (of `ceil(log2 N)`) a rank sends what it knows to
//! `rank + 2^k` and waits for the message from `rank - 2^k`. What travels is
//! a [`Value`]: anonymous, or named with an id, plus a sticky mismatch bit.
//! Combining is idempotent, so after the last round every rank holds the
//! combination of all ranks' values: a mismatch (two named barriers with
//! different ids) is seen by all.
//!
//! A rank can be at most one barrier ahead of another, so messages are kept
//! per epoch parity.

use crate::Error;

/// What a rank contributes and what is combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Value {
    /// No id (matches anything).
    pub anonymous: bool,
    /// The id of a named barrier.
    pub id: u32,
    /// Two named barriers with different ids were combined.
    pub mismatch: bool,
}

impl Value {
    /// A named (`Some(id)`) or anonymous (`None`) contribution.
    pub fn new(id: Option<u32>) -> Value {
        Value {
            anonymous: id.is_none(),
            id: id.unwrap_or(0),
            mismatch: false,
        }
    }

    /// A contribution that makes the barrier end in [`Outcome::Mismatch`]
    /// on every rank whatever the others notify (GASNet's
    /// `GASNET_BARRIERFLAG_MISMATCH`): the sticky mismatch bit, no id.
    pub fn forced_mismatch() -> Value {
        Value {
            mismatch: true,
            ..Value::new(None)
        }
    }

    /// Combine two values.
    pub fn combine(self, other: Value) -> Value {
        let mismatch = self.mismatch
            || other.mismatch
            || (!self.anonymous && !other.anonymous && self.id != other.id);
        let (anonymous, id) = if self.anonymous {
            (other.anonymous, other.id)
        } else {
            (false, self.id)
        };
        Value {
            anonymous,
            id,
            mismatch,
        }
    }

    /// Pack into two AM arguments.
    pub fn to_args(self) -> [u32; 2] {
        [
            self.id,
            (self.anonymous as u32) | ((self.mismatch as u32) << 1),
        ]
    }

    /// Unpack from two AM arguments.
    pub fn from_args(id: u32, flags: u32) -> Value {
        Value {
            anonymous: flags & 1 != 0,
            id,
            mismatch: flags & 2 != 0,
        }
    }
}

/// A message the barrier wants sent: to `dest`, AM arguments
/// `[epoch, round, value.0, value.1]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Send {
    /// Destination rank.
    pub dest: usize,
    /// Arguments.
    pub args: [u32; 4],
}

/// How a completed barrier ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every rank agreed.
    Ok,
    /// Named barriers with different ids met (GASNET_ERR_BARRIER_MISMATCH).
    Mismatch,
}

/// One rank's barrier state.
#[derive(Debug)]
pub struct Barrier {
    rank: usize,
    size: usize,
    rounds: usize,
    epoch: u32,
    in_progress: bool,
    round: usize,
    value: Value,
    arrived: [Vec<Option<Value>>; 2],
}

impl Barrier {
    /// State for `rank` of `size`.
    pub fn new(rank: usize, size: usize) -> Barrier {
        let rounds = if size <= 1 {
            0
        } else {
            (usize::BITS - (size - 1).leading_zeros()) as usize
        };
        Barrier {
            rank,
            size,
            rounds,
            epoch: 0,
            in_progress: false,
            round: 0,
            value: Value::new(None),
            arrived: [vec![None; rounds], vec![None; rounds]],
        }
    }

    /// Number of rounds.
    pub fn rounds(&self) -> usize {
        self.rounds
    }

    /// The name the last completed barrier agreed on: `None` when every
    /// rank was anonymous (GASNet's `gasnet_barrier_result`).
    pub fn result(&self) -> Option<u32> {
        (!self.value.anonymous).then_some(self.value.id)
    }

    /// Whether a barrier is notified and not yet complete.
    pub fn in_progress(&self) -> bool {
        self.in_progress
    }

    fn send_for_round(&self, round: usize) -> Send {
        let [a, b] = self.value.to_args();
        Send {
            dest: (self.rank + (1 << round)) % self.size,
            args: [self.epoch, round as u32, a, b],
        }
    }

    /// Start a barrier (named with `Some(id)`). Returns the first message.
    pub fn notify(&mut self, id: Option<u32>) -> Result<Option<Send>, Error> {
        self.notify_with(Value::new(id))
    }

    /// Start a barrier with this rank's contribution `v` ([`Value::new`], or
    /// [`Value::forced_mismatch`]). Returns the first message.
    pub fn notify_with(&mut self, v: Value) -> Result<Option<Send>, Error> {
        if self.in_progress {
            return Err(Error::BarrierNotifiedTwice);
        }
        self.in_progress = true;
        self.round = 0;
        self.value = v;
        Ok((self.rounds > 0).then(|| self.send_for_round(0)))
    }

    /// Record a barrier message from `src`.
    pub fn on_message(&mut self, src: u32, args: [u32; 4]) -> Result<(), Error> {
        let [epoch, round, a, b] = args;
        let bad = Error::MalformedBarrier { src, epoch, round };
        if round as usize >= self.rounds {
            return Err(bad);
        }
        // A peer is in our epoch, or at most one ahead.
        let ahead = epoch.wrapping_sub(self.epoch);
        if ahead > 1 {
            return Err(bad);
        }
        let slot = &mut self.arrived[(epoch & 1) as usize][round as usize];
        if slot.is_some() {
            return Err(bad);
        }
        *slot = Some(Value::from_args(a, b));
        Ok(())
    }

    /// Advance as far as the arrived messages allow. Returns the messages to
    /// send and, when the barrier completed, its outcome.
    pub fn advance(&mut self) -> Result<(Vec<Send>, Option<Outcome>), Error> {
        if !self.in_progress {
            return Err(Error::BarrierNotNotified);
        }
        let mut sends = Vec::new();
        let parity = (self.epoch & 1) as usize;
        while self.round < self.rounds {
            match self.arrived[parity][self.round].take() {
                None => return Ok((sends, None)),
                Some(v) => {
                    self.value = self.value.combine(v);
                    self.round += 1;
                    if self.round < self.rounds {
                        sends.push(self.send_for_round(self.round));
                    }
                }
            }
        }
        self.in_progress = false;
        self.epoch = self.epoch.wrapping_add(1);
        let outcome = if self.value.mismatch {
            Outcome::Mismatch
        } else {
            Outcome::Ok
        };
        Ok((sends, Some(outcome)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// An id that makes the simulated rank force a mismatch instead.
    const FORCE: u32 = u32::MAX;

    /// Run barriers among `n` simulated ranks with messages delivered in a
    /// scrambled order; returns each rank's outcome per barrier.
    fn simulate(n: usize, ids: &[Vec<Option<u32>>]) -> Vec<Vec<Outcome>> {
        let mut bs: Vec<Barrier> = (0..n).map(|r| Barrier::new(r, n)).collect();
        let mut out = vec![Vec::new(); n];
        let mut queue: VecDeque<(usize, u32, [u32; 4])> = VecDeque::new();
        let mut next_barrier = vec![0usize; n];
        let mut seed = 7u64;
        loop {
            for r in 0..n {
                if !bs[r].in_progress() && next_barrier[r] < ids.len() {
                    let id = ids[next_barrier[r]][r];
                    next_barrier[r] += 1;
                    let first = if id == Some(FORCE) {
                        bs[r].notify_with(Value::forced_mismatch())
                    } else {
                        bs[r].notify(id)
                    };
                    if let Some(s) = first.unwrap() {
                        queue.push_back((s.dest, r as u32, s.args));
                    }
                }
                if bs[r].in_progress() {
                    let (sends, done) = bs[r].advance().unwrap();
                    for s in sends {
                        queue.push_back((s.dest, r as u32, s.args));
                    }
                    if let Some(o) = done {
                        out[r].push(o);
                    }
                }
            }
            if queue.is_empty() {
                if out.iter().all(|o| o.len() == ids.len()) {
                    return out;
                }
                continue;
            }
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            let i = (seed >> 33) as usize % queue.len();
            let (dest, src, args) = queue.remove(i).unwrap();
            bs[dest].on_message(src, args).unwrap();
        }
    }

    #[test]
    fn anonymous_barriers_complete_for_many_sizes() {
        for n in 1..=13 {
            let ids = vec![vec![None; n]; 5];
            let out = simulate(n, &ids);
            assert!(out.iter().all(|o| o == &vec![Outcome::Ok; 5]), "n={n}");
        }
    }

    #[test]
    fn named_mismatch_is_seen_by_all() {
        for n in 2..=9 {
            let mut bad = vec![Some(5); n];
            bad[n - 1] = Some(6);
            let mut mixed = vec![None; n];
            mixed[0] = Some(9);
            let ids = vec![vec![Some(1); n], bad, mixed, vec![None; n]];
            let out = simulate(n, &ids);
            for o in &out {
                assert_eq!(
                    o,
                    &vec![Outcome::Ok, Outcome::Mismatch, Outcome::Ok, Outcome::Ok],
                    "n={n}"
                );
            }
        }
    }

    #[test]
    fn a_forced_mismatch_is_seen_by_all_and_does_not_last() {
        for n in 1..=9 {
            for forcer in [0, n / 2, n - 1] {
                let mut forced = vec![Some(4); n];
                forced[forcer] = Some(FORCE);
                let mut anon = vec![None; n];
                anon[forcer] = Some(FORCE);
                let ids = vec![forced, vec![Some(4); n], anon, vec![None; n]];
                for o in &simulate(n, &ids) {
                    assert_eq!(
                        o,
                        &vec![
                            Outcome::Mismatch,
                            Outcome::Ok,
                            Outcome::Mismatch,
                            Outcome::Ok
                        ],
                        "n={n}, rank {forcer} forcing"
                    );
                }
            }
        }
    }

    #[test]
    fn usage_errors() {
        let mut b = Barrier::new(0, 4);
        assert_eq!(b.advance().unwrap_err(), Error::BarrierNotNotified);
        b.notify(None).unwrap();
        assert_eq!(b.notify(None).unwrap_err(), Error::BarrierNotifiedTwice);
        assert!(b.on_message(1, [0, 5, 0, 0]).is_err());
        assert!(b.on_message(1, [3, 0, 0, 0]).is_err());
        b.on_message(3, [0, 0, 0, 1]).unwrap();
        assert!(b.on_message(3, [0, 0, 0, 1]).is_err(), "duplicate round");
    }

    #[test]
    fn value_combination() {
        let a = Value::new(Some(1));
        let n = Value::new(None);
        assert_eq!(a.combine(n), a);
        assert_eq!(n.combine(a), a);
        assert!(a.combine(Value::new(Some(2))).mismatch);
        let v = Value::from_args(a.to_args()[0], a.to_args()[1]);
        assert_eq!(v, a);
    }
}
