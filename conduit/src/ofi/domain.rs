//! Fabric and domain.

use super::error::{check, OfiError};
use super::info::{InfoEntry, InfoList};
use ofi_sys as sys;
use std::ptr;
use std::sync::Arc;

struct FabricInner {
    raw: *mut sys::fid_fabric,
}

// SAFETY: a fabric handle is not tied to the thread that opened it; closing
// happens once, from Drop.
unsafe impl Send for FabricInner {}
// SAFETY: the wrapper exposes no mutating call on a shared fabric.
unsafe impl Sync for FabricInner {}

impl Drop for FabricInner {
    fn drop(&mut self) {
        // SAFETY: raw is an open fabric; every child (domain) holds an Arc of
        // this value, so none is left open when it is closed.
        let rc = unsafe { sys::fi_close(&mut (*self.raw).fid) };
        if rc != 0 {
            tracing::warn!("{}", OfiError::new("fi_close(fabric)", rc as i64));
        }
    }
}

/// An open fabric (`fi_fabric`). Cloning shares the handle.
#[derive(Clone)]
pub struct Fabric {
    inner: Arc<FabricInner>,
}

impl std::fmt::Debug for Fabric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Fabric")
    }
}

impl Fabric {
    /// Open the fabric described by `entry`.
    pub fn open(entry: &InfoEntry<'_>) -> Result<Fabric, OfiError> {
        let mut raw: *mut sys::fid_fabric = ptr::null_mut();
        // SAFETY: entry.raw is a valid fi_info whose fabric_attr is set;
        // raw receives the new handle.
        let rc = unsafe { sys::fi_fabric((*entry.raw).fabric_attr, &mut raw, ptr::null_mut()) };
        check("fi_fabric", rc as i64)?;
        Ok(Fabric {
            inner: Arc::new(FabricInner { raw }),
        })
    }
}

pub(crate) struct DomainInner {
    pub(crate) raw: *mut sys::fid_domain,
    /// The entry the domain was opened from (endpoints are opened from it).
    pub(crate) info: InfoList,
    _fabric: Fabric,
}

// SAFETY: see FabricInner; calls that need serialization are `unsafe fn`s
// whose contracts say so.
unsafe impl Send for DomainInner {}
// SAFETY: as above.
unsafe impl Sync for DomainInner {}

impl Drop for DomainInner {
    fn drop(&mut self) {
        // SAFETY: raw is an open domain; endpoints, CQs, AVs and MRs hold an
        // Arc of it, so all are closed before this runs.
        let rc = unsafe { sys::fi_close(&mut (*self.raw).fid) };
        if rc != 0 {
            tracing::warn!("{}", OfiError::new("fi_close(domain)", rc as i64));
        }
    }
}

/// An open access domain (`fi_domain`). Cloning shares the handle.
#[derive(Clone)]
pub struct Domain {
    pub(crate) inner: Arc<DomainInner>,
}

impl std::fmt::Debug for Domain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Domain")
            .field("info", &self.info())
            .finish()
    }
}

impl Domain {
    /// Open the domain described by `entry` on `fabric`.
    pub fn open(fabric: &Fabric, entry: &InfoEntry<'_>) -> Result<Domain, OfiError> {
        let info = InfoList::dup(entry);
        let mut raw: *mut sys::fid_domain = ptr::null_mut();
        // SAFETY: fabric is open; info's first entry is a valid fi_info that
        // lives as long as the domain (stored below).
        let rc = unsafe {
            sys::fi_domain(
                fabric.inner.raw,
                info.first().map_or(ptr::null_mut(), |e| e.raw),
                &mut raw,
                ptr::null_mut(),
            )
        };
        check("fi_domain", rc as i64)?;
        Ok(Domain {
            inner: Arc::new(DomainInner {
                raw,
                info,
                _fabric: fabric.clone(),
            }),
        })
    }

    /// Open fabric and domain in one step.
    pub fn open_entry(entry: &InfoEntry<'_>) -> Result<Domain, OfiError> {
        let fabric = Fabric::open(entry)?;
        Domain::open(&fabric, entry)
    }

    /// The info entry this domain was opened from.
    pub fn info(&self) -> InfoEntry<'_> {
        self.inner
            .info
            .first()
            .expect("a domain always keeps its info entry")
    }
}
