//! Conformance programs (in `src/bin`) and helpers for the tests that run
//! them (in `tests/`).

use std::process::{Command, Output};
use std::time::Duration;

/// Run `cmd` with a deadline; on timeout the whole process group is killed
/// and the test fails. Returns the output.
pub fn run_with_deadline(cmd: &mut Command, deadline: Duration) -> Output {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().expect("spawn test program");
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(deadline) {
        Ok(out) => out.expect("wait for test program"),
        Err(_) => {
            // SAFETY: kill(2) on the process group we created; no memory is
            // involved.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            panic!("{cmd:?} did not finish within {deadline:?}; its process group was killed");
        }
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
    let mut cmd = Command::new(&launcher);
    cmd.arg("-n").arg(n.to_string()).arg(program).args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("GASNET_") || k.starts_with("FI_") {
            cmd.env_remove(k);
        }
    }
    let device = if provider == "shm" { "shm" } else { "lo" };
    cmd.env("FI_PROVIDER", provider)
        .env("GASNET_OFI_DEVICE", device)
        .env("GASNET_QUIET", "1")
        .env("GASNET_EXITTIMEOUT", "30");
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

/// Fail if any process runs `program` (looked up in /proc).
pub fn assert_no_survivors(program: &str) {
    // The launcher reaps its ranks before it exits; allow a moment for the
    // kernel to finish tearing them down.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let mut alive = Vec::new();
        if let Ok(dir) = std::fs::read_dir("/proc") {
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
                        let stat =
                            std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
                        // Zombies are already dead.
                        if !stat.contains(") Z ") {
                            alive.push(pid);
                        }
                    }
                }
            }
        }
        if alive.is_empty() {
            return;
        }
        if std::time::Instant::now() > deadline {
            for p in &alive {
                // SAFETY: kill(2) on a leftover test process; no memory involved.
                unsafe { libc::kill(*p as i32, libc::SIGKILL) };
            }
            panic!("processes of {program} survived the job: {alive:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
