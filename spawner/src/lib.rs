//! The launch side of ofi-conduit jobs: what `gasnetrun-ofi` runs.
//!
//! * [`launch`]: [`run_job`] chooses a spawner (local, ssh, pmi or mpi),
//!   starts the bootstrap listener and the ranks, answers the ranks'
//!   bootstrap hellos, and supervises the job (exit codes, teardown,
//!   signal forwarding);
//! * [`run_agent`]: the per-host agent of the ssh spawner;
//! * [`template`]: the command templates of the pmi and mpi spawners;
//! * [`scale`]: a model of start-up time and per-rank memory at scale.
//!
//! The ranks' side (the `Bootstrap` trait, the TCP, PMIx and MPI bootstraps,
//! the host map, the variable names and the wire protocol spoken here) is
//! the `bootstrap` crate: applications link that one, not this one.

#![warn(missing_docs)]

mod agent;
pub mod capacity;
mod error;
mod forward;
pub mod heartbeat;
pub mod launch;
mod proc;
pub mod scale;
pub mod shm_clean;
pub mod sshtree;
pub mod template;

pub use agent::run_agent;
pub use bootstrap::wire::{signal_name, RankEnd};
pub use error::SpawnError;
pub use launch::{block_placement, run_job, JobSpec, SpawnerKind};
pub use proc::drop_inherited_signal_handlers;

use bootstrap::wire::{Secret, SECRET_LEN};

/// A fresh random job secret (the launcher draws one per job).
pub(crate) fn new_secret() -> Result<Secret, SpawnError> {
    let mut s = [0u8; SECRET_LEN];
    getrandom::fill(&mut s).map_err(|e| {
        SpawnError::io(
            "drawing the job secret",
            std::io::Error::other(e.to_string()),
        )
    })?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bootstrap::wire::{secret_from_hex, secret_to_hex};

    #[test]
    fn fresh_secrets_differ_and_survive_hex() {
        let s = new_secret().unwrap();
        assert_eq!(secret_from_hex(&secret_to_hex(&s)), Some(s));
        assert_ne!(new_secret().unwrap(), s);
    }
}
