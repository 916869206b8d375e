//! Helpers for the multi-process tests: every job runs under a deadline,
//! in its own process group, and is checked for survivors afterwards.
#![allow(dead_code)]

mod job;
mod programs;

// Each test binary includes this module and uses a part of it.
#[allow(unused_imports)]
pub use job::{Done, Job};
#[allow(unused_imports)]
pub use programs::{client_programs, extended_programs, ClientRun, Paths};

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// One job at a time: the machine has 2 cores and the survivor checks look
/// at every process.
static SERIAL: Mutex<()> = Mutex::new(());

pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn launcher() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_gasnetrun-ofi"))
}

/// The test program (an example of this package, built by `cargo test`).
pub fn bootcheck() -> PathBuf {
    example("bootcheck")
}

/// An example program of this package (`bootcheck`, or one of the client
/// programs built here: `gex-am`, `gex-rma`, `example-gups`, ...).
///
/// `cargo test` builds examples as `examples/<name>-<hash>` (with `_` for
/// `-` in the name) and does not always refresh the `examples/<name>` link,
/// so the most recently built of these is used: a stale copy from an older
/// build cannot stand in.
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .unwrap()
        .join("examples");
    let hashed = format!("{}-", name.replace('-', "_"));
    let newest = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            (n == name || n.starts_with(&hashed)) && !n.contains('.')
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max_by_key(|(t, _)| *t)
        .map(|(_, p)| p);
    match newest {
        Some(p) => p,
        None => panic!(
            "{}/{name} is missing: run through cargo test (`cargo test -p gasnetrun-ofi` builds it)",
            dir.display()
        ),
    }
}

/// [`example`] as a command-line argument.
pub fn example_arg(name: &str) -> String {
    example(name).to_string_lossy().into_owned()
}

/// A marker unique to one test, put on the ranks' command lines.
pub fn token(name: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "tok-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// Pids (other than ours) for which `keep(pid)` holds.
pub fn pids_where(keep: impl Fn(i32) -> bool) -> Vec<i32> {
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter(|&pid| pid != me && keep(pid))
        .collect()
}

/// Pids (other than ours) whose command line contains `token`.
pub fn processes_with(token: &str) -> Vec<i32> {
    pids_where(|pid| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(token))
    })
}

/// The pids of the job's ranks: at least `n` processes marked `token`
/// whose command line starts with `program`, waited for up to `within`;
/// fails with `context` (e.g. the spawner) and the pids found otherwise.
pub fn rank_pids(
    token: &str,
    program: &str,
    n: usize,
    within: Duration,
    context: &str,
) -> Vec<i32> {
    let end = Instant::now() + within;
    loop {
        let pids: Vec<i32> = processes_with(token)
            .into_iter()
            .filter(|p| {
                std::fs::read(format!("/proc/{p}/cmdline"))
                    .is_ok_and(|c| c.starts_with(program.as_bytes()))
            })
            .collect();
        if pids.len() >= n {
            return pids;
        }
        assert!(
            Instant::now() < end,
            "{context}the ranks did not start: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Every process of the job is gone (waits up to 3 s for the last ones to
/// be reaped); kills and fails otherwise.
pub fn assert_no_survivors(token: &str) {
    let end = Instant::now() + Duration::from_secs(3);
    loop {
        let left = processes_with(token);
        if left.is_empty() {
            return;
        }
        if Instant::now() > end {
            for p in &left {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(*p),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            panic!("processes of the job survived: {left:?}");
        }
        thread::sleep(Duration::from_millis(50));
    }
}

#[allow(unused_imports)]
pub use tests::{shm_objects, shm_objects_added};
