//! `fi_getinfo`: hints in, a list of provider/domain candidates out.

use super::error::{check, OfiError};
use ofi_sys as sys;
use std::ffi::CStr;
use std::marker::PhantomData;
use std::ptr;

mod hints;
pub use hints::Hints;

/// Threading levels the conduit uses (`fi_threading`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Threading {
    /// FI_THREAD_SAFE: concurrent calls on any object.
    Safe,
    /// FI_THREAD_DOMAIN: the application serializes all calls within a domain.
    Domain,
    /// Any other level a provider reports (completion, endpoint, fid, unspec).
    Other(u32),
}

impl Threading {
    fn raw(self) -> sys::fi_threading {
        match self {
            Threading::Safe => sys::fi_threading_FI_THREAD_SAFE,
            Threading::Domain => sys::fi_threading_FI_THREAD_DOMAIN,
            Threading::Other(v) => v,
        }
    }
    fn from_raw(v: sys::fi_threading) -> Self {
        match v {
            sys::fi_threading_FI_THREAD_SAFE => Threading::Safe,
            sys::fi_threading_FI_THREAD_DOMAIN => Threading::Domain,
            v => Threading::Other(v),
        }
    }
    /// The libfabric name, e.g. `FI_THREAD_SAFE`.
    pub fn name(self) -> String {
        match self.raw() {
            sys::fi_threading_FI_THREAD_SAFE => "FI_THREAD_SAFE".into(),
            sys::fi_threading_FI_THREAD_DOMAIN => "FI_THREAD_DOMAIN".into(),
            sys::fi_threading_FI_THREAD_FID => "FI_THREAD_FID".into(),
            sys::fi_threading_FI_THREAD_COMPLETION => "FI_THREAD_COMPLETION".into(),
            sys::fi_threading_FI_THREAD_ENDPOINT => "FI_THREAD_ENDPOINT".into(),
            sys::fi_threading_FI_THREAD_UNSPEC => "FI_THREAD_UNSPEC".into(),
            v => format!("threading({v})"),
        }
    }
}

/// Address vector types (`fi_av_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AvType {
    /// FI_AV_UNSPEC: let the provider choose.
    Unspec,
    /// FI_AV_MAP: `fi_addr_t` values are provider-chosen.
    Map,
    /// FI_AV_TABLE: `fi_addr_t` values are indices 0, 1, 2, ...
    Table,
}

impl AvType {
    pub(crate) fn raw(self) -> sys::fi_av_type {
        match self {
            AvType::Unspec => sys::fi_av_type_FI_AV_UNSPEC,
            AvType::Map => sys::fi_av_type_FI_AV_MAP,
            AvType::Table => sys::fi_av_type_FI_AV_TABLE,
        }
    }
    fn from_raw(v: sys::fi_av_type) -> Self {
        match v {
            sys::fi_av_type_FI_AV_MAP => AvType::Map,
            sys::fi_av_type_FI_AV_TABLE => AvType::Table,
            _ => AvType::Unspec,
        }
    }
}

/// The memory-registration mode bits a provider requires (`mr_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MrMode(pub u32);

impl MrMode {
    /// FI_MR_LOCAL: local buffers must be registered (the conduit refuses it).
    pub const LOCAL: u32 = sys::FI_MR_LOCAL;
    /// FI_MR_VIRT_ADDR: remote addresses are virtual addresses, not offsets.
    pub const VIRT_ADDR: u32 = sys::FI_MR_VIRT_ADDR;
    /// FI_MR_ALLOCATED: only allocated (backed) memory may be registered.
    pub const ALLOCATED: u32 = sys::FI_MR_ALLOCATED;
    /// FI_MR_PROV_KEY: the provider chooses keys, which must be exchanged.
    pub const PROV_KEY: u32 = sys::FI_MR_PROV_KEY;
    /// FI_MR_ENDPOINT: MRs are bound to an endpoint and enabled.
    pub const ENDPOINT: u32 = sys::FI_MR_ENDPOINT;
    /// FI_MR_RAW: raw keys.
    pub const RAW: u32 = sys::FI_MR_RAW;
    /// FI_MR_RMA_EVENT.
    pub const RMA_EVENT: u32 = sys::FI_MR_RMA_EVENT;
    /// FI_MR_HMEM.
    pub const HMEM: u32 = sys::FI_MR_HMEM;

    /// True when every bit of `bits` is set.
    pub fn has(self, bits: u32) -> bool {
        self.0 & bits == bits
    }

    /// Names of the bits set, e.g. `["FI_MR_VIRT_ADDR", "FI_MR_PROV_KEY"]`.
    pub fn names(self) -> Vec<&'static str> {
        let all = [
            (Self::LOCAL, "FI_MR_LOCAL"),
            (Self::RAW, "FI_MR_RAW"),
            (Self::VIRT_ADDR, "FI_MR_VIRT_ADDR"),
            (Self::ALLOCATED, "FI_MR_ALLOCATED"),
            (Self::PROV_KEY, "FI_MR_PROV_KEY"),
            (Self::RMA_EVENT, "FI_MR_RMA_EVENT"),
            (Self::ENDPOINT, "FI_MR_ENDPOINT"),
            (Self::HMEM, "FI_MR_HMEM"),
        ];
        all.iter()
            .filter(|(b, _)| self.0 & b != 0)
            .map(|(_, n)| *n)
            .collect()
    }
}

/// The list `fi_getinfo` returned (owned; freed with `fi_freeinfo`).
#[derive(Debug)]
pub struct InfoList {
    head: *mut sys::fi_info,
}

// SAFETY: the list is plain heap data owned by this value; libfabric does not
// tie it to a thread.
unsafe impl Send for InfoList {}
// SAFETY: shared access only reads the list.
unsafe impl Sync for InfoList {}

impl InfoList {
    /// Query libfabric. A query that matches nothing (-FI_ENODATA) returns an
    /// empty list, not an error.
    pub fn query(hints: Option<&Hints>) -> Result<InfoList, OfiError> {
        super::loaded_is_not_older(super::API_VERSION, super::runtime_api_version())?;
        let mut out: *mut sys::fi_info = ptr::null_mut();
        let h = hints.map_or(ptr::null_mut(), |h| h.raw);
        // SAFETY: h is NULL or a valid fi_info; out receives a list we own.
        let rc = unsafe {
            sys::fi_getinfo(super::API_VERSION, ptr::null(), ptr::null(), 0, h, &mut out)
        };
        if rc == -(sys::FI_ENODATA as i32) {
            return Ok(InfoList {
                head: ptr::null_mut(),
            });
        }
        check("fi_getinfo", rc as i64)?;
        Ok(InfoList { head: out })
    }

    /// A one-entry list holding a copy of `entry` (`fi_dupinfo`).
    pub fn dup(entry: &InfoEntry<'_>) -> InfoList {
        // SAFETY: entry.raw is a valid fi_info; fi_dupinfo deep-copies it and
        // does not copy `next`.
        let copy = unsafe { sys::fi_dupinfo(entry.raw) };
        assert!(!copy.is_null(), "fi_dupinfo: out of memory");
        InfoList { head: copy }
    }

    /// Iterate over the entries.
    pub fn iter(&self) -> impl Iterator<Item = InfoEntry<'_>> {
        let mut cur = self.head;
        std::iter::from_fn(move || {
            if cur.is_null() {
                return None;
            }
            let e = InfoEntry {
                raw: cur,
                _list: PhantomData,
            };
            // SAFETY: cur is a valid entry of the list we own.
            cur = unsafe { (*cur).next };
            Some(e)
        })
    }

    /// The first entry.
    pub fn first(&self) -> Option<InfoEntry<'_>> {
        self.iter().next()
    }

    /// True when the query matched nothing.
    pub fn is_empty(&self) -> bool {
        self.head.is_null()
    }

    /// Set the default transmit op_flags of the first entry (used to open the
    /// AM endpoints with FI_INJECT_COMPLETE or FI_DELIVERY_COMPLETE from a
    /// copy of the chosen entry; RMA posts state their own).
    pub fn set_tx_op_flags(&mut self, flags: u64) {
        if !self.head.is_null() {
            // SAFETY: head is a valid entry we own; tx_attr is allocated for
            // every entry fi_getinfo or fi_dupinfo returns.
            unsafe {
                if !(*self.head).tx_attr.is_null() {
                    (*(*self.head).tx_attr).op_flags = flags;
                }
            }
        }
    }
}

impl InfoList {
    /// Set the first entry's domain threading level (what `fi_domain` will
    /// be asked for).
    pub fn set_threading(&mut self, t: Threading) {
        if !self.head.is_null() {
            // SAFETY: head is a valid entry we own; domain_attr is allocated
            // for every entry fi_getinfo or fi_dupinfo returns.
            unsafe {
                if !(*self.head).domain_attr.is_null() {
                    (*(*self.head).domain_attr).threading = t.raw();
                }
            }
        }
    }
}

impl Drop for InfoList {
    fn drop(&mut self) {
        if !self.head.is_null() {
            // SAFETY: head came from fi_getinfo/fi_dupinfo and is freed once.
            unsafe { sys::fi_freeinfo(self.head) }
        }
    }
}

/// One entry of an [`InfoList`] (borrowed).
#[derive(Clone, Copy)]
pub struct InfoEntry<'a> {
    pub(crate) raw: *mut sys::fi_info,
    _list: PhantomData<&'a InfoList>,
}

impl std::fmt::Debug for InfoEntry<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InfoEntry")
            .field("provider", &self.provider())
            .field("domain", &self.domain())
            .field("fabric", &self.fabric())
            .finish()
    }
}

fn cstr(p: *const libc::c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: libfabric stores NUL-terminated strings in these fields.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

impl<'a> InfoEntry<'a> {
    fn info(&self) -> &'a sys::fi_info {
        // SAFETY: raw points into a list that outlives 'a.
        unsafe { &*self.raw }
    }
    fn domain_attr(&self) -> &'a sys::fi_domain_attr {
        // SAFETY: every returned entry has domain_attr allocated.
        unsafe { &*self.info().domain_attr }
    }
    fn fabric_attr(&self) -> &'a sys::fi_fabric_attr {
        // SAFETY: every returned entry has fabric_attr allocated.
        unsafe { &*self.info().fabric_attr }
    }
    fn tx_attr(&self) -> &'a sys::fi_tx_attr {
        // SAFETY: every returned entry has tx_attr allocated.
        unsafe { &*self.info().tx_attr }
    }
    fn ep_attr(&self) -> &'a sys::fi_ep_attr {
        // SAFETY: every returned entry has ep_attr allocated.
        unsafe { &*self.info().ep_attr }
    }

    /// Provider name, e.g. `tcp;ofi_rxm`.
    pub fn provider(&self) -> String {
        cstr(self.fabric_attr().prov_name)
    }
    /// Provider version as `(major, minor)`.
    pub fn provider_version(&self) -> (u32, u32) {
        let v = self.fabric_attr().prov_version;
        (sys::fi_major(v), sys::fi_minor(v))
    }
    /// Domain (device) name, e.g. `lo`, `eth0`, `shm`.
    pub fn domain(&self) -> String {
        cstr(self.domain_attr().name)
    }
    /// Fabric name.
    pub fn fabric(&self) -> String {
        cstr(self.fabric_attr().name)
    }
    /// Capabilities.
    pub fn caps(&self) -> u64 {
        self.info().caps
    }
    /// Modes the provider requires of the application (domain-level `mode`).
    pub fn mode(&self) -> u64 {
        self.info().mode
    }
    /// MR mode bits the provider requires.
    pub fn mr_mode(&self) -> MrMode {
        MrMode(self.domain_attr().mr_mode as u32)
    }
    /// Address vector type.
    pub fn av_type(&self) -> AvType {
        AvType::from_raw(self.domain_attr().av_type)
    }
    /// Threading level.
    pub fn threading(&self) -> Threading {
        Threading::from_raw(self.domain_attr().threading)
    }
    /// Largest `fi_inject`/FI_INJECT payload.
    pub fn rma_iov_limit(&self) -> usize {
        self.tx_attr().iov_limit.min(self.tx_attr().rma_iov_limit)
    }

    /// The transmit side's inject size.
    pub fn inject_size(&self) -> usize {
        self.tx_attr().inject_size
    }
    /// Largest message or RMA transfer.
    pub fn max_msg_size(&self) -> usize {
        self.ep_attr().max_msg_size
    }
    /// Bytes of remote CQ data a message can carry.
    pub fn cq_data_size(&self) -> usize {
        self.domain_attr().cq_data_size
    }
    /// Message prefix size (non-zero when FI_MSG_PREFIX is required).
    pub fn msg_prefix_size(&self) -> usize {
        self.ep_attr().msg_prefix_size
    }
    /// Size of MR keys in bytes.
    pub fn mr_key_size(&self) -> usize {
        self.domain_attr().mr_key_size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_rdm_lists_providers() {
        let hints = Hints::new()
            .rdm()
            .caps((sys::FI_MSG | sys::FI_RMA) as u64)
            .mr_mode(MrMode::VIRT_ADDR | MrMode::PROV_KEY | MrMode::ENDPOINT | MrMode::ALLOCATED);
        let list = InfoList::query(Some(&hints)).unwrap();
        let provs: Vec<String> = list.iter().map(|e| e.provider()).collect();
        assert!(provs.iter().any(|p| p == "shm"), "{provs:?}");
        assert!(provs.iter().any(|p| p == "tcp;ofi_rxm"), "{provs:?}");
    }

    #[test]
    fn unknown_provider_gives_empty_list() {
        let hints = Hints::new().rdm().provider("no-such-provider");
        let list = InfoList::query(Some(&hints)).unwrap();
        assert!(list.is_empty());
    }

    #[test]
    fn dup_keeps_attributes() {
        let hints = Hints::new().rdm().provider("shm");
        let list = InfoList::query(Some(&hints)).unwrap();
        let e = list.first().expect("shm provider");
        let mut copy = InfoList::dup(&e);
        copy.set_tx_op_flags(sys::FI_DELIVERY_COMPLETE as u64);
        let c = copy.first().unwrap();
        assert_eq!(c.provider(), "shm");
        assert_eq!(c.domain(), e.domain());
        assert_eq!(c.inject_size(), e.inject_size());
        assert_eq!(copy.iter().count(), 1);
    }

    #[test]
    fn mr_mode_names() {
        let m = MrMode(MrMode::VIRT_ADDR | MrMode::ENDPOINT);
        assert_eq!(m.names(), vec!["FI_MR_VIRT_ADDR", "FI_MR_ENDPOINT"]);
        assert!(m.has(MrMode::VIRT_ADDR));
        assert!(!m.has(MrMode::PROV_KEY));
    }
}
