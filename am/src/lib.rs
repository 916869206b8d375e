//! Active Message protocol logic, with no libfabric in it (sans-IO): the
//! conduit feeds it what arrived and asks it what to send; the same logic
//! runs over libfabric and over the in-memory network simulator.
//!
//! * [`wire`]: the on-the-wire message layout, validated on receipt.
//! * [`send`]: the send-path decision (to self, inject, buffered, Long
//!   inline or by RMA).
//! * [`dispatch`]: what a received message is and which handler takes it.
//! * [`handlers`]: the 256-entry handler table and its checks.
//! * [`recv`]: receive-buffer accounting (multi-receive release and
//!   recycling).
//! * [`landing`]: AM Long in one message (landing slots and their
//!   credits).
//! * [`pool`]: outbound buffer indices that grow on demand.
//! * [`barrier`]: the split-phase dissemination barrier with mismatch
//!   detection.
//! * [`exit`]: collective exit by dissemination.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod barrier;
pub mod dispatch;
mod error;
pub mod exit;
pub mod handlers;
pub mod landing;
pub mod pool;
pub mod recv;
pub mod send;
pub mod wire;

pub use error::Error;

/// Most arguments an AM carries (GASNet-EX's `gex_AM_MaxArgs()` is at least 16).
pub const MAX_ARGS: usize = 16;
