//! How a local job ends: a rank's exit code or abort, a killed rank, a
//! rank that leaves early, signals to the launcher, and a launcher command
//! killed by a signal.

use super::common::{serial, token, Job};
use super::{bc, DEADLINE};
use std::time::Duration;

#[test]
fn exit_code_of_a_rank_is_the_job_exit_code() {
    let _g = serial();
    let t = token("exit3");
    let b = bc();
    let d = Job::start(&t, &["-n", "4", &b, &t, "exit", "1", "3"], &[]).wait(DEADLINE);
    assert_eq!(d.code, Some(3), "stderr: {}", d.err_text());
    let line = d.teardown_line();
    assert!(line.contains("rank 1 on host ") && line.contains("exited with code 3"));
}

#[test]
fn abort_ends_the_job_with_its_code() {
    let _g = serial();
    let t = token("abort");
    let b = bc();
    let d = Job::start(&t, &["-n", "3", &b, &t, "abort", "2", "5"], &[]).wait(DEADLINE);
    assert_eq!(d.code, Some(5), "stderr: {}", d.err_text());
    assert!(d.err_text().contains("rank 2 on host ") && d.err_text().contains("called abort(5)"));
}

#[test]
fn kill_9_of_one_rank_ends_the_job_within_the_exit_timeout() {
    let _g = serial();
    let t = token("kill9");
    let b = bc();
    let mut job = Job::start(
        &t,
        &["-n", "4", &b, &t, "hang"],
        &[("GASNET_EXITTIMEOUT", "3")],
    );
    let ready = job.wait_stdout(4, DEADLINE, |l| l.starts_with("ready "));
    let pid: i32 = ready
        .iter()
        .find(|l| l.starts_with("ready 2 "))
        .and_then(|l| l.split(' ').nth(2))
        .unwrap()
        .parse()
        .unwrap();
    let killed = std::time::Instant::now();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
    let d = job.wait(DEADLINE);
    let took = killed.elapsed();
    assert!(took < Duration::from_secs(3), "teardown took {took:?}");
    assert_eq!(d.code, Some(128 + 9), "stderr: {}", d.err_text());
    let line = d.teardown_line();
    assert!(
        line.starts_with("gasnetrun-ofi: rank 2 on host ")
            && line.contains("was killed by signal 9 (SIGKILL)"),
        "{}",
        line
    );
}

#[test]
fn rank_exiting_zero_early_is_torn_down_after_the_exit_timeout() {
    let _g = serial();
    let t = token("grace");
    let b = bc();
    // Rank 0 exits 0 after the barrier; the others hang in a second one.
    let d = Job::start(
        &t,
        &["-n", "3", &b, &t, "exit", "0", "0"],
        &[("GASNET_EXITTIMEOUT", "1")],
    )
    .wait(DEADLINE);
    assert_eq!(d.code, Some(1), "stderr: {}", d.err_text());
    assert!(
        d.err_text().contains("after the exit timeout"),
        "{}",
        d.err_text()
    );
    assert!(d.elapsed < Duration::from_secs(10));
}

#[test]
fn sigterm_on_the_launcher_reaches_every_rank() {
    let _g = serial();
    let t = token("term");
    let b = bc();
    let mut job = Job::start(&t, &["-v", "-n", "4", &b, &t, "hang"], &[]);
    job.wait_stdout(4, DEADLINE, |l| l.contains("] ready "));
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(job.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let d = job.wait(DEADLINE);
    assert_eq!(d.code, Some(128 + 15), "stderr: {}", d.err_text());
    for r in 0..4 {
        let want = format!("[{r}] bootcheck got SIGTERM");
        assert!(d.out.contains(&want), "missing {want:?} in {:?}", d.out);
    }
}

/// Ctrl-C while a large job is still starting its ranks: no more are
/// started, and the job ends with 130 (it used to start every rank first:
/// 800 ranks took 11 s), leaving nothing (`wait` checks). Each rank notes
/// its start in a file: far fewer than 800 may have started. (The job's
/// end was timed against 3 s before; tearing down the ranks already
/// started took 3.01 s in one CI run on 2 busy cores.)
#[test]
fn sigint_while_ranks_start_stops_the_start() {
    let _g = serial();
    let t = token("intstart");
    let started = std::env::temp_dir().join(format!("{t}.started"));
    let script = format!("echo >> '{}'; sleep 30", started.display());
    let job = Job::start(&t, &["-n", "800", "sh", "-c", &script, &t], &[]);
    std::thread::sleep(Duration::from_millis(300));
    let sent = std::time::Instant::now();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(job.child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    );
    let d = job.wait(DEADLINE);
    let took = sent.elapsed();
    let n = std::fs::read_to_string(&started).map_or(0, |s| s.lines().count());
    let _ = std::fs::remove_file(&started);
    assert_eq!(d.code, Some(128 + 2), "stderr: {}", d.err_text());
    assert!(
        n < 400,
        "{n} of 800 ranks started though SIGINT came 300 ms after the launch (the job ended {took:?} after it)"
    );
    assert!(
        took < Duration::from_secs(10),
        "the job took {took:?} to end after SIGINT (stderr: {})",
        d.err_text()
    );
}

#[test]
fn no_rank_survives_a_killed_launcher() {
    let _g = serial();
    let t = token("pdeath");
    let b = bc();
    let mut job = Job::start(&t, &["-n", "3", &b, &t, "hang"], &[]);
    job.wait_stdout(3, DEADLINE, |l| l.starts_with("ready "));
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(job.child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let d = job.wait(DEADLINE);
    assert_eq!(d.signal, Some(9));
}

/// The launcher command of the mpi and pmi spawners (here a shell that
/// kills itself, as an operator's `kill -9` of mpirun would) ended by a
/// signal the launcher did not pass on: the job ends with 128 + the signal
/// and one line saying which, not silently.
#[test]
fn a_launcher_command_killed_by_a_signal_is_reported() {
    let _g = serial();
    let t = token("cmdkill");
    for (spawner, var) in [("mpi", "MPIRUN_CMD"), ("pmi", "PMIRUN_CMD")] {
        let flag = format!("-spawner={spawner}");
        let d = Job::start(
            &t,
            &[flag.as_str(), "-n", "2", "true"],
            &[(var, "sh -c 'kill -KILL $$' %C")],
        )
        .wait(DEADLINE);
        assert_eq!(d.code, Some(137), "{spawner}: {:?}", d.err);
        assert_eq!(
            d.err,
            ["gasnetrun-ofi: sh was killed by signal 9 (SIGKILL); the job is over"],
            "{spawner}"
        );
    }
}

/// A rank that exits 0 without ever starting GASNet, while the others
/// did and wait for it in the bootstrap: the job ends at once with 1,
/// naming it (before, it waited for the exit timeout). A job none of
/// whose ranks starts GASNet (`hostname`) still exits 0.
#[test]
fn rank_exiting_zero_without_joining_ends_the_job_at_once() {
    let _g = serial();
    let t = token("nojoin");
    let b = bc();
    let script = format!("[ \"$GASNET_OFI_RANK\" = 1 ] && exit 0; exec {b} $0 hang");
    let d = Job::start(
        &t,
        &["-n", "3", "sh", "-c", &script, &t],
        &[("GASNET_EXITTIMEOUT", "20")],
    )
    .wait(DEADLINE);
    assert_eq!(d.code, Some(1), "stderr: {}", d.err_text());
    let line = d.teardown_line();
    assert!(
        line.starts_with("gasnetrun-ofi: rank 1 on host ")
            && line.contains(
                "exited with code 0 without joining the job (it never started GASNet: gex_Client_Init, gasnet_init or Client::init)"
            ),
        "{}",
        line
    );
    assert!(d.elapsed < Duration::from_secs(10), "took {:?}", d.elapsed);
    let t = token("plain");
    let d = Job::start(
        &t,
        &["-n", "3", "sh", "-c", "sleep 0.$GASNET_OFI_RANK", &t],
        &[],
    )
    .wait(DEADLINE);
    assert_eq!(d.code, Some(0), "stderr: {}", d.err_text());
}

/// The rank processes (the program itself, not its wrapper) of test
/// `token` whose name starts with `comm` (the test may run a copy named
/// `bootcheck-<hash>`, which the kernel cuts to 15 bytes).
fn programs(token: &str, comm: &str) -> Vec<i32> {
    super::common::processes_with(token)
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm"))
                .is_ok_and(|c| c.trim().starts_with(comm))
        })
        .collect()
}

/// Ranks run under a wrapper that does not `exec` (`sh -c 'prog; true'`):
/// the parent-death signal reaches the shell, not the program. Rank 1
/// never starts, so rank 0 waits in start-up for its tree child; the
/// launcher is then killed with SIGKILL. Rank 0 sees the launcher's
/// connection close and ends (it waited for ever).
#[test]
fn a_rank_waiting_for_its_tree_children_ends_when_the_launcher_is_killed() {
    let _g = serial();
    let t = token("acceptdeath");
    let b = bc();
    let script = format!("[ \"$GASNET_OFI_RANK\" = 1 ] && exec sleep 60; {b} $0 hang; true");
    let mut job = Job::start(&t, &["-n", "2", "sh", "-c", &script, &t], &[]);
    let end = std::time::Instant::now() + DEADLINE;
    while programs(&t, "bootcheck").is_empty() {
        assert!(std::time::Instant::now() < end, "rank 0 never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    // In its start-up by now (the welcome comes at once: rank 0 has no
    // parent).
    std::thread::sleep(Duration::from_millis(500));
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(job.child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let _ = job.child.wait();
    let gone = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left = programs(&t, "bootcheck");
        if left.is_empty() {
            break;
        }
        if std::time::Instant::now() > gone {
            for p in &left {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(*p),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            panic!("rank 0 ({left:?}) still waits 10 s after the launcher was killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
