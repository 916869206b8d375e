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

/// Arguments whose segment would not fit in memory addresses are an error
/// naming them, not an arithmetic overflow (a panic).
#[test]
fn arguments_too_large_for_a_segment_are_refused() {
    let _g = serial();
    let huge = "100000000000000000";
    for (name, args, want) in [
        (
            "hello",
            vec![huge],
            "hello: rank 0: the segment for segment_pages x page size (100000000000000000 x ",
        ),
        (
            "stencil",
            vec!["18446744073709551615", "1"],
            "stencil: rank 0: cells=18446744073709551615 per rank on 2 ranks is too many",
        ),
        (
            "long_gather",
            vec![huge, "800"],
            "long_gather: rank 0: the segment for ranks x blocks x len \
             (2 x 100000000000000000 x 800 bytes) is larger than this machine can address",
        ),
    ] {
        let r = job(
            &example(name),
            2,
            &args,
            "shm",
            &[],
            Duration::from_secs(60),
        );
        assert_eq!(r.code, Some(1), "{name}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(want), "{name}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{name}: {}", r.stderr);
    }
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

/// Run `hello` alone (a job of one, no launcher) with `stdout` as its
/// standard output; its exit code and stderr. Killed after 60 s.
fn hello_alone(stdout: std::process::Stdio) -> (Option<i32>, String) {
    let mut cmd = std::process::Command::new(example("hello"));
    cmd.env("GASNET_QUIET", "1");
    let b = tests::run_bounded_to(&mut cmd, stdout, Duration::from_secs(60)).expect("start hello");
    assert!(!b.timed_out, "hello alone did not finish within 60 s");
    (
        b.output.status.code(),
        String::from_utf8_lossy(&b.output.stderr).into_owned(),
    )
}

#[test]
fn a_full_stdout_is_an_error_and_a_closed_pipe_is_not() {
    let _g = serial();
    let full = std::fs::File::create("/dev/full").expect("open /dev/full");
    let (code, err) = hello_alone(full.into());
    assert_eq!(code, Some(1), "stdout on /dev/full: {err}");
    assert!(
        err.contains("hello: cannot write to stdout:") && !err.contains("panicked"),
        "{err}"
    );
    // A reader that closed its end (`hello | head -0`): nothing to report.
    let (r, w) = std::io::pipe().expect("a pipe");
    drop(r);
    let (code, err) = hello_alone(w.into());
    assert_eq!(code, Some(0), "stdout a closed pipe: {err}");
    assert!(!err.contains("panicked"), "{err}");
}
