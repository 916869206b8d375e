//! Ending a job: the start-up deadline of ssh jobs, teardown (SIGTERM,
//! then SIGKILL after a grace, then giving up on what does not end), and
//! draining the ranks' output.

use super::{Job, Teardown, HARD_GRACE, TERM_GRACE};
use crate::launch::plan::ranks_of_host;
use crate::proc::signal_group;
use bootstrap::wire::{write_frame, Msg};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::io::Write;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

impl Job {
    /// `"; rank(s) 3 stopped (SIGSTOP or a debugger)"` for the ranks of
    /// this host still running that are stopped (empty if none): why a job
    /// hung, for the teardown's line. Remote ranks are not looked at.
    pub(super) fn stopped_note(&self) -> String {
        let stopped: Vec<String> = (0..self.n)
            .filter(|&r| self.ends[r].is_none())
            .filter(|&r| self.rank_pid[r].is_some_and(crate::proc::is_stopped))
            .map(|r| r.to_string())
            .collect();
        if stopped.is_empty() {
            String::new()
        } else {
            format!(
                "; rank(s) {} stopped (SIGSTOP or a debugger)",
                stopped.join(", ")
            )
        }
    }

    /// A rank that exited 0 without ever saying hello, in a job where
    /// other ranks did: it never started GASNet, and the ranks that did
    /// wait for it in the bootstrap, which cannot complete. The job ends
    /// now with 1, naming it, rather than after the exit timeout. (A job
    /// whose ranks all exit without a hello runs a program that does not
    /// use GASNet, such as `hostname`: nothing to end.)
    pub(super) fn check_left_before_joining(&mut self) {
        if self.teardown.is_some() || self.code.is_some() || self.running == 0 {
            return;
        }
        if !self.listen.iter().any(Option::is_some) {
            return;
        }
        let Some(r) = (0..self.n)
            .find(|&r| self.listen[r].is_none() && self.ends[r].is_some_and(|e| e.is_success()))
        else {
            return;
        };
        gex_env::eprintln_whole!(
            "gasnetrun-ofi: rank {r} on host {} exited with code 0 without joining the job (it \
             never started GASNet: gex_Client_Init, gasnet_init or Client::init) while {} rank(s) \
             that did wait for it; terminating the job",
            self.host_name(r),
            self.listen.iter().flatten().count()
        );
        self.code = Some(1);
        self.start_teardown(Signal::SIGTERM);
    }

    /// ssh jobs: once every agent answered, the start-up deadline is
    /// gone; when it passes first, the job ends naming the hosts whose
    /// agent never answered (a host that does not answer ssh, or hangs).
    pub(super) fn check_startup(&mut self, now: Instant) {
        let Some((at, took)) = self.startup else {
            return;
        };
        // Hosts whose agent never answered and whose ranks are not known
        // to be lost yet (an ssh session that ended counts them lost).
        let silent: Vec<usize> = (0..self.hosts.len())
            .filter(|&h| {
                self.agents[h].is_none()
                    && ranks_of_host(&self.host_of, h)
                        .iter()
                        .any(|&r| self.ends[r].is_none())
            })
            .collect();
        if silent.is_empty() && self.agents.iter().all(Option::is_some) {
            self.startup = None;
            return;
        }
        if now < at || self.teardown.is_some() {
            return;
        }
        self.startup = None;
        if silent.is_empty() {
            return;
        }
        let names: Vec<String> = silent
            .iter()
            .map(|&h| format!("{h} ({})", self.hosts[h]))
            .collect();
        gex_env::eprintln_whole!(
            "gasnetrun-ofi: host(s) {} did not answer within {:.1}s of the start (the ssh \
             session or its agent never reported; GASNET_SSH_STARTUP_TIMEOUT); terminating the \
             job",
            names.join(", "),
            took.as_secs_f64()
        );
        self.code.get_or_insert(1);
        self.start_teardown(Signal::SIGTERM);
    }

    /// The hard deadline passed: kill what is left and stop waiting.
    pub(super) fn give_up(&mut self) {
        for &pid in self.ssh_pid.iter().flatten() {
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
        self.kill_all(Signal::SIGKILL);
        if self.running > 0 {
            gex_env::eprintln_whole!(
                "gasnetrun-ofi: {} rank(s) did not report their end; giving up on them",
                self.running
            );
            self.code.get_or_insert(1);
        }
    }

    pub(super) fn start_teardown(&mut self, sig: Signal) {
        let now = Instant::now();
        let kill_at = now + TERM_GRACE.min(self.timeout);
        self.teardown = Some(Teardown {
            kill_at,
            hard_at: kill_at + HARD_GRACE,
            killed: false,
        });
        self.kill_all(sig);
    }

    pub(super) fn kill_host(&mut self, host: usize, sig: Signal) {
        if let Some(s) = &mut self.agents[host] {
            let _ = write_frame(s, &Msg::Kill { signal: sig as i32 }.encode());
        } else if let Some(pid) = self.ssh_pid[host] {
            // No agent yet: ending ssh closes the agent's stdin, which
            // makes it kill its ranks.
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGTERM);
        }
    }

    pub(super) fn kill_all(&mut self, sig: Signal) {
        for r in 0..self.n {
            if self.ends[r].is_none() {
                if let Some(pid) = self.rank_pid[r] {
                    signal_group(pid, sig);
                }
            }
        }
        for h in 0..self.hosts.len() {
            let busy = ranks_of_host(&self.host_of, h)
                .iter()
                .any(|&r| self.ends[r].is_none() && self.rank_pid[r].is_none());
            if busy {
                self.kill_host(h, sig);
            }
        }
    }

    pub(in crate::launch) fn finish_output(&mut self) {
        let fw = std::mem::take(&mut self.forwarders);
        if fw.is_empty() {
            return;
        }
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for f in fw {
                let _ = f.join();
            }
            let _ = tx.send(());
        });
        let _ = rx.recv_timeout(Duration::from_secs(2));
        let _ = std::io::stdout().flush();
    }
}
