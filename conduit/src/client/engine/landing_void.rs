//! Slots whose write failed. A landing write that was refused, or that
//! completed in error, wrote no completion at its destination, so the
//! destination would never free its slot: every later slot of the sender
//! would stay counted in use, and after a few such failures every Long to
//! that destination would go put-then-send (and an immediate one return
//! "would block" for ever). The sender voids the slot instead: a Request
//! Short of handler [`H_LANDING`] (side, slot), upon which the destination
//! frees it as if it had been handled ([`Keeper::void`]).

use super::*;

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// The write to `dest`'s slot `slot` of `side` (set `set`) failed or
    /// was never posted: void the slot there now, or at a later poll.
    #[cold]
    pub(super) fn void_landing(&self, set: usize, side: Side, dest: usize, slot: u32) {
        let Some(l) = self.landing.get() else {
            return;
        };
        if !self.send_void(set, side, dest, slot) {
            l.voids[set].lock().push((side, dest, slot));
            l.unsent[set].store(true, Ordering::Release);
        }
    }

    /// Send one void; false when it should be sent again later (no send
    /// resource now). A void the transport refuses is dropped with a
    /// warning (the slot then stays in use, as it would without voids).
    fn send_void(&self, set: usize, side: Side, dest: usize, slot: u32) -> bool {
        let sent = self.send_am(
            set,
            Side::Request,
            dest,
            Category::Short,
            H_LANDING,
            &[side.index() as u32, slot],
            &[],
            0,
            true,
            Progress::Replies,
        );
        match sent {
            Ok(true) => {
                self.sets[set].stats.landing_voids_sent.add(1);
                true
            }
            Ok(false) => false,
            Err(e) => {
                tracing::warn!("the void of landing slot {slot} at rank {dest} was not sent: {e}");
                true
            }
        }
    }

    /// Send the voids that could not go when their write failed (from
    /// `flush_credits`, while any wait).
    pub(super) fn flush_voids(&self, set: usize) {
        let Some(l) = self.landing.get() else {
            return;
        };
        let waiting = std::mem::take(&mut *l.voids[set].lock());
        for (side, dest, slot) in waiting {
            if !self.send_void(set, side, dest, slot) {
                l.voids[set].lock().push((side, dest, slot));
                l.unsent[set].store(true, Ordering::Release);
            }
        }
    }

    /// A void from `src` (handler [`H_LANDING`] as a request): free its
    /// slot, and report credits when due.
    pub(crate) fn on_landing_void(&self, set: usize, src: usize, a: [u32; 2]) -> Result<(), Error> {
        let bad = |why: String| am::Error::BadVoid {
            src: src as u32,
            slot: a[1],
            why,
        };
        let Some(l) = self.landing.get() else {
            return Err(bad("this rank keeps no landing area".into()).into());
        };
        let side = match a[0] {
            0 => Side::Request,
            1 => Side::Reply,
            x => return Err(bad(format!("its side {x} is neither 0 nor 1")).into()),
        };
        let freed = l.keepers[set][side.index()].lock().void(src, a[1])?;
        self.sets[set].stats.landing_voids_received.add(1);
        if let Some(upto) = freed {
            self.send_credit(set, side, src, upto);
        }
        Ok(())
    }
}
