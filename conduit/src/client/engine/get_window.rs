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
//! a quarter. The accounting lives in the set's operation table
//! (`rma::ops`: the bytes charged per peer and whether a transfer to the
//! peer was refused since the last charge), so each endpoint set has its
//! own window: a transfer is charged just before it is posted, and
//! completions give back what is surely over.
//!
//! A get started inside a handler goes without the window (a handler
//! cannot wait for other operations), as do VIS gets (`vis_rma` batches
//! their pieces itself and waits for them within the call). Threads
//! waiting for room are not served in arrival order.

use super::{Core, Progress};
use crate::client::error::Error;
use crate::sync::{Counter, Lock, Mode};
use crate::transport::Transport;
use ::rma::ops::OpId;

/// The get window in effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GetWindow {
    /// Bytes in flight from one peer at most.
    pub limit: usize,
}

impl GetWindow {
    /// The window of `limit` bytes; `None` for 0 (no limit).
    pub(crate) fn new(limit: usize) -> Option<GetWindow> {
        (limit > 0).then_some(GetWindow { limit })
    }

    /// Largest transfer of a windowed get: a quarter of the window.
    pub(crate) fn piece(self) -> usize {
        (self.limit / 4).max(1)
    }

    /// The room a transfer of `len` bytes (at most [`GetWindow::piece`])
    /// needs in the window: its own length, or, while the peer's window is
    /// refilling (a transfer to it was refused room and none has gone
    /// since), all but a quarter of the window, so that it goes only when
    /// at most a quarter is in flight (and those after it fill the rest at
    /// once).
    pub(crate) fn room_needed(self, len: usize, refilling: bool) -> usize {
        debug_assert!(len <= self.piece(), "a transfer larger than a piece");
        if refilling {
            len.max(self.limit - self.limit / 4)
        } else {
            len
        }
    }
}

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
    /// of the window is in flight ([`GetWindow::room_needed`]). An error
    /// from progress is returned with nothing charged (the caller's guard
    /// then cancels the unposted transfers and waits for the rest).
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
            {
                let mut ops = self.sets[set].ops.lock();
                let refilling = ops.window_refused(rank);
                if ops.window_room(rank, w.room_needed(len, refilling), w.limit) {
                    // Clears the refusal: the burst starts.
                    ops.charge_window(op, rank, len);
                    return Ok(());
                }
                ops.refuse_window(rank);
            }
            if !waited {
                waited = true;
                self.sets[set].stats.get_window_waits.add(1);
            }
            self.progress_within(set, wait)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_a_quarter_of_the_window() {
        assert_eq!(GetWindow::new(0), None);
        assert_eq!(GetWindow::new(4 << 20).map(GetWindow::piece), Some(1 << 20));
        assert_eq!(
            GetWindow::new(64 << 10).map(GetWindow::piece),
            Some(16 << 10)
        );
        assert_eq!(GetWindow::new(1).map(GetWindow::piece), Some(1));
    }

    #[test]
    fn a_refilling_window_takes_a_transfer_at_a_quarter_full() {
        let w = GetWindow::new(4 << 20).unwrap();
        assert_eq!(w.room_needed(1 << 20, false), 1 << 20);
        assert_eq!(w.room_needed(1 << 20, true), 3 << 20);
        assert_eq!(w.room_needed(4096, true), 3 << 20);
        // Never more than the window (a piece is at most a quarter), and
        // a piece always fits once a quarter or less is in flight.
        let tiny = GetWindow::new(1).unwrap();
        assert_eq!(tiny.room_needed(1, true), 1);
        for limit in [1usize, 2, 3, 5, 64 << 10, (4 << 20) + 3] {
            let w = GetWindow::new(limit).unwrap();
            let need = w.room_needed(w.piece(), true);
            assert!(need <= limit, "{limit}");
            assert!(need >= w.piece(), "{limit}");
            assert!(limit - need >= limit / 4, "{limit}");
        }
    }
}
