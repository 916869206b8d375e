//! What the state machines emit, and how payloads are cut into chunks.

use std::ops::Range;

use crate::Error;

/// A message a collective wants sent to another member of the team. The
/// engine adds the team's id and the collective's sequence number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msg {
    /// Destination team rank.
    pub to: usize,
    /// Which phase of the collective: 0 for single-phase collectives; in an
    /// allreduce 0 is the reduction and 1 the broadcast.
    pub phase: u8,
    /// Chunk index.
    pub chunk: u32,
    /// The chunk's bytes.
    pub data: Vec<u8>,
    /// What the header says of the collective besides the fields above
    /// ([`shape`]): the sender's algorithm and whether this is its last
    /// chunk of the phase, so that a receiver whose operand has another
    /// length (and so another chunking or algorithm) notices. The machines
    /// leave it 0; [`crate::TeamColl`] stamps it.
    pub shape: u8,
}

/// The algorithm a message belongs to, in the low bits of
/// [`Msg::shape`] ([`shape`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A broadcast ([`crate::bcast`]).
    Broadcast = 1,
    /// A reduction to one ([`crate::reduce`]).
    Reduce = 2,
    /// A reduction to all by reduce-then-broadcast ([`crate::allreduce`]).
    Allreduce = 3,
    /// A reduction to all by recursive doubling ([`crate::rdb`]).
    Doubling = 4,
    /// A reduction to all by direct exchange ([`crate::flat`]).
    Flat = 5,
    /// Not a chunk: the sender failed the collective and ends every
    /// member's wait for it; the payload is the reason (UTF-8).
    Abort = 7,
}

/// The bit of [`Msg::shape`] set on the sender's last chunk of a phase.
pub const SHAPE_LAST: u8 = 0x08;

/// Bits of [`Msg::shape`] that carry meaning; the others must be 0.
pub const SHAPE_BITS: u8 = 0x0f;

/// A [`Msg::shape`]: the algorithm, and whether the chunk is the sender's
/// last of its phase.
pub fn shape(kind: Kind, last: bool) -> u8 {
    kind as u8 | if last { SHAPE_LAST } else { 0 }
}

impl Kind {
    /// The algorithm a [`Msg::shape`] names (`None` for 0, a header that
    /// says nothing, or an unknown value).
    pub fn of_shape(shape: u8) -> Option<Kind> {
        Some(match shape & 0x07 {
            1 => Kind::Broadcast,
            2 => Kind::Reduce,
            3 => Kind::Allreduce,
            4 => Kind::Doubling,
            5 => Kind::Flat,
            7 => Kind::Abort,
            _ => return None,
        })
    }

    /// Whether it is one of the algorithms of a reduction to all.
    pub fn reduces_to_all(self) -> bool {
        matches!(self, Kind::Allreduce | Kind::Doubling | Kind::Flat)
    }

    /// Whether its messages carry the whole operand in one chunk.
    pub fn one_chunk(self) -> bool {
        matches!(self, Kind::Doubling | Kind::Flat)
    }

    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Broadcast => "a broadcast",
            Kind::Reduce => "a reduction to one",
            Kind::Allreduce => "a reduction to all (tree)",
            Kind::Doubling => "a reduction to all (recursive doubling)",
            Kind::Flat => "a reduction to all (direct exchange)",
            Kind::Abort => "an abort",
        }
    }
}

/// Shape parameters shared by a team's collectives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Fan-out of broadcast trees (reductions always use a binary tree).
    pub fanout: usize,
    /// Largest chunk in bytes. Reductions round it down to a whole number
    /// of elements, and use at least one element per chunk.
    pub max_chunk: usize,
}

impl Default for Config {
    /// Fan-out 2 (Open MPI coll/ofi's default) and 64 KiB chunks.
    fn default() -> Config {
        Config {
            fanout: 2,
            max_chunk: 64 * 1024,
        }
    }
}

/// A payload of `len` bytes cut into chunks of `size` bytes, the last one
/// possibly shorter. An empty payload is one empty chunk, so that every
/// rank still hears from its peers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunking {
    len: usize,
    size: usize,
    count: u32,
}

impl Chunking {
    /// Chunks of at most `max_chunk` bytes.
    pub fn new(len: usize, max_chunk: usize) -> Result<Chunking, Error> {
        if max_chunk == 0 {
            return Err(Error::ZeroChunk);
        }
        let count = len.div_ceil(max_chunk).max(1);
        let count = u32::try_from(count).map_err(|_| Error::TooManyChunks {
            len,
            chunk: max_chunk,
        })?;
        Ok(Chunking {
            len,
            size: max_chunk,
            count,
        })
    }

    /// Chunks of whole elements: `max_chunk` rounded down to a multiple of
    /// `elem_size`, and at least one element. `len` must be a multiple of
    /// `elem_size`.
    pub fn elements(len: usize, elem_size: usize, max_chunk: usize) -> Result<Chunking, Error> {
        if elem_size == 0 {
            return Err(Error::ZeroElemSize);
        }
        if max_chunk == 0 {
            return Err(Error::ZeroChunk);
        }
        if len % elem_size != 0 {
            return Err(Error::NotElementMultiple { len, elem_size });
        }
        Chunking::new(len, (max_chunk / elem_size).max(1) * elem_size)
    }

    /// Number of chunks (at least 1).
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Total payload length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the payload is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Byte range of chunk `c < count()`.
    pub fn range(&self, c: u32) -> Range<usize> {
        let start = (c as usize * self.size).min(self.len);
        start..(start + self.size).min(self.len)
    }

    /// Check an incoming chunk index and length.
    pub fn check(&self, from: usize, chunk: u32, len: usize) -> Result<Range<usize>, Error> {
        if chunk >= self.count {
            return Err(Error::ChunkOutOfRange {
                chunk,
                chunks: self.count,
            });
        }
        let r = self.range(chunk);
        if r.len() != len {
            return Err(Error::ChunkLength {
                from,
                chunk,
                len,
                expected: r.len(),
            });
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_ranges() {
        let c = Chunking::new(10, 4).unwrap();
        assert_eq!(c.count(), 3);
        assert_eq!(c.range(2), 8..10);
        let c = Chunking::new(0, 4).unwrap();
        assert_eq!((c.count(), c.range(0)), (1, 0..0));
        let c = Chunking::elements(24, 8, 20).unwrap();
        assert_eq!((c.count(), c.range(1)), (2, 16..24));
        let c = Chunking::elements(24, 8, 3).unwrap();
        assert_eq!(c.count(), 3);
        assert_eq!(Chunking::new(1, 0), Err(Error::ZeroChunk));
        assert!(c.check(0, 3, 8).is_err());
        assert!(c.check(0, 2, 7).is_err());
    }
}
