//! Gets through bounce buffers at a safe in-page offset
//! (`GASNET_OFI_GET_BOUNCE`).
//!
//! On AMD Zen 3 the kernel's `process_vm_readv`, which the shm provider
//! runs inside `fi_read` (its fast RMA), copies at a quarter of its speed
//! when the destination starts 1 to 63 bytes after the source within a
//! page (`rep movsb` and 4 KiB aliasing; docs/PERFORMANCE.md, "Copies
//! between 4 KiB-aliased buffers"). A page-aligned segment read into a
//! large `malloc`ed buffer (16 bytes into its page) is exactly that. Where
//! this path is on, such a get is read chunk by chunk into a bounce buffer
//! placed 2,048 bytes away from the source's in-page offset, and each chunk
//! is copied out by the conduit (with non-temporal stores for large gets)
//! before the next is read. The get is over when the call returns: on a
//! provider that copies reads within the posting call (the profile's
//! `reads_in_call`) a non-blocking get never overlapped anything anyway.
//!
//! Soundness: one chunk is in flight at a time, and it is waited for
//! (`wait_op`, which returns only once the transfer is over) before its
//! bytes are copied and before the buffer goes back to the pool (a guard
//! returns it on every way out, after the transfer's own guard has drained
//! it).

use super::rma::InFlight;
use super::{Bounce, Core, Local, Progress};
use crate::client::error::Error;
use crate::sync::{Counter, Lock, Mode};
use crate::transport::{Region, Transport};
use ::rma::ops::Implicit;
use ::rma::plan::Remote;

/// Gets of at least this many bytes are checked for the slow offset.
pub(crate) const GET_BOUNCE_FROM: usize = 4096;
/// Bytes read per chunk: half of a Zen 3 core's L2 cache, so the copy-out
/// reads it from there. At 1 MiB, chunks of 32, 64, 128 and 256 KiB gave
/// 0.60-0.61, 0.76-0.81, 0.88-0.91 and 0.90-0.98x the puts of that shape (fewer system calls
/// and waits per get); 512 KiB no more than 256.
pub(crate) const CHUNK: usize = 256 << 10;
/// Buffers in the pool (one per thread bouncing at the same moment; a get
/// that finds none free goes directly).
pub(crate) const BUFFERS: usize = 4;
/// Gets of at least this many bytes are copied out with non-temporal
/// stores (the destination would not stay in the L2 cache beside the
/// buffer): at 1 MiB in 256 KiB chunks 0.97x the puts, against 0.77x with
/// ordinary stores.
pub(crate) const STREAM_FROM: usize = 256 << 10;

/// Whether a read into `dst` from `remote` is at the slow offset: the
/// destination 1 to 63 bytes after the source modulo 4096. `remote` is the
/// target's virtual address, or its offset in a page-aligned segment
/// (the same offset within a page).
#[inline]
pub(crate) fn aliased(dst: *mut u8, remote: u64) -> bool {
    let skew = (dst as u64).wrapping_sub(remote) & 4095;
    (1..64).contains(&skew)
}

/// Where in a buffer the bytes read from `remote` go: 2,048 bytes past its
/// in-page offset, so neither the read into the buffer nor the copy out of
/// it (whose offsets then differ by 2,048 plus the original 1 to 63) is at
/// a slow offset.
#[inline]
pub(crate) fn place(remote: u64) -> usize {
    (remote.wrapping_add(2048) & 4095) as usize
}

/// The get bounce buffers `GASNET_OFI_GET_BOUNCE` asks for: `on`, always;
/// `off`, never; `auto`, where the provider's profile says it copies reads
/// within the posting call, addresses by virtual address, may read other
/// processes by cross-memory attach (`cma_probe::cross_process_allowed`),
/// and the start-up probe finds the kernel's copy slow at the offset (the
/// verdict is logged).
pub(super) fn new_get_bounce<T: Transport>(
    tp: &T,
    cfg: &crate::config::Config,
    facts: &crate::transport::Facts,
) -> Result<Option<Bounce<T::Region>>, Error> {
    use crate::config::rma::GetBounce as Mode;
    let on = match cfg.rma.get_bounce {
        Mode::Off => false,
        Mode::On => true,
        Mode::Auto => {
            crate::profile::lookup(&facts.provider).reads_in_call == Some(true)
                && facts.mr_virt_addr
                && crate::cma_probe::cross_process_allowed()
                && match crate::cma_probe::probe() {
                    Some(p) => {
                        tracing::info!(
                            "{}: the kernel's cross-memory copy of 64 KiB took {:?} at the \
                             source's offset in a page and {:?} 16 bytes after it: get bounce \
                             buffers {}",
                            facts.provider,
                            p.aligned,
                            p.skewed,
                            if p.slow() { "on" } else { "off" }
                        );
                        p.slow()
                    }
                    None => false,
                }
        }
    };
    if !on {
        return Ok(None);
    }
    let page = crate::mem::page_size();
    let size = (CHUNK + 4096).next_multiple_of(page);
    let pool = bbuf::Pool::new(BUFFERS, size, page)?;
    Bounce::new(tp, pool, "get bounce buffers (GASNET_OFI_GET_BOUNCE)").map(Some)
}

/// Release a taken buffer on every way out.
struct Taken<'a> {
    pool: &'a bbuf::Pool,
    index: u32,
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.pool.give(self.index) {
            tracing::warn!("{e}");
        }
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Read `len` bytes of `rank`'s segment at `remote` into `dst` through
    /// a get bounce buffer when this path is on and the get is at the slow
    /// offset (module docs). `None`: the get goes directly (not at that
    /// offset, too short, the path off, no buffer free, or inside a
    /// handler, where it keeps its non-blocking start). `Some`: the get is
    /// over, with its outcome.
    #[inline]
    pub(super) fn get_bounced(
        &self,
        set: usize,
        rank: usize,
        remote: Remote,
        dst: *mut u8,
        len: usize,
        wait: Progress,
    ) -> Option<Result<(), Error>> {
        let gb = self.get_bounce.as_ref()?;
        if len < GET_BOUNCE_FROM || !aliased(dst, remote.addr) || super::in_handler() {
            return None;
        }
        let index = gb.pool.take(1)?.pop()?;
        let taken = Taken {
            pool: &gb.pool,
            index,
        };
        Some(self.bounce_chunks(gb, &taken, set, rank, remote, dst, len, wait))
    }

    #[allow(clippy::too_many_arguments)]
    #[cold]
    #[inline(never)]
    fn bounce_chunks(
        &self,
        gb: &Bounce<T::Region>,
        taken: &Taken<'_>,
        set: usize,
        rank: usize,
        remote: Remote,
        dst: *mut u8,
        len: usize,
        wait: Progress,
    ) -> Result<(), Error> {
        // The pool's buffers tile its region, which the mapping holds whole.
        debug_assert!(gb.pool.offset(taken.index) + gb.pool.buffer_size() <= gb.mem.len());
        let base = gb.mem.as_ptr().wrapping_add(gb.pool.offset(taken.index));
        self.sets[set].stats.get_bounce.add(1);
        let desc = Some(gb.regions[set.min(gb.regions.len() - 1)].desc());
        let stream = len >= STREAM_FROM;
        let step = CHUNK.min(self.max_rma);
        let mut at = 0;
        while at < len {
            let r = Remote {
                addr: remote.addr + at as u64,
                key: remote.key,
            };
            let n = (len - at).min(step);
            let p = base.wrapping_add(place(r.addr));
            let op = self.sets[set].ops.lock().start(1, Implicit::No);
            let mut g = InFlight::new(self, set, op, 1);
            // A failed post: `g` counts the transfer failed and drains the
            // operation before the buffer goes back. Once posted, `wait_op`
            // returns (or unwinds, through its own guard) only when the
            // transfer is over.
            self.post_chunk(set, rank, Local::Read(p), n, r, desc, op, false, wait)?;
            g.posted();
            let op = g.disarm();
            self.wait_op(set, Some(op), wait, "get", "from", rank)?;
            // SAFETY: the read into `p..p+n` (inside the buffer: `place` <
            // 4096 and `n` <= CHUNK, the buffer CHUNK + 4096 bytes) is
            // over; `dst[at..at+n]` is the caller's destination, lent for
            // the call; a bounce buffer and the caller's memory never
            // overlap.
            unsafe {
                if stream {
                    crate::copy::copy_streaming(p, dst.add(at), n)
                } else {
                    crate::copy::copy_bytes(p, dst.add(at), n)
                }
            }
            at += n;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slow_offsets_are_1_to_63_bytes_after_the_source() {
        let page = 0x7f00_0000_0000u64;
        for (dst, remote, want) in [
            (page + 16, page, true),
            (page + 8, page, true),
            (page + 63, page, true),
            (page + 1, page, true),
            (page, page, false),
            (page + 64, page, false),
            (page + 4080, page, false),
            (page + 16, page + 16, false),
            (page + 4096 + 16, page + 8192, true),
            (page + 16, page + 4096 - 8, true),
            (page + 16, page + 4096 - 100, false),
            (page + 4, page + 4090, true),
        ] {
            assert_eq!(
                aliased(dst as *mut u8, remote),
                want,
                "{dst:#x} {remote:#x}"
            );
        }
    }

    /// The placement keeps both copies away from the slow offsets, for
    /// every source offset and every slow destination offset.
    #[test]
    fn placement_keeps_both_copies_fast() {
        let buffer = 0x7f00_0001_0000u64;
        for src in 0..4096u64 {
            let data = buffer + place(src) as u64;
            assert!(place(src) < 4096);
            assert!(!aliased(data as *mut u8, src), "read at {src}");
            for skew in 1..64u64 {
                let dst = src + skew;
                let out = (dst.wrapping_sub(data)) & 4095;
                assert!(!(1..64).contains(&out), "copy out at {src} skew {skew}");
            }
        }
    }
}
