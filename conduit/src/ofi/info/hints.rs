//! The hints given to `fi_getinfo` ([`Hints`]): an owned `fi_info` from
//! `fi_allocinfo`, filled by builder calls (capabilities, modes, endpoint
//! type, MR mode, address vector type, threading, progress, provider and
//! domain names, transmit flags) and freed with `fi_freeinfo`.

use super::{AvType, Threading};
use ofi_sys as sys;
use std::ffi::CString;

/// Hints for `fi_getinfo`, owned (allocated with `fi_allocinfo`).
#[derive(Debug)]
pub struct Hints {
    pub(in crate::ofi) raw: *mut sys::fi_info,
}

impl Default for Hints {
    fn default() -> Self {
        Self::new()
    }
}

impl Hints {
    /// Empty hints.
    pub fn new() -> Self {
        // SAFETY: fi_allocinfo returns a zeroed fi_info with its attribute
        // structs allocated, or NULL on allocation failure.
        let raw = unsafe { sys::fi_allocinfo() };
        assert!(!raw.is_null(), "fi_allocinfo: out of memory");
        Hints { raw }
    }

    fn info(&mut self) -> &mut sys::fi_info {
        // SAFETY: raw is a valid fi_info owned by self for its lifetime.
        unsafe { &mut *self.raw }
    }

    /// Required capabilities (`FI_MSG | FI_RMA | ...`).
    pub fn caps(mut self, caps: u64) -> Self {
        self.info().caps = caps;
        self
    }

    /// Modes the application supports (e.g. FI_CONTEXT).
    pub fn mode(mut self, mode: u64) -> Self {
        self.info().mode = mode;
        self
    }

    /// Endpoint type FI_EP_RDM.
    pub fn rdm(mut self) -> Self {
        // SAFETY: fi_allocinfo allocated ep_attr.
        unsafe { (*self.info().ep_attr).type_ = sys::fi_ep_type_FI_EP_RDM };
        self
    }

    /// The MR mode bits the application can handle.
    pub fn mr_mode(mut self, bits: u32) -> Self {
        // SAFETY: fi_allocinfo allocated domain_attr.
        unsafe { (*self.info().domain_attr).mr_mode = bits as i32 };
        self
    }

    /// Address vector type.
    pub fn av_type(mut self, t: AvType) -> Self {
        // SAFETY: fi_allocinfo allocated domain_attr.
        unsafe { (*self.info().domain_attr).av_type = t.raw() };
        self
    }

    /// Threading level.
    pub fn threading(mut self, t: Threading) -> Self {
        // SAFETY: fi_allocinfo allocated domain_attr.
        unsafe { (*self.info().domain_attr).threading = t.raw() };
        self
    }

    /// FI_PROGRESS_MANUAL for control and data, FI_RM_ENABLED.
    pub fn manual_progress(mut self) -> Self {
        // SAFETY: fi_allocinfo allocated domain_attr.
        unsafe {
            let d = &mut *self.info().domain_attr;
            d.control_progress = sys::fi_progress_FI_PROGRESS_MANUAL;
            sys::set_data_progress(d, sys::fi_progress_FI_PROGRESS_MANUAL);
            d.resource_mgmt = sys::fi_resource_mgmt_FI_RM_ENABLED;
        }
        self
    }

    /// Restrict to one provider (`prov_name`, e.g. `tcp;ofi_rxm`).
    pub fn provider(mut self, name: &str) -> Self {
        let dup = strdup(name);
        // SAFETY: fi_allocinfo allocated fabric_attr; fi_freeinfo frees
        // prov_name with free(), so it must come from malloc (strdup).
        unsafe {
            let f = &mut *self.info().fabric_attr;
            if !f.prov_name.is_null() {
                libc::free(f.prov_name.cast());
            }
            f.prov_name = dup;
        }
        self
    }

    /// Restrict to one domain (device) name, e.g. `lo` or `cxi0`.
    pub fn domain(mut self, name: &str) -> Self {
        let dup = strdup(name);
        // SAFETY: as for provider(): domain_attr is allocated and its name is
        // freed by fi_freeinfo with free().
        unsafe {
            let d = &mut *self.info().domain_attr;
            if !d.name.is_null() {
                libc::free(d.name.cast());
            }
            d.name = dup;
        }
        self
    }

    /// Default transmit operation flags (e.g. FI_DELIVERY_COMPLETE).
    pub fn tx_op_flags(mut self, flags: u64) -> Self {
        // SAFETY: fi_allocinfo allocated tx_attr.
        unsafe { (*self.info().tx_attr).op_flags = flags };
        self
    }
}

fn strdup(s: &str) -> *mut libc::c_char {
    let c = CString::new(s.replace('\0', "")).unwrap_or_default();
    // SAFETY: c is a valid NUL-terminated string; strdup copies it to malloc
    // memory that fi_freeinfo later frees.
    unsafe { libc::strdup(c.as_ptr()) }
}

impl Drop for Hints {
    fn drop(&mut self) {
        // SAFETY: raw came from fi_allocinfo and is freed exactly once.
        unsafe { sys::fi_freeinfo(self.raw) }
    }
}
