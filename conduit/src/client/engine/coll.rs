//! Teams and collectives: the glue between the sans-IO `coll` machines and
//! the network. A collective's chunks travel either through the team's
//! registered collective cache by one-sided writes ([`super::coll_cache`])
//! or as AM Mediums to the conduit's handler [`H_COLL`], tagged with the
//! team id and the collective's sequence number; the handler only queues
//! them (a handler cannot send requests), and whoever advances collectives
//! (a collective's wait or test, a barrier's wait, the application's poll)
//! reads the caches, feeds chunks to the team's machines and sends what
//! those emit.
//!
//! Team ids: the world team is 0; a team made by a split takes the largest
//! id its members proposed (each proposes one more than any id it knows),
//! so no member has another team with that id. Sibling teams of one split
//! may share an id: their members are disjoint.

use super::coll_cache::CacheState;
use super::{Core, Progress};
use crate::client::error::Error;
use crate::sync::{Lock, Mode};
use crate::transport::{Side, Transport};
use am::send::Category;
use coll::{Msg, TeamColl};
// Sequence numbers and team ids are small integers chosen by the
// conduit: FxHash spares the wait loops SipHash's cost.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

/// Internal handler: a collective's chunk (Medium request, 4 args: team
/// id, sequence, phase with the chunk's [`coll::Msg::shape`] in bits 8..12,
/// chunk).
pub(crate) const H_COLL: u8 = 5;

/// A team this rank belongs to, and its collectives.
pub(crate) struct TeamEntry<R> {
    pub team: Arc<coll::Team>,
    pub colls: TeamColl,
    /// Its collective cache.
    pub(super) cache: CacheState<R>,
    /// Collectives (by sequence) whose chunks go through the cache.
    pub(super) cached: HashSet<u32>,
    /// Collectives whose events were dropped unwaited: retired once done.
    abandoned: HashSet<u32>,
    /// Collectives this rank skipped ([`TeamColl::start_failed`]) before
    /// its cache was ready: once it is, members that posted them on their
    /// boards are acknowledged as for a collective that failed here.
    pub(super) owed_when_ready: Vec<u32>,
    /// Being destroyed: flushed, so its cache is no longer read (a chunk
    /// left in a slot by a collective that failed here is never read, and
    /// no credit for it goes to a member that may have freed its block).
    closing: bool,
}

impl<R> TeamEntry<R> {
    fn new(team: Arc<coll::Team>, colls: TeamColl) -> Self {
        TeamEntry {
            team,
            colls,
            cache: CacheState::Unset,
            cached: HashSet::default(),
            abandoned: HashSet::default(),
            owed_when_ready: Vec::new(),
            closing: false,
        }
    }

    /// Whether nothing of the team is in flight here: every collective
    /// started is complete and the cache has nothing to write or post.
    pub(super) fn quiet(&self) -> bool {
        self.colls.all_done() && self.cache.idle()
    }

    /// Whether the cache or abandoned collectives need advancing.
    fn busy(&self) -> bool {
        self.cache_work() || !self.abandoned.is_empty()
    }

    /// Whether the cache needs reading or writing (never once the team is
    /// closing).
    fn cache_work(&self) -> bool {
        !self.closing && (!self.cached.is_empty() || !self.cache.idle() || self.cache.reading())
    }
}

#[path = "coll_advance.rs"]
mod advance;
#[path = "coll_destroy.rs"]
mod destroy;
#[path = "coll_send.rs"]
mod send;
#[path = "coll_start.rs"]
mod start;
pub(super) use send::skip as skip_collective;

/// A chunk as it arrived.
struct InMsg {
    team: u32,
    seq: u32,
    src: usize,
    phase: u8,
    shape: u8,
    chunk: u32,
    data: Vec<u8>,
}

/// Team `id`'s entry in `teams`, or the error naming the team.
pub(super) fn entry_mut<R>(
    teams: &mut HashMap<u32, TeamEntry<R>>,
    id: u32,
) -> Result<&mut TeamEntry<R>, Error> {
    // Not `ok_or`: that would build the error and drop it on success.
    let Some(e) = teams.get_mut(&id) else {
        return Err(Error::NoTeam { id });
    };
    Ok(e)
}

/// Collective `seq` of team `e` failed here: members that posted it on
/// their boards are still read and acknowledged, so they may post over it.
pub(super) fn owe_board<R>(e: &mut TeamEntry<R>, seq: u32) {
    if let CacheState::Ready(c) = &mut e.cache {
        let all = (1u64 << c.peers.len().min(63)) - 1;
        super::coll_board::board_owe(c, seq, all);
    }
}

/// The engine's teams and collectives.
pub(crate) struct CollState<M: Mode, R: Send> {
    pub(super) teams: M::Lock<HashMap<u32, TeamEntry<R>>>,
    inbox: M::Lock<Vec<InMsg>>,
    /// The next team id this rank proposes.
    next_id: AtomicU32,
    /// A thread is advancing collectives (they are not re-entered).
    advancing: AtomicBool,
    /// The inbox may hold chunks (read without the lock by every poll).
    pub queued: AtomicBool,
    /// Some team's cache or abandoned collectives need advancing.
    pub busy: AtomicBool,
    /// Ids of teams destroyed here: never taken again by a split (a chunk
    /// for one, which the destroy's synchronisation rules out, is dropped
    /// rather than parked for a later team).
    retired: M::Lock<HashSet<u32>>,
}

impl<M: Mode, R: Send> CollState<M, R> {
    pub fn new() -> Self {
        CollState {
            busy: AtomicBool::new(false),
            teams: M::Lock::new(HashMap::default()),
            inbox: M::Lock::new(Vec::new()),
            next_id: AtomicU32::new(1),
            advancing: AtomicBool::new(false),
            queued: AtomicBool::new(false),
            retired: M::Lock::new(HashSet::default()),
        }
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    fn coll_config(&self) -> coll::Config {
        coll::Config {
            fanout: self.cfg.extended.coll_fanout,
            max_chunk: self.cfg.am.max_medium,
        }
    }

    /// Whether every member of `team` shares memory with this rank (the
    /// same answer on every member: supernodes are the job's).
    pub(super) fn team_shares_memory(&self, team: &coll::Team) -> bool {
        team.members.iter().all(|&job| {
            job == self.rank || self.pshm.as_ref().and_then(|sh| sh.peer(job)).is_some()
        })
    }

    /// A team's collectives: the direct exchange for small reductions to
    /// all when its members share memory.
    fn team_colls(&self, team: &coll::Team) -> Result<TeamColl, Error> {
        let mut colls = TeamColl::new(team.size(), team.me, self.coll_config())?;
        colls.set_chunk_limit(self.cfg.am.max_medium);
        colls.set_direct_exchange(self.team_shares_memory(team));
        Ok(colls)
    }

    /// The world team (created on first use).
    pub fn world_team(&self) -> Result<Arc<coll::Team>, Error> {
        let mut teams = self.coll.teams.lock();
        if let Some(e) = teams.get(&0) {
            return Ok(e.team.clone());
        }
        let team = Arc::new(coll::Team::world(self.rank, self.size));
        let colls = self.team_colls(&team)?;
        teams.insert(0, TeamEntry::new(team.clone(), colls));
        drop(teams);
        self.requeue_parked();
        Ok(team)
    }

    /// Chunks parked for a team this rank had not made are fed by the next
    /// poll once it has.
    fn requeue_parked(&self) {
        if !self.coll.inbox.lock().is_empty() {
            self.coll.queued.store(true, Ordering::Release);
        }
    }

    /// Add a team made by a split with the id its members agreed on.
    pub fn add_team(&self, id: u32, team: coll::Team) -> Result<Arc<coll::Team>, Error> {
        let team = Arc::new(team);
        let colls = self.team_colls(&team)?;
        self.coll
            .next_id
            .fetch_max(id.saturating_add(1), Ordering::AcqRel);
        {
            let mut teams = self.coll.teams.lock();
            if teams.contains_key(&id) || self.coll.retired.lock().contains(&id) {
                return Err(Error::TeamIdTaken { id });
            }
            teams.insert(id, TeamEntry::new(team.clone(), colls));
        }
        self.requeue_parked();
        Ok(team)
    }

    /// Take back a team `add_team` made that its members did not all
    /// make (a split agreeing again): no collective has run on it.
    pub fn withdraw_team(&self, id: u32) {
        self.coll.teams.lock().remove(&id);
    }

    /// The id this rank proposes for a new team (reserved: two splits in
    /// flight on this rank never propose the same one).
    pub fn team_id_proposal(&self) -> u32 {
        self.coll.next_id.fetch_add(1, Ordering::AcqRel)
    }

    /// The handler's part: queue a chunk.
    pub(super) fn on_coll_chunk(
        &self,
        src: usize,
        args: [u32; 4],
        payload: &[u8],
    ) -> Result<(), Error> {
        if args[2] >> 8 > coll::msg::SHAPE_BITS as u32 {
            return Err(am::Error::MalformedInternal {
                src: src as u32,
                handler: H_COLL,
                what: "a collective chunk with an impossible phase or shape",
            }
            .into());
        }
        self.coll.inbox.lock().push(InMsg {
            team: args[0],
            seq: args[1],
            src,
            phase: args[2] as u8,
            shape: (args[2] >> 8) as u8,
            chunk: args[3],
            data: payload.to_vec(),
        });
        // After the push: an advance that clears the flag and then takes
        // the inbox either takes this chunk or leaves the flag set for it
        // (set before the push, another thread's advance could clear it
        // and take the inbox before the chunk was in it, stranding it).
        self.coll.queued.store(true, Ordering::Release);
        Ok(())
    }

    /// Whether collective `seq` of team `id` is complete (advancing first):
    /// its machine is done and none of its chunks still waits for a slot.
    /// While it is not, a member's post of it on a board (its operand took
    /// it there) fails it.
    pub fn coll_test(&self, id: u32, seq: u32) -> Result<bool, Error> {
        self.coll_advance()?;
        let mut teams = self.coll.teams.lock();
        // Not `entry_mut`'s error when present: built only when it is not.
        let Some(e) = teams.get_mut(&id) else {
            return Err(Error::NoTeam { id });
        };
        if e.colls.has_failed(seq) {
            // Its chunks still queued for slots are never read: dropped
            // (the receiver that failed it stops polling for them).
            e.cache.drop_queued(seq);
            return Ok(true);
        }
        if e.colls.is_done(seq) {
            return Ok(!e.cache.queued(seq));
        }
        let CacheState::Ready(c) = &mut e.cache else {
            return Ok(false);
        };
        if !self.board_foreign(c, &mut e.colls, seq) {
            return Ok(false);
        }
        let aborts = e.colls.take_aborts();
        let team = e.team.clone();
        drop(teams);
        self.send_aborts(id, &team, aborts)?;
        Ok(true)
    }

    /// Take a complete collective's result.
    pub fn coll_take(&self, id: u32, seq: u32) -> Result<Option<Vec<u8>>, Error> {
        let mut teams = self.coll.teams.lock();
        let e = entry_mut(&mut teams, id)?;
        e.cached.remove(&seq);
        let r = e.colls.take_result(seq);
        if r.is_err() {
            owe_board(e, seq);
            self.coll.busy.store(true, Ordering::Release);
        }
        Ok(r?)
    }

    /// Wait for collective `seq` of team `id`; its result.
    pub fn coll_wait(&self, id: u32, seq: u32) -> Result<Option<Vec<u8>>, Error> {
        while !self.coll_test(id, seq)? {
            self.progress_within(0, Progress::Full)?;
            self.exit_if_requested()?;
        }
        self.coll_take(id, seq)
    }

    /// An event for collective `seq` was dropped unwaited: it finishes in
    /// later polls and its result is dropped.
    pub fn coll_abandon(&self, id: u32, seq: u32) {
        if let Some(e) = self.coll.teams.lock().get_mut(&id) {
            e.abandoned.insert(seq);
            self.coll.busy.store(true, Ordering::Release);
        }
    }

    /// Wait until every collective this rank started on team `id` is
    /// complete here and every write of its cache is over (Open MPI
    /// coll/ofi's flush). Results stay for their events.
    pub fn coll_flush(&self, id: u32) -> Result<(), Error> {
        loop {
            self.coll_advance()?;
            {
                let mut teams = self.coll.teams.lock();
                let e = entry_mut(&mut teams, id)?;
                if e.colls.all_done() && e.cache.idle() {
                    return Ok(());
                }
                if let CacheState::Ready(c) = &mut e.cache {
                    for seq in e.colls.unfinished() {
                        self.board_foreign(c, &mut e.colls, seq);
                    }
                }
            }
            self.progress_within(0, Progress::Full)?;
            self.exit_if_requested()?;
        }
    }

    /// Whether collectives need advancing by a poll.
    #[inline]
    pub fn coll_pending(&self) -> bool {
        self.coll.queued.load(Ordering::Relaxed) || self.coll.busy.load(Ordering::Relaxed)
    }
}
