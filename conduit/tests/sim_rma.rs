//! RMA over the in-memory simulator: every path under faults, error
//! completions with their numbers, and soundness: on every way out of a
//! call or scope (normal return, an error met during a wait, a post
//! failing part-way through a split transfer, a failure while the scope
//! finishes, a panic inside the scope, a handler's panic while the scope
//! finishes, an owned buffer's handle dropped) no transfer is left that
//! could still read or write the caller's buffer.

mod sim;

#[path = "sim_rma/errors.rs"]
mod errors;
#[path = "sim_rma/get_bounce.rs"]
mod get_bounce;
#[path = "sim_rma/get_window.rs"]
mod get_window;
#[path = "sim_rma/owned.rs"]
mod owned;
#[path = "sim_rma/panics.rs"]
mod panics;
#[path = "sim_rma/paths.rs"]
mod paths;
#[path = "sim_rma/poll_before_post.rs"]
mod poll_before_post;

use conduit::client::Client;
use conduit::transport::sim::{SimFabric, SimTransport};

type SimClient = Client<(), SimTransport>;

const SEG: usize = 1 << 20;

fn pattern(seed: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i * 7 + seed * 13 + (i >> 9)) as u8)
        .collect()
}

/// No queued transfer of `rank` touches `buf`.
fn untouched(fabric: &SimFabric, rank: usize, buf: &[u8]) {
    let (a, b) = (buf.as_ptr() as usize, buf.as_ptr() as usize + buf.len());
    for (p, len) in fabric.pending(rank) {
        assert!(
            p + len <= a || p >= b,
            "a transfer of {len} bytes at {p:#x} still uses the caller's buffer {a:#x}..{b:#x}"
        );
    }
}
