//! Receive buffers: `GASNET_OFI_NUM_RECEIVE_BUFFS` buffers of
//! `GASNET_OFI_RECEIVE_BUFF_SIZE`, alternating between the request and the
//! reply endpoint, posted with FI_MULTI_RECV (or one AM per buffer in the
//! `single` and `recv` modes). A buffer is reposted only after the provider
//! released it and the handlers of every message in it have returned (here:
//! synchronously, since handlers run inside poll). A repost that returns
//! -FI_EAGAIN is retried at the end of each poll.

use crate::config::RecvBuffSize;
use crate::ofi::{Endpoint, OfiError};
use memmap2::MmapMut;

/// Which endpoint a buffer serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Request,
    Reply,
}

/// The context of one posted buffer (its address is the completion context).
#[derive(Debug)]
pub(crate) struct RecvCtx {
    pub index: usize,
    pub side: Side,
}

pub(crate) struct RecvBuffers {
    mem: MmapMut,
    pub size: usize,
    pub ctxs: Box<[RecvCtx]>,
    pub multi_recv: bool,
    /// Buffers whose repost returned -FI_EAGAIN.
    pub retry: Vec<usize>,
    /// Whether each buffer is currently posted to the provider.
    pub posted: Vec<bool>,
}

impl RecvBuffers {
    pub fn new(count: usize, size: usize, mode: RecvBuffSize) -> std::io::Result<RecvBuffers> {
        let size = am::wire::align_up(size);
        let mem = MmapMut::map_anon(count * size)?;
        let ctxs = (0..count)
            .map(|index| RecvCtx {
                index,
                side: if index % 2 == 0 {
                    Side::Request
                } else {
                    Side::Reply
                },
            })
            .collect();
        Ok(RecvBuffers {
            mem,
            size,
            ctxs,
            multi_recv: mode.uses_multi_recv(),
            retry: Vec::new(),
            posted: vec![false; count],
        })
    }

    /// Start of buffer `i`.
    pub fn ptr(&mut self, i: usize) -> *mut u8 {
        // SAFETY: i < count, so the offset is inside the mapping.
        unsafe { self.mem.as_mut_ptr().add(i * self.size) }
    }

    /// The context pointer of buffer `i`.
    pub fn ctx(&self, i: usize) -> *mut libc::c_void {
        (&self.ctxs[i] as *const RecvCtx) as *mut libc::c_void
    }

    /// Whether `p..p+len` lies inside buffer `i`.
    pub fn contains(&self, i: usize, p: *const u8, len: usize) -> bool {
        let start = self.mem.as_ptr() as usize + i * self.size;
        let p = p as usize;
        p >= start && p.checked_add(len).is_some_and(|e| e <= start + self.size)
    }

    /// Post buffer `i` to `ep`. Returns false on -FI_EAGAIN (the caller
    /// queues a retry).
    pub fn post(&mut self, i: usize, ep: &Endpoint) -> Result<bool, OfiError> {
        let flags = if self.multi_recv {
            ofi_sys::FI_MULTI_RECV as u64
        } else {
            0
        };
        let (p, ctx, size) = (self.ptr(i), self.ctx(i), self.size);
        // SAFETY: the buffer lives in self.mem, which the client keeps until
        // after its endpoints are closed; it is handed to the provider here
        // and not touched by the conduit until its release completion.
        // The client is single-threaded (FI_THREAD_DOMAIN).
        match unsafe { ep.recv_msg(p, size, ctx, flags) } {
            Ok(()) => {
                self.posted[i] = true;
                Ok(true)
            }
            Err(e) if e.is_again() => Ok(false),
            // libfabric 1.17's shm runs out of receive entries under a flood
            // of unexpected messages and answers -FI_ENOMEM; the entries come
            // back as progress matches those messages (known-issues.md).
            Err(e) if e.code == -(ofi_sys::FI_ENOMEM as i64) => Ok(false),
            Err(e) => Err(e),
        }
    }
}
