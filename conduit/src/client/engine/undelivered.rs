//! The messages of a batch read from a receive queue that have not reached
//! their handler yet, and what happens to them when the handler running
//! before them does not return: a panic unwinds through the batch's frame
//! ([`Undelivered`]'s drop queues them for the next poll), an exit from
//! inside a handler never comes back to it ([`abandon_batches`] queues
//! them, so the exit's own polls read the exit messages among them).

use super::receive::Got;
use super::EpSet;
use crate::sync::{Lock, Mode};
use crate::transport::Side;
use std::cell::Cell;

/// The received messages of a batch from `next` on, not handed to their
/// handler yet. (Borrowed, not moved: the batch stays where it was
/// filled.)
pub(super) struct Undelivered<'a, M: Mode> {
    pub set: &'a EpSet<M>,
    pub side: Side,
    pub items: &'a [Got],
    pub next: Cell<usize>,
}

impl<M: Mode> Undelivered<'_, M> {
    /// Queue what is left at the front of the set's queue, in order.
    fn requeue(&self) {
        let next = self.next.replace(self.items.len());
        if let Some(rest) = self.items.get(next..).filter(|r| !r.is_empty()) {
            let mut q = self.set.queue[self.side.index()].lock();
            for g in rest.iter().rev() {
                q.push_front(g.queued());
            }
        }
    }

    /// Run `deliver` on each message in turn, with the batch findable by
    /// [`abandon_batches`] meanwhile.
    #[inline]
    pub fn each(&self, mut deliver: impl FnMut(Got)) {
        let link = Link {
            batch: (self as *const Self).cast(),
            requeue: requeue_erased::<M>,
            outer: PENDING.with(Cell::get),
        };
        let _on = Enter::new(&link);
        while let Some(&g) = self.items.get(self.next.get()) {
            self.next.set(self.next.get() + 1);
            deliver(g);
        }
    }
}

impl<M: Mode> Drop for Undelivered<'_, M> {
    fn drop(&mut self) {
        self.requeue();
    }
}

/// One batch in this thread's chain of batches being delivered, innermost
/// first through `outer`.
struct Link {
    batch: *const (),
    /// `Undelivered::<M>::requeue` of `batch`, its type erased.
    requeue: unsafe fn(*const ()),
    outer: *const Link,
}

/// # Safety
/// `p` points to a live `Undelivered<'_, M>`.
unsafe fn requeue_erased<M: Mode>(p: *const ()) {
    // SAFETY: this function's contract; only shared access is made (the
    // delivering loop reads and writes `next` through a `Cell`).
    let u = unsafe { &*p.cast::<Undelivered<'_, M>>() };
    u.requeue();
}

thread_local! {
    /// This thread's innermost batch being delivered (null when none).
    static PENDING: Cell<*const Link> = const { Cell::new(std::ptr::null()) };
}

/// Links a batch into this thread's chain until dropped.
struct Enter<'a>(&'a Link);

impl<'a> Enter<'a> {
    #[inline]
    fn new(l: &'a Link) -> Self {
        PENDING.with(|c| c.set(l));
        Enter(l)
    }
}

impl Drop for Enter<'_> {
    #[inline]
    fn drop(&mut self) {
        PENDING.with(|c| c.set(self.0.outer));
    }
}

/// Queue the undelivered messages of every batch whose handler runs on
/// this thread: for an exit from inside a handler, which never returns to
/// them. Innermost first, each at the front of its queue, so the outer
/// (earlier) batches' messages come first.
pub(crate) fn abandon_batches() {
    let mut p = PENDING.with(Cell::get);
    while !p.is_null() {
        // SAFETY: the chain holds links of frames still on this thread's
        // stack (each `Enter` unlinks its own before its frame returns or
        // unwinds), and each link's batch outlives its link.
        let l = unsafe { &*p };
        // SAFETY: as above: `l.batch` is the live `Undelivered` whose
        // `requeue` this is.
        unsafe { (l.requeue)(l.batch) };
        p = l.outer;
    }
}
