//! The n-ary fan-out tree over a team's ranks.
//!
//! Ranks are renumbered relative to the root, `v = (r - root) mod n`; the
//! children of virtual rank `v` are `v*k + 1 ..= v*k + k` (those below `n`)
//! and its parent is `(v - 1) / k`. Fan-out `k = 1` is a chain from the
//! root; `k = 2` is the binary tree reductions use.

use crate::Error;

/// A fan-out tree over team ranks `0..n`, rooted at `root`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tree {
    n: usize,
    root: usize,
    k: usize,
}

impl Tree {
    /// The tree over `n >= 1` ranks rooted at `root < n` with fan-out
    /// `k >= 1`.
    pub fn new(n: usize, root: usize, k: usize) -> Result<Tree, Error> {
        if n == 0 {
            return Err(Error::EmptyTeam);
        }
        if root >= n {
            return Err(Error::RankOutsideTeam {
                rank: root,
                size: n,
            });
        }
        if k == 0 {
            return Err(Error::ZeroFanout);
        }
        Ok(Tree { n, root, k })
    }

    /// The root.
    pub fn root(&self) -> usize {
        self.root
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.n
    }

    fn virt(&self, r: usize) -> usize {
        debug_assert!(r < self.n);
        (r + self.n - self.root) % self.n
    }

    fn real(&self, v: usize) -> usize {
        (v + self.root) % self.n
    }

    /// The parent of rank `r < n` (`None` for the root).
    pub fn parent(&self, r: usize) -> Option<usize> {
        let v = self.virt(r);
        (v != 0).then(|| self.real((v - 1) / self.k))
    }

    /// The children of rank `r < n`, in increasing virtual rank.
    pub fn children(&self, r: usize) -> impl Iterator<Item = usize> {
        let t = *self;
        let v = t.virt(r);
        let first = v.checked_mul(t.k).and_then(|x| x.checked_add(1));
        let (lo, hi) = match first {
            Some(lo) if lo < t.n => (lo, lo.saturating_add(t.k).min(t.n)),
            _ => (0, 0),
        };
        (lo..hi).map(move |c| t.real(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_shapes() {
        assert_eq!(Tree::new(3, 0, 0), Err(Error::ZeroFanout));
        assert_eq!(Tree::new(0, 0, 2), Err(Error::EmptyTeam));
        assert_eq!(
            Tree::new(3, 3, 2),
            Err(Error::RankOutsideTeam { rank: 3, size: 3 })
        );
    }

    #[test]
    fn small_examples() {
        let t = Tree::new(7, 0, 2).unwrap();
        assert_eq!(t.children(0).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(t.children(2).collect::<Vec<_>>(), vec![5, 6]);
        assert_eq!(t.parent(6), Some(2));
        let chain = Tree::new(4, 2, 1).unwrap();
        assert_eq!(chain.children(2).collect::<Vec<_>>(), vec![3]);
        assert_eq!(chain.children(3).collect::<Vec<_>>(), vec![0]);
        assert_eq!(chain.parent(1), Some(0));
        assert_eq!(chain.children(1).count(), 0);
    }

    /// Every shape with n in 1..=40, k in 1..=8 and every root: one parent
    /// per non-root, children and parent agree, and everything is reached
    /// from the root.
    #[test]
    fn exhaustive_shapes() {
        for n in 1..=40 {
            for k in 1..=8 {
                for root in 0..n {
                    let t = Tree::new(n, root, k).unwrap();
                    assert_eq!(t.parent(root), None);
                    let mut parents = vec![0usize; n];
                    for r in 0..n {
                        let ch: Vec<_> = t.children(r).collect();
                        assert!(ch.len() <= k);
                        for c in ch {
                            assert_eq!(t.parent(c), Some(r), "n={n} k={k} root={root}");
                            parents[c] += 1;
                        }
                        if r != root {
                            let p = t.parent(r).unwrap();
                            assert!(t.children(p).any(|c| c == r));
                        }
                    }
                    for (r, &p) in parents.iter().enumerate() {
                        assert_eq!(p, usize::from(r != root), "n={n} k={k} root={root} r={r}");
                    }
                    let mut seen = vec![false; n];
                    let mut stack = vec![root];
                    while let Some(r) = stack.pop() {
                        assert!(!seen[r]);
                        seen[r] = true;
                        stack.extend(t.children(r));
                    }
                    assert!(seen.iter().all(|&s| s), "n={n} k={k} root={root}");
                }
            }
        }
    }
}
