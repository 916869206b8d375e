//! `gex-am core` (every kind, argument count and size) on every provider,
//! and `gex-am barrier`.

use super::{ok, run, PROVIDERS};
use tests::serial;

#[test]
fn core_every_kind_argument_count_and_size() {
    let _g = serial();
    for p in PROVIDERS {
        let r = run(4, &["core"], p, &[], 180);
        ok(&r, p);
        assert!(
            r.stdout
                .contains("gex-am core: ok: 162 request/reply pairs checked"),
            "{p}: {}",
            r.stdout
        );
        // Both Long paths were taken.
        assert!(
            !r.stdout.contains("long_inline=0 ") && !r.stdout.contains("long_rma=0 "),
            "{p}: {}",
            r.stdout
        );
    }
}

#[test]
fn core_with_udp_and_sockets() {
    let _g = serial();
    for p in ["udp", "sockets"] {
        let r = run(3, &["core"], p, &[], 180);
        ok(&r, p);
        assert!(r.stdout.contains("gex-am core: ok:"), "{p}: {}", r.stdout);
    }
}

#[test]
fn barrier_named_anonymous_and_mismatch() {
    let _g = serial();
    for p in PROVIDERS {
        let r = run(4, &["barrier"], p, &[], 120);
        ok(&r, p);
        assert!(
            r.stdout.contains(
                "gex-am barrier: ok: 54 barriers, mismatch detected, forced mismatch seen"
            ),
            "{p}: {}",
            r.stdout
        );
    }
}
