//! Exits and errors: exit codes from every place, a malformed AM overtaken
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
    ] {
        let r = run(2, args, "shm", &[], 60);
        assert_eq!(r.code, Some(1), "{args:?}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
    }
}
