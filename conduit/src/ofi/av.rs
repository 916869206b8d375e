//! Address vectors.

use super::domain::Domain;
use super::error::{check, OfiError};
use super::info::AvType;
use super::FiAddr;
use ofi_sys as sys;
use std::ptr;
use std::sync::Arc;

pub(crate) struct AvInner {
    pub(crate) raw: *mut sys::fid_av,
    _domain: Domain,
}

// SAFETY: the handle may move between threads; inserts happen during
// single-threaded set-up.
unsafe impl Send for AvInner {}
// SAFETY: as above.
unsafe impl Sync for AvInner {}

impl Drop for AvInner {
    fn drop(&mut self) {
        // SAFETY: raw is an open AV; bound endpoints hold an Arc of it.
        let rc = unsafe { sys::fi_close(&mut (*self.raw).fid) };
        if rc != 0 {
            tracing::warn!("{}", OfiError::new("fi_close(av)", rc as i64));
        }
    }
}

/// An address vector.
#[derive(Clone)]
pub struct AddressVector {
    pub(crate) inner: Arc<AvInner>,
    av_type: AvType,
}

impl std::fmt::Debug for AddressVector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddressVector")
            .field("type", &self.av_type)
            .finish()
    }
}

impl AddressVector {
    /// Open an AV of `av_type` sized for `count` peers.
    pub fn open(domain: &Domain, av_type: AvType, count: usize) -> Result<Self, OfiError> {
        Self::open_attr(domain, av_type, count, 0)
    }

    pub(super) fn open_attr(
        domain: &Domain,
        av_type: AvType,
        count: usize,
        rx_ctx_bits: i32,
    ) -> Result<Self, OfiError> {
        let mut attr = sys::fi_av_attr {
            type_: av_type.raw(),
            count,
            rx_ctx_bits,
            ..Default::default()
        };
        let mut raw: *mut sys::fid_av = ptr::null_mut();
        // SAFETY: domain is open; attr is valid.
        let rc = unsafe { sys::fi_av_open(domain.inner.raw, &mut attr, &mut raw, ptr::null_mut()) };
        check("fi_av_open", rc as i64)?;
        Ok(AddressVector {
            inner: Arc::new(AvInner {
                raw,
                _domain: domain.clone(),
            }),
            av_type,
        })
    }

    /// The type requested at open.
    pub fn av_type(&self) -> AvType {
        self.av_type
    }

    /// Insert endpoint names (as returned by `Endpoint::name`), one at a time
    /// with FI_MORE on all but the last. Returns their `fi_addr_t`s in order.
    pub fn insert(&self, names: &[&[u8]]) -> Result<Vec<FiAddr>, OfiError> {
        let mut out = vec![0 as FiAddr; names.len()];
        for (i, name) in names.iter().enumerate() {
            let flags = if i + 1 < names.len() {
                sys::FI_MORE as u64
            } else {
                0
            };
            // SAFETY: name points to a full endpoint address; out[i] receives
            // one fi_addr_t.
            let rc = unsafe {
                sys::fi_av_insert(
                    self.inner.raw,
                    name.as_ptr().cast(),
                    1,
                    &mut out[i],
                    flags,
                    ptr::null_mut(),
                )
            };
            check("fi_av_insert", rc as i64)?;
            if rc != 1 {
                return Err(OfiError {
                    call: "fi_av_insert",
                    code: rc as i64,
                    text: format!("inserted {rc} of 1 addresses"),
                });
            }
        }
        Ok(out)
    }
}
