//! Helpers for the multi-process tests: every job runs under a deadline,
//! in its own process group, and is checked for survivors afterwards.
#![allow(dead_code)]

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
///
/// `cargo test` builds examples as `examples/bootcheck-<hash>` and does not
/// always refresh the `examples/bootcheck` link, so the most recently built
/// of these is used: a stale copy from an older build cannot stand in.
pub fn bootcheck() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .unwrap()
        .join("examples");
    let newest = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            (n == "bootcheck" || n.starts_with("bootcheck-")) && !n.contains('.')
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max_by_key(|(t, _)| *t)
        .map(|(_, p)| p);
    match newest {
        Some(p) => p,
        None => panic!(
            "{}/bootcheck is missing: run through cargo test",
            dir.display()
        ),
    }
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

/// Pids (other than ours) whose command line contains `token`.
pub fn processes_with(token: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        if let Ok(c) = std::fs::read(format!("/proc/{pid}/cmdline")) {
            if String::from_utf8_lossy(&c).contains(token) {
                v.push(pid);
            }
        }
    }
    v
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

/// A running launcher.
pub struct Job {
    pub child: Child,
    pub token: String,
    pub started: Instant,
    out_rx: Receiver<String>,
    err_rx: Receiver<String>,
    pub out: Vec<String>,
    pub err: Vec<String>,
}

pub struct Done {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub out: Vec<String>,
    pub err: Vec<String>,
    pub elapsed: Duration,
}

impl Done {
    pub fn err_text(&self) -> String {
        self.err.join("\n")
    }
    /// Assert that the job succeeded and that each of `ranks` ranks
    /// printed (bootcheck's `args` mode) exactly the arguments `sent`.
    pub fn assert_args_intact(&self, sent: &[&str], ranks: usize) {
        assert_eq!(self.code, Some(0), "{:?}", self.err);
        let want = format!("{:?}", sent);
        for r in 0..ranks {
            assert!(
                self.out.contains(&format!("args {r} {want}")),
                "{:?}",
                self.out
            );
        }
    }

    pub fn out_text(&self) -> String {
        self.out.join("\n")
    }
}

fn lines(r: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for l in BufReader::new(r).lines() {
            let Ok(l) = l else { break };
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

impl Job {
    /// Start `gasnetrun-ofi args...` with extra variables.
    pub fn start(token: &str, args: &[&str], envs: &[(&str, &str)]) -> Job {
        let mut cmd = Command::new(launcher());
        cmd.args(args).envs(envs.iter().copied());
        Job::start_cmd(token, cmd)
    }

    /// Start any command (e.g. the launcher under `ip netns exec`) as a job:
    /// own process group, piped output, no stdin.
    pub fn start_cmd(token: &str, mut cmd: Command) -> Job {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
        let out_rx = lines(child.stdout.take().unwrap());
        let err_rx = lines(child.stderr.take().unwrap());
        Job {
            child,
            token: token.to_string(),
            started: Instant::now(),
            out_rx,
            err_rx,
            out: Vec::new(),
            err: Vec::new(),
        }
    }

    fn drain(&mut self) {
        while let Ok(l) = self.out_rx.try_recv() {
            self.out.push(l);
        }
        while let Ok(l) = self.err_rx.try_recv() {
            self.err.push(l);
        }
    }

    /// Wait until `count` stdout lines match `pred` (all lines so far count).
    pub fn wait_stdout(
        &mut self,
        count: usize,
        within: Duration,
        pred: impl Fn(&str) -> bool,
    ) -> Vec<String> {
        let end = Instant::now() + within;
        loop {
            self.drain();
            let m: Vec<String> = self.out.iter().filter(|l| pred(l)).cloned().collect();
            if m.len() >= count {
                return m;
            }
            if Instant::now() > end {
                let why = format!(
                    "timed out waiting for output; stdout {:?} stderr {:?}",
                    self.out, self.err
                );
                self.kill();
                panic!("{why}");
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Wait until a stderr line matches.
    pub fn wait_stderr(&mut self, within: Duration, pred: impl Fn(&str) -> bool) -> String {
        let end = Instant::now() + within;
        loop {
            self.drain();
            if let Some(l) = self.err.iter().find(|l| pred(l)) {
                return l.clone();
            }
            if Instant::now() > end {
                let why = format!(
                    "timed out waiting for stderr; stdout {:?} stderr {:?}",
                    self.out, self.err
                );
                self.kill();
                panic!("{why}");
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kill the launcher's group and every process of the job.
    pub fn kill(&mut self) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = self.child.wait();
        for p in processes_with(&self.token) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }

    /// Wait for the launcher to end within `deadline` (a hung job fails the
    /// test after being killed), then check that nothing of the job is left.
    pub fn wait(mut self, deadline: Duration) -> Done {
        use std::os::unix::process::ExitStatusExt;
        let end = self.started + deadline;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > end {
                self.drain();
                let why = format!(
                    "job did not end within {deadline:?}; stdout {:?} stderr {:?}",
                    self.out, self.err
                );
                self.kill();
                panic!("{why}");
            }
            thread::sleep(Duration::from_millis(10));
        };
        let elapsed = self.started.elapsed();
        // Output threads end when the pipes close.
        let tail = Instant::now() + Duration::from_secs(2);
        loop {
            self.drain();
            let closed = matches!(
                self.out_rx.try_recv(),
                Err(mpsc::TryRecvError::Disconnected)
            ) && matches!(
                self.err_rx.try_recv(),
                Err(mpsc::TryRecvError::Disconnected)
            );
            if closed || Instant::now() > tail {
                break;
            }
            thread::sleep(Duration::from_millis(10));
        }
        assert_no_survivors(&self.token);
        Done {
            code: status.code(),
            signal: status.signal(),
            out: std::mem::take(&mut self.out),
            err: std::mem::take(&mut self.err),
            elapsed,
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}
