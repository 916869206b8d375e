//! The launcher side: what `gasnetrun-ofi` runs.
//!
//! [`run_job`] chooses a spawner, starts the bootstrap listener, starts the
//! ranks (directly for `local`, through one ssh session and agent per host
//! for `ssh`), answers the ranks' bootstrap hellos, and supervises the job:
//!
//! * the job's exit code is the code of the first rank that ended badly
//!   (`exit(c)` with `c != 0` gives `c`; a signal `s` gives `128 + s`;
//!   `abort(c)` gives `c`), and 0 when every rank exited 0;
//! * a rank that dies by a signal, exits non-zero or aborts while others
//!   run makes the launcher print one line naming the rank, its host and the
//!   signal or code, and tear the job down at once: SIGTERM to every rank's
//!   process group, SIGKILL `min(3 s, exit timeout)` later;
//! * a rank that exits 0 while others run starts the exit timeout
//!   (`GASNET_EXITTIMEOUT`, or `min(MAX, MIN + N * FACTOR)`): ranks still
//!   running when it expires are torn down and the job exits 1;
//! * SIGINT, SIGTERM and SIGHUP on the launcher are passed to every rank
//!   (a second one sends SIGKILL); the job then exits `128 + signal`.

use crate::agent::AgentJob;
use crate::proc::{own_group_and_pdeathsig, signal_group, spawn_rank, spawn_reaper};
use crate::{new_secret, template, SpawnError};
use bootstrap::tcp::{tree_children, tree_parent};
use bootstrap::wire::{
    read_frame, secret_eq, secret_to_hex, write_frame, Msg, RankEnd, Secret, MAX_HELLO,
};
use bootstrap::{
    this_host, ENV_BOOTSTRAP_ADDR, ENV_BOOTSTRAP_HOST, ENV_BOOTSTRAP_RADIX, ENV_BOOTSTRAP_SECRET,
    ENV_RANK, ENV_SIZE, ENV_SPAWNER,
};
use gex_env::{EnvError, EnvReader, EnvSource, ExitTimeout};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs, UdpSocket};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Prefixes of the variables passed to every rank.
pub const PROPAGATED_PREFIXES: [&str; 4] = ["GASNET_", "FI_", "MLX5_", "HFI_"];

/// How long a connection to the launcher has to present the secret.
const AUTH_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait between SIGTERM and SIGKILL in a teardown.
const TERM_GRACE: Duration = Duration::from_secs(3);
/// How long the launcher waits for ssh sessions and agents after SIGKILL.
const HARD_GRACE: Duration = Duration::from_secs(5);
/// How long the launcher waits, after an ssh session ended, for its agent's
/// last reports still in flight on the control stream.
const AGENT_DRAIN: Duration = Duration::from_secs(2);

/// How ranks are started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpawnerKind {
    /// Fork every rank on this host.
    Local,
    /// One ssh session (and agent) per host of `GASNET_SSH_SERVERS` /
    /// `GASNET_SSH_NODEFILE`.
    Ssh,
    /// The job is started by `MPIRUN_CMD` (default `mpirun -np %N %C`);
    /// ranks bootstrap over the PMIx server under it (or over MPI with the
    /// `mpi` feature).
    Mpi,
    /// The job is started by `PMIRUN_CMD` (default `mpirun -np %N %C`, or
    /// e.g. `srun -n %N %C`); ranks bootstrap over PMIx.
    Pmi,
}

impl SpawnerKind {
    /// Parse `local`, `ssh`, `mpi` or `pmi` (any case).
    pub fn parse(s: &str) -> Option<SpawnerKind> {
        match s.trim().to_ascii_lowercase().as_str() {
            "local" => Some(SpawnerKind::Local),
            "ssh" => Some(SpawnerKind::Ssh),
            "mpi" => Some(SpawnerKind::Mpi),
            "pmi" => Some(SpawnerKind::Pmi),
            _ => None,
        }
    }
    /// The spawner's name.
    pub fn name(self) -> &'static str {
        match self {
            SpawnerKind::Local => "local",
            SpawnerKind::Ssh => "ssh",
            SpawnerKind::Mpi => "mpi",
            SpawnerKind::Pmi => "pmi",
        }
    }
}

/// What the user asked `gasnetrun-ofi` for.
#[derive(Debug, Clone, Default)]
pub struct JobSpec {
    /// `-n`: number of ranks (at least 1).
    pub nranks: usize,
    /// `-N`: number of hosts.
    pub nodes: Option<usize>,
    /// `-E`: names of extra variables to pass to the ranks.
    pub extra_env: Vec<String>,
    /// `-v`: say what happens, prefix rank output with `[rank]`.
    pub verbose: bool,
    /// `-t`: print what would run, run nothing.
    pub test_only: bool,
    /// `-k`: keep temporary files (the local and ssh spawners make none).
    pub keep: bool,
    /// `-spawner=`: overrides `GASNET_OFI_SPAWNER`.
    pub spawner: Option<SpawnerKind>,
    /// The program.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
}

/// The spawner to use: `-spawner=` first, then `GASNET_OFI_SPAWNER`, then
/// `ssh` when a host list is set, `local` otherwise.
pub fn choose_spawner(spec: &JobSpec, env: &EnvReader<'_>) -> Result<SpawnerKind, SpawnError> {
    let from_env = env.opt_string(ENV_SPAWNER);
    if let Some(k) = spec.spawner {
        return Ok(k);
    }
    if let Some(v) = from_env {
        return SpawnerKind::parse(&v)
            .ok_or_else(|| EnvError::new(ENV_SPAWNER, &v, "one of local, ssh, mpi, pmi").into());
    }
    let has_hosts =
        env.peek("GASNET_SSH_SERVERS").is_some() || env.peek("GASNET_SSH_NODEFILE").is_some();
    Ok(if has_hosts {
        SpawnerKind::Ssh
    } else {
        SpawnerKind::Local
    })
}

/// The variables passed to every rank: every `GASNET_*`, `FI_*`, `MLX5_*`
/// and `HFI_*` variable, and the `extra` names that are set; the
/// launcher's private bootstrap variables are left out (each rank gets its
/// own).
pub fn propagated_env(src: &dyn EnvSource, extra: &[String]) -> Vec<(String, String)> {
    let private = [ENV_BOOTSTRAP_ADDR, ENV_BOOTSTRAP_SECRET, ENV_RANK, ENV_SIZE];
    let mut v: Vec<(String, String)> = PROPAGATED_PREFIXES
        .iter()
        .flat_map(|p| src.vars_with_prefix(p))
        .filter(|(k, _)| !private.contains(&k.as_str()))
        .collect();
    for name in extra {
        if v.iter().any(|(k, _)| k == name) {
            continue;
        }
        if let Some(val) = src.var(name) {
            v.push((name.clone(), val));
        }
    }
    v
}

/// Parse a host list: commas and white space separate hosts.
pub fn parse_host_list(s: &str) -> Vec<String> {
    s.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|h| !h.is_empty())
        .map(str::to_string)
        .collect()
}

/// Parse a node file: the first word of each line; blank lines and `#`
/// comments are skipped.
pub fn parse_node_file(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// The ssh command for one host: `cmd options [openssh defaults] host remote-command`.
#[derive(Debug, Clone)]
struct SshConf {
    prefix: Vec<String>,
    remote_cmd: String,
}

struct Plan {
    kind: SpawnerKind,
    n: usize,
    hosts: Vec<String>,
    host_of: Vec<usize>,
    ssh: Option<SshConf>,
    timeout: Duration,
    radix: usize,
    bind_ip: IpAddr,
    env: Vec<(String, String)>,
    verbose: bool,
}

fn usage(s: impl Into<String>) -> SpawnError {
    SpawnError::Usage(s.into())
}

fn ssh_conf(env: &EnvReader<'_>) -> Result<SshConf, SpawnError> {
    let cmd_text = env.string("GASNET_SSH_CMD", "ssh");
    let cmd = shell_words::split(&cmd_text)
        .map_err(|e| EnvError::new("GASNET_SSH_CMD", &cmd_text, format!("a command ({e})")))?;
    if cmd.is_empty() {
        return Err(EnvError::new("GASNET_SSH_CMD", &cmd_text, "a command").into());
    }
    let opt_text = env.string("GASNET_SSH_OPTIONS", "");
    let opts = shell_words::split(&opt_text).map_err(|e| {
        EnvError::new(
            "GASNET_SSH_OPTIONS",
            &opt_text,
            format!("options with shell-like quoting ({e})"),
        )
    })?;
    let cwd = std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| ".".into());
    let remote_path = env.string("GASNET_SSH_REMOTE_PATH", &cwd);
    let agent = std::env::current_exe()
        .map_err(|e| SpawnError::io("finding the gasnetrun-ofi executable", e))?;
    let mut prefix = cmd.clone();
    // User options first: OpenSSH keeps the first value of an option.
    prefix.extend(opts);
    let is_openssh = std::path::Path::new(&cmd[0])
        .file_name()
        .is_some_and(|f| f == "ssh");
    if is_openssh {
        for o in ["StrictHostKeyChecking=no", "BatchMode=yes"] {
            prefix.push("-o".into());
            prefix.push(o.into());
        }
    }
    let remote_cmd = format!(
        "cd {} && exec {} --ssh-agent",
        shell_words::quote(&remote_path),
        shell_words::quote(&agent.to_string_lossy())
    );
    Ok(SshConf { prefix, remote_cmd })
}

fn read_hosts(env: &EnvReader<'_>) -> Result<Vec<String>, SpawnError> {
    if let Some(f) = env.opt_string("GASNET_SSH_NODEFILE") {
        let text = std::fs::read_to_string(&f)
            .map_err(|e| usage(format!("GASNET_SSH_NODEFILE={f:?} cannot be read: {e}")))?;
        let h = parse_node_file(&text);
        if h.is_empty() {
            return Err(usage(format!("GASNET_SSH_NODEFILE={f:?} names no host")));
        }
        return Ok(h);
    }
    match env.opt_string("GASNET_SSH_SERVERS") {
        Some(s) if !parse_host_list(&s).is_empty() => Ok(parse_host_list(&s)),
        _ => Err(usage(
            "the ssh spawner needs a host list: set GASNET_SSH_SERVERS or GASNET_SSH_NODEFILE",
        )),
    }
}

/// The address this machine uses to reach `host` (no packet is sent).
fn route_to(host: &str) -> Option<IpAddr> {
    let target = (host, 22)
        .to_socket_addrs()
        .ok()?
        .find(SocketAddr::is_ipv4)?;
    let s = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok()?;
    s.connect(target).ok()?;
    Some(s.local_addr().ok()?.ip())
}

fn make_plan(spec: &JobSpec, env: &EnvReader<'_>) -> Result<Plan, SpawnError> {
    let n = spec.nranks;
    if n == 0 {
        return Err(usage("-n must be at least 1"));
    }
    let kind = choose_spawner(spec, env)?;
    let verbose =
        spec.verbose || spec.test_only || spec.keep || env.bool("GASNET_SPAWN_VERBOSE", false)?;
    let timeout = ExitTimeout::from_env(env)?.for_job(n);
    let radix = env.uint(ENV_BOOTSTRAP_RADIX, 8, 2, 1024)? as usize;
    let bind_host = env.opt_string(ENV_BOOTSTRAP_HOST);
    let (hosts, host_of, ssh, bind_ip) = match kind {
        SpawnerKind::Mpi | SpawnerKind::Pmi => {
            return Err(SpawnError::InvalidArgument(format!(
                "the {} spawner runs through a command template, not a plan",
                kind.name()
            )))
        }
        SpawnerKind::Local => {
            if let Some(k) = spec.nodes.filter(|&k| k != 1) {
                return Err(usage(format!(
                    "-N {k}: the local spawner runs every rank on this host; \
                     set GASNET_SSH_SERVERS to use more hosts"
                )));
            }
            (
                vec![this_host()],
                vec![0; n],
                None,
                IpAddr::V4(Ipv4Addr::LOCALHOST),
            )
        }
        SpawnerKind::Ssh => {
            let list = read_hosts(env)?;
            let nodes = spec.nodes.unwrap_or(n.min(list.len()));
            if nodes == 0 || nodes > list.len() {
                return Err(usage(format!(
                    "-N {nodes}: the host list has {} host(s)",
                    list.len()
                )));
            }
            if nodes > n {
                return Err(usage(format!("-N {nodes} is more hosts than -n {n} ranks")));
            }
            let hosts: Vec<String> = list[..nodes].to_vec();
            let ip = match &bind_host {
                Some(h) => h.parse::<IpAddr>().map_err(|_| {
                    EnvError::new(ENV_BOOTSTRAP_HOST, h, "an IP address of this machine")
                })?,
                None => route_to(&hosts[0]).ok_or_else(|| {
                    usage(format!(
                        "cannot tell which address of this machine host {:?} reaches: \
                         set {ENV_BOOTSTRAP_HOST}",
                        hosts[0]
                    ))
                })?,
            };
            (hosts, block_placement(n, nodes), Some(ssh_conf(env)?), ip)
        }
    };
    Ok(Plan {
        kind,
        n,
        hosts,
        host_of,
        ssh,
        timeout,
        radix,
        bind_ip,
        env: propagated_env(env.source(), &spec.extra_env),
        verbose,
    })
}

/// Block placement of `n` ranks on `nodes` hosts: the first `n % nodes`
/// hosts get one rank more; ranks of a host are contiguous. Returns the
/// host index of every rank.
pub fn block_placement(n: usize, nodes: usize) -> Vec<usize> {
    if nodes == 0 {
        return Vec::new();
    }
    let base = n / nodes;
    let extra = n % nodes;
    let mut v = Vec::with_capacity(n);
    for h in 0..nodes {
        let k = base + usize::from(h < extra);
        v.extend(std::iter::repeat_n(h, k));
    }
    v
}

fn ranks_text(rs: &[usize]) -> String {
    match (rs.first(), rs.last()) {
        (Some(a), Some(b)) if a == b => format!("rank {a}"),
        (Some(a), Some(b)) => format!("ranks {a}-{b}"),
        _ => "no rank".into(),
    }
}

fn ranks_of_host(host_of: &[usize], h: usize) -> Vec<usize> {
    (0..host_of.len()).filter(|&r| host_of[r] == h).collect()
}

fn quote_os(s: &OsString) -> String {
    shell_words::quote(&s.to_string_lossy()).into_owned()
}

/// Run a job to its end. Returns the job's exit code (see the module
/// documentation); errors are problems of the launcher itself.
pub fn run_job(spec: &JobSpec, env: &EnvReader<'_>) -> Result<i32, SpawnError> {
    let kind = choose_spawner(spec, env)?;
    if matches!(kind, SpawnerKind::Mpi | SpawnerKind::Pmi) {
        return run_template_job(spec, env, kind);
    }
    let plan = make_plan(spec, env)?;
    if plan.verbose {
        eprintln!(
            "gasnetrun-ofi: spawner {}, {} rank(s) on {} host(s), exit timeout {:.1}s, bootstrap tree radix {}",
            plan.kind.name(),
            plan.n,
            plan.hosts.len(),
            plan.timeout.as_secs_f64(),
            plan.radix
        );
    }
    if spec.test_only {
        print_plan(spec, &plan);
        return Ok(0);
    }
    let listener = TcpListener::bind((plan.bind_ip, 0)).map_err(|e| {
        SpawnError::io(
            format!("binding the bootstrap listener on {}", plan.bind_ip),
            e,
        )
    })?;
    let addr = listener
        .local_addr()
        .map_err(|e| SpawnError::io("reading the listener address", e))?;
    if plan.verbose {
        eprintln!("gasnetrun-ofi: bootstrap listening on {addr}");
    }
    let secret = new_secret()?;
    let (tx, rx) = mpsc::channel::<Ev>();
    start_acceptor(listener, secret, plan.n, plan.hosts.len(), tx.clone())?;
    crate::proc::drop_inherited_signal_handlers();
    if let Ok(mut sigs) =
        signal_hook::iterator::Signals::new([libc::SIGINT, libc::SIGTERM, libc::SIGHUP])
    {
        let tx3 = tx.clone();
        thread::spawn(move || {
            for s in sigs.forever() {
                let _ = tx3.send(Ev::Signal(s));
            }
        });
    }
    let mut job = Job::new(&plan);
    match plan.kind {
        SpawnerKind::Ssh => job.spawn_ssh(spec, &plan, addr, secret)?,
        _ => job.spawn_local(spec, &plan, addr, secret)?,
    }
    spawn_reaper(tx.clone(), |pid, end| Ev::Child { pid, end });
    drop(tx);
    job.run(rx);
    job.finish_output();
    Ok(job.code.unwrap_or(0))
}

/// The mpi and pmi spawners: the job is one external command
/// (see [`crate::template`]).
fn run_template_job(
    spec: &JobSpec,
    env: &EnvReader<'_>,
    kind: SpawnerKind,
) -> Result<i32, SpawnError> {
    if spec.nranks == 0 {
        return Err(usage("-n must be at least 1"));
    }
    let verbose =
        spec.verbose || spec.test_only || spec.keep || env.bool("GASNET_SPAWN_VERBOSE", false)?;
    let job = template::plan(spec, env, kind)?;
    if let Some(k) = spec.nodes {
        let var = match kind {
            SpawnerKind::Mpi => template::ENV_MPIRUN_CMD,
            _ => template::ENV_PMIRUN_CMD,
        };
        if !env.string(var, template::DEFAULT_TEMPLATE).contains("%M") {
            eprintln!("gasnetrun-ofi: -N {k} is not used: {var} has no %M");
        }
    }
    if verbose {
        eprintln!(
            "gasnetrun-ofi: spawner {}, {} rank(s); variables passed to the ranks: {}",
            kind.name(),
            spec.nranks,
            job.passed.join(" ")
        );
    }
    if spec.test_only {
        let assigns: Vec<String> = job
            .set_env
            .iter()
            .map(|(k, v)| format!("{k}={}", shell_words::quote(v)))
            .collect();
        println!(
            "{} {}",
            assigns.join(" "),
            template::command_text(&job.argv)
        );
        return Ok(0);
    }
    template::run(&job, kind, verbose)
}

fn print_plan(spec: &JobSpec, plan: &Plan) {
    let prog = std::iter::once(&spec.program)
        .chain(spec.args.iter())
        .map(quote_os)
        .collect::<Vec<_>>()
        .join(" ");
    let addr = format!("{}:<port>", plan.bind_ip);
    match &plan.ssh {
        None => {
            for r in 0..plan.n {
                println!(
                    "rank {r} on host {}: {ENV_RANK}={r} {ENV_SIZE}={} {ENV_BOOTSTRAP_ADDR}={addr} \
                     {ENV_BOOTSTRAP_SECRET}=<secret> {prog}",
                    plan.hosts[0], plan.n
                );
            }
        }
        Some(ssh) => {
            for (h, name) in plan.hosts.iter().enumerate() {
                let mut argv = ssh.prefix.clone();
                argv.push(name.clone());
                argv.push(ssh.remote_cmd.clone());
                println!(
                    "host {h} ({name}), {}: {}",
                    ranks_text(&ranks_of_host(&plan.host_of, h)),
                    shell_words::join(&argv)
                );
            }
            let names: Vec<&str> = plan.env.iter().map(|(k, _)| k.as_str()).collect();
            println!(
                "on each ssh session's stdin: the secret, {ENV_BOOTSTRAP_ADDR}={addr}, the ranks, \
                 the program `{prog}` and the variables [{}]",
                names.join(" ")
            );
        }
    }
}

enum Ev {
    Hello {
        rank: usize,
        listen: String,
        stream: TcpStream,
    },
    Agent {
        host: usize,
        stream: TcpStream,
    },
    RankMsg {
        rank: usize,
        msg: Msg,
    },
    AgentMsg {
        host: usize,
        msg: Msg,
    },
    /// The agent's control stream reached its end: every report the agent
    /// sent has been delivered before this event.
    AgentGone {
        host: usize,
    },
    Child {
        pid: u32,
        end: RankEnd,
    },
    Signal(i32),
}

fn start_acceptor(
    listener: TcpListener,
    secret: Secret,
    n: usize,
    nhosts: usize,
    tx: Sender<Ev>,
) -> Result<(), SpawnError> {
    thread::Builder::new()
        .name("bootstrap-accept".into())
        .spawn(move || {
            for conn in listener.incoming() {
                let Ok(s) = conn else { continue };
                let tx = tx.clone();
                let _ = thread::Builder::new()
                    .stack_size(128 * 1024)
                    .spawn(move || serve_conn(s, secret, n, nhosts, tx));
            }
        })
        .map(|_| ())
        .map_err(|e| SpawnError::io("starting the accept thread", e))
}

fn serve_conn(mut s: TcpStream, secret: Secret, n: usize, nhosts: usize, tx: Sender<Ev>) {
    let peer = s
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| "?".into());
    let _ = s.set_read_timeout(Some(AUTH_TIMEOUT));
    let first = read_frame(&mut s, MAX_HELLO)
        .map_err(|e| e.to_string())
        .and_then(|f| Msg::decode(&f).map_err(|e| e.to_string()));
    let drop_it =
        |why: String| tracing::warn!("bootstrap: dropped a connection from {peer}: {why}");
    let reader = |s: &TcpStream| {
        let _ = s.set_read_timeout(None);
        let _ = s.set_nodelay(true);
        s.try_clone().ok()
    };
    match first {
        Ok(Msg::RankHello {
            secret: s2,
            rank,
            size,
            listen,
        }) if secret_eq(&s2, &secret) => {
            let rank = rank as usize;
            if rank >= n || size as usize != n {
                return drop_it(format!("rank {rank} of {size} does not fit a job of {n}"));
            }
            let Some(mut r) = reader(&s) else { return };
            if tx
                .send(Ev::Hello {
                    rank,
                    listen,
                    stream: s,
                })
                .is_err()
            {
                return;
            }
            while let Ok(f) = read_frame(&mut r, MAX_HELLO) {
                match Msg::decode(&f) {
                    Ok(msg) => {
                        if tx.send(Ev::RankMsg { rank, msg }).is_err() {
                            return;
                        }
                    }
                    Err(e) => tracing::warn!("bootstrap: rank {rank} sent a bad message: {e}"),
                }
            }
        }
        Ok(Msg::AgentHello { secret: s2, host }) if secret_eq(&s2, &secret) => {
            let host = host as usize;
            if host >= nhosts {
                return drop_it(format!("agent for host {host} of {nhosts}"));
            }
            let Some(mut r) = reader(&s) else { return };
            if tx.send(Ev::Agent { host, stream: s }).is_err() {
                return;
            }
            while let Ok(f) = read_frame(&mut r, MAX_HELLO) {
                if let Ok(msg) = Msg::decode(&f) {
                    if tx.send(Ev::AgentMsg { host, msg }).is_err() {
                        return;
                    }
                }
            }
            let _ = tx.send(Ev::AgentGone { host });
        }
        Ok(Msg::RankHello { .. }) | Ok(Msg::AgentHello { .. }) => drop_it("wrong secret".into()),
        Ok(_) => drop_it("unexpected first message".into()),
        Err(e) => drop_it(e),
    }
}

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

struct Job {
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
    code: Option<i32>,
    grace: Option<(usize, Instant)>,
    teardown: Option<Teardown>,
    signals: usize,
    ranks_done_at: Option<Instant>,
    forwarders: Vec<thread::JoinHandle<()>>,
}

impl Job {
    fn new(plan: &Plan) -> Job {
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
        }
    }

    fn host_name(&self, rank: usize) -> &str {
        &self.hosts[self.host_of[rank]]
    }

    fn spawn_local(
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

    fn spawn_ssh(
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
            cmd.stdin(Stdio::piped());
            own_group_and_pdeathsig(&mut cmd);
            if plan.verbose {
                let mut argv = ssh.prefix.clone();
                argv.push(name.clone());
                argv.push(ssh.remote_cmd.clone());
                eprintln!(
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
        d.into_iter().min()
    }

    fn run(&mut self, rx: mpsc::Receiver<Ev>) {
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
                    eprintln!(
                        "gasnetrun-ofi: rank {r} on host {} {code} but {} rank(s) still ran \
                         after the exit timeout of {:.1}s; terminating the job",
                        self.host_name(r),
                        self.running,
                        self.timeout.as_secs_f64()
                    );
                    self.code.get_or_insert(1);
                    self.start_teardown(Signal::SIGTERM);
                }
            }
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

    /// The hard deadline passed: kill what is left and stop waiting.
    fn give_up(&mut self) {
        for &pid in self.ssh_pid.iter().flatten() {
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
        self.kill_all(Signal::SIGKILL);
        if self.running > 0 {
            eprintln!(
                "gasnetrun-ofi: {} rank(s) did not report their end; giving up on them",
                self.running
            );
            self.code.get_or_insert(1);
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
                    tracing::warn!("bootstrap: dropped a second hello from rank {rank}");
                    return;
                }
                self.listen[rank] = Some(listen);
                self.ctl[rank] = Some(stream);
                self.try_welcome(rank);
                for c in tree_children(rank, self.n, self.radix) {
                    self.try_welcome(c);
                }
            }
            Ev::RankMsg { rank, msg } => match msg {
                Msg::Abort { code } => {
                    if self.teardown.is_none() && self.code.is_none() {
                        eprintln!(
                            "gasnetrun-ofi: rank {rank} on host {} called abort({code}); terminating the job",
                            self.host_name(rank)
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
                self.agents[host] = Some(stream);
                self.agent_open[host] = true;
                if self.teardown.is_some() {
                    self.kill_host(host, Signal::SIGTERM);
                }
            }
            Ev::AgentMsg { host, msg } => {
                if let Msg::RankExit { rank, end } = msg {
                    let rank = rank as usize;
                    if rank < self.n && self.host_of[rank] == host {
                        self.rank_ended(rank, end);
                    }
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
                        eprintln!(
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
            eprintln!(
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
        let orderly = matches!((self.finalized[rank], end), (Some(c), RankEnd::Code(e)) if c == e);
        if orderly && !end.is_success() {
            self.code.get_or_insert(end.shell_code());
        }
        if end.is_success() || orderly {
            if self.running > 0 && self.grace.is_none() {
                self.grace = Some((rank, Instant::now() + self.timeout));
            }
            return;
        }
        self.code.get_or_insert(end.shell_code());
        if self.running > 0 {
            eprintln!(
                "gasnetrun-ofi: rank {rank} on host {} {} while {} other rank(s) were running; terminating the job",
                self.host_name(rank),
                end.describe(),
                self.running
            );
            self.start_teardown(Signal::SIGTERM);
        } else if let RankEnd::Signal(_) = end {
            eprintln!(
                "gasnetrun-ofi: rank {rank} on host {} {}",
                self.host_name(rank),
                end.describe()
            );
        }
    }

    fn ssh_ended(&mut self, host: usize, end: RankEnd) {
        self.ssh_running = self.ssh_running.saturating_sub(1);
        self.ssh_pid[host] = None;
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
            eprintln!(
                "gasnetrun-ofi: the ssh session to host {host} ({}) {} while {} were running; terminating the job",
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

    fn start_teardown(&mut self, sig: Signal) {
        let now = Instant::now();
        let kill_at = now + TERM_GRACE.min(self.timeout);
        self.teardown = Some(Teardown {
            kill_at,
            hard_at: kill_at + HARD_GRACE,
            killed: false,
        });
        self.kill_all(sig);
    }

    fn kill_host(&mut self, host: usize, sig: Signal) {
        if let Some(s) = &mut self.agents[host] {
            let _ = write_frame(s, &Msg::Kill { signal: sig as i32 }.encode());
        } else if let Some(pid) = self.ssh_pid[host] {
            // No agent yet: ending ssh closes the agent's stdin, which
            // makes it kill its ranks.
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGTERM);
        }
    }

    fn kill_all(&mut self, sig: Signal) {
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

    fn finish_output(&mut self) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    #[test]
    fn placement_is_contiguous_and_balanced() {
        assert_eq!(block_placement(4, 2), vec![0, 0, 1, 1]);
        assert_eq!(block_placement(5, 2), vec![0, 0, 0, 1, 1]);
        assert_eq!(block_placement(3, 3), vec![0, 1, 2]);
        assert_eq!(block_placement(2, 1), vec![0, 0]);
    }

    /// A job of two ranks on one ssh host whose agent is connected (the
    /// stream is a real loopback connection, only written to on teardown).
    fn ssh_job_with_agent() -> (Job, TcpStream) {
        let plan = Plan {
            kind: SpawnerKind::Ssh,
            n: 2,
            hosts: vec!["h0".into()],
            host_of: vec![0, 0],
            ssh: None,
            timeout: Duration::from_secs(10),
            radix: 8,
            bind_ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            env: Vec::new(),
            verbose: false,
        };
        let mut job = Job::new(&plan);
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let ours = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (theirs, _) = l.accept().unwrap();
        job.procs.insert(4242, Proc::Ssh(0));
        job.ssh_pid[0] = Some(4242);
        job.ssh_running = 1;
        job.handle(Ev::Agent {
            host: 0,
            stream: ours,
        });
        (job, theirs)
    }

    fn rank_exit(rank: u32) -> Ev {
        Ev::AgentMsg {
            host: 0,
            msg: Msg::RankExit {
                rank,
                end: RankEnd::Code(0),
            },
        }
    }

    #[test]
    fn ssh_end_overtaking_the_agents_last_reports_is_not_a_lost_host() {
        // The reaper's event for the ssh process can reach the loop before
        // the agent stream's reader has passed on the ranks' exits (CI saw
        // "the ssh session ... exited with code 0 while ranks 0-1 were
        // running"): the reports that follow must still count.
        let (mut job, _peer) = ssh_job_with_agent();
        job.handle(Ev::Child {
            pid: 4242,
            end: RankEnd::Code(0),
        });
        assert_eq!(job.running, 2);
        assert!(job.teardown.is_none() && job.code.is_none());
        job.handle(rank_exit(0));
        job.handle(rank_exit(1));
        job.handle(Ev::AgentGone { host: 0 });
        assert_eq!(job.running, 0);
        assert!(job.teardown.is_none(), "an orderly end was torn down");
        assert_eq!(job.code, None);
        assert_eq!(job.ssh_running, 0);
    }

    #[test]
    fn ranks_not_reported_when_the_agent_stream_ends_are_lost() {
        let (mut job, _peer) = ssh_job_with_agent();
        job.handle(rank_exit(0));
        job.handle(Ev::Child {
            pid: 4242,
            end: RankEnd::Code(0),
        });
        assert!(job.teardown.is_none());
        job.handle(Ev::AgentGone { host: 0 });
        assert_eq!(job.ends[1], Some(RankEnd::Code(0)));
        assert_eq!(job.running, 0);
        assert_eq!(job.code, Some(1), "a lost rank must fail the job");
        assert!(job.teardown.is_some());
    }

    #[test]
    fn agent_stream_ending_first_lets_the_ssh_end_be_judged_at_once() {
        let (mut job, _peer) = ssh_job_with_agent();
        job.handle(Ev::AgentGone { host: 0 });
        job.handle(Ev::Child {
            pid: 4242,
            end: RankEnd::Signal(9),
        });
        assert_eq!(job.running, 0);
        assert_eq!(job.code, Some(137));
        assert!(job.teardown.is_some());
    }

    #[test]
    fn host_lists() {
        assert_eq!(parse_host_list("a, b  c,,d"), vec!["a", "b", "c", "d"]);
        assert_eq!(
            parse_node_file("a\n\n# x\nb slots=2\n  c # comment\n"),
            vec!["a", "b", "c"]
        );
    }

    #[test]
    fn spawner_choice_flag_beats_env() {
        let env = MapEnv::from([(ENV_SPAWNER, "ssh")]);
        let r = EnvReader::quiet(&env);
        let mut spec = JobSpec::default();
        assert_eq!(choose_spawner(&spec, &r).unwrap(), SpawnerKind::Ssh);
        spec.spawner = Some(SpawnerKind::Local);
        assert_eq!(choose_spawner(&spec, &r).unwrap(), SpawnerKind::Local);
        let env = MapEnv::from([("GASNET_SSH_SERVERS", "a b")]);
        assert_eq!(
            choose_spawner(&JobSpec::default(), &EnvReader::quiet(&env)).unwrap(),
            SpawnerKind::Ssh
        );
        let env = MapEnv::new();
        assert_eq!(
            choose_spawner(&JobSpec::default(), &EnvReader::quiet(&env)).unwrap(),
            SpawnerKind::Local
        );
        let env = MapEnv::from([(ENV_SPAWNER, "rsh")]);
        assert!(choose_spawner(&JobSpec::default(), &EnvReader::quiet(&env)).is_err());
    }

    #[test]
    fn propagation_filters() {
        let env = MapEnv::from([
            ("GASNET_A", "1"),
            ("FI_B", "2"),
            ("MLX5_C", "3"),
            ("HFI_D", "4"),
            ("HOME", "/x"),
            ("MINE", "5"),
            (ENV_BOOTSTRAP_SECRET, "s"),
        ]);
        let v = propagated_env(&env, &["MINE".into(), "UNSET".into()]);
        let names: Vec<&str> = v.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, vec!["GASNET_A", "FI_B", "MLX5_C", "HFI_D", "MINE"]);
    }

    #[test]
    fn ssh_options_and_defaults() {
        let env = MapEnv::from([
            ("GASNET_SSH_OPTIONS", "-p 2222 -o 'ProxyCommand=a b'"),
            ("GASNET_SSH_REMOTE_PATH", "/dir with space"),
        ]);
        let c = ssh_conf(&EnvReader::quiet(&env)).unwrap();
        assert_eq!(
            &c.prefix[..5],
            &["ssh", "-p", "2222", "-o", "ProxyCommand=a b"]
        );
        assert!(c.prefix.contains(&"BatchMode=yes".to_string()));
        assert!(c.remote_cmd.starts_with("cd '/dir with space' && exec "));
        let env = MapEnv::from([("GASNET_SSH_OPTIONS", "-o 'unclosed")]);
        assert!(ssh_conf(&EnvReader::quiet(&env)).is_err());
    }

    #[test]
    fn plan_errors() {
        let env = MapEnv::from([("GASNET_SSH_SERVERS", "h1 h2")]);
        let r = EnvReader::quiet(&env);
        let spec = JobSpec {
            nranks: 4,
            nodes: Some(3),
            ..Default::default()
        };
        assert!(matches!(make_plan(&spec, &r), Err(SpawnError::Usage(_))));
        let spec = JobSpec {
            nranks: 4,
            spawner: Some(SpawnerKind::Mpi),
            program: "prog".into(),
            ..Default::default()
        };
        let env = MapEnv::from([(template::ENV_MPIRUN_CMD, "mpirun -np %N")]);
        assert!(matches!(
            run_job(&spec, &EnvReader::quiet(&env)),
            Err(SpawnError::Env(_))
        ));
        let env = MapEnv::new();
        let spec = JobSpec {
            nranks: 4,
            spawner: Some(SpawnerKind::Ssh),
            ..Default::default()
        };
        assert!(matches!(
            make_plan(&spec, &EnvReader::quiet(&env)),
            Err(SpawnError::Usage(_))
        ));
    }
}
