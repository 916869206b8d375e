//! Byte copies of the conduit's own (same-host puts, gets and AM Long
//! payloads, AM payloads into message buffers): `memmove` semantics, with
//! two cases handled here rather than by the C library.
//!
//! - **Up to 16 bytes**, the common fine-grained put or get: copied inline
//!   (every byte is read before any is written, so overlap is safe);
//!   without this a blocking 8-byte put through shared memory spends a
//!   good part of its ~10 ns in the call to `memmove`.
//! - **4 KiB aliasing**: where the destination starts a few bytes after
//!   the source modulo 4096 (a page-aligned source and a destination 16
//!   bytes into a page, as a large `malloc`ed buffer's is), the
//!   `rep movsb` that glibc 2.36's `memcpy` (Debian 12's) uses between its
//!   `rep_movsb_threshold` (2,112 bytes on an AMD EPYC) and its stop
//!   threshold (about the L2 cache's size) runs at 2.8-3.0 GB/s on AMD
//!   Zen 3, where the same copy otherwise runs at 40-90 GB/s (glibc bug
//!   30994; measured slow at skews of 8 and 16 bytes, not at 32 or 64).
//!   Copies whose skew is 1 to 63 bytes go through a vector loop that
//!   copies backwards (a load then never follows a store to the same
//!   offset in a page) with aligned stores: 44-89 GB/s from the cache,
//!   level with `memcpy` from memory (docs/PERFORMANCE.md, "Copies between
//!   4 KiB-aliased buffers").

/// Copies at least this long are checked for 4 KiB aliasing (below it,
/// glibc copies with vector loops, unaffected).
const ALIAS_CHECK_FROM: usize = 2048;

/// `std::ptr::copy` (overlap allowed), with short copies inline and the
/// 4 KiB-aliased ones through [`copy_backward`] (module docs).
///
/// # Safety
///
/// As `std::ptr::copy`: `src` readable and `dst` writable for `len` bytes.
#[inline(always)]
pub(crate) unsafe fn copy_bytes(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: the reads and writes stay within the `len` bytes the caller
    // vouches for; unaligned accesses are used, and all reads happen
    // before the first write.
    unsafe {
        match len {
            0 => {}
            1..=3 => {
                let (a, b, c) = (*src, *src.add(len / 2), *src.add(len - 1));
                *dst = a;
                *dst.add(len / 2) = b;
                *dst.add(len - 1) = c;
            }
            4..=7 => {
                let a = src.cast::<u32>().read_unaligned();
                let b = src.add(len - 4).cast::<u32>().read_unaligned();
                dst.cast::<u32>().write_unaligned(a);
                dst.add(len - 4).cast::<u32>().write_unaligned(b);
            }
            8..=16 => {
                let a = src.cast::<u64>().read_unaligned();
                let b = src.add(len - 8).cast::<u64>().read_unaligned();
                dst.cast::<u64>().write_unaligned(a);
                dst.add(len - 8).cast::<u64>().write_unaligned(b);
            }
            _ if len >= ALIAS_CHECK_FROM && backward_pays(src, dst, len) => {
                copy_backward(src, dst, len)
            }
            _ => std::ptr::copy(src, dst, len),
        }
    }
}

/// Copy `src` into `dst` (of the same length) as [`copy_bytes`] does.
///
/// # Panics
///
/// If the lengths differ, as `<[u8]>::copy_from_slice`.
#[inline]
pub(crate) fn copy_slice(dst: &mut [u8], src: &[u8]) {
    assert_eq!(
        dst.len(),
        src.len(),
        "copy_slice: destination and source lengths differ"
    );
    // SAFETY: both slices are valid for their (equal) lengths, and a
    // `&mut` and a `&` slice never overlap.
    unsafe { copy_bytes(src.as_ptr(), dst.as_mut_ptr(), src.len()) }
}

/// Whether a copy of `len` bytes is 4 KiB-aliased (the destination 1 to 63
/// bytes after the source modulo 4096) and may be copied backwards: the
/// ranges do not overlap, or the destination is above the source (where
/// a backward copy is what `memmove` does).
#[inline(always)]
fn backward_pays(src: *const u8, dst: *mut u8, len: usize) -> bool {
    let (s, d) = (src as usize, dst as usize);
    let skew = d.wrapping_sub(s) & 4095;
    (1..64).contains(&skew)
        && cfg!(target_arch = "x86_64")
        && (d > s || d.checked_add(len).is_some_and(|end| end <= s))
}

/// A backward copy of `len >= ALIAS_CHECK_FROM` bytes with `dst > src` or
/// no overlap (`backward_pays`): the head and tail are loaded first and
/// stored last, the rest moves in blocks from the end down with stores
/// aligned to the vector size. Without AVX2 (x86_64 CPUs from before
/// 2013, whose `rep movsb` predates the slow case), `memmove`.
///
/// # Safety
///
/// As `copy_bytes`, and `backward_pays(src, dst, len)`.
#[cold]
#[inline(never)]
unsafe fn copy_backward(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked); the caller's contract.
        unsafe { x86::backward_avx2(src, dst, len) };
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy(src, dst, len) };
}

/// Copy `len` bytes from `src` to `dst` (no overlap) with non-temporal
/// stores where the CPU has AVX2: the destination's lines are written
/// without being read first and are not kept in the caches, which pays for
/// a destination larger than the L2 cache that will not be read at once
/// (the get bounce buffers' copy-out of large gets: 0.96x a direct copy
/// into cold memory against 0.78x with ordinary stores). The streaming
/// stores are followed by a store fence, so every byte is ordered before
/// anything the caller stores next (a completion flag another thread
/// reads); the last 32 bytes are an ordinary store after it, which x86
/// keeps in order. Elsewhere [`copy_bytes`].
///
/// # Safety
///
/// `src` readable and `dst` writable for `len` bytes; the ranges do not
/// overlap.
pub(crate) unsafe fn copy_streaming(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if len >= 256 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked); the caller's contract.
        unsafe { x86::streaming_avx2(src, dst, len) };
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { copy_bytes(src, dst, len) }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// `copy_streaming` with 32-byte vectors: the bytes up to the
    /// destination's first 32-byte boundary and after its last one with
    /// ordinary stores, the rest with `vmovntdq`, then `sfence`.
    ///
    /// # Safety
    ///
    /// AVX2 present; `src` readable and `dst` writable for `len >= 64`
    /// bytes; no overlap.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn streaming_avx2(src: *const u8, dst: *mut u8, len: usize) {
        debug_assert!(len >= 64);
        // SAFETY: the head is the first 32 bytes and the tail the last 32
        // (len >= 64); the loop's blocks lie between the destination's
        // first and last 32-byte boundaries, inside the `len` bytes, and
        // the streaming stores' addresses are 32-byte aligned; the ranges
        // do not overlap, so the order of reads and writes is free.
        unsafe {
            _mm256_storeu_si256(dst.cast(), _mm256_loadu_si256(src.cast()));
            let tail = _mm256_loadu_si256(src.add(len - 32).cast());
            let mut at = (32 - (dst as usize & 31)) & 31;
            let end = ((dst as usize + len) & !31) - dst as usize;
            while at + 128 <= end {
                let s = src.add(at);
                let a = _mm256_loadu_si256(s.cast());
                let b = _mm256_loadu_si256(s.add(32).cast());
                let c = _mm256_loadu_si256(s.add(64).cast());
                let d = _mm256_loadu_si256(s.add(96).cast());
                let t = dst.add(at);
                _mm256_stream_si256(t.cast(), a);
                _mm256_stream_si256(t.add(32).cast(), b);
                _mm256_stream_si256(t.add(64).cast(), c);
                _mm256_stream_si256(t.add(96).cast(), d);
                at += 128;
            }
            while at + 32 <= end {
                _mm256_stream_si256(dst.add(at).cast(), _mm256_loadu_si256(src.add(at).cast()));
                at += 32;
            }
            _mm_sfence();
            _mm256_storeu_si256(dst.add(len - 32).cast(), tail);
        }
    }

    /// `copy_backward` with 32-byte vectors, 128 bytes a step.
    ///
    /// # Safety
    ///
    /// AVX2 present; `src` readable and `dst` writable for `len >= 160`
    /// bytes; no overlap, or `dst > src`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn backward_avx2(src: *const u8, dst: *mut u8, len: usize) {
        debug_assert!(len >= 160);
        // SAFETY: every access is within `len` bytes of `src` or `dst`
        // (the head is the first 128, the tail the last 32, the blocks lie
        // in between); the head and tail are read before any store, and
        // each block is read before its own store, which with `dst > src`
        // only covers bytes above every block still to be read.
        unsafe {
            let h0 = _mm256_loadu_si256(src.cast());
            let h1 = _mm256_loadu_si256(src.add(32).cast());
            let h2 = _mm256_loadu_si256(src.add(64).cast());
            let h3 = _mm256_loadu_si256(src.add(96).cast());
            let tail = _mm256_loadu_si256(src.add(len - 32).cast());
            // Bytes from `dst` to the last 32-byte boundary in the range.
            let mut n = ((dst as usize + len) & !31) - dst as usize;
            while n > 128 {
                n -= 128;
                let s = src.add(n);
                let a = _mm256_loadu_si256(s.add(96).cast());
                let b = _mm256_loadu_si256(s.add(64).cast());
                let c = _mm256_loadu_si256(s.add(32).cast());
                let d = _mm256_loadu_si256(s.cast());
                let t = dst.add(n);
                _mm256_store_si256(t.add(96).cast(), a);
                _mm256_store_si256(t.add(64).cast(), b);
                _mm256_store_si256(t.add(32).cast(), c);
                _mm256_store_si256(t.cast(), d);
            }
            _mm256_storeu_si256(dst.add(len - 32).cast(), tail);
            _mm256_storeu_si256(dst.add(96).cast(), h3);
            _mm256_storeu_si256(dst.add(64).cast(), h2);
            _mm256_storeu_si256(dst.add(32).cast(), h1);
            _mm256_storeu_si256(dst.cast(), h0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length up to 40, every overlap of source and destination
    /// within one buffer (both directions), against `std::ptr::copy`.
    #[test]
    fn short_copies_are_memmove() {
        for len in 0..=40usize {
            for from in 0..48usize {
                for to in 0..48usize {
                    let init: Vec<u8> = (0..96u8).map(|i| i.wrapping_mul(37)).collect();
                    let mut a = init.clone();
                    let mut b = init.clone();
                    // SAFETY: from + len and to + len are at most 88 < 96.
                    unsafe {
                        copy_bytes(a.as_ptr().add(from), a.as_mut_ptr().add(to), len);
                        std::ptr::copy(b.as_ptr().add(from), b.as_mut_ptr().add(to), len);
                    }
                    assert_eq!(a, b, "len {len} from {from} to {to}");
                }
            }
        }
    }

    /// A buffer of `n` bytes whose contents differ at every offset.
    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 131 + i / 251) as u8).collect()
    }

    /// Long copies in and out of the 4 KiB-aliased window (skews 0 to 70
    /// and around 4096), lengths around the vector sizes and the check's
    /// threshold, in one buffer: overlapping upwards and downwards and
    /// apart, against `std::ptr::copy`, and the bytes around the
    /// destination untouched.
    #[test]
    fn long_copies_are_memmove() {
        let base = 4096 * 4;
        let lens = [
            2047usize, 2048, 2049, 2112, 2113, 3000, 4095, 4096, 4097, 5000, 9000,
        ];
        let skews: Vec<isize> = (0..=70)
            .chain([4032, 4095, 4096, 4097, 4159, 4160])
            .collect();
        for &len in &lens {
            for &skew in &skews {
                for sign in [1isize, -1] {
                    let init = pattern(base * 2 + 9000 * 2);
                    let from = base;
                    let to = (base as isize + sign * skew) as usize;
                    let mut a = init.clone();
                    let mut b = init.clone();
                    // SAFETY: from, to <= base + 4160 and len <= 9000 stay
                    // inside the 2 * base + 18000 bytes.
                    unsafe {
                        copy_bytes(a.as_ptr().add(from), a.as_mut_ptr().add(to), len);
                        std::ptr::copy(b.as_ptr().add(from), b.as_mut_ptr().add(to), len);
                    }
                    assert!(a == b, "len {len} skew {} from {from} to {to}", sign * skew);
                }
            }
        }
    }

    /// The backward copy directly (AVX2's loop where the CPU has it), on
    /// every start alignment of the destination within 64 bytes and the
    /// lengths where the loop's head, blocks and tail meet.
    #[test]
    fn backward_copy_copies_every_byte() {
        let src = pattern(8192);
        for len in (160..700).chain([2048, 4096, 4111]) {
            for at in 0..64usize {
                let mut dst = vec![0xA5u8; len + 128];
                // SAFETY: `src` holds 8192 >= len bytes, `dst` holds
                // at + len < len + 128; they do not overlap.
                unsafe { copy_backward(src.as_ptr(), dst.as_mut_ptr().add(at), len) };
                assert_eq!(&dst[at..at + len], &src[..len], "len {len} at {at}");
                assert!(dst[..at].iter().all(|&b| b == 0xA5));
                assert!(dst[at + len..].iter().all(|&b| b == 0xA5));
            }
        }
    }

    /// Streaming copies at every destination and source alignment within
    /// a vector, lengths around the loop's block and the threshold.
    #[test]
    fn streaming_copy_copies_every_byte() {
        let src = pattern(70_000);
        for len in (0..300).chain([511, 512, 513, 4096, 65_535, 65_536]) {
            for at in (0..40usize).step_by(3) {
                let from = (at * 7) % 33;
                let mut dst = vec![0xA5u8; len + 128];
                // SAFETY: `src` holds 70,000 >= from + len bytes, `dst`
                // at + len < len + 128; they do not overlap.
                unsafe { copy_streaming(src.as_ptr().add(from), dst.as_mut_ptr().add(at), len) };
                assert_eq!(
                    &dst[at..at + len],
                    &src[from..from + len],
                    "len {len} at {at}"
                );
                assert!(dst[..at].iter().all(|&b| b == 0xA5), "len {len} at {at}");
                assert!(
                    dst[at + len..].iter().all(|&b| b == 0xA5),
                    "len {len} at {at}"
                );
            }
        }
    }

    #[test]
    fn copy_slice_copies() {
        let src = pattern(5000);
        let mut dst = vec![0u8; 5000];
        copy_slice(&mut dst, &src);
        assert_eq!(dst, src);
    }
}
