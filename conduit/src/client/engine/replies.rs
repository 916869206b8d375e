//! Reply slots: requests sent by AM (atomics, packed VIS pieces) waiting
//! for the target's reply, with the value and status it carries. A waiter
//! that returns early abandons its slot (the reply frees it); a request
//! never sent is cancelled.

/// Requests by AM waiting for their reply.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    /// `None`: free; `Some(None)`: waiting; `Some(Some((value,
    /// status)))`: replied (status 0: performed).
    slots: Vec<Option<Option<(u64, u32)>>>,
    /// Slots whose waiter returned early; their reply frees them.
    abandoned: Vec<bool>,
    free: Vec<u32>,
}

impl Pending {
    pub(crate) fn take(&mut self) -> u32 {
        let i = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.abandoned.push(false);
            (self.slots.len() - 1) as u32
        });
        self.slots[i as usize] = Some(None);
        i
    }

    pub(crate) fn reply(&mut self, id: u32, v: u64, status: u32) -> bool {
        match self.slots.get_mut(id as usize) {
            Some(s @ Some(None)) => {
                if std::mem::take(&mut self.abandoned[id as usize]) {
                    *s = None;
                    self.free.push(id);
                } else {
                    *s = Some(Some((v, status)));
                }
                true
            }
            _ => false,
        }
    }

    pub(crate) fn result(&mut self, id: u32) -> Option<(u64, u32)> {
        let v = self.slots[id as usize]??;
        self.slots[id as usize] = None;
        self.free.push(id);
        Some(v)
    }

    /// The request of `id` was never sent: free the slot.
    pub(crate) fn cancel(&mut self, id: u32) {
        if matches!(self.slots.get(id as usize), Some(Some(_))) {
            self.slots[id as usize] = None;
            self.abandoned[id as usize] = false;
            self.free.push(id);
        }
    }

    /// The waiter of `id` is gone: its reply frees the slot (or frees it
    /// now if the reply already came).
    pub(crate) fn abandon(&mut self, id: u32) {
        match self.slots.get(id as usize) {
            Some(Some(Some(_))) => {
                self.slots[id as usize] = None;
                self.free.push(id);
            }
            Some(Some(None)) => self.abandoned[id as usize] = true,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_slots_are_reused_and_abandoned_ones_freed_by_their_reply() {
        let mut p = Pending::default();
        let a = p.take();
        let b = p.take();
        assert_eq!(p.result(a), None);
        assert!(p.reply(a, 7, 0));
        assert_eq!(p.result(a), Some((7, 0)));
        assert!(!p.reply(a, 8, 0), "a reply for a free slot is refused");
        p.abandon(b);
        assert!(p.reply(b, 1, 0));
        assert_eq!(p.take(), b);
        // Abandoned after its reply came: freed at once.
        let c = p.take();
        assert!(p.reply(c, 5, 1));
        p.abandon(c);
        assert_eq!(p.take(), c);
        // Never sent: freed at once, and a late reply is refused.
        p.cancel(c);
        assert!(!p.reply(c, 5, 0));
        assert_eq!(p.take(), c);
    }
}
