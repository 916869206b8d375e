//! How the libfabric transport serialises its calls.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A count kept by the transport (plain in single-threaded mode, atomic in
/// multi-threaded mode).
pub trait Tally: Default + Send {
    /// The value.
    fn get(&self) -> usize;
    /// Add `n`.
    fn add(&self, n: usize);
    /// Subtract `n`, stopping at zero.
    fn sub(&self, n: usize);
    /// Set the value (not atomic with respect to `add`: for counts whose
    /// exact value does not matter).
    fn set(&self, v: usize);
}

impl Tally for Cell<usize> {
    #[inline(always)]
    fn get(&self) -> usize {
        Cell::get(self)
    }
    #[inline(always)]
    fn add(&self, n: usize) {
        Cell::set(self, Cell::get(self) + n);
    }
    #[inline(always)]
    fn sub(&self, n: usize) {
        Cell::set(self, Cell::get(self).saturating_sub(n));
    }
    #[inline(always)]
    fn set(&self, v: usize) {
        Cell::set(self, v);
    }
}

impl Tally for AtomicUsize {
    #[inline(always)]
    fn get(&self) -> usize {
        self.load(Ordering::Acquire)
    }
    #[inline(always)]
    fn add(&self, n: usize) {
        self.fetch_add(n, Ordering::AcqRel);
    }
    #[inline(always)]
    fn sub(&self, n: usize) {
        let _ = self.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
            Some(v.saturating_sub(n))
        });
    }
    #[inline(always)]
    fn set(&self, v: usize) {
        self.store(v, Ordering::Relaxed);
    }
}

/// How libfabric calls are serialised.
pub trait DomainLock: Send + 'static {
    /// What is held for the duration of a call.
    type Guard<'a>;
    /// The transport's counts.
    type Tally: Tally;
    /// Build it; `big_lock` asks for one lock around every call.
    fn new(big_lock: bool) -> Self;
    /// Enter a call.
    fn enter(&self) -> Self::Guard<'_>;
}

/// Single-threaded: no lock, and the transport is not `Sync`.
#[derive(Debug, Default)]
pub struct Unsynced(PhantomData<Cell<()>>);

impl DomainLock for Unsynced {
    type Guard<'a> = ();
    type Tally = Cell<usize>;
    fn new(_big_lock: bool) -> Self {
        Unsynced(PhantomData)
    }
    #[inline]
    fn enter(&self) {}
}

/// Multi-threaded: FI_THREAD_SAFE (no lock), or FI_THREAD_DOMAIN with one
/// lock around every call.
#[derive(Debug, Default)]
pub struct Synced(Option<Mutex<()>>);

impl DomainLock for Synced {
    type Guard<'a> = Option<std::sync::MutexGuard<'a, ()>>;
    type Tally = AtomicUsize;
    fn new(big_lock: bool) -> Self {
        Synced(big_lock.then(|| Mutex::new(())))
    }
    #[inline]
    fn enter(&self) -> Self::Guard<'_> {
        self.0
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts<T: Tally>() {
        let t = T::default();
        assert_eq!(t.get(), 0);
        t.add(2);
        t.sub(1);
        assert_eq!(t.get(), 1);
        // An error completion of an operation that asked for none (an
        // inject) is not counted: the count stops at zero.
        t.sub(3);
        assert_eq!(t.get(), 0);
        t.set(7);
        assert_eq!(t.get(), 7);
    }

    #[test]
    fn both_tallies_count_and_stop_at_zero() {
        counts::<Cell<usize>>();
        counts::<AtomicUsize>();
    }
}
