//! Memory regions that own what they register.
//!
//! As in rust-ibverbs' `MemoryRegion<O>`, a [`MemoryRegion`] owns (or holds
//! an `Arc` of) the memory it registers, so the registration is always closed
//! before that memory can be freed: `Drop` closes the region first and only
//! then drops the owner. An endpoint-bound region (FI_MR_ENDPOINT) also
//! holds its endpoint, so it closes before the endpoint does.

use super::domain::Domain;
use super::ep::Endpoint;
use super::error::{check, OfiError};
use crate::mem::Mapping;
use ofi_sys as sys;
use std::ptr;
use std::sync::Arc;

/// Memory a region may own.
///
/// # Safety
/// `as_ptr()..as_ptr()+len()` must be valid, writable memory that stays at
/// that address, mapped, for as long as the value lives (moving the value
/// must not move the memory).
pub unsafe trait RegisteredMemory: Send + Sync {
    /// First byte.
    fn as_ptr(&self) -> *mut u8;
    /// Bytes.
    fn len(&self) -> usize;
    /// True for zero bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

// SAFETY: a Mapping's pages stay mapped at one address until it is dropped,
// and an Arc keeps it alive.
unsafe impl RegisteredMemory for Arc<Mapping> {
    fn as_ptr(&self) -> *mut u8 {
        Mapping::as_ptr(self)
    }
    fn len(&self) -> usize {
        Mapping::len(self)
    }
}

/// A registered memory region owning `O`.
pub struct MemoryRegion<O: RegisteredMemory> {
    raw: *mut sys::fid_mr,
    _ep: Option<Endpoint>,
    _domain: Domain,
    // Dropped after `raw` is closed (Drop::drop runs before fields drop).
    owner: O,
}

// SAFETY: the handle may move between threads; its key and descriptor are
// plain values, and `O` is Send + Sync.
unsafe impl<O: RegisteredMemory> Send for MemoryRegion<O> {}
// SAFETY: shared access only reads the key, the descriptor and the owner.
unsafe impl<O: RegisteredMemory> Sync for MemoryRegion<O> {}

impl<O: RegisteredMemory> std::fmt::Debug for MemoryRegion<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryRegion")
            .field("addr", &self.owner.as_ptr())
            .field("len", &self.owner.len())
            .field("key", &self.key())
            .finish()
    }
}

impl<O: RegisteredMemory> Drop for MemoryRegion<O> {
    fn drop(&mut self) {
        // SAFETY: raw is an open MR, closed once here; the memory it covers
        // (`owner`) and the endpoint it is bound to are fields dropped after
        // this.
        let rc = unsafe { sys::fi_close(&mut (*self.raw).fid) };
        if rc != 0 {
            tracing::warn!("{}", OfiError::new("fi_close(mr)", rc as i64));
        }
    }
}

impl<O: RegisteredMemory> MemoryRegion<O> {
    /// Register `owner`'s memory with `access` (FI_REMOTE_READ |
    /// FI_REMOTE_WRITE | ...) and `requested_key` (ignored by providers with
    /// FI_MR_PROV_KEY). On FI_MR_ENDPOINT providers pass the endpoint to
    /// bind to in `bind`.
    pub fn register(
        domain: &Domain,
        owner: O,
        access: u64,
        requested_key: u64,
        bind: Option<&Endpoint>,
    ) -> Result<MemoryRegion<O>, OfiError> {
        let mut raw: *mut sys::fid_mr = ptr::null_mut();
        // SAFETY: domain is open; the memory is valid and stays put while
        // `owner` lives (RegisteredMemory's contract), and the region keeps
        // `owner` until after it is closed.
        let rc = unsafe {
            sys::fi_mr_reg(
                domain.inner.raw,
                owner.as_ptr().cast(),
                owner.len(),
                access,
                0,
                requested_key,
                0,
                &mut raw,
                ptr::null_mut(),
            )
        };
        check("fi_mr_reg", rc as i64)?;
        let mut mr = MemoryRegion {
            raw,
            _ep: None,
            _domain: domain.clone(),
            owner,
        };
        if let Some(ep) = bind {
            // SAFETY: both are open objects of one domain.
            let rc = unsafe { sys::fi_mr_bind(mr.raw, &mut (*ep.inner.raw).fid, 0) };
            check("fi_mr_bind", rc as i64)?;
            mr._ep = Some(ep.clone());
            // SAFETY: raw is open and bound.
            let rc = unsafe { sys::fi_mr_enable(mr.raw) };
            check("fi_mr_enable", rc as i64)?;
        }
        Ok(mr)
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

    /// The memory.
    pub fn owner(&self) -> &O {
        &self.owner
    }
}
