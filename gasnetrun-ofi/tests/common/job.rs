//! A launcher run under a deadline, in its own process group, with its
//! output collected line by line.

use super::*;

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

    /// The stderr lines that contain `text`.
    pub fn err_with(&self, text: &str) -> Vec<&String> {
        self.err.iter().filter(|l| l.contains(text)).collect()
    }

    /// The launcher's one line saying why it tore the job down (a panic
    /// unless there is exactly one).
    pub fn teardown_line(&self) -> &str {
        let lines = self.err_with("terminating the job");
        assert_eq!(lines.len(), 1, "{:?}", self.err);
        lines[0]
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

    /// Wait for `n` ranks' `ready R PID` lines (bootcheck's `hang`, gex-am's
    /// `exit after-pause`); the pid of rank `rank`.
    pub fn ready_pid(&mut self, n: usize, rank: usize, within: Duration) -> i32 {
        let ready = self.wait_stdout(n, within, |l| l.starts_with("ready "));
        let tag = format!("ready {rank} ");
        ready
            .iter()
            .find_map(|l| l.strip_prefix(&tag))
            .and_then(|x| x.parse().ok())
            .unwrap_or_else(|| panic!("no pid of rank {rank} in {ready:?}"))
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
