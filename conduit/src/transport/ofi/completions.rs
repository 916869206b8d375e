//! Completion-queue entries converted to the transport's [`Completion`]s
//! and error completions: the typed context decoded from the entry's
//! context value, receive lengths and buffers, multi-receive releases, and
//! landings (remote CQ data of an AM Long in one message).

use super::flags;
use crate::client::Error;
use crate::ofi::{CompletionQueue, CqEntry};
use crate::transport::{Completion, Context, ErrorCompletion, Polled};
use ofi_sys as sys;
use std::mem::MaybeUninit;

pub(super) fn convert(raw: &CqEntry, rx: bool) -> Result<Completion, Error> {
    // AM receives carry no CQ data: a receive-queue entry with CQ
    // data (or flagged as a remote write) is a landing. shm 2.1 flags
    // it FI_REMOTE_CQ_DATA only, 1.17 adds FI_RMA | FI_REMOTE_WRITE.
    // The reply queue also takes the reply endpoint's own sends and
    // writes, whose completions some providers (sockets) flag with the
    // operation's FI_REMOTE_CQ_DATA: a local operation's flag (FI_SEND,
    // FI_WRITE, FI_READ) says it is not a landing.
    if rx && flags::landed(raw.flags()) {
        return convert_landed(raw);
    }
    let v = raw.context() as usize;
    let Some(ctx) = Context::decode(v) else {
        return Err(Error::UnknownContext { value: v });
    };
    Ok(Completion {
        ctx,
        len: if rx { raw.len() } else { 0 },
        buf: if rx {
            raw.buf() as *const u8
        } else {
            std::ptr::null()
        },
        released: rx && raw.flags() & sys::FI_MULTI_RECV as u64 != 0,
        data: 0,
    })
}

/// A remote write reported in a receive queue: only writes with CQ
/// data (landings) generate one; an entry flagged a remote write
/// without CQ data is reported as an unknown context.
#[cold]
fn convert_landed(raw: &CqEntry) -> Result<Completion, Error> {
    if raw.flags() & sys::FI_REMOTE_CQ_DATA as u64 == 0 {
        return Err(Error::UnknownContext {
            value: raw.context() as usize,
        });
    }
    Ok(Completion {
        ctx: Context::Landed,
        len: 0,
        buf: std::ptr::null(),
        released: false,
        data: raw.data(),
    })
}

/// Convert the `k` entries read into `out`.
///
/// # Safety
/// The first `k` entries of `raw` were written by `fi_cq_read`.
#[inline(never)]
pub(super) unsafe fn convert_all(
    raw: &[MaybeUninit<CqEntry>],
    k: usize,
    rx: bool,
    out: &mut [MaybeUninit<Completion>],
) -> Result<Polled, Error> {
    // SAFETY: this function's contract.
    let got = unsafe { CompletionQueue::entries(raw, k) };
    for (o, e) in out.iter_mut().zip(got) {
        o.write(convert(e, rx)?);
    }
    Ok(Polled::Completions(k))
}

/// The error completion at the head of `q` (the caller holds the
/// domain lock).
#[cold]
pub(super) fn read_error(q: &CompletionQueue) -> Result<Polled, Error> {
    // SAFETY: as in read_queue, whose lock the caller still holds.
    match unsafe { q.read_error() }? {
        None => Ok(Polled::Empty),
        Some(e) => Ok(Polled::Error(ErrorCompletion {
            ctx: Context::decode(e.context as usize),
            err: e.err,
            prov_errno: e.prov_errno,
            text: e.text,
            released: e.flags & sys::FI_MULTI_RECV as u64 != 0,
        })),
    }
}
