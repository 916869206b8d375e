//! Safe ownership wrapper over libfabric.
//!
//! Each libfabric object is owned by one Rust value whose `Drop` calls
//! `fi_close`. Children hold an `Arc` of their parent, so the close order
//! libfabric requires follows from ownership rather than from comments:
//!
//! * a [`MemoryRegion`] bound to an endpoint (FI_MR_ENDPOINT) holds that
//!   [`Endpoint`], so the MR is closed first (the cxi provider refuses to close
//!   an endpoint that still has MRs bound, and GASNet closes MRs before the
//!   RDMA endpoint for the same reason);
//! * an [`Endpoint`] holds the [`CompletionQueue`]s and [`AddressVector`] it
//!   is bound to, so it closes before them;
//! * completion queues, address vectors and memory regions hold the
//!   [`Domain`], which holds the [`Fabric`].
//!
//! Opening and binding are safe. Data-transfer calls (`send`, `recvmsg`,
//! `write`, `read`, `cq.read`, ...) are `unsafe fn`: libfabric keeps raw
//! pointers to the buffers and contexts until a completion is reported, and
//! the domain's threading level (FI_THREAD_DOMAIN in single-threaded mode)
//! forbids concurrent calls. The conduit's progress engine and RMA layer
//! uphold those contracts and expose a safe API on top.

mod av;
mod cq;
mod domain;
mod ep;
mod ep_ops;
mod error;
mod info;
mod mr;
pub mod shm_region;

pub use av::AddressVector;
pub use cq::{CompletionQueue, CqEntry, CqErrEntry, CqRead};
pub use domain::{Domain, Fabric};
pub use ep::{Endpoint, Held};
pub use error::{check, strerror, OfiError};
pub use info::{AvType, Hints, InfoEntry, InfoList, MrMode, Threading};
pub use mr::{MemoryRegion, RegisteredMemory};

/// A peer's address in an address vector (`fi_addr_t`).
pub type FiAddr = ofi_sys::fi_addr_t;

/// The libfabric API version the conduit asks `fi_getinfo` for: that of the
/// headers it was built against (1.15 is the oldest supported), so a build
/// against libfabric 2.x gets 2.x semantics. The library loaded at run time
/// must not be older (checked by [`InfoList::query`]).
pub const API_VERSION: u32 = ofi_sys::HEADER_VERSION;

/// The libfabric library version loaded at run time, as `(major, minor)`.
pub fn runtime_version() -> (u32, u32) {
    // SAFETY: fi_version takes no arguments and returns a number.
    let v = unsafe { ofi_sys::fi_version() };
    (ofi_sys::fi_major(v), ofi_sys::fi_minor(v))
}
