//! The examples of this crate run under `gasnetrun-ofi -n 4` on shm
//! and tcp;ofi_rxm and pass their self-checks.

use std::path::PathBuf;
use std::time::Duration;
use tests::{job, serial};

/// `target/<profile>/examples/<name>` (cargo test builds this crate's
/// examples; this test runs from `target/<profile>/deps/`).
fn example(name: &str) -> String {
    let exe = std::env::current_exe().expect("the test's own path");
    let profile_dir: PathBuf = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("tests live in target/<profile>/deps")
        .to_path_buf();
    let path = profile_dir.join("examples").join(name);
    assert!(
        path.exists(),
        "{} not found: build it with `cargo build -p gex-examples --examples` (cargo test does)",
        path.display()
    );
    path.display().to_string()
}

fn run(name: &str, args: &[&str], want: &str) {
    let prog = example(name);
    for p in ["shm", "tcp"] {
        let r = job(&prog, 4, args, p, &[], Duration::from_secs(180));
        assert_eq!(r.code, Some(0), "{name} on {p}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stdout.starts_with(want), "{name} on {p}: {}", r.stdout);
    }
}

#[test]
fn am_ring() {
    let _g = serial();
    run(
        "am_ring",
        &["50"],
        "am_ring: ok: 50 laps around 4 ranks, 200 hops, trail checked",
    );
}

#[test]
fn gups_by_am_and_atomics_by_am() {
    let _g = serial();
    run("gups", &["5000"], "gups: ok: 40000 XOR updates by AM");
}

#[test]
fn stencil_matches_the_serial_computation() {
    let _g = serial();
    run(
        "stencil",
        &["500", "100"],
        "stencil: ok: 2000 cells on 4 ranks, 100 steps, matches the serial result",
    );
}

#[test]
fn long_gather_checks_payloads_in_place() {
    let _g = serial();
    run(
        "long_gather",
        &["16", "5000"],
        "long_gather: ok: 64 Longs of 5000 bytes from 4 ranks, checked in the handler and in the segment",
    );
}

#[test]
fn a_bad_argument_is_refused_with_its_name() {
    let _g = serial();
    let r = job(
        &example("stencil"),
        2,
        &["500", "ten"],
        "shm",
        &[],
        Duration::from_secs(60),
    );
    assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(
            "stencil: steps=\"ten\" is not accepted: expected a whole number of at least 0"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn hello_starts_attaches_meets_and_exits() {
    let _g = serial();
    run(
        "hello",
        &["4"],
        "hello: ok: 4 ranks started, attached 16 KiB each and met in a barrier",
    );
}
