//! Starting, watching and killing rank processes (shared by the launcher's
//! local spawner and the ssh agent).

use crate::SpawnError;
use bootstrap::wire::RankEnd;
use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::{waitid, waitpid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc::Sender;
use std::thread::{self, JoinHandle};

/// Make `cmd` start in its own process group and die with its parent.
pub(crate) fn own_group_and_pdeathsig(cmd: &mut Command) {
    own_group_and_pdeathsig_with(cmd, libc::SIGKILL)
}

/// Make `cmd` start in its own process group and receive `sig` when its
/// parent dies.
pub(crate) fn own_group_and_pdeathsig_with(cmd: &mut Command, sig: libc::c_int) {
    let parent = std::process::id() as libc::pid_t;
    cmd.process_group(0);
    // SAFETY: the closure only calls async-signal-safe functions (prctl,
    // getppid, _exit) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0, 0, 0);
            // The parent may have died before prctl: then nobody would kill us.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// Start one rank: `program args` with `env` added, in its own process
/// group, killed if its parent dies. Its stdout and stderr are copied to
/// ours a whole line at a time (with `[rank] ` in front when `prefix`), so
/// lines of different ranks never interleave mid-line. Returns the pid.
pub(crate) fn spawn_rank(
    program: &OsStr,
    args: &[OsString],
    env: &[(OsString, OsString)],
    rank: usize,
    prefix: bool,
    forwarders: &mut Vec<JoinHandle<()>>,
) -> Result<u32, SpawnError> {
    let mut cmd = Command::new(program);
    cmd.args(args).envs(env.iter().map(|(k, v)| (k, v)));
    cmd.stdin(Stdio::null());
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    own_group_and_pdeathsig(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| SpawnError::Spawn {
        what: format!("rank {rank} ({})", program.to_string_lossy()),
        source: e,
    })?;
    let tag = prefix.then(|| format!("[{rank}] "));
    forward_output(&mut child, tag, forwarders);
    // The child is reaped with waitpid(-1) by the reaper thread; dropping
    // the handle neither waits nor kills.
    Ok(child.id())
}

/// Start forwarding a child's piped stdout and stderr (whole lines, each
/// with `tag` in front when given).
pub(crate) fn forward_output(
    child: &mut std::process::Child,
    tag: Option<String>,
    forwarders: &mut Vec<JoinHandle<()>>,
) {
    if let Some(o) = child.stdout.take() {
        forwarders.extend(forward_lines(o, tag.clone(), false));
    }
    if let Some(e) = child.stderr.take() {
        forwarders.extend(forward_lines(e, tag, true));
    }
}

/// The first failed write of forwarded rank output: which stream, and
/// the error (the launcher reports it and does not exit 0).
static OUTPUT_FAILED: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Why forwarded rank output was lost, if it was: a write to this
/// process's stdout or stderr failed (a full disk, a closed stream, a
/// reader that went away); that stream's later output was dropped.
pub(crate) fn output_failure() -> Option<&'static str> {
    OUTPUT_FAILED.get().map(String::as_str)
}

/// Copy `src` to our stdout or stderr in the pieces of
/// [`crate::forward::Splitter`] (whole lines, with `tag` in front), each in
/// one `write_all` under the stream's lock. `None` if no thread could be
/// started (the output is then lost, the job goes on).
fn forward_lines(
    mut src: impl Read + Send + 'static,
    tag: Option<String>,
    to_stderr: bool,
) -> Option<JoinHandle<()>> {
    thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(move || {
            let mut split = crate::forward::Splitter::new(tag.unwrap_or_default().as_bytes());
            // After a failed write the stream's output is dropped (still
            // read, so the rank never blocks on a full pipe).
            let mut failed = false;
            let mut write = |piece: &[u8]| {
                if failed {
                    return;
                }
                let r = if to_stderr {
                    std::io::stderr().lock().write_all(piece)
                } else {
                    let mut o = std::io::stdout().lock();
                    o.write_all(piece).and_then(|_| o.flush())
                };
                if let Err(e) = r {
                    failed = true;
                    let stream = if to_stderr { "error" } else { "output" };
                    let _ = OUTPUT_FAILED
                        .set(format!("writing the ranks' standard {stream} failed: {e}"));
                }
            };
            // On the heap: the thread's stack is small.
            let mut buf = vec![0u8; 16 * 1024];
            loop {
                match src.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => split.push(&buf[..n], &mut write),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            split.finish(&mut write);
        })
        .ok()
}

/// How a child ended, from a `waitpid` status (`None`: it did not end).
pub(crate) fn rank_end(st: WaitStatus) -> Option<RankEnd> {
    match st {
        WaitStatus::Exited(_, c) => Some(RankEnd::Code(c)),
        WaitStatus::Signaled(_, s, _) => Some(RankEnd::Signal(s as i32)),
        _ => None,
    }
}

/// Whether process `pid` is stopped (state `T` or `t` in
/// `/proc/<pid>/stat`: SIGSTOP, a terminal stop, or a debugger).
pub(crate) fn is_stopped(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the command name, which is in parentheses and may
    // itself hold spaces or parentheses.
    stat.rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next())
        .is_some_and(|c| c == 'T' || c == 't')
}

/// Send `sig` to the process group led by `pid`.
pub(crate) fn signal_group(pid: u32, sig: Signal) {
    let _ = killpg(Pid::from_raw(pid as i32), sig);
}

/// Start the thread that reaps every child of this process and reports
/// `(pid, end)`. Start it only after every child has been spawned (it stops
/// when there are no children left). A child that ended is first left
/// unreaped (`WNOWAIT`) while what its shm provider left in `/dev/shm` is
/// removed: its pid cannot be reused before it is reaped.
pub(crate) fn spawn_reaper<E: Send + 'static>(
    tx: Sender<E>,
    wrap: impl Fn(u32, RankEnd) -> E + Send + 'static,
) {
    let _ = thread::Builder::new()
        .name("reaper".into())
        .stack_size(64 * 1024)
        .spawn(move || loop {
            let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT;
            let pid = match waitid(Id::All, flags) {
                Ok(st) => st.pid(),
                Err(nix::errno::Errno::EINTR) => continue,
                Err(_) => break,
            };
            let Some(pid) = pid else { continue };
            crate::shm_clean::remove_left(pid.as_raw() as u32);
            match waitpid(pid, None) {
                Ok(st) => {
                    if let Some(end) = rank_end(st) {
                        if tx.send(wrap(pid.as_raw() as u32, end)).is_err() {
                            break;
                        }
                    }
                }
                Err(nix::errno::Errno::EINTR) => continue,
                Err(_) => break,
            }
        });
}

/// Drop signal handlers that libraries installed before `main` for the
/// signals the launcher forwards to its ranks, so that the launcher's own
/// handlers do not chain into them.
///
/// Debian's libfabric loads `libinfinipath.so.4` (for its psm provider),
/// whose load-time constructor installs a SIGTERM/SIGINT handler that calls
/// `exit(1)`; chained behind ours it ended the launcher before it could pass
/// the signal on (known-issues.md). A disposition of SIG_IGN (for example
/// SIGHUP under `nohup`) is the user's choice and is kept.
pub fn drop_inherited_signal_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: sigaction is plain old data; all-zero is a valid value.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: with a NULL new action sigaction only reads the current
        // disposition into `old`, which is owned here.
        let rc = unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) };
        if rc != 0 {
            continue;
        }
        if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN {
            tracing::debug!("dropping a handler for signal {sig} installed before main");
            // SAFETY: restoring the default disposition; no handler code of
            // ours is involved.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
    }
}
