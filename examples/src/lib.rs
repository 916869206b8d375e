//! Runnable example programs for the conduit (the files beside this
//! crate's `Cargo.toml`), each self-checking and printing a one-line
//! summary:
//!
//! - `am_ring`: a ring of AM Mediums carrying a growing trail;
//! - `gups`: random-access updates by AM (XOR) and fetch-and-add by AM;
//! - `stencil`: a 1-D stencil with NBI halo puts and a barrier per step,
//!   checked against the serial computation.
//!
//! Build with `cargo build --release -p gex-examples --examples` and run
//! with `gasnetrun-ofi -n 4 target/release/examples/<name> [args]`.
//! `tests/examples.rs` runs each under 4 ranks on shm and tcp;ofi_rxm.
