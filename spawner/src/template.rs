//! The mpi and pmi spawners: run the job through an external launcher
//! command built from a template (`MPIRUN_CMD` / `PMIRUN_CMD`, default
//! `mpirun -np %N %C`), as GASNet's `gasnetrun_mpi` does.
//!
//! Template expansion: the template is split into words with shell-like
//! quoting, then
//! * a word that is exactly `%C` becomes the program and its arguments, as
//!   separate words; `%P` the program; `%A` the arguments (zero or more
//!   words);
//! * inside a longer word, `%N` is the number of ranks, `%M` the number of
//!   nodes (`-N`, required when the template uses `%M`), `%C`, `%P` and `%A`
//!   are replaced by their shell-quoted text (for templates such as
//!   `sh -c "... %C"`), and `%%` is a `%`.
//!
//! The command is run directly (no shell), so arguments reach the ranks
//! byte for byte. The launcher's environment reaches the command, plus
//! `GASNET_OFI_SPAWNER=<mpi|pmi>` and `GASNET_OFI_SIZE=<n>` (the ranks'
//! bootstrap checks the PMIx job size against it) and, as
//! root, `OMPI_ALLOW_RUN_AS_ROOT=1` / `OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`.
//! When the command is Open MPI's `mpirun`/`mpiexec`, every propagated
//! variable is also named with `-x NAME` (Open MPI only forwards its own
//! environment to ranks on the local host). The job's exit code is the
//! command's (128 + S when it is killed by signal S).

use crate::launch::{propagated_env, JobSpec, SpawnerKind};
use crate::proc::own_group_and_pdeathsig_with;
use crate::SpawnError;
use bootstrap::{ENV_BOOTSTRAP_ADDR, ENV_BOOTSTRAP_SECRET, ENV_RANK, ENV_SIZE, ENV_SPAWNER};
use gex_env::{EnvError, EnvReader};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Template of the mpi spawner's command.
pub const ENV_MPIRUN_CMD: &str = "MPIRUN_CMD";
/// Template of the pmi spawner's command.
pub const ENV_PMIRUN_CMD: &str = "PMIRUN_CMD";
/// The default of both templates.
pub const DEFAULT_TEMPLATE: &str = "mpirun -np %N %C";

/// What the template placeholders stand for.
#[derive(Debug, Clone)]
pub struct TemplateArgs<'a> {
    /// `%N`: number of ranks.
    pub nranks: usize,
    /// `%M`: number of nodes (`-N`).
    pub nodes: Option<usize>,
    /// `%P`: the program.
    pub program: &'a OsStr,
    /// `%A`: its arguments.
    pub args: &'a [OsString],
}

fn quote(s: &OsStr) -> String {
    shell_words::quote(&s.to_string_lossy()).into_owned()
}

/// Expand `template` (see the module documentation). `var` names the
/// variable the template came from, for error messages.
pub fn expand(
    template: &str,
    var: &str,
    t: &TemplateArgs<'_>,
) -> Result<Vec<OsString>, SpawnError> {
    let words = shell_words::split(template).map_err(|e| {
        EnvError::new(
            var,
            template,
            format!("a command with shell-like quoting ({e})"),
        )
    })?;
    if words.is_empty() {
        return Err(EnvError::new(var, template, "a command").into());
    }
    let runs_program = words.iter().any(|w| w.contains("%C") || w.contains("%P"));
    if !runs_program {
        return Err(EnvError::new(var, template, "a command containing %C (or %P)").into());
    }
    let quoted_args = || {
        t.args
            .iter()
            .map(|a| quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out: Vec<OsString> = Vec::new();
    for w in &words {
        match w.as_str() {
            "%C" => {
                out.push(t.program.to_os_string());
                out.extend(t.args.iter().cloned());
                continue;
            }
            "%P" => {
                out.push(t.program.to_os_string());
                continue;
            }
            "%A" => {
                out.extend(t.args.iter().cloned());
                continue;
            }
            _ => {}
        }
        let mut s = String::new();
        let mut it = w.chars();
        while let Some(c) = it.next() {
            if c != '%' {
                s.push(c);
                continue;
            }
            match it.next() {
                Some('N') => s.push_str(&t.nranks.to_string()),
                Some('M') => match t.nodes {
                    Some(m) => s.push_str(&m.to_string()),
                    None => {
                        return Err(SpawnError::Usage(format!(
                            "{var} uses %M (number of nodes): give -N"
                        )))
                    }
                },
                Some('C') => {
                    s.push_str(&quote(t.program));
                    if !t.args.is_empty() {
                        s.push(' ');
                        s.push_str(&quoted_args());
                    }
                }
                Some('P') => s.push_str(&quote(t.program)),
                Some('A') => s.push_str(&quoted_args()),
                Some('%') => s.push('%'),
                Some(o) => {
                    s.push('%');
                    s.push(o);
                }
                None => s.push('%'),
            }
        }
        out.push(s.into());
    }
    Ok(out)
}

/// True when `cmd` (a path or name) is Open MPI's launcher: its name is
/// `mpirun`, `mpiexec` or `orterun` and `cmd --version` says Open MPI.
fn is_open_mpi(cmd: &OsStr) -> bool {
    let name = std::path::Path::new(cmd)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !["mpirun", "mpiexec", "orterun"].contains(&name.as_str()) {
        return false;
    }
    Command::new(cmd)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map(|o| {
            let t = String::from_utf8_lossy(&o.stdout);
            t.contains("Open MPI") || t.contains("OpenRTE")
        })
        .unwrap_or(false)
}

/// The expanded command and the environment changes for one job.
#[derive(Debug, Clone)]
pub struct TemplateJob {
    /// The command line to run.
    pub argv: Vec<OsString>,
    /// Variables set for the command (on top of the launcher's environment).
    pub set_env: Vec<(String, String)>,
    /// Variables removed from the command's environment.
    pub unset_env: Vec<&'static str>,
    /// The names of the variables passed to the ranks.
    pub passed: Vec<String>,
}

/// Build the command for `kind` (mpi or pmi) from its template.
pub fn plan(
    spec: &JobSpec,
    env: &EnvReader<'_>,
    kind: SpawnerKind,
) -> Result<TemplateJob, SpawnError> {
    let var = match kind {
        SpawnerKind::Mpi => ENV_MPIRUN_CMD,
        SpawnerKind::Pmi => ENV_PMIRUN_CMD,
        k => {
            return Err(SpawnError::InvalidArgument(format!(
                "the {} spawner has no command template",
                k.name()
            )))
        }
    };
    let template = env.string(var, DEFAULT_TEMPLATE);
    let mut argv = expand(
        &template,
        var,
        &TemplateArgs {
            nranks: spec.nranks,
            nodes: spec.nodes,
            program: &spec.program,
            args: &spec.args,
        },
    )?;
    // GASNET_OFI_SIZE tells the ranks how many they should be: without a
    // PMIx server (an MPI launcher that has none) they then fail instead
    // of each running as a job of one rank.
    let mut set_env = vec![
        (ENV_SPAWNER.to_string(), kind.name().to_string()),
        (ENV_SIZE.to_string(), spec.nranks.to_string()),
    ];
    if nix::unistd::geteuid().is_root() {
        for v in ["OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] {
            if env.source().var(v).is_none() {
                set_env.push((v.to_string(), "1".to_string()));
            }
        }
    }
    let mut passed: Vec<String> = propagated_env(env.source(), &spec.extra_env)
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| k != ENV_SPAWNER)
        .collect();
    passed.insert(0, ENV_SIZE.to_string());
    passed.insert(0, ENV_SPAWNER.to_string());
    if is_open_mpi(&argv[0]) {
        let mut x: Vec<OsString> = Vec::new();
        for name in &passed {
            x.push("-x".into());
            x.push(name.into());
        }
        argv.splice(1..1, x);
    }
    Ok(TemplateJob {
        argv,
        set_env,
        unset_env: vec![ENV_BOOTSTRAP_ADDR, ENV_BOOTSTRAP_SECRET, ENV_RANK],
        passed,
    })
}

/// Shell-quoted text of a command line, for `-v` and `-t`.
pub fn command_text(argv: &[OsString]) -> String {
    argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
}

enum Ev {
    /// The command's exit code (128 + S for signal S), and the signal that
    /// ended it, if one did.
    Exited(i32, Option<i32>),
    Signal(i32),
}

/// Run the job through its template command; returns the command's exit
/// code (128 + S if it was killed by signal S).
///
/// The command runs in its own process group and receives SIGTERM if the
/// launcher dies. SIGINT, SIGTERM and SIGHUP on the launcher are passed to
/// it (Open MPI's `mpirun` and `srun` end their job on them); a second
/// signal sends SIGKILL to its process group. The launcher is a child
/// subreaper while the job runs, so rank processes that the command leaves
/// behind are re-parented to it; once the command has ended they get
/// SIGTERM, then SIGKILL a second later, and are reaped. What libfabric's
/// shm provider left in `/dev/shm` for ranks of this host that died is
/// then removed (they left their pids in a `PidDir`).
pub fn run(job: &TemplateJob, kind: SpawnerKind, verbose: bool) -> Result<i32, SpawnError> {
    if verbose {
        gex_env::eprintln_whole!(
            "gasnetrun-ofi: spawner {}: {}",
            kind.name(),
            command_text(&job.argv)
        );
    }
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only changes a flag of this
    // process.
    let subreaper = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } == 0;
    let mut cmd = Command::new(&job.argv[0]);
    cmd.args(&job.argv[1..]);
    for v in &job.unset_env {
        cmd.env_remove(v);
    }
    cmd.envs(job.set_env.iter().map(|(k, v)| (k, v)));
    // The ranks are the external command's children: they leave their
    // pids here, so that what a killed one left in /dev/shm is removed.
    let pid_dir = crate::shm_clean::PidDir::create();
    if let Some(d) = &pid_dir {
        cmd.env(bootstrap::ENV_PID_DIR, d.path());
    }
    cmd.stdin(Stdio::null());
    own_group_and_pdeathsig_with(&mut cmd, libc::SIGTERM);
    crate::proc::drop_inherited_signal_handlers();
    let (tx, rx) = mpsc::channel::<Ev>();
    let sigs = signal_hook::iterator::Signals::new([libc::SIGINT, libc::SIGTERM, libc::SIGHUP]);
    let mut child = cmd.spawn().map_err(|e| SpawnError::Spawn {
        what: job.argv[0].to_string_lossy().into_owned(),
        source: e,
    })?;
    let pid = child.id();
    if let Ok(mut sigs) = sigs {
        let tx2 = tx.clone();
        thread::spawn(move || {
            for s in sigs.forever() {
                if tx2.send(Ev::Signal(s)).is_err() {
                    break;
                }
            }
        });
    }
    thread::spawn(move || {
        use std::os::unix::process::ExitStatusExt;
        let (code, by) = match child.wait() {
            Ok(st) => (
                st.code()
                    .or_else(|| st.signal().map(|s| 128 + s))
                    .unwrap_or(1),
                st.signal(),
            ),
            Err(_) => (1, None),
        };
        let _ = tx.send(Ev::Exited(code, by));
    });
    let mut signals = 0;
    let mut code_from_signal = None;
    let code = loop {
        match rx.recv() {
            Ok(Ev::Exited(c, by)) => {
                // Killed by a signal this launcher did not pass on (an
                // operator's, the OOM killer's): say so, the exit code
                // alone (128 + signal) would not.
                if let (Some(s), None) = (by, code_from_signal) {
                    let name = Signal::try_from(s).map(|g| g.as_str()).unwrap_or("unknown");
                    gex_env::eprintln_whole!(
                        "gasnetrun-ofi: {} was killed by signal {s} ({name}); the job is over",
                        job.argv[0].to_string_lossy()
                    );
                }
                break c;
            }
            Ok(Ev::Signal(s)) => {
                signals += 1;
                code_from_signal.get_or_insert(128 + s);
                if signals == 1 {
                    if verbose {
                        gex_env::eprintln_whole!(
                            "gasnetrun-ofi: received signal {s}; passing it to {}",
                            job.argv[0].to_string_lossy()
                        );
                    }
                    let sig = Signal::try_from(s).unwrap_or(Signal::SIGTERM);
                    let _ = kill(Pid::from_raw(pid as i32), sig);
                } else {
                    let _ = nix::sys::signal::killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
                }
            }
            Err(_) => break 1,
        }
    };
    if subreaper {
        reap_leftovers(verbose);
    }
    if let Some(d) = pid_dir {
        let n = d.clean(Duration::from_secs(2));
        if verbose && n > 0 {
            gex_env::eprintln_whole!(
                "gasnetrun-ofi: removed {n} shm object(s) left by killed ranks"
            );
        }
    }
    // A job ended by our signal exits 128 + signal, whatever the command
    // made of it.
    Ok(match (code_from_signal, code) {
        (Some(s), c) if c != 0 => s,
        (_, c) => c,
    })
}

/// Children of this process, from /proc.
fn my_children() -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut v = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return v;
    };
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may hold spaces and ')'.
        let Some(close) = stat.iter().rposition(|&c| c == b')') else {
            continue;
        };
        let rest = OsStr::from_bytes(&stat[close + 1..])
            .to_string_lossy()
            .into_owned();
        let mut f = rest.split_whitespace();
        let _state = f.next();
        if f.next().and_then(|p| p.parse::<i32>().ok()) == Some(me) {
            v.push(pid);
        }
    }
    v
}

/// Reap children re-parented to us; TERM, then KILL, those still running.
fn reap_leftovers(verbose: bool) {
    let reap = || {
        while let Ok(st) = nix::sys::wait::waitpid(None, Some(nix::sys::wait::WaitPidFlag::WNOHANG))
        {
            if st == nix::sys::wait::WaitStatus::StillAlive {
                break;
            }
        }
    };
    let mut sent_term = false;
    let start = Instant::now();
    loop {
        reap();
        let left = my_children();
        if left.is_empty() {
            return;
        }
        let waited = start.elapsed();
        if waited > Duration::from_millis(300) && !sent_term {
            if verbose {
                gex_env::eprintln_whole!(
                    "gasnetrun-ofi: {} process(es) outlived the launcher command; terminating them",
                    left.len()
                );
            }
            for p in &left {
                let _ = kill(Pid::from_raw(*p), Signal::SIGTERM);
            }
            sent_term = true;
        } else if waited > Duration::from_millis(1300) {
            for p in &left {
                let _ = kill(Pid::from_raw(*p), Signal::SIGKILL);
            }
            if waited > Duration::from_secs(3) {
                return;
            }
        }
        thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn expansion() {
        let args = os(&["a b", "$x;'q'"]);
        let t = TemplateArgs {
            nranks: 4,
            nodes: Some(2),
            program: OsStr::new("/p/prog"),
            args: &args,
        };
        assert_eq!(
            expand(DEFAULT_TEMPLATE, "X", &t).unwrap(),
            os(&["mpirun", "-np", "4", "/p/prog", "a b", "$x;'q'"])
        );
        assert_eq!(
            expand("srun -N %M -n %N --mpi=pmix %P %A", "X", &t).unwrap(),
            os(&[
                "srun",
                "-N",
                "2",
                "-n",
                "4",
                "--mpi=pmix",
                "/p/prog",
                "a b",
                "$x;'q'"
            ])
        );
        let w = expand("sh -c 'exec %C' x%%y -n=%N", "X", &t).unwrap();
        assert_eq!(w[0], "sh");
        assert_eq!(w[3], "x%y");
        assert_eq!(w[4], "-n=4");
        // The embedded %C is shell-quoted: the shell gives back the words.
        let inner = w[2].to_string_lossy().into_owned();
        let inner = inner.strip_prefix("exec ").unwrap();
        assert_eq!(
            shell_words::split(inner).unwrap(),
            vec!["/p/prog", "a b", "$x;'q'"]
        );
    }

    #[test]
    fn template_errors() {
        let t = TemplateArgs {
            nranks: 1,
            nodes: None,
            program: OsStr::new("p"),
            args: &[],
        };
        assert!(matches!(
            expand("mpirun -np %N", "X", &t),
            Err(SpawnError::Env(_))
        ));
        assert!(matches!(expand("", "X", &t), Err(SpawnError::Env(_))));
        assert!(matches!(
            expand("a 'open", "X", &t),
            Err(SpawnError::Env(_))
        ));
        assert!(matches!(
            expand("srun -N %M %C", "X", &t),
            Err(SpawnError::Usage(_))
        ));
    }
}
