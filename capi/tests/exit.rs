//! How a C program's job ends: returning from main (no gasnet_exit) and
//! exit() run the collective exit with that status; gasnet_exit on one
//! rank ends the ranks waiting in a barrier with its code; gasnet_exit(-1)
//! on every rank is an orderly exit with status 255.

mod common;

use common::{build, job, setup};

#[test]
fn exit_codes_reach_the_launcher() {
    let _g = tests::serial();
    let s = setup();
    let exe = build(&s.shared, "exit.c");
    for provider in ["shm", "tcp"] {
        for (mode, code) in [("return", 3), ("exit", 4), ("one", 5), ("minus", 255)] {
            let r = job(&s.shared, &exe, 3, &[mode], provider);
            assert_eq!(
                r.code,
                Some(code),
                "{mode} on {provider}:\n{}\n{}",
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
            // signals none of them (-1 is 255 in the status).
            assert!(
                !r.stderr.contains("terminating the job"),
                "{mode} on {provider}: {}",
                r.stderr
            );
        }
    }
}
