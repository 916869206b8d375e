//! Requests through a supernode pair's lane and replies written in place
//! of them (`crate::pshm::lane`): single-threaded mode, endpoint set 0,
//! a client's Short requests while the pair's previous one is answered.
//! Everything else goes through the rings; AMs carry no order between
//! them (GASNet-EX promises none), so a request may overtake one sent
//! earlier through the rings.

use super::progress::{keep, Fault};
use super::Core;
use crate::client::error::Error;
use crate::pshm::lane::{Answer, Lane, Lanes, LANE_MESSAGE};
use crate::pshm::Shared;
use crate::sync::{Counter, Mode};
use crate::transport::{Side, Transport};
use am::wire::{self, Header, Kind};
use std::cell::Cell;

/// A request read out of a lane, while its handler runs: where its answer
/// goes.
pub(super) struct LaneAnswer<'a> {
    lane: &'a Lane,
    seq: u32,
    /// The rank that sent the request.
    pub peer: usize,
    /// Whether the handler's reply went into the lane.
    replied: Cell<bool>,
}

/// Writes a lane request's answer as done, unless its handler replied in
/// the lane, when dropped.
struct Done<'a>(&'a LaneAnswer<'a>);

impl Drop for Done<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        if !self.0.replied.get() {
            // SAFETY: this rank (single-threaded mode: the lane's one
            // receiver) took request `seq` and has not answered it: a reply
            // in the lane sets `replied`, and a token replies once.
            unsafe { self.0.lane.done(self.0.seq) };
        }
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Send a client's Short request to member `index` through its lane,
    /// if the lanes are on and free; `false` when it must go the rings'
    /// way.
    #[inline(always)]
    pub(super) fn send_in_lane(
        &self,
        sh: &Shared<M>,
        index: usize,
        set: usize,
        header: &Header,
        args: &[u32],
    ) -> bool {
        let Some(lanes) = sh.lanes.as_ref().filter(|_| set == 0) else {
            return false;
        };
        let len = wire::message_len(Kind::Short, args.len(), 0);
        debug_assert!(len <= LANE_MESSAGE);
        // SAFETY: lanes exist in single-threaded mode only (one thread);
        // `index` is a peer's (the caller's `dest != rank`); a Short of at
        // most MAX_ARGS arguments is at most 72 bytes.
        let sent = unsafe {
            lanes.try_send(index, len, |buf| {
                wire::encode_into(buf, header, args, None, 0, &[]);
            })
        };
        if sent {
            let s = &self.sets[set];
            Self::count_sent(s, Side::Request, Kind::Short);
            s.stats.shared_sent.add(1);
            s.stats.shared_lane.add(1);
        }
        sent
    }

    /// Write a request handler's Short reply in place of its request.
    pub(super) fn reply_in_lane(&self, set: usize, l: &LaneAnswer<'_>, handler: u8, args: &[u32]) {
        let header = Header {
            kind: Kind::Short,
            nargs: args.len() as u8,
            is_request: false,
            handler,
            src: self.rank as u32,
        };
        let len = wire::message_len(Kind::Short, args.len(), 0);
        // SAFETY: this rank is the lane's one receiver (single-threaded
        // mode), read request `seq` out of it and has not answered it (a
        // token replies once, and `replied` is set only here); len <= 72.
        unsafe {
            l.lane.reply(l.seq, len, |buf| {
                wire::encode_into(buf, &header, args, None, 0, &[]);
            })
        };
        l.replied.set(true);
        let s = &self.sets[set];
        Self::count_sent(s, Side::Reply, Kind::Short);
        s.stats.shared_sent.add(1);
        s.stats.shared_lane.add(1);
    }

    /// Run the requests waiting in the lanes of set `set`'s peers, each
    /// answered once its handler returned (by its reply, or as done).
    #[inline(always)]
    pub(super) fn poll_lane_requests(
        &self,
        sh: &Shared<M>,
        set: usize,
        seen: &mut usize,
    ) -> Result<(), Fault> {
        let Some(lanes) = sh.lanes.as_ref().filter(|_| set == 0) else {
            return Ok(());
        };
        let mut first = None;
        for i in 0..lanes.len() {
            if i == sh.me {
                continue;
            }
            // SAFETY: single-threaded mode (lanes exist only there); every
            // earlier request from `i` was taken (a handler's nested poll,
            // from an exit inside it, finds its own request taken, not
            // answered, and nothing new).
            match unsafe { lanes.request(i) } {
                Ok(None) => {}
                Ok(Some((seq, len))) => {
                    *seen += 1;
                    let mut buf = [0u8; LANE_MESSAGE];
                    // SAFETY: as above; `request` just found it.
                    unsafe { lanes.take_request(i, seq, len, &mut buf) };
                    let peer = sh.members[i];
                    self.run_lane_request(set, lanes, i, peer, seq, &buf[..len], &mut first)
                }
                Err(e) => keep(&mut first, Err(Error::Pshm(e.to_string()))),
            }
        }
        first.map_or(Ok(()), Err)
    }

    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn run_lane_request(
        &self,
        set: usize,
        lanes: &Lanes,
        i: usize,
        peer: usize,
        seq: u32,
        bytes: &[u8],
        first: &mut Option<Fault>,
    ) {
        let answer = LaneAnswer {
            lane: lanes.inbound(i),
            seq,
            peer,
            replied: Cell::new(false),
        };
        // Answered as done also when the handler unwinds (a panic the
        // caller may catch): the lane must not stay taken.
        let _done = Done(&answer);
        keep(
            first,
            self.dispatch_in(set, Side::Request, bytes, Some(&answer)),
        );
    }

    /// Run the replies to this rank's requests that came back in place,
    /// and free the lanes whose requests were answered otherwise.
    #[inline(always)]
    pub(super) fn poll_lane_answers(
        &self,
        sh: &Shared<M>,
        set: usize,
        seen: &mut usize,
    ) -> Result<(), Fault> {
        let Some(lanes) = sh.lanes.as_ref().filter(|l| set == 0 && l.any_open()) else {
            return Ok(());
        };
        let mut first = None;
        for i in 0..lanes.len() {
            // SAFETY: single-threaded mode (lanes exist only there).
            match unsafe { lanes.answer(i) } {
                Ok(None) | Ok(Some(Answer::Pending)) => {}
                Ok(Some(Answer::Done)) => *seen += 1,
                Ok(Some(Answer::Reply(len))) => {
                    *seen += 1;
                    let mut buf = [0u8; LANE_MESSAGE];
                    // SAFETY: as above; `answer` just found the reply, and
                    // nothing was sent to `i` since.
                    unsafe { lanes.read_reply(i, len, &mut buf) };
                    keep(&mut first, self.dispatch(set, Side::Reply, &buf[..len]));
                }
                Err(e) => keep(&mut first, Err(Error::Pshm(e.to_string()))),
            }
        }
        first.map_or(Ok(()), Err)
    }
}
