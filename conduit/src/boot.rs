//! The rank side of the launcher: the bootstrap the conduit starts over
//! (the `bootstrap` crate; the conduit does not link the launch code).

pub use bootstrap::{
    bootstrap_from, bootstrap_from_env, reset_provider_signal_handlers, Bootstrap, BootstrapError,
    HostMap,
};

use std::time::Duration;

/// How often [`watch_parent`] looks.
const PARENT_CHECK: Duration = Duration::from_millis(250);

/// End this rank once the process that started it is gone: a rank whose
/// launcher infrastructure died without taking it down (mpirun ended by
/// SIGTERM while its ranks spun in a wait, a launcher killed with SIGKILL
/// under the mpi or pmi spawner) would otherwise spin for ever, its peers
/// gone. A thread of its own compares the parent's pid with the one at
/// start-up every 250 ms; when it changed (re-parented to init or a
/// subreaper), it says so on standard error and sends the process SIGTERM
/// (the rank then dies by it, as when its launcher tears a job down), and
/// ends the process with code 1 if it is still alive 2 s later. For ranks started
/// by a launcher, not for a program run on its own.
pub fn watch_parent(rank: usize) {
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { libc::getppid() };
    if parent <= 1 {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("gasnet-parent".into())
        .stack_size(64 * 1024)
        .spawn(move || loop {
            std::thread::sleep(PARENT_CHECK);
            // SAFETY: as above.
            if unsafe { libc::getppid() } != parent {
                gex_env::eprintln_whole!(
                    "rank {rank}: the process that started this rank (pid {parent}) has ended, \
                     so the job is gone; ending this rank"
                );
                // To the process (raise would pick this thread, whose
                // mask the application may have set to block SIGTERM).
                // SAFETY: kill with this process's own pid only sends it a
                // signal.
                unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
                std::thread::sleep(Duration::from_secs(2));
                // Still alive (SIGTERM handled or blocked): end without
                // running exit handlers while other threads may be inside
                // libfabric, as the conduit's own abort does.
                crate::client::engine::end_process(1);
            }
        });
    if let Err(e) = spawned {
        tracing::debug!("no thread to watch the parent process: {e}");
    }
}
