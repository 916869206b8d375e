//! Reduction to all by direct exchange, for small payloads on small teams:
//! every rank sends its contribution to every other member in one step and
//! folds the `n` contributions itself, left to right in team-rank order.
//!
//! One step instead of recursive doubling's log2(n) dependent exchanges (or
//! reduce-then-broadcast's twice the tree depth): each rank waits only for
//! every member to have posted once, which is what bounds latency when
//! ranks share cores or memory. Every rank computes the same canonical
//! fold, so all hold the same bits, and the result is the serial
//! canonical-order one for non-commutative operators too. It costs `n - 1`
//! messages per rank, hence the limits [`FLAT_MAX_MEMBERS`] and
//! [`FLAT_MAX_BYTES`], and it is used only where a team says so
//! ([`crate::TeamColl::set_direct_exchange`]: the engine does for teams
//! whose members share memory; over a network recursive doubling's fewer
//! messages measured faster). Where the members can read each other's
//! memory, larger contributions (up to a board's size) take it too
//! ([`FlatAllreduce::posted`]): each is posted once, not sent `n - 1`
//! times, and read in place.

use crate::msg::Msg;
use crate::op::Reduction;
use crate::Error;

/// Largest team the direct exchange is used on.
pub const FLAT_MAX_MEMBERS: usize = 8;
/// Largest contribution (bytes) the direct exchange by messages is used
/// for.
pub const FLAT_MAX_BYTES: usize = 1024;

/// Whether a reduction to all of `len` bytes on `n` members takes the
/// direct exchange.
pub fn applies(n: usize, len: usize) -> bool {
    n <= FLAT_MAX_MEMBERS && len <= FLAT_MAX_BYTES
}

/// One rank's direct-exchange reduction to all.
#[derive(Debug)]
pub struct FlatAllreduce {
    n: usize,
    me: usize,
    /// Bytes of every contribution.
    len: usize,
    reduction: Reduction,
    /// Every member's contribution, by team rank (this rank's from the
    /// start); emptied once folded.
    parts: Vec<Option<Vec<u8>>>,
    missing: usize,
    result: Option<Vec<u8>>,
}

impl FlatAllreduce {
    /// Start: `src` is this rank's contribution; the messages carry it to
    /// every other member (phase 0, chunk 0).
    pub fn new(
        n: usize,
        me: usize,
        src: &[u8],
        reduction: Reduction,
    ) -> Result<(Self, Vec<Msg>), Error> {
        reduction.check_start(n, me, src.len())?;
        let out = (0..n)
            .filter(|&to| to != me)
            .map(|to| Msg {
                to,
                phase: 0,
                chunk: 0,
                data: src.to_vec(),
                shape: 0,
            })
            .collect();
        let mut parts = vec![None; n];
        parts[me] = Some(src.to_vec());
        let mut m = FlatAllreduce {
            n,
            me,
            len: src.len(),
            reduction,
            parts,
            missing: n - 1,
            result: None,
        };
        m.fold()?;
        Ok((m, out))
    }

    /// Start with `src` as this rank's contribution, posted once by the
    /// caller for every other member to read ([`FlatAllreduce::own`]: a
    /// board in memory the team shares) rather than sent as `n - 1`
    /// messages; the others' arrive through [`FlatAllreduce::on_msg`].
    pub fn posted(n: usize, me: usize, src: Vec<u8>, reduction: Reduction) -> Result<Self, Error> {
        reduction.check_start(n, me, src.len())?;
        let mut parts = vec![None; n];
        let len = src.len();
        parts[me] = Some(src);
        let mut m = FlatAllreduce {
            n,
            me,
            len,
            reduction,
            parts,
            missing: n - 1,
            result: None,
        };
        m.fold()?;
        Ok(m)
    }

    /// This rank's contribution, until every contribution is in.
    pub fn own(&self) -> Option<&[u8]> {
        self.parts.get(self.me)?.as_deref()
    }

    /// A member's contribution arrived; nothing is sent in reply.
    pub fn on_msg(
        &mut self,
        from: usize,
        phase: u8,
        chunk: u32,
        data: &[u8],
    ) -> Result<Vec<Msg>, Error> {
        let (n, len) = (self.n, self.len);
        if phase != 0 {
            return Err(Error::BadPhase { phase, phases: 1 });
        }
        if from >= n || from == self.me {
            return Err(Error::UnexpectedSender {
                me: self.me,
                from,
                chunk,
                expected: (0..n).filter(|&r| r != self.me).collect(),
            });
        }
        if chunk != 0 {
            return Err(Error::ChunkOutOfRange { chunk, chunks: 1 });
        }
        if data.len() != len {
            return Err(Error::ChunkLength {
                chunk,
                from,
                len: data.len(),
                expected: len,
            });
        }
        if self.result.is_some() || self.parts[from].is_some() {
            return Err(Error::DuplicateChunk { chunk, from });
        }
        self.parts[from] = Some(data.to_vec());
        self.missing -= 1;
        self.fold()?;
        Ok(Vec::new())
    }

    /// Fold once every contribution is in: left to right in rank order.
    fn fold(&mut self) -> Result<(), Error> {
        if self.missing > 0 {
            return Ok(());
        }
        let mut parts = std::mem::take(&mut self.parts).into_iter().flatten();
        let mut acc = parts.next().unwrap_or_default();
        for p in parts {
            self.reduction.combine(&mut acc, &p)?;
        }
        self.result = Some(acc);
        Ok(())
    }

    /// Bytes of this rank's contribution (and of every message).
    pub fn bytes(&self) -> usize {
        self.len
    }

    /// Whether this rank has the result.
    pub fn is_done(&self) -> bool {
        self.result.is_some()
    }

    /// The result, once done.
    pub fn into_result(self) -> Option<Vec<u8>> {
        self.result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{DType, Op, UserOp};
    use std::sync::Arc;

    /// Run every rank to completion, delivering in a rotating order.
    fn run(n: usize, vals: &[Vec<u8>], red: &Reduction) -> Vec<Vec<u8>> {
        let mut ms = Vec::new();
        let mut q: Vec<(usize, Msg)> = Vec::new();
        for (r, v) in vals.iter().enumerate().take(n) {
            let (m, out) = FlatAllreduce::new(n, r, v, red.clone()).unwrap();
            ms.push(m);
            q.extend(out.into_iter().map(|o| (r, o)));
        }
        let mut turn = 0usize;
        while !q.is_empty() {
            turn += 7;
            let (from, m) = q.remove(turn % q.len());
            let out = ms[m.to].on_msg(from, m.phase, m.chunk, &m.data).unwrap();
            assert!(out.is_empty());
        }
        ms.into_iter()
            .map(|m| m.into_result().expect("done"))
            .collect()
    }

    #[test]
    fn every_team_size_gets_the_sum_everywhere() {
        let red = Reduction::Builtin(Op::Sum, DType::U64);
        for n in 1..=FLAT_MAX_MEMBERS {
            let vals: Vec<Vec<u8>> = (0..n as u64)
                .map(|r| (r * r + 3).to_ne_bytes().to_vec())
                .collect();
            let want: u64 = (0..n as u64).map(|r| r * r + 3).sum();
            for got in run(n, &vals, &red) {
                assert_eq!(got, want.to_ne_bytes(), "n={n}");
            }
        }
    }

    #[test]
    fn a_non_commutative_operator_folds_in_rank_order() {
        // Concatenation-like: acc = acc * 10 + other, on one u64.
        fn digits(acc: &mut [u8], other: &[u8]) {
            let a = u64::from_ne_bytes(acc[..8].try_into().unwrap());
            let b = u64::from_ne_bytes(other[..8].try_into().unwrap());
            acc.copy_from_slice(&(a * 10 + b).to_ne_bytes());
        }
        let red = Reduction::User {
            op: UserOp {
                f: Arc::new(digits),
                commutative: false,
            },
            elem_size: 8,
        };
        let vals: Vec<Vec<u8>> = (1..=5u64).map(|d| d.to_ne_bytes().to_vec()).collect();
        for got in run(5, &vals, &red) {
            assert_eq!(got, 12345u64.to_ne_bytes());
        }
    }

    #[test]
    fn a_posted_contribution_is_read_by_the_others() {
        let red = Reduction::Builtin(Op::Sum, DType::U64);
        let vals: Vec<Vec<u8>> = (0..3u64).map(|r| (r + 1).to_ne_bytes().to_vec()).collect();
        let mut ms: Vec<FlatAllreduce> = (0..3)
            .map(|r| FlatAllreduce::posted(3, r, vals[r].clone(), red.clone()).unwrap())
            .collect();
        for (r, v) in vals.iter().enumerate() {
            assert_eq!(ms[r].own(), Some(&v[..]));
        }
        for (to, m) in ms.iter_mut().enumerate() {
            for (from, v) in vals.iter().enumerate().filter(|(f, _)| *f != to) {
                assert!(m.on_msg(from, 0, 0, v).unwrap().is_empty());
            }
        }
        for m in ms {
            assert_eq!(m.into_result(), Some(6u64.to_ne_bytes().to_vec()));
        }
        let one = FlatAllreduce::posted(1, 0, vec![5; 8], red).unwrap();
        assert!(one.is_done());
    }

    #[test]
    fn a_wrong_sender_phase_length_or_duplicate_is_refused() {
        let red = Reduction::Builtin(Op::Sum, DType::U64);
        let (mut m, out) = FlatAllreduce::new(3, 0, &[0; 8], red).unwrap();
        assert_eq!(out.iter().map(|m| m.to).collect::<Vec<_>>(), [1, 2]);
        assert!(matches!(
            m.on_msg(0, 0, 0, &[0; 8]),
            Err(Error::UnexpectedSender { .. })
        ));
        assert!(matches!(
            m.on_msg(3, 0, 0, &[0; 8]),
            Err(Error::UnexpectedSender { .. })
        ));
        assert!(matches!(
            m.on_msg(1, 1, 0, &[0; 8]),
            Err(Error::BadPhase { .. })
        ));
        assert!(matches!(
            m.on_msg(1, 0, 0, &[0; 4]),
            Err(Error::ChunkLength { .. })
        ));
        m.on_msg(1, 0, 0, &[0; 8]).unwrap();
        assert!(matches!(
            m.on_msg(1, 0, 0, &[0; 8]),
            Err(Error::DuplicateChunk { .. })
        ));
        assert!(!m.is_done());
        m.on_msg(2, 0, 0, &[0; 8]).unwrap();
        assert!(m.is_done());
        assert!(matches!(
            m.on_msg(2, 0, 0, &[0; 8]),
            Err(Error::DuplicateChunk { .. })
        ));
    }
}
