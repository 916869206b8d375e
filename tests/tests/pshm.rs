//! The shared-memory path between ranks of one host (GASNet's PSHM),
//! through gasnetrun-ofi on real providers: the conformance programs with
//! the path on (the whole job one supernode), in supernodes of 2 (a mix of
//! shared-memory and provider pairs on one host) and off; the counters show
//! which path carried what. Then what the mappings leave and who can open
//! them: nothing in /dev/shm after a normal run or after `kill -9` of a rank
//! at start-up or mid-run, and another user cannot open a rank's memory
//! files.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tests::{
    job, job_command, job_command_one_rank, processes_running, reap_survivors, run_with_deadline,
    serial, workspace_bin,
};

const AM: &str = env!("CARGO_BIN_EXE_gex-am");
const RMA: &str = env!("CARGO_BIN_EXE_gex-rma");
const PROVIDERS: [&str; 2] = ["shm", "tcp"];

/// `NAME value` of every rank's statistics file in `dir`.
fn stat(dir: &Path, rank: usize, name: &str) -> u64 {
    let text = std::fs::read_to_string(dir.join(format!("st.{rank}")))
        .unwrap_or_else(|e| panic!("statistics of rank {rank} in {}: {e}", dir.display()));
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in the statistics of rank {rank}:\n{text}"))
}

fn stats_dir(tag: &str) -> tempdir::Dir {
    tempdir::Dir::new(&format!("pshm-{tag}"))
}

mod tempdir {
    /// A directory removed when dropped.
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new(tag: &str) -> Dir {
            let p = std::env::temp_dir().join(format!("gex-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Run `prog args` on `n` ranks with `GASNET_SUPERNODE_MAXSIZE=maxsize`,
/// statistics into a fresh directory; assert it passed with `want` in its
/// output; return the directory.
fn run_ok(prog: &str, args: &[&str], n: usize, p: &str, maxsize: &str, want: &str) -> tempdir::Dir {
    run_ok_with(prog, args, n, p, maxsize, &[], want)
}

/// [`run_ok`] with more variables.
fn run_ok_with(
    prog: &str,
    args: &[&str],
    n: usize,
    p: &str,
    maxsize: &str,
    more: &[(&str, &str)],
    want: &str,
) -> tempdir::Dir {
    let dir = stats_dir(&format!("{}-{p}-{n}-{maxsize}", args[0]));
    let statsfile = dir.0.join("st.%");
    let mut env = vec![
        ("GASNET_SUPERNODE_MAXSIZE", maxsize),
        ("GASNET_STATSFILE", statsfile.to_str().unwrap()),
    ];
    env.extend_from_slice(more);
    let r = job(prog, n, args, p, &env, Duration::from_secs(180));
    let what = format!("{args:?} on {p}, {n} ranks, GASNET_SUPERNODE_MAXSIZE={maxsize} {more:?}");
    assert_eq!(
        r.code,
        Some(0),
        "{what}: stdout {}\nstderr {}",
        r.stdout,
        r.stderr
    );
    assert!(r.stdout.contains(want), "{what}: {}", r.stdout);
    dir
}

/// AMs of every kind, floods, barriers and every RMA form pass with the
/// whole job in one supernode, and then nothing goes through the provider.
#[test]
fn conformance_with_the_whole_job_in_one_supernode() {
    let _g = serial();
    for p in PROVIDERS {
        for n in [2, 4] {
            for (prog, args, want) in [
                (
                    AM,
                    &["core"][..],
                    "gex-am core: ok: 162 request/reply pairs checked",
                ),
                (AM, &["flood", "20000", "2000"], "arrived exactly once"),
                (AM, &["barrier"], "gex-am barrier: ok"),
                (RMA, &["all"], "gex-rma all: ok"),
            ] {
                let d = run_ok(prog, args, n, p, "0", want);
                for rank in 0..n {
                    let shared = stat(&d.0, rank, "AM_SHARED");
                    let provider =
                        stat(&d.0, rank, "AM_INJECT") + stat(&d.0, rank, "AM_SEND_BUFFERED");
                    assert!(shared > 0, "{args:?} {p} rank {rank}: AM_SHARED 0");
                    assert_eq!(
                        provider, 0,
                        "{args:?} {p} rank {rank}: AMs through the provider"
                    );
                }
                if prog == RMA {
                    assert!(stat(&d.0, 0, "RMA_SHARED") > 0, "{p}: RMA_SHARED 0");
                }
            }
        }
    }
}

/// Short requests through the pairs' lanes with their replies written in
/// place (`conduit::pshm::lane`), mixed with requests and replies through
/// the rings: every message arrives exactly once with its arguments, in one
/// supernode and in supernodes of 2 (lanes within the pairs, the provider
/// between them); `GASNET_OFI_PSHM_LANES=0` and multi-threaded mode send
/// everything through the rings.
#[test]
fn lanes_carry_requests_and_replies_in_place() {
    let _g = serial();
    let want = "gex-am lanes: ok:";
    // Rank 1's handler panicked on a lane request, and the lane was
    // answered all the same.
    let all = "after a panicking handler, 20 of 20 requests through the lane";
    let none = "after a panicking handler, 0 of 20 requests through the lane";
    for (n, maxsize) in [(2, "0"), (4, "0"), (4, "2")] {
        let d = run_ok(AM, &["lanes", "2000"], n, "shm", maxsize, all);
        // Every rank has a supernode peer: it sent or answered through a
        // lane (how many depends on the timing; the 20 of 20 above is the
        // exact check).
        for rank in 0..n {
            let lane = stat(&d.0, rank, "AM_SHARED_LANE");
            assert!(
                lane > 0,
                "{n} ranks, maxsize {maxsize}, rank {rank}: AM_SHARED_LANE {lane}"
            );
        }
        if maxsize == "2" {
            let provider = stat(&d.0, 0, "AM_INJECT") + stat(&d.0, 0, "AM_SEND_BUFFERED");
            assert!(provider > 0, "rank 0 sent nothing through the provider");
        }
    }
    let off = [("GASNET_OFI_PSHM_LANES", "0")];
    let d = run_ok_with(AM, &["lanes", "2000"], 3, "tcp", "0", &off, none);
    for rank in 0..3 {
        assert_eq!(
            stat(&d.0, rank, "AM_SHARED_LANE"),
            0,
            "lanes off, rank {rank}"
        );
        assert!(stat(&d.0, rank, "AM_SHARED") > 0, "lanes off, rank {rank}");
    }
    // One rank with the lanes off: the supernode uses none (a lane only a
    // sender used would never be read).
    let dir = stats_dir("lanes-one-off");
    let statsfile = dir.0.join("st.%");
    let out = rank_one_differs(
        3,
        ("GASNET_OFI_PSHM_LANES", "0"),
        &["lanes", "500"],
        &[("GASNET_STATSFILE", statsfile.as_os_str())],
        Duration::from_secs(120),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains(want) && text.contains(none), "{text}");
    for rank in 0..3 {
        assert_eq!(
            stat(&dir.0, rank, "AM_SHARED_LANE"),
            0,
            "one rank off, rank {rank}"
        );
    }
}

/// Supernodes of 2 on a host of 4 ranks: pairs (0,1) and (2,3) use shared
/// memory, every other pair the provider, in one job; the same programs
/// pass and both paths carried messages on every rank.
#[test]
fn supernodes_of_two_mix_shared_memory_and_provider_pairs() {
    let _g = serial();
    for p in PROVIDERS {
        for (prog, args, want) in [
            (AM, &["core"][..], "gex-am core: ok"),
            (AM, &["flood", "20000", "2000"], "arrived exactly once"),
            (AM, &["barrier"], "gex-am barrier: ok"),
            (RMA, &["all"], "gex-rma all: ok"),
        ] {
            let d = run_ok(prog, args, 4, p, "2", want);
            // Rank 0 reaches rank 1 through shared memory and ranks 2 and 3
            // through the provider (its barrier rounds alone do both).
            let shared = stat(&d.0, 0, "AM_SHARED");
            let provider = stat(&d.0, 0, "AM_INJECT") + stat(&d.0, 0, "AM_SEND_BUFFERED");
            assert!(
                shared > 0 && provider > 0,
                "{args:?} {p} rank 0: shared {shared}, provider {provider}"
            );
        }
    }
}

/// `GASNET_SUPERNODE_MAXSIZE=1` turns the path off: every AM goes through
/// the provider.
#[test]
fn maxsize_one_turns_the_path_off() {
    let _g = serial();
    let d = run_ok(AM, &["core"], 4, "tcp", "1", "gex-am core: ok");
    for rank in 0..4 {
        assert_eq!(stat(&d.0, rank, "AM_SHARED"), 0, "rank {rank}");
        assert!(stat(&d.0, rank, "AM_INJECT") > 0, "rank {rank}");
    }
}

/// Threads sending AMs and doing RMA to every rank at once, through the
/// rings (one shared endpoint, and one endpoint per thread: a ring set per
/// endpoint).
#[test]
fn threads_through_shared_memory() {
    let _g = serial();
    for eps in ["shared", "own"] {
        let d = run_ok(
            AM,
            &["threads", "2", eps, "1000"],
            4,
            "tcp",
            "0",
            "1125 AMs each way per thread pair arrived exactly once",
        );
        // Multi-threaded mode keeps the rings: no lanes.
        for rank in 0..4 {
            assert_eq!(stat(&d.0, rank, "AM_SHARED_LANE"), 0, "{eps} rank {rank}");
        }
        run_ok(
            RMA,
            &["threads", "2", eps, "15"],
            4,
            "tcp",
            "0",
            "15 rounds of put/get to every rank",
        );
    }
}

/// A job of `n` ranks of `gex-am ARGS` over tcp;ofi_rxm in one supernode
/// (`GASNET_SUPERNODE_MAXSIZE=0`, plus `env`) in which rank 1 alone sets
/// `differs`.
fn rank_one_differs(
    n: usize,
    differs: (&str, &str),
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
    deadline: Duration,
) -> std::process::Output {
    let launcher = workspace_bin("gasnetrun-ofi", AM);
    let (var, value) = differs;
    let mut cmd = job_command_one_rank(
        &launcher,
        n,
        Path::new(AM),
        args,
        "tcp",
        "lo",
        (1, var, value),
    );
    cmd.env("GASNET_SUPERNODE_MAXSIZE", "0");
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_with_deadline(&mut cmd, deadline)
}

/// A bad value is refused by name before anything starts.
#[test]
fn bad_values_are_refused_by_name() {
    let _g = serial();
    let r = job(
        AM,
        2,
        &["core"],
        "tcp",
        &[("GASNET_SUPERNODE_MAXSIZE", "two")],
        Duration::from_secs(60),
    );
    r.assert_refused_by_launcher(
        "GASNET_SUPERNODE_MAXSIZE=\"two\" is not accepted: expected a whole number from 0 to 4294967295",
    );
    // Ranks that disagree: rank 1 sets 2, rank 0 keeps 0.
    let out = rank_one_differs(
        2,
        ("GASNET_SUPERNODE_MAXSIZE", "2"),
        &["core"],
        &[],
        Duration::from_secs(60),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "the shared-memory path: GASNET_SUPERNODE_MAXSIZE=0 on rank 0 but 2 on rank 1: every rank needs the same value"
        ) || err.contains(
            "the shared-memory path: GASNET_SUPERNODE_MAXSIZE=2 on rank 1 but 0 on rank 0: every rank needs the same value"
        ),
        "{err}"
    );
    reap_survivors(AM, Duration::from_secs(5));
    let r = job(
        AM,
        2,
        &["core"],
        "tcp",
        &[
            ("GASNET_SUPERNODE_MAXSIZE", "0"),
            ("GASNET_OFI_PSHM_RING_SIZE", "1K"),
        ],
        Duration::from_secs(60),
    );
    // The ring's least size depends on the provider's largest AM: the
    // ranks check it, not the launcher.
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "GASNET_OFI_PSHM_RING_SIZE=\"1K\" is not accepted: expected a size of at least"
        ),
        "{}",
        r.stderr
    );
}

/// What /dev/shm holds.
/// What appeared in /dev/shm since `before` (names that went away since
/// are another job's, e.g. a previous test's ranks still ending).
fn new_in_dev_shm(before: &BTreeSet<String>) -> Vec<String> {
    dev_shm().difference(before).cloned().collect()
}

fn dev_shm() -> BTreeSet<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The memory files (`/memfd:gasnet-ofi-*`) process `pid` holds: (fd path,
/// name).
fn memfds(pid: u32) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return out;
    };
    for e in dir.flatten() {
        if let Ok(t) = std::fs::read_link(e.path()) {
            let t = t.to_string_lossy().into_owned();
            if t.starts_with("/memfd:gasnet-ofi-") {
                out.push((e.path().to_string_lossy().into_owned(), t));
            }
        }
    }
    out
}

/// A 2-rank `gex-rma attach-hang` job over tcp;ofi_rxm with the shared path
/// on, in its own process group.
fn hanging_job() -> std::process::Child {
    let launcher = workspace_bin("gasnetrun-ofi", RMA);
    let mut cmd = job_command(
        &launcher,
        2,
        Path::new(RMA),
        &["attach-hang", "1048576"],
        "tcp",
        "lo",
    );
    cmd.env("GASNET_SUPERNODE_MAXSIZE", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.spawn().expect("start gasnetrun-ofi")
}

/// Wait (up to 60 s) until `ready` holds, else kill the job and fail.
fn wait_until(child: &mut std::process::Child, what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        if Instant::now() > deadline {
            kill_group(child);
            panic!("{what} did not happen within 60 s");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn kill_group(child: &mut std::process::Child) {
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let _ = child.wait();
    reap_survivors(RMA, Duration::from_secs(5));
}

/// Wait (up to 60 s) for the launcher to end the job after a rank died.
fn wait_end(child: &mut std::process::Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(Some(st)) = child.try_wait() {
            assert!(!st.success(), "the job survived a killed rank");
            break;
        }
        if Instant::now() > deadline {
            kill_group(child);
            panic!("the job did not end within 60 s of a rank's SIGKILL");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(reap_survivors(RMA, Duration::from_secs(5)).is_empty());
}

/// Nothing of the job is left in /dev/shm: after a normal run, after a
/// rank's `kill -9` during start-up and after one mid-run (its segment
/// attached and mapped by its peer). The mappings are memory files with no
/// name in any file system, so there is nothing to unlink.
#[test]
fn dev_shm_holds_nothing_after_a_run_or_a_kill() {
    let _g = serial();
    let before = dev_shm();
    run_ok(RMA, &["all"], 2, "tcp", "0", "gex-rma all: ok");
    assert_eq!(
        new_in_dev_shm(&before),
        Vec::<String>::new(),
        "after a normal run"
    );

    // At start-up: the first rank seen is killed at once.
    let mut child = hanging_job();
    let mut victim = 0;
    wait_until(&mut child, "a rank starting", || {
        victim = processes_running(RMA).first().copied().unwrap_or(0);
        victim != 0
    });
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(victim as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    wait_end(&mut child);
    assert_eq!(
        new_in_dev_shm(&before),
        Vec::<String>::new(),
        "after a kill -9 at start-up"
    );

    // Mid-run: both ranks hold their inbox and segment, then one dies.
    let mut child = hanging_job();
    wait_until(&mut child, "both ranks attached", || {
        let pids = processes_running(RMA);
        pids.len() == 2
            && pids
                .iter()
                .all(|&p| memfds(p).iter().any(|(_, n)| n.contains("segment")))
    });
    let pids = processes_running(RMA);
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pids[1] as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    wait_end(&mut child);
    assert_eq!(
        new_in_dev_shm(&before),
        Vec::<String>::new(),
        "after a kill -9 mid-run"
    );
}

/// The owner's user can open a rank's memory files through /proc (that is
/// how the supernode's peers map them); another user cannot.
#[test]
fn another_user_cannot_open_the_mappings() {
    let _g = serial();
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test runs the other user's attempt with setpriv, which needs root: run the tests as root"
    );
    let mut child = hanging_job();
    let mut files = Vec::new();
    wait_until(&mut child, "a rank attached", || {
        files = processes_running(RMA)
            .first()
            .map(|&p| memfds(p))
            .unwrap_or_default();
        files.iter().any(|(_, n)| n.contains("segment"))
            && files.iter().any(|(_, n)| n.contains("inbox"))
    });
    // A rank also holds a peer's file for a moment while it maps it (opened
    // through /proc, mapped, closed), so a file listed above may be gone by
    // now: such a one is skipped, and the rank's own segment and inbox,
    // which it holds for the whole run, must both have been checked.
    let (mut segments, mut inboxes) = (0, 0);
    for (path, name) in &files {
        // The owner: readable.
        let mine = std::fs::File::open(path);
        if matches!(&mine, Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
            continue;
        }
        // Nobody (uid/gid 65534), without root's capabilities.
        let other = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .args(["head", "-c", "1", path])
            .output();
        if mine.is_err() || other.is_err() {
            kill_group(&mut child);
        }
        assert!(
            mine.is_ok(),
            "the owner cannot open {path} ({name}): {mine:?}"
        );
        let other = other.expect("run setpriv (util-linux)");
        if other.status.success() {
            kill_group(&mut child);
            panic!("user 65534 opened {path} ({name})");
        }
        let err = String::from_utf8_lossy(&other.stderr);
        if err.contains("No such file") {
            continue; // a peer's file, closed since (see above)
        }
        if !err.contains("Permission denied") {
            kill_group(&mut child);
            panic!("user 65534 on {path}: expected Permission denied, got {err}");
        }
        segments += usize::from(name.contains("segment"));
        inboxes += usize::from(name.contains("inbox"));
    }
    kill_group(&mut child);
    assert!(
        segments > 0 && inboxes > 0,
        "checked {segments} segment and {inboxes} inbox files of {files:?}: \
         a rank's own must stay open while it runs"
    );
}
