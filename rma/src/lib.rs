//! RMA protocol logic, independent of libfabric calls.
//!
//! * [`put_path`]: which path a put whose source must be reusable at return
//!   ("now" local completion) takes, and the `NB_PUT_*` counters.
//! * [`ops`]: in-flight operations indexed by completion context, explicit
//!   events and implicit (NBI) counters.

pub mod ops;
pub mod put_path;
