//! Data-transfer calls on an enabled [`Endpoint`]: sends, receives, RMA
//! writes and reads, cancel. Each is an `unsafe fn`: libfabric keeps the
//! buffers and contexts until a completion is reported, and the domain's
//! threading level must be respected.

use super::ep::Endpoint;
use super::error::{check, OfiError};
use super::FiAddr;
use ofi_sys as sys;
use std::ptr;

impl Endpoint {
    /// `fi_inject`: send `buf` to `dest`; the data is copied before return
    /// and no completion is generated.
    ///
    /// # Safety
    /// The domain's threading level must be respected (no concurrent calls
    /// under FI_THREAD_DOMAIN).
    #[inline]
    pub unsafe fn inject(&self, buf: &[u8], dest: FiAddr) -> Result<(), OfiError> {
        // SAFETY: buf is valid for its length during the call.
        let rc = unsafe { sys::fi_inject(self.inner.raw, buf.as_ptr().cast(), buf.len(), dest) };
        check("fi_inject", rc as i64).map(|_| ())
    }

    /// `fi_injectdata`: like `inject`, with remote CQ data.
    ///
    /// # Safety
    /// As for [`Endpoint::inject`].
    #[inline]
    pub unsafe fn inject_data(&self, buf: &[u8], data: u64, dest: FiAddr) -> Result<(), OfiError> {
        // SAFETY: buf is valid for its length during the call.
        let rc = unsafe {
            sys::fi_injectdata(self.inner.raw, buf.as_ptr().cast(), buf.len(), data, dest)
        };
        check("fi_injectdata", rc as i64).map(|_| ())
    }

    /// `fi_send`.
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and unmodified, and `context` must stay
    /// valid, until the send's completion is read from the TX CQ. Threading
    /// as for [`Endpoint::inject`].
    #[inline]
    pub unsafe fn send(
        &self,
        buf: *const u8,
        len: usize,
        dest: FiAddr,
        context: *mut libc::c_void,
    ) -> Result<(), OfiError> {
        // SAFETY: per the caller's contract.
        let rc = unsafe {
            sys::fi_send(
                self.inner.raw,
                buf.cast(),
                len,
                ptr::null_mut(),
                dest,
                context,
            )
        };
        check("fi_send", rc as i64).map(|_| ())
    }

    /// `fi_senddata`: `fi_send` with remote CQ data.
    ///
    /// # Safety
    /// As for [`Endpoint::send`].
    #[inline]
    pub unsafe fn send_data(
        &self,
        buf: *const u8,
        len: usize,
        data: u64,
        dest: FiAddr,
        context: *mut libc::c_void,
    ) -> Result<(), OfiError> {
        // SAFETY: per the caller's contract.
        let rc = unsafe {
            sys::fi_senddata(
                self.inner.raw,
                buf.cast(),
                len,
                ptr::null_mut(),
                data,
                dest,
                context,
            )
        };
        check("fi_senddata", rc as i64).map(|_| ())
    }

    /// `fi_recvmsg` of one buffer from any source, with `flags` (e.g.
    /// FI_MULTI_RECV).
    ///
    /// # Safety
    /// `buf..buf+len` and `context` must stay valid until the buffer is
    /// released (its last completion, or FI_MULTI_RECV for multi-recv), and
    /// nothing else may touch the buffer meanwhile. Threading as for
    /// [`Endpoint::inject`].
    #[inline]
    pub unsafe fn recv_msg(
        &self,
        buf: *mut u8,
        len: usize,
        context: *mut libc::c_void,
        flags: u64,
    ) -> Result<(), OfiError> {
        let iov = libc::iovec {
            iov_base: buf.cast(),
            iov_len: len,
        };
        let msg = sys::fi_msg {
            msg_iov: (&iov as *const libc::iovec).cast(),
            desc: ptr::null_mut(),
            iov_count: 1,
            addr: ofi_sys::FI_ADDR_UNSPEC_VALUE,
            context,
            data: 0,
        };
        // SAFETY: msg and iov are valid for the call (libfabric copies the
        // descriptors); buffer lifetime per the caller.
        let rc = unsafe { sys::fi_recvmsg(self.inner.raw, &msg, flags) };
        check("fi_recvmsg", rc as i64).map(|_| ())
    }

    /// `fi_write`: RMA write of `len` bytes at `buf` to `remote_addr` under
    /// `key` at `dest`.
    ///
    /// # Safety
    /// The source and `context` must stay valid until completion; the remote
    /// range must be registered at the target. Threading as for
    /// [`Endpoint::inject`].
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn write(
        &self,
        buf: *const u8,
        len: usize,
        desc: *mut libc::c_void,
        dest: FiAddr,
        remote_addr: u64,
        key: u64,
        context: *mut libc::c_void,
    ) -> Result<(), OfiError> {
        // SAFETY: per the caller's contract.
        let rc = unsafe {
            sys::fi_write(
                self.inner.raw,
                buf.cast(),
                len,
                desc,
                dest,
                remote_addr,
                key,
                context,
            )
        };
        check("fi_write", rc as i64).map(|_| ())
    }

    /// `fi_writemsg` of one contiguous range with `flags` (FI_INJECT,
    /// FI_DELIVERY_COMPLETE, FI_REMOTE_CQ_DATA, FI_COMPLETION, ...) and the
    /// source's descriptor `desc` (NULL when it is not in a registered
    /// region).
    ///
    /// # Safety
    /// As for [`Endpoint::write`]; with FI_INJECT the source may be reused at
    /// return.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn write_msg(
        &self,
        buf: *const u8,
        len: usize,
        desc: *mut libc::c_void,
        dest: FiAddr,
        remote_addr: u64,
        key: u64,
        context: *mut libc::c_void,
        data: u64,
        flags: u64,
    ) -> Result<(), OfiError> {
        let one = OneRma {
            buf: buf.cast_mut(),
            len,
            desc,
            peer: dest,
            remote_addr,
            key,
            context,
            data,
        };
        // SAFETY: the message's pointers are valid for the call; buffers
        // per the caller.
        let rc = one.with_msg(|msg| unsafe { sys::fi_writemsg(self.inner.raw, msg, flags) });
        check("fi_writemsg", rc as i64).map(|_| ())
    }

    /// `fi_readmsg`: RMA read of `len` bytes from `remote_addr` into `buf`
    /// with `flags` (which replace the endpoint's default operation flags).
    ///
    /// # Safety
    /// `buf` must stay valid and untouched, and `context` valid, until
    /// completion. Threading as for [`Endpoint::inject`].
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn read_msg(
        &self,
        buf: *mut u8,
        len: usize,
        desc: *mut libc::c_void,
        src: FiAddr,
        remote_addr: u64,
        key: u64,
        context: *mut libc::c_void,
        flags: u64,
    ) -> Result<(), OfiError> {
        let one = OneRma {
            buf,
            len,
            desc,
            peer: src,
            remote_addr,
            key,
            context,
            data: 0,
        };
        // SAFETY: the message's pointers are valid for the call; the
        // buffer per the caller.
        let rc = one.with_msg(|msg| unsafe { sys::fi_readmsg(self.inner.raw, msg, flags) });
        check("fi_readmsg", rc as i64).map(|_| ())
    }

    /// `fi_cancel` of the operation posted with `context`.
    ///
    /// # Safety
    /// Threading as for [`Endpoint::inject`].
    pub unsafe fn cancel(&self, context: *mut libc::c_void) -> Result<(), OfiError> {
        // SAFETY: per the caller's contract.
        let rc = unsafe { sys::fi_cancel(&mut (*self.inner.raw).fid, context) };
        check("fi_cancel", rc as i64).map(|_| ())
    }
}

/// One local and one remote range of an RMA call.
struct OneRma {
    buf: *mut u8,
    len: usize,
    desc: *mut libc::c_void,
    peer: FiAddr,
    remote_addr: u64,
    key: u64,
    context: *mut libc::c_void,
    data: u64,
}

impl OneRma {
    /// Run `call` with the `fi_msg_rma` describing these ranges (its
    /// pointers are valid during the call only).
    fn with_msg(self, call: impl FnOnce(&sys::fi_msg_rma) -> isize) -> isize {
        let iov = libc::iovec {
            iov_base: self.buf.cast(),
            iov_len: self.len,
        };
        let rma = sys::fi_rma_iov {
            addr: self.remote_addr,
            len: self.len,
            key: self.key,
        };
        let mut desc = self.desc;
        let msg = sys::fi_msg_rma {
            msg_iov: (&iov as *const libc::iovec).cast(),
            desc: &mut desc,
            iov_count: 1,
            addr: self.peer,
            rma_iov: &rma,
            rma_iov_count: 1,
            context: self.context,
            data: self.data,
        };
        call(&msg)
    }
}
