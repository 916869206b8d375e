//! Reduction to one rank (`gex_Coll_ReduceToOneNB`), as Open MPI's
//! coll/ofi does it.
//!
//! * Commutative reductions (every built-in, and user operators marked
//!   commutative) use the binary tree (fan-out 2) rooted at the root: a rank
//!   folds each child's chunk into its own contribution as it arrives, in
//!   any order, and once a chunk has every child's contribution sends it to
//!   its parent. The root's result is complete when every chunk is.
//! * Non-commutative reductions go serially in canonical team-rank order:
//!   rank 0 sends `x0` to rank 1, rank `i` computes `acc(i-1) ∘ x(i)` and
//!   sends it to rank `i + 1`, and rank `n - 1` sends the final chunks to
//!   the root (unless it is the root). The result is
//!   `((x0 ∘ x1) ∘ x2) ∘ ... ∘ x(n-1)`.
//!
//! Contributions are cut into chunks of at most `max_chunk` bytes rounded
//! down to a whole number of elements, and at least one element each.

use crate::msg::{Chunking, Msg};
use crate::op::Reduction;
use crate::tree::Tree;
use crate::Error;

/// How this rank takes part.
#[derive(Debug)]
enum Mode {
    /// Binary tree.
    Tree {
        parent: Option<usize>,
        children: Vec<usize>,
        /// `got[child][chunk]`.
        got: Vec<Vec<bool>>,
        /// Children still to be heard from, per chunk.
        pending: Vec<usize>,
        /// Chunks with every child's contribution.
        complete: u32,
    },
    /// Serial chain in team-rank order.
    Serial {
        /// Rank `me - 1`, which sends the running accumulation.
        prev: Option<usize>,
        /// Where this rank's accumulation goes next.
        next: Option<usize>,
        chain_got: Vec<bool>,
        chain_left: u32,
        /// Rank `n - 1` when this rank is a root other than `n - 1`.
        final_from: Option<usize>,
        final_got: Vec<bool>,
        final_left: u32,
        /// The final result when it comes from `final_from`.
        result: Vec<u8>,
    },
}

/// One rank's state in one reduction to one.
#[derive(Debug)]
pub struct Reduce {
    me: usize,
    root: usize,
    reduction: Reduction,
    chunking: Chunking,
    /// This rank's contribution, folded with what it has received.
    acc: Vec<u8>,
    mode: Mode,
}

impl Reduce {
    /// Start reducing `src` (this rank's contribution, a whole number of
    /// elements, the same length on every rank) to `root` over team ranks
    /// `0..size`, as team rank `me` (`src` is taken without a copy).
    /// Returns the machine and the messages to send now.
    pub fn new(
        size: usize,
        me: usize,
        root: usize,
        src: Vec<u8>,
        reduction: Reduction,
        max_chunk: usize,
    ) -> Result<(Reduce, Vec<Msg>), Error> {
        reduction.validate()?;
        let tree = Tree::new(size, root, 2)?;
        if me >= size {
            return Err(Error::RankOutsideTeam { rank: me, size });
        }
        let chunking = Chunking::elements(src.len(), reduction.elem_size(), max_chunk)?;
        let count = chunking.count();
        let nchunks = count as usize;
        let mode = if reduction.commutative() {
            let children: Vec<usize> = tree.children(me).collect();
            let leaf = children.is_empty();
            Mode::Tree {
                parent: tree.parent(me),
                got: vec![vec![false; nchunks]; children.len()],
                pending: vec![children.len(); nchunks],
                complete: if leaf { count } else { 0 },
                children,
            }
        } else {
            let is_final_root = me == root && root != size - 1;
            Mode::Serial {
                prev: me.checked_sub(1),
                next: if me + 1 < size {
                    Some(me + 1)
                } else {
                    (root != me).then_some(root)
                },
                chain_got: vec![false; if me > 0 { nchunks } else { 0 }],
                chain_left: if me > 0 { count } else { 0 },
                final_from: is_final_root.then_some(size - 1),
                final_got: vec![false; if is_final_root { nchunks } else { 0 }],
                final_left: if is_final_root { count } else { 0 },
                result: if is_final_root {
                    vec![0; src.len()]
                } else {
                    Vec::new()
                },
            }
        };
        let r = Reduce {
            me,
            root,
            reduction,
            chunking,
            acc: src,
            mode,
        };
        // Leaves of the tree, and rank 0 of the chain, send everything now.
        let to = match &r.mode {
            Mode::Tree {
                parent, children, ..
            } if children.is_empty() => *parent,
            Mode::Serial {
                prev: None, next, ..
            } => *next,
            _ => None,
        };
        let out = match to {
            Some(to) => (0..count).map(|c| r.chunk_to(to, c)).collect(),
            None => Vec::new(),
        };
        Ok((r, out))
    }

    fn chunk_to(&self, to: usize, chunk: u32) -> Msg {
        Msg {
            to,
            phase: 0,
            chunk,
            data: self.acc[self.chunking.range(chunk)].to_vec(),
            shape: 0,
        }
    }

    fn unexpected(&self, from: usize, chunk: u32) -> Error {
        let expected = match &self.mode {
            Mode::Tree { children, .. } => children.clone(),
            Mode::Serial {
                prev, final_from, ..
            } => prev.iter().chain(final_from).copied().collect(),
        };
        Error::UnexpectedSender {
            me: self.me,
            from,
            chunk,
            expected,
        }
    }

    /// Chunk `chunk` of a peer's (partial) reduction arrived from team rank
    /// `from`: fold it in and return what to send on. Rejects a sender this
    /// rank expects nothing from, an index out of range, a duplicate and a
    /// wrong length.
    pub fn on_msg(&mut self, from: usize, chunk: u32, data: &[u8]) -> Result<Vec<Msg>, Error> {
        let range = self.chunking.check(from, chunk, data.len())?;
        let c = chunk as usize;
        let expected = match &self.mode {
            Mode::Tree { children, .. } => children.contains(&from),
            Mode::Serial {
                prev, final_from, ..
            } => *prev == Some(from) || *final_from == Some(from),
        };
        if !expected {
            return Err(self.unexpected(from, chunk));
        }
        match &mut self.mode {
            Mode::Tree {
                parent,
                children,
                got,
                pending,
                complete,
            } => {
                let i = children
                    .iter()
                    .position(|&ch| ch == from)
                    .expect("checked above");
                if got[i][c] {
                    return Err(Error::DuplicateChunk { from, chunk });
                }
                self.reduction.combine(&mut self.acc[range.clone()], data)?;
                got[i][c] = true;
                pending[c] -= 1;
                if pending[c] > 0 {
                    return Ok(Vec::new());
                }
                *complete += 1;
                Ok(parent
                    .map(|to| Msg {
                        to,
                        phase: 0,
                        chunk,
                        data: self.acc[range].to_vec(),
                        shape: 0,
                    })
                    .into_iter()
                    .collect())
            }
            Mode::Serial {
                prev,
                next,
                chain_got,
                chain_left,
                final_from,
                final_got,
                final_left,
                result,
            } => {
                if *prev == Some(from) {
                    if chain_got[c] {
                        return Err(Error::DuplicateChunk { from, chunk });
                    }
                    // acc(i) = acc(i-1) ∘ x(i): the received chunk is the
                    // left operand.
                    let mut left = data.to_vec();
                    self.reduction
                        .combine(&mut left, &self.acc[range.clone()])?;
                    self.acc[range].copy_from_slice(&left);
                    chain_got[c] = true;
                    *chain_left -= 1;
                    Ok(next
                        .map(|to| Msg {
                            to,
                            phase: 0,
                            chunk,
                            data: left,
                            shape: 0,
                        })
                        .into_iter()
                        .collect())
                } else {
                    debug_assert_eq!(*final_from, Some(from));
                    if final_got[c] {
                        return Err(Error::DuplicateChunk { from, chunk });
                    }
                    result[range].copy_from_slice(data);
                    final_got[c] = true;
                    *final_left -= 1;
                    Ok(Vec::new())
                }
            }
        }
    }

    /// How the contribution is cut into chunks.
    pub fn chunking(&self) -> Chunking {
        self.chunking
    }

    /// This rank has nothing more to receive or send (on the root: the
    /// result is complete).
    pub fn is_done(&self) -> bool {
        match &self.mode {
            Mode::Tree { complete, .. } => *complete == self.chunking.count(),
            Mode::Serial {
                chain_left,
                final_left,
                ..
            } => *chain_left == 0 && *final_left == 0,
        }
    }

    /// Whether this rank is the root.
    pub fn is_root(&self) -> bool {
        self.me == self.root
    }

    /// The reduced data: on the root, once done; `None` elsewhere.
    pub fn into_result(self) -> Option<Vec<u8>> {
        if !self.is_root() || !self.is_done() {
            return None;
        }
        match self.mode {
            Mode::Serial {
                final_from: Some(_),
                result,
                ..
            } => Some(result),
            _ => Some(self.acc),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{DType, Op};

    fn u32s(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    #[test]
    fn tree_leaf_sends_at_once_and_root_folds() {
        let sum = Reduction::Builtin(Op::Sum, DType::U32);
        // n = 3, root 0: children 1 and 2 are leaves.
        let (leaf, out) = Reduce::new(3, 2, 0, u32s(&[5, 6]), sum.clone(), 4).unwrap();
        assert!(leaf.is_done() && leaf.into_result().is_none());
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|m| m.to == 0));
        let (mut root, out) = Reduce::new(3, 0, 0, u32s(&[1, 2]), sum, 4).unwrap();
        assert!(out.is_empty());
        root.on_msg(2, 1, &u32s(&[6])).unwrap();
        root.on_msg(1, 1, &u32s(&[10])).unwrap();
        assert!(!root.is_done());
        assert!(matches!(
            root.on_msg(1, 1, &u32s(&[10])),
            Err(Error::DuplicateChunk { from: 1, chunk: 1 })
        ));
        assert!(matches!(
            root.on_msg(0, 0, &u32s(&[10])),
            Err(Error::UnexpectedSender { .. })
        ));
        root.on_msg(1, 0, &u32s(&[10])).unwrap();
        root.on_msg(2, 0, &u32s(&[5])).unwrap();
        assert_eq!(root.into_result(), Some(u32s(&[16, 18])));
    }

    #[test]
    fn chunks_are_whole_elements() {
        let sum = Reduction::Builtin(Op::Sum, DType::U64);
        let (_, out) = Reduce::new(2, 1, 0, vec![0; 24], sum.clone(), 12).unwrap();
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|m| m.data.len() == 8));
        assert_eq!(
            Reduce::new(2, 1, 0, vec![0; 12], sum, 12).unwrap_err(),
            Error::NotElementMultiple {
                len: 12,
                elem_size: 8
            }
        );
        let bad = Reduction::Builtin(Op::Band, DType::F32);
        assert!(matches!(
            Reduce::new(2, 1, 0, vec![0; 4], bad, 4),
            Err(Error::InvalidOp { .. })
        ));
    }

    #[test]
    fn single_rank_is_done_at_once() {
        let sum = Reduction::Builtin(Op::Sum, DType::U32);
        let (r, out) = Reduce::new(1, 0, 0, u32s(&[3]), sum, 4).unwrap();
        assert!(out.is_empty());
        assert_eq!(r.into_result(), Some(u32s(&[3])));
    }
}
