//! The rank side of job start-up for ofi-conduit programs: what a rank
//! links to find the rest of its job before the network is up.
//!
//! A [`Bootstrap`] (obtained with [`bootstrap_from_env`]) gives rank, size,
//! host map, allgather, barrier, broadcast, abort and finalize. The conduit
//! uses it to exchange endpoint names before inserting them in its address
//! vector.
//!
//! Under `gasnetrun-ofi`'s local and ssh spawners, ranks find the launcher
//! through [`ENV_BOOTSTRAP_ADDR`], prove they belong to the job with
//! [`ENV_BOOTSTRAP_SECRET`], know who they are from [`ENV_RANK`] and
//! [`ENV_SIZE`], and run the collectives over a TCP tree ([`tcp`]). Under
//! a PMIx launcher (Open MPI's `mpirun`, `srun --mpi=pmix`, or
//! `gasnetrun-ofi -spawner=pmi|mpi`, which run one of these) the bootstrap
//! goes through the PMIx server ([`pmix`]), or through MPI with the cargo
//! feature `mpi`. A program started directly (none of these set) is a job
//! of one rank ([`SingleBootstrap`]). Tests that run several ranks as
//! threads of one process use [`local::LocalBootstrap`].
//!
//! The launcher itself lives in the `spawner` crate, which speaks the
//! protocol of [`wire`] with the ranks; applications do not link it.
//!
//! [`reset_provider_signal_handlers`] undoes the signal handlers that a
//! fabric library installs when it is loaded, and only those (see its
//! documentation).

#![warn(missing_docs)]

pub mod deadline;
mod error;
pub mod hostmap;
pub mod local;
#[cfg(feature = "mpi")]
pub mod mpi_boot;
pub mod pmix;
mod signals;
pub mod tcp;
pub mod wire;
mod wire_debug;

pub use error::BootstrapError;
pub use hostmap::{this_host, HostMap};
pub use signals::reset_provider_signal_handlers;

use gex_env::{EnvReader, ProcessEnv};

/// Address (`ip:port`) of the launcher's bootstrap listener, set by the
/// launcher in every rank's environment.
pub const ENV_BOOTSTRAP_ADDR: &str = "GASNET_OFI_BOOTSTRAP_ADDR";
/// The per-job secret (64 hex digits), set by the launcher in every rank's
/// environment (never on a command line). Never printed.
pub const ENV_BOOTSTRAP_SECRET: &str = "GASNET_OFI_BOOTSTRAP_SECRET";
/// The rank of this process, set by the launcher.
pub const ENV_RANK: &str = "GASNET_OFI_RANK";
/// The number of ranks in the job, set by the launcher.
pub const ENV_SIZE: &str = "GASNET_OFI_SIZE";
/// Launcher: radix of the bootstrap tree (default 8).
pub const ENV_BOOTSTRAP_RADIX: &str = "GASNET_OFI_BOOTSTRAP_RADIX";
/// Launcher (ssh spawner): the IP address the bootstrap listener binds to
/// and that remote ranks connect to (default: the address this machine
/// uses to reach the first host).
pub const ENV_BOOTSTRAP_HOST: &str = "GASNET_OFI_BOOTSTRAP_HOST";
/// Launcher: which spawner to use when `-spawner=` is not given.
pub const ENV_SPAWNER: &str = "GASNET_OFI_SPAWNER";
/// A directory where each rank started by an external launcher (the mpi
/// and pmi spawners) leaves an empty file named by its pid, before it opens
/// any provider endpoint: `gasnetrun-ofi` removes, once the job has ended,
/// what libfabric's shm provider left in `/dev/shm` for ranks that died
/// (SIGKILL) on its host. Set by `gasnetrun-ofi`.
pub const ENV_PID_DIR: &str = "GASNET_OFI_PID_DIR";

/// Leave this process's pid in the launcher's pid directory (when there
/// is one); a failure is only logged (the directory is the launcher's
/// host's: a rank elsewhere has none).
fn leave_pid(env: &EnvReader<'_>) {
    if let Some(dir) = env.opt_string(ENV_PID_DIR) {
        let path = std::path::Path::new(&dir).join(std::process::id().to_string());
        if let Err(e) = std::fs::write(&path, b"") {
            tracing::debug!("cannot leave the pid in {}: {e}", path.display());
        }
    }
}

/// What a rank needs before the network is up. Object safe, `Send + Sync`:
/// a multi-threaded conduit can hold it in an `Arc<dyn Bootstrap>`.
///
/// The collectives (`allgather`, `barrier`, `broadcast`) are collective:
/// every rank calls them, in the same order. Calls from several threads
/// of one rank are serialized.
pub trait Bootstrap: Send + Sync {
    /// This process's rank, `0..size()`.
    fn rank(&self) -> usize;
    /// Number of ranks in the job.
    fn size(&self) -> usize;
    /// Which ranks share a host.
    fn hosts(&self) -> &HostMap;
    /// Every rank contributes `mine` (lengths may differ); the result is
    /// indexed by rank.
    fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>, BootstrapError>;
    /// Returns once every rank has called it.
    fn barrier(&self) -> Result<(), BootstrapError>;
    /// Rank `root`'s `data` reaches every rank (`data` is ignored elsewhere).
    fn broadcast(&self, root: usize, data: &[u8]) -> Result<Vec<u8>, BootstrapError>;
    /// End the whole job with `code`: tells the launcher to tear every rank
    /// down, then ends this process. The one sanctioned way for a rank to
    /// end the job.
    fn abort(&self, code: i32) -> !;
    /// Orderly end: report this rank's exit code to the launcher. The caller
    /// then exits with `code`.
    fn finalize(&self, code: i32) -> Result<(), BootstrapError>;
    /// Which bootstrap this is: `single`, `tcp`, `pmix`, `mpi` or `local`.
    fn name(&self) -> &'static str {
        "unknown"
    }
}

/// The bootstrap of a program started directly: one rank.
#[derive(Debug)]
pub struct SingleBootstrap {
    hosts: HostMap,
}

impl SingleBootstrap {
    /// A job of one rank on this host.
    pub fn new() -> Self {
        SingleBootstrap {
            hosts: HostMap::single(&this_host()),
        }
    }
}

impl Default for SingleBootstrap {
    fn default() -> Self {
        Self::new()
    }
}

impl Bootstrap for SingleBootstrap {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn hosts(&self) -> &HostMap {
        &self.hosts
    }
    fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>, BootstrapError> {
        Ok(vec![mine.to_vec()])
    }
    fn barrier(&self) -> Result<(), BootstrapError> {
        Ok(())
    }
    fn broadcast(&self, root: usize, data: &[u8]) -> Result<Vec<u8>, BootstrapError> {
        if root != 0 {
            return Err(BootstrapError::InvalidArgument(format!(
                "broadcast root {root} is not a rank of a job of 1 rank"
            )));
        }
        Ok(data.to_vec())
    }
    fn abort(&self, code: i32) -> ! {
        std::process::exit(code)
    }
    fn finalize(&self, _code: i32) -> Result<(), BootstrapError> {
        Ok(())
    }
    fn name(&self) -> &'static str {
        "single"
    }
}

/// The bootstrap for this process, in this order:
/// 1. TCP when started by `gasnetrun-ofi`'s local or ssh spawner
///    ([`ENV_BOOTSTRAP_ADDR`] set);
/// 2. with the cargo feature `mpi`, MPI when `GASNET_OFI_SPAWNER=mpi` (set
///    by the mpi spawner for its ranks);
/// 3. PMIx when a PMIx server started the process (`PMIX_RANK`,
///    `PMIX_NAMESPACE` or `PMIX_SERVER_URI*` set; see [`pmix`]);
/// 4. a single-rank job otherwise.
///
/// Reads its variables through an [`EnvReader`] over the process
/// environment, so `GASNET_VERBOSEENV=1` shows them (the secret's value is
/// never shown).
pub fn bootstrap_from_env() -> Result<Box<dyn Bootstrap>, BootstrapError> {
    let env = EnvReader::new(&ProcessEnv);
    bootstrap_from(&env)
}

/// [`bootstrap_from_env`] over any variable source.
pub fn bootstrap_from(env: &EnvReader<'_>) -> Result<Box<dyn Bootstrap>, BootstrapError> {
    let Some(addr) = env.opt_string(ENV_BOOTSTRAP_ADDR) else {
        leave_pid(env);
        let expected = env.opt_string(ENV_SIZE);
        let size = env.uint(ENV_SIZE, 1, 1, u32::MAX as u64)?;
        #[cfg(feature = "mpi")]
        if env.opt_string(ENV_SPAWNER).as_deref() == Some("mpi") {
            let b = mpi_boot::MpiBootstrap::init()?;
            if expected.is_some() && b.size() as u64 != size {
                return Err(BootstrapError::Protocol(format!(
                    "the MPI job has {} rank(s) but gasnetrun-ofi was asked for \
                     {ENV_SIZE}={size}: check MPIRUN_CMD (it should use %N)",
                    b.size()
                )));
            }
            return Ok(Box::new(b));
        }
        if pmix::pmix_present(env) {
            let b = pmix::PmixBootstrap::init()?;
            // The pmi and mpi spawners set GASNET_OFI_SIZE to -n: a template
            // that starts another number of ranks is caught here.
            if expected.is_some() && b.size() as u64 != size {
                return Err(BootstrapError::Protocol(format!(
                    "the PMIx job has {} rank(s) but gasnetrun-ofi was asked for \
                     {ENV_SIZE}={size}: check PMIRUN_CMD/MPIRUN_CMD (it should use %N)",
                    b.size()
                )));
            }
            return Ok(Box::new(b));
        }
        if size > 1 {
            return Err(BootstrapError::Protocol(format!(
                "{ENV_SIZE}={size} but neither {ENV_BOOTSTRAP_ADDR} nor a PMIx server \
                 (PMIX_* variables) is set: start multi-rank jobs with gasnetrun-ofi, \
                 or with a PMIx launcher (mpirun, srun --mpi=pmix)"
            )));
        }
        return Ok(Box::new(SingleBootstrap::new()));
    };
    let secret_text = env.peek(ENV_BOOTSTRAP_SECRET).unwrap_or_default();
    env.record(ENV_BOOTSTRAP_SECRET, "(hidden)", secret_text.is_empty());
    if secret_text.is_empty() {
        // The pair comes from the launcher: one without the other is a
        // variable left over (or copied) from another job.
        return Err(BootstrapError::Protocol(format!(
            "{ENV_BOOTSTRAP_ADDR} is set but {ENV_BOOTSTRAP_SECRET} is not: both are set by \
             gasnetrun-ofi for its ranks; start the program with gasnetrun-ofi, or unset \
             {ENV_BOOTSTRAP_ADDR} to run one rank alone"
        )));
    }
    let secret = wire::secret_from_hex(&secret_text).ok_or_else(|| {
        gex_env::EnvError::new(
            ENV_BOOTSTRAP_SECRET,
            "(hidden)",
            "64 hex digits set by gasnetrun-ofi",
        )
    })?;
    // The launcher sets all four: a rank or size missing beside the
    // address and secret would make this process rank 0 of 1 (or of the
    // size), a rank it is not.
    for v in [ENV_SIZE, ENV_RANK] {
        if env.peek(v).is_none_or(|x| x.is_empty()) {
            return Err(BootstrapError::Protocol(format!(
                "{ENV_BOOTSTRAP_ADDR} is set but {v} is not: gasnetrun-ofi sets both (and \
                 {ENV_BOOTSTRAP_SECRET}, {ENV_SIZE}, {ENV_RANK}) for its ranks; start the program with \
                 gasnetrun-ofi, or unset {ENV_BOOTSTRAP_ADDR} to run one rank alone"
            )));
        }
    }
    let size = env.uint(ENV_SIZE, 1, 1, u32::MAX as u64)? as usize;
    let rank = env.uint(ENV_RANK, 0, 0, size as u64 - 1)? as usize;
    Ok(Box::new(tcp::TcpBootstrap::connect(
        &addr, secret, rank, size,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    #[test]
    fn an_address_without_its_secret_is_named() {
        let env = MapEnv::from([(ENV_BOOTSTRAP_ADDR, "127.0.0.1:1")]);
        let e = bootstrap_from(&EnvReader::quiet(&env))
            .err()
            .expect("refused")
            .to_string();
        assert!(
            e.contains(
                "GASNET_OFI_BOOTSTRAP_ADDR is set but GASNET_OFI_BOOTSTRAP_SECRET is not: both \
                 are set by gasnetrun-ofi"
            ),
            "{e}"
        );
    }

    #[test]
    fn an_address_and_secret_without_rank_or_size_are_named() {
        let secret = "ab".repeat(32);
        for (missing, present) in [(ENV_RANK, (ENV_SIZE, "2")), (ENV_SIZE, (ENV_RANK, "1"))] {
            let env = MapEnv::from([
                (ENV_BOOTSTRAP_ADDR, "127.0.0.1:1"),
                (ENV_BOOTSTRAP_SECRET, secret.as_str()),
                present,
            ]);
            let e = bootstrap_from(&EnvReader::quiet(&env))
                .err()
                .expect("refused")
                .to_string();
            assert!(
                e.contains(&format!(
                    "GASNET_OFI_BOOTSTRAP_ADDR is set but {missing} is not: gasnetrun-ofi sets both"
                )),
                "{e}"
            );
        }
    }

    #[test]
    fn no_launcher_means_one_rank() {
        let env = MapEnv::new();
        let b = bootstrap_from(&EnvReader::quiet(&env)).unwrap();
        assert_eq!((b.rank(), b.size()), (0, 1));
        assert_eq!(b.allgather(b"x").unwrap(), vec![b"x".to_vec()]);
        assert_eq!(b.broadcast(0, b"y").unwrap(), b"y".to_vec());
        assert!(b.broadcast(1, b"y").is_err());
        b.barrier().unwrap();
        assert_eq!(b.hosts().nhosts(), 1);
        assert_eq!(b.hosts().local_ranks(), &[0]);
    }

    #[test]
    fn size_without_address_is_an_error() {
        let env = MapEnv::from([(ENV_SIZE, "4")]);
        assert!(bootstrap_from(&EnvReader::quiet(&env)).is_err());
    }

    #[test]
    fn bad_secret_is_an_error_that_hides_the_value() {
        let env = MapEnv::from([
            (ENV_BOOTSTRAP_ADDR, "127.0.0.1:1"),
            (ENV_BOOTSTRAP_SECRET, "zz"),
            (ENV_SIZE, "2"),
            (ENV_RANK, "0"),
        ]);
        let r = EnvReader::quiet(&env);
        let Err(e) = bootstrap_from(&r) else {
            panic!("a bad secret was accepted")
        };
        let e = e.to_string();
        assert!(e.contains("(hidden)") && !e.contains("zz"), "{e}");
        assert!(r.reads().iter().all(|x| x.value != "zz"));
    }

    fn _object_safe(b: Box<dyn Bootstrap>) -> std::sync::Arc<dyn Bootstrap> {
        b.into()
    }
}
