//! A pool of page-aligned bounce buffers.
//!
//! The RMA put hierarchy copies a put's source into bounce buffers when it is
//! larger than the provider's inject size but no larger than
//! `GASNET_OFI_BBUF_THRESHOLD`, so the caller's buffer is free at once. The
//! buffers come from one anonymous mapping (page-aligned, registered once by
//! the conduit), are handed out in constant time from a lock-free queue
//! (crossbeam), and come back when the write that used them completes.
//!
//! A buffer travels through libfabric as its index (the completion context
//! names it), so besides the RAII [`BounceBuffer`] the pool offers
//! [`BounceBuffer::into_index`] and [`Pool::reclaim`].

use crossbeam_queue::ArrayQueue;
use crossbeam_utils::CachePadded;
use memmap2::MmapMut;
use std::sync::atomic::{AtomicU64, Ordering};

/// Errors creating a pool.
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
    /// count x size overflows or the mapping failed.
    #[error("cannot map {count} bounce buffers of {size} bytes: {why}")]
    Map {
        /// Buffers.
        count: usize,
        /// Bytes each.
        size: usize,
        /// The OS's answer.
        why: String,
    },
    /// A reclaimed index was not handed out.
    #[error("bounce buffer {index} returned to the pool but it was not in use")]
    NotInUse {
        /// The index.
        index: u32,
    },
}

/// The system page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory effects.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
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
    mem: MmapMut,
    size: usize,
    count: usize,
    free: ArrayQueue<u32>,
    in_use: Box<[std::sync::atomic::AtomicBool]>,
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
    /// `count` buffers of `size` bytes (a multiple of the page size).
    pub fn new(count: usize, size: usize) -> Result<Pool, BbufError> {
        let page = page_size();
        if size == 0 || size % page != 0 {
            return Err(BbufError::BadSize { size, page });
        }
        let total = count.checked_mul(size).ok_or_else(|| BbufError::Map {
            count,
            size,
            why: "size overflows".into(),
        })?;
        let mem = MmapMut::map_anon(total.max(page)).map_err(|e| BbufError::Map {
            count,
            size,
            why: e.to_string(),
        })?;
        let free = ArrayQueue::new(count.max(1));
        for i in 0..count {
            // Cannot fail: the queue holds `count` entries.
            let _ = free.push(i as u32);
        }
        Ok(Pool {
            mem,
            size,
            count,
            free,
            in_use: (0..count)
                .map(|_| std::sync::atomic::AtomicBool::new(false))
                .collect(),
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

    /// Buffers free now.
    pub fn available(&self) -> usize {
        self.free.len()
    }

    /// The whole region, for memory registration.
    pub fn region(&self) -> (*const u8, usize) {
        (self.mem.as_ptr(), self.count * self.size)
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

    /// One buffer, or `None` when all are in use.
    pub fn try_get(&self) -> Option<BounceBuffer<'_>> {
        match self.pop() {
            Some(index) => Some(BounceBuffer { pool: self, index }),
            None => {
                self.stats.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// `n` buffers or none (a put needs all its buffers or takes another
    /// path).
    pub fn try_get_many(&self, n: usize) -> Option<Vec<BounceBuffer<'_>>> {
        let mut got = Vec::with_capacity(n);
        for _ in 0..n {
            match self.pop() {
                Some(index) => got.push(BounceBuffer { pool: self, index }),
                None => {
                    self.stats.misses.fetch_add(1, Ordering::Relaxed);
                    return None; // `got` returns its buffers on drop
                }
            }
        }
        Some(got)
    }

    /// Return a buffer handed out by [`BounceBuffer::into_index`].
    pub fn reclaim(&self, index: u32) -> Result<(), BbufError> {
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

    fn ptr(&self, index: u32) -> *mut u8 {
        // SAFETY: index < count, so the offset is inside the mapping.
        unsafe { self.mem.as_ptr().add(index as usize * self.size) as *mut u8 }
    }
}

/// One buffer, returned to the pool on drop.
#[derive(Debug)]
pub struct BounceBuffer<'a> {
    pool: &'a Pool,
    index: u32,
}

impl BounceBuffer<'_> {
    /// Its index in the pool.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// Its contents.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the buffer is handed out to this value only (the free
        // queue gives each index to one owner), and lies inside the mapping.
        unsafe { std::slice::from_raw_parts_mut(self.pool.ptr(self.index), self.pool.size) }
    }

    /// Start address (for the RMA write).
    pub fn as_ptr(&self) -> *const u8 {
        self.pool.ptr(self.index)
    }

    /// Keep the buffer in use past this value (an RMA write in flight);
    /// give it back with [`Pool::reclaim`] when the write completes.
    pub fn into_index(self) -> u32 {
        let i = self.index;
        std::mem::forget(self);
        i
    }
}

impl Drop for BounceBuffer<'_> {
    fn drop(&mut self) {
        // The index came from this pool and is in use: cannot fail.
        let _ = self.pool.reclaim(self.index);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn buffers_are_page_aligned_and_distinct() {
        let page = page_size();
        let pool = Pool::new(8, page).unwrap();
        let mut all = pool.try_get_many(8).unwrap();
        assert!(pool.try_get().is_none());
        let mut addrs: Vec<usize> = all.iter().map(|b| b.as_ptr() as usize).collect();
        assert!(addrs.iter().all(|a| a % page == 0));
        addrs.sort();
        addrs.dedup();
        assert_eq!(addrs.len(), 8);
        all[3].as_mut_slice()[0] = 7;
        drop(all);
        assert_eq!(pool.available(), 8);
    }

    #[test]
    fn all_or_nothing_and_reclaim() {
        let pool = Pool::new(4, page_size()).unwrap();
        let a = pool.try_get().unwrap().into_index();
        assert!(pool.try_get_many(4).is_none());
        assert_eq!(
            pool.available(),
            3,
            "a failed multi-get returns what it took"
        );
        pool.reclaim(a).unwrap();
        assert_eq!(pool.reclaim(a), Err(BbufError::NotInUse { index: a }));
        assert_eq!(pool.reclaim(99), Err(BbufError::NotInUse { index: 99 }));
        assert_eq!(pool.available(), 4);
    }

    #[test]
    fn bad_sizes() {
        let page = page_size();
        assert_eq!(
            Pool::new(4, 100).unwrap_err(),
            BbufError::BadSize { size: 100, page }
        );
        assert!(Pool::new(4, 0).is_err());
    }

    #[test]
    fn accounting_under_contention() {
        let pool = Arc::new(Pool::new(16, page_size()).unwrap());
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let pool = pool.clone();
                std::thread::spawn(move || {
                    let mut held = 0u64;
                    for i in 0..20_000u64 {
                        let want = 1 + (i as usize + t) % 4;
                        if let Some(mut bufs) = pool.try_get_many(want) {
                            for b in bufs.iter_mut() {
                                // Each buffer is ours alone: write and check.
                                let s = b.as_mut_slice();
                                s[0] = t as u8;
                                s[s.len() - 1] = t as u8;
                                assert_eq!(s[0], t as u8);
                            }
                            held += bufs.len() as u64;
                        }
                    }
                    held
                })
            })
            .collect();
        let held: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
        let s = pool.stats();
        assert_eq!(pool.available(), 16);
        assert_eq!(s.gets, s.puts, "every buffer handed out came back");
        assert!(s.gets >= held);
    }
}
