//! How many ranks one host can start: `gasnetrun-ofi -n 100000` must be
//! refused up front, not fork until the process limit.
//!
//! Every rank costs tasks (kernel threads of execution): the rank's own
//! threads and the two threads that forward its output. A host can start
//! at most `(limit - tasks now) / TASKS_PER_RANK` more ranks, where the
//! limit is the smallest of `kernel.pid_max`, `kernel.threads-max` and
//! the caller's `RLIMIT_NPROC` (when finite and not root). The tasks now
//! are the system's (`/proc/loadavg`'s fourth field) and bound the user's
//! tasks from above, so the estimate errs on the safe side.
//! `GASNET_SPAWN_MAX_PER_HOST` replaces the estimate.

use gex_env::{EnvError, EnvReader};

/// The variable that replaces the estimate.
pub const ENV_MAX_PER_HOST: &str = "GASNET_SPAWN_MAX_PER_HOST";

/// Tasks counted per rank: its main thread, one more of its own and the
/// launcher's (or agent's) two output forwarders.
pub const TASKS_PER_RANK: u64 = 4;

/// What this host can hold, and how that was found (for the message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capacity {
    /// Ranks this host can start.
    pub ranks: u64,
    /// The figures behind `ranks`.
    pub why: String,
    /// An estimate (not the user's `GASNET_SPAWN_MAX_PER_HOST`).
    pub estimated: bool,
}

/// The figures the estimate is made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskFigures {
    /// `kernel.pid_max`.
    pub pid_max: u64,
    /// `kernel.threads-max`.
    pub threads_max: u64,
    /// `RLIMIT_NPROC` when it applies (finite, not root).
    pub nproc: Option<u64>,
    /// Tasks running now.
    pub tasks: u64,
}

impl TaskFigures {
    /// This machine's figures (`None` when `/proc` cannot be read).
    pub fn of_this_host() -> Option<TaskFigures> {
        let num = |p: &str| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
        let loadavg = std::fs::read_to_string("/proc/loadavg").ok()?;
        let tasks = loadavg
            .split_whitespace()
            .nth(3)?
            .split_once('/')?
            .1
            .parse()
            .ok()?;
        let nproc = match nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NPROC)
        {
            Ok((soft, _))
                if soft != nix::sys::resource::RLIM_INFINITY
                    && !nix::unistd::geteuid().is_root() =>
            {
                Some(soft)
            }
            _ => None,
        };
        Some(TaskFigures {
            pid_max: num("/proc/sys/kernel/pid_max")?,
            threads_max: num("/proc/sys/kernel/threads-max")?,
            nproc,
            tasks,
        })
    }

    /// The ranks these figures leave room for.
    pub fn capacity(&self) -> Capacity {
        let mut limit = self.pid_max.min(self.threads_max);
        let mut why = format!("pid_max {}, threads-max {}", self.pid_max, self.threads_max);
        if let Some(n) = self.nproc {
            limit = limit.min(n);
            why.push_str(&format!(", ulimit -u {n}"));
        }
        let ranks = limit.saturating_sub(self.tasks) / TASKS_PER_RANK;
        why.push_str(&format!(
            ", {} tasks running, {TASKS_PER_RANK} per rank",
            self.tasks
        ));
        Capacity {
            ranks,
            why,
            estimated: true,
        }
    }
}

/// This host's capacity: `GASNET_SPAWN_MAX_PER_HOST` when set, else the
/// estimate (`None`: neither, and nothing is refused).
pub fn of_this_host(env: &EnvReader<'_>) -> Result<Option<Capacity>, EnvError> {
    if env.peek(ENV_MAX_PER_HOST).is_some() {
        let n = env.uint(ENV_MAX_PER_HOST, 0, 1, u32::MAX as u64)?;
        return Ok(Some(Capacity {
            ranks: n,
            why: format!("{ENV_MAX_PER_HOST}={n}"),
            estimated: false,
        }));
    }
    Ok(TaskFigures::of_this_host().map(|f| f.capacity()))
}

/// Refuse `ranks` ranks on host `host` when it cannot hold them.
pub fn check(ranks: usize, host: &str, cap: Option<&Capacity>) -> Result<(), String> {
    match cap {
        Some(c) if ranks as u64 > c.ranks => Err(format!(
            "{ranks} ranks on host {host} are more than it can start: {} {} ({}); use \
             fewer ranks or more hosts, or set {ENV_MAX_PER_HOST} to the most ranks a host may \
             start",
            if c.estimated { "about" } else { "at most" },
            c.ranks,
            c.why
        )),
        _ => Ok(()),
    }
}

/// Raise this process's soft limit of open files to its hard limit: the
/// launcher (and an ssh agent) holds a connection per rank and, for ranks
/// it starts, their output pipes, so the usual soft limit of 1,024 would
/// stop a job of a few hundred ranks with "Too many open files". Returns
/// the soft limit now in force.
pub fn raise_open_files() -> Option<u64> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        return Some(hard);
    }
    Some(soft)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_limit_less_what_runs() {
        let f = TaskFigures {
            pid_max: 32768,
            threads_max: 192729,
            nproc: None,
            tasks: 168,
        };
        assert_eq!(f.capacity().ranks, (32768 - 168) / 4);
        let f = TaskFigures {
            nproc: Some(4096),
            ..f
        };
        let c = f.capacity();
        assert_eq!(c.ranks, (4096 - 168) / 4);
        assert_eq!(
            c.why,
            "pid_max 32768, threads-max 192729, ulimit -u 4096, 168 tasks running, 4 per rank"
        );
        let f = TaskFigures { tasks: 5000, ..f };
        assert_eq!(f.capacity().ranks, 0);
    }

    #[test]
    fn refusal_names_the_figures_and_the_override() {
        let c = Capacity {
            ranks: 8150,
            why: "pid_max 32768, threads-max 192729, 168 tasks running, 4 per rank".into(),
            estimated: true,
        };
        assert!(check(8150, "x", Some(&c)).is_ok());
        assert_eq!(
            check(100000, "\"node1\"", Some(&c)).unwrap_err(),
            "100000 ranks on host \"node1\" are more than it can start: about 8150 (pid_max \
             32768, threads-max 192729, 168 tasks running, 4 per rank); use fewer ranks or \
             more hosts, or set GASNET_SPAWN_MAX_PER_HOST to the most ranks a host may start"
        );
        assert!(check(100000, "x", None).is_ok());
    }

    #[test]
    fn the_override_is_a_positive_whole_number() {
        let env = gex_env::MapEnv::from([(ENV_MAX_PER_HOST, "0")]);
        assert_eq!(
            of_this_host(&EnvReader::quiet(&env)).unwrap_err().to_string(),
            "GASNET_SPAWN_MAX_PER_HOST=\"0\" is not accepted: expected a whole number from 1 to 4294967295"
        );
        let env = gex_env::MapEnv::from([(ENV_MAX_PER_HOST, "12")]);
        let c = of_this_host(&EnvReader::quiet(&env)).unwrap().unwrap();
        assert_eq!((c.ranks, c.estimated), (12, false));
    }

    #[test]
    fn this_host_has_figures() {
        let f = TaskFigures::of_this_host().expect("/proc figures");
        assert!(f.pid_max > 0 && f.threads_max > 0 && f.tasks > 0, "{f:?}");
    }
}
