//! Threading modes: the single-threaded client takes no locks, the
//! multi-threaded one (GASNet's PAR) does; the same engine code runs in both,
//! generic over a [`Mode`] chosen once at start-up.
//!
//! * [`Seq`]: locks are [`SeqCell`]s (a flag and the value, no atomics; the
//!   type is not `Sync`, so a single-threaded client cannot be shared with
//!   another thread), counters are plain cells.
//! * [`Par`]: locks are `std::sync::Mutex`es (their poisoning is ignored: a
//!   panicking handler must not wedge the client), counters are relaxed
//!   atomics.
//!
//! Both offer `try_lock`, which is how completion queues are polled: a
//! thread that finds a queue busy moves on, as GASNet does.

use std::cell::{Cell, UnsafeCell};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

/// A threading mode (a marker type).
pub trait Mode: Send + Sync + 'static {
    /// A lock around a `T`.
    type Lock<T: Send>: Lock<T>;
    /// A statistics counter.
    type Counter: Counter;
    /// Whether several threads may call at once.
    const PAR: bool;
    /// `seq` or `par`.
    const NAME: &'static str;
}

/// A lock (or, single-threaded, a checked cell).
pub trait Lock<T>: Send {
    /// Wrap `v`.
    fn new(v: T) -> Self;
    /// Exclusive access, waiting for it in multi-threaded mode.
    fn lock(&self) -> impl DerefMut<Target = T> + '_;
    /// Exclusive access if nobody has it now.
    fn try_lock(&self) -> Option<impl DerefMut<Target = T> + '_>;
    /// Exclusive access through a unique reference.
    fn get_mut(&mut self) -> &mut T;
}

/// A statistics counter.
pub trait Counter: Send + Default {
    /// Add `n`.
    fn add(&self, n: u64);
    /// The value.
    fn get(&self) -> u64;
}

/// Single-threaded mode.
#[derive(Debug, Clone, Copy, Default)]
pub struct Seq;

/// Multi-threaded mode.
#[derive(Debug, Clone, Copy, Default)]
pub struct Par;

impl Mode for Seq {
    type Lock<T: Send> = SeqCell<T>;
    type Counter = Cell<u64>;
    const PAR: bool = false;
    const NAME: &'static str = "seq";
}

impl Mode for Par {
    type Lock<T: Send> = ParLock<T>;
    type Counter = AtomicU64;
    const PAR: bool = true;
    const NAME: &'static str = "par";
}

impl Counter for Cell<u64> {
    #[inline]
    fn add(&self, n: u64) {
        self.set(self.get().wrapping_add(n));
    }
    #[inline]
    fn get(&self) -> u64 {
        Cell::get(self)
    }
}

impl Counter for AtomicU64 {
    #[inline]
    fn add(&self, n: u64) {
        self.fetch_add(n, Ordering::Relaxed);
    }
    #[inline]
    fn get(&self) -> u64 {
        self.load(Ordering::Relaxed)
    }
}

/// The single-threaded lock: a value and a "held" flag. Taking it while it
/// is held is a conduit bug (every critical section is short and never
/// calls out to a handler or back into the client); `try_lock` reports it
/// busy, as a mutex would.
#[derive(Debug, Default)]
pub struct SeqCell<T> {
    held: Cell<bool>,
    v: UnsafeCell<T>,
}

/// Access to a [`SeqCell`]'s value; clears the flag on drop.
#[derive(Debug)]
pub struct SeqGuard<'a, T> {
    cell: &'a SeqCell<T>,
}

impl<T> Deref for SeqGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: this guard exists only while `held` is set, and a guard
        // is handed out only when it was clear, so it is the one access to
        // the value; SeqCell is not Sync, so no other thread can take one.
        unsafe { &*self.cell.v.get() }
    }
}

impl<T> DerefMut for SeqGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in deref.
        unsafe { &mut *self.cell.v.get() }
    }
}

impl<T> Drop for SeqGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.cell.held.set(false);
    }
}

impl<T: Send> Lock<T> for SeqCell<T> {
    fn new(v: T) -> Self {
        SeqCell {
            held: Cell::new(false),
            v: UnsafeCell::new(v),
        }
    }

    #[inline]
    fn lock(&self) -> impl DerefMut<Target = T> + '_ {
        assert!(
            !self.held.get(),
            "ofi-conduit bug: a single-threaded lock was taken while held"
        );
        self.held.set(true);
        SeqGuard { cell: self }
    }

    #[inline]
    fn try_lock(&self) -> Option<impl DerefMut<Target = T> + '_> {
        if self.held.get() {
            return None;
        }
        self.held.set(true);
        Some(SeqGuard { cell: self })
    }

    fn get_mut(&mut self) -> &mut T {
        self.v.get_mut()
    }
}

/// The multi-threaded lock.
#[derive(Debug, Default)]
pub struct ParLock<T>(Mutex<T>);

impl<T: Send> Lock<T> for ParLock<T> {
    fn new(v: T) -> Self {
        ParLock(Mutex::new(v))
    }

    #[inline]
    fn lock(&self) -> impl DerefMut<Target = T> + '_ {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    #[inline]
    fn try_lock(&self) -> Option<impl DerefMut<Target = T> + '_> {
        match self.0.try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None::<MutexGuard<'_, T>>,
        }
    }

    fn get_mut(&mut self) -> &mut T {
        self.0.get_mut().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise<M: Mode>() {
        let l = M::Lock::<Vec<u32>>::new(vec![1]);
        {
            let mut g = l.lock();
            g.push(2);
            assert!(l.try_lock().is_none(), "{}: try_lock while held", M::NAME);
        }
        assert_eq!(l.try_lock().unwrap().len(), 2);
        let c = M::Counter::default();
        c.add(3);
        c.add(4);
        assert_eq!(c.get(), 7);
    }

    #[test]
    fn both_modes_lock_and_count() {
        exercise::<Seq>();
        exercise::<Par>();
    }

    #[test]
    #[should_panic(expected = "taken while held")]
    fn seq_relock_is_caught() {
        let l = SeqCell::new(0u8);
        let _a = l.lock();
        let _b = l.lock();
    }

    #[test]
    fn par_lock_survives_a_panicking_holder() {
        let l = std::sync::Arc::new(ParLock::new(5u32));
        let l2 = l.clone();
        let _ = std::thread::spawn(move || {
            let _g = l2.lock();
            panic!("handler panicked");
        })
        .join();
        assert_eq!(*l.lock(), 5);
    }
}
