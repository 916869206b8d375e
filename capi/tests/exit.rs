//! How a C program's job ends: returning from main (no gasnet_exit) and
//! exit() run the collective exit with that status; gasnet_exit on one
//! rank ends the ranks waiting in a barrier with its code; gasnet_exit(-1)
//! on every rank is an orderly exit with status 255; gasnet_exit inside a
//! request or reply handler ends the job with its code without waiting for
//! the exit timeout, also when messages read in the same batch as the
//! handler's request wait behind it (a peer's exit message among them).

mod common;

use common::{build, job_with, setup};

#[test]
fn exit_codes_reach_the_launcher() {
    let _g = tests::serial();
    let s = setup();
    let exe = build(&s.shared, "exit.c");
    // The shared-memory path between ranks (supernode "0") and the
    // provider's ("1").
    for (provider, supernode) in [("shm", "1"), ("tcp", "1"), ("shm", "0"), ("tcp", "0")] {
        for (mode, code) in [
            ("return", 3),
            ("exit", 4),
            ("one", 5),
            ("minus", 255),
            ("handler", 6),
            ("reply", 7),
            ("batch", 6),
        ] {
            let vars = [("GASNET_SUPERNODE_MAXSIZE", supernode)];
            let r = job_with(&s.shared, &exe, 3, &[mode], provider, &vars);
            assert_eq!(
                r.code,
                Some(code),
                "{mode} on {provider}, supernode {supernode}:\n{}\n{}",
                r.stdout,
                r.stderr
            );
            for rank in 0..3 {
                assert!(
                    r.stdout.contains(&format!("exit.c: rank {rank}: {mode}")),
                    "{mode}: {}",
                    r.stdout
                );
            }
            assert!(!r.stdout.contains("passed a barrier"), "{}", r.stdout);
            // Every rank took part in the collective exit: the launcher
            // signals none of them (-1 is 255 in the status), and no rank
            // waited for the exit timeout (an exit from a handler used to
            // on the shared-memory path).
            assert!(
                !r.stderr.contains("terminating the job") && !r.stderr.contains("timed out"),
                "{mode} on {provider}, supernode {supernode}: {}",
                r.stderr
            );
        }
    }
}
