//! Active Message protocol logic, independent of libfabric calls.
//!
//! * [`wire`]: the on-the-wire message layout, validated on receipt.
//! * [`handlers`]: the 256-entry handler table and its checks.
//! * [`pool`]: outbound buffer pools that grow on demand.
//! * [`barrier`]: the split-phase dissemination barrier with mismatch
//!   detection.
//! * [`exit`]: collective exit by dissemination.

pub mod barrier;
pub mod exit;
pub mod handlers;
pub mod pool;
pub mod wire;

/// Most arguments an AM carries (GASNet-EX's `gex_AM_MaxArgs()` is at least 16).
pub const MAX_ARGS: usize = 16;
