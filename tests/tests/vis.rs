//! VIS (vector, indexed and strided puts and gets) over real providers,
//! through gasnetrun-ofi: the `gex-vis` program on 4 ranks, with the
//! shared-memory path off (RMA with several iovs per call, small pieces
//! packed into AMs) and on (memory copies).

use std::time::Duration;
use tests::{job, serial};

const PROG: &str = env!("CARGO_BIN_EXE_gex-vis");

#[test]
fn every_form_on_every_provider_and_bad_requests() {
    let _g = serial();
    let runs = [
        ("shm", "1"),
        ("tcp", "1"),
        ("sockets", "1"),
        ("udp", "1"),
        ("shm", "0"),
    ];
    for (p, maxsize) in runs {
        for (mode, line) in [
            ("all", "gex-vis all: ok: 6 VIS put/get pairs per rank (vector, indexed with few large and many small pieces; strided 3-D sub-block) checked"),
            ("bad", "gex-vis bad: ok: 4 bad VIS requests refused and nothing was written"),
        ] {
            let r = job(
                PROG,
                4,
                &[mode],
                p,
                &[("GASNET_SUPERNODE_MAXSIZE", maxsize)],
                Duration::from_secs(180),
            );
            let what = format!("{p} (GASNET_SUPERNODE_MAXSIZE={maxsize}) {mode}");
            assert_eq!(r.code, Some(0), "{what}: {}\n{}", r.stdout, r.stderr);
            assert!(r.stdout.contains(line), "{what}: {}\n{}", r.stdout, r.stderr);
            if mode == "all" && maxsize == "1" {
                // Several pieces per RMA call, and small pieces packed.
                for zero in ["VIS_IOV_CALLS=0 ", "VIS_PACKED=0\n"] {
                    assert!(!r.stdout.contains(zero), "{what}: a path was never taken: {}", r.stdout);
                }
            }
            if mode == "all" && maxsize == "0" {
                assert!(
                    r.stdout.contains("VIS_IOV_CALLS=0 VIS_PACKED=0\n"),
                    "{what}: the shared-memory path should copy: {}",
                    r.stdout
                );
            }
        }
    }
}
