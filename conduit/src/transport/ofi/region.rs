//! Registered memory as the transport hands it out: a libfabric memory
//! region over a mapping, and its local descriptor.

use crate::mem::Mapping;
use crate::ofi::MemoryRegion;
use crate::transport::Region;
use std::sync::Arc;

/// A libfabric memory region over a mapping.
pub type OfiRegion = MemoryRegion<Arc<Mapping>>;

/// A local descriptor (`fi_mr_desc`).
#[derive(Debug, Clone, Copy)]
pub struct Desc(pub(super) *mut libc::c_void);

// SAFETY: a descriptor is an opaque value the provider gave; it is only
// passed back to the provider.
unsafe impl Send for Desc {}
// SAFETY: as above.
unsafe impl Sync for Desc {}

impl Region for OfiRegion {
    type Desc = Desc;
    fn key(&self) -> u64 {
        MemoryRegion::key(self)
    }
    fn desc(&self) -> Desc {
        Desc(MemoryRegion::desc(self))
    }
    fn memory(&self) -> &Arc<Mapping> {
        self.owner()
    }
}
