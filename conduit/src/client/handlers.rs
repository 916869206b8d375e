//! Registering Active Message handlers on a client.

use super::{ClientOf, Error, Handler, Mode, Payload, Token, Transport};

impl<M: Mode, S, T: Transport> ClientOf<M, S, T> {
    /// Register a handler at `index` (128..=255, or 0 for the highest free
    /// one). Returns the index used. Requests and replies share one index
    /// space.
    pub fn register(&self, index: u8, handler: Handler<S>) -> Result<u8, Error> {
        Ok(self
            .core
            .handlers
            .register_widened(index, handler.sig, handler.widen, handler.f)?)
    }

    /// Register a Short request handler (`register` with
    /// [`Handler::request_short`], where the closure's state type is known).
    pub fn on_request_short(
        &self,
        index: u8,
        nargs: u8,
        f: impl Fn(&mut Token<'_, S>, &[u32]) + Send + Sync + 'static,
    ) -> Result<u8, Error> {
        self.register(index, Handler::request_short(nargs, f))
    }

    /// Register a Short reply handler.
    pub fn on_reply_short(
        &self,
        index: u8,
        nargs: u8,
        f: impl Fn(&mut Token<'_, S>, &[u32]) + Send + Sync + 'static,
    ) -> Result<u8, Error> {
        self.register(index, Handler::reply_short(nargs, f))
    }

    /// Register a Medium request handler.
    pub fn on_request_medium(
        &self,
        index: u8,
        nargs: u8,
        f: impl Fn(&mut Token<'_, S>, &[u32], &[u8]) + Send + Sync + 'static,
    ) -> Result<u8, Error> {
        self.register(index, Handler::request_medium(nargs, f))
    }

    /// Register a Medium reply handler.
    pub fn on_reply_medium(
        &self,
        index: u8,
        nargs: u8,
        f: impl Fn(&mut Token<'_, S>, &[u32], &[u8]) + Send + Sync + 'static,
    ) -> Result<u8, Error> {
        self.register(index, Handler::reply_medium(nargs, f))
    }

    /// Register a Long request handler.
    pub fn on_request_long(
        &self,
        index: u8,
        nargs: u8,
        f: impl Fn(&mut Token<'_, S>, &[u32], Payload<'_>) + Send + Sync + 'static,
    ) -> Result<u8, Error> {
        self.register(index, Handler::request_long(nargs, f))
    }

    /// Register a Long reply handler.
    pub fn on_reply_long(
        &self,
        index: u8,
        nargs: u8,
        f: impl Fn(&mut Token<'_, S>, &[u32], Payload<'_>) + Send + Sync + 'static,
    ) -> Result<u8, Error> {
        self.register(index, Handler::reply_long(nargs, f))
    }
}
