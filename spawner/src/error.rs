//! The one error type of the spawner crate.

use bootstrap::BootstrapError;
use std::io;

/// Everything that can go wrong while launching a job. Library code
/// returns this; only the launcher binary turns it into a process exit
/// code (see [`SpawnError::exit_code`]).
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// A variable held a value that is not accepted.
    #[error(transparent)]
    Env(#[from] gex_env::EnvError),
    /// The user asked for something that cannot be done (bad `-N`, empty
    /// host list, ...). The launcher exits 2 on it.
    #[error("{0}")]
    Usage(String),
    /// A spawner that exists in the design but is not implemented yet.
    #[error("the {0} spawner is not implemented yet: use -spawner=local or -spawner=ssh")]
    Unsupported(String),
    /// A process (a rank, ssh, or the remote agent) could not be started.
    #[error("cannot start {what}: {source}")]
    Spawn {
        /// What was being started.
        what: String,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// An I/O error on a bootstrap socket or pipe.
    #[error("bootstrap I/O error while {context}: {source}")]
    Io {
        /// What the launcher was doing.
        context: String,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// A peer sent something that does not follow the protocol.
    #[error("bootstrap protocol error: {0}")]
    Protocol(String),
    /// A caller passed an argument that cannot be honoured.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// An error of the bootstrap protocol (decoding a message, the host
    /// map, ...), shown as it is.
    #[error(transparent)]
    Bootstrap(#[from] BootstrapError),
}

impl SpawnError {
    /// Helper: wrap an I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        SpawnError::Io {
            context: context.into(),
            source,
        }
    }

    /// The exit code a launcher uses for this error: 2 for usage errors
    /// (including bad variables and unsupported spawners), as a shell when
    /// a program cannot be started (127 when it is not found, 126 when it
    /// is found but cannot be run: not executable, a directory, an argument
    /// list too long, ...), 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            SpawnError::Usage(_)
            | SpawnError::Env(_)
            | SpawnError::Unsupported(_)
            | SpawnError::Bootstrap(BootstrapError::Env(_)) => 2,
            SpawnError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                127
            }
            SpawnError::Spawn { .. } => 126,
            _ => 1,
        }
    }
}
