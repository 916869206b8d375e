//! The plan of a local or ssh job: its hosts, the placement of its ranks,
//! the ssh command for each host, and what `-t` prints.

use super::{choose_spawner, propagated_env, JobSpec, SpawnerKind};
use crate::SpawnError;
use bootstrap::{
    this_host, ENV_BOOTSTRAP_ADDR, ENV_BOOTSTRAP_HOST, ENV_BOOTSTRAP_RADIX, ENV_BOOTSTRAP_SECRET,
    ENV_RANK, ENV_SIZE,
};
use gex_env::{EnvError, EnvReader, ExitTimeout};
use std::ffi::OsString;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::time::Duration;

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
pub(super) struct SshConf {
    pub(super) prefix: Vec<String>,
    pub(super) remote_cmd: String,
    /// `GASNET_SSH_STARTUP_TIMEOUT`: how long every host's agent has to
    /// answer before the job is ended naming the hosts that did not.
    pub(super) startup: Duration,
    /// `GASNET_SSH_OUT_DEGREE`: the most ssh sessions one process starts.
    pub(super) degree: usize,
}

impl SshConf {
    /// The command that starts an agent.
    pub(super) fn command(&self) -> crate::sshtree::SshCommand {
        crate::sshtree::SshCommand {
            prefix: self.prefix.clone(),
            remote_cmd: self.remote_cmd.clone(),
        }
    }
}

/// `GASNET_SSH_STARTUP_TIMEOUT`.
pub(super) const ENV_SSH_STARTUP_TIMEOUT: &str = "GASNET_SSH_STARTUP_TIMEOUT";

/// OpenSSH options the launcher adds after the user's (OpenSSH keeps the
/// first value of an option, so `GASNET_SSH_OPTIONS` overrides each):
/// no prompts, a connection that fails within 10 s, and a session whose
/// peer stops answering ends within 30 s.
pub(super) const OPENSSH_DEFAULTS: [&str; 5] = [
    "StrictHostKeyChecking=no",
    "BatchMode=yes",
    "ConnectTimeout=10",
    "ServerAliveInterval=10",
    "ServerAliveCountMax=3",
];

pub(super) struct Plan {
    pub(super) kind: SpawnerKind,
    pub(super) n: usize,
    pub(super) hosts: Vec<String>,
    pub(super) host_of: Vec<usize>,
    pub(super) ssh: Option<SshConf>,
    pub(super) timeout: Duration,
    pub(super) radix: usize,
    pub(super) bind_ip: IpAddr,
    pub(super) env: Vec<(String, String)>,
    pub(super) verbose: bool,
}

pub(super) fn usage(s: impl Into<String>) -> SpawnError {
    SpawnError::Usage(s.into())
}

pub(super) fn ssh_conf(env: &EnvReader<'_>) -> Result<SshConf, SpawnError> {
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
        for o in OPENSSH_DEFAULTS {
            prefix.push("-o".into());
            prefix.push(o.into());
        }
    }
    let remote_cmd = format!(
        "cd {} && exec {} --ssh-agent",
        shell_words::quote(&remote_path),
        shell_words::quote(&agent.to_string_lossy())
    );
    let startup = env.float(ENV_SSH_STARTUP_TIMEOUT, 30.0, 1.0, 86400.0)?;
    let degree = env.uint(
        crate::sshtree::ENV_OUT_DEGREE,
        crate::sshtree::DEFAULT_OUT_DEGREE,
        1,
        4096,
    )? as usize;
    Ok(SshConf {
        prefix,
        remote_cmd,
        startup: Duration::from_secs_f64(startup),
        degree,
    })
}

/// The host list and where it came from (`GASNET_SSH_NODEFILE="f"` or
/// `GASNET_SSH_SERVERS="..."`), for messages about its hosts.
fn read_hosts(env: &EnvReader<'_>) -> Result<(Vec<String>, String), SpawnError> {
    let (hosts, from) = read_host_list(env)?;
    // ssh takes a word that starts with '-' as an option, not a host.
    if let Some(bad) = hosts.iter().find(|h| h.starts_with('-')) {
        return Err(usage(format!(
            "{from}: host {bad:?} starts with '-', which ssh would take as an option; \
             name hosts by name or address"
        )));
    }
    Ok((hosts, from))
}

/// The host list as given, and where it came from.
fn read_host_list(env: &EnvReader<'_>) -> Result<(Vec<String>, String), SpawnError> {
    if let Some(f) = env.opt_string("GASNET_SSH_NODEFILE") {
        let text = std::fs::read_to_string(&f)
            .map_err(|e| usage(format!("GASNET_SSH_NODEFILE={f:?} cannot be read: {e}")))?;
        let h = parse_node_file(&text);
        if h.is_empty() {
            return Err(usage(format!("GASNET_SSH_NODEFILE={f:?} names no host")));
        }
        return Ok((h, format!("GASNET_SSH_NODEFILE={f:?}")));
    }
    match env.opt_string("GASNET_SSH_SERVERS") {
        Some(s) if !parse_host_list(&s).is_empty() => {
            Ok((parse_host_list(&s), format!("GASNET_SSH_SERVERS={s:?}")))
        }
        Some(s) if !s.trim().is_empty() => Err(usage(format!(
            "GASNET_SSH_SERVERS={s:?} names no host: expected host names separated by commas \
             or spaces (\"node1,node2\")"
        ))),
        _ => Err(usage(
            "the ssh spawner needs a host list: set GASNET_SSH_SERVERS or GASNET_SSH_NODEFILE",
        )),
    }
}

/// The address this machine uses to reach `host` (no packet is sent), or
/// why there is none. `from` names the variable the host came from.
fn route_to(host: &str, from: &str) -> Result<IpAddr, SpawnError> {
    let addrs = (host, 22).to_socket_addrs().map_err(|e| {
        usage(format!(
            "{from}: host {host:?} cannot be resolved ({e}); name hosts this machine can \
             resolve (or their IP addresses)"
        ))
    })?;
    let Some(target) = addrs.into_iter().find(SocketAddr::is_ipv4) else {
        return Err(usage(format!(
            "{from}: host {host:?} has no IPv4 address (the bootstrap needs one); set \
             {ENV_BOOTSTRAP_HOST} to this machine's IPv4 address its ranks can reach"
        )));
    };
    let s = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))
        .and_then(|s| s.connect(target).map(|()| s))
        .and_then(|s| s.local_addr())
        .map_err(|e| {
            usage(format!(
                "{from}: this machine has no route to host {host:?} ({target}): {e}; set \
                 {ENV_BOOTSTRAP_HOST} to this machine's address its ranks can reach"
            ))
        })?;
    Ok(s.ip())
}

pub(super) fn make_plan(spec: &JobSpec, env: &EnvReader<'_>) -> Result<Plan, SpawnError> {
    let n = spec.nranks;
    if n == 0 {
        return Err(usage("-n must be at least 1"));
    }
    let kind = choose_spawner(spec, env)?;
    let verbose =
        spec.verbose || spec.test_only || spec.keep || env.bool("GASNET_SPAWN_VERBOSE", false)?;
    let timeout = ExitTimeout::from_env_for_job(env, n)?.for_job(n);
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
            let host = this_host();
            let cap = crate::capacity::of_this_host(env)?;
            crate::capacity::check(n, &format!("{host:?} (this host)"), cap.as_ref())
                .map_err(usage)?;
            rank_table_fits(n)?;
            (
                vec![host],
                vec![0; n],
                None,
                IpAddr::V4(Ipv4Addr::LOCALHOST),
            )
        }
        SpawnerKind::Ssh => {
            let (list, from) = read_hosts(env)?;
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
                None => route_to(&hosts[0], &from)?,
            };
            // The user's per-host limit, checked here too (each host's
            // agent checks it again with its own estimate when unset):
            // read through this reader, GASNET_VERBOSEENV reports it.
            if env.peek(crate::capacity::ENV_MAX_PER_HOST).is_some() {
                let cap = crate::capacity::of_this_host(env)?;
                crate::capacity::check(n.div_ceil(nodes), &format!("{:?}", hosts[0]), cap.as_ref())
                    .map_err(usage)?;
            }
            rank_table_fits(n)?;
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

/// Refuse a job whose table of ranks (one word a rank) this launcher
/// cannot allocate, rather than end with an allocation failure.
fn rank_table_fits(n: usize) -> Result<(), SpawnError> {
    let mut v: Vec<usize> = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        usage(format!(
            "-n {n}: the launcher cannot hold a table of {n} ranks ({} bytes) in memory",
            n.saturating_mul(std::mem::size_of::<usize>())
        ))
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

pub(super) fn ranks_text(rs: &[usize]) -> String {
    match (rs.first(), rs.last()) {
        (Some(a), Some(b)) if a == b => format!("rank {a}"),
        (Some(a), Some(b)) => format!("ranks {a}-{b}"),
        _ => "no rank".into(),
    }
}

pub(super) fn ranks_of_host(host_of: &[usize], h: usize) -> Vec<usize> {
    (0..host_of.len()).filter(|&r| host_of[r] == h).collect()
}

fn quote_os(s: &OsString) -> String {
    shell_words::quote(&s.to_string_lossy()).into_owned()
}

pub(super) fn print_plan(spec: &JobSpec, plan: &Plan) {
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

    #[test]
    fn host_lists() {
        assert_eq!(parse_host_list("a, b  c,,d"), vec!["a", "b", "c", "d"]);
        assert_eq!(
            parse_node_file("a\n\n# x\nb slots=2\n  c # comment\n"),
            vec!["a", "b", "c"]
        );
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
        for o in OPENSSH_DEFAULTS {
            assert!(c.prefix.contains(&o.to_string()), "{o}");
        }
        // The user's options come first (OpenSSH keeps the first value).
        let at = |o: &str| c.prefix.iter().position(|p| p == o).unwrap();
        assert!(at("ProxyCommand=a b") < at("ConnectTimeout=10"));
        assert_eq!(c.startup, Duration::from_secs(30));
        assert_eq!(c.degree, 32);
        let env = MapEnv::from([("GASNET_SSH_OUT_DEGREE", "0")]);
        assert_eq!(
            ssh_conf(&EnvReader::quiet(&env)).err().unwrap().to_string(),
            "GASNET_SSH_OUT_DEGREE=\"0\" is not accepted: expected a whole number from 1 to 4096"
        );
        let env = MapEnv::from([(ENV_SSH_STARTUP_TIMEOUT, "0.5")]);
        assert_eq!(
            ssh_conf(&EnvReader::quiet(&env)).err().unwrap().to_string(),
            "GASNET_SSH_STARTUP_TIMEOUT=\"0.5\" is not accepted: expected a number from 1 to 86400"
        );
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

    #[test]
    fn a_host_list_without_hosts_is_named() {
        let read = |v: &str| {
            let env = MapEnv::from([("GASNET_SSH_SERVERS", v)]);
            read_hosts(&EnvReader::quiet(&env))
                .err()
                .unwrap()
                .to_string()
        };
        assert!(
            read(",,").contains("GASNET_SSH_SERVERS=\",,\" names no host: expected host names"),
            "{}",
            read(",,")
        );
        // Empty is as unset.
        assert!(read("").contains("needs a host list: set GASNET_SSH_SERVERS"));
        // ssh would read it as an option (`-F file`, `-oProxyCommand=...`).
        assert_eq!(
            read("127.0.0.1,-F/tmp/cfg"),
            "GASNET_SSH_SERVERS=\"127.0.0.1,-F/tmp/cfg\": host \"-F/tmp/cfg\" starts with '-', \
             which ssh would take as an option; name hosts by name or address"
        );
    }
}
