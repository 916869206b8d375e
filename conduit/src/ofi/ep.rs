//! Reliable-datagram (FI_EP_RDM) endpoints.

use super::av::AddressVector;
use super::cq::CompletionQueue;
use super::domain::Domain;
use super::error::{check, OfiError};
use super::info::InfoList;
use super::shm_region;
use ofi_sys as sys;
use std::ptr;
use std::sync::Arc;

/// Anything an endpoint keeps alive until it is closed.
pub type Held = Arc<dyn std::any::Any + Send + Sync>;

pub(crate) struct EpInner {
    pub(crate) raw: *mut sys::fid_ep,
    // Dropped after `raw` is closed (Drop::drop runs before field drops):
    // the endpoint closes before the CQs and AV it is bound to, and before
    // the memory it was handed (receive and send buffers) is freed.
    _cqs: Vec<CompletionQueue>,
    _av: Option<AddressVector>,
    held: std::sync::Mutex<Vec<Held>>,
    /// The shm provider's shared-memory object behind this endpoint.
    shm_object: Option<std::ffi::CString>,
    _domain: Domain,
}

// SAFETY: the handle may move between threads; data-transfer calls are
// `unsafe fn`s whose contract requires the domain's threading level.
unsafe impl Send for EpInner {}
// SAFETY: as above.
unsafe impl Sync for EpInner {}

impl Drop for EpInner {
    fn drop(&mut self) {
        // SAFETY: raw is an open endpoint; MRs bound to it hold an Arc of
        // this value, so they are closed already. Posted operations are
        // discarded by fi_close.
        let rc = unsafe { sys::fi_close(&mut (*self.raw).fid) };
        if rc != 0 {
            tracing::warn!("{}", OfiError::new("fi_close(ep)", rc as i64));
        }
        if let Some(o) = &self.shm_object {
            shm_region::closed(o);
        }
    }
}

/// An endpoint being set up: bind CQs and an AV, then [`EndpointBuilder::enable`].
pub struct EndpointBuilder {
    raw: *mut sys::fid_ep,
    cqs: Vec<CompletionQueue>,
    av: Option<AddressVector>,
    domain: Domain,
    /// A scalable endpoint's TX or RX context (never has an AV of its own).
    pub(super) context: bool,
    /// The scalable endpoint a context belongs to (kept open until the
    /// context is closed).
    pub(super) parent: Option<Endpoint>,
}

impl Drop for EndpointBuilder {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        if self.av.is_none() && !self.context && super::runtime_version().0 < 2 {
            // libfabric 1.17's ofi_rxm dereferences the endpoint's AV in
            // fi_close and crashes when none was bound (known-issues.md;
            // 2.1 closes it). Such an endpoint only exists on an error path
            // during set-up; leaking it until exit is the safe choice.
            tracing::debug!("not closing an endpoint that never had an AV bound");
            return;
        }
        // SAFETY: an endpoint that was opened but never enabled; closed once
        // (enable() nulls raw when it hands it on).
        unsafe { sys::fi_close(&mut (*self.raw).fid) };
    }
}

impl EndpointBuilder {
    /// A builder around an endpoint opened elsewhere in this module
    /// (`fi_scalable_ep`, `fi_tx_context`, `fi_rx_context`).
    pub(super) fn from_raw(raw: *mut sys::fid_ep, domain: &Domain) -> EndpointBuilder {
        EndpointBuilder {
            raw,
            cqs: Vec::new(),
            av: None,
            domain: domain.clone(),
            context: false,
            parent: None,
        }
    }

    /// Bind a completion queue with `flags` (FI_TRANSMIT, FI_RECV, and
    /// FI_SELECTIVE_COMPLETION if wanted).
    pub fn bind_cq(mut self, cq: &CompletionQueue, flags: u64) -> Result<Self, OfiError> {
        // SAFETY: both objects are open and belong to the same domain.
        let rc = unsafe { sys::fi_ep_bind(self.raw, &mut (*cq.inner.raw).fid, flags) };
        check("fi_ep_bind(cq)", rc as i64)?;
        self.cqs.push(cq.clone());
        Ok(self)
    }

    /// Bind an address vector.
    pub fn bind_av(mut self, av: &AddressVector) -> Result<Self, OfiError> {
        // SAFETY: both objects are open and belong to the same domain.
        let rc = unsafe { sys::fi_ep_bind(self.raw, &mut (*av.inner.raw).fid, 0) };
        check("fi_ep_bind(av)", rc as i64)?;
        self.av = Some(av.clone());
        Ok(self)
    }

    /// Set FI_OPT_MIN_MULTI_RECV before `fi_enable`. libfabric 2.x's shm
    /// reads it only when the endpoint is enabled (a later `fi_setopt` is
    /// accepted and ignored); libfabric 1.x's shm crashes if it is set
    /// before (known-issues.md): see [`Endpoint::set_min_multi_recv`].
    pub fn set_min_multi_recv(&self, bytes: usize) -> Result<(), OfiError> {
        // SAFETY: raw is an open (not yet enabled) endpoint.
        unsafe { set_min_multi_recv(self.raw, bytes) }
    }

    /// Enable the endpoint. A shm endpoint's shared-memory object is
    /// recorded so that it is removed even if the process ends without
    /// closing it, and a stale object of a dead process with this process's
    /// pid is replaced (see [`shm_region`]).
    pub fn enable(mut self) -> Result<Endpoint, OfiError> {
        let shm_object = if self.domain.info().provider() == "shm" {
            // SAFETY: raw is an open endpoint.
            unsafe { get_name(self.raw) }
                .ok()
                .and_then(|a| shm_region::object_of(&a))
        } else {
            None
        };
        // SAFETY: raw is open and bound as the provider requires.
        let mut rc = unsafe { sys::fi_enable(self.raw) };
        if rc == -(sys::FI_EBUSY as i32) {
            if let Some(o) = shm_object
                .as_ref()
                .filter(|o| shm_region::names_this_process(o))
            {
                tracing::warn!(
                    "shm: /dev/shm/{} was left by a dead process with this pid; the provider removed it, enabling again",
                    o.to_string_lossy()
                );
                // SAFETY: as above; the failed attempt changed nothing (it
                // fails before the endpoint's region is created).
                rc = unsafe { sys::fi_enable(self.raw) };
            }
        }
        check("fi_enable", rc as i64)?;
        // From libfabric 2.3 the provider no longer fails over an object
        // that holds the name: it removes it and takes another name
        // (`<name>:<random>`), so the name is read again.
        let shm_object = shm_object.map(|before| {
            // SAFETY: raw is an open, enabled endpoint.
            let after = unsafe { get_name(self.raw) }
                .ok()
                .and_then(|a| shm_region::object_of(&a));
            match after {
                Some(a) if a != before => {
                    tracing::warn!(
                        "shm: /dev/shm/{} exists (left by a dead process with this pid, or another pid namespace's); the provider named this endpoint {} instead",
                        before.to_string_lossy(),
                        a.to_string_lossy()
                    );
                    a
                }
                _ => before,
            }
        });
        if let Some(o) = &shm_object {
            shm_region::opened(o);
        }
        let raw = std::mem::replace(&mut self.raw, ptr::null_mut());
        let mut held: Vec<Held> = Vec::new();
        if let Some(p) = self.parent.take() {
            held.push(Arc::new(p));
        }
        Ok(Endpoint {
            inner: Arc::new(EpInner {
                raw,
                _cqs: std::mem::take(&mut self.cqs),
                _av: self.av.take(),
                held: std::sync::Mutex::new(held),
                shm_object,
                _domain: self.domain.clone(),
            }),
        })
    }
}

/// An enabled endpoint. Cloning shares the handle.
#[derive(Clone)]
pub struct Endpoint {
    pub(crate) inner: Arc<EpInner>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Endpoint")
    }
}

impl Endpoint {
    /// Open an endpoint on `domain` from the domain's own info entry.
    pub fn open(domain: &Domain) -> Result<EndpointBuilder, OfiError> {
        Self::open_with(domain, None)
    }

    /// Open an endpoint from `info` (a copy of the domain's entry, possibly
    /// with other tx op_flags), or the domain's entry when `None`.
    pub fn open_with(
        domain: &Domain,
        info: Option<&InfoList>,
    ) -> Result<EndpointBuilder, OfiError> {
        let entry = match info.and_then(|i| i.first()) {
            Some(e) => e.raw,
            None => domain.info().raw,
        };
        let mut raw: *mut sys::fid_ep = ptr::null_mut();
        // SAFETY: domain is open, entry is a valid fi_info of that domain.
        let rc = unsafe { sys::fi_endpoint(domain.inner.raw, entry, &mut raw, ptr::null_mut()) };
        check("fi_endpoint", rc as i64)?;
        Ok(EndpointBuilder {
            raw,
            cqs: Vec::new(),
            av: None,
            domain: domain.clone(),
            context: false,
            parent: None,
        })
    }

    /// Set FI_OPT_MIN_MULTI_RECV: a multi-recv buffer is released when less
    /// than `bytes` remain in it. Call it on the enabled endpoint: libfabric
    /// 1.17's shm provider crashes when it is set before `fi_enable`
    /// (known-issues.md).
    pub fn set_min_multi_recv(&self, bytes: usize) -> Result<(), OfiError> {
        // SAFETY: raw is an open, enabled endpoint.
        unsafe { set_min_multi_recv(self.inner.raw, bytes) }
    }

    /// FI_OPT_MIN_MULTI_RECV as the provider reports it (`fi_getopt`).
    pub fn min_multi_recv(&self) -> Result<usize, OfiError> {
        let mut val: libc::size_t = 0;
        let mut len = std::mem::size_of::<libc::size_t>();
        // SAFETY: FI_OPT_MIN_MULTI_RECV writes a size_t; val and len are
        // valid for the call; the endpoint is open.
        let rc = unsafe {
            sys::fi_getopt(
                &mut (*self.inner.raw).fid,
                sys::FI_OPT_ENDPOINT as i32,
                sys::FI_OPT_MIN_MULTI_RECV as i32,
                (&mut val as *mut libc::size_t).cast(),
                &mut len,
            )
        };
        check("fi_getopt(FI_OPT_MIN_MULTI_RECV)", rc as i64)?;
        Ok(val)
    }

    /// Keep `x` alive until this endpoint is closed: memory whose buffers
    /// are posted here (the provider may use them until `fi_close`).
    pub fn hold(&self, x: Held) {
        self.inner
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(x);
    }

    /// This endpoint's address (`fi_getname`), to be exchanged with peers.
    pub fn name(&self) -> Result<Vec<u8>, OfiError> {
        // SAFETY: raw is an open endpoint.
        unsafe { get_name(self.inner.raw) }
    }

    /// The raw handle, for the conduit's data path.
    #[inline]
    pub fn raw(&self) -> *mut sys::fid_ep {
        self.inner.raw
    }
}

/// `fi_setopt(FI_OPT_MIN_MULTI_RECV)`.
///
/// # Safety
/// `raw` must be an open endpoint.
unsafe fn set_min_multi_recv(raw: *mut sys::fid_ep, bytes: usize) -> Result<(), OfiError> {
    let val: libc::size_t = bytes;
    // SAFETY: FI_OPT_MIN_MULTI_RECV takes a size_t by pointer, valid for
    // the call; the endpoint is open (caller's contract).
    let rc = unsafe {
        sys::fi_setopt(
            &mut (*raw).fid,
            sys::FI_OPT_ENDPOINT as i32,
            sys::FI_OPT_MIN_MULTI_RECV as i32,
            (&val as *const libc::size_t).cast(),
            std::mem::size_of::<libc::size_t>(),
        )
    };
    check("fi_setopt(FI_OPT_MIN_MULTI_RECV)", rc as i64)?;
    Ok(())
}

/// `fi_getname` of an endpoint.
///
/// # Safety
/// `raw` must be an open endpoint.
unsafe fn get_name(raw: *mut sys::fid_ep) -> Result<Vec<u8>, OfiError> {
    let mut len: libc::size_t = 0;
    // SAFETY: a NULL buffer with len 0 asks for the needed size; raw is open.
    let rc = unsafe { sys::fi_getname(&mut (*raw).fid, ptr::null_mut(), &mut len) };
    if rc != 0 && rc != -(sys::FI_ETOOSMALL as i32) {
        check("fi_getname", rc as i64)?;
    }
    let mut buf = vec![0u8; len.max(1)];
    let mut len2 = buf.len();
    // SAFETY: buf has len2 bytes; raw is open.
    let rc = unsafe { sys::fi_getname(&mut (*raw).fid, buf.as_mut_ptr().cast(), &mut len2) };
    check("fi_getname", rc as i64)?;
    buf.truncate(len2);
    Ok(buf)
}
