//! Faults in jobs of the client itself (gex-am over shm and tcp;ofi_rxm,
//! 4 ranks under the local spawner): a rank killed with SIGKILL during
//! start-up, during a flood and during the collective exit, and a rank
//! stopped with SIGSTOP (a hung peer) while another exits. Each job must
//! end within its deadline with the expected exit code and one line naming
//! the rank, leaving no process and nothing in /dev/shm.

mod common;

use common::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(60);
const PROVIDERS: [(&str, &str); 2] = [("shm", "shm"), ("tcp;ofi_rxm", "lo")];

/// gex-am, built as an example of this package.
fn gex_am() -> String {
    example_arg("gex-am")
}

/// Start gex-am `args` on 4 ranks over `provider`.
fn start(t: &str, provider: (&str, &str), args: &[&str], timeout: &str) -> Job {
    let am = gex_am();
    let mut a = vec!["-n", "4", am.as_str()];
    a.extend_from_slice(args);
    a.push(t);
    Job::start(
        t,
        &a,
        &[
            ("FI_PROVIDER", provider.0),
            ("GASNET_OFI_DEVICE", provider.1),
            ("GASNET_QUIET", "1"),
            ("GASNET_EXITTIMEOUT", timeout),
        ],
    )
}

/// The job ended as a rank's SIGKILL should end it: exit 137, one line
/// naming that rank, nothing left.
fn ended_by_kill(d: &Done, what: &str, objects: &[String]) {
    assert_eq!(d.code, Some(128 + 9), "{what}: {:?}", d.err);
    let lines = d.err_with("killed by signal 9 (SIGKILL)");
    assert_eq!(lines.len(), 1, "{what}: {:?}", d.err);
    assert!(
        lines[0].starts_with("gasnetrun-ofi: rank "),
        "{what}: {:?}",
        d.err
    );
    assert_eq!(
        shm_objects_added(objects),
        Vec::<String>::new(),
        "{what}: objects left in /dev/shm"
    );
}

#[test]
fn kill_9_of_a_rank_during_start_up_and_during_a_flood() {
    let _g = serial();
    for p in PROVIDERS {
        let objects = shm_objects();
        // Start-up: as soon as the ranks exist.
        let t = token("kill-start");
        let job = start(&t, p, &["core"], "5");
        let victim = rank_pids(&t, &gex_am(), 4, DEADLINE, "")[2];
        let _ = kill(Pid::from_raw(victim), Signal::SIGKILL);
        let d = job.wait(DEADLINE);
        ended_by_kill(&d, &format!("{} start-up", p.0), &objects);

        // A flood long enough to be in the middle of it.
        let t = token("kill-flood");
        let job = start(&t, p, &["flood", "5000000", "100000"], "5");
        let victim = rank_pids(&t, &gex_am(), 4, DEADLINE, "")[1];
        std::thread::sleep(Duration::from_millis(1500));
        let killed = Instant::now();
        let _ = kill(Pid::from_raw(victim), Signal::SIGKILL);
        let d = job.wait(DEADLINE);
        ended_by_kill(&d, &format!("{} flood", p.0), &objects);
        assert!(
            killed.elapsed() < Duration::from_secs(10),
            "{}: the job took {:?} to end after the kill",
            p.0,
            killed.elapsed()
        );
    }
}

/// Rank 3 is stopped (a hung peer); rank 0 calls exit(7) 2 s after the
/// barrier. The job must end within the exit timeout (3 s) plus the
/// launcher's SIGTERM-to-SIGKILL grace, with rank 0's code, naming the
/// stopped rank, and the stopped rank killed.
#[test]
fn a_stopped_rank_does_not_hold_up_another_ranks_exit() {
    let _g = serial();
    for p in PROVIDERS {
        let objects = shm_objects();
        let t = token("sigstop");
        let mut job = start(&t, p, &["exit", "after-pause", "7"], "3");
        let pid = job.ready_pid(4, 3, DEADLINE);
        let _ = kill(Pid::from_raw(pid), Signal::SIGSTOP);
        let d = job.wait(DEADLINE);
        assert_eq!(d.code, Some(7), "{}: {:?}", p.0, d.err);
        assert!(
            d.elapsed < Duration::from_secs(20),
            "{}: took {:?}",
            p.0,
            d.elapsed
        );
        // The ranks that waited for rank 3 give up after the exit timeout
        // (the conduit says so) and the launcher's one line names the
        // stopped rank.
        let named = d.err_with("terminating the job");
        assert_eq!(named.len(), 1, "{}: {:?}", p.0, d.err);
        assert!(
            named[0].starts_with("gasnetrun-ofi: rank ")
                && named[0].ends_with("; rank(s) 3 stopped (SIGSTOP or a debugger)"),
            "{}: {:?}",
            p.0,
            d.err
        );
        assert_eq!(
            shm_objects_added(&objects),
            Vec::<String>::new(),
            "{}: objects left",
            p.0
        );
    }
}

/// Rank 3 is stopped, rank 0 starts the collective exit, and rank 3 is
/// then killed while the others wait for it: the job still ends promptly,
/// with rank 0's code or the kill's, naming what happened.
#[test]
fn kill_9_of_a_rank_during_the_collective_exit() {
    let _g = serial();
    for p in PROVIDERS {
        let objects = shm_objects();
        let t = token("kill-exit");
        let mut job = start(&t, p, &["exit", "after-pause", "7"], "30");
        let pid = job.ready_pid(4, 3, DEADLINE);
        let _ = kill(Pid::from_raw(pid), Signal::SIGSTOP);
        // Rank 0 exits 2 s after the barrier; the others are then in the
        // collective exit, waiting for rank 3.
        std::thread::sleep(Duration::from_millis(3000));
        let killed = Instant::now();
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        let d = job.wait(DEADLINE);
        assert!(
            killed.elapsed() < Duration::from_secs(10),
            "{}: took {:?} after the kill: {:?}",
            p.0,
            killed.elapsed(),
            d.err
        );
        assert!(
            d.code == Some(7) || d.code == Some(137),
            "{}: {:?} {:?}",
            p.0,
            d.code,
            d.err
        );
        assert!(
            d.err.iter().any(|l| l.contains("rank 3")),
            "{}: rank 3 not named: {:?}",
            p.0,
            d.err
        );
        assert_eq!(
            shm_objects_added(&objects),
            Vec::<String>::new(),
            "{}: objects left",
            p.0
        );
    }
}
