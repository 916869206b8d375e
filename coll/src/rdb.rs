//! Reduction to all by recursive doubling, for commutative operators on a
//! payload of one chunk: log2(p) rounds of pairwise exchange (p the largest
//! power of two not above the team size), where reduce-then-broadcast
//! ([`crate::allreduce`]) takes twice the tree's depth in steps. Ranks
//! `p..n` first fold their contribution into rank `r - p` and get the
//! result back from it at the end.
//!
//! Phases: 0 = the fold-in from rank `r + p`; `k` in `1..=rounds` = the
//! exchange with rank `r ^ 2^(k-1)`; `rounds + 1` = the result for a rank
//! at or above `p`. Partners combine in team-rank order (the lower rank's
//! value on the left), so both hold the same bits even where an operator
//! declared commutative is not so bit for bit.

use crate::msg::Msg;
use crate::op::Reduction;
use crate::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Waiting for rank `me + p`'s contribution.
    Fold,
    /// In exchange round `k` (1-based).
    Round(u8),
    /// A rank at or above `p`: waiting for the result.
    Result,
    Done,
}

/// One rank's recursive-doubling reduction to all.
#[derive(Debug)]
pub struct RecursiveDoubling {
    n: usize,
    me: usize,
    p: usize,
    rounds: u8,
    reduction: Reduction,
    acc: Vec<u8>,
    state: State,
    /// Messages that arrived before their phase, by phase.
    held: Vec<Option<Vec<u8>>>,
    /// Phases whose message arrived.
    seen: Vec<bool>,
}

impl RecursiveDoubling {
    /// Start: `src` is this rank's contribution (one chunk's worth).
    pub fn new(
        n: usize,
        me: usize,
        src: &[u8],
        reduction: Reduction,
    ) -> Result<(Self, Vec<Msg>), Error> {
        reduction.check_start(n, me, src.len())?;
        let p = 1usize << (usize::BITS - 1 - n.leading_zeros());
        let rounds = p.trailing_zeros() as u8;
        let mut m = RecursiveDoubling {
            n,
            me,
            p,
            rounds,
            reduction,
            acc: src.to_vec(),
            state: State::Done,
            held: vec![None; rounds as usize + 2],
            seen: vec![false; rounds as usize + 2],
        };
        let mut out = Vec::new();
        if me >= p {
            out.push(m.msg(me - p, 0));
            m.state = State::Result;
        } else if me + p < n {
            m.state = State::Fold;
        } else {
            m.enter_round(1, &mut out);
        }
        Ok((m, out))
    }

    fn msg(&self, to: usize, phase: u8) -> Msg {
        Msg {
            to,
            phase,
            chunk: 0,
            data: self.acc.clone(),
            shape: 0,
        }
    }

    fn partner(&self, k: u8) -> usize {
        self.me ^ (1 << (k - 1))
    }

    /// Enter round `k` (or finish after the last one).
    fn enter_round(&mut self, k: u8, out: &mut Vec<Msg>) {
        if k > self.rounds {
            if self.me + self.p < self.n {
                out.push(self.msg(self.me + self.p, self.rounds + 1));
            }
            self.state = State::Done;
            return;
        }
        out.push(self.msg(self.partner(k), k));
        self.state = State::Round(k);
    }

    /// Who sends in `phase`, if anyone does to this rank.
    fn sender(&self, phase: u8) -> Option<usize> {
        if phase == 0 {
            (self.me < self.p && self.me + self.p < self.n).then_some(self.me + self.p)
        } else if phase <= self.rounds {
            (self.me < self.p).then(|| self.partner(phase))
        } else if phase == self.rounds + 1 {
            (self.me >= self.p).then(|| self.me - self.p)
        } else {
            None
        }
    }

    /// A message: returns what to send.
    pub fn on_msg(
        &mut self,
        from: usize,
        phase: u8,
        chunk: u32,
        data: &[u8],
    ) -> Result<Vec<Msg>, Error> {
        let Some(want) = self.sender(phase) else {
            return Err(Error::BadPhase {
                phase,
                phases: self.rounds + 2,
            });
        };
        if from != want {
            return Err(Error::UnexpectedSender {
                me: self.me,
                from,
                chunk,
                expected: vec![want],
            });
        }
        if chunk != 0 {
            return Err(Error::ChunkOutOfRange { chunk, chunks: 1 });
        }
        if data.len() != self.acc.len() {
            return Err(Error::ChunkLength {
                chunk,
                from,
                len: data.len(),
                expected: self.acc.len(),
            });
        }
        if std::mem::replace(&mut self.seen[phase as usize], true) {
            return Err(Error::DuplicateChunk { chunk, from });
        }
        self.held[phase as usize] = Some(data.to_vec());
        let mut out = Vec::new();
        self.advance(&mut out)?;
        Ok(out)
    }

    fn advance(&mut self, out: &mut Vec<Msg>) -> Result<(), Error> {
        loop {
            match self.state {
                State::Fold => {
                    let Some(d) = self.held[0].take() else {
                        return Ok(());
                    };
                    self.reduction.combine(&mut self.acc, &d)?;
                    self.enter_round(1, out);
                }
                State::Round(k) => {
                    let Some(d) = self.held[k as usize].take() else {
                        return Ok(());
                    };
                    if self.me < self.partner(k) {
                        self.reduction.combine(&mut self.acc, &d)?;
                    } else {
                        let mut left = d;
                        self.reduction.combine(&mut left, &self.acc)?;
                        self.acc = left;
                    }
                    self.enter_round(k + 1, out);
                }
                State::Result => {
                    let Some(d) = self.held[self.rounds as usize + 1].take() else {
                        return Ok(());
                    };
                    self.acc = d;
                    self.state = State::Done;
                }
                State::Done => return Ok(()),
            }
        }
    }

    /// Bytes of this rank's contribution (and of every message).
    pub fn bytes(&self) -> usize {
        self.acc.len()
    }

    /// Whether this rank has the result.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// The result, once done.
    pub fn into_result(self) -> Option<Vec<u8>> {
        self.is_done().then_some(self.acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{DType, Op};

    /// Run every rank to completion, delivering in a rotating order.
    fn run(n: usize, vals: &[u64]) -> Vec<Vec<u8>> {
        let red = Reduction::Builtin(Op::Sum, DType::U64);
        let mut ms = Vec::new();
        let mut q: Vec<(usize, Msg)> = Vec::new();
        for (r, v) in vals.iter().enumerate().take(n) {
            let (m, out) = RecursiveDoubling::new(n, r, &v.to_ne_bytes(), red.clone()).unwrap();
            ms.push(m);
            q.extend(out.into_iter().map(|o| (r, o)));
        }
        let mut turn = 0usize;
        while !q.is_empty() {
            turn += 1;
            let (from, m) = q.remove(turn % q.len());
            let out = ms[m.to].on_msg(from, m.phase, m.chunk, &m.data).unwrap();
            q.extend(out.into_iter().map(|o| (m.to, o)));
        }
        ms.into_iter()
            .map(|m| m.into_result().expect("done"))
            .collect()
    }

    #[test]
    fn every_team_size_gets_the_sum_everywhere() {
        for n in 1..=17 {
            let vals: Vec<u64> = (0..n as u64).map(|r| r * r + 3).collect();
            let want: u64 = vals.iter().sum();
            for got in run(n, &vals) {
                assert_eq!(got, want.to_ne_bytes(), "n={n}");
            }
        }
    }

    #[test]
    fn a_wrong_sender_or_phase_is_refused() {
        let red = Reduction::Builtin(Op::Sum, DType::U64);
        let (mut m, _) = RecursiveDoubling::new(4, 0, &[0; 8], red).unwrap();
        assert!(matches!(
            m.on_msg(2, 1, 0, &[0; 8]),
            Err(Error::UnexpectedSender { .. })
        ));
        assert!(matches!(
            m.on_msg(1, 9, 0, &[0; 8]),
            Err(Error::BadPhase { .. })
        ));
        assert!(matches!(
            m.on_msg(1, 1, 0, &[0; 4]),
            Err(Error::ChunkLength { .. })
        ));
        m.on_msg(1, 1, 0, &[0; 8]).unwrap();
        assert!(matches!(
            m.on_msg(1, 1, 0, &[0; 8]),
            Err(Error::DuplicateChunk { .. })
        ));
    }
}
