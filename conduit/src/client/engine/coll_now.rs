//! Blocking reductions to all and broadcasts that run to completion in
//! the caller's own loop. On a team whose members share memory a
//! reduction to all of up to a board's size is a direct exchange through
//! the boards ([`super::coll_board`]): every member posts its contribution
//! once and reads the others' in place. When nothing else of the team is
//! in flight here, a blocking reduction skips the machinery a collective
//! in flight needs (a state machine, the team's bookkeeping, the poll
//! that advances every team) and does exactly that: post, wait for the
//! other members' posts, fold them in team-rank order and acknowledge
//! each. What it writes and reads in shared memory is what
//! [`coll::TeamColl::start_posted_allreduce`]'s collective would, so the
//! other members cannot tell which way this one ran; it takes the
//! collective's sequence number with [`coll::TeamColl::start_outside`].
//! A blocking broadcast posted on its root's board (1-64 KiB) runs the
//! same way: the root copies the caller's buffer onto its board, every
//! other member copies the post straight into its caller's buffer.
//!
//! Once such a collective has its sequence number it runs to the end: it
//! leaves early only on a fatal error (a failed poll, the job's exit),
//! and reads and acknowledges every post it waited for even when one is
//! wrong. A team's collectives are called by one thread at a time, in the
//! same order on every member, as GASNet-EX requires; the fast path relies
//! on that (another thread's collective on the same team meanwhile could
//! post out of order).

use super::coll::{entry_mut, TeamEntry};
use super::coll_board::{board_ack, board_has, board_owe, board_read_exact};
use super::coll_cache::{Cache, CacheState};
use super::{Core, Progress};
use crate::client::error::Error;
use crate::sync::{Counter, Lock, Mode};
use crate::transport::Transport;
use coll::{Kind, Reduction};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How long a blocking board collective waits for a post before it has
/// its team's cache polled too (where a member that took another path,
/// its operand of another length, sends its chunks): a correct member's
/// post normally comes within a few microseconds, and watching makes
/// every poll meanwhile advance every team.
const WATCH_AFTER: Duration = Duration::from_micros(20);

/// When a wait of a blocking board collective starts watching
/// ([`Core::now_look`]): after [`WATCH_AFTER`] (the clock is read from
/// the second look on, and no longer once watching).
#[derive(Default)]
struct Watch {
    since: Option<Instant>,
    on: bool,
}

impl Watch {
    /// Whether this look watches.
    fn due(&mut self) -> bool {
        if !self.on {
            let now = Instant::now();
            let since = *self.since.get_or_insert(now);
            self.on = now.duration_since(since) >= WATCH_AFTER;
        }
        self.on
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Reduce `src` with `reduction` to every member of team `id`, here
    /// and now, when the collective goes through the boards and nothing
    /// else of the team is in flight on this rank (its post waits, if it
    /// must, for the readers of the one two collectives back);
    /// `Ok(None)` (having done nothing) otherwise, and the caller starts it
    /// as any collective. Errors are the collective's: invalid
    /// arguments (nothing posted), a member's contribution of another
    /// length (every post is still read and acknowledged).
    pub fn coll_allreduce_now(
        &self,
        id: u32,
        reduction: &Reduction,
        src: &[u8],
    ) -> Result<Option<Vec<u8>>, Error> {
        let len = src.len();
        let (seq, posted, others) = {
            let mut teams = self.coll.teams.lock();
            let Some(e) = teams.get_mut(&id) else {
                return Ok(None);
            };
            if !e.quiet() || !e.cache.allreduce_on_board(len, e.colls.direct_exchange()) {
                return Ok(None);
            }
            let CacheState::Ready(c) = &mut e.cache else {
                return Ok(None);
            };
            if c.peers.iter().any(|p| p.mapped.is_none()) {
                return Ok(None);
            }
            // As the collective's start would: bad arguments take no
            // sequence number and post nothing.
            reduction.check_start(c.peers.len(), c.me, len)?;
            // The predicate bounds the length by the board's capacity
            // (which board_try_post's copy relies on); said again here.
            if len > c.layout.board_capacity() || e.colls.holds(e.colls.next_seq()) {
                return Ok(None);
            }
            let seq = e.colls.start_outside(Kind::Flat, len)?;
            let posted = self.board_try_post(c, seq, src, false);
            (seq, posted, ((1u64 << c.peers.len()) - 1) & !(1 << c.me))
        };
        let c = &self.sets[0].stats;
        c.coll_board_now.add(1);
        let r = (|| {
            if !posted {
                self.board_wait_post(id, seq, src, false, others)?;
            }
            self.board_wait_posts(id, seq, others)?;
            self.board_fold(id, seq, reduction, src)
        })();
        self.now_end(id, seq);
        // As a collective's start does: chunks of other collectives may
        // wait for this rank.
        self.advance_others();
        r.map(Some)
    }

    /// The collective run outside, `seq`, is over here (its messages from
    /// now on are stale).
    fn now_end(&self, id: u32, seq: u32) {
        if let Some(e) = self.coll.teams.lock().get_mut(&id) {
            e.colls.end_outside();
            e.cached.remove(&seq);
        }
    }

    /// One look of a wait of collective `seq`, run outside, at its team:
    /// the error that ended it (a member that took another path sent a
    /// chunk, or an abort came), after which the posts of the members in
    /// `owed` are still read and acknowledged as they come; else `f`'s
    /// answer. A look that waits (`watch`) has the team's cache polled
    /// from then on, where such a chunk may come.
    fn now_look<R>(
        &self,
        id: u32,
        seq: u32,
        owed: u64,
        watch: bool,
        f: impl FnOnce(&mut Cache<T::Region>) -> R,
    ) -> Result<R, Error> {
        let mut teams = self.coll.teams.lock();
        let e: &mut TeamEntry<T::Region> = entry_mut(&mut teams, id)?;
        let CacheState::Ready(c) = &mut e.cache else {
            return Err(Error::NoTeam { id });
        };
        if e.colls.has_failed(seq) {
            let err = e.colls.take_result(seq).err();
            e.colls.end_outside();
            board_owe(c, seq, owed);
            self.coll.busy.store(true, Ordering::Release);
            return Err(err.map_or(Error::NoTeam { id }, Error::from));
        }
        if watch && e.cached.insert(seq) {
            self.coll.busy.store(true, Ordering::Release);
        }
        Ok(f(c))
    }

    /// Broadcast `buf` from team rank `root` to every member of team `id`
    /// (`buf` holds the data on the root, receives it elsewhere), here and
    /// now, when the broadcast is posted on the root's board
    /// ([`CacheState::posts_bcast`]) and nothing else of the team is in
    /// flight on this rank: the root copies `buf` onto its board (waiting,
    /// if it must, for the readers of the post two collectives back), every
    /// other member waits for the post and copies it straight into `buf`,
    /// one copy each where the collective's machinery makes two. Whether it
    /// ran (`false`: nothing done, the caller starts it as any collective).
    /// Errors: a post of another length (acknowledged, `buf` untouched).
    pub fn coll_broadcast_now(&self, id: u32, root: usize, buf: &mut [u8]) -> Result<bool, Error> {
        let (seq, posted, me) = {
            let mut teams = self.coll.teams.lock();
            let Some(e) = teams.get_mut(&id) else {
                return Ok(false);
            };
            if !e.quiet() || !e.cache.posts_bcast(buf.len()) {
                return Ok(false);
            }
            let CacheState::Ready(c) = &mut e.cache else {
                return Ok(false);
            };
            if root >= c.peers.len()
                || buf.len() > c.layout.board_capacity()
                || c.peers.iter().any(|p| p.mapped.is_none())
                || e.colls.holds(e.colls.next_seq())
            {
                return Ok(false);
            }
            let seq = e.colls.start_outside(Kind::Broadcast, buf.len())?;
            let posted = c.me == root && self.board_try_post(c, seq, buf, true);
            (seq, posted, c.me)
        };
        self.sets[0].stats.coll_board_now.add(1);
        let r = if me == root {
            match posted {
                true => Ok(()),
                false => self.board_wait_post(id, seq, buf, true, 0),
            }
        } else {
            self.board_wait_posts(id, seq, 1 << root)
                .and_then(|()| self.board_copy_out(id, seq, root, buf))
        };
        self.now_end(id, seq);
        // As a collective's start does: chunks of other collectives may
        // wait for this rank.
        self.advance_others();
        r.map(|()| true)
    }

    /// The root's post of broadcast `seq` is there: copy it into `buf`
    /// and acknowledge it (also when its length is wrong: then an error,
    /// `buf` untouched).
    fn board_copy_out(&self, id: u32, seq: u32, root: usize, buf: &mut [u8]) -> Result<(), Error> {
        self.with_board(id, |c| {
            let Some(p) = c.peers.get(root).and_then(|p| p.mapped) else {
                return Err(Error::NoTeam { id });
            };
            // SAFETY: the root's mapped block, holding its post of `seq`
            // (board_wait_posts saw the flag); the data is copied before
            // the acknowledgement.
            unsafe {
                let r = board_read_exact(p, &c.layout, seq, root, buf.len())
                    .map(|data| buf.copy_from_slice(data));
                board_ack(p, &c.layout, c.me, seq);
                r.map_err(Error::from)
            }
        })?
    }

    /// Run `f` on team `id`'s cache (in use: the fast paths start only
    /// then, and it stays so for the team's life), under the teams' lock.
    fn with_board<R>(
        &self,
        id: u32,
        f: impl FnOnce(&mut Cache<T::Region>) -> R,
    ) -> Result<R, Error> {
        let mut teams = self.coll.teams.lock();
        let CacheState::Ready(c) = &mut entry_mut(&mut teams, id)?.cache else {
            return Err(Error::NoTeam { id });
        };
        Ok(f(c))
    }

    /// Post `src` for collective `seq` (a broadcast's payload when
    /// `bcast`) on this rank's board once every reader has released its
    /// buffer (read the post of `seq - 2`), making progress meanwhile;
    /// `owed`: the members whose posts it reads ([`Core::now_look`]).
    fn board_wait_post(
        &self,
        id: u32,
        seq: u32,
        src: &[u8],
        bcast: bool,
        owed: u64,
    ) -> Result<(), Error> {
        let mut watch = Watch::default();
        loop {
            self.progress_within(0, Progress::Full)?;
            self.exit_if_requested()?;
            self.advance_others();
            if self.now_look(id, seq, owed, watch.due(), |c| {
                self.board_try_post(c, seq, src, bcast)
            })? {
                return Ok(());
            }
        }
    }

    /// Advance other collectives if any wait (their errors are not the
    /// caller's: kept for a later call).
    fn advance_others(&self) {
        if self.coll_pending() {
            if let Err(e) = self.coll_advance() {
                self.deferred.put(e);
            }
        }
    }

    /// Wait until every member in `others` (a bit per team rank) has
    /// posted collective `seq` on its board, making progress meanwhile
    /// (other teams' collectives advance too).
    fn board_wait_posts(&self, id: u32, seq: u32, mut others: u64) -> Result<(), Error> {
        let (owed, mut watch, mut waited) = (others, Watch::default(), false);
        loop {
            others = self.now_look(id, seq, owed, waited && watch.due(), |c| {
                for (r, peer) in c.peers.iter().enumerate() {
                    let Some(p) = peer.mapped.filter(|_| others & (1 << r) != 0) else {
                        continue;
                    };
                    // SAFETY: member r's mapped block.
                    if unsafe { board_has(p, &c.layout, seq) } {
                        others &= !(1 << r);
                    }
                }
                others
            })?;
            if others == 0 {
                return Ok(());
            }
            waited = true;
            self.progress_within(0, Progress::Full)?;
            self.exit_if_requested()?;
            self.advance_others();
        }
    }

    /// Every member's post of collective `seq` is there: fold them with
    /// `src` (this rank's) left to right in team-rank order, acknowledging
    /// each post once read; the result, or the first error (every post is
    /// still acknowledged).
    fn board_fold(
        &self,
        id: u32,
        seq: u32,
        reduction: &Reduction,
        src: &[u8],
    ) -> Result<Vec<u8>, Error> {
        self.with_board(id, |c| {
            let mut acc = Vec::with_capacity(src.len());
            let mut first = None;
            for (r, peer) in c.peers.iter().enumerate() {
                let got = if r == c.me {
                    Ok(src)
                } else {
                    let Some(p) = peer.mapped else {
                        // Checked before the post: a mapping stays for the
                        // cache's life. Reported; the others are still read.
                        first.get_or_insert(Error::CollCacheUnmapped {
                            rank: peer.job,
                            why: peer.unmapped.clone().unwrap_or_default(),
                        });
                        continue;
                    };
                    // SAFETY: member r's mapped block, holding its post of
                    // `seq` (board_wait_posts saw the flag); the data is
                    // folded before the acknowledgement below.
                    unsafe { board_read_exact(p, &c.layout, seq, r, src.len()) }
                };
                let folded = got.and_then(|part| {
                    if r == 0 {
                        acc.extend_from_slice(part);
                        Ok(())
                    } else {
                        reduction.combine(&mut acc, part)
                    }
                });
                if let Err(err) = folded {
                    first.get_or_insert(Error::from(err));
                }
                if let (Some(p), true) = (peer.mapped, r != c.me) {
                    // SAFETY: member r's mapped block; its post is no
                    // longer read.
                    unsafe { board_ack(p, &c.layout, c.me, seq) };
                }
            }
            first.map_or(Ok(acc), Err)
        })?
    }
}
