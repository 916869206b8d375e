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

mod atomic;
mod av;
mod cq;
mod domain;
mod ep;
mod ep_ops;
mod error;
mod info;
mod mr;
mod rma_vec;
pub mod shm_region;
mod tagged;

pub use atomic::{AtomicArgs, AtomicCall, AtomicIo};
pub use av::AddressVector;
pub use cq::{CompletionQueue, CqEntry, CqErrEntry, CqRead};
pub use domain::{Domain, Fabric};
pub use ep::{Endpoint, Held};
pub use error::{check, strerror, OfiError};
pub use info::{AvType, Hints, InfoEntry, InfoList, MrMode, Threading};
pub use mr::{MemoryRegion, RegisteredMemory};
pub use rma_vec::RmaVec;
pub use tagged::{rx_addr, TaggedEntry};

/// A peer's address in an address vector (`fi_addr_t`).
pub type FiAddr = ofi_sys::fi_addr_t;

/// The libfabric API version the conduit asks `fi_getinfo` for: that of the
/// headers it was built against (1.15 is the oldest supported), so a build
/// against libfabric 2.x gets 2.x semantics. The library loaded at run time
/// must not be older (checked by [`InfoList::query`]).
pub const API_VERSION: u32 = ofi_sys::HEADER_VERSION;

/// The loaded library's API version, `FI_VERSION(major, minor)`.
pub fn runtime_api_version() -> u32 {
    let (major, minor) = runtime_version();
    ofi_sys::fi_version_num(major, minor)
}

/// `Ok` when the library `loaded` is at least the API version `built`
/// against (both `FI_VERSION` numbers); else the error `fi_getinfo`
/// reports, naming both versions and how to load the right library.
pub(crate) fn loaded_is_not_older(built: u32, loaded: u32) -> Result<(), OfiError> {
    if loaded >= built {
        return Ok(());
    }
    let v = |x: u32| format!("{}.{}", ofi_sys::fi_major(x), ofi_sys::fi_minor(x));
    Err(OfiError {
        call: "fi_getinfo",
        code: -(ofi_sys::FI_ENOSYS as i64),
        text: format!(
            "the conduit was built against libfabric {} headers but libfabric {} is \
             loaded; run it with the library it was built against (LD_LIBRARY_PATH, or \
             `source scripts/libfabric-2.env` for the libfabric 2 of scripts/setup.sh \
             --libfabric=2)",
            v(built),
            v(loaded)
        ),
    })
}

/// The libfabric library version loaded at run time, as `(major, minor)`.
pub fn runtime_version() -> (u32, u32) {
    // SAFETY: fi_version takes no arguments and returns a number.
    let v = unsafe { ofi_sys::fi_version() };
    (ofi_sys::fi_major(v), ofi_sys::fi_minor(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ofi_sys::fi_version_num as v;

    #[test]
    fn an_older_loaded_library_is_refused_naming_both_versions() {
        assert_eq!(loaded_is_not_older(v(2, 1), v(2, 1)), Ok(()));
        assert_eq!(loaded_is_not_older(v(1, 17), v(2, 1)), Ok(()));
        let e = loaded_is_not_older(v(2, 1), v(1, 17)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "fi_getinfo failed: -38 (the conduit was built against libfabric 2.1 headers but \
             libfabric 1.17 is loaded; run it with the library it was built against \
             (LD_LIBRARY_PATH, or `source scripts/libfabric-2.env` for the libfabric 2 of \
             scripts/setup.sh --libfabric=2))"
        );
        // The library in use passes for the headers in use.
        assert_eq!(
            loaded_is_not_older(API_VERSION, runtime_api_version()),
            Ok(())
        );
    }
}
