//! The multi-threaded client over real providers, through gasnetrun-ofi:
//! `gex-am threads T` and `gex-rma threads T`, 4 ranks of T = 2 and 4
//! threads each, sending AMs and doing RMA to every rank at once (every
//! message exactly once, every byte checked), with one shared endpoint and
//! with one endpoint per thread, on shm, tcp;ofi_rxm and sockets.

use std::time::Duration;
use tests::{job, serial};

const AM: &str = env!("CARGO_BIN_EXE_gex-am");
const RMA: &str = env!("CARGO_BIN_EXE_gex-rma");
const PROVIDERS: [&str; 3] = ["shm", "tcp", "sockets"];

fn matrix(prog: &str, name: &str, count: &str, want: &str) {
    let _g = serial();
    for p in PROVIDERS {
        for t in ["2", "4"] {
            for eps in ["shared", "own"] {
                let r = job(
                    prog,
                    4,
                    &["threads", t, eps, count],
                    p,
                    &[],
                    Duration::from_secs(120),
                );
                let what = format!("{name} threads {t} {eps} on {p}");
                assert_eq!(
                    r.code,
                    Some(0),
                    "{what}: stdout {}\nstderr {}",
                    r.stdout,
                    r.stderr
                );
                let line = format!("{name} threads: ok: {t} threads x 4 ranks, {want}");
                assert!(r.stdout.contains(&line), "{what}: {}", r.stdout);
            }
        }
    }
}

#[test]
fn am_threads_every_message_exactly_once() {
    matrix(
        AM,
        "gex-am",
        "1000",
        "1125 AMs each way per thread pair arrived exactly once",
    );
}

#[test]
fn rma_threads_every_byte_checked() {
    matrix(RMA, "gex-rma", "15", "15 rounds of put/get to every rank");
}

#[test]
fn bad_thread_arguments_are_refused() {
    let _g = serial();
    for args in [
        &["threads", "0", "own"][..],
        &["threads", "2", "some"],
        &["threads"],
    ] {
        let r = job(AM, 1, args, "shm", &[], Duration::from_secs(60));
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr
                .contains("usage: gex-am threads <threads 1..=64> shared|own [count]"),
            "{args:?}: {}",
            r.stderr
        );
    }
}
