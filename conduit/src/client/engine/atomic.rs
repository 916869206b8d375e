//! Remote atomics, by one of two implementations that are never mixed in
//! a domain (`rma::atomic` holds what each operation computes):
//!
//! * native: one `fi_atomic` / `fi_fetch_atomic` / `fi_compare_atomic`
//!   per operation (`Ep::Rma` of the set), waited for like a blocking
//!   get (the operation's slot in the set's table is the completion
//!   context);
//! * by Active Message: a Short request carries the operation to the
//!   target, whose progress performs it with a CPU atomic instruction on
//!   its segment and replies with the old value. Targets whose segment is
//!   mapped here (this rank, and the ranks of its supernode) are operated
//!   on directly with the same instructions, which are atomic with respect
//!   to the ones the target's handler performs.

use super::replies::Pending;
use super::rma::InFlight;
use super::{Core, Progress};
use crate::client::error::Error;
use crate::sync::{Counter, Lock, Mode};
use crate::transport::{AtomicBufs, Context, Side, Transport};
use ::rma::atomic::{AtomicError, AtomicOp, AtomicType, Native, NativeCall};
use ::rma::ops::Implicit;
use am::send::Category;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Internal handler: an atomic by AM (Short request, 8 args: type and
/// operation, offset, two operands, request id).
pub(crate) const H_ATOMIC: u8 = 3;
/// Internal handler: its reply (Short reply, 4 args: request id, old
/// value, status: 0 performed, 1 refused).
pub(crate) const H_ATOMIC_REPLY: u8 = 4;

/// The engine's atomics state.
pub(crate) struct AtomicState<M: Mode> {
    pub pending: M::Lock<Pending>,
    /// A native domain exists: progress must read the provider's queues
    /// even when every rank shares memory with this one.
    pub provider_in_use: AtomicBool,
}

impl<M: Mode> AtomicState<M> {
    pub fn new() -> Self {
        AtomicState {
            pending: M::Lock::new(Pending::default()),
            provider_in_use: AtomicBool::new(false),
        }
    }
}

/// How the conduit posts a native atomic: non-fetching operations go as
/// `fi_fetch_atomic` with the old value discarded, so that the completion
/// means the operation was performed at the target on every provider
/// (shm in libfabric 1.17 corrupts the initiator's memory when an
/// `fi_atomic` asks for FI_DELIVERY_COMPLETE: see known-issues.md).
fn performed(mut n: Native) -> Native {
    if n.call == NativeCall::Atomic {
        n.call = NativeCall::Fetch;
    }
    n
}

/// The first `ty.size()` bytes hold `v` in native order.
fn element(ty: AtomicType, v: u64) -> [u8; 8] {
    let mut b = [0u8; 8];
    if ty.size() == 4 {
        b[..4].copy_from_slice(&(v as u32).to_ne_bytes());
    } else {
        b = v.to_ne_bytes();
    }
    b
}

fn value(ty: AtomicType, b: &[u8; 8]) -> u64 {
    if ty.size() == 4 {
        u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as u64
    } else {
        u64::from_ne_bytes(*b)
    }
}

/// Perform `op` on the element at `p` with CPU atomics; the old value.
///
/// # Safety
/// `p` must point to `ty.size()` bytes aligned to that size that stay
/// mapped for the call; other accesses to them must be atomic.
pub(crate) unsafe fn cpu_atomic(p: *mut u8, ty: AtomicType, op: AtomicOp, a: u64, b: u64) -> u64 {
    macro_rules! run {
        ($at:ty, $t:ty) => {{
            // SAFETY: aligned, mapped, accessed atomically (contract).
            let x = unsafe { <$at>::from_ptr(p.cast::<$t>()) };
            let int = !ty.is_float();
            match op {
                AtomicOp::Get => x.load(Ordering::SeqCst) as u64,
                AtomicOp::Set | AtomicOp::Swap => x.swap(a as $t, Ordering::SeqCst) as u64,
                AtomicOp::Add | AtomicOp::Fadd if int => {
                    x.fetch_add(a as $t, Ordering::SeqCst) as u64
                }
                AtomicOp::Sub | AtomicOp::Fsub if int => {
                    x.fetch_sub(a as $t, Ordering::SeqCst) as u64
                }
                _ => {
                    let mut old = x.load(Ordering::SeqCst);
                    loop {
                        let Some(new) = op.apply(ty, old as u64, a, b) else {
                            break old as u64;
                        };
                        match x.compare_exchange_weak(
                            old,
                            new as $t,
                            Ordering::SeqCst,
                            Ordering::SeqCst,
                        ) {
                            Ok(_) => break old as u64,
                            Err(cur) => old = cur,
                        }
                    }
                }
            }
        }};
    }
    if ty.size() == 4 {
        run!(AtomicU32, u32)
    } else {
        run!(AtomicU64, u64)
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Whether the provider performs `op` on `ty`: `Err(why)` if not.
    pub fn native_atomic_check(&self, ty: AtomicType, op: AtomicOp) -> Result<(), String> {
        // The profile first: it refuses whatever the job asked for.
        if let Some(why) = crate::profile::lookup(&self.tp.facts().provider)
            .no_native_atomics
            .as_ref()
        {
            return Err(format!("the {} profile: {why}", self.tp.facts().provider));
        }
        if !self.tp.facts().atomic {
            if self.cfg.extended.atomics == crate::config::AtomicsMode::Am {
                return Err(
                    "the job was started with GASNET_OFI_ATOMICS=am, so FI_ATOMIC was \
                            not requested for the provider's endpoints; start it with auto or \
                            native to use the provider's atomics where it has them"
                        .into(),
                );
            }
            return Err(
                "the provider does not offer FI_ATOMIC here: its endpoints were opened without it"
                    .into(),
            );
        }
        let n = performed(op.native(ty, 0));
        if (0..self.sets.len()).all(|s| self.tp.atomic_valid(s, ty, n)) {
            return Ok(());
        }
        let call = match n.call {
            NativeCall::Atomic => "fi_atomicvalid",
            NativeCall::Fetch => "fi_fetch_atomicvalid",
            NativeCall::Compare => "fi_compare_atomicvalid",
        };
        Err(format!("{call} refused {:?}", n.op))
    }

    fn check_target(&self, ty: AtomicType, offset: usize) -> Result<(), Error> {
        if offset % ty.size() != 0 {
            return Err(AtomicError::Misaligned {
                offset,
                ty,
                size: ty.size(),
            }
            .into());
        }
        Ok(())
    }

    /// A native atomic; the target's old value (0 for non-fetching calls).
    #[allow(clippy::too_many_arguments)]
    pub fn atomic_native(
        &self,
        set: usize,
        rank: usize,
        offset: usize,
        ty: AtomicType,
        op: AtomicOp,
        a: u64,
        b: u64,
    ) -> Result<u64, Error> {
        self.check_target(ty, offset)?;
        let remote = self.remote(set, rank, offset, ty.size())?;
        let n = performed(op.native(ty, a));
        // For a compare, libfabric's buffer is the value written on a
        // match and `compare` the value compared with.
        let mut bufs = AtomicBufs::default();
        (bufs.operand, bufs.compare) = match n.call {
            NativeCall::Compare => (element(ty, b), element(ty, a)),
            _ => (element(ty, n.operand), [0u8; 8]),
        };
        let op_id = self.sets[set].ops.lock().start(1, Implicit::No);
        let mut g = InFlight::new(self, set, op_id, 1);
        let ctx = Context::Rma { slot: op_id.index };
        let p: *mut AtomicBufs = &mut bufs;
        // SAFETY: `bufs` lives on this frame, unmoved, until the operation
        // is over: `wait_op` (or `g` on an early return or unwind) returns
        // only then; the remote element was checked.
        self.post_retry(set, Progress::Full, || unsafe {
            self.tp.atomic(set, rank, ty, n, p, remote, ctx)
        })?;
        g.posted();
        self.sets[set].stats.atomic_native.add(1);
        let op_id = g.disarm();
        let dir = "at";
        self.wait_op(set, Some(op_id), Progress::Full, "atomic", dir, rank)?;
        Ok(value(ty, &bufs.result))
    }

    /// An atomic by AM (or directly on a segment mapped here); the old
    /// value.
    #[allow(clippy::too_many_arguments)]
    pub fn atomic_am(
        &self,
        set: usize,
        rank: usize,
        offset: usize,
        ty: AtomicType,
        op: AtomicOp,
        a: u64,
        b: u64,
    ) -> Result<u64, Error> {
        self.check_target(ty, offset)?;
        // Checks the rank, and the range against the target's published
        // segment.
        self.remote(set, rank, offset, ty.size())?;
        if let Some(p) = self.mapped_range(rank, offset, ty.size()) {
            let p = p?;
            self.sets[set].stats.shared_rma.add(1);
            // SAFETY: `p` is the checked, aligned element in a mapped
            // segment; every access a domain makes to it is atomic.
            let old = unsafe { cpu_atomic(p, ty, op, a, b) };
            // A rank spinning on its own word (a lock) must still serve the
            // operations other ranks send it by AM. The operation is done:
            // what progress meets waits for the next call.
            if let Err(e) = self.progress_within(set, Progress::Full) {
                self.deferred.put(e);
            }
            return Ok(old);
        }
        let id = self.atomics.pending.lock().take();
        self.sets[set].stats.atomic_am.add(1);
        let args = [
            (ty as u32) << 8 | op.code() as u32,
            offset as u32,
            (offset as u64 >> 32) as u32,
            a as u32,
            (a >> 32) as u32,
            b as u32,
            (b >> 32) as u32,
            id,
        ];
        if let Err(e) = self.send_am(
            set,
            Side::Request,
            rank,
            Category::Short,
            H_ATOMIC,
            &args,
            &[],
            0,
            false,
            Progress::Full,
        ) {
            self.atomics.pending.lock().cancel(id);
            return Err(e);
        }
        match self.await_reply(set, id) {
            Ok((old, 0)) => Ok(old),
            Ok(_) => Err(am::Error::MalformedInternal {
                src: rank as u32,
                handler: H_ATOMIC_REPLY,
                what: "the target refused the atomic (no segment, or a malformed request)",
            }
            .into()),
            Err(e) => {
                self.atomics.pending.lock().abandon(id);
                Err(e)
            }
        }
    }

    /// Poll until reply slot `id` holds its value and status (and free
    /// the slot).
    pub(super) fn await_reply(&self, set: usize, id: u32) -> Result<(u64, u32), Error> {
        loop {
            if let Some(v) = self.atomics.pending.lock().result(id) {
                return Ok(v);
            }
            self.progress_within(set, Progress::Full)?;
            self.exit_if_requested()?;
        }
    }

    /// The target side of an atomic by AM: perform it, reply with the old
    /// value.
    pub(super) fn on_atomic_request(
        &self,
        set: usize,
        src: usize,
        args: &[u32; 8],
    ) -> Result<(), Error> {
        let bad = || am::Error::MalformedInternal {
            src: src as u32,
            handler: H_ATOMIC,
            what: "an atomic with an unknown type or operation, or a misaligned target",
        };
        // Whatever happens, the initiator gets a reply (status 1: refused),
        // so it never waits for one that will not come.
        let performed = (|| -> Result<u64, Error> {
            let ty = *AtomicType::ALL
                .get((args[0] >> 8) as usize)
                .ok_or_else(bad)?;
            let op = AtomicOp::from_code(args[0] as u8).ok_or_else(bad)?;
            let offset = (args[1] as u64 | (args[2] as u64) << 32) as usize;
            let a = args[3] as u64 | (args[4] as u64) << 32;
            let b = args[5] as u64 | (args[6] as u64) << 32;
            if offset % ty.size() != 0 || !op.valid_for(ty) {
                return Err(bad().into());
            }
            let p = self.own_segment()?.range(offset, ty.size())?;
            // SAFETY: checked and aligned element of this rank's segment.
            Ok(unsafe { cpu_atomic(p, ty, op, a, b) })
        })();
        let (old, status) = match &performed {
            Ok(v) => (*v, 0),
            Err(_) => (0, 1),
        };
        self.send_am(
            set,
            Side::Reply,
            src,
            Category::Short,
            H_ATOMIC_REPLY,
            &[args[7], old as u32, (old >> 32) as u32, status],
            &[],
            0,
            false,
            Progress::Replies,
        )?;
        performed.map(|_| ())
    }

    /// The initiator side: the reply's value for its waiter.
    pub(super) fn on_atomic_reply(&self, src: usize, args: &[u32; 4]) -> Result<(), Error> {
        let v = args[1] as u64 | (args[2] as u64) << 32;
        if self.atomics.pending.lock().reply(args[0], v, args[3]) {
            Ok(())
        } else {
            Err(am::Error::MalformedInternal {
                src: src as u32,
                handler: H_ATOMIC_REPLY,
                what: "a reply to an atomic this rank is not waiting for",
            }
            .into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_atomics_follow_the_operations() {
        for ty in AtomicType::ALL {
            for op in AtomicOp::ALL.into_iter().filter(|o| o.valid_for(ty)) {
                let start = ty.mask(if ty.is_float() {
                    if ty.size() == 4 {
                        6.0f32.to_bits() as u64
                    } else {
                        6.0f64.to_bits()
                    }
                } else {
                    6
                });
                let a = ty.mask(if ty.is_float() {
                    if ty.size() == 4 {
                        2.0f32.to_bits() as u64
                    } else {
                        2.0f64.to_bits()
                    }
                } else {
                    u64::MAX - 1
                });
                let b = start;
                let mut cell = [0u64; 1];
                let p = cell.as_mut_ptr().cast::<u8>();
                let init = element(ty, start);
                // SAFETY: `cell` is 8 bytes, aligned to 8.
                unsafe { std::ptr::copy_nonoverlapping(init.as_ptr(), p, 8) };
                // SAFETY: as above; no other access.
                let old = unsafe { cpu_atomic(p, ty, op, a, b) };
                assert_eq!(old, start, "{op} {ty}");
                let mut now = [0u8; 8];
                // SAFETY: as above.
                unsafe { std::ptr::copy_nonoverlapping(p, now.as_mut_ptr(), 8) };
                let want = op.apply(ty, start, a, b).unwrap_or(start);
                assert_eq!(value(ty, &now), want, "{op} {ty}");
            }
        }
    }
}
