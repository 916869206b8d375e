//! Active Message conformance over real providers, through gasnetrun-ofi:
//! the `gex-am` program (testcore/testam-style) on shm and tcp;ofi_rxm
//! (and sockets, udp;ofi_rxd where a test says).

#[path = "am/core_and_barrier.rs"]
mod core_and_barrier;
#[path = "am/errors.rs"]
mod errors;
#[path = "am/floods.rs"]
mod floods;
#[path = "am/longs.rs"]
mod longs;
#[path = "am/stats.rs"]
mod stats;

use std::time::Duration;
use tests::{job, JobResult};

const AM: &str = env!("CARGO_BIN_EXE_gex-am");
const PROVIDERS: [&str; 2] = ["shm", "tcp"];

fn run(n: usize, args: &[&str], provider: &str, vars: &[(&str, &str)], secs: u64) -> JobResult {
    job(AM, n, args, provider, vars, Duration::from_secs(secs))
}

fn ok(r: &JobResult, what: &str) {
    assert_eq!(
        r.code,
        Some(0),
        "{what}: stdout {}\nstderr {}",
        r.stdout,
        r.stderr
    );
}
