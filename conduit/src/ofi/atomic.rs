//! Atomic calls on an enabled [`Endpoint`]: `fi_atomicmsg`,
//! `fi_fetch_atomicmsg`, `fi_compare_atomicmsg` on one element, and the
//! `*valid` queries that say whether the provider performs a (datatype,
//! operation) pair.

use super::ep::Endpoint;
use super::error::{check, OfiError};
use super::FiAddr;
use ofi_sys as sys;
use std::ptr;

/// Which atomic call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicCall {
    /// `fi_atomic`: no result.
    Atomic,
    /// `fi_fetch_atomic`: the target's old value is returned.
    Fetch,
    /// `fi_compare_atomic`: compare, swap, return the old value.
    Compare,
}

/// One element's atomic: the operand, compare value and result buffers
/// (each one element of the datatype), the target and the operation.
#[derive(Debug, Clone, Copy)]
pub struct AtomicArgs {
    /// The call.
    pub call: AtomicCall,
    /// `enum fi_datatype`.
    pub datatype: sys::fi_datatype,
    /// `enum fi_op`.
    pub op: sys::fi_op,
    /// The operand (ignored by `FI_ATOMIC_READ`, but still passed).
    pub operand: *const u8,
    /// The compare value (`Compare` only).
    pub compare: *const u8,
    /// Where the old value goes (`Fetch` and `Compare`).
    pub result: *mut u8,
    /// Target.
    pub dest: FiAddr,
    /// Remote address and key.
    pub addr: u64,
    /// Remote key.
    pub key: u64,
    /// Completion context.
    pub context: *mut libc::c_void,
    /// Operation flags (FI_COMPLETION, FI_DELIVERY_COMPLETE, ...).
    pub flags: u64,
}

/// The descriptors of one atomic that providers may keep pointers to
/// until its completion (shm reads the result's `fi_ioc` then): the caller
/// keeps this alive and in place until the completion is read.
#[derive(Debug)]
pub struct AtomicIo {
    iov: sys::fi_ioc,
    rma: sys::fi_rma_ioc,
    desc: *mut libc::c_void,
    res: sys::fi_ioc,
    rdesc: *mut libc::c_void,
    cmp: sys::fi_ioc,
    cdesc: *mut libc::c_void,
}

impl Default for AtomicIo {
    fn default() -> Self {
        AtomicIo {
            iov: sys::fi_ioc {
                addr: ptr::null_mut(),
                count: 0,
            },
            rma: sys::fi_rma_ioc::default(),
            desc: ptr::null_mut(),
            res: sys::fi_ioc {
                addr: ptr::null_mut(),
                count: 0,
            },
            rdesc: ptr::null_mut(),
            cmp: sys::fi_ioc {
                addr: ptr::null_mut(),
                count: 0,
            },
            cdesc: ptr::null_mut(),
        }
    }
}

impl Endpoint {
    /// Post one element's atomic, its descriptors in `io`.
    ///
    /// # Safety
    /// `operand`, `compare` and `result` (as the call uses them) must point
    /// to one element of the datatype and stay valid (the result
    /// unaliased), and `io` must stay alive and unmoved, until the
    /// completion carrying `context` is read; the domain's threading level
    /// must be respected.
    pub unsafe fn atomic(&self, a: &AtomicArgs, io: *mut AtomicIo) -> Result<(), OfiError> {
        // SAFETY: the caller's `io` is valid and ours until the completion.
        let io = unsafe { &mut *io };
        *io = AtomicIo::default();
        io.iov = sys::fi_ioc {
            addr: a.operand as *mut libc::c_void,
            count: 1,
        };
        io.rma = sys::fi_rma_ioc {
            addr: a.addr,
            count: 1,
            key: a.key,
        };
        io.res = sys::fi_ioc {
            addr: a.result.cast(),
            count: 1,
        };
        io.cmp = sys::fi_ioc {
            addr: a.compare as *mut libc::c_void,
            count: 1,
        };
        let msg = sys::fi_msg_atomic {
            msg_iov: &io.iov,
            desc: &mut io.desc,
            iov_count: 1,
            addr: a.dest,
            rma_iov: &io.rma,
            rma_iov_count: 1,
            datatype: a.datatype,
            op: a.op,
            context: a.context,
            data: 0,
        };
        let (name, rc) = match a.call {
            // SAFETY: `msg` is read during the call; what it points to
            // lives in `io` or the caller's buffers (this function's
            // contract).
            AtomicCall::Atomic => ("fi_atomicmsg", unsafe {
                sys::fi_atomicmsg(self.inner.raw, &msg, a.flags)
            }),
            // SAFETY: as above.
            AtomicCall::Fetch => ("fi_fetch_atomicmsg", unsafe {
                sys::fi_fetch_atomicmsg(
                    self.inner.raw,
                    &msg,
                    &mut io.res,
                    &mut io.rdesc,
                    1,
                    a.flags,
                )
            }),
            // SAFETY: as above.
            AtomicCall::Compare => ("fi_compare_atomicmsg", unsafe {
                sys::fi_compare_atomicmsg(
                    self.inner.raw,
                    &msg,
                    &io.cmp,
                    &mut io.cdesc,
                    1,
                    &mut io.res,
                    &mut io.rdesc,
                    1,
                    a.flags,
                )
            }),
        };
        check(name, rc as i64).map(|_| ())
    }

    /// Whether the provider performs `call` with `op` on `datatype` on this
    /// endpoint (`fi_atomicvalid` and its fetch / compare forms report at
    /// least one element).
    pub fn atomic_valid(
        &self,
        call: AtomicCall,
        datatype: sys::fi_datatype,
        op: sys::fi_op,
    ) -> bool {
        let mut count = 0usize;
        // SAFETY: the endpoint is open; `count` is written by the call.
        let rc = unsafe {
            match call {
                AtomicCall::Atomic => sys::fi_atomicvalid(self.inner.raw, datatype, op, &mut count),
                AtomicCall::Fetch => {
                    sys::fi_fetch_atomicvalid(self.inner.raw, datatype, op, &mut count)
                }
                AtomicCall::Compare => {
                    sys::fi_compare_atomicvalid(self.inner.raw, datatype, op, &mut count)
                }
            }
        };
        rc == 0 && count > 0
    }
}
