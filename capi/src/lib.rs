//! The GASNet-EX C API over the conduit: `libgasnet-ofi-seq` (SEQ: one
//! thread calls the library), with the headers `gasnetex.h`,
//! `gasnet_tools.h` and `gasnet.h` in `capi/include/`.
//!
//! Every exported function is a C entry point: it takes C's raw pointers,
//! checks what it can (NULL pointers, addresses outside a segment, handler
//! indices, argument counts, tokens that are not the running handler's),
//! and either returns a GASNet error code, where the specification returns
//! one, or ends the job with a GASNet-style fatal message naming the call
//! and the argument. The user's guide is `docs/c-api.md`.
//!
//! `unsafe` here is the foreign-function boundary itself (reading C's
//! pointers, calling C's handlers); each block says which of the C
//! caller's obligations (GASNet-EX's rules) makes it sound.

// C names, and C entry points that take raw pointers by design (they are
// `extern "C"`, called from C, where Rust's `unsafe` marker means nothing).
#![allow(non_snake_case, non_camel_case_types, clippy::not_unsafe_ptr_arg_deref)]

mod ad;
mod am;
mod am_limits;
mod barrier;
mod cdata;
mod coll;
mod coll1;
mod handlers;
mod hsl;
mod legacy;
mod npam;
mod query;
mod region;
mod rma;
mod start;
mod state;
mod team;
mod team_create;
mod tools;
mod tools_vis;
mod types;
mod value;
mod vis;

pub use types::*;
