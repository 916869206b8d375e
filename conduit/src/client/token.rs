//! What a handler receives, and the handler types.

use super::core::Core;
use super::error::AmError;
use am::handlers::{Category, Signature};

/// A Short handler: token and arguments.
pub type ShortFn = dyn FnMut(&mut Token<'_>, &[u32]) + Send;
/// A Medium handler: token, arguments, payload (valid while it runs).
pub type MediumFn = dyn FnMut(&mut Token<'_>, &[u32], &[u8]) + Send;
/// A Long handler: token, arguments, and the payload already in place in
/// this rank's segment (its offset is [`Token::long_offset`]).
pub type LongFn = dyn FnMut(&mut Token<'_>, &[u32], &[u8]) + Send;

pub(crate) enum HandlerFn {
    Short(Box<ShortFn>),
    Medium(Box<MediumFn>),
    Long(Box<LongFn>),
}

/// A handler to register: its category, whether it handles requests or
/// replies, its argument count, and the code.
pub struct Handler {
    pub(crate) sig: Signature,
    pub(crate) f: HandlerFn,
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Handler({})", self.sig)
    }
}

impl Handler {
    fn new(category: Category, is_request: bool, nargs: u8, f: HandlerFn) -> Handler {
        Handler {
            sig: Signature {
                category,
                is_request,
                nargs,
            },
            f,
        }
    }
    /// A Short request handler taking `nargs` arguments.
    pub fn request_short(
        nargs: u8,
        f: impl FnMut(&mut Token<'_>, &[u32]) + Send + 'static,
    ) -> Handler {
        Self::new(Category::Short, true, nargs, HandlerFn::Short(Box::new(f)))
    }
    /// A Short reply handler.
    pub fn reply_short(
        nargs: u8,
        f: impl FnMut(&mut Token<'_>, &[u32]) + Send + 'static,
    ) -> Handler {
        Self::new(Category::Short, false, nargs, HandlerFn::Short(Box::new(f)))
    }
    /// A Medium request handler.
    pub fn request_medium(
        nargs: u8,
        f: impl FnMut(&mut Token<'_>, &[u32], &[u8]) + Send + 'static,
    ) -> Handler {
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
        f: impl FnMut(&mut Token<'_>, &[u32], &[u8]) + Send + 'static,
    ) -> Handler {
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
        f: impl FnMut(&mut Token<'_>, &[u32], &[u8]) + Send + 'static,
    ) -> Handler {
        Self::new(Category::Long, true, nargs, HandlerFn::Long(Box::new(f)))
    }
    /// A Long reply handler.
    pub fn reply_long(
        nargs: u8,
        f: impl FnMut(&mut Token<'_>, &[u32], &[u8]) + Send + 'static,
    ) -> Handler {
        Self::new(Category::Long, false, nargs, HandlerFn::Long(Box::new(f)))
    }
}

/// The handler's view of the message it is running for. From a request
/// handler exactly zero or one reply may be sent; a second reply, or a reply
/// from a reply handler, is an error. A handler cannot poll, block or send
/// requests: it has no access to the client, only to this token.
pub struct Token<'a> {
    pub(crate) src: usize,
    pub(crate) handler: u8,
    pub(crate) long_offset: Option<usize>,
    /// The reply path; `None` in a reply handler.
    pub(crate) core: Option<&'a mut Core>,
    pub(crate) replied: bool,
    /// Set by [`Token::exit`]; applied by the dispatcher after the handler.
    pub(crate) exit_code: Option<i32>,
}

impl Token<'_> {
    /// The rank that sent the message.
    pub fn source(&self) -> usize {
        self.src
    }
    /// Whether this is a request (else a reply).
    pub fn is_request(&self) -> bool {
        self.core.is_some()
    }
    /// The handler index the message named.
    pub fn handler_index(&self) -> u8 {
        self.handler
    }
    /// For Long: the offset in this rank's segment where the payload lies.
    pub fn long_offset(&self) -> Option<usize> {
        self.long_offset
    }

    fn reply_core(&mut self) -> Result<&mut Core, AmError> {
        if self.replied {
            return Err(AmError::AlreadyReplied);
        }
        match self.core.as_deref_mut() {
            None => Err(AmError::ReplyFromReply),
            Some(c) => Ok(c),
        }
    }

    /// Reply with a Short.
    pub fn reply_short(&mut self, handler: u8, args: &[u32]) -> Result<(), AmError> {
        let src = self.src;
        let core = self.reply_core()?;
        core.send_reply(src, am::wire::Kind::Short, handler, args, &[], None)?;
        self.replied = true;
        Ok(())
    }

    /// Reply with a Medium.
    pub fn reply_medium(
        &mut self,
        handler: u8,
        args: &[u32],
        payload: &[u8],
    ) -> Result<(), AmError> {
        let src = self.src;
        let core = self.reply_core()?;
        core.send_reply(src, am::wire::Kind::Medium, handler, args, payload, None)?;
        self.replied = true;
        Ok(())
    }

    /// Reply with a Long whose payload lands at `dest_offset` in the
    /// requester's segment.
    pub fn reply_long(
        &mut self,
        handler: u8,
        args: &[u32],
        payload: &[u8],
        dest_offset: usize,
    ) -> Result<(), AmError> {
        let src = self.src;
        let core = self.reply_core()?;
        core.send_reply(
            src,
            am::wire::Kind::Long,
            handler,
            args,
            payload,
            Some(dest_offset),
        )?;
        self.replied = true;
        Ok(())
    }

    /// End the job with `code` once this handler returns (the collective
    /// exit runs from the poll that called the handler).
    pub fn exit(&mut self, code: i32) {
        self.exit_code.get_or_insert(code);
    }
}
