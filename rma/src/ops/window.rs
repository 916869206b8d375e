//! The get window: the bytes of reads in flight from one peer, bounded
//! (`GASNET_OFI_GET_WINDOW`, the provider profile's `get_window`), and
//! refilled in bursts.
//!
//! A read's transfer is charged to its peer just before it is posted and
//! given back by the operation's completions. A transfer that does not fit
//! is refused and marks the peer: from then on every transfer to that peer
//! needs all but a quarter of the window free ([`GetWindow::room_needed`]),
//! so none goes until at most a quarter is in flight, and then those that
//! fit go at once. The next charge clears the mark. A flood so refills the
//! window in bursts of about three quarters instead of one transfer per
//! completion (over tcp;ofi_rxm the latter cost 1 MiB gets 10-25% on an
//! Intel Xeon machine: docs/PERFORMANCE.md, "Gets posted in bursts").

use super::{OpId, Ops};

/// A get window of `limit` bytes per peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetWindow {
    limit: usize,
}

impl GetWindow {
    /// The window of `limit` bytes; `None` for 0 (no window).
    pub fn new(limit: usize) -> Option<GetWindow> {
        (limit > 0).then_some(GetWindow { limit })
    }

    /// Bytes in flight from one peer at most (a transfer to an idle peer
    /// goes whatever its size).
    pub fn limit(self) -> usize {
        self.limit
    }

    /// Largest transfer of a windowed get: a quarter of the window.
    pub fn piece(self) -> usize {
        (self.limit / 4).max(1)
    }

    /// The room a transfer of `len` bytes (at most [`GetWindow::piece`])
    /// needs in the window: its own length, or, while the peer's window is
    /// refilling (a transfer to it was refused room and none has gone
    /// since), all but a quarter of the window, so that it goes only when
    /// at most a quarter is in flight (and those after it fill the rest at
    /// once). Never more than the window.
    pub fn room_needed(self, len: usize, refilling: bool) -> usize {
        debug_assert!(len <= self.piece(), "a transfer larger than a piece");
        if refilling {
            len.max(self.limit - self.limit / 4)
        } else {
            len
        }
    }
}

/// One peer's get window in an [`Ops`] table.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct PeerWindow {
    /// Read bytes charged and not yet given back.
    pub(super) held: u64,
    /// A read was refused room and none has been charged since.
    refused: bool,
}

/// The bytes an operation's reads hold of a peer's get window.
///
/// Completions say which operation, not which of its transfers, ended, so
/// each gives back what is surely over and the window never counts less
/// than is in flight: the transfers of an operation are pieces of one
/// length (the first charged) but for a shorter last one (`plan::chunks`);
/// a completion gives back that shorter one once it is charged and not
/// given back yet (it may be the one that ended), else a piece, and the
/// operation's last completion gives back the rest.
#[derive(Debug, Clone, Copy)]
pub(super) struct Charge {
    rank: u32,
    /// The length of the operation's first charged transfer.
    piece: u64,
    /// A shorter transfer charged and not yet given back.
    short: Option<u64>,
    /// Charged and not yet given back.
    left: u64,
}

impl Charge {
    /// The peer charged.
    pub(super) fn rank(&self) -> usize {
        self.rank as usize
    }

    /// A transfer of the operation ended (`last`: the operation's last;
    /// `posted`: it completed rather than being cancelled unposted): the
    /// bytes given back. An unposted transfer gives nothing back (it may
    /// never have been charged); the last gives back all that is left.
    pub(super) fn release(&mut self, last: bool, posted: bool) -> u64 {
        let r = if last {
            self.left
        } else if posted {
            self.short.take().unwrap_or(self.piece).min(self.left)
        } else {
            0
        };
        self.left -= r;
        r
    }
}

impl Ops {
    /// Charge a read of `len` bytes from `rank` (a transfer of `op` about
    /// to be posted, at most `w`'s piece) to that peer's window if it has
    /// room, `true`; else mark the peer refused and charge nothing,
    /// `false` (the caller progresses and tries again). While the peer is
    /// marked, a transfer needs [`GetWindow::room_needed`]'s refilling
    /// room; the charge that goes clears the mark.
    pub fn try_charge_window(&mut self, op: OpId, rank: usize, len: usize, w: GetWindow) -> bool {
        let need = w.room_needed(len, self.window_refused(rank));
        if self.window_room(rank, need, w.limit) {
            self.charge_window(op, rank, len);
            true
        } else {
            self.peer_window(rank).refused = true;
            false
        }
    }

    /// Whether a read of `len` bytes from `rank` fits its get window of
    /// `limit` bytes: nothing in flight from that peer (so a read larger
    /// than the window still goes, alone), or room for all of it.
    pub(crate) fn window_room(&self, rank: usize, len: usize, limit: usize) -> bool {
        let f = self.window_in_flight(rank);
        f == 0 || f.saturating_add(len as u64) <= limit as u64
    }

    /// Whether a read from `rank` was refused room in its get window and
    /// none has been charged to that peer since: the window is refilling,
    /// and every read to that peer is held back, not only the one refused.
    pub fn window_refused(&self, rank: usize) -> bool {
        self.window.get(rank).is_some_and(|w| w.refused)
    }

    /// Charge a read of `len` bytes from `rank`, a transfer of `op` about
    /// to be posted, to that peer's get window (and clear a refusal),
    /// whether or not it fits; the operation's completions give it back
    /// ([`Charge`], [`Ops::complete_transfer`]).
    pub(crate) fn charge_window(&mut self, op: OpId, rank: usize, len: usize) {
        let w = self.peer_window(rank);
        w.held += len as u64;
        w.refused = false;
        let s = &mut self.slots[op.index as usize];
        debug_assert!(s.busy && s.gen == op.gen, "a charge for a stale operation");
        let len = len as u64;
        match &mut s.charge {
            Some(c) => {
                // Pieces of one length and at most one shorter (`Charge`).
                debug_assert!(len <= c.piece && (len == c.piece || c.short.is_none()));
                debug_assert_eq!(c.rank as usize, rank);
                c.left += len;
                if len < c.piece {
                    c.short = Some(len);
                }
            }
            None => {
                s.charge = Some(Charge {
                    rank: rank as u32,
                    piece: len,
                    short: None,
                    left: len,
                })
            }
        }
    }

    /// Read bytes charged to `rank`'s get window and not yet given back.
    pub fn window_in_flight(&self, rank: usize) -> u64 {
        self.window.get(rank).map_or(0, |w| w.held)
    }

    /// `rank`'s get window, grown into the table on first use.
    fn peer_window(&mut self, rank: usize) -> &mut PeerWindow {
        if self.window.len() <= rank {
            self.window.resize(rank + 1, PeerWindow::default());
        }
        &mut self.window[rank]
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::err;
    use super::super::Implicit;
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
        assert_eq!(GetWindow::new(4 << 20).map(GetWindow::limit), Some(4 << 20));
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

    #[test]
    fn a_refused_peer_refills_in_a_burst_once_a_quarter_is_in_flight() {
        let w = GetWindow::new(400).unwrap();
        let mut t = Ops::new();
        // Four pieces of 100 fill peer 5's window; a fifth is refused.
        let ops: Vec<OpId> = (0..4).map(|_| t.start(1, Implicit::Get)).collect();
        for &op in &ops {
            assert!(t.try_charge_window(op, 5, 100, w));
        }
        assert!(!t.window_refused(5));
        let next = t.start(1, Implicit::Get);
        assert!(!t.try_charge_window(next, 5, 100, w));
        assert!(t.window_refused(5));
        assert!(!t.window_refused(4), "other peers are not refused");
        assert!(
            t.try_charge_window(next, 4, 100, w),
            "nor held back by another peer's refusal"
        );
        assert!(
            t.window_refused(5),
            "a charge to another peer clears nothing"
        );
        let next = t.start(1, Implicit::Get);
        // One piece back: room for one, but the peer is refilling, so
        // even a small transfer waits until at most a quarter is held.
        t.complete_transfer(ops[0].index, Ok(()));
        assert_eq!(t.window_in_flight(5), 300);
        assert!(!t.try_charge_window(next, 5, 100, w));
        assert!(!t.try_charge_window(next, 5, 1, w));
        t.complete_transfer(ops[1].index, Ok(()));
        assert!(!t.try_charge_window(next, 5, 100, w));
        t.complete_transfer(ops[2].index, Ok(()));
        assert_eq!(t.window_in_flight(5), 100);
        // A quarter held: the refused transfer goes, clearing the mark,
        // and those after it fill the window at once.
        assert!(t.try_charge_window(next, 5, 100, w));
        assert!(!t.window_refused(5));
        for _ in 0..2 {
            let op = t.start(1, Implicit::Get);
            assert!(t.try_charge_window(op, 5, 100, w));
        }
        assert_eq!(t.window_in_flight(5), 400);
        let op = t.start(1, Implicit::Get);
        assert!(!t.try_charge_window(op, 5, 100, w));
        assert!(t.window_refused(5));
    }

    #[test]
    fn a_refused_peer_with_nothing_in_flight_takes_any_transfer() {
        let w = GetWindow::new(400).unwrap();
        let mut t = Ops::new();
        let a = t.start(4, Implicit::Get);
        for _ in 0..4 {
            assert!(t.try_charge_window(a, 2, 100, w));
        }
        let b = t.start(1, Implicit::Get);
        assert!(!t.try_charge_window(b, 2, 100, w));
        for _ in 0..4 {
            t.complete_transfer(a.index, Ok(()));
        }
        assert_eq!(t.window_in_flight(2), 0);
        assert!(t.window_refused(2));
        assert!(t.try_charge_window(b, 2, 100, w));
        assert!(!t.window_refused(2));
    }

    #[test]
    fn the_get_window_is_charged_per_transfer_and_given_back() {
        let mut t = Ops::new();
        assert!(
            t.window_room(3, 1 << 30, 100),
            "an idle peer takes any read"
        );
        // An operation of three transfers (two pieces of 40, a last of 10).
        let a = t.start(3, Implicit::Get);
        for len in [40, 40, 10] {
            assert!(t.window_room(3, len, 100));
            t.charge_window(a, 3, len);
        }
        assert_eq!(t.window_in_flight(3), 90);
        assert!(!t.window_room(3, 11, 100));
        assert!(t.window_room(3, 10, 100));
        assert!(t.window_room(2, 1000, 100), "other peers have their own");
        // The first completion may be the short transfer: it gives back
        // 10 (never less than is in flight), the next a piece, the last
        // the rest.
        t.complete_transfer(a.index, Ok(()));
        assert_eq!(t.window_in_flight(3), 80);
        t.complete_transfer(a.index, Err(err("x")));
        assert_eq!(t.window_in_flight(3), 40);
        t.complete_transfer(a.index, Ok(()));
        assert_eq!(t.window_in_flight(3), 0);
        // Stray completions and the slot's reuse give back nothing more.
        t.complete_transfer(a.index, Ok(()));
        assert_eq!(t.window_in_flight(3), 0);
        t.retire(a);
        let b = t.start(2, Implicit::No);
        t.charge_window(b, 3, 64);
        let c = t.start(1, Implicit::No);
        t.charge_window(c, 3, 64);
        assert_eq!(t.window_in_flight(3), 128);
        t.complete_transfer(c.index, Ok(()));
        assert_eq!(t.window_in_flight(3), 64);
        // One transfer charged, one never posted (a post failed): the
        // cancel gives nothing back while the charged one is in flight;
        // its completion, the operation's last, gives back all.
        t.cancel_transfers(b, 1, err("not posted"));
        assert_eq!(t.window_in_flight(3), 64);
        assert_eq!(t.in_flight(), 1);
        t.complete_transfer(b.index, Ok(()));
        assert_eq!(t.window_in_flight(3), 0);
        assert_eq!(t.in_flight(), 0);
        // Completions before the short transfer is charged were pieces.
        let d = t.start(3, Implicit::No);
        t.charge_window(d, 1, 50);
        t.charge_window(d, 1, 50);
        t.complete_transfer(d.index, Ok(()));
        assert_eq!(t.window_in_flight(1), 50);
        t.charge_window(d, 1, 5);
        t.complete_transfer(d.index, Ok(()));
        assert_eq!(
            t.window_in_flight(1),
            50,
            "the short one may be the one that ended"
        );
        t.complete_transfer(d.index, Ok(()));
        assert_eq!(t.window_in_flight(1), 0);
    }
}
