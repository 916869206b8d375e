//! Whether this thread runs an AM handler, and the checks of what a
//! handler may not do or target.

use crate::client::error::Error;

thread_local! {
    /// Handlers running on this thread (any client).
    static HANDLER_DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Whether this thread is inside an AM handler.
#[inline]
pub(crate) fn in_handler() -> bool {
    HANDLER_DEPTH.with(|d| d.get() > 0)
}

/// Marks this thread as inside a handler until dropped (also when the
/// handler panics).
pub(crate) struct HandlerScope;

impl HandlerScope {
    #[inline]
    pub fn enter() -> HandlerScope {
        HANDLER_DEPTH.with(|d| d.set(d.get() + 1));
        HandlerScope
    }
}

impl Drop for HandlerScope {
    #[inline]
    fn drop(&mut self) {
        HANDLER_DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// `Err(InHandler(what))` on a thread that is running a handler.
#[inline]
pub(crate) fn not_in_handler(what: &'static str) -> Result<(), Error> {
    if in_handler() {
        Err(Error::InHandler(what))
    } else {
        Ok(())
    }
}

/// A client's AM goes to a client handler (128..=255): the indices below
/// are the conduit's own (an exit, a barrier round), which a peer would
/// act on.
#[inline(always)]
pub(crate) fn client_handler(handler: u8) -> Result<(), Error> {
    if handler < am::handlers::CLIENT_BASE {
        return Err(am::Error::ReservedTarget { index: handler }.into());
    }
    Ok(())
}
