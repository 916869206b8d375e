//! RMA with several iovs in one call (`fi_writemsg` / `fi_readmsg` with
//! up to the provider's `iov_limit` / `rma_iov_limit` entries), for VIS.

use super::ep::Endpoint;
use super::error::{check, OfiError};
use super::FiAddr;
use ofi_sys as sys;
use std::ptr;

/// Local and remote iovs of one transfer: the caller keeps this alive and
/// in place until the transfer's completion (a provider may keep pointers
/// into it).
#[derive(Debug, Default)]
pub struct RmaVec {
    iov: Vec<libc::iovec>,
    rma: Vec<sys::fi_rma_iov>,
    desc: Vec<*mut libc::c_void>,
    /// Remote CQ data (sent when the flags carry FI_REMOTE_CQ_DATA).
    data: u64,
}

// SAFETY: the pointers are addresses the provider is given; the value is
// only read by the thread that posts it.
unsafe impl Send for RmaVec {}

impl RmaVec {
    /// An empty list.
    pub fn new() -> RmaVec {
        RmaVec::default()
    }

    /// The pieces: local address, length, remote address and key (for a
    /// transport that moves them itself, the simulator).
    pub fn pieces(&self) -> Vec<(usize, usize, u64, u64)> {
        self.iov
            .iter()
            .zip(&self.rma)
            .map(|(l, r)| (l.iov_base as usize, l.iov_len, r.addr, r.key))
            .collect()
    }

    /// Add a piece: `len` bytes at local `buf`, remote `addr` with `key`.
    pub fn push(&mut self, buf: *mut u8, len: usize, addr: u64, key: u64) {
        self.iov.push(libc::iovec {
            iov_base: buf.cast(),
            iov_len: len,
        });
        self.rma.push(sys::fi_rma_iov { addr, len, key });
        self.desc.push(ptr::null_mut());
    }

    /// Set the remote CQ data a write carries (with FI_REMOTE_CQ_DATA).
    pub fn set_data(&mut self, data: u64) {
        self.data = data;
    }

    /// Pieces.
    pub fn len(&self) -> usize {
        self.iov.len()
    }

    /// Whether it has no pieces.
    pub fn is_empty(&self) -> bool {
        self.iov.is_empty()
    }
}

impl Endpoint {
    /// `fi_writemsg` (`write`) or `fi_readmsg` of every piece of `v` to or
    /// from `peer`, with `flags`.
    ///
    /// # Safety
    /// The local buffers and `v` itself must stay valid and in place (a
    /// read's buffers unaliased) until the completion carrying `context` is
    /// read; the remote ranges must be inside the peer's registered
    /// region; threading as for [`Endpoint::inject`].
    pub unsafe fn rma_vec(
        &self,
        write: bool,
        v: &mut RmaVec,
        peer: FiAddr,
        context: *mut libc::c_void,
        flags: u64,
    ) -> Result<(), OfiError> {
        let msg = sys::fi_msg_rma {
            msg_iov: v.iov.as_ptr().cast(),
            desc: v.desc.as_mut_ptr(),
            iov_count: v.iov.len(),
            addr: peer,
            rma_iov: v.rma.as_ptr(),
            rma_iov_count: v.rma.len(),
            context,
            data: v.data,
        };
        // SAFETY: `msg` points into `v`, which the caller keeps in place;
        // the buffers per the caller's contract.
        let (name, rc) = unsafe {
            if write {
                ("fi_writemsg", sys::fi_writemsg(self.inner.raw, &msg, flags))
            } else {
                ("fi_readmsg", sys::fi_readmsg(self.inner.raw, &msg, flags))
            }
        };
        check(name, rc as i64).map(|_| ())
    }
}
