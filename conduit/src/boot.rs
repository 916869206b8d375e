//! The rank side of the launcher: the bootstrap the conduit starts over.

pub use spawner::{bootstrap_from_env, Bootstrap, HostMap, SpawnError as BootstrapError};

/// Reset the signal handlers that a provider library installed behind the
/// program's back (see known-issues.md).
pub fn reset_provider_signal_handlers() {
    spawner::drop_inherited_signal_handlers();
}
