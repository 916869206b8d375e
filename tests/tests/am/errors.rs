//! Exits and errors: exit codes from every place, two threads exiting at
//! once (one inside a handler), a malformed AM overtaken
//! by a peer's exit, bad input and bad counts refused, and an AM to an
//! unregistered handler.

use super::{ok, run, PROVIDERS};
use tests::serial;

#[test]
fn exit_codes_from_every_place() {
    let _g = serial();
    for p in PROVIDERS {
        for how in ["rank0", "rank1", "handler", "after-barrier"] {
            let r = run(4, &["exit", how, "7"], p, &[], 120);
            assert_eq!(r.code, Some(7), "{p} exit {how}: {}", r.stderr);
            assert!(
                !r.stderr.contains("terminating the job"),
                "{p} {how}: an orderly exit is not a teardown: {}",
                r.stderr
            );
        }
        let r = run(4, &["exit", "return", "0"], p, &[], 120);
        assert_eq!(r.code, Some(0), "{p} return from main: {}", r.stderr);
    }
}

/// Two threads of a multi-threaded rank exit at once, one from main's
/// side (it leads the exit) and one from inside the handler of a request
/// that came through shared memory, whose read it holds: the job still
/// ends with the code, not by the exit timeout (the handler's thread
/// parked holding that read, so the leader never heard the peer's exit
/// message and waited for the timeout). Also over the provider's path.
#[test]
fn two_threads_exiting_at_once_one_inside_a_handler() {
    let _g = serial();
    for p in PROVIDERS {
        for supernode in ["0", "1"] {
            let vars = [
                ("GASNET_SUPERNODE_MAXSIZE", supernode),
                ("GASNET_EXITTIMEOUT", "20"),
            ];
            let r = run(2, &["exit-threads", "5"], p, &vars, 120);
            let what = format!("{p}, supernode {supernode}");
            assert_eq!(r.code, Some(5), "{what}: {}\n{}", r.stdout, r.stderr);
            for rank in 0..2 {
                let line = format!("gex-am exit-threads: rank {rank}");
                assert!(r.stdout.contains(&line), "{what}: {}", r.stdout);
            }
            assert!(
                !r.stderr.contains("timed out") && !r.stderr.contains("terminating the job"),
                "{what}: {}",
                r.stderr
            );
        }
    }
}

/// A peer's malformed AM met inside a barrier, then the peer's exit (code
/// 0) before this rank polls: the error is printed and the job fails.
#[test]
fn a_malformed_am_overtaken_by_a_peers_exit_fails_the_job() {
    let _g = serial();
    for p in PROVIDERS {
        let r = run(2, &["exit", "malformed", "0"], p, &[], 120);
        assert_eq!(r.code, Some(1), "{p}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.lines().any(|l| l
                == "ofi-conduit (rank 1): received a short request with 1 argument from rank 0 \
                    for handler index 211, which is registered as a short request with 2 \
                    arguments (met before the job's exit; this rank exits with a failure code)"),
            "{p}: {}",
            r.stderr
        );
    }
}

/// 70 malformed AMs met inside a barrier, then the peer's exit: the 64
/// errors kept for later polls are printed, then how many were not kept,
/// and the job fails.
#[test]
fn errors_beyond_the_64_kept_are_counted_at_exit() {
    let _g = serial();
    let line = "ofi-conduit (rank 1): received a short request with 1 argument from rank 0 for \
                handler index 211, which is registered as a short request with 2 arguments (met \
                before the job's exit; this rank exits with a failure code)";
    for p in PROVIDERS {
        let r = run(2, &["exit", "malformed-flood", "0"], p, &[], 120);
        assert_eq!(r.code, Some(1), "{p}: {}\n{}", r.stdout, r.stderr);
        let kept = r.stderr.lines().filter(|l| *l == line).count();
        assert_eq!(kept, 64, "{p}: {}", r.stderr);
        assert!(
            r.stderr.lines().any(|l| l
                == "ofi-conduit (rank 1): 6 more error(s) were met while 64 waited for a poll, \
                    and not kept (met before the job's exit; this rank exits with a failure code)"),
            "{p}: {}",
            r.stderr
        );
    }
}

#[test]
fn bad_input_is_refused_with_clear_errors() {
    let _g = serial();
    for p in PROVIDERS {
        let r = run(2, &["bad"], p, &[], 120);
        ok(&r, p);
        assert!(
            r.stdout.contains("gex-am bad: ok: 7 bad inputs refused"),
            "{p}: {}",
            r.stdout
        );
    }
}

#[test]
fn message_to_unregistered_handler_ends_the_job_with_the_naming_line() {
    let _g = serial();
    for p in PROVIDERS {
        let r = run(4, &["unregistered"], p, &[], 120);
        assert_eq!(r.code, Some(1), "{p}: {}", r.stderr);
        assert!(
            r.stderr.contains("gex-am: rank 0: received an AM from rank 1 for handler index 250 with no associated handler registered"),
            "{p}: {}",
            r.stderr
        );
    }
}

/// A count or exit code that is not a number (or not an exit code) is an
/// error naming the argument, never a silent default.
#[test]
fn bad_counts_are_refused_by_name() {
    let _g = serial();
    for (args, want) in [
        (
            &["flood", "20000", "2k"][..],
            "argument 3 is '2k'; expected a whole number",
        ),
        (
            &["longs", "-5"],
            "argument 2 is '-5'; expected a whole number",
        ),
        (
            &["exit", "rank0", "300"],
            "argument 3 is '300'; expected an exit code, 0..=255",
        ),
        (
            &["exit-threads", "256"],
            "gex-am: argument 2 is '256'; expected an exit code, 0..=255",
        ),
        (
            &["exit-threads", "five"],
            "gex-am: argument 2 is 'five'; expected a whole number",
        ),
    ] {
        let r = run(2, args, "shm", &[], 60);
        assert_eq!(r.code, Some(1), "{args:?}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
    }
}

/// Ranks started with different `GASNET_OFI_MAX_MEDIUM` (each reads its
/// own environment) refuse to start, naming both values, with the
/// shared-memory path on and off and over tcp: before, a larger Medium
/// than the receiver sized its rings for panicked in the ring (a debug
/// assertion), and over the provider it was dropped and the job hung.
#[test]
fn a_max_medium_that_differs_between_ranks_is_refused() {
    let _g = serial();
    let launcher = tests::workspace_bin("gasnetrun-ofi", super::AM);
    for (p, pshm) in [("shm", "0"), ("shm", "1"), ("tcp", "1")] {
        let device = if p == "shm" { "shm" } else { "lo" };
        // Rank 0 has 512, rank 1 65536.
        let mut cmd = tests::job_command_one_rank(
            &launcher,
            2,
            super::AM.as_ref(),
            &["flood", "20", "20"],
            p,
            device,
            (0, "GASNET_OFI_MAX_MEDIUM", "512"),
        );
        cmd.env("GASNET_SUPERNODE_MAXSIZE", pshm)
            .env("GASNET_OFI_MAX_MEDIUM", "65536");
        let out = tests::run_with_deadline(&mut cmd, std::time::Duration::from_secs(60));
        tests::assert_no_survivors(super::AM);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{p} {pshm}: {err}");
        // Each rank finds the difference; the first to exit ends the job,
        // so the other's line may be cut off.
        let lines = [
            "gex-am: GASNET_OFI_MAX_MEDIUM=\"512\" is not accepted: expected the same value on every rank (rank 0 has 512, rank 1 has 65536)",
            "gex-am: GASNET_OFI_MAX_MEDIUM=\"65536\" is not accepted: expected the same value on every rank (rank 1 has 65536, rank 0 has 512)",
        ];
        assert!(
            err.lines().any(|l| lines.contains(&l)),
            "{p} {pshm}: neither rank's line in\n{err}"
        );
    }
}
