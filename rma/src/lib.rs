//! RMA protocol logic, with no libfabric in it (sans-IO).
//!
//! * [`plan`]: chunks at `max_msg_size`, remote ranges checked against the
//!   target's segment.
//! * [`aggregate`]: small implicit puts gathered into one message per
//!   target.
//! * [`put_path`]: which path a put whose source must be reusable at return
//!   ("now" local completion) takes, and the `NB_PUT_*` counters.
//! * [`ops`]: in-flight operations indexed by completion context, explicit
//!   events, implicit (NBI) counters, the failing transfer's error, and
//!   each peer's get window ([`ops::GetWindow`]: reads in flight bounded,
//!   refilled in bursts).
//! * [`vis`]: Vector / Indexed / Strided transfers validated and planned as
//!   contiguous pieces, with packing and a wire form of piece lists.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod aggregate;
pub mod atomic;
pub mod ops;
pub mod plan;
pub mod put_path;
pub mod vis;

pub use plan::Error;
