//! Child processes of rank 0 (`fi_pingpong`, `mpirun`): started in their
//! own process group, waited for with a deadline, and ended with all their
//! descendants when they overrun it or when rank 0 gives up on them.

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a group has after SIGTERM before it gets SIGKILL.
const GRACE: Duration = Duration::from_secs(3);

/// What a finished child printed, and how it ended.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// Whether it exited with status 0.
    pub ok: bool,
    /// How it ended (`exit status: 1`, `signal: 9 (SIGKILL)`).
    pub status: String,
}

/// A running child, leader of its own process group; the group is ended
/// when this is dropped before the child was waited for.
pub struct Guard {
    child: Option<Child>,
    what: String,
}

impl Guard {
    /// Start `cmd` (stdin closed, stdout and stderr piped) as the leader of
    /// a new process group; `what` names it in errors.
    pub fn spawn(mut cmd: Command, what: &str) -> Result<Guard, String> {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {what}: {e}"))?;
        Ok(Guard {
            child: Some(child),
            what: what.to_string(),
        })
    }

    /// Whether the child has exited (without reaping its output).
    pub fn exited(&mut self) -> Option<String> {
        let c = self.child.as_mut()?;
        c.try_wait().ok().flatten().map(|s| s.to_string())
    }

    /// All of standard error (call once the child has exited).
    pub fn stderr(&mut self) -> String {
        let mut s = String::new();
        if let Some(e) = self.child.as_mut().and_then(|c| c.stderr.as_mut()) {
            let _ = e.read_to_string(&mut s);
        }
        s
    }

    /// Wait (in short sleeps) until the child exits or `until` passes; past
    /// it the group is ended and an error returned.
    pub fn wait(&mut self, until: Instant) -> Result<Output, String> {
        let Some(mut child) = self.child.take() else {
            return Err(format!("{}: no process", self.what));
        };
        // Read the pipes on threads so a chatty child never blocks.
        let reader = |p: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut s = Vec::new();
                if let Some(mut p) = p {
                    let _ = p.read_to_end(&mut s);
                }
                String::from_utf8_lossy(&s).into_owned()
            })
        };
        let t_out = reader(child.stdout.take().map(|p| Box::new(p) as _));
        let t_err = reader(child.stderr.take().map(|p| Box::new(p) as _));
        loop {
            match child.try_wait() {
                Ok(Some(st)) => {
                    return Ok(Output {
                        stdout: t_out.join().unwrap_or_default(),
                        stderr: t_err.join().unwrap_or_default(),
                        ok: st.success(),
                        status: st.to_string(),
                    });
                }
                Ok(None) => {}
                Err(e) => {
                    end_group(&mut child);
                    return Err(format!("waiting for {}: {e}", self.what));
                }
            }
            if Instant::now() > until {
                end_group(&mut child);
                return Err(format!("{} did not finish in time; killed", self.what));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// SIGTERM to the child's group, SIGKILL after the grace period if the
/// child is still there, then reap it. A group already gone is no error.
fn end_group(child: &mut Child) {
    let Ok(id) = i32::try_from(child.id()) else {
        let _ = child.kill();
        let _ = child.wait();
        return;
    };
    let pg = Pid::from_raw(id);
    if child.try_wait().ok().flatten().is_none() {
        let _ = killpg(pg, Signal::SIGTERM);
        let until = Instant::now() + GRACE;
        while child.try_wait().ok().flatten().is_none() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    // Whatever is left of the group (the leader may have gone first).
    let _ = killpg(pg, Signal::SIGKILL);
    let _ = child.wait();
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            end_group(&mut c);
        }
    }
}
