//! RMA conformance program (modelled on GASNet's testsmall, testlarge and
//! testgasnet), run under `gasnetrun-ofi`. Usage: `gex-rma <mode>`:
//!
//! * `all`: every form (blocking, NB now/deferred/with-LC, NBI now/deferred,
//!   value forms; put and get) at sizes 1 B .. 4 MiB with unaligned offsets,
//!   data checked at the target (in its segment) and at the initiator (got
//!   back, and for the NB and NBI forms got again into its own segment); every put path (inject, bounce, block) taken, proved by the
//!   counters; hundreds of outstanding NB and NBI operations synced in one
//!   call; a storm of 20,000 small NBI puts (aggregated where
//!   `GASNET_OFI_PUT_AGGREGATE_LIMIT` allows, proved by NB_PUT_AGGREGATE)
//!   checked at their target.
//! * `bad`: out-of-segment, overflowing and negative (wrapped) offsets are
//!   refused and nothing is written (remote ranges, and a get's destination
//!   in the own segment).
//! * `owned`: non-blocking puts and gets with owned buffers, their handles
//!   queued across calls; waited, tested or dropped; data checked.
//! * `attach <bytes>`: attach a segment of that size and report.
//! * `overlap`: puts and gets within a rank's own segment whose ranges
//!   overlap have `memmove`'s result (`gex_rma/overlap.rs`).
//! * `skews`: gets into destinations 0 to 2,048 bytes after their source
//!   within a page, every get form, checked with the bytes around them;
//!   how many took the get bounce buffers (`gex_rma/skews.rs`).
//! * `flood`: floods of gets checked byte for byte, and how many of their
//!   transfers waited for the get window (`gex_rma/flood.rs`).
//! * `attach-uneven`: an attach refused on rank 0 only fails on every
//!   rank (none waits for ever), then all attach (`gex_rma/uneven.rs`).
//! * `attach-unmappable`: rank 1 of a host cannot map its peers' segments
//!   (one descriptor left): every rank's attach fails, then all attach.
//! * `event-sets`: an event started on one endpoint set of a
//!   multi-threaded client and waited, tested or waited among others in a
//!   scope on the other set is complete when that says so (4 MiB gets,
//!   bytes checked at once; `gex_rma/sets.rs`).
//! * `memory`: attach 1 MiB, put and get 64 KiB with the next rank, then
//!   every rank prints `gex-rma memory: rank R: VmRSS X KiB, RssAnon Y KiB`
//!   (its resident set from /proc/self/status).
//!
//! Rank 0 prints one summary line; errors print `gex-rma: rank R: ...` and
//! end the job with code 1.

// Denied, not forbidden: `gex_rma/overlap.rs` is the one module allowed
// `unsafe` (a pointer into the own segment as a transfer's local side).
#![deny(unsafe_code)]

use conduit::client::Client;
use tests::{fail, report};

#[path = "gex_rma/all.rs"]
mod all;
#[path = "gex_rma/bad.rs"]
mod bad;
#[path = "gex_rma/flood.rs"]
mod flood;
#[path = "gex_rma/memory.rs"]
mod memory;
#[path = "gex_rma/overlap.rs"]
mod overlap;
#[path = "gex_rma/owned.rs"]
mod owned;
#[path = "gex_rma/sets.rs"]
mod sets;
#[path = "gex_rma/skews.rs"]
mod skews;
#[path = "gex_rma/steps.rs"]
mod steps;
#[path = "gex_rma/storm.rs"]
mod storm;
#[path = "gex_rma/uneven.rs"]
mod uneven;
use all::all;
use bad::bad;
use memory::memory;
use owned::owned;

const SEG: usize = 16 << 20;
/// Each step writes into the peer's segment at an odd offset below this.
const AREA: usize = 8 << 20;

fn pattern(seed: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|j| (j.wrapping_mul(2654435761) >> 7 ^ seed.wrapping_mul(131) ^ j) as u8)
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).cloned().unwrap_or_default();
    if mode == "threads" {
        tests::threads::main("gex-rma", &args, 30, |_| (), tests::threads::rma);
    }
    if mode == "event-sets" {
        tests::threads::run_par("gex-rma event-sets", 2, (), sets::event_sets);
    }
    let c = match Client::init() {
        Ok(c) => c,
        Err(e) => {
            gex_env::eprintln_whole!("gex-rma: {}", e.report());
            std::process::exit(1);
        }
    };
    if mode == "std-exit" {
        // An application that ends with std::process::exit, its client
        // never closed (the shm provider's objects must still go).
        std::process::exit(3);
    }
    let r = match mode.as_str() {
        "all" => all(&c),
        "bad" => bad(&c),
        "memory" => memory(&c),
        "attach-uneven" => uneven::uneven(&c),
        "attach-unmappable" => uneven::unmappable(&c),
        "overlap" => overlap::overlap(&c),
        "skews" => skews::skews(&c),
        "flood" => flood::flood(&c),
        "owned" => c
            .attach_segment(SEG)
            .map_err(Into::into)
            .and_then(|()| owned(&c)),
        "attach" | "attach-hang" => {
            let r = tests::program::count_arg(&args, 2, 1 << 20).and_then(|bytes| {
                c.attach_segment(bytes)
                    .map(|_| format!("ok: attached {bytes} bytes"))
                    .map_err(|e| e.into())
            });
            if r.is_ok() && mode == "attach-hang" {
                println!("rank {} attached", c.rank());
                use std::io::Write;
                let _ = std::io::stdout().flush();
                // Wait to be killed (the test kills one rank with SIGKILL).
                loop {
                    if let Err(e) = c.poll() {
                        gex_env::eprintln_whole!("gex-rma: rank {}: {}", c.rank(), e.report());
                        c.exit(1);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
            r
        }
        _ => Err(fail(format!(
            "usage: gex-rma all|bad|owned|memory|attach <bytes>|attach-uneven|attach-unmappable|overlap|skews|flood|event-sets|threads <T> shared|own [count]|std-exit (got {mode:?})"
        ))),
    };
    match r {
        Ok(line) => {
            if c.rank() == 0 {
                println!("gex-rma {mode}: {line}");
            }
            // No rank exits before rank 0 printed: a peer's exit would end
            // rank 0 too (collective exit).
            if let Err(e) = c.barrier() {
                gex_env::eprintln_whole!("gex-rma: rank {}: {}", c.rank(), e.report());
                c.exit(1);
            }
            c.exit(0);
        }
        Err(e) => {
            gex_env::eprintln_whole!("gex-rma: rank {}: {}", c.rank(), report(&*e));
            c.exit(1);
        }
    }
}
