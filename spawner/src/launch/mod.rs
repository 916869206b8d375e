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
//!   running when it expires are torn down and the job exits 1; one that
//!   exits 0 without ever saying hello while others did (it never started
//!   GASNet, and they wait for it) ends the job at once with 1;
//! * SIGINT, SIGTERM and SIGHUP on the launcher are passed to every rank
//!   (a second one sends SIGKILL); the job then exits `128 + signal`.

mod accept;
mod plan;
mod supervise;

pub use plan::{block_placement, parse_host_list, parse_node_file};

use crate::proc::spawn_reaper;
use crate::{new_secret, template, SpawnError};
use accept::{bind_listener, start_acceptor, Ev};
use bootstrap::{ENV_BOOTSTRAP_ADDR, ENV_BOOTSTRAP_SECRET, ENV_RANK, ENV_SIZE, ENV_SPAWNER};
use gex_env::{EnvError, EnvReader, EnvSource};
use plan::{make_plan, print_plan, usage};
use std::ffi::OsString;
use std::sync::mpsc;
use std::thread;
use supervise::Job;

/// Prefixes of the variables passed to every rank.
pub const PROPAGATED_PREFIXES: [&str; 4] = ["GASNET_", "FI_", "MLX5_", "HFI_"];

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

/// A signal reached the launcher: the local spawner starts no more ranks;
/// the job loop then passes it to those that were.
static SIGNALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a signal reached the launcher (see [`SIGNALLED`]).
pub(crate) fn signalled() -> bool {
    SIGNALLED.load(std::sync::atomic::Ordering::Acquire)
}

/// Run a job to its end. Returns the job's exit code (see the module
/// documentation); errors are problems of the launcher itself.
pub fn run_job(spec: &JobSpec, env: &EnvReader<'_>) -> Result<i32, SpawnError> {
    let kind = choose_spawner(spec, env)?;
    if matches!(kind, SpawnerKind::Mpi | SpawnerKind::Pmi) {
        return run_template_job(spec, env, kind);
    }
    let plan = make_plan(spec, env)?;
    crate::capacity::raise_open_files();
    if plan.verbose {
        gex_env::eprintln_whole!(
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
    let listener = bind_listener(plan.bind_ip).map_err(|e| {
        SpawnError::io(
            format!("binding the bootstrap listener on {}", plan.bind_ip),
            e,
        )
    })?;
    let addr = listener
        .local_addr()
        .map_err(|e| SpawnError::io("reading the listener address", e))?;
    if plan.verbose {
        gex_env::eprintln_whole!("gasnetrun-ofi: bootstrap listening on {addr}");
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
                SIGNALLED.store(true, std::sync::atomic::Ordering::Release);
                let _ = tx3.send(Ev::Signal(s));
            }
        });
    }
    let mut job = Job::new(&plan);
    // Local ranks die with a killed launcher; the janitor removes what
    // their shm provider left (ssh agents clean up after their own ranks).
    let mut janitor = match plan.kind {
        SpawnerKind::Ssh => None,
        _ => crate::shm_clean::Janitor::start(),
    };
    match plan.kind {
        SpawnerKind::Ssh => job.spawn_ssh(spec, &plan, addr, secret)?,
        _ => job.spawn_local(spec, &plan, addr, secret)?,
    }
    if let Some(j) = &mut janitor {
        j.watch(job.rank_pids());
    }
    spawn_reaper(tx.clone(), |pid, end| Ev::Child { pid, end });
    drop(tx);
    job.run(rx);
    job.finish_output();
    if let Some(j) = janitor {
        j.done();
    }
    Ok(with_output_failure(job.code.unwrap_or(0)))
}

/// The job's code, unless rank output was lost: then a message, and 1
/// in place of 0 (as `cat` exits on a write error).
fn with_output_failure(code: i32) -> i32 {
    match crate::proc::output_failure() {
        Some(why) => {
            gex_env::eprintln_whole!("gasnetrun-ofi: {why}; the rest of it was lost");
            if code == 0 {
                1
            } else {
                code
            }
        }
        None => code,
    }
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
            gex_env::eprintln_whole!("gasnetrun-ofi: -N {k} is not used: {var} has no %M");
        }
    }
    if verbose {
        gex_env::eprintln_whole!(
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

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

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
    fn template_errors_come_before_any_start() {
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
    }
}
