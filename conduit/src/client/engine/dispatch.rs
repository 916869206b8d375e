//! Running a handler: decode and check a message (`am::dispatch`), build
//! its token, call it; and the conduit's own messages (barrier, exit).

use super::atomic::{H_ATOMIC, H_ATOMIC_REPLY};
use super::coll::H_COLL;
use super::landing::H_LANDING;
use super::lanes::LaneAnswer;
use super::vis::{H_VIS, H_VIS_ACK};
use super::{Core, HandlerScope, Progress, H_BARRIER, H_EXIT};
use crate::client::error::Error;
use crate::client::payload::Payload;
use crate::client::stats::kind_index;
use crate::client::token::{HandlerFn, Replier, Token};
use crate::sync::{Counter, Lock, Mode};
use crate::transport::{Side, Transport};
use am::dispatch::Delivery;
use am::send::Category;
use am::wire::{Kind, Message};

/// A request handler's reply path: the reply endpoint of the set the
/// request came in on, waiting (if it must) with reply-only progress; or,
/// for a request that came through a lane, a Short reply written in place
/// of the request.
struct ReplyPath<'a, M: Mode, T: Transport, S> {
    core: &'a Core<M, T, S>,
    set: usize,
    lane: Option<&'a LaneAnswer<'a>>,
}

impl<M: Mode, T: Transport, S> Replier for ReplyPath<'_, M, T, S> {
    fn reply(
        &self,
        dest: usize,
        category: Category,
        handler: u8,
        args: &[u32],
        payload: &[u8],
        dest_offset: usize,
    ) -> Result<(), Error> {
        if let Some(l) = self.lane {
            if category == Category::Short && dest == l.peer && args.len() <= am::MAX_ARGS {
                self.core.reply_in_lane(self.set, l, handler, args);
                return Ok(());
            }
        }
        self.core
            .send_am(
                self.set,
                Side::Reply,
                dest,
                category,
                handler,
                args,
                payload,
                dest_offset,
                false,
                Progress::Replies,
            )
            .map(|_| ())
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Decode and run one message that arrived on `side` of set `set`.
    #[inline(always)]
    pub(super) fn dispatch(&self, set: usize, side: Side, bytes: &[u8]) -> Result<(), Error> {
        self.dispatch_in(set, side, bytes, None)
    }

    /// [`Core::dispatch`], for a request that came through `lane` when
    /// there is one (its handler's Short reply goes back through it).
    #[inline(always)]
    pub(super) fn dispatch_in(
        &self,
        set: usize,
        side: Side,
        bytes: &[u8],
        lane: Option<&LaneAnswer<'_>>,
    ) -> Result<(), Error> {
        let is_request = side == Side::Request;
        if let Some(m) = am::dispatch::classify_short(&self.handlers, bytes, is_request) {
            if let HandlerFn::Short(f) = m.handler {
                if !self.exiting() {
                    self.run_short(set, is_request, &m, f, lane);
                }
                return Ok(());
            }
        }
        self.dispatch_general(set, side, bytes, lane)
    }

    /// The common message, a Short for a client handler registered with
    /// exactly its signature, checked in one pass (`classify_short`): its
    /// handler runs with no general message built.
    #[inline(always)]
    fn run_short(
        &self,
        set: usize,
        is_request: bool,
        m: &am::dispatch::ShortMessage<'_, HandlerFn<S>>,
        f: &(dyn Fn(&mut Token<'_, S>, &[u32]) + Send + Sync + '_),
        lane: Option<&LaneAnswer<'_>>,
    ) {
        self.count_received(set, is_request, Kind::Short);
        self.call_handler(
            set,
            is_request,
            m.src,
            m.index,
            None,
            lane,
            |words| m.args_into(words),
            |tok, args| f(tok, args),
        );
    }

    /// Count a client message received.
    #[inline(always)]
    fn count_received(&self, set: usize, is_request: bool, kind: Kind) {
        let s = &self.sets[set];
        let received = if is_request {
            &s.stats.requests_received
        } else {
            &s.stats.replies_received
        };
        received[kind_index(kind)].add(1);
    }

    /// Run a client handler: its token (a reply path for a request only),
    /// its arguments (`fill` writes them where the handler reads them), the
    /// handler scope around `call`, and the exit the handler asked for.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn call_handler(
        &self,
        set: usize,
        is_request: bool,
        src: u32,
        index: u8,
        long_offset: Option<usize>,
        lane: Option<&LaneAnswer<'_>>,
        fill: impl FnOnce(&mut [u32; am::MAX_ARGS]) -> usize,
        call: impl FnOnce(&mut Token<'_, S>, &[u32]),
    ) {
        let replier = ReplyPath {
            core: self,
            set,
            lane,
        };
        let mut tok = Token {
            src: src as usize,
            handler: index,
            endpoint: set,
            long_offset,
            state: &self.state,
            replier: is_request.then_some(&replier as &dyn Replier),
            replied: false,
            exit_code: None,
        };
        {
            let _in = HandlerScope::enter();
            // The words are filled where the handler reads them: an
            // `am::dispatch::Args` built and then moved was copied with
            // 16-byte loads right after the narrower stores that filled
            // it, a store-forwarding stall on every received message
            // (perf: a quarter of this function's samples).
            let mut words = [0u32; am::MAX_ARGS];
            let n = fill(&mut words);
            call(&mut tok, &words[..n]);
        }
        if let Some(code) = tok.exit_code {
            self.request_exit(code);
        }
    }

    /// Decode and run any message (`dispatch` takes the common Short
    /// itself).
    #[inline(never)]
    fn dispatch_general(
        &self,
        set: usize,
        side: Side,
        bytes: &[u8],
        lane: Option<&LaneAnswer<'_>>,
    ) -> Result<(), Error> {
        let seg = self.segment.get();
        let delivery = am::dispatch::classify(
            &self.handlers,
            bytes,
            side == Side::Request,
            seg.map(|g| g.len()),
        )?;
        let cm = match delivery {
            Delivery::Internal(msg) => return self.internal(set, &msg),
            Delivery::Client(cm) => cm,
        };
        if self.exiting() {
            // Client handlers are disabled while the job exits.
            return Ok(());
        }
        let h = cm.msg.header;
        self.count_received(set, h.is_request, h.kind);
        // A Long's payload where it landed (a LongInline's copied there
        // first), or a Medium's in its receive buffer.
        let payload = match (h.kind, cm.long, seg) {
            (Kind::Medium, _, _) => Payload::private(cm.msg.payload),
            // No bytes: where it was sent, which may lie anywhere (an
            // empty payload is never read through).
            (Kind::LongInline | Kind::Long, Some((off, 0)), Some(g)) => {
                // SAFETY: an empty payload at a non-null address (a null
                // one is made dangling); nothing is read or written.
                unsafe { Payload::in_segment(g.base().wrapping_add(off), 0) }
            }
            (Kind::LongInline | Kind::Long, Some((off, len)), Some(g)) => {
                if h.kind == Kind::LongInline {
                    g.copy_in(off, cm.msg.payload)?;
                }
                // SAFETY: classify checked off..off+len against the
                // segment, whose mapping outlives this call.
                unsafe { Payload::in_segment(g.range(off, len)?, len) }
            }
            _ => Payload::private(&[]),
        };
        self.call_handler(
            set,
            side == Side::Request,
            h.src,
            h.handler,
            cm.long.map(|(o, _)| o),
            lane,
            |words| cm.msg.args_into(words),
            |tok, args| match cm.handler {
                HandlerFn::Short(f) => f(tok, args),
                HandlerFn::Long(f) => f(tok, args, payload),
                HandlerFn::Medium(f) => match payload.as_slice() {
                    Some(bytes) => f(tok, args, bytes),
                    // A Medium handler widened to Longs: a private copy,
                    // since a slice of the segment could be written by
                    // others while the handler reads it.
                    None => f(tok, args, &payload.to_vec()),
                },
                HandlerFn::Untyped(f) => f(tok, args, (h.kind != Kind::Short).then_some(payload)),
            },
        );
        Ok(())
    }

    /// The conduit's own messages.
    fn internal(&self, set: usize, msg: &Message<'_>) -> Result<(), Error> {
        let h = msg.header;
        match h.handler {
            H_BARRIER if h.kind == Kind::Short && h.nargs == 4 && h.is_request => {
                let a = [msg.arg(0), msg.arg(1), msg.arg(2), msg.arg(3)];
                self.barrier.lock().on_message(h.src, a)?;
                Ok(())
            }
            H_EXIT if h.kind == Kind::Short && h.nargs == 2 && h.is_request => {
                let (code, dist) = (msg.arg(0) as i32, msg.arg(1));
                if !self.exit.state.lock().heard(dist as usize) {
                    return Err(am::Error::MalformedExit {
                        src: h.src,
                        handler: h.handler,
                        distance: dist,
                    }
                    .into());
                }
                self.request_exit(code);
                Ok(())
            }
            H_ATOMIC if h.kind == Kind::Short && h.nargs == 8 && h.is_request => {
                let a: [u32; 8] = std::array::from_fn(|i| msg.arg(i));
                self.on_atomic_request(set, h.src as usize, &a)
            }
            H_ATOMIC_REPLY if h.kind == Kind::Short && h.nargs == 4 && !h.is_request => {
                let a = [msg.arg(0), msg.arg(1), msg.arg(2), msg.arg(3)];
                self.on_atomic_reply(h.src as usize, &a)
            }
            H_COLL if h.kind == Kind::Medium && h.nargs == 4 && h.is_request => {
                let a = [msg.arg(0), msg.arg(1), msg.arg(2), msg.arg(3)];
                self.on_coll_chunk(h.src as usize, a, msg.payload)
            }
            H_VIS if h.kind == Kind::Medium && h.nargs == 2 && h.is_request => {
                self.on_vis_put(set, h.src as usize, [msg.arg(0), msg.arg(1)], msg.payload)
            }
            H_VIS_ACK if h.kind == Kind::Short && h.nargs == 2 && !h.is_request => {
                self.on_vis_ack(h.src as usize, [msg.arg(0), msg.arg(1)])
            }
            H_LANDING if h.kind == Kind::Short && h.nargs == 2 && !h.is_request => {
                self.on_landing_credit(set, h.src as usize, [msg.arg(0), msg.arg(1)])
            }
            H_LANDING if h.kind == Kind::Short && h.nargs == 2 => {
                self.on_landing_void(set, h.src as usize, [msg.arg(0), msg.arg(1)])
            }
            _ => Err(am::Error::Unregistered {
                src: h.src,
                index: h.handler,
            }
            .into()),
        }
    }
}
