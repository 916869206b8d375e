//! Supervision of a local or ssh job: one loop over the events of the
//! bootstrap listener, the reaper and the signal thread decides the job's
//! exit code and tears it down (see the module documentation of
//! [`crate::launch`]).

mod spawn;

use super::accept::Ev;
use super::plan::{ranks_of_host, ranks_text, Plan};
use bootstrap::tcp::{tree_children, tree_parent};
use bootstrap::wire::{write_frame, Msg, RankEnd};
use nix::sys::signal::Signal;
use std::collections::HashMap;
use std::net::TcpStream;
use std::process::ChildStdin;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Longest wait between SIGTERM and SIGKILL in a teardown.
const TERM_GRACE: Duration = Duration::from_secs(3);
/// How long the launcher waits for ssh sessions and agents after SIGKILL.
const HARD_GRACE: Duration = Duration::from_secs(5);
/// How long the launcher waits, after an ssh session ended, for its agent's
/// last reports still in flight on the control stream.
const AGENT_DRAIN: Duration = Duration::from_secs(2);

#[derive(Clone, Copy)]
enum Proc {
    Rank(usize),
    Ssh(usize),
}

struct Teardown {
    kill_at: Instant,
    hard_at: Instant,
    killed: bool,
}

/// A local or ssh job under supervision: its processes, each rank's
/// bootstrap state and end, and the teardown in progress.
pub(super) struct Job {
    n: usize,
    radix: usize,
    timeout: Duration,
    verbose: bool,
    hosts: Vec<String>,
    host_of: Vec<usize>,
    procs: HashMap<u32, Proc>,
    rank_pid: Vec<Option<u32>>,
    ends: Vec<Option<RankEnd>>,
    running: usize,
    listen: Vec<Option<String>>,
    ctl: Vec<Option<TcpStream>>,
    welcomed: Vec<bool>,
    finalized: Vec<Option<i32>>,
    ssh_pid: Vec<Option<u32>>,
    ssh_running: usize,
    ssh_stdin: Arc<Mutex<Vec<ChildStdin>>>,
    agents: Vec<Option<TcpStream>>,
    /// Hosts whose agent's control stream is still open (connected, no
    /// end of stream read yet).
    agent_open: Vec<bool>,
    /// An ssh session that ended while its agent's stream was still open:
    /// its end and the time after which ranks not yet reported are lost.
    ssh_ended_early: Vec<Option<(RankEnd, Instant)>>,
    pub(super) code: Option<i32>,
    grace: Option<(usize, Instant)>,
    teardown: Option<Teardown>,
    signals: usize,
    ranks_done_at: Option<Instant>,
    forwarders: Vec<thread::JoinHandle<()>>,
    /// ssh jobs: when every host's agent must have answered, and how long
    /// that was (for the message).
    startup: Option<(Instant, Duration)>,
    /// When each host's agent was last heard from (`liveness`).
    heard: Vec<Option<Instant>>,
    /// When the agents get their next heartbeat.
    next_beat: Instant,
    /// When the job started, and the ssh tree's out-degree (for `-v`).
    started: Instant,
    degree: usize,
}

impl Job {
    pub(super) fn new(plan: &Plan) -> Job {
        let n = plan.n;
        let h = plan.hosts.len();
        Job {
            n,
            radix: plan.radix,
            timeout: plan.timeout,
            verbose: plan.verbose,
            hosts: plan.hosts.clone(),
            host_of: plan.host_of.clone(),
            procs: HashMap::new(),
            rank_pid: vec![None; n],
            ends: vec![None; n],
            running: n,
            listen: vec![None; n],
            ctl: (0..n).map(|_| None).collect(),
            welcomed: vec![false; n],
            finalized: vec![None; n],
            ssh_pid: vec![None; h],
            ssh_running: 0,
            ssh_stdin: Arc::new(Mutex::new(Vec::new())),
            agents: (0..h).map(|_| None).collect(),
            agent_open: vec![false; h],
            ssh_ended_early: vec![None; h],
            code: None,
            grace: None,
            teardown: None,
            signals: 0,
            ranks_done_at: None,
            forwarders: Vec::new(),
            startup: plan
                .ssh
                .as_ref()
                .map(|c| (Instant::now() + c.startup, c.startup)),
            heard: vec![None; h],
            next_beat: Instant::now(),
            started: Instant::now(),
            degree: plan.ssh.as_ref().map_or(1, |c| c.degree),
        }
    }

    /// The pids of the ranks started here (local spawner).
    pub(super) fn rank_pids(&self) -> Vec<u32> {
        self.rank_pid.iter().flatten().copied().collect()
    }

    fn host_name(&self, rank: usize) -> &str {
        &self.hosts[self.host_of[rank]]
    }

    fn next_deadline(&self) -> Option<Instant> {
        let mut d: Vec<Instant> = Vec::new();
        if let (Some((_, at)), None) = (self.grace, &self.teardown) {
            d.push(at);
        }
        if let Some(t) = &self.teardown {
            d.push(if t.killed { t.hard_at } else { t.kill_at });
        }
        if let Some(at) = self.ranks_done_at {
            d.push(at + HARD_GRACE);
        }
        d.extend(self.ssh_ended_early.iter().flatten().map(|&(_, at)| at));
        d.extend(self.startup.map(|(at, _)| at));
        if self.agents.iter().any(Option::is_some) {
            d.push(self.next_beat);
        }
        d.into_iter().min()
    }

    pub(super) fn run(&mut self, rx: mpsc::Receiver<Ev>) {
        loop {
            if self.running == 0 {
                if self.ssh_running == 0 {
                    return;
                }
                self.ranks_done_at.get_or_insert_with(Instant::now);
            }
            let now = Instant::now();
            for host in 0..self.hosts.len() {
                if let Some((end, at)) = self.ssh_ended_early[host] {
                    if now >= at {
                        self.ssh_ended_early[host] = None;
                        self.ranks_lost_with_ssh(host, end);
                    }
                }
            }
            if let Some((r, at)) = self.grace {
                if now >= at && self.teardown.is_none() && self.running > 0 {
                    let code = match self.ends[r] {
                        Some(e) => e.describe(),
                        None => "exited".into(),
                    };
                    gex_env::eprintln_whole!(
                        "gasnetrun-ofi: rank {r} on host {} {code} but {} rank(s) still ran \
                         after the exit timeout of {:.1}s; terminating the job{}",
                        self.host_name(r),
                        self.running,
                        self.timeout.as_secs_f64(),
                        self.stopped_note()
                    );
                    self.code.get_or_insert(1);
                    self.start_teardown(Signal::SIGTERM);
                }
            }
            self.check_startup(now);
            self.liveness(now);
            if let Some(t) = &self.teardown {
                if !t.killed && now >= t.kill_at {
                    self.kill_all(Signal::SIGKILL);
                    if let Some(t) = &mut self.teardown {
                        t.killed = true;
                    }
                } else if t.killed && now >= t.hard_at {
                    self.give_up();
                    return;
                }
            }
            if let Some(at) = self.ranks_done_at {
                if now >= at + HARD_GRACE {
                    self.give_up();
                    return;
                }
            }
            let wait = self
                .next_deadline()
                .map(|d| d.saturating_duration_since(now))
                .unwrap_or(Duration::from_secs(1))
                .min(Duration::from_secs(1));
            match rx.recv_timeout(wait) {
                Ok(ev) => self.handle(ev),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Hello {
                rank,
                listen,
                stream,
            } => {
                if self.ctl[rank].is_some() {
                    // A second process with this rank's bootstrap variables
                    // (a rank's child that inherited them): its connection
                    // is closed, so it fails at once instead of waiting for
                    // a welcome for ever, and nothing it sends counts as
                    // the rank's.
                    tracing::warn!(
                        "bootstrap: refused a second hello as rank {rank} (a process that inherited the rank's GASNET_OFI_* bootstrap variables?)"
                    );
                    let _ = stream.shutdown(std::net::Shutdown::Both);
                    return;
                }
                self.listen[rank] = Some(listen);
                self.ctl[rank] = Some(stream);
                self.try_welcome(rank);
                for c in tree_children(rank, self.n, self.radix) {
                    self.try_welcome(c);
                }
                self.check_left_before_joining();
            }
            Ev::RankMsg { rank, msg } => match msg {
                Msg::Abort { code } => {
                    if self.teardown.is_none() && self.code.is_none() {
                        gex_env::eprintln_whole!(
                            "gasnetrun-ofi: rank {rank} on host {} called abort({code}); terminating the job{}",
                            self.host_name(rank),
                            self.stopped_note()
                        );
                        self.code = Some(code);
                        self.start_teardown(Signal::SIGTERM);
                    }
                    if let Some(s) = &mut self.ctl[rank] {
                        let _ = write_frame(s, &Msg::Abort { code }.encode());
                    }
                }
                Msg::Finalize { code } => {
                    // Recorded before the acknowledgement, so the rank's
                    // exit (which follows the ack) is seen as orderly.
                    self.finalized[rank] = Some(code);
                    if let Some(s) = &mut self.ctl[rank] {
                        let _ = write_frame(s, &Msg::Finalize { code }.encode());
                    }
                }
                m => tracing::warn!("bootstrap: unexpected message from rank {rank}: {m:?}"),
            },
            Ev::Agent { host, stream } => {
                self.heard[host] = Some(Instant::now());
                if self.verbose {
                    gex_env::eprintln_whole!(
                        "gasnetrun-ofi: the agent of host {host} ({}) answered after {:.3} s \
                         (level {} of the ssh tree)",
                        self.hosts[host],
                        self.started.elapsed().as_secs_f64(),
                        crate::sshtree::level(host, self.degree)
                    );
                }
                self.agents[host] = Some(stream);
                self.agent_open[host] = true;
                if self.teardown.is_some() {
                    self.kill_host(host, Signal::SIGTERM);
                }
            }
            Ev::AgentMsg { host, msg } => {
                self.heard[host] = Some(Instant::now());
                match msg {
                    Msg::RankExit { rank, end } => {
                        let rank = rank as usize;
                        if rank < self.n && self.host_of[rank] == host {
                            self.rank_ended(rank, end);
                        }
                    }
                    // An ssh session of the tree, started by that agent.
                    Msg::SshEnded { host: h, end } => {
                        let h = h as usize;
                        if h < self.hosts.len() && self.ssh_pid[h].is_none() {
                            self.session_ended(h, end);
                        }
                    }
                    _ => {}
                }
            }
            Ev::AgentGone { host } => {
                self.agent_open[host] = false;
                if let Some((end, _)) = self.ssh_ended_early[host].take() {
                    self.ranks_lost_with_ssh(host, end);
                }
            }
            Ev::Child { pid, end } => match self.procs.get(&pid).copied() {
                Some(Proc::Rank(r)) => self.rank_ended(r, end),
                Some(Proc::Ssh(h)) => self.ssh_ended(h, end),
                None => {}
            },
            Ev::Signal(sig) => {
                self.signals += 1;
                let s = Signal::try_from(sig).unwrap_or(Signal::SIGTERM);
                if self.signals == 1 {
                    if self.verbose {
                        gex_env::eprintln_whole!(
                            "gasnetrun-ofi: received {}; passing it to every rank",
                            s.as_str()
                        );
                    }
                    self.code.get_or_insert(128 + sig);
                    self.start_teardown(s);
                } else {
                    self.kill_all(Signal::SIGKILL);
                }
            }
        }
    }

    fn try_welcome(&mut self, rank: usize) {
        if self.welcomed[rank] || self.ctl[rank].is_none() {
            return;
        }
        let parent = match tree_parent(rank, self.radix) {
            None => None,
            Some(p) => match &self.listen[p] {
                Some(a) => Some(a.clone()),
                None => return,
            },
        };
        let m = Msg::Welcome {
            radix: self.radix as u32,
            parent,
            host_index: self.host_of[rank] as u32,
            host_name: self.hosts[self.host_of[rank]].clone(),
        };
        if let Some(s) = &mut self.ctl[rank] {
            if write_frame(s, &m.encode()).is_ok() {
                self.welcomed[rank] = true;
            }
        }
    }

    fn rank_ended(&mut self, rank: usize, end: RankEnd) {
        if self.ends[rank].is_some() {
            return;
        }
        self.ends[rank] = Some(end);
        self.running -= 1;
        if self.verbose {
            gex_env::eprintln_whole!(
                "gasnetrun-ofi: rank {rank} on host {} {}",
                self.host_name(rank),
                end.describe()
            );
        }
        if self.teardown.is_some() {
            return; // ended by the teardown: not the job's verdict
        }
        // A rank that reported `finalize(code)` and then exited with that
        // code took part in an orderly, collective exit: its peers are
        // exiting too. Its code is the job's (the first non-zero one wins);
        // the others get the exit timeout to follow, as after a success.
        // The status holds the low 8 bits of the code (gasnet_exit(-1)
        // exits with 255).
        let orderly =
            matches!((self.finalized[rank], end), (Some(c), RankEnd::Code(e)) if (c & 0xff) == e);
        if orderly && !end.is_success() {
            self.code.get_or_insert(end.shell_code());
        }
        if end.is_success() || orderly {
            if self.running > 0 && self.grace.is_none() {
                self.grace = Some((rank, Instant::now() + self.timeout));
            }
            self.check_left_before_joining();
            return;
        }
        self.code.get_or_insert(end.shell_code());
        if self.running > 0 {
            gex_env::eprintln_whole!(
                "gasnetrun-ofi: rank {rank} on host {} {} while {} other rank(s) were running; terminating the job{}",
                self.host_name(rank),
                end.describe(),
                self.running,
                self.stopped_note()
            );
            self.start_teardown(Signal::SIGTERM);
        } else if let RankEnd::Signal(_) = end {
            gex_env::eprintln_whole!(
                "gasnetrun-ofi: rank {rank} on host {} {}",
                self.host_name(rank),
                end.describe()
            );
        }
    }

    fn ssh_ended(&mut self, host: usize, end: RankEnd) {
        self.ssh_running = self.ssh_running.saturating_sub(1);
        self.ssh_pid[host] = None;
        self.session_ended(host, end);
    }

    /// The ssh session to `host` ended (ours, or one an agent started).
    fn session_ended(&mut self, host: usize, end: RankEnd) {
        if self.agent_open[host] {
            // The agent's last reports (its ranks' exits) may still be in
            // its stream's reader: the child's end can overtake them. Judge
            // the host once the stream ends, or after a short wait.
            self.ssh_ended_early[host] = Some((end, Instant::now() + AGENT_DRAIN));
            return;
        }
        self.ranks_lost_with_ssh(host, end);
    }

    /// Ranks of `host` that never reported their end when its ssh session
    /// (and agent) ended are lost: the job is torn down unless it already is.
    fn ranks_lost_with_ssh(&mut self, host: usize, end: RankEnd) {
        let lost: Vec<usize> = ranks_of_host(&self.host_of, host)
            .into_iter()
            .filter(|&r| self.ends[r].is_none())
            .collect();
        if lost.is_empty() {
            return;
        }
        for &r in &lost {
            self.ends[r] = Some(end);
            self.running -= 1;
        }
        if self.teardown.is_none() {
            gex_env::eprintln_whole!(
                "gasnetrun-ofi: the ssh session to host {host} ({}) {} before {} ended (started or not); terminating the job",
                self.hosts[host],
                end.describe(),
                ranks_text(&lost)
            );
            self.code.get_or_insert(match end.shell_code() {
                0 => 1,
                c => c,
            });
            self.start_teardown(Signal::SIGTERM);
        }
    }
}

mod liveness;
mod teardown;

#[cfg(test)]
mod hellos;
#[cfg(test)]
mod scale_check;
#[cfg(test)]
mod tests;
