//! Outbound AM buffers: a pool that starts with an initial number of
//! buffers and grows one at a time on demand up to a maximum
//! (`GASNET_OFI_NUM_INITIAL_{REQUEST,REPLY}_BUFFS`,
//! `GASNET_OFI_MAX_{REQUEST,REPLY}_BUFFS`). Each buffer is a separate heap
//! allocation, so its address stays put while libfabric holds it; it is
//! named by its index while in flight.

/// One buffer: its index and bytes.
#[derive(Debug)]
pub struct Buf {
    /// Index in the pool (what travels in the completion context).
    pub index: u32,
    /// The bytes (8-byte aligned length).
    pub data: Box<[u64]>,
}

impl Buf {
    /// The bytes as a byte slice.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: a [u64] is valid as bytes of 8x the length; alignment of
        // u8 is 1; the borrow is unique.
        unsafe {
            std::slice::from_raw_parts_mut(self.data.as_mut_ptr().cast::<u8>(), self.data.len() * 8)
        }
    }

    /// Start address.
    pub fn as_ptr(&self) -> *const u8 {
        self.data.as_ptr().cast()
    }
}

/// The pool.
#[derive(Debug)]
pub struct Pool {
    // Boxed so that a `Buf`'s address (the completion context) does not
    // move when the vector grows.
    #[allow(clippy::vec_box)]
    bufs: Vec<Box<Buf>>,
    free: Vec<u32>,
    max: usize,
    words: usize,
    grown: u64,
}

impl Pool {
    /// `initial` buffers of `bytes` bytes, growing to at most `max`.
    pub fn new(initial: usize, max: usize, bytes: usize) -> Pool {
        let words = bytes.div_ceil(8).max(1);
        let mut p = Pool {
            bufs: Vec::with_capacity(max),
            free: Vec::with_capacity(max),
            max,
            words,
            grown: 0,
        };
        for _ in 0..initial.min(max) {
            let i = p.add();
            p.free.push(i);
        }
        p.grown = 0;
        p
    }

    fn add(&mut self) -> u32 {
        let index = self.bufs.len() as u32;
        self.bufs.push(Box::new(Buf {
            index,
            data: vec![0u64; self.words].into_boxed_slice(),
        }));
        self.grown += 1;
        index
    }

    /// A free buffer's index, growing the pool if allowed; `None` when all
    /// `max` buffers are in flight.
    #[inline]
    pub fn take(&mut self) -> Option<u32> {
        if let Some(i) = self.free.pop() {
            return Some(i);
        }
        if self.bufs.len() < self.max {
            return Some(self.add());
        }
        None
    }

    /// Give a buffer back.
    #[inline]
    pub fn give(&mut self, index: u32) {
        debug_assert!(!self.free.contains(&index));
        self.free.push(index);
    }

    /// The buffer at `index`.
    #[inline]
    pub fn buf(&mut self, index: u32) -> &mut Buf {
        &mut self.bufs[index as usize]
    }

    /// Buffers allocated so far.
    pub fn allocated(&self) -> usize {
        self.bufs.len()
    }

    /// Bytes of one buffer (rounded up to 8).
    pub fn buffer_bytes(&self) -> usize {
        self.words * 8
    }

    /// Buffers added on demand after start-up.
    pub fn grown(&self) -> u64 {
        self.grown
    }

    /// Buffers in flight.
    pub fn in_flight(&self) -> usize {
        self.bufs.len() - self.free.len()
    }

    /// Recover a buffer index from a completion context produced by
    /// [`Pool::context`].
    ///
    /// # Safety
    /// `ctx` must be a pointer returned by `context` on this pool.
    #[inline]
    pub unsafe fn index_of(ctx: *const Buf) -> u32 {
        // SAFETY: per the contract, ctx points at a live Buf of this pool.
        unsafe { (*ctx).index }
    }

    /// A stable pointer naming buffer `index` (for a completion context).
    #[inline]
    pub fn context(&self, index: u32) -> *const Buf {
        &*self.bufs[index as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_on_demand_to_the_maximum() {
        let mut p = Pool::new(2, 4, 100);
        assert_eq!(p.allocated(), 2);
        let got: Vec<u32> = (0..4).map(|_| p.take().unwrap()).collect();
        assert_eq!(p.allocated(), 4);
        assert_eq!(p.grown(), 2);
        assert!(p.take().is_none());
        let ctx = p.context(got[3]);
        // SAFETY: ctx came from this pool.
        assert_eq!(unsafe { Pool::index_of(ctx) }, got[3]);
        p.give(got[3]);
        assert_eq!(p.in_flight(), 3);
        assert_eq!(p.take(), Some(got[3]));
        assert_eq!(p.buf(0).bytes_mut().len(), 104);
    }

    #[test]
    fn addresses_are_stable_while_growing() {
        let mut p = Pool::new(1, 64, 64);
        let a = p.take().unwrap();
        let addr = p.buf(a).as_ptr();
        for _ in 0..63 {
            p.take().unwrap();
        }
        assert_eq!(p.buf(a).as_ptr(), addr);
    }
}
