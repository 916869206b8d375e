//! Vector / Indexed / Strided (VIS) transfers planned as contiguous copies.
//!
//! GASNet-EX's `gex_VIS_{Vector,Indexed,Strided}{Put,Get}` describe a
//! non-contiguous transfer between a local buffer and a peer's segment. The
//! planners here turn such a description into a list of [`Piece`]s, each one
//! contiguous on both sides, which the engine issues as ordinary puts and
//! gets (or packs into one message with [`pack`] / [`unpack`]).
//!
//! # Offsets, not pointers
//!
//! Every address is a byte offset: local offsets from the start of a local
//! buffer of `local_len` bytes, remote offsets from the start of the
//! target's segment of `segment_len` bytes.
//!
//! # Direction
//!
//! The planners are direction-agnostic: they speak of the *local* and the
//! *remote* side, never of source and destination. GASNet pairs the `k`-th
//! byte of the source description with the `k`-th byte of the destination
//! description, a relation that is symmetric, so the same plan serves both:
//!
//! * a **put** (`gex_VIS_*Put`) passes its `src*` description as `local` and
//!   its `dst*` description as `remote`, and copies each piece
//!   `local -> remote`;
//! * a **get** (`gex_VIS_*Get`) passes its `dst*` description as `local`
//!   and its `src*` description as `remote`, and copies each piece
//!   `remote -> local`.
//!
//! # Validation
//!
//! A planner checks the whole description before it returns a plan: every
//! byte either side would touch lies inside its buffer, both sides describe
//! the same number of bytes, and no offset, length or total overflows. On
//! error nothing has been planned, so the engine writes nothing.
//!
//! The `walk_*` functions make the same checks and return a [`Walk`],
//! which makes the pieces a window at a time (the engine moves a transfer
//! of any number of pieces in bounded memory); `plan_*` collect a walk.
//!
//! Zero-length parts are ignored as GASNet ignores them: a zero-length
//! vector entry's offset is not checked (GASNet bounds-checks only entries
//! with `gex_len > 0`), an indexed list with a zero piece length moves
//! nothing, and a strided transfer with `elemsz == 0` or any zero `count`
//! is a no-op. Plans never contain zero-length pieces.
//!
//! Overlapping destination bytes are left undefined by GASNet ("If any
//! destination location overlaps a source location or another destination
//! location, the result is undefined") and are not detected, except that a
//! strided transfer moving more bytes than either side holds (so that its
//! destination necessarily overlaps) is refused: this bounds a plan's size
//! by the buffers it touches.

mod apply;
mod pack;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod reference;
mod strided;
#[cfg(test)]
mod strided_tests;
#[cfg(test)]
mod tests;
mod vector;
mod walk;

pub use apply::apply_packed;
pub use pack::{decode, encode, pack, unpack, Encoder};
pub use strided::{plan_strided, walk_strided, Strided};
pub use vector::{plan_indexed, plan_vector, walk_indexed, walk_vector, Indexed};
pub use walk::Walk;

use std::fmt;

/// One contiguous copy: `len` bytes at `local` in the local buffer and at
/// `remote` in the target's segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Piece {
    /// Offset in the local buffer.
    pub local: usize,
    /// Offset in the target's segment.
    pub remote: usize,
    /// Bytes (never 0 in a plan).
    pub len: usize,
}

/// A validated transfer: its pieces in transfer order (the order of the
/// concatenated byte stream), adjacent pieces contiguous on both sides
/// already merged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pieces: Vec<Piece>,
    total_bytes: usize,
}

impl Plan {
    /// The pieces, in transfer order.
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// The pieces, taken out of the plan.
    pub fn into_pieces(self) -> Vec<Piece> {
        self.pieces
    }

    /// How many contiguous copies the transfer takes (0 for an empty one).
    pub fn piece_count(&self) -> usize {
        self.pieces.len()
    }

    /// Bytes moved: the sum of the pieces' lengths.
    pub fn total_bytes(&self) -> usize {
        self.total_bytes
    }

    /// Whether the transfer moves nothing (the operation is complete at once).
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// Append `len` bytes at (`local`, `remote`), merging with the last
    /// piece when both sides continue it. Zero-length pieces are dropped.
    /// Callers have checked that the totals fit in `usize`.
    fn push(&mut self, local: usize, remote: usize, len: usize) {
        if len == 0 {
            return;
        }
        self.total_bytes += len;
        if let Some(last) = self.pieces.last_mut() {
            if last.local + last.len == local && last.remote + last.len == remote {
                last.len += len;
                return;
            }
        }
        self.pieces.push(Piece { local, remote, len });
    }
}

/// Which side of a transfer a description or a piece offset refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The initiator's buffer.
    Local,
    /// The target's segment.
    Remote,
}

impl Side {
    /// This side's offset in `p`.
    pub fn offset(self, p: &Piece) -> usize {
        match self {
            Side::Local => p.local,
            Side::Remote => p.remote,
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Local => "local",
            Side::Remote => "remote",
        })
    }
}

/// The part of a description an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Item {
    /// Entry `i` of a vector list.
    Piece(usize),
    /// Offset `i` of an indexed list.
    Index(usize),
    /// The region of a strided description as a whole.
    Strided,
    /// The description as a whole.
    Whole,
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Item::Piece(i) => write!(f, "piece {i}"),
            Item::Index(i) => write!(f, "index {i}"),
            Item::Strided => f.write_str("strided region"),
            Item::Whole => f.write_str("transfer"),
        }
    }
}

/// Why a VIS transfer cannot be planned, or a piece list not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Bytes `start..end` of one side lie (partly) outside its buffer.
    /// `start` may be negative for a strided region with negative strides.
    #[error("VIS {item}: {side} bytes {start}..{end} lie outside {}", bound_text(*.side, *.bound))]
    OutOfBounds {
        /// The entry or region.
        item: Item,
        /// Which buffer.
        side: Side,
        /// First byte.
        start: i128,
        /// One past the last byte.
        end: i128,
        /// The buffer's size in bytes.
        bound: usize,
    },
    /// An offset, length, product or sum does not fit in the address space.
    #[error("VIS {item}: {what} overflows")]
    Overflow {
        /// The entry or region.
        item: Item,
        /// The computation, with its side and operands.
        what: String,
    },
    /// Vector lists that describe different numbers of bytes.
    #[error("VIS vector sizes disagree: the local list totals {local} bytes, the remote list {remote} bytes")]
    VectorSizeMismatch {
        /// Total of the local list.
        local: usize,
        /// Total of the remote list.
        remote: usize,
    },
    /// Indexed lists that describe different numbers of bytes.
    #[error(
        "VIS indexed sizes disagree: local {local_count} x {local_len} bytes = {local_total}, \
         remote {remote_count} x {remote_len} bytes = {remote_total}"
    )]
    IndexedSizeMismatch {
        /// Local offsets.
        local_count: usize,
        /// Local piece length.
        local_len: usize,
        /// `local_count * local_len`.
        local_total: usize,
        /// Remote offsets.
        remote_count: usize,
        /// Remote piece length.
        remote_len: usize,
        /// `remote_count * remote_len`.
        remote_total: usize,
    },
    /// A strides array shorter than `stridelevels` (`count.len()`).
    #[error("VIS strided: the {side} strides array has {got} entries, stridelevels is {need}")]
    StridesLength {
        /// Which side.
        side: Side,
        /// Entries given.
        got: usize,
        /// `count.len()`.
        need: usize,
    },
    /// A strided transfer moving more bytes than either buffer holds: its
    /// destination must overlap itself, which GASNet leaves undefined.
    #[error(
        "VIS strided: {total} bytes exceed both the {local_len}-byte local buffer and the \
         {segment_len}-byte segment, so the destination overlaps itself"
    )]
    DestinationOverlaps {
        /// Bytes described.
        total: usize,
        /// Local buffer size.
        local_len: usize,
        /// Segment size.
        segment_len: usize,
    },
    /// A packed payload whose length is not the pieces' total.
    #[error("VIS packed payload has {got} bytes, the pieces total {expected}")]
    PackedLength {
        /// Payload bytes.
        got: usize,
        /// Sum of the pieces' lengths.
        expected: usize,
    },
    /// A malformed encoded piece list.
    #[error("VIS piece list: malformed at byte {at}: {what}")]
    Decode {
        /// Offset in the encoding.
        at: usize,
        /// What is wrong.
        what: &'static str,
    },
}

fn bound_text(side: Side, bound: usize) -> String {
    match side {
        Side::Local => format!("the {bound}-byte local buffer"),
        Side::Remote => format!("the target's {bound}-byte segment"),
    }
}

/// Check `offset..offset+len` against `bound` (a zero-length range is never
/// checked: GASNet ignores its address).
fn check_range(
    item: Item,
    side: Side,
    offset: usize,
    len: usize,
    bound: usize,
) -> Result<(), Error> {
    if len == 0 {
        return Ok(());
    }
    let end = offset.checked_add(len).ok_or_else(|| Error::Overflow {
        item,
        what: format!("{side} offset {offset} + length {len}"),
    })?;
    if end > bound {
        return Err(Error::OutOfBounds {
            item,
            side,
            start: offset as i128,
            end: end as i128,
            bound,
        });
    }
    Ok(())
}
