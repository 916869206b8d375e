//! The calls that act through one endpoint set: progress, AM requests and
//! RMA. [`super::ClientOf`] runs them on set 0, [`super::Endpoint`] on its
//! own set; this macro writes both from one source (each method forwards to
//! the engine with the set).

macro_rules! communication_api {
    ([$($g:tt)*] $ty:ty) => {
        impl<$($g)*> $ty {
            /// Make progress: drain completions, run handlers, repost
            /// buffers. If the job is exiting, finish the exit (this does
            /// not return then).
            ///
            /// Errors: what this round met (a peer's malformed AM, a failed
            /// send's completion, a handler's failed reply), else the first
            /// such error an earlier call met while it waited for its own
            /// operation (sends, blocking RMA, barriers carry on to their
            /// end and leave other errors to the next poll).
            pub fn poll(&self) -> Result<(), Error> {
                self.core().poll_api(self.set())
            }

            /// Poll until `cond()` holds.
            pub fn block_until(&self, mut cond: impl FnMut() -> bool) -> Result<(), Error> {
                while !cond() {
                    self.poll()?;
                }
                Ok(())
            }

            /// Send an AM Short request.
            pub fn request_short(&self, dest: usize, handler: u8, args: &[u32]) -> Result<(), Error> {
                self.core()
                    .request_api(self.set(), dest, am::send::Category::Short, handler, args, &[], 0, false)
                    .map(|_| ())
            }

            /// Send an AM Medium request; the payload is copied before return.
            pub fn request_medium(
                &self,
                dest: usize,
                handler: u8,
                args: &[u32],
                payload: &[u8],
            ) -> Result<(), Error> {
                self.core()
                    .request_api(self.set(), dest, am::send::Category::Medium, handler, args, payload, 0, false)
                    .map(|_| ())
            }

            /// Send an AM Long request: the payload lands at `dest_offset`
            /// in `dest`'s segment before the handler runs there. The
            /// payload may be reused when the call returns. An empty
            /// payload writes nothing, so its `dest_offset` is not checked
            /// against the segment (as GASNet-EX's `dest_addr`).
            pub fn request_long(
                &self,
                dest: usize,
                handler: u8,
                args: &[u32],
                payload: &[u8],
                dest_offset: usize,
            ) -> Result<(), Error> {
                self.core()
                    .request_api(
                        self.set(),
                        dest,
                        am::send::Category::Long,
                        handler,
                        args,
                        payload,
                        dest_offset,
                        false,
                    )
                    .map(|_| ())
            }

            /// Like `request_short`, but returns `Ok(false)` instead of
            /// waiting when no send resource is free (immediate mode).
            pub fn try_request_short(&self, dest: usize, handler: u8, args: &[u32]) -> Result<bool, Error> {
                self.core()
                    .request_api(self.set(), dest, am::send::Category::Short, handler, args, &[], 0, true)
            }

            /// Immediate-mode `request_medium`.
            pub fn try_request_medium(
                &self,
                dest: usize,
                handler: u8,
                args: &[u32],
                payload: &[u8],
            ) -> Result<bool, Error> {
                self.core()
                    .request_api(self.set(), dest, am::send::Category::Medium, handler, args, payload, 0, true)
            }

            /// Immediate-mode `request_long`: `Ok(false)` (a no-op) when it
            /// would have to wait for a send resource. A Long above the
            /// packing threshold is a no-op put-then-send (its payload's
            /// delivery is waited for); in one message
            /// (`GASNET_OFI_LONG_AM_WRITEDATA`) it is sent when the
            /// destination has a free landing slot for this rank and the
            /// provider takes the write at once.
            pub fn try_request_long(
                &self,
                dest: usize,
                handler: u8,
                args: &[u32],
                payload: &[u8],
                dest_offset: usize,
            ) -> Result<bool, Error> {
                self.core().request_api(
                    self.set(),
                    dest,
                    am::send::Category::Long,
                    handler,
                    args,
                    payload,
                    dest_offset,
                    true,
                )
            }

            /// Blocking put: returns when `src` is in `rank`'s segment at
            /// `offset`. Injected up to the RMA inject limit, else written
            /// from `src` while this waits (counted as NB_PUT_INJECT or
            /// NB_PUT_BLOCK).
            pub fn put(&self, rank: usize, offset: usize, src: &[u8]) -> Result<(), Error> {
                engine::not_in_handler("put")?;
                self.core().put(self.set(), rank, offset, src)?;
                self.core().exit_if_requested()
            }

            /// Blocking get: returns when `dst` holds `rank`'s bytes at
            /// `offset`.
            pub fn get(&self, rank: usize, offset: usize, dst: &mut [u8]) -> Result<(), Error> {
                engine::not_in_handler("get")?;
                self.core().get(self.set(), rank, offset, dst)?;
                self.core().exit_if_requested()
            }

            /// Blocking put of one value.
            pub fn put_u64(&self, rank: usize, offset: usize, value: u64) -> Result<(), Error> {
                self.put(rank, offset, &value.to_ne_bytes())
            }

            /// Blocking get of one value.
            pub fn get_u64(&self, rank: usize, offset: usize) -> Result<u64, Error> {
                let mut b = [0u8; 8];
                self.get(rank, offset, &mut b)?;
                Ok(u64::from_ne_bytes(b))
            }

            /// Run `f` with a scope for non-blocking and implicit RMA. Every
            /// operation started in the scope is complete when this returns,
            /// also when `f` returns an error or panics (see
            /// [`RmaScope`]).
            pub fn rma_scope<'env, R>(
                &self,
                f: impl FnOnce(&mut RmaScope<'_, 'env, M, S, T>) -> Result<R, Error>,
            ) -> Result<R, Error> {
                engine::not_in_handler("rma_scope")?;
                scope::run(self.core(), self.set(), f)
            }

            /// Non-blocking put of `src` to `offset` of `rank`'s segment,
            /// outside any scope: the handle owns `src` until the put is
            /// complete ([`OwnedRma`]: `wait` hands it back, a drop waits).
            /// Errors as for [`RmaScope::put_nb_deferred`] (nothing is sent
            /// then).
            pub fn put_nb_owned(
                &self,
                rank: usize,
                offset: usize,
                src: Vec<u8>,
            ) -> Result<OwnedRma<'_, M, S, T>, Error> {
                OwnedRma::start(self.core(), self.set(), rank, offset, src, false)
            }

            /// Non-blocking get of `dst.len()` bytes at `offset` of `rank`'s
            /// segment into `dst`, outside any scope: the handle owns `dst`
            /// until the get is complete, and `wait` hands it back filled
            /// ([`OwnedRma`]).
            pub fn get_nb_owned(
                &self,
                rank: usize,
                offset: usize,
                dst: Vec<u8>,
            ) -> Result<OwnedRma<'_, M, S, T>, Error> {
                OwnedRma::start(self.core(), self.set(), rank, offset, dst, true)
            }
        }
    };
}

pub(crate) use communication_api;
