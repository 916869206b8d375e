//! Starting the processes of a job: every rank (local spawner), or one ssh
//! session per host, whose agent gets its part of the job on stdin (ssh
//! spawner).

use super::{Job, Proc};
use crate::agent::AgentJob;
use crate::launch::plan::{ranks_of_host, ranks_text, Plan};
use crate::launch::JobSpec;
use crate::proc::{forward_output, own_group_and_pdeathsig, signal_group, spawn_rank};
use crate::SpawnError;
use bootstrap::wire::{secret_to_hex, write_frame, Secret};
use bootstrap::{ENV_BOOTSTRAP_ADDR, ENV_BOOTSTRAP_SECRET, ENV_RANK, ENV_SIZE};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::ffi::OsString;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::thread;

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
        let env: Vec<(OsString, OsString)> =
            plan.env.iter().map(|(k, v)| (k.into(), v.into())).collect();
        for (h, name) in plan.hosts.iter().enumerate() {
            let ranks = ranks_of_host(&plan.host_of, h);
            let job = AgentJob {
                secret,
                addr: addr.to_string(),
                host: h as u32,
                size: plan.n as u32,
                ranks: ranks.iter().map(|&r| r as u32).collect(),
                env: env.clone(),
                program: spec.program.clone(),
                args: spec.args.clone(),
                prefix_output: plan.verbose,
            };
            let mut cmd = Command::new(&ssh.prefix[0]);
            cmd.args(&ssh.prefix[1..]).arg(name).arg(&ssh.remote_cmd);
            // The agent forwards its ranks' output a line at a time; ssh
            // may split what it carries, so its output is forwarded a
            // line at a time again (ranks of several hosts share ours).
            cmd.stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            own_group_and_pdeathsig(&mut cmd);
            if plan.verbose {
                let mut argv = ssh.prefix.clone();
                argv.push(name.clone());
                argv.push(ssh.remote_cmd.clone());
                gex_env::eprintln_whole!(
                    "gasnetrun-ofi: host {h} ({name}), {}: {}",
                    ranks_text(&ranks),
                    shell_words::join(&argv)
                );
            }
            let mut child = match cmd.spawn() {
                Ok(c) => c,
                Err(e) => {
                    self.abandon();
                    return Err(SpawnError::Spawn {
                        what: format!("{} for host {name}", ssh.prefix[0]),
                        source: e,
                    });
                }
            };
            forward_output(&mut child, None, &mut self.forwarders);
            let pid = child.id();
            self.ssh_pid[h] = Some(pid);
            self.ssh_running += 1;
            self.procs.insert(pid, Proc::Ssh(h));
            if let Some(mut stdin) = child.stdin.take() {
                let keep = self.ssh_stdin.clone();
                let frame = job.encode();
                // Written from a thread: ssh may not read before it connects.
                thread::spawn(move || {
                    if write_frame(&mut stdin, &frame).is_ok() {
                        if let Ok(mut k) = keep.lock() {
                            k.push(stdin);
                        }
                    }
                });
            }
        }
        Ok(())
    }
}
