//! Posting receives within the provider's budget: the waiting queue, its
//! credits, and retries of posts the provider refuses for now.

use super::*;

impl<M: Mode> Engine<M> {
    /// Post an application's receive, or queue it behind others waiting
    /// for one of the provider's receive entries. The request's slot is
    /// started by the caller.
    ///
    /// # Safety
    /// As for [`Endpoint::trecvmsg`]: `w.buf..w.buf+w.len` stays valid until
    /// the request finishes.
    pub unsafe fn post_counted(&self, c: &Ctx<M>, w: Waiting) -> Result<(), Error> {
        {
            let mut q = c.waiting.lock();
            if !q.is_empty() || c.credits.fetch_sub(1, Ordering::AcqRel) <= 0 {
                if q.is_empty() {
                    c.credits.fetch_add(1, Ordering::AcqRel);
                }
                q.push_back(w);
                c.has_waiting.store(true, Ordering::Relaxed);
                return Ok(());
            }
        }
        // SAFETY: per this function's contract.
        match unsafe { post_waiting_one(c, &w) } {
            Ok(()) => Ok(()),
            Err(e) if e.is_again() || e.code == -(ofi_sys::FI_ENOMEM as i64) => {
                // The provider's queue is full: wait for a receive to
                // finish, behind any others waiting.
                c.credits.fetch_add(1, Ordering::AcqRel);
                c.waiting.lock().push_back(w);
                c.has_waiting.store(true, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                c.credits.fetch_add(1, Ordering::AcqRel);
                Err(e.into())
            }
        }
    }

    /// Post one of the conduit's own receives, a probe or an
    /// acknowledgement wait (from the reserve: retried while the provider
    /// has no room).
    ///
    /// # Safety
    /// As for [`Engine::post_counted`].
    pub unsafe fn post_reserved(&self, c: &Ctx<M>, w: Waiting) -> Result<(), Error> {
        loop {
            // SAFETY: per this function's contract.
            match self.post(c, || unsafe { post_waiting_one(c, &w) }) {
                Err(Error::Ofi(e)) if e.code == -(ofi_sys::FI_ENOMEM as i64) => {
                    self.progress_ctx(c)?;
                }
                r => return r,
            }
        }
    }

    /// A counted receive finished: its entry may go to a waiting one.
    pub fn release_credit(&self, c: &Ctx<M>) {
        c.credits.fetch_add(1, Ordering::AcqRel);
    }

    /// Post waiting receives, oldest first, while credits and the
    /// provider allow.
    pub(super) fn post_waiting(&self, c: &Ctx<M>) -> Result<(), Error> {
        let mut q = c.waiting.lock();
        while let Some(w) = q.front().copied() {
            if c.credits.fetch_sub(1, Ordering::AcqRel) <= 0 {
                c.credits.fetch_add(1, Ordering::AcqRel);
                break;
            }
            // SAFETY: the receive's buffer stays valid until its request
            // finishes (post_counted's contract), which it has not.
            match unsafe { post_waiting_one(c, &w) } {
                Ok(()) => {
                    q.pop_front();
                }
                Err(e) if e.is_again() || e.code == -(ofi_sys::FI_ENOMEM as i64) => {
                    c.credits.fetch_add(1, Ordering::AcqRel);
                    break;
                }
                Err(e) => {
                    c.credits.fetch_add(1, Ordering::AcqRel);
                    return Err(e.into());
                }
            }
        }
        c.has_waiting.store(!q.is_empty(), Ordering::Relaxed);
        Ok(())
    }

    /// Take a receive that is still waiting to be posted out of the queue
    /// (a cancel): true if it was there.
    pub fn unqueue(&self, c: &Ctx<M>, ctx: usize) -> bool {
        let mut q = c.waiting.lock();
        let before = q.len();
        q.retain(|w| w.ctx != ctx);
        c.has_waiting.store(!q.is_empty(), Ordering::Relaxed);
        q.len() != before
    }

    /// Under a send window (the profile's `tagged_send_window`), make
    /// progress on `c` until it has room for one more `fi_tsend`; call
    /// [`Engine::sent`] once that send is posted.
    #[inline]
    pub fn await_send_room(&self, c: &Ctx<M>) -> Result<(), Error> {
        if self.send_window == isize::MAX {
            return Ok(());
        }
        while c.sends_in_flight.load(Ordering::Acquire) >= self.send_window {
            self.stats.send_window_waits.add(1);
            self.progress_ctx(c)?;
            if self.has_acks.load(Ordering::Relaxed) {
                self.retry_acks()?;
            }
        }
        Ok(())
    }

    /// An `fi_tsend` was posted on `c`: count it under a send window.
    #[inline]
    pub fn sent(&self, c: &Ctx<M>) {
        if self.send_window != isize::MAX {
            c.sends_in_flight.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// `n` `fi_tsend`s on `c` completed (or failed): uncount them under a
    /// send window.
    #[inline]
    pub(super) fn sends_done(&self, c: &Ctx<M>, n: isize) {
        if self.send_window != isize::MAX {
            c.sends_in_flight.fetch_sub(n, Ordering::AcqRel);
        }
    }

    /// Post with `post` until it is not refused with `-FI_EAGAIN`, making
    /// progress on the context in between.
    #[inline]
    pub fn post(
        &self,
        c: &Ctx<M>,
        mut post: impl FnMut() -> Result<(), OfiError>,
    ) -> Result<(), Error> {
        loop {
            match post() {
                Ok(()) => return Ok(()),
                Err(e) if e.is_again() => {
                    self.progress_ctx(c)?;
                    if self.has_acks.load(Ordering::Relaxed) {
                        self.retry_acks()?;
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// `fi_trecvmsg` of a waiting receive.
///
/// # Safety
/// As for [`Endpoint::trecvmsg`].
unsafe fn post_waiting_one<M: Mode>(c: &Ctx<M>, w: &Waiting) -> Result<(), OfiError> {
    // SAFETY: per the caller's contract.
    unsafe {
        c.rx.trecvmsg(
            w.buf as *mut u8,
            w.len,
            w.src,
            w.bits,
            w.ignore,
            w.ctx,
            w.flags,
            w.spill.map(|s| s.iov()),
        )
    }
}
