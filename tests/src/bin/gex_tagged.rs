//! Tagged-messaging conformance program (modelled on MPI point-to-point
//! test suites), run under `gasnetrun-ofi`. Usage: `gex-tagged <mode>`:
//!
//! * `all`: sizes 0 B .. 16 MiB with data checked; wildcard source and
//!   tag; the ordering rule under a flood; probe and iprobe; matched
//!   probe (FI_CLAIM: a claimed message is not matched by other receives,
//!   a dropped one is discarded); synchronous
//!   send (the receiver posts a second late and the sender must still be
//!   waiting); truncation (an error status, nothing written past the
//!   buffer); 1,000 outstanding non-blocking operations; wait-any,
//!   wait-some and test; isolation of communicators (the same tag on the
//!   world, a dup and a split); cancel of a posted receive; raw receives
//!   (into the segment through its raw view, and a window of receives
//!   sharing one buffer); the client's progress reading the tagged queues
//!   one round in 16 while nothing tagged is pending, every round while
//!   something is, and a flood sent to a rank waiting in an AM barrier
//!   (`gex_tagged/idle.rs`).
//! * `in-handler`: every tagged call that waits or makes progress, made
//!   inside an AM handler, is refused by name (`gex_tagged/in_handler.rs`).
//! * `foreign`: requests returned out of their scope and used in another
//!   are refused (`gex_tagged/foreign.rs`).
//! * `limits`: a tag, a rank and a source beyond the layout are refused;
//!   each error's text is printed (one per line) for the test to check.
//! * `layout`: print the tag layout chosen.
//! * `threads <threads> <comms> <iters>`: the multi-threaded client;
//!   each thread ping-pongs on its own duplicated communicators (with
//!   `GASNET_OFI_THREAD_GROUPING=1` each picks its own context).
//! * `dup-threads <threads> <rounds>`: the threads duplicate communicators
//!   at the same time; every new one must get its own id.
//! * `pingpong <bytes> <iters>` and `bandwidth <bytes> <window> <iters>`:
//!   the benchmark's measurements between ranks 0 and 1.
//!
//! Rank 0 prints one summary line; errors print `gex-tagged: rank R: ...`
//! and end the job with code 1.

// Denied, not forbidden: the raw-receive step (`gex_tagged/raw.rs`) is
// the one module allowed `unsafe`.
#![deny(unsafe_code)]

#[path = "gex_tagged/bench.rs"]
mod bench;
#[path = "gex_tagged/checks.rs"]
mod checks;
#[path = "gex_tagged/foreign.rs"]
mod foreign;
#[path = "gex_tagged/free_pending.rs"]
mod free_pending;
#[path = "gex_tagged/idle.rs"]
mod idle;
#[path = "gex_tagged/in_handler.rs"]
mod in_handler;
#[path = "gex_tagged/layout.rs"]
mod layout;
#[path = "gex_tagged/probes.rs"]
mod probes;
#[path = "gex_tagged/raw.rs"]
mod raw;
#[path = "gex_tagged/threads.rs"]
mod threads;

use conduit::client::{Client, Options};
use tests::program::count_arg;
use tests::{fail, report};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).cloned().unwrap_or_default();
    if mode == "threads" {
        threads::main(&args);
    }
    if mode == "dup-threads" {
        threads::dup_main(&args);
    }
    let c = match Client::init_with(Options::new(()).tagged()) {
        Ok(c) => std::rc::Rc::new(c),
        Err(e) => {
            gex_env::eprintln_whole!("gex-tagged: {}", e.report());
            std::process::exit(1);
        }
    };
    let num = |i: usize, d: usize| count_arg(&args, i, d);
    let r = match mode.as_str() {
        "all" => checks::all(&c),
        "in-handler" => in_handler::in_handler(c.clone()),
        "foreign" => foreign::foreign(&c),
        "free-pending" => free_pending::free_pending(&c),
        "limits" => layout::limits(&c),
        "layout" => layout::layout(&c),
        "pingpong" => (|| bench::pingpong(&c, num(2, 8)?, num(3, 10_000)?))(),
        "bandwidth" => (|| bench::bandwidth(&c, num(2, 1 << 20)?, num(3, 64)?, num(4, 20)?))(),
        _ => Err(fail(format!(
            "usage: gex-tagged all|in-handler|foreign|free-pending|limits|layout|threads <t> <c> <n>|dup-threads <t> <rounds>|pingpong <bytes> <iters>|bandwidth <bytes> <window> <iters> (got {mode:?})"
        ))),
    };
    match r {
        Ok(line) => {
            if c.rank() == 0 {
                println!("gex-tagged {mode}: {line}");
            }
            if let Err(e) = c.barrier() {
                gex_env::eprintln_whole!("gex-tagged: rank {}: {}", c.rank(), e.report());
                c.exit(1);
            }
            c.exit(0);
        }
        Err(e) => {
            gex_env::eprintln_whole!("gex-tagged: rank {}: {}", c.rank(), report(&*e));
            c.exit(1);
        }
    }
}
