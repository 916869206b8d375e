//! This rank's segment as memory.
//!
//! The segment is shared memory: remote ranks write it with puts and AM
//! Long payloads at any time, and the application's own synchronisation
//! (barriers, AMs, flags) says when a range is quiet. So the view offers
//! raw access for a runtime that manages that itself (`unsafe`), copies,
//! and safe accessors whose semantics hold under concurrent remote access:
//! atomics (what a flag or counter written by remote puts or read by remote
//! gets should be) and volatile loads and stores.
//!
//! A Long handler's payload is a [`super::Payload`] in the segment, read by
//! copying for the same reason: no safe code holds a `&[u8]` of bytes that
//! others may write.

use super::error::Error;
use crate::mem::Mapping;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::Arc;

/// A view of this rank's segment ([`super::ClientOf::segment`]).
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    mem: &'a Arc<Mapping>,
    len: usize,
    /// This rank (named by range errors).
    rank: usize,
}

impl<'a> Segment<'a> {
    pub(crate) fn new(mem: &'a Arc<Mapping>, len: usize, rank: usize) -> Segment<'a> {
        Segment { mem, len, rank }
    }

    /// Bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true once attached.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first byte (page-aligned).
    pub fn as_ptr(&self) -> *mut u8 {
        self.mem.as_ptr()
    }

    /// Whether the segment is anonymous memory advised for transparent huge
    /// pages (`GASNET_OFI_SEGMENT_HUGEPAGES`; only where no supernode peer
    /// maps it), rather than a memory file in ordinary pages.
    pub fn hugepages_advised(&self) -> bool {
        self.mem.huge_advised()
    }

    /// Bytes of the segment that huge pages back now (touched pages only;
    /// read from `/proc/self/smaps`).
    pub fn huge_page_bytes(&self) -> std::io::Result<u64> {
        self.mem.huge_page_bytes()
    }

    fn range(&self, offset: usize, len: usize) -> Result<*mut u8, Error> {
        if offset.checked_add(len).is_none_or(|e| e > self.len) {
            return Err(rma::Error::OutOfSegment {
                rank: self.rank,
                offset,
                len,
                size: self.len,
            }
            .into());
        }
        match self.mem.range(offset, len) {
            Some(p) => Ok(p),
            None => Err(Error::NoSegment),
        }
    }

    fn aligned(&self, offset: usize, align: usize) -> Result<*mut u8, Error> {
        if offset % align != 0 {
            return Err(Error::Misaligned {
                offset,
                align,
                bits: 8 * align as u32,
            });
        }
        self.range(offset, align)
    }

    /// The whole segment as a byte slice.
    ///
    /// # Safety
    /// For as long as the slice is used, no one (no remote put, AM Long,
    /// get of this rank's into its own segment, or local write through
    /// another view) may write the bytes it is used to
    /// read: the application's synchronisation must guarantee it.
    pub unsafe fn as_slice(&self) -> &'a [u8] {
        // SAFETY: the mapping covers len bytes and outlives 'a; the absence
        // of concurrent writers is the caller's contract.
        unsafe { std::slice::from_raw_parts(self.mem.as_ptr(), self.len) }
    }

    /// The whole segment as a mutable byte slice.
    ///
    /// # Safety
    /// As for [`Segment::as_slice`], and no other reference to the
    /// segment's bytes (including other views and handlers' Long payloads)
    /// may be used while this one is.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn as_mut_slice(&self) -> &'a mut [u8] {
        // SAFETY: as above; exclusivity is the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.mem.as_ptr(), self.len) }
    }

    /// Copy `out.len()` bytes at `offset` into `out`.
    pub fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), Error> {
        let p = self.range(offset, out.len())?;
        // SAFETY: p..p+len is inside the mapping (checked); `out` is a
        // unique borrow, so it is not a view of these bytes.
        unsafe { std::ptr::copy(p, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// Copy `data` to `offset`.
    pub fn write(&self, offset: usize, data: &[u8]) -> Result<(), Error> {
        let p = self.range(offset, data.len())?;
        // SAFETY: inside the mapping (checked); `copy` allows `data` to be a
        // view of the same bytes.
        unsafe { std::ptr::copy(data.as_ptr(), p, data.len()) };
        Ok(())
    }

    /// The 8 bytes at `offset` (a multiple of 8) as an atomic.
    pub fn atomic_u64(&self, offset: usize) -> Result<&'a AtomicU64, Error> {
        let p = self.aligned(offset, 8)?;
        // SAFETY: p is 8-aligned (the mapping is page-aligned and offset is
        // a multiple of 8), inside the mapping (checked), which outlives
        // 'a; AtomicU64 has u64's layout and all bit patterns are valid.
        Ok(unsafe { AtomicU64::from_ptr(p.cast()) })
    }

    /// The 4 bytes at `offset` (a multiple of 4) as an atomic.
    pub fn atomic_u32(&self, offset: usize) -> Result<&'a AtomicU32, Error> {
        let p = self.aligned(offset, 4)?;
        // SAFETY: as in atomic_u64, for 4 bytes.
        Ok(unsafe { AtomicU32::from_ptr(p.cast()) })
    }

    /// A volatile load of the u64 at `offset` (a multiple of 8).
    pub fn read_volatile_u64(&self, offset: usize) -> Result<u64, Error> {
        let p = self.aligned(offset, 8)?;
        // SAFETY: aligned and inside the mapping (checked).
        Ok(unsafe { std::ptr::read_volatile(p.cast::<u64>()) })
    }

    /// A volatile store of `v` to the u64 at `offset` (a multiple of 8).
    pub fn write_volatile_u64(&self, offset: usize, v: u64) -> Result<(), Error> {
        let p = self.aligned(offset, 8)?;
        // SAFETY: aligned and inside the mapping (checked).
        unsafe { std::ptr::write_volatile(p.cast::<u64>(), v) };
        Ok(())
    }
}
