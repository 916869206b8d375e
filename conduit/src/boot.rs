//! The rank side of the launcher: the bootstrap the conduit starts over
//! (the `bootstrap` crate; the conduit does not link the launch code).

pub use bootstrap::{
    bootstrap_from, bootstrap_from_env, reset_provider_signal_handlers, Bootstrap, BootstrapError,
    HostMap,
};
