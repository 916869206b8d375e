//! What a dead rank's shm provider left in `/dev/shm`.
//!
//! libfabric's shm provider backs each endpoint with a POSIX shared-memory
//! object named `<pid>:<uid>:<n>` and removes it only in `fi_close` or its
//! own signal handlers; a rank killed with SIGKILL (or whose launcher was
//! killed, which kills it) leaves three objects of 16 MiB, and a later
//! process with the same pid then fails to start its endpoints
//! (known-issues.md). The conduit removes its own when it can; these are
//! the ones it cannot:
//! * the launcher (or an ssh agent) removes a child's objects when the
//!   child has ended and before it is reaped, so the pid cannot have been
//!   reused yet ([`remove_left`], called by the reaper);
//! * when the launcher itself is killed, a janitor process it started
//!   ([`run_janitor`]) outlives it, waits for the ranks it was told about
//!   (by pid, or by the pid directory below) to be gone, and removes their
//!   objects (and the directory);
//! * ranks started by an external launcher (`mpirun`, `srun`: the mpi and
//!   pmi spawners) are not the launcher's children: each leaves its pid in
//!   a directory the launcher made ([`PidDir`]), and once the external
//!   command has ended the launcher removes the objects of those that are
//!   gone.

use std::io::{BufRead, BufReader, Read};
use std::time::{Duration, Instant};

/// Remove `/dev/shm/<pid>:<uid>:*` (regular files of this user) for the
/// ended process `pid`; returns how many were removed.
pub fn remove_left(pid: u32) -> usize {
    let uid = nix::unistd::geteuid().as_raw();
    let prefix = format!("{pid}:{uid}:");
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return 0;
    };
    let mut removed = 0;
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        if !endpoint_suffix(rest) {
            continue;
        }
        let ours = e.metadata().is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            m.is_file() && m.uid() == uid
        });
        if ours && std::fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    if removed > 0 {
        tracing::debug!("removed {removed} shm object(s) left by pid {pid}");
    }
    removed
}

/// Whether `rest`, what follows `<pid>:<uid>:` in an object's name, is
/// what the shm provider puts there: the endpoint's index, and from
/// libfabric 2.3 possibly `:<random>` after it (the name it takes when the
/// first one is held by another object).
fn endpoint_suffix(rest: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match rest.split_once(':') {
        None => digits(rest),
        Some((n, seed)) => digits(n) && digits(seed),
    }
}

/// The janitor's input: one `pid N` line per rank started, a `dir PATH`
/// line for a [`PidDir`] whose ranks an external launcher starts, then
/// `done` when the launcher ended normally (it cleaned up itself).
pub const JANITOR_DONE: &str = "done";

/// Run as the janitor: read rank pids and pid directories from `input`
/// (the launcher's pipe); at `done`, exit; at end of input without it (the
/// launcher died), wait up to 10 s for each rank to be gone (they die with
/// their parent, or within 250 ms of it: `conduit::boot::watch_parent`),
/// then remove what they left, and the pid directories. Returns the exit
/// code.
pub fn run_janitor(input: impl Read) -> i32 {
    let mut pids = Vec::new();
    let mut dirs = Vec::new();
    for line in BufReader::new(input).lines() {
        let Ok(line) = line else { break };
        if line == JANITOR_DONE {
            return 0;
        }
        if let Some(p) = line
            .strip_prefix("pid ")
            .and_then(|p| p.parse::<u32>().ok())
        {
            pids.push(p);
        } else if let Some(d) = line.strip_prefix("dir ") {
            // Taken over only once the launcher is known dead (a `PidDir`
            // removes its directory when dropped).
            dirs.push(d.to_string());
        }
    }
    let until = Instant::now() + Duration::from_secs(10);
    for pid in pids {
        while std::path::Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            remove_left(pid);
        }
    }
    for d in dirs.iter().filter_map(|d| PidDir::adopt(d)) {
        d.clean(until.saturating_duration_since(Instant::now()));
    }
    0
}

/// A directory (mode 0700, under the temporary directory) where the ranks
/// of an external launcher leave their pids (`bootstrap::ENV_PID_DIR`).
pub struct PidDir {
    path: std::path::PathBuf,
}

impl PidDir {
    /// Make a fresh one; `None` if it cannot be made (the job goes on; only
    /// a killed rank's objects would stay).
    pub fn create() -> Option<PidDir> {
        use std::os::unix::fs::DirBuilderExt;
        let mut r = [0u8; 8];
        getrandom::fill(&mut r).ok()?;
        let name = format!(
            "gasnetrun-ofi.{}.{:016x}",
            std::process::id(),
            u64::from_le_bytes(r)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| tracing::debug!("no pid directory {}: {e}", path.display()))
            .ok()?;
        Some(PidDir { path })
    }

    /// A directory another process made (the janitor's `dir` line):
    /// `None` unless it is a pid directory of this user under the
    /// temporary directory, so a stray line cannot have anything else
    /// removed.
    fn adopt(path: &str) -> Option<PidDir> {
        use std::os::unix::fs::MetadataExt;
        let path = std::path::PathBuf::from(path);
        let named = path.parent() == Some(std::env::temp_dir().as_path())
            && path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("gasnetrun-ofi."));
        if !named {
            return None;
        }
        let meta = std::fs::symlink_metadata(&path).ok()?;
        let ours = meta.is_dir() && meta.uid() == nix::unistd::geteuid().as_raw();
        // Made only once checked: a `PidDir` removes its path when dropped.
        if ours {
            Some(PidDir { path })
        } else {
            None
        }
    }

    /// Its path.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The job has ended: wait up to `grace` for the ranks that left their
    /// pid to be gone, remove what the gone ones left in `/dev/shm`, and
    /// the directory. Returns how many objects were removed.
    pub fn clean(self, grace: Duration) -> usize {
        let pids: Vec<u32> = std::fs::read_dir(&self.path)
            .map(|d| {
                d.flatten()
                    .filter_map(|e| e.file_name().to_str()?.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        let until = Instant::now() + grace;
        let alive = |pid: u32| std::path::Path::new(&format!("/proc/{pid}")).exists();
        let mut removed = 0;
        for pid in pids {
            while alive(pid) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
            }
            if !alive(pid) {
                removed += remove_left(pid);
            }
        }
        removed
    }
}

impl Drop for PidDir {
    fn drop(&mut self) {
        // Never anything but a pid directory, whatever made this value.
        let named = self
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("gasnetrun-ofi."));
        if named {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// The launcher's end of a janitor process (`gasnetrun-ofi --shm-janitor`).
pub(crate) struct Janitor {
    stdin: std::process::ChildStdin,
}

impl Janitor {
    /// Start the janitor: this executable with `--shm-janitor`, in a
    /// process group of its own and without a parent-death signal (it must
    /// outlive a killed launcher). `None` if it cannot be started (the job
    /// goes on; only a killed launcher's ranks would leave objects).
    pub(crate) fn start() -> Option<Janitor> {
        use std::os::unix::process::CommandExt;
        let exe = std::env::current_exe().ok()?;
        let mut child = std::process::Command::new(exe)
            .arg("--shm-janitor")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| tracing::debug!("no shm janitor: {e}"))
            .ok()?;
        Some(Janitor {
            stdin: child.stdin.take()?,
        })
    }

    /// Tell the janitor about ranks started.
    pub(crate) fn watch(&mut self, pids: impl IntoIterator<Item = u32>) {
        use std::io::Write;
        let text: String = pids.into_iter().map(|p| format!("pid {p}\n")).collect();
        let _ = self.stdin.write_all(text.as_bytes());
    }

    /// Tell the janitor about the pid directory of an external launcher's
    /// ranks.
    pub(crate) fn watch_dir(&mut self, dir: &PidDir) {
        use std::io::Write;
        if let Some(p) = dir.path().to_str() {
            let _ = writeln!(self.stdin, "dir {p}");
        }
    }

    /// The launcher ends normally: the janitor has nothing to do.
    pub(crate) fn done(mut self) {
        use std::io::Write;
        let _ = writeln!(self.stdin, "{JANITOR_DONE}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pid that no process has (above any pid_max in use here).
    const DEAD: u32 = 4_000_000;

    #[test]
    fn removes_only_the_dead_pids_objects() {
        let uid = nix::unistd::geteuid().as_raw();
        let mine = [
            format!("/dev/shm/{DEAD}:{uid}:0"),
            format!("/dev/shm/{DEAD}:{uid}:12"),
            // libfabric 2.3+'s second choice of name.
            format!("/dev/shm/{DEAD}:{uid}:3:816783025"),
        ];
        let others = [
            format!("/dev/shm/{DEAD}1:{uid}:0"),
            format!("/dev/shm/{DEAD}:{uid}:x"),
            format!("/dev/shm/{DEAD}:{uid}:3:"),
            format!("/dev/shm/{DEAD}:{uid}:3:x"),
            format!("/dev/shm/{DEAD}:{uid}:3:4:5"),
            format!("/dev/shm/{}:{uid}:0", DEAD + 1),
        ];
        for f in mine.iter().chain(&others) {
            std::fs::write(f, b"x").unwrap();
        }
        assert_eq!(remove_left(DEAD), mine.len());
        for f in &mine {
            assert!(!std::path::Path::new(f).exists(), "{f}");
        }
        for f in &others {
            assert!(std::path::Path::new(f).exists(), "{f}");
            std::fs::remove_file(f).unwrap();
        }
    }

    #[test]
    fn janitor_cleans_after_a_dead_launcher_only() {
        let uid = nix::unistd::geteuid().as_raw();
        let f = format!("/dev/shm/{}:{uid}:0", DEAD + 2);
        std::fs::write(&f, b"x").unwrap();
        let input = format!("pid {}\ndone\n", DEAD + 2);
        assert_eq!(run_janitor(input.as_bytes()), 0);
        assert!(std::path::Path::new(&f).exists());
        let input = format!("pid {}\n", DEAD + 2);
        assert_eq!(run_janitor(input.as_bytes()), 0);
        assert!(!std::path::Path::new(&f).exists());
    }

    #[test]
    fn janitor_cleans_a_pid_directory_after_a_dead_launcher_only() {
        let uid = nix::unistd::geteuid().as_raw();
        let f = format!("/dev/shm/{}:{uid}:0", DEAD + 3);
        for done in [true, false] {
            let d = PidDir::create().expect("a pid directory");
            std::fs::write(d.path().join((DEAD + 3).to_string()), b"").unwrap();
            std::fs::write(&f, b"x").unwrap();
            let path = d.path().to_path_buf();
            // The launcher's own clean-up never ran (it was killed).
            std::mem::forget(d);
            let input = format!(
                "dir {}\n{}",
                path.display(),
                if done { "done\n" } else { "" }
            );
            assert_eq!(run_janitor(input.as_bytes()), 0);
            assert_eq!(std::path::Path::new(&f).exists(), done, "done: {done}");
            assert_eq!(path.exists(), done, "done: {done}");
            let _ = std::fs::remove_dir_all(&path);
        }
        let _ = std::fs::remove_file(&f);
        // Only a pid directory of this user under the temporary directory:
        // a directory named otherwise, or one that is not directly in the
        // temporary directory, is refused and left as it is.
        let base = std::env::temp_dir().join(format!("shm-clean-test-{}", std::process::id()));
        let nested = base.join("gasnetrun-ofi.1");
        std::fs::create_dir_all(&nested).unwrap();
        for other in [&base, &nested] {
            assert!(
                PidDir::adopt(other.to_str().unwrap()).is_none(),
                "{}",
                other.display()
            );
            assert!(other.exists(), "{} was removed", other.display());
        }
        std::fs::remove_dir_all(&base).unwrap();
    }
}
