//! Completion queues.

use super::domain::Domain;
use super::error::{check, OfiError};
use ofi_sys as sys;
use std::ptr;
use std::sync::Arc;

pub(crate) struct CqInner {
    pub(crate) raw: *mut sys::fid_cq,
    /// FI_CQ_FORMAT_TAGGED (else FI_CQ_FORMAT_DATA): which entry type a
    /// read may write.
    pub(crate) tagged: bool,
    _domain: Domain,
}

// SAFETY: the handle may move between threads; reads are `unsafe fn`s whose
// contract requires the domain's threading level to be respected.
unsafe impl Send for CqInner {}
// SAFETY: as above.
unsafe impl Sync for CqInner {}

impl Drop for CqInner {
    fn drop(&mut self) {
        // SAFETY: raw is an open CQ; endpoints bound to it hold an Arc of
        // this value, so they are closed already.
        let rc = unsafe { sys::fi_close(&mut (*self.raw).fid) };
        if rc != 0 {
            tracing::warn!("{}", OfiError::new("fi_close(cq)", rc as i64));
        }
    }
}

/// A completion queue in `FI_CQ_FORMAT_DATA` with no wait object (polled).
#[derive(Clone)]
pub struct CompletionQueue {
    pub(crate) inner: Arc<CqInner>,
}

impl std::fmt::Debug for CompletionQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompletionQueue")
    }
}

/// One completion (`struct fi_cq_data_entry`).
#[repr(transparent)]
#[derive(Clone, Copy, Default)]
pub struct CqEntry(pub sys::fi_cq_data_entry);

impl std::fmt::Debug for CqEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CqEntry")
            .field("context", &self.0.op_context)
            .field("flags", &format_args!("{:#x}", self.0.flags))
            .field("len", &self.0.len)
            .field("data", &self.0.data)
            .finish()
    }
}

impl CqEntry {
    /// The context pointer given when the operation was posted.
    #[inline]
    pub fn context(&self) -> *mut libc::c_void {
        self.0.op_context
    }
    /// Completion flags (FI_RECV, FI_MULTI_RECV, FI_REMOTE_CQ_DATA, ...).
    #[inline]
    pub fn flags(&self) -> u64 {
        self.0.flags
    }
    /// Bytes received (receives) or transferred.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.len
    }
    /// True when `len()` is zero.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }
    /// Start of the received data (for multi-recv: inside the posted buffer).
    #[inline]
    pub fn buf(&self) -> *mut libc::c_void {
        self.0.buf
    }
    /// Remote CQ data, valid when FI_REMOTE_CQ_DATA is set in flags.
    #[inline]
    pub fn data(&self) -> u64 {
        self.0.data
    }
}

/// An error completion (`struct fi_cq_err_entry`).
#[derive(Debug, Clone)]
pub struct CqErrEntry {
    /// The failed operation's context.
    pub context: *mut libc::c_void,
    /// Its flags.
    pub flags: u64,
    /// The libfabric error number (positive FI_E*).
    pub err: i32,
    /// Provider-specific error number.
    pub prov_errno: i32,
    /// Where the provider placed the received bytes (a receive into a
    /// multi-receive buffer), if it says; else null.
    pub buf: *mut libc::c_void,
    /// Bytes transferred (a truncated receive: what was placed).
    pub len: usize,
    /// Bytes that did not fit (FI_ETRUNC).
    pub olen: usize,
    /// The message's tag (tagged receives).
    pub tag: u64,
    /// Remote CQ data (when FI_REMOTE_CQ_DATA is in `flags`).
    pub data: u64,
    /// `fi_cq_strerror` text.
    pub text: String,
}

/// What one `read` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CqRead {
    /// This many entries were written to the front of the buffer.
    Entries(usize),
    /// Nothing to report (-FI_EAGAIN).
    Empty,
    /// An error completion is waiting; fetch it with `read_error`.
    Error,
}

impl CompletionQueue {
    /// Open a CQ of `size` entries (0 = provider default).
    pub fn open(domain: &Domain, size: usize) -> Result<CompletionQueue, OfiError> {
        Self::open_format(domain, size, false)
    }

    /// Open a CQ in FI_CQ_FORMAT_TAGGED (`tagged`) or FI_CQ_FORMAT_DATA.
    pub(super) fn open_format(
        domain: &Domain,
        size: usize,
        tagged: bool,
    ) -> Result<CompletionQueue, OfiError> {
        let mut attr = sys::fi_cq_attr {
            size,
            format: if tagged {
                sys::fi_cq_format_FI_CQ_FORMAT_TAGGED
            } else {
                sys::fi_cq_format_FI_CQ_FORMAT_DATA
            },
            wait_obj: sys::fi_wait_obj_FI_WAIT_NONE,
            ..Default::default()
        };
        let mut raw: *mut sys::fid_cq = ptr::null_mut();
        // SAFETY: domain is open; attr is a valid attribute struct.
        let rc = unsafe { sys::fi_cq_open(domain.inner.raw, &mut attr, &mut raw, ptr::null_mut()) };
        check("fi_cq_open", rc as i64)?;
        Ok(CompletionQueue {
            inner: Arc::new(CqInner {
                raw,
                tagged,
                _domain: domain.clone(),
            }),
        })
    }

    /// Read up to `buf.len()` completions.
    ///
    /// # Safety
    /// No other thread may call into this CQ's domain concurrently unless the
    /// domain was opened with FI_THREAD_SAFE.
    #[inline]
    pub unsafe fn read(&self, buf: &mut [CqEntry]) -> Result<CqRead, OfiError> {
        // SAFETY: MaybeUninit<CqEntry> has CqEntry's layout, and read_uninit
        // only writes whole entries into the slice; threading per the caller.
        unsafe {
            self.read_uninit(std::slice::from_raw_parts_mut(
                buf.as_mut_ptr().cast::<std::mem::MaybeUninit<CqEntry>>(),
                buf.len(),
            ))
        }
    }

    /// Read up to `buf.len()` completions into uninitialised storage (no
    /// zeroing on the hot path). On `Entries(n)` the first `n` elements are
    /// initialised; use [`CompletionQueue::entries`] to view them.
    ///
    /// # Safety
    /// Same threading contract as [`CompletionQueue::read`].
    #[inline]
    pub unsafe fn read_uninit(
        &self,
        buf: &mut [std::mem::MaybeUninit<CqEntry>],
    ) -> Result<CqRead, OfiError> {
        if self.inner.tagged {
            return Err(OfiError::new("fi_cq_read", -(sys::FI_EINVAL as i64)));
        }
        // SAFETY: buf is valid for writes of buf.len() entries of this
        // queue's format (FI_CQ_FORMAT_DATA, checked above); the provider
        // initialises the ones it reports; threading per the caller.
        let rc = unsafe { sys::fi_cq_read(self.inner.raw, buf.as_mut_ptr().cast(), buf.len()) };
        if rc > 0 {
            Ok(CqRead::Entries(rc as usize))
        } else if rc == -(sys::FI_EAGAIN as isize) {
            Ok(CqRead::Empty)
        } else if rc == -(sys::FI_EAVAIL as isize) {
            Ok(CqRead::Error)
        } else {
            check("fi_cq_read", rc as i64).map(|_| CqRead::Empty)
        }
    }

    /// The first `n` entries of a buffer filled by
    /// [`CompletionQueue::read_uninit`].
    ///
    /// # Safety
    /// `n` must be the count that `read_uninit` returned for `buf`.
    #[inline]
    pub unsafe fn entries(buf: &[std::mem::MaybeUninit<CqEntry>], n: usize) -> &[CqEntry] {
        // SAFETY: the provider initialised the first n entries (caller's
        // contract); MaybeUninit<T> has T's layout.
        unsafe { std::slice::from_raw_parts(buf.as_ptr().cast(), n) }
    }

    /// Fetch the pending error completion.
    ///
    /// # Safety
    /// Same threading contract as [`CompletionQueue::read`].
    pub unsafe fn read_error(&self) -> Result<Option<CqErrEntry>, OfiError> {
        let mut e = sys::fi_cq_err_entry::default();
        // SAFETY: e is a zeroed err entry (err_data_size 0: the provider
        // keeps its own err_data); threading per the caller.
        let rc = unsafe { sys::fi_cq_readerr(self.inner.raw, &mut e, 0) };
        if rc == -(sys::FI_EAGAIN as isize) {
            return Ok(None);
        }
        check("fi_cq_readerr", rc as i64)?;
        // SAFETY: fi_cq_strerror returns a NUL-terminated string owned by
        // the provider (or writes into the NULL/0 buffer nothing).
        let text = unsafe {
            let p =
                sys::fi_cq_strerror(self.inner.raw, e.prov_errno, e.err_data, ptr::null_mut(), 0);
            if p.is_null() {
                super::strerror(e.err as i64)
            } else {
                std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        Ok(Some(CqErrEntry {
            context: e.op_context,
            flags: e.flags,
            // libfabric defines err as a positive FI_E* number; shm in
            // 1.17 stores it negated (-FI_ETRUNC): one sign for callers.
            err: e.err.abs(),
            prov_errno: e.prov_errno,
            buf: e.buf,
            len: e.len,
            olen: e.olen,
            tag: e.tag,
            data: e.data,
            text,
        }))
    }
}
