//! Planning a transfer: how many libfabric operations it takes and where
//! each one starts. Every RMA path (blocking, NB and NBI puts and gets, and
//! AM Long payloads written by RMA) goes through these plans, so transfers
//! larger than the provider's `max_msg_size` are split in one place.

/// One libfabric transfer of a planned operation: `len` bytes at `at`
/// from the start of the local and the remote range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    /// Offset from the start of both ranges.
    pub at: usize,
    /// Bytes.
    pub len: usize,
}

/// The chunks of a `len`-byte transfer when one libfabric operation moves
/// at most `max` bytes (`max` 0 is taken as 1). A zero-length transfer has
/// no chunks: nothing is posted and the operation is complete at once.
pub fn chunks(len: usize, max: usize) -> impl ExactSizeIterator<Item = Chunk> + Clone {
    let max = max.max(1);
    let n = len.div_ceil(max);
    (0..n).map(move |i| {
        let at = i * max;
        Chunk {
            at,
            len: (len - at).min(max),
        }
    })
}

/// A remote range, checked against the target's segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remote {
    /// The address to give libfabric for the range's first byte (a virtual
    /// address or an offset, as the provider's MR mode says).
    pub addr: u64,
    /// The remote key.
    pub key: u64,
}

/// A segment as its owner published it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SegmentInfo {
    /// Address of the segment in its owner's address space.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
    /// Remote key.
    pub key: u64,
}

/// The crate's one error type: why an RMA cannot be planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A range outside the target's segment (or one whose end overflows).
    #[error("{len} bytes at offset {offset} do not fit in the {size}-byte segment of rank {rank}")]
    OutOfSegment {
        /// Target rank.
        rank: usize,
        /// Offset asked for.
        offset: usize,
        /// Length asked for.
        len: usize,
        /// The segment's size.
        size: usize,
    },
}

impl SegmentInfo {
    /// Check `offset..offset+len` of `rank`'s segment (this one) and give
    /// the remote address for its start: `base + offset` when the provider
    /// wants virtual addresses, else the offset.
    #[inline]
    pub fn remote(
        &self,
        rank: usize,
        offset: usize,
        len: usize,
        virt_addr: bool,
    ) -> Result<Remote, Error> {
        let fits = offset
            .checked_add(len)
            .is_some_and(|e| e as u64 <= self.size);
        if !fits {
            return Err(Error::OutOfSegment {
                rank,
                offset,
                len,
                size: self.size as usize,
            });
        }
        let addr = if virt_addr {
            self.base + offset as u64
        } else {
            offset as u64
        };
        Ok(Remote {
            addr,
            key: self.key,
        })
    }

    /// The 24-byte record published at attach.
    pub fn to_bytes(self) -> [u8; 24] {
        let mut b = [0u8; 24];
        b[..8].copy_from_slice(&self.base.to_le_bytes());
        b[8..16].copy_from_slice(&self.size.to_le_bytes());
        b[16..].copy_from_slice(&self.key.to_le_bytes());
        b
    }

    /// Parse a record of [`SegmentInfo::to_bytes`].
    pub fn from_bytes(b: &[u8]) -> Option<SegmentInfo> {
        if b.len() != 24 {
            return None;
        }
        let w = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(a)
        };
        Some(SegmentInfo {
            base: w(0),
            size: w(8),
            key: w(16),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_range_once() {
        let c: Vec<Chunk> = chunks(10, 4).collect();
        assert_eq!(
            c,
            vec![
                Chunk { at: 0, len: 4 },
                Chunk { at: 4, len: 4 },
                Chunk { at: 8, len: 2 }
            ]
        );
        assert_eq!(chunks(0, 4).len(), 0);
        assert_eq!(chunks(4, 4).len(), 1);
        assert_eq!(chunks(3, 0).len(), 3);
        for len in 0..200 {
            for max in 1..20 {
                let total: usize = chunks(len, max).map(|c| c.len).sum();
                assert_eq!(total, len);
                assert!(chunks(len, max).all(|c| c.len <= max && c.len > 0));
            }
        }
    }

    #[test]
    fn remote_ranges() {
        let s = SegmentInfo {
            base: 0x1000,
            size: 64,
            key: 9,
        };
        assert_eq!(
            s.remote(2, 8, 56, true).unwrap(),
            Remote {
                addr: 0x1008,
                key: 9
            }
        );
        assert_eq!(s.remote(2, 8, 56, false).unwrap().addr, 8);
        assert_eq!(
            s.remote(2, 9, 56, false).unwrap_err().to_string(),
            "56 bytes at offset 9 do not fit in the 64-byte segment of rank 2"
        );
        assert!(s.remote(2, usize::MAX, 2, false).is_err());
        assert_eq!(SegmentInfo::from_bytes(&s.to_bytes()), Some(s));
        assert_eq!(SegmentInfo::from_bytes(&[0; 23]), None);
    }
}
