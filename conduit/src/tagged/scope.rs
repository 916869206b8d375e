//! Non-blocking sends and receives in a scope: buffers are borrowed for the
//! scope, and the scope does not end (not even by a panic) before every
//! operation started in it has finished: sends are waited for, receives
//! that never matched are cancelled.

use super::comm::Comm;
use super::engine::Engine;
use super::ops::{Posted, Select, SendHow};
use crate::client::engine::Core;
use crate::client::Error;
use crate::sync::Mode;
use crate::transport::Transport;
use std::marker::PhantomData;
use tagged::Status;

/// A non-blocking operation's request. Waiting (or a successful test)
/// consumes it; one left unwaited is finished when its scope ends.
#[derive(Debug)]
#[must_use = "wait for the request, or let the scope finish it"]
pub struct Request<'env> {
    p: Posted,
    op: &'static str,
    _env: PhantomData<&'env ()>,
}

/// The tagged context every request of `rs` progresses on, if they share
/// one (`None`: a wait for any of them progresses every context).
fn one_context(rs: &[Request<'_>]) -> Option<usize> {
    let c = rs.first()?.p.ctx;
    rs.iter().all(|r| r.p.ctx == c).then_some(c)
}

/// A scope for non-blocking tagged operations ([`Comm::scope`]).
pub struct TagScope<'c, 'env, M: Mode, S, T: Transport> {
    core: &'c Core<M, T, S>,
    eng: &'c Engine<M>,
    started: Vec<Posted>,
    _env: PhantomData<&'env mut &'env ()>,
}

impl<M: Mode, S, T: Transport> std::fmt::Debug for TagScope<'_, '_, M, S, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TagScope")
            .field("started", &self.started.len())
            .finish()
    }
}

impl<'c, M: Mode, S, T: Transport> Comm<'c, M, S, T> {
    /// Run `f` with a scope for non-blocking operations (on this and any
    /// other communicator of the client). When `f` returns or panics,
    /// outstanding sends are waited for and outstanding receives cancelled
    /// (or, if they matched meanwhile, completed) before the borrowed
    /// buffers are released.
    /// The closure's error type is the caller's (anything a
    /// [`crate::client::Error`] converts into).
    pub fn scope<'env, R, E: From<Error>>(
        &self,
        f: impl FnOnce(&mut TagScope<'c, 'env, M, S, T>) -> Result<R, E>,
    ) -> Result<R, E> {
        crate::client::engine::not_in_handler("a tagged scope")?;
        let mut s = TagScope {
            core: self.core,
            eng: self.eng,
            started: Vec::new(),
            _env: PhantomData,
        };
        let r = f(&mut s);
        s.finish_all();
        r
    }
}

impl<M: Mode, S, T: Transport> Drop for TagScope<'_, '_, M, S, T> {
    /// Reached with operations outstanding only when the closure unwinds.
    fn drop(&mut self) {
        self.finish_all();
    }
}

impl<'c, 'env, M: Mode, S, T: Transport> TagScope<'c, 'env, M, S, T> {
    fn finish_all(&mut self) {
        let left = std::mem::take(&mut self.started);
        for p in &left {
            if !self.eng.done(p) {
                self.eng.cancel(p);
            }
        }
        for p in left {
            self.core
                .tagged_wait(self.eng, Some(p.ctx), || self.eng.done(&p));
            let _ = self.eng.finish(p, "operation");
        }
    }

    fn track(&mut self, p: Posted, op: &'static str) -> Request<'env> {
        self.started.push(p);
        Request {
            p,
            op,
            _env: PhantomData,
        }
    }

    /// Stop tracking `p`: false if this scope did not start it.
    fn untrack(&mut self, p: &Posted) -> bool {
        if let Some(i) = self.started.iter().position(|q| q == p) {
            self.started.swap_remove(i);
            return true;
        }
        false
    }

    fn ours(&self, r: &Request<'env>) -> bool {
        self.started.contains(&r.p)
    }

    fn foreign(r: &Request<'env>) -> Error {
        super::TaggedError::ForeignRequest { op: r.op }.into()
    }

    /// Non-blocking send of `buf` (borrowed for the scope).
    pub fn isend(
        &mut self,
        comm: &Comm<'c, M, S, T>,
        buf: &'env [u8],
        dest: u32,
        tag: u32,
    ) -> Result<Request<'env>, Error> {
        self.start_send(comm, buf, dest, tag, false)
    }

    /// Non-blocking synchronous send: done once the receiver matched it.
    pub fn issend(
        &mut self,
        comm: &Comm<'c, M, S, T>,
        buf: &'env [u8],
        dest: u32,
        tag: u32,
    ) -> Result<Request<'env>, Error> {
        self.start_send(comm, buf, dest, tag, true)
    }

    fn start_send(
        &mut self,
        comm: &Comm<'c, M, S, T>,
        buf: &'env [u8],
        dest: u32,
        tag: u32,
        sync: bool,
    ) -> Result<Request<'env>, Error> {
        let how = SendHow {
            sync,
            internal: false,
        };
        // SAFETY: buf is borrowed for 'env, which outlives the scope, and
        // the scope finishes the send before it ends.
        let p = unsafe {
            self.eng
                .start_send(&comm.info, buf.as_ptr(), buf.len(), dest, tag, how)?
        };
        Ok(self.track(p, if sync { "synchronous send" } else { "send" }))
    }

    /// Non-blocking receive into `buf` (borrowed for the scope).
    pub fn irecv(
        &mut self,
        comm: &Comm<'c, M, S, T>,
        buf: &'env mut [u8],
        source: Option<u32>,
        tag: Option<u32>,
    ) -> Result<Request<'env>, Error> {
        // SAFETY: buf is borrowed mutably for 'env, which outlives the
        // scope, so nothing else touches it while the receive is pending.
        unsafe { self.irecv_raw(comm, buf.as_mut_ptr(), buf.len(), source, tag) }
    }

    /// Non-blocking receive into `len` bytes at `buf`, memory the caller
    /// vouches for instead of lending a `&mut [u8]`: a part of the local
    /// segment reached through its raw view, or one buffer that several
    /// receives of a window share (the shape of OSU's `osu_bw` and
    /// fabtests' `fi_rdm_tagged_bw`, which [`TagScope::irecv`] cannot
    /// express because two `&mut` borrows of one buffer would alias). The
    /// scope finishes or cancels the receive before it ends, as for
    /// `irecv`.
    ///
    /// # Safety
    /// `buf..buf + len` must be valid for writes until the scope ends, and
    /// the program must neither read nor write it (through any reference
    /// or pointer) while the receive is pending. Other pending receives
    /// may share the memory: the bytes it then holds are some message's,
    /// which of them unspecified. The provider writes it from outside the
    /// program (another process, the kernel, a NIC), and the conduit never
    /// writes it itself.
    pub unsafe fn irecv_raw(
        &mut self,
        comm: &Comm<'c, M, S, T>,
        buf: *mut u8,
        len: usize,
        source: Option<u32>,
        tag: Option<u32>,
    ) -> Result<Request<'env>, Error> {
        let sel = Select {
            source,
            tag,
            internal: false,
        };
        // SAFETY: the caller keeps buf..buf+len valid and untouched while
        // the receive is pending; the scope finishes (or cancels) it
        // before it ends.
        let p = unsafe { self.eng.start_recv(&comm.info, buf, len, sel, false)? };
        Ok(self.track(p, "receive"))
    }

    /// Wait for `r` and return its status (a truncated receive is
    /// [`super::TaggedError::Truncated`]).
    pub fn wait(&mut self, r: Request<'env>) -> Result<Status, Error> {
        if !self.untrack(&r.p) {
            return Err(Self::foreign(&r));
        }
        self.core.tagged_complete(self.eng, r.p, r.op)
    }

    /// If `r` has finished, its status (consuming it); else `r` back.
    pub fn test(&mut self, r: Request<'env>) -> Result<Result<Status, Error>, Request<'env>> {
        if !self.ours(&r) {
            return Ok(Err(Self::foreign(&r)));
        }
        if self.eng.done(&r.p) {
            self.untrack(&r.p);
            return Ok(self.eng.finish(r.p, r.op));
        }
        // Make some progress for the next test.
        if let Err(e) = self.eng.progress() {
            crate::client::engine::abort_in_flight(self.core.rank, &e);
        }
        Err(r)
    }

    /// Wait for all of `rs`; their results in order.
    pub fn wait_all(&mut self, rs: Vec<Request<'env>>) -> Vec<Result<Status, Error>> {
        rs.into_iter().map(|r| self.wait(r)).collect()
    }

    /// Wait until one of `rs` has finished: its index and result; the
    /// others stay in `rs`.
    pub fn wait_any(
        &mut self,
        rs: &mut Vec<Request<'env>>,
    ) -> Option<(usize, Result<Status, Error>)> {
        if rs.is_empty() {
            return None;
        }
        if let Some(i) = rs.iter().position(|r| !self.ours(r)) {
            let r = rs.remove(i);
            return Some((i, Err(Self::foreign(&r))));
        }
        let ctx = one_context(rs);
        let eng = self.eng;
        let mut found = None;
        self.core.tagged_wait(eng, ctx, || {
            found = rs.iter().position(|r| eng.done(&r.p));
            found.is_some()
        });
        let i = found.unwrap_or_else(|| unreachable!("the wait ends on a finished request"));
        let r = rs.remove(i);
        Some((i, self.wait(r)))
    }

    /// Wait until at least one of `rs` has finished: the indices (into
    /// `rs` as given) and results of all that have; the rest stay in `rs`.
    pub fn wait_some(
        &mut self,
        rs: &mut Vec<Request<'env>>,
    ) -> Vec<(usize, Result<Status, Error>)> {
        if rs.is_empty() {
            return Vec::new();
        }
        if rs.iter().any(|r| !self.ours(r)) {
            let mut out = Vec::new();
            let mut keep = Vec::new();
            for (i, r) in std::mem::take(rs).into_iter().enumerate() {
                if self.ours(&r) {
                    keep.push(r);
                } else {
                    out.push((i, Err(Self::foreign(&r))));
                }
            }
            *rs = keep;
            return out;
        }
        let ctx = one_context(rs);
        let eng = self.eng;
        self.core
            .tagged_wait(eng, ctx, || rs.iter().any(|r| eng.done(&r.p)));
        let mut out = Vec::new();
        let mut keep = Vec::new();
        for (i, r) in std::mem::take(rs).into_iter().enumerate() {
            if eng.done(&r.p) {
                let st = self.wait(r);
                out.push((i, st));
            } else {
                keep.push(r);
            }
        }
        *rs = keep;
        out
    }

    /// Ask to cancel a posted receive; wait for it then: its status says
    /// `cancelled`, or it matched first and completed normally. A request
    /// this scope did not start is left alone (its wait says so).
    pub fn cancel(&mut self, r: &Request<'env>) {
        if self.ours(r) {
            self.eng.cancel(&r.p);
        }
    }
}
