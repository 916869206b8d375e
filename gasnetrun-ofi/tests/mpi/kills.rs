//! Kills under mpirun in the middle of a flood over shm, of one rank or
//! of the launcher itself: the job ends, and nothing is left behind (no
//! object in /dev/shm, no pid directory, no process).

use super::common::{example_arg, rank_pids, serial, shm_objects, shm_objects_added, token, Job};
use super::{need_mpirun, DEADLINE, TEMPLATE};
use std::time::Duration;

/// A rank of an mpi- or pmi-spawned job (the ranks are mpirun's children,
/// not the launcher's) killed with SIGKILL in the middle of a flood over
/// shm: the job ends, and what the killed rank's shm endpoints left in
/// /dev/shm is removed by the launcher, as are its pid directory and every
/// process.
#[test]
fn kill_9_of_a_rank_under_mpirun_leaves_nothing_in_dev_shm() {
    let _g = serial();
    need_mpirun();
    let am = example_arg("gex-am");
    for (spawner, var) in [("mpi", "MPIRUN_CMD"), ("pmi", "PMIRUN_CMD")] {
        let before = shm_objects();
        let dirs_before = pid_dirs();
        let t = token(&format!("kill-{spawner}"));
        let (job, ranks) = flood_under(spawner, var, &am, &t);
        let victim = ranks[1];
        let left: Vec<String> = shm_objects()
            .into_iter()
            .filter(|o| o.starts_with(&format!("{victim}:")))
            .collect();
        assert!(
            !left.is_empty(),
            "{spawner}: rank pid {victim} has no shm objects to leave"
        );
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(victim),
            nix::sys::signal::Signal::SIGKILL,
        );
        let d = job.wait(DEADLINE);
        assert_ne!(
            d.code,
            Some(0),
            "{spawner}: the job ignored the kill: {}",
            d.err_text()
        );
        assert_eq!(
            shm_objects_added(&before),
            Vec::<String>::new(),
            "{spawner}: objects left in /dev/shm"
        );
        assert_eq!(pid_dirs(), dirs_before, "{spawner}: pid directory left");
    }
}

/// The launcher's pid directories in the temporary directory.
fn pid_dirs() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(std::env::temp_dir())
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("gasnetrun-ofi."))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A 4-rank `gex-am flood` over shm under `spawner` (`var` its template
/// variable), 1.5 s into the flood: the job and its ranks' pids.
fn flood_under(spawner: &str, var: &str, am: &str, t: &str) -> (Job, Vec<i32>) {
    let flag = format!("-spawner={spawner}");
    let job = Job::start(
        t,
        &[&flag, "-n", "4", am, "flood", "5000000", "100000", t],
        &[
            (var, TEMPLATE),
            ("FI_PROVIDER", "shm"),
            ("GASNET_OFI_DEVICE", "shm"),
            ("GASNET_QUIET", "1"),
        ],
    );
    let ranks = rank_pids(t, am, 4, DEADLINE, &format!("{spawner}: "));
    // In the middle of the flood: every rank has its endpoints.
    std::thread::sleep(Duration::from_millis(1500));
    (job, ranks)
}

/// The launcher itself killed with SIGKILL in the middle of a flood over
/// shm under mpirun (no handler of its runs): the ranks end (mpirun gets
/// SIGTERM, and each rank watches its parent), and the janitor the
/// launcher started removes the pid directory and whatever the ranks'
/// shm endpoints left in /dev/shm.
#[test]
fn kill_9_of_the_launcher_under_mpirun_leaves_nothing() {
    let _g = serial();
    need_mpirun();
    let am = example_arg("gex-am");
    for (spawner, var) in [("mpi", "MPIRUN_CMD"), ("pmi", "PMIRUN_CMD")] {
        let before = shm_objects();
        let dirs_before = pid_dirs();
        let t = token(&format!("killl-{spawner}"));
        let (job, ranks) = flood_under(spawner, var, &am, &t);
        assert_ne!(
            pid_dirs(),
            dirs_before,
            "{spawner}: the launcher made no pid directory"
        );
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(job.child.id() as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        let d = job.wait(DEADLINE);
        assert_eq!(d.code, None, "{spawner}: the launcher was not killed");
        // The ranks end within 250 ms of mpirun, the janitor waits up to
        // 10 s for them.
        let end = std::time::Instant::now() + Duration::from_secs(20);
        let alive = |p: &i32| std::path::Path::new(&format!("/proc/{p}")).exists();
        loop {
            let left: Vec<i32> = ranks.iter().copied().filter(alive).collect();
            let done = left.is_empty()
                && shm_objects_added(&before).is_empty()
                && pid_dirs() == dirs_before;
            if done {
                break;
            }
            if std::time::Instant::now() > end {
                for p in &left {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(*p),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
                panic!(
                    "{spawner}: 20 s after the launcher's SIGKILL: ranks alive {left:?}, \
                     objects in /dev/shm {:?} (before: {before:?}), pid directories {:?} \
                     (before: {dirs_before:?})",
                    shm_objects(),
                    pid_dirs()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
