//! Posting and waiting: the engine-level send, receive and probe every
//! public call is made of, and the wait that serves the whole client while
//! it waits (its AMs and RMA too, every few rounds).

use super::engine::{CommInfo, Ctx, Engine};
use super::error::TaggedError;
use crate::client::engine::{abort_in_flight, Core, Progress};
use crate::client::Error;
use crate::ofi::FiAddr;
use crate::sync::{Counter, Lock, Mode};
use crate::transport::Transport;
use ofi_sys as sys;
use tagged::request::{context, Part};
use tagged::{Kind, ReqId, Status};

/// Rounds of tagged-only polling between rounds of the client's whole
/// progress while a tagged call waits.
const FULL_EVERY: u32 = 16;

/// A posted operation: its context and request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Posted {
    pub ctx: usize,
    /// `None`: done at once (an injected send).
    pub id: Option<ReqId>,
    /// A receive (cancelled, not waited for, when its scope ends early).
    pub recv: bool,
}

/// Which messages a receive or probe takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Select {
    pub source: Option<u32>,
    pub tag: Option<u32>,
    pub internal: bool,
}

/// How a send is made: synchronous (completes once matched) and/or on the
/// conduit's internal tag space (collectives of the tagged layer).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SendHow {
    pub sync: bool,
    pub internal: bool,
}

impl<M: Mode> Engine<M> {
    /// Check and encode a send's tag.
    #[inline]
    fn send_tag(&self, c: &CommInfo, tag: u32, internal: bool) -> Result<u64, Error> {
        if !internal {
            self.layout.check_tag(tag).map_err(TaggedError::from)?;
        }
        Ok(self.layout.send_bits(c.cid, c.rank, tag, internal))
    }

    /// A send's CQ data: the source rank with `ofi_tag_full` (`CQ`), and
    /// the length (saturated at `u32::MAX`) in the high half where the
    /// provider does not report truncation (`LEN`).
    #[inline]
    fn send_data_as<const CQ: bool, const LEN: bool>(&self, rank: u32, len: usize) -> Option<u64> {
        let src = if CQ { rank as u64 } else { 0 };
        if LEN {
            Some(src | (len.min(u32::MAX as usize) as u64) << 32)
        } else {
            CQ.then_some(src)
        }
    }

    /// Start a send of `len` bytes at `buf` to communicator rank `dest`,
    /// compiled for a layout with (`CQ`) or without the source in the CQ
    /// data, for a scalable (`SEP`) or regular endpoints, and for small
    /// messages sent from a copy (`COPY`: the profile's `tagged_inject_min_libfabric`) or
    /// injected.
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and unmodified until the request
    /// finishes (an injected send is done at return).
    pub(super) unsafe fn start_send_as<
        const CQ: bool,
        const SEP: bool,
        const COPY: bool,
        const LEN: bool,
    >(
        &self,
        c: &CommInfo,
        buf: *const u8,
        len: usize,
        dest: u32,
        tag: u32,
        how: SendHow,
    ) -> Result<Posted, Error> {
        let SendHow { sync, internal } = how;
        let world = c.world(dest)?;
        let mut bits = self.send_tag(c, tag, internal)?;
        let data = self.send_data_as::<CQ, LEN>(c.rank, len);
        let x = self.ctx(c.ctx);
        let addr = self.addr_as::<SEP>(c.ctx, world);
        if !sync && len <= self.inject {
            // SAFETY: the data is copied before return.
            let src = unsafe { std::slice::from_raw_parts(buf, len) };
            if COPY {
                return self.send_copy(x, src, data, addr, bits, c.ctx);
            }
            // SAFETY: threading per the domain (see Engine::progress_ctx).
            self.post(x, || unsafe { x.tx.tinject(src, data, addr, bits) })?;
            self.note_inject();
            self.stats.injects.add(1);
            return Ok(Posted {
                ctx: c.ctx,
                id: None,
                recv: false,
            });
        }
        self.await_send_room(x)?;
        let id = x.reqs().start(
            c.cid,
            if sync {
                Kind::SyncSend {
                    len,
                    sent: false,
                    acked: false,
                }
            } else {
                Kind::Send { len }
            },
        );
        let posted = Posted {
            ctx: c.ctx,
            id: Some(id),
            recv: false,
        };
        if sync {
            // The acknowledgement's receive first: it may come back before
            // the send's own completion.
            let ack = self.layout.ack_wait_bits(c.cid, dest, bits);
            let src = if CQ { addr } else { sys::FI_ADDR_UNSPEC_VALUE };
            let actx = context(id.idx, Part::Ack) as usize;
            let w = super::engine::Waiting {
                buf: 0,
                len: 0,
                src,
                bits: ack,
                ignore: 0,
                ctx: actx,
                flags: 0,
                spill: None,
            };
            // SAFETY: a zero-byte receive; the context is a value.
            if let Err(e) = unsafe { self.post_reserved(x, w) } {
                x.reqs().fail(id.idx, Err(op_error(&e)));
                x.reqs().take(id);
                return Err(e);
            }
            bits |= self.layout.sync_bit();
        }
        let mctx = context(id.idx, Part::Main) as usize;
        // SAFETY: the caller keeps buf valid until the request finishes.
        let r = self.post(x, || unsafe {
            x.tx.tsend(buf, len, data, addr, bits, mctx)
        });
        if let Err(e) = r {
            if sync {
                // The acknowledgement's receive is posted: it must end
                // before the request's slot is reused.
                let actx = context(id.idx, Part::Ack) as usize;
                // SAFETY: cancel of our own posted receive.
                let _ = unsafe { x.rx.cancel(actx as *mut libc::c_void) };
                let mut reqs = x.reqs();
                reqs.complete(id.idx, Part::Main, Status::default());
                // The caller gets the error, not the request: its slot is
                // freed once the cancelled receive ends.
                reqs.abandon(id);
                return Err(e);
            }
            x.reqs().fail(id.idx, Err(op_error(&e)));
            x.reqs().take(id);
            return Err(e);
        }
        self.sent(x);
        self.stats.sends.add(1);
        Ok(posted)
    }

    /// Send `src` from a copy with `fi_tsend`, inside the send window, and
    /// finish at once as an inject does: the copy lives in the context's
    /// `copies` until the send's completion (or error) frees its slot
    /// (`Kind::Detached`). For providers where injects are off
    /// (`copy_small`).
    fn send_copy(
        &self,
        x: &Ctx<M>,
        src: &[u8],
        data: Option<u64>,
        addr: FiAddr,
        bits: u64,
        ctx: usize,
    ) -> Result<Posted, Error> {
        self.await_send_room(x)?;
        let copy: Box<[u8]> = src.into();
        let ptr = copy.as_ptr();
        let id = x
            .reqs()
            .start(tagged::NO_OWNER, Kind::Detached { len: src.len() });
        {
            let mut copies = x.copies.lock();
            let i = id.idx as usize;
            if copies.len() <= i {
                copies.resize_with(i + 1, || None);
            }
            copies[i] = Some(copy);
        }
        let mctx = context(id.idx, Part::Main) as usize;
        // SAFETY: the copy stays in `copies` (its heap block does not move)
        // until the send's completion is read; threading per the domain.
        let r = self.post(x, || unsafe {
            x.tx.tsend(ptr, src.len(), data, addr, bits, mctx)
        });
        if let Err(e) = r {
            // The copy goes before the slot is given back: once free, the
            // slot (and its place in `copies`) may be another thread's.
            x.copies.lock()[id.idx as usize] = None;
            x.reqs().fail(id.idx, Err(op_error(&e)));
            return Err(e);
        }
        self.sent(x);
        self.stats.copied.add(1);
        Ok(Posted {
            ctx,
            id: None,
            recv: false,
        })
    }

    /// Start a receive into `len` bytes at `buf` (or a probe with `flags`
    /// FI_PEEK).
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid for writes, and untouched by the
    /// program, until the request finishes (other receives may share it:
    /// nothing here reads or writes it, only the provider does).
    pub(crate) unsafe fn start_recv(
        &self,
        c: &CommInfo,
        buf: *mut u8,
        len: usize,
        sel: Select,
        probe: bool,
    ) -> Result<Posted, Error> {
        let (src, bits, ignore) = self.recv_match(c, sel)?;
        let x = self.ctx(c.ctx);
        let counted = !probe && !sel.internal;
        let kind = if probe {
            Kind::Probe
        } else {
            Kind::Recv {
                cap: len,
                counted,
                from: sel.source,
            }
        };
        let id = x.reqs().start(c.cid, kind);
        let ctx = context(id.idx, Part::Main) as usize;
        let flags = if probe { sys::FI_PEEK as u64 } else { 0 };
        let w = super::engine::Waiting {
            buf: buf as usize,
            len,
            src,
            bits,
            ignore,
            ctx,
            flags,
            // A receive (not a probe) may be longer than its buffer.
            spill: if probe { None } else { self.spill },
        };
        // SAFETY: the caller keeps buf valid until the request finishes.
        let r = unsafe {
            if counted {
                self.post_counted(x, w)
            } else {
                self.post_reserved(x, w)
            }
        };
        if let Err(e) = r {
            x.reqs().fail(id.idx, Err(op_error(&e)));
            x.reqs().take(id);
            return Err(e);
        }
        if probe {
            self.stats.probes.add(1);
        } else {
            self.stats.recvs.add(1);
        }
        Ok(Posted {
            ctx: c.ctx,
            id: Some(id),
            recv: !probe,
        })
    }

    /// A receive's source address, match bits and ignore mask for `sel`
    /// (checked against the layout and the communicator), compiled for
    /// each layout (`CQ`) and endpoint kind (`SEP`).
    pub(super) fn recv_match_as<const CQ: bool, const SEP: bool>(
        &self,
        c: &CommInfo,
        sel: Select,
    ) -> Result<(FiAddr, u64, u64), Error> {
        if let Some(t) = sel.tag.filter(|_| !sel.internal) {
            self.layout.check_tag(t).map_err(TaggedError::from)?;
        }
        let src = match sel.source {
            Some(s) if CQ => self.addr_as::<SEP>(c.ctx, c.world(s)?),
            Some(s) => {
                c.world(s)?;
                sys::FI_ADDR_UNSPEC_VALUE
            }
            None => sys::FI_ADDR_UNSPEC_VALUE,
        };
        let (bits, ignore) = self
            .layout
            .recv_bits(c.cid, sel.source, sel.tag, sel.internal);
        Ok((src, bits, ignore))
    }

    /// Whether `p` has finished.
    #[inline]
    pub(crate) fn done(&self, p: &Posted) -> bool {
        p.id.is_none_or(|id| self.ctx(p.ctx).reqs().is_done(id))
    }

    /// The result of a finished request (its slot is freed).
    pub(crate) fn finish(&self, p: Posted, op: &'static str) -> Result<Status, Error> {
        let Some(id) = p.id else {
            return Ok(Status::default());
        };
        match self.ctx(p.ctx).reqs().take(id) {
            Some(Ok(st)) if st.truncated => Err(match &self.truncation_defect {
                None => TaggedError::Truncated(st),
                Some((provider, version)) => TaggedError::TruncationDefect {
                    provider: provider.clone(),
                    version: version.clone(),
                    status: st,
                },
            }
            .into()),
            Some(Ok(st)) => Ok(st),
            Some(Err(cause)) => Err(TaggedError::Op { op, cause }.into()),
            None => unreachable!("finish is called on a finished request"),
        }
    }

    /// Ask the provider to cancel a posted receive (it finishes cancelled,
    /// or normally if it matched first).
    pub(crate) fn cancel(&self, p: &Posted) {
        if let (Some(id), true) = (p.id, p.recv) {
            let ctx = context(id.idx, Part::Main) as usize;
            let x = self.ctx(p.ctx);
            if self.unqueue(x, ctx) {
                x.reqs().complete(
                    id.idx,
                    Part::Main,
                    Status {
                        cancelled: true,
                        ..Status::default()
                    },
                );
                return;
            }
            // SAFETY: cancel of our own posted receive; threading per the
            // domain.
            if let Err(e) = unsafe { x.rx.cancel(ctx as *mut libc::c_void) } {
                tracing::debug!("fi_cancel: {e}");
            }
        }
    }
}

pub(crate) fn op_error(e: &Error) -> tagged::OpError {
    tagged::OpError {
        err: 0,
        prov_errno: 0,
        text: e.to_string(),
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// The tagged engine, or the error saying it was not enabled.
    #[inline]
    pub(crate) fn tagged_engine(&self) -> Result<&Engine<M>, Error> {
        self.tagged
            .get()
            .ok_or_else(|| TaggedError::NotEnabled.into())
    }

    /// Wait until `done()`: the tagged context `ctx` (`None`: every
    /// context) every round, the whole client every few. Buffers may be
    /// posted, so a failure to make progress aborts the process rather than
    /// return.
    pub(crate) fn tagged_wait(
        &self,
        e: &Engine<M>,
        ctx: Option<usize>,
        mut done: impl FnMut() -> bool,
    ) {
        let c = ctx.map(|i| e.ctx(i));
        let mut n = 0u32;
        while !done() {
            let r = match c {
                Some(c) => e.progress_ctx(c),
                None => e.progress(),
            };
            n = n.wrapping_add(1);
            let r = match r {
                Ok(true) => Ok(()),
                Ok(false) if n % FULL_EVERY == 0 => self
                    .progress_within(0, Progress::Full)
                    .and_then(|_| self.exit_if_requested()),
                Ok(false) => Ok(()),
                Err(x) => Err(x),
            };
            if let Err(x) = r {
                abort_in_flight(self.rank, &x);
            }
        }
    }

    /// Wait for one posted operation and take its result.
    pub(crate) fn tagged_complete(
        &self,
        e: &Engine<M>,
        p: Posted,
        op: &'static str,
    ) -> Result<Status, Error> {
        self.tagged_wait(e, Some(p.ctx), || e.done(&p));
        e.finish(p, op)
    }
}
