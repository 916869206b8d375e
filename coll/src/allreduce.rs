//! Reduction to all (`gex_Coll_ReduceToAllNB`): a reduction to team rank 0
//! followed by a broadcast from it, as Open MPI's coll/ofi does.
//!
//! Messages of the reduction carry phase [`REDUCE_PHASE`] and those of the
//! broadcast [`BCAST_PHASE`], so a receiver can tell them apart.

use crate::bcast::Broadcast;
use crate::msg::{Chunking, Config, Msg};
use crate::op::Reduction;
use crate::reduce::Reduce;
use crate::Error;

/// Phase of the reduction's messages.
pub const REDUCE_PHASE: u8 = 0;
/// Phase of the broadcast's messages.
pub const BCAST_PHASE: u8 = 1;
/// The rank the reduction goes to and the broadcast comes from.
const ROOT: usize = 0;

/// One rank's state in one reduction to all.
#[derive(Debug)]
pub struct Allreduce {
    size: usize,
    me: usize,
    len: usize,
    cfg: Config,
    /// Chunks of the reduction and of the broadcast.
    chunks: [u32; 2],
    /// The reduction, until the root has its result.
    reduce: Option<Reduce>,
    /// The broadcast: from the start on non-roots (it only listens), from
    /// the end of the reduction on the root.
    bcast: Option<Broadcast>,
}

fn with_phase(mut msgs: Vec<Msg>, phase: u8) -> Vec<Msg> {
    for m in &mut msgs {
        m.phase = phase;
    }
    msgs
}

impl Allreduce {
    /// Start reducing `src` (this rank's contribution) to every rank of
    /// team ranks `0..size`, as team rank `me`. The reduction uses
    /// `cfg.max_chunk` (rounded to whole elements) and its own tree or
    /// chain; the broadcast uses `cfg`. Returns the machine and the
    /// messages to send now.
    pub fn new(
        size: usize,
        me: usize,
        src: Vec<u8>,
        reduction: Reduction,
        cfg: Config,
    ) -> Result<(Allreduce, Vec<Msg>), Error> {
        let len = src.len();
        let (reduce, out) = Reduce::new(size, me, ROOT, src, reduction, cfg.max_chunk)?;
        let chunks = [
            reduce.chunking().count(),
            Chunking::new(len, cfg.max_chunk)?.count(),
        ];
        let mut a = Allreduce {
            size,
            me,
            len,
            cfg,
            chunks,
            reduce: Some(reduce),
            bcast: None,
        };
        let mut out = with_phase(out, REDUCE_PHASE);
        if me != ROOT {
            let (b, none) = Broadcast::new(size, me, ROOT, a.len, None, cfg)?;
            debug_assert!(none.is_empty());
            a.bcast = Some(b);
        }
        out.extend(a.maybe_start_bcast()?);
        Ok((a, out))
    }

    /// On the root, once the reduction is complete: start the broadcast of
    /// its result.
    fn maybe_start_bcast(&mut self) -> Result<Vec<Msg>, Error> {
        if self.me != ROOT || !self.reduce.as_ref().is_some_and(Reduce::is_done) {
            return Ok(Vec::new());
        }
        let result = self
            .reduce
            .take()
            .and_then(Reduce::into_result)
            .expect("a complete reduction has a result on its root");
        let (b, out) = Broadcast::new(self.size, self.me, ROOT, self.len, Some(result), self.cfg)?;
        self.bcast = Some(b);
        Ok(with_phase(out, BCAST_PHASE))
    }

    /// A chunk of phase `phase` arrived from team rank `from`; returns what
    /// to send. Rejects an unknown phase, and whatever the phase's machine
    /// rejects.
    pub fn on_msg(
        &mut self,
        from: usize,
        phase: u8,
        chunk: u32,
        data: &[u8],
    ) -> Result<Vec<Msg>, Error> {
        match phase {
            REDUCE_PHASE => {
                let Some(r) = self.reduce.as_mut() else {
                    // The root's reduction is over: nothing more may come.
                    return Err(Error::UnexpectedSender {
                        me: self.me,
                        from,
                        chunk,
                        expected: Vec::new(),
                    });
                };
                let mut out = with_phase(r.on_msg(from, chunk, data)?, REDUCE_PHASE);
                out.extend(self.maybe_start_bcast()?);
                Ok(out)
            }
            BCAST_PHASE => match self.bcast.as_mut() {
                Some(b) => Ok(with_phase(b.on_msg(from, chunk, data)?, BCAST_PHASE)),
                None => Err(Error::UnexpectedSender {
                    me: self.me,
                    from,
                    chunk,
                    expected: Vec::new(),
                }),
            },
            _ => Err(Error::BadPhase { phase, phases: 2 }),
        }
    }

    /// Bytes of this rank's contribution (and of the result).
    pub fn bytes(&self) -> usize {
        self.len
    }

    /// Chunks of phase `phase` ([`REDUCE_PHASE`] or [`BCAST_PHASE`]; 0
    /// for any other).
    pub fn chunks(&self, phase: u8) -> u32 {
        self.chunks.get(phase as usize).copied().unwrap_or(0)
    }

    /// This rank has the result and nothing more to send.
    pub fn is_done(&self) -> bool {
        self.reduce.as_ref().is_none_or(Reduce::is_done)
            && self.bcast.as_ref().is_some_and(Broadcast::is_done)
    }

    /// The reduced data, once done.
    pub fn into_result(self) -> Option<Vec<u8>> {
        if !self.is_done() {
            return None;
        }
        self.bcast.and_then(Broadcast::into_result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{DType, Op};

    #[test]
    fn two_ranks() {
        let cfg = Config {
            fanout: 2,
            max_chunk: 4,
        };
        let max = Reduction::Builtin(Op::Max, DType::U32);
        let x0: Vec<u8> = [3u32, 9].iter().flat_map(|x| x.to_ne_bytes()).collect();
        let x1: Vec<u8> = [7u32, 1].iter().flat_map(|x| x.to_ne_bytes()).collect();
        let want: Vec<u8> = [7u32, 9].iter().flat_map(|x| x.to_ne_bytes()).collect();
        let (mut a0, out0) = Allreduce::new(2, 0, x0.clone(), max.clone(), cfg).unwrap();
        let (mut a1, out1) = Allreduce::new(2, 1, x1.clone(), max, cfg).unwrap();
        assert!(out0.is_empty());
        assert_eq!(out1.len(), 2);
        assert!(!a1.is_done() && !a0.is_done());
        assert_eq!(
            a0.on_msg(1, 2, 0, &out1[0].data),
            Err(Error::BadPhase {
                phase: 2,
                phases: 2
            })
        );
        let mut down = Vec::new();
        for m in out1 {
            assert_eq!((m.to, m.phase), (0, REDUCE_PHASE));
            down.extend(a0.on_msg(1, m.phase, m.chunk, &m.data).unwrap());
        }
        assert!(a0.is_done());
        assert_eq!(down.len(), 2);
        for m in down {
            assert_eq!((m.to, m.phase), (1, BCAST_PHASE));
            assert!(a1.on_msg(0, m.phase, m.chunk, &m.data).unwrap().is_empty());
        }
        assert_eq!(a0.into_result(), Some(want.clone()));
        assert_eq!(a1.into_result(), Some(want));
    }
}
