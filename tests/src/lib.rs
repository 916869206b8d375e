//! Conformance programs (in `src/bin`) and helpers for the tests that run
//! them (in `tests/`).

#![forbid(unsafe_code)]

use std::process::{Command, Output};
use std::time::Duration;

pub mod matrix;
pub mod program;
pub mod threads;

/// How a command run with [`run_bounded`] ended.
#[derive(Debug)]
pub struct Bounded {
    /// What it printed and how it ended (after a timeout: what it printed
    /// until its process group was killed, and the kill's status).
    pub output: Output,
    /// Whether the deadline passed and the process group was killed.
    pub timed_out: bool,
}

/// Run `cmd` in a process group of its own, with standard input closed and
/// its output captured; when `deadline` passes first, kill the whole process
/// group with SIGKILL. Never panics: an error means it could not start.
pub fn run_bounded(cmd: &mut Command, deadline: Duration) -> std::io::Result<Bounded> {
    run_bounded_to(cmd, std::process::Stdio::piped(), deadline)
}

/// [`run_bounded`] with standard output going to `stdout` (a file, a pipe
/// the caller closed) instead of being captured (`output.stdout` is then
/// empty).
pub fn run_bounded_to(
    cmd: &mut Command,
    stdout: std::process::Stdio,
    deadline: Duration,
) -> std::io::Result<Bounded> {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    cmd.process_group(0)
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn()?;
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(deadline) {
        Ok(out) => Ok(Bounded {
            output: out?,
            timed_out: false,
        }),
        Err(_) => {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(-pid),
                nix::sys::signal::Signal::SIGKILL,
            );
            // The pipes close once every member of the group is gone; a
            // process that left the group could hold them open, so wait
            // only a little for what was printed.
            let output = match rx.recv_timeout(Duration::from_secs(5)) {
                Ok(Ok(out)) => out,
                _ => Output {
                    status: std::process::ExitStatus::from_raw(libc::SIGKILL),
                    stdout: Vec::new(),
                    stderr: Vec::new(),
                },
            };
            Ok(Bounded {
                output,
                timed_out: true,
            })
        }
    }
}

/// Run `cmd` with a deadline; on timeout the whole process group is killed
/// and the test fails. Returns the output.
pub fn run_with_deadline(cmd: &mut Command, deadline: Duration) -> Output {
    let b = run_bounded(cmd, deadline).expect("spawn test program");
    if b.timed_out {
        panic!(
            "{cmd:?} did not finish within {deadline:?}; its process group was killed\n\
             --- what it printed to stdout before (its end) ---\n{}\n\
             --- to stderr (its end) ---\n{}",
            tail(&b.output.stdout, 8192),
            tail(&b.output.stderr, 8192)
        );
    }
    b.output
}

/// The last `max` bytes of `bytes` as text (what a hung job printed last
/// says where it stopped; the whole of it could bury the test's report).
fn tail(bytes: &[u8], max: usize) -> String {
    let from = bytes.len().saturating_sub(max);
    let text = String::from_utf8_lossy(&bytes[from..]);
    if from > 0 {
        format!("[{from} bytes before this left out]\n{text}")
    } else {
        text.into_owned()
    }
}

/// A binary of another workspace crate (e.g. `gasnetrun-ofi`), found next to
/// this package's binaries in the target directory. `cargo test
/// --workspace` builds it; a test that needs it fails with this message when
/// it is missing.
pub fn workspace_bin(name: &str, sibling: &str) -> std::path::PathBuf {
    let mut dir = std::path::Path::new(sibling)
        .parent()
        .expect("a binary path has a directory")
        .to_path_buf();
    // Examples live one level down, in `<profile>/examples/`.
    if dir.file_name().is_some_and(|n| n == "examples") {
        dir.pop();
    }
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} not found: build it first with `cargo build -p {name}` (cargo test --workspace does)",
        path.display()
    );
    path
}

/// Serialises multi-process tests within one test binary: several jobs of
/// spin-polling ranks at once on a small machine only measure the scheduler.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The outcome of a job run with [`job`].
#[derive(Debug)]
pub struct JobResult {
    /// The launcher's exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl JobResult {
    /// Assert that the launcher refused the job's environment before it
    /// started any rank: exit code 2, and standard error is the single
    /// line `gasnetrun-ofi: ...` containing `msg` (a rank that had started
    /// would have printed its own line).
    #[track_caller]
    pub fn assert_refused_by_launcher(&self, msg: &str) {
        assert_eq!(self.code, Some(2), "{}\n{}", self.stdout, self.stderr);
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert!(
            lines.len() == 1 && lines[0].starts_with("gasnetrun-ofi: ") && lines[0].contains(msg),
            "expected one line from the launcher containing {msg:?}, got:\n{}",
            self.stderr
        );
        assert!(self.stdout.is_empty(), "{}", self.stdout);
    }
}

/// Remove every inherited `GASNET_*` and `FI_*` variable from `cmd`'s
/// environment: a job sees only what its caller sets.
pub fn clear_fabric_env(cmd: &mut Command) {
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("GASNET_") || k.starts_with("FI_") {
            cmd.env_remove(&*k);
        }
    }
}

/// `launcher -n <n> <program> <args>` with a clean fabric environment
/// ([`clear_fabric_env`]) plus `FI_PROVIDER`, `GASNET_OFI_DEVICE`,
/// `GASNET_QUIET=1`, `GASNET_EXITTIMEOUT=30` and
/// `GASNET_SUPERNODE_MAXSIZE=1`: how the tests and the provider matrix
/// start a job. The shared-memory path is off so that the provider carries
/// every message, which is what these jobs test; the tests of the
/// shared-memory path (`tests/tests/pshm.rs`) set the variable themselves.
pub fn job_command(
    launcher: &std::path::Path,
    n: usize,
    program: &std::path::Path,
    args: &[&str],
    fi_provider: &str,
    device: &str,
) -> Command {
    let mut cmd = Command::new(launcher);
    cmd.arg("-n").arg(n.to_string()).arg(program).args(args);
    clear_fabric_env(&mut cmd);
    cmd.env("FI_PROVIDER", fi_provider)
        .env("GASNET_OFI_DEVICE", device)
        .env("GASNET_QUIET", "1")
        .env("GASNET_EXITTIMEOUT", "30")
        .env("GASNET_SUPERNODE_MAXSIZE", "1");
    cmd
}

/// [`job_command`] in which rank `one.0` alone runs with `one.1=one.2`:
/// the program is started through `/bin/sh`, which reads the rank the
/// launcher gives it (`GASNET_OFI_RANK`); the other ranks keep what the
/// command's environment gives them. For tests of values that must agree
/// between ranks.
pub fn job_command_one_rank(
    launcher: &std::path::Path,
    n: usize,
    program: &std::path::Path,
    args: &[&str],
    fi_provider: &str,
    device: &str,
    one: (usize, &str, &str),
) -> Command {
    let (rank, var, value) = one;
    // The value and the program's arguments travel as the shell's
    // positional parameters, never inside the script.
    let script = format!(
        "if [ \"$GASNET_OFI_RANK\" = {rank} ]; then export {var}=\"$1\"; fi; shift; exec \"$@\""
    );
    let program = program.to_string_lossy();
    let mut sh_args = vec!["-c", &script, "sh", value, &program];
    sh_args.extend_from_slice(args);
    job_command(
        launcher,
        n,
        std::path::Path::new("/bin/sh"),
        &sh_args,
        fi_provider,
        device,
    )
}

/// Run `gasnetrun-ofi -n <n> <program> <args>` with `vars` over `provider`
/// (`shm`, or an IP provider on the loopback device), with a deadline; then
/// check that no process of the job survived.
pub fn job(
    program: &str,
    n: usize,
    args: &[&str],
    provider: &str,
    vars: &[(&str, &str)],
    deadline: Duration,
) -> JobResult {
    let launcher = workspace_bin("gasnetrun-ofi", program);
    let device = if provider == "shm" { "shm" } else { "lo" };
    let mut cmd = job_command(&launcher, n, program.as_ref(), args, provider, device);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = run_with_deadline(&mut cmd, deadline);
    let res = JobResult {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_no_survivors(program);
    res
}

/// The live (not zombie) processes other than this one whose command line
/// starts with exactly `program`, looked up in /proc.
pub fn processes_running(program: &str) -> Vec<u32> {
    let mut alive = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return alive;
    };
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let first = cmd.split(|b| *b == 0).next().unwrap_or_default();
            if first == program.as_bytes() {
                let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
                // Zombies are already dead.
                if !stat.contains(") Z ") {
                    alive.push(pid);
                }
            }
        }
    }
    alive
}

/// Wait up to `grace` for every process running `program` to end; kill
/// (SIGKILL) those still alive then and return their pids (empty: none
/// survived).
pub fn reap_survivors(program: &str, grace: Duration) -> Vec<u32> {
    // The launcher reaps its ranks before it exits; allow a moment for the
    // kernel to finish tearing them down.
    let deadline = std::time::Instant::now() + grace;
    loop {
        let alive = processes_running(program);
        if alive.is_empty() {
            return alive;
        }
        if std::time::Instant::now() > deadline {
            for p in &alive {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(*p as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            return alive;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Fail if any process runs `program` (looked up in /proc) five seconds
/// after the job; such processes are killed first.
pub fn assert_no_survivors(program: &str) {
    let alive = reap_survivors(program, Duration::from_secs(5));
    assert!(
        alive.is_empty(),
        "processes of {program} survived the job: {alive:?}"
    );
}

/// An error and its sources, joined with ": " (what the conformance
/// programs print).
pub fn report(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(x) = cur {
        let t = x.to_string();
        if !s.ends_with(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = x.source();
    }
    s
}

/// What the conformance programs return: a conduit error or a failed
/// check, as text.
pub type Fallible<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// A failed check as an error.
pub fn fail(why: impl Into<String>) -> Box<dyn std::error::Error + Send + Sync> {
    why.into().into()
}

/// The shm provider's objects in /dev/shm (`<pid>:<uid>:<n>`), sorted.
pub fn shm_objects() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| {
                    let p: Vec<&str> = n.split(':').collect();
                    p.len() == 3 && p.iter().all(|x| x.parse::<u32>().is_ok())
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The shm provider's objects in /dev/shm now that were not in `before`:
/// what a job left. Objects of `before` may be gone (a dead process's
/// leftover is unlinked by a later process that got the same pid and so
/// the same names), which is not the job's doing.
pub fn shm_objects_added(before: &[String]) -> Vec<String> {
    shm_objects()
        .into_iter()
        .filter(|o| !before.contains(o))
        .collect()
}

#[cfg(test)]
mod deadline_tests {
    use super::*;

    #[test]
    fn a_job_past_its_deadline_reports_what_it_printed() {
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "echo step one; echo rank 2: step two >&2; exec sleep 30",
        ]);
        let t = std::time::Instant::now();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_with_deadline(&mut cmd, Duration::from_millis(500))
        }));
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the group was not killed"
        );
        let msg = match r {
            Ok(_) => panic!("a job past its deadline returned"),
            Err(p) => p.downcast_ref::<String>().cloned().unwrap_or_default(),
        };
        assert!(msg.contains("did not finish within 500ms"), "{msg}");
        assert!(
            msg.contains("stdout before (its end) ---\nstep one"),
            "{msg}"
        );
        assert!(
            msg.contains("stderr (its end) ---\nrank 2: step two"),
            "{msg}"
        );
    }

    #[test]
    fn tail_keeps_the_end_and_says_what_it_left_out() {
        assert_eq!(tail(b"abc", 8), "abc");
        assert_eq!(tail(b"abcdef", 2), "[4 bytes before this left out]\nef");
    }
}
