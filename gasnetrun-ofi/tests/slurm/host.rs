//! What the Slurm test needs of this host: Slurm's and munge's programs,
//! a clean environment for them, free ports, the processes of a cluster
//! and the names in /dev/shm.

use super::common::pids_where;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const INSTALL: &str = "run `bash scripts/setup.sh` (it installs slurm-wlm, munge and \
                       libpmix-dev; by hand: apt-get install slurm-wlm munge libpmix-dev)";

/// `name` in PATH or in the sbin directories (the daemons live in
/// /usr/sbin, which a non-login PATH may lack).
pub(crate) fn find_exe(name: &str) -> PathBuf {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/usr/bin", "/sbin", "/bin"])
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file());
    found.unwrap_or_else(|| panic!("{name} not found: {INSTALL}"))
}

/// Variables of an enclosing job or of the test's environment that must
/// not reach Slurm's commands or the ranks: Slurm's own (an enclosing
/// allocation would capture srun), PMIx's, and the conduit's (each job sets
/// the ones it means).
pub(crate) fn scrubbed(cmd: &mut Command) {
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if [
            "SLURM_", "SRUN_", "SALLOC_", "SBATCH_", "PMIX_", "FI_", "GASNET_",
        ]
        .iter()
        .any(|p| k.starts_with(p))
            || k == "PMIRUN_CMD"
            || k == "MPIRUN_CMD"
        {
            cmd.env_remove(&*k);
        }
    }
}

pub(crate) fn shm_names() -> BTreeSet<String> {
    std::fs::read_dir("/dev/shm")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Pids of processes (not this one) whose environment holds `needle`: the
/// daemons, job steps and ranks of one cluster carry its `SLURM_CONF`.
pub(crate) fn processes_with_env(needle: &[u8]) -> Vec<i32> {
    pids_where(|pid| {
        std::fs::read(format!("/proc/{pid}/environ"))
            .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle))
    })
}

pub(crate) fn kill(pid: i32, sig: nix::sys::signal::Signal) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
}

/// `n` free TCP ports (bound on every address, as slurmctld and slurmd do).
pub(crate) fn free_ports(n: usize) -> Vec<u16> {
    let ls: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("0.0.0.0:0").expect("binding a free port"))
        .collect();
    ls.iter().map(|l| l.local_addr().unwrap().port()).collect()
}
