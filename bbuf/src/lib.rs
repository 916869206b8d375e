//! The bookkeeping of a pool of bounce buffers.
//!
//! The RMA put hierarchy copies a put's source into bounce buffers when it is
//! larger than the provider's inject size but no larger than
//! `GASNET_OFI_BBUF_THRESHOLD`, so the caller's buffer is free at once. The
//! buffers are `count` slices of `size` bytes of one registered mapping that
//! the conduit owns (buffer `i` starts `i * size` bytes in); this crate only
//! hands their indices out, in constant time from a lock-free queue
//! (crossbeam), to several threads at once, and takes them back when the
//! write that used them completes. A buffer travels through libfabric as its
//! index (the completion context names its operation, which lists it).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use crossbeam_queue::ArrayQueue;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Errors of the pool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BbufError {
    /// The buffer size is not a positive multiple of the page size.
    #[error("bounce buffer size {size} is not a positive multiple of the page size {page}")]
    BadSize {
        /// Requested size.
        size: usize,
        /// Page size.
        page: usize,
    },
    /// count x size overflows.
    #[error("{count} bounce buffers of {size} bytes do not fit in the address space")]
    TooLarge {
        /// Buffers.
        count: usize,
        /// Bytes each.
        size: usize,
    },
    /// A returned index was not handed out.
    #[error("bounce buffer {index} returned to the pool but it was not in use")]
    NotInUse {
        /// The index.
        index: u32,
    },
}

/// Counters readable while the pool is in use.
#[derive(Debug, Default)]
struct Stats {
    gets: CachePadded<AtomicU64>,
    puts: CachePadded<AtomicU64>,
    misses: CachePadded<AtomicU64>,
}

/// A snapshot of the pool's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStats {
    /// Buffers handed out.
    pub gets: u64,
    /// Buffers returned.
    pub puts: u64,
    /// Requests that found too few free buffers.
    pub misses: u64,
}

/// The pool.
pub struct Pool {
    size: usize,
    count: usize,
    free: ArrayQueue<u32>,
    in_use: Box<[AtomicBool]>,
    stats: Stats,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("count", &self.count)
            .field("size", &self.size)
            .field("free", &self.free.len())
            .finish()
    }
}

impl Pool {
    /// `count` buffers of `size` bytes, a positive multiple of `page`.
    pub fn new(count: usize, size: usize, page: usize) -> Result<Pool, BbufError> {
        if size == 0 || page == 0 || size % page != 0 {
            return Err(BbufError::BadSize { size, page });
        }
        if count.checked_mul(size).is_none() || count > u32::MAX as usize {
            return Err(BbufError::TooLarge { count, size });
        }
        let free = ArrayQueue::new(count.max(1));
        for i in 0..count {
            // Cannot fail: the queue holds `count` entries.
            let _ = free.push(i as u32);
        }
        Ok(Pool {
            size,
            count,
            free,
            in_use: (0..count).map(|_| AtomicBool::new(false)).collect(),
            stats: Stats::default(),
        })
    }

    /// Bytes per buffer.
    pub fn buffer_size(&self) -> usize {
        self.size
    }

    /// Number of buffers.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True for a pool of zero buffers.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Bytes of the whole region (`count * size`).
    pub fn region_len(&self) -> usize {
        self.count * self.size
    }

    /// Where buffer `index` starts in the region.
    pub fn offset(&self, index: u32) -> usize {
        index as usize * self.size
    }

    /// Buffers free now.
    pub fn available(&self) -> usize {
        self.free.len()
    }

    /// Counters.
    pub fn stats(&self) -> PoolStats {
        PoolStats {
            gets: self.stats.gets.load(Ordering::Relaxed),
            puts: self.stats.puts.load(Ordering::Relaxed),
            misses: self.stats.misses.load(Ordering::Relaxed),
        }
    }

    fn pop(&self) -> Option<u32> {
        let i = self.free.pop()?;
        self.in_use[i as usize].store(true, Ordering::Relaxed);
        self.stats.gets.fetch_add(1, Ordering::Relaxed);
        Some(i)
    }

    /// `n` buffers or none (a put needs all its buffers or takes another
    /// path). Each index is handed to one caller until it is given back.
    pub fn take(&self, n: usize) -> Option<Vec<u32>> {
        let mut got = Vec::with_capacity(n);
        for _ in 0..n {
            match self.pop() {
                Some(i) => got.push(i),
                None => {
                    self.stats.misses.fetch_add(1, Ordering::Relaxed);
                    for i in got {
                        // Ours: cannot fail.
                        let _ = self.give(i);
                    }
                    return None;
                }
            }
        }
        Some(got)
    }

    /// Return buffer `index`.
    pub fn give(&self, index: u32) -> Result<(), BbufError> {
        let slot = self
            .in_use
            .get(index as usize)
            .ok_or(BbufError::NotInUse { index })?;
        if !slot.swap(false, Ordering::Relaxed) {
            return Err(BbufError::NotInUse { index });
        }
        self.stats.puts.fetch_add(1, Ordering::Relaxed);
        // Cannot fail: at most `count` indices exist.
        let _ = self.free.push(index);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const PAGE: usize = 4096;

    #[test]
    fn all_or_nothing_and_give_back() {
        let pool = Pool::new(4, PAGE, PAGE).unwrap();
        let a = pool.take(1).unwrap()[0];
        assert!(pool.take(4).is_none());
        assert_eq!(pool.available(), 3, "a failed take returns what it took");
        pool.give(a).unwrap();
        assert_eq!(pool.give(a), Err(BbufError::NotInUse { index: a }));
        assert_eq!(pool.give(99), Err(BbufError::NotInUse { index: 99 }));
        assert_eq!(pool.available(), 4);
        assert_eq!((pool.region_len(), pool.offset(3)), (4 * PAGE, 3 * PAGE));
    }

    #[test]
    fn bad_sizes() {
        assert_eq!(
            Pool::new(4, 100, PAGE).unwrap_err().to_string(),
            "bounce buffer size 100 is not a positive multiple of the page size 4096"
        );
        assert!(Pool::new(4, 0, PAGE).is_err());
        assert!(Pool::new(usize::MAX / 2, 2 * PAGE, PAGE).is_err());
    }

    #[test]
    fn each_index_has_one_owner_under_contention() {
        let pool = Arc::new(Pool::new(16, PAGE, PAGE).unwrap());
        let owner: Arc<Vec<AtomicU64>> = Arc::new((0..16).map(|_| AtomicU64::new(0)).collect());
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (pool, owner) = (pool.clone(), owner.clone());
                std::thread::spawn(move || {
                    for i in 0..20_000usize {
                        if let Some(bufs) = pool.take(1 + (i + t) % 4) {
                            for &b in &bufs {
                                let prev = owner[b as usize].swap(t as u64 + 1, Ordering::SeqCst);
                                assert_eq!(prev, 0, "buffer {b} handed out twice");
                            }
                            for &b in &bufs {
                                owner[b as usize].store(0, Ordering::SeqCst);
                                pool.give(b).unwrap();
                            }
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let s = pool.stats();
        assert_eq!(pool.available(), 16);
        assert_eq!(s.gets, s.puts, "every buffer handed out came back");
    }
}
