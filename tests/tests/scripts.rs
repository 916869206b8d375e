//! The set-up and measurement scripts refuse bad arguments with a message
//! naming the argument and what is accepted, before doing anything.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("scripts")
        .join(name)
}

fn run(name: &str, args: &[&str]) -> (Option<i32>, String) {
    let mut cmd = Command::new("bash");
    cmd.arg(script(name)).args(args);
    let out = tests::run_with_deadline(&mut cmd, Duration::from_secs(60));
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn setup_refuses_an_unknown_argument() {
    let (code, err) = run("setup.sh", &["--libfabric=3"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "setup: unknown argument '--libfabric=3'; accepted: --libfabric=1 (Debian's 1.17, \
         the default) or --libfabric=2 (2.1 built from Debian's source package)"
    );
}

#[test]
fn startup_time_refuses_a_bad_run_count() {
    let (code, err) = run("startup-time.sh", &["0"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "startup-time: RUNS must be a positive integer, not '0'"
    );
}

#[test]
fn long_exit_refuses_a_bad_run_count() {
    let (code, err) = run("long-exit.sh", &["many"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "long-exit: RUNS must be a positive integer, not 'many'"
    );
}

#[test]
fn tagged_window_refuses_a_bad_round_count() {
    let (code, err) = run("bench-tagged-window.sh", &["0"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "bench-tagged-window: ROUNDS must be a positive integer, not '0'"
    );
    let mut cmd = Command::new("bash");
    cmd.arg(script("bench-tagged-window.sh"))
        .arg("1")
        .env("BIN", "/nonexistent");
    let out = tests::run_with_deadline(&mut cmd, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "bench-tagged-window: BIN='/nonexistent' holds no gasnetrun-ofi (build with libfabric 2.1: \
         source scripts/libfabric-2.env; cargo build --release -p bench -p gasnetrun-ofi)"
    );
}

#[test]
fn benchmark_scripts_refuse_an_unknown_figure() {
    for (name, prog) in [
        ("bench-ab.sh", "bench-ab"),
        ("bench-cross.sh", "bench-cross"),
    ] {
        let (code, err) = run(name, &["old", "new", "latency"]);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert_eq!(
            err.trim_end(),
            format!("{prog}: the figure must be rtt, rtt-tagged or put, not 'latency'")
        );
    }
}

#[test]
fn bench_ab_refuses_a_bad_copy_count() {
    for bad in ["0", "00", "four", "-1"] {
        let mut cmd = Command::new("bash");
        cmd.arg(script("bench-ab.sh"))
            .args(["old", "new", "rtt"])
            .env("COPIES", bad);
        let out = tests::run_with_deadline(&mut cmd, Duration::from_secs(60));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "COPIES={bad}: {err}");
        assert_eq!(
            err.trim_end(),
            format!("bench-ab: COPIES must be a positive integer, not '{bad}'")
        );
    }
}

#[test]
fn bench_ab_refuses_a_bad_split() {
    for bad in ["fast", "-1", "0.4.5", "1e3"] {
        let mut cmd = Command::new("bash");
        cmd.arg(script("bench-ab.sh"))
            .args(["old", "new", "rtt"])
            .env("SPLIT", bad);
        let out = tests::run_with_deadline(&mut cmd, Duration::from_secs(60));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "SPLIT={bad}: {err}");
        assert_eq!(
            err.trim_end(),
            format!("bench-ab: SPLIT must be a figure in us such as 0.45, not '{bad}'")
        );
    }
}

#[test]
fn bench_ab_refuses_a_directory_without_the_binaries() {
    let (code, err) = run(
        "bench-ab.sh",
        &["/nonexistent-old", "/nonexistent-new", "put"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "bench-ab: '/nonexistent-old' holds no gasnetrun-ofi (give the target/release of a \
         build with -p bench -p gasnetrun-ofi)"
    );
}

#[test]
fn bench_gasnet_smp_refuses_bad_arguments() {
    let (code, err) = run("bench-gasnet-smp.sh", &["/nonexistent-gasnet"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "bench-gasnet-smp: GASNET_SRC '/nonexistent-gasnet' is not a directory (give a GASNet-1 source tree)"
    );
    let (code, err) = run("bench-gasnet-smp.sh", &["/tmp", "0"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "bench-gasnet-smp: ROUNDS '0' is not a positive whole number"
    );
    let (code, err) = run("bench-gasnet-smp.sh", &["/tmp", "2", "999"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "bench-gasnet-smp: ITERS '999' is below 1000 (too few round trips to time)"
    );
    let (code, err) = run("bench-gasnet-smp.sh", &["/tmp", "2", "many"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "bench-gasnet-smp: ITERS 'many' is not a positive whole number"
    );
}

#[test]
fn bench_issue15_refuses_bad_arguments() {
    for (args, want) in [
        (
            &["/tmp/out", "0"][..],
            "bench-issue15: ROUNDS '0' is not a positive whole number",
        ),
        (
            &["/tmp/out", "2", "999"][..],
            "bench-issue15: ITERS '999' is below 1000 (too few operations to time)",
        ),
        (
            &["/tmp/out", "2", "many"][..],
            "bench-issue15: ITERS 'many' is not a positive whole number",
        ),
    ] {
        let (code, err) = run("bench-issue15.sh", args);
        assert_eq!(code, Some(2), "{err}");
        assert_eq!(err.trim_end(), want);
    }
    // The binaries come from $CARGO_TARGET_DIR; missing ones are named
    // with the command that builds them.
    let mut cmd = Command::new("bash");
    cmd.arg(script("bench-issue15.sh"))
        .arg("/tmp/out")
        .env("CARGO_TARGET_DIR", "/nonexistent-target");
    let out = tests::run_with_deadline(&mut cmd, Duration::from_secs(60));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "bench-issue15: /nonexistent-target/release/gasnetrun-ofi is missing: cargo build \
         --release -p bench -p gasnetrun-ofi && cargo build --release -p conduit --example shm_floor"
    );
    // The summary refuses a directory without a run's output.
    let empty = std::env::temp_dir().join(format!("bench-issue15-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let out = tests::run_with_deadline(
        Command::new("python3")
            .arg(script("bench-issue15-summary.py"))
            .arg(&empty),
        Duration::from_secs(60),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "bench-issue15-summary: no <round>-samehost.txt in {}",
            empty.display()
        )
    );
    // A partial run's output: its error alone, nothing printed.
    let partial = empty.join("1-samehost.txt");
    std::fs::write(&partial, "gex-bench: provider shm, 2 ranks\n").unwrap();
    let out = tests::run_with_deadline(
        Command::new("python3")
            .arg(script("bench-issue15-summary.py"))
            .arg(&empty),
        Duration::from_secs(60),
    );
    std::fs::remove_dir_all(&empty).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        err.trim_end(),
        format!(
            "bench-issue15-summary: {} has no am_short_rtt row of size 8 (a failed or partial gex-bench run)",
            partial.display()
        )
    );
}

#[test]
fn gasnet1_tests_refuses_bad_arguments() {
    let (code, err) = run("gasnet1-tests.sh", &["/nonexistent-gasnet"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "gasnet1-tests: GASNET_SRC '/nonexistent-gasnet' is not a directory (give a GASNet source tree)"
    );
    let (code, err) = run("gasnet1-tests.sh", &["/tmp"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "gasnet1-tests: /tmp/tests/test.h is missing (give a GASNet source tree)"
    );
    let dir = std::env::temp_dir().join(format!("gasnet1-args-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(dir.join("tests/test.h"), "").unwrap();
    let d = dir.to_str().unwrap();
    let (code, err) = run("gasnet1-tests.sh", &[d, "testam;rm"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "gasnet1-tests: 'testam;rm' is not NAME[:ARG...][=CODE] (for example testam or testexit:3=3)"
    );
    let (code, err) = run("gasnet1-tests.sh", &[d, "testexit:3=3"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        format!("gasnet1-tests: {d}/tests/testexit.c does not exist")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `bench/c/raw_atomic.c` (run by `bench-coll.sh`), built as that script
/// builds it, refuses a wrong argument count, a bad ITERS and a provider
/// without what it needs, before it forks (so a refusal is reported once).
#[test]
fn raw_atomic_refuses_bad_arguments() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("raw_atomic");
    let cflags = Command::new("pkg-config")
        .args(["--cflags", "--libs", "libfabric"])
        .output()
        .expect("pkg-config is needed to build bench/c/raw_atomic.c: apt-get install pkg-config");
    assert!(
        cflags.status.success(),
        "pkg-config finds no libfabric: apt-get install libfabric-dev"
    );
    let flags = String::from_utf8(cflags.stdout).unwrap();
    let mut cc = Command::new("cc");
    cc.args(["-O2", "-o"])
        .arg(&exe)
        .arg(root.join("bench/c/raw_atomic.c"))
        .args(flags.split_whitespace());
    let built = tests::run_with_deadline(&mut cc, Duration::from_secs(120));
    assert!(
        built.status.success(),
        "cc failed (apt-get install gcc libfabric-dev): {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let run = |args: &[&str]| {
        let mut cmd = Command::new(&exe);
        cmd.args(args);
        let out = tests::run_with_deadline(&mut cmd, Duration::from_secs(60));
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = run(&[]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "usage: raw_atomic ITERS [PROVIDER] (0 arguments given)"
    );
    let (code, err) = run(&["10", "shm", "extra"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "usage: raw_atomic ITERS [PROVIDER] (3 arguments given)"
    );
    for bad in ["0", "many", "10x", "100000001"] {
        let (code, err) = run(&[bad]);
        assert_eq!(code, Some(2), "{bad}: {err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "raw_atomic: ITERS must be a count from 1 to 100000000, not '{bad}'\n\
                 usage: raw_atomic ITERS [PROVIDER]"
            )
        );
    }
    let (code, err) = run(&["10", "no-such-provider"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.starts_with(
            "raw_atomic: no 'no-such-provider' RDM endpoint with FI_MSG, FI_RMA and FI_ATOMIC"
        ) && err.contains("see fi_info -l"),
        "{err}"
    );
}
