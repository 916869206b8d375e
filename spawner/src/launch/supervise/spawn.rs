//! Starting the processes of a job: every rank (local spawner), or one ssh
//! session per host, whose agent gets its part of the job on stdin (ssh
//! spawner).

use super::{Job, Proc};
use crate::agent::AgentJob;
use crate::launch::plan::{ranks_of_host, ranks_text, Plan};
use crate::launch::JobSpec;
use crate::proc::{signal_group, spawn_rank};
use crate::SpawnError;
use bootstrap::wire::{secret_to_hex, Secret};
use bootstrap::{ENV_BOOTSTRAP_ADDR, ENV_BOOTSTRAP_SECRET, ENV_RANK, ENV_SIZE};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::ffi::OsString;
use std::net::SocketAddr;

impl Job {
    pub(in crate::launch) fn spawn_local(
        &mut self,
        spec: &JobSpec,
        plan: &Plan,
        addr: SocketAddr,
        secret: Secret,
    ) -> Result<(), SpawnError> {
        let hex = secret_to_hex(&secret);
        for r in 0..plan.n {
            if crate::launch::signalled() {
                // Ctrl-C while a large job starts: the job loop tears down
                // what was started, at once, and waits for those only.
                self.running -= plan.n - r;
                break;
            }
            let env: Vec<(OsString, OsString)> = [
                (ENV_RANK, r.to_string()),
                (ENV_SIZE, plan.n.to_string()),
                (ENV_BOOTSTRAP_ADDR, addr.to_string()),
                (ENV_BOOTSTRAP_SECRET, hex.clone()),
            ]
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
            match spawn_rank(
                &spec.program,
                &spec.args,
                &env,
                r,
                plan.verbose,
                &mut self.forwarders,
            ) {
                Ok(pid) => {
                    self.rank_pid[r] = Some(pid);
                    self.procs.insert(pid, Proc::Rank(r));
                }
                Err(e) => {
                    self.abandon();
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// A start failed: kill and reap whatever was started.
    fn abandon(&mut self) {
        for (&pid, p) in &self.procs {
            match p {
                Proc::Rank(_) => signal_group(pid, Signal::SIGKILL),
                Proc::Ssh(_) => {
                    let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
                }
            }
            let _ = nix::sys::wait::waitpid(Pid::from_raw(pid as i32), None);
        }
    }

    pub(in crate::launch) fn spawn_ssh(
        &mut self,
        spec: &JobSpec,
        plan: &Plan,
        addr: SocketAddr,
        secret: Secret,
    ) -> Result<(), SpawnError> {
        let Some(ssh) = &plan.ssh else {
            return Err(SpawnError::Protocol(
                "ssh spawner without ssh settings".into(),
            ));
        };
        // Each value as the process has it, byte for byte (the plan holds
        // it read lossily, for its checks and messages): a value that is
        // not UTF-8 reaches remote ranks unchanged, as local ones.
        let env: Vec<(OsString, OsString)> = plan
            .env
            .iter()
            .map(|(k, v)| {
                let raw = std::env::var_os(k)
                    .filter(|raw| raw.to_string_lossy() == v.as_str())
                    .unwrap_or_else(|| v.into());
                (k.into(), raw)
            })
            .collect();
        let command = ssh.command();
        // The job of host `h` with the jobs of the hosts its agent starts.
        fn job_of(h: usize, plan: &Plan, degree: usize, base: &AgentJob) -> AgentJob {
            let ranks = ranks_of_host(&plan.host_of, h);
            let mut job = base.clone();
            job.host = h as u32;
            job.ranks = ranks.iter().map(|&r| r as u32).collect();
            job.children = crate::sshtree::children(Some(h), plan.hosts.len(), degree)
                .into_iter()
                .map(|c| {
                    (
                        c as u32,
                        plan.hosts[c].clone(),
                        job_of(c, plan, degree, base),
                    )
                })
                .collect();
            job
        }
        let base = AgentJob {
            secret,
            addr: addr.to_string(),
            host: 0,
            size: plan.n as u32,
            ranks: Vec::new(),
            env,
            program: spec.program.clone(),
            args: spec.args.clone(),
            prefix_output: plan.verbose,
            ssh: command.clone(),
            children: Vec::new(),
        };
        if plan.verbose {
            for (h, name) in plan.hosts.iter().enumerate() {
                let by = match crate::sshtree::parent(h, ssh.degree) {
                    None => "the launcher".to_string(),
                    Some(p) => format!("the agent of host {p}"),
                };
                gex_env::eprintln_whole!(
                    "gasnetrun-ofi: host {h} ({name}), {}, started by {by}: {}",
                    ranks_text(&ranks_of_host(&plan.host_of, h)),
                    shell_words::join(command.prefix.iter().chain([name, &command.remote_cmd]))
                );
            }
        }
        for h in crate::sshtree::children(None, plan.hosts.len(), ssh.degree) {
            let name = &plan.hosts[h];
            let frame = job_of(h, plan, ssh.degree, &base).encode();
            // The agent forwards its ranks' output a line at a time; ssh
            // may split what it carries, so its output is forwarded a
            // line at a time again (ranks of several hosts share ours).
            let pid = match crate::sshtree::start_agent(
                &command,
                name,
                frame,
                &self.ssh_stdin,
                &mut self.forwarders,
            ) {
                Ok(p) => p,
                Err(e) => {
                    self.abandon();
                    return Err(e);
                }
            };
            self.ssh_pid[h] = Some(pid);
            self.ssh_running += 1;
            self.procs.insert(pid, Proc::Ssh(h));
        }
        Ok(())
    }
}
