//! Memory regions.

use super::domain::Domain;
use super::ep::Endpoint;
use super::error::{check, OfiError};
use ofi_sys as sys;
use std::ptr;

/// A registered memory region. When bound to an endpoint (FI_MR_ENDPOINT) it
/// holds that endpoint, so the MR is always closed before the endpoint.
pub struct MemoryRegion {
    raw: *mut sys::fid_mr,
    addr: *const u8,
    len: usize,
    _ep: Option<Endpoint>,
    _domain: Domain,
}

// SAFETY: the handle may move between threads; its key and descriptor are
// plain values.
unsafe impl Send for MemoryRegion {}
// SAFETY: shared access only reads key/desc.
unsafe impl Sync for MemoryRegion {}

impl std::fmt::Debug for MemoryRegion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryRegion")
            .field("addr", &self.addr)
            .field("len", &self.len)
            .field("key", &self.key())
            .finish()
    }
}

impl Drop for MemoryRegion {
    fn drop(&mut self) {
        // SAFETY: raw is an open MR, closed once; the endpoint it is bound to
        // is a field dropped after this.
        let rc = unsafe { sys::fi_close(&mut (*self.raw).fid) };
        if rc != 0 {
            tracing::warn!("{}", OfiError::new("fi_close(mr)", rc as i64));
        }
    }
}

impl MemoryRegion {
    /// Register `len` bytes at `addr` with `access` (FI_REMOTE_READ |
    /// FI_REMOTE_WRITE | ...) and `requested_key` (ignored by providers with
    /// FI_MR_PROV_KEY).
    ///
    /// # Safety
    /// The memory must stay allocated (and mapped) until this MR is dropped.
    pub unsafe fn register(
        domain: &Domain,
        addr: *const u8,
        len: usize,
        access: u64,
        requested_key: u64,
    ) -> Result<MemoryRegion, OfiError> {
        let mut raw: *mut sys::fid_mr = ptr::null_mut();
        // SAFETY: domain is open; memory validity per the caller.
        let rc = unsafe {
            sys::fi_mr_reg(
                domain.inner.raw,
                addr.cast(),
                len,
                access,
                0,
                requested_key,
                0,
                &mut raw,
                ptr::null_mut(),
            )
        };
        check("fi_mr_reg", rc as i64)?;
        Ok(MemoryRegion {
            raw,
            addr,
            len,
            _ep: None,
            _domain: domain.clone(),
        })
    }

    /// Bind to `ep` and enable (what FI_MR_ENDPOINT providers require).
    pub fn bind_and_enable(&mut self, ep: &Endpoint) -> Result<(), OfiError> {
        // SAFETY: both are open objects of one domain.
        let rc = unsafe { sys::fi_mr_bind(self.raw, &mut (*ep.inner.raw).fid, 0) };
        check("fi_mr_bind", rc as i64)?;
        self._ep = Some(ep.clone());
        // SAFETY: raw is open and bound.
        let rc = unsafe { sys::fi_mr_enable(self.raw) };
        check("fi_mr_enable", rc as i64)?;
        Ok(())
    }

    /// The remote key peers use to access this region.
    pub fn key(&self) -> u64 {
        // SAFETY: raw is an open MR.
        unsafe { sys::fi_mr_key(self.raw) }
    }

    /// The local descriptor (for providers that want one).
    pub fn desc(&self) -> *mut libc::c_void {
        // SAFETY: raw is an open MR.
        unsafe { sys::fi_mr_desc(self.raw) }
    }

    /// Start address registered.
    pub fn addr(&self) -> *const u8 {
        self.addr
    }

    /// Length registered.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for a zero-length registration.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
