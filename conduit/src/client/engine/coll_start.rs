//! Starting a collective ([`Core::coll_start`]): the choice of how it
//! travels (a board post, the team's cache in chunks, or AMs), the
//! beginning of the team's cache record exchange, and the sending of what
//! the start emits, with the teams lock dropped.

use super::{entry_mut, owe_board};
use crate::client::engine::coll_cache::CacheState;
use crate::client::engine::Core;
use crate::client::error::Error;
use crate::sync::{Lock, Mode};
use crate::transport::Transport;
use coll::CollOp;
use std::sync::atomic::Ordering;

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Start a collective on team `id`; its sequence number. A team's
    /// first collective also starts the exchange of the members' cache
    /// records (and travels as AMs); a later one waits for that exchange to
    /// end, then takes the cache when its payload fits.
    ///
    /// `team` is the team's membership, as the caller's handle holds it
    /// (the same as the entry's: borrowed, not cloned, per collective).
    pub fn coll_start(&self, id: u32, team: &coll::Team, op: CollOp) -> Result<u32, Error> {
        self.coll_start_with(id, team, op, false)
    }

    /// [`Core::coll_start`]; with `via_am`, the collective travels as
    /// Active Messages whatever the team's cache (and does not begin one):
    /// every member must pass the same `via_am` for it.
    pub(super) fn coll_start_with(
        &self,
        id: u32,
        team: &coll::Team,
        op: CollOp,
        via_am: bool,
    ) -> Result<u32, Error> {
        if !via_am {
            if let Err(err) = self.cache_settle(id) {
                self.coll_not_started(id, team, &err);
                return Err(err);
            }
        }
        let len = match &op {
            CollOp::Broadcast { len, .. } => *len,
            CollOp::ReduceToOne { src, .. } | CollOp::ReduceToAll { src, .. } => src.len(),
        };
        let mut first = None;
        let aborts;
        let (seq, msgs, exchange) = {
            let mut teams = self.coll.teams.lock();
            let e = entry_mut(&mut teams, id)?;
            let exchange = if !via_am && matches!(e.cache, CacheState::Unset) {
                self.cache_begin(e)?
            } else {
                None
            };
            let (bcast, root) = match &op {
                CollOp::Broadcast { root, .. } => (true, *root),
                _ => (false, 0),
            };
            let cache = !via_am;
            let posted = cache && bcast && e.cache.posts_bcast(len);
            let posted_all =
                cache && matches!(op, CollOp::ReduceToAll { .. }) && e.cache.posts_allreduce(len);
            // A chunk for a member whose slot this rank cannot write goes
            // as an AM Medium: no chunk is larger than the largest Medium
            // (the same on every rank, so every member chunks alike).
            let chunk = e
                .cache
                .chunk_for(len, bcast)
                .filter(|_| cache)
                .map(|c| c.min(self.cfg.am.max_medium));
            // `coll_allreduce_now` chooses the board by this predicate.
            let on_board = cache
                && matches!(op, CollOp::ReduceToAll { .. })
                && e.cache.allreduce_on_board(len, e.colls.direct_exchange());
            let before = e.colls.next_seq();
            let started = match chunk {
                _ if posted => e.colls.start_posted_bcast(op),
                _ if posted_all => e.colls.start_posted_allreduce(op),
                Some(chunk) => e.colls.start_chunked(op, chunk),
                None => e.colls.start(op),
            };
            // A collective failed here (this rank's own arguments, or a
            // held chunk) ends the other members' waits for it.
            aborts = e.colls.take_aborts();
            let (seq, mut msgs) = match started {
                Ok(s) => s,
                Err(err) => {
                    if e.colls.next_seq() != before {
                        // A rank-local error took the sequence number:
                        // members that posted it on their boards are
                        // still read and acknowledged.
                        owe_board(e, before);
                        self.coll.busy.store(true, Ordering::Release);
                    }
                    drop(teams);
                    // The exchange goes whether or not this rank's
                    // arguments were accepted: the other members take part
                    // in it.
                    let sent = self.send_exchange(id, team, exchange);
                    self.send_aborts(id, team, aborts)?;
                    sent?;
                    return Err(err.into());
                }
            };
            if e.colls.has_failed(seq) {
                // Failed at its start (a chunk or an abort held for it):
                // its wait says why; members that posted it on their
                // boards are still read and acknowledged.
                owe_board(e, seq);
                self.coll.busy.store(true, Ordering::Release);
            } else {
                debug_assert_eq!(
                    on_board,
                    posted_all
                        || (chunk.is_some()
                            && e.colls.is_flat(seq)
                            && matches!(&e.cache, CacheState::Ready(c) if c.board.is_some())),
                    "the board predicate disagrees with coll_start's choice"
                );
                if let (CacheState::Ready(c), true) = (&mut e.cache, posted || posted_all) {
                    e.cached.insert(seq);
                    self.coll.busy.store(true, Ordering::Release);
                    // A reduction to all: every member posts its contribution
                    // and reads every other's. A broadcast: the root posts its
                    // payload, every other member reads the root's (a board
                    // exists only on teams of at most FLAT_MAX_MEMBERS, 8: the
                    // bits fit). Posts come in place from the state machine.
                    let others = ((1u64 << c.peers.len()) - 1) & !(1 << c.me);
                    let (posts, read) = match (posted_all, c.me == root) {
                        (true, _) => (true, others),
                        (false, true) => (true, 0),
                        (false, false) => (false, 1u64 << root),
                    };
                    let post = posts
                        .then(|| e.colls.posted_data(seq).ok_or(coll::Error::MissingSource))
                        .transpose();
                    if let Err(err) = post
                        .map_err(Error::from)
                        .and_then(|p| self.board_start(c, seq, p, read))
                    {
                        first = Some(err);
                    }
                } else if let (CacheState::Ready(c), Some(_)) = (&mut e.cache, chunk) {
                    e.cached.insert(seq);
                    self.coll.busy.store(true, Ordering::Release);
                    let r = if c.board.is_some() && e.colls.is_flat(seq) {
                        // Every message carries this rank's contribution.
                        let src = msgs.pop().map(|m| m.data).unwrap_or_default();
                        msgs.clear();
                        let all = (1u64 << c.peers.len()) - 1;
                        self.board_start(c, seq, Some(&src), all & !(1 << c.me))
                            .map(|()| Vec::new())
                    } else {
                        self.cache_send(c, seq, std::mem::take(&mut msgs))
                    };
                    match r {
                        Ok(am) => msgs = am,
                        Err(err) => first = Some(err),
                    }
                }
            }
            (seq, msgs, exchange)
        };
        // Sent with the teams lock dropped (a send may wait for credits,
        // and other threads' collectives need the lock meanwhile): the
        // exchange first, then this collective's messages and aborts, each
        // whatever became of the one before.
        let sent = self.send_exchange(id, team, exchange);
        let r = self.coll_send(id, seq, team, msgs);
        let aborted = self.send_aborts(id, team, aborts);
        let r = match (r, first) {
            (Err(e), _) => Err(e),
            (Ok(()), Some(e)) => {
                // Its chunks or board post did not go: tell the others.
                self.coll_send_failed(id, seq, team, &e);
                Err(e)
            }
            (Ok(()), None) => Ok(()),
        };
        if r.is_err() || aborted.is_err() || sent.is_err() {
            // The caller gets no sequence number to wait for: retired by a
            // later poll once complete here (it failed here, or it was
            // complete before its messages went, or it runs on while the
            // caller is told what else failed).
            self.coll_abandon(id, seq);
        }
        aborted?;
        sent?;
        r?;
        // Chunks of other collectives may wait for this rank to forward
        // them; their errors are not this collective's.
        if let Err(e) = self.coll_advance() {
            self.deferred.put(e);
        }
        Ok(seq)
    }
}
