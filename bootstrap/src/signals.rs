//! Signal dispositions of a rank.

/// Drop signal handlers that libraries installed before `main` for the
/// signals the launcher forwards to its ranks (SIGINT, SIGTERM, SIGHUP), so
/// that a rank dies by them.
///
/// Debian's libfabric loads `libinfinipath.so.4` (for its psm provider),
/// whose load-time constructor installs a SIGTERM/SIGINT handler that calls
/// `exit(1)` (known-issues.md). A disposition of SIG_IGN (for example
/// SIGHUP under `nohup`) is the user's choice and is kept.
pub fn drop_inherited_signal_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: sigaction is plain old data; all-zero is a valid value.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: with a NULL new action sigaction only reads the current
        // disposition into `old`, which is owned here.
        let rc = unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) };
        if rc != 0 {
            continue;
        }
        if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN {
            tracing::debug!("dropping a handler for signal {sig} installed before main");
            // SAFETY: restoring the default disposition; no handler code of
            // ours is involved.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
    }
}
