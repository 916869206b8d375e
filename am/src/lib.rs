//! Active Message protocol logic, independent of libfabric calls.
//!
//! * [`wire`]: the on-the-wire message layout (header, arguments, payload)
//!   with validation of everything a peer sends.

pub mod wire;

/// Most arguments an AM carries (GASNet-EX's `gex_AM_MaxArgs()` is at least 16).
pub const MAX_ARGS: usize = 16;
