//! Aggregation of small implicit (NBI) puts.
//!
//! A small put through a provider costs one RMA write and one completion
//! each; on providers that emulate RMA in software (shm, tcp;ofi_rxm,
//! sockets, udp;ofi_rxd) the target's CPU performs every write anyway.
//! Implicit puts of at most the aggregation limit are therefore copied
//! into a batch per target instead: the batch travels as one AM Medium
//! whose payload is the wire form of its pieces ([`crate::vis::encode`])
//! followed by their bytes, the target writes the pieces in order and
//! acknowledges, and an NBI sync sends the open batches and waits for
//! every acknowledgement. A batch is sent as soon as the next put would
//! make it exceed one Medium.
//!
//! This module holds the batches; sending them and counting their
//! acknowledgements is the engine's.

use crate::vis::{Encoder, Piece};

/// Bytes a piece's encoding may take besides the count (three varints of
/// at most 10 bytes) plus the count's growth.
const PIECE_CODE_MAX: usize = 31;
/// Largest encoding of the piece count.
const COUNT_MAX: usize = 10;

/// Why an aggregator cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "an aggregation limit of {limit} bytes needs messages of at least {needed} bytes, \
     and they hold {capacity}"
)]
pub struct TooSmall {
    /// The aggregation limit.
    pub limit: usize,
    /// The message payload capacity.
    pub capacity: usize,
    /// What the limit needs.
    pub needed: usize,
}

/// Encoding bytes a batch has room for when it opens.
const OPEN_CODE: usize = 512;
/// Data bytes a batch has room for when it opens.
const OPEN_DATA: usize = 1024;

/// One target's open batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    code: Encoder,
    data: Vec<u8>,
}

impl Batch {
    /// Payload bytes the batch takes now.
    pub fn len(&self) -> usize {
        self.code.len() + self.data.len()
    }

    /// Whether it holds no put.
    pub fn is_empty(&self) -> bool {
        self.code.is_empty()
    }

    /// The message payload (the encoded piece list, then the bytes) and
    /// the length of the piece list.
    pub fn into_payload(self) -> (Vec<u8>, usize) {
        let mut out = Vec::with_capacity(self.len());
        self.code.finish_into(&mut out);
        let head = out.len();
        out.extend_from_slice(&self.data);
        (out, head)
    }

    /// Make room in a batch that opens for about 128 puts of 8 bytes
    /// rather than growing from nothing (a full 8 KiB batch holds about
    /// 740: five reallocations per batch instead of eleven).
    fn open(&mut self, capacity: usize) {
        self.code.reserve(OPEN_CODE.min(capacity));
        self.data.reserve(OPEN_DATA.min(capacity));
    }

    fn push(&mut self, offset: usize, bytes: &[u8]) {
        self.code.push(&Piece {
            local: self.data.len(),
            remote: offset,
            len: bytes.len(),
        });
        self.data.extend_from_slice(bytes);
    }

    /// Add the put if the batch then takes at most `capacity` bytes;
    /// whether it was added (the piece is encoded once for both).
    #[inline]
    fn try_push(&mut self, offset: usize, bytes: &[u8], capacity: usize) -> bool {
        let Some(room) = capacity.checked_sub(self.len() + bytes.len()) else {
            return false;
        };
        let p = Piece {
            local: self.data.len(),
            remote: offset,
            len: bytes.len(),
        };
        if !self.code.try_push(&p, room) {
            return false;
        }
        self.data.extend_from_slice(bytes);
        true
    }
}

/// The open batches of one endpoint set, by target rank.
#[derive(Debug, Clone)]
pub struct Aggregator {
    limit: usize,
    capacity: usize,
    open: Vec<Batch>,
    /// Ranks with a non-empty batch, in the order their batch opened.
    dirty: Vec<usize>,
}

impl Aggregator {
    /// Batches for `ranks` targets of puts of at most `limit` bytes (0:
    /// none are aggregated), in messages of at most `capacity` payload
    /// bytes.
    pub fn new(ranks: usize, limit: usize, capacity: usize) -> Result<Aggregator, TooSmall> {
        let needed = if limit == 0 {
            0
        } else {
            COUNT_MAX + PIECE_CODE_MAX + limit
        };
        if needed > capacity {
            return Err(TooSmall {
                limit,
                capacity,
                needed,
            });
        }
        Ok(Aggregator {
            limit,
            capacity,
            open: if limit == 0 {
                Vec::new()
            } else {
                vec![Batch::default(); ranks]
            },
            dirty: Vec::new(),
        })
    }

    /// Add a put of `bytes` to `offset` of `rank`'s segment (1 to `limit`
    /// bytes, as `PutLimits::choose_implicit` decides; the range checked
    /// by the caller). When it
    /// does not fit `rank`'s open batch, that batch is returned, to be sent
    /// before anything else to `rank`, and the put opens the next one.
    pub fn add(&mut self, rank: usize, offset: usize, bytes: &[u8]) -> Option<Batch> {
        debug_assert!(!bytes.is_empty() && bytes.len() <= self.limit);
        let b = &mut self.open[rank];
        let mut full = None;
        if b.is_empty() {
            self.dirty.push(rank);
            b.open(self.capacity);
        } else if b.try_push(offset, bytes, self.capacity) {
            return None;
        } else {
            full = Some(std::mem::take(b));
            b.open(self.capacity);
        }
        // An empty batch holds any put up to `limit` (`new` checked).
        b.push(offset, bytes);
        full
    }

    /// Every open batch with its target, in the order they opened; none
    /// stays open.
    pub fn take_open(&mut self) -> Vec<(usize, Batch)> {
        let open = &mut self.open;
        self.dirty
            .drain(..)
            .map(|r| (r, std::mem::take(&mut open[r])))
            .collect()
    }

    /// Whether no batch is open.
    pub fn is_idle(&self) -> bool {
        self.dirty.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vis::apply_packed;
    use proptest::prelude::*;

    /// Apply a batch's payload to `seg` as the target does.
    fn apply(seg: &mut [u8], b: Batch) -> usize {
        let (payload, head) = b.into_payload();
        let bound = seg.len();
        apply_packed(&payload, head, bound, |at, bytes| {
            seg[at..at + bytes.len()].copy_from_slice(bytes);
            Ok::<(), crate::vis::Error>(())
        })
        .unwrap()
    }

    #[test]
    fn limits() {
        assert!(Aggregator::new(4, 0, 0).is_ok());
        assert!(Aggregator::new(4, 256, 512).is_ok());
        let e = Aggregator::new(4, 256, 290).unwrap_err();
        assert_eq!(e.needed, 297);
        assert!(e.to_string().contains("at least 297 bytes"), "{e}");
    }

    #[test]
    fn a_full_batch_is_handed_back_and_the_put_opens_the_next() {
        let mut a = Aggregator::new(2, 64, 512).unwrap();
        let mut sent = Vec::new();
        for i in 0..100usize {
            if let Some(b) = a.add(1, i * 8, &(i as u64).to_ne_bytes()) {
                assert!(b.len() <= 512);
                sent.push(b);
            }
        }
        assert!(sent.len() >= 2);
        let open = a.take_open();
        assert_eq!(open.len(), 1);
        assert!(a.is_idle() && a.take_open().is_empty());
        let mut seg = vec![0u8; 800];
        let mut puts = 0;
        for b in sent.into_iter().chain(open.into_iter().map(|(r, b)| {
            assert_eq!(r, 1);
            b
        })) {
            puts += apply(&mut seg, b);
        }
        assert_eq!(puts, 100);
        for i in 0..100usize {
            assert_eq!(seg[i * 8..i * 8 + 8], (i as u64).to_ne_bytes());
        }
    }

    proptest! {
        /// Any sequence of puts, applied batch by batch in the order the
        /// batches leave, gives the segment the puts in program order
        /// give (later puts to the same bytes win), and no message
        /// exceeds the capacity.
        #[test]
        fn batches_preserve_every_put_in_order(
            puts in prop::collection::vec((0usize..3, 0usize..200, 1usize..=48, any::<u8>()), 1..400),
            capacity in 90usize..600,
        ) {
            let mut a = Aggregator::new(3, 48, capacity).unwrap();
            let mut want = vec![vec![0u8; 260]; 3];
            let mut got = want.clone();
            let mut applied = 0;
            for (rank, off, len, v) in puts.iter().copied() {
                let bytes: Vec<u8> = (0..len).map(|i| v.wrapping_add(i as u8)).collect();
                want[rank][off..off + len].copy_from_slice(&bytes);
                if let Some(b) = a.add(rank, off, &bytes) {
                    prop_assert!(b.len() <= capacity);
                    applied += apply(&mut got[rank], b);
                }
            }
            for (rank, b) in a.take_open() {
                prop_assert!(b.len() <= capacity);
                applied += apply(&mut got[rank], b);
            }
            prop_assert_eq!(applied, puts.len());
            prop_assert_eq!(got, want);
        }
    }
}
