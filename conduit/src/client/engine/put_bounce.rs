//! Puts through the put bounce buffers (`GASNET_OFI_BBUF_*`): the source
//! copied into registered buffers, one write per buffer, so the caller's
//! buffer is free when the call returns (`rma::put_path`).

use super::rma::InFlight;
use super::{Core, Local, Progress};
use crate::client::error::Error;
use crate::sync::{Lock, Mode};
use crate::transport::{Region, Transport};
use ::rma::ops::{Implicit, OpId};
use ::rma::plan::Remote;

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Copy `src` into `n` bounce buffers and write each; `None` when the
    /// buffers are gone (another thread took them) or too large for one
    /// transfer: the caller takes the blocking path.
    pub(super) fn put_bounce(
        &self,
        set: usize,
        rank: usize,
        offset: usize,
        src: &[u8],
        implicit: Implicit,
        n: usize,
    ) -> Result<Option<OpId>, Error> {
        let Some(b) = &self.bounce else {
            return Ok(None);
        };
        let size = b.pool.buffer_size();
        if size > self.max_rma {
            return Ok(None);
        }
        let remote = self.remote(set, rank, offset, src.len())?;
        let Some(bufs) = b.pool.take(n) else {
            return Ok(None);
        };
        let desc = Some(b.regions[set.min(b.regions.len() - 1)].desc());
        let op = {
            let mut ops = self.sets[set].ops.lock();
            let op = ops.start(n as u32, implicit);
            for &i in &bufs {
                ops.attach_bbuf(op, i);
            }
            op
        };
        let mut g = InFlight::new(self, set, op, n as u32);
        for (k, &i) in bufs.iter().enumerate() {
            let at = k * size;
            let len = (src.len() - at).min(size);
            let Some(p) = b.mem.range(b.pool.offset(i), size) else {
                return Err(Error::Bbuf(bbuf::BbufError::NotInUse { index: i }));
            };
            // SAFETY: bounce buffer `i` lies in the mapping (checked) and is
            // this operation's alone until the operation's last completion
            // gives it back; `src[at..at+len]` is the caller's slice.
            unsafe { crate::copy::copy_bytes(src.as_ptr().add(at), p, len) };
            let r = Remote {
                addr: remote.addr + at as u64,
                key: remote.key,
            };
            self.post_chunk(
                set,
                rank,
                Local::Write(p),
                len,
                r,
                desc,
                op,
                false,
                Progress::Full,
            )?;
            g.posted();
        }
        Ok(Some(g.disarm()))
    }
}
