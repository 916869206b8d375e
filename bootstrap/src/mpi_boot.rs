//! The bootstrap over MPI itself (cargo feature `mpi`, rsmpi): used by
//! ranks of the mpi spawner (`GASNET_OFI_SPAWNER=mpi`) when the feature is
//! on. `MPI_Init_thread` (at least `MPI_THREAD_SERIALIZED`; every call is
//! made under one mutex), then:
//! * allgather: `MPI_Allgather` of the lengths, `MPI_Allgatherv` of the
//!   bytes;
//! * barrier: `MPI_Barrier`; broadcast: `MPI_Bcast` of the length, then of
//!   the bytes;
//! * host map: an allgather of `MPI_Get_processor_name`;
//! * abort: `MPI_Abort`; finalize: `MPI_Finalize`.
//!
//! MPI's default error handler (errors are fatal) stays in place: an MPI
//! failure ends the job through MPI, as `abort` would.

use crate::hostmap::HostMap;
use crate::{Bootstrap, BootstrapError};
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Threading;
use std::sync::Mutex;

/// [`Bootstrap`] over MPI's world communicator.
pub struct MpiBootstrap {
    rank: usize,
    size: usize,
    hosts: HostMap,
    /// `None` once finalized. Every MPI call is made with this lock held.
    universe: Mutex<Option<Universe>>,
}

impl std::fmt::Debug for MpiBootstrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MpiBootstrap")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .finish()
    }
}

fn allgather_world(w: &SimpleCommunicator, mine: &[u8]) -> Result<Vec<Vec<u8>>, BootstrapError> {
    let n = i32::try_from(mine.len()).map_err(|_| {
        BootstrapError::InvalidArgument(format!(
            "allgather contribution of {} bytes is over MPI's 2 GiB count limit",
            mine.len()
        ))
    })?;
    let mut counts = vec![0i32; w.size() as usize];
    w.all_gather_into(&n, &mut counts[..]);
    let mut displs = Vec::with_capacity(counts.len());
    let mut total: i64 = 0;
    for &c in &counts {
        displs.push(total as i32);
        total += c as i64;
    }
    // Every rank sees the same counts, so every rank takes this branch.
    if total > i32::MAX as i64 {
        return Err(BootstrapError::InvalidArgument(format!(
            "allgather of {total} bytes in all is over MPI's 2 GiB displacement limit"
        )));
    }
    let mut buf = vec![0u8; total as usize];
    {
        let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
        w.all_gather_varcount_into(mine, &mut part);
    }
    Ok(counts
        .iter()
        .zip(&displs)
        .map(|(&c, &d)| buf[d as usize..(d + c) as usize].to_vec())
        .collect())
}

impl MpiBootstrap {
    /// `MPI_Init_thread`, rank and size of the world communicator, and the
    /// host map (one allgather).
    pub fn init() -> Result<MpiBootstrap, BootstrapError> {
        let (universe, provided) = mpi::initialize_with_threading(Threading::Serialized)
            .ok_or_else(|| {
                BootstrapError::Mpi("MPI was initialized before the bootstrap".into())
            })?;
        if matches!(provided, Threading::Single | Threading::Funneled) {
            return Err(BootstrapError::Mpi(format!(
                "this MPI provides only {provided:?} threading; the bootstrap needs Serialized"
            )));
        }
        let w = universe.world();
        let (rank, size) = (w.rank() as usize, w.size() as usize);
        let host = mpi::environment::processor_name()
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(crate::this_host);
        let names: Vec<String> = allgather_world(&w, host.as_bytes())?
            .into_iter()
            .map(|n| String::from_utf8_lossy(&n).into_owned())
            .collect();
        let hosts = HostMap::new(rank, &crate::pmix::host_entries(&names))?;
        Ok(MpiBootstrap {
            rank,
            size,
            hosts,
            universe: Mutex::new(Some(universe)),
        })
    }

    fn with_world<T>(
        &self,
        f: impl FnOnce(&SimpleCommunicator) -> Result<T, BootstrapError>,
    ) -> Result<T, BootstrapError> {
        let g = self.universe.lock().unwrap_or_else(|e| e.into_inner());
        let u = g.as_ref().ok_or_else(|| {
            BootstrapError::InvalidArgument("bootstrap collective after finalize".into())
        })?;
        f(&u.world())
    }
}

impl Bootstrap for MpiBootstrap {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn hosts(&self) -> &HostMap {
        &self.hosts
    }
    fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>, BootstrapError> {
        self.with_world(|w| allgather_world(w, mine))
    }
    fn barrier(&self) -> Result<(), BootstrapError> {
        self.with_world(|w| {
            w.barrier();
            Ok(())
        })
    }
    fn broadcast(&self, root: usize, data: &[u8]) -> Result<Vec<u8>, BootstrapError> {
        if root >= self.size {
            return Err(BootstrapError::InvalidArgument(format!(
                "broadcast root {root} is not a rank of a job of {}",
                self.size
            )));
        }
        self.with_world(|w| {
            let p = w.process_at_rank(root as i32);
            let mut len: u64 = if self.rank == root {
                data.len() as u64
            } else {
                0
            };
            p.broadcast_into(&mut len);
            let mut buf = if self.rank == root {
                data.to_vec()
            } else {
                vec![0u8; len as usize]
            };
            p.broadcast_into(&mut buf[..]);
            Ok(buf)
        })
    }
    fn abort(&self, code: i32) -> ! {
        let g = self.universe.lock().unwrap_or_else(|e| e.into_inner());
        match g.as_ref() {
            Some(u) => u.world().abort(code),
            None => std::process::exit(code),
        }
    }
    fn name(&self) -> &'static str {
        "mpi"
    }
    fn finalize(&self, _code: i32) -> Result<(), BootstrapError> {
        // Dropping the universe calls MPI_Finalize.
        let u = self
            .universe
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        drop(u);
        Ok(())
    }
}
