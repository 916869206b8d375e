//! The bootstrap's barrier entered on a thread of its own, so the calling
//! thread keeps polling the network meanwhile: peers may need this rank's
//! progress (ofi_rxm sets a connection up only while both sides poll; a
//! collective's chunks wait for this rank to forward them; an exiting
//! peer's last messages need a receiver) before they arrive at the
//! barrier. Used by the segment attach and by the collective exit.

use crate::boot::Bootstrap;
use crate::client::error::Error;
use std::sync::mpsc::{self, TryRecvError};
use std::sync::Arc;

/// A bootstrap barrier in progress on a helper thread.
pub(super) struct BarrierThread {
    done: mpsc::Receiver<Result<(), bootstrap::BootstrapError>>,
    what: &'static str,
}

impl BarrierThread {
    /// Enter `boot`'s barrier on a new thread named `name`; `what` says in
    /// errors what the barrier is for ("the segment exchange").
    pub(super) fn start(
        boot: &Arc<dyn Bootstrap>,
        name: &str,
        what: &'static str,
    ) -> Result<Self, Error> {
        let boot = boot.clone();
        let (tx, done) = mpsc::channel();
        // The default stack: the barrier may be MPI's or PMIx's, which
        // progress on the calling thread.
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                // The receiver may be gone (its owner gave up): nothing
                // is waiting for the outcome then.
                let _ = tx.send(boot.barrier());
            })
            .map_err(|source| {
                Error::from(bootstrap::BootstrapError::Io {
                    context: format!("starting the thread that waits for {what}"),
                    source,
                })
            })?;
        Ok(BarrierThread { done, what })
    }

    /// `None` while the barrier is still waited for; then its outcome.
    pub(super) fn poll(&self) -> Option<Result<(), Error>> {
        match self.done.try_recv() {
            Ok(r) => Some(r.map_err(Error::from)),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(Error::from(
                bootstrap::BootstrapError::Protocol(format!(
                    "the thread waiting for {}'s barrier ended without an outcome",
                    self.what
                )),
            ))),
        }
    }
}
