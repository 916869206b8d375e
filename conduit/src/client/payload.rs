//! What a Long handler receives: its payload where it landed, in this
//! rank's segment.
//!
//! The segment is shared memory. While a handler runs, a put or Long from
//! another rank, another thread's [`super::Segment::write`], or a get
//! landing there may write the same bytes: the conduit cannot see every
//! writer. A `&[u8]` promises that nothing writes its bytes while it is in
//! use, so handing one to safe code would make such a write undefined
//! behaviour in that code, not merely a wrong value. A [`Payload`] gives
//! the bytes by copying (a concurrent writer leaves the copied bytes
//! unspecified, as with [`super::Segment::read`], but nothing is assumed
//! about them), and as a slice only where no one else can write them (a
//! Medium's buffer, which the conduit holds until the handler returns) or
//! through an `unsafe` call whose caller guarantees it (the way rust-vmm's
//! `VolatileSlice` treats guest memory).

use super::error::Error;
use std::marker::PhantomData;

/// A Long's payload (or, for a handler widened to Mediums, a Medium's):
/// `len()` bytes at [`super::Token::long_offset`] of this rank's segment.
///
/// ```no_run
/// use conduit::client::{Client, Handler};
///
/// let c = Client::init().unwrap();
/// c.register(200, Handler::request_long(0, |_tok, _args, p| {
///     let mut head = [0u8; 8];
///     if p.read(0, &mut head).is_ok() {
///         println!("{} bytes, starting {head:?}", p.len());
///     }
///     let all: Vec<u8> = p.to_vec();
///     # let _ = all;
/// }))
/// .unwrap();
/// ```
#[derive(Clone, Copy)]
pub struct Payload<'a> {
    ptr: *const u8,
    len: usize,
    /// The bytes lie in the segment (others may write them).
    shared: bool,
    _bytes: PhantomData<&'a [u8]>,
}

// SAFETY: a Payload is a pointer to bytes that outlive 'a and are only
// read (by copying, or as a slice under the rules of `as_slice` /
// `as_slice_unchecked`), as `&[u8]` would be.
unsafe impl Send for Payload<'_> {}
// SAFETY: as above: shared access only reads.
unsafe impl Sync for Payload<'_> {}

impl std::fmt::Debug for Payload<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Payload")
            .field("len", &self.len)
            .field("in_segment", &self.shared)
            .finish()
    }
}

impl<'a> Payload<'a> {
    /// Bytes of this rank's segment at `ptr..ptr+len`.
    ///
    /// # Safety
    /// The range lies in a mapping that outlives `'a`.
    pub(crate) unsafe fn in_segment(ptr: *const u8, len: usize) -> Self {
        Payload {
            // A Long of no bytes keeps where it was sent (a handler in C
            // gets that address, as GASNet-EX promises).
            ptr: if ptr.is_null() { [].as_ptr() } else { ptr },
            len,
            shared: true,
            _bytes: PhantomData,
        }
    }

    /// Bytes nobody writes while `'a` lasts (a Medium's buffer).
    pub(crate) fn private(bytes: &'a [u8]) -> Self {
        Payload {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
            shared: false,
            _bytes: PhantomData,
        }
    }

    /// Bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first byte (for C callers and `unsafe` readers); for a Long,
    /// where it was sent in this rank's segment, also when it has no
    /// bytes.
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    /// Whether the bytes lie in this rank's segment (a Long's), where
    /// others may write them while the handler runs.
    pub fn is_in_segment(&self) -> bool {
        self.shared
    }

    /// Copy `out.len()` bytes from `offset` of the payload into `out`.
    ///
    /// Errors: `offset + out.len()` beyond the payload (nothing copied).
    pub fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), Error> {
        if offset.checked_add(out.len()).is_none_or(|e| e > self.len) {
            return Err(Error::PayloadRange {
                offset,
                len: out.len(),
                size: self.len,
            });
        }
        // SAFETY: offset..offset+out.len() lies in the payload (checked),
        // which outlives 'a; `copy` allows `out` to overlap it (an unsafe
        // view of the segment may be what the caller passes).
        unsafe { crate::copy::copy_bytes(self.ptr.add(offset), out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// The whole payload, copied.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.len];
        // SAFETY: the payload's len bytes outlive 'a; `v` is new.
        unsafe { crate::copy::copy_bytes(self.ptr, v.as_mut_ptr(), self.len) };
        v
    }

    /// The payload as a slice where nobody else can write it: `Some` for a
    /// Medium's (a handler widened to Mediums), `None` for a Long's, which
    /// lies in the segment ([`Payload::as_slice_unchecked`]).
    pub fn as_slice(&self) -> Option<&'a [u8]> {
        // SAFETY: not in the segment: a Medium's buffer, which the conduit
        // holds unwritten until the handler returns ('a).
        (!self.shared).then(|| unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
    }

    /// The payload as a slice, without a copy.
    ///
    /// # Safety
    /// For as long as the slice is used, nothing may write these bytes: no
    /// put or Long from another rank, no get of this rank's landing there,
    /// no write through [`super::Segment`] on another thread. The
    /// application's synchronisation must guarantee it (GASNet-EX places
    /// the same rule on a Long's payload).
    pub unsafe fn as_slice_unchecked(&self) -> &'a [u8] {
        // SAFETY: the bytes outlive 'a; the absence of writers is the
        // caller's contract.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Whether the payload holds exactly `bytes` (compared by copying in
    /// chunks, without a slice of the segment).
    pub fn equals(&self, bytes: &[u8]) -> bool {
        if bytes.len() != self.len {
            return false;
        }
        let mut chunk = [0u8; 256];
        let mut at = 0;
        while at < self.len {
            let n = (self.len - at).min(chunk.len());
            if self.read(at, &mut chunk[..n]).is_err() || chunk[..n] != bytes[at..at + n] {
                return false;
            }
            at += n;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_checked_against_the_payload() {
        let bytes: Vec<u8> = (0..100).collect();
        // SAFETY: `bytes` outlives the payload.
        let p = unsafe { Payload::in_segment(bytes.as_ptr(), bytes.len()) };
        let mut out = [0u8; 10];
        p.read(90, &mut out).unwrap();
        assert_eq!(out[0], 90);
        assert_eq!(
            p.read(91, &mut out).unwrap_err().to_string(),
            "payload read of 10 bytes at offset 91 is outside the payload of 100 bytes"
        );
        assert!(p.read(usize::MAX, &mut out).is_err());
        assert_eq!(p.to_vec(), bytes);
        assert!(p.equals(&bytes) && !p.equals(&bytes[1..]));
        assert!(p.as_slice().is_none() && p.is_in_segment());
        let m = Payload::private(&bytes[..5]);
        assert_eq!(m.as_slice(), Some(&bytes[..5]));
        // SAFETY: an empty range.
        let e = unsafe { Payload::in_segment(std::ptr::null(), 0) };
        assert!(e.is_empty() && e.to_vec().is_empty() && e.equals(&[]));
    }
}
