//! A checked VIS description walked a window of pieces at a time, so a
//! transfer of millions of pieces never holds more than one window's plan
//! (issue: a plan took about 24 bytes per piece, and the engine's batches
//! 64 more, before the first byte moved).
//!
//! The whole description is checked when the [`Walk`] is made (bounds,
//! totals, overflow: the same checks and errors as the `plan_*` functions,
//! which now collect a walk); the pieces are then generated as they are
//! asked for. Concatenated, the windows are exactly the whole plan's
//! pieces: a piece that continues the last one of a full window is held
//! back for the next window, not split or merged differently.

use super::{Indexed, Piece, Plan};

/// One side of a vector or indexed description.
#[derive(Debug, Clone, Copy)]
pub(super) enum List<'a> {
    /// `(offset, len)` entries.
    Vector(&'a [(usize, usize)]),
    /// `offsets.len()` entries of `len` bytes.
    Indexed(Indexed<'a>),
}

impl List<'_> {
    fn len(&self) -> usize {
        match self {
            List::Vector(l) => l.len(),
            List::Indexed(d) => d.offsets.len(),
        }
    }

    fn get(&self, i: usize) -> (usize, usize) {
        match self {
            List::Vector(l) => l[i],
            List::Indexed(d) => (d.offsets[i], d.len),
        }
    }
}

/// A position in a [`List`]: the entry (or the rest of one) not yet used.
#[derive(Debug, Clone)]
pub(super) struct Cursor<'a> {
    list: List<'a>,
    next: usize,
    cur: Option<(usize, usize)>,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(list: List<'a>) -> Self {
        let mut c = Cursor {
            list,
            next: 0,
            cur: None,
        };
        c.cur = c.advance();
        c
    }

    /// The next entry with bytes in it (zero-length entries are skipped).
    fn advance(&mut self) -> Option<(usize, usize)> {
        while self.next < self.list.len() {
            let e = self.list.get(self.next);
            self.next += 1;
            if e.1 > 0 {
                return Some(e);
            }
        }
        None
    }

    /// Use `n` bytes of the current entry (at most its length).
    fn take(&mut self, n: usize) {
        if let Some((o, l)) = self.cur {
            self.cur = if n == l {
                self.advance()
            } else {
                Some((o + n, l - n))
            };
        }
    }
}

/// One level of a strided walk after normalisation: `count > 1` items,
/// `local`/`remote` bytes apart.
#[derive(Debug, Clone, Copy)]
pub(super) struct Dim {
    pub(super) count: usize,
    pub(super) local: i128,
    pub(super) remote: i128,
}

/// The element index of a strided walk, level 0 fastest.
#[derive(Debug, Clone)]
pub(super) struct Odometer {
    pub(super) elemsz: usize,
    pub(super) dims: Vec<Dim>,
    pub(super) idx: Vec<usize>,
    /// Offsets of the current element (inside the checked bounding boxes,
    /// so never negative and never overflowing).
    pub(super) l: i128,
    pub(super) r: i128,
    pub(super) done: bool,
}

impl Odometer {
    fn next(&mut self) -> Option<Piece> {
        if self.done {
            return None;
        }
        let p = Piece {
            local: self.l as usize,
            remote: self.r as usize,
            len: self.elemsz,
        };
        let mut k = 0;
        loop {
            let Some(d) = self.dims.get(k) else {
                self.done = true;
                break;
            };
            if self.idx[k] + 1 < d.count {
                self.idx[k] += 1;
                self.l += d.local;
                self.r += d.remote;
                break;
            }
            let back = (d.count - 1) as i128;
            self.l -= d.local * back;
            self.r -= d.remote * back;
            self.idx[k] = 0;
            k += 1;
        }
        Some(p)
    }
}

/// Where a walk's pieces come from.
#[derive(Debug, Clone)]
pub(super) enum Source<'a> {
    /// Nothing (left) to move.
    Done,
    /// Two lists of equal totals, laid into each other.
    Zip {
        local: Cursor<'a>,
        remote: Cursor<'a>,
    },
    /// A strided region.
    Strided(Odometer),
}

/// A checked VIS transfer whose pieces are made on demand, a window at a
/// time ([`Walk::next_window`]). Made by [`walk_vector`](super::walk_vector),
/// [`walk_indexed`](super::walk_indexed) and
/// [`walk_strided`](super::walk_strided).
#[derive(Debug, Clone)]
pub struct Walk<'a> {
    source: Source<'a>,
    total_bytes: usize,
    /// The first piece of the next window.
    carry: Option<Piece>,
}

impl<'a> Walk<'a> {
    pub(super) fn new(source: Source<'a>, total_bytes: usize) -> Self {
        Walk {
            source,
            total_bytes,
            carry: None,
        }
    }

    /// Bytes the whole transfer moves.
    pub fn total_bytes(&self) -> usize {
        self.total_bytes
    }

    /// Whether the transfer moves nothing at all.
    pub fn is_empty(&self) -> bool {
        self.total_bytes == 0
    }

    /// The next contiguous stretch, before merging with its neighbours.
    fn next_raw(&mut self) -> Option<Piece> {
        match &mut self.source {
            Source::Done => None,
            Source::Zip { local, remote } => {
                let ((lo, ll), (ro, rl)) = (local.cur?, remote.cur?);
                let n = ll.min(rl);
                local.take(n);
                remote.take(n);
                Some(Piece {
                    local: lo,
                    remote: ro,
                    len: n,
                })
            }
            Source::Strided(o) => o.next(),
        }
    }

    /// The next at most `max` pieces (at least 1), merged as the whole
    /// plan merges them; `None` once every piece has been given.
    pub fn next_window(&mut self, max: usize) -> Option<Plan> {
        let max = max.max(1);
        let mut plan = Plan::default();
        if let Some(p) = self.carry.take() {
            plan.push(p.local, p.remote, p.len);
        }
        while let Some(p) = self.next_raw() {
            plan.push(p.local, p.remote, p.len);
            if plan.pieces.len() > max {
                if let Some(last) = plan.pieces.pop() {
                    plan.total_bytes -= last.len;
                    self.carry = Some(last);
                }
                break;
            }
        }
        (!plan.is_empty()).then_some(plan)
    }

    /// Every piece in one plan (what the `plan_*` functions return).
    pub fn into_plan(mut self) -> Plan {
        self.next_window(usize::MAX).unwrap_or_default()
    }
}
