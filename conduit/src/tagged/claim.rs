//! Matched probe (MPI's `MPI_Improbe` / `MPI_Mprobe` / `MPI_Mrecv`) with
//! libfabric's `FI_CLAIM`: a probe that finds a message also claims it, so
//! no other receive can match it, and only the [`Message`] it returns can
//! receive it (or discard it, when dropped).
//!
//! `FI_CLAIM` has the provider keep its claim in the `struct fi_context`
//! given as the probe's context and find it again from the same context on
//! the claiming receive. So the context of these operations is the address
//! of a [`ClaimSlot`] (a multiple of 8, which no request context value is:
//! see `tagged::request::context`), and the slot holds the request context
//! of the operation in flight on it, which the completion path reads back
//! (`Engine::request_context`).

use super::comm::Comm;
use super::engine::{Engine, Waiting};
use super::error::TaggedError;
use super::ops::{op_error, Posted, Select};
use crate::client::Error;
use crate::sync::{Counter, Mode};
use crate::transport::Transport;
use ofi_sys as sys;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};
use tagged::request::{context, Part};
use tagged::{Kind, Status};

/// The context of a claimed message's operations: the `fi_context` the
/// provider keeps its claim in, and the request context of the operation
/// posted with it.
#[repr(C)]
pub(crate) struct ClaimSlot {
    /// Written by the provider during the calls and its progress.
    fi: UnsafeCell<sys::fi_context>,
    /// `tagged::request::context` of the operation in flight.
    req: AtomicU64,
}

impl ClaimSlot {
    fn new() -> Box<ClaimSlot> {
        Box::new(ClaimSlot {
            fi: UnsafeCell::new(sys::fi_context::default()),
            req: AtomicU64::new(0),
        })
    }

    /// The request context an operation's `op_context` stands for: the
    /// value itself, or for a claimed message's operations (a `ClaimSlot`
    /// address) the value its slot holds.
    ///
    /// # Safety
    /// `raw` is an `op_context` the provider returned for an operation of
    /// this engine that has not been finished yet: a multiple of 8 is then
    /// a `ClaimSlot` that is kept alive until that operation finishes.
    #[inline]
    pub(crate) unsafe fn request_context(raw: usize) -> u64 {
        if raw != 0 && raw % 8 == 0 {
            // SAFETY: per this function's contract.
            unsafe { (*(raw as *const ClaimSlot)).req.load(Ordering::Acquire) }
        } else {
            raw as u64
        }
    }
}

impl<M: Mode> Engine<M> {
    /// Post one operation on a claimed message's slot: the probe
    /// (`FI_PEEK | FI_CLAIM`), the receive (`FI_CLAIM`) or the discard
    /// (`FI_CLAIM | FI_DISCARD`), with the probe's match bits.
    ///
    /// `from`: the claimed message's source, where the probe found it (a
    /// receive or discard completion may carry no CQ data: shm 2.x's
    /// discard does not, and with the source in CQ data the completion
    /// alone would name rank 0).
    ///
    /// # Safety
    /// `slot` and `buf..buf+len` stay valid until the request finishes.
    unsafe fn start_claim(
        &self,
        c: &super::engine::CommInfo,
        slot: &ClaimSlot,
        (buf, len): (*mut u8, usize),
        sel: Select,
        from: Option<u32>,
        flags: u64,
    ) -> Result<Posted, Error> {
        let (src, bits, ignore) = self.recv_match(c, sel)?;
        let x = self.ctx(c.ctx);
        let peek = flags & sys::FI_PEEK as u64 != 0;
        let kind = if peek {
            Kind::Probe
        } else {
            Kind::Recv {
                cap: len,
                counted: false,
                from: from.or(sel.source),
            }
        };
        let id = x.reqs().start(c.cid, kind);
        slot.req
            .store(context(id.idx, Part::Main), Ordering::Release);
        let w = Waiting {
            buf: buf as usize,
            len,
            src,
            bits,
            ignore,
            ctx: slot as *const ClaimSlot as usize,
            flags,
            spill: if peek { None } else { self.spill },
        };
        // SAFETY: per this function's contract.
        if let Err(e) = unsafe { self.post_reserved(x, w) } {
            x.reqs().fail(id.idx, Err(op_error(&e)));
            x.reqs().take(id);
            return Err(e);
        }
        if peek {
            self.stats.probes.add(1);
        } else {
            self.stats.recvs.add(1);
        }
        Ok(Posted {
            ctx: c.ctx,
            id: Some(id),
            recv: false,
        })
    }
}

/// A message found and claimed by [`Comm::improbe`] or [`Comm::mprobe`]:
/// no other receive can match it; [`Message::recv`] receives it. Dropped
/// without being received, it is discarded.
pub struct Message<'a, 'c, M: Mode, S, T: Transport> {
    comm: &'a Comm<'c, M, S, T>,
    sel: Select,
    status: Status,
    /// `None` once received or discarded.
    slot: Option<Box<ClaimSlot>>,
}

impl<M: Mode, S, T: Transport> std::fmt::Debug for Message<'_, '_, M, S, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Message")
            .field("status", &self.status)
            .finish()
    }
}

impl<'a, 'c, M: Mode, S, T: Transport> Message<'a, 'c, M, S, T> {
    /// The message's source, tag and size (`size`, and `len` as for a
    /// probe: the message's size).
    pub fn status(&self) -> Status {
        self.status
    }

    /// Receive the message into `buf` (a shorter buffer truncates it, as
    /// [`Comm::recv`] does).
    pub fn recv(mut self, buf: &mut [u8]) -> Result<Status, Error> {
        crate::client::engine::not_in_handler("a matched receive")?;
        let Some(slot) = self.slot.take() else {
            unreachable!("a Message is received or discarded once");
        };
        self.finish(
            slot,
            (buf.as_mut_ptr(), buf.len()),
            sys::FI_CLAIM,
            "matched receive",
        )
    }

    fn finish(
        &self,
        slot: Box<ClaimSlot>,
        buf: (*mut u8, usize),
        flags: u64,
        op: &'static str,
    ) -> Result<Status, Error> {
        let c = self.comm;
        let from = (self.status.source != Status::UNKNOWN_SOURCE).then_some(self.status.source);
        // The probe's match bits: some providers check them again.
        // SAFETY: the slot and buf outlive the wait below, which returns
        // only once the operation finished (or the process aborts).
        let p = unsafe {
            c.eng
                .start_claim(&c.info, &slot, buf, self.sel, from, flags)?
        };
        let r = c.core.tagged_complete(c.eng, p, op);
        drop(slot);
        r
    }
}

impl<M: Mode, S, T: Transport> Drop for Message<'_, '_, M, S, T> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            let flags = sys::FI_CLAIM | sys::FI_DISCARD;
            match self.finish(slot, (std::ptr::null_mut(), 0), flags, "discard") {
                // A discard has no buffer: every non-empty message is
                // reported truncated, which is what was asked.
                Ok(_) | Err(Error::Tagged(TaggedError::Truncated(_))) => {}
                Err(e) => tracing::warn!("discarding a claimed message: {e}"),
            }
        }
    }
}

impl<'c, M: Mode, S, T: Transport> Comm<'c, M, S, T> {
    /// Matched probe: is a matching message waiting? If so it is claimed
    /// (`FI_PEEK | FI_CLAIM`): no other receive can match it, and the
    /// returned [`Message`] receives it. On a provider whose profile says
    /// it cannot claim (udp;ofi_rxd), [`TaggedError::ClaimUnsupported`]
    /// with the reason.
    pub fn improbe(
        &self,
        source: Option<u32>,
        tag: Option<u32>,
    ) -> Result<Option<Message<'_, 'c, M, S, T>>, Error> {
        // Not in a handler: a claimed message's receive or discard waits.
        crate::client::engine::not_in_handler("a matched probe")?;
        if let Some((provider, why)) = &self.eng.no_claim {
            return Err(TaggedError::ClaimUnsupported {
                provider: provider.clone(),
                why: why.clone(),
            }
            .into());
        }
        let sel = Select {
            source,
            tag,
            internal: false,
        };
        let slot = ClaimSlot::new();
        let flags = sys::FI_PEEK as u64 | sys::FI_CLAIM;
        // SAFETY: a probe places no data; the slot outlives the wait.
        let p = unsafe {
            self.eng.start_claim(
                &self.info,
                &slot,
                (std::ptr::null_mut(), 0),
                sel,
                None,
                flags,
            )?
        };
        match self.core.tagged_complete(self.eng, p, "matched probe") {
            Ok(status) => Ok(Some(Message {
                comm: self,
                sel,
                status,
                slot: Some(slot),
            })),
            Err(Error::Tagged(TaggedError::Op { cause, .. }))
                if cause.err == sys::FI_ENOMSG as i32 =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Matched probe that waits for a matching message (see
    /// [`Comm::improbe`]).
    pub fn mprobe(
        &self,
        source: Option<u32>,
        tag: Option<u32>,
    ) -> Result<Message<'_, 'c, M, S, T>, Error> {
        crate::client::engine::not_in_handler("a matched probe")?;
        loop {
            if let Some(m) = self.improbe(source, tag)? {
                return Ok(m);
            }
            self.core.poll_api(0)?;
        }
    }
}
