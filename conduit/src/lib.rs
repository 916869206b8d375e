//! The conduit: a GASNet-EX-style PGAS communication runtime over libfabric.
//!
//! * [`config`]: the one typed configuration read from `GASNET_*` variables.
//! * [`ofi`]: the safe wrapper over libfabric (info, fabric, domain,
//!   endpoints, completion queues, address vectors, memory regions).
//! * [`profile`]: per-provider capability profiles.
//! * [`select`]: provider and device selection.
//! * [`pshm`]: the shared-memory path between ranks of one host.

pub mod boot;
pub mod client;
pub mod cma_probe;
mod copy;
pub mod hugepages;
pub use gex_config as config;
pub mod mem;
pub mod ofi;
pub mod profile;
pub mod pshm;
pub mod select;
pub mod startup;
pub mod sync;
pub mod tagged;
pub mod transport;

/// `eprintln!` in one write (from `gex_env`): for messages of ranks that
/// share a stderr.
pub use gex_env::eprintln_whole;
