//! What a handler receives, and the handler types.
//!
//! Handlers are `Fn + Send + Sync` in both threading modes: in the
//! multi-threaded client they run on whichever thread polls. State they
//! change lives in the client's typed state `S` (reached with
//! [`Token::state`]), which in a multi-threaded client is shared by every
//! thread (so `S: Sync`).

use super::error::Error;
use super::payload::Payload;
use am::handlers::{Category, Signature, Widen};
use am::send::Category as SendCategory;

/// A Short handler: token and arguments.
pub type ShortFn<S> = dyn Fn(&mut Token<'_, S>, &[u32]) + Send + Sync;
/// A Medium handler: token, arguments and payload (valid while the handler
/// runs; nobody else writes it meanwhile).
pub type MediumFn<S> = dyn Fn(&mut Token<'_, S>, &[u32], &[u8]) + Send + Sync;
/// A Long handler: token, arguments and the payload where it landed in
/// this rank's segment, at [`Token::long_offset`]. Others may write the
/// segment while the handler runs, so the payload is read by copying, or
/// as a slice under an `unsafe` promise ([`Payload`]).
pub type LongFn<S> = dyn Fn(&mut Token<'_, S>, &[u32], Payload<'_>) + Send + Sync;

/// A GASNet-1 handler's code: the payload is `None` for a Short, the
/// message's (possibly empty) payload for a Medium or Long.
pub type UntypedFn<S> = dyn Fn(&mut Token<'_, S>, &[u32], Option<Payload<'_>>) + Send + Sync;

pub(crate) enum HandlerFn<S> {
    Short(Box<ShortFn<S>>),
    Medium(Box<MediumFn<S>>),
    Long(Box<LongFn<S>>),
    Untyped(Box<UntypedFn<S>>),
}

/// A handler to register: its category, whether it handles requests or
/// replies, its argument count, and the code.
pub struct Handler<S = ()> {
    pub(crate) sig: Signature,
    pub(crate) widen: Widen,
    pub(crate) f: HandlerFn<S>,
}

impl<S> std::fmt::Debug for Handler<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Handler({})", self.sig)
    }
}

impl<S> Handler<S> {
    fn new(category: Category, is_request: bool, nargs: u8, f: HandlerFn<S>) -> Self {
        Handler {
            sig: Signature {
                category,
                is_request,
                nargs,
            },
            widen: Widen::default(),
            f,
        }
    }

    /// Also run for replies as well as requests (or the reverse), and for
    /// Longs as well as Mediums (or the reverse) as `w` says: GASNet-EX's
    /// `GEX_FLAG_AM_REQREP` and `GEX_FLAG_AM_MEDLONG`. A Short handler
    /// cannot take Mediums or Longs (the widening is ignored for it).
    pub fn widened(mut self, w: Widen) -> Self {
        self.widen = Widen {
            either_side: w.either_side,
            medium_or_long: w.medium_or_long && self.sig.category != Category::Short,
            untyped: self.widen.untyped,
        };
        self
    }
    /// A handler for every category, side and argument count (GASNet-1's
    /// `gasnet_attach` table, whose entries declare none of them): it
    /// receives the arguments the message carries and, for a Medium or
    /// Long, the payload. The sender is trusted to send what the code
    /// expects, as in GASNet-1.
    pub fn untyped(
        f: impl Fn(&mut Token<'_, S>, &[u32], Option<Payload<'_>>) + Send + Sync + 'static,
    ) -> Self {
        let mut h = Self::new(Category::Medium, true, 0, HandlerFn::Untyped(Box::new(f)));
        h.widen.untyped = true;
        h
    }
    /// A Short request handler taking `nargs` arguments.
    pub fn request_short(
        nargs: u8,
        f: impl Fn(&mut Token<'_, S>, &[u32]) + Send + Sync + 'static,
    ) -> Self {
        Self::new(Category::Short, true, nargs, HandlerFn::Short(Box::new(f)))
    }
    /// A Short reply handler.
    pub fn reply_short(
        nargs: u8,
        f: impl Fn(&mut Token<'_, S>, &[u32]) + Send + Sync + 'static,
    ) -> Self {
        Self::new(Category::Short, false, nargs, HandlerFn::Short(Box::new(f)))
    }
    /// A Medium request handler.
    pub fn request_medium(
        nargs: u8,
        f: impl Fn(&mut Token<'_, S>, &[u32], &[u8]) + Send + Sync + 'static,
    ) -> Self {
        Self::new(
            Category::Medium,
            true,
            nargs,
            HandlerFn::Medium(Box::new(f)),
        )
    }
    /// A Medium reply handler.
    pub fn reply_medium(
        nargs: u8,
        f: impl Fn(&mut Token<'_, S>, &[u32], &[u8]) + Send + Sync + 'static,
    ) -> Self {
        Self::new(
            Category::Medium,
            false,
            nargs,
            HandlerFn::Medium(Box::new(f)),
        )
    }
    /// A Long request handler.
    pub fn request_long(
        nargs: u8,
        f: impl Fn(&mut Token<'_, S>, &[u32], Payload<'_>) + Send + Sync + 'static,
    ) -> Self {
        Self::new(Category::Long, true, nargs, HandlerFn::Long(Box::new(f)))
    }
    /// A Long reply handler.
    pub fn reply_long(
        nargs: u8,
        f: impl Fn(&mut Token<'_, S>, &[u32], Payload<'_>) + Send + Sync + 'static,
    ) -> Self {
        Self::new(Category::Long, false, nargs, HandlerFn::Long(Box::new(f)))
    }
}

/// The reply path a request handler's token uses.
pub(crate) trait Replier {
    fn reply(
        &self,
        dest: usize,
        category: SendCategory,
        handler: u8,
        args: &[u32],
        payload: &[u8],
        dest_offset: usize,
    ) -> Result<(), Error>;
}

/// The handler's view of the message it runs for. From a request handler
/// zero or one reply may be sent; a second reply, or a reply from a reply
/// handler, is an error. A handler cannot poll, block or send requests
/// (those calls return [`Error::InHandler`]).
pub struct Token<'a, S = ()> {
    pub(crate) src: usize,
    pub(crate) handler: u8,
    pub(crate) endpoint: usize,
    pub(crate) long_offset: Option<usize>,
    pub(crate) state: &'a S,
    /// The reply path; `None` in a reply handler.
    pub(crate) replier: Option<&'a dyn Replier>,
    pub(crate) replied: bool,
    /// Set by [`Token::exit`]; applied by the dispatcher after the handler.
    pub(crate) exit_code: Option<i32>,
}

impl<S> Token<'_, S> {
    /// The rank that sent the message.
    pub fn source(&self) -> usize {
        self.src
    }
    /// Whether this is a request (else a reply).
    pub fn is_request(&self) -> bool {
        self.replier.is_some()
    }
    /// The handler index the message named.
    pub fn handler_index(&self) -> u8 {
        self.handler
    }
    /// The endpoint the message arrived on (0 unless the client has
    /// several).
    pub fn endpoint(&self) -> usize {
        self.endpoint
    }
    /// For Long: the offset in this rank's segment where the payload lies.
    /// A Long of no bytes carries its offset as sent, which need not lie
    /// in the segment (GASNet-EX passes `dest_addr` unchecked then).
    pub fn long_offset(&self) -> Option<usize> {
        self.long_offset
    }
    /// The client's state (given at init).
    pub fn state(&self) -> &S {
        self.state
    }

    fn reply(
        &mut self,
        category: SendCategory,
        handler: u8,
        args: &[u32],
        payload: &[u8],
        dest_offset: usize,
    ) -> Result<(), Error> {
        if self.replied {
            return Err(Error::AlreadyReplied);
        }
        let Some(r) = self.replier else {
            return Err(Error::ReplyFromReply);
        };
        super::engine::client_handler(handler)?;
        r.reply(self.src, category, handler, args, payload, dest_offset)?;
        self.replied = true;
        Ok(())
    }

    /// Reply with a Short.
    pub fn reply_short(&mut self, handler: u8, args: &[u32]) -> Result<(), Error> {
        self.reply(SendCategory::Short, handler, args, &[], 0)
    }

    /// Reply with a Medium.
    pub fn reply_medium(&mut self, handler: u8, args: &[u32], payload: &[u8]) -> Result<(), Error> {
        self.reply(SendCategory::Medium, handler, args, payload, 0)
    }

    /// Reply with a Long whose payload lands at `dest_offset` in the
    /// requester's segment.
    pub fn reply_long(
        &mut self,
        handler: u8,
        args: &[u32],
        payload: &[u8],
        dest_offset: usize,
    ) -> Result<(), Error> {
        self.reply(SendCategory::Long, handler, args, payload, dest_offset)
    }

    /// End the job with `code` once this handler returns (the collective
    /// exit runs from the poll that called the handler).
    pub fn exit(&mut self, code: i32) {
        self.exit_code.get_or_insert(code);
    }
}
