//! The one error type of the bootstrap crate.

use std::io;

/// Everything that can go wrong while a rank bootstraps or runs a bootstrap
/// collective. Library code returns it; the conduit turns it into its own
/// error, and the launcher (crate `spawner`) wraps it in its `SpawnError`.
#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    /// A variable held a value that is not accepted.
    #[error(transparent)]
    Env(#[from] gex_env::EnvError),
    /// An I/O error on a bootstrap socket or pipe.
    #[error("bootstrap I/O error while {context}: {source}")]
    Io {
        /// What the bootstrap was doing.
        context: String,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// A peer (the launcher, a parent or a child in the tree, or another
    /// rank of a [`crate::local`] group) went away.
    #[error("bootstrap peer lost: {0}")]
    PeerLost(String),
    /// A peer sent something that does not follow the protocol, or the
    /// ranks do not call the collectives in the same order.
    #[error("bootstrap protocol error: {0}")]
    Protocol(String),
    /// The PMIx client library reported an error (pmi and mpi spawners).
    #[error("PMIx: {0}")]
    Pmix(String),
    /// MPI could not be used for the bootstrap (cargo feature `mpi`).
    #[error("MPI: {0}")]
    Mpi(String),
    /// A caller passed an argument that cannot be honoured (e.g. a
    /// broadcast root that is not a rank).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl BootstrapError {
    /// Helper: wrap an I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        BootstrapError::Io {
            context: context.into(),
            source,
        }
    }
}
