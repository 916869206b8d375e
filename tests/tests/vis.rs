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

/// A strided get and put of 2 Mi one-byte pieces each, on both paths: the
/// data arrives, and the peak resident set grows by at most 16 MiB (whole
/// plans took about 80 MiB with copies and 250 MiB over the provider).
#[test]
fn millions_of_pieces_planned_a_window_at_a_time() {
    let _g = serial();
    for maxsize in ["1", "0"] {
        let r = job(
            PROG,
            2,
            &["window"],
            "shm",
            &[("GASNET_SUPERNODE_MAXSIZE", maxsize)],
            Duration::from_secs(180),
        );
        let what = format!("shm (GASNET_SUPERNODE_MAXSIZE={maxsize}) window");
        assert_eq!(r.code, Some(0), "{what}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stdout.contains("gex-vis window: a strided get and put of 2097152 one-byte pieces each, checked; peak resident set grew by at most 16384 KiB"),
            "{what}: {}\n{}",
            r.stdout,
            r.stderr
        );
    }
}
