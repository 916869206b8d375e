//! Entry points of the public API that the engine serves directly: a
//! poll, an AM request, and a description of each endpoint set for
//! diagnosing a stall.

use super::{client_handler, not_in_handler, Core, Progress};
use crate::client::error::Error;
use crate::sync::{Lock, Mode};
use crate::transport::{Side, Transport};
use std::sync::atomic::Ordering;

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// `poll` of the public API on set `set`.
    pub fn poll_api(&self, set: usize) -> Result<(), Error> {
        not_in_handler("poll")?;
        let r = match self.progress(set, Progress::Full) {
            // The same round may have met a peer's exit: the exit's report
            // looks at deferred errors.
            Err(e) if !e.is_fatal() && self.exiting() => {
                self.defer_round(*e);
                Ok(())
            }
            Err(e) => {
                // This one is returned now, the round's others later.
                self.defer_further();
                Err(e)
            }
            Ok(()) => Ok(()),
        };
        self.exit_if_requested()?;
        r.map_err(|e| *e)?;
        if self.coll_pending() {
            self.coll_advance()?;
        }
        self.deferred.take().map_or(Ok(()), Err)
    }

    /// An AM request of the public API.
    #[allow(clippy::too_many_arguments)]
    pub fn request_api(
        &self,
        set: usize,
        dest: usize,
        category: am::send::Category,
        handler: u8,
        args: &[u32],
        payload: &[u8],
        dest_offset: usize,
        immediate: bool,
    ) -> Result<bool, Error> {
        not_in_handler("sending a request")?;
        client_handler(handler)?;
        let r = self.send_am(
            set,
            Side::Request,
            dest,
            category,
            handler,
            args,
            payload,
            dest_offset,
            immediate,
            Progress::Full,
        );
        // Taken apart rather than moved whole: a move of the 128-byte
        // result copies it with wide loads from the narrow stores
        // `send_am` wrote it with, a store-forwarding stall on every
        // request (perf: most of this function's samples).
        match r {
            Ok(sent) => {
                self.exit_if_requested()?;
                Ok(sent)
            }
            Err(e) => {
                self.exit_if_requested()?;
                Err(e)
            }
        }
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// What each endpoint set holds right now (for diagnosing a stall).
    pub fn diagnostics(&self) -> String {
        let mut out = String::new();
        for (i, s) in self.sets.iter().enumerate() {
            let pools = [s.pools[0].lock().in_flight(), s.pools[1].lock().in_flight()];
            let rx: Vec<(usize, usize)> =
                s.rx.iter()
                    .map(|r| {
                        let r = r.lock();
                        (r.posted(), r.queued())
                    })
                    .collect();
            let ops = s.ops.lock().in_flight();
            let lb = [s.queue[0].lock().len(), s.queue[1].lock().len()];
            out.push_str(&format!(
                "set {i}{}: sends in flight (request, reply) {pools:?}; receive buffers (posted, waiting) request {:?} reply {:?}; RMA operations in flight {ops}; queued for handlers {lb:?}\n",
                if s.owned.load(Ordering::Relaxed) { " (owned)" } else { "" },
                rx[0],
                rx[1],
            ));
        }
        out
    }
}
