//! The per-host agent of the ssh spawner.
//!
//! The launcher runs `ssh HOST 'cd DIR && exec /path/to/gasnetrun-ofi --ssh-agent'`:
//! the remote command line holds no argument, variable or secret of the job.
//! Everything else — the job secret, the launcher's address, the ranks to
//! start on this host, the program, its arguments and the variables to set —
//! is sent as one frame on the ssh session's standard input, so it arrives
//! byte for byte whatever characters it holds. The agent then
//! * connects to the launcher with the secret and reports every rank's end,
//! * starts its ranks (own process groups, `PR_SET_PDEATHSIG`),
//! * passes on the signals the launcher asks for, and
//! * kills its ranks when the launcher goes away (the ssh session's stdin
//!   or the control connection closes).

use crate::proc::{signal_group, spawn_rank, spawn_reaper};
use crate::sshtree::SshCommand;
use crate::SpawnError;
use bootstrap::wire::{self, read_frame, write_frame, Dec, Enc, Msg, RankEnd, Secret, MAX_FRAME};
use bootstrap::{ENV_BOOTSTRAP_ADDR, ENV_BOOTSTRAP_SECRET, ENV_RANK, ENV_SIZE};
use nix::sys::signal::Signal;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Read;
use std::net::TcpStream;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::sync::mpsc;
use std::thread;

/// What the launcher sends an agent on its stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AgentJob {
    pub secret: Secret,
    pub addr: String,
    pub host: u32,
    pub size: u32,
    pub ranks: Vec<u32>,
    pub env: Vec<(OsString, OsString)>,
    pub program: OsString,
    pub args: Vec<OsString>,
    pub prefix_output: bool,
    /// How to start other hosts' agents, and the hosts (index, name, job)
    /// this agent starts (the ssh tree; empty below its leaves).
    pub ssh: SshCommand,
    pub children: Vec<(u32, String, AgentJob)>,
}

impl AgentJob {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut e = Enc::new()
            .raw(&self.secret)
            .str(&self.addr)
            .u32(self.host)
            .u32(self.size)
            .u32(self.ranks.len() as u32);
        for r in &self.ranks {
            e = e.u32(*r);
        }
        e = e.u32(self.env.len() as u32);
        for (k, v) in &self.env {
            e = e.bytes(k.as_bytes()).bytes(v.as_bytes());
        }
        e = e.bytes(self.program.as_bytes()).u32(self.args.len() as u32);
        for a in &self.args {
            e = e.bytes(a.as_bytes());
        }
        e = e.u8(u8::from(self.prefix_output));
        e = e.u32(self.ssh.prefix.len() as u32);
        for w in &self.ssh.prefix {
            e = e.str(w);
        }
        e = e.str(&self.ssh.remote_cmd).u32(self.children.len() as u32);
        for (h, name, job) in &self.children {
            e = e.u32(*h).str(name).bytes(&job.encode());
        }
        e.done()
    }

    pub(crate) fn decode(b: &[u8]) -> Result<AgentJob, SpawnError> {
        let os = |b: &[u8]| OsString::from_vec(b.to_vec());
        let mut d = Dec::new(b);
        let secret = d.secret()?;
        let addr = d.str()?;
        let host = d.u32()?;
        let size = d.u32()?;
        let nr = d.u32()?;
        let ranks = (0..nr).map(|_| d.u32()).collect::<Result<Vec<_>, _>>()?;
        let ne = d.u32()?;
        let env = (0..ne)
            .map(|_| Ok((os(d.bytes()?), os(d.bytes()?))))
            .collect::<Result<Vec<_>, SpawnError>>()?;
        let program = os(d.bytes()?);
        let na = d.u32()?;
        let args = (0..na)
            .map(|_| d.bytes().map(os))
            .collect::<Result<Vec<_>, _>>()?;
        let prefix_output = d.u8()? != 0;
        let nw = d.u32()?;
        let prefix = (0..nw).map(|_| d.str()).collect::<Result<Vec<_>, _>>()?;
        let remote_cmd = d.str()?;
        let nc = d.u32()?;
        let children = (0..nc)
            .map(|_| Ok((d.u32()?, d.str()?, AgentJob::decode(d.bytes()?)?)))
            .collect::<Result<Vec<_>, SpawnError>>()?;
        d.finish()?;
        Ok(AgentJob {
            secret,
            addr,
            host,
            size,
            ranks,
            env,
            program,
            args,
            prefix_output,
            ssh: SshCommand { prefix, remote_cmd },
            children,
        })
    }
}

enum Ev {
    Child(u32, RankEnd),
    Kill(i32),
    LauncherGone(String),
}

/// Run as the ssh agent: read the job from `input` (the ssh session's
/// stdin), start this host's ranks, report to the launcher, and return the
/// agent's exit code once every local rank has ended.
pub fn run_agent(mut input: impl Read + Send + 'static) -> Result<i32, SpawnError> {
    let frame = read_frame(&mut input, MAX_FRAME)
        .map_err(|e| SpawnError::io("reading the job description on stdin", e))?;
    let job = AgentJob::decode(&frame)?;
    crate::capacity::raise_open_files();
    // The ranks this host must start, against what it can hold (the
    // launcher cannot see remote hosts); the override comes with the job.
    let vars = gex_env::MapEnv(
        job.env
            .iter()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .collect(),
    );
    let cap = crate::capacity::of_this_host(&gex_env::EnvReader::quiet(&vars))?;
    crate::capacity::check(
        job.ranks.len(),
        &format!("{} ({})", job.host, bootstrap::this_host()),
        cap.as_ref(),
    )
    .map_err(SpawnError::Usage)?;
    let mut ctl = connect_launcher(&job.addr)
        .map_err(|e| SpawnError::io(format!("connecting to the launcher at {}", job.addr), e))?;
    let _ = ctl.set_nodelay(true);
    write_frame(
        &mut ctl,
        &Msg::AgentHello {
            secret: job.secret,
            host: job.host,
        }
        .encode(),
    )
    .map_err(|e| SpawnError::io("greeting the launcher", e))?;

    let (tx, rx) = mpsc::channel::<Ev>();
    // Launcher gone: stdin closes (ssh ended) ...
    let tx1 = tx.clone();
    thread::spawn(move || {
        let mut buf = [0u8; 256];
        while matches!(input.read(&mut buf), Ok(n) if n > 0) {}
        let _ = tx1.send(Ev::LauncherGone("stdin closed".into()));
    });
    // ... or silent for the exit timeout (a partition closes nothing).
    let heard = crate::heartbeat::Heard::new();
    let exit_timeout = gex_env::ExitTimeout::from_env(&gex_env::EnvReader::quiet(&vars))?
        .for_job(job.size as usize);
    let ctl_w = std::sync::Arc::new(std::sync::Mutex::new(
        ctl.try_clone()
            .map_err(|e| SpawnError::io("cloning the control socket", e))?,
    ));
    let tx4 = tx.clone();
    crate::heartbeat::agent_side(
        ctl_w.clone(),
        heard.clone(),
        crate::heartbeat::silence_limit(exit_timeout),
        move |why| {
            let _ = tx4.send(Ev::LauncherGone(why));
        },
    );
    // ... or the control connection closes; it also carries Kill requests.
    let mut ctl_r = ctl
        .try_clone()
        .map_err(|e| SpawnError::io("cloning the control socket", e))?;
    let tx2 = tx.clone();
    thread::spawn(move || loop {
        match read_frame(&mut ctl_r, wire::MAX_HELLO).map(|f| Msg::decode(&f)) {
            Ok(Ok(Msg::Kill { signal })) => {
                heard.touch();
                let _ = tx2.send(Ev::Kill(signal));
            }
            Ok(_) => heard.touch(),
            Err(_) => {
                let _ = tx2.send(Ev::LauncherGone("control connection closed".into()));
                break;
            }
        }
    });
    // Every write goes through the one lock (the heartbeat thread writes
    // too): frames never interleave.
    let report = |m: Msg| {
        let mut s = ctl_w.lock().unwrap_or_else(|e| e.into_inner());
        let _ = write_frame(&mut *s, &m.encode());
    };

    let mut forwarders = Vec::new();
    // The ssh tree: the agents this one starts, first (they take longest).
    let keep = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut ssh_children: HashMap<u32, u32> = HashMap::new(); // pid -> host
    for (h, name, child) in &job.children {
        match crate::sshtree::start_agent(&job.ssh, name, child.encode(), &keep, &mut forwarders) {
            Ok(pid) => {
                ssh_children.insert(pid, *h);
            }
            Err(e) => {
                gex_env::eprintln_whole!("gasnetrun-ofi agent on host {}: {e}", job.host);
                report(Msg::SshEnded {
                    host: *h,
                    end: RankEnd::Code(127),
                });
            }
        }
    }

    let secret_hex = wire::secret_to_hex(&job.secret);
    let mut pids: HashMap<u32, u32> = HashMap::new(); // pid -> rank
    for &r in &job.ranks {
        let mut env = job.env.clone();
        for (k, v) in [
            (ENV_RANK, r.to_string()),
            (ENV_SIZE, job.size.to_string()),
            (ENV_BOOTSTRAP_ADDR, job.addr.clone()),
            (ENV_BOOTSTRAP_SECRET, secret_hex.clone()),
        ] {
            env.push((k.into(), v.into()));
        }
        match spawn_rank(
            &job.program,
            &job.args,
            &env,
            r as usize,
            job.prefix_output,
            &mut forwarders,
        ) {
            Ok(pid) => {
                pids.insert(pid, r);
            }
            Err(e) => {
                gex_env::eprintln_whole!("gasnetrun-ofi agent on host {}: {e}", job.host);
                // Report the rank as failed to start (126 or 127, as a
                // shell).
                report(Msg::RankExit {
                    rank: r,
                    end: RankEnd::Code(e.exit_code()),
                });
            }
        }
    }
    spawn_reaper(tx.clone(), Ev::Child);
    crate::proc::drop_inherited_signal_handlers();
    if let Ok(mut sigs) =
        signal_hook::iterator::Signals::new([libc::SIGINT, libc::SIGTERM, libc::SIGHUP])
    {
        let tx3 = tx.clone();
        thread::spawn(move || {
            for s in sigs.forever() {
                let _ = tx3.send(Ev::Kill(s));
            }
        });
    }
    drop(tx);

    let mut running = pids.clone();
    let mut code = 0;
    // Until this host's ranks and the ssh sessions it started have ended.
    while !running.is_empty() || !ssh_children.is_empty() {
        match rx.recv() {
            Ok(Ev::Child(pid, end)) => {
                if let Some(r) = running.remove(&pid) {
                    report(Msg::RankExit { rank: r, end });
                } else if let Some(h) = ssh_children.remove(&pid) {
                    report(Msg::SshEnded { host: h, end });
                }
            }
            Ok(Ev::Kill(sig)) => {
                let sig = Signal::try_from(sig).unwrap_or(Signal::SIGKILL);
                for pid in running.keys() {
                    signal_group(*pid, sig);
                }
                // The launcher tells every agent itself; an ssh session
                // whose agent has not answered yet ends with SIGKILL.
                if sig == Signal::SIGKILL {
                    for pid in ssh_children.keys() {
                        let _ = nix::sys::signal::kill(
                            nix::unistd::Pid::from_raw(*pid as i32),
                            Signal::SIGKILL,
                        );
                    }
                }
            }
            Ok(Ev::LauncherGone(why)) => {
                if code == 0 {
                    tracing::warn!("gasnetrun-ofi agent: {why}; killing this host's ranks");
                }
                code = 1;
                for pid in running.keys() {
                    signal_group(*pid, Signal::SIGKILL);
                }
                // The agents this one started see their stdin close.
                for pid in ssh_children.keys() {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(*pid as i32),
                        Signal::SIGTERM,
                    );
                }
            }
            Err(_) => break,
        }
    }
    for f in forwarders {
        let _ = f.join();
    }
    Ok(code)
}

/// Connect to the launcher at `addr` (each address it resolves to in
/// turn), each attempt bounded by 60 s as a rank's is (not the kernel's
/// SYN retries).
fn connect_launcher(addr: &str) -> std::io::Result<TcpStream> {
    use std::net::ToSocketAddrs;
    let mut last = None;
    for sa in addr.to_socket_addrs()? {
        match TcpStream::connect_timeout(&sa, std::time::Duration::from_secs(60)) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "the address resolves to nothing",
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_roundtrip_keeps_every_byte() {
        let j = AgentJob {
            secret: [3; 32],
            addr: "127.0.0.1:9".into(),
            host: 1,
            size: 4,
            ranks: vec![2, 3],
            env: vec![("GASNET_X".into(), "a b\n$c;'\"".into())],
            program: "./p".into(),
            args: vec!["with space".into(), OsString::from_vec(vec![0xff, b'\n'])],
            prefix_output: true,
            ssh: SshCommand {
                prefix: vec!["ssh".into(), "-p".into(), "22".into()],
                remote_cmd: "cd '/a b' && exec x --ssh-agent".into(),
            },
            children: Vec::new(),
        };
        let mut parent = j.clone();
        parent.children = vec![(5, "node-5".into(), j.clone()), (6, "n6".into(), j.clone())];
        assert_eq!(AgentJob::decode(&parent.encode()).unwrap(), parent);
        assert_eq!(AgentJob::decode(&j.encode()).unwrap(), j);
    }
}
