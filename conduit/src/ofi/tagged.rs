//! Tagged messaging (`fi_tagged(3)`) and scalable endpoints: the calls the
//! conduit's tagged layer makes, the FI_CQ_FORMAT_TAGGED queue it reads,
//! and the provider facts its tag layout depends on.

use super::av::AddressVector;
use super::cq::{CompletionQueue, CqRead};
use super::domain::Domain;
use super::ep::{Endpoint, EndpointBuilder};
use super::error::{check, OfiError};
use super::info::{Hints, InfoEntry, InfoList};
use super::FiAddr;
use ofi_sys as sys;
use std::mem::MaybeUninit;
use std::ptr;

impl Hints {
    /// Restrict to one fabric name.
    pub fn fabric(self, name: &str) -> Self {
        let c = std::ffi::CString::new(name.replace('\0', "")).unwrap_or_default();
        // SAFETY: fi_allocinfo allocated fabric_attr; fi_freeinfo frees the
        // name with free(), so it comes from strdup (malloc).
        unsafe {
            let f = &mut *(*self.raw).fabric_attr;
            if !f.name.is_null() {
                libc::free(f.name.cast());
            }
            f.name = libc::strdup(c.as_ptr());
        }
        self
    }

    /// Message ordering wanted on both sides (e.g. FI_ORDER_SAS).
    pub fn msg_order(self, order: u64) -> Self {
        // SAFETY: fi_allocinfo allocated tx_attr and rx_attr.
        unsafe {
            (*(*self.raw).tx_attr).msg_order = order;
            (*(*self.raw).rx_attr).msg_order = order;
        }
        self
    }

    /// Bytes of remote CQ data wanted.
    pub fn cq_data_size(self, bytes: usize) -> Self {
        // SAFETY: fi_allocinfo allocated domain_attr.
        unsafe { (*(*self.raw).domain_attr).cq_data_size = bytes };
        self
    }
}

impl InfoList {
    /// Ask for `tx` TX and `rx` RX contexts of a scalable endpoint.
    pub fn set_ctx_counts(&mut self, tx: usize, rx: usize) {
        if let Some(e) = self.first() {
            // SAFETY: the entry is owned by this list; ep_attr is allocated
            // in every entry fi_getinfo or fi_dupinfo returns.
            unsafe {
                (*(*e.raw).ep_attr).tx_ctx_cnt = tx;
                (*(*e.raw).ep_attr).rx_ctx_cnt = rx;
            }
        }
    }
}

impl InfoEntry<'_> {
    fn ep_attr_raw(&self) -> &sys::fi_ep_attr {
        // SAFETY: every returned entry has ep_attr allocated, and the list
        // outlives this borrow.
        unsafe { &*(*self.raw).ep_attr }
    }
    /// `ep_attr->mem_tag_format`.
    pub fn mem_tag_format(&self) -> u64 {
        self.ep_attr_raw().mem_tag_format
    }
    /// `rx_attr->size`: receives the endpoint can hold posted.
    pub fn rx_size(&self) -> usize {
        // SAFETY: rx_attr is allocated in every returned entry.
        unsafe { (*(*self.raw).rx_attr).size }
    }
    /// `domain_attr->max_ep_tx_ctx`.
    pub fn max_ep_tx_ctx(&self) -> usize {
        // SAFETY: domain_attr is allocated in every returned entry.
        unsafe { (*(*self.raw).domain_attr).max_ep_tx_ctx }
    }
    /// `domain_attr->max_ep_rx_ctx`.
    pub fn max_ep_rx_ctx(&self) -> usize {
        // SAFETY: as above.
        unsafe { (*(*self.raw).domain_attr).max_ep_rx_ctx }
    }
}

/// One completion of a tagged queue (`struct fi_cq_tagged_entry`).
#[repr(transparent)]
#[derive(Clone, Copy, Default, Debug)]
pub struct TaggedEntry(pub sys::fi_cq_tagged_entry);

impl TaggedEntry {
    /// The context given when the operation was posted.
    #[inline]
    pub fn context(&self) -> usize {
        self.0.op_context as usize
    }
    /// Completion flags.
    #[inline]
    pub fn flags(&self) -> u64 {
        self.0.flags
    }
    /// Bytes received.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.len
    }
    /// True for a zero-byte completion.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }
    /// The message's tag (receives).
    #[inline]
    pub fn tag(&self) -> u64 {
        self.0.tag
    }
    /// Remote CQ data (when FI_REMOTE_CQ_DATA is in flags).
    #[inline]
    pub fn data(&self) -> u64 {
        self.0.data
    }
}

impl CompletionQueue {
    /// Open a CQ of `size` entries (0: provider default) in
    /// FI_CQ_FORMAT_TAGGED; read it with [`CompletionQueue::read_tagged`].
    pub fn open_tagged(domain: &Domain, size: usize) -> Result<CompletionQueue, OfiError> {
        Self::open_format(domain, size, true)
    }

    /// Read up to `buf.len()` completions of a tagged queue.
    ///
    /// # Safety
    /// Threading as for [`CompletionQueue::read`]. On `Entries(n)` the
    /// first `n` elements are initialised.
    #[inline]
    pub unsafe fn read_tagged(
        &self,
        buf: &mut [MaybeUninit<TaggedEntry>],
    ) -> Result<CqRead, OfiError> {
        if !self.inner.tagged {
            return Err(OfiError::new("fi_cq_read", -(sys::FI_EINVAL as i64)));
        }
        // SAFETY: the queue is in FI_CQ_FORMAT_TAGGED (checked), so entries
        // are fi_cq_tagged_entry, which TaggedEntry wraps transparently;
        // buf has room for buf.len() of them; threading per the caller.
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
}

impl AddressVector {
    /// Open an AV whose addresses can name a scalable endpoint's receive
    /// contexts (`rx_ctx_bits`; 0 for regular endpoints).
    pub fn open_rx_bits(
        domain: &Domain,
        av_type: super::AvType,
        count: usize,
        rx_ctx_bits: i32,
    ) -> Result<Self, OfiError> {
        Self::open_attr(domain, av_type, count, rx_ctx_bits)
    }
}

/// The address of receive context `index` of the scalable endpoint at
/// `addr`, in an AV opened with `rx_ctx_bits`.
pub fn rx_addr(addr: FiAddr, index: i32, rx_ctx_bits: i32) -> FiAddr {
    // SAFETY: fi_rx_addr is arithmetic on its arguments.
    unsafe { sys::fi_rx_addr(addr, index, rx_ctx_bits) }
}

impl Endpoint {
    /// Open a scalable endpoint (`fi_scalable_ep`) from `info` (whose
    /// ep_attr asks for its TX and RX context counts); bind its AV, enable
    /// it, then open contexts with [`Endpoint::tx_context`] and
    /// [`Endpoint::rx_context`].
    pub fn open_scalable(domain: &Domain, info: &InfoList) -> Result<EndpointBuilder, OfiError> {
        let entry = info.first().ok_or(OfiError {
            call: "fi_scalable_ep",
            code: -(sys::FI_EINVAL as i64),
            text: "no fi_info entry".into(),
        })?;
        let mut raw: *mut sys::fid_ep = ptr::null_mut();
        // SAFETY: domain is open and entry is a valid fi_info of it.
        let rc =
            unsafe { sys::fi_scalable_ep(domain.inner.raw, entry.raw, &mut raw, ptr::null_mut()) };
        check("fi_scalable_ep", rc as i64)?;
        Ok(EndpointBuilder::from_raw(raw, domain))
    }

    /// TX context `index` of this scalable endpoint; bind its CQ and
    /// enable it. The context keeps the scalable endpoint open.
    pub fn tx_context(&self, index: i32, domain: &Domain) -> Result<EndpointBuilder, OfiError> {
        let mut raw: *mut sys::fid_ep = ptr::null_mut();
        // SAFETY: self is an enabled scalable endpoint; NULL attributes
        // take the endpoint's defaults.
        let rc = unsafe {
            sys::fi_tx_context(
                self.inner.raw,
                index,
                ptr::null_mut(),
                &mut raw,
                ptr::null_mut(),
            )
        };
        check("fi_tx_context", rc as i64)?;
        Ok(self.context_builder(raw, domain))
    }

    /// RX context `index` of this scalable endpoint (as
    /// [`Endpoint::tx_context`]).
    pub fn rx_context(&self, index: i32, domain: &Domain) -> Result<EndpointBuilder, OfiError> {
        let mut raw: *mut sys::fid_ep = ptr::null_mut();
        // SAFETY: as for tx_context.
        let rc = unsafe {
            sys::fi_rx_context(
                self.inner.raw,
                index,
                ptr::null_mut(),
                &mut raw,
                ptr::null_mut(),
            )
        };
        check("fi_rx_context", rc as i64)?;
        Ok(self.context_builder(raw, domain))
    }

    fn context_builder(&self, raw: *mut sys::fid_ep, domain: &Domain) -> EndpointBuilder {
        let mut b = EndpointBuilder::from_raw(raw, domain);
        b.context = true;
        b.parent = Some(self.clone());
        b
    }

    /// `fi_tinject` (`data`: with `fi_tinjectdata`): the data is copied
    /// before return; no completion.
    ///
    /// # Safety
    /// Threading as for [`Endpoint::inject`].
    #[inline]
    pub unsafe fn tinject(
        &self,
        buf: &[u8],
        data: Option<u64>,
        dest: FiAddr,
        tag: u64,
    ) -> Result<(), OfiError> {
        // SAFETY: buf is valid for its length during the call.
        let rc = unsafe {
            match data {
                Some(d) => sys::fi_tinjectdata(
                    self.inner.raw,
                    buf.as_ptr().cast(),
                    buf.len(),
                    d,
                    dest,
                    tag,
                ),
                None => sys::fi_tinject(self.inner.raw, buf.as_ptr().cast(), buf.len(), dest, tag),
            }
        };
        check("fi_tinject", rc as i64).map(|_| ())
    }

    /// `fi_tsend` (`data`: with `fi_tsenddata`).
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and unmodified until the completion
    /// for `context` is read. Threading as for [`Endpoint::inject`].
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn tsend(
        &self,
        buf: *const u8,
        len: usize,
        data: Option<u64>,
        dest: FiAddr,
        tag: u64,
        context: usize,
    ) -> Result<(), OfiError> {
        // SAFETY: per the caller's contract; the context is an opaque value.
        let rc = unsafe {
            match data {
                Some(d) => sys::fi_tsenddata(
                    self.inner.raw,
                    buf.cast(),
                    len,
                    ptr::null_mut(),
                    d,
                    dest,
                    tag,
                    context as *mut libc::c_void,
                ),
                None => sys::fi_tsend(
                    self.inner.raw,
                    buf.cast(),
                    len,
                    ptr::null_mut(),
                    dest,
                    tag,
                    context as *mut libc::c_void,
                ),
            }
        };
        check("fi_tsend", rc as i64).map(|_| ())
    }

    /// `fi_trecvmsg` of one buffer from `src` (FI_ADDR_UNSPEC: any) with
    /// `tag`/`ignore` and `flags` (0, FI_PEEK, FI_PEEK|FI_CLAIM,
    /// FI_CLAIM, FI_DISCARD, ...); with `spill`, a second iov that takes
    /// whatever of the message does not fit in `buf`.
    ///
    /// # Safety
    /// `buf..buf+len` (and the spill's range) must stay valid and
    /// untouched by anything that reads it until the completion for
    /// `context` is read. With FI_CLAIM, `context` must point to an
    /// `fi_context` the provider may write, valid until that completion.
    /// Threading as for [`Endpoint::inject`].
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn trecvmsg(
        &self,
        buf: *mut u8,
        len: usize,
        src: FiAddr,
        tag: u64,
        ignore: u64,
        context: usize,
        flags: u64,
        spill: Option<(*mut u8, usize)>,
    ) -> Result<(), OfiError> {
        let mut iov = [libc::iovec {
            iov_base: buf.cast(),
            iov_len: len,
        }; 2];
        let mut count = if len == 0 && buf.is_null() { 0 } else { 1 };
        if let Some((p, n)) = spill {
            iov[count] = libc::iovec {
                iov_base: p.cast(),
                iov_len: n,
            };
            count += 1;
        }
        let msg = sys::fi_msg_tagged {
            msg_iov: iov.as_ptr().cast(),
            desc: ptr::null_mut(),
            iov_count: count,
            addr: src,
            tag,
            ignore,
            context: context as *mut libc::c_void,
            data: 0,
        };
        // SAFETY: msg and iov are valid for the call (libfabric copies the
        // descriptors); the buffer and context per the caller's contract.
        let rc = unsafe { sys::fi_trecvmsg(self.inner.raw, &msg, flags) };
        check("fi_trecvmsg", rc as i64).map(|_| ())
    }
}
