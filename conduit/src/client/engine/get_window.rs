//! A window on gets in flight from one peer (`GASNET_OFI_GET_WINDOW`; the
//! provider profile's `get_window`).
//!
//! Over tcp;ofi_rxm a target answers each read by streaming its data into
//! the one connection it shares with the initiator. With a whole flood of
//! 1 MiB gets requested at once, the kernel queues many MiB of replies
//! and both copies (into the socket's buffers and out of them) slow down:
//! 0.81-0.86x the puts of the same flood, against 0.92-1.02x with 2 to
//! 4 MiB in flight per peer on one machine (docs/PERFORMANCE.md, "A window
//! on gets in flight"; the profile's window is 4 MiB). Where the window is
//! on, a get's transfer that would take a peer past it waits, progressing,
//! and from then on every transfer to that peer (of any thread) waits until
//! at most a quarter of the window is in flight from it (nothing in flight:
//! it goes whatever its size); once one goes, those after it that fit go at
//! once, so a flood refills the window in bursts of about three quarters
//! rather than one transfer per completion, which cost 1 MiB gets 10-25%
//! on an Intel Xeon machine (docs/PERFORMANCE.md, "Gets posted in
//! bursts"). A get larger than a quarter of the window travels in pieces of
//! a quarter. The rule and the accounting live in the sans-IO crate
//! (`rma::ops::GetWindow` and `Ops::try_charge_window`: the bytes charged
//! per peer and whether a transfer to the peer was refused since the last
//! charge, kept in the set's operation table), so each endpoint set has
//! its own window: a transfer is charged just before it is posted, and
//! completions give back what is surely over. This module is the wait.
//!
//! A get started inside a handler goes without the window (a handler
//! cannot wait for other operations), as do VIS gets (`vis_rma` batches
//! their pieces itself and waits for them within the call). Threads
//! waiting for room are not served in arrival order.

use super::{Core, Progress};
use crate::client::error::Error;
use crate::sync::{Counter, Lock, Mode};
use crate::transport::Transport;
use ::rma::ops::{GetWindow, OpId};

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// The window a get through the provider keeps to: `None` where there
    /// is none, or inside a handler.
    #[inline]
    pub(super) fn get_window_now(&self) -> Option<GetWindow> {
        let w = self.get_window?;
        (!super::in_handler()).then_some(w)
    }

    /// Charge a transfer of `len` bytes of `op`, a get from `rank`, to
    /// the peer's window, first progressing (`wait`) until it fits; after
    /// a refusal, every transfer to the peer waits until at most a quarter
    /// of the window is in flight ([`GetWindow::room_needed`]). An error from
    /// progress is returned with nothing charged (the caller's guard then
    /// cancels the unposted transfers and waits for the rest).
    #[inline]
    pub(super) fn enter_get_window(
        &self,
        set: usize,
        rank: usize,
        len: usize,
        op: OpId,
        w: GetWindow,
        wait: Progress,
    ) -> Result<(), Error> {
        let mut waited = false;
        loop {
            if self.sets[set]
                .ops
                .lock()
                .try_charge_window(op, rank, len, w)
            {
                return Ok(());
            }
            if !waited {
                waited = true;
                self.sets[set].stats.get_window_waits.add(1);
            }
            self.progress_within(set, wait)?;
        }
    }
}
