//! How the libfabric transport serialises its calls.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::Mutex;

/// How libfabric calls are serialised.
pub trait DomainLock: Send + 'static {
    /// What is held for the duration of a call.
    type Guard<'a>;
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
