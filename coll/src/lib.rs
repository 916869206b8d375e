//! Collectives over teams, sans IO: the protocol logic of broadcast,
//! reduction to one and reduction to all (GASNet-EX's `gex_Coll_*NB`), in
//! the manner of Open MPI's coll/ofi component, with no networking in it.
//! The machines emit [`Msg`]s to send and consume received ones; the
//! engine moves the bytes, tagging each message with the team and the
//! collective's sequence number.
//!
//! * [`team`]: teams and their split by colour and key (`gex_TM_Split`).
//! * [`tree`]: the n-ary fan-out tree.
//! * [`op`]: built-in and user-defined reduction operators.
//! * [`mat2`]: a non-commutative user operator (2x2 matrix product), to
//!   check that a reduction keeps rank order.
//! * [`msg`]: messages, shape parameters and chunking.
//! * [`bcast`]: broadcast down a fan-out tree.
//! * [`reduce`]: reduction to one, by binary tree or serially.
//! * [`allreduce`]: reduction to rank 0, then broadcast.
//! * [`rdb`]: reduction to all by recursive doubling (commutative
//!   operators, one chunk).
//! * [`flat`]: reduction to all by direct exchange (small payloads on
//!   small teams, any operator).
//! * [`cache`]: the registered collective cache: layout, slot headers
//!   and credits for one-sided delivery.
//! * [`engine`]: per-team sequence numbers, concurrent collectives and
//!   early messages.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod allreduce;
pub mod bcast;
pub mod cache;
pub mod engine;
mod error;
pub mod flat;
mod machine;
pub mod mat2;
pub mod msg;
pub mod op;
pub mod rdb;
pub mod reduce;
pub mod team;
pub mod tree;

pub use allreduce::Allreduce;
pub use bcast::Broadcast;
pub use engine::{CollOp, TeamColl};
pub use error::Error;
pub use msg::{Chunking, Config, Kind, Msg};
pub use op::{DType, Op, Reduction, UserFn, UserOp};
pub use reduce::Reduce;
pub use team::{split, SplitEntry, Team};
pub use tree::Tree;
