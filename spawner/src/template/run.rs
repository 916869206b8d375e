//! Running the template command: signals passed on, the exit status
//! reported, leftover children reaped.

use super::{command_text, TemplateJob};
use crate::launch::SpawnerKind;
use crate::proc::own_group_and_pdeathsig_with;
use crate::SpawnError;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

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
/// then removed (they left their pids in a `PidDir`); if the launcher is
/// killed with SIGKILL, a janitor process does that instead.
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
    // If this launcher is killed (SIGKILL: no handler runs), the janitor
    // cleans up after those ranks and removes the directory.
    let mut janitor = None;
    if let Some(d) = &pid_dir {
        cmd.env(bootstrap::ENV_PID_DIR, d.path());
        janitor = crate::shm_clean::Janitor::start();
        if let Some(j) = &mut janitor {
            j.watch_dir(d);
        }
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
    if let Some(j) = janitor {
        j.done();
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
