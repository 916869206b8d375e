//! More ranks on one host than the shm provider holds addresses (256, or 128
//! ranks of 2 endpoints): with the shared-memory path carrying everything
//! between the ranks, the provider's address vector holds each rank's own
//! endpoints only and the job runs; with the path off the start-up error
//! says why and what to do.

use std::time::Duration;
use tests::{job, serial};

const AM: &str = env!("CARGO_BIN_EXE_gex-am");
const COLL: &str = env!("CARGO_BIN_EXE_gex-coll");

/// Past shm's 128 ranks: AM floods between every pair and concurrent
/// collectives on split teams, every message checked.
#[test]
fn a_hundred_and_thirty_ranks_on_shm_through_shared_memory() {
    let _g = serial();
    for (prog, args, want) in [
        (
            AM,
            &["flood", "50", "20"][..],
            "gex-am flood: ok: 6500 shorts and 2600 mediums of 8192 bytes from 130 ranks arrived exactly once",
        ),
        (COLL, &["teams"], "gex-coll teams: ok"),
    ] {
        // The tests' jobs run with the path off unless asked (`job`).
        let r = job(
            prog,
            130,
            args,
            "shm",
            &[("GASNET_SUPERNODE_MAXSIZE", "0")],
            Duration::from_secs(300),
        );
        assert_eq!(
            r.code,
            Some(0),
            "{args:?}: stdout {}\nstderr {}",
            r.stdout,
            r.stderr
        );
        assert!(r.stdout.contains(want), "{args:?}: {}", r.stdout);
    }
}

/// With the path off the provider needs every rank's 2 addresses, which shm
/// cannot hold for 129 ranks: refused at start-up with the remedies.
#[test]
fn without_the_path_shm_refuses_129_ranks_by_name() {
    let _g = serial();
    let r = job(
        AM,
        129,
        &["flood", "50", "20"],
        "shm",
        &[("GASNET_SUPERNODE_MAXSIZE", "1")],
        Duration::from_secs(300),
    );
    assert_ne!(r.code, Some(0), "stdout {}", r.stdout);
    let want = "gex-am: the address vector for 258 addresses (1 endpoint set(s) x 2 endpoints \
                x 129 ranks) cannot be opened on shm; the shm provider holds at most 256 \
                addresses (128 ranks of one endpoint set on a host): keep the shared-memory \
                path on for every rank (GASNET_SUPERNODE_MAXSIZE=0, the default, without \
                GASNET_OFI_ATOMICS=native or GASNET_OFI_COLL_RMA=on: the address vector then \
                holds this rank's own endpoints only), run fewer ranks per host, or use \
                another provider (FI_PROVIDER=tcp): fi_av_open failed: -38";
    assert!(r.stderr.contains(want), "stderr: {}", r.stderr);
}
